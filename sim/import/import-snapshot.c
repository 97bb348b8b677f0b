/* import-snapshot.c — PyTorch memory snapshots into vramsim traces
 * (import-snapshot.h; docs/importers.md "PyTorch memory snapshots").
 *
 * A snapshot (torch.cuda.memory._dump_snapshot()) is a pickle of
 *   {"segments": [{device, address, total_size, stream, segment_type,
 *                  is_expandable, blocks: [{address, size, requested_size,
 *                  state, frames}]}],
 *    "device_traces": [[{action, addr, size, stream, time_us?, frames}]],
 *    "allocator_settings": {...}?}
 * read with the plain-data unpickler (pickle.h). `segments` is the state at
 * the dump; device_traces[d] the ring buffer of the allocator's actions
 * before it, whose first entries may find the cache warm. The state at the
 * window's first action is rebuilt backwards from the final segments, as
 * memory_viz does: undo each alloc (the block was not allocated before it),
 * free (it was), segment_alloc (the segment did not exist), segment_free
 * (it did), map and unmap.
 *
 * What a backwards walk cannot know is the block size of a tensor that was
 * live at the start and freed in the window (the trace records requested
 * sizes). It is rebuilt from the allocator's rules: round_size of the
 * request, grown to the end of its free space when that space could not
 * have been split off (a large-pool remainder of at most 1 MiB, or a
 * request at or above max_split_size). A large-pool free region is always
 * more than 1 MiB (it is made of blocks and split remainders that are), so
 * the rule is exact for non-expandable segments.
 *
 * A segment_free (or unmap) the allocator did not cause itself is the
 * program's torch.cuda.empty_cache(): the allocator frees segments only
 * inside malloc (garbage collection, release-and-retry), always followed by
 * a segment_alloc/map or an oom record, so a run of segment frees followed
 * by anything else is a release by the program. */
#include "import/import-snapshot.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "import/import.h"
#include "import/import-priv.h"
#include "import/pickle.h"
#include "trace/trace.h"

#define MiB (G_GUINT64_CONSTANT (1024) * 1024)
#define SNAPSHOT_MAX_BYTES (G_GUINT64_CONSTANT (4) << 30)

static const char *const action_names[SNAP_ACTION_COUNT] = {
  "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
  "segment_map", "segment_unmap", "snapshot", "oom",
};

const char *
snapshot_action_name (guint action)
{
  return action < SNAP_ACTION_COUNT ? action_names[action] : NULL;
}

static int
action_from (const PkVal *v)
{
  for (int i = 0; i < SNAP_ACTION_COUNT; i++)
    if (pk_str_is (v, action_names[i]))
      return i;
  return -1;
}

void
snapshot_free (VsSnapshot *s)
{
  if (s == NULL)
    return;
  g_free (s->alloc_conf);
  if (s->start_segments)
    g_array_unref (s->start_segments);
  if (s->start_blocks)
    g_array_unref (s->start_blocks);
  if (s->actions)
    g_array_unref (s->actions);
  if (s->final_segments)
    g_array_unref (s->final_segments);
  if (s->strings)
    g_string_chunk_free (s->strings);
  g_free (s);
}

/* ---- reading ---- */

static gboolean
is_list (const PkVal *v)
{
  return v != NULL && (v->type == PK_LIST || v->type == PK_TUPLE);
}

/* What a reading has already seen, by identity: a pickle's memo lets one
 * value be referenced from many places (a frame list from every block, a
 * block from every segment), and a hostile file nests such references so
 * that walking each reference costs the product of the fan-outs. Each
 * shared value is looked at once: a frame dict's kind and tag, a frame
 * list's user frame, an action dict's parsed action; a segment dict, a
 * blocks list or a block dict met again is the same one, skipped. So the
 * reading costs time linear in the pickle's length. */
typedef struct {
  GHashTable *frame;     /* PkVal* frame dict -> FrameInfo* */
  GHashTable *frames;    /* PkVal* frame list -> const char* tag (or "" for none) */
  GHashTable *seen;      /* PkVal* segment dicts, blocks lists, block dicts walked */
  GHashTable *action;    /* PkVal* action dict -> index into actions + 1 */
} Memo;

typedef struct {
  gboolean py, user;     /* a Python frame; one outside torch */
  const char *tag;       /* "file.py:line function" (in the snapshot's strings), or NULL */
} FrameInfo;

static void
memo_init (Memo *m)
{
  m->frame = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  m->frames = g_hash_table_new (g_direct_hash, g_direct_equal);
  m->seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  m->action = g_hash_table_new (g_direct_hash, g_direct_equal);
}

