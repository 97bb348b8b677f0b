/* kernel-class.c — kernel classes and precisions from kernel names
 * (docs/model.md, "Kernel classes").
 *
 * Two ordered tables of lower-case substrings, first match wins: one for
 * the class, one for the precision. The order encodes what a name's
 * tokens mean when several appear: `ncclKernel_..._int8_t` is a
 * collective whatever its element type; cuDNN's batch-norm kernels
 * (`cudnn::bn_fw_...`) are norms, not convolutions; cuDNN's
 * `nchwToNhwcKernel` is a layout copy; `convert` is not `conv`. Tokens
 * were read off the kernels of the real traces (validation/data/kineto,
 * Kineto traces on V100 and A100; an nsys export on an RTX 3090) and the
 * published naming of the libraries:
 *   cuBLAS   volta_sgemm_128x64_nn (FP32 SIMT), volta_h884gemm_...,
 *            ampere_s16816gemm_fp16_..., ampere_h16816gemm_... (tensor),
 *            gemv2T_kernel, splitKreduce_kernel
 *   CUTLASS  cutlass_80_tensorop_s1688gemm_... (FP32 data on TF32 tensor
 *            cores), cutlass_80_tensorop_i16832gemm_s8 (INT8), ..._simt_sgemm
 *   cuBLASLt nvjet_hsh_... / nvjet_tst_... (Hopper; letters: h half,
 *            b bf16, t tf32, e/q fp8), sm80_xmma_gemm_..._f16f16_...
 *   cuDNN    volta_scudnn_128x64_relu_..., sm80_xmma_fprop_implicit_gemm_
 *            tf32f32_..., dgrad_engine, wgrad_alg0_engine, fft2d_r2c_...
 *   hipBLASLt Cijk_Ailk_Bljk_HHS_BH_... (HHS half in, half out, single
 *            compute; BBS bf16; SSS fp32; F8 fp8)
 *   attention flash_fwd_kernel, fmha_cutlassF_..., efficient_attention
 *   NCCL/RCCL ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_...
 * A name the tables miss is `other`: the model then treats it as half
 * compute, half memory (kernel-model.c), and `vramsim info` shows how much
 * captured time that is. */
#include "model/kernel-class.h"

#include <string.h>

typedef struct {
  const char *token;
  guint8 cls;
} ClassRule;

/* A GEMM whose name says neither SIMT nor tensor: decided by precision. */
#define GENERIC_GEMM VS_KCLASS_COUNT

/* Before the GEMM rules: names that carry GEMM or cuDNN tokens but are
 * not GEMMs or convolutions. */
