/* test-allocator.c — the allocator models against sequences computed by
 * hand from the rules of c10/cuda/CUDACachingAllocator.cpp (see
 * sim/mem/alloc-pytorch.c). Segment events are written "A20" (segment_alloc
 * of 20 MiB), "F" free, "M" map, "U" unmap, sizes in MiB. */
#include <string.h>

#include "mem/allocator.h"

#define MiB ((guint64) 1024 * 1024)

typedef struct {
  GString *s;
  guint64 next;      /* addresses handed out by addr_source, when set */
} Rec;

static void
on_seg (const VsSegEvent *ev, gpointer data)
{
  Rec *r = data;
  static const char letter[] = "AFMU";
  if (r->s->len)
    g_string_append_c (r->s, ' ');
  if (ev->bytes % MiB == 0)
    g_string_append_printf (r->s, "%c%" G_GUINT64_FORMAT, letter[ev->action], ev->bytes / MiB);
  else
    g_string_append_printf (r->s, "%c%" G_GUINT64_FORMAT "B", letter[ev->action], ev->bytes);
}

/* Increasing addresses 1 GiB apart: segment order = address order. */
static guint64
addr_source (guint64 bytes, guint64 stream, gpointer data)
{
  Rec *r = data;
  r->next += 1ull << 30;
  return r->next;
}

static VsAlloc *
model (VsAllocConfig *cfg, Rec *r)
{
  VsAlloc *a = alloc_new (cfg);
  r->s = g_string_new (NULL);
  r->next = 0;
  alloc_set_listener (a, on_seg, r);
  alloc_set_addr_source (a, addr_source, r);
  return a;
}

static void
check (Rec *r, const char *want)
{
  g_assert_cmpstr (r->s->str, ==, want);
  g_string_truncate (r->s, 0);
}

static VsAllocStats
stats (VsAlloc *a)
{
  VsAllocStats st;
  alloc_stats (a, &st);
  return st;
}

static void
test_round (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  /* round_size: below 512 B -> 512 B; else up to a multiple of 512 B. */
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 1), ==, 512);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 512), ==, 512);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 513), ==, 1024);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 3 * MiB + 1), ==, 3 * MiB + 512);
  /* roundup_power2_divisions 4 for [2 MiB, 4 MiB) (interval index 1):
   * 3 MiB + 1 lies in [2, 4) MiB, steps of 2 MiB / 4 = 512 KiB -> 3.5 MiB;
   * a power of two stays; 1200 B (index 0, still 0) -> 1536 B. */
  cfg.roundup_power2_divisions[1] = 4;
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 3 * MiB + 1), ==, 3 * MiB + MiB / 2);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 2 * MiB), ==, 2 * MiB);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 1200), ==, 1536);
  /* With 4 divisions below 2 MiB: 1200 B is not above 512 x 4 = 2048 B, so
   * 512 B rounding (1536); 3000 B -> [2048, 4096) in steps of 512 -> 3072. */
  cfg.roundup_power2_divisions[0] = 4;
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 1200), ==, 1536);
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 2500), ==, 2560);
  cfg.roundup_power2_divisions[0] = 2;  /* [2048, 4096) in halves: 2500 -> 3072 */
  g_assert_cmpuint (alloc_pytorch_round_size (&cfg, 2500), ==, 3072);

  /* get_allocation_size: <= 1 MiB -> 2 MiB; < 10 MiB -> 20 MiB; else up to 2 MiB. */
  alloc_config_init (&cfg);
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, MiB), ==, 2 * MiB);
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, MiB + 512), ==, 20 * MiB);
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, 10 * MiB - 512), ==, 20 * MiB);
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, 10 * MiB), ==, 10 * MiB);
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, 10 * MiB + 512), ==, 12 * MiB);
  cfg.large_segment = 64 * MiB;
  g_assert_cmpuint (alloc_pytorch_segment_size (&cfg, 5 * MiB), ==, 64 * MiB);
}

/* Small pool: four 512 KiB tensors share one 2 MiB segment; the fifth
 * needs a second. Small split: a remainder of 512 B is split off. */
