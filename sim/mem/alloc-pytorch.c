/* alloc-pytorch.c — PyTorch's CUDA caching allocator (DeviceCachingAllocator
 * in c10/cuda/CUDACachingAllocator.cpp; docs/model.md "Allocator models").
 *
 * Learned from the source (PyTorch main, read 2026-12; the rules below are
 * unchanged since 2.1 except where noted); every constant with the function
 * that uses it:
 *   kMinBlockSize 512 B      round_size: requests round up to 512 B (below:
 *                            512 B); roundup_power2_next_division when
 *                            roundup_power2_divisions > 1 for the request's
 *                            power-of-two interval and the size is above
 *                            512 B x divisions.
 *   kSmallSize 1 MiB         get_pool: rounded sizes up to 1 MiB use the
 *                            small pool, larger the large pool.
 *   kSmallBuffer 2 MiB       get_allocation_size: a small-pool segment; also
 *                            the page of a small expandable segment.
 *   kLargeBuffer 20 MiB      get_allocation_size: the large-pool segment for
 *                            requests below kMinLargeAlloc (large_segment,
 *                            AllocatorConfig large_segment_size); the page of
 *                            a large expandable segment (find_expandable_block);
 *                            max_non_split_rounding's default.
 *   kMinLargeAlloc 10 MiB    get_allocation_size: from here a segment is the
 *   kRoundLarge 2 MiB        request rounded up to 2 MiB.
 *   should_split             small pool (or expandable segments on): split if
 *                            the remainder is >= 512 B; large pool: if the
 *                            request is below max_split_size and the
 *                            remainder above 1 MiB.
 *   get_free_block           best fit: the first free block by (stream,
 *                            size, address) at or above (stream, size); a
 *                            block >= max_split_size serves only requests
 *                            >= max_split_size and less than
 *                            max_non_split_rounding larger.
 *   malloc                   no fit: garbage_collect_cached_blocks (only
 *                            with a memory limit, here the device), then a
 *                            new segment (alloc_block); if the driver says no,
 *                            release_available_cached_blocks (oversize
 *                            blocks, only with max_split_size set) and retry,
 *                            then release_cached_blocks (every cached
 *                            unsplit segment, pages of expandable segments)
 *                            and retry, then out of memory.
 *   free_block               a freed block merges with free neighbours of its
 *                            segment (try_merge_blocks) and returns to its pool.
 *   expandable segments      one address range per stream and pool (1 1/8 of
 *                            device memory), mapped in pages as needed at the
 *                            lowest address that fits (find_expandable_block,
 *                            map_block); pages wholly free are unmapped only
 *                            by release_cached_blocks (empty_cache, OOM retry).
 * Sorting ties by address is what PyTorch up to 2.7 does
 * (BlockComparatorSize); later versions sort by a per-segment registration
 * counter first, which orders segments by creation instead.
 *
 * Not modelled: CUDA graph private pools, IPC, free-memory callbacks,
 * per_process_memory_fraction beyond the device limit. */
#include "mem/alloc-priv.h"

#include <stdint.h>

#include "base/u64map.h"

#define MiB (1024ull * 1024)
#define K_MIN_BLOCK 512ull
#define K_SMALL_SIZE (1 * MiB)
#define K_SMALL_BUFFER (2 * MiB)
#define K_MIN_LARGE_ALLOC (10 * MiB)
#define K_ROUND_LARGE (2 * MiB)

typedef struct {
  guint64 base, size, page, stream;
} PtSeg;

typedef struct PtBlock {
  guint64 addr, size, requested, stream, id;
  struct PtBlock *prev, *next;   /* neighbours in the segment */
  PtSeg *es;                     /* expandable segment, or NULL */
  guint64 gc_base;               /* pool's get_free_block calls when cached */
  guint8 small, allocated, mapped, pending, seeded;
} PtBlock;

typedef struct {
  GTree *blocks;      /* free mapped blocks by (stream, size, addr) */
  GTree *unmapped;    /* unmapped ranges of expandable segments by (stream, addr) */
  gboolean small;
  guint64 calls;      /* get_free_block calls, the garbage collector's clock */
  guint64 changes;    /* blocks inserted or removed (what the seeding index checks) */
} PtPool;