static const ClassRule class_rules[] = {
  /* collectives first: their names carry element types and "reduce" */
  { "nccl", VS_KCLASS_COMM },
  { "rccl", VS_KCLASS_COMM },
  { "msccl", VS_KCLASS_COMM },
  /* fused attention: carries GEMM tokens (fmha_cutlass..., gmma) */
  { "flash_fwd", VS_KCLASS_ATTENTION },
  { "flash_bwd", VS_KCLASS_ATTENTION },
  { "flash", VS_KCLASS_ATTENTION },
  { "fmha", VS_KCLASS_ATTENTION },
  { "attention", VS_KCLASS_ATTENTION },
  { "mha_fwd", VS_KCLASS_ATTENTION },
  { "mha_bwd", VS_KCLASS_ATTENTION },
  { "softmax", VS_KCLASS_SOFTMAX },
  { "layer_norm", VS_KCLASS_NORM },
  { "layernorm", VS_KCLASS_NORM },
  { "rms_norm", VS_KCLASS_NORM },
  { "rmsnorm", VS_KCLASS_NORM },
  { "batch_norm", VS_KCLASS_NORM },
  { "batchnorm", VS_KCLASS_NORM },
  { "group_norm", VS_KCLASS_NORM },
  { "groupnorm", VS_KCLASS_NORM },
  { "bn_fw", VS_KCLASS_NORM },        /* cudnn::bn_fw_tr_1C11_kernel_NCHW */
  { "bn_bw", VS_KCLASS_NORM },        /* cudnn::bn_bw_1C11_kernel_new */
  { "welford", VS_KCLASS_NORM },      /* the statistics of batch and layer norm */
  { "gemv", VS_KCLASS_REDUCE },       /* matrix-vector: one pass over the matrix */
  { "splitkreduce", VS_KCLASS_REDUCE },
  /* layout conversions in cuDNN / TensorRT */
  { "nchwtonhwc", VS_KCLASS_ELEMENTWISE },
  { "nhwctonchw", VS_KCLASS_ELEMENTWISE },
  { "reformat", VS_KCLASS_ELEMENTWISE },
  { "transpose", VS_KCLASS_ELEMENTWISE },
  { "epilogue", VS_KCLASS_ELEMENTWISE }, /* cuBLASLt epilogue::impl::globalKernel (bias, activation) */
  { "pooling", VS_KCLASS_ELEMENTWISE },  /* TensorRT sm50_xmma_pooling_...: not a GEMM */
  /* convolutions */
  { "convolution", VS_KCLASS_CONV },
  { "conv1d", VS_KCLASS_CONV },
  { "conv2d", VS_KCLASS_CONV },
  { "conv3d", VS_KCLASS_CONV },
  { "conv_", VS_KCLASS_CONV },
  { "_conv", VS_KCLASS_CONV },
  { "convolve", VS_KCLASS_CONV },
  { "depthwise", VS_KCLASS_CONV },
  { "scudnn", VS_KCLASS_CONV },
  { "hcudnn", VS_KCLASS_CONV },
  { "fprop", VS_KCLASS_CONV },
  { "dgrad", VS_KCLASS_CONV },
  { "wgrad", VS_KCLASS_CONV },
  { "implicit_gemm", VS_KCLASS_CONV },
  { "winograd", VS_KCLASS_CONV },
  { "fft", VS_KCLASS_CONV },          /* cuDNN's FFT convolution: fft2d_r2c_32x32 */
  /* GEMMs on the CUDA cores, by name */
  { "sgemm", VS_KCLASS_GEMM_SIMT },      /* volta_sgemm_128x64_nn, cutlass_80_simt_sgemm */
  { "dgemm", VS_KCLASS_GEMM_SIMT },
  { "cgemm", VS_KCLASS_GEMM_SIMT },
  { "zgemm", VS_KCLASS_GEMM_SIMT },
  { "gemmsn", VS_KCLASS_GEMM_SIMT },     /* cuBLAS gemmSN_TN_kernel (small FP32) */
  { "gemmk1", VS_KCLASS_GEMM_SIMT },
  /* GEMMs that name tensor cores */
  { "h884", VS_KCLASS_GEMM_TENSOR },
  { "h1688", VS_KCLASS_GEMM_TENSOR },
  { "h16816", VS_KCLASS_GEMM_TENSOR },
  { "s884", VS_KCLASS_GEMM_TENSOR },
  { "s1688", VS_KCLASS_GEMM_TENSOR },
  { "s16816", VS_KCLASS_GEMM_TENSOR },
  { "i8816", VS_KCLASS_GEMM_TENSOR },
  { "i16832", VS_KCLASS_GEMM_TENSOR },
  { "imma", VS_KCLASS_GEMM_TENSOR },
  { "hmma", VS_KCLASS_GEMM_TENSOR },
  { "tensorop", VS_KCLASS_GEMM_TENSOR },
  { "xmma", VS_KCLASS_GEMM_TENSOR },
  { "nvjet", VS_KCLASS_GEMM_TENSOR },
  { "cijk_", VS_KCLASS_GEMM_TENSOR },
  { "gmma", VS_KCLASS_GEMM_TENSOR },   /* Hopper warpgroup MMA (wgmma, gmma) */
  { "triton_mm", VS_KCLASS_GEMM_TENSOR },
  { "triton_bmm", VS_KCLASS_GEMM_TENSOR },
  { "triton_tem", VS_KCLASS_GEMM_TENSOR },
  /* "gemm" alone: tensor cores unless the name states FP32 or FP64
   * (kernel_class_of; GENERIC_GEMM) */
  { "gemm", GENERIC_GEMM },
  /* names that say elementwise outright, whatever functor they carry */
  { "elementwise", VS_KCLASS_ELEMENTWISE },
  { "pointwise", VS_KCLASS_ELEMENTWISE },
  { "multi_tensor_apply", VS_KCLASS_ELEMENTWISE },
  /* reductions, scans, sorts */
  { "reduce", VS_KCLASS_REDUCE },
  { "triton_red", VS_KCLASS_REDUCE },
  { "triton_per", VS_KCLASS_REDUCE },
  { "scan", VS_KCLASS_REDUCE },
  { "radixsort", VS_KCLASS_REDUCE },
  { "sort", VS_KCLASS_REDUCE },
  { "cross_entropy", VS_KCLASS_REDUCE },
  { "nll_loss", VS_KCLASS_REDUCE },
  { "cumsum", VS_KCLASS_REDUCE },
  { "topk", VS_KCLASS_REDUCE },
  { "argmax", VS_KCLASS_REDUCE },
  { "loss", VS_KCLASS_REDUCE },
  /* elementwise and data movement */
  { "triton_", VS_KCLASS_ELEMENTWISE }, /* Inductor's fused pointwise kernels (triton__0d1d2d, triton_poi_) */
  { "catarray", VS_KCLASS_ELEMENTWISE },
  { "concat", VS_KCLASS_ELEMENTWISE },
  { "copy", VS_KCLASS_ELEMENTWISE },
  { "fill", VS_KCLASS_ELEMENTWISE },
  { "memset", VS_KCLASS_ELEMENTWISE },
  { "index", VS_KCLASS_ELEMENTWISE },
  { "indices", VS_KCLASS_ELEMENTWISE },
  { "gather", VS_KCLASS_ELEMENTWISE },
  { "scatter", VS_KCLASS_ELEMENTWISE },
  { "permute", VS_KCLASS_ELEMENTWISE },
  { "embedding", VS_KCLASS_ELEMENTWISE },
  { "embed", VS_KCLASS_ELEMENTWISE },
  { "adam", VS_KCLASS_ELEMENTWISE },      /* optimizer steps: a pass over the states */
  { "dropout", VS_KCLASS_ELEMENTWISE },
  { "_pool", VS_KCLASS_ELEMENTWISE },   /* max_pool_forward_nchw, adaptive_average_pool */
  { "pool_", VS_KCLASS_ELEMENTWISE },
  { "im2col", VS_KCLASS_ELEMENTWISE },
  { "col2im", VS_KCLASS_ELEMENTWISE },
  { "upsample", VS_KCLASS_ELEMENTWISE },
  { "quantize", VS_KCLASS_ELEMENTWISE },
  { "bucketize", VS_KCLASS_ELEMENTWISE },
  { "relu", VS_KCLASS_ELEMENTWISE },
  { "gelu", VS_KCLASS_ELEMENTWISE },
  { "silu", VS_KCLASS_ELEMENTWISE },
  { "sigmoid", VS_KCLASS_ELEMENTWISE },
};

