/* kernel-model.c — the "waves" kernel model: a captured kernel's time on
 * another GPU (docs/model.md, "Kernels across GPUs"; SPEC 5.4).
 *
 * Assumptions, and where they come from:
 *
 * 1. A kernel's captured time d0 is a fixed floor F = min(d0, 1.3 us)
 *    plus a scalable part w0 = d0 - F (F shrinks to what is left of d0
 *    beyond the trace's bytes at the capture bandwidth, or beyond its
 *    compute_ns: a kernel those already fill hides its launch). F is the time of an empty kernel
 *    back to back in a CUDA graph (gpu-benches gpu-small-kernels,
 *    VS_KERNEL_FLOOR_NS): launch and drain no chip makes shorter, so F is
 *    the same on both chips and tiny kernels keep their time.
 * 2. w0 is a compute part c0 and a memory part m0 = gamma * w0, run one
 *    after the other (SPEC 5.4's split, and Habitat's blend of the two,
 *    made additive so the engine can run each as its own flow).
 *    gamma, in order of what is known:
 *      - `compute_ns` given: c0 = min(compute_ns, w0), m0 = w0 - c0;
 *      - `flops` and `bytes` given: Habitat's memory-boundness (Yu et al.,
 *        "Habitat: A Runtime-Based Computational Performance Predictor
 *        for Deep Neural Network Training", USENIX ATC 2021, wave
 *        scaling): with the arithmetic intensity I = flops / bytes and the
 *        target's ridge point R = peak(precision) / bandwidth,
 *        gamma = 1 - I / (2R) for I <= R, R / (2I) above;
 *      - `bytes` alone: m0 = min(bytes / B0, w0) (SPEC 5.4);
 *      - neither: by class (kernel-class.h): elementwise, reduce, norm
 *        and softmax gamma = 1 (the memory part is d0 x the capture's
 *        sustained bandwidth, so a bandwidth sweep moves them);
 *        GEMMs, convolutions and attention a small gamma, other 0.5
 *        (class_gamma; the values and the data they were set on are in
 *        docs/model.md).
 * 3. The compute part runs at the chip's dense peak for the kernel's
 *    precision (the trace's `precision`, else the one its name states,
 *    else the class's: tensor GEMMs and attention fp16, the rest fp32).
 *    Tensor-core classes (GEMMs, convolutions, attention) use the peak of
 *    that precision; everything else runs on the CUDA cores at the fp32
 *    (fp64) rate, or at the issue rate sms x clock (3b, in
 *    factors_compute). Both chips are taken to reach the same fraction of
 *    their peak.
 * 3a. Fields over names: a kernel whose trace gives its `flops` and
 *    `precision` says what it computes, whatever its name: its compute
 *    part runs at that precision's peak (no class default, no CUDA-core or
 *    issue-rate rule), and with `bytes` its memory share is Habitat's
 *    gamma for every class (the memory-bound classes' `bytes / B0` rule is
 *    for kernels that give no flops). The class fills in only what the
 *    fields do not say: communication keeps its time, and which FP32 work
 *    may run as TF32 on the target (3c: GEMMs and convolutions). An
 *    operator's name ("linear", "aten::mm", as op-level data gives) thus
 *    scales as its cuBLAS kernel would.
 * 3c. FP32 GEMMs and convolutions captured on a chip without TF32 units
 *    (Volta: its tf32 peak is its fp32 rate) run on the target's TF32
 *    tensor cores when the target has them and model.tf32 allows it:
 *    "conv" (the default: PyTorch's torch.backends.cudnn.allow_tf32 is
 *    true), "all" (matmuls too: torch.backends.cuda.matmul.allow_tf32, on
 *    in NVIDIA's NGC containers and in PyTorch 1.7-1.11), "none". A
 *    capture on a chip with TF32 that still ran sgemm says TF32 was off:
 *    it stays FP32.
 * 4. Waves (Habitat; NeuSight, Lee et al., "Forecasting GPU Performance
 *    for Deep Learning Training and Inference", ASPLOS 2025: a kernel is
 *    tiles run in waves over the SMs): with the grid, the block and its
 *    resources known, a wave is sms x k blocks, k the blocks one SM holds
 *    (threads, registers and shared memory against Volta-to-Hopper's
 *    common per-SM limits: 2048 threads, 64 Ki registers, 96 KiB shared
 *    memory, 32 blocks; the same k on both chips). The compute part takes
 *    waves x (time of one wave), a wave's time being the block's work at
 *    one SM's rate (peak / sms): c1 = c0 x (n1 / r1) / (n0 / r0). A
 *    partial last wave costs a whole one (the tail effect that makes
 *    NeuSight's utilisation fall with fewer waves). A kernel smaller than
 *    one wave on both chips thus scales with one SM's rate (its clock and
 *    width), not with the SM count, and its memory part stays: a partial
 *    wave cannot draw the chip's bandwidth, it waits on latency (Habitat
 *    keeps it too). Without a grid, or without `sms` on a chip, the
 *    compute part scales by the peak ratio alone.
 * 5. The memory part scales with the sustained bandwidth
 *    (memory.bandwidth x memory.efficiency, the STREAM triad of the
 *    presets): m1 = m0 x B0 / B1. L2 size is not modeled.
 * 6. Communication kernels (NCCL, RCCL) keep their captured time: they
 *    wait on the interconnect (the network model times them, SPEC 5.8).
 * On the capture chip every ratio is exactly 1.0, so d1 = d0 up to the
 * rounding of one addition (the identity SPEC 5.4 requires). */
