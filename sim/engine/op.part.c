/* op.part.c — ops (5.3): issuing one from its event onto its stream, and
 * when it may start (launch latency, dependencies, a copy engine).
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* op_issue's work for a timeline (the captured op beside the predicted
 * one) and the legacy default stream (its implicit dependencies). */
static __attribute__ ((noinline)) void
op_issue_extra (Sim *s, Op *op, const VsEvent *ev)
{
  Stream *st = op->st;
  if (s->out.timeline)
    timeline_captured (s, st, ev);
  if (s->core.cfg->gpu.legacy_default_stream)
    {
      if (st->id == 0)
        {
          for (Stream *o = s->gpu.busy; o; o = o->busy_next)
            if (o != st)
              op_depend (op, o->last);
        }
      else
        {
          Stream *z = stream_find (s, 0);
          if (z)
            op_depend (op, z->last);
        }
    }
}

/* A kernel's inferred accesses (model.touches, docs/model.md 6b): made
 * ones written, the rest read. Only allocations live here (with several
 * threads the replay's order can differ from the file's). Once the
 * inference passes everything through (a trace that names its accesses),
 * the trace's reader is read directly again: the event being issued,
 * the inference's, stays valid (it is freed at teardown). */
static __attribute__ ((noinline)) void
op_infer (Sim *s, Op *op)
{
  if (infer_passthrough (s->core.infer))
    {
      infer_stats (s->core.infer, &s->core.infer_st);
      s->core.reader = s->core.trace;
      s->core.infer_done = s->core.infer;
      s->core.infer = NULL;
      return;
    }
  const guint64 *ids;
  const guint8 *wr;
  guint n = infer_accesses (s->core.infer, &ids, &wr);
  for (guint i = 0; i < n; i++)
    if (alloc_find (s, ids[i]) != NULL)
      {
        acc_add (s, op, ids[i], wr[i] ? ACC_W : ACC_R);
        op->kinds |= OP_INFERRED;
      }
}

/* A recycled op, or a new one. Only what a released op does not hold
 * already is set here (op_issue and marker_issue set the rest): a
 * released op has completed, so its completion has no waiters (fired),
 * no dependencies or retry left and no references; op_release cleared
 * its src, dst and target and put back its inline access arrays;
 * op_begin sets its phase and waiting count.
 * Field by field is several times cheaper than a memset of the struct
 * (measured: its `rep stos` was 5 % of replay time). */
static inline __attribute__ ((always_inline)) Op *
op_alloc (Sim *s)
{
  Op *op = s->gpu.free_ops;
  if (op != NULL)
    {
      s->gpu.free_ops = op->next;
      op->c.done = FALSE;
      op->next = NULL;
      op->started = FALSE;
      op->n_acc = 0;
    }
  else
    {
      op = g_new0 (Op, 1);
      op->acc = op->acc_inline;   /* op_release puts them back */
      op->mode = op->mode_inline;
      op->acc_cap = OP_INLINE_ACC;
      g_ptr_array_add (s->gpu.ops_made, op);
    }
  op->pool = &s->gpu.free_ops;
  /* The stream's `last` (taken in op_enqueue): it keeps the op alive
   * while its caller uses it, until the stream's next op is issued. */
  op->c.refs = 1;
  op->ce = CE_NONE;
  op->issue_t = s->core.now;
  return op;
}

/* Queues OP (issued from EV) on its stream ST, starting it if it is the
 * stream's head. */
static inline __attribute__ ((always_inline)) void
op_enqueue (Sim *s, Op *op, Stream *st, const VsEvent *ev)
{
  op->st = st;
  if (G_UNLIKELY (s->gpu.issue_extra))
    op_issue_extra (s, op, ev);
  op->c.refs++;          /* the stream's queue */
  s->gpu.lq_unstarted++;   /* a slot of the launch queue until it starts (launchq.part.c) */
  if (st->tail)
    st->tail->next = op;
  else
    {
      st->head = op;
      st->busy_prev = NULL;
      st->busy_next = s->gpu.busy;
      if (s->gpu.busy)
        s->gpu.busy->busy_prev = st;
      s->gpu.busy = st;
    }
  st->tail = op;
  op_unref (st->last);
  st->last = op;         /* the reference taken in op_alloc */
  if (st->head == op)
    op_try_start (s, op);
}

/* An event_record or a stream_wait: a marker in its stream. It takes a
 * launch-queue slot and its launch latency like any op, and completes
 * the moment it starts (op_try_start: marker_done), but it has no
 * accesses, no phases and no flows, so it skips all of that. A record
 * is the event's (events map) until the event is recorded again; a wait
 * depends on the event's last record (if any, and not yet complete). */
static __attribute__ ((noinline)) Op *
marker_issue (Sim *s, const VsEvent *ev)
{
  Op *op = op_alloc (s);
  op->type = ev->op;
  op->index = ev->index;
  op->kinds = 0;
  op->has_managed = op->has_pinned = FALSE;
  op->has_coll = FALSE;
  op->name = ev->name;
  op->bytes = ev->bytes;
  if (ev->op == VS_OP_STREAM_WAIT)
    op_depend (op, event_find (s, ev->event));
  else
    {
      Op **slot = event_slot (s, ev->event);
      Op *old = *slot;
      op->c.refs++;      /* the events map's */
      *slot = op;
      op_unref (old);
    }
  op_enqueue (s, op, stream_get (s, ev->stream), ev);
  return op;
}

