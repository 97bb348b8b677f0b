/* cupti.c — CUPTI mode: the driver loads libvramcap.so through
 * CUDA_INJECTION64_PATH and calls InitializeInjection during cuInit.
 *
 * Driver API callbacks (exit site) record what the program asked, exactly
 * as hook mode does; GPU start/end times come from CUPTI activity records
 * (concurrent kernel, memcpy, memset), joined to the recorded events by
 * correlation id. Activity buffers are flushed at sync points when many
 * events wait, before the trace is finished, and at exit.
 *
 * libcupti is opened at run time (dlopen), so the shim loads and works in
 * hook mode where CUPTI is absent. If CUPTI cannot be used — another tool
 * already subscribed (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), or
 * no libcupti — the shim says so on stderr and records in hook mode (which
 * works because the launcher also preloads the shim). Record layouts are
 * those of the CUPTI headers the shim was built with; run it with the
 * libcupti of the same CUDA release. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks.h"
#include "recorder.h"

#ifndef VRAMCAP_CUPTI_DIR
#define VRAMCAP_CUPTI_DIR "/usr/local/cuda/lib64"
#endif

int InitializeInjection (void);

#define CUPTI_FUNCS(X) \
  X (cuptiSubscribe) X (cuptiEnableCallback) X (cuptiActivityEnable) \
  X (cuptiActivityRegisterCallbacks) X (cuptiActivityFlushAll) \
  X (cuptiActivityGetNextRecord) X (cuptiGetResultString)
#define DECL(fn) static __typeof__ (fn) *p_##fn;
CUPTI_FUNCS (DECL)
#undef DECL

static CUpti_SubscriberHandle g_sub;

/* ---- correlation id -> event sequence number (under the recorder's lock) ---- */

typedef struct { uint32_t corr; uint64_t seq; } Corr;
static Corr *g_corr;
static size_t g_corr_cap, g_corr_n;
static volatile size_t g_waiting;

static size_t
corr_slot (uint32_t corr)
{
  return (corr * 2654435761u) & (g_corr_cap - 1);
}

static void
corr_put_locked (uint32_t corr, uint64_t seq)
{
  if ((g_corr_n + 1) * 2 >= g_corr_cap) {
    size_t oc = g_corr_cap;
    Corr *old = g_corr;
    size_t nc = oc ? oc * 2 : 4096;
    Corr *nt = calloc (nc, sizeof *nt);
    if (!nt)
      return;
    g_corr = nt;
    g_corr_cap = nc;
    for (size_t i = 0; i < oc; i++)
      if (old[i].corr) {
        size_t j = corr_slot (old[i].corr);
        while (g_corr[j].corr)
          j = (j + 1) & (nc - 1);
        g_corr[j] = old[i];
      }
    free (old);
  }
  size_t j = corr_slot (corr);
  while (g_corr[j].corr && g_corr[j].corr != corr)
    j = (j + 1) & (g_corr_cap - 1);
  if (!g_corr[j].corr)
    g_corr_n++;
  g_corr[j] = (Corr) { corr, seq };
  g_waiting = g_corr_n;
}

/* Removes CORR; returns its seq or UINT64_MAX. */
static uint64_t
corr_take_locked (uint32_t corr)
{
  if (!g_corr_cap || !corr)
    return UINT64_MAX;
  size_t j = corr_slot (corr);
  while (g_corr[j].corr && g_corr[j].corr != corr)
    j = (j + 1) & (g_corr_cap - 1);
  if (!g_corr[j].corr)
    return UINT64_MAX;
  uint64_t seq = g_corr[j].seq;
  /* backward-shift deletion keeps probe chains intact */
  size_t i = j;
  for (;;) {
    g_corr[i].corr = 0;
    size_t k = i;
    for (;;) {
      k = (k + 1) & (g_corr_cap - 1);
      if (!g_corr[k].corr)
        goto done;
      size_t h = corr_slot (g_corr[k].corr);
      if (i <= k ? (h <= i || h > k) : (h <= i && h > k))
        break;
    }
    g_corr[i] = g_corr[k];
    i = k;
  }
done:
  g_corr_n--;
  g_waiting = g_corr_n;
  return seq;
}

