/* snapshot-parts.c — the dumps of one memory history joined into one window
 * (snapshot-parts.h).
 *
 * Why the longest shared run: torch's ring buffer keeps the last N actions,
 * and a dump copies it without clearing it, so a later dump begins with the
 * actions the earlier one ended with, unless at least N actions came
 * between them. An action is (action, addr, size, stream, time_us); with
 * time_us (torch 2.1 and later: every dump vramcap's hook makes) two
 * different actions are equal only if the allocator did the same thing to
 * the same address within one microsecond, so a false overlap needs a
 * repeated run of such actions straddling the dump. The longest such run is
 * found in O(n + m) (the KMP failure function of the later dump's actions,
 * run over the earlier's).
 *
 * Why resynchronise at a gap: the lost actions changed the allocator's
 * state, and everything after the gap assumes the later state (a free of a
 * block allocated in the gap, a segment mapped in it). The later dump's
 * start, rewound from its own final state, is that state; the earlier's end
 * is its start played forward. Their differences are what the gap did, as
 * far as it shows at its end (a tensor allocated and freed inside it
 * leaves nothing): they become synthetic actions at the later dump's first
 * time. Segments released in the gap become one empty_cache (the only way
 * a tensor trace says that cached segments went back to the driver; the
 * allocator model then frees all its cached unused segments, which may be
 * more than the gap did). Segments are
 * compared whole (address and size; adjacent mapped ranges of an
 * expandable segment joined first). */
#include "import/snapshot-parts.h"

#include <string.h>

#include "import/import-priv.h"

#define MiB (G_GUINT64_CONSTANT (1024) * 1024)

void
snapshot_join_clear (VsSnapJoin *j)
{
  g_free (j->note);
  *j = (VsSnapJoin) { 0 };
}

static gboolean
same (const VsSnapAction *a, const VsSnapAction *b)
{
  return a->action == b->action && a->addr == b->addr && a->size == b->size && a->stream == b->stream
         && a->t_us == b->t_us;
}

/* The length of the longest run that ends A and begins B. */
static guint
overlap (const GArray *a, const GArray *b)
{
  guint n = a->len, m = b->len;
  if (n == 0 || m == 0)
    return 0;
  const VsSnapAction *x = (const VsSnapAction *) a->data, *p = (const VsSnapAction *) b->data;
  g_autofree guint *fail = g_new0 (guint, m);
  for (guint i = 1, k = 0; i < m; i++)
    {
      while (k > 0 && !same (&p[i], &p[k]))
        k = fail[k - 1];
      if (same (&p[i], &p[k]))
        k++;
      fail[i] = k;
    }
  guint q = 0;
  for (guint i = 0; i < n; i++)
    {
      if (q == m)
        q = fail[q - 1];
      while (q > 0 && !same (&x[i], &p[q]))
        q = fail[q - 1];
      if (same (&x[i], &p[q]))
        q++;
    }
  return q;
}

static int
cmp_seg (gconstpointer a, gconstpointer b)
{
  guint64 x = ((const VsSnapSegment *) a)->addr, y = ((const VsSnapSegment *) b)->addr;
  return x < y ? -1 : x > y;
}

/* By address, adjacent ranges of expandable segments joined. */
static void
normalise (GArray *segs)
{
  g_array_sort (segs, cmp_seg);
  guint o = 0;
  for (guint i = 0; i < segs->len; i++)
    {
      VsSnapSegment *g = &g_array_index (segs, VsSnapSegment, i);
      VsSnapSegment *last = o > 0 ? &g_array_index (segs, VsSnapSegment, o - 1) : NULL;
      if (last != NULL && last->expandable && g->expandable && last->addr + last->size == g->addr)
        last->size += g->size;
      else
        g_array_index (segs, VsSnapSegment, o++) = *g;
    }
  g_array_set_size (segs, o);
}

/* Segments by address in a tree (snapshot_seg_tree_*): each action
 * O(log n), so playing n actions forward costs n log n (it used to re-sort
 * the whole list at every segment_map). */

/* Takes [addr, addr + size) out of the mapped ranges. */
static void
unmap_range (GTree *t, guint64 addr, guint64 size)
{
  guint64 end = addr + size < addr ? G_MAXUINT64 : addr + size;
  GTreeNode *n = snapshot_seg_tree_at_or_before (t, addr);
  if (n == NULL)
    n = g_tree_node_first (t);
  g_autoptr (GArray) hit = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  for (; n != NULL; n = g_tree_node_next (n))
    {
      const VsSnapSegment *g = g_tree_node_value (n);
      if (g->addr >= end)
        break;
      if (g->addr + g->size > addr)
        g_array_append_val (hit, *g);
    }
  for (guint i = 0; i < hit->len; i++)
    {
      VsSnapSegment g = g_array_index (hit, VsSnapSegment, i);
      g_tree_remove (t, &g);
      VsSnapSegment head = g, tail = g;
      head.size = addr > g.addr ? addr - g.addr : 0;
      tail.addr = MAX (end, g.addr);
      tail.size = g.addr + g.size > tail.addr ? g.addr + g.size - tail.addr : 0;
      if (head.size > 0)
        snapshot_seg_tree_put (t, &head);
      if (tail.size > 0)
        snapshot_seg_tree_put (t, &tail);
    }
}

