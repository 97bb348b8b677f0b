/* hooks-priv.h — what the files of hook mode share (hooks.c, the top,
 * and below it hooks-real.c < hooks-timing.c < hooks-kernels.c <
 * hooks-alloc.c, hooks-copy.c, hooks-batch.c, hooks-graph.c,
 * hooks-sync.c): the driver's names as the shim exports them, the real
 * functions, and each file's offer to the ones above it, in that order.
 * Each .c defines _GNU_SOURCE before including it. */
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "realsym.h"
#include "recorder.h"

/* The unversioned names are the old entry points the driver still exports. */
#undef cuGetProcAddress
#undef cuMemPrefetchAsync
#undef cuMemAdvise
/* cuda.h maps cuGraphInstantiate to cuGraphInstantiateWithFlags; the
 * exported cuGraphInstantiate and cuGraphInstantiate_v2 are the older
 * five-argument calls (declared only for the driver's own build). */
#undef cuGraphInstantiate
CUresult cuGraphInstantiate (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log,
                             size_t log_size);
CUresult cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log,
                                size_t log_size);

/* Batched copies (CUDA 12.8): the exported cuMemcpyBatchAsync and
 * cuMemcpy3DBatchAsync (and their _ptsz variants) take a failIdx; CUDA 13
 * headers map the names to the _v2 calls without it and declare the old
 * ones only for the driver's own build. */
#if CUDA_VERSION >= 12080
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync
typedef CUresult BatchV1Fn (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs,
                            size_t *fail_idx, CUstream s);
typedef CUresult Batch3DV1Fn (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                              unsigned long long flags, CUstream s);
BatchV1Fn cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz;
Batch3DV1Fn cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_ptsz;
#endif

/* ---- real functions ---- */

/* Per-thread-default-stream variants: what code built with
 * --default-stream per-thread (or CUDA_API_PER_THREAD_DEFAULT_STREAM) calls,
 * and what cuGetProcAddress answers with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. cuda.h declares them only
 * under that macro; they have the signatures of their base functions. In a
 * _ptsz call a NULL stream is the calling thread's default stream; a _ptds
 * call runs on it. */
#define PT_LIST(X) \
  X (cuMemcpy, cuMemcpy_ptds) X (cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds) \
  X (cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds) X (cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds) \
  X (cuMemcpyPeer, cuMemcpyPeer_ptds) X (cuMemcpy2D_v2, cuMemcpy2D_v2_ptds) \
  X (cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds) X (cuMemcpy3D_v2, cuMemcpy3D_v2_ptds) \
  X (cuMemsetD8_v2, cuMemsetD8_v2_ptds) X (cuMemsetD16_v2, cuMemsetD16_v2_ptds) \
  X (cuMemsetD32_v2, cuMemsetD32_v2_ptds) X (cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds) \
  X (cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds) X (cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds) \
  X (cuMemcpyAsync, cuMemcpyAsync_ptsz) X (cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz) \
  X (cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz) X (cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz) \
  X (cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz) X (cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz) \
  X (cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz) X (cuMemsetD8Async, cuMemsetD8Async_ptsz) \
  X (cuMemsetD16Async, cuMemsetD16Async_ptsz) X (cuMemsetD32Async, cuMemsetD32Async_ptsz) \
  X (cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz) X (cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz) \
  X (cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz) X (cuMemPrefetchAsync_v2, cuMemPrefetchAsync_v2_ptsz) \
  X (cuMemAllocAsync, cuMemAllocAsync_ptsz) X (cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz) \
  X (cuMemFreeAsync, cuMemFreeAsync_ptsz) X (cuLaunchKernel, cuLaunchKernel_ptsz) \
  X (cuLaunchKernelEx, cuLaunchKernelEx_ptsz) X (cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz) \
  X (cuGraphLaunch, cuGraphLaunch_ptsz) X (cuStreamSynchronize, cuStreamSynchronize_ptsz) \
  X (cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz) \
  X (cuEventRecord, cuEventRecord_ptsz) X (cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz) \
  X (cuStreamWaitEvent, cuStreamWaitEvent_ptsz) \
  X (cuMemcpyHtoA_v2, cuMemcpyHtoA_v2_ptds) X (cuMemcpyAtoH_v2, cuMemcpyAtoH_v2_ptds) \
  X (cuMemcpyAtoD_v2, cuMemcpyAtoD_v2_ptds) X (cuMemcpyDtoA_v2, cuMemcpyDtoA_v2_ptds) \
  X (cuMemcpyAtoA_v2, cuMemcpyAtoA_v2_ptds) X (cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync_v2_ptsz) \
  X (cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync_v2_ptsz) X (cuMemcpy3DPeer, cuMemcpy3DPeer_ptds) \
  X (cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync_ptsz) PT_LIST_13 (X)
