/* test-merge-tensor.c — the tensor merge (sim/import/merge-tensor.c) on
 * PyTorch memory snapshots: the generated tests/import/snapshot-fixture.pickle
 * (tests/import/gen-snapshot.py) and, when given, the real ones
 * validation/data/README.md lists as optional (REAL_TRACES=DIR), each
 * joined with a driver-level trace built here the way vramcap would have
 * recorded the same run, with its address sidecar:
 *
 *   - one cuMemAlloc per segment at the snapshot's addresses and sizes: the
 *     segments that existed at the window's start (rewound by
 *     snapshot_load) at t = 1000 + j ns, then every segment_alloc and
 *     segment_free of the window at its own time;
 *   - an 8 MiB allocation no tensor explains (NCCL's own buffer), at an
 *     address outside every segment, allocated first and never freed;
 *   - for the k-th tensor alloc of the window, at its time, a kernel "kK"
 *     touching the segment that holds it and the NCCL buffer, its pointers
 *     the tensor's address + 4 (a view into it) and the buffer's base; every
 *     tenth also a memset of the tensor and a d2d copy from the buffer.
 *
 * Times: with time_us, the driver's clock is the snapshot's less REAL0, the
 * sidecar's CLOCK_REALTIME at trace time 0 (taken 1 ms before the first
 * action); a second run gives the sidecar a REAL0 5 ms off, which the
 * anchors (segment_alloc at the driver call's end) must correct exactly.
 * Without time_us, action i is at 1,000,000 + 1000 i ns.
 *
 * Checked exactly: the header (allocations "tensor", the file's allocator
 * settings, the counts); every tensor of the window as an alloc, in order,
 * with its size, stream and tag; no segment allocation left, the NCCL one
 * kept; each kernel touching [its tensor, the NCCL buffer]; memsets and
 * copies on the tensor; no reference dropped or widened; and the pytorch
 * allocator model, seeded with the header's allocator_state and fed the
 * merged trace's tensor allocs, frees and empty_caches, makes the
 * snapshot's segment events (action, size, address), in order. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "import/import-snapshot.h"
#include "import/merge-tensor.h"
#include "import/snapshot-parts.h"
#include "mem/allocator.h"
#include "trace/trace.h"
#include "test-data.h"

#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define NCCL_ADDR G_GUINT64_CONSTANT (0x6f0000000000)
#define NCCL_BYTES (8 * MiB)

typedef struct {
  const char *file;
  gboolean has_time;
  guint start_segments, seg_allocs, seg_frees;
  gboolean gap;  /* a window joined across a gap: the model's segments are its own after it */
} Case;

/* The generated snapshot, a file of the source tree; the others are
 * optional real ones under REAL_TRACES/snapshots. */
#define FIXTURE "tests/import/snapshot-fixture.pickle"

/* (transfer full) C's file, or NULL (the test failed or was skipped). */
static char *
case_path (const Case *c)
{
  if (strcmp (c->file, FIXTURE) == 0)
    return test_repo_file (FIXTURE);
  g_autofree char *rel = g_build_filename ("snapshots", c->file, NULL);
  return test_optional_trace (rel);
}

typedef struct {
  VsTraceWriter *w;
  GString *side;
  guint64 n;
} Out;

static void
put (Out *o, VsEvent *ev)
{
  GError *error = NULL;
  g_assert_true (trace_writer_write (o->w, ev, &error));
  g_assert_no_error (error);
  o->n++;
}

typedef struct {
  guint64 addr, bytes, id;
} Seg;

/* Action times on the driver's clock (module comment). */
static guint64 *
driver_times (const VsSnapshot *s, guint64 *real0)
{
  guint n = s->actions->len;
  guint64 *t = g_new0 (guint64, MAX (n, 1));
  guint64 first = G_MAXUINT64;
  for (guint i = 0; i < n; i++)
    {
      guint64 us = g_array_index (s->actions, VsSnapAction, i).t_us;
      if (us)
        first = MIN (first, us);
    }
  *real0 = s->has_time ? first * 1000 - 1000000 : 0;
  guint64 prev = 0;
  for (guint i = 0; i < n; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      guint64 x = s->has_time ? (a->t_us ? a->t_us * 1000 - *real0 : prev) : 1000000 + 1000 * (guint64) i;
      t[i] = prev = MAX (prev, x);
    }
  return t;
}

/* Writes the driver trace and sidecar; returns the kernels' expected tensor
 * ordinals (k-th ALLOC action -> k) implicitly by name. */