typedef struct {
  VsAlloc *a;
  PtPool small, large;
  VsU64Map live;      /* id -> PtBlock* (allocated) */
  VsU64Map pending;   /* id -> PtBlock* (freed, awaiting completion) */
  GPtrArray *segs;    /* PtSeg*, owned */
  GTree *seed_idx;    /* free blocks of both pools by address, for seed_block; valid
                       * while the pools' changes are seed_small/seed_large */
  guint64 seed_small, seed_large;
} Pt;

static int
cmp_size (gconstpointer pa, gconstpointer pb)
{
  const PtBlock *a = pa, *b = pb;
  if (a->stream != b->stream)
    return a->stream < b->stream ? -1 : 1;
  if (a->size != b->size)
    return a->size < b->size ? -1 : 1;
  if (a->addr != b->addr)
    return a->addr < b->addr ? -1 : 1;
  return 0;
}

static int
cmp_addr (gconstpointer pa, gconstpointer pb)
{
  const PtBlock *a = pa, *b = pb;
  if (a->stream != b->stream)
    return a->stream < b->stream ? -1 : 1;
  if (a->addr != b->addr)
    return a->addr < b->addr ? -1 : 1;
  return 0;
}

static inline PtBlock *
node_block (GTreeNode *n)
{
  return n != NULL ? g_tree_node_value (n) : NULL;
}

static inline PtPool *
pool_of (Pt *pt, const PtBlock *b)
{
  return b->small ? &pt->small : &pt->large;
}

static PtBlock *
block_new (guint64 addr, guint64 size, guint64 stream, gboolean small, PtSeg *es, gboolean mapped)
{
  PtBlock *b = g_slice_new0 (PtBlock);
  b->addr = addr;
  b->size = size;
  b->stream = stream;
  b->small = (guint8) small;
  b->es = es;
  b->mapped = (guint8) mapped;
  return b;
}

static inline void
block_destroy (PtBlock *b)
{
  g_slice_free (PtBlock, b);
}

/* x between BEFORE and AFTER (either may be NULL). */
static void
splice (PtBlock *x, PtBlock *before, PtBlock *after)
{
  if (before)
    before->next = x;
  x->prev = before;
  if (after)
    after->prev = x;
  x->next = after;
}

static inline gboolean
is_split (const PtBlock *b)
{
  return b->prev != NULL || b->next != NULL;
}

static void
pool_insert (PtPool *p, PtBlock *b)
{
  b->gc_base = p->calls;
  p->changes++;
  g_tree_insert (p->blocks, b, b);
}

static void
pool_remove (PtPool *p, PtBlock *b)
{
  gboolean ok = g_tree_remove (p->blocks, b);
  g_assert (ok);
  p->changes++;
}

/* ---- sizes ---- */

static guint
log2_floor (guint64 x)
{
  return 63 - (guint) __builtin_clzll (x);
}

static guint32
pow2_divisions (const VsAllocConfig *cfg, guint64 size)
{
  /* CUDAAllocatorConfig::roundup_power2_divisions: intervals start at 1 MiB
   * (2^20) and end at 64 GiB. */
  guint l = log2_floor (size);
  guint idx = l > 20 ? l - 20 : 0;
  if (idx > VS_ALLOC_POW2_INTERVALS - 1)
    idx = VS_ALLOC_POW2_INTERVALS - 1;
  return cfg->roundup_power2_divisions[idx];
}

/* roundup_power2_next_division: 1200 with 4 divisions of [1024, 2048) -> 1280. */
static guint64
next_division (guint64 size, guint64 divisions)
{
  if ((size & (size - 1)) == 0)
    return size;
  guint64 floor2 = 1ull << log2_floor (size);
  guint64 step = floor2 >> log2_floor (divisions);
  if (step == 0)
    return floor2 << 1;
  guint64 down = size & ~(step - 1);
  return down == size ? size : down + step;
}

guint64
alloc_pytorch_round_size (const VsAllocConfig *cfg, guint64 size)
{
  if (size < K_MIN_BLOCK)
    return K_MIN_BLOCK;
  guint64 div = pow2_divisions (cfg, size);
  if (div > 1 && size > K_MIN_BLOCK * div)
    return next_division (size, div);
  return (size + K_MIN_BLOCK - 1) / K_MIN_BLOCK * K_MIN_BLOCK;
}

guint64
alloc_pytorch_segment_size (const VsAllocConfig *cfg, guint64 size)
{
  if (size <= K_SMALL_SIZE)
    return K_SMALL_BUFFER;
  if (size < K_MIN_LARGE_ALLOC)
    return cfg->large_segment;
  return (size + K_ROUND_LARGE - 1) / K_ROUND_LARGE * K_ROUND_LARGE;
}

