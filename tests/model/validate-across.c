/* validate-across.c — `make validate`: the kernel model (sim/model/
 * kernel-model.c) across GPUs, on data nobody on this project made
 * (docs/validation.md, "Across GPUs").
 *
 *   1. vidur (microsoft/vidur data/profiling/compute): the same FP16
 *      operators of Llama-2-7B, Llama-2-70B and phi-2 timed on an A100
 *      80GB, an H100 and an A40. Each row of one GPU becomes a kernel with
 *      the flops and bytes its layer shapes give; the model predicts the
 *      other GPUs' time; the error is against their measured time.
 *   2. gpu-benches: the STREAM "scale" kernel at full occupancy
 *      (gpu-stream) and the small-kernel sweep under CUDA graphs
 *      (gpu-small-kernels), from the A100 80GB to the other GPUs measured.
 *   3. lambda (lambdal/deeplearning-benchmark): one-GPU training
 *      throughput ratios against the ratio of summed predicted kernel time
 *      for real traces of similar work (validation/data/kineto, and the
 *      optional rtx3090-small export).
 *
 * Usage: validate-across DATA [--real-traces DIR] [--lambda DIR]. DATA is
 * the repository's validation/data (vidur/, gpu-benches/, kineto/); a file
 * missing there is an error (exit 1, naming it). The optional data
 * (validation/data/README.md: files we may not redistribute) is given by
 * the options: --lambda, the folder holding lambda's
 * pytorch-train-throughput-fp{16,32}.csv; --real-traces, the folder
 * holding nsys/rtx3090-small.sqlite. What is left out without them is
 * said in a line starting "(left out:". Prints markdown tables and a
 * summary. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "import/import.h"
#include "model/kernel-model.h"
#include "trace/trace.h"

/* The text of PATH, a file the validation cannot do without: exits 1
 * naming it when it cannot be read. */
static char *
read_data (const char *path)
{
  char *text = NULL;
  GError *err = NULL;
  if (!g_file_get_contents (path, &text, NULL, &err))
    {
      fprintf (stderr, "validate: %s (validation/data/README.md says what belongs there)\n", err->message);
      exit (1);
    }
  return text;
}

/* ---- models per (capture, target) preset pair ---- */

static GHashTable *models;   /* "cap>tgt" -> VsKernelModel* */

/* Targets take SETS (NULL-terminated) when given: the lambda runs are
 * NVIDIA NGC containers, where FP32 matmuls run as TF32 too. */
static const char *const *target_sets;
/* The lambda targets' model.tf32 ("all": NGC containers; --lambda-tf32
 * none gives the figures without the TF32 rule, docs/validation.md). */
static const char *lambda_tf32 = "all";

static VsKernelModel *
model_for (const char *cap, const char *tgt)
{
  g_autofree char *key = g_strdup_printf ("%s>%s%s", cap, tgt, target_sets ? "+sets" : "");
  VsKernelModel *m = g_hash_table_lookup (models, key);
  if (m != NULL)
    return m;
  GError *err = NULL;
  g_autoptr (VsConfig) c = config_load (cap, NULL, &err);
  g_autoptr (VsConfig) t = c ? config_load (tgt, target_sets, &err) : NULL;
  if (t == NULL)
    g_error ("%s", err->message);
  VsKernelChip cc, tc;
  kernel_chip_from_config (&cc, c);
  kernel_chip_from_config (&tc, t);
  m = kernel_model_new (&cc, &tc);
  g_hash_table_insert (models, g_steal_pointer (&key), m);
  return m;
}

static double
predict (const char *cap, const char *tgt, const char *name, const VsKernelShape *shape, double d0_ns,
         guint64 bytes)
{
  VsKernelModel *m = model_for (cap, tgt);
  const VsKernelFactors *f = kernel_model_factors (m, name, shape);
  VsKernelPred p;
  kernel_model_predict (m, f, (guint64) llround (d0_ns), bytes, VS_NONE, shape ? shape->flops : VS_NONE, &p);
  return p.d1_ns;
}

