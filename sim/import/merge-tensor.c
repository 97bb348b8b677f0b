/* merge-tensor.c — a vramcap trace joined with the PyTorch memory snapshot
 * of the same run (merge-tensor.h; docs/capture.md "Tensor-level
 * allocations").
 *
 * What the two sources know:
 *   the trace: every driver call (cuMemAlloc of PyTorch's segments, NCCL's
 *     and cuBLAS's own buffers, kernels, copies), on the shim's host clock
 *     (ns since it loaded); the address sidecar (vramcap's FILE.addrs) adds
 *     each allocation's base address, the pointers each kernel, copy and
 *     memset was given, and CLOCK_REALTIME at the trace's time 0;
 *   the snapshot: the caching allocator's tensors (alloc / free_requested at
 *     addresses, with streams and Python frames) and its segment events,
 *     on time_us (microseconds of the Unix clock, PyTorch's approximate
 *     clock), or with no times at all in older files.
 *
 * The join, in four steps:
 *   1. Anchors: each snapshot segment_alloc/segment_map is matched to the
 *      driver allocation at the same address with the same size (nearest in
 *      time by the sidecar's realtime, or the last unmatched one for files
 *      without times). The driver call's end (t + host_ns) is when PyTorch
 *      records the event, so offset = t_end - time_us * 1000; the offset is
 *      the median over the anchors (the sidecar's clock when there are none),
 *      and the largest anchor's distance from it is reported: how close the
 *      clocks agree. Files without times get their actions' times by linear
 *      interpolation of the action index between anchors (outside them, the
 *      anchors' mean time per action).
 *   2. Explained allocations: the anchors' driver allocations, and every
 *      driver device allocation live at the window's first action inside a
 *      segment that existed then (the rewound start state). They and their
 *      frees are dropped; every other allocation stays as it was.
 *   3. Tensors: the window's start blocks (allocated at its first action)
 *      and its allocs and frees, ids above the trace's, on a host thread of
 *      their own (the snapshot does not say which thread allocated).
 *      Program releases of the cache become empty_cache events.
 *   4. References: a kernel's touches (reads, writes), a copy's sides, a
 *      memset's dst and a prefetch's id that name an explained allocation
 *      are replaced by the tensors containing the pointers the sidecar gives
 *      for that event: the one alive at the event's time, else the nearest
 *      in time, whose life is then widened to cover the event (counted: a
 *      sign of clock error). A pointer no tensor ever held is dropped
 *      (counted); an event whose required side is lost is dropped too.
 * The output interleaves the trace's events (in file order) with the
 * tensor events by time: a tensor is allocated before a trace event at the
 * same time, freed after it, unless a later tensor event at that time is an
 * allocation (the tensors' own order comes first: allocs_after). */
#include "import/merge-tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import-snapshot.h"
#include "import/import-priv.h"
#include "import/snapshot-parts.h"
#include "trace/trace.h"

typedef struct {
  VsEvent ev;
  gboolean drop;
} DEv;

/* A driver allocation. */
typedef struct {
  guint64 ev;                  /* index in the trace */
  guint64 id, addr, bytes, t, t_end, t_free;
  gboolean device, explained, has_addr;
} DAlloc;

/* Sidecar line: the pointers of event IDX. */
typedef struct {
  char kind;
  guint n;
  guint64 v[];
} Side;

typedef struct {
  guint64 id, addr, bytes, stream;
  guint64 ta, tf;              /* tf G_MAXUINT64: live at the dump */
  guint64 oa, of;              /* order among tensor events at equal t */
  gboolean free_early;         /* its free goes before trace events at tf (an alloc follows it at tf) */
  const char *tag;
} Tensor;

typedef struct {
  guint64 t, order;
  guint8 op;                   /* VS_OP_ALLOC, VS_OP_FREE, VS_OP_EMPTY_CACHE, VS_OP_MARK */
  guint tensor;
  const char *name;
} TEv;

typedef struct {
  const char *trace_path;
  GArray *evs;                 /* DEv */
  GArray *allocs;              /* DAlloc */
  GHashTable *side;            /* event index -> Side* */
  GPtrArray *owned;
  GStringChunk *strings;
  guint64 real0;
  gboolean have_real0;
  guint64 max_id;
  guint32 max_tid;
  GArray *tensors;             /* Tensor */
  guint *by_addr;              /* tensor indices sorted by addr */
  /* The sweep of step 4: tensors alive at the trace event being remapped,
   * by address (value: index + 1), from their events in time order. */
  GTree *alive;
  GArray *sweep;               /* TEv */
  guint8 *sweep_early;         /* allocs_after (sweep) */
  guint sweep_at;
  VsMergeStats st;
} Merge;

static const guint64 *
keep_ids (Merge *m, const guint64 *ids, guint32 n)
{
  if (n == 0)
    return NULL;
  guint64 *c = g_memdup2 (ids, n * sizeof *ids);
  g_ptr_array_add (m->owned, c);
  return c;
}

