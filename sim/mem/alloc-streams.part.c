/* alloc-streams.part.c — the cross-stream rule of the allocator model
 * (docs/model.md "Allocator models", stream order of frees).
 *
 * PyTorch's caching allocator gives a freed block back to its stream's
 * pool at once: later work on that stream runs after everything queued
 * before the free, so it cannot overwrite what queued kernels still read.
 * A block used on another stream is different: the program must call
 * Tensor.record_stream(s) (c10/cuda/CUDACachingAllocator.cpp,
 * recordStream adds s to block->stream_uses), and at free the allocator
 * records one CUDA event on each such stream (insert_events) and keeps the
 * block out of every pool until they have all completed (process_events,
 * at the next malloc). Its bytes stop counting as allocated at the free
 * (free() decreases allocated_bytes before insert_events); they stay
 * reserved.
 *
 * Assumptions:
 *  - A trace does not record record_stream calls; a correct program makes
 *    one for every tensor it uses on a stream other than the one it was
 *    allocated on (else the caching allocator would hand its memory to new
 *    tensors while those kernels still run: a data race, not a program
 *    that gives the trace's results). So a kernel, copy or memset issued on
 *    stream S that reaches a model-charged allocation of another stream
 *    records S on it, as record_stream would.
 *  - An allocation whose event names no stream (a profiler's [memory]
 *    events, the generators' traces) belongs to the stream of the first op
 *    that uses it: PyTorch allocates on the current stream, the one the
 *    kernel that produces the tensor runs on. (The model's pools still key
 *    it by stream 0, as before: all such allocations share them.)
 *  - The event of each recorded stream is recorded at the free: its
 *    completion is that of the stream's last op issued before the free
 *    (Stream.last), which may come after the op that used the block, as
 *    in PyTorch. A stream with nothing left queued adds no wait.
 *  - PyTorch queries the events at the next malloc; returning the block
 *    when the last one completes is the same for every later malloc.
 *  - torch.cuda.empty_cache() synchronises on the events first
 *    (release_cached_blocks calls synchronize_and_free_events, which
 *    waits on each): the host thread blocks until the last waited op has
 *    run, and the cache is emptied then. A release-and-retry inside a
 *    malloc synchronises the same way; there the model returns the pending
 *    blocks at once and the host's wait is not modelled.
 *
 * Cost: a few comparisons per access of a model-charged allocation (its
 * home stream, then a bit per stream in a mask for the first 64 streams;
 * streams after those search a short array). A free waits on at most one
 * op per recorded stream, and the frees that wait on one op share one
 * waiter on it (FreeBatch).
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static __attribute__ ((noinline)) void
amodel_use_other (Alloc *a, Stream *st)
{
  if (a->home == AMODEL_HOME_UNKNOWN)
    {
      a->home = st->id;   /* its first op's stream */
      return;
    }
  if (st->bit != 0)
    {
      a->use_mask |= st->bit;
      return;
    }
  if (a->uses == NULL)
    a->uses = g_ptr_array_new ();
  for (guint i = 0; i < a->uses->len; i++)
    if (a->uses->pdata[i] == st)
      return;
  g_ptr_array_add (a->uses, st);
}

/* An op on ST reaches the N allocations of ACC: each the model charges
 * that belongs to another stream records ST (record_stream). */
static inline void
amodel_uses (Sim *s, Stream *st, Alloc *const *acc, guint n)
{
  (void) s;
  for (guint i = 0; i < n; i++)
    {
      Alloc *a = acc[i];
      if (G_UNLIKELY (a->home != st->id && a->via_model && !(a->use_mask & st->bit)))
        amodel_use_other (a, st);
    }
}

/* A's streams are forgotten (it is freed or recycled). */
static void
amodel_uses_clear (Alloc *a)
{
  a->use_mask = 0;
  if (a->uses != NULL)
    {
      g_ptr_array_free (a->uses, TRUE);
      a->uses = NULL;
    }
}

/* Freed blocks waiting for one op (a stream's last at their frees): one
 * waiter on the op for all of them, since a stream's frees come in runs
 * while its last op stays the same. */
typedef struct FreeBatch {
  Op *op;
  Stream *st;
  guint64 t;             /* the first free's trace time */
  GPtrArray *allocs;     /* Alloc*, one reference each (amodel_free_deferred) */
  struct FreeBatch *next_free;
} FreeBatch;

/* One of the ops A's block waits for has completed (T: a free's time).
 * After the last, the block returns to its pool, unless the model returned
 * it already (empty_cache, or the id's next free came first). */
static void
amodel_use_done (Sim *s, Alloc *a, guint64 t)
{
  if (--a->model_waits > 0)
    return;
  if (a->model_pending)
    {
      a->model_pending = FALSE;
      u64map_remove (&s->mem.amodel_pending, a->id);
      alloc_free_complete (s->mem.amodel, a->id, t);
      amodel_settle (s);
      demand_free_complete (s, a->id, t);
    }
  alloc_unref (a);
}