typedef struct {
  const char *token;
  guint8 precision;
} PrecRule;

/* Narrow types before wide ones: a half kernel's template names its float
 * accumulator too ("<c10::Half, float>"). */
static const PrecRule prec_rules[] = {
  { "e4m3", VS_PREC_FP8 },
  { "e5m2", VS_PREC_FP8 },
  { "fp8", VS_PREC_FP8 },
  { "_f8", VS_PREC_FP8 },             /* hipBLASLt Cijk_..._F8... */
  { "nvjet_e", VS_PREC_FP8 },
  { "nvjet_q", VS_PREC_FP8 },
  { "bf16", VS_PREC_BF16 },
  { "bfloat16", VS_PREC_BF16 },
  { "_bbs_", VS_PREC_BF16 },
  { "_bss_", VS_PREC_BF16 },
  { "nvjet_b", VS_PREC_BF16 },
  { "i8816", VS_PREC_INT8 },
  { "i16832", VS_PREC_INT8 },
  { "imma", VS_PREC_INT8 },
  { "int8", VS_PREC_INT8 },
  { "_i8_", VS_PREC_INT8 },
  { "tf32", VS_PREC_TF32 },
  { "nvjet_t", VS_PREC_TF32 },
  { "h884", VS_PREC_FP16 },
  { "h1688", VS_PREC_FP16 },
  { "h16816", VS_PREC_FP16 },
  { "hmma", VS_PREC_FP16 },
  { "hgemm", VS_PREC_FP16 },
  { "hcudnn", VS_PREC_FP16 },
  { "fp16", VS_PREC_FP16 },
  { "f16", VS_PREC_FP16 },            /* f16f16, _f16_ */
  { "half", VS_PREC_FP16 },
  { "_hhs_", VS_PREC_FP16 },
  { "_hss_", VS_PREC_FP16 },
  { "nvjet_h", VS_PREC_FP16 },
  /* FP32 data on TF32 tensor cores (CUTLASS s1688gemm, cuBLAS s16816gemm
   * without a half/bf16 token) */
  { "s1688", VS_PREC_TF32 },
  { "s16816", VS_PREC_TF32 },
  { "sgemm", VS_PREC_FP32 },
  { "scudnn", VS_PREC_FP32 },
  { "_sss_", VS_PREC_FP32 },
  { "float", VS_PREC_FP32 },
  { "dgemm", VS_PREC_FP64 },
  { "_ddd_", VS_PREC_FP64 },
  { "double", VS_PREC_FP64 },
};