static void
build_driver (const VsSnapshot *s, const char *trace, const char *side, guint64 real0_side,
              const guint64 *t, guint *n_kernels)
{
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  h->device = g_strdup ("NVIDIA H200");
  h->config = g_strdup ("h200");
  h->tool = g_strdup ("vramcap 0.1");
  GError *error = NULL;
  Out o = { .w = trace_writer_new (trace, VS_FORMAT_AUTO, h, &error), .side = g_string_new (NULL) };
  g_assert_no_error (error);
  g_string_append_printf (o.side, "vramcap-addrs 1 %" G_GUINT64_FORMAT "\n", real0_side);
  GArray *segs = g_array_new (FALSE, FALSE, sizeof (Seg));
  guint64 id = 1;
  VsEvent ev;
  event_init (&ev, VS_OP_ALLOC);
  ev.t = 500;
  ev.id = id++;
  ev.bytes = NCCL_BYTES;
  g_string_append_printf (o.side, "a %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x\n", o.n, NCCL_ADDR);
  put (&o, &ev);
  for (guint j = 0; j < s->start_segments->len; j++)
    {
      const VsSnapSegment *g = &g_array_index (s->start_segments, VsSnapSegment, j);
      event_init (&ev, VS_OP_ALLOC);
      ev.t = 1000 + j;
      ev.id = id;
      ev.bytes = g->size;
      g_string_append_printf (o.side, "a %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x\n", o.n, g->addr);
      put (&o, &ev);
      Seg sg = { g->addr, g->size, id++ };
      g_array_append_val (segs, sg);
    }
  guint k = 0;
  for (guint i = 0; i < s->actions->len; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      if (a->action == SNAP_SEGMENT_ALLOC)
        {
          event_init (&ev, VS_OP_ALLOC);
          ev.t = t[i];
          ev.id = id;
          ev.bytes = a->size;
          g_string_append_printf (o.side, "a %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x\n", o.n, a->addr);
          put (&o, &ev);
          Seg sg = { a->addr, a->size, id++ };
          g_array_append_val (segs, sg);
        }
      else if (a->action == SNAP_SEGMENT_FREE)
        {
          guint j = 0;
          while (j < segs->len && g_array_index (segs, Seg, j).addr != a->addr)
            j++;
          g_assert_cmpuint (j, <, segs->len);
          event_init (&ev, VS_OP_FREE);
          ev.t = t[i];
          ev.id = g_array_index (segs, Seg, j).id;
          put (&o, &ev);
          g_array_remove_index (segs, j);
        }
      else if (a->action == SNAP_ALLOC)
        {
          guint j = 0;
          while (j < segs->len && !(a->addr >= g_array_index (segs, Seg, j).addr
                                    && a->addr < g_array_index (segs, Seg, j).addr + g_array_index (segs, Seg, j).bytes))
            j++;
          g_assert_cmpuint (j, <, segs->len);
          guint64 seg = g_array_index (segs, Seg, j).id;
          guint64 ptr = a->addr + (a->size >= 8 ? 4 : 0);
          g_autofree char *name = g_strdup_printf ("k%u", k);
          guint64 touches[2] = { seg, 1 };
          event_init (&ev, VS_OP_KERNEL);
          ev.t = t[i];
          ev.name = name;
          ev.dur = 1000;
          ev.stream = 7;
          ev.touches = touches;
          ev.n_touches = 2;
          g_string_append_printf (o.side, "k %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x\n",
                                  o.n, ptr, NCCL_ADDR);
          put (&o, &ev);
          if (k % 10 == 0)
            {
              event_init (&ev, VS_OP_MEMSET);
              ev.t = t[i];
              ev.dst = seg;
              ev.bytes = 4;
              g_string_append_printf (o.side, "m %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x\n", o.n, a->addr);
              put (&o, &ev);
              event_init (&ev, VS_OP_COPY);
              ev.t = t[i];
              ev.dir = VS_DIR_D2D;
              ev.dst = seg;
              ev.src = 1;
              ev.bytes = 4;
              g_string_append_printf (o.side, "c %" G_GUINT64_FORMAT " %" G_GINT64_MODIFIER "x %" G_GINT64_MODIFIER "x\n",
                                      o.n, a->addr, NCCL_ADDR);
              put (&o, &ev);
            }
          k++;
        }
    }
  *n_kernels = k;
  g_assert_true (trace_writer_finish (o.w, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (side, o.side->str, -1, &error));
  g_assert_no_error (error);
  g_string_free (o.side, TRUE);
  g_array_unref (segs);
}

/* ---- the allocator model on the merged trace ---- */

typedef struct {
  const VsSnapshot *s;
  GArray *segidx;
  guint cursor, matched, mismatched;
} Drv;

static void
on_seg (const VsSegEvent *ev, gpointer data)
{
  Drv *d = data;
  static const guint8 to_snap[VS_SEG_COUNT] = {
    SNAP_SEGMENT_ALLOC, SNAP_SEGMENT_FREE, SNAP_SEGMENT_MAP, SNAP_SEGMENT_UNMAP,
  };
  if (d->cursor >= d->segidx->len)
    {
      d->mismatched++;
      return;
    }
  const VsSnapAction *f = &g_array_index (d->s->actions, VsSnapAction,
                                          g_array_index (d->segidx, guint, d->cursor++));
  if (f->action == to_snap[ev->action] && f->size == ev->bytes && f->addr == ev->addr)
    d->matched++;
  else
    d->mismatched++;
}

static guint64
addr_source (guint64 bytes, guint64 stream, gpointer data)
{
  Drv *d = data;
  if (d->cursor >= d->segidx->len)
    return 0;
  const VsSnapAction *f = &g_array_index (d->s->actions, VsSnapAction,
                                          g_array_index (d->segidx, guint, d->cursor));
  return f->action == SNAP_SEGMENT_ALLOC || f->action == SNAP_SEGMENT_MAP ? f->addr : 0;
}

static guint64
num (const cJSON *o, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, k);
  g_assert_true (cJSON_IsNumber (v));
  return (guint64) v->valuedouble;
}

/* C's file through the merge; GIVEN (with JOIN): that snapshot instead of
 * the file's (its dumps joined), and C's counts not checked. */