static void
memo_clear (Memo *m)
{
  g_hash_table_unref (m->frame);
  g_hash_table_unref (m->frames);
  g_hash_table_unref (m->seen);
  g_hash_table_unref (m->action);
}

/* TRUE the first time V is met (and marks it). */
static gboolean
first_visit (Memo *m, const PkVal *v)
{
  return g_hash_table_add (m->seen, (gpointer) v);
}

static const FrameInfo *
frame_info (VsSnapshot *s, Memo *m, const PkVal *f)
{
  FrameInfo *fi = g_hash_table_lookup (m->frame, f);
  if (fi != NULL)
    return fi;
  fi = g_new0 (FrameInfo, 1);
  g_hash_table_insert (m->frame, (gpointer) f, fi);
  const PkVal *fn = pk_get (f, "filename");
  if (fn == NULL || fn->type != PK_STR || fn->n < 3 || memcmp (fn->s + fn->n - 3, ".py", 3) != 0)
    return fi;
  fi->py = TRUE;
  g_autofree char *path = pk_strdup (fn);
  fi->user = strstr (path, "/torch/") == NULL;
  g_autofree char *name = pk_strdup (pk_get (f, "name"));
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tag = g_strdup_printf ("%s:%" G_GUINT64_FORMAT " %s", base,
                                          pk_u64 (pk_get (f, "line"), 0), name ? name : "?");
  fi->tag = g_string_chunk_insert_const (s->strings, tag);
  return fi;
}

/* Frames run innermost first. The user's frame is the first Python frame
 * outside torch itself; else the first Python frame. */
static const char *
user_frame (VsSnapshot *s, Memo *m, const PkVal *frames)
{
  if (!is_list (frames))
    return NULL;
  const char *known = g_hash_table_lookup (m->frames, frames);
  if (known != NULL)
    return *known ? known : NULL;
  const FrameInfo *first_py = NULL, *user = NULL;
  for (guint i = 0; i < frames->n && user == NULL; i++)
    {
      const FrameInfo *fi = frame_info (s, m, frames->items[i]);
      if (!fi->py)
        continue;
      if (first_py == NULL)
        first_py = fi;
      if (fi->user)
        user = fi;
    }
  const FrameInfo *f = user ? user : first_py;
  const char *tag = f != NULL ? f->tag : NULL;
  g_hash_table_insert (m->frames, (gpointer) frames, (gpointer) (tag ? tag : ""));
  return tag;
}

/* allocator_settings -> the model's settings (the keys PyTorch reports). */
static void
read_settings (VsSnapshot *s, const PkVal *set)
{
  alloc_config_init (&s->settings);
  if (set == NULL || set->type != PK_DICT)
    return;
  s->has_settings = TRUE;
  s->alloc_conf = pk_strdup (pk_get (set, "PYTORCH_CUDA_ALLOC_CONF"));
  gint64 msplit;
  if (pk_int (pk_get (set, "max_split_size"), &msplit) && msplit > 0)
    s->settings.max_split_size = (guint64) msplit;
  double gc = pk_double (pk_get (set, "garbage_collection_threshold"), 0);
  s->settings.garbage_collection_threshold = gc > 0 && gc < 1 ? gc : 0; /* PyTorch's range (NaN: off) */
  const PkVal *exp = pk_get (set, "expandable_segments");
  s->settings.expandable_segments = exp != NULL && exp->type == PK_BOOL && exp->i;
  const PkVal *div = pk_get (set, "roundup_power2_divisions");
  if (div != NULL && div->type == PK_DICT)
    for (guint i = 0; i < div->n; i++)
      {
        /* keys are interval starts in MiB: "1" -> index 0, "2" -> 1, ... */
        g_autofree char *k = pk_strdup (div->items[2 * i]);
        guint64 mb = k ? g_ascii_strtoull (k, NULL, 10) : 0;
        if (mb == 0 || (mb & (mb - 1)) != 0)
          continue;
        guint idx = (guint) __builtin_ctzll (mb);
        if (idx < VS_ALLOC_POW2_INTERVALS)
          s->settings.roundup_power2_divisions[idx] = (guint32) pk_u64 (div->items[2 * i + 1], 0);
      }
  else if (div != NULL)
    for (guint i = 0; i < VS_ALLOC_POW2_INTERVALS; i++)
      s->settings.roundup_power2_divisions[i] = (guint32) pk_u64 (div, 0);
}

static int
cmp_block (gconstpointer a, gconstpointer b)
{
  guint64 x = ((const VsSnapBlock *) a)->addr, y = ((const VsSnapBlock *) b)->addr;
  return x < y ? -1 : x > y;
}

