/* hooks-sync.c — hook mode's synchronization and events: sync calls (a read
 * back of the times), event records and waits, and context teardown (which
 * drains the timings first). See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

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
 * Each records as its base function does, on the stream it runs on (PT,
 * PTDS: hooks-priv.h). */

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