static void
run_case (const Case *c, const char *path, gboolean clock_off, const VsSnapshot *given, const VsSnapJoin *join)
{
  GError *error = NULL;
  g_autoptr (VsSnapshot) own = given ? NULL : snapshot_load (path, -1, &error);
  g_assert_no_error (error);
  const VsSnapshot *s = given ? given : own;
  Case cc = *c;
  if (given)
    {
      cc.start_segments = s->start_segments->len;
      cc.has_time = s->has_time;
      cc.seg_allocs = cc.seg_frees = 0;
      for (guint i = 0; i < s->actions->len; i++)
        {
          guint a = g_array_index (s->actions, VsSnapAction, i).action;
          cc.seg_allocs += a == SNAP_SEGMENT_ALLOC;
          cc.seg_frees += a == SNAP_SEGMENT_FREE;
        }
    }
  c = &cc;
  g_assert_cmpuint (s->start_segments->len, ==, c->start_segments);
  g_assert_cmpint (s->has_time, ==, c->has_time);
  g_autofree char *dir = g_dir_make_tmp ("vs-merge-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "drv.vtrace", NULL);
  g_autofree char *side = g_build_filename (dir, "drv.vtrace.addrs", NULL);
  g_autofree char *out = g_build_filename (dir, "tensor.jsonl", NULL);
  guint64 real0;
  g_autofree guint64 *t = driver_times (s, &real0);
  guint n_kernels = 0;
  guint64 real0_side = clock_off ? real0 + 5000000 : real0;
  build_driver (s, trace, side, real0_side, t, &n_kernels);

  VsMergeStats st;
  if (given)
    g_assert_true (merge_tensor_snapshot (given, join, path, trace, NULL, out, &st, &error));
  else
    g_assert_true (merge_tensor (path, -1, trace, NULL, out, &st, &error));
  g_assert_no_error (error);

  guint seg_allocs = 0, seg_frees = 0, allocs = 0;
  for (guint i = 0; i < s->actions->len; i++)
    {
      guint a = g_array_index (s->actions, VsSnapAction, i).action;
      seg_allocs += a == SNAP_SEGMENT_ALLOC;
      seg_frees += a == SNAP_SEGMENT_FREE;
      allocs += a == SNAP_ALLOC;
    }
  g_assert_cmpuint (seg_allocs, ==, c->seg_allocs);
  g_assert_cmpuint (seg_frees, ==, c->seg_frees);
  /* Stats: every segment replaced, the NCCL buffer kept, every reference
   * inside its tensor's life (kernel: 1 each; memset 1 and copy dst 1 for
   * every tenth). */
  guint tenth = (n_kernels + 9) / 10;
  g_assert_cmpuint (st.tensors, ==, s->start_blocks->len + allocs);
  g_assert_cmpuint (st.segments, ==, c->start_segments + seg_allocs);
  g_assert_cmpuint (st.driver_kept, ==, 1);
  g_assert_cmpuint (st.anchors, ==, seg_allocs);
  g_assert_cmpuint (st.refs, ==, n_kernels + 2 * tenth);
  g_assert_cmpuint (st.refs_exact, ==, st.refs);
  g_assert_cmpuint (st.stretched, ==, 0);
  g_assert_cmpuint (st.unresolved, ==, 0);
  if (c->has_time)
    {
      /* the anchors give the true offset even when the sidecar's clock is
       * 5 ms off; without anchors the sidecar's clock is the offset */
      g_assert_cmpint (st.offset_ns, ==, seg_allocs > 0 || !clock_off ? -(gint64) real0 : -(gint64) real0_side);
      g_assert_cmpuint (st.anchor_dev_ns, ==, 0);
    }
  g_assert_cmpuint (st.first_tensor_id, ==, 2 + c->start_segments + seg_allocs);

  /* Read the merged trace back (the reader validates ids and per-thread
   * time order). */
  g_autoptr (VsTraceReader) r = trace_open (out, &error);
  g_assert_no_error (error);
  const VsTraceHeader *h = trace_reader_header (r);
  const cJSON *x = h->extra;
  g_assert_cmpstr (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (x, "allocations")), ==, "tensor");
  const cJSON *set = cJSON_GetObjectItemCaseSensitive (x, "allocator_settings");
  g_assert_cmpstr (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (set, "kind")), ==, "pytorch");
  g_assert_cmpuint (num (cJSON_GetObjectItemCaseSensitive (x, "tensor_merge"), "tensors"), ==, st.tensors);
  g_assert_cmpstr (h->config, ==, "h200");

  VsAllocConfig cfg = s->settings;
  Drv d = { .s = s, .segidx = g_array_new (FALSE, FALSE, sizeof (guint)) };
  guint64 rr = s->start_reserved, peak = rr;
  for (guint i = 0; i < s->actions->len; i++)
    {
      const VsSnapAction *a = &g_array_index (s->actions, VsSnapAction, i);
      if (a->action >= SNAP_SEGMENT_ALLOC && a->action <= SNAP_SEGMENT_UNMAP)
        {
          g_array_append_val (d.segidx, i);
          rr = a->action == SNAP_SEGMENT_ALLOC || a->action == SNAP_SEGMENT_MAP ? rr + a->size : rr - a->size;
          peak = MAX (peak, rr);
        }
    }
  cfg.limit = peak;
  g_autoptr (VsAlloc) m = alloc_new (&cfg);
  alloc_set_listener (m, on_seg, &d);
  /* the snapshot's addresses for the model's segments, which only hold
   * while the model makes the snapshot's segments (not across a gap) */
  if (!c->gap)
    alloc_set_addr_source (m, addr_source, &d);
  /* seed from the header's allocator_state: [addr, bytes, stream, small|large, expandable], [id, addr, bytes] */
  const cJSON *state = cJSON_GetObjectItemCaseSensitive (x, "allocator_state");
  const cJSON *row;
  cJSON_ArrayForEach (row, cJSON_GetObjectItemCaseSensitive (state, "segments"))
    alloc_seed_segment (m, (guint64) cJSON_GetArrayItem (row, 0)->valuedouble,
                        (guint64) cJSON_GetArrayItem (row, 1)->valuedouble,
                        (guint64) cJSON_GetArrayItem (row, 2)->valuedouble,
                        strcmp (cJSON_GetArrayItem (row, 3)->valuestring, "small") == 0,
                        cJSON_IsTrue (cJSON_GetArrayItem (row, 4)));
  g_autoptr (GHashTable) seeded = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  cJSON_ArrayForEach (row, cJSON_GetObjectItemCaseSensitive (state, "blocks"))
    {
      guint64 bid = (guint64) cJSON_GetArrayItem (row, 0)->valuedouble;
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, bid - st.first_tensor_id);
      g_assert_true (alloc_seed_block (m, bid, (guint64) cJSON_GetArrayItem (row, 1)->valuedouble,
                                       (guint64) cJSON_GetArrayItem (row, 2)->valuedouble, b->requested));
      g_hash_table_add (seeded, g_memdup2 (&bid, 8));
    }

  /* the expected tensor of each alloc, in order: start blocks, then the
   * window's allocs */
  GArray *want = g_array_new (FALSE, FALSE, sizeof (VsSnapAction));
  for (guint i = 0; i < s->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (s->start_blocks, VsSnapBlock, i);
      VsSnapAction a = { .action = SNAP_ALLOC, .addr = b->addr, .size = b->requested, .stream = b->stream,
                         .frame = b->frame };
      g_array_append_val (want, a);
    }
  for (guint i = 0; i < s->actions->len; i++)
    if (g_array_index (s->actions, VsSnapAction, i).action == SNAP_ALLOC)
      g_array_append_val (want, g_array_index (s->actions, VsSnapAction, i));

  guint n_allocs = 0, kernels = 0, memsets = 0, copies = 0, empties = 0, nccl = 0;
  guint64 t_last = 0;
  VsEvent ev;
  while (trace_next (r, &ev, &error))
    {
      switch (ev.op)
        {
        case VS_OP_ALLOC:
          if (ev.id < st.first_tensor_id)
            {
              /* the only driver allocation left: NCCL's */
              g_assert_cmpuint (ev.id, ==, 1);
              g_assert_cmpuint (ev.bytes, ==, NCCL_BYTES);
              nccl++;
              break;
            }
          {
            g_assert_cmpuint (ev.id, ==, st.first_tensor_id + n_allocs);
            const VsSnapAction *a = &g_array_index (want, VsSnapAction, n_allocs);
            g_assert_cmpuint (ev.bytes, ==, a->size);
            g_assert_cmpuint (ev.stream, ==, a->stream);
            g_assert_true (ev.has_stream);
            g_assert_cmpstr (ev.tag, ==, a->frame);
            n_allocs++;
            /* a seeded id's malloc returns its block (allocator.h) */
            g_assert_true (alloc_malloc (m, ev.id, ev.bytes, ev.stream, ev.t, NULL));
          }
          break;
        case VS_OP_FREE:
          g_assert_cmpuint (ev.id, >=, st.first_tensor_id);
          alloc_free (m, ev.id, ev.t);
          break;
        case VS_OP_EMPTY_CACHE:
          empties++;
          alloc_empty_cache (m, ev.t);
          break;
        case VS_OP_KERNEL:
          {
            guint k = (guint) g_ascii_strtoull (ev.name + 1, NULL, 10);
            g_assert_cmpuint (k, ==, kernels);
            g_assert_cmpuint (ev.n_touches, ==, 2);
            g_assert_cmpuint (ev.touches[0], ==, st.first_tensor_id + s->start_blocks->len + k);
            g_assert_cmpuint (ev.touches[1], ==, 1);
            g_assert_true (alloc_is_live (m, ev.touches[0]));
            kernels++;
          }
          break;
        case VS_OP_MEMSET:
          g_assert_cmpuint (ev.dst, ==, st.first_tensor_id + s->start_blocks->len + kernels - 1);
          memsets++;
          break;
        case VS_OP_COPY:
          g_assert_cmpuint (ev.dst, ==, st.first_tensor_id + s->start_blocks->len + kernels - 1);
          g_assert_cmpuint (ev.src, ==, 1);
          copies++;
          break;
        default:
          break;
        }
      t_last = MAX (t_last, ev.t);
    }
  g_assert_no_error (error);
  g_assert_cmpuint (nccl, ==, 1);
  g_assert_cmpuint (n_allocs, ==, want->len);
  g_assert_cmpuint (kernels, ==, n_kernels);
  g_assert_cmpuint (memsets, ==, tenth);
  g_assert_cmpuint (copies, ==, tenth);
  g_test_message ("%s: %u tensors, %u segments replaced, %u segment events matched by the model, "
                  "%u empty_cache, offset %" G_GINT64_FORMAT " ns",
                  c->file, n_allocs, (guint) st.segments, d.matched, empties, st.offset_ns);
  VsAllocStats ast;
  alloc_stats (m, &ast);
  if (!c->gap)
    {
      g_assert_cmpuint (d.mismatched, ==, 0);
      g_assert_cmpuint (d.matched, ==, d.segidx->len);
      g_assert_cmpuint (ast.reserved, ==, s->final_reserved);
    }
  else
    g_test_message ("%s across the gap: the model reserved %" G_GUINT64_FORMAT " at the end, the snapshot %"
                    G_GUINT64_FORMAT, c->file, ast.reserved, s->final_reserved);
  g_array_unref (d.segidx);
  g_array_unref (want);
  g_unlink (trace);
  g_unlink (side);
  g_unlink (out);
  g_rmdir (dir);
}

