/* test-synth.c — the workload generators against published figures and
 * formulas worked out by hand: the ZeRO paper's model-state memory, the
 * Korthikanti et al. activation bytes under each recomputation mode, the
 * recompute FLOPs, a KV cache growing linearly per token, and STREAM's
 * bytes per kernel. Each generated trace is read back through the trace
 * reader (which validates it) and measured here. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "config/config.h"
#include "model/network.h"
#include "synth/synth.h"
#include "trace/trace.h"

typedef struct {
  GHashTable *peak;       /* tag -> peak live bytes */
  guint64 kernels, copies, syncs, marks, prefetches;
  guint64 event_syncs;        /* syncs on one event (cudaEventSynchronize) */
  guint64 last_synced;        /* the last such event, to check they come in order */
  guint64 end_ns;         /* last host time or GPU end seen (t + host_ns) */
  GHashTable *kernel_compute; /* name -> sum of compute_ns */
  GHashTable *kernel_dur;     /* name -> sum of dur */
  guint64 pinned_optimizer;   /* bytes of optimizer allocations that are pinned */
  guint64 h2d, d2h;
  guint64 mark_t[2];          /* host time of the first two marks */
} Stats;

static void
add_to (GHashTable *h, const char *key, guint64 v)
{
  guint64 *p = g_hash_table_lookup (h, key);
  if (p == NULL)
    {
      p = g_new0 (guint64, 1);
      g_hash_table_insert (h, g_strdup (key), p);
    }
  *p += v;
}

static guint64
get (GHashTable *h, const char *key)
{
  guint64 *p = g_hash_table_lookup (h, key);
  return p ? *p : 0;
}

static void
stats_free (Stats *s)
{
  g_hash_table_unref (s->peak);
  g_hash_table_unref (s->kernel_compute);
  g_hash_table_unref (s->kernel_dur);
}

static void
measure (const char *path, Stats *s)
{
  memset (s, 0, sizeof *s);
  s->peak = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  s->kernel_compute = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  s->kernel_dur = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) tag_of = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GHashTable) size_of = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GError) err = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &err);
  g_assert_no_error (err);
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    {
      s->end_ns = MAX (s->end_ns, ev.t + ev.host_ns);
      switch (ev.op)
        {
        case VS_OP_ALLOC:
          {
            const char *tag = ev.tag ? ev.tag : "";
            g_hash_table_insert (tag_of, g_memdup2 (&ev.id, 8), g_strdup (tag));
            g_hash_table_insert (size_of, g_memdup2 (&ev.id, 8), g_memdup2 (&ev.bytes, 8));
            add_to (live, tag, ev.bytes);
            guint64 now = get (live, tag);
            if (now > get (s->peak, tag))
              {
                add_to (s->peak, tag, 0);
                *(guint64 *) g_hash_table_lookup (s->peak, tag) = now;
              }
            if (ev.kind == VS_MEM_PINNED && strcmp (tag, "optimizer") == 0)
              s->pinned_optimizer += ev.bytes;
            break;
          }
        case VS_OP_FREE:
          {
            const char *tag = g_hash_table_lookup (tag_of, &ev.id);
            guint64 *b = g_hash_table_lookup (size_of, &ev.id);
            *(guint64 *) g_hash_table_lookup (live, tag) -= *b;
            g_hash_table_remove (tag_of, &ev.id);
            g_hash_table_remove (size_of, &ev.id);
            break;
          }
        case VS_OP_KERNEL:
          s->kernels++;
          add_to (s->kernel_compute, ev.name, ev.compute_ns);
          add_to (s->kernel_dur, ev.name, ev.dur);
          break;
        case VS_OP_COPY:
          s->copies++;
          s->h2d += ev.dir == VS_DIR_H2D ? ev.bytes : 0;
          s->d2h += ev.dir == VS_DIR_D2H ? ev.bytes : 0;
          break;
        case VS_OP_SYNC:
          s->syncs++;
          if (ev.scope == VS_SYNC_EVENT)
            {
              /* FSDP's queue is FIFO: each wait is on a later event. */
              g_assert_cmpuint (ev.event, >, s->last_synced);
              s->last_synced = ev.event;
              s->event_syncs++;
            }
          break;
        case VS_OP_MARK:
          if (s->marks < 2)
            s->mark_t[s->marks] = ev.t;
          s->marks++;
          break;
        case VS_OP_PREFETCH: s->prefetches++; break;
        default: break;
        }
    }
  g_assert_no_error (err);
}

static VsConfig *
preset (const char *name)
{
  if (g_getenv ("VRAMSIM_CONFIGS") == NULL)
    {
      g_autofree char *cwd = g_get_current_dir ();
      g_autofree char *dir = g_build_filename (cwd, "configs", NULL);
      g_setenv ("VRAMSIM_CONFIGS", dir, TRUE);
    }
  g_autoptr (GError) err = NULL;
  VsConfig *c = config_load (name, NULL, &err);
  g_assert_no_error (err);
  return c;
}

typedef gboolean (*Gen) (const void *, SynthEmit *, GError **);
static gboolean gen_train (const void *o, SynthEmit *e, GError **err) { return synth_transformer_train (o, e, err); }
static gboolean gen_infer (const void *o, SynthEmit *e, GError **err) { return synth_llm_infer (o, e, err); }
static gboolean gen_stream (const void *o, SynthEmit *e, GError **err) { return synth_stream (o, e, err); }

/* Generates into a temp file, measures, removes. */
static void
generate (Gen gen, const void *opts, const VsConfig *cfg, Stats *s)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-synth-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "t.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  SynthEmit *e = synth_emit_new (out, cfg, 0.5, "test", &err);
  g_assert_no_error (err);
  g_assert_true (gen (opts, e, &err));
  g_assert_true (synth_emit_finish (e, &err));
  g_assert_no_error (err);
  measure (out, s);
  g_unlink (out);
  g_rmdir (dir);
}

/* generate(), counting the collectives into COMM. */
static void
generate_comm (Gen gen, const void *opts, const VsConfig *cfg, Stats *s, SynthCommStats *comm)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-synth-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "t.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  SynthEmit *e = synth_emit_new (out, cfg, 0.5, "test", &err);
  g_assert_no_error (err);
  memset (comm, 0, sizeof *comm);
  synth_emit_watch_comm (e, comm);
  g_assert_true (gen (opts, e, &err));
  g_assert_true (synth_emit_finish (e, &err));
  g_assert_no_error (err);
  measure (out, s);
  g_unlink (out);
  g_rmdir (dir);
}

static SynthTrainOpts
small_train (void)
{
  SynthTrainOpts o = { 0 };
  o.layers = 4, o.hidden = 256, o.heads = 8, o.seq = 128, o.batch = 2, o.vocab = 1000;
  o.precision = SYNTH_PREC_MIXED, o.optimizer = SYNTH_OPT_ADAM, o.checkpoint = SYNTH_CKPT_NONE;
  o.checkpoint_every = 1, o.zero = 0, o.dp = 1, o.grad_accum = 1, o.steps = 1;
  return o;
}

static void
assert_within (double got, double want, double frac)
{
  if (fabs (got - want) > frac * want)
    g_error ("%.6g is not within %.0f %% of %.6g", got, frac * 100, want);
}

/* |GOT - WANT| <= ABS: N values each rounded to 1 ns are within N/2. */
static void
assert_near (double got, double want, double abs)
{
  if (fabs (got - want) > abs)
    g_error ("%.9g is not within %.3g of %.9g", got, abs, want);
}

/* ZeRO paper, Figure 1 / Table 1: Ψ = 7.5B, N = 64, K = 12. */
static void
test_zero (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const double want[] = { 120e9, 31.4e9, 16.6e9, 1.9e9 };
  for (guint z = 0; z <= 3; z++)
    {
      SynthTrainOpts o = small_train ();
      o.params = 7500000000ull, o.layers = 32, o.hidden = 4096, o.heads = 32, o.seq = 64, o.batch = 1;
      o.zero = z, o.dp = 64;
      Stats s;
      generate (gen_train, &o, cfg, &s);
      double states = (double) (get (s.peak, "params") + get (s.peak, "grads") + get (s.peak, "optimizer"));
      assert_within (states, want[z], 0.05);
      /* and exactly the formulas: (2 + 2 + 12)Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N, 16Ψ/N */
      const guint64 psi = 7500000000ull, N = 64;
      const guint64 exact[] = { 16 * psi, 4 * psi + 12 * psi / N, 2 * psi + 14 * psi / N, 16 * psi / N };
      assert_within (states, (double) exact[z], 1e-6);
      stats_free (&s);
    }
}

