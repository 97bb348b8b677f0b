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
static __typeof__ (cuptiGetGraphNodeId) *p_cuptiGetGraphNodeId;   /* optional */
static void *g_cupti;

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

/* ---- graph launches (under the recorder's lock) ----
 * A cuGraphLaunch records one kernel event per kernel node (hooks.c keeps
 * the nodes per exec); CUPTI reports each kernel of the launch with the
 * launch's correlation id and the id of its node (graphNodeId). A record is
 * matched to the node with that id, else to the first node of the launch
 * still waiting. */

typedef struct { uint32_t corr, n, left; uint64_t first; uint64_t *ids; uint8_t *done; } GraphWait;
static GraphWait *g_gw;
static size_t g_gw_n, g_gw_cap;

static void
graph_wait_locked (uint32_t corr, uint64_t first, uint32_t n, uint64_t *ids)
{
  uint8_t *done = calloc (n, 1);
  if (g_gw_n == g_gw_cap) {
    size_t nc = g_gw_cap ? g_gw_cap * 2 : 64;
    GraphWait *ng = realloc (g_gw, nc * sizeof *ng);
    if (ng) {
      g_gw = ng;
      g_gw_cap = nc;
    }
  }
  if (!done || g_gw_n == g_gw_cap) {
    for (uint32_t i = 0; i < n; i++)        /* cannot wait: dur unknown */
      cap_resolve_locked (first + i, VTW_NONE);
    free (done);
    free (ids);
    return;
  }
  g_gw[g_gw_n++] = (GraphWait) { corr, n, n, first, ids, done };
  g_waiting += n;
}

/* A kernel record that is not a plain launch's: one of a graph's? */
static void
graph_time_locked (uint32_t corr, uint64_t node_id, uint64_t dur)
{
  for (size_t k = 0; k < g_gw_n; k++) {
    GraphWait *w = &g_gw[k];
    if (w->corr != corr)
      continue;
    uint32_t i = w->n;
    if (w->ids && node_id)
      for (uint32_t j = 0; j < w->n && i == w->n; j++)
        if (!w->done[j] && w->ids[j] == node_id)
          i = j;
    for (uint32_t j = 0; j < w->n && i == w->n; j++)
      if (!w->done[j])
        i = j;
    if (i == w->n)
      return;
    w->done[i] = 1;
    cap_resolve_locked (w->first + i, dur);
    if (g_waiting)
      g_waiting--;
    if (--w->left == 0) {
      free (w->ids);
      free (w->done);
      g_gw[k] = g_gw[--g_gw_n];
    }
    return;
  }
}

static uint64_t
graph_node_id (void *node)
{
  uint64_t id = 0;
  if (p_cuptiGetGraphNodeId && p_cuptiGetGraphNodeId ((CUgraphNode) node, &id) != CUPTI_SUCCESS)
    id = 0;
  return id;
}

