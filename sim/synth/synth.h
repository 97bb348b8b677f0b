/* synth.h — workload generators for `vramsim synth` (docs/workloads.md).
 *
 * Each generator writes a trace for a modeled workload on one preset: the
 * allocations it makes (with tags), the kernels it launches (dur, bytes and
 * compute_ns from FLOPs and the preset's throughput), its copies, syncs and
 * one mark per step. Generators write through a SynthEmit, which keeps a
 * host clock and a simple GPU timeline so that the trace is what a capture
 * of the same program on the same preset would hold: replaying it on that
 * preset, with nothing concurrent, reproduces its timing (SPEC 5.4). */
#pragma once

#include <glib.h>

#include "config/config.h"
#include "model/kernel-model.h"
#include "trace/event.h"

/* Errors of the generators (bad combinations of options). */
#define VS_SYNTH_ERROR (synth_error_quark ())
GQuark synth_error_quark (void);

/* ---- the emitter ---- */

typedef struct _SynthEmit SynthEmit;

/* Host time a call costs at "capture", in ns (docs/workloads.md). */
#define SYNTH_LAUNCH_NS 4000   /* kernel launch, async copy, memset, record */
#define SYNTH_ALLOC_NS 2000    /* caching-allocator malloc */
#define SYNTH_FREE_NS 1000
#define SYNTH_HOST_ALLOC_NS 50000 /* cudaHostAlloc / cudaMallocManaged */

/* (transfer full) A writer for PATH on config CFG (borrowed; must outlive
 * the emitter). MFU > 0: every kernel's compute part is its FLOPs at that
 * fraction of cfg->tflops (the `--mfu` override); MFU <= 0: kernel times
 * from the kernel model (synth-kernels.c: GEMMs by shape, memory-bound
 * kernels by bytes, the preset's per-precision peaks). */
SynthEmit *synth_emit_new (const char *path, const VsConfig *cfg, double mfu, const char *workload,
                           GError **error);
/* The same, with WARNINGS (NULL-terminated, may be NULL) written into the
 * header's "warnings" (replay reports repeat them). */
SynthEmit *synth_emit_new_warn (const char *path, const VsConfig *cfg, double mfu, const char *workload,
                                const char *const *warnings, GError **error);
/* The peak of device memory live so far (under a unified config, every
 * allocation: one pool). */
guint64 synth_peak_device (SynthEmit *e);
/* Allocation: returns its id. */
guint64 synth_alloc (SynthEmit *e, guint64 bytes, VsMemKind kind, const char *tag);
void synth_free (SynthEmit *e, guint64 id);
guint64 synth_size (SynthEmit *e, guint64 id);
/* A kernel doing FLOPS floating-point operations that reads READS and
 * writes WRITES (ids; 0 entries are skipped); its DRAM traffic is the sum of
 * their sizes (SPEC 5.4's rule) unless BYTES is not VS_NONE. Its compute
 * runs at the emitter's MFU, or (kernel model) at SYNTH_GEMM_EFF of the
 * FP16 peak. Returns its duration in ns. */
guint64 synth_kernel (SynthEmit *e, const char *name, guint64 stream, double flops,
                      const guint64 *reads, guint n_reads, const guint64 *writes, guint n_writes,
                      guint64 bytes);
/* The duration such a kernel of FLOPS and BYTES would have. */
guint64 synth_kernel_ns (SynthEmit *e, double flops, guint64 bytes);
/* A GEMM of M x N x K (BATCH of them: a batched GEMM) at precision PREC
 * (VsPrecision) with ELEM_BYTES per matrix element. Its `flops`,
 * `precision`, `grid` (its tiles) and `block` go into the trace, so a
 * replay on another GPU scales it by waves. Time: synth_gemm_time, or
 * at the emitter's MFU. Returns the duration. */
guint64 synth_gemm (SynthEmit *e, const char *name, guint64 stream, guint prec, double elem_bytes, guint64 m,
                    guint64 n, guint64 k, guint64 batch, const guint64 *reads, guint n_reads, const guint64 *writes,
                    guint n_writes);
/* Its duration without emitting it (the same arithmetic). */
guint64 synth_gemm_ns (SynthEmit *e, guint prec, double elem_bytes, guint64 m, guint64 n, guint64 k, guint64 batch);
/* A memory-bound kernel of BYTES of traffic in class CLS (SynthMemClass). */
guint64 synth_mem_kernel (SynthEmit *e, const char *name, guint64 stream, guint cls, guint64 bytes,
                          const guint64 *reads, guint n_reads, const guint64 *writes, guint n_writes);
