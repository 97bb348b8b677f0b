/* hooks.c — hook mode: the shim is LD_PRELOADed and stands in for the
 * driver API functions that shape memory.
 *
 * Three ways in, one set of wrappers: plain calls to exported cu* symbols
 * (the preloaded definitions win), dlsym(handle, "cu...") (interposed, for
 * programs that dlopen libcuda), and cuGetProcAddress / _v2 (the static CUDA
 * runtime and PyTorch fetch every driver entry point this way). A wrapper is
 * handed out only where the driver's own answer is the exact function the
 * wrapper stands for (compared by address), so per-thread-default-stream
 * variants and versions the shim does not know pass through untouched.
 *
 * GPU times: two CUDA events from a pool are recorded around each op on its
 * stream; the pair is read back (cuEventQuery + cuEventElapsedTime) at sync
 * points, every POLL_EVERY events, and at exit. Work issued into a stream
 * that is being captured into a graph is not executed then, so it is not
 * recorded; graph launches record their kernel nodes instead. */
#define _GNU_SOURCE
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

#define DECL_REAL(fn) static __typeof__ (fn) *real_##fn;
REAL_LIST (DECL_REAL)
#undef DECL_REAL

/* Old signatures the driver still exports. */
typedef CUresult (*GetProcV1) (const char *, void **, int, cuuint64_t);
typedef CUresult (*PrefetchV1) (CUdeviceptr, size_t, CUdevice, CUstream);
typedef CUresult (*AdviseV1) (CUdeviceptr, size_t, CUmem_advise, CUdevice);
static GetProcV1 real_cuGetProcAddress;
static PrefetchV1 real_cuMemPrefetchAsync, real_cuMemPrefetchAsync_ptsz;
static AdviseV1 real_cuMemAdvise;

static void *g_libcuda;
/* What the program's cuInit answered through the shim (-1: never seen),
 * for hooks_nothing_cause. */
static volatile int g_cuinit_result = -1;
static pid_t g_init_pid;        /* the process that registered drain_at_exit */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Wrappers defined below, named as the driver exports them. */
CUresult cuGetProcAddress (const char *symbol, void **pfn, int ver, cuuint64_t flags);
CUresult cuMemPrefetchAsync (CUdeviceptr p, size_t n, CUdevice dev, CUstream s);
CUresult cuMemPrefetchAsync_ptsz (CUdeviceptr p, size_t n, CUdevice dev, CUstream s);
CUresult cuMemAdvise (CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev);

typedef struct { const char *name; void **real; void *wrap; } Hook;

#define HOOK_ENTRY(fn) { #fn, (void **) &real_##fn, (void *) fn },
#define CALL_ENTRY(fn) { #fn, (void **) &real_##fn, NULL },
static Hook hooks[] = {
  WRAP_LIST (HOOK_ENTRY)
  CALL_LIST (CALL_ENTRY)
  { "cuGetProcAddress", (void **) &real_cuGetProcAddress, (void *) cuGetProcAddress },
  { "cuMemPrefetchAsync", (void **) &real_cuMemPrefetchAsync, (void *) cuMemPrefetchAsync },
  { "cuMemPrefetchAsync_ptsz", (void **) &real_cuMemPrefetchAsync_ptsz, (void *) cuMemPrefetchAsync_ptsz },
  { "cuMemAdvise", (void **) &real_cuMemAdvise, (void *) cuMemAdvise },
};
#undef HOOK_ENTRY
#undef CALL_ENTRY
#define N_HOOKS (sizeof hooks / sizeof hooks[0])

static void
resolve_once (void)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  const char *lib = getenv ("VRAMCAP_LIBCUDA");
  g_libcuda = dlopen (lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!g_libcuda || !cap_real_dlsym)
    return;
  for (size_t i = 0; i < N_HOOKS; i++) {
    *hooks[i].real = cap_real_dlsym (g_libcuda, hooks[i].name);
    if (*hooks[i].real || hooks[i].wrap)
      continue;
    /* A function only called: the other version will do (cuEventElapsedTime
     * is cuEventElapsedTime_v2 in CUDA 13 headers, unversioned before). */
    char alt[128];
    size_t n = strlen (hooks[i].name);
    if (n > 3 && strcmp (hooks[i].name + n - 3, "_v2") == 0)
      snprintf (alt, sizeof alt, "%.*s", (int) (n - 3), hooks[i].name);
    else
      snprintf (alt, sizeof alt, "%s_v2", hooks[i].name);
    *hooks[i].real = cap_real_dlsym (g_libcuda, alt);
  }
}

static inline void
resolve (void)
{
  pthread_once (&g_once, resolve_once);
}

static void *
wrapper_for_address (void *real)
{
  if (!real)
    return NULL;
  for (size_t i = 0; i < N_HOOKS; i++)
    if (*hooks[i].real == real && hooks[i].wrap)
      return hooks[i].wrap;
  return NULL;
}

/* ---- dlsym and cuGetProcAddress ---- */

void *
dlsym (void *handle, const char *name)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  if (handle != RTLD_NEXT && name[0] == 'c' && name[1] == 'u') {
    void *r = cap_real_dlsym (handle, name);
    if (r) {
      resolve ();
      void *w = wrapper_for_address (r);
      if (w)
        return w;
    }
    return r;
  }
  /* A tail call, so that RTLD_NEXT is resolved relative to our caller. */
  return cap_real_dlsym (handle, name);
}

CUresult
cuGetProcAddress_v2 (const char *symbol, void **pfn, int ver, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
  resolve ();
  if (!real_cuGetProcAddress_v2)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuGetProcAddress_v2 (symbol, pfn, ver, flags, status);
  if (r == CUDA_SUCCESS && pfn) {
    void *w = wrapper_for_address (*pfn);
    if (w)
      *pfn = w;
  }
  return r;
}

CUresult
cuGetProcAddress (const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
  resolve ();
  if (!real_cuGetProcAddress)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuGetProcAddress (symbol, pfn, ver, flags);
  if (r == CUDA_SUCCESS && pfn) {
    void *w = wrapper_for_address (*pfn);
    if (w)
      *pfn = w;
  }
  return r;
}

/* ---- device info ---- */