static void
test_small_pool (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  for (guint64 id = 1; id <= 4; id++)
    g_assert_true (alloc_malloc (a, id, 512 * 1024, 0, 0, NULL));
  check (&r, "A2");
  g_assert_true (alloc_malloc (a, 5, 512 * 1024, 0, 0, NULL));
  check (&r, "A2");
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.allocated, ==, 5 * 512 * 1024);
  g_assert_cmpuint (st.reserved, ==, 4 * MiB);
  /* Second segment: 1.5 MiB free. 1.5 MiB - 512 B leaves 512 B, split. */
  g_assert_true (alloc_malloc (a, 6, MiB, 0, 0, NULL));      /* 1 MiB: small pool, fits the 1.5 MiB */
  g_assert_true (alloc_malloc (a, 7, MiB / 2 - 512, 0, 0, NULL));
  g_assert_true (alloc_malloc (a, 8, 1, 0, 0, NULL));        /* the 512 B remainder */
  check (&r, "");
  g_assert_cmpuint (alloc_block_bytes (a, 8), ==, 512);
  g_assert_true (alloc_malloc (a, 9, 1, 0, 0, NULL));        /* nothing left: new segment */
  check (&r, "A2");
}

/* Large pool: 5 MiB takes a 20 MiB segment and splits (15 MiB > 1 MiB
 * remains); 14.5 MiB then takes the 15 MiB remainder whole (0.5 MiB
 * <= 1 MiB is not split off). Freeing both merges them back into one
 * 20 MiB block, which a 20 MiB request reuses; empty_cache frees nothing
 * while it is allocated, and the segment once it is free. */
static void
test_large_split_merge (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  guint64 a1, a2;
  g_assert_true (alloc_malloc (a, 1, 5 * MiB, 0, 10, &a1));
  check (&r, "A20");
  /* Fragmentation at the reserved peak: 1 - 5/20 so far... */
  g_assert_cmpfloat (stats (a).fragmentation_peak, ==, 0.75);
  g_assert_cmpuint (stats (a).peak_reserved_t, ==, 10);
  g_assert_true (alloc_malloc (a, 2, 14 * MiB + MiB / 2, 0, 20, &a2));
  check (&r, "");
  g_assert_cmpuint (a2, ==, a1 + 5 * MiB);
  g_assert_cmpuint (alloc_block_bytes (a, 2), ==, 15 * MiB);
  /* ... and 1 - 20/20 once the peak segment is full. */
  g_assert_cmpfloat (stats (a).fragmentation_peak, ==, 0);
  g_assert_cmpuint (stats (a).allocated, ==, 20 * MiB);
  alloc_empty_cache (a, 30);
  check (&r, "");
  alloc_free (a, 1, 40);
  alloc_free (a, 2, 50);
  g_assert_true (alloc_malloc (a, 3, 20 * MiB, 0, 60, NULL));
  check (&r, "");
  g_assert_cmpuint (alloc_block_bytes (a, 3), ==, 20 * MiB);
  alloc_empty_cache (a, 70);
  check (&r, "");
  alloc_free (a, 3, 80);
  alloc_empty_cache (a, 90);
  check (&r, "F20");
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.reserved, ==, 0);
  g_assert_cmpuint (st.peak_reserved, ==, 20 * MiB);
  g_assert_cmpuint (st.peak_allocated, ==, 20 * MiB);
  g_assert_cmpuint (st.segment_allocs, ==, 1);
  g_assert_cmpuint (st.segment_frees, ==, 1);
  g_assert_cmpuint (st.segment_alloc_bytes, ==, 20 * MiB);
}

/* Best fit: cached 30 and 24 MiB blocks; 22 MiB takes the 24 MiB one
 * (smallest that fits; 2 MiB remains, > 1 MiB, split). Between two equal
 * 24 MiB blocks the lower address wins. */