guint64 synth_mem_ns (SynthEmit *e, guint cls, guint64 bytes);
/* A communicator as a generator names it: its id (`collective.group.id`,
 * unique in the job), its role (VsCollRole), its size, and how many of
 * its ranks share a node (0: as many as the preset's ranks_per_node
 * allows, i.e. the ranks are consecutive; 1: one a node, e.g. a
 * data-parallel group strided by tensor parallelism over 8-GPU nodes). */
typedef struct {
  guint64 id;
  guint8 role;
  guint32 ranks;
  guint32 per_node;
} SynthGroup;
/* What a generator's collectives moved, by kind and by role (tests check
 * the papers' volumes against it), and the groups they named. */
#define SYNTH_MAX_GROUPS 16
typedef struct {
  guint64 count[VS_COLL_COUNT];
  guint64 bytes[VS_COLL_COUNT];   /* sum of collective.bytes (per-rank input buffers) */
  guint64 role_count[VS_ROLE_COUNT], role_bytes[VS_ROLE_COUNT];
  guint64 ungrouped;              /* collectives with no group id */
  guint n_groups;
  SynthGroup groups[SYNTH_MAX_GROUPS];   /* each id once, as first seen */
  guint64 group_count[SYNTH_MAX_GROUPS], group_bytes[SYNTH_MAX_GROUPS];
  gboolean group_conflict;        /* an id reused with another size or role */
} SynthCommStats;
/* Counts every later collective into STATS (borrowed; NULL stops). */
void synth_emit_watch_comm (SynthEmit *e, SynthCommStats *stats);
/* The index of group ID in STATS, or -1. */
int synth_comm_group (const SynthCommStats *stats, guint64 id);
/* A collective kernel (SPEC 3 `collective`): KIND of BYTES (the per-rank
 * input buffer) over GROUP (its id and role go into the event), reading
 * READ and writing WRITE (ids, 0: none). Its duration is the network
 * model's time for it (sim/model/network.c, network_cost) on the preset's
 * `network` with GROUP's ranks per node, plus WAIT_NS spent waiting for
 * the peer (a pipeline bubble). Returns the duration. */
guint64 synth_collective (SynthEmit *e, const char *name, guint64 stream, VsCollKind kind, guint64 bytes,
                          const SynthGroup *group, guint64 read, guint64 write, guint64 wait_ns);
/* The network time of such a collective, without emitting it. */
guint64 synth_collective_ns (SynthEmit *e, VsCollKind kind, guint64 bytes, const SynthGroup *group);
/* A copy of BYTES between ids (0 = pageable host memory). */
guint64 synth_copy (SynthEmit *e, VsDir dir, guint64 src, guint64 dst, guint64 bytes,
                    guint64 stream, gboolean async);
void synth_memset (SynthEmit *e, guint64 dst, guint64 stream);
void synth_prefetch (SynthEmit *e, guint64 id, VsPrefetchTo to, guint64 stream);
/* Returns the event id recorded. */
guint64 synth_event_record (SynthEmit *e, guint64 stream);
void synth_stream_wait (SynthEmit *e, guint64 stream, guint64 event);
/* cudaEventSynchronize: the host blocks until EVENT's work has run. */
void synth_event_sync (SynthEmit *e, guint64 event);
void synth_sync_device (SynthEmit *e);
void synth_sync_stream (SynthEmit *e, guint64 stream);
void synth_mark (SynthEmit *e, const char *name);
/* The host computes for NS (no event; the next call is entered later). */
void synth_host_work (SynthEmit *e, guint64 ns);
/* Compute time for FLOPS at the preset's tflops × mfu (kernel model:
 * at SYNTH_GEMM_EFF of the FP16 peak), in ns. */
guint64 synth_compute_ns (SynthEmit *e, double flops);
const VsConfig *synth_config (SynthEmit *e);
/* Whether kernel times come from the kernel model (no --mfu). */
gboolean synth_uses_kernel_model (SynthEmit *e);
/* The GPU time the emitter's streams have reached (the latest end). */
guint64 synth_gpu_end (SynthEmit *e);