/* ---- merging and freeing ---- */

/* Merges SRC into DST (its neighbour) if SRC is free and mapped alike;
 * DST is in no tree. Returns the bytes subsumed. */
static guint64
try_merge (Pt *pt, PtBlock *dst, PtBlock *src)
{
  if (src == NULL || src->allocated || src->pending || src->seeded || dst->mapped != src->mapped)
    return 0;
  PtPool *p = pool_of (pt, src);
  gboolean ok = g_tree_remove (src->mapped ? p->blocks : p->unmapped, src);
  g_assert (ok);
  if (dst->prev == src)
    {
      dst->addr = src->addr;
      dst->prev = src->prev;
      if (dst->prev)
        dst->prev->next = dst;
    }
  else
    {
      dst->next = src->next;
      if (dst->next)
        dst->next->prev = dst;
    }
  guint64 n = src->size;
  dst->size += n;
  block_destroy (src);
  return n;
}

static void
free_block (Pt *pt, PtBlock *b)
{
  b->allocated = 0;
  b->pending = 0;
  try_merge (pt, b, b->prev);
  try_merge (pt, b, b->next);
  pool_insert (pool_of (pt, b), b);
}

static void
release_block (Pt *pt, PtBlock *b)
{
  g_assert (b->es == NULL);
  alloc_note_segment (pt->a, VS_SEG_FREE, b->addr, b->size, b->stream);
  pool_remove (pool_of (pt, b), b);
  block_destroy (b);
}

/* ---- expandable segments ---- */

/* A new range of at least MIN bytes: more than the device has is asked
 * only with the driver limit lifted (--keep-going), and must not run off
 * the range's end. */
static PtSeg *
seg_new (Pt *pt, guint64 base, guint64 page, guint64 stream, guint64 min)
{
  guint64 total = pt->a->cfg.device_total != 0 ? pt->a->cfg.device_total : 256ull << 30;
  guint64 handles = MAX ((total + total / 8 + page - 1) / page, (min + page - 1) / page);
  PtSeg *es = g_new0 (PtSeg, 1);
  es->page = page;
  es->size = handles * page;
  es->stream = stream;
  es->base = base != 0 ? base : alloc_new_address (pt->a, es->size, stream);
  g_ptr_array_add (pt->segs, es);
  return es;
}

static inline gboolean
allocatable (const PtBlock *b)
{
  return b != NULL && !b->allocated && !b->pending && !b->seeded;
}

static gboolean
has_space (const PtBlock *b, guint64 size)
{
  guint64 bytes = 0;
  while (bytes < size && allocatable (b))
    {
      bytes += b->size;
      b = b->next;
    }
  return bytes >= size;
}

static PtBlock *
find_expandable_block (Pt *pt, PtPool *p, guint64 stream, guint64 size)
{
  PtBlock key = { .stream = stream, .addr = 0 };
  for (GTreeNode *n = g_tree_lower_bound (p->unmapped, &key);
       n != NULL && node_block (n)->stream == stream; n = g_tree_node_next (n))
    {
      PtBlock *c = node_block (n);
      if (allocatable (c->prev))
        c = c->prev;
      if (has_space (c, size))
        return c;
    }
  PtSeg *es = seg_new (pt, 0, p->small ? K_SMALL_BUFFER : pt->a->cfg.large_segment, stream, size);
  PtBlock *c = block_new (es->base, es->size, stream, p->small, es, FALSE);
  g_tree_insert (p->unmapped, c, c);
  return c;
}

/* Maps the pages of TO_MAP's first SIZE bytes (ExpandableSegment::map
 * rounds up to whole pages). FALSE: the driver is out of memory. */
static gboolean
map_block (Pt *pt, PtBlock *to_map, guint64 size)
{
  g_assert (!to_map->mapped && size <= to_map->size);
  PtSeg *es = to_map->es;
  guint64 begin = (to_map->addr - es->base) / es->page;
  guint64 end = (to_map->addr + size - es->base + es->page - 1) / es->page;
  guint64 bytes = (end - begin) * es->page;
  if (bytes == 0)
    return FALSE;
  gboolean cached = alloc_take_cache (pt->a, bytes);
  if (!cached && alloc_over_limit (pt->a, bytes))
    return FALSE;
  PtPool *p = pool_of (pt, to_map);
  g_tree_remove (p->unmapped, to_map);
  to_map->mapped = 1;
  if (bytes < to_map->size)
    {
      PtBlock *rest = block_new (to_map->addr + bytes, to_map->size - bytes, to_map->stream,
                                 to_map->small, es, FALSE);
      splice (rest, to_map, to_map->next);
      g_tree_insert (p->unmapped, rest, rest);
      to_map->size = bytes;
    }
  guint64 addr = to_map->addr;
  try_merge (pt, to_map, to_map->prev);
  try_merge (pt, to_map, to_map->next);
  pool_insert (p, to_map);
  if (!cached)
    alloc_note_segment (pt->a, VS_SEG_MAP, addr, bytes, to_map->stream);
  return TRUE;
}