static void
pending (uint64_t seq, uint32_t corr)
{
  if (seq == UINT64_MAX)
    return;
  cap_lock ();
  corr_put_locked (corr, seq);
  cap_unlock ();
}

/* ---- activity buffers ---- */

#define BUF_SIZE (4u << 20)

static void CUPTIAPI
buffer_requested (uint8_t **buf, size_t *size, size_t *max_records)
{
  *buf = aligned_alloc (8, BUF_SIZE);
  *size = *buf ? BUF_SIZE : 0;
  *max_records = 0;
}

static void
gpu_time (uint32_t corr, uint64_t start, uint64_t end)
{
  uint64_t seq = corr_take_locked (corr);
  if (seq != UINT64_MAX)
    cap_resolve_locked (seq, end > start ? end - start : 0);
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
  (void) ctx; (void) stream; (void) size;
  CUpti_Activity *rec = NULL;
  cap_lock ();
  while (p_cuptiActivityGetNextRecord (buf, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *) rec;
      gpu_time (k->correlationId, k->start, k->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *) rec;
      gpu_time (m->correlationId, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *) rec;
      gpu_time (m->correlationId, m->start, m->end);
      break;
    }
    default:
      break;
    }
  }
  cap_unlock ();
  free (buf);
}

/* Called by the recorder with its lock held. */
static void
cupti_resolve (int blocking)
{
  if (blocking != 1 || !p_cuptiActivityFlushAll)
    return;
  cap_unlock ();
  p_cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cap_lock ();
}

static void
cupti_fork_child (void)
{
  memset (g_corr, 0, g_corr_cap * sizeof *g_corr);
  g_corr_n = 0;
}

/* ---- driver API callbacks ---- */

#define P(type) ((const type##_params *) cb->functionParams)
#define COPY_EV(dir, dst, src, n, s, async) \
  pending (cap_copy (t0, t1, dir, (uintptr_t) (dst), (uintptr_t) (src), n, (uintptr_t) (s), \
                     async, 1, cb->correlationId), cb->correlationId)
#define MEMSET_EV(dst, n, s, async) \
  pending (cap_memset (t0, t1, (uintptr_t) (dst), n, (uintptr_t) (s), async, 1, cb->correlationId), \
           cb->correlationId)

static void
kernel_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CUfunction f, CUstream s,
           void **params, void **extra)
{
  static __thread uint64_t words[HOOKS_MAX_WORDS];
  size_t nw = 0;
  uint32_t sid = hooks_kernel_words (f, params, extra, words, &nw);
  pending (cap_kernel (t0, t1, sid, (uintptr_t) s, words, nw, 1, cb->correlationId),
           cb->correlationId);
}

static void
sync_point (uint64_t t0, uint64_t t1, int scope, uintptr_t h)
{
  cap_sync (t0, t1, scope, h);
  if (g_waiting > 4096 && p_cuptiActivityFlushAll)
    p_cuptiActivityFlushAll (0);
}

