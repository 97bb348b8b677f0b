/* alloc.c — the allocator interface (allocator.h): dispatch to the kind's
 * functions, and the accounting all kinds share (allocated, reserved, their
 * peaks, the fragmentation at the reserved peak, segment counters). */
#include "mem/alloc-priv.h"

#include <string.h>

#define MiB (1024ull * 1024)

static const char *const kind_names[VS_ALLOC_KIND_COUNT] = { "none", "pytorch", "async" };
static const char *const seg_names[VS_SEG_COUNT] = {
  "segment_alloc", "segment_free", "segment_map", "segment_unmap",
};

void
alloc_config_init (VsAllocConfig *cfg)
{
  *cfg = (VsAllocConfig) {
    .kind = VS_ALLOC_PYTORCH,
    .max_split_size = VS_ALLOC_UNLIMITED,
    /* AllocatorConfig: m_max_non_split_rounding_size(kLargeBuffer). */
    .max_non_split_rounding = 20 * MiB,
    /* kLargeBuffer: the large pool's segment for requests below 10 MiB. */
    .large_segment = 20 * MiB,
    /* CUDAMallocAsyncAllocator.cpp sets cudaMemPoolAttrReleaseThreshold to
     * UINT64_MAX: the pool never shrinks on its own. */
    .release_threshold = VS_ALLOC_UNLIMITED,
    .granularity = 2 * MiB,
    .limit = VS_ALLOC_UNLIMITED,
  };
}

const char *
alloc_kind_name (guint kind)
{
  return kind < VS_ALLOC_KIND_COUNT ? kind_names[kind] : NULL;
}

int
alloc_kind_from_name (const char *name)
{
  for (int i = 0; i < VS_ALLOC_KIND_COUNT; i++)
    if (name != NULL && strcmp (name, kind_names[i]) == 0)
      return i;
  return -1;
}

const char *
alloc_seg_action_name (guint action)
{
  return action < VS_SEG_COUNT ? seg_names[action] : NULL;
}

VsAlloc *
alloc_new (const VsAllocConfig *cfg)
{
  g_return_val_if_fail (cfg != NULL && cfg->kind < VS_ALLOC_KIND_COUNT, NULL);
  VsAlloc *a = g_new0 (VsAlloc, 1);
  a->cfg = *cfg;
  if (a->cfg.granularity == 0)
    a->cfg.granularity = 1;
  static const VsAllocOps *const ops[VS_ALLOC_KIND_COUNT] = {
    &alloc_none_ops, &alloc_pytorch_ops, &alloc_async_ops,
  };
  a->ops = ops[cfg->kind];
  /* Far from 0 and from the expandable ranges' addresses (alloc-pytorch.c
   * gives those from the same counter): a pointer-sized number like the
   * driver's. */
  a->next_addr = 0x7f0000000000ull;
  a->priv = a->ops->create (a);
  return a;
}

void
alloc_free_model (VsAlloc *a)
{
  if (a == NULL)
    return;
  a->ops->destroy (a->priv);
  g_free (a);
}

VsAllocKind
alloc_kind (const VsAlloc *a)
{
  return a->cfg.kind;
}

void
alloc_set_listener (VsAlloc *a, VsSegFn fn, gpointer data)
{
  a->seg_fn = fn;
  a->seg_data = data;
}

void
alloc_set_addr_source (VsAlloc *a, VsSegAddrFn fn, gpointer data)
{
  a->addr_fn = fn;
  a->addr_data = data;
}

void
alloc_set_limit (VsAlloc *a, guint64 limit)
{
  a->cfg.limit = limit;
}

static void settle (VsAlloc *a);

