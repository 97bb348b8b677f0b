/* test-alloc-bounds.c — the allocator models' limits at their boundaries,
 * by hand. The async pool's release threshold (cudaMemPoolAttrRelease-
 * Threshold: at a synchronisation the pool keeps at most that much
 * reserved), and get_free_block's limits on an oversize cached block, from
 * c10/cuda/CUDACachingAllocator.cpp:
 *
 *   if ((p.size() < max_split_size()) && ((*it)->size >= max_split_size()))
 *     return false;
 *   if ((p.size() >= max_split_size()) &&
 *       ((*it)->size >= p.size() + max_non_split_rounding()))
 *     return false;
 *
 * Segment events are written "A40" (a new 40 MiB segment); "" is none: the
 * request was served by the cached block. */
#include "mem/allocator.h"

#define MiB ((guint64) 1024 * 1024)

static void
on_seg (const VsSegEvent *ev, gpointer data)
{
  GString *s = data;
  if (ev->action != VS_SEG_ALLOC)
    return;
  if (s->len)
    g_string_append_c (s, ' ');
  if (ev->bytes % MiB == 0)
    g_string_append_printf (s, "A%" G_GUINT64_FORMAT, ev->bytes / MiB);
  else
    g_string_append_printf (s, "A%" G_GUINT64_FORMAT "B", ev->bytes);
}

/* A model with max_split_size 40 MiB and the default max_non_split_rounding
 * (20 MiB), holding one cached, free 60 MiB block; then one request of
 * SIZE bytes. Returns the segments it allocated after the first, and the
 * bytes of the block it got. */