#include "model/kernel-model.h"

#include <math.h>
#include <string.h>

G_STATIC_ASSERT (VS_PREC_COUNT == 8);

struct _VsKernelModel {
  VsKernelChip cap, tgt;
  double ns_per_byte0, bytes_per_ns0;   /* the capture's sustained bandwidth, both ways */
  GHashTable *cache;   /* Key* -> VsKernelFactors* */
};

static const char *const bound_names[VS_BOUND_COUNT] = { "compute", "memory", "latency", "communication" };

const char *
kernel_bound_name (guint b)
{
  return b < VS_BOUND_COUNT ? bound_names[b] : NULL;
}

void
kernel_chip_from_config (VsKernelChip *chip, const VsConfig *c)
{
  memset (chip, 0, sizeof *chip);
  for (guint p = 1; p < VS_PREC_COUNT; p++)
    chip->peak[p] = c->compute.peak[p] * 1e12;
  if (chip->peak[VS_PREC_FP16] == 0)
    chip->peak[VS_PREC_FP16] = c->tflops * 1e12;
  chip->sms = c->compute.sms;
  chip->clock_hz = c->compute.clock_hz;
  chip->tf32 = c->tf32;
  chip->mem_bps = c->memory.bandwidth * c->memory.efficiency;
}

/* Where a precision a chip does not list falls back to: what a program
 * runs instead (no FP8 units: FP16; no BF16 or INT8 tensor rate given:
 * FP16; no TF32: the FP32 CUDA cores; FP64 not given: FP32, optimistic).
 * FP16 is always given (config requires it). */
static const guint8 prec_fallback[VS_PREC_COUNT] = {
  [VS_PREC_NONE] = VS_PREC_FP32, [VS_PREC_FP64] = VS_PREC_FP32, [VS_PREC_FP32] = VS_PREC_FP16,
  [VS_PREC_TF32] = VS_PREC_FP32, [VS_PREC_FP16] = VS_PREC_FP16, [VS_PREC_BF16] = VS_PREC_FP16,
  [VS_PREC_FP8] = VS_PREC_FP16, [VS_PREC_INT8] = VS_PREC_FP16,
};

double
kernel_chip_peak (const VsKernelChip *chip, guint p, guint *used)
{
  g_return_val_if_fail (p < VS_PREC_COUNT, 0);
  for (int hops = 0; hops < 4 && chip->peak[p] <= 0; hops++)
    p = prec_fallback[p];
  if (used != NULL)
    *used = p;
  return chip->peak[p];
}

/* Memory share of the scalable time when the trace gives neither flops
 * nor bytes (docs/model.md, "Class defaults"). */
static double
class_gamma (guint cls)
{
  switch (cls)
    {
    case VS_KCLASS_ELEMENTWISE: case VS_KCLASS_REDUCE: case VS_KCLASS_NORM: case VS_KCLASS_SOFTMAX:
      return 1.0;
    case VS_KCLASS_GEMM_SIMT: case VS_KCLASS_GEMM_TENSOR:
      return 0.1;
    case VS_KCLASS_CONV:
      return 0.2;
    case VS_KCLASS_ATTENTION:
      return 0.3;
    default:
      return 0.5;
    }
}