/* The optimizer step's fp32 gradients (Megatron's
 * _copy_model_grads_to_main_grads): under mixed precision the step casts
 * the 16-bit gradients of every parameter this rank updates to fp32 (4
 * bytes each, tagged workspace) before the update and frees them after.
 * small_train: Ψ = 4 layers · 12·256² + the 1000 × 256 embedding =
 * 3,401,728; at the step params 2Ψ + grads 2Ψ + optimizer 12Ψ + these 4Ψ
 * = 20Ψ live, and the 4-byte loss (workspace too; activations and
 * logits are gone). ZeRO-1 over
 * 8 ranks: 4Ψ/8 = 1,700,864 (each unit divides by 8). fp32 and
 * ZeRO-Offload: no cast (the gradients are fp32 already; the step is on
 * the host). */
static void
test_main_grads (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 psi = 4 * 12 * 256 * 256 + 1000 * 256;
  g_assert_cmpuint (psi, ==, 3401728);
  SynthTrainOpts o = small_train ();
  Stats s;
  generate (gen_train, &o, cfg, &s);
  g_assert_cmpuint (get (s.peak, "workspace"), ==, 4 * psi + 4);
  g_assert_cmpuint (get (s.peak, "params") + get (s.peak, "grads") + get (s.peak, "optimizer"), ==, 16 * psi);
  g_assert_cmpuint (get (s.kernel_dur, "multi_tensor_scale"), >, 0);
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 20 * psi);
  stats_free (&s);
  o.zero = 1, o.dp = 8;
  generate (gen_train, &o, cfg, &s);
  g_assert_cmpuint (get (s.peak, "workspace"), ==, 1700864 + 4);
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 4 * psi + 12 * psi / 8 + 1700864);
  stats_free (&s);
  o = small_train ();
  o.precision = SYNTH_PREC_FP32;
  generate (gen_train, &o, cfg, &s);
  g_assert_cmpuint (get (s.kernel_dur, "multi_tensor_scale"), ==, 0);
  g_assert_cmpuint (get (s.peak, "workspace"), <, 4 * psi);
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 16 * psi);
  stats_free (&s);
  o = small_train ();
  o.offload_optimizer = TRUE;
  generate (gen_train, &o, cfg, &s);
  g_assert_cmpuint (get (s.kernel_dur, "multi_tensor_scale"), ==, 0);
  g_assert_cmpuint (synth_train_state_device_bytes (&o), ==, 4 * psi);
  stats_free (&s);
}

/* Korthikanti et al.: s·b·h·(34 + 5·a·s/h) bytes per layer at 16 bits. */
static void
test_activations (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  const guint64 L = 4, s = 128, b = 2, h = 256, a = 8;
  const guint64 full = s * b * h * 34 + 5 * a * s * s * b; /* 2228224 + 1310720 */
  g_assert_cmpuint (full, ==, 3538944);
  g_assert_cmpuint (synth_train_layer_activations (&o), ==, full);
  struct { SynthCheckpoint mode; guint every; guint64 want; } cases[] = {
    { SYNTH_CKPT_NONE, 1, L * full },
    { SYNTH_CKPT_SELECTIVE, 1, L * 34 * s * b * h + 5 * a * s * s * b },  /* drops 5as/h, one layer's attention recomputed */
    { SYNTH_CKPT_EVERY, 1, L * 2 * s * b * h + full },                     /* layer inputs + one layer */
    { SYNTH_CKPT_EVERY, 2, 2 * 2 * s * b * h + 2 * full },                 /* 2 segment inputs + a segment */
  };
  guint64 prev = G_MAXUINT64;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      o.checkpoint = cases[i].mode, o.checkpoint_every = cases[i].every;
      Stats st;
      generate (gen_train, &o, cfg, &st);
      g_assert_cmpuint (get (st.peak, "activations"), ==, cases[i].want);
      if (i < 3)
        g_assert_cmpuint (cases[i].want, <, prev); /* each mode saves more */
      prev = cases[i].want;
      stats_free (&st);
    }
  /* fp32 activations take twice the bytes */
  o.checkpoint = SYNTH_CKPT_NONE, o.precision = SYNTH_PREC_FP32;
  Stats st;
  generate (gen_train, &o, cfg, &st);
  g_assert_cmpuint (get (st.peak, "activations"), ==, 2 * L * full);
  stats_free (&st);
  /* Fused attention keeps each row's fp32 log-sum-exp, 4·a·s·b, in place
   * of the scores' 5·a·s²·b: 2228224 + 8192 a layer. */
  o.precision = SYNTH_PREC_MIXED, o.flash_attn = TRUE;
  const guint64 flash = s * b * h * 34 + 4 * a * s * b;
  g_assert_cmpuint (synth_train_layer_activations (&o), ==, flash);
  generate (gen_train, &o, cfg, &st);
  g_assert_cmpuint (get (st.peak, "activations"), ==, L * flash);
  stats_free (&st);
}

/* The sum of TABLE's values over the kernel names ending in SUFFIX. */
static guint64
sum_suffix (GHashTable *table, const char *suffix)
{
  GHashTableIter it;
  gpointer k, v;
  guint64 sum = 0;
  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (g_str_has_suffix (k, suffix))
      sum += *(guint64 *) v;
  return sum;
}

/* The backward's kernels: GEMMs' dX and dW, the elementwise backwards,
 * the gradient accumulation. */
static guint64
sum_backward (GHashTable *table)
{
  return get (table, "elementwise_grad_accum") + sum_suffix (table, "_dx") + sum_suffix (table, "_dw") + sum_suffix (table, "_bwd") + sum_suffix (table, "_dp")
         + sum_suffix (table, "_dv") + sum_suffix (table, "_dq") + sum_suffix (table, "_dk");
}

/* Full recomputation adds one forward per layer (2·Ψ_layer·tokens +
 * 4·b·s²·h FLOPs: the QKV, projection, fc1 and fc2 GEMMs and the two
 * attention batched GEMMs), selective only the attention core (4·b·s²·h);
 * at --mfu 0.5 (the override: FLOPs at 312 TFLOPS × 0.5 on a100-80g) the
 * GEMMs' compute_ns add up to those FLOPs' time; memory-bound kernels
 * have none. The LM head is the same in all three. */
static void
test_recompute (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  o.steps = 2;
  const double L = 4, s = 128, b = 2, h = 256, steps = 2, rate = 312e12 * 0.5;
  const double fwd = 2.0 * 12 * h * h * s * b + 4.0 * b * s * s * h;
  Stats none, full, sel;
  generate (gen_train, &o, cfg, &none);
  o.checkpoint = SYNTH_CKPT_EVERY, o.checkpoint_every = 1;
  generate (gen_train, &o, cfg, &full);
  o.checkpoint = SYNTH_CKPT_SELECTIVE;
  generate (gen_train, &o, cfg, &sel);
  g_assert_cmpuint (sum_suffix (none.kernel_compute, "_recompute"), ==, 0);
  /* each GEMM rounds to 1 ns: 6 a layer recomputed in full, 2 selective */
  assert_near ((double) sum_suffix (full.kernel_compute, "_recompute"), steps * L * fwd / rate * 1e9, steps * L * 6 / 2.0);
  assert_near ((double) sum_suffix (sel.kernel_compute, "_recompute"), steps * L * 4.0 * b * s * s * h / rate * 1e9,
               steps * L * 2 / 2.0);
  g_assert_cmpuint (get (sel.kernel_compute, "gemm_qkv_recompute"), ==, 0);
  /* forward and backward FLOPs are the same in all three: 6Ψ per token plus attention */
  g_assert_cmpuint (sum_backward (full.kernel_compute), ==, sum_backward (none.kernel_compute));
  g_assert_cmpuint (sum_backward (sel.kernel_compute), ==, sum_backward (none.kernel_compute));
  g_assert_cmpuint (sum_suffix (full.kernel_compute, "_fwd"), ==, sum_suffix (none.kernel_compute, "_fwd"));
  /* backward: each layer's GEMMs twice the forward's FLOPs, plus the LM head's dX and dW (2 x 2·V·h·tokens) */
  double head = 2.0 * 1000 * h * s * b;
  assert_near ((double) sum_backward (none.kernel_compute), steps * (L * 2 * fwd + 2 * head) / rate * 1e9,
               steps * (L * 12 + 2) / 2.0);
  /* the run takes longer by at least the recompute kernels' time */
  g_assert_cmpuint (full.end_ns, >=, none.end_ns + sum_suffix (full.kernel_dur, "_recompute") * 9 / 10);
  g_assert_cmpuint (sel.end_ns, >, none.end_ns);
  g_assert_cmpuint (none.marks, ==, 2);
  stats_free (&none);
  stats_free (&full);
  stats_free (&sel);
}

/* ZeRO-Offload: optimizer states in pinned host memory, grads down and
 * params up each step. */
static void
test_offload (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  o.offload_optimizer = TRUE, o.steps = 3;
  Stats s;
  generate (gen_train, &o, cfg, &s);
  const guint64 psi = 4 * 12 * 256 * 256 + 1000 * 256;
  g_assert_cmpuint (s.pinned_optimizer, ==, 12 * psi);
  g_assert_cmpuint (s.d2h, ==, 3 * (2 * psi + 4)); /* fp16 grads + the loss, per step */
  g_assert_cmpuint (s.h2d, >=, 3 * 2 * psi);      /* fp16 params per step, after the initial load */
  stats_free (&s);
}