static void
test_best_fit (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  guint64 x, y, z, w;
  g_assert_true (alloc_malloc (a, 1, 30 * MiB, 0, 0, &x));
  g_assert_true (alloc_malloc (a, 2, 24 * MiB, 0, 0, &y));
  g_assert_true (alloc_malloc (a, 3, 24 * MiB, 0, 0, &z));
  check (&r, "A30 A24 A24");
  alloc_free (a, 1, 0);
  alloc_free (a, 3, 0);
  alloc_free (a, 2, 0);
  g_assert_true (alloc_malloc (a, 4, 22 * MiB, 0, 0, &w));
  check (&r, "");
  g_assert_cmpuint (w, ==, y);                 /* lower of the two 24 MiB */
  g_assert_cmpuint (alloc_block_bytes (a, 4), ==, 22 * MiB);
  g_assert_true (alloc_malloc (a, 5, 2 * MiB, 0, 0, &w));  /* 2 MiB: the remainder exactly */
  g_assert_cmpuint (w, ==, y + 22 * MiB);
  g_assert_true (alloc_malloc (a, 6, 23 * MiB, 0, 0, &w)); /* 24 MiB block at z, 1 MiB not split */
  g_assert_cmpuint (w, ==, z);
  g_assert_cmpuint (alloc_block_bytes (a, 6), ==, 24 * MiB);
  check (&r, "");
}

/* Pools are per stream: a block cached on stream 1 does not serve
 * stream 2. A block whose free is pending (used on another stream) is
 * not reusable until it completes. */
static void
test_streams (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, 30 * MiB, 1, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 2, 0, NULL));
  check (&r, "A30 A30");
  g_assert_true (alloc_malloc (a, 3, 30 * MiB, 1, 0, NULL));
  check (&r, "");
  alloc_free_request (a, 3, 0);
  g_assert_cmpuint (stats (a).allocated, ==, 30 * MiB);  /* only 2 counts */
  g_assert_true (alloc_malloc (a, 4, 30 * MiB, 1, 0, NULL));
  check (&r, "A30");
  alloc_free_complete (a, 3, 0);
  g_assert_true (alloc_malloc (a, 5, 30 * MiB, 1, 0, NULL));
  check (&r, "");
}

/* max_split_size 40 MiB: a cached 60 MiB block (oversize) serves neither
 * a 30 MiB request (below max_split_size) nor one of 39.5 MiB, but does
 * serve 50 MiB (>= 40 MiB and 60 < 50 + 20), unsplit. A 45 MiB request
 * does not take a 70 MiB block (70 >= 46 + 20). */
static void
test_oversize (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.max_split_size = 40 * MiB;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, 60 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 0, 0, NULL));
  check (&r, "A60 A30");
  g_assert_true (alloc_malloc (a, 3, 50 * MiB, 0, 0, NULL));
  check (&r, "");
  g_assert_cmpuint (alloc_block_bytes (a, 3), ==, 60 * MiB);
  g_assert_true (alloc_malloc (a, 4, 70 * MiB, 0, 0, NULL));
  alloc_free (a, 4, 0);
  g_assert_true (alloc_malloc (a, 5, 45 * MiB, 0, 0, NULL));
  check (&r, "A70 A46");

  /* max_non_split_rounding 30 MiB (PYTORCH_CUDA_ALLOC_CONF
   * max_non_split_rounding_mb:30): the same 45 MiB request now takes the
   * cached 70 MiB block whole (70 < 45 + 30), no new segment. */
  cfg.max_non_split_rounding = 30 * MiB;
  Rec r2;
  g_autoptr (VsAlloc) b = model (&cfg, &r2);
  g_assert_true (alloc_malloc (b, 4, 70 * MiB, 0, 0, NULL));
  alloc_free (b, 4, 0);
  g_assert_true (alloc_malloc (b, 5, 45 * MiB, 0, 0, NULL));
  check (&r2, "A70");
  g_assert_cmpuint (alloc_block_bytes (b, 5), ==, 70 * MiB);
}

/* Release and retry under a 64 MiB device: a 40 MiB cached segment is
 * freed so that a 30 MiB one for another stream fits. */
static void
test_release_retry (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.limit = 64 * MiB;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, 40 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 7, 0, NULL));
  check (&r, "A40 F40 A30");
  g_assert_cmpuint (stats (a).retries, ==, 1);
  g_assert_cmpuint (stats (a).reserved, ==, 30 * MiB);
}