static void
test_file (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *path = case_path (c);
  if (path == NULL)
    return;
  run_case (c, path, FALSE, NULL, NULL);
  if (c->has_time && c->seg_allocs > 0)
    run_case (c, path, TRUE, NULL, NULL);
}

/* ---- dumps joined (snapshot-parts.h) ---- */

static VsSnapshot *
window (const char *path, guint from, guint to)
{
  GError *error = NULL;
  VsSnapshot *w = snapshot_load_window (path, -1, from, to, &error);
  g_assert_no_error (error);
  return w;
}

static void
assert_same_action (const VsSnapAction *a, const VsSnapAction *b)
{
  g_assert_cmpuint (a->action, ==, b->action);
  g_assert_cmpuint (a->addr, ==, b->addr);
  g_assert_cmpuint (a->size, ==, b->size);
  g_assert_cmpuint (a->stream, ==, b->stream);
  g_assert_cmpuint (a->t_us, ==, b->t_us);
  g_assert_cmpstr (a->frame, ==, b->frame);
  g_assert_cmpint (a->user, ==, b->user);
  g_assert_cmpint (a->empty_cache, ==, b->empty_cache);
  g_assert_false (a->synthetic);
}

static void
assert_same_segments (const GArray *a, const GArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++)
    {
      g_assert_cmpuint (g_array_index (a, VsSnapSegment, i).addr, ==, g_array_index (b, VsSnapSegment, i).addr);
      g_assert_cmpuint (g_array_index (a, VsSnapSegment, i).size, ==, g_array_index (b, VsSnapSegment, i).size);
    }
}

