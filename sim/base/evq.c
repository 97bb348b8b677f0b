/* evq.c — binary min-heap of timed simulator events (see evq.h). */
#include "base/evq.h"

#include <math.h>


VsEvq *
evq_new (void)
{
  VsEvq *q = g_new0 (VsEvq, 1);
  q->next_t = INFINITY;
  q->cap = 64;
  q->heap = g_new (VsEvqItem, q->cap);
  return q;
}

void
evq_free (VsEvq *q)
{
  if (q == NULL)
    return;
  g_free (q->heap);
  g_free (q);
}

static inline gboolean
before (const VsEvqItem *a, const VsEvqItem *b)
{
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void
evq_push (VsEvq *q, double t, guint kind, gpointer obj, guint64 arg)
{
  g_assert (!isnan (t));
  if (q->len == q->cap)
    {
      q->cap *= 2;
      q->heap = g_renew (VsEvqItem, q->heap, q->cap);
    }
  VsEvqItem it = { t, q->next_seq++, kind, obj, arg };
  guint i = q->len++;
  while (i > 0)
    {
      guint parent = (i - 1) / 2;
      if (!before (&it, &q->heap[parent]))
        break;
      q->heap[i] = q->heap[parent];
      i = parent;
    }
  q->heap[i] = it;
  q->next_t = q->heap[0].t;
}

gboolean
evq_pop (VsEvq *q, VsEvqItem *out)
{
  if (q->len == 0)
    return FALSE;
  *out = q->heap[0];
  VsEvqItem last = q->heap[--q->len];
  guint i = 0;
  for (;;)
    {
      guint l = 2 * i + 1, r = l + 1, m = i;
      const VsEvqItem *best = &last;
      if (l < q->len && before (&q->heap[l], best))
        m = l, best = &q->heap[l];
      if (r < q->len && before (&q->heap[r], best))
        m = r;
      if (m == i)
        break;
      q->heap[i] = q->heap[m];
      i = m;
    }
  if (q->len > 0)
    q->heap[i] = last;
  q->next_t = q->len > 0 ? q->heap[0].t : INFINITY;
  return TRUE;
}


guint
evq_len (const VsEvq *q)
{
  return q->len;
}