static gboolean
read_trace (Merge *m, VsTraceHeader **hdr, GError **error)
{
  g_autoptr (VsTraceReader) r = trace_open (m->trace_path, error);
  if (r == NULL)
    return FALSE;
  *hdr = trace_header_copy (trace_reader_header (r));
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  VsEvent ev;
  GError *e = NULL;
  /* cleared each time: a reader that predates a field leaves it alone */
  while ((event_init (&ev, VS_OP_MARK), trace_next (r, &ev, &e)))
    {
      DEv d = { .ev = ev };
      d.ev.name = ev.name ? g_string_chunk_insert_const (m->strings, ev.name) : NULL;
      d.ev.tag = ev.tag ? g_string_chunk_insert_const (m->strings, ev.tag) : NULL;
      d.ev.reads = keep_ids (m, ev.reads, ev.n_reads);
      d.ev.writes = keep_ids (m, ev.writes, ev.n_writes);
      d.ev.touches = keep_ids (m, ev.touches, ev.n_touches);
      if (ev.shape)
        {
          d.ev.shape = g_memdup2 (ev.shape, sizeof *ev.shape);
          g_ptr_array_add (m->owned, (gpointer) d.ev.shape);
        }
      if (ev.collective)
        {
          d.ev.collective = g_memdup2 (ev.collective, sizeof *ev.collective);
          g_ptr_array_add (m->owned, (gpointer) d.ev.collective);
        }
      m->max_tid = MAX (m->max_tid, ev.tid);
      guint64 k = m->evs->len;
      if (ev.op == VS_OP_ALLOC)
        {
          m->max_id = MAX (m->max_id, ev.id);
          DAlloc a = { .ev = k, .id = ev.id, .bytes = ev.bytes, .t = ev.t, .t_end = ev.t + ev.host_ns,
                       .t_free = G_MAXUINT64,
                       .device = ev.kind == VS_MEM_DEVICE && !ev.has_stream };
          g_hash_table_insert (live, g_memdup2 (&ev.id, 8), g_memdup2 (&(guint) { m->allocs->len }, sizeof (guint)));
          g_array_append_val (m->allocs, a);
        }
      else if (ev.op == VS_OP_FREE)
        {
          guint *ai = g_hash_table_lookup (live, &ev.id);
          if (ai != NULL)
            g_array_index (m->allocs, DAlloc, *ai).t_free = ev.t;
          g_hash_table_remove (live, &ev.id);
        }
      g_array_append_val (m->evs, d);
    }
  if (e != NULL)
    {
      g_propagate_error (error, e);
      return FALSE;
    }
  return TRUE;
}

/* The sidecar (capture/recorder.c documents its lines). */
static gboolean
read_side (Merge *m, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len;
  GError *e = NULL;
  if (!g_file_get_contents (path, &data, &len, &e))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO,
                   "%s: cannot read vramcap's address sidecar (%s); capture with vramcap's "
                   "PyTorch hook, which writes it (docs/capture.md)", path, e->message);
      g_error_free (e);
      return FALSE;
    }
  guint line = 0;
  for (char *p = data, *nl; p < data + len; p = nl + 1)
    {
      nl = memchr (p, '\n', (gsize) (data + len - p));
      if (nl == NULL)
        nl = data + len;
      *nl = 0;
      line++;
      if (*p == 0)
        continue;
      if (line == 1)
        {
          unsigned long long v;
          if (sscanf (p, "vramcap-addrs 1 %llu", &v) != 1)
            return import_fail (error, path, "line 1: not a vramcap address sidecar (version 1)");
          m->real0 = v;
          m->have_real0 = TRUE;
          continue;
        }
      char kind = p[0];
      if (strchr ("acmpk", kind) == NULL || p[1] != ' ')
        return import_fail (error, path, "line %u: unknown line '%.20s'", line, p);
      char *q = p + 2, *end;
      guint64 idx = g_ascii_strtoull (q, &end, 10);
      if (end == q)
        return import_fail (error, path, "line %u: no event index", line);
      guint64 v[64];
      guint n = 0;
      GArray *more = NULL;
      for (q = end; *q == ' ';)
        {
          guint64 x = g_ascii_strtoull (q + 1, &end, 16);
          if (end == q + 1)
            return import_fail (error, path, "line %u: bad address '%.20s'", line, q + 1);
          if (n < G_N_ELEMENTS (v))
            v[n] = x;
          else
            {
              if (more == NULL)
                more = g_array_new (FALSE, FALSE, sizeof (guint64));
              g_array_append_val (more, x);
            }
          n++;
          q = end;
        }
      if (*q != 0)
        return import_fail (error, path, "line %u: trailing '%.20s'", line, q);
      if (idx >= m->evs->len)
        return import_fail (error, path, "line %u: event %" G_GUINT64_FORMAT " is past the trace's %u events",
                     line, idx, m->evs->len);
      Side *s = g_malloc (sizeof *s + n * sizeof (guint64));
      s->kind = kind;
      s->n = n;
      memcpy (s->v, v, MIN (n, G_N_ELEMENTS (v)) * sizeof (guint64));
      if (more)
        {
          memcpy (s->v + G_N_ELEMENTS (v), more->data, more->len * sizeof (guint64));
          g_array_unref (more);
        }
      g_hash_table_insert (m->side, g_memdup2 (&idx, 8), s);
    }
  if (!m->have_real0)
    return import_fail (error, path, "empty: not a vramcap address sidecar");
  for (guint i = 0; i < m->allocs->len; i++)
    {
      DAlloc *a = &g_array_index (m->allocs, DAlloc, i);
      Side *s = g_hash_table_lookup (m->side, &a->ev);
      if (s != NULL && s->kind == 'a' && s->n >= 1)
        {
          a->addr = s->v[0];
          a->has_addr = TRUE;
        }
    }
  return TRUE;
}

static int
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* Device allocations with an address, by address (value: GArray of
 * indices into m->allocs, in trace order). */
static GHashTable *
allocs_by_addr (Merge *m)
{
  GHashTable *h = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, (GDestroyNotify) g_array_unref);
  for (guint j = 0; j < m->allocs->len; j++)
    {
      DAlloc *d = &g_array_index (m->allocs, DAlloc, j);
      if (!d->device || !d->has_addr)
        continue;
      GArray *v = g_hash_table_lookup (h, &d->addr);
      if (v == NULL)
        {
          v = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (h, &d->addr, v);
        }
      g_array_append_val (v, j);
    }
  return h;
}

/* The unexplained driver allocation at ADDR of BYTES (0: any size) nearest
 * to WANT on the trace's clock (without times: the latest), or -1. */
static gint
nearest_at (Merge *m, GHashTable *by_addr, guint64 addr, guint64 bytes, gboolean has_time, gint64 want)
{
  GArray *v = g_hash_table_lookup (by_addr, &addr);
  gint best = -1;
  guint64 bestd = G_MAXUINT64;
  for (guint k = 0; v != NULL && k < v->len; k++)
    {
      guint j = g_array_index (v, guint, k);
      DAlloc *d = &g_array_index (m->allocs, DAlloc, j);
      if (d->explained || (bytes != 0 && d->bytes != bytes) || d->bytes == 0)
        continue;
      guint64 dist = has_time ? (guint64) ABS ((gint64) d->t_end - want) : G_MAXUINT64 - 1 - j;
      if (dist < bestd)
        {
          bestd = dist;
          best = (gint) j;
        }
    }
  return best;
}