/* The blocks (addr -> requested) and segment bases of FULL after its
 * first N actions, played forward from its start: the test's own count,
 * not the join's. */
static void
state_at (const VsSnapshot *full, guint n, GHashTable *blocks, GHashTable *segs)
{
  for (guint i = 0; i < full->start_blocks->len; i++)
    {
      const VsSnapBlock *b = &g_array_index (full->start_blocks, VsSnapBlock, i);
      g_hash_table_insert (blocks, g_memdup2 (&b->addr, 8), g_memdup2 (&b->requested, 8));
    }
  for (guint i = 0; i < full->start_segments->len; i++)
    g_hash_table_add (segs, g_memdup2 (&g_array_index (full->start_segments, VsSnapSegment, i).addr, 8));
  for (guint i = 0; i < n; i++)
    {
      const VsSnapAction *a = &g_array_index (full->actions, VsSnapAction, i);
      if (a->action == SNAP_ALLOC)
        g_hash_table_insert (blocks, g_memdup2 (&a->addr, 8), g_memdup2 (&a->size, 8));
      else if (a->action == SNAP_FREE_REQUESTED)
        g_hash_table_remove (blocks, &a->addr);
      else if (a->action == SNAP_SEGMENT_ALLOC)
        g_hash_table_add (segs, g_memdup2 (&a->addr, 8));
      else if (a->action == SNAP_SEGMENT_FREE)
        g_hash_table_remove (segs, &a->addr);
    }
}

/* How many of A's keys B lacks (or holds with another value). */
static guint
count_missing (GHashTable *a, GHashTable *b, gboolean values)
{
  guint n = 0;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, a);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      gpointer w = g_hash_table_lookup (b, k);
      n += w == NULL || (values && *(guint64 *) w != *(guint64 *) v);
    }
  return n;
}

/* A real snapshot cut into the dumps vramcap's hook would have made of the
 * same run (snapshot_load_window: each dump's final state rewound from the
 * file's), then joined:
 *   - three dumps of a ring of n/2 actions at 0.4 n, 0.8 n and n: the
 *     windows [0, 0.4n), [0.3n, 0.8n), [0.5n, n) overlap by 0.1 n and
 *     0.3 n; the join must give back the file's own window exactly (every
 *     action once, in order, with its frame; the same start and final
 *     state), and the merge of it all the checks of the whole file;
 *   - two dumps of a ring of 0.3 n at 0.3 n and n: [0.3n, 0.7n) lost. The
 *     join keeps both windows whole and makes up, between them, a free
 *     for each block live at 0.3 n and not at 0.7 n, an alloc for each the
 *     other way, and likewise segment frees and allocs, as counted here by
 *     playing the file's actions forward; the merge of it must still pass
 *     the checks (the made-up segments anchored to the driver's own). */
