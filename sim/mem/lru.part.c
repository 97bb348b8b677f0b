/* lru.part.c — least-recently-used order of device-resident and managed
 * allocations (what spill and eviction pick first).
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static Lru *
lru_of (Sim *s, const Alloc *a)
{
  return a->kind == VS_MEM_MANAGED ? &s->mem.lru_man : &s->mem.lru_dev;
}

static void
lru_remove (Sim *s, Alloc *a)
{
  if (!a->in_lru)
    return;
  Lru *l = lru_of (s, a);
  if (a->lru_prev) a->lru_prev->lru_next = a->lru_next; else l->head = a->lru_next;
  if (a->lru_next) a->lru_next->lru_prev = a->lru_prev; else l->tail = a->lru_prev;
  a->lru_prev = a->lru_next = NULL;
  a->in_lru = FALSE;
}

static void
lru_touch (Sim *s, Alloc *a)
{
  if (a->kind == VS_MEM_PINNED || a->freed || (a->kind == VS_MEM_DEVICE && !s->mem.spill))
    return;
  if (a->kind == VS_MEM_MANAGED && a->resident_groups == 0)
    {
      lru_remove (s, a);
      return;
    }
  lru_remove (s, a);
  Lru *l = lru_of (s, a);
  a->lru_prev = l->tail;
  if (l->tail) l->tail->lru_next = a; else l->head = a;
  l->tail = a;
  a->in_lru = TRUE;
}

static gboolean
evictable (const Alloc *a, Alloc *const *keep, guint n_keep)
{
  if (a->running > 0 || (a->moving && !a->moving->c.done))
    return FALSE;
  for (guint i = 0; i < n_keep; i++)
    if (keep[i] == a)
      return FALSE;
  return TRUE;
}