/* KV cache: 2 · layers · kv_heads · head_dim · bytes per token per sequence. */
static void
test_kv_linear (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthInferOpts o = { 0 };
  o.layers = 4, o.hidden = 256, o.heads = 8, o.kv_heads = 2, o.vocab = 1000;
  o.batch = 3, o.prompt = 20, o.weight_bytes = 2, o.kv_bytes = 2, o.kv_block = 1;
  const guint64 per_token = 2 * 4 * 2 * 32 * 2; /* 1024 */
  g_assert_cmpuint (synth_infer_kv_bytes_per_token (&o), ==, per_token);
  guint64 peak[3];
  const guint gens[] = { 10, 30, 50 };
  for (guint i = 0; i < 3; i++)
    {
      o.gen = gens[i];
      Stats s;
      generate (gen_infer, &o, cfg, &s);
      peak[i] = get (s.peak, "kv_cache");
      g_assert_cmpuint (peak[i], ==, 3 * (20 + gens[i]) * per_token);
      g_assert_cmpuint (s.marks, ==, 1 + gens[i]); /* prefill + one per token */
      stats_free (&s);
    }
  g_assert_cmpuint (peak[1] - peak[0], ==, peak[2] - peak[1]);
  /* paged by 16-token blocks: rounded up to whole blocks */
  o.kv_block = 16, o.gen = 30;
  Stats s;
  generate (gen_infer, &o, cfg, &s);
  g_assert_cmpuint (get (s.peak, "kv_cache"), ==, 3 * 64 * per_token);
  stats_free (&s);
  /* fp8 halves it */
  o.kv_block = 1, o.kv_bytes = 1;
  generate (gen_infer, &o, cfg, &s);
  g_assert_cmpuint (get (s.peak, "kv_cache"), ==, 3 * 50 * per_token / 2);
  stats_free (&s);
  /* Latent attention: a latent of 64 and 16 rotary key dims a token and
   * layer, whatever the heads: 4 x 80 x 2 = 640 bytes. */
  o.kv_bytes = 2, o.kv_lora = 64, o.qk_rope = 16;
  g_assert_cmpuint (synth_infer_kv_bytes_per_token (&o), ==, 640);
  generate (gen_infer, &o, cfg, &s);
  g_assert_cmpuint (get (s.peak, "kv_cache"), ==, 3 * 50 * 640);
  stats_free (&s);
}

/* Tensor-parallel inference (--tp), rank 0 of T = 4, by hand: 4 layers of
 * hidden 256, 8 heads of 32, 2 key/value heads (fewer than T: each rank
 * holds one, replicated), a gated MLP of 512, vocabulary 1000, fp16.
 * A rank's layer: Q and the projection 2·256²/4 = 32768, K and V
 * 2·256·1·32 = 16384, the MLP 3·256·512/4 = 98304: 147456 weights; the
 * embedding 1000/4·256 = 64000. Its cache a token: 2·4·1·32·2 = 512
 * bytes (against 1024 for the whole model's 2 heads). Per step (the
 * prefill and each of G decode steps) 2 all-reduces a layer and the
 * embedding's, of tokens·256·2 bytes, and one all-gather of the logits,
 * batch·250·2 bytes; group 1, role tp, 4 ranks, all in one node. */
static void
test_infer_tp (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthInferOpts o = { 0 };
  o.layers = 4, o.hidden = 256, o.heads = 8, o.kv_heads = 2, o.vocab = 1000, o.ffn = 512, o.gated = TRUE;
  o.batch = 3, o.prompt = 20, o.gen = 10, o.weight_bytes = 2, o.kv_bytes = 2, o.kv_block = 1, o.tp = 4;
  g_assert_cmpuint (synth_infer_kv_heads_here (&o), ==, 1);
  g_assert_cmpuint (synth_infer_kv_bytes_per_token (&o), ==, 512);
  g_assert_cmpfloat (synth_infer_layer_weights (&o), ==, 147456);
  Stats s;
  SynthCommStats c;
  generate_comm (gen_infer, &o, cfg, &s, &c);
  g_assert_cmpuint (get (s.peak, "params"), ==, (4 * 147456 + 64000) * 2);
  g_assert_cmpuint (get (s.peak, "kv_cache"), ==, 3 * (20 + 10) * 512);
  const guint64 steps = 1 + 10, per_step = 2 * 4 + 1;
  g_assert_cmpuint (c.count[VS_COLL_ALL_REDUCE], ==, steps * per_step);
  g_assert_cmpuint (c.bytes[VS_COLL_ALL_REDUCE], ==, per_step * (3 * 20 + 10 * 3) * 256 * 2);
  g_assert_cmpuint (c.count[VS_COLL_ALL_GATHER], ==, steps);
  g_assert_cmpuint (c.bytes[VS_COLL_ALL_GATHER], ==, steps * 3 * 250 * 2);
  g_assert_cmpuint (c.role_count[VS_ROLE_TP], ==, steps * (per_step + 1));
  int k = synth_comm_group (&c, 1);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpuint (c.groups[k].ranks, ==, 4);
  g_assert_cmpuint (c.groups[k].per_node, ==, 4);
  g_assert_cmpuint (get (s.kernel_dur, "decode_layer"), ==, 0);
  g_assert_cmpuint (get (s.kernel_dur, "decode_attn") > 0 && get (s.kernel_dur, "decode_mlp") > 0, ==, TRUE);
  stats_free (&s);
  /* 4 key/value heads at T = 2: two each, no replication. */
  o.kv_heads = 4, o.tp = 2;
  g_assert_cmpuint (synth_infer_kv_heads_here (&o), ==, 2);
  g_assert_cmpuint (synth_infer_kv_bytes_per_token (&o), ==, 2 * 4 * 2 * 32 * 2);
  /* A latent cache is every head's: whole on each rank. */
  o.kv_lora = 64, o.qk_rope = 16;
  g_assert_cmpuint (synth_infer_kv_bytes_per_token (&o), ==, 4 * 80 * 2);
}

/* STREAM: copy and scale move 2 arrays, add and triad 3; each kernel takes
 * bytes / (2039 GB/s × 0.86) plus its FLOPs at 156 TFLOPS. */
static void
test_stream (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthStreamOpts o = { 64 << 20, 5, FALSE, FALSE };
  Stats s;
  generate (gen_stream, &o, cfg, &s);
  const double S = 64 << 20, bw = cfg->memory.bandwidth * cfg->memory.efficiency;
  assert_within ((double) get (s.kernel_dur, "stream_copy"), 5 * (2 * S / bw * 1e9), 1e-6);
  assert_within ((double) get (s.kernel_dur, "stream_triad"), 5 * (3 * S / bw * 1e9 + 2 * S / 8 / 156e12 * 1e9), 1e-5);
  g_assert_cmpuint (get (s.peak, "arrays"), ==, 3 * (64 << 20));
  g_assert_cmpuint (s.marks, ==, 5);
  g_assert_cmpuint (s.prefetches, ==, 0);
  stats_free (&s);
  o.managed = TRUE, o.prefetch = TRUE;
  generate (gen_stream, &o, cfg, &s);
  g_assert_cmpuint (s.prefetches, ==, 6);
  stats_free (&s);
}

/* Megatron-LM (Shoeybi et al. 2019, section 3): per layer and micro-batch,
 * 2 all-reduces of the s·b·h activations in the forward and 2 in the
 * backward (+2 in a recomputed forward); with sequence parallelism
 * (Korthikanti et al. 2022, section 4.2.2) each becomes an all-gather of
 * the s/t shard and a reduce-scatter. --params: no embedding, so only the
 * layers communicate. L = 4, m = 3 micro-batches, t = 8, fp16 message
 * 2·s·b·h = 2·128·2·256 = 131072 bytes. */
