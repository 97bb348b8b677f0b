/* test-kernel-model.c — the "waves" kernel model against hand-computed
 * values (sim/model/kernel-model.c; docs/model.md). */
#include <math.h>
#include <string.h>

#include "model/kernel-model.h"

/* The chips by their preset figures (configs/NAME.json). */
static VsKernelChip
chip (double fp32, double fp16, double sms, double bw, double eff)
{
  VsKernelChip c;
  memset (&c, 0, sizeof c);
  c.peak[VS_PREC_FP32] = fp32 * 1e12;
  c.peak[VS_PREC_TF32] = fp32 * 1e12;
  c.peak[VS_PREC_FP16] = fp16 * 1e12;
  c.sms = sms;
  c.mem_bps = bw * eff;
  return c;
}

/* v100-pcie-16g: FP32 14, FP16 112, 80 SMs, 900 GB/s x 0.9 = 810 GB/s.
 * a100-80g: FP32 19.5, FP16 312, 108 SMs, 2039 GB/s x 0.86 = 1753.54 GB/s. */
#define V100 chip (14, 112, 80, 900e9, 0.9)
#define A100 chip (19.5, 312, 108, 2039e9, 0.86)

static void
test_fp32_gemm (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  const VsKernelFactors *f = kernel_model_factors (m, "volta_sgemm_128x64_nn", NULL);
  g_assert_cmpint (f->kind.cls, ==, VS_KCLASS_GEMM_SIMT);
  g_assert_cmpint (f->precision, ==, VS_PREC_FP32);
  VsKernelPred p;
  /* All compute (compute_ns given): 1.3 us floor + 1 ms x 14/19.5
   * = 1300 + 717948.72 = 719248.72 ns. The FP16 ratio would give
   * 1300 + 1e6 x 112/312 = 360274 ns: twice too fast. */
  kernel_model_predict (m, f, 1001300, VS_NONE, 1000000, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 1e6 * 14 / 19.5, 1e-6);
  g_assert_cmpint (p.bound, ==, VS_BOUND_COMPUTE);
  /* From the name alone: gamma 0.1 for GEMMs, so m0 = 1e5, c0 = 9e5:
   * 1300 + 9e5 x 14/19.5 + 1e5 x 810/1753.54 = 1300 + 646153.85 + 46192.27
   * = 693646.12 ns. */
  kernel_model_predict (m, f, 1001300, VS_NONE, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 9e5 * 14 / 19.5 + 1e5 * 810e9 / 1753.54e9, 1e-6);
  /* Cached: the same factors for the same name. */
  g_assert_true (kernel_model_factors (m, "volta_sgemm_128x64_nn", NULL) == f);
}