/* ---- kernel times (synth-kernels.c) ---- */

/* The GEMM model's tile and its two fitted constants (synth-kernels.c has
 * the fit: vidur's A100 operator times; tests/synth/test-synth-fit.c
 * refits them). */
#define SYNTH_GEMM_TILE 128
#define SYNTH_GEMM_EFF 0.80
#define SYNTH_GEMM_K0 96
typedef struct {
  guint64 tiles;       /* 128 x 128 output tiles, times the batch */
  double waves;        /* ceil(tiles / sms); 0 without an SM count */
  double flops;        /* 2·M·N·K·batch */
  double bytes;        /* A, B and C once */
  double compute_ns, mem_ns;
  double ns;           /* max(compute, memory, launch floor) */
} SynthGemm;
void synth_gemm_time (const VsKernelChip *chip, guint prec, double elem_bytes, guint64 m, guint64 n, guint64 k,
                      guint64 batch, SynthGemm *out);
/* Memory-bound kernel classes and their fitted share of the sustained
 * bandwidth (synth-kernels.c). */
typedef enum { SYNTH_MEM_STREAM, SYNTH_MEM_NORM, SYNTH_MEM_ACT, SYNTH_MEM_COUNT } SynthMemClass;
#define SYNTH_MEM_STREAM_FACTOR 1.0
#define SYNTH_MEM_NORM_FACTOR 0.41
#define SYNTH_MEM_ACT_FACTOR 0.54
double synth_mem_class_factor (guint cls);
/* BYTES of class CLS over CHIP's sustained bandwidth, at least the launch floor. */
double synth_mem_time (const VsKernelChip *chip, guint cls, double bytes);

/* ---- the pipeline schedule (synth-pipe.c) ---- */

typedef struct {
  guint p, v, m;          /* stages, model chunks per stage, micro-batches */
  const double *t_f, *t_b;/* [c·p + s]: one micro-batch's forward / backward compute of chunk c on stage s, ns */
  double p2p_ns;          /* one activation or gradient transfer between neighbouring stages */
  double p2p_wrap_ns;     /* the same from the last stage to the first (interleaved: chunk c to c + 1) */
} SynthPipeSpec;
typedef struct {
  gboolean fwd;
  guint chunk, micro;
  gboolean recv, send;    /* it receives before its compute / sends after it */
  double start_ns, end_ns;/* from the stage's first operation */
  double wait_ns;         /* idle before its receive could start */
} SynthPipeOp;
/* Simulates the whole pipeline and gives STAGE's operations in order
 * (OUT: SynthPipeOp) and when its last one ends (SPAN_NS, may be NULL).
 * FALSE (ERROR set) when v > 1 and m is not a multiple of p. */
gboolean synth_pipe_schedule (const SynthPipeSpec *spec, guint stage, GArray *out, double *span_ns, GError **error);
/* Writes out and renames into place (or discards the file on error). Frees E. */
gboolean synth_emit_finish (SynthEmit *e, GError **error);
void synth_emit_abort (SynthEmit *e);

/* ---- the workloads ---- */

/* SYNTH_PREC_FP8: mixed precision with Transformer Engine's FP8 GEMMs. */
typedef enum { SYNTH_PREC_FP32, SYNTH_PREC_FP16, SYNTH_PREC_BF16, SYNTH_PREC_MIXED, SYNTH_PREC_FP8 } SynthPrecision;
/* The precision named fp32, fp16, bf16, mixed or fp8 (FALSE: none). */
gboolean synth_precision_from_name (const char *s, SynthPrecision *p);
typedef enum { SYNTH_OPT_ADAM, SYNTH_OPT_SGD } SynthOptimizer;
typedef enum { SYNTH_CKPT_NONE, SYNTH_CKPT_EVERY, SYNTH_CKPT_SELECTIVE } SynthCheckpoint;

