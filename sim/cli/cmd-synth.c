/* cmd-synth.c — `vramsim synth WORKLOAD [options] -o TRACE`: generate a
 * trace for a modeled workload (sim/synth*.c, docs/workloads.md). */
#include <stdio.h>
#include <string.h>
#include <math.h>

#include "cli/cmds.h"
#include "config/config.h"
#include "base/outfile.h"
#include "synth/synth.h"
#include "base/units.h"

typedef struct {
  char *output;
  char *config;
  double mfu;            /* -1 (transformer-train, not given): the kernel model */
  gboolean mfu_optional; /* --mfu may be left out (0: the kernel model) */
  GPtrArray *warnings;   /* synth_warn: also written into the header */
} Common;

static void
common_clear (Common *c)
{
  g_clear_pointer (&c->output, g_free);
  g_clear_pointer (&c->config, g_free);
  g_clear_pointer (&c->warnings, g_ptr_array_unref);
}

/* The shapes of published model families, to size a model from --params
 * alone as their papers' tables do. */
typedef struct {
  const char *name;
  double params;
  int layers, hidden, heads, kv_heads;
} ShapeRow;

/* GPT-3 (Brown et al. 2020, Table 2.1: n_layers, d_model, n_heads). */
static const ShapeRow gpt3_shapes[] = {
  { "GPT-3 Small (125M)", 125e6, 12, 768, 12, 12 },
  { "GPT-3 Medium (350M)", 350e6, 24, 1024, 16, 16 },
  { "GPT-3 Large (760M)", 760e6, 24, 1536, 16, 16 },
  { "GPT-3 XL (1.3B)", 1.3e9, 24, 2048, 16, 16 }, /* the table's 24 heads of d_head 128 are not 2048 wide: 16 of 128 */
  { "GPT-3 2.7B", 2.7e9, 32, 2560, 32, 32 },
  { "GPT-3 6.7B", 6.7e9, 32, 4096, 32, 32 },
  { "GPT-3 13B", 13e9, 40, 5120, 40, 40 },   /* the table's d_model 5140 is not a multiple of 40 heads */
  { "GPT-3 175B", 175e9, 96, 12288, 96, 96 },
};

/* Llama 2 (Touvron et al. 2023, Table 1 and section 2.2: 70B uses
 * grouped-query attention with 8 key/value heads). */
static const ShapeRow llama2_shapes[] = {
  { "Llama 2 7B", 7e9, 32, 4096, 32, 32 },
  { "Llama 2 13B", 13e9, 40, 5120, 40, 40 },
  { "Llama 2 70B", 70e9, 80, 8192, 64, 8 },
};

/* The row whose parameter count is nearest PARAMS (by ratio). */
static const ShapeRow *
shape_for (const ShapeRow *rows, gsize n, guint64 params)
{
  const ShapeRow *best = &rows[0];
  for (gsize i = 1; i < n; i++)
    if (fabs (log ((double) params / rows[i].params)) < fabs (log ((double) params / best->params)))
      best = &rows[i];
  return best;
}

