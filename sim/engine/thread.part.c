/* thread.part.c — host threads (5.2): each tid an actor issuing its calls in
 * trace order, CPU gaps kept, waits re-simulated.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"


/* The thread before the last one first: a trace's events alternate
 * between a few threads (a loader and the main thread), and the map
 * took 70 instructions a switch. */
static __attribute__ ((noinline)) Thread *
thread_get_slow (Sim *s, guint32 tid)
{
  Thread *t = s->host.prev_thread;
  if (t != NULL && t->tid == tid)
    {
      s->host.prev_thread = s->host.last_thread;
      s->host.last_thread = t;
      return t;
    }
  t = g_hash_table_lookup (s->host.threads, GUINT_TO_POINTER (tid));
  if (t == NULL)
    {
      t = g_new0 (Thread, 1);
      t->tid = tid;
      t->idle = TRUE;
      g_hash_table_insert (s->host.threads, GUINT_TO_POINTER (tid), t);
      g_ptr_array_add (s->host.thread_list, t);
    }
  s->host.prev_thread = s->host.last_thread;
  s->host.last_thread = t;
  return t;
}

static inline Thread *
thread_get (Sim *s, guint32 tid)
{
  Thread *t = s->host.last_thread;
  if (G_LIKELY (t != NULL && t->tid == tid))
    return t;
  return thread_get_slow (s, tid);
}

/* The captured span: the earliest t and the latest end of a host call
 * or of the GPU work of a kernel, copy or memset. Written as selections
 * (conditional moves): which end is the later one varies from event to
 * event, and the branches were mispredicted often. cap_first_t starts at
 * G_MAXUINT64 and cap_last_end at 0 (sim_setup). */
static inline __attribute__ ((always_inline)) void
note_captured (Sim *s, const VsEvent *ev)
{
  s->stats.cap_first_t = MIN (s->stats.cap_first_t, ev->t);
  s->stats.cap_last_end = MAX (s->stats.cap_last_end, event_captured_end (ev));
  s->stats.cap_have = TRUE;
}

/* T is idle and holds the next event of the trace: issue it at
 * s_i = f_{i-1} + max(0, t_i - (t_{i-1} + h_{i-1})) (SPEC 5.2), the first
 * event of a thread at its t, and never before now. */
static inline __attribute__ ((always_inline)) void
thread_schedule (Sim *s, Thread *t)
{
  double at = i2d (s->core.ev.t);
  if (t->has_prev)
    {
      /* The gap in integer ns (exact), one conversion. Masked rather
       * than branched on: whether there is a gap varies from call to
       * call, and the branch was mispredicted often. */
      guint64 end = t->issued_t + t->issued_h;   /* of the previous call */
      guint64 gap = (s->core.ev.t - end) & -(guint64) (s->core.ev.t > end);
      at = t->f_prev + i2d (gap);
    }
  /* Calls are issued in trace order, so at most one issue is pending: it
   * waits in a slot of its own rather than in the event queue. */
  g_assert (s->host.issue_thread == NULL);
  s->host.issue_thread = t;
  s->host.issue_t = MAX (at, s->core.now);
  /* Held past its own time for other threads' calls: waiting, not work
   * (the steady state's host work per step, out/marks.part.c). */
  t->waited_ns += s->host.issue_t - at;
}

/* A thread that has no more events: close its open mark. */
static void
thread_end (Sim *s, Thread *t)
{
  t->ended = TRUE;
  marks_thread_end (s, t);
}

/* Reads the next event of the trace and hands it to its thread, which
 * issues it when it is idle. Threads issue their calls in the order of
 * the file (the captured order across threads: docs/model.md 2), so only
 * one event is ever read ahead. */
static inline __attribute__ ((always_inline)) void
reader_advance (Sim *s)
{
  VsEvent *ev = &s->core.ev;
  if (s->core.halt || s->core.eof)
    return;
  /* --sample-steps: steady, the rest of the trace is read after the
   * loop (engine/sample.part.c): here it ends. */
  if (G_UNLIKELY (s->core.sample_stop) || !trace_next (s->core.reader, ev, &s->core.error))
    {
      s->core.eof = TRUE;
      s->core.halt = s->core.error != NULL;
      if (s->core.error == NULL)
        for (guint i = 0; i < s->host.thread_list->len; i++)
          {
            Thread *t = s->host.thread_list->pdata[i];
            if (t->idle && !t->ended)
              thread_end (s, t);
          }
      return;
    }
  s->stats.n_events++;
  note_captured (s, ev);
  if (!s->core.have_t0)
    {
      s->core.now = s->core.t0 = s->stats.last_end = (double) ev->t;
      s->core.have_t0 = TRUE;
      if (G_UNLIKELY (s->out.series))
        series_begin (s);
    }
  Thread *t = thread_get (s, ev->tid);
  t->has_cur = TRUE;
  if (t->idle)
    thread_schedule (s, t);
}

/* The current call of T ended at F. */
static inline __attribute__ ((always_inline)) void
thread_finish (Sim *s, Thread *t, double f)
{
  t->has_prev = TRUE;
  t->f_prev = f;
  t->idle = TRUE;
  s->stats.last_end = MAX (s->stats.last_end, f);
  if (s->core.stopped)
    return;
  if (t->has_cur)
    thread_schedule (s, t);
  else if (s->core.eof)
    thread_end (s, t);
}

static void
thread_wait_done (Sim *s, gpointer obj, guint64 arg)
{
  Thread *t = obj;
  if (--t->waits > 0)
    return;
  /* A sync returns at max(s, the wake) (5.2); a wait the captured host_ns
   * already holds at max(s + host_ns, the wake) (wait_h: launchq.part.c). */
  double floor = t->s_cur + t->wait_h;
  double f = MAX (floor, s->core.now);
  s->stats.blocked_ns += f - floor;
  t->waited_ns += f - floor;
  if (G_UNLIKELY (s->out.timeline))
    timeline_host_wait (s, t, f);
  thread_finish (s, t, f);
}

static void
thread_block_on (Thread *t, Completion *c)
{
  if (c == NULL || c->done)
    return;
  t->waits++;
  completion_wait (c, thread_wait_done, t, 0);
}