/* The final segments of the device, and their allocated blocks. */
static gboolean
read_segments (VsSnapshot *s, Memo *m, const char *path, const PkVal *segs, GHashTable *live, GError **error)
{
  for (guint i = 0; segs != NULL && i < segs->n; i++)
    {
      const PkVal *sg = segs->items[i];
      if (sg->type != PK_DICT)
        return import_fail (error, path, "segments[%u] is not a dict", i);
      if (!first_visit (m, sg))
        continue;  /* the same segment again (Memo) */
      if ((int) pk_u64 (pk_get (sg, "device"), 0) != s->device)
        continue;
      VsSnapSegment seg = {
        .addr = pk_u64 (pk_get (sg, "address"), 0),
        .size = pk_u64 (pk_get (sg, "total_size"), 0),
        .stream = pk_u64 (pk_get (sg, "stream"), 0),
      };
      const PkVal *type = pk_get (sg, "segment_type");
      seg.small = type != NULL ? pk_str_is (type, "small") : seg.size == 2 * MiB;
      const PkVal *exp = pk_get (sg, "is_expandable");
      seg.expandable = exp != NULL && exp->type == PK_BOOL && exp->i;
      if (seg.addr == 0 || seg.size == 0)
        continue;
      /* what the trace holds must read back: sizes, streams and ends in 0..2^63-1 */
      if (seg.size > (guint64) G_MAXINT64 || seg.stream > (guint64) G_MAXINT64
          || seg.addr > (guint64) G_MAXINT64 - seg.size)
        return import_fail (error, path, "segments[%u]: '%s' %" G_GUINT64_FORMAT " is out of range (0..2^63-1)", i,
                            seg.stream > (guint64) G_MAXINT64 ? "stream" : seg.size > (guint64) G_MAXINT64 ? "total_size"
                                                                                                    : "address",
                            seg.stream > (guint64) G_MAXINT64 ? seg.stream : seg.size > (guint64) G_MAXINT64 ? seg.size
                                                                                                    : seg.addr);
      g_array_append_val (s->final_segments, seg);
      s->final_reserved += seg.size;
      const PkVal *blocks = pk_get (sg, "blocks");
      guint64 at = seg.addr;
      if (is_list (blocks) && !first_visit (m, blocks))
        blocks = NULL;  /* another segment's list (Memo) */
      for (guint j = 0; is_list (blocks) && j < blocks->n; j++)
        {
          const PkVal *b = blocks->items[j];
          if (!first_visit (m, b))
            continue;
          guint64 addr = pk_u64 (pk_get (b, "address"), at);
          guint64 size = pk_u64 (pk_get (b, "size"), 0);
          at = addr + size;
          const PkVal *state = pk_get (b, "state");
          if (!pk_str_is (state, "active_allocated") && !pk_str_is (state, "active_pending_free"))
            continue;
          guint64 req = pk_u64 (pk_get (b, "requested_size"), size);
          if (size > (guint64) G_MAXINT64 || req > (guint64) G_MAXINT64)
            return import_fail (error, path, "segments[%u].blocks[%u]: '%s' is out of range (0..2^63-1)", i, j,
                                size > (guint64) G_MAXINT64 ? "size" : "requested_size");
          VsSnapBlock *blk = g_new0 (VsSnapBlock, 1);
          *blk = (VsSnapBlock) { .addr = addr, .size = size, .stream = seg.stream,
                                 .requested = pk_u64 (pk_get (b, "requested_size"), size),
                                 .frame = user_frame (s, m, pk_get (b, "frames")) };
          g_hash_table_insert (live, g_memdup2 (&addr, sizeof addr), blk);
        }
    }
  return TRUE;
}