/* A segment_map of an expandable segment that the driver saw as several
 * mappings: PyTorch maps a range one page (2 MiB small, 20 MiB large) per
 * cuMemMap and records the range once, after the last. The unexplained
 * mappings that tile [addr, addr + size) from its start, each the nearest
 * in time among those at its address, explain it; the one that ends last
 * is the anchor (returned; -1 and nothing marked when they do not tile). */
static gint
tile_map (Merge *m, GHashTable *by_addr, const VsSnapAction *a, gboolean has_time, gint64 want)
{
  g_autoptr (GArray) pick = g_array_new (FALSE, FALSE, sizeof (guint));
  guint64 pos = a->addr, end = a->addr + a->size;
  while (pos < end)
    {
      gint j = nearest_at (m, by_addr, pos, 0, has_time, want);
      if (j < 0)
        return -1;
      const DAlloc *d = &g_array_index (m->allocs, DAlloc, j);
      if (d->bytes > end - pos)
        return -1;
      g_array_append_val (pick, j);
      pos += d->bytes;
    }
  gint last = -1;
  for (guint k = 0; k < pick->len; k++)
    {
      guint j = g_array_index (pick, guint, k);
      DAlloc *d = &g_array_index (m->allocs, DAlloc, j);
      d->explained = TRUE;
      if (last < 0 || d->t_end > g_array_index (m->allocs, DAlloc, last).t_end)
        last = (gint) j;
    }
  m->st.maps_tiled++;
  m->st.mappings_tiled += pick->len;
  return last;
}

/* X (ns, computed wide: time_us * 1000 + an offset, an anchor plus steps)
 * as a trace time; outside 0..2^63-1 it marks action I in *BAD (the first
 * such) and is clamped. */
static gint64
clamp_ns (__int128 x, gint64 *bad, guint i)
{
  if (x < 0 || x > G_MAXINT64)
    {
      if (*bad < 0 && x > G_MAXINT64)
        *bad = (gint64) i;
      return x < 0 ? 0 : G_MAXINT64;
    }
  return (gint64) x;
}

/* Step 1: anchors and the action times. */
static guint64 *
action_times (Merge *m, const VsSnapshot *s, GError **error, const char *snap_path)
{
  gint64 bad = -1;   /* the first action whose time is out of range */
  guint n = s->actions->len;
  guint64 *t = g_new0 (guint64, MAX (n, 1));
  gint64 *anchor_t = g_new (gint64, MAX (n, 1)); /* driver t_end per action, -1: none */
  for (guint i = 0; i < n; i++)
    anchor_t[i] = -1;
  gint64 off0 = m->have_real0 ? -(gint64) m->real0 : 0;
  GArray *diffs = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GHashTable) by_addr = allocs_by_addr (m);
  for (guint k = 0; k < n; k++)
    {
      /* files without times: from the last action back, the last free candidate */
      guint i = s->has_time ? k : n - 1 - k;
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      if (a->action != SNAP_SEGMENT_ALLOC && a->action != SNAP_SEGMENT_MAP)
        continue;
      gint64 want = clamp_ns ((__int128) a->t_us * 1000 + off0, &bad, i);
      gint best = nearest_at (m, by_addr, a->addr, a->size, s->has_time, want);
      if (best >= 0)
        g_array_index (m->allocs, DAlloc, best).explained = TRUE;
      else if (a->action == SNAP_SEGMENT_MAP)
        best = tile_map (m, by_addr, a, s->has_time, want);
      if (best < 0)
        continue;
      DAlloc *d = &g_array_index (m->allocs, DAlloc, best);
      anchor_t[i] = (gint64) d->t_end;
      m->st.anchors++;
      /* a gap's made-up segment has the later dump's time, not its own */
      if (s->has_time && !a->synthetic)
        {
          __int128 d128 = (__int128) d->t_end - (__int128) a->t_us * 1000;
          if (d128 > G_MAXINT64 || d128 < -G_MAXINT64)
            bad = bad >= 0 ? bad : (gint64) i;
          gint64 diff = (gint64) MAX (MIN (d128, G_MAXINT64), -G_MAXINT64);
          g_array_append_val (diffs, diff);
        }
    }
  if (s->has_time)
    {
      gint64 off = off0;
      if (diffs->len > 0)
        {
          g_array_sort (diffs, cmp_i64);
          off = g_array_index (diffs, gint64, diffs->len / 2);
          for (guint i = 0; i < diffs->len; i++)
            {
              __int128 dev = (__int128) g_array_index (diffs, gint64, i) - off;
              m->st.anchor_dev_ns = MAX (m->st.anchor_dev_ns, (guint64) MIN (dev < 0 ? -dev : dev, G_MAXINT64));
            }
        }
      m->st.offset_ns = off;
      m->st.offset_vs_side_ns = off - off0;
      guint64 prev = 0;
      for (guint i = 0; i < n; i++)
        {
          const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
          gint64 x = a->t_us ? clamp_ns ((__int128) a->t_us * 1000 + off, &bad, i) : (gint64) prev;
          t[i] = prev = MAX (prev, (guint64) MAX (x, 0));
        }
    }
  else
    {
      gint first = -1, last = -1;
      for (guint i = 0; i < n; i++)
        if (anchor_t[i] >= 0)
          {
            if (first < 0)
              first = (gint) i;
            last = (gint) i;
          }
      if (first < 0 && n > 0)
        {
          g_free (t);
          g_free (anchor_t);
          g_array_unref (diffs);
          import_fail (error, snap_path, "the snapshot has no time_us and none of its segment events matches an "
                "allocation of %s, so nothing ties its actions to the trace's clock", m->trace_path);
          return NULL;
        }
      /* Outside the anchors: their mean spacing per action (1 µs with one). */
      gint64 step = last > first ? MAX ((anchor_t[last] - anchor_t[first]) / (last - first), 1) : 1000;
      gint prev_a = first;
      for (guint i = 0; i < n; i++)
        {
          if ((gint) i < first)
            t[i] = (guint64) MAX (anchor_t[first] - (__int128) step * (first - (gint) i), 0);
          else if ((gint) i > last)
            t[i] = (guint64) clamp_ns (anchor_t[last] + (__int128) step * ((gint) i - last), &bad, i);
          else if (anchor_t[i] >= 0)
            t[i] = (guint64) anchor_t[prev_a = (gint) i];
          else
            {
              gint next = (gint) i + 1;
              while (anchor_t[next] < 0)
                next++;
              gint64 t0 = anchor_t[prev_a], t1 = MAX (anchor_t[next], t0);
              t[i] = (guint64) (t0 + (__int128) (t1 - t0) * ((gint64) i - prev_a) / (next - prev_a));
            }
          if (i > 0)
            t[i] = MAX (t[i], t[i - 1]);
        }
    }
  g_free (anchor_t);
  g_array_unref (diffs);
  if (bad >= 0)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, (guint) bad);
      import_fail (error, snap_path, "device_traces[%d] action %" G_GINT64_FORMAT " ('time_us' %" G_GUINT64_FORMAT
                   "): its time on the trace's clock falls outside the trace's range (0..2^63-1 ns): the "
                   "snapshot's times and %s's do not fit together", s->device, bad, a->t_us, m->trace_path);
      g_free (t);
      return NULL;
    }
  return t;
}