/* ---- results ---- */

typedef struct {
  char *what, *from, *to;
  double measured, predicted;   /* in the case's unit */
  char *unit;
  char *note;
  gboolean proxy;               /* the trace is other work than the benchmark: shown, not scored */
} Case;

static GPtrArray *cases;      /* Case*, in the docs' table */
static GArray *row_errors;    /* |error| of each vidur row (fractions) */

static void
add_case (const char *what, const char *from, const char *to, double measured, double predicted,
          const char *unit, const char *note)
{
  Case *c = g_new0 (Case, 1);
  c->what = g_strdup (what);
  c->from = g_strdup (from);
  c->to = g_strdup (to);
  c->measured = measured;
  c->predicted = predicted;
  c->unit = g_strdup (unit);
  c->note = g_strdup (note ? note : "");
  g_ptr_array_add (cases, c);
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
quantile (GArray *v, double q)
{
  if (v->len == 0)
    return NAN;
  g_array_sort (v, cmp_double);
  return g_array_index (v, double, (guint) MIN (v->len - 1, floor (q * v->len)));
}

/* ---- 1. vidur ---- */

typedef struct {
  const char *dir, *label;
  double embd, heads, kv_heads, expanded;
  gboolean gated;
} Llm;

static const Llm llms[] = {
  { "meta-llama/Llama-2-7b-hf", "Llama-2-7B", 4096, 32, 32, 11008, TRUE },
  { "meta-llama/Llama-2-70b-hf", "Llama-2-70B", 8192, 64, 8, 28672, TRUE },
  { "microsoft/phi-2", "phi-2", 2560, 32, 32, 10240, FALSE },
};

typedef struct {
  const char *dir, *preset;
} Gpu;

/* vidur's "h100" is the SXM part: its memory-bound rows run at ~3 TB/s,
 * above the H100 PCIe's 2 TB/s peak. */
static const Gpu gpus[] = { { "a100", "a100-80g" }, { "h100", "h100-sxm" }, { "a40", "a40" } };

static const char *const ops[] = {
  "attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "mlp_act", "input_layernorm",
  "post_attention_layernorm", "add", "attn_rope", "emb",
};
#define N_OPS G_N_ELEMENTS (ops)

/* A row: (tp, tokens) and each op's median time in ms. */
typedef struct {
  int tp, tokens;
  double ms[N_OPS];
} Row;

static GArray *
read_vidur (const char *path)
{
  g_autofree char *text = read_data (path);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_auto (GStrv) head = g_strsplit (lines[0], ",", -1);
  int col[N_OPS], tpc = -1, tokc = -1;
  for (guint o = 0; o < N_OPS; o++)
    {
      g_autofree char *want = g_strdup_printf ("time_stats.%s.median", ops[o]);
      col[o] = -1;
      for (int i = 0; head[i]; i++)
        if (strcmp (head[i], want) == 0)
          col[o] = i;
    }
  for (int i = 0; head[i]; i++)
    {
      if (strcmp (head[i], "num_tensor_parallel_workers") == 0)
        tpc = i;
      if (strcmp (head[i], "num_tokens") == 0)
        tokc = i;
    }
  g_assert (tpc >= 0 && tokc >= 0);
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (Row));
  for (int l = 1; lines[l]; l++)
    {
      if (lines[l][0] == '\0')
        continue;
      g_auto (GStrv) f = g_strsplit (lines[l], ",", -1);
      Row r = { atoi (f[tpc]), atoi (f[tokc]), { 0 } };
      for (guint o = 0; o < N_OPS; o++)
        r.ms[o] = col[o] >= 0 ? g_ascii_strtod (f[col[o]], NULL) : 0;   /* 0: the model has no such op */
      /* first row of each (tp, tokens) */
      gboolean seen = FALSE;
      for (guint i = 0; i < rows->len && !seen; i++)
        seen = g_array_index (rows, Row, i).tp == r.tp && g_array_index (rows, Row, i).tokens == r.tokens;
      if (!seen)
        g_array_append_val (rows, r);
    }
  return rows;
}