/* Whether FP32 work of class CLS captured on M's capture chip runs on the
 * target's TF32 tensor cores (assumption 3c). */
static gboolean
tf32_upgrade (const VsKernelModel *m, guint cls)
{
  gboolean cap_has = m->cap.peak[VS_PREC_TF32] > m->cap.peak[VS_PREC_FP32];
  gboolean tgt_has = m->tgt.peak[VS_PREC_TF32] > m->tgt.peak[VS_PREC_FP32];
  if (cap_has || !tgt_has)
    return FALSE;
  return (cls == VS_KCLASS_CONV && m->tgt.tf32 != VS_TF32_NONE)
         || (cls == VS_KCLASS_GEMM_SIMT && m->tgt.tf32 == VS_TF32_ALL);
}

static gboolean
tensor_class (guint cls)
{
  return cls == VS_KCLASS_GEMM_TENSOR || cls == VS_KCLASS_CONV || cls == VS_KCLASS_ATTENTION;
}

/* Whether SHAPE gives the work's flops and precision (assumption 3a). */
static gboolean
shape_has_fields (const VsKernelShape *shape)
{
  return shape != NULL && shape->precision != VS_PREC_NONE && shape->flops != VS_NONE;
}

/* The precision whose peak the compute part runs at. */
static guint
compute_precision (VsKernelKind kind, const VsKernelShape *shape)
{
  if (shape_has_fields (shape))
    return shape->precision;   /* 3a: what the trace says, whatever the name */
  guint p = shape != NULL && shape->precision != VS_PREC_NONE ? shape->precision : kind.precision;
  if (p == VS_PREC_NONE)
    p = kind.cls == VS_KCLASS_GEMM_TENSOR || kind.cls == VS_KCLASS_ATTENTION ? VS_PREC_FP16 : VS_PREC_FP32;
  /* Work on the CUDA cores runs at the FP32 rate (FP64 for double). */
  if (!tensor_class (kind.cls) && p != VS_PREC_FP64)
    p = VS_PREC_FP32;
  return p;
}

/* Volta-to-Hopper per-SM limits (CUDA C Programming Guide, "Compute
 * Capabilities" table: 7.0-9.0 all hold at least these). */
#define SM_THREADS 2048u
#define SM_REGS 65536u
#define SM_SMEM (96u << 10)
#define SM_BLOCKS 32u

/* Blocks of SHAPE one SM holds at once; 0 when the block is not known. */
static guint
blocks_per_sm (const VsKernelShape *s)
{
  guint64 threads = (guint64) s->block[0] * s->block[1] * s->block[2];
  if (threads == 0)
    return 0;
  guint64 warp_threads = (threads + 31) / 32 * 32;
  guint64 k = MIN (SM_BLOCKS, SM_THREADS / warp_threads);
  if (s->regs > 0)
    k = MIN (k, SM_REGS / (warp_threads * s->regs));
  if (s->smem > 0)
    k = MIN (k, SM_SMEM / s->smem);
  return (guint) MAX (k, 1);
}

/* The factors of a name and shape class: the shape without its flops
 * count, which the factors do not use (kernel_model_predict takes them
 * per event), but with whether it has one (assumption 3a). With flops in
 * the key, a trace whose kernels each carry their own count (Kineto's
 * with_flops, sized layers) computed the factors and kept an entry for
 * every event: 2.9 k instructions and 220 bytes a kernel
 * (docs/performance.md). In the key, flops is 0 when known, VS_NONE when
 * not. */
typedef struct {
  char *name;
  VsKernelShape shape;   /* flops VS_NONE */
  gboolean has_shape;
} Key;

static guint
key_hash (gconstpointer p)
{
  const Key *k = p;
  guint h = g_str_hash (k->name);
  if (k->has_shape)
    {
      const VsKernelShape *s = &k->shape;
      guint64 v[] = { s->precision, s->grid[0], s->grid[1], s->grid[2], s->block[0],
                      s->block[1], s->block[2], s->regs, s->smem, s->flops };
      for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
        h = h * 1000003u ^ (guint) (v[i] ^ (v[i] >> 32));
    }
  return h;
}

static gboolean
shape_equal (const VsKernelShape *a, const VsKernelShape *b)
{
  return a->precision == b->precision && a->flops == b->flops && memcmp (a->grid, b->grid, sizeof a->grid) == 0
         && memcmp (a->block, b->block, sizeof a->block) == 0 && a->regs == b->regs && a->smem == b->smem;
}