typedef struct {
  guint64 params;       /* 0: derived from the shape */
  guint layers, hidden, heads, seq, batch, vocab;
  /* Llama-style shapes (0 / FALSE: GPT's): key/value heads (grouped-query
   * attention), the MLP's inner size (4·hidden), a gated MLP (SwiGLU:
   * three weight matrices, gate and up fused in one GEMM). */
  guint kv_heads, ffn;
  gboolean gated_mlp;
  /* An attention head's size (0: hidden / heads; Qwen 3 and Gemma 3 set
   * it apart): Q and the projection's input are heads·head_dim wide, K
   * and V kv_heads·head_dim. */
  guint head_dim;
  /* Multi-head latent attention (DeepSeek-V2/V3; 0: none). kv_lora: K and
   * V come from one latent of this rank (plus qk_rope dims of a rotary
   * key shared by the heads), projected from x by a weight every tensor
   * rank holds whole, normalised, and expanded per head to head_dim
   * (qk_nope_head_dim: the non-rotary part) of K and v_head of V;
   * q_lora: Q likewise from a latent of its own (0: straight from x);
   * a head's QK dims are head_dim + qk_rope, its V and the projection's
   * input v_head (0: head_dim). */
  guint kv_lora, q_lora, qk_rope, v_head;
  /* Fused attention (FlashAttention, cuDNN/Transformer Engine fused
   * attention, PyTorch SDPA's flash kernel): one causal kernel forward and
   * one backward, the scores never in memory (only the row log-sum-exps,
   * fp32, kept); FALSE: Megatron-LM 2021's core attention, the scores
   * materialized (softmax, dropout). */
  gboolean flash_attn;
  /* Sliding-window attention (0: none): a query attends to the last
   * window tokens (itself included) on every layer, or with global_every
   * N > 0 on every layer but those with (g + 1) % N == 0, which attend to
   * the whole sequence (Mistral; Gemma 2 and gpt-oss: N = 2; Gemma 3:
   * N = 6). Fused attention skips the tiles outside the window; the
   * materialized scores are s x s whatever it is. */
  guint window, global_every;
  /* The LM head is a matrix of its own (tie_word_embeddings false: Llama,
   * Mistral), not the embedding's: with one pipeline stage the unit holds
   * both; with several, stage 0 the embedding alone, and no embedding
   * all-reduce ties the first stage to the last. */
  gboolean untied;
  SynthPrecision precision;
  SynthOptimizer optimizer;
  SynthCheckpoint checkpoint;
  guint checkpoint_every; /* SYNTH_CKPT_EVERY: layers per checkpointed segment */
  guint zero, dp, grad_accum, steps;
  gboolean offload_optimizer;
  /* Parallel layouts (0 counts as 1): Megatron tensor parallelism over tp
   * ranks (sp: with sequence parallelism), pp pipeline stages run 1F1B over
   * the grad_accum micro-batches (the trace is `stage`'s), and MoE layers
   * of `experts` experts (0: dense) routing each token to top_k of them,
   * experts spread over the data-parallel ranks. */
  guint tp, pp;
  gboolean sp;
  guint experts, top_k;
  /* MoE: expert-parallel ranks (0: min(dp, experts)); ep divides dp and
   * the experts, which it spreads evenly, and the dp / ep ranks holding
   * the same experts reduce their gradients. */
  guint ep;
  /* MoE: the inner size of the shared expert every token runs besides
   * its routed ones (DeepSeek, Qwen-MoE; 0: none), a dense MLP split t
   * ways like the experts' (gated when they are). */
  guint shared_ffn;
  /* MoE: the first dense_layers layers run a dense MLP of inner size
   * dense_ffn (0: 4·hidden) instead of the experts (DeepSeek's
   * first_k_dense_replace and intermediate_size), and with moe_every N
   * > 1 so does every layer g but those with (g + 1) % N == 0 (Qwen-MoE's
   * decoder_sparse_step, Llama 4's interleave_moe_layer_step). */
  guint dense_layers, dense_ffn, moe_every;
  /* ZeRO-3: FALSE (the default, as FSDP's limit_all_gathers=True) makes
   * the host wait before each all-gather until the layer two frees back
   * has run, so at most two gathers are in flight ahead of compute;
   * TRUE lets the host queue the whole step. */
  gboolean no_limit_all_gathers;
  /* Interleaved 1F1B: model chunks per pipeline stage (0 counts as 1);
   * grad_accum must then be a multiple of pp. */
  guint virtual_stages;
  /* Pipeline: the stage whose rank (tensor rank 0, data rank 0) the trace
   * is (0 .. pp - 1), and Megatron-Core's uneven split
   * (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers):
   * layers on the first and on the last stage (0: an even share), the
   * others' split evenly (synth_train_stage_layers). */
  guint stage, first_stage_layers, last_stage_layers;
  /* Megatron-Core's --account-for-embedding-in-pipeline-split and
   * --account-for-loss-in-pipeline-split: the embedding (the loss) counts
   * as a layer, so the first (last) virtual stage holds one fewer of the
   * (L + E + Z) / (pp·v) every virtual stage holds; not with the first and
   * last stage layers. */
  gboolean account_embedding, account_loss;
  /* Context parallelism over cp ranks (0 counts as 1; Megatron-Core's
   * --context-parallel-size): each holds seq / cp tokens of every
   * sequence (the load-balanced split: chunks i and 2·cp - 1 - i), its
   * attention passes K and V round the ring (TransformerEngine's p2p) on
   * a stream of its own, and gradients and ZeRO span dp x cp ranks.
   * Needs flash_attn (synth_train_check_cp). */
  guint cp;
  /* Multi-token prediction (DeepSeek-V3's num_nextn_predict_layers; 0:
   * none): modules on the last stage after the head, each a projection
   * of [hidden state; next token's embedding] from 2h to h, a layer of
   * the last layer's kind and the shared head and loss. */
  guint mtp;
  /* Megatron's LocalDDP (--DDP-impl local): gradients all-reduced once,
   * after the step's last backward, on the compute stream; FALSE: PyTorch
   * DDP's buckets, each layer's reduced on a communication stream as soon
   * as its last backward has written it. */
  gboolean ddp_local;
} SynthTrainOpts;