static void
test_memory_bound (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  const char *name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";
  const VsKernelFactors *f = kernel_model_factors (m, name, NULL);
  g_assert_cmpint (f->kind.cls, ==, VS_KCLASS_ELEMENTWISE);
  VsKernelPred p;
  /* gamma 1: 100 us of memory at 810 GB/s = 81 MB, on 1753.54 GB/s:
   * 1300 + 1e5 x 810/1753.54 = 1300 + 46192.27 = 47492.27 ns. */
  kernel_model_predict (m, f, 101300, VS_NONE, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 1e5 * 810 / 1753.54, 1e-6);
  g_assert_cmpfloat_with_epsilon (p.mem_bytes, 81e6, 1e-3);
  g_assert_cmpint (p.bound, ==, VS_BOUND_MEMORY);
  /* A bandwidth sweep moves it: twice the target bandwidth, half the
   * memory part: 1300 + 23096.14. */
  VsKernelChip a2 = a;
  a2.mem_bps *= 2;
  g_autoptr (VsKernelModel) m2 = kernel_model_new (&v, &a2);
  kernel_model_predict (m2, kernel_model_factors (m2, name, NULL), 101300, VS_NONE, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 1e5 * 810 / 1753.54 / 2, 1e-6);
  /* Given bytes: 40.5 MB = 50 us at 810 GB/s of the 100 us; the rest is
   * compute at the FP32 ratio: 1300 + 5e4 x 14/19.5 + 5e4 x 810/1753.54. */
  kernel_model_predict (m, f, 101300, 40500000, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 5e4 * 14 / 19.5 + 5e4 * 810 / 1753.54, 1e-6);
  /* Tiny: under the floor, the same everywhere. */
  kernel_model_predict (m, f, 1200, VS_NONE, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat (p.d1_ns, ==, 1200);
  g_assert_cmpint (p.bound, ==, VS_BOUND_LATENCY);
}

static void
test_waves (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  /* 256 threads x 64 registers: min(2048/256, 65536/(256 x 64)) = 4
   * blocks per SM; a wave is 320 blocks on the V100, 432 on the A100. */
  VsKernelShape small = { .flops = VS_NONE, .grid = { 40, 1, 1 }, .block = { 256, 1, 1 }, .regs = 64 };
  const VsKernelFactors *f = kernel_model_factors (m, "my_kernel", &small);
  g_assert_true (f->subwave);
  g_assert_cmpfloat (f->waves0, ==, 1);
  /* Less than one wave on both: one SM's rate, (14/80) / (19.5/108)
   * = 0.175 / 0.180556 = 0.96923 (the clocks: 1367 vs 1410 MHz at 128
   * FP32 FLOP per SM and clock), not the SM ratio 14/19.5 = 0.718. The
   * memory part stays (latency-bound). 1300 + 5e5 x 0.96923 + 5e5. */
  VsKernelPred p;
  kernel_model_predict (m, f, 1001300, VS_NONE, 500000, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 5e5 * (14.0 / 80) / (19.5 / 108) + 5e5, 1e-6);
  g_assert_cmpint (p.bound, ==, VS_BOUND_LATENCY);
  /* 400 blocks: 2 waves on the V100, 1 on the A100:
   * cscale = (1 x 108/19.5) / (2 x 80/14) = 0.48462. */
  VsKernelShape two = small;
  two.grid[0] = 400;
  f = kernel_model_factors (m, "my_kernel", &two);
  g_assert_false (f->subwave);
  g_assert_cmpfloat (f->waves0, ==, 2);
  g_assert_cmpfloat (f->waves1, ==, 1);
  g_assert_cmpfloat_with_epsilon (f->cscale, (108 / 19.5) / (2 * 80 / 14.0), 1e-12);
  /* Many waves: the peak ratio. 32000 blocks: 100 waves vs ceil(74.07)
   * = 75: (75 x 108/19.5) / (100 x 80/14) = 0.72692 (14/19.5 = 0.71795
   * plus the A100's partial last wave). */
  VsKernelShape many = small;
  many.grid[0] = 32000;
  f = kernel_model_factors (m, "my_kernel", &many);
  g_assert_cmpfloat_with_epsilon (f->cscale, (75 * 108 / 19.5) / (100 * 80 / 14.0), 1e-12);
}

/* The factors are per name and shape class: the flops, which they do not
 * use (kernel_model_predict takes them per event), are not part of the
 * key, so kernels that each carry their own count share one entry; a
 * different grid is another class (other waves). */
static void
test_cache_by_shape_class (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  VsKernelShape s1 = { .flops = 1000000000, .precision = VS_PREC_FP16, .grid = { 400, 1, 1 },
                       .block = { 256, 1, 1 }, .regs = 64 };
  VsKernelShape s2 = s1, s3 = s1;
  s2.flops = 3000000000;
  s3.grid[0] = 40;
  const VsKernelFactors *f1 = kernel_model_factors (m, "ampere_h16816gemm", &s1);
  g_assert_true (kernel_model_factors (m, "ampere_h16816gemm", &s2) == f1);
  g_assert_true (kernel_model_factors (m, "ampere_h16816gemm", &s3) != f1);
  /* The flops still count, per event: 1e9 FLOP and 1e6 B at the A100's
   * FP16 312 TFLOPS and 1753.54 GB/s: intensity 1000 > ridge 177.9, so
   * gamma = 0.5 x 177.9 / 1000 = 0.0890; with 3e9 FLOP, 0.0297. */
  VsKernelPred p1, p2;
  kernel_model_predict (m, f1, 101300, 1000000, VS_NONE, s1.flops, &p1);
  kernel_model_predict (m, f1, 101300, 1000000, VS_NONE, s2.flops, &p2);
  double ridge = 312e12 / 1753.54e9;
  g_assert_cmpfloat_with_epsilon (p1.m0_ns, 1e5 * 0.5 * ridge / 1000, 1e-6);
  g_assert_cmpfloat_with_epsilon (p2.m0_ns, 1e5 * 0.5 * ridge / 3000, 1e-6);
}

static void
test_intensity (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  VsKernelShape s = { .flops = 0, .precision = VS_PREC_FP16 };
  /* An FP16 GEMM: A100 ridge = 312e12 / 1753.54e9 = 177.92 FLOP/B.
   * I = 2e9 FLOP / 1e7 B = 200 > R: gamma = R / (2 I) = 0.44481.
   * d1 = 1300 + 1e6 (1 - 0.44481) 112/312 + 1e6 x 0.44481 x 810/1753.54. */
  s.flops = 2000000000;
  const VsKernelFactors *f = kernel_model_factors (m, "ampere_h16816gemm_128x128", &s);
  g_assert_cmpint (f->kind.cls, ==, VS_KCLASS_GEMM_TENSOR);
  VsKernelPred p;
  kernel_model_predict (m, f, 1001300, 10000000, VS_NONE, s.flops, &p);
  double r = 312e12 / 1753.54e9, g = r / (2 * 200);
  g_assert_cmpfloat_with_epsilon (p.m0_ns, 1e6 * g, 1e-6);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 1e6 * (1 - g) * 112 / 312 + 1e6 * g * 810 / 1753.54, 1e-6);
  /* I = 50 < R: gamma = 1 - 50 / (2 R) = 0.85949. */
  kernel_model_predict (m, f, 1001300, 40000000, VS_NONE, s.flops, &p);
  g_assert_cmpfloat_with_epsilon (p.m0_ns, 1e6 * (1 - 50 / (2 * r)), 1e-6);
  g_assert_cmpint (p.bound, ==, VS_BOUND_MEMORY);
}