static void
test_tp_volume (void)
{
  g_autoptr (VsConfig) cfg = preset ("h100-sxm");
  const guint64 L = 4, m = 3, t = 8, msg = 2 * 128 * 2 * 256;
  SynthTrainOpts o = small_train ();
  o.params = 4 * 12 * 256 * 256, o.tp = t, o.grad_accum = m;
  Stats s;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &s, &c);
  g_assert_cmpuint (c.count[VS_COLL_ALL_REDUCE], ==, 4 * L * m);        /* 48 */
  g_assert_cmpuint (c.bytes[VS_COLL_ALL_REDUCE], ==, 4 * L * m * msg);  /* 6291456 */
  g_assert_cmpuint (c.count[VS_COLL_ALL_GATHER] + c.count[VS_COLL_REDUCE_SCATTER], ==, 0);
  /* Parameters split t ways: 12·h²/t per layer, 2 bytes each. */
  g_assert_cmpuint (get (s.peak, "params"), ==, L * 12 * 256 * 256 / t * 2);
  stats_free (&s);

  o.checkpoint = SYNTH_CKPT_EVERY, o.checkpoint_every = 1;  /* full recompute: 6 a layer */
  generate_comm (gen_train, &o, cfg, &s, &c);
  g_assert_cmpuint (c.count[VS_COLL_ALL_REDUCE], ==, 6 * L * m);
  stats_free (&s);

  o.checkpoint = SYNTH_CKPT_NONE, o.sp = TRUE;
  generate_comm (gen_train, &o, cfg, &s, &c);
  g_assert_cmpuint (c.count[VS_COLL_ALL_REDUCE], ==, 0);
  g_assert_cmpuint (c.count[VS_COLL_ALL_GATHER], ==, 4 * L * m);
  g_assert_cmpuint (c.bytes[VS_COLL_ALL_GATHER], ==, 4 * L * m * msg / t);
  g_assert_cmpuint (c.count[VS_COLL_REDUCE_SCATTER], ==, 4 * L * m);
  g_assert_cmpuint (c.bytes[VS_COLL_REDUCE_SCATTER], ==, 4 * L * m * msg);
  /* Same wire bytes as the all-reduces: (t-1)·msg/t gathered + (t-1)/t·msg scattered = 2(t-1)/t·msg. */
  stats_free (&s);
}

/* ZeRO (Rajbhandari et al. 2020, section 7): per step a rank sends
 * 2Ψ·(N-1)/N for stages 0-2 and 3Ψ·(N-1)/N for stage 3 (in parameters;
 * ×2 bytes at fp16). Ψ = 4·12·256² = 3145728, N = 8, one micro-batch. The
 * message sizes (input buffers) give the wire bytes: all-reduce
 * 2(N-1)/N·in, reduce-scatter (N-1)/N·in, all-gather (N-1)·in. */
static void
test_zero_volume (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 psi = 4 * 12 * 256 * 256, N = 8, L = 4;
  for (guint z = 0; z <= 3; z++)
    {
      SynthTrainOpts o = small_train ();
      o.params = psi, o.zero = z, o.dp = N;
      Stats s;
      SynthCommStats c;
      generate_comm (gen_train, &o, cfg, &s, &c);
      double wire = 2.0 * (N - 1) / N * c.bytes[VS_COLL_ALL_REDUCE] + (double) (N - 1) / N * c.bytes[VS_COLL_REDUCE_SCATTER]
                    + (double) (N - 1) * c.bytes[VS_COLL_ALL_GATHER];
      double want = (z == 3 ? 3.0 : 2.0) * psi * 2 * (N - 1) / N;
      g_assert_cmpfloat (fabs (wire - want), <, 0.5);
      if (z == 3)
        {
          /* each layer gathered for its forward and its backward, reduced once */
          g_assert_cmpuint (c.count[VS_COLL_ALL_GATHER], ==, 2 * L);
          g_assert_cmpuint (c.bytes[VS_COLL_ALL_GATHER], ==, 2 * psi * 2 / N);
          g_assert_cmpuint (c.count[VS_COLL_REDUCE_SCATTER], ==, L);
          g_assert_cmpuint (c.bytes[VS_COLL_REDUCE_SCATTER], ==, psi * 2);
        }
      else if (z == 0)
        g_assert_cmpuint (c.bytes[VS_COLL_ALL_REDUCE], ==, psi * 2);
      stats_free (&s);
    }
}

/* FSDP's rate limiter (limit_all_gathers=True; _FreeEventQueue with
 * _max_num_inflight_all_gathers = 2): each release of gathered params
 * records an event and enqueues it; a gather with two or more queued
 * first blocks the host on the oldest. L = 4 layers (--params: no
 * embedding unit), no recomputation, one micro-batch; q is the queue
 * length before each gather, "s" a sync:
 *   forward:  gather 0 (q 0), gather 1 (q 0), release 0 (q 1),
 *             gather 2 (q 1), release 1 (q 2), gather 3 (q 2, s, 1),
 *             release 2 (q 2), release 3 (q 3)            1 sync
 *   backward: gather 3 (q 3, s, 2), gather 2 (s, 1), release 3 (q 2),
 *             gather 1 (s, 1), release 2 (q 2), gather 0 (s, 1),
 *             release 1 (q 2), release 0 (q 3)            4 syncs
 * so 5 in the first step; a second step starts with q 3 and syncs
 * before every one of its 8 gathers: 13 in two. The limiter moves no
 * bytes: the collectives are those of /synth/zero-volume. Off
 * (--no-limit-all-gathers), no event syncs. */
static void
test_limit_all_gathers (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 psi = 4 * 12 * 256 * 256, N = 8, L = 4;
  SynthTrainOpts o = small_train ();
  o.params = psi, o.zero = 3, o.dp = N;
  Stats s;
  SynthCommStats on, off;
  generate_comm (gen_train, &o, cfg, &s, &on);
  g_assert_cmpuint (s.event_syncs, ==, 5);
  stats_free (&s);
  o.steps = 2;
  generate_comm (gen_train, &o, cfg, &s, &on);
  g_assert_cmpuint (s.event_syncs, ==, 13);
  g_assert_cmpuint (on.count[VS_COLL_ALL_GATHER], ==, 2 * 2 * L);
  stats_free (&s);
  o.no_limit_all_gathers = TRUE;
  generate_comm (gen_train, &o, cfg, &s, &off);
  g_assert_cmpuint (s.event_syncs, ==, 0);
  g_assert_cmpmem (&on, sizeof on, &off, sizeof off);
  stats_free (&s);
  /* Stages below 3 gather no parameters: nothing to limit. */
  o.no_limit_all_gathers = FALSE, o.zero = 2;
  generate (gen_train, &o, cfg, &s);
  g_assert_cmpuint (s.event_syncs, ==, 0);
  stats_free (&s);
}

/* Korthikanti et al. 2022, Table 2, bytes a layer keeps: t-way tensor
 * parallel sbh(10 + 24/t + 5as/(ht)); with sequence parallelism
 * sbh/t·(34 + 5as/h); selective: sbh(10 + 24/t), sbh·34/t. The generator's
 * activation peak with selective recomputation and sequence parallelism is
 * L·34·sbh/t plus one layer's recomputed 5·a·s²·b/t. */
static void
test_tp_activations (void)
{
  g_autoptr (VsConfig) cfg = preset ("h100-sxm");
  SynthTrainOpts o = small_train ();
  const guint64 s = 128, b = 2, h = 256, a = 8, t = 4, L = 4, u = s * b * h;
  o.tp = t;
  g_assert_cmpuint (synth_train_layer_activations (&o), ==, u * 10 + u * 24 / t + 5 * a * s * s * b / t);
  g_assert_cmpuint (synth_train_layer_kept (&o), ==, u * 10 + u * 24 / t);
  o.sp = TRUE;
  g_assert_cmpuint (synth_train_layer_activations (&o), ==, u * 34 / t + 5 * a * s * s * b / t);
  g_assert_cmpuint (synth_train_layer_kept (&o), ==, u * 34 / t);
  o.checkpoint = SYNTH_CKPT_SELECTIVE;
  Stats st;
  generate (gen_train, &o, cfg, &st);
  g_assert_cmpuint (get (st.peak, "activations"), ==, L * (u * 34 / t) + 5 * a * s * s * b / t);
  stats_free (&st);
}

/* The schedule alone (synth_pipe_schedule), worked by hand.
 * 1F1B, (p, m) = (4, 8), every stage t_f = 1000 ns, t_b = 2000 ns, no
 * transfer time: stage 0 runs F0 F1 F2 (warm-up p - 1), then F3 and the
 * first backward B0, whose gradient has gone F0 through stages 1-3 (its
 * forward ends on stage 3 at 4·t_f = 4000) and back (3·t_b): it starts
 * at 10000, after a 6000 ns wait; then F/B pairs without a gap, and the
 * cool-down's B5, B6, B7 each wait t_f = 1000 for stage 1. Step: (m + p
 * - 1)·(t_f + t_b) = 11 x 3000 = 33000 ns, of which (p - 1)·(t_f + t_b)
 * = 9000 idle: Narayanan et al.'s bubble, exactly.
 * Interleaved, (p, m, v) = (4, 8, 2), the same stages cut into 2 chunks
 * of t_f = 500, t_b = 1000: busy m·(t_f + t_b) = 24000 as before, idle
 * (p - 1)·(t_f + t_b)/v = 9000 / 2 = 4500 (the paper's section 2.2.2),
 * step 28500.
 * With transfers, (p, m) = (2, 2), t_f = 1000, t_b = 2000, x = 100 each:
 * stage 0: F0 0-1000, send -1100, F1 -2100, send -2200; stage 1 receives
 * F0 1000-1100, runs F0 -2100, B0 -4100, sends -4200, receives F1 -4300,
 * F1 -5300, B1 -7300, sends from 7300. Stage 0's B0 receives from 4100
 * (waited 4100 - 2200 = 1900 = t_b - x), runs -6200; B1 receives from
 * 7300 (waited 1100 = t_f + x), ends 7400 + 2000 = 9400 = 3·t_f + 3·t_b
 * + 4x; the waits still add up to (p - 1)·(t_f + t_b) = 3000. */
