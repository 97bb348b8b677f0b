/* plan.h — `vramsim plan`: for a model, a global batch and a cluster,
 * which parallel layout fits and runs a training step fastest or cheapest
 * (docs/plan.md).
 *
 * The search enumerates layouts (preset, GPU count, tensor, pipeline and
 * data parallelism, interleaving, ZeRO stage, sequence parallelism,
 * recomputation, micro-batch), generates each one's rank-0 trace with the
 * transformer-train generator, prunes it by memory (the generator's live
 * peak plus the CUDA context, a lower bound of the replay's demand: a
 * layout pruned there cannot fit), and replays the rest: fits, the peak
 * device memory (the allocator model's reserved peak plus the context) and
 * the step time are the replay's, as `vramsim fit` and `vramsim replay`
 * report them. */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#include "config/config.h"
#include "synth/synth.h"

#define VS_PLAN_ERROR (plan_error_quark ())
GQuark plan_error_quark (void);
typedef enum { PLAN_ERROR_INPUT, PLAN_ERROR_INTERRUPTED } PlanErrorCode;

typedef enum { PLAN_CKPT_NONE, PLAN_CKPT_SELECTIVE, PLAN_CKPT_FULL, PLAN_CKPT_COUNT } PlanCheckpoint;
const char *plan_checkpoint_name (guint c);

typedef enum { PLAN_BY_TIME, PLAN_BY_COST } PlanObjective;
/* PlanSearch.ddp: how the data-parallel gradients are reduced. */
enum { PLAN_DDP_AUTO, PLAN_DDP_TORCH, PLAN_DDP_LOCAL };

/* A list of small values (a search dimension); n == 0: the default. */
#define PLAN_MAX_VALUES 64
typedef struct {
  guint n;
  guint v[PLAN_MAX_VALUES];
} PlanList;

typedef struct {
  /* The model: its shape, precision and optimizer (the transformer-train
   * fields; layout fields are ignored). */
  SynthTrainOpts model;
  guint64 global_batch;       /* sequences per optimizer step */
  char **configs;             /* NULL-terminated preset names or files */
  double *price;              /* per config, USD per GPU-hour; 0 = none (may be NULL) */
  PlanList gpus;              /* GPU counts (required) */
  PlanList tp, pp, v, zero, ckpt, mbs, sp;  /* empty: the defaults (docs/plan.md) */
  gboolean even_stages;       /* only pipelines whose stages split the layers evenly (no uneven split searched) */
  /* The data-parallel gradient reduction: PLAN_DDP_AUTO (PyTorch DDP
   * without a pipeline, Megatron's LocalDDP with one: examples/sc21),
   * PLAN_DDP_TORCH (bucketed, overlapping the last micro-batch's backward
   * always; Megatron-Core's --overlap-grad-reduce), PLAN_DDP_LOCAL (once
   * after the backward always). */
  guint ddp;
  PlanList cp;                /* context-parallel sizes (empty: 1; with flash_attn and seq >= 16384: 1, 2, 4, 8) */
  PlanList ep;                /* MoE: expert-parallel sizes (empty: every power of two dividing dp and the experts, and min(dp, E)) */
  guint n_threads;            /* 0: all processors */
  gboolean progress;
  guint shard_k, shard_n;     /* 1-based K of N; 0/0: every layout */
  char **warnings;            /* what the model's reading left out (--model), NULL-terminated; may be NULL */
} PlanSearch;

typedef struct {
  /* the layout */
  guint index;                /* in enumeration order (ties rank by it) */
  guint config;               /* index into the configs */
  guint gpus, tp, pp, dp, v, zero, ckpt, mbs, accum;
  guint ep;                   /* MoE: expert-parallel ranks (0: a dense model) */
  guint cp;                   /* context-parallel ranks (1: none); dp excludes them */
  gboolean sp;
  /* With a pipeline: layers on the first stage, on each between, on the
   * last; uneven when p·v does not divide the layers (synth_train_auto_split). */
  guint first, mid, last;
  gboolean uneven;
  gboolean account;           /* the uneven split counts the embedding and the loss as layers (Megatron-Core's) */
  /* the result */
  gboolean replayed;          /* FALSE: pruned by a memory floor (peak is that floor) */
  guint floor;                /* when not replayed: 0 the model states' floor, 1 the live peak's */
  gboolean fits;
  guint64 peak;               /* device demand per GPU, bytes (the bound when not replayed) */
  guint64 capacity;           /* usable device memory (capacity - reserved) */
  guint peak_stage;           /* with a pipeline: the stage whose demand is the peak */
  double step_ns;             /* 0 when not replayed or out of memory */
  double tokens_per_s, tflops_per_gpu, mfu;
  double cost_per_step, cost_per_mtok;  /* USD; < 0 without a price */
  char *bound;                /* compute, memory, link, network, host; "memory" when it does not fit */
  char *error;                /* the generator refused it (a bug, or an option it cannot do), or NULL */
} PlanLayout;

typedef struct {
  char *identity;             /* the search's options, as text: shards of one search agree on it */
  char **config_names;        /* the presets' names, NULL-terminated */
  guint shard_k, shard_n;
  guint searched;             /* layouts enumerated (in this shard) */
  guint replays, cached;      /* replays run; layouts that reused another's */
  double params;              /* the model's parameter count */
  double active_params;       /* MoE: those a token runs through (0: dense) */
  char **warnings;            /* the search's (PlanSearch.warnings, or a shard's), NULL-terminated; may be NULL */
  GPtrArray *layouts;         /* PlanLayout*, ranked */
  double wall_s;
} PlanResult;

void plan_layout_free (PlanLayout *l);
void plan_result_free (PlanResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PlanResult, plan_result_free)

/* The model's FLOPs per step (all GPUs): executed (with the recomputation
 * CKPT repeats) and model (without it). */
void plan_step_flops (const SynthTrainOpts *m, guint64 global_batch, guint ckpt, double *executed, double *model);
/* The model's parameter count, and those a token runs through (an MoE
 * model's top_k experts of each MoE layer; the embedding and the head
 * counted, as DeepSeek-V3's 37B and Mixtral's 12.9B are). */
double plan_param_count (const SynthTrainOpts *m);
double plan_active_param_count (const SynthTrainOpts *m);

/* Runs the search. NULL with ERROR set on bad input (no layout at all, a
 * preset that does not load). */
PlanResult *plan_run (const PlanSearch *s, GError **error);
/* Sorts R's layouts: fitting first by OBJECTIVE, then the rest by missing
 * memory; ties by enumeration order. */
void plan_rank (PlanResult *r, PlanObjective objective);

typedef enum { PLAN_FMT_TEXT, PLAN_FMT_JSON, PLAN_FMT_CSV } PlanFormat;
/* The output (transfer full): TOP > 0 keeps the first TOP layouts. */
char *plan_format (const PlanResult *r, const PlanSearch *s, PlanFormat fmt, guint top, gboolean priced);
/* The JSON of a shard (every layout, unranked order kept by index). */
cJSON *plan_to_json (const PlanResult *r, guint top, gboolean priced);
/* Reads shard files written with --format json by `plan --shard K/N` and
 * joins them into one result; refuses parts of different searches, a
 * shard twice or a missing one. */
PlanResult *plan_merge (char **paths, GError **error);
/* Whether the shards were run with --price. */
gboolean plan_merged_priced (char **paths);