static gboolean
read_actions (VsSnapshot *s, Memo *m, const char *path, const PkVal *trace, GError **error)
{
  for (guint i = 0; i < trace->n; i++)
    {
      const PkVal *e = trace->items[i];
      if (e->type != PK_DICT)
        return import_fail (error, path, "device_traces[%d][%u] is not a dict", s->device, i);
      guint known = GPOINTER_TO_UINT (g_hash_table_lookup (m->action, e));
      if (known == G_MAXUINT)
        continue;
      if (known > 0)
        {
          /* the same action dict again (Memo): the same action */
          VsSnapAction a = g_array_index (s->actions, VsSnapAction, known - 1);
          g_array_append_val (s->actions, a);
          continue;
        }
      int act = action_from (pk_get (e, "action"));
      if (act < 0)
        {
          /* a newer action: not an allocator state change we model */
          g_hash_table_insert (m->action, (gpointer) e, GUINT_TO_POINTER (G_MAXUINT));
          continue;
        }
      gint64 addr, size;
      if (!pk_int (pk_get (e, "addr"), &addr) && !(pk_get (e, "addr") && pk_get (e, "addr")->big))
        return import_fail (error, path, "device_traces[%d][%u]: 'addr' missing or not an integer", s->device, i);
      if (!pk_int (pk_get (e, "size"), &size) || size < 0)
        return import_fail (error, path, "device_traces[%d][%u]: 'size' missing or not a non-negative integer",
                    s->device, i);
      VsSnapAction a = {
        .action = (guint8) act,
        .addr = pk_u64 (pk_get (e, "addr"), 0),
        .size = (guint64) size,
        .stream = pk_u64 (pk_get (e, "stream"), 0),
        .t_us = pk_u64 (pk_get (e, "time_us"), 0),
      };
      /* in range for the trace (streams 0..2^63-1) and for ns (time_us * 1000) */
      if (a.stream > (guint64) G_MAXINT64 || a.t_us > (guint64) G_MAXINT64 / 1000)
        return import_fail (error, path, "device_traces[%d][%u]: '%s' %" G_GUINT64_FORMAT " is out of range (0..%"
                            G_GUINT64_FORMAT ")", s->device, i, a.stream > (guint64) G_MAXINT64 ? "stream" : "time_us",
                            a.stream > (guint64) G_MAXINT64 ? a.stream : a.t_us,
                            a.stream > (guint64) G_MAXINT64 ? (guint64) G_MAXINT64 : (guint64) G_MAXINT64 / 1000);
      if (act == SNAP_ALLOC)
        a.frame = user_frame (s, m, pk_get (e, "frames"));
      if (pk_get (e, "time_us") != NULL)
        s->has_time = TRUE;
      g_array_append_val (s->actions, a);
      g_hash_table_insert (m->action, (gpointer) e, GUINT_TO_POINTER (s->actions->len));
    }
  return TRUE;
}

/* Marks each program-made release (module comment). */
void
snapshot_classify_frees (VsSnapshot *s)
{
  VsSnapAction *v = (VsSnapAction *) s->actions->data;
  guint n = s->actions->len;
  for (guint i = 0; i < n; i++)
    if (!v[i].synthetic)
      v[i].user = v[i].empty_cache = FALSE;
  for (guint i = 0; i < n;)
    {
      if ((v[i].action != SNAP_SEGMENT_FREE && v[i].action != SNAP_SEGMENT_UNMAP) || v[i].synthetic)
        {
          i++;
          continue;
        }
      guint j = i;
      while (j < n && !v[j].synthetic && (v[j].action == SNAP_SEGMENT_FREE || v[j].action == SNAP_SEGMENT_UNMAP
                                          || v[j].action == SNAP_FREE_COMPLETED))
        j++;
      gboolean by_malloc = j < n && (v[j].action == SNAP_SEGMENT_ALLOC || v[j].action == SNAP_SEGMENT_MAP
                                     || v[j].action == SNAP_OOM);
      if (!by_malloc)
        {
          v[i].empty_cache = TRUE;
          for (guint k = i; k < j; k++)
            if (v[k].action == SNAP_SEGMENT_FREE || v[k].action == SNAP_SEGMENT_UNMAP)
              v[k].user = TRUE;
        }
      i = j;
    }
}

/* ---- rewinding ---- */

static int
tree_cmp (gconstpointer a, gconstpointer b, gpointer data)
{
  guint64 x = ((const VsSnapSegment *) a)->addr, y = ((const VsSnapSegment *) b)->addr;
  return x < y ? -1 : x > y;
}

GTree *
snapshot_seg_tree_new (void)
{
  return g_tree_new_full (tree_cmp, NULL, g_free, NULL);
}

void
snapshot_seg_tree_put (GTree *t, const VsSnapSegment *g)
{
  VsSnapSegment *c = g_memdup2 (g, sizeof *g);
  g_tree_replace (t, c, c);
}

GTreeNode *
snapshot_seg_tree_at_or_before (GTree *t, guint64 addr)
{
  VsSnapSegment key = { .addr = addr + 1 };
  GTreeNode *n = addr == G_MAXUINT64 ? NULL : g_tree_lower_bound (t, &key);
  return n != NULL ? g_tree_node_previous (n) : g_tree_node_last (t);
}

VsSnapSegment *
snapshot_seg_tree_find (GTree *t, guint64 addr)
{
  GTreeNode *n = snapshot_seg_tree_at_or_before (t, addr);
  VsSnapSegment *g = n != NULL ? g_tree_node_value (n) : NULL;
  return g != NULL && addr >= g->addr && addr - g->addr < g->size ? g : NULL;
}

static gboolean
seg_collect (gpointer key, gpointer value, gpointer data)
{
  g_array_append_val ((GArray *) data, *(VsSnapSegment *) value);
  return FALSE;
}