static char *
after_cached_60 (guint64 size, guint64 rounding, guint64 *block)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.max_split_size = 40 * MiB;
  if (rounding)
    cfg.max_non_split_rounding = rounding;
  g_autoptr (VsAlloc) a = alloc_new (&cfg);
  GString *s = g_string_new (NULL);
  alloc_set_listener (a, on_seg, s);
  g_assert_true (alloc_malloc (a, 1, 60 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_cmpstr (s->str, ==, "A60");
  g_string_truncate (s, 0);
  g_assert_true (alloc_malloc (a, 2, size, 0, 0, NULL));
  *block = alloc_block_bytes (a, 2);
  return g_string_free (s, FALSE);
}

/* 40 MiB: 60 >= 40 + 20 exactly: the block is too large: a new 40 MiB
 * segment (the request rounded to 2 MiB). */
static void
test_rounding_boundary_refuses (void)
{
  guint64 got;
  g_autofree char *segs = after_cached_60 (40 * MiB, 0, &got);
  g_assert_cmpstr (segs, ==, "A40");
  g_assert_cmpuint (got, ==, 40 * MiB);
}

/* 40 MiB + 512 B: 60 < 40 MiB + 512 B + 20 MiB: served by the 60 MiB block,
 * unsplit (at or above max_split_size nothing is split). */
static void
test_rounding_just_inside_serves (void)
{
  guint64 got;
  g_autofree char *segs = after_cached_60 (40 * MiB + 512, 0, &got);
  g_assert_cmpstr (segs, ==, "");
  g_assert_cmpuint (got, ==, 60 * MiB);
}

/* max_non_split_rounding 10 MiB: a 50 MiB request (60 >= 50 + 10) is
 * refused too: a new 50 MiB segment; 50 MiB + 512 B is served. */
static void
test_rounding_configured (void)
{
  guint64 got;
  g_autofree char *segs = after_cached_60 (50 * MiB, 10 * MiB, &got);
  g_assert_cmpstr (segs, ==, "A50");
  g_autofree char *segs2 = after_cached_60 (50 * MiB + 512, 10 * MiB, &got);
  g_assert_cmpstr (segs2, ==, "");
  g_assert_cmpuint (got, ==, 60 * MiB);
}

/* The other limit at its boundary: a request of max_split_size itself
 * (40 MiB, not below it) may take the oversize block (see the first test
 * for why this one does not: use 41 MiB, 60 < 61); one of 40 MiB - 512 B
 * (below max_split_size) may not: a new segment of 40 MiB (rounded up to
 * 2 MiB). */
static void
test_split_size_boundary (void)
{
  guint64 got;
  g_autofree char *segs = after_cached_60 (41 * MiB, 0, &got);
  g_assert_cmpstr (segs, ==, "");
  g_assert_cmpuint (got, ==, 60 * MiB);
  g_autofree char *segs2 = after_cached_60 (40 * MiB - 512, 0, &got);
  g_assert_cmpstr (segs2, ==, "A40");
}

/* The first limit's boundary: a cached block of exactly max_split_size
 * (40 MiB) is oversize ("size >= max_split_size"): a 30 MiB request (below
 * max_split_size) may not take it: a new 30 MiB segment. */
static void
test_block_at_split_size (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.max_split_size = 40 * MiB;
  g_autoptr (VsAlloc) a = alloc_new (&cfg);
  GString *s = g_string_new (NULL);
  alloc_set_listener (a, on_seg, s);
  g_assert_true (alloc_malloc (a, 1, 40 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  g_assert_true (alloc_malloc (a, 2, 30 * MiB, 0, 0, NULL));
  g_assert_cmpstr (s->str, ==, "A40 A30");
  g_assert_cmpuint (alloc_block_bytes (a, 2), ==, 30 * MiB);
  /* Below it, a cached 38 MiB block (not oversize) serves 38 MiB - 1 KiB
   * (the 40 MiB one refuses the 38 MiB request that made it). */
  alloc_free (a, 2, 0);
  g_assert_true (alloc_malloc (a, 3, 38 * MiB, 0, 0, NULL));
  alloc_free (a, 3, 0);
  g_string_truncate (s, 0);
  g_assert_true (alloc_malloc (a, 4, 38 * MiB - 1024, 0, 0, NULL));
  g_assert_cmpstr (s->str, ==, "");
  g_string_free (s, TRUE);
}

/* cudaMallocAsync's pool with a 40 MiB release threshold (2 MiB
 * granularity): 64 MiB allocated and freed leaves 64 MiB reserved; a
 * synchronisation trims it to the threshold: 24 MiB released. A second
 * pool, 40 MiB allocated and freed: reserved is at the threshold, not
 * above it: nothing released. */
static void
test_async_release_threshold (void)
{
  VsAllocConfig cfg;
  alloc_config_init (&cfg);
  cfg.kind = VS_ALLOC_ASYNC;
  cfg.release_threshold = 40 * MiB;
  g_autoptr (VsAlloc) a = alloc_new (&cfg);
  g_assert_true (alloc_malloc (a, 1, 64 * MiB, 0, 0, NULL));
  alloc_free (a, 1, 0);
  VsAllocStats st;
  alloc_stats (a, &st);
  g_assert_cmpuint (st.reserved, ==, 64 * MiB);
  alloc_sync (a, 0);
  alloc_stats (a, &st);
  g_assert_cmpuint (st.reserved, ==, 40 * MiB);
  g_autoptr (VsAlloc) b = alloc_new (&cfg);
  g_assert_true (alloc_malloc (b, 1, 40 * MiB, 0, 0, NULL));
  alloc_free (b, 1, 0);
  alloc_sync (b, 0);
  alloc_stats (b, &st);
  g_assert_cmpuint (st.reserved, ==, 40 * MiB);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/free-block/rounding-boundary-refuses", test_rounding_boundary_refuses);
  g_test_add_func ("/free-block/rounding-just-inside-serves", test_rounding_just_inside_serves);
  g_test_add_func ("/free-block/rounding-configured", test_rounding_configured);
  g_test_add_func ("/free-block/split-size-boundary", test_split_size_boundary);
  g_test_add_func ("/free-block/block-at-split-size", test_block_at_split_size);
  g_test_add_func ("/async/release-threshold", test_async_release_threshold);
  return g_test_run ();
}
