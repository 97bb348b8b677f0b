/* spans.h — sets of time intervals, for CUPTI mode's unified-memory
 * accounting (cupti.c): the fault-handling intervals that CUPTI reports
 * (GPU page-fault groups, migrations) are merged into a union, and a
 * kernel's duration loses the part of it that falls inside the kernel.
 *
 * Header-only and libc-only: the shim is injected into other programs and
 * tests/capture/test-spans.c checks these functions by hand-computed values. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* [s, e), in ns; a span with e <= s is empty. */
typedef struct { uint64_t s, e; } Span;

static int
span_cmp (const void *a, const void *b)
{
  const Span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Sorts SP[0..N) and merges overlapping or touching spans in place;
 * empty spans are dropped. Returns the new count. */
static inline size_t
spans_merge (Span *sp, size_t n)
{
  qsort (sp, n, sizeof *sp, span_cmp);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (sp[i].e <= sp[i].s)
      continue;
    if (k > 0 && sp[i].s <= sp[k - 1].e) {
      if (sp[i].e > sp[k - 1].e)
        sp[k - 1].e = sp[i].e;
    } else {
      sp[k++] = sp[i];
    }
  }
  return k;
}

/* How much of [s, e) the merged spans SP[0..N) (spans_merge) cover. */
static inline uint64_t
spans_overlap (const Span *sp, size_t n, uint64_t s, uint64_t e)
{
  if (e <= s)
    return 0;
  /* First span that ends after s. */
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sp[mid].e <= s)
      lo = mid + 1;
    else
      hi = mid;
  }
  uint64_t sum = 0;
  for (size_t i = lo; i < n && sp[i].s < e; i++) {
    uint64_t a = sp[i].s > s ? sp[i].s : s, b = sp[i].e < e ? sp[i].e : e;
    sum += b - a;
  }
  return sum;
}