void
snapshot_seg_tree_collect (GTree *t, GArray *out)
{
  g_tree_foreach (t, seg_collect, out);
}

static void
seg_remove (GTree *t, VsSnapSegment *g)
{
  g_tree_remove (t, g);
}

static void
rewind_one (VsSnapshot *s, GHashTable *live, GTree *segs, const VsSnapAction *a)
{
  VsSnapBlock *b;
  VsSnapSegment *g;
  switch (a->action)
    {
    case SNAP_ALLOC:
      if (!g_hash_table_remove (live, &a->addr))
        s->rewind_mismatches++;
      break;
    case SNAP_FREE_REQUESTED:
    case SNAP_FREE_COMPLETED:
      if (g_hash_table_contains (live, &a->addr))
        break;
      b = g_new0 (VsSnapBlock, 1);
      *b = (VsSnapBlock) { .addr = a->addr, .requested = a->size, .stream = a->stream };
      g_hash_table_insert (live, g_memdup2 (&a->addr, sizeof a->addr), b);
      break;
    case SNAP_SEGMENT_ALLOC:
      g = snapshot_seg_tree_find (segs, a->addr);
      if (g == NULL || g->addr != a->addr)
        s->rewind_mismatches++;
      else
        seg_remove (segs, g);
      break;
    case SNAP_SEGMENT_FREE:
      if (a->size == 0 || snapshot_seg_tree_find (segs, a->addr) != NULL)
        {
          s->rewind_mismatches++;
          break;
        }
      snapshot_seg_tree_put (segs, &(VsSnapSegment) { .addr = a->addr, .size = a->size, .stream = a->stream,
                                        .small = a->size == 2 * MiB });
      break;
    case SNAP_SEGMENT_MAP:
      /* Before the map, [addr, addr+size) was not part of the segment. */
      g = snapshot_seg_tree_find (segs, a->addr);
      if (g == NULL)
        {
          s->rewind_mismatches++;
          break;
        }
      {
        guint64 end = g->addr + g->size, mend = a->addr + MIN (a->size, end - a->addr);
        VsSnapSegment head = *g, tail = *g;
        seg_remove (segs, g);
        head.size = a->addr - head.addr;
        tail.addr = mend;
        tail.size = end - mend;
        if (head.size > 0)
          snapshot_seg_tree_put (segs, &head);
        if (tail.size > 0)
          snapshot_seg_tree_put (segs, &tail);
      }
      break;
    case SNAP_SEGMENT_UNMAP:
      {
        /* Before the unmap the range was mapped: join it to its neighbours. */
        if (a->size == 0 || snapshot_seg_tree_find (segs, a->addr) != NULL)
          {
            s->rewind_mismatches++;
            break;
          }
        VsSnapSegment n = { .addr = a->addr, .size = a->size, .stream = a->stream, .expandable = TRUE };
        VsSnapSegment *before = a->addr > 0 ? snapshot_seg_tree_find (segs, a->addr - 1) : NULL;
        if (before != NULL && before->expandable)
          {
            n.addr = before->addr;
            n.size += before->size;
            n.small = before->small;
            seg_remove (segs, before);
          }
        VsSnapSegment *after = snapshot_seg_tree_find (segs, a->addr + a->size);
        if (after != NULL && after->expandable && after->addr == a->addr + a->size)
          {
            n.size += after->size;
            n.small = after->small;
            seg_remove (segs, after);
          }
        snapshot_seg_tree_put (segs, &n);
        break;
      }
    default:
      break;
    }
}

/* The block size of a tensor live at the start whose size the trace does
 * not give (module comment). */
static guint64
infer_block (const VsSnapshot *s, const VsSnapSegment *g, guint64 addr, guint64 requested,
             guint64 boundary)
{
  guint64 gap = boundary - addr;
  guint64 r = alloc_pytorch_round_size (&s->settings, requested);
  if (r >= gap)
    return gap;
  if (g->small || g->expandable)
    return r;
  if (r >= s->settings.max_split_size || gap - r <= MiB)
    return gap;
  return r;
}