/* Step 2: driver allocations inside the window's start segments, not
 * freed before it. */
static void
explain_start (Merge *m, const VsSnapshot *s, guint64 tw)
{
  for (guint j = 0; j < m->allocs->len; j++)
    {
      DAlloc *d = &g_array_index (m->allocs, DAlloc, j);
      /* Not "allocated before tw": the window's own segment allocations are
       * anchors by now, and a clock error must not leave a segment behind. */
      if (!d->device || d->explained || !d->has_addr || d->t_free <= tw)
        continue;
      for (guint i = 0; i < s->start_segments->len; i++)
        {
          const VsSnapSegment *g = &g_array_index (s->start_segments, VsSnapSegment, i);
          if (d->addr >= g->addr && d->addr + d->bytes <= g->addr + g->size)
            {
              d->explained = TRUE;
              break;
            }
        }
    }
}

/* Step 3. */
static GArray *
build_tensors (Merge *m, const VsSnapshot *s, const guint64 *t, guint64 tw, GArray *tev)
{
  GArray *ts = g_array_new (FALSE, FALSE, sizeof (Tensor));
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  guint64 next_id = m->max_id + 1;
  m->st.first_tensor_id = next_id;
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      Tensor x = { .id = next_id++, .addr = b->addr, .bytes = b->requested, .stream = b->stream,
                   .ta = tw, .tf = G_MAXUINT64, .oa = 0, .of = G_MAXUINT64, .tag = b->frame };
      g_hash_table_insert (live, g_memdup2 (&b->addr, 8), g_memdup2 (&(guint) { ts->len }, sizeof (guint)));
      g_array_append_val (ts, x);
    }
  for (guint i = 0; i < s->actions->len; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      guint64 order = 2 * (guint64) i + 2;
      guint *ti = g_hash_table_lookup (live, &a->addr);
      switch (a->action)
        {
        case SNAP_ALLOC:
          if (ti != NULL)
            {
              /* the ring buffer lost its free (as import_snapshot does) */
              Tensor *o = &g_array_index (ts, Tensor, *ti);
              o->tf = t[i];
              o->of = order - 1;
            }
          {
            Tensor x = { .id = next_id++, .addr = a->addr, .bytes = a->size, .stream = a->stream,
                         .ta = t[i], .tf = G_MAXUINT64, .oa = order, .of = G_MAXUINT64, .tag = a->frame };
            g_hash_table_insert (live, g_memdup2 (&a->addr, 8), g_memdup2 (&(guint) { ts->len }, sizeof (guint)));
            g_array_append_val (ts, x);
          }
          break;
        case SNAP_FREE_REQUESTED:
          if (ti == NULL)
            break;
          g_array_index (ts, Tensor, *ti).tf = t[i];
          g_array_index (ts, Tensor, *ti).of = order;
          g_hash_table_remove (live, &a->addr);
          break;
        case SNAP_SEGMENT_FREE:
        case SNAP_SEGMENT_UNMAP:
        case SNAP_OOM:
          if ((a->action != SNAP_OOM && !a->empty_cache))
            break;
          {
            TEv e = { .t = t[i], .order = order, .op = a->action == SNAP_OOM ? VS_OP_MARK : VS_OP_EMPTY_CACHE,
                      .name = "oom" };
            g_array_append_val (tev, e);
          }
          break;
        default:
          break;
        }
    }
  m->st.tensors = ts->len;
  return ts;
}

static Merge *sort_m;