static void
test_pipeline_bubble (void)
{
  double t_f[8], t_b[8];
  for (guint i = 0; i < 8; i++)
    t_f[i] = 1000, t_b[i] = 2000;
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (SynthPipeOp));
  g_autoptr (GError) err = NULL;
  double span = 0, waits = 0;
  SynthPipeSpec one = { 4, 1, 8, t_f, t_b, 0, 0 };
  g_assert_true (synth_pipe_schedule (&one, 0, ops, &span, &err));
  g_assert_cmpuint (ops->len, ==, 16);
  const char *order = "FFFFBFBFBFBFBBBB";
  for (guint i = 0; i < ops->len; i++)
    {
      const SynthPipeOp *op = &g_array_index (ops, SynthPipeOp, i);
      g_assert_cmpint (op->fwd ? 'F' : 'B', ==, order[i]);
      waits += op->wait_ns;
    }
  g_assert_cmpfloat (span, ==, 33000);
  g_assert_cmpfloat (waits, ==, 9000);
  g_assert_cmpfloat (g_array_index (ops, SynthPipeOp, 4).wait_ns, ==, 6000);   /* B0 */
  g_assert_cmpfloat (g_array_index (ops, SynthPipeOp, 15).wait_ns, ==, 1000);  /* B7 */

  for (guint i = 0; i < 8; i++)
    t_f[i] = 500, t_b[i] = 1000;
  SynthPipeSpec inter = { 4, 2, 8, t_f, t_b, 0, 0 };
  g_assert_true (synth_pipe_schedule (&inter, 0, ops, &span, &err));
  g_assert_cmpuint (ops->len, ==, 32);
  waits = 0;
  for (guint i = 0; i < ops->len; i++)
    waits += g_array_index (ops, SynthPipeOp, i).wait_ns;
  g_assert_cmpfloat (span, ==, 28500);
  g_assert_cmpfloat (waits, ==, 4500);
  /* the first backward is the last chunk's (chunk 1), of micro-batch 0 */
  for (guint i = 0; i < ops->len; i++)
    if (!g_array_index (ops, SynthPipeOp, i).fwd)
      {
        g_assert_cmpuint (g_array_index (ops, SynthPipeOp, i).chunk, ==, 1);
        g_assert_cmpuint (g_array_index (ops, SynthPipeOp, i).micro, ==, 0);
        break;
      }

  for (guint i = 0; i < 2; i++)
    t_f[i] = 1000, t_b[i] = 2000;
  SynthPipeSpec two = { 2, 1, 2, t_f, t_b, 100, 100 };
  g_assert_true (synth_pipe_schedule (&two, 0, ops, &span, &err));
  g_assert_cmpfloat (span, ==, 9400);
  g_assert_cmpfloat (g_array_index (ops, SynthPipeOp, 2).wait_ns, ==, 1900);
  g_assert_cmpfloat (g_array_index (ops, SynthPipeOp, 3).wait_ns, ==, 1100);

  /* interleaving needs m a multiple of p (Megatron asserts it) */
  SynthPipeSpec bad = { 4, 2, 6, t_f, t_b, 0, 0 };
  g_assert_false (synth_pipe_schedule (&bad, 0, ops, &span, &err));
  g_assert_error (err, VS_SYNTH_ERROR, 0);
}

/* The generator's stage 0 (Narayanan et al. 2021): of p = 4 it holds L/p
 * = 2 layers and at most min(p, m) = 4 micro-batches' activations
 * (Korthikanti section 5: the first stage stores p micro-batches of L/p
 * layers, L layers' worth); each micro-batch sends its output and
 * receives its gradient (2·s·b·h/t bytes, group 3, role pp). --params:
 * no embedding, so every stage is the same; its receives wait what the
 * schedule of its own kernel times says. (p, m) = (2, 2): the waits add
 * up to t_f + t_b exactly (/synth/pipeline-bubble's third case), so the
 * receives take 2x + t_f + t_b. */
static void
test_pipeline (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 p = 4, m = 8, L = 8, s = 128, b = 2, h = 256;
  SynthTrainOpts o = small_train ();
  o.params = L * 12 * h * h, o.layers = L, o.pp = p, o.grad_accum = m;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (c.count[VS_COLL_SEND], ==, m);
  g_assert_cmpuint (c.count[VS_COLL_RECV], ==, m);
  g_assert_cmpuint (c.bytes[VS_COLL_SEND], ==, m * 2 * s * b * h);
  g_assert_cmpuint (c.role_count[VS_ROLE_PP], ==, 2 * m);
  g_assert_cmpuint (c.ungrouped, ==, 0);
  g_assert_cmpuint (get (st.peak, "activations"), ==, p * (L / p) * synth_train_layer_activations (&o));
  g_assert_cmpuint (get (st.peak, "params"), ==, (L / p) * 12 * h * h * 2);
  /* t_f, t_b: stage 0's kernels a micro-batch; x: one send */
  double t_f = (double) sum_suffix (st.kernel_dur, "_fwd") / m, t_b = (double) sum_backward (st.kernel_dur) / m;
  double x = (double) get (st.kernel_dur, "nccl_send") / m;
  double tf[4] = { t_f, t_f, t_f, t_f }, tb[4] = { t_b, t_b, t_b, t_b };
  SynthPipeSpec spec = { p, 1, m, tf, tb, x, x };
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (SynthPipeOp));
  g_assert_true (synth_pipe_schedule (&spec, 0, ops, NULL, NULL));
  double waits = 0;
  for (guint i = 0; i < ops->len; i++)
    waits += g_array_index (ops, SynthPipeOp, i).wait_ns;
  assert_near ((double) get (st.kernel_dur, "nccl_recv"), m * x + waits, m / 2.0);
  stats_free (&st);

  o.layers = 2, o.params = 2 * 12 * h * h, o.pp = 2, o.grad_accum = 2;
  generate_comm (gen_train, &o, cfg, &st, &c);
  t_f = (double) sum_suffix (st.kernel_dur, "_fwd") / 2, t_b = (double) sum_backward (st.kernel_dur) / 2;
  x = (double) get (st.kernel_dur, "nccl_send") / 2;
  assert_near ((double) get (st.kernel_dur, "nccl_recv"), 2 * x + t_f + t_b, 1.0);
  stats_free (&st);

  /* Interleaved, v = 2 (L = 8 over 4 stages: 2 chunks of 1 layer): every
   * chunk sends its output forward and receives its gradient, chunk 1 also
   * receives its input from the last stage and sends its gradient back
   * there (group 4): (2v - 1)·m = 3m sends and as many receives, against
   * m of each without interleaving. */
  o.params = L * 12 * h * h, o.layers = L, o.pp = p, o.grad_accum = m, o.virtual_stages = 2;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (c.count[VS_COLL_SEND], ==, 3 * m);
  g_assert_cmpuint (c.count[VS_COLL_RECV], ==, 3 * m);
  g_assert_cmpint (synth_comm_group (&c, 4), >=, 0);   /* the last stage <-> stage 0 */
  stats_free (&st);
  o.grad_accum = 6;   /* not a multiple of p */
  g_autoptr (GError) err = NULL;
  g_autofree char *dir = g_dir_make_tmp ("vs-synth-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "t.jsonl", NULL);
  SynthEmit *e = synth_emit_new (out, cfg, 0, "test", &err);
  g_assert_false (synth_transformer_train (&o, e, &err));
  g_assert_error (err, VS_SYNTH_ERROR, 0);
  synth_emit_abort (e);
  g_rmdir (dir);
}

/* Every pipeline stage's trace (--stage), evenly split and unevenly
 * (Megatron-Core's first/last stage layers). 14 layers over p = 4
 * stages as 3, 4, 4, 3 (synth_train_auto_split's, as Llama 3's 126 over
 * 16: 7, 14 x 8, 7), m = 8 micro-batches, small_train's h = 256 and
 * vocab 1000, by hand: stage r holds n_r layers of 12·h² fp16 params
 * (the first stage the embedding too, the last the tied head's copy,
 * 1000·256 each), and under 1F1B min(p - r, m) micro-batches of its
 * layers' activations (Korthikanti et al. 2022, section 5); stage 0
 * sends each micro-batch's output and receives its gradient (m + m),
 * the stages between also receive its input and send its input's
 * gradient (2m + 2m), the last receives and sends m each. Only the first
 * and the last stage all-reduce the tied embedding (group 5). */