static void
test_parts (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *path = case_path (c);
  if (path == NULL)
    return;
  GError *error = NULL;
  g_autoptr (VsSnapshot) full = snapshot_load (path, -1, &error);
  g_assert_no_error (error);
  guint n = full->actions->len;
  guint r = n / 2, d1 = 2 * n / 5, d2 = 4 * n / 5;
  VsSnapshot *parts[3] = { window (path, 0, d1), window (path, d2 - r, d2), window (path, n - r, n) };
  VsSnapJoin j;
  g_autoptr (VsSnapshot) js = snapshot_join (parts, 3, NULL, &j);
  g_assert_cmpuint (j.dumps, ==, 3);
  g_assert_cmpuint (j.gaps, ==, 0);
  g_assert_cmpuint (j.gap_actions, ==, 0);
  g_assert_null (j.note);
  g_assert_cmpuint (j.overlap, ==, (d1 - (d2 - r)) + (d2 - (n - r)));
  g_assert_cmpuint (js->actions->len, ==, n);
  for (guint i = 0; i < n; i++)
    assert_same_action (&g_array_index (js->actions, VsSnapAction, i), &g_array_index (full->actions, VsSnapAction, i));
  assert_same_segments (js->start_segments, full->start_segments);
  assert_same_segments (js->final_segments, full->final_segments);
  g_assert_cmpuint (js->final_reserved, ==, full->final_reserved);
  g_assert_cmpuint (js->start_blocks->len, ==, full->start_blocks->len);
  for (guint i = 0; i < js->start_blocks->len; i++)
    {
      const VsSnapBlock *a = &g_array_index (js->start_blocks, VsSnapBlock, i);
      const VsSnapBlock *b = &g_array_index (full->start_blocks, VsSnapBlock, i);
      g_assert_cmpuint (a->addr, ==, b->addr);
      g_assert_cmpuint (a->size, ==, b->size);
      g_assert_cmpuint (a->requested, ==, b->requested);
    }
  run_case (c, path, FALSE, js, &j);
  g_test_message ("%s: %u actions from 3 dumps, %" G_GUINT64_FORMAT " overlapping", c->file, n, j.overlap);
  snapshot_join_clear (&j);

  guint g1 = 3 * n / 10, r2 = 3 * n / 10;
  VsSnapshot *two[2] = { window (path, 0, g1), window (path, n - r2, n) };
  g_autoptr (VsSnapshot) jg = snapshot_join (two, 2, NULL, &j);
  g_assert_cmpuint (j.dumps, ==, 2);
  g_assert_cmpuint (j.gaps, ==, 1);
  g_assert_cmpuint (j.overlap, ==, 0);
  g_assert_nonnull (strstr (j.note, "entries lost between a dump and the next"));
  g_assert_cmpuint (jg->actions->len, ==, g1 + j.gap_actions + r2);
  for (guint i = 0; i < g1; i++)
    assert_same_action (&g_array_index (jg->actions, VsSnapAction, i), &g_array_index (full->actions, VsSnapAction, i));
  for (guint i = 0; i < r2; i++)
    assert_same_action (&g_array_index (jg->actions, VsSnapAction, g1 + j.gap_actions + i),
                        &g_array_index (full->actions, VsSnapAction, n - r2 + i));
  g_autoptr (GHashTable) ba = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GHashTable) bb = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GHashTable) sa = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GHashTable) sb = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  state_at (full, g1, ba, sa);
  state_at (full, n - r2, bb, sb);
  guint made[SNAP_ACTION_COUNT] = { 0 };
  for (guint i = g1; i < g1 + j.gap_actions; i++)
    {
      const VsSnapAction *a = &g_array_index (jg->actions, VsSnapAction, i);
      g_assert_true (a->synthetic);
      /* segments released in the gap: one empty_cache, at the first */
      g_assert_cmpint (a->user, ==, a->action == SNAP_SEGMENT_FREE);
      g_assert_cmpint (a->empty_cache, ==, a->action == SNAP_SEGMENT_FREE && made[SNAP_SEGMENT_FREE] == 0);
      made[a->action]++;
      if (a->action == SNAP_ALLOC)
        g_assert_nonnull (g_hash_table_lookup (bb, &a->addr));
      if (a->action == SNAP_SEGMENT_ALLOC)
        g_assert_true (g_hash_table_contains (sb, &a->addr) && !g_hash_table_contains (sa, &a->addr));
    }
  g_assert_cmpuint (made[SNAP_FREE_REQUESTED], ==, count_missing (ba, bb, TRUE));
  g_assert_cmpuint (made[SNAP_FREE_COMPLETED], ==, made[SNAP_FREE_REQUESTED]);
  g_assert_cmpuint (made[SNAP_ALLOC], ==, count_missing (bb, ba, TRUE));
  g_assert_cmpuint (made[SNAP_SEGMENT_FREE], ==, count_missing (sa, sb, FALSE));
  g_assert_cmpuint (made[SNAP_SEGMENT_ALLOC], ==, count_missing (sb, sa, FALSE));
  g_test_message ("%s: a gap of %u actions: %u blocks freed, %u allocated, %u segments freed, %u allocated, "
                  "made up", c->file, n - r2 - g1, made[SNAP_FREE_REQUESTED], made[SNAP_ALLOC],
                  made[SNAP_SEGMENT_FREE], made[SNAP_SEGMENT_ALLOC]);
  g_assert_cmpuint (made[SNAP_ALLOC] + made[SNAP_FREE_REQUESTED], >, 0);
  Case cg = *c;
  cg.gap = TRUE;
  run_case (&cg, path, FALSE, jg, &j);
  snapshot_join_clear (&j);

  /* five dumps of a ring of 0.1 n, every other tenth lost: four gaps, the
   * first three described, the fourth counted */
  VsSnapshot *five[5];
  for (guint k = 0; k < 5; k++)
    five[k] = window (path, 2 * k * n / 10, k == 4 ? n : (2 * k + 1) * n / 10);
  g_autoptr (VsSnapshot) j5 = snapshot_join (five, 5, NULL, &j);
  g_assert_cmpuint (j.gaps, ==, 4);
  const char *p = j.note;
  for (guint k = 0; k < 3; k++)
    {
      p = strstr (p, "entries lost between");
      g_assert_nonnull (p);
      p++;
    }
  g_assert_null (strstr (p, "entries lost between"));
  g_autofree char *tail = g_strdup_printf ("; and 1 more (4 gaps in all, %" G_GUINT64_FORMAT " actions made up)",
                                           j.gap_actions);
  g_assert_true (g_str_has_suffix (j.note, tail));
  snapshot_join_clear (&j);
}

