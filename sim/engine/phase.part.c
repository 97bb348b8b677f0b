/* phase.part.c — an op's phases (queued, swap-in, fault-in, running) and its
 * completion.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void alloc_release (Sim *s, Alloc *a);

/* How many of OP's allocations keep running counts, LRU order and
 * written/dirty state: all of them, or none when neither the spill policy
 * nor managed memory is involved (nothing reads that state then).
 * op_run counts them in, op_complete out. */
static inline guint
op_tracked (const Sim *s, const Op *op)
{
  return op->has_managed || s->mem.spill ? op->n_acc : 0;
}

static void
op_run (Sim *s, Op *op)
{
  op->run_t = s->core.now;
  for (guint i = 0, n = op_tracked (s, op); i < n; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind == VS_MEM_MANAGED && a->running == 0)
        s->mem.man_running_bytes += man_resident (s, a);
      a->running++;
      lru_touch (s, a);
      if (op->mode[i] & ACC_W)
        {
          a->written = TRUE;
          if (!a->dirty && a->below != LOC_NONE && a->kind == VS_MEM_DEVICE)
            {
              /* The copy below is stale now: give its room back. */
              loc_sub (s, a->below, a->charge);
              a->below = LOC_NONE;
            }
          a->dirty = TRUE;
          if (a->kind == VS_MEM_MANAGED)
            a->dirty_groups = a->resident_groups;
        }
    }
  Job *j = NULL;
  switch (op->type)
    {
    case VS_OP_KERNEL:
      kernel_run (s, op);
      if (op->waiting == 0)
        op_complete (s, op);
      return;
    case VS_OP_COPY:
      j = copy_job (s, op);
      break;
    case VS_OP_MEMSET:
      {
        guint p[VS_FLOW_MAX_PATH];
        int loc = op->dst ? alloc_loc (s, op->dst) : LOC_DEVICE;
        guint n = write_path (s, loc, p);
        j = job_new (s, 0);
        job_add_flow (j, (double) op->bytes, INFINITY, p, n);
        break;
      }
    case VS_OP_PREFETCH:
      j = prefetch_job (s, op);
      break;
    case VS_OP_FREE:
      if (op->target && !op->target->freed)
        alloc_release (s, op->target);
      break;
    default:
      break;
    }
  if (j == NULL)
    {
      op->alone_ns = 0;
      op_complete (s, op);
      return;
    }
  op->alone_ns = job_alone (s, j);
  op->waiting = 1;
  completion_wait (&j->c, op_resume, op, 0);
  job_start (s, j);
}

/* Moves OP through its phases: swap-in, fault-in, run. */
static void
op_phase (Sim *s, Op *op)
{
  for (;;)
    {
      double spent = s->core.now - op->phase_t;
      if (op->phase == PHASE_SWAP_IN)
        op->swap_ns += spent;
      else if (op->phase == PHASE_FAULT_IN)
        op->fault_ns += spent;
      else if (op->phase == PHASE_RUNNING)
        {
          op_complete (s, op);
          return;
        }
      op->phase++;       /* the next phase: OpPhase is in order */
      op->phase_t = s->core.now;
      op->waiting = 0;
      if (op->phase == PHASE_SWAP_IN)
        {
          if (s->mem.spill)
            swap_in (s, op);
        }
      else if (op->phase == PHASE_FAULT_IN)
        fault_in (s, op);
      else
        {
          op_run (s, op);
          return;
        }
      if (op->waiting > 0)
        return;
    }
}

/* OP is done: it leaves its stream, wakes its waiters and starts the
 * stream's next op. */
static inline __attribute__ ((always_inline)) void
op_leave (Sim *s, Op *op)
{
  Stream *st = op->st;
  g_assert (st->head == op);
  st->head = op->next;
  if (st->head == NULL)
    {
      st->tail = NULL;
      if (st->busy_prev) st->busy_prev->busy_next = st->busy_next; else s->gpu.busy = st->busy_next;
      if (st->busy_next) st->busy_next->busy_prev = st->busy_prev;
      st->busy_prev = st->busy_next = NULL;
    }
  op->next = NULL;
  completion_fire (s, &op->c);
  if (st->head)
    op_try_start (s, st->head);
  op_unref (op);         /* the stream's queue */
}

static void
op_complete (Sim *s, Op *op)
{
  if (op->c.done)
    return;
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (--a->users == 0 && a->free_deferred)
        {
          /* Freed by the host while this op was queued (alloc_release). */
          a->free_deferred = FALSE;
          alloc_release_charges (s, a);
        }
    }
  double end = s->core.now;
  if (op->started && --s->stats.gpu_running == 0)
    {
      s->stats.gpu_busy_ns += end - s->stats.gpu_since;
      s->stats.gpu_idle_t = end;
    }
  double run = end - op->run_t;
  double contention = MAX (0.0, run - op->alone_ns);
  /* Rounding of fluid times is not contention. */
  if (contention < 1e-6 * MAX (1.0, op->alone_ns))
    contention = 0;
  s->stats.contention_ns += contention;
  s->stats.swap_ns += op->swap_ns;
  s->stats.fault_ns += op->fault_ns;
  s->stats.ce_ns += op->ce_ns;
  s->stats.last_end = MAX (s->stats.last_end, end);
  for (guint i = 0, n = op_tracked (s, op); i < n; i++)
    {
      Alloc *a = op->acc[i];
      if (--a->running == 0 && a->kind == VS_MEM_MANAGED)
        s->mem.man_running_bytes -= man_resident (s, a);
    }
  if (op->type == VS_OP_KERNEL)
    {
      stats_kernel (s, op, end);
      coll_note (s, op, -1);
      if (G_UNLIKELY (op->has_coll))
        coll_done (s, op, end);
    }
  if (G_UNLIKELY (s->out.timeline))
    timeline_op (s, op, end);
  if (op->ce != CE_NONE)
    {
      s->gpu.ce_busy[op->ce]--;
      Op *next = g_queue_pop_head (&s->gpu.ce_queue[op->ce]);
      if (next)
        {
          next->ce_ns += s->core.now - next->ready_t;
          s->gpu.ce_busy[op->ce]++;
          op_begin (s, next);
        }
    }
  op_leave (s, op);
}

/* An event_record or stream_wait (marker_issue). */
static inline gboolean
op_is_marker (const Op *op)
{
  G_STATIC_ASSERT (VS_OP_STREAM_WAIT == VS_OP_EVENT_RECORD + 1);
  return (guint) op->type - VS_OP_EVENT_RECORD <= 1u;
}

/* Marker OP started (op_try_start) and is done now: what op_complete
 * does for an op of no accesses, no time and no copy engine. The GPU's
 * running count would rise and fall at once (the busy time gains 0), so
 * only its idle time moves, when nothing else runs. */
static __attribute__ ((noinline)) void
marker_done (Sim *s, Op *op)
{
  double now = s->core.now;
  op->phase = PHASE_RUNNING;
  op->phase_t = op->run_t = now;
  op->alone_ns = 0;
  if (s->stats.gpu_running == 0)
    s->stats.gpu_idle_t = now;
  s->stats.last_end = MAX (s->stats.last_end, now);
  op_leave (s, op);
}