#if CUDA_VERSION >= 13000
#define PT_LIST_13(X) \
  X (cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync_v2_ptsz) \
  X (cuMemcpy3DBatchAsync_v2, cuMemcpy3DBatchAsync_v2_ptsz)
#else
#define PT_LIST_13(X)
#endif
#define PT_DECL(base, pt) __typeof__ (base) pt;
PT_LIST (PT_DECL)
#undef PT_DECL

/* Functions the shim wraps, and functions it only calls. */
#define WRAP_LIST(X) \
  X (cuInit) X (cuGetProcAddress_v2) \
  X (cuMemAlloc_v2) X (cuMemAllocPitch_v2) X (cuMemFree_v2) X (cuMemAllocManaged) \
  X (cuMemHostAlloc) X (cuMemAllocHost_v2) X (cuMemFreeHost) X (cuMemHostRegister_v2) \
  X (cuMemHostUnregister) X (cuMemAllocAsync) X (cuMemAllocFromPoolAsync) X (cuMemFreeAsync) \
  X (cuMemMap) X (cuMemUnmap) \
  X (cuMemcpy) X (cuMemcpyAsync) X (cuMemcpyHtoD_v2) X (cuMemcpyDtoH_v2) X (cuMemcpyDtoD_v2) \
  X (cuMemcpyHtoDAsync_v2) X (cuMemcpyDtoHAsync_v2) X (cuMemcpyDtoDAsync_v2) \
  X (cuMemcpyPeer) X (cuMemcpyPeerAsync) X (cuMemcpy2D_v2) X (cuMemcpy2DAsync_v2) \
  X (cuMemcpy2DUnaligned_v2) X (cuMemcpy3D_v2) X (cuMemcpy3DAsync_v2) \
  X (cuMemsetD8_v2) X (cuMemsetD16_v2) X (cuMemsetD32_v2) \
  X (cuMemsetD8Async) X (cuMemsetD16Async) X (cuMemsetD32Async) \
  X (cuMemsetD2D8_v2) X (cuMemsetD2D16_v2) X (cuMemsetD2D32_v2) \
  X (cuMemsetD2D8Async) X (cuMemsetD2D16Async) X (cuMemsetD2D32Async) \
  X (cuMemPrefetchAsync_v2) X (cuMemAdvise_v2) \
  X (cuLaunchKernel) X (cuLaunchKernelEx) X (cuLaunchCooperativeKernel) \
  X (cuGraphInstantiate) X (cuGraphInstantiate_v2) X (cuGraphInstantiateWithFlags) \
  X (cuGraphInstantiateWithParams) X (cuGraphInstantiateWithParams_ptsz) \
  X (cuGraphLaunch) X (cuGraphExecDestroy) \
  X (cuStreamSynchronize) X (cuCtxSynchronize) X (cuEventSynchronize) \
  X (cuEventRecord) X (cuEventRecordWithFlags) X (cuStreamWaitEvent) \
  X (cuCtxDestroy_v2) X (cuDevicePrimaryCtxRelease_v2) X (cuDevicePrimaryCtxReset_v2) \
  X (cuMemcpy_ptds) X (cuMemcpyHtoD_v2_ptds) X (cuMemcpyDtoH_v2_ptds) X (cuMemcpyDtoD_v2_ptds) \
  X (cuMemcpyPeer_ptds) X (cuMemcpy2D_v2_ptds) X (cuMemcpy2DUnaligned_v2_ptds) X (cuMemcpy3D_v2_ptds) \
  X (cuMemsetD8_v2_ptds) X (cuMemsetD16_v2_ptds) X (cuMemsetD32_v2_ptds) \
  X (cuMemsetD2D8_v2_ptds) X (cuMemsetD2D16_v2_ptds) X (cuMemsetD2D32_v2_ptds) \
  X (cuMemcpyAsync_ptsz) X (cuMemcpyHtoDAsync_v2_ptsz) X (cuMemcpyDtoHAsync_v2_ptsz) \
  X (cuMemcpyDtoDAsync_v2_ptsz) X (cuMemcpyPeerAsync_ptsz) X (cuMemcpy2DAsync_v2_ptsz) \
  X (cuMemcpy3DAsync_v2_ptsz) X (cuMemsetD8Async_ptsz) X (cuMemsetD16Async_ptsz) \
  X (cuMemsetD32Async_ptsz) X (cuMemsetD2D8Async_ptsz) X (cuMemsetD2D16Async_ptsz) \
  X (cuMemsetD2D32Async_ptsz) X (cuMemPrefetchAsync_v2_ptsz) X (cuMemAllocAsync_ptsz) \
  X (cuMemAllocFromPoolAsync_ptsz) X (cuMemFreeAsync_ptsz) X (cuLaunchKernel_ptsz) \
  X (cuLaunchKernelEx_ptsz) X (cuLaunchCooperativeKernel_ptsz) X (cuGraphLaunch_ptsz) \
  X (cuStreamSynchronize_ptsz) X (cuEventRecord_ptsz) X (cuEventRecordWithFlags_ptsz) \
  X (cuStreamWaitEvent_ptsz) \
  X (cuMemcpyHtoA_v2) X (cuMemcpyAtoH_v2) X (cuMemcpyAtoD_v2) X (cuMemcpyDtoA_v2) \
  X (cuMemcpyAtoA_v2) X (cuMemcpyHtoAAsync_v2) X (cuMemcpyAtoHAsync_v2) \
  X (cuMemcpyHtoA_v2_ptds) X (cuMemcpyAtoH_v2_ptds) X (cuMemcpyAtoD_v2_ptds) \
  X (cuMemcpyDtoA_v2_ptds) X (cuMemcpyAtoA_v2_ptds) X (cuMemcpyHtoAAsync_v2_ptsz) \
  X (cuMemcpyAtoHAsync_v2_ptsz) \
  X (cuMemcpy3DPeer) X (cuMemcpy3DPeerAsync) X (cuMemcpy3DPeer_ptds) X (cuMemcpy3DPeerAsync_ptsz) \
  WRAP_LIST_128 (X) WRAP_LIST_13 (X)