/* OOM: 30 MiB segment holding a 10 MiB tensor and a 20 MiB free remainder
 * (split, so not releasable); 40 MiB more would pass 64 MiB. PyTorch would
 * say 20 MiB reserved but unallocated; the largest free block is 20 MiB. */
static void
test_oom (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.limit = 64 * MiB;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, 30 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 10 * MiB, 0, 0, NULL));
  g_assert_false (alloc_malloc (a, 3, 40 * MiB, 0, 5, NULL));
  check (&r, "A30");
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.ooms, ==, 1);
  g_assert_cmpuint (st.oom_requested, ==, 40 * MiB);
  g_assert_cmpuint (st.oom_largest_free, ==, 20 * MiB);
  g_assert_cmpuint (st.oom_reserved_free, ==, 20 * MiB);
  g_assert_false (alloc_is_live (a, 3));
  /* --keep-going lifts the limit. */
  alloc_set_limit (a, VS_ALLOC_UNLIMITED);
  g_assert_true (alloc_malloc (a, 3, 40 * MiB, 0, 5, NULL));
  check (&r, "A40");
}

/* release_available_cached_blocks (max_split_size 40 MiB, 100 MiB
 * device): a cached 70 MiB oversize block is released for a 45 MiB
 * (46 MiB segment) request without a full release; when the only oversize
 * block (50 MiB) is smaller than a 60 MiB request, it is freed, the total
 * falls short, and the full release and retry follow. */
static void
test_release_available (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.max_split_size = 40 * MiB;
  cfg.limit = 100 * MiB;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, 70 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 45 * MiB, 0, 0, NULL));
  check (&r, "A70 F70 A46");
  g_assert_cmpuint (stats (a).retries, ==, 0);
  alloc_free (a, 2, 0);
  alloc_empty_cache (a, 0);
  check (&r, "F46");
  g_assert_true (alloc_malloc (a, 3, 50 * MiB, 0, 0, NULL));
  g_assert_true (alloc_malloc (a, 4, 20 * MiB, 0, 0, NULL));
  alloc_free (a, 3, 0);
  g_assert_true (alloc_malloc (a, 5, 60 * MiB, 0, 0, NULL));
  check (&r, "A50 A20 F50 A60");
  g_assert_cmpuint (stats (a).retries, ==, 1);
}

/* garbage_collection_threshold 0.5 of a 100 MiB device: two cached
 * 30 MiB segments (reserved 60 > 50) of equal age are both freed before a
 * 40 MiB segment is made; without the threshold they stay. */
static void
test_gc (void)
{
  for (int on = 0; on <= 1; on++)
    {
      VsAllocConfig cfg;
      alloc_config_init (&cfg);
      cfg.limit = 100 * MiB;
      cfg.garbage_collection_threshold = on ? 0.5 : 0;
      Rec r;
      g_autoptr (VsAlloc) a = model (&cfg, &r);
      g_assert_true (alloc_malloc (a, 1, 30 * MiB, 0, 0, NULL));
      g_assert_true (alloc_malloc (a, 2, 30 * MiB, 0, 0, NULL));
      alloc_free (a, 1, 0);
      alloc_free (a, 2, 0);
      g_assert_true (alloc_malloc (a, 3, 40 * MiB, 0, 0, NULL));
      check (&r, on ? "A30 A30 F30 F30 A40" : "A30 A30 A40");
    }
}

/* Expandable segments (20 MiB pages in the large pool): 5 MiB maps one
 * page; 30 MiB then grows the segment by one more page (the 15 MiB free
 * tail + 15 MiB of new address space round up to a page) and is carved
 * from the merged 35 MiB. Freeing the 30 MiB and emptying the cache unmaps
 * the one page wholly free ([20, 40) MiB); freeing everything and emptying
 * again unmaps the rest. */