void
hooks_query_device (void)
{
  resolve ();
  if (cap_have_device () || !real_cuDeviceGet)
    return;
  CUdevice d;
  if (real_cuDeviceGet (&d, 0) != CUDA_SUCCESS)
    return;
  CapDevice info;
  memset (&info, 0, sizeof info);
  if (real_cuDeviceGetName)
    real_cuDeviceGetName (info.name, sizeof info.name - 1, d);
  size_t mem = 0;
  if (real_cuDeviceTotalMem_v2 && real_cuDeviceTotalMem_v2 (&mem, d) == CUDA_SUCCESS)
    info.memory_bytes = mem;
  if (real_cuDeviceGetAttribute) {
    real_cuDeviceGetAttribute (&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    real_cuDeviceGetAttribute (&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    real_cuDeviceGetAttribute (&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
  }
  if (real_cuDriverGetVersion)
    real_cuDriverGetVersion (&info.cuda_version);
  cap_set_device (&info);
}

/* ---- timing: event pairs (all under the recorder's lock) ---- */

typedef struct { CUevent a, b; CUcontext ctx; } EvPair;
/* COUNT events from SEQ share the pair's time: evenly (graph launches) or,
 * BY_BYTES, in proportion to their bytes (batched copies). */
typedef struct { uint64_t seq; uint32_t count; uint8_t by_bytes; EvPair p; } Pending;

static EvPair *g_pool;
static size_t g_pool_n, g_pool_cap;
static Pending *g_pend;
static size_t g_pend_n, g_pend_cap;

static int
pair_get_locked (EvPair *out)
{
  CUcontext ctx = NULL;
  if (!real_cuCtxGetCurrent || real_cuCtxGetCurrent (&ctx) != CUDA_SUCCESS || !ctx)
    return 0;
  for (size_t i = g_pool_n; i-- > 0;)
    if (g_pool[i].ctx == ctx) {
      *out = g_pool[i];
      g_pool[i] = g_pool[--g_pool_n];
      return 1;
    }
  if (!real_cuEventCreate || real_cuEventCreate (&out->a, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return 0;
  if (real_cuEventCreate (&out->b, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return 0;                   /* leaks one event; the driver is in trouble anyway */
  out->ctx = ctx;
  return 1;
}

static void
pair_put_locked (const EvPair *p)
{
  EvPair *np = cap_grow (g_pool, g_pool_n, &g_pool_cap, sizeof *g_pool, 64);
  if (!np)
    return;
  g_pool = np;
  g_pool[g_pool_n++] = *p;
}

static void
resolve_span_locked (uint64_t seq, uint32_t count, int by_bytes, uint64_t dur)
{
  if (by_bytes) {
    cap_resolve_split_locked (seq, count, dur);
    return;
  }
  for (uint32_t i = 0; i < count; i++)
    cap_resolve_locked (seq + i, dur == VTW_NONE ? VTW_NONE : dur / count);
}

/* The recorder calls this with its lock held. */
static void
hooks_resolve (int blocking)
{
  size_t keep = 0;
  for (size_t i = 0; i < g_pend_n; i++) {
    Pending *pe = &g_pend[i];
    CUresult r = CUDA_ERROR_UNKNOWN;
    if (blocking < 2 && real_cuEventQuery) {
      r = real_cuEventQuery (pe->p.b);
      if (r == CUDA_ERROR_NOT_READY && blocking == 1)
        r = real_cuEventSynchronize (pe->p.b);
    }
    if (r == CUDA_ERROR_NOT_READY) {
      g_pend[keep++] = *pe;
      continue;
    }
    float ms = 0;
    if (r == CUDA_SUCCESS && real_cuEventElapsedTime (&ms, pe->p.a, pe->p.b) == CUDA_SUCCESS
        && ms >= 0) {
      resolve_span_locked (pe->seq, pe->count, pe->by_bytes, (uint64_t) ((double) ms * 1e6 + 0.5));
      pair_put_locked (&pe->p);
    } else {
      resolve_span_locked (pe->seq, pe->count, pe->by_bytes, VTW_NONE);
    }
  }
  g_pend_n = keep;
}

static void
hooks_fork_child (void)
{
  g_pool_n = 0;
  g_pend_n = 0;
}

typedef struct { EvPair p; int ok; } Timer;

static int
capturing (CUstream s)
{
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!real_cuStreamIsCapturing || real_cuStreamIsCapturing (s, &st) != CUDA_SUCCESS)
    return 0;
  return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

int
hooks_stream_capturing (uintptr_t s)
{
  resolve ();
  return capturing ((CUstream) s);
}

static void
timer_begin (Timer *tm, CUstream s)
{
  cap_lock ();
  tm->ok = pair_get_locked (&tm->p);
  cap_unlock ();
  if (tm->ok && real_cuEventRecord (tm->p.a, s) != CUDA_SUCCESS)
    tm->ok = 0;                 /* another context's stream: drop the pair */
}

static void
timer_stop (Timer *tm, CUstream s)
{
  if (tm->ok && real_cuEventRecord (tm->p.b, s) != CUDA_SUCCESS)
    tm->ok = 0;
}

/* Hands the pair to the pending list for events SEQ..SEQ+COUNT-1 (their
 * time split evenly, or BY_BYTES). */
static void
timer_commit_split (Timer *tm, uint64_t seq, uint32_t count, int by_bytes)
{
  cap_lock ();
  if (tm->ok && seq != UINT64_MAX) {
    Pending *np = cap_grow (g_pend, g_pend_n, &g_pend_cap, sizeof *g_pend, 256);
    if (np) {
      g_pend = np;
      g_pend[g_pend_n++] = (Pending) { seq, count, (uint8_t) by_bytes, tm->p };
    } else {
      resolve_span_locked (seq, count, by_bytes, VTW_NONE);
    }
  } else if (tm->ok) {
    pair_put_locked (&tm->p);
  } else if (seq != UINT64_MAX) {
    resolve_span_locked (seq, count, by_bytes, VTW_NONE);
  }
  cap_unlock ();
}

static void
timer_commit (Timer *tm, uint64_t seq, uint32_t count)
{
  timer_commit_split (tm, seq, count, 0);
}

static void
timer_cancel (Timer *tm)
{
  if (!tm->ok)
    return;
  cap_lock ();
  pair_put_locked (&tm->p);
  cap_unlock ();
}

/* After a sync point: read back what has finished, write what can go. */
static void
poll_after_sync (void)
{
  cap_lock ();
  hooks_resolve (0);
  cap_unlock ();
}

/* Before a context goes away: wait for its timings, drop the pooled events. */
static void
drain_before_ctx_teardown (void)
{
  cap_lock ();
  hooks_resolve (1);
  g_pool_n = 0;
  cap_unlock ();
}

/* ---- kernels: names and parameter layouts, cached per function ---- */

typedef struct {
  CUfunction f;
  uint32_t sid;
  int n;                        /* parameters; -1 = layout unknown */
  uint32_t *off, *size;
  uint32_t regs;                /* registers per thread; 0 = unknown */
  int32_t smem;                 /* static shared memory per block; -1 = unknown */
} FuncInfo;

/* Open addressing on f, of entries allocated one by one: a launch uses its
 * FuncInfo after the lock is released, so growing the table must not move
 * them (it moved the entries themselves before, which another thread could
 * still be reading). */
static FuncInfo **g_funcs;
static size_t g_funcs_cap, g_funcs_n;
static pthread_mutex_t g_funcs_lock = PTHREAD_MUTEX_INITIALIZER;

static char *
demangle (const char *name)
{
  typedef char *(*Demangle) (const char *, char *, size_t *, int *);
  static Demangle dm;
  static int looked;
  if (!looked) {
    dm = (Demangle) cap_real_dlsym (RTLD_DEFAULT, "__cxa_demangle");
    looked = 1;
  }
  if (!dm || strncmp (name, "_Z", 2) != 0)
    return NULL;
  int st = 0;
  char *r = dm (name, NULL, NULL, &st);
  if (st != 0) {
    free (r);
    return NULL;
  }
  return r;
}

static void
func_layout (FuncInfo *fi)
{
  fi->n = -1;
  int use_kernel = 0;
  size_t off, size;
  CUresult r = real_cuFuncGetParamInfo ? real_cuFuncGetParamInfo (fi->f, 0, &off, &size)
                                       : CUDA_ERROR_NOT_FOUND;
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE && real_cuKernelGetParamInfo) {
    r = real_cuKernelGetParamInfo ((CUkernel) fi->f, 0, &off, &size);
    use_kernel = 1;
  }
  if (r == CUDA_ERROR_INVALID_VALUE) {
    fi->n = 0;                  /* no parameters */
    return;
  }
  if (r != CUDA_SUCCESS)
    return;
  size_t cap = 16;
  fi->off = malloc (cap * sizeof *fi->off);
  fi->size = malloc (cap * sizeof *fi->size);
  int n = 0;
  while (r == CUDA_SUCCESS && fi->off && fi->size && n < 4096) {
    if ((size_t) n == cap) {
      cap *= 2;
      uint32_t *a = realloc (fi->off, cap * sizeof *a);
      if (a)
        fi->off = a;
      uint32_t *b = realloc (fi->size, cap * sizeof *b);
      if (b)
        fi->size = b;
      if (!a || !b)
        break;
    }
    fi->off[n] = (uint32_t) off;
    fi->size[n] = (uint32_t) size;
    n++;
    r = use_kernel ? real_cuKernelGetParamInfo ((CUkernel) fi->f, (size_t) n, &off, &size)
                   : real_cuFuncGetParamInfo (fi->f, (size_t) n, &off, &size);
  }
  fi->n = n;
}

/* What the launch does not say (SPEC 3 `regs`, and the static part of
 * `smem`), from the driver: CU_FUNC_ATTRIBUTE_NUM_REGS and
 * CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, as CUPTI's kernel records carry
 * them (registersPerThread, staticSharedMemory). A launch may name a
 * CUkernel (CUDA 12's context-independent handle) instead of a function:
 * cuFuncGetAttribute refuses it, and cuKernelGetFunction gives the
 * current context's function. A refusal leaves the fields unknown; the
 * launch itself is never touched. */
static void
func_attrs (FuncInfo *fi)
{
  fi->regs = 0;
  fi->smem = -1;
  if (!real_cuFuncGetAttribute)
    return;
  CUfunction g = fi->f;
  int regs = 0, smem = 0;
  CUresult r = real_cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g);
  if (r != CUDA_SUCCESS && real_cuKernelGetFunction
      && real_cuKernelGetFunction (&g, (CUkernel) fi->f) == CUDA_SUCCESS && g)
    r = real_cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g);
  if (r != CUDA_SUCCESS)
    return;
  fi->regs = regs > 0 ? (uint32_t) regs : 0;
  if (real_cuFuncGetAttribute (&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, g) == CUDA_SUCCESS
      && smem >= 0)
    fi->smem = smem;
}

static FuncInfo *
func_info (CUfunction f)
{
  pthread_mutex_lock (&g_funcs_lock);
  if (g_funcs_n * 2 >= g_funcs_cap) {
    size_t nc = g_funcs_cap ? g_funcs_cap * 2 : 256;
    FuncInfo **nf = calloc (nc, sizeof *nf);
    if (!nf) {
      pthread_mutex_unlock (&g_funcs_lock);
      return NULL;
    }
    for (size_t i = 0; i < g_funcs_cap; i++)
      if (g_funcs[i]) {
        size_t j = ((uintptr_t) g_funcs[i]->f * 0x9E3779B97F4A7C15ull >> 20) & (nc - 1);
        while (nf[j])
          j = (j + 1) & (nc - 1);
        nf[j] = g_funcs[i];
      }
    free (g_funcs);
    g_funcs = nf;
    g_funcs_cap = nc;
  }
  size_t j = ((uintptr_t) f * 0x9E3779B97F4A7C15ull >> 20) & (g_funcs_cap - 1);
  while (g_funcs[j] && g_funcs[j]->f != f)
    j = (j + 1) & (g_funcs_cap - 1);
  FuncInfo *fi = g_funcs[j];
  if (!fi && (fi = calloc (1, sizeof *fi)) != NULL) {
    g_funcs[j] = fi;
    fi->f = f;
    g_funcs_n++;
    const char *name = NULL;
    if (!real_cuFuncGetName || real_cuFuncGetName (&name, f) != CUDA_SUCCESS || !name) {
      name = NULL;
      if (real_cuKernelGetName && real_cuKernelGetName (&name, (CUkernel) f) != CUDA_SUCCESS)
        name = NULL;
    }
    char *dm = name ? demangle (name) : NULL;
    fi->sid = cap_intern (dm ? dm : name ? name : "unknown");
    free (dm);
    func_layout (fi);
    func_attrs (fi);
  }
  pthread_mutex_unlock (&g_funcs_lock);
  return fi;
}

#define MAX_WORDS HOOKS_MAX_WORDS

/* Collects the pointer-sized words of a launch's parameters into W. */
static size_t
param_words (const FuncInfo *fi, void **params, void **extra, uint64_t *w)
{
  size_t n = 0;
  if (params && fi && fi->n > 0) {
    for (int i = 0; i < fi->n && n < MAX_WORDS; i++) {
      const char *v = params[i];
      if (!v)
        continue;
      for (uint32_t k = 0; k + 8 <= fi->size[i] && n < MAX_WORDS; k += 8)
        memcpy (&w[n++], v + k, 8);
    }
    return n;
  }
  if (!params && extra) {
    const char *buf = NULL;
    size_t len = 0;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        buf = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
        len = *(size_t *) extra[i + 1];
    }
    if (!buf)
      return 0;
    if (fi && fi->n > 0) {
      for (int i = 0; i < fi->n && n < MAX_WORDS; i++)
        for (uint32_t k = 0; k + 8 <= fi->size[i] && fi->off[i] + k + 8 <= len && n < MAX_WORDS; k += 8)
          memcpy (&w[n++], buf + fi->off[i] + k, 8);
    } else {
      for (size_t k = 0; k + 8 <= len && n < MAX_WORDS; k += 8)
        memcpy (&w[n++], buf + k, 8);
    }
  }
  return n;
}

/* SH in: the launch's grid, block and dynamic shared memory (smem); out:
 * FI's registers and static + dynamic shared memory (0 where unknown:
 * dynamic memory alone would understate what a block holds). */
static CapShape *
launch_shape (const FuncInfo *fi, CapShape *sh)
{
  uint64_t smem = fi && fi->smem >= 0 ? (uint64_t) fi->smem + sh->smem : 0;
  sh->regs = fi ? fi->regs : 0;
  sh->smem = smem <= UINT32_MAX ? (uint32_t) smem : 0;
  return sh;
}

uint32_t
hooks_kernel_words (void *f, void **params, void **extra, uint64_t *words, size_t *nw,
                    CapShape *shape)
{
  resolve ();
  FuncInfo *fi = func_info ((CUfunction) f);
  *nw = param_words (fi, params, extra, words);
  if (shape)
    launch_shape (fi, shape);
  return fi ? fi->sid : cap_intern ("unknown");
}

/* ---- wrappers ---- */

#define PASS(fn, ...) \
  do { \
    resolve (); \
    if (!real_##fn) \
      return CUDA_ERROR_NOT_INITIALIZED; \
    if (cap_mode != CAP_MODE_HOOK) \
      return real_##fn (__VA_ARGS__); \
  } while (0)

/* At exit, before the driver's own teardown: libcuda registers its exit
 * handler inside cuInit, so this one, registered after the first cuInit
 * returns, runs before it and can still read back pending GPU times (the
 * recorder's own handler, registered at load, runs after the driver's). */
static void
drain_at_exit (void)
{
  if (cap_mode == CAP_MODE_HOOK && getpid () == g_init_pid)
    drain_before_ctx_teardown ();
}

/* Why a process recorded nothing (cap_nothing_cause_cb, recorder.h). */
static void
hooks_nothing_cause (char *buf, size_t cap)
{
  int r = g_cuinit_result;
  if (r > 0) {
    const char *name = NULL;
    typedef CUresult ErrName (CUresult, const char **);
    ErrName *err_name = g_libcuda && cap_real_dlsym ? (ErrName *) cap_real_dlsym (g_libcuda, "cuGetErrorName") : NULL;
    if (err_name == NULL || err_name ((CUresult) r, &name) != CUDA_SUCCESS)
      name = NULL;
    const char *vis = getenv ("CUDA_VISIBLE_DEVICES");
    if (r == CUDA_ERROR_NO_DEVICE)
      snprintf (buf, cap, "no CUDA device: cuInit answered CUDA_ERROR_NO_DEVICE (100)%s%s%s",
                vis ? "; CUDA_VISIBLE_DEVICES is \"" : "", vis ? vis : "", vis ? "\"" : "");
    else
      snprintf (buf, cap, "the CUDA driver did not start: cuInit answered %s (%d)", name ? name : "error", r);
    return;
  }
  if (r == 0) {
    snprintf (buf, cap, "the program started CUDA but made no call vramcap records (allocation, copy, kernel, "
              "sync, NVTX range)");
    return;
  }
  /* cuInit never came through the shim (the program never started CUDA):
   * is there a driver on this machine at all? (Whether the process has
   * libcuda loaded says nothing: the shim opens it itself.) */
  const char *lib = getenv ("VRAMCAP_LIBCUDA");
  if (!lib || !*lib)
    lib = "libcuda.so.1";
  void *h = dlopen (lib, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror ();
    snprintf (buf, cap, "no CUDA driver on this machine (dlopen %s)", e ? e : lib);
    return;
  }
  dlclose (h);
  snprintf (buf, cap, "the program never used CUDA (it never called cuInit)");
}

CUresult
cuInit (unsigned int flags)
{
  resolve ();
  if (!real_cuInit)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuInit (flags);
  g_cuinit_result = (int) r;
  if (r == CUDA_SUCCESS) {
    if (cap_mode == CAP_MODE_OFF) {
      /* The driver did not load us as its injection library (hook mode was
       * asked for, or CUDA_INJECTION64_PATH was not honoured). */
      if (cap_requested_mode () == CAP_MODE_CUPTI)
        cap_warn ("CUPTI injection did not start; recording in hook mode");
      hooks_start ();
    }
    if (cap_mode == CAP_MODE_HOOK) {
      hooks_query_device ();
      if (g_init_pid != getpid ()) {
        g_init_pid = getpid ();
        atexit (drain_at_exit);
      }
    }
  }
  return r;
}

static CUresult
do_alloc (CUresult r, uint64_t t0, uintptr_t p, uint64_t bytes, int kind, int so, CUstream s)
{
  uint64_t t1 = cap_now ();
  if (r == CUDA_SUCCESS)
    cap_alloc (t0, t1, p, bytes, kind, so, (uintptr_t) s);
  return r;
}

static CUresult
do_free (CUresult r, uint64_t t0, uintptr_t p, int so, CUstream s)
{
  uint64_t t1 = cap_now ();
  if (r == CUDA_SUCCESS)
    cap_free (t0, t1, p, so, (uintptr_t) s);
  return r;
}

CUresult
cuMemAlloc_v2 (CUdeviceptr *dptr, size_t bytes)
{
  PASS (cuMemAlloc_v2, dptr, bytes);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAlloc_v2 (dptr, bytes);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemAllocPitch_v2 (CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned int esz)
{
  PASS (cuMemAllocPitch_v2, dptr, pitch, w, h, esz);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocPitch_v2 (dptr, pitch, w, h, esz);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, r == CUDA_SUCCESS ? (uint64_t) *pitch * h : 0,
                   CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemFree_v2 (CUdeviceptr p)
{
  PASS (cuMemFree_v2, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFree_v2 (p), t0, p, 0, NULL);
}

CUresult
cuMemAllocManaged (CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
  PASS (cuMemAllocManaged, dptr, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocManaged (dptr, bytes, flags);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_MANAGED, 0, NULL);
}

CUresult
cuMemHostAlloc (void **pp, size_t bytes, unsigned int flags)
{
  PASS (cuMemHostAlloc, pp, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemHostAlloc (pp, bytes, flags);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? (uintptr_t) *pp : 0, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemAllocHost_v2 (void **pp, size_t bytes)
{
  PASS (cuMemAllocHost_v2, pp, bytes);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocHost_v2 (pp, bytes);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? (uintptr_t) *pp : 0, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemFreeHost (void *p)
{
  PASS (cuMemFreeHost, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeHost (p), t0, (uintptr_t) p, 0, NULL);
}

CUresult
cuMemHostRegister_v2 (void *p, size_t bytes, unsigned int flags)
{
  PASS (cuMemHostRegister_v2, p, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemHostRegister_v2 (p, bytes, flags);
  return do_alloc (r, t0, (uintptr_t) p, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemHostUnregister (void *p)
{
  PASS (cuMemHostUnregister, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemHostUnregister (p), t0, (uintptr_t) p, 0, NULL);
}

CUresult
cuMemAllocAsync (CUdeviceptr *dptr, size_t bytes, CUstream s)
{
  PASS (cuMemAllocAsync, dptr, bytes, s);
  if (capturing (s))
    return real_cuMemAllocAsync (dptr, bytes, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocAsync (dptr, bytes, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, s);
}

CUresult
cuMemAllocFromPoolAsync (CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
  PASS (cuMemAllocFromPoolAsync, dptr, bytes, pool, s);
  if (capturing (s))
    return real_cuMemAllocFromPoolAsync (dptr, bytes, pool, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocFromPoolAsync (dptr, bytes, pool, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, s);
}

CUresult
cuMemFreeAsync (CUdeviceptr p, CUstream s)
{
  PASS (cuMemFreeAsync, p, s);
  if (capturing (s))
    return real_cuMemFreeAsync (p, s);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeAsync (p, s), t0, p, 1, s);
}

/* Virtual memory management (PyTorch expandable segments): a mapping is
 * what kernels address, so a mapped range is recorded as one device
 * allocation and its unmapping as the free. */
CUresult
cuMemMap (CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
          unsigned long long flags)
{
  PASS (cuMemMap, p, size, offset, h, flags);
  uint64_t t0 = cap_now ();
  return do_alloc (real_cuMemMap (p, size, offset, h, flags), t0, p, size, CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemUnmap (CUdeviceptr p, size_t size)
{
  PASS (cuMemUnmap, p, size);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemUnmap (p, size);
  if (r == CUDA_SUCCESS)
    cap_free_range (t0, cap_now (), p, p + size);
  return r;
}

/* ---- copies and memsets ---- */

/* The stream of a per-thread variant (below): in a _ptsz call NULL is the
 * calling thread's default stream; a _ptds call runs on it. */
#define PT(s) ((s) ? (s) : (CUstream) CU_STREAM_PER_THREAD)
#define PTDS ((CUstream) CU_STREAM_PER_THREAD)

#define TIMED_OP(call, s, record) \
  do { \
    if (capturing (s)) \
      return call; \
    Timer tm; \
    uint64_t t0 = cap_now (); \
    timer_begin (&tm, s); \
    CUresult r_ = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r_ != CUDA_SUCCESS) { \
      timer_cancel (&tm); \
      return r_; \
    } \
    uint64_t seq_ = record; \
    timer_commit (&tm, seq_, 1); \
    return r_; \
  } while (0)

#define COPY(call, s, dir, dst, src, bytes, async) \
  TIMED_OP (call, s, cap_copy (t0, t1, dir, (uintptr_t) (dst), (uintptr_t) (src), bytes, \
                               (uintptr_t) (s), async, tm.ok, 0))
#define MEMSET(call, s, dst, bytes, async) \
  TIMED_OP (call, s, cap_memset (t0, t1, (uintptr_t) (dst), bytes, (uintptr_t) (s), async, tm.ok, 0))

CUresult
cuMemcpy (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpy, dst, src, n);
  COPY (real_cuMemcpy (dst, src, n), (CUstream) NULL, CAP_DIR_AUTO, dst, src, n, 0);
}

CUresult
cuMemcpyAsync (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyAsync, dst, src, n, s);
  COPY (real_cuMemcpyAsync (dst, src, n, s), s, CAP_DIR_AUTO, dst, src, n, 1);
}

CUresult
cuMemcpyHtoD_v2 (CUdeviceptr dst, const void *src, size_t n)
{
  PASS (cuMemcpyHtoD_v2, dst, src, n);
  COPY (real_cuMemcpyHtoD_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_H2D, dst, src, n, 0);
}

CUresult
cuMemcpyDtoH_v2 (void *dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoH_v2, dst, src, n);
  COPY (real_cuMemcpyDtoH_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_D2H, dst, src, n, 0);
}

CUresult
cuMemcpyDtoD_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoD_v2, dst, src, n);
  COPY (real_cuMemcpyDtoD_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_D2D, dst, src, n, 0);
}

CUresult
cuMemcpyHtoDAsync_v2 (CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoDAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyHtoDAsync_v2 (dst, src, n, s), s, CAP_DIR_H2D, dst, src, n, 1);
}

CUresult
cuMemcpyDtoHAsync_v2 (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoHAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyDtoHAsync_v2 (dst, src, n, s), s, CAP_DIR_D2H, dst, src, n, 1);
}

CUresult
cuMemcpyDtoDAsync_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoDAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyDtoDAsync_v2 (dst, src, n, s), s, CAP_DIR_D2D, dst, src, n, 1);
}

CUresult
cuMemcpyPeer (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  PASS (cuMemcpyPeer, dst, dc, src, sc, n);
  COPY (real_cuMemcpyPeer (dst, dc, src, sc, n), (CUstream) NULL, CAP_DIR_P2P, dst, src, n, 0);
}

CUresult
cuMemcpyPeerAsync (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                   CUstream s)
{
  PASS (cuMemcpyPeerAsync, dst, dc, src, sc, n, s);
  COPY (real_cuMemcpyPeerAsync (dst, dc, src, sc, n, s), s, CAP_DIR_P2P, dst, src, n, 1);
}

/* 2D/3D descriptors: which side is which comes from the memory types;
 * unified pointers are looked up. */
static int
side_of (CUmemorytype t)
{
  return t == CU_MEMORYTYPE_HOST ? 0 : t == CU_MEMORYTYPE_UNIFIED ? -1 : 1;
}

static int
dir_of (CUmemorytype dt, CUmemorytype st)
{
  int d = side_of (dt), s = side_of (st);
  if (d < 0 || s < 0)
    return CAP_DIR_AUTO;
  return d && s ? CAP_DIR_D2D : d ? CAP_DIR_H2D : s ? CAP_DIR_D2H : CAP_DIR_AUTO;
}

/* A CUDA array side is the trace's synthetic "cuda_arrays" allocation. */
static uintptr_t
ptr_of (CUmemorytype t, const void *host, CUdeviceptr dev)
{
  return t == CU_MEMORYTYPE_HOST ? (uintptr_t) host : t == CU_MEMORYTYPE_ARRAY ? CAP_ARRAY : (uintptr_t) dev;
}

/* cuMemcpy3DPeer[Async]: a peer copy when neither side is host memory and
 * the two contexts differ; otherwise as cuMemcpy3D, by the memory types. */
static int
peer_dir_of (const CUDA_MEMCPY3D_PEER *c)
{
  if (c->srcContext && c->dstContext && c->srcContext != c->dstContext
      && c->srcMemoryType != CU_MEMORYTYPE_HOST && c->dstMemoryType != CU_MEMORYTYPE_HOST)
    return CAP_DIR_P2P;
  return dir_of (c->dstMemoryType, c->srcMemoryType);
}

void
hooks_copy_desc (const void *desc, int is3d, int *dir, uintptr_t *dst, uintptr_t *src,
                 uint64_t *bytes)
{
  if (is3d == 2) {
    const CUDA_MEMCPY3D_PEER *c = desc;
    *dir = peer_dir_of (c);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
  } else if (is3d) {
    const CUDA_MEMCPY3D *c = desc;
    *dir = dir_of (c->dstMemoryType, c->srcMemoryType);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
  } else {
    const CUDA_MEMCPY2D *c = desc;
    *dir = dir_of (c->dstMemoryType, c->srcMemoryType);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height;
  }
}

#define COPY2D(call, c, s, async) \
  COPY (call, s, dir_of ((c)->dstMemoryType, (c)->srcMemoryType), \
        ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height, async)
#define COPY3D(call, c, s, async) \
  COPY (call, s, dir_of ((c)->dstMemoryType, (c)->srcMemoryType), \
        ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height * ((c)->Depth ? (c)->Depth : 1), async)

CUresult
cuMemcpy2D_v2 (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2D_v2, c);
  COPY2D (real_cuMemcpy2D_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy2DUnaligned_v2 (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2DUnaligned_v2, c);
  COPY2D (real_cuMemcpy2DUnaligned_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy2DAsync_v2 (const CUDA_MEMCPY2D *c, CUstream s)
{
  PASS (cuMemcpy2DAsync_v2, c, s);
  COPY2D (real_cuMemcpy2DAsync_v2 (c, s), c, s, 1);
}

CUresult
cuMemcpy3D_v2 (const CUDA_MEMCPY3D *c)
{
  PASS (cuMemcpy3D_v2, c);
  COPY3D (real_cuMemcpy3D_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy3DAsync_v2 (const CUDA_MEMCPY3D *c, CUstream s)
{
  PASS (cuMemcpy3DAsync_v2, c, s);
  COPY3D (real_cuMemcpy3DAsync_v2 (c, s), c, s, 1);
}

#define COPY3DPEER(call, c, s, async) \
  COPY (call, s, peer_dir_of (c), ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height * ((c)->Depth ? (c)->Depth : 1), async)

CUresult
cuMemcpy3DPeer (const CUDA_MEMCPY3D_PEER *c)
{
  PASS (cuMemcpy3DPeer, c);
  COPY3DPEER (real_cuMemcpy3DPeer (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy3DPeerAsync (const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
  PASS (cuMemcpy3DPeerAsync, c, s);
  COPY3DPEER (real_cuMemcpy3DPeerAsync (c, s), c, s, 1);
}

/* Array copies: the array side is CAP_ARRAY (device memory). */
CUresult
cuMemcpyHtoA_v2 (CUarray dst, size_t off, const void *src, size_t n)
{
  PASS (cuMemcpyHtoA_v2, dst, off, src, n);
  COPY (real_cuMemcpyHtoA_v2 (dst, off, src, n), (CUstream) NULL, CAP_DIR_H2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoH_v2 (void *dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoH_v2, dst, src, off, n);
  COPY (real_cuMemcpyAtoH_v2 (dst, src, off, n), (CUstream) NULL, CAP_DIR_D2H, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyAtoD_v2 (CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoD_v2, dst, src, off, n);
  COPY (real_cuMemcpyAtoD_v2 (dst, src, off, n), (CUstream) NULL, CAP_DIR_D2D, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyDtoA_v2 (CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoA_v2, dst, off, src, n);
  COPY (real_cuMemcpyDtoA_v2 (dst, off, src, n), (CUstream) NULL, CAP_DIR_D2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoA_v2 (CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
  PASS (cuMemcpyAtoA_v2, dst, doff, src, soff, n);
  COPY (real_cuMemcpyAtoA_v2 (dst, doff, src, soff, n), (CUstream) NULL, CAP_DIR_D2D, CAP_ARRAY,
        CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyHtoAAsync_v2 (CUarray dst, size_t off, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoAAsync_v2, dst, off, src, n, s);
  COPY (real_cuMemcpyHtoAAsync_v2 (dst, off, src, n, s), s, CAP_DIR_H2D, CAP_ARRAY, src, n, 1);
}

CUresult
cuMemcpyAtoHAsync_v2 (void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
  PASS (cuMemcpyAtoHAsync_v2, dst, src, off, n, s);
  COPY (real_cuMemcpyAtoHAsync_v2 (dst, src, off, n, s), s, CAP_DIR_D2H, dst, CAP_ARRAY, n, 1);
}

/* ---- batched copies: one copy event per entry, on the call's stream ----
 * The event pair brackets the whole batch; its time is split over the
 * entries in proportion to their bytes. */

void
hooks_batch_ops (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t n, CapCopyOp *out)
{
  for (size_t i = 0; i < n; i++)
    out[i] = (CapCopyOp) { CAP_DIR_AUTO, (uintptr_t) dsts[i], (uintptr_t) srcs[i], sizes[i] };
}

/* Bytes per element of a CUDA array (its format times its channels); 1
 * when the driver cannot say or the format is not a plain one. */
static uint64_t
array_elem_bytes (CUarray a)
{
  CUDA_ARRAY3D_DESCRIPTOR d;
  if (!real_cuArray3DGetDescriptor_v2 || real_cuArray3DGetDescriptor_v2 (&d, a) != CUDA_SUCCESS)
    return 1;
  uint64_t ch = d.NumChannels ? d.NumChannels : 1;
  switch (d.Format) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return ch;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2 * ch;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4 * ch;
#if CUDA_VERSION >= 11050
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 1;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2:
  case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return 2;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4:
  case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: return 4;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 8;
#endif
  default: return 1;
  }
}

#if CUDA_VERSION >= 12080
/* One CUDA_MEMCPY3D_BATCH_OP: its extent is in elements (1 byte for
 * pointer-to-pointer copies, the array's element size when an operand is
 * an array); the direction from what the two operands are. */
void
hooks_batch3d_ops (const void *ops, size_t n, CapCopyOp *out)
{
  resolve ();
  const CUDA_MEMCPY3D_BATCH_OP *op = ops;
  for (size_t i = 0; i < n; i++, op++) {
    int sa = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY, da = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
    uint64_t esz = sa ? array_elem_bytes (op->src.op.array.array)
                 : da ? array_elem_bytes (op->dst.op.array.array) : 1;
    out[i] = (CapCopyOp) { CAP_DIR_AUTO, da ? CAP_ARRAY : (uintptr_t) op->dst.op.ptr.ptr,
                           sa ? CAP_ARRAY : (uintptr_t) op->src.op.ptr.ptr,
                           esz * op->extent.width * op->extent.height * op->extent.depth };
  }
}

/* Records N copies (OPS, malloc'd by the caller) made by CALL on S. */
#define BATCH(call, s, n, fill) \
  do { \
    if (capturing (s) || (n) == 0 || (n) > UINT32_MAX) \
      return call; \
    CapCopyOp *ops_ = malloc ((n) * sizeof *ops_); \
    if (!ops_) \
      return call; \
    fill; \
    Timer tm; \
    uint64_t t0 = cap_now (); \
    timer_begin (&tm, s); \
    CUresult r_ = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r_ != CUDA_SUCCESS) { \
      free (ops_); \
      timer_cancel (&tm); \
      return r_; \
    } \
    uint32_t cnt_; \
    uint64_t first_ = cap_copies (t0, t1, ops_, (uint32_t) (n), (uintptr_t) (s), 1, tm.ok, 0, &cnt_); \
    free (ops_); \
    timer_commit_split (&tm, first_, cnt_, 1); \
    return r_; \
  } while (0)

CUresult
cuMemcpyBatchAsync (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                    CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs, size_t *fail_idx,
                    CUstream s)
{
  PASS (cuMemcpyBatchAsync, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s);
  BATCH (real_cuMemcpyBatchAsync (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s),
         s, count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpyBatchAsync_ptsz (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                         CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs,
                         size_t *fail_idx, CUstream s)
{
  PASS (cuMemcpyBatchAsync_ptsz, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s);
  BATCH (real_cuMemcpyBatchAsync_ptsz (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs,
                                       fail_idx, s),
         PT (s), count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpy3DBatchAsync (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                      unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync, n, ops, fail_idx, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync (n, ops, fail_idx, flags, s), s, n,
         hooks_batch3d_ops (ops, n, ops_));
}

CUresult
cuMemcpy3DBatchAsync_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                           unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_ptsz, n, ops, fail_idx, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_ptsz (n, ops, fail_idx, flags, s), PT (s), n,
         hooks_batch3d_ops (ops, n, ops_));
}
#endif

#if CUDA_VERSION >= 13000
CUresult
cuMemcpyBatchAsync_v2 (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                       CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs, CUstream s)
{
  PASS (cuMemcpyBatchAsync_v2, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s);
  BATCH (real_cuMemcpyBatchAsync_v2 (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s), s,
         count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpyBatchAsync_v2_ptsz (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs,
                            CUstream s)
{
  PASS (cuMemcpyBatchAsync_v2_ptsz, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s);
  BATCH (real_cuMemcpyBatchAsync_v2_ptsz (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s),
         PT (s), count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpy3DBatchAsync_v2 (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_v2, n, ops, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_v2 (n, ops, flags, s), s, n, hooks_batch3d_ops (ops, n, ops_));
}

CUresult
cuMemcpy3DBatchAsync_v2_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                              CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_v2_ptsz, n, ops, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_v2_ptsz (n, ops, flags, s), PT (s), n,
         hooks_batch3d_ops (ops, n, ops_));
}
#endif

CUresult
cuMemsetD8_v2 (CUdeviceptr p, unsigned char v, size_t n)
{
  PASS (cuMemsetD8_v2, p, v, n);
  MEMSET (real_cuMemsetD8_v2 (p, v, n), (CUstream) NULL, p, n, 0);
}

CUresult
cuMemsetD16_v2 (CUdeviceptr p, unsigned short v, size_t n)
{
  PASS (cuMemsetD16_v2, p, v, n);
  MEMSET (real_cuMemsetD16_v2 (p, v, n), (CUstream) NULL, p, 2 * (uint64_t) n, 0);
}

CUresult
cuMemsetD32_v2 (CUdeviceptr p, unsigned int v, size_t n)
{
  PASS (cuMemsetD32_v2, p, v, n);
  MEMSET (real_cuMemsetD32_v2 (p, v, n), (CUstream) NULL, p, 4 * (uint64_t) n, 0);
}

CUresult
cuMemsetD8Async (CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
  PASS (cuMemsetD8Async, p, v, n, s);
  MEMSET (real_cuMemsetD8Async (p, v, n, s), s, p, n, 1);
}

CUresult
cuMemsetD16Async (CUdeviceptr p, unsigned short v, size_t n, CUstream s)
{
  PASS (cuMemsetD16Async, p, v, n, s);
  MEMSET (real_cuMemsetD16Async (p, v, n, s), s, p, 2 * (uint64_t) n, 1);
}

CUresult
cuMemsetD32Async (CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
  PASS (cuMemsetD32Async, p, v, n, s);
  MEMSET (real_cuMemsetD32Async (p, v, n, s), s, p, 4 * (uint64_t) n, 1);
}

CUresult
cuMemsetD2D8_v2 (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h)
{
  PASS (cuMemsetD2D8_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D8_v2 (p, pitch, v, w, h), (CUstream) NULL, p, (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D16_v2 (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h)
{
  PASS (cuMemsetD2D16_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D16_v2 (p, pitch, v, w, h), (CUstream) NULL, p, 2 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D32_v2 (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h)
{
  PASS (cuMemsetD2D32_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D32_v2 (p, pitch, v, w, h), (CUstream) NULL, p, 4 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D8Async (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D8Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D8Async (p, pitch, v, w, h, s), s, p, (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D16Async (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D16Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D16Async (p, pitch, v, w, h, s), s, p, 2 * (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D32Async (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D32Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D32Async (p, pitch, v, w, h, s), s, p, 4 * (uint64_t) w * h, 1);
}

CUresult
cuMemPrefetchAsync (CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
  PASS (cuMemPrefetchAsync, p, n, dev, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync (p, n, dev, s);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_prefetch (t0, cap_now (), p, n, dev == CU_DEVICE_CPU, (uintptr_t) s);
  return r;
}

CUresult
cuMemPrefetchAsync_v2 (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
  PASS (cuMemPrefetchAsync_v2, p, n, loc, flags, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_v2 (p, n, loc, flags, s);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_prefetch (t0, cap_now (), p, n,
                  loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
                  || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, (uintptr_t) s);
  return r;
}

/* Advice shapes where the driver places managed pages; the trace has no op
 * for it (counted, and said at exit). */
CUresult
cuMemAdvise (CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev)
{
  PASS (cuMemAdvise, p, n, advice, dev);
  CUresult r = real_cuMemAdvise (p, n, advice, dev);
  if (r == CUDA_SUCCESS)
    cap_advise ();
  return r;
}

CUresult
cuMemAdvise_v2 (CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
  PASS (cuMemAdvise_v2, p, n, advice, loc);
  CUresult r = real_cuMemAdvise_v2 (p, n, advice, loc);
  if (r == CUDA_SUCCESS)
    cap_advise ();
  return r;
}

/* ---- kernels ---- */

/* A launch's grid, block and dynamic shared memory, as CapShape. */
#define DIMS(gx, gy, gz, bx, by, bz, dyn) ((CapShape) { { gx, gy, gz }, { bx, by, bz }, 0, dyn })
#define CFG_DIMS(c) \
  ((c) ? DIMS ((c)->gridDimX, (c)->gridDimY, (c)->gridDimZ, (c)->blockDimX, (c)->blockDimY, \
               (c)->blockDimZ, (c)->sharedMemBytes) \
       : DIMS (0, 0, 0, 0, 0, 0, 0))

/* SHAPE: the launch's CapShape initializer, grid, block and dynamic
 * shared memory (launch_shape adds what the function says). */
#define LAUNCH(call, f, s, params, extra, shape) \
  do { \
    if (capturing (s)) \
      return call; \
    uint64_t t0 = cap_now (); \
    FuncInfo *fi = func_info (f); \
    uint64_t words[MAX_WORDS]; \
    size_t nw = param_words (fi, params, extra, words); \
    CapShape sh = shape; \
    Timer tm; \
    timer_begin (&tm, s); \
    CUresult r = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r != CUDA_SUCCESS) { \
      timer_cancel (&tm); \
      return r; \
    } \
    uint64_t seq = cap_kernel (t0, t1, fi ? fi->sid : cap_intern ("unknown"), (uintptr_t) (s), \
                               words, nw, tm.ok, 0, launch_shape (fi, &sh)); \
    timer_commit (&tm, seq, 1); \
    return r; \
  } while (0)

CUresult
cuLaunchKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                CUstream s, void **params, void **extra)
{
  PASS (cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
  LAUNCH (real_cuLaunchKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra), f, s, params, extra,
          DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchCooperativeKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz,
                           unsigned int shmem, CUstream s, void **params)
{
  PASS (cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, shmem, s, params);
  LAUNCH (real_cuLaunchCooperativeKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params), f, s,
          params, NULL, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchKernelEx (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
  PASS (cuLaunchKernelEx, cfg, f, params, extra);
  CUstream s = cfg ? cfg->hStream : NULL;
  LAUNCH (real_cuLaunchKernelEx (cfg, f, params, extra), f, s, params, extra, CFG_DIMS (cfg));
}

/* ---- graphs: the kernel nodes of an instantiated graph, by exec ---- */

typedef struct { uint32_t sid; uint32_t nw; uint64_t *w; uint64_t node_id; CapShape shape; } GKernel;
typedef struct GExec { CUgraphExec exec; uint32_t n; GKernel *k; struct GExec *next; } GExec;
static GExec *g_execs;
static pthread_mutex_t g_exec_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t (*hooks_graph_node_id_cb) (void *node);

static void
graph_remember (CUgraphExec exec, CUgraph graph)
{
  /* An exec the shim saw destroyed is forgotten then; one destroyed out of
   * its sight (while CUPTI recorded, say) must not lend its kernels to a
   * new exec at the same address. */
  hooks_graph_forget (exec);
  size_t n = 0;
  if (!real_cuGraphGetNodes || real_cuGraphGetNodes (graph, NULL, &n) != CUDA_SUCCESS || n == 0)
    return;
  CUgraphNode *nodes = calloc (n, sizeof *nodes);
  GExec *ge = calloc (1, sizeof *ge);
  if (ge)
    ge->k = calloc (n, sizeof *ge->k);
  if (!nodes || !ge || !ge->k || real_cuGraphGetNodes (graph, nodes, &n) != CUDA_SUCCESS) {
    free (nodes);
    if (ge)
      free (ge->k);
    free (ge);
    return;
  }
  ge->exec = exec;
  for (size_t i = 0; i < n; i++) {
    CUgraphNodeType type;
    CUDA_KERNEL_NODE_PARAMS kp;
    if (real_cuGraphNodeGetType (nodes[i], &type) != CUDA_SUCCESS || type != CU_GRAPH_NODE_TYPE_KERNEL)
      continue;
    memset (&kp, 0, sizeof kp);
    if (!real_cuGraphKernelNodeGetParams_v2
        || real_cuGraphKernelNodeGetParams_v2 (nodes[i], &kp) != CUDA_SUCCESS)
      continue;
    CUfunction f = kp.func ? kp.func : (CUfunction) kp.kern;
    FuncInfo *fi = func_info (f);
    uint64_t words[MAX_WORDS];
    size_t nw = param_words (fi, kp.kernelParams, kp.extra, words);
    GKernel *gk = &ge->k[ge->n];
    gk->sid = fi ? fi->sid : cap_intern ("unknown");
    gk->w = nw ? malloc (nw * sizeof *gk->w) : NULL;
    if (gk->w)
      memcpy (gk->w, words, nw * sizeof *gk->w);
    gk->nw = gk->w ? (uint32_t) nw : 0;
    gk->node_id = hooks_graph_node_id_cb ? hooks_graph_node_id_cb (nodes[i]) : 0;
    gk->shape = DIMS (kp.gridDimX, kp.gridDimY, kp.gridDimZ, kp.blockDimX, kp.blockDimY,
                      kp.blockDimZ, kp.sharedMemBytes);
    launch_shape (fi, &gk->shape);
    ge->n++;
  }
  free (nodes);
  pthread_mutex_lock (&g_exec_lock);
  ge->next = g_execs;
  g_execs = ge;
  pthread_mutex_unlock (&g_exec_lock);
}

/* Every way to instantiate: the kernel nodes are read from the graph once
 * the driver has made the exec (the exec keeps the graph as it was then).
 * The call's arguments and result are the program's, untouched. */
#define INSTANTIATE(call) \
  do { \
    CUresult r = call; \
    if (r == CUDA_SUCCESS && exec && graph) \
      graph_remember (*exec, graph); \
    return r; \
  } while (0)

CUresult
cuGraphInstantiateWithFlags (CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
  PASS (cuGraphInstantiateWithFlags, exec, graph, flags);
  INSTANTIATE (real_cuGraphInstantiateWithFlags (exec, graph, flags));
}

CUresult
cuGraphInstantiateWithParams (CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
  PASS (cuGraphInstantiateWithParams, exec, graph, ip);
  INSTANTIATE (real_cuGraphInstantiateWithParams (exec, graph, ip));
}

CUresult
cuGraphInstantiateWithParams_ptsz (CUgraphExec *exec, CUgraph graph,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
  PASS (cuGraphInstantiateWithParams_ptsz, exec, graph, ip);
  INSTANTIATE (real_cuGraphInstantiateWithParams_ptsz (exec, graph, ip));
}

CUresult
cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log,
                       size_t log_size)
{
  PASS (cuGraphInstantiate_v2, exec, graph, err, log, log_size);
  INSTANTIATE (real_cuGraphInstantiate_v2 (exec, graph, err, log, log_size));
}

CUresult
cuGraphInstantiate (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log, size_t log_size)
{
  PASS (cuGraphInstantiate, exec, graph, err, log, log_size);
  INSTANTIATE (real_cuGraphInstantiate (exec, graph, err, log, log_size));
}

void
hooks_graph_remember (void *exec, void *graph)
{
  resolve ();
  graph_remember ((CUgraphExec) exec, (CUgraph) graph);
}

void
hooks_graph_forget (void *exec)
{
  pthread_mutex_lock (&g_exec_lock);
  for (GExec **pp = &g_execs; *pp; pp = &(*pp)->next)
    if ((*pp)->exec == exec) {
      GExec *ge = *pp;
      *pp = ge->next;
      for (uint32_t i = 0; i < ge->n; i++)
        free (ge->k[i].w);
      free (ge->k);
      free (ge);
      break;
    }
  pthread_mutex_unlock (&g_exec_lock);
}

CUresult
cuGraphExecDestroy (CUgraphExec exec)
{
  PASS (cuGraphExecDestroy, exec);
  hooks_graph_forget (exec);
  return real_cuGraphExecDestroy (exec);
}

uint32_t
hooks_graph_kernels (void *exec, uintptr_t stream, uint64_t t0, uint64_t t1, int pending,
                     uint64_t corr, uint64_t *first, uint64_t **node_ids)
{
  uint32_t count = 0;
  *first = UINT64_MAX;
  if (node_ids)
    *node_ids = NULL;
  pthread_mutex_lock (&g_exec_lock);
  for (GExec *ge = g_execs; ge; ge = ge->next)
    if (ge->exec == (CUgraphExec) exec) {
      if (node_ids && ge->n)
        *node_ids = calloc (ge->n, sizeof **node_ids);
      for (uint32_t i = 0; i < ge->n; i++) {
        uint64_t seq = cap_kernel (t0, i + 1 == ge->n ? t1 : t0, ge->k[i].sid, stream,
                                   ge->k[i].w, ge->k[i].nw, pending, corr, &ge->k[i].shape);
        if (seq == UINT64_MAX)
          break;
        if (*first == UINT64_MAX)
          *first = seq;
        if (node_ids && *node_ids)
          (*node_ids)[count] = ge->k[i].node_id;
        count++;
      }
      break;
    }
  pthread_mutex_unlock (&g_exec_lock);
  return count;
}

/* One kernel event per kernel node, in node order, on the launch stream;
 * the graph's measured time is split evenly among them. */
static CUresult
graph_launch (__typeof__ (cuGraphLaunch) *fn, CUgraphExec exec, CUstream call_s, CUstream s)
{
  if (capturing (s))
    return fn (exec, call_s);
  uint64_t t0 = cap_now ();
  Timer tm;
  timer_begin (&tm, s);
  CUresult r = fn (exec, call_s);
  timer_stop (&tm, s);
  uint64_t t1 = cap_now ();
  if (r != CUDA_SUCCESS) {
    timer_cancel (&tm);
    return r;
  }
  uint64_t first;
  uint32_t count = hooks_graph_kernels (exec, (uintptr_t) s, t0, t1, tm.ok, 0, &first, NULL);
  /* Kernels of one launch are pushed one by one; another thread may push in
   * between, so they are contiguous only without contention. Resolve each. */
  if (count > 0 && tm.ok) {
    cap_lock ();
    uint64_t last = first;
    int contiguous = 1;
    for (uint32_t i = 1; i < count; i++) {
      VtEvent *e = cap_get_locked (first + i);
      if (!e || e->op != VTW_KERNEL)
        contiguous = 0;
      last = first + i;
    }
    (void) last;
    cap_unlock ();
    if (contiguous) {
      timer_commit (&tm, first, count);
      return r;
    }
    cap_lock ();
    for (uint32_t i = 0; i < count; i++)
      cap_resolve_locked (first + i, VTW_NONE);
    cap_unlock ();
  }
  timer_commit (&tm, UINT64_MAX, 0);
  return r;
}

CUresult
cuGraphLaunch (CUgraphExec exec, CUstream s)
{
  PASS (cuGraphLaunch, exec, s);
  return graph_launch (real_cuGraphLaunch, exec, s, s);
}

/* ---- synchronization, events ---- */

/* A sync call that began at T0 returned R: record it, read back what has
 * finished. */
static CUresult
sync_done (CUresult r, uint64_t t0, int scope, uintptr_t h)
{
  cap_sync (t0, cap_now (), scope, h);
  poll_after_sync ();
  return r;
}

CUresult
cuCtxSynchronize (void)
{
  PASS (cuCtxSynchronize);
  uint64_t t0 = cap_now ();
  return sync_done (real_cuCtxSynchronize (), t0, CAP_SYNC_DEVICE, 0);
}

#if CUDA_VERSION >= 13000
CUresult
cuCtxSynchronize_v2 (CUcontext ctx)
{
  PASS (cuCtxSynchronize_v2, ctx);
  uint64_t t0 = cap_now ();
  return sync_done (real_cuCtxSynchronize_v2 (ctx), t0, CAP_SYNC_DEVICE, 0);
}
#endif

CUresult
cuStreamSynchronize (CUstream s)
{
  PASS (cuStreamSynchronize, s);
  uint64_t t0 = cap_now ();
  return sync_done (real_cuStreamSynchronize (s), t0, CAP_SYNC_STREAM, (uintptr_t) s);
}

CUresult
cuEventSynchronize (CUevent e)
{
  PASS (cuEventSynchronize, e);
  uint64_t t0 = cap_now ();
  return sync_done (real_cuEventSynchronize (e), t0, CAP_SYNC_EVENT, (uintptr_t) e);
}

CUresult
cuEventRecord (CUevent e, CUstream s)
{
  PASS (cuEventRecord, e, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuEventRecord (e, s);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_event_record (t0, cap_now (), (uintptr_t) e, (uintptr_t) s);
  return r;
}

CUresult
cuEventRecordWithFlags (CUevent e, CUstream s, unsigned int flags)
{
  PASS (cuEventRecordWithFlags, e, s, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuEventRecordWithFlags (e, s, flags);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_event_record (t0, cap_now (), (uintptr_t) e, (uintptr_t) s);
  return r;
}

CUresult
cuStreamWaitEvent (CUstream s, CUevent e, unsigned int flags)
{
  PASS (cuStreamWaitEvent, s, e, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuStreamWaitEvent (s, e, flags);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_stream_wait (t0, cap_now (), (uintptr_t) s, (uintptr_t) e);
  return r;
}

CUresult
cuCtxDestroy_v2 (CUcontext ctx)
{
  PASS (cuCtxDestroy_v2, ctx);
  drain_before_ctx_teardown ();
  return real_cuCtxDestroy_v2 (ctx);
}

CUresult
cuDevicePrimaryCtxRelease_v2 (CUdevice d)
{
  PASS (cuDevicePrimaryCtxRelease_v2, d);
  drain_before_ctx_teardown ();
  return real_cuDevicePrimaryCtxRelease_v2 (d);
}

CUresult
cuDevicePrimaryCtxReset_v2 (CUdevice d)
{
  PASS (cuDevicePrimaryCtxReset_v2, d);
  drain_before_ctx_teardown ();
  return real_cuDevicePrimaryCtxReset_v2 (d);
}

/* ---- per-thread default stream variants (_ptds, _ptsz) ----
 * Each records as its base function does, on the stream it runs on: in a
 * _ptsz call NULL means the calling thread's default stream, which is what
 * CU_STREAM_PER_THREAD names in any call (the timing events are recorded on
 * it too); a _ptds call runs on that stream. */


CUresult
cuMemcpy_ptds (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpy_ptds, dst, src, n);
  COPY (real_cuMemcpy_ptds (dst, src, n), PTDS, CAP_DIR_AUTO, dst, src, n, 0);
}

CUresult
cuMemcpyHtoD_v2_ptds (CUdeviceptr dst, const void *src, size_t n)
{
  PASS (cuMemcpyHtoD_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyHtoD_v2_ptds (dst, src, n), PTDS, CAP_DIR_H2D, dst, src, n, 0);
}

CUresult
cuMemcpyDtoH_v2_ptds (void *dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoH_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyDtoH_v2_ptds (dst, src, n), PTDS, CAP_DIR_D2H, dst, src, n, 0);
}

CUresult
cuMemcpyDtoD_v2_ptds (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoD_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyDtoD_v2_ptds (dst, src, n), PTDS, CAP_DIR_D2D, dst, src, n, 0);
}

CUresult
cuMemcpyPeer_ptds (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  PASS (cuMemcpyPeer_ptds, dst, dc, src, sc, n);
  COPY (real_cuMemcpyPeer_ptds (dst, dc, src, sc, n), PTDS, CAP_DIR_P2P, dst, src, n, 0);
}

CUresult
cuMemcpy2D_v2_ptds (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2D_v2_ptds, c);
  COPY2D (real_cuMemcpy2D_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy2DUnaligned_v2_ptds (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2DUnaligned_v2_ptds, c);
  COPY2D (real_cuMemcpy2DUnaligned_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy3D_v2_ptds (const CUDA_MEMCPY3D *c)
{
  PASS (cuMemcpy3D_v2_ptds, c);
  COPY3D (real_cuMemcpy3D_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemsetD8_v2_ptds (CUdeviceptr p, unsigned char v, size_t n)
{
  PASS (cuMemsetD8_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD8_v2_ptds (p, v, n), PTDS, p, n, 0);
}

CUresult
cuMemsetD16_v2_ptds (CUdeviceptr p, unsigned short v, size_t n)
{
  PASS (cuMemsetD16_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD16_v2_ptds (p, v, n), PTDS, p, 2 * (uint64_t) n, 0);
}

CUresult
cuMemsetD32_v2_ptds (CUdeviceptr p, unsigned int v, size_t n)
{
  PASS (cuMemsetD32_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD32_v2_ptds (p, v, n), PTDS, p, 4 * (uint64_t) n, 0);
}

CUresult
cuMemsetD2D8_v2_ptds (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h)
{
  PASS (cuMemsetD2D8_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D8_v2_ptds (p, pitch, v, w, h), PTDS, p, (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D16_v2_ptds (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h)
{
  PASS (cuMemsetD2D16_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D16_v2_ptds (p, pitch, v, w, h), PTDS, p, 2 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D32_v2_ptds (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h)
{
  PASS (cuMemsetD2D32_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D32_v2_ptds (p, pitch, v, w, h), PTDS, p, 4 * (uint64_t) w * h, 0);
}

CUresult
cuMemcpyAsync_ptsz (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyAsync_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyAsync_ptsz (dst, src, n, s), PT (s), CAP_DIR_AUTO, dst, src, n, 1);
}

CUresult
cuMemcpyHtoDAsync_v2_ptsz (CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoDAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyHtoDAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_H2D, dst, src, n, 1);
}

CUresult
cuMemcpyDtoHAsync_v2_ptsz (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoHAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyDtoHAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_D2H, dst, src, n, 1);
}

CUresult
cuMemcpyDtoDAsync_v2_ptsz (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoDAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyDtoDAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_D2D, dst, src, n, 1);
}

CUresult
cuMemcpyPeerAsync_ptsz (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                        CUstream s)
{
  PASS (cuMemcpyPeerAsync_ptsz, dst, dc, src, sc, n, s);
  COPY (real_cuMemcpyPeerAsync_ptsz (dst, dc, src, sc, n, s), PT (s), CAP_DIR_P2P, dst, src, n, 1);
}

CUresult
cuMemcpy2DAsync_v2_ptsz (const CUDA_MEMCPY2D *c, CUstream s)
{
  PASS (cuMemcpy2DAsync_v2_ptsz, c, s);
  COPY2D (real_cuMemcpy2DAsync_v2_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpy3DAsync_v2_ptsz (const CUDA_MEMCPY3D *c, CUstream s)
{
  PASS (cuMemcpy3DAsync_v2_ptsz, c, s);
  COPY3D (real_cuMemcpy3DAsync_v2_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpy3DPeer_ptds (const CUDA_MEMCPY3D_PEER *c)
{
  PASS (cuMemcpy3DPeer_ptds, c);
  COPY3DPEER (real_cuMemcpy3DPeer_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy3DPeerAsync_ptsz (const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
  PASS (cuMemcpy3DPeerAsync_ptsz, c, s);
  COPY3DPEER (real_cuMemcpy3DPeerAsync_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpyHtoA_v2_ptds (CUarray dst, size_t off, const void *src, size_t n)
{
  PASS (cuMemcpyHtoA_v2_ptds, dst, off, src, n);
  COPY (real_cuMemcpyHtoA_v2_ptds (dst, off, src, n), PTDS, CAP_DIR_H2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoH_v2_ptds (void *dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoH_v2_ptds, dst, src, off, n);
  COPY (real_cuMemcpyAtoH_v2_ptds (dst, src, off, n), PTDS, CAP_DIR_D2H, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyAtoD_v2_ptds (CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoD_v2_ptds, dst, src, off, n);
  COPY (real_cuMemcpyAtoD_v2_ptds (dst, src, off, n), PTDS, CAP_DIR_D2D, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyDtoA_v2_ptds (CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoA_v2_ptds, dst, off, src, n);
  COPY (real_cuMemcpyDtoA_v2_ptds (dst, off, src, n), PTDS, CAP_DIR_D2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoA_v2_ptds (CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
  PASS (cuMemcpyAtoA_v2_ptds, dst, doff, src, soff, n);
  COPY (real_cuMemcpyAtoA_v2_ptds (dst, doff, src, soff, n), PTDS, CAP_DIR_D2D, CAP_ARRAY,
        CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyHtoAAsync_v2_ptsz (CUarray dst, size_t off, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoAAsync_v2_ptsz, dst, off, src, n, s);
  COPY (real_cuMemcpyHtoAAsync_v2_ptsz (dst, off, src, n, s), PT (s), CAP_DIR_H2D, CAP_ARRAY, src,
        n, 1);
}

CUresult
cuMemcpyAtoHAsync_v2_ptsz (void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
  PASS (cuMemcpyAtoHAsync_v2_ptsz, dst, src, off, n, s);
  COPY (real_cuMemcpyAtoHAsync_v2_ptsz (dst, src, off, n, s), PT (s), CAP_DIR_D2H, dst, CAP_ARRAY,
        n, 1);
}

CUresult
cuMemsetD8Async_ptsz (CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
  PASS (cuMemsetD8Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD8Async_ptsz (p, v, n, s), PT (s), p, n, 1);
}

CUresult
cuMemsetD16Async_ptsz (CUdeviceptr p, unsigned short v, size_t n, CUstream s)
{
  PASS (cuMemsetD16Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD16Async_ptsz (p, v, n, s), PT (s), p, 2 * (uint64_t) n, 1);
}

CUresult
cuMemsetD32Async_ptsz (CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
  PASS (cuMemsetD32Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD32Async_ptsz (p, v, n, s), PT (s), p, 4 * (uint64_t) n, 1);
}

CUresult
cuMemsetD2D8Async_ptsz (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D8Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D8Async_ptsz (p, pitch, v, w, h, s), PT (s), p, (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D16Async_ptsz (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h,
                         CUstream s)
{
  PASS (cuMemsetD2D16Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D16Async_ptsz (p, pitch, v, w, h, s), PT (s), p, 2 * (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D32Async_ptsz (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h,
                         CUstream s)
{
  PASS (cuMemsetD2D32Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D32Async_ptsz (p, pitch, v, w, h, s), PT (s), p, 4 * (uint64_t) w * h, 1);
}

CUresult
cuMemPrefetchAsync_ptsz (CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
  PASS (cuMemPrefetchAsync_ptsz, p, n, dev, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_ptsz (p, n, dev, s);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_prefetch (t0, cap_now (), p, n, dev == CU_DEVICE_CPU, (uintptr_t) PT (s));
  return r;
}

CUresult
cuMemPrefetchAsync_v2_ptsz (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags,
                            CUstream s)
{
  PASS (cuMemPrefetchAsync_v2_ptsz, p, n, loc, flags, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_v2_ptsz (p, n, loc, flags, s);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_prefetch (t0, cap_now (), p, n,
                  loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
                  || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, (uintptr_t) PT (s));
  return r;
}

CUresult
cuMemAllocAsync_ptsz (CUdeviceptr *dptr, size_t bytes, CUstream s)
{
  PASS (cuMemAllocAsync_ptsz, dptr, bytes, s);
  if (capturing (PT (s)))
    return real_cuMemAllocAsync_ptsz (dptr, bytes, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocAsync_ptsz (dptr, bytes, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, PT (s));
}

CUresult
cuMemAllocFromPoolAsync_ptsz (CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
  PASS (cuMemAllocFromPoolAsync_ptsz, dptr, bytes, pool, s);
  if (capturing (PT (s)))
    return real_cuMemAllocFromPoolAsync_ptsz (dptr, bytes, pool, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocFromPoolAsync_ptsz (dptr, bytes, pool, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, PT (s));
}

CUresult
cuMemFreeAsync_ptsz (CUdeviceptr p, CUstream s)
{
  PASS (cuMemFreeAsync_ptsz, p, s);
  if (capturing (PT (s)))
    return real_cuMemFreeAsync_ptsz (p, s);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeAsync_ptsz (p, s), t0, p, 1, PT (s));
}

CUresult
cuLaunchKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                     CUstream s, void **params, void **extra)
{
  PASS (cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
  LAUNCH (real_cuLaunchKernel_ptsz (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra), f, PT (s),
          params, extra, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchCooperativeKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shmem, CUstream s, void **params)
{
  PASS (cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz, bx, by, bz, shmem, s, params);
  LAUNCH (real_cuLaunchCooperativeKernel_ptsz (f, gx, gy, gz, bx, by, bz, shmem, s, params), f,
          PT (s), params, NULL, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchKernelEx_ptsz (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
  PASS (cuLaunchKernelEx_ptsz, cfg, f, params, extra);
  CUstream s = PT (cfg ? cfg->hStream : NULL);
  LAUNCH (real_cuLaunchKernelEx_ptsz (cfg, f, params, extra), f, s, params, extra, CFG_DIMS (cfg));
}

CUresult
cuGraphLaunch_ptsz (CUgraphExec exec, CUstream s)
{
  PASS (cuGraphLaunch_ptsz, exec, s);
  return graph_launch (real_cuGraphLaunch_ptsz, exec, s, PT (s));
}

CUresult
cuStreamSynchronize_ptsz (CUstream s)
{
  PASS (cuStreamSynchronize_ptsz, s);
  uint64_t t0 = cap_now ();
  return sync_done (real_cuStreamSynchronize_ptsz (s), t0, CAP_SYNC_STREAM, (uintptr_t) PT (s));
}

CUresult
cuEventRecord_ptsz (CUevent e, CUstream s)
{
  PASS (cuEventRecord_ptsz, e, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuEventRecord_ptsz (e, s);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_event_record (t0, cap_now (), (uintptr_t) e, (uintptr_t) PT (s));
  return r;
}

CUresult
cuEventRecordWithFlags_ptsz (CUevent e, CUstream s, unsigned int flags)
{
  PASS (cuEventRecordWithFlags_ptsz, e, s, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuEventRecordWithFlags_ptsz (e, s, flags);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_event_record (t0, cap_now (), (uintptr_t) e, (uintptr_t) PT (s));
  return r;
}

CUresult
cuStreamWaitEvent_ptsz (CUstream s, CUevent e, unsigned int flags)
{
  PASS (cuStreamWaitEvent_ptsz, s, e, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuStreamWaitEvent_ptsz (s, e, flags);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_stream_wait (t0, cap_now (), (uintptr_t) PT (s), (uintptr_t) e);
  return r;
}

/* ---- start ---- */

void
hooks_start (void)
{
  resolve ();
  cap_resolve_cb = hooks_resolve;
  cap_fork_child_cb = hooks_fork_child;
  cap_mode = CAP_MODE_HOOK;
}

__attribute__ ((constructor)) static void
hooks_init (void)
{
  cap_nothing_cause_cb = hooks_nothing_cause;
  cap_init ();
  cap_real_dlsym_init ();
  if (cap_requested_mode () == CAP_MODE_HOOK)
    hooks_start ();
}