static void CUPTIAPI
on_callback (void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
  (void) ud;
  if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  const CUpti_CallbackData *cb = data;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = cap_now ();
    return;
  }
  uint64_t t0 = *cb->correlationData, t1 = cap_now ();
  if (!cb->functionReturnValue || *(const CUresult *) cb->functionReturnValue != CUDA_SUCCESS)
    return;
  if (!cap_have_device ())
    hooks_query_device ();
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
    cap_alloc (t0, t1, *P (cuMemAlloc_v2)->dptr, P (cuMemAlloc_v2)->bytesize, CAP_MEM_DEVICE, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2:
    cap_alloc (t0, t1, *P (cuMemAllocPitch_v2)->dptr,
               (uint64_t) *P (cuMemAllocPitch_v2)->pPitch * P (cuMemAllocPitch_v2)->Height,
               CAP_MEM_DEVICE, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
    cap_alloc (t0, t1, *P (cuMemAllocManaged)->dptr, P (cuMemAllocManaged)->bytesize,
               CAP_MEM_MANAGED, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemHostAlloc)->pp, P (cuMemHostAlloc)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemAllocHost_v2)->pp, P (cuMemAllocHost_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2:
    cap_alloc (t0, t1, (uintptr_t) P (cuMemHostRegister_v2)->p, P (cuMemHostRegister_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
    cap_alloc (t0, t1, *P (cuMemAllocAsync)->dptr, P (cuMemAllocAsync)->bytesize, CAP_MEM_DEVICE,
               1, (uintptr_t) P (cuMemAllocAsync)->hStream);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
    cap_alloc (t0, t1, *P (cuMemAllocFromPoolAsync)->dptr, P (cuMemAllocFromPoolAsync)->bytesize,
               CAP_MEM_DEVICE, 1, (uintptr_t) P (cuMemAllocFromPoolAsync)->hStream);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
    cap_alloc (t0, t1, P (cuMemMap)->ptr, P (cuMemMap)->size, CAP_MEM_DEVICE, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    cap_free (t0, t1, P (cuMemFree_v2)->dptr, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:
    cap_free (t0, t1, (uintptr_t) P (cuMemFreeHost)->p, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister:
    cap_free (t0, t1, (uintptr_t) P (cuMemHostUnregister)->p, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
    cap_free (t0, t1, P (cuMemFreeAsync)->dptr, 1, (uintptr_t) P (cuMemFreeAsync)->hStream);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap:
    cap_free_range (t0, t1, P (cuMemUnmap)->ptr, P (cuMemUnmap)->ptr + P (cuMemUnmap)->size);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpy:
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpy)->dst, P (cuMemcpy)->src, P (cuMemcpy)->ByteCount, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync:
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpyAsync)->dst, P (cuMemcpyAsync)->src,
             P (cuMemcpyAsync)->ByteCount, P (cuMemcpyAsync)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2:
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoD_v2)->dstDevice, P (cuMemcpyHtoD_v2)->srcHost,
             P (cuMemcpyHtoD_v2)->ByteCount, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2:
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoH_v2)->dstHost, P (cuMemcpyDtoH_v2)->srcDevice,
             P (cuMemcpyDtoH_v2)->ByteCount, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoD_v2)->dstDevice, P (cuMemcpyDtoD_v2)->srcDevice,
             P (cuMemcpyDtoD_v2)->ByteCount, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2:
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoDAsync_v2)->dstDevice, P (cuMemcpyHtoDAsync_v2)->srcHost,
             P (cuMemcpyHtoDAsync_v2)->ByteCount, P (cuMemcpyHtoDAsync_v2)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2:
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoHAsync_v2)->dstHost, P (cuMemcpyDtoHAsync_v2)->srcDevice,
             P (cuMemcpyDtoHAsync_v2)->ByteCount, P (cuMemcpyDtoHAsync_v2)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2:
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoDAsync_v2)->dstDevice, P (cuMemcpyDtoDAsync_v2)->srcDevice,
             P (cuMemcpyDtoDAsync_v2)->ByteCount, P (cuMemcpyDtoDAsync_v2)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync:
    COPY_EV (CAP_DIR_P2P, P (cuMemcpyPeerAsync)->dstDevice, P (cuMemcpyPeerAsync)->srcDevice,
             P (cuMemcpyPeerAsync)->ByteCount, P (cuMemcpyPeerAsync)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2:
    MEMSET_EV (P (cuMemsetD8_v2)->dstDevice, P (cuMemsetD8_v2)->N, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2:
    MEMSET_EV (P (cuMemsetD32_v2)->dstDevice, 4 * (uint64_t) P (cuMemsetD32_v2)->N, 0, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async:
    MEMSET_EV (P (cuMemsetD8Async)->dstDevice, P (cuMemsetD8Async)->N, P (cuMemsetD8Async)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async:
    MEMSET_EV (P (cuMemsetD32Async)->dstDevice, 4 * (uint64_t) P (cuMemsetD32Async)->N,
               P (cuMemsetD32Async)->hStream, 1);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2: {
    const cuMemPrefetchAsync_v2_params *p = P (cuMemPrefetchAsync_v2);
    cap_prefetch (t0, t1, p->devPtr, p->count, p->location.type != CU_MEM_LOCATION_TYPE_DEVICE,
                  (uintptr_t) p->hStream);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    kernel_ev (cb, t0, t1, P (cuLaunchKernel)->f, P (cuLaunchKernel)->hStream,
               P (cuLaunchKernel)->kernelParams, P (cuLaunchKernel)->extra);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    kernel_ev (cb, t0, t1, P (cuLaunchKernel_ptsz)->f, P (cuLaunchKernel_ptsz)->hStream,
               P (cuLaunchKernel_ptsz)->kernelParams, P (cuLaunchKernel_ptsz)->extra);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
    const cuLaunchKernelEx_params *p = P (cuLaunchKernelEx);
    kernel_ev (cb, t0, t1, p->f, p->config ? p->config->hStream : NULL, p->kernelParams, p->extra);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const cuLaunchKernelEx_ptsz_params *p = P (cuLaunchKernelEx_ptsz);
    kernel_ev (cb, t0, t1, p->f, p->config ? p->config->hStream : NULL, p->kernelParams, p->extra);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
    sync_point (t0, t1, CAP_SYNC_DEVICE, 0);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
    sync_point (t0, t1, CAP_SYNC_STREAM, (uintptr_t) P (cuStreamSynchronize)->hStream);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
    sync_point (t0, t1, CAP_SYNC_EVENT, (uintptr_t) P (cuEventSynchronize)->hEvent);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuEventRecord:
    cap_event_record (t0, t1, (uintptr_t) P (cuEventRecord)->hEvent,
                      (uintptr_t) P (cuEventRecord)->hStream);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
    cap_stream_wait (t0, t1, (uintptr_t) P (cuStreamWaitEvent)->hStream,
                     (uintptr_t) P (cuStreamWaitEvent)->hEvent);
    break;
  default:
    break;
  }
}

static const CUpti_CallbackId cbids[] = {
  CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
  CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
  CUPTI_DRIVER_TRACE_CBID_cuMemMap, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister,
  CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
  CUPTI_DRIVER_TRACE_CBID_cuMemcpy, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
  CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
  CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
  CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
  CUPTI_DRIVER_TRACE_CBID_cuMemPrefetchAsync_v2,
  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
  CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
  CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, CUPTI_DRIVER_TRACE_CBID_cuEventRecord,
  CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
};

static int
load_cupti (void)
{
  static const char *const names[] = { "libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                       VRAMCAP_CUPTI_DIR "/libcupti.so" };
  void *h = NULL;
  const char *env = getenv ("VRAMCAP_CUPTI");
  if (env && *env)
    h = dlopen (env, RTLD_NOW | RTLD_GLOBAL);
  for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++)
    h = dlopen (names[i], RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    return 0;
#define LOAD(fn) p_##fn = (__typeof__ (fn) *) dlsym (h, #fn); if (!p_##fn) return 0;
  CUPTI_FUNCS (LOAD)
#undef LOAD
  return 1;
}

static void
fall_back (const char *why)
{
  cap_warn ("%s; recording in hook mode instead", why);
  hooks_start ();
}

int
InitializeInjection (void)
{
  cap_init ();
  if (cap_mode != CAP_MODE_OFF)
    return 1;
  if (cap_requested_mode () == CAP_MODE_HOOK) {
    hooks_start ();
    return 1;
  }
  if (!load_cupti ()) {
    fall_back ("cannot load libcupti (set VRAMCAP_CUPTI to its path)");
    return 1;
  }
  CUptiResult r = p_cuptiSubscribe (&g_sub, (CUpti_CallbackFunc) on_callback, NULL);
  if (r != CUPTI_SUCCESS) {
    const char *msg = NULL;
    p_cuptiGetResultString (r, &msg);
    char why[512];
    snprintf (why, sizeof why, "%s (%s)",
              r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? "CUPTI is already in use by another profiler or tool"
                : "cuptiSubscribe failed", msg ? msg : "?");
    fall_back (why);
    return 1;
  }
  for (size_t i = 0; i < sizeof cbids / sizeof cbids[0]; i++)
    p_cuptiEnableCallback (1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, cbids[i]);
  p_cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMCPY);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMSET);
  cap_resolve_cb = cupti_resolve;
  cap_fork_child_cb = cupti_fork_child;
  cap_mode = CAP_MODE_CUPTI;
  return 1;
}