/* Batched copies: the CUDA 12.8 calls (with failIdx), and CUDA 13's _v2. */
#if CUDA_VERSION >= 12080
#define WRAP_LIST_128(X) \
  X (cuMemcpyBatchAsync) X (cuMemcpyBatchAsync_ptsz) X (cuMemcpy3DBatchAsync) \
  X (cuMemcpy3DBatchAsync_ptsz)
#else
#define WRAP_LIST_128(X)
#endif
/* CUDA 13's cudart asks cuGetProcAddress for cuCtxSynchronize at version
 * 13000 and gets cuCtxSynchronize_v2 (CUcontext): cudaDeviceSynchronize
 * goes there. */
#if CUDA_VERSION >= 13000
#define WRAP_LIST_13(X) X (cuCtxSynchronize_v2) \
  X (cuMemcpyBatchAsync_v2) X (cuMemcpyBatchAsync_v2_ptsz) X (cuMemcpy3DBatchAsync_v2) \
  X (cuMemcpy3DBatchAsync_v2_ptsz)
#else
#define WRAP_LIST_13(X)
#endif
#define CALL_LIST(X) \
  X (cuDeviceGet) X (cuDeviceGetName) X (cuDeviceTotalMem_v2) X (cuDeviceGetAttribute) \
  X (cuDriverGetVersion) X (cuCtxGetCurrent) \
  X (cuGraphGetNodes) X (cuGraphNodeGetType) X (cuGraphKernelNodeGetParams_v2) \
  X (cuStreamIsCapturing) X (cuEventCreate) X (cuEventQuery) X (cuEventElapsedTime) \
  X (cuFuncGetName) X (cuFuncGetParamInfo) X (cuKernelGetName) X (cuKernelGetParamInfo) \
  X (cuFuncGetAttribute) X (cuKernelGetFunction) \
  X (cuArray3DGetDescriptor_v2)
#define REAL_LIST(X) WRAP_LIST (X) CALL_LIST (X)

/* Wrappers named as the driver exports them (in hooks.c, hooks-alloc.c). */
CUresult cuGetProcAddress (const char *symbol, void **pfn, int ver, cuuint64_t flags);
CUresult cuMemPrefetchAsync (CUdeviceptr p, size_t n, CUdevice dev, CUstream s);
CUresult cuMemPrefetchAsync_ptsz (CUdeviceptr p, size_t n, CUdevice dev, CUstream s);
CUresult cuMemAdvise (CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev);

/* What follows is the shim's own: hidden (the exported set is the wrappers
 * above and cuda.h's, libvramcap.map). */
#pragma GCC visibility push(hidden)

/* ---- hooks-real.c: the real functions, found once (resolve) ---- */

#define DECL_REAL(fn) extern __typeof__ (fn) *real_##fn;
REAL_LIST (DECL_REAL)
#undef DECL_REAL

