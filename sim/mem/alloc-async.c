/* alloc-async.c — stream-ordered allocation (cudaMallocAsync), as PyTorch's
 * cudaMallocAsync backend (c10/cuda/CUDAMallocAsyncAllocator.cpp) uses it:
 * one pool per device, the driver's default pool.
 *
 * Assumptions (docs/model.md "Allocator models"):
 *   - The pool reserves physical memory as use grows, in steps of the
 *     allocation granularity (2 MiB: the driver maps the pool's physical
 *     memory in 2 MiB pages into the virtual ranges it hands out), and
 *     reuses freed memory for any later request: the driver remaps pages,
 *     so a pool does not fragment the way the caching allocator's segments
 *     do. Reserved = in use (allocated plus freed-but-not-yet-reusable)
 *     rounded up to the granularity, never less than it was.
 *   - Allocated counts the bytes asked (PyTorch's async backend reports
 *     requested sizes).
 *   - The pool keeps what it reserved until a synchronisation finds it
 *     above cudaMemPoolAttrReleaseThreshold: it is then trimmed to the
 *     threshold or to what is in use, whichever is more (the driver releases
 *     memory above the threshold at synchronize). PyTorch sets the threshold
 *     to UINT64_MAX (keep everything), the default here.
 *   - empty_cache is cudaMemPoolTrimTo(pool, 0): back to what is in use.
 *   - Out of memory when growth would pass the limit: unused pool memory is
 *     already reused, so there is nothing to free and retry. */
#include "mem/alloc-priv.h"

#include "base/u64map.h"

typedef struct {
  VsU64Map live, pending, seeded;
  guint64 in_use;     /* allocated + pending */
} Async;

static gpointer
async_create (VsAlloc *a)
{
  Async *s = g_new0 (Async, 1);
  u64map_init (&s->live);
  u64map_init (&s->pending);
  u64map_init (&s->seeded);
  return s;
}

static void
async_destroy (gpointer priv)
{
  Async *s = priv;
  u64map_clear (&s->live);
  u64map_clear (&s->pending);
  u64map_clear (&s->seeded);
  g_free (s);
}

static guint64
round_up (const VsAlloc *a, guint64 x)
{
  guint64 g = a->cfg.granularity;
  return (x + g - 1) / g * g;
}

static gboolean
async_malloc (VsAlloc *a, guint64 id, guint64 bytes, guint64 stream, guint64 *addr)
{
  Async *s = a->priv;
  if (u64map_lookup (&s->live, id) != NULL)
    {
      g_return_val_if_fail (u64map_remove (&s->seeded, id), FALSE);
      *addr = 0;
      return TRUE;
    }
  guint64 need = round_up (a, s->in_use + bytes);
  if (need > a->st.reserved)
    {
      guint64 grow = need - a->st.reserved;
      if (alloc_over_limit (a, grow))
        {
          a->st.oom_largest_free = a->st.reserved - s->in_use;
          a->st.oom_reserved_free = a->st.reserved - a->st.allocated;
          return FALSE;
        }
      alloc_note_segment (a, VS_SEG_ALLOC, 0, grow, stream);
    }
  s->in_use += bytes;
  u64map_insert (&s->live, id, bytes);
  alloc_note_allocated (a, (gint64) bytes);
  *addr = 0;
  return TRUE;
}

static void
async_free_request (VsAlloc *a, guint64 id)
{
  Async *s = a->priv;
  guint64 *b = u64map_lookup (&s->live, id);
  g_return_if_fail (b != NULL);
  guint64 bytes = *b;
  u64map_remove (&s->live, id);
  u64map_remove (&s->seeded, id);
  u64map_insert (&s->pending, id, bytes);
  alloc_note_allocated (a, -(gint64) bytes);
}

static void
async_free_complete (VsAlloc *a, guint64 id)
{
  Async *s = a->priv;
  guint64 *b = u64map_lookup (&s->pending, id);
  if (b == NULL)
    return;
  s->in_use -= *b;
  u64map_remove (&s->pending, id);
}

static void
trim_to (VsAlloc *a, guint64 keep)
{
  Async *s = a->priv;
  guint64 floor = round_up (a, s->in_use);
  if (keep < floor)
    keep = floor;
  if (a->st.reserved > keep)
    alloc_note_segment (a, VS_SEG_FREE, 0, a->st.reserved - keep, 0);
}

static void
async_sync (VsAlloc *a)
{
  if (a->cfg.release_threshold != VS_ALLOC_UNLIMITED && a->st.reserved > a->cfg.release_threshold)
    trim_to (a, a->cfg.release_threshold);
}

static void
async_empty_cache (VsAlloc *a)
{
  alloc_release_cache (a);
  trim_to (a, 0);
}

static guint64
async_block_bytes (const VsAlloc *a, guint64 id)
{
  const Async *s = a->priv;
  guint64 *b = u64map_lookup (&s->live, id);
  return b != NULL ? MAX (*b, 1) : 0;
}

static void
async_seed_segment (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream, gboolean small,
                    gboolean expandable)
{
  a->st.reserved += bytes;
}

static gboolean
async_seed_block (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes, guint64 requested)
{
  Async *s = a->priv;
  if (id == 0 || u64map_lookup (&s->live, id) != NULL)
    return FALSE;
  u64map_insert (&s->live, id, requested);
  u64map_insert (&s->seeded, id, 1);
  s->in_use += requested;
  alloc_note_allocated (a, (gint64) requested);
  return TRUE;
}

const VsAllocOps alloc_async_ops = {
  .name = "async",
  .create = async_create,
  .destroy = async_destroy,
  .malloc = async_malloc,
  .free_request = async_free_request,
  .free_complete = async_free_complete,
  .empty_cache = async_empty_cache,
  .sync = async_sync,
  .block_bytes = async_block_bytes,
  .seed_segment = async_seed_segment,
  .seed_block = async_seed_block,
};