static gboolean
key_equal (gconstpointer pa, gconstpointer pb)
{
  const Key *a = pa, *b = pb;
  return a->has_shape == b->has_shape && strcmp (a->name, b->name) == 0
         && (!a->has_shape || shape_equal (&a->shape, &b->shape));
}

static void
key_free (gpointer p)
{
  Key *k = p;
  g_free (k->name);
  g_free (k);
}

VsKernelModel *
kernel_model_new (const VsKernelChip *capture, const VsKernelChip *target)
{
  VsKernelModel *m = g_new0 (VsKernelModel, 1);
  m->cap = *capture;
  m->tgt = *target;
  m->ns_per_byte0 = 1e9 / capture->mem_bps;
  m->bytes_per_ns0 = capture->mem_bps * 1e-9;
  m->cache = g_hash_table_new_full (key_hash, key_equal, key_free, g_free);
  return m;
}

void
kernel_model_free (VsKernelModel *m)
{
  if (m == NULL)
    return;
  g_hash_table_destroy (m->cache);
  g_free (m);
}

static void
factors_compute (const VsKernelModel *m, const char *name, const VsKernelShape *shape, VsKernelFactors *f)
{
  memset (f, 0, sizeof *f);
  f->kind = kernel_class_of (name);
  f->precision = (guint8) compute_precision (f->kind, shape);
  f->cscale = f->mscale = 1.0;
  f->sm_share = 1.0;
  f->gamma = class_gamma (f->kind.cls);
  f->membound = kernel_class_memory_bound (f->kind.cls);
  f->comm = f->kind.cls == VS_KCLASS_COMM;
  f->fields = shape_has_fields (shape);
  guint64 blocks = shape != NULL ? (guint64) shape->grid[0] * shape->grid[1] * shape->grid[2] : 0;
  guint k = shape != NULL ? blocks_per_sm (shape) : 0;
  if (blocks > 0 && k > 0 && m->tgt.sms > 0)
    f->sm_share = MIN (1.0, (double) blocks / (m->tgt.sms * k));
  if (f->kind.cls == VS_KCLASS_COMM)
    return;

  /* The precision each chip runs it at: the same, but for the TF32
   * upgrade (3c), FP32 at capture and TF32 on the target. */
  guint pc = f->precision, pt = f->precision;
  guint used0 = pc, used1 = pt;
  double p0 = kernel_chip_peak (&m->cap, pc, &used0);
  double p1 = kernel_chip_peak (&m->tgt, pt, &used1);
  if (pc == VS_PREC_FP32 && tf32_upgrade (m, f->kind.cls))
    {
      /* Assumption 3c: cuDNN / cuBLAS pick TF32 kernels on the target. */
      pt = VS_PREC_TF32;
      p1 = kernel_chip_peak (&m->tgt, pt, &used1);
      f->precision = VS_PREC_TF32;
      f->upgraded = TRUE;
    }
  /* A chip without a peak for the precision it runs the kernel at (not
   * the capture's FP32 of an upgraded kernel: that is its own rate). */
  f->fallback = used0 != pc || used1 != pt;
  f->peak1 = p1;   /* the target's ridge point (Habitat's gamma) uses this peak */
  if (!f->fields && !tensor_class (f->kind.cls) && f->kind.cls != VS_KCLASS_GEMM_SIMT && m->cap.sms > 0
      && m->tgt.sms > 0 && m->cap.clock_hz > 0 && m->tgt.clock_hz > 0)
    {
      /* Issue-rate work (assumption 3b): the rate is sms x clock. */
      p0 = m->cap.sms * m->cap.clock_hz;
      p1 = m->tgt.sms * m->tgt.clock_hz;
      f->fallback = FALSE;
    }
  f->cscale = p0 / p1;
  f->mscale = m->cap.mem_bps / m->tgt.mem_bps;

  if (blocks > 0 && k > 0 && m->cap.sms > 0 && m->tgt.sms > 0)
    {
      f->waves0 = ceil ((double) blocks / (m->cap.sms * k));
      f->waves1 = ceil ((double) blocks / (m->tgt.sms * k));
      /* c ∝ waves / (one SM's rate); one SM's rate = peak / sms. */
      f->cscale = (f->waves1 * m->tgt.sms / p1) / (f->waves0 * m->cap.sms / p0);
      f->subwave = f->waves0 == 1 && f->waves1 == 1 && (double) blocks < m->cap.sms * k
                   && (double) blocks < m->tgt.sms * k;
      /* Latency-bound: the same time, or more where the target's memory
       * cannot move the bytes that fast. */
      if (f->subwave)
        f->mscale = MAX (1.0, f->mscale);
    }
}