/* Creates the op for event EV of thread T and queues it on its stream. */
static Op *
op_issue (Sim *s, const VsEvent *ev)
{
  if (G_UNLIKELY (ev->op == VS_OP_EVENT_RECORD || ev->op == VS_OP_STREAM_WAIT))
    return marker_issue (s, ev);
  Op *op = op_alloc (s);
  /* ready_t, phase_t, run_t and alone_ns are set before they are read
   * (op_try_start, op_begin, op_run, kernel_run). */
  op->swap_ns = op->fault_ns = op->ce_ns = 0;
  op->type = ev->op;
  op->index = ev->index;
  op->dir = ev->dir;
  op->to = ev->to;
  op->async = ev->async;
  op->bytes = ev->bytes;
  op->dur = ev->dur;
  op->compute_ns = ev->compute_ns;
  op->name = ev->name;
  op->has_coll = ev->collective != NULL && ev->op == VS_OP_KERNEL;
  if (G_UNLIKELY (op->has_coll))
    op->coll = *ev->collective;
  if (ev->op == VS_OP_KERNEL)
    {
      op->flops = ev->shape != NULL ? ev->shape->flops : VS_NONE;
      op->kf = kernel_factors (s, ev);
    }
  acc_begin (s, op);
  switch (ev->op)
    {
    case VS_OP_KERNEL:
      if (ev->n_reads + ev->n_writes + ev->n_touches <= OP_INLINE_ACC)
        acc_add_few (s, op, ev);
      else
        {
          for (guint i = 0; i < ev->n_reads; i++) acc_add (s, op, ev->reads[i], ACC_R);
          for (guint i = 0; i < ev->n_writes; i++) acc_add (s, op, ev->writes[i], ACC_W);
          for (guint i = 0; i < ev->n_touches; i++) acc_add (s, op, ev->touches[i], ACC_R | ACC_W | ACC_TOUCH);
        }
      if (G_UNLIKELY (s->core.infer != NULL))
        op_infer (s, op);
      break;
    case VS_OP_COPY:
      op->src = ref (alloc_lookup (s, ev->src));
      op->dst = ref (alloc_lookup (s, ev->dst));
      /* The device side must be resident; pinned and pageable host sides are not. */
      if (op->src && op->src->kind != VS_MEM_PINNED && ev->dir != VS_DIR_H2D)
        acc_add (s, op, ev->src, ACC_R);
      if (op->dst && op->dst->kind != VS_MEM_PINNED && ev->dir != VS_DIR_D2H && ev->dir != VS_DIR_P2P)
        acc_add (s, op, ev->dst, ACC_W);
      if (!s->core.cfg->unified)
        op->ce = ev->dir == VS_DIR_H2D ? 0 : (ev->dir == VS_DIR_D2D ? CE_NONE : 1);
      break;
    case VS_OP_MEMSET:
      op->dst = ref (alloc_lookup (s, ev->dst));
      if (op->dst && op->dst->kind != VS_MEM_PINNED)
        acc_add (s, op, ev->dst, ACC_W);
      break;
    case VS_OP_PREFETCH:
    case VS_OP_FREE:
      op->target = ref (alloc_lookup (s, ev->id));
      break;
    default:
      break;
    }
  acc_end (op);

  Stream *st = stream_get (s, ev->stream);
  /* record_stream (alloc-streams.part.c); not for inferred accesses,
   * which say what must be resident, not which stream used a block */
  if (G_UNLIKELY (s->mem.amodel != NULL) && !(op->kinds & OP_INFERRED))
    amodel_uses (s, st, op->acc, op->n_acc);
  op_enqueue (s, op, st, ev);
  return op;
}

static void
op_resume (Sim *s, gpointer obj, guint64 arg)
{
  Op *op = obj;
  if (--op->waiting == 0)
    op_phase (s, op);
}

static void
op_wait_job (Op *op, Job *j)
{
  if (j == NULL || j->c.done)
    return;
  op->waiting++;
  completion_wait (&j->c, op_resume, op, 0);
}

/* OP may start now: through its phases, or straight to running when no
 * policy can have moved its memory (no swap-in, no fault-in to do). */
static void
op_begin (Sim *s, Op *op)
{
  op->waiting = 0;
  if (!s->mem.spill && (!op->has_managed || s->core.cfg->unified))
    {
      op->phase = PHASE_RUNNING;
      op->phase_t = s->core.now;
      op_run (s, op);
      return;
    }
  op->phase = PHASE_QUEUED;
  op_phase (s, op);
}

static void
op_try_start (Sim *s, Op *op)
{
  if (op->started || op->st->head != op || op->deps > 0)
    return;
  double ready = op->issue_t + s->core.cfg->gpu.launch_latency_ns;
  if (s->core.now < ready)
    {
      if (!op->retry_pending)
        {
          op->retry_pending = TRUE;
          op->c.refs++;
          evq_push (s->core.q, ready, EQ_OP_RETRY, op, 0);
        }
      return;
    }
  op->started = TRUE;
  launch_queue_started (s);
  op->ready_t = s->core.now;
  if (G_UNLIKELY (op_is_marker (op)))
    {
      marker_done (s, op);
      return;
    }
  if (s->stats.gpu_running++ == 0)
    s->stats.gpu_since = s->core.now;
  if (op->ce != CE_NONE && s->gpu.ce_busy[op->ce] >= s->core.cfg->link.copy_engines)
    {
      g_queue_push_tail (&s->gpu.ce_queue[op->ce], op);
      return;
    }
  if (op->ce != CE_NONE)
    s->gpu.ce_busy[op->ce]++;
  op_begin (s, op);
}