/* Maps G (expandable): joined to the expandable ranges it touches. */
static void
map_range (GTree *t, VsSnapSegment g)
{
  GTreeNode *n = g.addr > 0 ? snapshot_seg_tree_at_or_before (t, g.addr - 1) : NULL;
  const VsSnapSegment *before = n != NULL ? g_tree_node_value (n) : NULL;
  if (before != NULL && before->expandable && before->addr + before->size == g.addr)
    {
      VsSnapSegment b = *before;
      g_tree_remove (t, &b);
      g.size += b.size;
      g.addr = b.addr;
    }
  const VsSnapSegment *after = g_tree_lookup (t, &(VsSnapSegment) { .addr = g.addr + g.size });
  if (after != NULL && after->expandable)
    {
      VsSnapSegment a = *after;
      g_tree_remove (t, &a);
      g.size += a.size;
    }
  snapshot_seg_tree_put (t, &g);
}

/* S's state after its last action: segments into SEGS (normalised),
 * blocks into BLOCKS (addr -> VsSnapBlock*, borrowed frames). */
static void
play_forward (const VsSnapshot *s, GArray *segs, GHashTable *blocks)
{
  g_autoptr (GTree) t = snapshot_seg_tree_new ();
  for (guint i = 0; i < s->start_segments->len; i++)
    snapshot_seg_tree_put (t, &g_array_index (s->start_segments, VsSnapSegment, i));
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      g_hash_table_insert (blocks, g_memdup2 (&b->addr, 8), g_memdup2 (b, sizeof *b));
    }
  for (guint i = 0; i < s->actions->len; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      switch (a->action)
        {
        case SNAP_ALLOC:
          {
            VsSnapBlock b = { .addr = a->addr, .size = a->size, .requested = a->size, .stream = a->stream,
                              .frame = a->frame };
            g_hash_table_insert (blocks, g_memdup2 (&a->addr, 8), g_memdup2 (&b, sizeof b));
          }
          break;
        case SNAP_FREE_REQUESTED:
          g_hash_table_remove (blocks, &a->addr);
          break;
        case SNAP_SEGMENT_ALLOC:
          snapshot_seg_tree_put (t, &(VsSnapSegment) { .addr = a->addr, .size = a->size, .stream = a->stream,
                                          .small = a->size == 2 * MiB });
          break;
        case SNAP_SEGMENT_FREE:
          g_tree_remove (t, &(VsSnapSegment) { .addr = a->addr });
          break;
        case SNAP_SEGMENT_MAP:
          map_range (t, (VsSnapSegment) { .addr = a->addr, .size = a->size, .stream = a->stream, .expandable = TRUE });
          break;
        case SNAP_SEGMENT_UNMAP:
          unmap_range (t, a->addr, a->size);
          break;
        default:
          break;
        }
    }
  snapshot_seg_tree_collect (t, segs);
  normalise (segs);
}

/* Whether G (address and size) is in SEGS (normalised: by address). */
static gboolean
has_seg (const GArray *segs, const VsSnapSegment *g)
{
  guint lo = 0, hi = segs->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (segs, VsSnapSegment, mid).addr < g->addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (guint i = lo; i < segs->len && g_array_index (segs, VsSnapSegment, i).addr == g->addr; i++)
    if (g_array_index (segs, VsSnapSegment, i).size == g->size)
      return TRUE;
  return FALSE;
}

static void
add_syn (GArray *out, VsSnapshot *acc, guint8 action, guint64 addr, guint64 size, guint64 stream, guint64 t_us,
         const char *frame)
{
  VsSnapAction a = { .action = action, .addr = addr, .size = size, .stream = stream, .t_us = t_us,
                     .synthetic = TRUE, .frame = frame ? g_string_chunk_insert_const (acc->strings, frame) : NULL };
  g_array_append_val (out, a);
}

static int
cmp_block_addr (gconstpointer a, gconstpointer b)
{
  guint64 x = (*(VsSnapBlock *const *) a)->addr, y = (*(VsSnapBlock *const *) b)->addr;
  return x < y ? -1 : x > y;
}

