/* synth-kernels.c — how long the kernels a generated trace launches take
 * on its preset (docs/workloads.md, "Kernel times"): GEMMs by their shape,
 * memory-bound kernels by their bytes.
 *
 * GEMMs (synth_gemm_time). A GEMM of M x N x K (times `batch` for a
 * batched GEMM) is cut into 128 x 128 output tiles, one thread block of
 * 256 threads each, one block per SM at a time (the common cuBLAS/CUTLASS
 * FP16 tile of Ampere and Hopper: ampere_h16816gemm_128x128_*, whose 3-5
 * shared-memory stages leave room for one block an SM; the same grid the
 * replay's kernel model and tests/model/validate-across.c use). The
 * tiles run in waves of `sms` blocks; a partial last wave costs a whole
 * one (wave quantisation); one tile's work is 2·128·128·(K + K0) FLOPs at
 * one SM's share of the preset's dense peak for the precision (the
 * replay's peaks: kernel_chip_peak, with its fallbacks) times an
 * efficiency E. K0 is the per-tile cost that does not shrink with K (the
 * pipeline's prologue and the epilogue's write of C), in units of K: the
 * tile quantisation along K that makes a thin GEMM slower per FLOP. So
 *     compute = waves · 2·128·128·(K + K0) / (peak / sms · E),
 * and the kernel takes max(compute, bytes / sustained bandwidth), bytes
 * the three matrices once, and at least the launch floor.
 *
 * E and K0 are fitted (tests/synth/test-synth-fit.c, which refits them
 * and fails if these constants are not its answer) on vidur's measured
 * FP16 operator times (microsoft/vidur data/profiling/compute, commit
 * 7d475133: attn_pre_proj, attn_post_proj, mlp_up_proj, mlp_down_proj)
 * on the A100 80GB for Llama-2-7B and phi-2 at 1,024-4,096 tokens (the
 * token counts of a training micro-batch; smaller ones are
 * latency-bound and not what this models), 2,620 rows: grid search of E
 * in steps of 0.01 and K0 in steps of 32 minimising the mean
 * |log(predicted / measured)|. Answer E = 0.80, K0 = 96: in sample median
 * |error| 5.9 %, p90 14.7 %; out of sample (Llama-2-70B on the A100,
 * the larger size kept out: 2,096 rows) median 3.0 %, p90 11.5 %; on the
 * H100 (another GPU, h100-sxm's peaks and SMs; 4,716 rows) median 6.3 %,
 * p90 17.1 % (docs/workloads.md has the table).
 *
 * Memory-bound kernels (synth_mem_time): bytes over the preset's sustained
 * bandwidth (memory.bandwidth × efficiency, a STREAM triad) times a
 * class factor, the median of measured / sustained on the same in-sample
 * rows (vidur's A100 Llama-2-7B and phi-2 rows of at least 1,024
 * tokens): norms (input_layernorm, post_attention_layernorm: x read, y
 * written; 1,179 rows) reach 0.41 of it, activations (mlp_act: SiLU·mul
 * or GELU; 655) 0.54, a plain add (add: a + b -> c; 655) 1.03, taken as
 * 1 (the triad itself). Median |error| in sample / A100 Llama-2-70B /
 * H100: norms 11.0 / 4.3 / 9.8 %, activations 6.6 / 6.5 / 17.2 %, adds
 * 9.1 / 2.9 / 12.4 %. Softmax, a row reduction like a norm, takes the
 * norm factor; dropout and the fused bias-GELU and bias-dropout-add the
 * activation factor (elementwise with arithmetic or random numbers);
 * copies, embedding gathers, optimizer passes the add factor. vidur
 * measures none of softmax or dropout: those two are
 * assigned, not fitted. */
#include "synth/synth.h"

#include <math.h>

static const double mem_class_factor[SYNTH_MEM_COUNT] = {
  [SYNTH_MEM_STREAM] = SYNTH_MEM_STREAM_FACTOR,
  [SYNTH_MEM_NORM] = SYNTH_MEM_NORM_FACTOR,
  [SYNTH_MEM_ACT] = SYNTH_MEM_ACT_FACTOR,
};

double
synth_mem_class_factor (guint cls)
{
  g_return_val_if_fail (cls < SYNTH_MEM_COUNT, 1.0);
  return mem_class_factor[cls];
}

void
synth_gemm_time (const VsKernelChip *chip, guint prec, double elem_bytes, guint64 m, guint64 n, guint64 k,
                 guint64 batch, SynthGemm *out)
{
  *out = (SynthGemm) { 0 };
  batch = MAX (batch, 1);
  double peak = kernel_chip_peak (chip, prec, NULL);
  guint64 tiles_m = (m + SYNTH_GEMM_TILE - 1) / SYNTH_GEMM_TILE, tiles_n = (n + SYNTH_GEMM_TILE - 1) / SYNTH_GEMM_TILE;
  out->tiles = tiles_m * tiles_n * batch;
  out->flops = 2.0 * (double) m * (double) n * (double) k * (double) batch;
  out->bytes = elem_bytes * ((double) m * k + (double) k * n + (double) m * n) * (double) batch;
  double tile_flops = 2.0 * SYNTH_GEMM_TILE * SYNTH_GEMM_TILE * ((double) k + SYNTH_GEMM_K0);
  if (chip->sms > 0)
    {
      out->waves = ceil ((double) out->tiles / chip->sms);
      out->compute_ns = peak > 0 ? out->waves * tile_flops / (peak / chip->sms * SYNTH_GEMM_EFF) * 1e9 : 0;
    }
  else
    {
      /* No SM count: the tiles' work at the whole chip's rate, no waves. */
      out->waves = 0;
      out->compute_ns = peak > 0 ? (double) out->tiles * tile_flops / (peak * SYNTH_GEMM_EFF) * 1e9 : 0;
    }
  out->mem_ns = chip->mem_bps > 0 ? out->bytes / chip->mem_bps * 1e9 : 0;
  out->ns = MAX (MAX (out->compute_ns, out->mem_ns), VS_KERNEL_FLOOR_NS);
}

double
synth_mem_time (const VsKernelChip *chip, guint cls, double bytes)
{
  double bps = chip->mem_bps * synth_mem_class_factor (cls);
  double ns = bps > 0 ? bytes / bps * 1e9 : 0;
  return MAX (ns, VS_KERNEL_FLOOR_NS);
}
