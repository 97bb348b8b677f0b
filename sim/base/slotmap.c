/* slotmap.c — see slotmap.h. */
#include "base/slotmap.h"

void
slotmap_init (VsSlotMap *m)
{
  m->keys = g_new (guint64, VS_SLOTS);
  for (gsize i = 0; i < VS_SLOTS; i++)
    m->keys[i] = VS_SLOT_EMPTY;
  m->vals = g_new0 (guint64, VS_SLOTS);
  u64map_init (&m->spill);
  m->len = 0;
}

void
slotmap_clear (VsSlotMap *m)
{
  g_clear_pointer (&m->keys, g_free);
  g_clear_pointer (&m->vals, g_free);
  u64map_clear (&m->spill);
  m->len = 0;
}

guint64 *
slotmap_lookup_spill (VsSlotMap *m, guint64 key)
{
  if (m->spill.len == 0)
    return NULL;   /* most of the time: no hashing */
  guint64 *v = u64map_lookup (&m->spill, key);
  if (v == NULL)
    return NULL;
  gsize i = VS_SLOT (key);
  if (m->keys[i] != VS_SLOT_EMPTY)
    return v;
  m->keys[i] = key;
  m->vals[i] = *v;
  u64map_remove (&m->spill, key);
  return &m->vals[i];
}