static PtBlock *
try_allocate_expandable (Pt *pt, PtPool *p, guint64 stream, guint64 size)
{
  PtBlock *c = find_expandable_block (pt, p, stream, size);
  if (!c->mapped && !map_block (pt, c, MIN (c->size, size)))
    return NULL;
  /* c may have merged into its mapped predecessor: find the block that
   * now starts at or before it (map_block keeps the merged block as dst). */
  while (c->size < size)
    {
      PtBlock *nc = c->next;
      if (!map_block (pt, nc, MIN (size - c->size, nc->size)))
        return NULL;
      c = nc;
    }
  pool_remove (p, c);
  return c;
}

/* Unmaps the pages wholly inside free block B (ExpandableSegment::unmap). */
static void
unmap_block (Pt *pt, PtBlock *b)
{
  PtSeg *es = b->es;
  guint64 begin = (b->addr - es->base + es->page - 1) / es->page;
  guint64 end = (b->addr + b->size - es->base) / es->page;
  if (begin >= end)
    return;
  PtPool *p = pool_of (pt, b);
  pool_remove (p, b);
  guint64 ustart = es->base + begin * es->page, ulen = (end - begin) * es->page;
  guint64 before = ustart - b->addr, after = b->size - before - ulen;
  if (before > 0)
    {
      PtBlock *bf = block_new (b->addr, before, b->stream, b->small, es, TRUE);
      splice (bf, b->prev, b);
      pool_insert (p, bf);
    }
  if (after > 0)
    {
      PtBlock *af = block_new (ustart + ulen, after, b->stream, b->small, es, TRUE);
      splice (af, b, b->next);
      pool_insert (p, af);
    }
  b->addr = ustart;
  b->size = ulen;
  b->mapped = 0;
  try_merge (pt, b, b->prev);
  try_merge (pt, b, b->next);
  g_tree_insert (p->unmapped, b, b);
  alloc_note_segment (pt->a, VS_SEG_UNMAP, ustart, ulen, b->stream);
}

static void
release_expandable_segment (Pt *pt, PtBlock *b)
{
  g_assert (!b->mapped && b->size == b->es->size);
  g_tree_remove (pool_of (pt, b)->unmapped, b);
  g_ptr_array_remove_fast (pt->segs, b->es); /* frees it */
  block_destroy (b);
}

/* ---- releasing cached memory ---- */

static gboolean
collect (gpointer key, gpointer value, gpointer data)
{
  g_ptr_array_add (data, value);
  return FALSE;
}

static GPtrArray *
pool_blocks (PtPool *p)
{
  GPtrArray *v = g_ptr_array_sized_new (g_tree_nnodes (p->blocks));
  g_tree_foreach (p->blocks, collect, v);
  return v;
}

/* release_blocks: every unsplit cached segment is freed; free pages of
 * expandable segments are unmapped, a wholly unmapped one released. */
static void
release_blocks (Pt *pt, PtPool *p)
{
  g_autoptr (GPtrArray) v = pool_blocks (p);
  g_autoptr (GPtrArray) to_unmap = g_ptr_array_new ();
  for (guint i = 0; i < v->len; i++)
    {
      PtBlock *b = v->pdata[i];
      if (b->es != NULL)
        g_ptr_array_add (to_unmap, b);
      else if (!is_split (b))
        release_block (pt, b);
    }
  for (guint i = 0; i < to_unmap->len; i++)
    {
      PtBlock *b = to_unmap->pdata[i];
      unmap_block (pt, b);
      if (!b->mapped && !is_split (b))
        release_expandable_segment (pt, b);
    }
}