/* Expandable segments at the window's start, on the real
 * thesis-text-to-SQL snapshot (expandable_segments:True, final state only:
 * device 0 has a 2 MiB small segment at 0x403c00000 holding two 4704 B
 * tensors and a 40 MiB large one at 0x938c00000 holding one of 8519680 B).
 * PyTorch mapped them one page per cuMemMap, so the driver saw three
 * mappings: 2 MiB at 0x403c00000, 20 MiB at 0x938c00000 and 20 MiB at
 * 0x93a000000 (the second large page). A kernel after them touches
 * mappings 1 and 3, its pointers the three tensors' bases + 4 (the large
 * tensor, 0x939b5fc00 + 8519680 = 0x93a37fc00, straddles the two large
 * pages: its pointer is in the first). All three mappings are explained,
 * the three tensors are allocated first, and the kernel touches them. */
static void
test_expandable (void)
{
  g_autofree char *snap = test_optional_trace ("snapshots/thesis-text-to-SQL-dump.pickle");
  if (snap == NULL)
    return;
  g_autofree char *dir = g_dir_make_tmp ("vs-merge-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "t.jsonl", NULL);
  g_autofree char *side = g_build_filename (dir, "t.jsonl.addrs", NULL);
  g_autofree char *out = g_build_filename (dir, "o.jsonl", NULL);
  g_assert_true (g_file_set_contents (trace, "{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n"
      "{\"t\": 100, \"op\": \"alloc\", \"id\": 1, \"bytes\": 2097152, \"kind\": \"device\"}\n"
      "{\"t\": 200, \"op\": \"alloc\", \"id\": 2, \"bytes\": 20971520, \"kind\": \"device\"}\n"
      "{\"t\": 300, \"op\": \"alloc\", \"id\": 3, \"bytes\": 20971520, \"kind\": \"device\"}\n"
      "{\"t\": 400, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1000, \"touches\": [1, 2]}\n",
      -1, NULL));
  g_assert_true (g_file_set_contents (side, "vramcap-addrs 1 0\na 0 403c00000\na 1 938c00000\na 2 93a000000\n"
                                      "k 3 403c2c004 403c2d404 939b5fc04\n", -1, NULL));
  GError *error = NULL;
  VsMergeStats st;
  g_assert_true (merge_tensor (snap, 0, trace, NULL, out, &st, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (st.segments, ==, 3);
  g_assert_cmpuint (st.driver_kept, ==, 0);
  g_assert_cmpuint (st.tensors, ==, 3);
  g_assert_cmpuint (st.refs_exact, ==, 3);
  g_autoptr (VsTraceReader) r = trace_open (out, &error);
  g_assert_no_error (error);
  const cJSON *set = cJSON_GetObjectItemCaseSensitive (trace_reader_header (r)->extra, "allocator_settings");
  g_assert_true (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (set, "expandable_segments")));
  static const guint64 bytes[3] = { 4704, 4704, 8519680 };
  VsEvent ev;
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (trace_next (r, &ev, &error));
      g_assert_cmpint (ev.op, ==, VS_OP_ALLOC);
      g_assert_cmpuint (ev.id, ==, 4 + i);
      g_assert_cmpuint (ev.bytes, ==, bytes[i]);
    }
  g_assert_true (trace_next (r, &ev, &error));
  g_assert_cmpint (ev.op, ==, VS_OP_KERNEL);
  g_assert_cmpuint (ev.n_touches, ==, 3);
  g_assert_cmpuint (ev.touches[0], ==, 4);
  g_assert_cmpuint (ev.touches[1], ==, 5);
  g_assert_cmpuint (ev.touches[2], ==, 6);
  g_assert_false (trace_next (r, &ev, &error));
  g_assert_no_error (error);
  g_unlink (trace);
  g_unlink (side);
  g_unlink (out);
  g_rmdir (dir);
}

/* Bad input: a missing sidecar and a corrupt one, each one message naming
 * the file, and no output. */
static void
test_errors (void)
{
  g_autofree char *snap = test_repo_file (FIXTURE);
  if (snap == NULL)
    return;
  g_autofree char *dir = g_dir_make_tmp ("vs-merge-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (dir, "t.jsonl", NULL);
  g_autofree char *side = g_build_filename (dir, "t.jsonl.addrs", NULL);
  g_autofree char *out = g_build_filename (dir, "o.jsonl", NULL);
  g_assert_true (g_file_set_contents (trace, "{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n"
                                      "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 4096, \"kind\": \"device\"}\n",
                                      -1, NULL));
  GError *error = NULL;
  g_assert_false (merge_tensor (snap, -1, trace, NULL, out, NULL, &error));
  g_assert_nonnull (strstr (error->message, "t.jsonl.addrs: cannot read vramcap's address sidecar"));
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (side, "vramcap-addrs 1 0\na 7 1000\n", -1, NULL));
  g_assert_false (merge_tensor (snap, -1, trace, NULL, out, NULL, &error));
  g_assert_nonnull (strstr (error->message, "line 2: event 7 is past the trace's 1 events"));
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (side, "hello\n", -1, NULL));
  g_assert_false (merge_tensor (snap, -1, trace, NULL, out, NULL, &error));
  g_assert_nonnull (strstr (error->message, "line 1: not a vramcap address sidecar"));
  g_clear_error (&error);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  /* the note: header says why, events unchanged */
  g_assert_true (merge_tensor_note (trace, "not a PyTorch program", out, &error));
  g_assert_no_error (error);
  g_autoptr (VsTraceReader) r = trace_open (out, &error);
  g_assert_no_error (error);
  const cJSON *x = trace_reader_header (r)->extra;
  g_assert_cmpstr (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (x, "allocations")), ==, "driver");
  g_assert_cmpstr (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (x, "tensor_note")), ==,
                   "not a PyTorch program");
  VsEvent ev;
  g_assert_true (trace_next (r, &ev, &error));
  g_assert_cmpuint (ev.bytes, ==, 4096);
  g_assert_false (trace_next (r, &ev, &error));
  g_assert_no_error (error);
  g_unlink (trace);
  g_unlink (side);
  g_unlink (out);
  g_rmdir (dir);
}

