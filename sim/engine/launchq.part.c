/* launchq.part.c — the launch queue (SPEC 5.2): the driver holds at most
 * gpu.launch_queue ops queued on the device and not yet started; a launch
 * made while it holds that many blocks its host thread until one starts.
 * So a host cannot run ahead of a slower GPU without limit.
 *
 * Assumptions (docs/model.md 2, "The launch queue"; the default's source
 * in docs/config.md):
 *  - The bound is one count for the device, over every op put on a stream
 *    (kernel, copy, memset, prefetch, event record, stream wait, a
 *    stream-ordered free): each takes a slot of the driver's queue until
 *    it starts. An op waiting for a copy engine has started (it left its
 *    stream).
 *  - The op enters its stream when its call starts, as before: a launch
 *    that blocks is behind queue-many ops anyway; only its host thread
 *    waits.
 *  - The wait overlaps the call's captured host_ns: at capture, a launch
 *    that found the queue full spent its wait inside host_ns, so a replay
 *    on the capture config must not add it again. The call returns at
 *    max(s + host_ns, the time a slot frees). (What the launch itself costs
 *    after its wait cannot be told apart from the capture's wait: when the
 *    target's GPU is slower, the call returns when its slot frees, at most
 *    one launch's CPU cost early while the GPU bounds the host anyway.)
 *  - Threads blocked on the queue are woken first blocked, first woken.
 *
 * Cost: two counter updates per op on the hot path (op_issue, op_try_start)
 * and one compare per launch; the rest is here, out of line.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
launch_queue_setup (Sim *s)
{
  guint q = s->core.cfg->gpu.launch_queue;
  s->gpu.lq_cap = q == 0 ? G_MAXUINT : q;
  g_queue_init (&s->host.lq_waiters);
}

/* T's launch (its op issued: counted in lq_unstarted) found the device
 * holding more than the bound: T waits for a slot, returning at
 * max(its start + HOST_NS, the slot). */
static __attribute__ ((noinline)) void
launch_queue_block (Sim *s, Thread *t, guint64 host_ns)
{
  t->waits++;
  t->wait_h = i2d (host_ns);
  s->stats.lq_waits++;
  g_queue_push_tail (&s->host.lq_waiters, t);
}

/* An op started: wake the first blocked launches while the device, not
 * counting the ops of the launches still waiting behind them (they would
 * not be in the driver's queue yet), holds at most the bound. */
static __attribute__ ((noinline)) void
launch_queue_release (Sim *s)
{
  while (s->host.lq_waiters.length > 0
         && (guint64) s->gpu.lq_unstarted <= (guint64) s->gpu.lq_cap + s->host.lq_waiters.length - 1)
    {
      Thread *t = g_queue_pop_head (&s->host.lq_waiters);
      double floor = t->s_cur + t->wait_h;
      if (s->core.now > floor)
        s->stats.lq_blocked_ns += s->core.now - floor;
      thread_wait_done (s, t, 0);
    }
}

/* Called by op_try_start for each op that starts. */
static inline __attribute__ ((always_inline)) void
launch_queue_started (Sim *s)
{
  s->gpu.lq_unstarted--;
  if (G_UNLIKELY (s->host.lq_waiters.length > 0))
    launch_queue_release (s);
}

/* After op_issue of T's launch OP (not a blocking call): whether T must
 * wait for the queue, and if so makes it wait. */
static inline __attribute__ ((always_inline)) void
launch_queue_check (Sim *s, Thread *t, const Op *op, guint64 host_ns)
{
  if (G_UNLIKELY (s->gpu.lq_unstarted > s->gpu.lq_cap) && !op->started)
    launch_queue_block (s, t, host_ns);
}

static void
launch_queue_report (Sim *s, cJSON *host)
{
  cJSON_AddNumberToObject (host, "launch_queue", s->core.cfg->gpu.launch_queue);
  cJSON_AddNumberToObject (host, "launch_queue_waits", (double) s->stats.lq_waits);
  cJSON_AddNumberToObject (host, "launch_queue_blocked_ns", round (s->stats.lq_blocked_ns));
}

static void
launch_queue_teardown (Sim *s)
{
  g_queue_clear (&s->host.lq_waiters);
}