/* The kernel an op is, from the layer shapes (FP16: 2 bytes a value).
 * GEMMs: M = tokens, K x N the weight; flops 2MNK, bytes the three
 * matrices once; a grid of 128x128 tiles of 256 threads at one block per
 * SM (the common cuBLAS/CUTLASS FP16 tile). Memory-bound ops: the bytes
 * they read and write, PyTorch's elementwise grid (128 threads, 4 values
 * each); norms one block per token. */
static void
op_kernel (const Llm *m, int tp, double tokens, guint o, const char **name, VsKernelShape *s, guint64 *bytes)
{
  double hd = m->embd / m->heads, e = m->embd, x = m->expanded / tp;
  double qkv = (m->heads + 2 * m->kv_heads) * hd / tp, att = m->heads * hd / tp;
  double gk = 0, gn = 0, elems = 0, moved = 0;
  memset (s, 0, sizeof *s);
  s->precision = VS_PREC_FP16;
  s->flops = VS_NONE;
  switch (o)
    {
    case 0: gk = e, gn = qkv; break;
    case 1: gk = att, gn = e; break;
    case 2: gk = e, gn = (m->gated ? 2 : 1) * x; break;
    case 3: gk = x, gn = e; break;
    case 4: elems = tokens * x, moved = (m->gated ? 3 : 2) * elems; break;   /* silu(a) * b, or gelu */
    case 5: case 6: elems = tokens * e, moved = 2 * elems; break;           /* read x, write y */
    case 7: elems = tokens * e, moved = 3 * elems; break;                   /* a + b -> c */
    case 8: elems = tokens * (m->heads + m->kv_heads) * hd / tp, moved = 2 * elems; break; /* q, k in place */
    case 9: elems = tokens * e, moved = 2 * elems; break;                   /* gather rows */
    }
  if (gk > 0)
    {
      *name = "ampere_h16816gemm_128x128_ldg8_stages_32x5_tn";
      s->flops = (guint64) (2 * tokens * gk * gn);
      *bytes = (guint64) (2 * (tokens * gk + gk * gn + tokens * gn));
      s->grid[0] = (guint32) (ceil (tokens / 128) * ceil (gn / 128));
      s->grid[1] = s->grid[2] = 1;
      s->block[0] = 256, s->block[1] = s->block[2] = 1;
      s->regs = 255;
      return;
    }
  *name = o == 5 || o == 6 ? "rms_norm_kernel" : "vectorized_elementwise_kernel";
  *bytes = (guint64) (2 * moved);
  s->block[1] = s->block[2] = s->grid[1] = s->grid[2] = 1;
  if (o == 5 || o == 6)
    s->grid[0] = (guint32) tokens, s->block[0] = 256;
  else
    s->grid[0] = (guint32) MAX (1, ceil (elems / 512)), s->block[0] = 128;
  s->regs = 32;
}