/* Old signatures the driver still exports. */
typedef CUresult (*GetProcV1) (const char *, void **, int, cuuint64_t);
typedef CUresult (*PrefetchV1) (CUdeviceptr, size_t, CUdevice, CUstream);
typedef CUresult (*AdviseV1) (CUdeviceptr, size_t, CUmem_advise, CUdevice);
extern GetProcV1 real_cuGetProcAddress;
extern PrefetchV1 real_cuMemPrefetchAsync, real_cuMemPrefetchAsync_ptsz;
extern AdviseV1 real_cuMemAdvise;

extern void *g_libcuda;
extern pthread_once_t g_once;
void resolve_once (void);

static inline void
resolve (void)
{
  pthread_once (&g_once, resolve_once);
}

/* Every wrapper starts so: the real function found, and outside hook mode
 * (CUPTI mode, or not recording) passed straight through. */
#define PASS(fn, ...) \
  do { \
    resolve (); \
    if (!real_##fn) \
      return CUDA_ERROR_NOT_INITIALIZED; \
    if (cap_mode != CAP_MODE_HOOK) \
      return real_##fn (__VA_ARGS__); \
  } while (0)

/* The stream of a per-thread variant (each file ends with its own): in a
 * _ptsz call NULL is the calling thread's default stream; a _ptds call
 * runs on it. */
#define PT(s) ((s) ? (s) : (CUstream) CU_STREAM_PER_THREAD)
#define PTDS ((CUstream) CU_STREAM_PER_THREAD)

/* ---- hooks-timing.c: GPU times from event pairs ---- */

typedef struct { CUevent a, b; CUcontext ctx; } EvPair;
/* COUNT events from SEQ share the pair's time: evenly (graph launches) or,
 * BY_BYTES, in proportion to their bytes (batched copies). */
typedef struct { uint64_t seq; uint32_t count; uint8_t by_bytes; EvPair p; } Pending;
typedef struct { EvPair p; int ok; } Timer;

/* Whether S is being captured into a graph (its work does not run now).
 * The three small helpers of every launch are inline here: called across
 * files they cost 14 instructions a launch (docs/capture.md, "Cost"). */
static inline int
capturing (CUstream s)
{
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!real_cuStreamIsCapturing || real_cuStreamIsCapturing (s, &st) != CUDA_SUCCESS)
    return 0;
  return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* A pair recorded around an op on S: begin, stop, then commit for events
 * SEQ..SEQ+COUNT-1 (the time split evenly, or BY_BYTES), or cancel. */
void timer_begin (Timer *tm, CUstream s);
void timer_commit_split (Timer *tm, uint64_t seq, uint32_t count, int by_bytes);
void timer_cancel (Timer *tm);

static inline void
timer_stop (Timer *tm, CUstream s)
{
  if (tm->ok && real_cuEventRecord (tm->p.b, s) != CUDA_SUCCESS)
    tm->ok = 0;
}

static inline void
timer_commit (Timer *tm, uint64_t seq, uint32_t count)
{
  timer_commit_split (tm, seq, count, 0);
}
/* The recorder's cap_resolve_cb and cap_fork_child_cb (its lock held). */
void hooks_resolve (int blocking);
void hooks_fork_child (void);
/* After a sync point: read back what has finished, write what can go. */
void poll_after_sync (void);
/* Before a context goes away: wait for its timings, drop the pooled events. */
void drain_before_ctx_teardown (void);

/* ---- hooks-kernels.c: names and parameter layouts, per function ---- */

typedef struct {
  CUfunction f;
  uint32_t sid;
  int n;                        /* parameters; -1 = layout unknown */
  uint32_t *off, *size;
  uint32_t regs;                /* registers per thread; 0 = unknown */
  int32_t smem;                 /* static shared memory per block; -1 = unknown */
} FuncInfo;

#define MAX_WORDS HOOKS_MAX_WORDS
/* A launch's grid, block and dynamic shared memory, as CapShape. */
#define DIMS(gx, gy, gz, bx, by, bz, dyn) ((CapShape) { { gx, gy, gz }, { bx, by, bz }, 0, dyn })

/* F's entry (made on first sight; NULL if out of memory). */
FuncInfo *func_info (CUfunction f);
/* Collects the pointer-sized words of a launch's parameters into W
 * (MAX_WORDS). */
size_t param_words (const FuncInfo *fi, void **params, void **extra, uint64_t *w);
/* SH with what the function says added (registers, static shared memory). */
CapShape *launch_shape (const FuncInfo *fi, CapShape *sh);

#pragma GCC visibility pop