/* The gap before NEXT: ACC's end state against NEXT's start (module
 * comment). Returns the number of actions made up. */
static guint64
resync (VsSnapshot *acc, const VsSnapshot *next, GString *what)
{
  g_autoptr (GArray) segs = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  g_autoptr (GHashTable) blocks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  play_forward (acc, segs, blocks);
  g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  g_array_append_vals (want, next->start_segments->data, next->start_segments->len);
  normalise (want);
  g_autoptr (GHashTable) want_blocks = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < next->start_blocks->len; i++)
    {
      VsSnapBlock *b = &g_array_index (next->start_blocks, VsSnapBlock, i);
      g_hash_table_insert (want_blocks, &b->addr, b);
    }
  guint64 t = next->actions->len ? g_array_index (next->actions, VsSnapAction, 0).t_us : 0;
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (VsSnapAction));
  guint64 freed = 0, allocated = 0, seg_gone = 0, seg_new = 0;
  /* blocks freed in the gap, in address order (a hash's order would make
   * the output depend on the table) */
  g_autoptr (GPtrArray) gone = g_ptr_array_new ();
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, blocks);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      VsSnapBlock *b = v, *w = g_hash_table_lookup (want_blocks, &b->addr);
      if (w == NULL || w->requested != b->requested)
        g_ptr_array_add (gone, b);
    }
  g_ptr_array_sort (gone, cmp_block_addr);
  for (guint i = 0; i < gone->len; i++)
    {
      const VsSnapBlock *b = g_ptr_array_index (gone, i);
      add_syn (out, acc, SNAP_FREE_REQUESTED, b->addr, b->requested, b->stream, t, NULL);
      add_syn (out, acc, SNAP_FREE_COMPLETED, b->addr, b->requested, b->stream, t, NULL);
      freed++;
    }
  for (guint i = 0; i < segs->len; i++)
    {
      const VsSnapSegment *g = &g_array_index (segs, VsSnapSegment, i);
      if (has_seg (want, g))
        continue;
      add_syn (out, acc, g->expandable ? SNAP_SEGMENT_UNMAP : SNAP_SEGMENT_FREE, g->addr, g->size, g->stream, t, NULL);
      /* released in the gap: by the program's empty_cache or the
       * allocator's own release-and-retry, which the tensor trace can only
       * say as an empty_cache (the allocator model then frees its cached
       * unused segments) */
      VsSnapAction *a = &g_array_index (out, VsSnapAction, out->len - 1);
      a->user = TRUE;
      a->empty_cache = seg_gone == 0;
      seg_gone++;
    }
  for (guint i = 0; i < want->len; i++)
    {
      const VsSnapSegment *g = &g_array_index (want, VsSnapSegment, i);
      if (has_seg (segs, g))
        continue;
      add_syn (out, acc, g->expandable ? SNAP_SEGMENT_MAP : SNAP_SEGMENT_ALLOC, g->addr, g->size, g->stream, t, NULL);
      seg_new++;
    }
  for (guint i = 0; i < next->start_blocks->len; i++)
    {
      const VsSnapBlock *w = &g_array_index (next->start_blocks, VsSnapBlock, i);
      VsSnapBlock *b = g_hash_table_lookup (blocks, &w->addr);
      if (b != NULL && b->requested == w->requested)
        continue;
      add_syn (out, acc, SNAP_ALLOC, w->addr, w->requested, w->stream, t, w->frame);
      allocated++;
    }
  g_string_append_printf (what, "%" G_GUINT64_FORMAT " blocks freed, %" G_GUINT64_FORMAT " allocated, %"
                          G_GUINT64_FORMAT " segments released and %" G_GUINT64_FORMAT " made",
                          freed, allocated, seg_gone, seg_new);
  g_array_append_vals (acc->actions, out->data, out->len);
  return out->len;
}

