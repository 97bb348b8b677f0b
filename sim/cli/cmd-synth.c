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
  double mfu;
} Common;

static void
common_clear (Common *c)
{
  g_clear_pointer (&c->output, g_free);
  g_clear_pointer (&c->config, g_free);
}

static GOptionEntry *
common_entries (Common *c)
{
  static GOptionEntry e[4];
  GOptionEntry tmp[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &c->output, "Trace to write (.jsonl or .vtrace)", "TRACE" },
    { "config", 'c', 0, G_OPTION_ARG_STRING, &c->config, "Preset or config file the workload runs on (a100-80g)", "CONFIG" },
    { "mfu", 0, 0, G_OPTION_ARG_DOUBLE, &c->mfu, "Fraction of the preset's tflops kernels achieve (0.5)", "F" },
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
  if (!g_option_context_parse (ctx, argc, argv, &err))
    {
      cmd_error ("synth %s: %s", workload, err->message);
      return 2;
    }
  if (*argc > 1)
    return usage_error (ctx, "unexpected argument '%s'", (*argv)[1]);
  if (c->output == NULL)
    return usage_error (ctx, "%s: -o TRACE is required", workload);
  if (!(c->mfu > 0 && c->mfu <= 1))
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
  SynthEmit *e = synth_emit_new (c->output, cfg, c->mfu, workload, &err);
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

static gboolean
parse_precision (const char *s, SynthPrecision *p)
{
  static const char *names[] = { "fp32", "fp16", "bf16", "mixed" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (s, names[i]) == 0)
      {
        *p = (SynthPrecision) i;
        return TRUE;
      }
  return FALSE;
}

static int
train (int argc, char **argv)
{
  Common c = { NULL, NULL, 0.5 };
  SynthTrainOpts o = { 0, 24, 1024, 16, 1024, 8, 50257, SYNTH_PREC_MIXED, SYNTH_OPT_ADAM, SYNTH_CKPT_NONE, 1,
                       0, 1, 1, 1, FALSE };
  int layers = o.layers, hidden = o.hidden, heads = o.heads, seq = o.seq, batch = o.batch, vocab = o.vocab;
  int zero = 0, dp = 1, accum = 1, steps = 1;
  g_autofree char *params = NULL, *precision = NULL, *optimizer = NULL, *checkpoint = NULL, *offload = NULL;
  GOptionEntry entries[] = {
    { "params", 0, 0, G_OPTION_ARG_STRING, &params, "Parameter count (7.5e9, 350M); spread over --layers", "N" },
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers, "Transformer layers (24)", "L" },
    { "hidden", 0, 0, G_OPTION_ARG_INT, &hidden, "Hidden size (1024)", "H" },
    { "heads", 0, 0, G_OPTION_ARG_INT, &heads, "Attention heads (16)", "A" },
    { "seq", 0, 0, G_OPTION_ARG_INT, &seq, "Sequence length (1024)", "S" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "Micro-batch size per GPU (8)", "B" },
    { "vocab", 0, 0, G_OPTION_ARG_INT, &vocab, "Vocabulary size (50257)", "V" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision, "fp32, fp16, bf16 or mixed (mixed)", "P" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &optimizer, "adam or sgd (adam)", "OPT" },
    { "checkpoint", 0, 0, G_OPTION_ARG_STRING, &checkpoint, "none, full, every=N or selective (none)", "MODE" },
    { "zero", 0, 0, G_OPTION_ARG_INT, &zero, "ZeRO stage 0-3 (0)", "STAGE" },
    { "dp", 0, 0, G_OPTION_ARG_INT, &dp, "Data-parallel ranks ZeRO shards over (1)", "N" },
    { "grad-accum", 0, 0, G_OPTION_ARG_INT, &accum, "Micro-batches per step (1)", "K" },
    { "offload", 0, 0, G_OPTION_ARG_STRING, &offload, "none or optimizer (none)", "WHAT" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &steps, "Optimizer steps (1)", "S" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = NULL;
  int rc = parse ("transformer-train", "Data-parallel training of a GPT-style transformer, one GPU's view.",
                  entries, &c, &argc, &argv, &ctx);
  if (rc < 0)
    {
      if (layers < 1 || hidden < 1 || heads < 1 || seq < 1 || batch < 1 || vocab < 0 || hidden % heads != 0)
        rc = usage_error (ctx, "%s: layers, hidden, heads, seq and batch must be positive, hidden a multiple of heads",
                          "transformer-train");
      else if (zero < 0 || zero > 3 || dp < 1 || accum < 1 || steps < 1)
        rc = usage_error (ctx, "%s: --zero is 0-3; --dp, --grad-accum and --steps are at least 1", "transformer-train");
      else if (params && !parse_count (params, &o.params))
        rc = usage_error (ctx, "--params: not a count: '%s'", params);
      else if (precision && !parse_precision (precision, &o.precision))
        rc = usage_error (ctx, "--precision: expected fp32, fp16, bf16 or mixed, not '%s'", precision);
      else if (optimizer && strcmp (optimizer, "adam") != 0 && strcmp (optimizer, "sgd") != 0)
        rc = usage_error (ctx, "--optimizer: expected adam or sgd, not '%s'", optimizer);
      else if (offload && strcmp (offload, "none") != 0 && strcmp (offload, "optimizer") != 0)
        rc = usage_error (ctx, "--offload: expected none or optimizer, not '%s'", offload);
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
  o.optimizer = optimizer && strcmp (optimizer, "sgd") == 0 ? SYNTH_OPT_SGD : SYNTH_OPT_ADAM;
  o.offload_optimizer = offload && strcmp (offload, "optimizer") == 0;
  rc = run (&c, "transformer-train", gen_train, &o);
  common_clear (&c);
  return rc;
}

static int
infer (int argc, char **argv)
{
  Common c = { NULL, NULL, 0.5 };
  int layers = 32, hidden = 4096, heads = 32, kv_heads = 0, vocab = 32000, batch = 8, prompt = 512, gen = 128,
      kv_block = 16;
  g_autofree char *params = NULL, *precision = NULL, *kv_precision = NULL;
  GOptionEntry entries[] = {
    { "params", 0, 0, G_OPTION_ARG_STRING, &params, "Parameter count (7e9); spread over --layers", "N" },
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
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionContext *ctx = NULL;
  int rc = parse ("llm-infer", "Batched LLM inference: prefill, then decode with a growing KV cache.", entries, &c,
                  &argc, &argv, &ctx);
  SynthInferOpts o = { 0 };
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
  rc = run (&c, "llm-infer", gen_infer, &o);
  common_clear (&c);
  return rc;
}

static int
stream (int argc, char **argv)
{
  Common c = { NULL, NULL, 0.5 };
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