static void
test_identity (void)
{
  /* On its own chip every kernel takes exactly its captured time. */
  VsKernelChip v = V100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &v);
  static const char *const names[] = {
    "volta_sgemm_128x64_nn", "ampere_h16816gemm_64x64", "ncclKernel_AllReduce_RING_LL_Sum_float",
    "void at::native::reduce_kernel<512, 1>", "mystery", "flash_fwd_kernel", "volta_scudnn_128x64_relu",
  };
  VsKernelShape s = { .flops = 123456789, .precision = VS_PREC_FP16, .grid = { 333, 2, 1 },
                      .block = { 128, 1, 1 }, .regs = 96, .smem = 40000 };
  guint64 d0s[] = { 1, 999, 1300, 1301, 4567, 1000003, 98765432101ull };
  guint64 bytes[] = { VS_NONE, 0, 12345, 1ull << 40 };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    for (int sh = 0; sh < 2; sh++)
      {
        const VsKernelFactors *f = kernel_model_factors (m, names[i], sh ? &s : NULL);
        for (gsize j = 0; j < G_N_ELEMENTS (d0s); j++)
          for (gsize k = 0; k < G_N_ELEMENTS (bytes); k++)
            {
              VsKernelPred p;
              kernel_model_predict (m, f, d0s[j], bytes[k], k == 2 ? d0s[j] / 3 : VS_NONE,
                                    sh ? s.flops : VS_NONE, &p);
              g_assert_cmpint (llround (p.d1_ns), ==, (gint64) d0s[j]);
            }
      }
}