static int
cmp_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* synchronize_and_free_events: blocks awaiting other streams are done. */
static void
complete_pending (Pt *pt)
{
  if (pt->pending.len == 0)
    return;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (gsize i = 0; i <= pt->pending.mask; i++)
    if (pt->pending.keys[i] != 0)
      g_array_append_val (ids, pt->pending.keys[i]);
  g_array_sort (ids, cmp_u64);
  for (guint i = 0; i < ids->len; i++)
    {
      guint64 id = g_array_index (ids, guint64, i);
      PtBlock *b = (PtBlock *) (uintptr_t) *u64map_lookup (&pt->pending, id);
      u64map_remove (&pt->pending, id);
      free_block (pt, b);
    }
}

static void
release_cached_blocks (Pt *pt)
{
  complete_pending (pt);
  release_blocks (pt, &pt->large);
  release_blocks (pt, &pt->small);
  alloc_release_cache (pt->a);
}

/* release_available_cached_blocks: frees oversize cached blocks of the
 * request's stream, the smallest one big enough, else the largest ones
 * until their total is. */
static gboolean
release_available (Pt *pt, PtPool *p, guint64 size, guint64 stream)
{
  guint64 msplit = pt->a->cfg.max_split_size;
  if (msplit == VS_ALLOC_UNLIMITED)
    return FALSE;
  PtBlock key = { .stream = stream, .size = MAX (size, msplit), .addr = 0 };
  GTreeNode *n = g_tree_lower_bound (p->blocks, &key);
  PtBlock *b = node_block (n);
  if (b != NULL && b->stream == stream && b->es == NULL)
    {
      release_block (pt, b);
      return TRUE;
    }
  GTreeNode *it = n != NULL ? g_tree_node_previous (n) : g_tree_node_last (p->blocks);
  guint64 total = 0;
  g_autoptr (GPtrArray) victims = g_ptr_array_new ();
  for (; it != NULL && total < key.size; it = g_tree_node_previous (it))
    {
      PtBlock *c = node_block (it);
      if (c->size < msplit || c->stream != stream)
        break;
      if (c->es == NULL)
        {
          total += c->size;
          g_ptr_array_add (victims, c);
        }
    }
  for (guint i = 0; i < victims->len; i++)
    release_block (pt, victims->pdata[i]);
  return total >= key.size;
}

static gboolean
gc_active (const Pt *pt)
{
  return pt->a->cfg.garbage_collection_threshold > 0 && pt->a->cfg.limit != VS_ALLOC_UNLIMITED;
}

/* garbage_collect_cached_blocks: above threshold x limit reserved, frees
 * unsplit large cached blocks older than the average (age: get_free_block
 * calls since the block was cached) until the excess is reclaimed. */
static void
garbage_collect (Pt *pt)
{
  VsAlloc *a = pt->a;
  guint64 thr = (guint64) (a->cfg.garbage_collection_threshold * (double) a->cfg.limit);
  if (a->st.reserved <= thr)
    return;
  guint64 target = a->st.reserved - thr, reclaimed = 0, total_age = 0;
  gint64 count = 0;
  PtPool *p = &pt->large;
  {
    g_autoptr (GPtrArray) v = pool_blocks (p);
    for (guint i = 0; i < v->len; i++)
      {
        PtBlock *b = v->pdata[i];
        if (!is_split (b))
          {
            total_age += p->calls - b->gc_base;
            count++;
          }
      }
  }
  if (count == 0)
    return;
  gboolean freed = TRUE;
  while (reclaimed < target && freed && count > 0)
    {
      double age_thr = (double) total_age / (double) count;
      freed = FALSE;
      g_autoptr (GPtrArray) v = pool_blocks (p);
      for (guint i = 0; i < v->len; i++)
        {
          PtBlock *b = v->pdata[i];
          guint64 age = p->calls - b->gc_base;
          if (!is_split (b) && b->es == NULL && (double) age >= age_thr)
            {
              freed = TRUE;
              reclaimed += b->size;
              total_age -= age;
              count--;
              release_block (pt, b);
            }
        }
    }
}

/* ---- allocation ---- */

