/* kernel-class.h — what kind of work a kernel does, from its name
 * (docs/model.md, "Kernel classes").
 *
 * Captured traces rarely say what a kernel computes; its name usually
 * does (cuBLAS, CUTLASS, cuDNN, PyTorch, NCCL and hipBLASLt encode the
 * algorithm and often the precision in it). The table in kernel-class.c
 * maps names to a class and, where the name says it, a precision. The
 * kernel model (kernel-model.h) uses the class for what the trace does
 * not give: memory-boundness, whether tensor cores run it, whether it
 * waits on the network. */
#pragma once

#include <glib.h>

#include "trace/event.h"

typedef enum {
  VS_KCLASS_GEMM_SIMT,    /* GEMM on the CUDA cores (sgemm, dgemm): the fp32/fp64 rate */
  VS_KCLASS_GEMM_TENSOR,  /* GEMM on tensor cores, at its precision's rate */
  VS_KCLASS_CONV,         /* convolution (cuDNN, implicit GEMM, FFT, Winograd) */
  VS_KCLASS_ATTENTION,    /* fused attention (FlashAttention, FMHA) */
  VS_KCLASS_ELEMENTWISE,  /* elementwise and data movement: memory-bound */
  VS_KCLASS_REDUCE,       /* reductions, scans, sorts, GEMV: memory-bound */
  VS_KCLASS_NORM,         /* batch/layer/RMS norm: memory-bound */
  VS_KCLASS_SOFTMAX,      /* softmax: memory-bound */
  VS_KCLASS_COMM,         /* NCCL / RCCL collectives: wait on the interconnect */
  VS_KCLASS_OTHER,        /* nothing in the name says */
  VS_KCLASS_COUNT
} VsKernelClass;

typedef struct {
  guint8 cls;         /* VsKernelClass */
  guint8 precision;   /* VsPrecision the name states; VS_PREC_NONE if it states none */
} VsKernelKind;

/* The class and named precision of a kernel called NAME (NULL: other).
 * Case-insensitive; looks at the whole name, template arguments included
 * (PyTorch names say "Half" or "BFloat16" there). */
VsKernelKind kernel_class_of (const char *name);

/* "gemm_simt", "gemm_tensor", "conv", "attention", "elementwise",
 * "reduce", "norm", "softmax", "communication", "other"; NULL out of range. */
const char *kernel_class_name (guint cls);

/* Whether a class is memory-bound by nature (elementwise, reduce, norm,
 * softmax): its time moves with the memory bandwidth when the trace gives
 * no flops. */
gboolean kernel_class_memory_bound (guint cls);