static void
vidur (const char *ref)
{
  printf ("\n### vidur: FP16 operators (time per operator, ms)\n\n");
  printf ("| model | captured on | predicted on | rows | measured total | predicted total | error | median row error | p90 row error |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (guint li = 0; li < G_N_ELEMENTS (llms); li++)
    {
      GArray *rows[G_N_ELEMENTS (gpus)];
      for (guint g = 0; g < G_N_ELEMENTS (gpus); g++)
        {
          g_autofree char *p = g_build_filename (ref, "vidur", "compute", gpus[g].dir, llms[li].dir, "mlp.csv", NULL);
          rows[g] = read_vidur (p);
          if (rows[g] == NULL)
            {
              fprintf (stderr, "validate: cannot read %s\n", p);
              exit (1);
            }
        }
      for (guint a = 0; a < G_N_ELEMENTS (gpus); a++)
        for (guint b = 0; b < G_N_ELEMENTS (gpus); b++)
          {
            if (a == b)
              continue;
            double meas = 0, pred = 0;
            g_autoptr (GArray) errs = g_array_new (FALSE, FALSE, sizeof (double));
            for (guint i = 0; i < rows[a]->len; i++)
              {
                const Row *ra = &g_array_index (rows[a], Row, i), *rb = NULL;
                for (guint j = 0; j < rows[b]->len && rb == NULL; j++)
                  if (g_array_index (rows[b], Row, j).tp == ra->tp && g_array_index (rows[b], Row, j).tokens == ra->tokens)
                    rb = &g_array_index (rows[b], Row, j);
                if (rb == NULL)
                  continue;
                for (guint o = 0; o < N_OPS; o++)
                  {
                    if (ra->ms[o] <= 0 || rb->ms[o] <= 0)
                      continue;
                    const char *name;
                    VsKernelShape s;
                    guint64 bytes;
                    op_kernel (&llms[li], ra->tp, ra->tokens, o, &name, &s, &bytes);
                    double d1 = predict (gpus[a].preset, gpus[b].preset, name, &s, ra->ms[o] * 1e6, bytes) / 1e6;
                    meas += rb->ms[o];
                    pred += d1;
                    /* Rows under 10 us are at the file's 1 us resolution: not scored alone. */
                    if (rb->ms[o] >= 0.010 && ra->ms[o] >= 0.010)
                      {
                        double e = fabs (d1 / rb->ms[o] - 1);
                        g_array_append_val (errs, e);
                        g_array_append_val (row_errors, e);
                        if (g_getenv ("VALIDATE_DEBUG"))
                          printf ("ROW %s %s>%s tp%d T%d %s meas %.4f pred %.4f cap %.4f err %+.1f\n", llms[li].label,
                                  gpus[a].dir, gpus[b].dir, ra->tp, ra->tokens, ops[o], rb->ms[o], d1, ra->ms[o],
                                  100 * (d1 / rb->ms[o] - 1));
                      }
                  }
              }
            double med = quantile (errs, 0.5), p90 = quantile (errs, 0.9);
            printf ("| %s | %s | %s | %u | %.1f | %.1f | %+.1f %% | %.1f %% | %.1f %% |\n", llms[li].label,
                    gpus[a].preset, gpus[b].preset, errs->len, meas, pred, 100 * (pred / meas - 1), 100 * med,
                    100 * p90);
            g_autofree char *what = g_strdup_printf ("vidur %s, all operators, all token counts and TP", llms[li].label);
            g_autofree char *note = g_strdup_printf ("row median |error| %.1f %%", 100 * med);
            add_case (what, gpus[a].preset, gpus[b].preset, meas, pred, "ms", note);
          }
      for (guint g = 0; g < G_N_ELEMENTS (gpus); g++)
        g_array_free (rows[g], TRUE);
    }
}

/* ---- 2. gpu-benches ---- */

typedef struct {
  const char *file, *preset;
} Bench;

/* gpu-stream: the best "scale" row (1 load and 1 store stream); the
 * presets' efficiencies are triad figures, so scale is not what they
 * were set from. */
static double
stream_scale (const char *ref, const char *file)
{
  g_autofree char *p = g_build_filename (ref, "gpu-benches", "gpu-stream", file, NULL);
  g_autofree char *text = read_data (p);
  double best = 0;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      const char *bar = strstr (lines[i], "GB/s:");
      if (bar == NULL)
        continue;
      double init, read, scale;
      if (sscanf (bar + 5, "%lf %lf %lf", &init, &read, &scale) == 3)
        best = MAX (best, scale);
    }
  return best * 1e9;
}

/* gpu-small-kernels (CUDA graph): per size, the best GB/s of the block
 * sizes; time = bytes / rate. Returns parallel arrays (elements, ns). */