static void
rewind_window (VsSnapshot *s, GHashTable *live)
{
  g_autoptr (GTree) segs = snapshot_seg_tree_new ();
  for (guint i = 0; i < s->final_segments->len; i++)
    {
      const VsSnapSegment *g = &g_array_index (s->final_segments, VsSnapSegment, i);
      if (snapshot_seg_tree_find (segs, g->addr) == NULL)
        snapshot_seg_tree_put (segs, g);
    }
  for (guint i = s->actions->len; i-- > 0;)
    rewind_one (s, live, segs, &g_array_index (s->actions, VsSnapAction, i));
  s->start_segments = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  snapshot_seg_tree_collect (segs, s->start_segments);
  for (guint i = 0; i < s->start_segments->len; i++)
    s->start_reserved += g_array_index (s->start_segments, VsSnapSegment, i).size;

  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, live);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      VsSnapBlock *b = v;
      if (snapshot_seg_tree_find (segs, b->addr) == NULL)
        {
          s->rewind_mismatches++;
          continue;
        }
      g_array_append_val (s->start_blocks, *b);
    }
  g_array_sort (s->start_blocks, cmp_block);
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      const VsSnapSegment *g = snapshot_seg_tree_find (segs, b->addr);
      guint64 boundary = g->addr + g->size;
      if (i + 1 < s->start_blocks->len)
        boundary = MIN (boundary, g_array_index (s->start_blocks, VsSnapBlock, i + 1).addr);
      if (b->size == 0)
        b->size = infer_block (s, g, b->addr, b->requested, boundary);
      if (b->addr + b->size > boundary)
        b->size = boundary - b->addr;
    }
}

/* The window [FROM, TO) of S's actions, as if dumped after TO - 1: the
 * final state becomes the state at TO (rewound through the actions after
 * it). LIVE holds the final blocks. */
static void
cut_window (VsSnapshot *s, GHashTable *live, guint from, guint to)
{
  guint n = s->actions->len;
  to = MIN (to, n);
  from = MIN (from, to);
  g_autoptr (GTree) segs = snapshot_seg_tree_new ();
  for (guint i = 0; i < s->final_segments->len; i++)
    {
      const VsSnapSegment *g = &g_array_index (s->final_segments, VsSnapSegment, i);
      if (snapshot_seg_tree_find (segs, g->addr) == NULL)
        snapshot_seg_tree_put (segs, g);
    }
  for (guint i = n; i-- > to;)
    rewind_one (s, live, segs, &g_array_index (s->actions, VsSnapAction, i));
  g_array_set_size (s->final_segments, 0);
  snapshot_seg_tree_collect (segs, s->final_segments);
  s->final_reserved = 0;
  for (guint i = 0; i < s->final_segments->len; i++)
    s->final_reserved += g_array_index (s->final_segments, VsSnapSegment, i).size;
  g_array_remove_range (s->actions, to, n - to);
  g_array_remove_range (s->actions, 0, from);
  s->rewind_mismatches = 0;
}

static VsSnapshot *
load (const char *path, int device, guint from, guint to, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  if (len > SNAPSHOT_MAX_BYTES)
    {
      import_fail (error, path, "larger than 4 GiB");
      return NULL;
    }
  g_autoptr (PkDoc) doc = pickle_parse ((const guint8 *) data, len, path, error);
  if (doc == NULL)
    return NULL;
  const PkVal *root = pickle_root (doc);
  const PkVal *segs = NULL, *traces = NULL;
  if (root->type == PK_DICT)
    {
      segs = pk_get (root, "segments");
      traces = pk_get (root, "device_traces");
    }
  else if (root->type == PK_LIST)
    segs = root; /* torch.cuda.memory_snapshot(): segments only */
  if (!is_list (segs))
    {
      import_fail (error, path, "not a PyTorch memory snapshot (no 'segments' list)");
      return NULL;
    }
  if (traces != NULL && !is_list (traces))
    {
      import_fail (error, path, "'device_traces' is not a list");
      return NULL;
    }

  g_autoptr (VsSnapshot) s = g_new0 (VsSnapshot, 1);
  s->strings = g_string_chunk_new (4096);
  s->actions = g_array_new (FALSE, FALSE, sizeof (VsSnapAction));
  s->final_segments = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  s->start_blocks = g_array_new (FALSE, FALSE, sizeof (VsSnapBlock));
  s->n_devices = traces ? (int) traces->n : 0;
  /* Each segment dict once (Memo): its device. */
  g_autoptr (GArray) seg_dev = g_array_new (FALSE, FALSE, sizeof (guint64));
  {
    g_autoptr (GHashTable) once = g_hash_table_new (g_direct_hash, g_direct_equal);
    for (guint i = 0; i < segs->n; i++)
      if (g_hash_table_add (once, segs->items[i]))
        {
          guint64 d = pk_u64 (pk_get (segs->items[i], "device"), 0);
          g_array_append_val (seg_dev, d);
        }
  }
  for (guint i = 0; i < seg_dev->len; i++)
    {
      guint64 d = g_array_index (seg_dev, guint64, i);
      if (d >= 4096)
        {
          import_fail (error, path, "segments[%u]: device %" G_GUINT64_FORMAT " out of range", i, d);
          return NULL;
        }
      s->n_devices = MAX (s->n_devices, (int) d + 1);
    }
  if (device >= 0 && device >= MAX (s->n_devices, 1))
    {
      import_fail (error, path, "--device %d: the snapshot has %d device%s", device, s->n_devices,
           s->n_devices == 1 ? "" : "s");
      return NULL;
    }
  if (device < 0)
    {
      /* The device with the most actions, else the most segments. */
      guint best = 0;
      device = 0;
      for (guint d = 0; traces && d < traces->n; d++)
        if (is_list (traces->items[d]) && traces->items[d]->n > best)
          {
            best = traces->items[d]->n;
            device = (int) d;
          }
      if (best == 0)
        {
          g_autofree guint *count = g_new0 (guint, MAX (s->n_devices, 1));
          for (guint i = 0; i < seg_dev->len; i++)
            count[g_array_index (seg_dev, guint64, i)]++;
          for (int d = 0; d < s->n_devices; d++)
            if (count[d] > count[device])
              device = d;
        }
    }
  s->device = device;
  read_settings (s, root->type == PK_DICT ? pk_get (root, "allocator_settings") : NULL);

  g_autoptr (GHashTable) live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  Memo m;
  memo_init (&m);
  gboolean read = read_segments (s, &m, path, segs, live, error);
  const PkVal *trace = traces && (guint) device < traces->n ? traces->items[device] : NULL;
  if (read && trace != NULL && !is_list (trace))
    {
      memo_clear (&m);
      import_fail (error, path, "device_traces[%d] is not a list", device);
      return NULL;
    }
  if (read && trace != NULL && !read_actions (s, &m, path, trace, error))
    {
      memo_clear (&m);
      return NULL;
    }
  memo_clear (&m);
  if (!read)
    return NULL;
  if (from > 0 || to < s->actions->len)
    cut_window (s, live, from, to);
  snapshot_classify_frees (s);
  rewind_window (s, live);
  return g_steal_pointer (&s);
}

