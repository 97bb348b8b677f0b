/* loop.part.c — the main loop: the event queue and flow completions in time
 * order.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
on_flow_done (gpointer user, gpointer owner, guint64 tag)
{
  Sim *s = user;
  if (tag == 1)
    {
      Job *j = owner;
      if (--j->pending == 0)
        job_finish (s, j);
    }
  else
    {
      Op *op = owner;
      if (--op->waiting == 0)
        op_complete (s, op);
    }
}

static inline void
progress (Sim *s)
{
  if (G_LIKELY (s->stats.n_events < s->stats.next_progress))
    return;
  s->stats.last_progress = s->stats.n_events;
  s->stats.next_progress = s->stats.n_events + 1000000;
  fprintf (stderr, "\rvramsim: replayed %" G_GUINT64_FORMAT " events", s->stats.n_events);
}

static void
sim_loop (Sim *s)
{
  VsEvqItem it;
  while (!s->core.halt)
    {
      double te = evq_peek_time (s->core.q);
      double tf = flow_net_next_end (s->core.net);
      double ti = s->host.issue_t;
      if (tf <= te && tf <= ti)
        {
          if (G_UNLIKELY (isinf (tf)))
            break;   /* all three are: nothing left to do */
          s->core.now = MAX (s->core.now, tf);
          flow_net_finish_due (s->core.net, s->core.now, on_flow_done, s);
        }
      else if (ti < te)
        {
          Thread *t = s->host.issue_thread;
          s->host.issue_thread = NULL;
          s->host.issue_t = INFINITY;
          s->core.now = MAX (s->core.now, ti);
          thread_issue (s, t);
          progress (s);
        }
      else
        {
          evq_pop (s->core.q, &it);
          s->core.now = MAX (s->core.now, it.t);
          switch (it.kind)
            {
            case EQ_OP_RETRY:
              {
                Op *op = it.obj;
                op->retry_pending = FALSE;
                op_try_start (s, op);
                op_unref (op);
                break;
              }
            case EQ_JOB_DELAY:
              job_run_flows (s, it.obj);
              break;
            }
        }
    }
  if (s->core.opts->progress && s->stats.last_progress)
    fputc ('\n', stderr);
}
