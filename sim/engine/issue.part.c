/* issue.part.c — issuing one host event: the switch over its op.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* Whether a copy or memset call returns only once its work is done
 * (docs/model.md 2 has the audit). SPEC 5.2: every copy or memset with
 * `async: false` (cudaMemcpy, cudaMemset). And an asynchronous copy to or
 * from pageable host memory (CUDA Runtime API, "API synchronization
 * behavior": cudaMemcpyAsync D2H to pageable memory returns once the copy
 * is done; H2D from pageable memory is staged through pinned buffers, the
 * stream synchronized first, taken as done). By the kind the trace gave
 * its allocations, not the one a policy made them; a host side that names
 * no allocation (id 0) is pageable host memory (SPEC 3). */
static inline gboolean
call_waits_for_work (const VsEvent *ev, const Op *op)
{
  if (!ev->async)
    return TRUE;
  if (ev->op != VS_OP_COPY)
    return FALSE;
  return (ev->dir == VS_DIR_H2D && op->src == NULL) || (ev->dir == VS_DIR_D2H && op->dst == NULL);
}

/* T blocks until every op issued so far has completed (a device sync). */
static void
thread_block_device (Sim *s, Thread *t)
{
  /* A stream with nothing queued has finished its last op. */
  for (Stream *st = s->gpu.busy; st; st = st->busy_next)
    thread_block_on (t, &st->last->c);
}

/* The allocator model released segments inside T's call: PyTorch's
 * release_cached_blocks cudaFree()s them (expandable segments: unmaps
 * after a stream sync), and cudaFree synchronizes the device (Z. DeVito,
 * "A guide to PyTorch's CUDA Caching Allocator", 2022: "these memory APIs,
 * especially cudaFree, introduce synchronization"). The call returns once
 * the work issued before it is done, or after its captured host_ns, which
 * held the capture's own wait and the driver calls (docs/model.md 2). */
static __attribute__ ((noinline)) void
allocator_sync (Sim *s, Thread *t, guint64 host_ns)
{
  if (s->gpu.busy == NULL)
    return;
  t->wait_h = i2d (host_ns);
  thread_block_device (s, t);
}

static void
thread_issue (Sim *s, Thread *t)
{
  const VsEvent *ev = &s->core.ev;
  double now = s->core.now;
  t->s_cur = now;
  t->idle = FALSE;
  t->has_cur = FALSE;
  t->issued_t = ev->t;
  t->issued_h = ev->host_ns;
  t->issued_op = ev->op;
  double f = now + i2d (ev->host_ns);
  t->waits = 0;
  t->wait_h = 0;
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      {
        GPtrArray *jobs = jobs_take (s);
        s->mem.amodel_released = FALSE;
        gboolean ok = do_alloc (s, ev, jobs);
        for (guint i = 0; i < jobs->len; i++)
          {
            Job *j = jobs->pdata[i];
            thread_block_on (t, &j->c);
            job_unref (j);
          }
        jobs_give (s, jobs);
        if (!ok)
          {
            s->stats.last_end = MAX (s->stats.last_end, now);
            return;
          }
        if (G_UNLIKELY (s->mem.amodel_released))
          allocator_sync (s, t, ev->host_ns);
        break;
      }
    case VS_OP_FREE:
      /* The allocator takes the block back now (reusable by later work on
       * its stream); queued ops keep the allocation until they end. */
      amodel_free (s, ev->id, ev->t);
      if (ev->has_stream)
        {
          Op *op = op_issue (s, ev);   /* cudaFreeAsync: a launch */
          launch_queue_check (s, t, op, ev->host_ns);
        }
      else
        {
          Alloc *a = alloc_lookup (s, ev->id);
          if (a)
            alloc_release (s, a);
        }
      break;
    case VS_OP_COPY:
    case VS_OP_MEMSET:
    case VS_OP_KERNEL:
    case VS_OP_PREFETCH:
    case VS_OP_EVENT_RECORD:
    case VS_OP_STREAM_WAIT:
      {
        Op *op = op_issue (s, ev);
        if ((ev->op == VS_OP_COPY || ev->op == VS_OP_MEMSET) && call_waits_for_work (ev, op))
          {
            thread_block_on (t, &op->c);
            f = now;   /* returns when the work is done (below) */
          }
        else
          launch_queue_check (s, t, op, ev->host_ns);
        break;
      }
    case VS_OP_EMPTY_CACHE:
      /* Blocks waiting for other streams: the call waits for them first,
       * then frees the segments, which synchronizes the device. */
      s->mem.amodel_released = FALSE;
      if (amodel_empty_cache_wait (s, t, ev->t))
        {
          thread_block_device (s, t);
          f = now;
        }
      else
        {
          amodel_empty_cache (s, ev->t);
          if (G_UNLIKELY (s->mem.amodel_released))
            allocator_sync (s, t, ev->host_ns);
        }
      break;
    case VS_OP_SYNC:
      f = now;
      if (ev->scope == VS_SYNC_DEVICE)
        {
          amodel_sync (s, ev->t);
          thread_block_device (s, t);
        }
      else if (ev->scope == VS_SYNC_STREAM)
        {
          Stream *st = stream_find (s, ev->stream);
          if (st && st->last)
            thread_block_on (t, &st->last->c);
        }
      else
        {
          Op *rec = event_find (s, ev->event);
          if (rec)
            thread_block_on (t, &rec->c);
        }
      break;
    case VS_OP_MARK:
      {
        const char *name = ev->name ? ev->name : "";
        /* (The timeline draws it once known: a range's slice when its
         * /end comes, else a point: out/marks.part.c.) */
        marks_reached (s, t, name, now, ev->t);
        break;
      }
    default:
      break;
    }
  /* A blocking call returns at f = max(s, the awaited work's end) (5.2),
   * in thread_wait_done; one whose work is already done returns now (f
   * was set to now above). */
  if (t->waits == 0)
    thread_finish (s, t, f);
  /* Done with ev: the next event of the trace may now be read into it. */
  reader_advance (s);
}