static void
test_expandable (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.expandable_segments = TRUE;
  cfg.device_total = 80ull << 30;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  guint64 x, y;
  g_assert_true (alloc_malloc (a, 1, 5 * MiB, 0, 0, &x));
  check (&r, "M20");
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 0, 0, &y));
  check (&r, "M20");
  g_assert_cmpuint (y, ==, x + 5 * MiB);
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.reserved, ==, 40 * MiB);
  g_assert_cmpuint (st.allocated, ==, 35 * MiB);
  alloc_free (a, 2, 0);
  alloc_empty_cache (a, 0);
  check (&r, "U20");
  g_assert_cmpuint (stats (a).reserved, ==, 20 * MiB);
  /* The freed page is mapped again at the same address. */
  g_assert_true (alloc_malloc (a, 3, 30 * MiB, 0, 0, &y));
  check (&r, "M20");
  g_assert_cmpuint (y, ==, x + 5 * MiB);
  alloc_free (a, 3, 0);
  alloc_free (a, 1, 0);
  alloc_empty_cache (a, 0);
  check (&r, "U40");
  st = stats (a);
  g_assert_cmpuint (st.reserved, ==, 0);
  g_assert_cmpuint (st.segment_allocs, ==, 3);   /* maps */
  g_assert_cmpuint (st.segment_frees, ==, 2);    /* unmaps */

  /* Small pool: 2 MiB pages; four 512 KiB fill one, the fifth maps the next
   * page of the same segment, right after it. */
  Rec r2;
  g_autoptr (VsAlloc) b = model (&cfg, &r2);
  guint64 first, fifth;
  for (guint64 id = 1; id <= 5; id++)
    g_assert_true (alloc_malloc (b, id, 512 * 1024, 0, 0, id == 1 ? &first : &fifth));
  check (&r2, "M2 M2");
  g_assert_cmpuint (fifth, ==, first + 2 * MiB);
  /* Under a 4 MiB limit the second page's free 1.5 MiB still serves 1 MiB
   * and 512 KiB; the next 512 KiB needs a third page: out of memory (no
   * page is wholly free to unmap). */
  alloc_set_limit (b, 4 * MiB);
  g_assert_true (alloc_malloc (b, 6, MiB, 0, 0, NULL));
  g_assert_true (alloc_malloc (b, 7, 512 * 1024, 0, 0, NULL));
  g_assert_false (alloc_malloc (b, 8, 512 * 1024, 0, 0, NULL));
  check (&r2, "");
  g_assert_cmpuint (stats (b).oom_largest_free, ==, 0);
}

/* Warm start: a seeded 20 MiB segment with id 7 at [4, 8) MiB. id 7's
 * alloc returns its block with no event; 4 MiB for id 8 takes the free
 * [0, 4) MiB exactly; freeing both merges the free space into one block
 * that a 20 MiB request reuses. */
static void
test_seed (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  guint64 base = 1ull << 40, got;
  alloc_seed_segment (a, base, 20 * MiB, 0, FALSE, FALSE);
  g_assert_true (alloc_seed_block (a, 7, base + 4 * MiB, 4 * MiB, 4 * MiB - 100));
  g_assert_false (alloc_seed_block (a, 9, base + 6 * MiB, MiB, MiB));  /* not free space */
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.reserved, ==, 20 * MiB);
  g_assert_cmpuint (st.allocated, ==, 4 * MiB);
  g_assert_cmpuint (st.segment_allocs, ==, 0);
  g_assert_true (alloc_malloc (a, 7, 4 * MiB - 100, 0, 0, &got));
  g_assert_cmpuint (got, ==, base + 4 * MiB);
  g_assert_true (alloc_malloc (a, 8, 4 * MiB, 0, 0, &got));
  g_assert_cmpuint (got, ==, base);
  alloc_free (a, 7, 0);
  alloc_free (a, 8, 0);
  g_assert_true (alloc_malloc (a, 10, 20 * MiB, 0, 0, &got));
  g_assert_cmpuint (got, ==, base);
  check (&r, "");
}

/* A seeded cache of unknown layout (50 MiB): a 30 MiB segment comes out of
 * it with no event; the next 30 MiB does not fit the 20 MiB left and is a
 * new segment; empty_cache frees the rest of the cache as one segment. */
