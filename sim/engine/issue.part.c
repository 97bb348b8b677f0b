/* issue.part.c — issuing one host event: the switch over its op.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

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
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      {
        GPtrArray *jobs = jobs_take (s);
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
        break;
      }
    case VS_OP_FREE:
      /* The allocator takes the block back now (reusable by later work on
       * its stream); queued ops keep the allocation until they end. */
      amodel_free (s, ev->id, ev->t);
      if (ev->has_stream)
        {
          op_issue (s, ev);
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
        if ((ev->op == VS_OP_COPY || ev->op == VS_OP_MEMSET) && !ev->async)
          {
            thread_block_on (t, &op->c);
            f = now;   /* returns when the work is done (below) */
          }
        break;
      }
    case VS_OP_EMPTY_CACHE:
      /* Blocks waiting for other streams: the call waits for them first. */
      if (amodel_empty_cache_wait (s, t, ev->t))
        f = now;
      else
        amodel_empty_cache (s, ev->t);
      break;
    case VS_OP_SYNC:
      f = now;
      if (ev->scope == VS_SYNC_DEVICE)
        {
          amodel_sync (s, ev->t);
          /* A stream with nothing queued has finished its last op. */
          for (Stream *st = s->gpu.busy; st; st = st->busy_next)
            thread_block_on (t, &st->last->c);
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
        marks_reached (s, t, name, now, ev->t);
        if (G_UNLIKELY (s->out.timeline))
          timeline_mark (s, t, name, now);
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