static void
amodel_batch_done (Sim *s, gpointer obj, guint64 arg)
{
  FreeBatch *b = obj;
  if (b->st->fb == b)
    b->st->fb = NULL;
  for (guint i = 0; i < b->allocs->len; i++)
    amodel_use_done (s, b->allocs->pdata[i], b->t);
  g_ptr_array_set_size (b->allocs, 0);
  b->next_free = s->mem.free_batches;
  s->mem.free_batches = b;
}

/* A's block waits for ST's last op, if it has not run. */
static void
amodel_wait (Sim *s, Alloc *a, Stream *st, guint64 t)
{
  Op *last = st->last;
  if (last == NULL || last->c.done)
    return;
  FreeBatch *b = st->fb;
  if (b == NULL || b->op != last)
    {
      b = s->mem.free_batches;
      if (b != NULL)
        s->mem.free_batches = b->next_free;
      else
        {
          b = g_new0 (FreeBatch, 1);
          b->allocs = g_ptr_array_new ();
          g_ptr_array_add (s->mem.amodel_batches, b);
        }
      b->op = last;
      b->st = st;
      b->t = t;
      st->fb = b;
      completion_wait (&last->c, amodel_batch_done, b, 0);
    }
  g_ptr_array_add (b->allocs, a);
  a->model_waits++;
}

static void
amodel_streams_teardown (Sim *s)
{
  if (s->mem.amodel_batches == NULL)
    return;
  for (guint i = 0; i < s->mem.amodel_batches->len; i++)
    {
      FreeBatch *b = s->mem.amodel_batches->pdata[i];
      g_ptr_array_free (b->allocs, TRUE);
      g_free (b);
    }
  g_ptr_array_free (s->mem.amodel_batches, TRUE);
  s->mem.amodel_batches = NULL;
}

/* The host frees A (live in the model under its id) at trace time T. TRUE
 * when its block must wait for other streams: it is then freed in the
 * model (allocated drops now) and returns to its pool when they have run.
 * FALSE: no other stream has work queued; the caller frees it at once. */
static gboolean
amodel_free_deferred (Sim *s, Alloc *a, guint64 t)
{
  if (G_LIKELY (a->use_mask == 0 && a->uses == NULL))
    return FALSE;
  g_assert (a->model_waits == 0);
  a->refs++;             /* each batch's, taken back if none waits */
  for (guint64 m = a->use_mask; m != 0; m &= m - 1)
    amodel_wait (s, a, s->gpu.stream_list->pdata[__builtin_ctzll (m)], t);
  for (guint i = 0; a->uses != NULL && i < a->uses->len; i++)
    amodel_wait (s, a, a->uses->pdata[i], t);
  amodel_uses_clear (a);
  if (a->model_waits == 0)
    {
      a->refs--;         /* (the caller's lookup holds it: not the last) */
      return FALSE;
    }
  VsAlloc *m = s->mem.amodel;
  guint64 *prev = u64map_lookup (&s->mem.amodel_pending, a->id);
  if (prev != NULL)
    {
      /* A trace that reuses ids frees this one again while its earlier
       * block still waits (the other streams lag in this replay more than
       * they did in the program, which reused the id after that block was
       * back): the earlier block returns now, its waits do nothing, and
       * the model holds one pending block per id. */
      Alloc *b = GSIZE_TO_POINTER (*prev);
      b->model_pending = FALSE;
      alloc_free_complete (m, a->id, t);
      demand_free_complete (s, a->id, t);
    }
  alloc_free_request (m, a->id, t);
  a->model_pending = TRUE;   /* until the last wait ends (amodel_use_done) */
  u64map_insert (&s->mem.amodel_pending, a->id, GPOINTER_TO_SIZE (a));
  return TRUE;
}

static void
amodel_empty_done (Sim *s, gpointer obj, guint64 arg)
{
  if (--s->mem.amodel_empty_waits == 0)
    amodel_empty_cache (s, arg);
}

/* torch.cuda.empty_cache() from thread T at trace time TT: with blocks
 * waiting for other streams, T waits for each such stream's last waited
 * op (its batch's: a stream's ops run in order, so that one is its
 * latest) and the cache is emptied when the last of them has run. FALSE:
 * nothing waits; the caller empties it now. */
static gboolean
amodel_empty_cache_wait (Sim *s, Thread *t, guint64 tt)
{
  if (s->mem.amodel == NULL || s->mem.amodel_pending.len == 0)
    return FALSE;
  guint n = 0;
  for (guint i = 0; i < s->gpu.stream_list->len; i++)
    {
      Stream *st = s->gpu.stream_list->pdata[i];
      if (st->fb == NULL)
        continue;
      /* The model's release waits until the batch's blocks are back:
       * amodel_batch_done was registered first and runs first. */
      s->mem.amodel_empty_waits++;
      completion_wait (&st->fb->op->c, amodel_empty_done, NULL, tt);
      thread_block_on (t, &st->fb->op->c);
      n++;
    }
  return n > 0;
}