static const char *const class_names[VS_KCLASS_COUNT] = {
  "gemm_simt", "gemm_tensor", "conv", "attention", "elementwise", "reduce",
  "norm", "softmax", "communication", "other",
};

const char *
kernel_class_name (guint cls)
{
  return cls < VS_KCLASS_COUNT ? class_names[cls] : NULL;
}

gboolean
kernel_class_memory_bound (guint cls)
{
  return cls == VS_KCLASS_ELEMENTWISE || cls == VS_KCLASS_REDUCE || cls == VS_KCLASS_NORM
         || cls == VS_KCLASS_SOFTMAX;
}

static VsKernelKind classify (const char *name);

/* Names seen by this process -> their kind: a sweep replays one trace
 * many times, and matching a name against the tables (lower-casing it,
 * ~130 substring searches) cost 30 us per replay of a 9-name trace. The
 * table lives for the process (a process sees few kernel names); sweeps
 * replay on several threads, hence the lock. */
static GMutex cache_lock;
static GHashTable *cache;   /* char* -> VsKernelKind packed as cls << 8 | precision, + 1 */

VsKernelKind
kernel_class_of (const char *name)
{
  VsKernelKind k = { VS_KCLASS_OTHER, VS_PREC_NONE };
  if (name == NULL)
    return k;
  g_mutex_lock (&cache_lock);
  if (cache == NULL)
    cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint v = GPOINTER_TO_UINT (g_hash_table_lookup (cache, name));
  if (v == 0)
    {
      k = classify (name);
      g_hash_table_insert (cache, g_strdup (name), GUINT_TO_POINTER (((guint) k.cls << 8 | k.precision) + 1));
    }
  else
    k = (VsKernelKind) { (guint8) ((v - 1) >> 8), (guint8) ((v - 1) & 0xff) };
  g_mutex_unlock (&cache_lock);
  return k;
}

static VsKernelKind
classify (const char *name)
{
  VsKernelKind k = { VS_KCLASS_OTHER, VS_PREC_NONE };
  g_autofree char *lc = g_ascii_strdown (name, -1);
  /* FBGEMM's namespace (fbgemm_gpu::permute_2D_data_kernel, its FP8
   * quantizers) is not a GEMM. */
  for (char *p = strstr (lc, "fbgemm"); p != NULL; p = strstr (p, "fbgemm"))
    memcpy (p, "fb_lib", 6);
  for (gsize i = 0; i < G_N_ELEMENTS (class_rules); i++)
    if (strstr (lc, class_rules[i].token) != NULL)
      {
        k.cls = class_rules[i].cls;
        break;
      }
  for (gsize i = 0; i < G_N_ELEMENTS (prec_rules); i++)
    if (strstr (lc, prec_rules[i].token) != NULL)
      {
        k.precision = prec_rules[i].precision;
        break;
      }
  /* A plain "gemm" runs on tensor cores (sm80_xmma_gemm_f16f16...,
   * gemm_bf16, a framework's "fwd_gemm"), unless it states FP32 or FP64
   * (gemm_kernel<float>): then on the CUDA cores. */
  if (k.cls == GENERIC_GEMM)
    k.cls = k.precision == VS_PREC_FP32 || k.precision == VS_PREC_FP64 ? VS_KCLASS_GEMM_SIMT : VS_KCLASS_GEMM_TENSOR;
  if (k.cls == VS_KCLASS_GEMM_SIMT && k.precision == VS_PREC_NONE)
    k.precision = VS_PREC_FP32;
  return k;
}