static void
test_seed_cache (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  alloc_seed_cache (a, 50 * MiB);
  g_assert_true (alloc_malloc (a, 1, 30 * MiB, 0, 0, NULL));
  check (&r, "");
  g_assert_cmpuint (stats (a).reserved, ==, 50 * MiB);
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 0, 0, NULL));
  check (&r, "A30");
  g_assert_cmpuint (stats (a).reserved, ==, 80 * MiB);
  alloc_empty_cache (a, 0);
  check (&r, "F20");
  g_assert_cmpuint (stats (a).reserved, ==, 60 * MiB);
}

/* none: each allocation a driver call rounded to 2 MiB. */
static void
test_none (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.kind = VS_ALLOC_NONE;
  cfg.limit = 4 * MiB;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_cmpstr (alloc_kind_name (alloc_kind (a)), ==, "none");
  g_assert_true (alloc_malloc (a, 1, 1, 0, 0, NULL));
  g_assert_true (alloc_malloc (a, 2, 2 * MiB, 0, 0, NULL));
  g_assert_false (alloc_malloc (a, 3, 1, 0, 0, NULL));
  alloc_free (a, 1, 0);
  alloc_empty_cache (a, 0);
  check (&r, "A2 A2 F2");
  VsAllocStats st = stats (a);
  g_assert_cmpuint (st.allocated, ==, 2 * MiB);
  g_assert_cmpuint (st.reserved, ==, 2 * MiB);
  g_assert_cmpuint (st.peak_reserved, ==, 4 * MiB);
}

/* async: the pool grows by 2 MiB steps with what is in use, keeps what it
 * reserved (threshold: keep everything), is trimmed at a sync above a
 * threshold, and by empty_cache to what is in use. */
static void
test_async (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.kind = VS_ALLOC_ASYNC;
  Rec r;
  g_autoptr (VsAlloc) a = model (&cfg, &r);
  g_assert_true (alloc_malloc (a, 1, MiB, 0, 0, NULL));   /* in use 1 -> reserve 2 */
  g_assert_true (alloc_malloc (a, 2, MiB, 0, 0, NULL));   /* 2: fits */
  g_assert_true (alloc_malloc (a, 3, 1, 0, 0, NULL));     /* 2 MiB + 1 B -> 4 */
  check (&r, "A2 A2");
  alloc_free (a, 1, 0);
  alloc_free (a, 2, 0);
  alloc_sync (a, 0);
  check (&r, "");
  g_assert_cmpuint (stats (a).reserved, ==, 4 * MiB);
  g_assert_cmpuint (stats (a).allocated, ==, 1);
  /* Freed memory is reused for any size: 3 MiB more needs no growth. */
  g_assert_true (alloc_malloc (a, 4, 3 * MiB, 0, 0, NULL));
  check (&r, "");
  alloc_free (a, 4, 0);
  alloc_empty_cache (a, 0);
  check (&r, "F2");                                    /* back to 1 B in use -> 2 MiB */

  VsAllocConfig c2 = cfg;
  c2.release_threshold = 0;
  Rec r2;
  g_autoptr (VsAlloc) b = model (&c2, &r2);
  g_assert_true (alloc_malloc (b, 1, 5 * MiB, 0, 0, NULL));
  alloc_free (b, 1, 0);
  check (&r2, "A6");
  alloc_sync (b, 0);
  check (&r2, "F6");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/allocator/round", test_round);
  g_test_add_func ("/allocator/small-pool", test_small_pool);
  g_test_add_func ("/allocator/large-split-merge", test_large_split_merge);
  g_test_add_func ("/allocator/best-fit", test_best_fit);
  g_test_add_func ("/allocator/streams", test_streams);
  g_test_add_func ("/allocator/oversize", test_oversize);
  g_test_add_func ("/allocator/release-retry", test_release_retry);
  g_test_add_func ("/allocator/oom", test_oom);
  g_test_add_func ("/allocator/release-available", test_release_available);
  g_test_add_func ("/allocator/gc", test_gc);
  g_test_add_func ("/allocator/expandable", test_expandable);
  g_test_add_func ("/allocator/seed", test_seed);
  g_test_add_func ("/allocator/seed-cache", test_seed_cache);
  g_test_add_func ("/allocator/none", test_none);
  g_test_add_func ("/allocator/async", test_async);
  return g_test_run ();
}