VsSnapshot *
snapshot_join (VsSnapshot **parts, guint n, const char *const *names, VsSnapJoin *j)
{
  *j = (VsSnapJoin) { .dumps = n };
  if (n == 0)
    return NULL;
  VsSnapshot *acc = parts[0];
  g_autoptr (GString) note = g_string_new (NULL);
  for (guint k = 1; k < n; k++)
    {
      VsSnapshot *prev = parts[k - 1], *next = parts[k];
      guint q = overlap (prev->actions, next->actions);
      if (q == 0 && prev->actions->len > 0 && next->actions->len > 0)
        {
          /* the first three said in full, the rest counted (a note per
           * gap would bury the header of a long run with a slow poller) */
          j->gaps++;
          g_autoptr (GString) what = g_string_new (NULL);
          g_string_append_printf (what, "%sentries lost between %s and %s (no action in common: the ring buffer "
                                  "wrapped before the hook's next look), the state resynchronised from the "
                                  "later dump at time_us %" G_GUINT64_FORMAT ": ",
                                  note->len ? "; " : "", names ? names[k - 1] : "a dump",
                                  names ? names[k] : "the next",
                                  g_array_index (next->actions, VsSnapAction, 0).t_us);
          j->gap_actions += resync (acc, next, what);
          if (j->gaps <= 3)
            g_string_append (note, what->str);
        }
      j->overlap += q;
      for (guint i = q; i < next->actions->len; i++)
        {
          VsSnapAction a = g_array_index (next->actions, VsSnapAction, i);
          if (a.frame)
            a.frame = g_string_chunk_insert_const (acc->strings, a.frame);
          g_array_append_val (acc->actions, a);
        }
      acc->has_time |= next->has_time;
      acc->rewind_mismatches += next->rewind_mismatches;
      if (k - 1 > 0)
        snapshot_free (prev);
      parts[k - 1] = NULL;
    }
  if (n > 1)
    {
      VsSnapshot *last = parts[n - 1];
      GArray *f = acc->final_segments;
      acc->final_segments = last->final_segments;
      last->final_segments = f;
      acc->final_reserved = last->final_reserved;
      snapshot_free (last);
      parts[n - 1] = NULL;
    }
  parts[0] = NULL;
  snapshot_classify_frees (acc);
  if (j->gaps > 3)
    g_string_append_printf (note, "; and %u more (%u gaps in all, %" G_GUINT64_FORMAT " actions made up)",
                            j->gaps - 3, j->gaps, j->gap_actions);
  j->note = note->len ? g_strdup (note->str) : NULL;
  return acc;
}

static int
cmp_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

static void
free_all (GPtrArray *parts)
{
  for (guint i = 0; i < parts->len; i++)
    snapshot_free (g_ptr_array_index (parts, i));
}

VsSnapshot *
snapshot_load_parts (const char *path, int device, VsSnapJoin *j, GError **error)
{
  *j = (VsSnapJoin) { 0 };
  VsSnapshot *last = snapshot_load (path, device, error);
  if (last == NULL)
    return NULL;
  g_autoptr (GPtrArray) parts = g_ptr_array_new ();
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  /* Every BASE.partK beside it, by K: a missing one is a gap, not the end. */
  g_autofree char *dir = g_path_get_dirname (path), *base = g_path_get_basename (path);
  g_autoptr (GArray) ks = g_array_new (FALSE, FALSE, sizeof (guint64));
  GDir *d = g_dir_open (dir, 0, NULL);
  gsize bl = strlen (base);
  for (const char *e; d != NULL && (e = g_dir_read_name (d)) != NULL;)
    {
      if (strncmp (e, base, bl) != 0 || strncmp (e + bl, ".part", 5) != 0 || !g_ascii_isdigit (e[bl + 5]))
        continue;
      char *end;
      guint64 k = g_ascii_strtoull (e + bl + 5, &end, 10);
      if (*end == 0 && k > 0 && k < G_MAXUINT32)
        g_array_append_val (ks, k);
    }
  if (d != NULL)
    g_dir_close (d);
  g_array_sort (ks, cmp_u64);
  for (guint i = 0; i < ks->len; i++)
    {
      char *p = g_strdup_printf ("%s.part%" G_GUINT64_FORMAT, path, g_array_index (ks, guint64, i));
      VsSnapshot *s = snapshot_load (p, last->device, error);
      if (s == NULL)
        {
          g_free (p);
          free_all (parts);
          snapshot_free (last);
          return NULL;
        }
      g_ptr_array_add (parts, s);
      g_ptr_array_add (names, g_path_get_basename (p));
      g_free (p);
    }
  g_ptr_array_add (parts, last);
  g_ptr_array_add (names, g_path_get_basename (path));
  /* Dumps in the wrong order, or of another run: a later dump's actions
   * must not end before an earlier's. */
  for (guint k = 0; k + 1 < parts->len; k++)
    {
      const VsSnapshot *a = g_ptr_array_index (parts, k), *b = g_ptr_array_index (parts, k + 1);
      if (a->has_time && b->has_time && a->actions->len && b->actions->len
          && g_array_index (a->actions, VsSnapAction, a->actions->len - 1).t_us
             > g_array_index (b->actions, VsSnapAction, b->actions->len - 1).t_us)
        {
          import_fail (error, path, "%s ends after %s: not dumps of one run in order (remove stale "
                       "part files)", (const char *) g_ptr_array_index (names, k),
                       (const char *) g_ptr_array_index (names, k + 1));
          free_all (parts);
          return NULL;
        }
    }
  return snapshot_join ((VsSnapshot **) parts->pdata, parts->len, (const char *const *) names->pdata, j);
}
