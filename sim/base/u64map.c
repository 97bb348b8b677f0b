/* u64map.c — open-addressing map of nonzero guint64 keys to guint64
 * values: linear probing, backward-shift deletion, power-of-two capacity.
 * Used on the hot path by the trace readers (per-thread times; live ids
 * through slotmap.h), the replay engine (streams, events, kernel names;
 * live allocations through slotmap.h), where
 * GHashTable's indirection cost 5 % of all instructions. */
#include "base/u64map.h"

#define u64_hash u64map_hash


void
u64map_init (VsU64Map *m)
{
  m->mask = 15;
  m->len = 0;
  m->keys = g_new0 (guint64, m->mask + 1);
  m->vals = g_new0 (guint64, m->mask + 1);
}

void
u64map_clear (VsU64Map *m)
{
  g_clear_pointer (&m->keys, g_free);
  g_clear_pointer (&m->vals, g_free);
  m->len = 0;
}


static void
u64map_grow (VsU64Map *m)
{
  guint64 *ok = m->keys, *ov = m->vals;
  gsize ocap = m->mask + 1;
  m->mask = ocap * 2 - 1;
  m->keys = g_new0 (guint64, m->mask + 1);
  m->vals = g_new0 (guint64, m->mask + 1);
  for (gsize j = 0; j < ocap; j++)
    if (ok[j] != 0)
      {
        gsize i = u64_hash (ok[j]) & m->mask;
        while (m->keys[i] != 0)
          i = (i + 1) & m->mask;
        m->keys[i] = ok[j];
        m->vals[i] = ov[j];
      }
  g_free (ok);
  g_free (ov);
}

/* The slot of KEY, or the empty slot where it would go, after making room
 * for one more key. */
static inline gsize
slot_for_insert (VsU64Map *m, guint64 key)
{
  if ((m->len + 1) * 2 > m->mask + 1)
    u64map_grow (m);
  gsize i = u64_hash (key) & m->mask;
  while (m->keys[i] != 0 && m->keys[i] != key)
    i = (i + 1) & m->mask;
  return i;
}

void
u64map_insert (VsU64Map *m, guint64 key, guint64 val)
{
  g_return_if_fail (key != 0);
  gsize i = slot_for_insert (m, key);
  if (m->keys[i] == 0)
    m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
}

gboolean
u64map_insert_new (VsU64Map *m, guint64 key, guint64 val)
{
  g_return_val_if_fail (key != 0, FALSE);
  gsize i = slot_for_insert (m, key);
  if (m->keys[i] == key)
    return FALSE;
  m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
  return TRUE;
}

gboolean
u64map_remove (VsU64Map *m, guint64 key)
{
  if (key == 0)
    return FALSE;
  gsize i = u64_hash (key) & m->mask;
  while (m->keys[i] != key)
    {
      if (m->keys[i] == 0)
        return FALSE;
      i = (i + 1) & m->mask;
    }
  /* Backward shift: pull later members of the cluster into the hole. */
  gsize j = i;
  for (;;)
    {
      j = (j + 1) & m->mask;
      if (m->keys[j] == 0)
        break;
      gsize home = u64_hash (m->keys[j]) & m->mask;
      /* Move j into i unless its home lies cyclically in (i, j]. */
      gboolean stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays)
        {
          m->keys[i] = m->keys[j];
          m->vals[i] = m->vals[j];
          i = j;
        }
    }
  m->keys[i] = 0;
  m->vals[i] = 0;
  m->len--;
  return TRUE;
}
