/* hooks-timing.c — hook mode's GPU times: two CUDA events from a pool
 * are recorded around each op on its stream; the pair is read back
 * (cuEventQuery + cuEventElapsedTime) at sync points, every POLL_EVERY
 * events, and at exit (hooks_resolve, the recorder's cap_resolve_cb).
 * See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- timing: event pairs (all under the recorder's lock) ---- */


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

void
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

void
hooks_fork_child (void)
{
  g_pool_n = 0;
  g_pend_n = 0;
}

int
hooks_stream_capturing (uintptr_t s)
{
  resolve ();
  return capturing ((CUstream) s);
}

void
timer_begin (Timer *tm, CUstream s)
{
  cap_lock ();
  tm->ok = pair_get_locked (&tm->p);
  cap_unlock ();
  if (tm->ok && real_cuEventRecord (tm->p.a, s) != CUDA_SUCCESS)
    tm->ok = 0;                 /* another context's stream: drop the pair */
}

/* Hands the pair to the pending list for events SEQ..SEQ+COUNT-1 (their
 * time split evenly, or BY_BYTES). */
void
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

void
timer_cancel (Timer *tm)
{
  if (!tm->ok)
    return;
  cap_lock ();
  pair_put_locked (&tm->p);
  cap_unlock ();
}

/* After a sync point: read back what has finished, write what can go. */
void
poll_after_sync (void)
{
  cap_lock ();
  hooks_resolve (0);
  cap_unlock ();
}

/* Before a context goes away: wait for its timings, drop the pooled events. */
void
drain_before_ctx_teardown (void)
{
  cap_lock ();
  hooks_resolve (1);
  g_pool_n = 0;
  cap_unlock ();
}
