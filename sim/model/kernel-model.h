/* kernel-model.h — how long a captured kernel takes on another GPU
 * (docs/model.md, "Kernels across GPUs"; the assumptions are at the top of
 * kernel-model.c).
 *
 * A captured kernel of duration d0 is split into three parts: a fixed
 * per-kernel floor (launch and drain, the same on every chip), a compute
 * part that scales with the chip's peak for the kernel's precision and
 * with its wave count, and a memory part that scales with the sustained
 * device-memory bandwidth (or, for a kernel smaller than one wave on both
 * chips, stays: it is latency-bound). On the capture chip every ratio is
 * exactly 1, so the kernel takes d0 (SPEC 5.4's identity).
 *
 * Use: kernel_chip_from_config() for both chips, kernel_model_new() once
 * per (capture, target) pair, kernel_model_factors() once per kernel name
 * and shape class (the answer is cached; the flops do not count, they
 * enter per event), kernel_model_predict() per event. */
#pragma once

#include <glib.h>

#include "config/config.h"
#include "model/kernel-class.h"
#include "trace/event.h"

/* A fixed per-kernel floor (ns): the time of an empty kernel back to back
 * in a CUDA graph, which no chip makes shorter. gpu-benches
 * gpu-small-kernels, fit of t = a + V/b to the smallest sizes: A100 80GB
 * 1.34 us, H200 1.27 us, A40 1.09 us, L40 0.93 us (*_graph.txt). The
 * data-center figure is taken. */
#define VS_KERNEL_FLOOR_NS 1300.0

typedef enum {
  VS_BOUND_COMPUTE, VS_BOUND_MEMORY, VS_BOUND_LATENCY, VS_BOUND_COMMUNICATION, VS_BOUND_COUNT
} VsKernelBound;

/* "compute", "memory", "latency", "communication". */
const char *kernel_bound_name (guint b);

/* What the model needs of a chip, derived once from a config. */
typedef struct {
  double peak[VS_PREC_COUNT];  /* dense FLOP/s per precision; 0 = not given */
  double sms;                  /* 0 = not given: waves are not modeled */
  double clock_hz;             /* boost clock; 0 = not given */
  VsTf32Policy tf32;           /* as a target: model.tf32 */
  double mem_bps;              /* sustained device memory: bandwidth x efficiency */
} VsKernelChip;

void kernel_chip_from_config (VsKernelChip *chip, const VsConfig *c);

/* The peak CHIP has for precision P, after the documented fallback for a
 * precision it does not list (fp8, int8, bf16 -> fp16; tf32, fp64 -> fp32;
 * fp32 -> fp16). *USED (may be NULL) is the precision whose peak it is. */
double kernel_chip_peak (const VsKernelChip *chip, guint p, guint *used);

/* What holds for every kernel of one name and shape on one (capture,
 * target) pair. Owned by the model. */
typedef struct {
  VsKernelKind kind;   /* from the name */
  guint8 precision;    /* what the compute part runs at (trace, name, or class default) */
  guint8 fallback;     /* a precision a chip lacks was replaced (see kernel_chip_peak) */
  guint8 upgraded;     /* FP32 at capture, TF32 on the target (model.tf32; precision is TF32) */
  gboolean subwave;    /* fewer blocks than one wave on both chips */
  double gamma;        /* memory share of the scalable time when the trace gives neither flops nor bytes */
  double cscale;       /* compute part: target / capture */
  double mscale;       /* memory part: target / capture */
  double waves0, waves1;  /* wave counts (0: not known) */
  gboolean membound, comm;  /* the class is memory-bound / communication */
  gboolean fields;     /* the trace gives flops and precision: they, not the name, set the rate */
  double peak1;        /* the target's peak (FLOP/s) for the compute part's precision */
  double sm_share;     /* fraction of the target's SMs its blocks fill at once (<= 1; 1 when not known):
                        * kernels running together share the SMs in these proportions */
} VsKernelFactors;

/* One kernel's prediction. */
typedef struct {
  double floor_ns;     /* fixed part, unchanged */
  double c0_ns, m0_ns; /* compute and memory parts at capture */
  double c1_ns, m1_ns; /* the same on the target, alone */
  double d1_ns;        /* floor + c1 + m1 */
  double mem_bytes;    /* the traffic of the memory part (m0 x capture bandwidth, or the trace's bytes) */
  guint8 bound;        /* VsKernelBound */
} VsKernelPred;

typedef struct _VsKernelModel VsKernelModel;

/* (transfer full) A model from CAPTURE to TARGET (copied). */
VsKernelModel *kernel_model_new (const VsKernelChip *capture, const VsKernelChip *target);
void kernel_model_free (VsKernelModel *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsKernelModel, kernel_model_free)

/* (transfer none) The factors of kernels called NAME with SHAPE (may be
 * NULL), computed at the first call and cached by name (as interned by a
 * trace reader: compared by content) and shape. */
const VsKernelFactors *kernel_model_factors (VsKernelModel *m, const char *name, const VsKernelShape *shape);

/* Predicts one kernel: D0 its captured ns, BYTES its DRAM traffic
 * (VS_NONE: unknown), COMPUTE_NS its compute-only time (VS_NONE), FLOPS
 * (VS_NONE). */
void kernel_model_predict (const VsKernelModel *m, const VsKernelFactors *f, guint64 d0, guint64 bytes,
                           guint64 compute_ns, guint64 flops, VsKernelPred *out);