/* Model-state bytes per parameter for a precision and optimizer (before
 * sharding): *p params, *g grads, *o optimizer states. */
void synth_train_state_bytes (SynthPrecision prec, SynthOptimizer opt, guint *p, guint *g, guint *o);
/* Activation bytes one layer saves with no recomputation (Korthikanti et
 * al. 2022, Table 2): s·b·h·(34 + 5·a·s/h) at 16 bits, doubled at fp32;
 * under tensor parallelism t, s·b·h·(10 + 24/t + 5·a·s/(h·t)), with
 * sequence parallelism s·b·h/t·(34 + 5·a·s/h). */
guint64 synth_train_layer_activations (const SynthTrainOpts *o);
/* What one layer keeps under selective recomputation (the same table):
 * 34·s·b·h, s·b·h·(10 + 24/t), or 34·s·b·h/t with sequence parallelism. */
guint64 synth_train_layer_kept (const SynthTrainOpts *o);
/* The shape's weights (the planner counts the model by them): one layer's
 * attention (Q, K, V, the projection), one MLP (an expert's, under MoE),
 * the shared expert (0 without one); and Q's width, heads x head_dim. */
guint64 synth_train_attn_params (const SynthTrainOpts *o);
guint64 synth_train_mlp_params (const SynthTrainOpts *o);
guint64 synth_train_shared_params (const SynthTrainOpts *o);
/* The shape of O's dense layers: O with a dense MLP of dense_ffn and no
 * experts. */
void synth_train_dense_shape (const SynthTrainOpts *o, SynthTrainOpts *dense);
/* Whether layer G (0-based) of O is dense (O has experts; dense_layers,
 * moe_every), and how many of O's layers are. */
gboolean synth_train_layer_dense (const SynthTrainOpts *o, guint g);
/* Whether layer G of O attends through its sliding window (window set,
 * shorter than the sequence, and G not a global layer). */
gboolean synth_train_layer_local (const SynthTrainOpts *o, guint g);
guint synth_train_dense_count (const SynthTrainOpts *o);
guint64 synth_train_q_width (const SynthTrainOpts *o);
/* The attention core's widths summed over the heads: QKᵀ's contraction
 * plus attention·V's output (2 x heads x head_dim; with latent attention
 * heads x (head_dim + qk_rope + v_head)). Its FLOPs a token are 2·s times it. */
guint64 synth_train_core_width (const SynthTrainOpts *o);
/* The attention weights every tensor rank holds whole (latent attention's
 * down projections; 0 otherwise). */
guint64 synth_train_attn_replicated (const SynthTrainOpts *o);
gboolean synth_transformer_train (const SynthTrainOpts *o, SynthEmit *e, GError **error);
/* FALSE (ERROR naming the size) for a shape too large to count in the
 * generator's 64-bit sizes: a size above 2^20 (the vocabulary 2^27, the
 * sequence 2^24), more than 10^15 parameters, or a layer's activations or
 * scores above 2^56 bytes. */