static int
cmp_addr (gconstpointer a, gconstpointer b)
{
  const Tensor *x = &g_array_index (sort_m->tensors, Tensor, *(const guint *) a);
  const Tensor *y = &g_array_index (sort_m->tensors, Tensor, *(const guint *) b);
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
cmp_tev (gconstpointer a, gconstpointer b)
{
  const TEv *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static gint
cmp_addr_key (gconstpointer a, gconstpointer b, gpointer unused)
{
  gsize x = GPOINTER_TO_SIZE (a), y = GPOINTER_TO_SIZE (b);
  return x < y ? -1 : x > y;
}

/* The emission rule: before a trace event at T go the tensor events before
 * T and, of those at T, every one up to the last allocation at T (so all
 * allocations at T come first, and the tensor order is kept: a free and
 * an alloc at one time_us may be a block handed on); the rest of those at
 * T go after it. (transfer full) For each of TEVS (sorted), whether it is
 * followed by an allocation at its own time. */
static guint8 *
allocs_after (const GArray *tevs)
{
  guint8 *r = g_new0 (guint8, MAX (tevs->len, 1));
  gboolean seen = FALSE;
  for (guint i = tevs->len; i-- > 0;)
    {
      const TEv *x = &g_array_index (tevs, TEv, i);
      if (i + 1 < tevs->len && g_array_index (tevs, TEv, i + 1).t != x->t)
        seen = FALSE;
      r[i] = seen;
      seen |= x->op == VS_OP_ALLOC;
    }
  return r;
}

static gboolean
emit_before (const TEv *x, gboolean alloc_follows, guint64 t)
{
  return x->t < t || (x->t == t && (x->op == VS_OP_ALLOC || alloc_follows));
}

/* Brings the sweep to trace time T (the emission rule). */
static void
sweep_to (Merge *m, guint64 t)
{
  while (m->sweep_at < m->sweep->len)
    {
      const TEv *x = &g_array_index (m->sweep, TEv, m->sweep_at);
      if (!emit_before (x, m->sweep_early[m->sweep_at], t))
        break;
      const Tensor *z = &g_array_index (m->tensors, Tensor, x->tensor);
      gpointer key = GSIZE_TO_POINTER ((gsize) z->addr);
      if (x->op == VS_OP_ALLOC)
        g_tree_replace (m->alive, key, GUINT_TO_POINTER (x->tensor + 1));
      else if (GPOINTER_TO_UINT (g_tree_lookup (m->alive, key)) == x->tensor + 1)
        g_tree_remove (m->alive, key);
      m->sweep_at++;
    }
}

/* Step 4: the tensor holding PTR (inside driver allocation D) at T, or 0.
 * The common case, a tensor alive at T, comes from the sweep in O(log n);
 * the rest (the sweep lags where the trace's threads interleave out of
 * time order, or no tensor is alive there) from a scan of the tensors at
 * addresses in [D's base, PTR]. */
static guint64
resolve (Merge *m, const DAlloc *d, guint64 ptr, guint64 t)
{
  if (ptr < d->addr || ptr >= d->addr + d->bytes)
    return 0;
  if (m->alive != NULL)
    {
      GTreeNode *up = g_tree_upper_bound (m->alive, GSIZE_TO_POINTER ((gsize) ptr));
      GTreeNode *at = up ? g_tree_node_previous (up) : g_tree_node_last (m->alive);
      if (at != NULL)
        {
          const Tensor *x = &g_array_index (m->tensors, Tensor, GPOINTER_TO_UINT (g_tree_node_value (at)) - 1);
          if (x->addr <= ptr && ptr < x->addr + MAX (x->bytes, 1) && x->ta <= t
              && (t < x->tf || (t == x->tf && !x->free_early)))
            {
              m->st.refs++;
              m->st.refs_exact++;
              return x->id;
            }
        }
    }
  guint n = m->tensors->len, lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (g_array_index (m->tensors, Tensor, m->by_addr[mid]).addr < d->addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  Tensor *exact = NULL, *near = NULL;
  guint64 neard = G_MAXUINT64;
  for (guint k = lo; k < n; k++)
    {
      Tensor *x = &g_array_index (m->tensors, Tensor, m->by_addr[k]);
      if (x->addr > ptr)
        break;
      if (ptr >= x->addr + MAX (x->bytes, 1))
        continue;
      if (x->ta <= t && (t < x->tf || (t == x->tf && !x->free_early)))
        {
          if (exact == NULL || x->ta > exact->ta)
            exact = x;
          continue;
        }
      guint64 dist = t < x->ta ? x->ta - t : t - x->tf;
      if (dist < neard)
        {
          neard = dist;
          near = x;
        }
    }
  m->st.refs++;
  if (exact != NULL)
    {
      m->st.refs_exact++;
      return exact->id;
    }
  if (near == NULL)
    {
      m->st.unresolved++;
      return 0;
    }
  if (t < near->ta)
    near->ta = t;
  else
    {
      near->tf = t;
      /* after every event at t now (the emission rule) */
      near->of = G_MAXUINT64 - 1;
      near->free_early = FALSE;
    }
  m->st.stretched++;
  m->st.stretch_max_ns = MAX (m->st.stretch_max_ns, neard);
  return near->id;
}

/* Remaps one id list of event K. */
static const guint64 *
remap_list (Merge *m, GHashTable *live, guint64 k, const guint64 *ids, guint32 *n)
{
  if (*n == 0)
    return ids;
  Side *s = g_hash_table_lookup (m->side, &k);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint64));
  gboolean changed = FALSE;
  for (guint32 i = 0; i < *n; i++)
    {
      guint *ai = g_hash_table_lookup (live, &ids[i]);
      const DAlloc *d = ai ? &g_array_index (m->allocs, DAlloc, *ai) : NULL;
      if (d == NULL || !d->explained)
        {
          g_array_append_val (out, ids[i]);
          continue;
        }
      changed = TRUE;
      for (guint p = 0; s != NULL && s->kind == 'k' && p < s->n; p++)
        {
          guint64 id = resolve (m, d, s->v[p], g_array_index (m->evs, DEv, k).ev.t);
          gboolean dup = id == 0;
          for (guint q = 0; !dup && q < out->len; q++)
            dup = g_array_index (out, guint64, q) == id;
          if (!dup)
            g_array_append_val (out, id);
        }
    }
  if (!changed)
    {
      g_array_unref (out);
      return ids;
    }
  *n = out->len;
  const guint64 *r = keep_ids (m, (const guint64 *) out->data, out->len);
  g_array_unref (out);
  return r;
}

/* One id (copy side, memset dst, prefetch id) with pointer PTR. */
static guint64
remap_one (Merge *m, GHashTable *live, guint64 k, guint64 id, gboolean have_ptr, guint64 ptr,
           gboolean *lost)
{
  if (id == 0)
    return 0;
  guint *ai = g_hash_table_lookup (live, &id);
  const DAlloc *d = ai ? &g_array_index (m->allocs, DAlloc, *ai) : NULL;
  if (d == NULL || !d->explained)
    return id;
  guint64 r = have_ptr ? resolve (m, d, ptr, g_array_index (m->evs, DEv, k).ev.t) : 0;
  if (r == 0)
    {
      if (!have_ptr)
        m->st.unresolved++;
      *lost = TRUE;
    }
  return r;
}

static void
remap (Merge *m)
{
  g_autoptr (GHashTable) live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  guint ai = 0;
  m->sweep = g_array_new (FALSE, FALSE, sizeof (TEv));
  for (guint i = 0; i < m->tensors->len; i++)
    {
      const Tensor *z = &g_array_index (m->tensors, Tensor, i);
      TEv a = { .t = z->ta, .order = z->oa, .op = VS_OP_ALLOC, .tensor = i };
      g_array_append_val (m->sweep, a);
      if (z->tf != G_MAXUINT64)
        {
          TEv f = { .t = z->tf, .order = z->of, .op = VS_OP_FREE, .tensor = i };
          g_array_append_val (m->sweep, f);
        }
    }
  g_array_sort (m->sweep, cmp_tev);
  m->sweep_early = allocs_after (m->sweep);
  for (guint i = 0; i < m->sweep->len; i++)
    {
      const TEv *x = &g_array_index (m->sweep, TEv, i);
      if (x->op == VS_OP_FREE)
        g_array_index (m->tensors, Tensor, x->tensor).free_early = m->sweep_early[i];
    }
  m->alive = g_tree_new_full (cmp_addr_key, NULL, NULL, NULL);
  for (guint64 k = 0; k < m->evs->len; k++)
    {
      DEv *d = &g_array_index (m->evs, DEv, k);
      VsEvent *e = &d->ev;
      Side *s = g_hash_table_lookup (m->side, &k);
      sweep_to (m, e->t);
      gboolean lost = FALSE;
      switch (e->op)
        {
        case VS_OP_ALLOC:
          {
            const DAlloc *a = &g_array_index (m->allocs, DAlloc, ai);
            d->drop = a->explained;
            if (a->explained)
              m->st.segments++;
            else if (a->device)
              m->st.driver_kept++;
            g_hash_table_insert (live, g_memdup2 (&e->id, 8), g_memdup2 (&ai, sizeof ai));
            ai++;
          }
          break;
        case VS_OP_FREE:
          {
            guint *x = g_hash_table_lookup (live, &e->id);
            d->drop = x != NULL && g_array_index (m->allocs, DAlloc, *x).explained;
            g_hash_table_remove (live, &e->id);
          }
          break;
        case VS_OP_KERNEL:
          e->touches = remap_list (m, live, k, e->touches, &e->n_touches);
          e->reads = remap_list (m, live, k, e->reads, &e->n_reads);
          e->writes = remap_list (m, live, k, e->writes, &e->n_writes);
          break;
        case VS_OP_COPY:
          {
            gboolean sl = FALSE, dl = FALSE;
            gboolean hp = s != NULL && s->kind == 'c' && s->n >= 2;
            e->dst = remap_one (m, live, k, e->dst, hp, hp ? s->v[0] : 0, &dl);
            e->src = remap_one (m, live, k, e->src, hp, hp ? s->v[1] : 0, &sl);
            lost = sl || dl;
          }
          break;
        case VS_OP_MEMSET:
          {
            gboolean hp = s != NULL && s->kind == 'm' && s->n >= 1;
            e->dst = remap_one (m, live, k, e->dst, hp, hp ? s->v[0] : 0, &lost);
          }
          break;
        case VS_OP_PREFETCH:
          {
            gboolean hp = s != NULL && s->kind == 'p' && s->n >= 1;
            e->id = remap_one (m, live, k, e->id, hp, hp ? s->v[0] : 0, &lost);
          }
          break;
        default:
          break;
        }
      if (lost)
        d->drop = TRUE;
    }
}

static void
add_stats (cJSON *h, const VsMergeStats *st, const VsSnapJoin *j, const char *snapshot_path)
{
  cJSON_DeleteItemFromObjectCaseSensitive (h, "tensor_merge");
  cJSON *o = cJSON_AddObjectToObject (h, "tensor_merge");
  g_autofree char *base = g_path_get_basename (snapshot_path);
  cJSON_AddStringToObject (o, "snapshot", base);
  cJSON_AddNumberToObject (o, "tensors", (double) st->tensors);
  cJSON_AddNumberToObject (o, "first_tensor_id", (double) st->first_tensor_id);
  cJSON_AddNumberToObject (o, "segments_replaced", (double) st->segments);
  cJSON_AddNumberToObject (o, "driver_allocations_kept", (double) st->driver_kept);
  cJSON_AddNumberToObject (o, "anchors", (double) st->anchors);
  /* a string: ~1.8e18 ns does not survive a JSON double */
  g_autofree char *off = g_strdup_printf ("%" G_GINT64_FORMAT, st->offset_ns);
  cJSON_AddStringToObject (o, "clock_offset_ns", off);
  cJSON_AddNumberToObject (o, "clock_offset_vs_sidecar_ns", (double) st->offset_vs_side_ns);
  cJSON_AddNumberToObject (o, "anchor_max_dev_ns", (double) st->anchor_dev_ns);
  cJSON_AddNumberToObject (o, "references", (double) st->refs);
  cJSON_AddNumberToObject (o, "references_in_life", (double) st->refs_exact);
  cJSON_AddNumberToObject (o, "lives_widened", (double) st->stretched);
  cJSON_AddNumberToObject (o, "widened_max_ns", (double) st->stretch_max_ns);
  cJSON_AddNumberToObject (o, "references_dropped", (double) st->unresolved);
  cJSON_AddNumberToObject (o, "segment_maps_of_several_mappings", (double) st->maps_tiled);
  cJSON_AddNumberToObject (o, "mappings_in_them", (double) st->mappings_tiled);
  cJSON_AddNumberToObject (o, "dumps", (double) j->dumps);
  cJSON_AddNumberToObject (o, "dump_overlap_actions", (double) j->overlap);
  cJSON_AddNumberToObject (o, "dump_gaps", (double) j->gaps);
  cJSON_AddNumberToObject (o, "gap_actions_made_up", (double) j->gap_actions);
  if (j->note != NULL)
    {
      /* the replay repeats the header's warnings (report warnings[]) */
      cJSON *w = cJSON_GetObjectItemCaseSensitive (h, "warnings");
      if (!cJSON_IsArray (w))
        {
          cJSON_DeleteItemFromObjectCaseSensitive (h, "warnings");
          w = cJSON_AddArrayToObject (h, "warnings");
        }
      g_autofree char *msg = g_strdup_printf ("the PyTorch memory history: %s", j->note);
      cJSON_AddItemToArray (w, cJSON_CreateString (msg));
    }
}

static void
set_field (cJSON *h, const char *key, cJSON *v)
{
  cJSON_DeleteItemFromObjectCaseSensitive (h, key);
  cJSON_AddItemToObject (h, key, v);
}

static void
merge_clear (Merge *m)
{
  if (m->evs)
    g_array_unref (m->evs);
  if (m->allocs)
    g_array_unref (m->allocs);
  if (m->side)
    g_hash_table_unref (m->side);
  if (m->owned)
    g_ptr_array_unref (m->owned);
  if (m->strings)
    g_string_chunk_free (m->strings);
  if (m->tensors)
    g_array_unref (m->tensors);
  if (m->alive)
    g_tree_destroy (m->alive);
  if (m->sweep)
    g_array_unref (m->sweep);
  g_free (m->sweep_early);
  g_free (m->by_addr);
}

static void
merge_init (Merge *m, const char *trace_path)
{
  *m = (Merge) { .trace_path = trace_path };
  m->evs = g_array_new (FALSE, FALSE, sizeof (DEv));
  m->allocs = g_array_new (FALSE, FALSE, sizeof (DAlloc));
  m->side = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  m->owned = g_ptr_array_new_with_free_func (g_free);
  m->strings = g_string_chunk_new (4096);
}

static gboolean
write_tensor_ev (Merge *m, VsTraceWriter *w, const TEv *x, guint32 tid, GError **error)
{
  VsEvent ev;
  event_init (&ev, (VsOp) x->op);
  ev.t = x->t;
  ev.tid = tid;
  if (x->op == VS_OP_ALLOC || x->op == VS_OP_FREE)
    {
      const Tensor *z = &g_array_index (m->tensors, Tensor, x->tensor);
      ev.id = z->id;
      ev.stream = z->stream;
      ev.has_stream = TRUE;
      if (x->op == VS_OP_ALLOC)
        {
          ev.bytes = z->bytes;
          ev.kind = VS_MEM_DEVICE;
          ev.tag = z->tag;
        }
    }
  else if (x->op == VS_OP_MARK)
    ev.name = x->name;
  return trace_writer_write (w, &ev, error);
}

gboolean
merge_tensor (const char *snapshot_path, int device, const char *trace_path, const char *addrs_path,
              const char *out_path, VsMergeStats *stats, GError **error)
{
  VsSnapJoin j;
  g_autoptr (VsSnapshot) s = snapshot_load_parts (snapshot_path, device, &j, error);
  if (s == NULL)
    return FALSE;
  gboolean ok = merge_tensor_snapshot (s, &j, snapshot_path, trace_path, addrs_path, out_path, stats, error);
  snapshot_join_clear (&j);
  return ok;
}

gboolean
merge_tensor_snapshot (const VsSnapshot *s, const VsSnapJoin *join, const char *snapshot_path,
                       const char *trace_path, const char *addrs_path, const char *out_path,
                       VsMergeStats *stats, GError **error)
{
  VsSnapJoin none = { .dumps = 1 };
  if (join == NULL)
    join = &none;
  Merge m;
  merge_init (&m, trace_path);
  g_autoptr (VsTraceHeader) h = NULL;
  g_autofree char *side_path = addrs_path ? g_strdup (addrs_path) : g_strconcat (trace_path, ".addrs", NULL);
  g_autofree guint64 *t = NULL;
  g_autoptr (GArray) tev = g_array_new (FALSE, FALSE, sizeof (TEv));
  gboolean ok = FALSE;
  if (!read_trace (&m, &h, error) || !read_side (&m, side_path, error))
    goto out;
  /* The tensors' ids follow the trace's largest, on a thread after its
   * largest: both must stay in range (ids 0..2^63-1, tids 32 bits). */
  {
    guint64 n_tensors = s->start_blocks->len;
    for (guint i = 0; i < s->actions->len; i++)
      n_tensors += g_array_index (s->actions, VsSnapAction, i).action == SNAP_ALLOC;
    if (m.max_id > (guint64) G_MAXINT64 - n_tensors)
      {
        import_fail (error, trace_path, "field 'id': the trace's largest id %" G_GUINT64_FORMAT " leaves no room "
                     "for the %" G_GUINT64_FORMAT " tensor ids of %s after it (ids are 0..2^63-1)", m.max_id,
                     n_tensors, snapshot_path);
        goto out;
      }
    if (m.max_tid == G_MAXUINT32)
      {
        import_fail (error, trace_path, "field 'tid': the trace uses thread id 4294967295, the largest: no "
                     "thread id is left after it for the tensors of %s", snapshot_path);
        goto out;
      }
  }
  t = action_times (&m, s, error, snapshot_path);
  if (t == NULL)
    goto out;
  guint64 tw = s->actions->len ? t[0]
             : m.evs->len ? g_array_index (m.evs, DEv, m.evs->len - 1).ev.t : 0;
  explain_start (&m, s, tw);
  m.tensors = build_tensors (&m, s, t, tw, tev);
  m.by_addr = g_new (guint, MAX (m.tensors->len, 1));
  for (guint i = 0; i < m.tensors->len; i++)
    m.by_addr[i] = i;
  sort_m = &m;
  qsort (m.by_addr, m.tensors->len, sizeof (guint), (int (*) (const void *, const void *)) cmp_addr);
  remap (&m);
  for (guint i = 0; i < m.tensors->len; i++)
    {
      const Tensor *z = &g_array_index (m.tensors, Tensor, i);
      TEv a = { .t = z->ta, .order = z->oa, .op = VS_OP_ALLOC, .tensor = i };
      g_array_append_val (tev, a);
      if (z->tf != G_MAXUINT64)
        {
          TEv f = { .t = z->tf, .order = z->of, .op = VS_OP_FREE, .tensor = i };
          g_array_append_val (tev, f);
        }
    }
  g_array_sort (tev, cmp_tev);

  if (h->extra == NULL)
    h->extra = cJSON_CreateObject ();
  trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
  trace_header_set_allocator_settings (h, snapshot_settings_json (s));
  cJSON_DeleteItemFromObjectCaseSensitive (h->extra, "tensor_note");
  set_field (h->extra, "allocator_state", snapshot_state_json (s, m.st.first_tensor_id));
  add_stats (h->extra, &m.st, join, snapshot_path);
  m.st.dumps = join->dumps;
  m.st.gaps = join->gaps;
  {
    g_autoptr (VsTraceWriter) w = trace_writer_new (out_path, VS_FORMAT_AUTO, h, error);
    if (w == NULL)
      goto out;
    guint32 ttid = m.max_tid + 1;
    guint j = 0;
    g_autofree guint8 *early = allocs_after (tev);
    for (guint k = 0; k < m.evs->len; k++)
      {
        const DEv *d = &g_array_index (m.evs, DEv, k);
        if (d->drop)
          continue;
        while (j < tev->len)
          {
            const TEv *x = &g_array_index (tev, TEv, j);
            if (!emit_before (x, early[j], d->ev.t))
              break;
            if (!write_tensor_ev (&m, w, x, ttid, error))
              goto out;
            j++;
          }
        if (!trace_writer_write (w, &d->ev, error))
          goto out;
      }
    for (; j < tev->len; j++)
      if (!write_tensor_ev (&m, w, &g_array_index (tev, TEv, j), ttid, error))
        goto out;
    ok = trace_writer_finish (g_steal_pointer (&w), error);
  }
out:
  if (ok && stats)
    *stats = m.st;
  merge_clear (&m);
  return ok;
}

/* The rest of R's events into W, unchanged; W is finished (and freed). */
static gboolean
copy_events (VsTraceReader *r, VsTraceWriter *w_owned, GError **error)
{
  g_autoptr (VsTraceWriter) w = w_owned;
  VsEvent ev;
  GError *e = NULL;
  while (trace_next (r, &ev, &e))
    if (!trace_writer_write (w, &ev, error))
      return FALSE;
  if (e != NULL)
    {
      g_propagate_error (error, e);
      return FALSE;
    }
  return trace_writer_finish (g_steal_pointer (&w), error);
}

gboolean
merge_tensor_note (const char *trace_path, const char *note, const char *out_path, GError **error)
{
  g_autoptr (VsTraceReader) r = trace_open (trace_path, error);
  if (r == NULL)
    return FALSE;
  g_autoptr (VsTraceHeader) h = trace_header_copy (trace_reader_header (r));
  if (h->extra == NULL)
    h->extra = cJSON_CreateObject ();
  trace_header_set_allocations (h, VS_ALLOCS_DRIVER);
  set_field (h->extra, "tensor_note", cJSON_CreateString (note));
  g_autoptr (VsTraceWriter) w = trace_writer_new (out_path, VS_FORMAT_AUTO, h, error);
  if (w == NULL)
    return FALSE;
  return copy_events (r, g_steal_pointer (&w), error);
}

gboolean
merge_tensor_async (const char *trace_path, const char *alloc_conf, const char *note, const char *out_path,
                    VsMergeStats *stats, GError **error)
{
  /* Read once (TRACE_PATH may be a FIFO or "-"), held in memory: counted
   * first (the header comes before the events), then copied. */
  g_autoptr (VsTraceBuf) buf = trace_buf_load (trace_path, error);
  if (buf == NULL)
    return FALSE;
  g_autoptr (VsTraceReader) r = trace_buf_reader (buf);
  /* stream-ordered device allocations are the backend's tensors, the rest the driver's */
  VsMergeStats st = { 0 };
  VsEvent ev;
  GError *e = NULL;
  while ((event_init (&ev, VS_OP_MARK), trace_next (r, &ev, &e)))
    if (ev.op == VS_OP_ALLOC && ev.kind == VS_MEM_DEVICE)
      {
        if (ev.has_stream)
          st.tensors++;
        else
          st.driver_kept++;
      }
  if (e != NULL)
    {
      g_propagate_error (error, e);
      return FALSE;
    }
  g_clear_pointer (&r, trace_close);
  r = trace_buf_reader (buf);
  g_autoptr (VsTraceHeader) h = trace_header_copy (trace_reader_header (r));
  if (h->extra == NULL)
    h->extra = cJSON_CreateObject ();
  trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
  cJSON *set = cJSON_CreateObject ();
  cJSON_AddStringToObject (set, "kind", "async");
  if (alloc_conf != NULL)
    cJSON_AddStringToObject (set, "PYTORCH_CUDA_ALLOC_CONF", alloc_conf);
  trace_header_set_allocator_settings (h, set);
  if (note != NULL)
    set_field (h->extra, "tensor_note", cJSON_CreateString (note));
  cJSON_DeleteItemFromObjectCaseSensitive (h->extra, "allocator_state");
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "backend", "cudaMallocAsync");
  cJSON_AddNumberToObject (o, "stream_ordered_allocations", (double) st.tensors);
  cJSON_AddNumberToObject (o, "driver_allocations_kept", (double) st.driver_kept);
  set_field (h->extra, "tensor_merge", o);
  g_autoptr (VsTraceWriter) w = trace_writer_new (out_path, VS_FORMAT_AUTO, h, error);
  if (w == NULL)
    return FALSE;
  if (!copy_events (r, g_steal_pointer (&w), error))
    return FALSE;
  if (stats)
    *stats = st;
  return TRUE;
}
