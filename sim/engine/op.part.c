/* op.part.c — ops on streams (5.3): streams, an op's allocations, issuing an
 * op and when it may start.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void op_try_start (Sim *s, Op *op);
static void op_complete (Sim *s, Op *op);
static void op_phase (Sim *s, Op *op);
static void op_run (Sim *s, Op *op);

static __attribute__ ((noinline)) Stream *
stream_find_slow (Sim *s, guint64 id)
{
  guint64 *v = u64map_lookup (&s->gpu.streams, id + 1);
  Stream *st = v ? GSIZE_TO_POINTER (*v) : NULL;
  if (st)
    s->gpu.last_stream = st;
  return st;
}

static inline Stream *
stream_find (Sim *s, guint64 id)
{
  Stream *st = s->gpu.last_stream;
  if (G_LIKELY (st != NULL && st->id == id))
    return st;   /* ops come in runs on one stream */
  return stream_find_slow (s, id);
}

static Stream *
stream_get (Sim *s, guint64 id)
{
  Stream *st = stream_find (s, id);
  if (st == NULL)
    {
      st = g_new0 (Stream, 1);
      st->id = id;
      u64map_insert (&s->gpu.streams, id + 1, GPOINTER_TO_SIZE (st));
      g_ptr_array_add (s->gpu.stream_list, st);
      if (G_UNLIKELY (s->out.timeline))
        timeline_stream (s, id);
    }
  return st;
}

static void
op_dep_done (Sim *s, gpointer obj, guint64 arg)
{
  Op *op = obj;
  if (--op->deps == 0)
    op_try_start (s, op);
  op_unref (op);
}

static void
op_depend (Op *op, Op *on)
{
  if (on == NULL || on->c.done || on == op)
    return;
  op->deps++;
  op->c.refs++;
  completion_wait (&on->c, op_dep_done, op, 0);
}

static inline Op *
event_find (Sim *s, guint64 event)
{
  guint64 *v = u64map_lookup (&s->gpu.events, event + 1);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

/* The live allocation ID, or NULL. */
static inline Alloc *
alloc_find (Sim *s, guint64 id)
{
  guint64 *v = slotmap_lookup (&s->mem.allocs, id);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

/* The live allocation ID, or NULL (0 names none), counting references to
 * ids that are not live. */
static inline Alloc *
alloc_lookup (Sim *s, guint64 id)
{
  if (id == 0)
    return NULL;
  Alloc *a = alloc_find (s, id);
  if (G_UNLIKELY (a == NULL))
    s->stats.unknown_refs++;
  return a;
}

/* The allocations an op uses, each once with its access modes: built in
 * Sim's scratch arrays, deduplicated in O(1) by a stamp on the allocation
 * (a kernel may name thousands of ids). */
static void
acc_begin (Sim *s, Op *op)
{
  s->gpu.acc_gen++;
  op->acc = op->acc_inline;
  op->mode = op->mode_inline;
  op->acc_cap = OP_INLINE_ACC;
  op->kinds = 0;
}

static inline void acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id,
                                guint8 m, guint *kinds, gboolean ref);

/* Adds allocation ID with MODE to the op (once per allocation: modes
 * merge), growing its arrays past the inline ones when needed. */
static inline void
acc_add (Sim *s, Op *op, guint64 id, guint8 mode)
{
  if (G_UNLIKELY (op->n_acc == op->acc_cap))
    {
      /* Longer than the inline arrays: move to the heap, then double. */
      guint cap = 2 * op->acc_cap;
      if (op->acc == op->acc_inline)
        {
          op->acc = g_memdup2 (op->acc_inline, OP_INLINE_ACC * sizeof (Alloc *));
          op->mode = g_memdup2 (op->mode_inline, OP_INLINE_ACC);
        }
      op->acc = g_renew (Alloc *, op->acc, cap);
      op->mode = g_renew (guint8, op->mode, cap);
      op->acc_cap = cap;
    }
  guint n = op->n_acc, kinds = op->kinds;
  acc_add_one (s, op->acc, op->mode, &n, s->gpu.acc_gen, id, mode, &kinds, TRUE);
  op->n_acc = n;
  op->kinds = kinds;
}

/* Adds allocation ID with mode M to ACC/MODE (N entries, room for one
 * more), or merges M into its entry. A new entry adds 1 << its kind to
 * KINDS and, if REF, takes a reference on the allocation. Arrays and
 * count are passed as locals: the mode bytes it stores may alias
 * anything, which would make the compiler reload an op's fields after
 * every store. */
static inline void
acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id, guint8 m, guint *kinds,
             gboolean ref)
{
  Alloc *a = alloc_lookup (s, id);
  if (a == NULL)
    return;
  if (a->acc_gen == gen)
    {
      mode[a->acc_idx] |= m;
      return;
    }
  a->acc_gen = gen;
  a->acc_idx = *n;
  if (ref)
    a->refs++;
  *kinds |= 1u << a->kind;
  acc[*n] = a;
  mode[(*n)++] = m;
}

/* acc_add for a kernel whose ids fit the op's inline arrays (the common
 * case). References are taken after the list is built, and only when
 * the op keeps it: a kernel that reaches only device memory, whose
 * traffic is given, needs its allocations for nothing after this
 * (kernel_run starts it from its bytes, nothing tracks them) and keeps
 * none. */
