/* test-spans.c — capture/spans.h, the interval union CUPTI mode uses to
 * take unified-memory fault handling out of kernel durations: merges and
 * overlaps against values worked out by hand. */
#include <glib.h>

#include "../../capture/spans.h"

/* Overlapping, touching, nested, empty and out-of-order spans merge into
 * their union. */
static void
test_merge (void)
{
  Span sp[] = { { 500, 800 }, { 100, 200 }, { 150, 300 }, { 300, 350 }, { 600, 700 }, { 900, 900 },
                { 1000, 1100 } };
  size_t n = spans_merge (sp, G_N_ELEMENTS (sp));
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpuint (sp[0].s, ==, 100);
  g_assert_cmpuint (sp[0].e, ==, 350);   /* 100-200, 150-300 and the touching 300-350 */
  g_assert_cmpuint (sp[1].s, ==, 500);
  g_assert_cmpuint (sp[1].e, ==, 800);   /* 600-700 inside 500-800 */
  g_assert_cmpuint (sp[2].s, ==, 1000);
  g_assert_cmpuint (sp[2].e, ==, 1100);  /* 900-900 was empty */
  g_assert_cmpuint (spans_merge (sp, 0), ==, 0);
}

/* The fault-handling time inside a kernel: the part of the union inside
 * [s, e). */
static void
test_overlap (void)
{
  /* The stub's managed kernel: start S, duration D = 4000; a fault group
   * [S, S + D/4) and a migration [S + D/8, S + D/2): union D/2 = 2000. */
  const uint64_t S = 1000000;
  Span k[] = { { S, S + 1000 }, { S + 500, S + 2000 } };
  size_t nk = spans_merge (k, 2);
  g_assert_cmpuint (spans_overlap (k, nk, S, S + 4000), ==, 2000);

  Span sp[] = { { 100, 350 }, { 500, 800 }, { 1000, 1100 } };
  g_assert_cmpuint (spans_overlap (sp, 3, 0, 2000), ==, 250 + 300 + 100);
  g_assert_cmpuint (spans_overlap (sp, 3, 200, 600), ==, 150 + 100);  /* straddles both ends */
  g_assert_cmpuint (spans_overlap (sp, 3, 350, 500), ==, 0);          /* the gap between */
  g_assert_cmpuint (spans_overlap (sp, 3, 600, 700), ==, 100);        /* inside one span */
  g_assert_cmpuint (spans_overlap (sp, 3, 1100, 5000), ==, 0);        /* after the last */
  g_assert_cmpuint (spans_overlap (sp, 3, 0, 100), ==, 0);            /* before the first */
  g_assert_cmpuint (spans_overlap (sp, 3, 700, 700), ==, 0);          /* an empty kernel */
  g_assert_cmpuint (spans_overlap (sp, 0, 0, 5000), ==, 0);
}

/* Many spans: the binary search finds the first span a late interval
 * reaches, and the sum equals a brute-force count. */
static void
test_many (void)
{
  enum { N = 2000 };
  Span *sp = g_new (Span, N);
  GRand *r = g_rand_new_with_seed (11);
  for (int i = 0; i < N; i++) {
    uint64_t s = (uint64_t) g_rand_int_range (r, 0, 100000);
    sp[i] = (Span) { s, s + (uint64_t) g_rand_int_range (r, 0, 200) };
  }
  /* Brute force: which ns of [0, 100200) are covered, before merging. */
  guint8 *cov = g_new0 (guint8, 100200);
  for (int i = 0; i < N; i++)
    for (uint64_t t = sp[i].s; t < sp[i].e; t++)
      cov[t] = 1;
  size_t n = spans_merge (sp, N);
  for (size_t i = 1; i < n; i++)
    g_assert_cmpuint (sp[i - 1].e, <, sp[i].s);
  for (int q = 0; q < 200; q++) {
    uint64_t s = (uint64_t) g_rand_int_range (r, 0, 100000);
    uint64_t e = s + (uint64_t) g_rand_int_range (r, 0, 5000);
    uint64_t want = 0;
    for (uint64_t t = s; t < e && t < 100200; t++)
      want += cov[t];
    g_assert_cmpuint (spans_overlap (sp, n, s, e), ==, want);
  }
  g_free (cov);
  g_free (sp);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/spans/merge", test_merge);
  g_test_add_func ("/spans/overlap", test_overlap);
  g_test_add_func ("/spans/many", test_many);
  return g_test_run ();
}