gboolean synth_train_check_size (const SynthTrainOpts *o, GError **error);
/* The device bytes of stage 0's parameters, gradients and optimizer states
 * as the generator allocates them (live together from before the first
 * step to the end), with the fp32 gradients its optimizer step adds under
 * mixed precision: a floor of the trace's live peak, without generating it. */
guint64 synth_train_state_device_bytes (const SynthTrainOpts *o);
/* Whether O's context parallelism is one the generator models (fused
 * attention, seq a multiple of 2·cp, no window, no experts); FALSE with
 * ERROR saying why. */
gboolean synth_train_check_cp (const SynthTrainOpts *o, GError **error);
/* Layers on pipeline stage S of O: first_stage_layers on stage 0 and
 * last_stage_layers on the last (when given), the rest split evenly over
 * the other stages; all of them with one stage. */
guint synth_train_stage_layers (const SynthTrainOpts *o, guint s);
/* Whether O's layers split over its stages and their virtual_stages
 * chunks (each stage at least one layer a chunk, its count a multiple of
 * the chunks, the even share exact) and O's stage is one of them; FALSE
 * with ERROR saying why (and, where pp does not divide the layers, which
 * split synth_train_auto_split would take). */
gboolean synth_train_check_split (const SynthTrainOpts *o, GError **error);
/* Whether stage S of O holds, chunk for chunk, as many layers of each
 * kind (dense, MoE, windowed) as stage 0: it then needs no more memory
 * than stage 0 but the head's, with fewer micro-batches in flight. */
gboolean synth_train_stage_like_first (const SynthTrainOpts *o, guint s);
/* A balanced split of L layers over P >= 2 stages of V chunks when P·V
 * does not divide L (Llama 3's 126 layers on 16 stages: 7, 14 x 8, 7):
 * the middle stages ceil(L/P) layers (rounded up to a multiple of V), the
 * first and the last the rest, the last (which runs the LM head) the
 * smaller half. *FIRST and *LAST; FALSE when no split has every stage a
 * multiple of V and at least V. An even split when P·V divides L. */
gboolean synth_train_auto_split (guint L, guint p, guint v, guint *first, guint *last);

typedef struct {
  guint64 params;       /* 0: derived from the shape */
  guint layers, hidden, heads, kv_heads, vocab;
  guint batch, prompt, gen;
  guint weight_bytes;   /* per weight: 1, 2 or 4 */
  guint kv_bytes;       /* per KV element: 1 (fp8), 2, 4 */
  guint kv_block;       /* tokens per paged block; 0 = grow by reallocation */
  /* Multi-head latent attention (0: none): the cache holds one latent of
   * kv_lora plus qk_rope rotary key dims a token and layer, for every
   * head (DeepSeek-V2/V3's kv_cache and pe_cache). */
  guint kv_lora, qk_rope;
  /* The MLP (0 / FALSE: GPT's 4·hidden, not gated), and MoE: experts
   * experts of it a layer (0: dense), each token routed to top_k. */
  guint ffn, experts, top_k;
  gboolean gated;
  /* Tensor parallelism over tp ranks (0 counts as 1); the trace is rank
   * 0's. */
  guint tp;
} SynthInferOpts;
/* Key/value heads on one rank: kv_heads / tp, or one (replicated) when tp
 * exceeds them. */
guint synth_infer_kv_heads_here (const SynthInferOpts *o);
/* A layer's weights on one rank: all of them, and those one step over
 * TOKENS tokens reads (an MoE layer: the experts they are expected to
 * reach). */
double synth_infer_layer_weights (const SynthInferOpts *o);
double synth_infer_layer_read (const SynthInferOpts *o, double tokens);

/* KV-cache bytes per token per sequence on one rank: 2 · layers ·
 * kv_heads_here · head_dim · kv_bytes (latent attention, whole on every
 * rank: layers · (kv_lora + qk_rope) · kv_bytes). */
guint64 synth_infer_kv_bytes_per_token (const SynthInferOpts *o);
gboolean synth_llm_infer (const SynthInferOpts *o, SynthEmit *e, GError **error);

typedef struct {
  guint64 size;         /* bytes per array */
  guint iters;
  gboolean managed;
  gboolean prefetch;
} SynthStreamOpts;

gboolean synth_stream (const SynthStreamOpts *o, SynthEmit *e, GError **error);