const VsKernelFactors *
kernel_model_factors (VsKernelModel *m, const char *name, const VsKernelShape *shape)
{
  Key probe = { (char *) (name != NULL ? name : ""), { 0 }, shape != NULL };
  if (shape != NULL)
    {
      probe.shape = *shape;
      probe.shape.flops = shape->flops == VS_NONE ? VS_NONE : 0;   /* known or not */
    }
  VsKernelFactors *f = g_hash_table_lookup (m->cache, &probe);
  if (f != NULL)
    return f;
  Key *k = g_new (Key, 1);
  *k = probe;
  k->name = g_strdup (probe.name);
  f = g_new (VsKernelFactors, 1);
  factors_compute (m, name, shape, f);
  g_hash_table_insert (m->cache, k, f);
  return f;
}

/* Habitat's memory-boundness against the target's ridge point. */
static double
habitat_gamma (double flops, double bytes, double peak, double bw)
{
  if (flops <= 0)
    return 1.0;
  if (bytes <= 0)
    return 0.0;
  double intensity = flops / bytes, ridge = peak / bw;
  return intensity <= ridge ? 1.0 - 0.5 * intensity / ridge : 0.5 * ridge / intensity;
}

void
kernel_model_predict (const VsKernelModel *m, const VsKernelFactors *f, guint64 d0, guint64 bytes,
                      guint64 compute_ns, guint64 flops, VsKernelPred *out)
{
  /* Once per kernel event (the rest is per name, in the factors): kept
   * to a few dozen instructions (docs/performance.md). */
  double d = (double) d0;
  if (G_UNLIKELY (f->comm))
    {
      /* Kept whole: the network, not the chip, sets its time. */
      *out = (VsKernelPred) { .c0_ns = d, .c1_ns = d, .d1_ns = d, .bound = VS_BOUND_COMMUNICATION };
      return;
    }
  /* The floor is what the kernel spends beyond its known parts: none
   * when its bytes at the capture's bandwidth, or its compute_ns, already
   * fill d0 (a bandwidth-bound kernel hides its launch). */
  double fl = d < VS_KERNEL_FLOOR_NS ? d : VS_KERNEL_FLOOR_NS;
  double bt = bytes != VS_NONE ? (double) bytes * m->ns_per_byte0 : -1;   /* its bytes' time at capture */
  if (bt >= 0 && d - bt < fl)
    fl = MAX (0.0, d - bt);
  if (compute_ns != VS_NONE && d - (double) compute_ns < fl)
    fl = MAX (0.0, d - (double) compute_ns);
  double w = d - fl;
  double m0;
  if (compute_ns != VS_NONE)
    m0 = w - MIN ((double) compute_ns, w);
  else if (bt < 0)
    m0 = w * f->gamma;   /* 1 for the memory-bound classes */
  else if (flops != VS_NONE && (!f->membound || f->fields))
    m0 = w * habitat_gamma ((double) flops, (double) bytes, f->peak1, m->tgt.mem_bps);
  else
    m0 = MIN (bt, w);
  double c0 = w - m0;
  out->floor_ns = fl;
  out->c0_ns = c0;
  out->m0_ns = m0;
  out->c1_ns = c0 * f->cscale;
  out->m1_ns = m0 * f->mscale;
  out->d1_ns = fl + out->c1_ns + out->m1_ns;
  /* The bytes it moves: the trace's when given (never more than the
   * memory part can move at the capture's bandwidth, so that alone it
   * still ends at d1), else what the memory part moves. */
  out->mem_bytes = m0 * m->bytes_per_ns0;
  if (bytes != VS_NONE && (double) bytes < out->mem_bytes)
    out->mem_bytes = (double) bytes;
  out->bound = f->subwave || w <= 0 ? VS_BOUND_LATENCY : m0 >= c0 ? VS_BOUND_MEMORY : VS_BOUND_COMPUTE;
}