static void
graph_launch_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CUgraphExec exec,
                 uintptr_t stream)
{
  uint64_t first, *ids = NULL;
  if (hooks_stream_capturing (stream))  /* a child graph of the one being captured */
    return;
  uint32_t n = hooks_graph_kernels (exec, stream, t0, t1, 1, cb->correlationId, &first, &ids);
  if (n == 0) {
    free (ids);
    return;
  }
  cap_lock ();
  graph_wait_locked (cb->correlationId, first, n, ids);
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

static void
gpu_time_kernel (uint32_t corr, uint64_t node_id, uint64_t start, uint64_t end)
{
  uint64_t dur = end > start ? end - start : 0;
  uint64_t seq = corr_take_locked (corr);
  if (seq != UINT64_MAX)
    cap_resolve_locked (seq, dur);
  else if (g_gw_n)
    graph_time_locked (corr, node_id, dur);
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
      gpu_time_kernel (k->correlationId, k->graphNodeId, k->start, k->end);
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
  for (size_t k = 0; k < g_gw_n; k++) {
    free (g_gw[k].ids);
    free (g_gw[k].done);
  }
  g_gw_n = 0;
}

/* ---- driver API callbacks ---- */

#define P(type) ((const type##_params *) cb->functionParams)
/* The stream a call names; in a _ptsz variant NULL is the calling thread's
 * per-thread default stream. A _ptds call runs on that stream (PTDS0). */
#define STREAM(s) ((uintptr_t) ((pt && !(s)) ? CU_STREAM_PER_THREAD : (s)))
#define PTDS0 ((uintptr_t) (pt ? CU_STREAM_PER_THREAD : NULL))
/* Work issued into a stream being captured into a graph does not run: it
 * is recorded when the graph is launched (hook mode skips it the same way). */
#define CAPTURED(s) hooks_stream_capturing ((uintptr_t) (s))
#define COPY_EV(dir, dst, src, n, s, async) \
  do { \
    if (!CAPTURED (s)) \
      pending (cap_copy (t0, t1, dir, (uintptr_t) (dst), (uintptr_t) (src), n, (uintptr_t) (s), \
                         async, 1, cb->correlationId), cb->correlationId); \
  } while (0)
#define MEMSET_EV(dst, n, s, async) \
  do { \
    if (!CAPTURED (s)) \
      pending (cap_memset (t0, t1, (uintptr_t) (dst), n, (uintptr_t) (s), async, 1, \
                           cb->correlationId), cb->correlationId); \
  } while (0)

static void
kernel_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CUfunction f, uintptr_t s,
           void **params, void **extra)
{
  static __thread uint64_t words[HOOKS_MAX_WORDS];
  size_t nw = 0;
  if (CAPTURED (s))
    return;
  uint32_t sid = hooks_kernel_words (f, params, extra, words, &nw);
  pending (cap_kernel (t0, t1, sid, s, words, nw, 1, cb->correlationId), cb->correlationId);
}

static void
copy_desc_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, const void *desc, int is3d,
              uintptr_t s, int async)
{
  int dir;
  uintptr_t dst, src;
  uint64_t bytes;
  if (!desc)
    return;
  hooks_copy_desc (desc, is3d, &dir, &dst, &src, &bytes);
  COPY_EV (dir, dst, src, bytes, s, async);
}

static void
sync_point (uint64_t t0, uint64_t t1, int scope, uintptr_t h)
{
  cap_sync (t0, t1, scope, h);
  if (g_waiting > 4096 && p_cuptiActivityFlushAll)
    p_cuptiActivityFlushAll (0);
}

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

/* Per-thread-default-stream variants and the base function whose
 * parameters (same layout) and event they share. */
