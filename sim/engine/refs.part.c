/* refs.part.c — completions (what ops, jobs and threads wait on) and the
 * reference counts that recycle ops, jobs and allocations.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* A waiter beside w0. */
static __attribute__ ((noinline)) void
completion_wait_more (Completion *c, WaitFn fn, gpointer obj, guint64 arg)
{
  if (c->n_more == c->cap_more)
    {
      c->cap_more = c->cap_more ? 2 * c->cap_more : 4;
      c->more = g_renew (Waiter, c->more, c->cap_more);
    }
  c->more[c->n_more++] = (Waiter) { fn, obj, arg };
}

static inline void
completion_wait (Completion *c, WaitFn fn, gpointer obj, guint64 arg)
{
  if (G_LIKELY (c->w0.fn == NULL))
    {
      c->w0 = (Waiter) { fn, obj, arg };
      return;
    }
  completion_wait_more (c, fn, obj, arg);
}

/* The waiters are taken off C before they run: one may recycle C's op
 * or job (their last reference gone) and wait on it anew. C's room for
 * more waiters goes back to it after, unless it has made another. A
 * GArray made and freed per completion of several waiters cost 1,500
 * instructions (a 4-stream trace's record that four streams wait for). */
static void
completion_fire_slow (Sim *s, Completion *c)
{
  Waiter w0 = c->w0;
  c->w0.fn = NULL;
  if (G_LIKELY (c->n_more == 0))
    {
      w0.fn (s, w0.obj, w0.arg);   /* w0 alone (waiters only with w0) */
      return;
    }
  Waiter *more = c->more;
  guint32 n = c->n_more, cap = c->cap_more;
  c->more = NULL;
  c->n_more = c->cap_more = 0;
  w0.fn (s, w0.obj, w0.arg);
  for (guint i = 0; i < n; i++)
    more[i].fn (s, more[i].obj, more[i].arg);
  if (c->more == NULL)
    {
      c->more = more;
      c->cap_more = cap;
    }
  else
    g_free (more);
}

/* Marks C done and wakes its waiters (most completions have none). */
static inline void
completion_fire (Sim *s, Completion *c)
{
  c->done = TRUE;
  if (c->w0.fn != NULL)   /* waiters only with w0 */
    completion_fire_slow (s, c);
}

static void op_release (Op *op);
static inline void op_unref (Op *op);

static void
job_unref (Job *j)
{
  if (j != NULL && --j->c.refs == 0)
    {
      g_assert (j->c.w0.fn == NULL);   /* no waiters */
      live_unlink (&j->live);
      j->next_free = *j->pool;   /* recycled, like ops */
      *j->pool = j;
    }
}

/* A's last reference is gone. */
static void
alloc_unref_last (Alloc *a)
{
  live_unlink (&a->live);
  job_unref (a->moving);
  amodel_uses_clear (a);
  /* Recycled (one is made per alloc event), linked through lru_next. */
  a->lru_next = *a->pool;
  *a->pool = a;
}

static void
alloc_unref (Alloc *a)
{
  if (a != NULL && --a->refs == 0)
    alloc_unref_last (a);
}

static void
op_release (Op *op)
{
  g_assert (op->c.w0.fn == NULL);   /* no waiters */
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];   /* never NULL */
      if (--a->refs == 0)
        alloc_unref_last (a);
    }
  if (op->acc != op->acc_inline)
    {
      g_free (op->acc);
      g_free (op->mode);
      op->acc = op->acc_inline;   /* nothing for sim_teardown to free, and as op_alloc expects */
      op->mode = op->mode_inline;
      op->acc_cap = OP_INLINE_ACC;
    }
  /* Only the other ops hold these (a kernel has its acc alone, a marker
   * nothing: NULL since its last release, or g_new0). */
  if (op->type != VS_OP_KERNEL)
    {
      alloc_unref (op->src);
      alloc_unref (op->dst);
      alloc_unref (op->target);
      op->src = op->dst = op->target = NULL;   /* as op_alloc expects */
    }
  /* Ops are recycled: one is made and freed per GPU event. */
  op->next = *op->pool;
  *op->pool = op;
}

static inline void
op_unref (Op *op)
{
  if (op != NULL && --op->c.refs == 0)
    {
      /* Most ops hold nothing to let go of (a kernel that keeps no
       * accesses, a marker): recycled here, without the call. */
      const guint holds_nothing = 1u << VS_OP_KERNEL | 1u << VS_OP_EVENT_RECORD | 1u << VS_OP_STREAM_WAIT;
      if (G_LIKELY (op->n_acc == 0 && ((1u << op->type) & holds_nothing)))
        {
          g_assert (op->c.w0.fn == NULL);   /* no waiters */
          op->next = *op->pool;
          *op->pool = op;
        }
      else
        op_release (op);
    }
}