static PtBlock *
get_free_block (Pt *pt, PtPool *p, guint64 size, guint64 stream, gboolean expandable)
{
  const VsAllocConfig *cfg = &pt->a->cfg;
  if (gc_active (pt))
    p->calls++;
  PtBlock key = { .stream = stream, .size = size, .addr = 0 };
  GTreeNode *n = g_tree_lower_bound (p->blocks, &key);
  if (n == NULL || node_block (n)->stream != stream)
    return NULL;
  if (node_block (n)->es != NULL)
    {
      if (expandable)
        {
          /* Best fit counts an expandable block as the size it can grow to. */
#define EXP_SIZE(b) ((b)->size + ((b)->next && !(b)->next->mapped ? (b)->next->size : 0))
          GTreeNode *next = g_tree_node_next (n);
          while (node_block (n)->es != NULL && next != NULL && node_block (next)->stream == stream
                 && EXP_SIZE (node_block (next)) < EXP_SIZE (node_block (n)))
            {
              n = next;
              next = g_tree_node_next (next);
            }
#undef EXP_SIZE
        }
      else
        {
          do
            n = g_tree_node_next (n);
          while (n != NULL && node_block (n)->es != NULL && node_block (n)->stream == stream);
          if (n == NULL || node_block (n)->stream != stream)
            return NULL;
        }
    }
  PtBlock *b = node_block (n);
  if (size < cfg->max_split_size && b->size >= cfg->max_split_size)
    return NULL;
  if (size >= cfg->max_split_size && b->size >= size + cfg->max_non_split_rounding)
    return NULL;
  pool_remove (p, b);
  return b;
}

static PtBlock *
alloc_block (Pt *pt, PtPool *p, guint64 stream, guint64 size, guint64 seg_size, gboolean expandable)
{
  if (expandable)
    return try_allocate_expandable (pt, p, stream, size);
  gboolean cached = alloc_take_cache (pt->a, seg_size);
  if (!cached && alloc_over_limit (pt->a, seg_size))
    return NULL;
  guint64 addr = alloc_new_address (pt->a, seg_size, stream);
  PtBlock *b = block_new (addr, seg_size, stream, p->small, NULL, TRUE);
  if (!cached)
    alloc_note_segment (pt->a, VS_SEG_ALLOC, addr, seg_size, stream);
  return b;
}

static gboolean
should_split (const Pt *pt, const PtBlock *b, guint64 size, gboolean expandable)
{
  guint64 remaining = b->size - size;
  if (b->small || expandable)
    return remaining >= K_MIN_BLOCK;
  return size < pt->a->cfg.max_split_size && remaining > K_SMALL_SIZE;
}

static guint64
largest_free (Pt *pt)
{
  guint64 m = 0;
  PtPool *pools[] = { &pt->small, &pt->large };
  for (guint i = 0; i < 2; i++)
    {
      GTreeNode *n = g_tree_node_first (pools[i]->blocks);
      for (; n != NULL; n = g_tree_node_next (n))
        m = MAX (m, node_block (n)->size);
    }
  return m;
}

/* What allocated counts for B: its size, or with sizes_are_blocks the
 * block size the caller gave (B can be larger: a remainder of the model's
 * layout it did not split, where the real layout had none; or a 512 B
 * block for a 0 B placeholder, which counts 0). */
static guint64
counted (const VsAlloc *a, const PtBlock *b)
{
  return a->cfg.sizes_are_blocks ? MIN (b->size, b->requested) : b->size;
}

static gboolean
pt_malloc (VsAlloc *a, guint64 id, guint64 orig, guint64 stream, guint64 *addr)
{
  Pt *pt = a->priv;
  guint64 *slot = u64map_lookup (&pt->live, id);
  if (slot != NULL)
    {
      PtBlock *sb = (PtBlock *) (uintptr_t) *slot;
      g_return_val_if_fail (sb->seeded, FALSE);
      sb->seeded = 0;
      *addr = sb->addr;
      return TRUE;
    }
  const VsAllocConfig *cfg = &a->cfg;
  /* A block size is on the 512 B grid already, and rounding it by
   * roundup_power2_divisions again would count what no request asked for. */
  guint64 size = cfg->sizes_are_blocks ? MAX (K_MIN_BLOCK, (orig + K_MIN_BLOCK - 1) / K_MIN_BLOCK * K_MIN_BLOCK)
                                       : alloc_pytorch_round_size (cfg, orig);
  PtPool *p = size <= K_SMALL_SIZE ? &pt->small : &pt->large;
  guint64 seg_size = alloc_pytorch_segment_size (cfg, size);
  gboolean exp = cfg->expandable_segments;
  PtBlock *b = get_free_block (pt, p, size, stream, exp);
  if (b == NULL)
    {
      if (gc_active (pt))
        garbage_collect (pt);
      b = alloc_block (pt, p, stream, size, seg_size, exp);
      if (b == NULL && release_available (pt, p, size, stream))
        b = alloc_block (pt, p, stream, size, seg_size, exp);
      if (b == NULL)
        {
          release_cached_blocks (pt);
          a->st.retries++;
          b = alloc_block (pt, p, stream, size, seg_size, exp);
        }
      if (b == NULL)
        {
          a->st.oom_largest_free = largest_free (pt);
          a->st.oom_reserved_free = a->st.reserved - a->st.allocated;
          return FALSE;
        }
    }
  if (should_split (pt, b, size, exp))
    {
      PtBlock *rest = b;
      b = block_new (rest->addr, size, stream, rest->small, rest->es, TRUE);
      splice (b, rest->prev, rest);
      rest->addr += size;
      rest->size -= size;
      pool_insert (p, rest);
    }
  b->allocated = 1;
  b->requested = orig;
  b->id = id;
  u64map_insert (&pt->live, id, (guint64) (uintptr_t) b);
  alloc_note_allocated (a, (gint64) counted (a, b));
  *addr = b->addr;
  return TRUE;
}

