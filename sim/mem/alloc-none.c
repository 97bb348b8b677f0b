/* alloc-none.c — no allocator between the program and the driver: each
 * allocation is a cudaMalloc of its size rounded up to the allocation
 * granularity (memory.alloc_granularity, 2 MiB by default: the unit in
 * which the driver maps device memory), each free a cudaFree. What vramsim
 * charged before it had allocator models; right for driver-level traces
 * (vramcap). Allocated and reserved are the same bytes. */
#include "mem/alloc-priv.h"

#include "base/u64map.h"

typedef struct {
  VsU64Map live;      /* id -> charged bytes */
  VsU64Map pending;   /* freed, cudaFree not yet done */
  VsU64Map addr;      /* id -> address */
  VsU64Map seeded;    /* ids seeded, not yet claimed by their alloc */
} None;

static gpointer
none_create (VsAlloc *a)
{
  None *n = g_new0 (None, 1);
  u64map_init (&n->live);
  u64map_init (&n->pending);
  u64map_init (&n->addr);
  u64map_init (&n->seeded);
  return n;
}

static void
none_destroy (gpointer priv)
{
  None *n = priv;
  u64map_clear (&n->live);
  u64map_clear (&n->pending);
  u64map_clear (&n->addr);
  u64map_clear (&n->seeded);
  g_free (n);
}

static gboolean
none_malloc (VsAlloc *a, guint64 id, guint64 bytes, guint64 stream, guint64 *addr)
{
  None *n = a->priv;
  guint64 g = a->cfg.granularity;
  guint64 charge = bytes == 0 ? g : (bytes + g - 1) / g * g;
  guint64 *seeded = u64map_lookup (&n->live, id);
  if (seeded != NULL)
    {
      g_return_val_if_fail (u64map_remove (&n->seeded, id), FALSE);
      *addr = *u64map_lookup (&n->addr, id);
      return TRUE;
    }
  gboolean cached = alloc_take_cache (a, charge);
  if (!cached && alloc_over_limit (a, charge))
    {
      a->st.oom_largest_free = 0;
      a->st.oom_reserved_free = a->st.reserved - a->st.allocated;
      return FALSE;
    }
  *addr = alloc_new_address (a, charge, stream);
  u64map_insert (&n->live, id, charge);
  u64map_insert (&n->addr, id, *addr);
  if (!cached)
    alloc_note_segment (a, VS_SEG_ALLOC, *addr, charge, stream);
  alloc_note_allocated (a, (gint64) charge);
  return TRUE;
}

static void
none_free_request (VsAlloc *a, guint64 id)
{
  None *n = a->priv;
  guint64 *c = u64map_lookup (&n->live, id);
  g_return_if_fail (c != NULL);
  guint64 charge = *c;
  u64map_remove (&n->live, id);
  u64map_remove (&n->seeded, id);
  u64map_insert (&n->pending, id, charge);
  alloc_note_allocated (a, -(gint64) charge);
}

static void
none_free_complete (VsAlloc *a, guint64 id)
{
  None *n = a->priv;
  guint64 *c = u64map_lookup (&n->pending, id);
  if (c == NULL)
    return;
  guint64 charge = *c;
  guint64 addr = *u64map_lookup (&n->addr, id);
  u64map_remove (&n->pending, id);
  u64map_remove (&n->addr, id);
  alloc_note_segment (a, VS_SEG_FREE, addr, charge, 0);
}

static void
none_nothing (VsAlloc *a)
{
}

static guint64
none_block_bytes (const VsAlloc *a, guint64 id)
{
  const None *n = a->priv;
  guint64 *c = u64map_lookup (&n->live, id);
  return c != NULL ? *c : 0;
}

static void
none_seed_segment (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream, gboolean small,
                   gboolean expandable)
{
}

static gboolean
none_seed_block (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes, guint64 requested)
{
  None *n = a->priv;
  if (id == 0 || u64map_lookup (&n->live, id) != NULL)
    return FALSE;
  guint64 g = a->cfg.granularity;
  guint64 charge = (requested + g - 1) / g * g;
  u64map_insert (&n->live, id, charge);
  u64map_insert (&n->addr, id, addr);
  u64map_insert (&n->seeded, id, 1);
  a->st.reserved += charge;
  alloc_note_allocated (a, (gint64) charge);
  return TRUE;
}

const VsAllocOps alloc_none_ops = {
  .name = "none",
  .create = none_create,
  .destroy = none_destroy,
  .malloc = none_malloc,
  .free_request = none_free_request,
  .free_complete = none_free_complete,
  .empty_cache = none_nothing,
  .sync = none_nothing,
  .block_bytes = none_block_bytes,
  .seed_segment = none_seed_segment,
  .seed_block = none_seed_block,
};