static GArray *
small_kernels (const char *ref, const char *file)
{
  g_autofree char *p = g_build_filename (ref, "gpu-benches", "gpu-small-kernels", file, NULL);
  g_autofree char *text = read_data (p);
  GArray *a = g_array_new (FALSE, FALSE, sizeof (double) * 2);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      g_auto (GStrv) f = g_strsplit_set (g_strstrip (lines[i]), " ", -1);
      double n = 0, best = 0;
      int k = 0;
      for (int j = 0; f[j]; j++)
        {
          if (f[j][0] == '\0')
            continue;
          if (k == 0)
            n = g_ascii_strtod (f[j], NULL);
          else if (k >= 2)
            best = MAX (best, g_ascii_strtod (f[j], NULL));
          k++;
        }
      if (n > 0 && best > 0)
        {
          double v[2] = { n, 16 * n / best };   /* SCALE: 8 bytes read + 8 written per double */
          g_array_append_vals (a, v, 1);
        }
    }
  return a;
}

static void
gpu_benches (const char *ref)
{
  static const Bench stream[] = {
    { "v100.txt", "v100-pcie-16g" }, { "a100_40.txt", "a100-40g" }, { "h100_pcie.txt", "h100-pcie" },
    { "h200.txt", "h200" }, { "a40.txt", "a40" }, { "l40.txt", "l40s" },
  };
  printf ("\n### gpu-benches\n\n");
  printf ("STREAM scale, 1 GiB read + 1 GiB written, captured on a100-80g (%s):\n\n", "gpu-stream/a100_80.txt");
  printf ("| predicted on | measured GB/s | predicted GB/s | error |\n| --- | --- | --- | --- |\n");
  double bw0 = stream_scale (ref, "a100_80.txt");
  if (bw0 <= 0)
    {
      fprintf (stderr, "validate: cannot read gpu-stream\n");
      exit (1);
    }
  const double bytes = 2.0 * (1u << 30);
  for (guint i = 0; i < G_N_ELEMENTS (stream); i++)
    {
      double bw = stream_scale (ref, stream[i].file);
      double d0 = bytes / bw0 * 1e9;
      double d1 = predict ("a100-80g", stream[i].preset, "stream_scale_elementwise", NULL, d0, (guint64) bytes);
      double pbw = bytes / d1;   /* GB/s: bytes per ns */
      printf ("| %s | %.0f | %.0f | %+.1f %% |\n", stream[i].preset, bw / 1e9, pbw, 100 * (pbw * 1e9 / bw - 1));
      g_autofree char *note = g_strdup_printf ("gpu-stream/%s%s", stream[i].file,
                                               strcmp (stream[i].file, "l40.txt") == 0
                                               ? "; the l40s preset for the L40 (the same GDDR6 memory)" : "");
      add_case ("STREAM scale, 2 GiB moved (time, us)", "a100-80g", stream[i].preset, bytes / bw * 1e6,
                d1 / 1e3, "us", note);
    }

  static const Bench small[] = { { "h200_graph.txt", "h200" }, { "a40_graph.txt", "a40" }, { "l40_graph.txt", "l40s" } };
  g_autoptr (GArray) base = small_kernels (ref, "a100_80_graph.txt");
  if (base == NULL)
    {
      fprintf (stderr, "validate: cannot read gpu-small-kernels\n");
      exit (1);
    }
  printf ("\nSmall kernels (SCALE, CUDA graph), captured on a100-80g (gpu-small-kernels/a100_80_graph.txt); "
          "sizes both files measured:\n\n");
  printf ("| predicted on | sizes | measured total us | predicted total us | error | median size error | worst size error |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (guint i = 0; i < G_N_ELEMENTS (small); i++)
    {
      g_autoptr (GArray) t = small_kernels (ref, small[i].file);
      g_autoptr (GArray) errs = g_array_new (FALSE, FALSE, sizeof (double));
      double meas = 0, pred = 0;
      for (guint j = 0; j < t->len; j++)
        {
          const double *v = &g_array_index (t, double, 2 * j);
          /* The A100's time at this size: the files measure different
           * sizes, so interpolate log-log between the A100's neighbours
           * (sizes outside its range are left out). */
          double d0 = -1;
          for (guint k = 0; k + 1 < base->len && d0 < 0; k++)
            {
              const double *lo = &g_array_index (base, double, 2 * k), *hi = lo + 2;
              if (lo[0] <= v[0] && v[0] <= hi[0])
                {
                  double x = hi[0] > lo[0] ? log (v[0] / lo[0]) / log (hi[0] / lo[0]) : 0;
                  d0 = exp (log (lo[1]) + x * (log (hi[1]) - log (lo[1])));
                }
            }
          if (d0 < 0)
            continue;
          double d1 = predict ("a100-80g", small[i].preset, "small_scale_elementwise", NULL, d0,
                               (guint64) (16 * v[0]));
          meas += v[1];
          pred += d1;
          double e = fabs (d1 / v[1] - 1);
          g_array_append_val (errs, e);
        }
      double worst = quantile (errs, 1.0), med = quantile (errs, 0.5);
      printf ("| %s | %u | %.0f | %.0f | %+.1f %% | %.1f %% | %.1f %% |\n", small[i].preset, errs->len, meas / 1e3,
              pred / 1e3, 100 * (pred / meas - 1), 100 * med, 100 * worst);
      g_autofree char *note = g_strdup_printf ("gpu-small-kernels/%s, %u sizes; median size |error| %.1f %%",
                                               small[i].file, errs->len, 100 * med);
      add_case ("small SCALE kernels back to back (sum over sizes, us)", "a100-80g", small[i].preset, meas / 1e3,
                pred / 1e3, "us", note);
    }
}

/* ---- 3. lambda ---- */

/* Summed captured and predicted kernel time of a real trace on TARGET
 * (communication kernels left out: lambda's runs are one GPU). */
static gboolean
trace_kernel_time (const char *vtrace, const char *cap, const char *tgt, double *captured, double *predicted)
{
  GError *err = NULL;
  g_autoptr (VsTraceReader) r = trace_open (vtrace, &err);
  if (r == NULL)
    {
      fprintf (stderr, "validate: %s\n", err->message);
      g_error_free (err);
      return FALSE;
    }
  VsKernelModel *m = model_for (cap, tgt);
  VsEvent ev;
  *captured = *predicted = 0;
  while (trace_next (r, &ev, &err))
    {
      if (ev.op != VS_OP_KERNEL)
        continue;
      const VsKernelFactors *f = kernel_model_factors (m, ev.name, ev.shape);
      if (f->kind.cls == VS_KCLASS_COMM)
        continue;
      VsKernelPred p;
      kernel_model_predict (m, f, ev.dur, ev.bytes, ev.compute_ns, ev.shape ? ev.shape->flops : VS_NONE, &p);
      *captured += (double) ev.dur;
      *predicted += p.d1_ns;
    }
  if (err != NULL)
    {
      fprintf (stderr, "validate: %s\n", err->message);
      g_error_free (err);
      return FALSE;
    }
  return TRUE;
}

/* lambda's throughput (items/s) for GPU and MODEL in DIR/FILE. */
static double
lambda_value (const char *dir, const char *file, const char *gpu, const char *model)
{
  g_autofree char *p = g_build_filename (dir, file, NULL);
  g_autofree char *text = read_data (p);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_auto (GStrv) head = g_strsplit (lines[0], ",", -1);
  int col = -1;
  for (int i = 0; head[i]; i++)
    if (strcmp (head[i], model) == 0)
      col = i;
  for (int l = 1; lines[l] && col >= 0; l++)
    {
      g_auto (GStrv) f = g_strsplit (lines[l], ",", -1);
      if (f[0] && strcmp (f[0], gpu) == 0 && (int) g_strv_length (f) > col)
        return g_ascii_strtod (f[col], NULL);
    }
  return 0;
}

typedef struct {
  const char *lambda_gpu, *preset;
} LGpu;

/* LAMBDA: the folder of lambda's CSVs, or NULL; REAL: the optional real
 * traces' folder, or NULL; DATA: validation/data. */
static void
lambda (const char *lambda_dir, const char *data, const char *real)
{
  static const LGpu lg[] = {
    { "LambdaCloud V100 16GB", "v100-sxm2-32g" }, { "RTX 3090", "rtx3090" }, { "RTX 4090", "rtx4090" },
    { "A100 80GB SXM4", "a100-80g" }, { "H100 80GB SXM5", "h100-sxm" },
  };
  static const struct {
    const char *trace, *cap_gpu, *file, *model, *what;
    gboolean proxy;
  } runs[] = {
    /* a V100 CNN training step (cuDNN FP32 convolutions, batch norm) against ResNet-50 FP32 */
    { "kineto/ns-resolution-rank0.json.gz", "LambdaCloud V100 16GB", "pytorch-train-throughput-fp32.csv",
      "resnet50", "ns-resolution-rank0 (V100, FP32 CNN training) vs lambda ResNet-50 FP32", FALSE },
    /* a V100 training step of FP32 GEMMs and elementwise work against BERT-base FP32 */
    { "kineto/memory-profile-v100.json.gz", "LambdaCloud V100 16GB", "pytorch-train-throughput-fp32.csv",
      "bert_base_squad", "memory-profile-v100 (V100, FP32 sgemm training; model unknown) vs lambda BERT-base FP32 (proxy)",
      TRUE },
    /* TensorRT FP16 ResNet inference on an RTX 3090 against ResNet-50 FP16 training */
    { "nsys/rtx3090-small.sqlite", "RTX 3090", "pytorch-train-throughput-fp16.csv", "resnet50",
      "rtx3090-small (RTX 3090, TensorRT FP16 inference) vs lambda ResNet-50 FP16 training (proxy)", TRUE },
  };
  static char tf32_set[32];
  g_snprintf (tf32_set, sizeof tf32_set, "model.tf32=%s", lambda_tf32);
  static const char *ngc[] = { tf32_set, NULL };
  printf ("\n### lambda: one-GPU training throughput ratios (targets with --set %s%s)\n\n", tf32_set,
          strcmp (lambda_tf32, "all") == 0 ? ": NGC containers" : "");
  if (lambda_dir == NULL)
    {
      printf ("(left out: lambdal/deeplearning-benchmark's CSVs are optional data we may not redistribute: "
              "make validate LAMBDA_DATA=DIR, validation/data/README.md)\n");
      return;
    }
  target_sets = ngc;
  printf ("| trace vs benchmark | captured on | predicted on | measured speedup | predicted speedup | error |\n");
  printf ("| --- | --- | --- | --- | --- | --- |\n");
  g_autofree char *tmp = g_dir_make_tmp ("vramsim-validate-XXXXXX", NULL);
  guint left_out = 0;
  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      gboolean optional = g_str_has_prefix (runs[i].trace, "nsys/");
      if (optional && real == NULL)
        {
          left_out++;
          continue;
        }
      g_autofree char *src = g_build_filename (optional ? real : data, runs[i].trace, NULL);
      g_autofree char *dst = g_build_filename (tmp, "t.vtrace", NULL);
      GError *err = NULL;
      gboolean ok = g_str_has_suffix (src, ".sqlite") ? import_nsys (src, dst, &err) : import_kineto (src, dst, &err);
      if (!ok)
        {
          fprintf (stderr, "validate: %s\n", err->message);
          exit (1);
        }
      const char *cap = NULL;
      for (guint g = 0; g < G_N_ELEMENTS (lg); g++)
        if (strcmp (lg[g].lambda_gpu, runs[i].cap_gpu) == 0)
          cap = lg[g].preset;
      double base = lambda_value (lambda_dir, runs[i].file, runs[i].cap_gpu, runs[i].model);
      for (guint g = 0; g < G_N_ELEMENTS (lg); g++)
        {
          if (strcmp (lg[g].preset, cap) == 0)
            continue;
          double c, p;
          if (!trace_kernel_time (dst, cap, lg[g].preset, &c, &p))
            exit (1);
          double meas = lambda_value (lambda_dir, runs[i].file, lg[g].lambda_gpu, runs[i].model) / base;
          double pred = c / p;
          printf ("| %s | %s | %s | %.2f | %.2f | %+.1f %% |\n", runs[i].what, cap, lg[g].preset, meas, pred,
                  100 * (pred / meas - 1));
          add_case (runs[i].what, cap, lg[g].preset, meas, pred, "x",
                    runs[i].proxy ? "throughput ratio; other work than the benchmark: not scored" : "throughput ratio");
          ((Case *) g_ptr_array_index (cases, cases->len - 1))->proxy = runs[i].proxy;
        }
      g_unlink (dst);
    }
  if (left_out)
    printf ("\n(left out: the rtx3090-small rows, an optional real trace we may not redistribute: "
            "make validate REAL_TRACES=DIR, validation/data/README.md)\n");
  g_rmdir (tmp);
  target_sets = NULL;
}