void
alloc_note_segment (VsAlloc *a, VsSegAction action, guint64 addr, guint64 bytes, guint64 stream)
{
  if (action == VS_SEG_ALLOC || action == VS_SEG_MAP)
    {
      a->st.reserved += bytes;
      a->st.segment_allocs++;
      a->st.segment_alloc_bytes += bytes;
    }
  else
    {
      g_assert (a->st.reserved >= bytes);
      a->st.reserved -= bytes;
      a->st.segment_frees++;
      a->st.segment_free_bytes += bytes;
    }
  if (a->seg_fn != NULL)
    {
      VsSegEvent ev = { .action = (guint8) action, .addr = addr, .bytes = bytes, .stream = stream };
      a->seg_fn (&ev, a->seg_data);
    }
}

void
alloc_seed_cache (VsAlloc *a, guint64 bytes)
{
  a->cache += bytes;
  a->st.reserved += bytes;
  settle (a);
}

void
alloc_release_cache (VsAlloc *a)
{
  if (a->cache == 0)
    return;
  guint64 n = a->cache;
  a->cache = 0;
  alloc_note_segment (a, VS_SEG_FREE, 0, n, 0);
}

guint64
alloc_new_address (VsAlloc *a, guint64 bytes, guint64 stream)
{
  guint64 addr = a->addr_fn != NULL ? a->addr_fn (bytes, stream, a->addr_data) : 0;
  if (addr != 0)
    return addr;
  addr = a->next_addr;
  a->next_addr += (bytes + 2 * MiB - 1) / (2 * MiB) * (2 * MiB) + 2 * MiB;
  return addr;
}

/* After each public operation: the peaks. Fragmentation is taken when
 * reserved first reaches its peak, after the operation that reached it
 * (so the block that needed the new segment counts as allocated). */
static void
settle (VsAlloc *a)
{
  VsAllocStats *st = &a->st;
  if (st->allocated > st->peak_allocated)
    st->peak_allocated = st->allocated;
  if (st->reserved > st->peak_reserved)
    {
      st->peak_reserved = st->reserved;
      st->peak_reserved_t = a->t;
      st->fragmentation_peak = 1.0 - (double) st->allocated / (double) st->reserved;
    }
}

gboolean
alloc_malloc (VsAlloc *a, guint64 id, guint64 bytes, guint64 stream, guint64 t, guint64 *addr)
{
  g_return_val_if_fail (id != 0, FALSE);
  a->t = t;
  guint64 dummy;
  gboolean ok = a->ops->malloc (a, id, bytes, stream, addr != NULL ? addr : &dummy);
  if (!ok)
    {
      a->st.ooms++;
      a->st.oom_requested = bytes;
    }
  settle (a);
  return ok;
}

void
alloc_free_request (VsAlloc *a, guint64 id, guint64 t)
{
  a->t = t;
  a->ops->free_request (a, id);
  settle (a);
}

void
alloc_free_complete (VsAlloc *a, guint64 id, guint64 t)
{
  a->t = t;
  a->ops->free_complete (a, id);
  settle (a);
}

void
alloc_free (VsAlloc *a, guint64 id, guint64 t)
{
  a->t = t;
  a->ops->free_request (a, id);
  a->ops->free_complete (a, id);
  settle (a);
}

void
alloc_empty_cache (VsAlloc *a, guint64 t)
{
  a->t = t;
  a->ops->empty_cache (a);
  settle (a);
}

void
alloc_sync (VsAlloc *a, guint64 t)
{
  a->t = t;
  a->ops->sync (a);
  settle (a);
}

gboolean
alloc_is_live (const VsAlloc *a, guint64 id)
{
  return a->ops->block_bytes (a, id) != 0;
}

guint64
alloc_block_bytes (const VsAlloc *a, guint64 id)
{
  return a->ops->block_bytes (a, id);
}

void
alloc_seed_segment (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream, gboolean small,
                    gboolean expandable)
{
  a->ops->seed_segment (a, addr, bytes, stream, small, expandable);
  settle (a);
}

gboolean
alloc_seed_block (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes, guint64 requested)
{
  gboolean ok = a->ops->seed_block (a, id, addr, bytes, requested);
  settle (a);
  return ok;
}

void
alloc_stats (const VsAlloc *a, VsAllocStats *st)
{
  *st = a->st;
}