static void
pt_free_request (VsAlloc *a, guint64 id)
{
  Pt *pt = a->priv;
  guint64 *slot = u64map_lookup (&pt->live, id);
  g_return_if_fail (slot != NULL);
  PtBlock *b = (PtBlock *) (uintptr_t) *slot;
  u64map_remove (&pt->live, id);
  b->allocated = 0;
  b->seeded = 0;
  b->pending = 1;
  u64map_insert (&pt->pending, id, (guint64) (uintptr_t) b);
  alloc_note_allocated (a, -(gint64) counted (a, b));
}

static void
pt_free_complete (VsAlloc *a, guint64 id)
{
  Pt *pt = a->priv;
  guint64 *slot = u64map_lookup (&pt->pending, id);
  if (slot == NULL)
    return; /* completed already (release_cached_blocks syncs) */
  PtBlock *b = (PtBlock *) (uintptr_t) *slot;
  u64map_remove (&pt->pending, id);
  free_block (pt, b);
}

static void
pt_empty_cache (VsAlloc *a)
{
  release_cached_blocks (a->priv);
}

static void
pt_sync (VsAlloc *a)
{
}

static guint64
pt_block_bytes (const VsAlloc *a, guint64 id)
{
  const Pt *pt = a->priv;
  guint64 *slot = u64map_lookup (&pt->live, id);
  return slot != NULL ? ((PtBlock *) (uintptr_t) *slot)->size : 0;
}

/* ---- warm start ---- */

static void
pt_seed_segment (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream, gboolean small,
                 gboolean expandable)
{
  Pt *pt = a->priv;
  PtPool *p = small ? &pt->small : &pt->large;
  guint64 end = addr + bytes;
  if (expandable)
    {
      PtSeg *es = seg_new (pt, addr, small ? K_SMALL_BUFFER : a->cfg.large_segment, stream, bytes);
      PtBlock *b = block_new (addr, bytes, stream, small, es, TRUE);
      if (es->size > bytes)
        {
          PtBlock *rest = block_new (addr + bytes, es->size - bytes, stream, small, es, FALSE);
          splice (rest, b, NULL);
          g_tree_insert (p->unmapped, rest, rest);
        }
      pool_insert (p, b);
      end = es->base + es->size;
    }
  else
    pool_insert (p, block_new (addr, bytes, stream, small, NULL, TRUE));
  a->st.reserved += bytes;
  /* Keep the model's own addresses clear of the seeded ones. */
  if (end > a->next_addr && addr < a->next_addr + (1ull << 40))
    a->next_addr = (end + 2 * MiB - 1) / (2 * MiB) * (2 * MiB) + 2 * MiB;
}

/* Free blocks by address alone (they never overlap, whatever their
 * stream or pool). */
static int
cmp_block_addr (gconstpointer pa, gconstpointer pb)
{
  guint64 x = ((const PtBlock *) pa)->addr, y = ((const PtBlock *) pb)->addr;
  return x < y ? -1 : x > y;
}

static gboolean
seed_index_add (gpointer key, gpointer value, gpointer data)
{
  g_tree_insert (data, value, value);
  return FALSE;
}