/* The segment tree both the rewind (import-snapshot.c) and the join of
 * parts (snapshot-parts.c) use, by hand: segments [0, 6), [6, 16) and
 * [32, 48). The last segment starting at or before 5 is the one at 0 (a
 * lookup keyed on addr + 1 with a strict upper bound took the one at 6). */
static void
test_seg_tree (void)
{
  g_autoptr (GTree) t = snapshot_seg_tree_new ();
  snapshot_seg_tree_put (t, &(VsSnapSegment) { .addr = 6, .size = 10 });
  snapshot_seg_tree_put (t, &(VsSnapSegment) { .addr = 0, .size = 6 });
  snapshot_seg_tree_put (t, &(VsSnapSegment) { .addr = 32, .size = 16 });
  GTreeNode *n = snapshot_seg_tree_at_or_before (t, 5);
  g_assert_nonnull (n);
  g_assert_cmpuint (((VsSnapSegment *) g_tree_node_value (n))->addr, ==, 0);
  n = snapshot_seg_tree_at_or_before (t, 6);
  g_assert_cmpuint (((VsSnapSegment *) g_tree_node_value (n))->addr, ==, 6);
  n = snapshot_seg_tree_at_or_before (t, G_MAXUINT64);
  g_assert_cmpuint (((VsSnapSegment *) g_tree_node_value (n))->addr, ==, 32);
  g_assert_null (snapshot_seg_tree_find (t, 16));   /* the gap [16, 32) */
  g_assert_null (snapshot_seg_tree_find (t, 48));
  g_assert_cmpuint (snapshot_seg_tree_find (t, 15)->addr, ==, 6);
  g_assert_cmpuint (snapshot_seg_tree_find (t, 47)->addr, ==, 32);
  snapshot_seg_tree_put (t, &(VsSnapSegment) { .addr = 6, .size = 4 });   /* replaces */
  g_assert_null (snapshot_seg_tree_find (t, 10));
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (VsSnapSegment));
  snapshot_seg_tree_collect (t, all);
  g_assert_cmpuint (all->len, ==, 3);
  g_assert_cmpuint (g_array_index (all, VsSnapSegment, 0).addr, ==, 0);
  g_assert_cmpuint (g_array_index (all, VsSnapSegment, 1).size, ==, 4);
  g_assert_cmpuint (g_array_index (all, VsSnapSegment, 2).addr, ==, 32);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* start segments (rewound), segment_alloc and segment_free in the window */
  static const Case cases[] = {
    { FIXTURE, TRUE, 0, 3, 0, FALSE },   /* gen-snapshot.py: 2, 20 and 30 MiB segments, none before */
    { "EoR_NN-snapshot.pickle", TRUE, 3, 7, 0, FALSE },
    { "medium_128_training_memory_snapshot.pickle", TRUE, 377, 0, 0, FALSE },
    { "select_n-snapshot.pickle", FALSE, 131, 584, 579, FALSE },
    { "ftcourse-memory_snapshot.pickle", FALSE, 63, 152, 0, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *base = g_path_get_basename (cases[i].file);
      g_autofree char *name = g_strdup_printf ("/merge-tensor/%s", base);
      g_test_add_data_func (name, &cases[i], test_file);
      g_autofree char *pname = g_strdup_printf ("/merge-tensor/parts/%s", base);
      g_test_add_data_func (pname, &cases[i], test_parts);
    }
  g_test_add_func ("/merge-tensor/seg-tree", test_seg_tree);
  g_test_add_func ("/merge-tensor/errors", test_errors);
  g_test_add_func ("/merge-tensor/expandable-start", test_expandable);
  return g_test_run ();
}