static void
test_communication_and_fallback (void)
{
  VsKernelChip v = V100, a = A100;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a);
  VsKernelPred p;
  const VsKernelFactors *f = kernel_model_factors (m, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", NULL);
  kernel_model_predict (m, f, 357343000, VS_NONE, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat (p.d1_ns, ==, 357343000);
  g_assert_cmpint (p.bound, ==, VS_BOUND_COMMUNICATION);
  /* FP8 on chips without FP8 falls back to FP16 (and says so); BF16 too. */
  f = kernel_model_factors (m, "sm90_xmma_gemm_e4m3e4m3_f32", NULL);
  g_assert_cmpint (f->precision, ==, VS_PREC_FP8);
  g_assert_true (f->fallback);
  g_assert_cmpfloat_with_epsilon (f->cscale, 112.0 / 312, 1e-12);
  guint used;
  g_assert_cmpfloat (kernel_chip_peak (&v, VS_PREC_BF16, &used), ==, 112e12);
  g_assert_cmpuint (used, ==, VS_PREC_FP16);
  g_assert_cmpfloat (kernel_chip_peak (&v, VS_PREC_FP64, &used), ==, 14e12);
  g_assert_cmpuint (used, ==, VS_PREC_FP32);
  /* An elementwise kernel runs on the CUDA cores whatever its type. */
  f = kernel_model_factors (m, "void at::native::vectorized_elementwise_kernel<4, c10::Half>", NULL);
  g_assert_cmpint (f->precision, ==, VS_PREC_FP32);
  g_assert_false (f->fallback);
}

static void
test_issue_rate_and_tf32 (void)
{
  /* With clocks: a memory-bound kernel's time beyond its bytes runs at
   * sms x clock. V100 PCIe 80 x 1380 MHz, A40 84 x 1740 MHz. */
  VsKernelChip v = V100, a40 = chip (37.4, 149.7, 84, 696e9, 0.95);
  v.clock_hz = 1380e6;
  a40.clock_hz = 1740e6;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &a40);
  const VsKernelFactors *f = kernel_model_factors (m, "vectorized_elementwise_kernel", NULL);
  g_assert_cmpfloat_with_epsilon (f->cscale, (80 * 1380e6) / (84 * 1740e6), 1e-12);
  /* 40.5 MB = 50 us at 810 GB/s; 50 us more at the issue rate:
   * 1300 + 5e4 x 110.4/146.16 + 5e4 x 810/661.2. */
  VsKernelPred p;
  kernel_model_predict (m, f, 101300, 40500000, VS_NONE, VS_NONE, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 5e4 * (80 * 1380e6) / (84 * 1740e6) + 5e4 * 810e9 / 661.2e9, 1e-6);
  /* An FP32 sgemm stays at the FP32 peaks: 14 -> 37.4. */
  f = kernel_model_factors (m, "volta_sgemm_128x64_nn", NULL);
  g_assert_cmpfloat_with_epsilon (f->cscale, 14 / 37.4, 1e-12);

  /* TF32: a V100 (tf32 = its fp32 rate) capture on an A100 with TF32
   * 156. Convolutions move to TF32 by default, GEMMs only with "all". */
  VsKernelChip a = A100;
  a.peak[VS_PREC_TF32] = 156e12;
  g_autoptr (VsKernelModel) mc = kernel_model_new (&v, &a);
  f = kernel_model_factors (mc, "volta_scudnn_128x64_relu_small_nn_v1", NULL);
  g_assert_cmpint (f->precision, ==, VS_PREC_TF32);
  g_assert_cmpfloat_with_epsilon (f->cscale, 14 / 156.0, 1e-12);
  f = kernel_model_factors (mc, "volta_sgemm_128x64_nn", NULL);
  g_assert_cmpfloat_with_epsilon (f->cscale, 14 / 19.5, 1e-12);
  a.tf32 = VS_TF32_ALL;
  g_autoptr (VsKernelModel) ma = kernel_model_new (&v, &a);
  f = kernel_model_factors (ma, "volta_sgemm_128x64_nn", NULL);
  g_assert_cmpfloat_with_epsilon (f->cscale, 14 / 156.0, 1e-12);
  a.tf32 = VS_TF32_NONE;
  g_autoptr (VsKernelModel) mn = kernel_model_new (&v, &a);
  f = kernel_model_factors (mn, "volta_scudnn_128x64_relu_small_nn_v1", NULL);
  g_assert_cmpfloat_with_epsilon (f->cscale, 14 / 19.5, 1e-12);
  /* Captured on a chip with TF32, an sgemm says TF32 was off: it stays. */
  a.tf32 = VS_TF32_ALL;
  g_autoptr (VsKernelModel) mb = kernel_model_new (&a, &a);
  f = kernel_model_factors (mb, "ampere_sgemm_128x64_nn", NULL);
  g_assert_cmpint (f->precision, ==, VS_PREC_FP32);
  g_assert_cmpfloat (f->cscale, ==, 1.0);
}

static void
test_chip_from_config (void)
{
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load ("v100-pcie-16g", NULL, &error);
  g_assert_no_error (error);
  VsKernelChip k;
  kernel_chip_from_config (&k, c);
  g_assert_cmpfloat (k.peak[VS_PREC_FP32], ==, 14e12);
  g_assert_cmpfloat (k.peak[VS_PREC_FP16], ==, 112e12);
  g_assert_cmpfloat (k.peak[VS_PREC_FP8], ==, 0);
  g_assert_cmpfloat (k.sms, ==, 80);
  g_assert_cmpfloat_with_epsilon (k.mem_bps, 810e9, 1);
  g_assert_cmpstr (kernel_bound_name (VS_BOUND_LATENCY), ==, "latency");
  g_assert_null (kernel_bound_name (VS_BOUND_COUNT));
}