static const struct { CUpti_CallbackId pt, base; } pt_map[] = {
  { CB (cuMemcpy_ptds), CB (cuMemcpy) }, { CB (cuMemcpyAsync_ptsz), CB (cuMemcpyAsync) },
  { CB (cuMemcpyHtoD_v2_ptds), CB (cuMemcpyHtoD_v2) }, { CB (cuMemcpyDtoH_v2_ptds), CB (cuMemcpyDtoH_v2) },
  { CB (cuMemcpyDtoD_v2_ptds), CB (cuMemcpyDtoD_v2) },
  { CB (cuMemcpyHtoDAsync_v2_ptsz), CB (cuMemcpyHtoDAsync_v2) },
  { CB (cuMemcpyDtoHAsync_v2_ptsz), CB (cuMemcpyDtoHAsync_v2) },
  { CB (cuMemcpyDtoDAsync_v2_ptsz), CB (cuMemcpyDtoDAsync_v2) },
  { CB (cuMemcpyPeer_ptds), CB (cuMemcpyPeer) }, { CB (cuMemcpyPeerAsync_ptsz), CB (cuMemcpyPeerAsync) },
  { CB (cuMemcpy2D_v2_ptds), CB (cuMemcpy2D_v2) },
  { CB (cuMemcpy2DUnaligned_v2_ptds), CB (cuMemcpy2DUnaligned_v2) },
  { CB (cuMemcpy2DAsync_v2_ptsz), CB (cuMemcpy2DAsync_v2) },
  { CB (cuMemcpy3D_v2_ptds), CB (cuMemcpy3D_v2) }, { CB (cuMemcpy3DAsync_v2_ptsz), CB (cuMemcpy3DAsync_v2) },
  { CB (cuMemsetD8_v2_ptds), CB (cuMemsetD8_v2) }, { CB (cuMemsetD16_v2_ptds), CB (cuMemsetD16_v2) },
  { CB (cuMemsetD32_v2_ptds), CB (cuMemsetD32_v2) },
  { CB (cuMemsetD8Async_ptsz), CB (cuMemsetD8Async) }, { CB (cuMemsetD16Async_ptsz), CB (cuMemsetD16Async) },
  { CB (cuMemsetD32Async_ptsz), CB (cuMemsetD32Async) },
  { CB (cuMemAllocAsync_ptsz), CB (cuMemAllocAsync) },
  { CB (cuMemAllocFromPoolAsync_ptsz), CB (cuMemAllocFromPoolAsync) },
  { CB (cuMemFreeAsync_ptsz), CB (cuMemFreeAsync) },
  { CB (cuMemPrefetchAsync_v2_ptsz), CB (cuMemPrefetchAsync_v2) },
  { CB (cuLaunchKernel_ptsz), CB (cuLaunchKernel) }, { CB (cuLaunchKernelEx_ptsz), CB (cuLaunchKernelEx) },
  { CB (cuLaunchCooperativeKernel_ptsz), CB (cuLaunchCooperativeKernel) },
  { CB (cuGraphInstantiateWithParams_ptsz), CB (cuGraphInstantiateWithParams) },
  { CB (cuGraphLaunch_ptsz), CB (cuGraphLaunch) },
  { CB (cuStreamSynchronize_ptsz), CB (cuStreamSynchronize) },
  { CB (cuEventRecord_ptsz), CB (cuEventRecord) }, { CB (cuStreamWaitEvent_ptsz), CB (cuStreamWaitEvent) },
};
#define N_PT (sizeof pt_map / sizeof pt_map[0])

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
  int pt = 0;
  for (size_t i = 0; i < N_PT; i++)
    if (pt_map[i].pt == cbid) {
      cbid = pt_map[i].base;
      pt = 1;
      break;
    }
  switch (cbid) {
  case CB (cuMemAlloc_v2):
    cap_alloc (t0, t1, *P (cuMemAlloc_v2)->dptr, P (cuMemAlloc_v2)->bytesize, CAP_MEM_DEVICE, 0, 0);
    break;
  case CB (cuMemAllocPitch_v2):
    cap_alloc (t0, t1, *P (cuMemAllocPitch_v2)->dptr,
               (uint64_t) *P (cuMemAllocPitch_v2)->pPitch * P (cuMemAllocPitch_v2)->Height,
               CAP_MEM_DEVICE, 0, 0);
    break;
  case CB (cuMemAllocManaged):
    cap_alloc (t0, t1, *P (cuMemAllocManaged)->dptr, P (cuMemAllocManaged)->bytesize,
               CAP_MEM_MANAGED, 0, 0);
    break;
  case CB (cuMemHostAlloc):
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemHostAlloc)->pp, P (cuMemHostAlloc)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CB (cuMemAllocHost_v2):
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemAllocHost_v2)->pp, P (cuMemAllocHost_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CB (cuMemHostRegister_v2):
    cap_alloc (t0, t1, (uintptr_t) P (cuMemHostRegister_v2)->p, P (cuMemHostRegister_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    break;
  case CB (cuMemAllocAsync):
    if (CAPTURED (STREAM (P (cuMemAllocAsync)->hStream)))
      break;                    /* a graph's allocation node */
    cap_alloc (t0, t1, *P (cuMemAllocAsync)->dptr, P (cuMemAllocAsync)->bytesize, CAP_MEM_DEVICE,
               1, STREAM (P (cuMemAllocAsync)->hStream));
    break;
  case CB (cuMemAllocFromPoolAsync):
    if (CAPTURED (STREAM (P (cuMemAllocFromPoolAsync)->hStream)))
      break;
    cap_alloc (t0, t1, *P (cuMemAllocFromPoolAsync)->dptr, P (cuMemAllocFromPoolAsync)->bytesize,
               CAP_MEM_DEVICE, 1, STREAM (P (cuMemAllocFromPoolAsync)->hStream));
    break;
  case CB (cuMemMap):
    cap_alloc (t0, t1, P (cuMemMap)->ptr, P (cuMemMap)->size, CAP_MEM_DEVICE, 0, 0);
    break;
  case CB (cuMemFree_v2):
    cap_free (t0, t1, P (cuMemFree_v2)->dptr, 0, 0);
    break;
  case CB (cuMemFreeHost):
    cap_free (t0, t1, (uintptr_t) P (cuMemFreeHost)->p, 0, 0);
    break;
  case CB (cuMemHostUnregister):
    cap_free (t0, t1, (uintptr_t) P (cuMemHostUnregister)->p, 0, 0);
    break;
  case CB (cuMemFreeAsync):
    if (CAPTURED (STREAM (P (cuMemFreeAsync)->hStream)))
      break;
    cap_free (t0, t1, P (cuMemFreeAsync)->dptr, 1, STREAM (P (cuMemFreeAsync)->hStream));
    break;
  case CB (cuMemUnmap):
    cap_free_range (t0, t1, P (cuMemUnmap)->ptr, P (cuMemUnmap)->ptr + P (cuMemUnmap)->size);
    break;
  case CB (cuMemcpy):
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpy)->dst, P (cuMemcpy)->src, P (cuMemcpy)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyAsync):
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpyAsync)->dst, P (cuMemcpyAsync)->src,
             P (cuMemcpyAsync)->ByteCount, STREAM (P (cuMemcpyAsync)->hStream), 1);
    break;
  case CB (cuMemcpyHtoD_v2):
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoD_v2)->dstDevice, P (cuMemcpyHtoD_v2)->srcHost,
             P (cuMemcpyHtoD_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyDtoH_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoH_v2)->dstHost, P (cuMemcpyDtoH_v2)->srcDevice,
             P (cuMemcpyDtoH_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyDtoD_v2):
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoD_v2)->dstDevice, P (cuMemcpyDtoD_v2)->srcDevice,
             P (cuMemcpyDtoD_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyHtoDAsync_v2):
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoDAsync_v2)->dstDevice, P (cuMemcpyHtoDAsync_v2)->srcHost,
             P (cuMemcpyHtoDAsync_v2)->ByteCount, STREAM (P (cuMemcpyHtoDAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyDtoHAsync_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoHAsync_v2)->dstHost, P (cuMemcpyDtoHAsync_v2)->srcDevice,
             P (cuMemcpyDtoHAsync_v2)->ByteCount, STREAM (P (cuMemcpyDtoHAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyDtoDAsync_v2):
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoDAsync_v2)->dstDevice, P (cuMemcpyDtoDAsync_v2)->srcDevice,
             P (cuMemcpyDtoDAsync_v2)->ByteCount, STREAM (P (cuMemcpyDtoDAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyPeer):
    COPY_EV (CAP_DIR_P2P, P (cuMemcpyPeer)->dstDevice, P (cuMemcpyPeer)->srcDevice,
             P (cuMemcpyPeer)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyPeerAsync):
    COPY_EV (CAP_DIR_P2P, P (cuMemcpyPeerAsync)->dstDevice, P (cuMemcpyPeerAsync)->srcDevice,
             P (cuMemcpyPeerAsync)->ByteCount, STREAM (P (cuMemcpyPeerAsync)->hStream), 1);
    break;
  case CB (cuMemcpy2D_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2D_v2)->pCopy, 0, PTDS0, 0);
    break;
  case CB (cuMemcpy2DUnaligned_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2DUnaligned_v2)->pCopy, 0, PTDS0, 0);
    break;
  case CB (cuMemcpy2DAsync_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2DAsync_v2)->pCopy, 0,
                  STREAM (P (cuMemcpy2DAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpy3D_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3D_v2)->pCopy, 1, PTDS0, 0);
    break;
  case CB (cuMemcpy3DAsync_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3DAsync_v2)->pCopy, 1,
                  STREAM (P (cuMemcpy3DAsync_v2)->hStream), 1);
    break;
  case CB (cuMemsetD8_v2):
    MEMSET_EV (P (cuMemsetD8_v2)->dstDevice, P (cuMemsetD8_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD16_v2):
    MEMSET_EV (P (cuMemsetD16_v2)->dstDevice, 2 * (uint64_t) P (cuMemsetD16_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD32_v2):
    MEMSET_EV (P (cuMemsetD32_v2)->dstDevice, 4 * (uint64_t) P (cuMemsetD32_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD8Async):
    MEMSET_EV (P (cuMemsetD8Async)->dstDevice, P (cuMemsetD8Async)->N,
               STREAM (P (cuMemsetD8Async)->hStream), 1);
    break;
  case CB (cuMemsetD16Async):
    MEMSET_EV (P (cuMemsetD16Async)->dstDevice, 2 * (uint64_t) P (cuMemsetD16Async)->N,
               STREAM (P (cuMemsetD16Async)->hStream), 1);
    break;
  case CB (cuMemsetD32Async):
    MEMSET_EV (P (cuMemsetD32Async)->dstDevice, 4 * (uint64_t) P (cuMemsetD32Async)->N,
               STREAM (P (cuMemsetD32Async)->hStream), 1);
    break;
  case CB (cuMemPrefetchAsync_v2): {
    const cuMemPrefetchAsync_v2_params *p = P (cuMemPrefetchAsync_v2);
    if (CAPTURED (STREAM (p->hStream)))
      break;
    cap_prefetch (t0, t1, p->devPtr, p->count, p->location.type != CU_MEM_LOCATION_TYPE_DEVICE,
                  STREAM (p->hStream));
    break;
  }
  case CB (cuLaunchKernel):
    kernel_ev (cb, t0, t1, P (cuLaunchKernel)->f, STREAM (P (cuLaunchKernel)->hStream),
               P (cuLaunchKernel)->kernelParams, P (cuLaunchKernel)->extra);
    break;
  case CB (cuLaunchKernelEx): {
    const cuLaunchKernelEx_params *p = P (cuLaunchKernelEx);
    kernel_ev (cb, t0, t1, p->f, STREAM (p->config ? p->config->hStream : NULL), p->kernelParams,
               p->extra);
    break;
  }
  case CB (cuLaunchCooperativeKernel): {
    const cuLaunchCooperativeKernel_params *p = P (cuLaunchCooperativeKernel);
    kernel_ev (cb, t0, t1, p->f, STREAM (p->hStream), p->kernelParams, NULL);
    break;
  }
  /* Graphs: kernel nodes are remembered at instantiation, recorded at launch. */
  case CB (cuGraphInstantiateWithFlags):
    hooks_graph_remember (*P (cuGraphInstantiateWithFlags)->phGraphExec,
                          P (cuGraphInstantiateWithFlags)->hGraph);
    break;
  case CB (cuGraphInstantiate_v2):
    hooks_graph_remember (*P (cuGraphInstantiate_v2)->phGraphExec, P (cuGraphInstantiate_v2)->hGraph);
    break;
  case CB (cuGraphInstantiate):
    hooks_graph_remember (*P (cuGraphInstantiate)->phGraphExec, P (cuGraphInstantiate)->hGraph);
    break;
  case CB (cuGraphInstantiateWithParams):
    hooks_graph_remember (*P (cuGraphInstantiateWithParams)->phGraphExec,
                          P (cuGraphInstantiateWithParams)->hGraph);
    break;
  case CB (cuGraphExecDestroy):
    hooks_graph_forget (P (cuGraphExecDestroy)->hGraphExec);
    break;
  case CB (cuGraphLaunch):
    graph_launch_ev (cb, t0, t1, P (cuGraphLaunch)->hGraph, STREAM (P (cuGraphLaunch)->hStream));
    break;
  case CB (cuCtxSynchronize):
#if CUDA_VERSION >= 13000
  case CB (cuCtxSynchronize_v2):
#endif
    sync_point (t0, t1, CAP_SYNC_DEVICE, 0);
    break;
  case CB (cuStreamSynchronize):
    sync_point (t0, t1, CAP_SYNC_STREAM, STREAM (P (cuStreamSynchronize)->hStream));
    break;
  case CB (cuEventSynchronize):
    sync_point (t0, t1, CAP_SYNC_EVENT, (uintptr_t) P (cuEventSynchronize)->hEvent);
    break;
  case CB (cuEventRecord):
    if (CAPTURED (STREAM (P (cuEventRecord)->hStream)))
      break;
    cap_event_record (t0, t1, (uintptr_t) P (cuEventRecord)->hEvent,
                      STREAM (P (cuEventRecord)->hStream));
    break;
  case CB (cuStreamWaitEvent):
    if (CAPTURED (STREAM (P (cuStreamWaitEvent)->hStream)))
      break;
    cap_stream_wait (t0, t1, STREAM (P (cuStreamWaitEvent)->hStream),
                     (uintptr_t) P (cuStreamWaitEvent)->hEvent);
    break;
  default:
    break;
  }
}

static const CUpti_CallbackId cbids[] = {
  CB (cuMemAlloc_v2), CB (cuMemAllocPitch_v2), CB (cuMemAllocManaged), CB (cuMemHostAlloc),
  CB (cuMemAllocHost_v2), CB (cuMemHostRegister_v2), CB (cuMemAllocAsync),
  CB (cuMemAllocFromPoolAsync), CB (cuMemMap), CB (cuMemFree_v2), CB (cuMemFreeHost),
  CB (cuMemHostUnregister), CB (cuMemFreeAsync), CB (cuMemUnmap),
  CB (cuMemcpy), CB (cuMemcpyAsync), CB (cuMemcpyHtoD_v2), CB (cuMemcpyDtoH_v2),
  CB (cuMemcpyDtoD_v2), CB (cuMemcpyHtoDAsync_v2), CB (cuMemcpyDtoHAsync_v2),
  CB (cuMemcpyDtoDAsync_v2), CB (cuMemcpyPeer), CB (cuMemcpyPeerAsync),
  CB (cuMemcpy2D_v2), CB (cuMemcpy2DUnaligned_v2), CB (cuMemcpy2DAsync_v2),
  CB (cuMemcpy3D_v2), CB (cuMemcpy3DAsync_v2),
  CB (cuMemsetD8_v2), CB (cuMemsetD16_v2), CB (cuMemsetD32_v2),
  CB (cuMemsetD8Async), CB (cuMemsetD16Async), CB (cuMemsetD32Async),
  CB (cuMemPrefetchAsync_v2),
  CB (cuLaunchKernel), CB (cuLaunchKernelEx), CB (cuLaunchCooperativeKernel),
  CB (cuGraphInstantiateWithFlags), CB (cuGraphInstantiate_v2), CB (cuGraphInstantiate),
  CB (cuGraphInstantiateWithParams),
  CB (cuGraphExecDestroy), CB (cuGraphLaunch),
  CB (cuCtxSynchronize), CB (cuStreamSynchronize), CB (cuEventSynchronize), CB (cuEventRecord),
  CB (cuStreamWaitEvent),
#if CUDA_VERSION >= 13000
  CB (cuCtxSynchronize_v2),
#endif
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
  g_cupti = h;
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
  for (size_t i = 0; i < N_PT; i++)
    p_cuptiEnableCallback (1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, pt_map[i].pt);
  p_cuptiGetGraphNodeId = (__typeof__ (cuptiGetGraphNodeId) *) dlsym (g_cupti, "cuptiGetGraphNodeId");
  hooks_graph_node_id_cb = graph_node_id;
  p_cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMCPY);
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMSET);
  cap_resolve_cb = cupti_resolve;
  cap_fork_child_cb = cupti_fork_child;
  cap_mode = CAP_MODE_CUPTI;
  return 1;
}
