/* evq.h — the simulator's event queue: a binary min-heap ordered by time,
 * then by insertion order, so equal-time events pop first-in first-out and
 * every replay is deterministic. */
#pragma once

#include <glib.h>

typedef struct {
  double t;         /* simulated ns */
  guint64 seq;      /* insertion order: the tie-breaker */
  guint kind;       /* what happens (the engine's enumeration) */
  gpointer obj;     /* to whom */
  guint64 arg;      /* a generation stamp or small payload */
} VsEvqItem;

typedef struct _VsEvq VsEvq;
struct _VsEvq {       /* open for the inline peek below; use the functions */
  double next_t;      /* heap[0].t, or +infinity when empty: the event
                       * loop peeks about twice per event */
  VsEvqItem *heap;
  guint len, cap;
  guint64 next_seq;
};

VsEvq *evq_new (void);
void evq_free (VsEvq *q);
void evq_push (VsEvq *q, double t, guint kind, gpointer obj, guint64 arg);
/* Removes the earliest item into *out; FALSE when empty. */
gboolean evq_pop (VsEvq *q, VsEvqItem *out);
/* Time of the earliest item, or +infinity when empty. */
static inline double
evq_peek_time (const VsEvq *q)
{
  return q->next_t;
}
guint evq_len (const VsEvq *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsEvq, evq_free)