/* Fields over names (kernel-model.c 3a). V100 (FP32 14 TFLOPS, 80 SMs at
 * 1530 MHz, 810 GB/s) to a target of FP32 56, FP16 448, 100 SMs at 1.5
 * GHz, 2000 GB/s x 0.9 = 1800 GB/s. A kernel of d0 = 1,001,300 ns (floor
 * 1300, w = 1e6) with bytes B = 9 MB and flops F at 4x the target's ridge
 * point R = 56e12 / 1.8e12 = 31.11 flop/B: F = 4 R B = 1.12e9. Habitat's
 * gamma = R / (2 x 4R) = 1/8: m0 = 125,000, c0 = 875,000 ns.
 *  - precision fp32 given: the FP32 peak ratio, whatever the name:
 *    c1 = 875,000 x 14/56 = 218,750; m1 = 125,000 x 810/1800 = 56,250;
 *    d1 = 1300 + 218,750 + 56,250 = 276,300 ns, for "linear" (class
 *    other, an operator's name) as for volta_sgemm_128x64_nn;
 *  - no precision: "linear" is issue-rate work, sms x clock: 122.4e9 to
 *    150e9 per second, c1 = 875,000 x 122.4/150 = 714,000 ns, d1 =
 *    1300 + 714,000 + 56,250 = 771,550 ns (what the name alone gave);
 *  - an elementwise name with the fields: Habitat's gamma too (not the
 *    memory-bound class's bytes / B0 = 11.1 us of memory), and the FP32
 *    peak: 276,300 ns;
 *  - fp16 fields: the FP16 peak, 112 to 448: against the FP16 ridge
 *    point 448e12 / 1.8e12 = 248.9 the intensity is half of it, gamma =
 *    1 - 0.5/2 = 0.75: c0 = 250,000, c1 = 250,000 x 112/448 = 62,500;
 *  - a communication kernel keeps its captured time, fields or not. */
static void
test_fields_over_names (void)
{
  VsKernelChip v = chip (14, 112, 80, 900e9, 0.9), t = chip (56, 448, 100, 2000e9, 0.9);
  v.clock_hz = 1530e6;
  t.clock_hz = 1500e6;
  g_autoptr (VsKernelModel) m = kernel_model_new (&v, &t);
  const double d0 = 1001300, bytes = 9e6, flops = 4 * (56e12 / 1.8e12) * 9e6;
  VsKernelShape fp32 = { .flops = (guint64) llround (flops), .precision = VS_PREC_FP32 };
  VsKernelShape fp16 = fp32, none = fp32;
  fp16.precision = VS_PREC_FP16;
  none.precision = VS_PREC_NONE;
  const double with_fields = 1300 + 875000 * 14.0 / 56 + 125000 * 810.0 / 1800;
  const char *names[] = { "linear", "volta_sgemm_128x64_nn",
                          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>" };
  VsKernelPred p;
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const VsKernelFactors *f = kernel_model_factors (m, names[i], &fp32);
      g_assert_true (f->fields);
      kernel_model_predict (m, f, (guint64) d0, (guint64) bytes, VS_NONE, fp32.flops, &p);
      g_assert_cmpfloat_with_epsilon (p.m0_ns, 125000, 1e-3);
      g_assert_cmpfloat_with_epsilon (p.d1_ns, with_fields, 1e-3);
    }
  const VsKernelFactors *f = kernel_model_factors (m, "linear", &none);
  g_assert_false (f->fields);
  kernel_model_predict (m, f, (guint64) d0, (guint64) bytes, VS_NONE, none.flops, &p);
  g_assert_cmpfloat_with_epsilon (p.d1_ns, 1300 + 875000 * (80 * 1530e6) / (100 * 1500e6) + 56250, 1e-3);
  f = kernel_model_factors (m, "linear", &fp16);
  kernel_model_predict (m, f, (guint64) d0, (guint64) bytes, VS_NONE, fp16.flops, &p);
  g_assert_cmpfloat_with_epsilon (p.c1_ns, 250000 * 112.0 / 448, 1e-3);
  f = kernel_model_factors (m, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &fp32);
  kernel_model_predict (m, f, (guint64) d0, (guint64) bytes, VS_NONE, fp32.flops, &p);
  g_assert_cmpfloat (p.d1_ns, ==, d0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-model/fp32-gemm-v100-a100", test_fp32_gemm);
  g_test_add_func ("/kernel-model/memory-bound-follows-bandwidth", test_memory_bound);
  g_test_add_func ("/kernel-model/waves-and-subwave-clock", test_waves);
  g_test_add_func ("/kernel-model/intensity-habitat-gamma", test_intensity);
  g_test_add_func ("/kernel-model/cache-by-shape-class", test_cache_by_shape_class);
  g_test_add_func ("/kernel-model/identity", test_identity);
  g_test_add_func ("/kernel-model/communication-and-fallback", test_communication_and_fallback);
  g_test_add_func ("/kernel-model/issue-rate-and-tf32", test_issue_rate_and_tf32);
  g_test_add_func ("/kernel-model/chip-from-config", test_chip_from_config);
  g_test_add_func ("/kernel-model/fields-over-names", test_fields_over_names);
  return g_test_run ();
}