static gboolean
pt_seed_block (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes, guint64 requested)
{
  Pt *pt = a->priv;
  if (id == 0 || bytes == 0 || u64map_lookup (&pt->live, id) != NULL)
    return FALSE;
  /* The free block holding [addr, addr + bytes): O(log n) in an index by
   * address of both pools' free blocks, built once for a run of seeds and
   * kept by them (rebuilt when anything else changed the pools since), so
   * seeding n blocks costs n log n, not n^2. */
  if (pt->seed_idx == NULL || pt->seed_small != pt->small.changes || pt->seed_large != pt->large.changes)
    {
      if (pt->seed_idx != NULL)
        g_tree_destroy (pt->seed_idx);
      pt->seed_idx = g_tree_new (cmp_block_addr);
      g_tree_foreach (pt->small.blocks, seed_index_add, pt->seed_idx);
      g_tree_foreach (pt->large.blocks, seed_index_add, pt->seed_idx);
    }
  PtBlock key = { .addr = addr };
  GTreeNode *n = addr == G_MAXUINT64 ? NULL : g_tree_upper_bound (pt->seed_idx, &key);
  n = n != NULL ? g_tree_node_previous (n) : g_tree_node_last (pt->seed_idx);
  PtBlock *c = n != NULL ? g_tree_node_value (n) : NULL;
  if (c == NULL || !(c->addr <= addr && addr + bytes <= c->addr + c->size && addr + bytes > addr))
    return FALSE;
  PtPool *p = c->small ? &pt->small : &pt->large;
  g_tree_remove (pt->seed_idx, c);
  pool_remove (p, c);
  if (addr > c->addr)
    {
      PtBlock *front = block_new (c->addr, addr - c->addr, c->stream, c->small, c->es, TRUE);
      splice (front, c->prev, c);
      pool_insert (p, front);
      g_tree_insert (pt->seed_idx, front, front);
    }
  if (addr + bytes < c->addr + c->size)
    {
      PtBlock *back = block_new (addr + bytes, c->addr + c->size - addr - bytes, c->stream,
                                 c->small, c->es, TRUE);
      splice (back, c, c->next);
      pool_insert (p, back);
      g_tree_insert (pt->seed_idx, back, back);
    }
  pt->seed_small = pt->small.changes;
  pt->seed_large = pt->large.changes;
  c->addr = addr;
  c->size = bytes;
  c->allocated = 1;
  c->seeded = 1;
  c->id = id;
  c->requested = requested;
  u64map_insert (&pt->live, id, (guint64) (uintptr_t) c);
  alloc_note_allocated (a, (gint64) counted (a, c));
  return TRUE;
}

/* ---- life ---- */

static gpointer
pt_create (VsAlloc *a)
{
  Pt *pt = g_new0 (Pt, 1);
  pt->a = a;
  pt->small = (PtPool) { g_tree_new (cmp_size), g_tree_new (cmp_addr), TRUE, 0, 0 };
  pt->large = (PtPool) { g_tree_new (cmp_size), g_tree_new (cmp_addr), FALSE, 0, 0 };
  u64map_init (&pt->live);
  u64map_init (&pt->pending);
  pt->segs = g_ptr_array_new_with_free_func (g_free);
  return pt;
}

static gboolean
destroy_each (gpointer key, gpointer value, gpointer data)
{
  block_destroy (value);
  return FALSE;
}

static void
destroy_map (VsU64Map *m)
{
  for (gsize i = 0; i <= m->mask; i++)
    if (m->keys[i] != 0)
      block_destroy ((PtBlock *) (uintptr_t) m->vals[i]);
  u64map_clear (m);
}

static void
pt_destroy (gpointer priv)
{
  Pt *pt = priv;
  PtPool *pools[] = { &pt->small, &pt->large };
  for (guint i = 0; i < 2; i++)
    {
      g_tree_foreach (pools[i]->blocks, destroy_each, NULL);
      g_tree_foreach (pools[i]->unmapped, destroy_each, NULL);
      g_tree_destroy (pools[i]->blocks);
      g_tree_destroy (pools[i]->unmapped);
    }
  destroy_map (&pt->live);
  destroy_map (&pt->pending);
  g_ptr_array_unref (pt->segs);
  if (pt->seed_idx != NULL)
    g_tree_destroy (pt->seed_idx);
  g_free (pt);
}

const VsAllocOps alloc_pytorch_ops = {
  .name = "pytorch",
  .create = pt_create,
  .destroy = pt_destroy,
  .malloc = pt_malloc,
  .free_request = pt_free_request,
  .free_complete = pt_free_complete,
  .empty_cache = pt_empty_cache,
  .sync = pt_sync,
  .block_bytes = pt_block_bytes,
  .seed_segment = pt_seed_segment,
  .seed_block = pt_seed_block,
};