VsSnapshot *
snapshot_load (const char *path, int device, GError **error)
{
  return load (path, device, 0, G_MAXUINT, error);
}

VsSnapshot *
snapshot_load_window (const char *path, int device, guint from, guint to, GError **error)
{
  return load (path, device, from, to, error);
}

/* ---- writing the trace ---- */

gboolean
import_snapshot_detect (const char *path)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return FALSE;
  guint8 b[2] = { 0, 0 };
  size_t n = fread (b, 1, 2, f);
  fclose (f);
  return n == 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5;
}

cJSON *
snapshot_settings_json (const VsSnapshot *s)
{
  const VsAllocConfig *c = &s->settings;
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "kind", "pytorch");
  cJSON_AddBoolToObject (o, "expandable_segments", c->expandable_segments);
  if (c->max_split_size == VS_ALLOC_UNLIMITED)
    cJSON_AddStringToObject (o, "max_split_size", "unlimited");
  else
    cJSON_AddNumberToObject (o, "max_split_size", (double) c->max_split_size);
  cJSON_AddNumberToObject (o, "garbage_collection_threshold", c->garbage_collection_threshold);
  int div[VS_ALLOC_POW2_INTERVALS];
  for (guint i = 0; i < VS_ALLOC_POW2_INTERVALS; i++)
    div[i] = (int) c->roundup_power2_divisions[i];
  cJSON_AddItemToObject (o, "roundup_power2_divisions", cJSON_CreateIntArray (div, VS_ALLOC_POW2_INTERVALS));
  if (s->alloc_conf != NULL)
    cJSON_AddStringToObject (o, "PYTORCH_CUDA_ALLOC_CONF", s->alloc_conf);
  return o;
}

/* The warm state the replay seeds its allocator with: segments
 * [addr, bytes, stream, "small"|"large", expandable] and the blocks
 * allocated in them [id, addr, bytes] (ids of the trace's first allocs). */
cJSON *
snapshot_state_json (const VsSnapshot *s, guint64 first_id)
{
  cJSON *o = cJSON_CreateObject ();
  cJSON *segs = cJSON_AddArrayToObject (o, "segments");
  for (guint i = 0; i < s->start_segments->len; i++)
    {
      const VsSnapSegment *g = &g_array_index (s->start_segments, VsSnapSegment, i);
      cJSON *row = cJSON_CreateArray ();
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) g->addr));
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) g->size));
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) g->stream));
      cJSON_AddItemToArray (row, cJSON_CreateString (g->small ? "small" : "large"));
      cJSON_AddItemToArray (row, cJSON_CreateBool (g->expandable));
      cJSON_AddItemToArray (segs, row);
    }
  cJSON *blocks = cJSON_AddArrayToObject (o, "blocks");
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      cJSON *row = cJSON_CreateArray ();
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) (first_id + i)));
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) b->addr));
      cJSON_AddItemToArray (row, cJSON_CreateNumber ((double) b->size));
      cJSON_AddItemToArray (blocks, row);
    }
  return o;
}