int
main (int argc, char **argv)
{
  const char *ref = NULL, *real = NULL, *lambda_dir = NULL;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--real-traces") == 0 && i + 1 < argc)
      real = argv[++i];
    else if (strcmp (argv[i], "--lambda") == 0 && i + 1 < argc)
      lambda_dir = argv[++i];
    else if (strcmp (argv[i], "--lambda-tf32") == 0 && i + 1 < argc)
      lambda_tf32 = argv[++i];
    else if (ref == NULL && argv[i][0] != '-')
      ref = argv[i];
    else
      {
        fprintf (stderr, "usage: validate-across DATA [--real-traces DIR] [--lambda DIR] [--lambda-tf32 conv|all|none]\n");
        return 2;
      }
  if (ref == NULL)
    {
      fprintf (stderr, "usage: validate-across DATA [--real-traces DIR] [--lambda DIR] (DATA: validation/data)\n");
      return 2;
    }
  models = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) kernel_model_free);
  cases = g_ptr_array_new ();
  row_errors = g_array_new (FALSE, FALSE, sizeof (double));

  printf ("## Across GPUs (make validate)\n");
  vidur (ref);
  gpu_benches (ref);
  lambda (lambda_dir, ref, real);

  printf ("\n### All cases\n\n| case | captured on | predicted on | measured | predicted | error | note |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- |\n");
  g_autoptr (GArray) errs = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < cases->len; i++)
    {
      const Case *c = g_ptr_array_index (cases, i);
      double e = c->predicted / c->measured - 1;
      printf ("| %s | %s | %s | %.4g %s | %.4g %s | %+.1f %% | %s |\n", c->what, c->from, c->to, c->measured, c->unit,
              c->predicted, c->unit, 100 * e, c->note);
      e = fabs (e);
      g_array_append_val (all, e);
      if (!c->proxy)
        g_array_append_val (errs, e);
    }
  printf ("\nsummary: %u scored cases, median |error| %.1f %%, worst %.1f %%; with the %u proxies: median %.1f %%, "
          "worst %.1f %%; vidur rows (>= 10 us): %u, median %.1f %%, p90 %.1f %%\n", errs->len,
          100 * quantile (errs, 0.5), 100 * quantile (errs, 1.0), all->len - errs->len, 100 * quantile (all, 0.5),
          100 * quantile (all, 1.0), row_errors->len, 100 * quantile (row_errors, 0.5), 100 * quantile (row_errors, 0.9));
  g_hash_table_destroy (models);
  return 0;
}
