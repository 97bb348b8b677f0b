/* alloc-priv.h — what the allocator models share (allocator.h is the
 * interface): the model object, the table of a kind's functions, and the
 * accounting every kind does the same way. */
#pragma once

#include "mem/allocator.h"

typedef struct {
  const char *name;
  gpointer (*create) (VsAlloc *a);
  void (*destroy) (gpointer priv);
  gboolean (*malloc) (VsAlloc *a, guint64 id, guint64 bytes, guint64 stream, guint64 *addr);
  void (*free_request) (VsAlloc *a, guint64 id);
  void (*free_complete) (VsAlloc *a, guint64 id);
  void (*empty_cache) (VsAlloc *a);
  void (*sync) (VsAlloc *a);
  guint64 (*block_bytes) (const VsAlloc *a, guint64 id);   /* 0: not live */
  void (*seed_segment) (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream,
                        gboolean small, gboolean expandable);
  gboolean (*seed_block) (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes, guint64 requested);
} VsAllocOps;

struct _VsAlloc {
  const VsAllocOps *ops;
  VsAllocConfig cfg;
  gpointer priv;
  VsAllocStats st;
  guint64 t;               /* time of the operation in progress */
  VsSegFn seg_fn;
  gpointer seg_data;
  VsSegAddrFn addr_fn;
  gpointer addr_data;
  guint64 next_addr;       /* the model's own segment addresses */
  guint64 cache;           /* alloc_seed_cache bytes not yet used (reserved) */
};

extern const VsAllocOps alloc_pytorch_ops, alloc_async_ops, alloc_none_ops;

/* A segment event: reserved and the counters follow, the listener hears it. */
void alloc_note_segment (VsAlloc *a, VsSegAction action, guint64 addr, guint64 bytes,
                         guint64 stream);
/* Allocated bytes change (peaks are taken after each public operation). */
static inline void
alloc_note_allocated (VsAlloc *a, gint64 delta)
{
  a->st.allocated = (guint64) ((gint64) a->st.allocated + delta);
}
/* An address for a new range of BYTES: the source's, else the next one of
 * the model's own (2 MiB-aligned, never reused: only their order matters). */
guint64 alloc_new_address (VsAlloc *a, guint64 bytes, guint64 stream);
/* A new segment (or mapping) of BYTES served from the seeded cache: TRUE
 * when it covers them (reserved unchanged, no event). */
static inline gboolean
alloc_take_cache (VsAlloc *a, guint64 bytes)
{
  if (a->cache < bytes)
    return FALSE;
  a->cache -= bytes;
  return TRUE;
}
/* Releases what is left of the seeded cache (empty_cache, release-and-retry). */
void alloc_release_cache (VsAlloc *a);
/* Would reserving BYTES more pass the driver limit? */
static inline gboolean
alloc_over_limit (const VsAlloc *a, guint64 bytes)
{
  return a->cfg.limit != VS_ALLOC_UNLIMITED && a->st.reserved + bytes > a->cfg.limit;
}
