/* slotmap.h — a map of live ids (nonzero guint64 keys below G_MAXUINT64)
 * to guint64 values for ids that are mostly made in order and either live
 * briefly or stay live and are used often: allocation ids, in the trace
 * readers' validation and in the replay engine. A direct-mapped table
 * (slot = key & mask) answers most lookups with one load and most adds
 * and removes without hashing; a key whose slot another key holds waits
 * in a VsU64Map and moves into its slot when found there free (inserting
 * every id into a map and removing it again cost 3 % of replay time). */
#pragma once

#include "base/u64map.h"

#define VS_SLOT_EMPTY G_MAXUINT64
/* Slots: a constant, so that finding one is a mask by an immediate. */
#define VS_SLOTS 4096
#define VS_SLOT(key) ((gsize) (key) & (VS_SLOTS - 1))

typedef struct {
  guint64 *keys;     /* slot VS_SLOT (key): its key, or VS_SLOT_EMPTY (open for fast paths that test a slot inline) */
  guint64 *vals;
  VsU64Map spill;    /* keys whose slot another key holds */
  gsize len;         /* keys in all */
} VsSlotMap;

void slotmap_init (VsSlotMap *m);
void slotmap_clear (VsSlotMap *m);
/* The value of KEY when it is not in its slot (NULL if absent), moving it
 * into its slot if that is free. Out of line, so that the loops around a
 * lookup keep their registers. */
guint64 *slotmap_lookup_spill (VsSlotMap *m, guint64 key);

/* Returns a pointer to the value of KEY, or NULL (always for key 0). */
static inline guint64 *
slotmap_lookup (VsSlotMap *m, guint64 key)
{
  gsize i = VS_SLOT (key);
  if (G_LIKELY (m->keys[i] == key))
    return &m->vals[i];
  return slotmap_lookup_spill (m, key);
}

/* Adds KEY, which must be absent, into its slot (the newest keys are used
 * most); a key holding that slot moves to the spill map. */
static inline void
slotmap_add (VsSlotMap *m, guint64 key, guint64 val)
{
  gsize i = VS_SLOT (key);
  if (m->keys[i] != VS_SLOT_EMPTY)
    u64map_insert (&m->spill, m->keys[i], m->vals[i]);
  m->keys[i] = key;
  m->vals[i] = val;
  m->len++;
}

/* Removes KEY; FALSE if it was absent. */
static inline gboolean
slotmap_remove (VsSlotMap *m, guint64 key)
{
  gsize i = VS_SLOT (key);
  if (m->keys[i] == key)
    m->keys[i] = VS_SLOT_EMPTY;
  else if (!u64map_remove (&m->spill, key))
    return FALSE;
  m->len--;
  return TRUE;
}