static void
test_pipeline_stages (void)
{
  guint a = 0, z = 0;
  struct { guint L, p, v, first, last; gboolean ok; } split[] = {
    { 126, 16, 1, 7, 7, TRUE }, { 61, 16, 1, 3, 2, TRUE }, { 14, 4, 1, 3, 3, TRUE }, { 14, 4, 2, 4, 2, TRUE },
    { 48, 8, 1, 6, 6, TRUE },   { 80, 12, 1, 5, 5, TRUE }, { 24, 4, 4, 4, 4, TRUE }, { 15, 2, 1, 8, 7, TRUE },
    { 5, 4, 1, 0, 0, FALSE },   { 15, 4, 2, 0, 0, FALSE }, { 7, 1, 1, 0, 0, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (split); i++)
    {
      a = z = 0;
      g_assert_cmpint (synth_train_auto_split (split[i].L, split[i].p, split[i].v, &a, &z), ==, split[i].ok);
      if (split[i].ok)
        {
          g_assert_cmpuint (a, ==, split[i].first);
          g_assert_cmpuint (z, ==, split[i].last);
        }
    }

  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 p = 4, m = 8, h = 256, vocab = 1000;
  SynthTrainOpts o = small_train ();
  o.layers = 14, o.pp = (guint) p, o.grad_accum = (guint) m, o.first_stage_layers = 3, o.last_stage_layers = 3;
  g_assert_true (synth_train_check_split (&o, NULL));
  const guint64 n[4] = { 3, 4, 4, 3 };
  for (guint r = 0; r < p; r++)
    {
      g_assert_cmpuint (synth_train_stage_layers (&o, r), ==, n[r]);
      o.stage = r;
      Stats st;
      SynthCommStats c;
      generate_comm (gen_train, &o, cfg, &st, &c);
      gboolean outer = r == 0 || r + 1 == p;
      g_assert_cmpuint (get (st.peak, "params"), ==, (n[r] * 12 * h * h + (outer ? vocab * h : 0)) * 2);
      g_assert_cmpuint (get (st.peak, "activations"), ==, MIN (p - r, m) * n[r] * synth_train_layer_activations (&o));
      guint64 each = r == 0 || r + 1 == p ? m : 2 * m;
      g_assert_cmpuint (c.count[VS_COLL_SEND], ==, each);
      g_assert_cmpuint (c.count[VS_COLL_RECV], ==, each);
      g_assert_cmpint (synth_comm_group (&c, 5) >= 0, ==, outer);
      g_assert_false (c.group_conflict);
      g_assert_cmpuint (get (st.kernel_dur, "gemm_lm_head_fwd") > 0, ==, r + 1 == p);
      g_assert_cmpuint (get (st.kernel_dur, "embedding_fwd") > 0, ==, r == 0);
      stats_free (&st);
    }
  /* Megatron-Core's accounted split: 14 layers, the embedding and the
   * loss over 4 stages of 2 chunks, (14 + 2) / 8 = 2 a virtual stage, the
   * first and the last one fewer: chunks 1 + 2, 2 + 2, 2 + 2, 2 + 1, so
   * 3, 4, 4, 3 layers (an even split of chunks would need a multiple of
   * 2 a stage); of 4 chunks, 1 a virtual stage and none on the first and
   * the last (Llama 3's layout: 0 + 1 + 1 + 1, ..., 1 + 1 + 1 + 0), the
   * same stages. */
  SynthTrainOpts acc = small_train ();
  acc.layers = 14, acc.pp = 4, acc.grad_accum = 8;
  acc.account_embedding = acc.account_loss = TRUE;
  for (guint v = 2; v <= 4; v += 2)
    {
      acc.virtual_stages = v;
      g_assert_true (synth_train_check_split (&acc, NULL));
      for (guint r = 0; r < 4; r++)
        {
          g_assert_cmpuint (synth_train_stage_layers (&acc, r), ==, n[r]);
          acc.stage = r;
          Stats as;
          generate (gen_train, &acc, cfg, &as);
          gboolean outer = r == 0 || r == 3;
          g_assert_cmpuint (get (as.peak, "params"), ==, (n[r] * 12 * h * h + (outer ? vocab * h : 0)) * 2);
          g_assert_cmpuint (get (as.kernel_dur, "gemm_lm_head_fwd") > 0, ==, r == 3);
          stats_free (&as);
        }
    }
  acc.virtual_stages = 2;
  acc.stage = 0;
  g_assert_false (synth_train_stage_like_first (&acc, 1));
  acc.layers = 15;
  g_assert_false (synth_train_check_split (&acc, NULL));
  /* Stage 1 holds stage 0's layers only on an even split of one kind. */
  o.stage = 0;
  g_assert_false (synth_train_stage_like_first (&o, 1));
  o.layers = 16, o.first_stage_layers = o.last_stage_layers = 0;
  g_assert_true (synth_train_stage_like_first (&o, 1));
  o.experts = 4, o.top_k = 2, o.dense_layers = 1;
  g_assert_false (synth_train_stage_like_first (&o, 1));

  /* What does not split is refused, saying which split would. */
  SynthTrainOpts bad = small_train ();
  bad.layers = 61, bad.pp = 16, bad.grad_accum = 16;
  g_autoptr (GError) err = NULL;
  g_assert_false (synth_train_check_split (&bad, &err));
  g_assert_nonnull (strstr (err->message, "e.g. 3 and 2, 4 on each stage between"));
  g_clear_error (&err);
  bad.first_stage_layers = 3, bad.last_stage_layers = 2;
  g_assert_true (synth_train_check_split (&bad, NULL));
  bad.stage = 16;
  g_assert_false (synth_train_check_split (&bad, &err));
  g_assert_nonnull (strstr (err->message, "--stage 16 is not one of the 16 pipeline stages"));
}

/* Context parallelism (--cp), by hand on small_train's shape (4 layers,
 * h = 256, 8 heads of 32, seq 128, batch 2) with fused attention, dp = 2,
 * ZeRO-1, cp = 4: a rank holds 128 / 4 = 32 tokens of each sequence, so
 * its activations are those of seq 32, and its attention computes 1/4 of
 * the whole sequence's causal FLOPs: 4 times seq 32's. K and V (2 · 32
 * tokens · 2 sequences · 8 heads · 32 · 2 bytes = 65536 bytes) go round
 * the ring: per layer 3 steps forward, 3 of K, V, dK and dV (2x) in the
 * backward and dK, dV home once: 7 exchanges, 10 x 65536 bytes, group 8
 * (role cp, 4 ranks, all in one node). Gradients and ZeRO span dp x cp
 * = 8 ranks: the optimizer states are 12 bytes a parameter / 8. */
static void
test_context_parallel (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  o.flash_attn = TRUE, o.dp = 2, o.zero = 1, o.cp = 4, o.vocab = 0;
  const guint64 L = 4, h = 256, kv = 2 * 32 * 2 * 8 * 32 * 2;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  SynthTrainOpts ref = o;
  ref.cp = 1, ref.seq = 32;
  g_assert_cmpuint (get (st.peak, "activations"), ==, L * synth_train_layer_activations (&ref));
  g_assert_cmpuint (get (st.peak, "optimizer"), ==, L * 12 * h * h * 12 / 8);
  g_assert_cmpuint (c.count[VS_COLL_SEND], ==, L * 7);
  g_assert_cmpuint (c.bytes[VS_COLL_SEND], ==, L * 10 * kv);
  g_assert_cmpuint (c.role_count[VS_ROLE_CP], ==, L * 7);
  int k = synth_comm_group (&c, 8);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpuint (c.groups[k].ranks, ==, 4);
  g_assert_cmpuint (c.groups[k].per_node, ==, 4);
  k = synth_comm_group (&c, 2);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpuint (c.groups[k].ranks, ==, 8);
  double fwd = (double) get (st.kernel_compute, "flash_attn_fwd");
  Stats rs;
  generate (gen_train, &ref, cfg, &rs);
  assert_within (fwd, 4 * (double) get (rs.kernel_compute, "flash_attn_fwd"), 1e-6);
  stats_free (&rs);
  stats_free (&st);
  /* Without fused attention, or with a sequence the chunks do not split: refused. */
  o.flash_attn = FALSE;
  g_autoptr (GError) err = NULL;
  g_assert_false (synth_train_check_cp (&o, &err));
  g_assert_nonnull (strstr (err->message, "needs --flash-attn"));
  g_clear_error (&err);
  o.flash_attn = TRUE, o.seq = 100;
  g_assert_false (synth_train_check_cp (&o, &err));
  g_assert_nonnull (strstr (err->message, "multiple of 2 x --cp"));
}

/* Multi-token prediction (--mtp 1), by hand on small_train's shape (4
 * layers of 12·256² = 786432 weights, vocabulary 1000) with an untied
 * head, fp16, m = 4 micro-batches. The module is a layer and a 2·256²
 * projection, 917504 weights, after the head on the last stage, which
 * then holds its own copy of the embedding too (the next tokens' lookup):
 * without a pipeline 4 layers + 2 x 256000 + 917504; on stage 1 of 2,
 * 2 layers + 2 x 256000 + 917504; stage 0 as without the module, 2 layers
 * + 256000. Each micro-batch runs the projection once and the head
 * twice; the last stage reduces its embedding copy with stage 0's
 * (group 5: 256000 x 2 bytes, half its unit). */
static void
test_mtp (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  o.untied = TRUE, o.mtp = 1, o.grad_accum = 4;
  const guint64 layer = 12 * 256 * 256, emb = 1000 * 256, mtp = layer + 2 * 256 * 256;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (get (st.peak, "params"), ==, (4 * layer + 2 * emb + mtp) * 2);
  double proj = (double) get (st.kernel_dur, "gemm_mtp_proj_fwd"), head = (double) get (st.kernel_dur, "gemm_lm_head_fwd");
  stats_free (&st);
  o.mtp = 0;
  generate (gen_train, &o, cfg, &st);
  g_assert_cmpuint (get (st.kernel_dur, "gemm_mtp_proj_fwd"), ==, 0);
  assert_within (head, 2 * (double) get (st.kernel_dur, "gemm_lm_head_fwd"), 1e-9);
  g_assert_cmpfloat (proj, >, 0);
  stats_free (&st);
  o.mtp = 1, o.pp = 2;
  for (guint r = 0; r < 2; r++)
    {
      o.stage = r;
      generate_comm (gen_train, &o, cfg, &st, &c);
      g_assert_cmpuint (get (st.peak, "params"), ==, (r == 1 ? 2 * layer + 2 * emb + mtp : 2 * layer + emb) * 2);
      int k = synth_comm_group (&c, 5);
      g_assert_cmpint (k, >=, 0);
      g_assert_cmpuint (c.group_bytes[k], ==, emb * 2);
      g_assert_cmpuint (get (st.kernel_dur, "gemm_mtp_proj_fwd") > 0, ==, r == 1);
      stats_free (&st);
    }
}

/* Every collective names its communicator (rank 0's, in Megatron's rank
 * order: tensor ranks fastest, then data, then pipeline). t = 2, p = 2,
 * N = 4 on 8-GPU nodes (16 GPUs): the tensor group (id 1) is 2
 * consecutive GPUs; the data-parallel group (id 2) 4 ranks 2 apart, all
 * 4 in rank 0's node (8/2); stage 1 is t·N = 8 ranks away, on the next
 * node (id 3, one rank a node); the tied embedding's group (id 5) joins
 * stage 0 and the last stage. Per micro-batch and layer 4 TP all-reduces
 * (m = 2, L/p = 2: 16), plus the embedding's forward one (2); DP: one
 * all-reduce a layer and the embedding a step (3); PP: a send and a
 * receive a micro-batch (4) and the embedding's all-reduce (1). */
static void
test_groups (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  SynthTrainOpts o = small_train ();
  o.tp = 2, o.pp = 2, o.dp = 4, o.grad_accum = 2;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (c.ungrouped, ==, 0);
  g_assert_false (c.group_conflict);
  struct { guint64 id; guint8 role; guint32 ranks, per_node; guint64 count; } want[] = {
    { 1, VS_ROLE_TP, 2, 2, 16 + 2 }, { 2, VS_ROLE_DP, 4, 4, 3 }, { 3, VS_ROLE_PP, 2, 1, 4 }, { 5, VS_ROLE_PP, 2, 1, 1 },
  };
  g_assert_cmpuint (c.n_groups, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      int k = synth_comm_group (&c, want[i].id);
      g_assert_cmpint (k, >=, 0);
      g_assert_cmpuint (c.groups[k].role, ==, want[i].role);
      g_assert_cmpuint (c.groups[k].ranks, ==, want[i].ranks);
      g_assert_cmpuint (c.groups[k].per_node, ==, want[i].per_node);
      g_assert_cmpuint (c.group_count[k], ==, want[i].count);
    }
  stats_free (&st);
}

/* GEMM tile and wave quantisation on a100-80g (108 SMs, FP16 312 TFLOPS,
 * E = 0.80, K0 = 96): M x N x K = 1152 x 1536 x 8192 is 9 x 12 = 108
 * tiles of 128 x 128, one wave; one wave's time is a tile's 2·128·128·
 * (8192 + 96) = 271,581,184 FLOPs at 312e12 / 108 x 0.80 = 2.3111e12
 * FLOP/s: 117,511 ns (its bytes, 2·(1152·8192 + 8192·1536 + 1152·1536) =
 * 47.6 MB, take 27.1 us at 1753.5 GB/s: it is compute-bound). That is
 * 2·1152·1536·8192 / 117,511 ns = 246.7 TFLOPS, 0.79 of the peak. One
 * more column, N = 1537: 9 x 13 = 117 tiles, two waves, 235,022 ns, for
 * 0.07 % more work. The emitted kernel says its flops, precision and
 * grid, so a replay elsewhere scales it by waves. */
static void
test_gemm_waves (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  VsKernelChip chip;
  kernel_chip_from_config (&chip, cfg);
  SynthGemm g;
  synth_gemm_time (&chip, VS_PREC_FP16, 2, 1152, 1536, 8192, 1, &g);
  g_assert_cmpuint (g.tiles, ==, 108);
  g_assert_cmpfloat (g.waves, ==, 1);
  assert_near (g.compute_ns, 117511.09, 0.01);
  assert_near (g.mem_ns, 27133.19, 0.01);
  assert_near (g.ns, 117511.09, 0.01);
  synth_gemm_time (&chip, VS_PREC_FP16, 2, 1152, 1537, 8192, 1, &g);
  g_assert_cmpuint (g.tiles, ==, 117);
  g_assert_cmpfloat (g.waves, ==, 2);
  assert_near (g.ns, 235022.18, 0.01);
  /* a batched GEMM: 4 x (256 x 256) = 16 tiles, one partial wave, K = 64:
   * 2·16384·160 = 5,242,880 FLOPs / 2.3111e12 = 2,268.55 ns, above the 1.3 us floor */
  synth_gemm_time (&chip, VS_PREC_FP16, 2, 256, 256, 64, 4, &g);
  g_assert_cmpuint (g.tiles, ==, 16);
  assert_near (g.ns, 2268.55, 0.01);

  g_autofree char *dir = g_dir_make_tmp ("vs-synth-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "g.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  SynthEmit *e = synth_emit_new (out, cfg, 0, "test", &err);
  g_assert_no_error (err);
  guint64 id = synth_alloc (e, 1 << 20, VS_MEM_DEVICE, "workspace");
  g_assert_cmpuint (synth_gemm (e, "gemm_test", 1, VS_PREC_FP16, 2, 1152, 1536, 8192, 1, &id, 1, &id, 1), ==, 117511);
  synth_free (e, id);
  g_assert_true (synth_emit_finish (e, &err));
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  g_assert_no_error (err);
  VsEvent ev;
  gboolean seen = FALSE;
  while (trace_next (r, &ev, &err))
    if (ev.op == VS_OP_KERNEL)
      {
        seen = TRUE;
        g_assert_cmpuint (ev.dur, ==, 117511);
        g_assert_cmpuint (ev.compute_ns, ==, 117511);
        g_assert_nonnull (ev.shape);
        g_assert_cmpuint (ev.shape->flops, ==, 2ull * 1152 * 1536 * 8192);
        g_assert_cmpuint (ev.shape->precision, ==, VS_PREC_FP16);
        g_assert_cmpuint (ev.shape->grid[0], ==, 108);
        g_assert_cmpuint (ev.shape->block[0], ==, 256);
      }
  g_assert_no_error (err);
  g_assert_true (seen);
  g_unlink (out);
  g_rmdir (dir);
}

/* MoE (GShard; Switch Transformers): E = 8 experts over N = 8 ranks, one
 * each; top-2 routing. A layer holds 4h² attention + 8h² of its one expert
 * + the h·E router; 4 all-to-alls of s·b·k·h·2 bytes per layer per
 * micro-batch; the expert MLP's 16·s·b·h activation bytes are kept k times. */
static void
test_moe (void)
{
  g_autoptr (VsConfig) cfg = preset ("h100-sxm");
  const guint64 L = 4, s = 128, b = 2, h = 256, E = 8, k = 2, a = 8;
  SynthTrainOpts o = small_train ();
  o.experts = E, o.top_k = k, o.dp = 8;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (c.count[VS_COLL_ALL_TO_ALL], ==, 4 * L);
  g_assert_cmpuint (c.bytes[VS_COLL_ALL_TO_ALL], ==, 4 * L * 2 * s * b * k * h);
  g_assert_cmpuint (get (st.peak, "params"), ==, (L * (12 * h * h + h * E) + 1000 * h) * 2);
  g_assert_cmpuint (synth_train_layer_activations (&o), ==, s * b * h * (34 + 16 * (k - 1)) + 5 * a * s * s * b);
  stats_free (&st);
}

/* Expert gradients are reduced over the ranks holding the same expert
 * (DeepSpeed-MoE / Megatron's expert-data-parallel group), the rest of
 * the layer over all N. E = 8 experts, N = 16: ep = 8 ranks hold one
 * expert each, so each expert lives on N/ep = 2 ranks. Per layer (h =
 * 256): attention 4h² + router h·E = 262,144 + 2,048 = 264,192 params
 * (528,384 B) all-reduced over the 16 (group 2), the expert's 8h² =
 * 524,288 params (1,048,576 B) over its 2 (group 7, role dp); the
 * embedding's 1000·256 params (512,000 B) over the 16. Volume over 16
 * ranks: 4 x 528,384 + 512,000 = 2,625,536 B; over 2: 4,194,304 B (an
 * all-reduce of all N would have sent the experts' 8 times as far).
 * ZeRO-1 shards the optimizer the same way: 12 B x (264,192/16 +
 * 524,288/2) per layer. */
static void
test_moe_grads (void)
{
  g_autoptr (VsConfig) cfg = preset ("h100-sxm");
  const guint64 L = 4, h = 256, E = 8;
  SynthTrainOpts o = small_train ();
  o.experts = E, o.top_k = 2, o.dp = 16;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  int dp = synth_comm_group (&c, 2), edp = synth_comm_group (&c, 7), ep = synth_comm_group (&c, 6);
  g_assert_cmpint (dp, >=, 0);
  g_assert_cmpint (edp, >=, 0);
  g_assert_cmpint (ep, >=, 0);
  g_assert_cmpuint (c.groups[dp].ranks, ==, 16);
  g_assert_cmpuint (c.groups[edp].ranks, ==, 2);
  g_assert_cmpuint (c.groups[edp].role, ==, VS_ROLE_DP);
  g_assert_cmpuint (c.groups[ep].ranks, ==, 8);
  g_assert_cmpuint (c.groups[ep].role, ==, VS_ROLE_EP);
  g_assert_cmpuint (c.group_bytes[dp], ==, L * (4 * h * h + h * E) * 2 + 1000 * h * 2);
  g_assert_cmpuint (c.group_bytes[edp], ==, L * 8 * h * h * 2);
  g_assert_cmpuint (c.group_count[edp], ==, L);
  g_assert_cmpuint (c.group_count[ep], ==, 4 * L);   /* dispatch and combine, forward and backward */
  stats_free (&st);
  o.zero = 1;
  generate (gen_train, &o, cfg, &st);
  g_assert_cmpuint (get (st.peak, "optimizer"), ==, L * ((4 * h * h + h * E + 15) / 16 + 8 * h * h / 2) * 12
                                                     + (1000 * h + 15) / 16 * 12);
  stats_free (&st);
}

/* A tied embedding is reduced once. p = 1, ZeRO 2, N = 4, m = 2: the LM
 * head's and the embedding's gradients land in one buffer, reduce-
 * scattered once a micro-batch (1000·256·2 = 512,000 B), not once per
 * use: L + 1 = 5 reduce-scatters a micro-batch, 10 in all. p = 2 (N =
 * 1): stage 0 and the last stage each hold a copy; stage 0 all-reduces
 * its gradient with the last stage's once a step (group 5, 2 ranks,
 * role pp), 512,000 B; nothing else is data-parallel. */
static void
test_tied_embedding (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  const guint64 L = 4, m = 2, emb = 1000 * 256 * 2;
  SynthTrainOpts o = small_train ();
  o.zero = 2, o.dp = 4, o.grad_accum = m;
  Stats st;
  SynthCommStats c;
  generate_comm (gen_train, &o, cfg, &st, &c);
  g_assert_cmpuint (c.count[VS_COLL_REDUCE_SCATTER], ==, m * (L + 1));
  g_assert_cmpuint (c.bytes[VS_COLL_REDUCE_SCATTER], ==, m * (L * 12 * 256 * 256 * 2 + emb));
  stats_free (&st);
  o = small_train ();
  o.pp = 2, o.grad_accum = m, o.steps = 2;
  generate_comm (gen_train, &o, cfg, &st, &c);
  int k = synth_comm_group (&c, 5);
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpuint (c.groups[k].ranks, ==, 2);
  g_assert_cmpuint (c.groups[k].role, ==, VS_ROLE_PP);
  g_assert_cmpuint (c.group_count[k], ==, 2);   /* once a step */
  g_assert_cmpuint (c.group_bytes[k], ==, 2 * emb);
  g_assert_cmpuint (c.role_count[VS_ROLE_DP], ==, 0);
  stats_free (&st);
}

/* ZeRO-3 at a fixed global batch of 64 sequences, micro-batch 1: on 8
 * GPUs (one node, m = 8) each layer's parameters are all-gathered over
 * NVSwitch; on 64 (eight nodes, m = 1) the same gathers and
 * reduce-scatters cross InfiniBand (each GPU's NIC carries its ring's
 * share), so a GPU processes fewer tokens a second: the per-micro-batch
 * compute is the same, the communication it waits for is not. h = 2048,
 * s = 512: a layer's forward is 2·12h²·512 = 5.2e10 FLOPs (~0.2 ms),
 * its gather 12h²·2 = 100 MB (Ψ_layer·(N-1)/N on each link). */
static void
test_zero3_nodes (void)
{
  g_autoptr (VsConfig) cfg = preset ("a100-80g");
  double per_gpu[2];
  const guint dps[2] = { 8, 64 };
  for (guint i = 0; i < 2; i++)
    {
      SynthTrainOpts o = small_train ();
      o.layers = 4, o.hidden = 2048, o.heads = 16, o.seq = 512, o.batch = 1;
      o.zero = 3, o.dp = dps[i], o.grad_accum = 64 / dps[i], o.steps = 2;
      Stats st;
      SynthCommStats c;
      generate_comm (gen_train, &o, cfg, &st, &c);
      int k = synth_comm_group (&c, 2);
      g_assert_cmpint (k, >=, 0);
      g_assert_cmpuint (c.groups[k].ranks, ==, dps[i]);
      double step = (double) (st.mark_t[1] - st.mark_t[0]);
      per_gpu[i] = (double) o.grad_accum * o.seq / step;
      stats_free (&st);
    }
  g_assert_cmpfloat (per_gpu[1], <, per_gpu[0]);
}

/* FP8 with Transformer Engine: 3 bytes a parameter (bf16 + FP8 copy), bf16
 * grads, fp32 master + Adam (12); the saved GEMM inputs (14·s·b·h of the
 * 34) in FP8 keep 27·s·b·h. */
static void
test_fp8 (void)
{
  guint p, g, o8;
  synth_train_state_bytes (SYNTH_PREC_FP8, SYNTH_OPT_ADAM, &p, &g, &o8);
  g_assert_cmpuint (p, ==, 3);
  g_assert_cmpuint (g, ==, 2);
  g_assert_cmpuint (o8, ==, 12);
  SynthTrainOpts o = small_train ();
  o.precision = SYNTH_PREC_FP8;
  g_assert_cmpuint (synth_train_layer_kept (&o), ==, 27ull * 128 * 2 * 256);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/synth/zero", test_zero);
  g_test_add_func ("/synth/main-grads", test_main_grads);
  g_test_add_func ("/synth/activations", test_activations);
  g_test_add_func ("/synth/recompute", test_recompute);
  g_test_add_func ("/synth/offload", test_offload);
  g_test_add_func ("/synth/kv-linear", test_kv_linear);
  g_test_add_func ("/synth/infer-tp", test_infer_tp);
  g_test_add_func ("/synth/stream", test_stream);
  g_test_add_func ("/synth/tp-volume", test_tp_volume);
  g_test_add_func ("/synth/zero-volume", test_zero_volume);
  g_test_add_func ("/synth/limit-all-gathers", test_limit_all_gathers);
  g_test_add_func ("/synth/tp-activations", test_tp_activations);
  g_test_add_func ("/synth/pipeline-bubble", test_pipeline_bubble);
  g_test_add_func ("/synth/pipeline", test_pipeline);
  g_test_add_func ("/synth/pipeline-stages", test_pipeline_stages);
  g_test_add_func ("/synth/context-parallel", test_context_parallel);
  g_test_add_func ("/synth/mtp", test_mtp);
  g_test_add_func ("/synth/groups", test_groups);
  g_test_add_func ("/synth/gemm-waves", test_gemm_waves);
  g_test_add_func ("/synth/moe-grads", test_moe_grads);
  g_test_add_func ("/synth/tied-embedding", test_tied_embedding);
  g_test_add_func ("/synth/zero3-nodes", test_zero3_nodes);
  g_test_add_func ("/synth/moe", test_moe);
  g_test_add_func ("/synth/fp8", test_fp8);
  return g_test_run ();
}