gboolean
import_snapshot (const char *path, const char *out_path, int device, GError **error)
{
  g_autoptr (VsSnapshot) s = snapshot_load (path, device, error);
  if (s == NULL)
    return FALSE;
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  h->tool = g_strdup ("vramsim convert (PyTorch memory snapshot)");
  h->extra = cJSON_CreateObject ();
  trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
  cJSON_AddItemToObject (h->extra, "allocator_settings", snapshot_settings_json (s));
  cJSON_AddItemToObject (h->extra, "allocator_state", snapshot_state_json (s, 1));
  cJSON *src = cJSON_AddObjectToObject (h->extra, "snapshot");
  cJSON_AddNumberToObject (src, "device", s->device);
  cJSON_AddNumberToObject (src, "start_reserved_bytes", (double) s->start_reserved);
  cJSON_AddNumberToObject (src, "final_reserved_bytes", (double) s->final_reserved);
  g_autoptr (VsTraceWriter) w = trace_writer_new (out_path, VS_FORMAT_AUTO, h, error);
  if (w == NULL)
    return FALSE;

  /* Times: time_us relative to the first, else one action per µs (older
   * files have no times: only the order is known). Kept monotonic. */
  guint64 t0 = 0;
  for (guint i = 0; s->has_time && i < s->actions->len; i++)
    {
      guint64 t = g_array_index (s->actions, VsSnapAction, i).t_us;
      if (t != 0 && (t0 == 0 || t < t0))
        t0 = t;
    }
  guint64 next_id = 1;
  VsEvent ev;
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      event_init (&ev, VS_OP_ALLOC);
      ev.id = next_id++;
      ev.bytes = b->requested;
      ev.kind = VS_MEM_DEVICE;
      ev.stream = b->stream;
      ev.has_stream = TRUE;
      ev.tag = b->frame;
      if (!trace_writer_write (w, &ev, error))
        return FALSE;
    }
  g_autoptr (GHashTable) ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      guint64 addr = g_array_index (s->start_blocks, VsSnapBlock, i).addr;
      g_hash_table_insert (ids, g_memdup2 (&addr, sizeof addr), g_memdup2 (&(guint64) { i + 1 }, 8));
    }
  guint64 t = 0;
  for (guint i = 0; i < s->actions->len; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      guint64 ta = s->has_time ? (a->t_us >= t0 && a->t_us != 0 ? (a->t_us - t0) * 1000 : t) : (guint64) i * 1000;
      t = MAX (t, ta);
      guint64 *id;
      switch (a->action)
        {
        case SNAP_ALLOC:
          event_init (&ev, VS_OP_ALLOC);
          ev.t = t;
          ev.id = next_id++;
          ev.bytes = a->size;
          ev.kind = VS_MEM_DEVICE;
          ev.stream = a->stream;
          ev.has_stream = TRUE;
          ev.tag = a->frame;
          if (g_hash_table_contains (ids, &a->addr))
            {
              /* Allocated twice without a free between: the ring buffer
               * lost the free. Free the older one here. */
              VsEvent f;
              event_init (&f, VS_OP_FREE);
              f.t = t;
              f.id = *(guint64 *) g_hash_table_lookup (ids, &a->addr);
              if (!trace_writer_write (w, &f, error))
                return FALSE;
            }
          g_hash_table_insert (ids, g_memdup2 (&a->addr, 8), g_memdup2 (&ev.id, 8));
          break;
        case SNAP_FREE_REQUESTED:
          id = g_hash_table_lookup (ids, &a->addr);
          if (id == NULL)
            continue; /* freed before the window and not rebuilt */
          event_init (&ev, VS_OP_FREE);
          ev.t = t;
          ev.id = *id;
          ev.stream = a->stream;
          ev.has_stream = TRUE;
          g_hash_table_remove (ids, &a->addr);
          break;
        case SNAP_SEGMENT_FREE:
        case SNAP_SEGMENT_UNMAP:
          if (!a->empty_cache)
            continue;
          event_init (&ev, VS_OP_EMPTY_CACHE);
          ev.t = t;
          break;
        case SNAP_SNAPSHOT:
        case SNAP_OOM:
          event_init (&ev, VS_OP_MARK);
          ev.t = t;
          ev.name = a->action == SNAP_OOM ? "oom" : "snapshot";
          break;
        default:
          continue;
        }
      if (!trace_writer_write (w, &ev, error))
        return FALSE;
    }
  return trace_writer_finish (g_steal_pointer (&w), error);
}
