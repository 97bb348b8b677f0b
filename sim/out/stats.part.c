/* stats.part.c — the statistics the report counts per kernel name, per
 * mark and per tag: looked up here, by name, so that the engine's parts
 * only say what happened (a kernel completed, a mark was reached, an
 * allocation was tagged). Always on: the report needs them; the kernel
 * lookup is on every kernel's path, so it is inline and cached.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* Kernel OP completed at END: its name's row (count, captured and
 * predicted time, stall). */
static inline __attribute__ ((always_inline)) void
stats_kernel (Sim *s, const Op *op, double end)
{
  const char *name = op->name ? op->name : "(unnamed)";
  /* Readers intern names: look up by address first (a small cache,
   * then the map), by text after. */
  guint h = ptr_slot (name, KCACHE_BITS);
  __typeof__ (&s->stats.kcache[0]) e = &s->stats.kcache[h], home = e;
  KernelStat *k = NULL;
  for (guint p = 0; p < KF_PROBES; p++, e = &s->stats.kcache[(h + p) & (KCACHE - 1)])
    {
      if (G_LIKELY (e->name == name))
        {
          k = e->k;
          break;
        }
      if (e->name == NULL)
        break;
    }
  if (G_UNLIKELY (k == NULL))
    {
      if (e->name != NULL)
        e = home;
      guint64 *kp = u64map_lookup (&s->stats.kernel_by_ptr, GPOINTER_TO_SIZE (name));
      k = kp ? GSIZE_TO_POINTER (*kp) : NULL;
      if (k == NULL)
        {
          k = g_hash_table_lookup (s->stats.kernels, name);
          if (k == NULL)
            {
              k = g_new0 (KernelStat, 1);
              k->name = name;
              g_hash_table_insert (s->stats.kernels, (gpointer) name, k);
            }
          u64map_insert (&s->stats.kernel_by_ptr, GPOINTER_TO_SIZE (name), GPOINTER_TO_SIZE (k));
        }
      e->name = name;
      e->k = k;
    }
  k->count++;
  k->captured_ns += op->dur == VS_NONE ? 0 : i2d (op->dur);
  k->predicted_ns += end - op->ready_t;
  /* Its class's row (kernel-class.h) and the time of its bound. */
  guint cls = op->kf->kind.cls;
  s->stats.kclass[cls].count++;
  s->stats.kclass[cls].captured_ns += op->dur == VS_NONE ? 0 : i2d (op->dur);
  s->stats.kclass[cls].predicted_ns += end - op->ready_t;
  s->stats.kclass[cls].bound_ns[op->kbound] += end - op->ready_t;
  k->stall_ns += MAX (0.0, end - op->ready_t - op->alone_ns);
}

/* The index of TAG's row in tag_stats (NULL: "untagged"). */
static int
stats_tag (Sim *s, const char *tag)
{
  if (tag == NULL)
    tag = "untagged";
  if (tag == s->stats.last_tag)
    return s->stats.last_tag_index;   /* readers intern strings: same text, same address */
  gpointer v;
  if (g_hash_table_lookup_extended (s->stats.tags, tag, NULL, &v))
    {
      s->stats.last_tag = tag;
      s->stats.last_tag_index = GPOINTER_TO_INT (v);
      return GPOINTER_TO_INT (v);
    }
  TagStat t = { g_strdup (tag), 0, 0 };
  g_array_append_val (s->stats.tag_stats, t);
  int i = (int) s->stats.tag_stats->len - 1;
  g_hash_table_insert (s->stats.tags, t.name, GINT_TO_POINTER (i));
  return i;
}