static void
acc_add_few (Sim *s, Op *op, const VsEvent *ev)
{
  Alloc **acc = op->acc_inline;
  guint8 *mode = op->mode_inline;
  guint n = 0, kinds = 0;
  guint64 gen = s->gpu.acc_gen;
  for (guint i = 0; i < ev->n_reads; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->reads[i], ACC_R, &kinds, FALSE);
  for (guint i = 0; i < ev->n_writes; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->writes[i], ACC_W, &kinds, FALSE);
  for (guint i = 0; i < ev->n_touches; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->touches[i], ACC_R | ACC_W | 4, &kinds, FALSE);
  op->kinds = kinds;
  if (s->mem.dev_only && ev->bytes != VS_NONE && !(kinds & (1u << VS_MEM_MANAGED | 1u << VS_MEM_PINNED)))
    n = 0;
  for (guint i = 0; i < n; i++)
    acc[i]->refs++;
  op->n_acc = n;
}

/* What the op's accesses tell: whether it uses managed memory (fault_in
 * has work) and pinned host memory. */
static inline void
acc_end (Op *op)
{
  op->has_managed = (op->kinds >> VS_MEM_MANAGED) & 1;
  op->has_pinned = (op->kinds >> VS_MEM_PINNED) & 1;
}

/* The bytes a kernel's reads and writes name (5.4): an id read and
 * written counts twice, a touched one once. Summed in the order of the
 * accesses (the rounding of large sizes depends on it). Only kernel_run
 * needs it, and only when the kernel's traffic is not given or must be
 * split over locations. */
static double
op_wsum (const Op *op)
{
  double wsum = 0;
  Alloc *const *acc = op->acc;
  const guint8 *mode = op->mode;
  for (guint i = 0, n = op->n_acc; i < n; i++)
    {
      double sz = i2d (acc[i]->bytes);
      if (mode[i] & (ACC_R | 4)) wsum += sz;
      if ((mode[i] & ACC_W) && !(mode[i] & 4)) wsum += sz;
    }
  return wsum;
}

static Alloc *
ref (Alloc *a)
{
  if (a)
    a->refs++;
  return a;
}

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

/* Creates the op for event EV of thread T and queues it on its stream. */
static Op *
op_issue (Sim *s, const VsEvent *ev)
{
  Op *op = s->gpu.free_ops;
  if (op != NULL)
    {
      s->gpu.free_ops = op->next;
      /* Every field is set below or here: field by field is several
       * times cheaper than a memset of the struct (measured: its `rep
       * stos` was 5 % of replay time). */
      op->c = (Completion) { 0 };
      op->next = NULL;
      op->deps = 0;
      op->retry_pending = op->started = FALSE;
      op->phase = op->waiting = 0;
      /* ready_t, phase_t, run_t and alone_ns are set before they are
       * read (op_try_start, op_begin, op_run, kernel_run). */
      op->swap_ns = op->fault_ns = op->ce_ns = 0;
      op->n_acc = 0;
      op->src = op->dst = op->target = NULL;
      op->wait_for = NULL;
    }
  else
    {
      op = g_new0 (Op, 1);
      g_ptr_array_add (s->gpu.ops_made, op);
    }
  op->pool = &s->gpu.free_ops;
  /* The stream's `last` (taken below): it keeps the op alive while its
   * caller uses it, until the stream's next op is issued. */
  op->c.refs = 1;
  op->type = ev->op;
  op->index = ev->index;
  op->dir = ev->dir;
  op->to = ev->to;
  op->async = ev->async;
  op->bytes = ev->bytes;
  op->dur = ev->dur;
  op->compute_ns = ev->compute_ns;
  op->name = ev->name;
  if (ev->op == VS_OP_KERNEL)
    {
      op->flops = ev->shape != NULL ? ev->shape->flops : VS_NONE;
      op->kf = kernel_factors (s, ev);
    }
  op->ce = -1;
  op->issue_t = s->core.now;
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
          for (guint i = 0; i < ev->n_touches; i++) acc_add (s, op, ev->touches[i], ACC_R | ACC_W | 4);
        }
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
        op->ce = ev->dir == VS_DIR_H2D ? 0 : (ev->dir == VS_DIR_D2D ? -1 : 1);
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
    case VS_OP_STREAM_WAIT:
      {
        Op *rec = event_find (s, ev->event);
        if (rec)
          {
            rec->c.refs++;
            op->wait_for = rec;
            op_depend (op, rec);
          }
      }
      break;
    case VS_OP_EVENT_RECORD:
      {
        Op *old = event_find (s, ev->event);
        op->c.refs++;
        u64map_insert (&s->gpu.events, ev->event + 1, GPOINTER_TO_SIZE (op));
        op_unref (old);
      }
      break;
    default:
      break;
    }
  acc_end (op);

  Stream *st = stream_get (s, ev->stream);
  op->st = st;
  if (G_UNLIKELY (s->gpu.issue_extra))
    op_issue_extra (s, op, ev);
  op->c.refs++;          /* the stream's queue */
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
  st->last = op;         /* the reference taken at the start */
  if (st->head == op)
    op_try_start (s, op);
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
      op->phase = 3;
      op->phase_t = s->core.now;
      op_run (s, op);
      return;
    }
  op->phase = 0;
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
  op->ready_t = s->core.now;
  if (op->ce >= 0 && s->gpu.ce_busy[op->ce] >= s->core.cfg->link.copy_engines)
    {
      g_queue_push_tail (&s->gpu.ce_queue[op->ce], op);
      return;
    }
  if (op->ce >= 0)
    s->gpu.ce_busy[op->ce]++;
  op_begin (s, op);
}