static void synth_note (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

/* One line on stderr: what the generator decided for the user. */
static void
synth_note (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  fprintf (stderr, "vramsim: synth: %s\n", msg);
}

static void synth_warn (Common *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* A warning: on stderr, and in the trace header's "warnings", so every
 * replay of the trace repeats it (report warnings[]). */
static void
synth_warn (Common *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  fprintf (stderr, "vramsim: synth: warning: %s\n", msg);
  if (c->warnings == NULL)
    c->warnings = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (c->warnings, msg);
}

/* --params with a shape that holds another count: the shape sizes the
 * activations and FLOPs, so a count 20 % off is worth saying. */
static void
shape_check (Common *c, guint64 params, double shape_params, int layers, int hidden)
{
  double r = (double) params / shape_params;
  if (r > 1.2 || r < 1 / 1.2)
    synth_warn (c, "--params %.3g but the shape (%d layers x %d hidden) holds %.3g: activations and FLOPs "
                "follow the shape, memory the count", (double) params, layers, hidden, shape_params);
}

static GOptionEntry *
common_entries (Common *c)
{
  static GOptionEntry e[4];
  GOptionEntry tmp[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &c->output, "Trace to write (.jsonl or .vtrace)", "TRACE" },
    { "config", 'c', 0, G_OPTION_ARG_STRING, &c->config, "Preset or config file the workload runs on (a100-80g)", "CONFIG" },
    { "mfu", 0, 0, G_OPTION_ARG_DOUBLE, &c->mfu,
      c->mfu > 0 ? "Fraction of the preset's tflops kernels achieve (0.5)"
                 : "Override: every kernel's compute at this fraction of the preset's tflops (default: the kernel model)",
      "F" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  memcpy (e, tmp, sizeof tmp);
  return e;
}

/* "7.5e9", "7.5B", "350M", "125k": a count. */
static gboolean
parse_count (const char *s, guint64 *out)
{
  char *end;
  double v = g_ascii_strtod (s, &end);
  if (end == s)
    return FALSE;
  switch (g_ascii_toupper (*end))
    {
    case 'K': v *= 1e3; end++; break;
    case 'M': v *= 1e6; end++; break;
    case 'B': case 'G': v *= 1e9; end++; break;
    case 'T': v *= 1e12; end++; break;
    default: break;
    }
  if (*end != '\0' || !(v >= 1) || v > 1e16)
    return FALSE;
  *out = (guint64) llround (v);
  return TRUE;
}

static int
usage_error (GOptionContext *ctx, const char *fmt, const char *arg)
{
  g_autofree char *msg = g_strdup_printf (fmt, arg);
  cmd_error ("synth: %s", msg);
  (void) ctx;
  return 2;
}

/* Parses ARGV with ENTRIES plus the common ones. Returns -1 to go on, else an exit status. */
static int
parse (const char *workload, const char *summary, GOptionEntry *entries, Common *c, int *argc, char ***argv,
       GOptionContext **out_ctx)
{
  g_autofree char *param = g_strdup_printf ("%s -o TRACE", workload);
  GOptionContext *ctx = g_option_context_new (param);
  g_option_context_set_summary (ctx, summary);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_main_entries (ctx, common_entries (c), NULL);
  g_autoptr (GError) err = NULL;
  *out_ctx = ctx;
  if (!cmd_check_options (*argc, *argv, (const GOptionEntry *const[]) { entries, common_entries (c), NULL }, &err)
      || !g_option_context_parse (ctx, argc, argv, &err))
    {
      cmd_error ("synth %s: %s", workload, err->message);
      return 2;
    }
  if (*argc > 1)
    return usage_error (ctx, "unexpected argument '%s'", (*argv)[1]);
  if (c->output == NULL)
    return usage_error (ctx, "%s: -o TRACE is required", workload);
  if (!(c->mfu > 0 && c->mfu <= 1) && !(c->mfu == -1 && c->mfu_optional))
    return usage_error (ctx, "%s: --mfu must be in (0, 1]", workload);
  return -1;
}

static int
run (Common *c, const char *workload, gboolean (*gen) (const void *, SynthEmit *, GError **), const void *opts)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (VsConfig) cfg = config_load (c->config ? c->config : "a100-80g", NULL, &err);
  if (cfg == NULL)
    {
      cmd_error ("%s", err->message);
      return 1;
    }
  if (c->config && !outfile_check_not_input (c->output, "-o", c->config, "the config", &err))
    {
      cmd_error ("%s: %s", workload, err->message);
      return 1;
    }
  if (c->warnings)
    g_ptr_array_add (c->warnings, NULL);
  SynthEmit *e = synth_emit_new_warn (c->output, cfg, c->mfu > 0 ? c->mfu : 0, workload,
                                      c->warnings ? (const char *const *) c->warnings->pdata : NULL, &err);
  if (c->warnings)
    g_ptr_array_remove_index (c->warnings, c->warnings->len - 1);
  if (e == NULL)
    {
      cmd_error ("%s", err->message);
      return 1;
    }
  if (!gen (opts, e, &err))
    {
      synth_emit_abort (e);
      cmd_error ("%s", err->message);
      return 1;
    }
  /* A trace "captured" on a preset it does not fit: its replay there
   * stops out of memory, which no capture could have recorded. */
  guint64 peak = synth_peak_device (e), cap = cfg->memory.capacity - cfg->memory.reserved;
  if (peak > cap)
    {
      g_autofree char *p = units_format_bytes (peak), *k = units_format_bytes (cap);
      fprintf (stderr, "vramsim: synth: warning: the trace peaks at %s of device memory, more than %s's %s: "
               "no run on %s could record it, and its replay there stops out of memory; shrink it or pick a "
               "larger -c\n", p, cfg->name, k, cfg->name);
    }
  if (!synth_emit_finish (e, &err))
    {
      cmd_error ("%s", err->message);
      return 1;
    }
  return 0;
}

static gboolean gen_train (const void *o, SynthEmit *e, GError **err) { return synth_transformer_train (o, e, err); }
static gboolean gen_infer (const void *o, SynthEmit *e, GError **err) { return synth_llm_infer (o, e, err); }
static gboolean gen_stream (const void *o, SynthEmit *e, GError **err) { return synth_stream (o, e, err); }

static int
train (int argc, char **argv)
{
  Common c = { NULL, NULL, -1, TRUE, NULL };
  SynthTrainOpts o = { .layers = 24, .hidden = 1024, .heads = 16, .seq = 1024, .batch = 8, .vocab = 50257,
                       .precision = SYNTH_PREC_MIXED, .optimizer = SYNTH_OPT_ADAM, .checkpoint = SYNTH_CKPT_NONE,
                       .checkpoint_every = 1, .dp = 1, .grad_accum = 1, .steps = 1, .tp = 1, .pp = 1 };
  /* -1: not given (--params alone then picks the shape). */
  int layers = -1, hidden = -1, heads = -1, seq = o.seq, batch = o.batch, vocab = o.vocab;
  int zero = 0, dp = 1, accum = 1, steps = 1, tp = 1, pp = 1, experts = 0, top_k = 2, vstages = 1;
  int kv_heads = 0, ffn = 0, head_dim = 0, shared_ffn = 0, dense_layers = 0, dense_ffn = 0, moe_every = 0, ep = 0;
  int kv_lora = 0, q_lora = 0, qk_rope = 0, v_head = 0;
  gboolean sp = FALSE, no_limit = FALSE, gated = FALSE, untied = FALSE, flash = FALSE, acc_emb = FALSE, acc_loss = FALSE;
  int window = 0, global_every = 0, stage = 0, first_layers = 0, last_layers = 0, cp = 1, mtp = 0;
  g_autofree char *params = NULL, *precision = NULL, *optimizer = NULL, *checkpoint = NULL, *offload = NULL,
                  *ddp = NULL;
  GOptionEntry entries[] = {
    { "params", 0, 0, G_OPTION_ARG_STRING, &params, "Parameter count (7.5e9, 350M); spread over --layers", "N" },
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers, "Transformer layers (24)", "L" },
    { "hidden", 0, 0, G_OPTION_ARG_INT, &hidden, "Hidden size (1024)", "H" },
    { "heads", 0, 0, G_OPTION_ARG_INT, &heads, "Attention heads (16)", "A" },
    { "seq", 0, 0, G_OPTION_ARG_INT, &seq, "Sequence length (1024)", "S" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "Micro-batch size per GPU (8)", "B" },
    { "vocab", 0, 0, G_OPTION_ARG_INT, &vocab, "Vocabulary size (50257)", "V" },
    { "kv-heads", 0, 0, G_OPTION_ARG_INT, &kv_heads, "Key/value heads: grouped-query attention (default: --heads)", "N" },
    { "ffn", 0, 0, G_OPTION_ARG_INT, &ffn, "MLP inner size (default: 4 x --hidden)", "F" },
    { "head-dim", 0, 0, G_OPTION_ARG_INT, &head_dim,
      "Size of an attention head (default: --hidden / --heads); with --kv-lora-rank its non-rotary QK part (qk_nope_head_dim)", "D" },
    { "kv-lora-rank", 0, 0, G_OPTION_ARG_INT, &kv_lora,
      "Multi-head latent attention (DeepSeek-V2/V3): rank of the latent K and V come from (0 = none)", "R" },
    { "q-lora-rank", 0, 0, G_OPTION_ARG_INT, &q_lora, "Latent attention: rank of Q's latent (0 = Q straight from x)", "R" },
    { "qk-rope-head-dim", 0, 0, G_OPTION_ARG_INT, &qk_rope, "Latent attention: rotary QK dims a head adds to --head-dim (0)", "D" },
    { "v-head-dim", 0, 0, G_OPTION_ARG_INT, &v_head, "Latent attention: a head's V size (default: --head-dim)", "D" },
    { "gated", 0, 0, G_OPTION_ARG_NONE, &gated, "Gated MLP (SwiGLU, as Llama: gate, up and down matrices)", NULL },
    { "untied", 0, 0, G_OPTION_ARG_NONE, &untied, "The LM head is its own vocab x hidden matrix, not the embedding's (Llama, Mistral)", NULL },
    { "flash-attn", 0, 0, G_OPTION_ARG_NONE, &flash,
      "Fused causal attention (FlashAttention, TE/cuDNN, SDPA): no scores in memory (default: materialized, Megatron-LM 2021's)", NULL },
    { "window", 0, 0, G_OPTION_ARG_INT, &window, "Sliding-window attention over the last W tokens (Mistral, Gemma, gpt-oss; 0 = none)", "W" },
    { "global-every", 0, 0, G_OPTION_ARG_INT, &global_every,
      "With --window: layers g with (g + 1) % N == 0 attend to the whole sequence (Gemma 2, gpt-oss: 2; Gemma 3: 6; 0 = none)", "N" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision, "fp32, fp16, bf16, mixed or fp8 (mixed; fp8: Transformer Engine)", "P" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &optimizer, "adam or sgd (adam)", "OPT" },
    { "checkpoint", 0, 0, G_OPTION_ARG_STRING, &checkpoint, "none, full, every=N or selective (none)", "MODE" },
    { "zero", 0, 0, G_OPTION_ARG_INT, &zero, "ZeRO stage 0-3 (0)", "STAGE" },
    { "dp", 0, 0, G_OPTION_ARG_INT, &dp, "Data-parallel ranks ZeRO shards over (1)", "N" },
    { "no-limit-all-gathers", 0, 0, G_OPTION_ARG_NONE, &no_limit,
      "ZeRO-3: let the host run ahead of the all-gathers (FSDP limit_all_gathers=False)", NULL },
    { "grad-accum", 0, 0, G_OPTION_ARG_INT, &accum, "Micro-batches per step (1)", "K" },
    { "offload", 0, 0, G_OPTION_ARG_STRING, &offload, "none or optimizer (none)", "WHAT" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &steps, "Optimizer steps (1)", "S" },
    { "tp", 0, 0, G_OPTION_ARG_INT, &tp, "Tensor-parallel ranks (Megatron) (1)", "T" },
    { "sp", 0, 0, G_OPTION_ARG_NONE, &sp, "Sequence parallelism with --tp", NULL },
    { "cp", 0, 0, G_OPTION_ARG_INT, &cp,
      "Context-parallel ranks: each holds --seq / C tokens, K and V go round the ring; with --flash-attn (1)", "C" },
    { "pp", 0, 0, G_OPTION_ARG_INT, &pp, "Pipeline stages, 1F1B over the --grad-accum micro-batches (1)", "P" },
    { "stage", 0, 0, G_OPTION_ARG_INT, &stage, "The pipeline stage the trace is, 0 to --pp - 1 (0)", "R" },
    { "first-stage-layers", 0, 0, G_OPTION_ARG_INT, &first_layers,
      "Layers on the first pipeline stage, the rest split evenly (Megatron-Core's --decoder-first-pipeline-num-layers; "
      "default: an even share)", "N" },
    { "last-stage-layers", 0, 0, G_OPTION_ARG_INT, &last_layers,
      "Layers on the last pipeline stage (--decoder-last-pipeline-num-layers; default: an even share)", "N" },
    { "account-for-embedding", 0, 0, G_OPTION_ARG_NONE, &acc_emb,
      "The embedding counts as a layer in the pipeline split: the first virtual stage holds one layer fewer "
      "(Megatron-Core's --account-for-embedding-in-pipeline-split)", NULL },
    { "account-for-loss", 0, 0, G_OPTION_ARG_NONE, &acc_loss,
      "The loss counts as a layer: the last virtual stage holds one fewer (--account-for-loss-in-pipeline-split)", NULL },
    { "virtual-stages", 0, 0, G_OPTION_ARG_INT, &vstages,
      "Model chunks per pipeline stage: the interleaved 1F1B schedule; --grad-accum a multiple of --pp (1)", "V" },
    { "ddp", 0, 0, G_OPTION_ARG_STRING, &ddp,
      "torch (gradients reduced layer by layer during the backward) or local (Megatron's LocalDDP: once after it) (torch)",
      "IMPL" },
    { "experts", 0, 0, G_OPTION_ARG_INT, &experts, "Experts per MoE layer; 0 = dense (0)", "E" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &top_k, "Experts each token is routed to (2)", "K" },
    { "ep", 0, 0, G_OPTION_ARG_INT, &ep, "Expert-parallel ranks: divides --dp and --experts (default: the smaller of them)", "N" },
    { "shared-ffn", 0, 0, G_OPTION_ARG_INT, &shared_ffn, "MoE: inner size of a shared expert every token also runs (DeepSeek, Qwen-MoE; 0 = none)", "S" },
    { "dense-layers", 0, 0, G_OPTION_ARG_INT, &dense_layers,
      "MoE: the first K layers run a dense MLP instead of the experts (DeepSeek's first_k_dense_replace; 0)", "K" },
    { "moe-every", 0, 0, G_OPTION_ARG_INT, &moe_every,
      "MoE: only layers g with (g + 1) % N == 0 are MoE, the rest dense (Qwen's decoder_sparse_step, Llama 4's interleave_moe_layer_step; 1)", "N" },
    { "dense-ffn", 0, 0, G_OPTION_ARG_INT, &dense_ffn, "MoE: the dense layers' MLP inner size (default: 4 x --hidden)", "F" },
    { "mtp", 0, 0, G_OPTION_ARG_INT, &mtp,
      "Multi-token prediction modules after the head, on the last stage (DeepSeek-V3's num_nextn_predict_layers; 0)", "D" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = NULL;
  int rc = parse ("transformer-train", "Data-, tensor- and pipeline-parallel training of a GPT-style transformer, one GPU's view.",
                  entries, &c, &argc, &argv, &ctx);
  gboolean shape_given = layers != -1 || hidden != -1 || heads != -1;
  if (rc < 0 && params && !shape_given && parse_count (params, &o.params))
    {
      const ShapeRow *row = shape_for (gpt3_shapes, G_N_ELEMENTS (gpt3_shapes), o.params);
      layers = row->layers, hidden = row->hidden, heads = row->heads;
      synth_note ("--params %s without a shape: using %s's %d layers x %d hidden x %d heads "
                  "(Brown et al. 2020, Table 2.1); give --layers --hidden --heads to choose",
                  params, row->name, layers, hidden, heads);
    }
  if (layers == -1) layers = (int) o.layers;
  if (hidden == -1) hidden = (int) o.hidden;
  if (heads == -1) heads = (int) o.heads;
  if (rc < 0)
    {
      if (layers < 1 || hidden < 1 || heads < 1 || seq < 1 || batch < 1 || vocab < 0 || head_dim < 0
          || (head_dim == 0 && hidden % heads != 0))
        rc = usage_error (ctx, "%s: layers, hidden, heads, seq and batch must be positive, hidden a multiple of heads "
                          "(unless --head-dim is given)", "transformer-train");
      else if (zero < 0 || zero > 3 || dp < 1 || accum < 1 || steps < 1)
        rc = usage_error (ctx, "%s: --zero is 0-3; --dp, --grad-accum and --steps are at least 1", "transformer-train");
      else if (tp < 1 || pp < 1 || pp > layers || hidden % tp != 0 || heads % tp != 0)
        rc = usage_error (ctx, "%s: --tp and --pp are at least 1, --tp divides --hidden and --heads, --pp at most --layers",
                          "transformer-train");
      else if (sp && tp < 2)
        rc = usage_error (ctx, "%s: --sp needs --tp 2 or more", "transformer-train");
      else if (kv_heads < 0 || ffn < 0 || (kv_heads > 0 && (heads % kv_heads != 0 || kv_heads % tp != 0))
               || (ffn > 0 && ffn % tp != 0))
        rc = usage_error (ctx, "%s: --kv-heads divides --heads and is a multiple of --tp; --ffn is a multiple of --tp",
                          "transformer-train");
      else if (experts < 0 || (experts > 0 && (top_k < 1 || top_k > experts || experts % MIN (dp, experts) != 0)))
        rc = usage_error (ctx, "%s: --experts is 0 or more, --top-k 1..experts, and --dp ranks (or fewer) must split the experts evenly",
                          "transformer-train");
      else if (ep < 0 || (ep > 0 && (experts == 0 || dp % ep != 0 || experts % ep != 0)))
        rc = usage_error (ctx, "%s: --ep goes with --experts and divides --dp and --experts", "transformer-train");
      else if (kv_lora < 0 || q_lora < 0 || qk_rope < 0 || v_head < 0
               || (kv_lora == 0 && (q_lora > 0 || qk_rope > 0 || v_head > 0)) || (kv_lora > 0 && kv_heads > 0))
        rc = usage_error (ctx, "%s: --q-lora-rank, --qk-rope-head-dim and --v-head-dim go with --kv-lora-rank, "
                          "which takes no --kv-heads (every head has its own K and V)", "transformer-train");
      else if (shared_ffn < 0 || (shared_ffn > 0 && (experts == 0 || shared_ffn % tp != 0)))
        rc = usage_error (ctx, "%s: --shared-ffn goes with --experts and is a multiple of --tp", "transformer-train");
      else if (dense_layers < 0 || dense_ffn < 0 || moe_every < 0
               || ((dense_layers > 0 || dense_ffn > 0 || moe_every > 1) && experts == 0) || dense_layers > layers
               || ((dense_layers > 0 || moe_every > 1) && (dense_ffn > 0 ? dense_ffn : 4 * hidden) % tp != 0))
        rc = usage_error (ctx, "%s: --dense-layers (at most --layers), --moe-every and --dense-ffn go with --experts; "
                          "the dense inner size is a multiple of --tp", "transformer-train");
      else if (window < 0 || global_every < 0 || (global_every > 0 && window == 0))
        rc = usage_error (ctx, "%s: --window is 0 or more, and --global-every goes with it", "transformer-train");
      else if (params && !parse_count (params, &o.params))
        rc = usage_error (ctx, "--params: not a count: '%s'", params);
      else if (precision && !synth_precision_from_name (precision, &o.precision))
        rc = usage_error (ctx, "--precision: expected fp32, fp16, bf16, mixed or fp8, not '%s'", precision);
      else if (optimizer && strcmp (optimizer, "adam") != 0 && strcmp (optimizer, "sgd") != 0)
        rc = usage_error (ctx, "--optimizer: expected adam or sgd, not '%s'", optimizer);
      else if (offload && strcmp (offload, "none") != 0 && strcmp (offload, "optimizer") != 0)
        rc = usage_error (ctx, "--offload: expected none or optimizer, not '%s'", offload);
      else if (ddp && strcmp (ddp, "torch") != 0 && strcmp (ddp, "local") != 0)
        rc = usage_error (ctx, "--ddp: expected torch or local, not '%s'", ddp);
      else if (vstages < 1 || (vstages > 1 && pp < 2))
        rc = usage_error (ctx, "%s: --virtual-stages is at least 1, and more than 1 needs --pp 2 or more", "transformer-train");
      else if (cp < 1)
        rc = usage_error (ctx, "%s: --cp is at least 1", "transformer-train");
      else if (mtp < 0 || mtp > 16 || (mtp > 0 && params))
        rc = usage_error (ctx, "%s: --mtp is 0 to 16, and takes the shape, not --params", "transformer-train");
      else if (stage < 0 || first_layers < 0 || last_layers < 0)
        rc = usage_error (ctx, "%s: --stage, --first-stage-layers and --last-stage-layers are 0 or more", "transformer-train");
      else
        {
          SynthTrainOpts split = { .layers = (guint) layers, .pp = (guint) pp, .virtual_stages = (guint) vstages,
                                   .grad_accum = (guint) accum, .stage = (guint) stage,
                                   .first_stage_layers = (guint) first_layers, .last_stage_layers = (guint) last_layers,
                                   .account_embedding = acc_emb, .account_loss = acc_loss };
          SynthTrainOpts cpo = { .cp = (guint) cp, .seq = (guint) seq, .flash_attn = flash, .window = (guint) MAX (window, 0),
                                 .experts = (guint) MAX (experts, 0) };
          g_autoptr (GError) err = NULL;
          if (!synth_train_check_split (&split, &err) || !synth_train_check_cp (&cpo, &err))
            rc = usage_error (ctx, "%s", err->message);
        }
    }
  if (rc < 0 && checkpoint && strcmp (checkpoint, "none") != 0)
    {
      guint64 n = 0;
      if (strcmp (checkpoint, "selective") == 0)
        o.checkpoint = SYNTH_CKPT_SELECTIVE;
      else if (strcmp (checkpoint, "full") == 0)
        o.checkpoint = SYNTH_CKPT_EVERY, o.checkpoint_every = 1;
      else if (g_str_has_prefix (checkpoint, "every=") && parse_count (checkpoint + 6, &n) && n <= (guint64) layers)
        o.checkpoint = SYNTH_CKPT_EVERY, o.checkpoint_every = (guint) n;
      else
        rc = usage_error (ctx, "--checkpoint: expected none, full, every=N (1..layers) or selective, not '%s'",
                          checkpoint);
    }
  g_option_context_free (ctx);
  if (rc >= 0)
    {
      common_clear (&c);
      return rc;
    }
  o.layers = layers, o.hidden = hidden, o.heads = heads, o.seq = seq, o.batch = batch, o.vocab = vocab;
  o.zero = zero, o.dp = dp, o.grad_accum = accum, o.steps = steps;
  o.no_limit_all_gathers = no_limit;
  o.tp = tp, o.pp = pp, o.sp = sp, o.experts = experts, o.top_k = experts > 0 ? top_k : 0;
  o.virtual_stages = vstages;
  o.stage = (guint) stage, o.first_stage_layers = (guint) first_layers, o.last_stage_layers = (guint) last_layers;
  o.cp = (guint) cp, o.mtp = (guint) mtp;
  o.account_embedding = acc_emb, o.account_loss = acc_loss;
  o.kv_heads = (guint) kv_heads, o.ffn = (guint) ffn, o.gated_mlp = gated, o.head_dim = (guint) head_dim;
  o.untied = untied, o.shared_ffn = (guint) shared_ffn;
  o.ep = (guint) ep;
  o.dense_layers = (guint) dense_layers, o.dense_ffn = (guint) dense_ffn, o.moe_every = moe_every > 1 ? (guint) moe_every : 0;
  o.kv_lora = (guint) kv_lora, o.q_lora = (guint) q_lora, o.qk_rope = (guint) qk_rope, o.v_head = (guint) v_head;
  o.ddp_local = ddp && strcmp (ddp, "local") == 0;
  o.flash_attn = flash;
  o.window = (guint) MAX (window, 0), o.global_every = (guint) MAX (global_every, 0);
  if (window > 0 && !flash)
    synth_warn (&c, "--window without --flash-attn changes nothing: materialized scores are s x s, the window a mask");
  if (flash && o.precision == SYNTH_PREC_FP32)
    synth_warn (&c, "--flash-attn with --precision fp32: fused attention kernels run fp16/bf16; timed at the fp16 rate");
  if (zero > 0 && dp == 1)
    synth_warn (&c, "--zero %d with --dp 1 shards over one rank, which saves nothing: give --dp N", zero);
  if (no_limit && (zero < 3 || dp == 1))
    synth_warn (&c, "--no-limit-all-gathers changes nothing without --zero 3 --dp N (no parameter all-gathers)");
  if (o.params && shape_given)
    shape_check (&c, o.params, 12.0 * layers * (double) hidden * hidden + (double) vocab * hidden, layers, hidden);
  o.optimizer = optimizer && strcmp (optimizer, "sgd") == 0 ? SYNTH_OPT_SGD : SYNTH_OPT_ADAM;
  o.offload_optimizer = offload && strcmp (offload, "optimizer") == 0;
  rc = run (&c, "transformer-train", gen_train, &o);
  common_clear (&c);
  return rc;
}

static int
infer (int argc, char **argv)
{
  Common c = { NULL, NULL, 0.5, FALSE, NULL };
  int layers = -1, hidden = -1, heads = -1, kv_heads = 0, vocab = 32000, batch = 8, prompt = 512, gen = 128,
      kv_block = 16, kv_lora = 0, qk_rope = 0, ffn = 0, experts = 0, top_k = 2, tp = 1;
  gboolean gated = FALSE;
  g_autofree char *params = NULL, *precision = NULL, *kv_precision = NULL;
  GOptionEntry entries[] = {
    { "params", 0, 0, G_OPTION_ARG_STRING, &params, "Parameter count, spread over --layers (default: the shape's, 6.57e9 for 32 x 4096 and vocab 32000; alone, it picks Llama 2's shape nearest)", "N" },
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers, "Transformer layers (32)", "L" },
    { "hidden", 0, 0, G_OPTION_ARG_INT, &hidden, "Hidden size (4096)", "H" },
    { "heads", 0, 0, G_OPTION_ARG_INT, &heads, "Attention heads (32)", "A" },
    { "kv-heads", 0, 0, G_OPTION_ARG_INT, &kv_heads, "Key/value heads (= --heads)", "N" },
    { "vocab", 0, 0, G_OPTION_ARG_INT, &vocab, "Vocabulary size (32000)", "V" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "Sequences decoded together (8)", "B" },
    { "prompt", 0, 0, G_OPTION_ARG_INT, &prompt, "Prompt tokens per sequence (512)", "P" },
    { "gen", 0, 0, G_OPTION_ARG_INT, &gen, "Tokens generated per sequence (128)", "G" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision, "Weights: fp32, fp16, bf16 or fp8 (fp16)", "P" },
    { "kv-precision", 0, 0, G_OPTION_ARG_STRING, &kv_precision, "KV cache: fp32, fp16, bf16 or fp8 (fp16)", "P" },
    { "kv-block", 0, 0, G_OPTION_ARG_INT, &kv_block, "Tokens per paged KV block; 0 = grow by reallocation (16)", "N" },
    { "kv-lora-rank", 0, 0, G_OPTION_ARG_INT, &kv_lora,
      "Multi-head latent attention (DeepSeek-V2/V3): the cache holds a latent of this rank a token and layer (0 = none)", "R" },
    { "qk-rope-head-dim", 0, 0, G_OPTION_ARG_INT, &qk_rope, "Latent attention: the rotary key dims cached beside it (0)", "D" },
    { "ffn", 0, 0, G_OPTION_ARG_INT, &ffn, "MLP inner size (default: 4 x --hidden)", "F" },
    { "gated", 0, 0, G_OPTION_ARG_NONE, &gated, "Gated MLP (SwiGLU: three weight matrices)", NULL },
    { "experts", 0, 0, G_OPTION_ARG_INT, &experts, "MoE: experts of the MLP a layer; a step reads those its tokens reach (0 = dense)", "E" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &top_k, "MoE: experts each token is routed to (2)", "K" },
    { "tp", 0, 0, G_OPTION_ARG_INT, &tp,
      "Tensor-parallel ranks (vLLM, TensorRT-LLM): weights, heads and KV heads split T ways, two all-reduces a layer; "
      "the trace is rank 0's (1)", "T" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = NULL;
  int rc = parse ("llm-infer", "Batched LLM inference: prefill, then decode with a growing KV cache.", entries, &c,
                  &argc, &argv, &ctx);
  SynthInferOpts o = { 0 };
  gboolean shape_given = layers != -1 || hidden != -1 || heads != -1;
  if (rc < 0 && params && !shape_given && parse_count (params, &o.params))
    {
      const ShapeRow *row = shape_for (llama2_shapes, G_N_ELEMENTS (llama2_shapes), o.params);
      layers = row->layers, hidden = row->hidden, heads = row->heads;
      if (kv_heads == 0)
        kv_heads = row->kv_heads;
      synth_note ("--params %s without a shape: using %s's %d layers x %d hidden x %d heads (%d key/value) "
                  "(Touvron et al. 2023, Table 1); give --layers --hidden --heads to choose",
                  params, row->name, layers, hidden, heads, kv_heads);
    }
  if (layers == -1) layers = 32;
  if (hidden == -1) hidden = 4096;
  if (heads == -1) heads = 32;
  if (kv_heads == 0)
    kv_heads = heads;
  const char *names[] = { "fp8", "fp16", "bf16", "fp32", NULL };
  const guint sizes[] = { 1, 2, 2, 4 };
  o.weight_bytes = 2, o.kv_bytes = 2;
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      if (g_strcmp0 (precision, names[i]) == 0)
        o.weight_bytes = sizes[i];
      if (g_strcmp0 (kv_precision, names[i]) == 0)
        o.kv_bytes = sizes[i];
    }
  if (rc < 0)
    {
      if (layers < 1 || hidden < 1 || heads < 1 || kv_heads < 1 || heads % kv_heads != 0 || hidden % heads != 0
          || vocab < 0 || batch < 1 || prompt < 1 || gen < 0 || kv_block < 0)
        rc = usage_error (ctx, "%s: sizes must be positive, hidden a multiple of heads, heads of kv-heads", "llm-infer");
      else if (kv_lora < 0 || qk_rope < 0 || (qk_rope > 0 && kv_lora == 0))
        rc = usage_error (ctx, "%s: --kv-lora-rank is 0 or more, and --qk-rope-head-dim goes with it", "llm-infer");
      else if (ffn < 0 || experts < 0 || (experts > 0 && (top_k < 1 || top_k > experts)) || (experts > 0 && params))
        rc = usage_error (ctx, "%s: --ffn and --experts are 0 or more, --top-k 1..experts, and --experts takes the "
                          "shape, not --params", "llm-infer");
      else if (tp < 1 || heads % tp != 0 || (kv_heads % tp != 0 && tp % kv_heads != 0)
               || (ffn > 0 ? ffn : 4 * hidden) % tp != 0)
        rc = usage_error (ctx, "%s: --tp is at least 1 and divides --heads and the MLP's inner size; --kv-heads is a "
                          "multiple of it or divides it (each rank then holds one, replicated)", "llm-infer");
      else if (params && !parse_count (params, &o.params))
        rc = usage_error (ctx, "--params: not a count: '%s'", params);
      else if (precision && !g_strv_contains (names, precision))
        rc = usage_error (ctx, "--precision: expected fp32, fp16, bf16 or fp8, not '%s'", precision);
      else if (kv_precision && !g_strv_contains (names, kv_precision))
        rc = usage_error (ctx, "--kv-precision: expected fp32, fp16, bf16 or fp8, not '%s'", kv_precision);
    }
  g_option_context_free (ctx);
  if (rc >= 0)
    {
      common_clear (&c);
      return rc;
    }
  o.layers = layers, o.hidden = hidden, o.heads = heads, o.kv_heads = kv_heads, o.vocab = vocab;
  o.batch = batch, o.prompt = prompt, o.gen = gen, o.kv_block = kv_block;
  o.kv_lora = (guint) kv_lora, o.qk_rope = (guint) qk_rope;
  o.ffn = (guint) ffn, o.gated = gated, o.experts = (guint) experts, o.top_k = experts > 0 ? (guint) top_k : 0;
  o.tp = (guint) tp;
  if (o.params && shape_given)
    {
      double hd = (double) hidden / heads;
      shape_check (&c, o.params, (double) layers * (10.0 * hidden * hidden + 2.0 * hidden * kv_heads * hd)
                   + (double) vocab * hidden, layers, hidden);
    }
  rc = run (&c, "llm-infer", gen_infer, &o);
  common_clear (&c);
  return rc;
}

static int
stream (int argc, char **argv)
{
  Common c = { NULL, NULL, 0.5, FALSE, NULL };
  int iters = 10;
  gboolean prefetch = FALSE;
  g_autofree char *size = NULL, *memory = NULL;
  GOptionEntry entries[] = {
    { "size", 0, 0, G_OPTION_ARG_STRING, &size, "Bytes per array, with units (256MiB)", "SIZE" },
    { "iters", 0, 0, G_OPTION_ARG_INT, &iters, "Iterations of copy, scale, add, triad (10)", "N" },
    { "memory", 0, 0, G_OPTION_ARG_STRING, &memory, "device or managed (device)", "KIND" },
    { "prefetch", 0, 0, G_OPTION_ARG_NONE, &prefetch, "Prefetch managed arrays to the device first", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = NULL;
  int rc = parse ("stream", "STREAM copy/scale/add/triad over three arrays.", entries, &c, &argc, &argv, &ctx);
  SynthStreamOpts o = { 256 << 20, 10, FALSE, FALSE };
  if (rc < 0)
    {
      g_autoptr (GError) err = NULL;
      if (size && !units_parse_bytes (size, &o.size, &err))
        rc = usage_error (ctx, "--size: %s", err->message);
      else if (o.size < 8)
        rc = usage_error (ctx, "%s: --size must be at least 8 bytes", "stream");
      else if (iters < 1)
        rc = usage_error (ctx, "%s: --iters must be at least 1", "stream");
      else if (memory && strcmp (memory, "device") != 0 && strcmp (memory, "managed") != 0)
        rc = usage_error (ctx, "--memory: expected device or managed, not '%s'", memory);
    }
  g_option_context_free (ctx);
  if (rc >= 0)
    {
      common_clear (&c);
      return rc;
    }
  o.iters = iters;
  o.managed = memory && strcmp (memory, "managed") == 0;
  o.prefetch = prefetch;
  rc = run (&c, "stream", gen_stream, &o);
  common_clear (&c);
  return rc;
}

static void
usage (FILE *f)
{
  fputs ("Usage: vramsim synth WORKLOAD [OPTIONS...] -o TRACE\n\n"
         "Generate a trace for a modeled workload on a preset (-c, default a100-80g).\n\n"
         "Workloads:\n"
         "  transformer-train  data-parallel training (ZeRO, checkpointing, offload)\n"
         "  llm-infer          LLM inference with a growing KV cache\n"
         "  stream             STREAM copy/scale/add/triad on device or managed memory\n\n"
         "Run 'vramsim synth WORKLOAD --help' for its options.\n", f);
}

int
cmd_synth (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  const char *w = argv[1];
  if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (w, "transformer-train") == 0)
    return train (argc - 1, argv + 1);
  if (strcmp (w, "llm-infer") == 0)
    return infer (argc - 1, argv + 1);
  if (strcmp (w, "stream") == 0)
    return stream (argc - 1, argv + 1);
  cmd_error ("synth: unknown workload '%s' (transformer-train, llm-infer, stream)", w);
  usage (stderr);
  return 2;
}
