/* u64map.h — a map of nonzero guint64 keys to guint64 values (see u64map.c). */
#pragma once

#include <glib.h>

typedef struct {
  guint64 *keys;     /* 0 = empty */
  guint64 *vals;
  gsize mask;        /* capacity - 1; capacity is a power of two */
  gsize len;
} VsU64Map;

void u64map_init (VsU64Map *m);
void u64map_clear (VsU64Map *m);
static inline gsize
u64map_hash (guint64 k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (gsize) k;
}

/* Returns a pointer to the value of KEY, or NULL (always for key 0).
 * Inline: it runs several times per event. */
static inline guint64 *
u64map_lookup (const VsU64Map *m, guint64 key)
{
  if (key == 0)
    return NULL;
  for (gsize i = u64map_hash (key) & m->mask;; i = (i + 1) & m->mask)
    {
      if (m->keys[i] == key)
        return &m->vals[i];
      if (m->keys[i] == 0)
        return NULL;
    }
}
/* Inserts or replaces; KEY must not be 0. */
void u64map_insert (VsU64Map *m, guint64 key, guint64 val);
/* Inserts KEY unless it is there; FALSE (and the map unchanged) if it was.
 * One probe where lookup + insert take two. KEY must not be 0. */
gboolean u64map_insert_new (VsU64Map *m, guint64 key, guint64 val);
/* Removes KEY; FALSE if it was absent. */
gboolean u64map_remove (VsU64Map *m, guint64 key);
