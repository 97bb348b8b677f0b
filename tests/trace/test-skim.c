/* test-skim.c — trace_skim (sim/trace/trace-scan.c), the rest of a trace
 * read after replay --sample-steps stopped replaying: what it counts
 * after any number of events read (events, captured span, the reaches of
 * one mark) against a full read's events, from a binary file, an
 * in-memory buffer and JSONL; what it still refuses, with the message a
 * full read gives (truncation, the end record's count, data after it,
 * time going back, an undefined string, random corruptions); and the one
 * rule it does not hold, allocation ids (docs/trace-format.md,
 * "Skimming"), which a full read still refuses. */
#include <string.h>
#include <glib/gstdio.h>

#include "base/xxh64.h"
#include "trace/trace-priv.h"
#include "trace/trace-infer.h"
#include "trace-harness.h"

/* ---- the reference: what trace_skim counts, from decoded events ---- */

typedef struct {
  guint64 t, end;
  gboolean reach;
} Ev;

static Ev
ev_of (const VsEvent *ev, const char *mark, guint32 tid)
{
  guint64 end = ev->t + ev->host_ns;
  if ((ev->op == VS_OP_KERNEL || ev->op == VS_OP_COPY || ev->op == VS_OP_MEMSET) && ev->dur != VS_NONE)
    end = MAX (end, ev->t + ev->dur);
  gboolean reach = ev->op == VS_OP_MARK && ev->tid == tid && mark && strcmp (ev->name, mark) == 0;
  return (Ev) { ev->t, end, reach };
}

static VsTraceSkim
fold (const GArray *evs, guint from)
{
  VsTraceSkim k = { 0, G_MAXUINT64, 0, 0, 0 };
  for (guint i = from; i < evs->len; i++)
    {
      const Ev *e = &g_array_index (evs, Ev, i);
      k.events++;
      k.first_t = MIN (k.first_t, e->t);
      k.last_end = MAX (k.last_end, e->end);
      if (e->reach)
        k.reaches++, k.last_reach_t = e->t;
    }
  return k;
}

static void
assert_skim (const VsTraceSkim *a, const VsTraceSkim *b, const char *where, guint k)
{
  if (a->events != b->events || a->first_t != b->first_t || a->last_end != b->last_end || a->reaches != b->reaches
      || a->last_reach_t != b->last_reach_t)
    g_error ("%s after %u events: skim %" G_GUINT64_FORMAT " events, t %" G_GUINT64_FORMAT " .. %" G_GUINT64_FORMAT
             ", %" G_GUINT64_FORMAT " reaches (last %" G_GUINT64_FORMAT "); expected %" G_GUINT64_FORMAT
             ", %" G_GUINT64_FORMAT " .. %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT ")",
             where, k, a->events, a->first_t, a->last_end, a->reaches, a->last_reach_t, b->events, b->first_t,
             b->last_end, b->reaches, b->last_reach_t);
}

/* A version 4 skim: A's counts are B's; its span (the whole trace's,
 * WHOLE) is B's once joined with that of the events read before. */
static void
assert_skim_v4 (const VsTraceSkim *a, const VsTraceSkim *b, const VsTraceSkim *whole, const char *where, guint k)
{
  VsTraceSkim joined = *b;
  if (b->events > 0)
    {
      g_assert_cmpuint (a->first_t, ==, whole->first_t);
      g_assert_cmpuint (a->last_end, ==, whole->last_end);
      joined.first_t = a->first_t;
      joined.last_end = a->last_end;
    }
  else
    joined.first_t = a->first_t, joined.last_end = a->last_end;
  assert_skim (a, &joined, where, k);
}

/* The events of a full read of PATH, or NULL with its error's message in *MSG. */
static GArray *
full_read (const char *path, const char *mark, guint32 tid, char **msg)
{
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  if (r == NULL)
    {
      *msg = g_strdup (error->message);
      g_error_free (error);
      return NULL;
    }
  GArray *evs = g_array_new (FALSE, FALSE, sizeof (Ev));
  VsEvent ev;
  while (trace_next (r, &ev, &error))
    {
      Ev e = ev_of (&ev, mark, tid);
      g_array_append_val (evs, e);
    }
  if (error != NULL)
    {
      *msg = g_strdup (error->message);
      g_error_free (error);
      g_array_free (evs, TRUE);
      return NULL;
    }
  return evs;
}

/* Reads K events of R, then skims: TRUE with *OUT, or FALSE with the
 * message (of the first K's reading or of the skim) in *MSG. */
static gboolean
read_then_skim (VsTraceReader *r, guint k, const char *mark, guint32 tid, VsTraceSkim *out, char **msg)
{
  GError *error = NULL;
  VsEvent ev;
  for (guint i = 0; i < k; i++)
    if (!trace_next (r, &ev, &error))
      {
        *msg = error ? g_strdup (error->message) : g_strdup ("ended early");
        g_clear_error (&error);
        return FALSE;
      }
  if (!trace_skim (r, mark, tid, out, &error))
    {
      g_assert_nonnull (error);
      *msg = g_strdup (error->message);
      g_error_free (error);
      return FALSE;
    }
  g_assert_no_error (error);
  /* At the end: nothing more, no error. */
  g_assert_false (trace_next (r, &ev, &error));
  g_assert_no_error (error);
  return TRUE;
}

static gboolean
skim_path (const char *path, guint k, const char *mark, guint32 tid, VsTraceSkim *out, char **msg)
{
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  if (r == NULL)
    {
      *msg = g_strdup (error->message);
      g_error_free (error);
      return FALSE;
    }
  return read_then_skim (r, k, mark, tid, out, msg);
}

/* ---- a trace with everything the skim frames ---- */

/* JSONL of N rounds: allocs (tagged or not, stream-ordered or not, sizes
 * up to 2^62), kernels with lists from 0 to 40 ids (over 32: the careful
 * path), shapes, collectives with and without groups, copies and memsets
 * with and without dur, prefetches, syncs, event ops, empty_cache, frees,
 * threads 0, 1 and 64 to 66 (the map), the step mark on threads 0 and 1,
 * a range and other marks, and, from round N / 2 on, kernel names and
 * marks never seen before (string definitions late in the file). */
static char *
rich_trace (int n)
{
  GString *s = g_string_new ("{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n");
  guint64 t = 1000;
  GRand *rand = g_rand_new_with_seed (25);
  const char *kinds[] = { "device", "managed", "pinned" };
  for (int i = 0; i < n; i++)
    {
      guint64 id = (guint64) i + 1, big = G_GUINT64_CONSTANT (1) << (i % 63);
      guint tid = (guint) (i % 7 == 0 ? 64 + i % 3 : i % 2);
      t += (guint64) g_rand_int_range (rand, 0, 1 << (i % 20));
      g_autofree char *tids = tid ? g_strdup_printf (", \"tid\": %u", tid) : g_strdup ("");
      g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"alloc\", \"id\": %" G_GUINT64_FORMAT
                              ", \"bytes\": %" G_GUINT64_FORMAT ", \"kind\": \"%s\"%s%s%s}\n", t, id, big,
                              kinds[i % 3], i % 5 == 0 ? ", \"stream\": 0" : "", i % 4 == 0 ? ", \"tag\": \"act\"" : "",
                              tids);
      guint nr = (guint) (i % 41), nw = (guint) (i % 3), nt = (guint) (i % 37 == 0 ? 35 : i % 2);
      g_autofree char *kname = i >= n / 2 && i % 3 == 0 ? g_strdup_printf ("late_k%d", i) : g_strdup_printf ("k%d", i % 5);
      g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"kernel\", \"name\": \"%s\", "
                              "\"stream\": %d, \"dur\": %" G_GUINT64_FORMAT, t, kname, i % 4,
                              i % 10 == 0 ? big : (guint64) (i * 37 % 100000));
      if (i % 3 == 0)
        g_string_append_printf (s, ", \"bytes\": %" G_GUINT64_FORMAT, big - 1);
      if (i % 6 == 0)
        g_string_append_printf (s, ", \"compute_ns\": %d", i);
      append_access_lists (s, nr, nw, nt, id);
      if (i % 8 == 0)
        g_string_append (s, ", \"flops\": 1000, \"precision\": \"bf16\", \"grid\": [4, 2, 1], \"block\": [128, 1, 1], "
                            "\"regs\": 32");
      if (i % 12 == 0)
        g_string_append_printf (s, ", \"collective\": {\"kind\": \"all_reduce\", \"bytes\": %d, \"ranks\": 4%s}",
                                i, i % 24 == 0 ? ", \"group\": {\"id\": 7, \"role\": \"dp\"}" : "");
      g_string_append_printf (s, "%s}\n", tids);
      if (i % 9 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"copy\", \"dir\": \"h2d\", \"src\": %"
                                G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT ", \"async\": true%s%s}\n", t, id,
                                big, i % 2 ? ", \"dur\": 123456789" : "", tids);
      if (i % 11 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"memset\", \"dst\": %" G_GUINT64_FORMAT
                                ", \"bytes\": 1, \"stream\": 9223372036854775807%s%s}\n", t, id,
                                i % 2 ? "" : ", \"dur\": 7", tids);
      if (i % 13 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"prefetch\", \"id\": %" G_GUINT64_FORMAT
                                ", \"bytes\": 2, \"to\": \"host\", \"stream\": 1%s}\n", t, id, tids);
      if (i % 17 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"sync\", \"scope\": \"%s\"%s%s}\n", t,
                                i % 2 ? "stream" : "event", i % 2 ? ", \"stream\": 3" : ", \"event\": 4", tids);
      if (i % 19 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"event_record\", \"event\": %d, "
                                "\"stream\": 2%s}\n{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"stream_wait\", "
                                "\"stream\": 5, \"event\": %d%s}\n{\"t\": %" G_GUINT64_FORMAT ", \"op\": "
                                "\"empty_cache\"%s}\n", t, i, tids, t, i, tids, t, i % 2 ? ", \"stream\": 1" : "");
      /* The step mark every 20 rounds on thread 0 (and its name on
       * thread 1 too, which does not count), other marks, a long host call. */
      if (i % 20 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", \"name\": \"step\"}\n"
                                "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", \"name\": \"step\", \"tid\": 1}\n"
                                "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", \"name\": \"fwd\", \"host_ns\": %d}\n"
                                "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", \"name\": \"fwd/end\"}\n",
                                t, t, t, i * 1000, t);
      if (i >= n / 2 && i % 10 == 5)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", \"name\": \"late_m%d\"%s}\n",
                                t, i, tids);
      if (i % 2 == 1 && i > 30)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"free\", \"id\": %" G_GUINT64_FORMAT
                                "%s%s}\n", t, id - 25, i % 3 ? "" : ", \"stream\": 6", tids);
    }
  g_rand_free (rand);
  return g_string_free (s, FALSE);
}

/* The rich trace as JSONL, as version 3 (whose rest the skim frames)
 * and as version 4 (what convert writes: the rest from the end record). */
static char *rich_jsonl, *rich_bin, *rich_v4;

/* Version 4 file SRC as version 3 at DST: the same records, the end
 * record without its summary, checksum and offset. */
static void
to_v3 (const char *src, const char *dst)
{
  gsize len;
  g_autofree char *d = NULL;
  g_assert_true (g_file_get_contents (src, &d, &len, NULL));
  g_assert_cmpuint ((guint8) d[8], ==, 4);
  guint64 at;
  memcpy (&at, d + len - 12, 8);
  at = GUINT64_FROM_LE (at);
  g_assert_cmpuint ((guint8) d[at], ==, VS_BIN_END);
  gsize n = (gsize) at + 1;
  while ((guint8) d[n] & 0x80)
    n++;
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) d, (guint) n + 1);
  b->data[8] = 3;
  g_byte_array_append (b, (const guint8 *) "VEND", 4);
  g_assert_true (g_file_set_contents (dst, (const char *) b->data, b->len, NULL));
  g_byte_array_unref (b);
}

static void
make_rich (void)
{
  if (rich_bin != NULL)
    return;
  g_autofree char *text = rich_trace (4000);
  rich_jsonl = tmp_path ("rich.jsonl");
  g_assert_true (g_file_set_contents (rich_jsonl, text, -1, NULL));
  rich_v4 = tmp_path ("rich4.vtrace");
  convert (rich_jsonl, rich_v4);
  rich_bin = tmp_path ("rich.vtrace");
  to_v3 (rich_v4, rich_bin);
}

/* After any number of events, the skim counts what a full read gives for
 * the rest: binary file, in-memory buffer, JSONL, and the touch
 * inference's reader over a binary file (the generic path); with the step
 * mark on thread 0, on thread 1, and no mark. */
static void
test_skim_counts (void)
{
  make_rich ();
  char *msg = NULL;
  g_autoptr (GArray) evs = full_read (rich_bin, "step", 0, &msg);
  g_assert_null (msg);
  g_autoptr (GArray) evs1 = full_read (rich_bin, "step", 1, &msg);
  g_assert_null (msg);
  g_autoptr (GArray) evs_j = full_read (rich_jsonl, "step", 0, &msg);
  g_assert_null (msg);
  g_assert_cmpuint (evs->len, ==, evs_j->len);
  g_assert_cmpuint (evs->len, >, 12000);
  GError *error = NULL;
  g_autoptr (VsTraceBuf) buf = trace_buf_load (rich_bin, &error);
  g_assert_no_error (error);
  guint n = evs->len, tried = 0, whole_span = 0;
  VsTraceSkim whole = fold (evs, 0);
  for (guint k = 0; k <= n; k += k < 40 ? 1 : k > n - 40 ? 1 : 97)
    {
      VsTraceSkim want = fold (evs, k), want1 = fold (evs1, k), got;
      /* version 4: from the end record, after its checksum; its span is
       * the whole trace's, which with the events read gives the same */
      g_assert_true (skim_path (rich_v4, k, "step", 0, &got, &msg));
      assert_skim_v4 (&got, &want, &whole, "version 4", k);
      whole_span += want.events > 0 && want.first_t != whole.first_t;
      g_assert_true (skim_path (rich_v4, k, "step", 1, &got, &msg));
      assert_skim_v4 (&got, &want1, &whole, "version 4, thread 1", k);
      g_assert_true (skim_path (rich_v4, k, NULL, 0, &got, &msg));
      g_assert_cmpuint (got.reaches, ==, 0);
      g_assert_cmpuint (got.events, ==, n - k);
      /* binary file */
      g_assert_true (skim_path (rich_bin, k, "step", 0, &got, &msg));
      assert_skim (&got, &want, "binary", k);
      g_assert_true (skim_path (rich_bin, k, "step", 1, &got, &msg));
      assert_skim (&got, &want1, "binary, thread 1", k);
      /* in-memory buffer (its summary: blocks of 1024 events) */
      g_autoptr (VsTraceReader) br = trace_buf_reader (buf);
      g_assert_true (read_then_skim (br, k, "step", 0, &got, &msg));
      assert_skim (&got, &want, "buffer", k);
      g_autoptr (VsTraceReader) br1 = trace_buf_reader (buf);
      g_assert_true (read_then_skim (br1, k, "step", 1, &got, &msg));
      assert_skim (&got, &want1, "buffer, thread 1", k);
      /* JSONL */
      g_assert_true (skim_path (rich_jsonl, k, "step", 0, &got, &msg));
      assert_skim (&got, &want, "jsonl", k);
      /* no mark: no reaches */
      g_assert_true (skim_path (rich_bin, k, NULL, 0, &got, &msg));
      g_assert_cmpuint (got.reaches, ==, 0);
      g_assert_cmpuint (got.events, ==, n - k);
      tried++;
    }
  g_assert_cmpuint (tried, >, 200);
  /* Where the rest's earliest t is later than the trace's, version 4
   * gave the trace's: it answered from the end record, not by framing. */
  g_assert_cmpuint (whole_span, >, 100);
  /* The buffer's summary at and around its blocks' edges, and with no mark. */
  const guint edges[] = { 1023, 1024, 1025, 2047, 2048, 4096, 8191, 8192, 8193 };
  for (guint i = 0; i < G_N_ELEMENTS (edges); i++)
    {
      guint k = edges[i];
      g_assert_cmpuint (k, <, n);
      VsTraceSkim want = fold (evs, k), got;
      g_autoptr (VsTraceReader) br = trace_buf_reader (buf);
      g_assert_true (read_then_skim (br, k, "step", 0, &got, &msg));
      assert_skim (&got, &want, "buffer at an edge", k);
      g_autoptr (VsTraceReader) bn = trace_buf_reader (buf);
      g_assert_true (read_then_skim (bn, k, NULL, 0, &got, &msg));
      g_assert_cmpuint (got.reaches, ==, 0);
      g_assert_cmpuint (got.events, ==, n - k);
      g_assert_cmpuint (got.last_end, ==, want.last_end);
    }
  /* Marks on every event (each a reach, or on another thread, or another
   * name): the summary's list bisected at each edge counts each once. */
  GString *mk = g_string_new ("{\"vramsim_trace\": 1, \"capture_config\": \"a100-80g\"}\n");
  for (guint i = 0; i < 5000; i++)
    g_string_append_printf (mk, "{\"t\": %u, \"op\": \"mark\", \"name\": \"%s\", \"tid\": %u}\n", 10 * i,
                            i % 7 == 3 ? "other" : "step", i % 5 == 1 ? 1 : 0);
  g_autofree char *mk_jsonl = tmp_path ("marks.jsonl"), *mk_bin = tmp_path ("marks.vtrace");
  g_assert_true (g_file_set_contents (mk_jsonl, mk->str, -1, NULL));
  g_string_free (mk, TRUE);
  convert (mk_jsonl, mk_bin);
  g_autoptr (GArray) mevs = full_read (mk_bin, "step", 0, &msg);
  g_assert_null (msg);
  g_autoptr (VsTraceBuf) mbuf = trace_buf_load (mk_bin, &error);
  g_assert_no_error (error);
  for (guint e = 1024, k = e - 2; e <= 4096; k = k + 1 > e + 2 ? (e += 1024) - 2 : k + 1)
    {
      VsTraceSkim want = fold (mevs, k), got;
      g_autoptr (VsTraceReader) br = trace_buf_reader (mbuf);
      g_assert_true (read_then_skim (br, k, "step", 0, &got, &msg));
      assert_skim (&got, &want, "marks buffer", k);
    }
  /* The inference's reader (not a binary reader: read on with trace_next). */
  g_autoptr (VsTraceReader) r = trace_open (rich_bin, &error);
  g_assert_no_error (error);
  g_autoptr (VsInfer) in = infer_new (r, VS_INFER_AUTO);
  VsTraceSkim got;
  g_assert_true (read_then_skim (infer_reader (in), 100, "step", 0, &got, &msg));
  VsTraceSkim want = fold (evs, 100);
  assert_skim (&got, &want, "inference reader", 100);
}

/* Cut anywhere in the second half (after the first 3,000 events), the trace fails in the skim
 * with the message a full read gives (naming the file, the event and
 * the truncation). */
/* Cuts every FINE bytes in the last 1,500, every COARSE before (to the
 * middle); at least MIN_CUTS. */
static void
truncated (const char *path, gsize fine, gsize coarse, int min_cuts)
{
  gsize len;
  g_autofree char *data = NULL;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_autofree char *cut = tmp_path ("cut.vtrace");
  int n = 0;
  for (gsize at = len - 1; at > len / 2; at -= at > len - 1500 ? fine : coarse)
    {
      g_assert_true (g_file_set_contents (cut, data, (gssize) at, NULL));
      char *full = NULL, *skim = NULL;
      VsTraceSkim got;
      g_autoptr (GArray) evs = full_read (cut, "step", 0, &full);
      g_assert_null (evs);
      if (skim_path (cut, 3000, "step", 0, &got, &skim))
        g_error ("cut at %zu bytes: the skim read it as complete", at);
      if (!g_str_has_prefix (skim, cut) || strcmp (full, skim) != 0)
        g_error ("cut at %zu bytes: full read \"%s\", skim \"%s\"", at, full, skim);
      g_assert_nonnull (strstr (skim, "truncated"));
      g_free (full);
      g_free (skim);
      n++;
    }
  g_assert_cmpint (n, >, min_cuts);
}

/* Version 4 too: cut, its last bytes are not an end record's, and the
 * skim frames the rest as for version 3. */
static void
test_skim_truncated (void)
{
  make_rich ();
  truncated (rich_bin, 1, 503, 1500);
  truncated (rich_v4, 3, 5003, 500);   /* its last 1,500 bytes: the end record */

}

/* DATA: ORIG (LEN bytes) with one to three bytes from FROM on replaced
 * or with a bit flipped. */
static void
mutate (char *data, const char *orig, gsize len, gsize from, GRand *rand)
{
  memcpy (data, orig, len);
  int n = g_rand_int_range (rand, 1, 4);
  for (int k = 0; k < n; k++)
    {
      gsize at = (gsize) g_rand_int_range (rand, (gint32) from, (gint32) len);
      data[at] = (char) (g_rand_boolean (rand) ? g_rand_int_range (rand, 0, 256) : (guint8) data[at] ^ 1);
    }
}

/* Random corruptions of the second half: when a full read takes the
 * trace, so does the skim, with the same counts; when a full read refuses
 * it for anything but an allocation id, the skim refuses it with the same
 * message. */
static void
test_skim_mutations (void)
{
  make_rich ();
  gsize len;
  g_autofree char *orig = NULL;
  g_assert_true (g_file_get_contents (rich_bin, &orig, &len, NULL));
  g_autofree char *data = g_malloc (len);
  g_autofree char *p = tmp_path ("mut.vtrace");
  GRand *rand = g_rand_new_with_seed (7);
  int same_error = 0, ids = 0, good = 0;
  for (int round = 0; round < 400; round++)
    {
      mutate (data, orig, len, len * 6 / 10, rand);
      g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
      char *full = NULL, *skim = NULL;
      VsTraceSkim got;
      g_autoptr (GArray) evs = full_read (p, "step", 0, &full);
      gboolean ok = skim_path (p, 3000, "step", 0, &got, &skim);
      if (evs != NULL)
        {
          if (!ok)
            g_error ("round %d: a full read takes it, the skim says \"%s\"", round, skim);
          VsTraceSkim want = fold (evs, 3000);
          assert_skim (&got, &want, "mutation", 3000);
          good++;
        }
      else if (strstr (full, "live") != NULL)
        ids++;   /* the skim does not hold the ids: it may take it */
      else if (ok || strcmp (full, skim) != 0)
        g_error ("round %d: full read \"%s\", skim \"%s\"", round, full, ok ? "(took it)" : skim);
      else
        same_error++;
      g_free (full);
      g_free (skim);
    }
  g_rand_free (rand);
  g_test_message ("%d taken, %d refused alike, %d id errors", good, same_error, ids);
  g_assert_cmpint (same_error, >, 100);
}

/* ---- version 4: the end record's summary and checksum ---- */

/* The offset of version 4 file D's first record, and of its end record's
 * first_t (past 0xFE and the count). */
static gsize
rec_start (const char *d)
{
  guint32 hl;
  memcpy (&hl, d + 12, 4);
  return 16 + GUINT32_FROM_LE (hl);
}

static gsize
first_t_at (const char *d, gsize len)
{
  guint64 at;
  memcpy (&at, d + len - 12, 8);
  gsize i = (gsize) GUINT64_FROM_LE (at) + 1;
  while ((guint8) d[i] & 0x80)
    i++;
  return i + 1;
}

/* D's checksum made again over what it holds now. */
static void
reseal (char *d, gsize len)
{
  gsize from = rec_start (d);
  guint64 h = GUINT64_TO_LE (vs_xxh64 (d + from, len - 20 - from, 0));
  memcpy (d + len - 20, &h, 8);
}

/* The full read's message for D (NULL: it takes it), with CHECK_SUM the
 * checksum too (as vramsim info reads). */
static char *
full_message (const char *path, gboolean check_sum)
{
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  g_assert_no_error (error);
  if (check_sum)
    trace_reader_check_sum (r);
  VsEvent ev;
  while (trace_next (r, &ev, &error))
    ;
  char *msg = error ? g_strdup (error->message) : NULL;
  g_clear_error (&error);
  return msg;
}

/* Any change to a version 4 file's second half is refused by the skim:
 * by its checksum, or (the last bytes no end record's) by the framing,
 * with the full read's message. A summary that disagrees with the events
 * under a good checksum (a writer's error, not corruption) is refused by
 * a full read, naming the field. A bad checksum alone: a full read takes
 * the file, a read that checks the checksum (info) refuses it. */
static void
test_skim_summary (void)
{
  make_rich ();
  gsize len;
  g_autofree char *orig = NULL;
  g_assert_true (g_file_get_contents (rich_v4, &orig, &len, NULL));
  /* The skim hashes the records in blocks of 64 KiB (bin_skim_summary):
   * this file spans several, so the blocks' joins are under test. */
  g_assert_cmpuint (len, >, 4 * 65536);
  g_autofree char *data = g_malloc (len);
  g_autofree char *p = tmp_path ("sum.vtrace");
  /* As written: all agree. */
  g_assert_null (full_message (rich_v4, TRUE));
  GRand *rand = g_rand_new_with_seed (11);
  int by_sum = 0, framed = 0;
  for (int round = 0; round < 150; round++)
    {
      mutate (data, orig, len, len / 2, rand);
      if (memcmp (data, orig, len) == 0)
        continue;
      g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
      char *skim = NULL;
      VsTraceSkim got;
      if (skim_path (p, 3000, "step", 0, &got, &skim))
        g_error ("round %d: the skim took a changed file", round);
      if (strstr (skim, "checksum") != NULL)
        by_sum++;
      else
        {
          g_autofree char *full = full_message (p, FALSE);
          if (full != NULL && strstr (full, "live") != NULL)
            framed++;   /* an id error first, which the framing does not see */
          else if (full == NULL || strcmp (full, skim) != 0)
            g_error ("round %d: full read \"%s\", skim \"%s\"", round, full ? full : "(took it)", skim);
          else
            framed++;
        }
      g_free (skim);
    }
  g_rand_free (rand);
  g_test_message ("%d refused by the checksum, %d framed", by_sum, framed);
  g_assert_cmpint (by_sum, >, 120);

  /* first_t one later, resealed: the full read names it; the skim
   * trusts a checksum that holds (docs/trace-format.md). */
  memcpy (data, orig, len);
  gsize ft = first_t_at (data, len);
  g_assert_cmpuint ((guint8) data[ft] & 0x7f, <, 0x7f);
  data[ft]++;
  reseal (data, len);
  g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
  g_autofree char *m1 = full_message (p, TRUE);
  g_assert_nonnull (m1);
  g_assert_nonnull (strstr (m1, "the end record's summary gives first_t"));
  char *skim = NULL;
  VsTraceSkim got;
  g_assert_true (skim_path (p, 3000, "step", 0, &got, &skim));
  /* The checksum alone changed: only the read that checks it refuses. */
  memcpy (data, orig, len);
  data[len - 20] ^= 0x40;
  g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
  g_assert_null (full_message (p, FALSE));
  g_autofree char *m2 = full_message (p, TRUE);
  g_assert_nonnull (m2);
  g_assert_nonnull (strstr (m2, "the checksum of the records is"));
  g_assert_false (skim_path (p, 3000, "step", 0, &got, &skim));
  g_assert_nonnull (strstr (skim, "the checksum of the records is"));
  g_free (skim);
  /* The end offset one off: the skim cannot use it, and frames; both
   * give the full read's message. */
  memcpy (data, orig, len);
  data[len - 12] ^= 1;
  g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
  g_autofree char *m3 = full_message (p, FALSE);
  g_assert_nonnull (m3);
  g_assert_nonnull (strstr (m3, "the end record gives its offset as"));
  g_assert_false (skim_path (p, 3000, "step", 0, &got, &skim));
  g_assert_cmpstr (skim, ==, m3);
  g_free (skim);
  /* A mark's count one more, resealed: named. */
  memcpy (data, orig, len);
  gsize i = ft;
  while ((guint8) data[i] & 0x80)
    i++;
  i++;
  while ((guint8) data[i] & 0x80)   /* last_end */
    i++;
  i++;
  g_assert_cmpuint ((guint8) data[i], >, 0);   /* n_marks */
  while ((guint8) data[i] & 0x80)
    i++;
  i++;
  i++;                                         /* tid 0 */
  guint nl = (guint8) data[i++];               /* name length (below 128) */
  i += nl;
  g_assert_cmpuint ((guint8) data[i] & 0x7f, <, 0x7f);
  data[i]++;
  reseal (data, len);
  g_assert_true (g_file_set_contents (p, data, (gssize) len, NULL));
  g_autofree char *m4 = full_message (p, FALSE);
  g_assert_nonnull (m4);
  if (strstr (m4, "the end record's summary gives") == NULL)
    g_error ("%s", m4);
  g_assert_nonnull (strstr (m4, "marks \""));

  /* An end record larger than the reader's buffer (30,000 mark names,
   * about 600 KB): read across refills, its checksum holds for a read
   * that checks it (info) and for the skim. */
  GString *big = g_string_new ("{\"vramsim_trace\": 1}\n");
  for (guint j = 0; j < 30000; j++)
    g_string_append_printf (big, "{\"t\": %u, \"op\": \"mark\", \"name\": \"a-long-mark-name-%05u\"}\n", j, j);
  g_autofree char *big_jsonl = tmp_path ("bigend.jsonl"), *big_bin = tmp_path ("bigend.vtrace");
  g_assert_true (g_file_set_contents (big_jsonl, big->str, -1, NULL));
  g_string_free (big, TRUE);
  convert (big_jsonl, big_bin);
  g_assert_null (full_message (big_bin, TRUE));
  char *bm = NULL;
  g_assert_true (skim_path (big_bin, 100, "a-long-mark-name-29999", 0, &got, &bm));
  g_assert_cmpuint (got.events, ==, 29900);
  g_assert_cmpuint (got.reaches, ==, 1);
  g_assert_cmpuint (got.last_reach_t, ==, 29999);
}

/* ---- hand-made traces: a valid body, one bad record after it ---- */

typedef struct {
  VsBinEnc e;
  GArray *evs;   /* Ev of every event, for the reference */
  guint64 t;
} Build;

static void
build_init (Build *b)
{
  bin_enc_init (&b->e, TRUE);
  b->evs = g_array_new (FALSE, FALSE, sizeof (Ev));
  b->t = 1000;
}

static void
build_event (Build *b, const VsEvent *ev)
{
  bin_enc_event (&b->e, ev);
  Ev x = ev_of (ev, "step", 0);
  g_array_append_val (b->evs, x);
}

/* N rounds of valid events on threads 0 and 70: allocs, kernels reading
 * them, marks, frees (ids from BASE). */
static void
build_body (Build *b, int n, guint64 base)
{
  for (int i = 0; i < n; i++)
    {
      guint64 id = base + (guint64) i;
      guint32 tid = i % 3 == 0 ? 70 : 0;
      VsEvent ev;
      event_init (&ev, VS_OP_ALLOC);
      ev.t = b->t += 100, ev.tid = tid, ev.id = id, ev.bytes = 1 << 20;
      build_event (b, &ev);
      event_init (&ev, VS_OP_KERNEL);
      guint64 ids[2] = { id, id };
      ev.t = b->t += 10, ev.tid = tid, ev.name = i % 2 ? "gemm" : "add", ev.dur = 5000, ev.host_ns = 3;
      ev.bytes = 12345678, ev.reads = ids, ev.n_reads = 2, ev.writes = ids, ev.n_writes = 1;
      build_event (b, &ev);
      if (i % 10 == 0)
        {
          event_init (&ev, VS_OP_MARK);
          ev.t = b->t, ev.name = "step";
          build_event (b, &ev);
        }
      event_init (&ev, VS_OP_FREE);
      ev.t = b->t += 1, ev.tid = tid, ev.id = id;
      build_event (b, &ev);
    }
}

/* Raw bytes of one record the encoder would not write (counted as an
 * event when EVENT). */
static void
build_raw (Build *b, const char *hex, gboolean event)
{
  for (const char *q = hex; *q; q++)
    {
      if (*q == ' ')
        continue;
      guint8 v = (guint8) (g_ascii_xdigit_value (q[0]) * 16 + g_ascii_xdigit_value (q[1]));
      if (b->e.out.len == b->e.out.cap)
        {
          b->e.out.cap = MAX (b->e.out.cap * 2, 4096);
          b->e.out.data = g_realloc (b->e.out.data, b->e.out.cap);
        }
      b->e.out.data[b->e.out.len++] = v;
      q++;
    }
  if (event)
    b->e.count++;
}

/* The file: header, the records, the end record (counting COUNT_DELTA
 * more or fewer), then TAIL bytes. */
static char *
build_finish (Build *b, const char *name, int count_delta, const char *tail)
{
  const char *hdr = "{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}";
  GByteArray *f = g_byte_array_new ();
  g_byte_array_append (f, (const guint8 *) VS_BIN_MAGIC, 8);
  /* Version 3: its rest is framed record by record, which these cases
   * test (a version 4 file's is taken from its end record). */
  guint32 v = GUINT32_TO_LE (3), hl = GUINT32_TO_LE ((guint32) strlen (hdr));
  g_byte_array_append (f, (const guint8 *) &v, 4);
  g_byte_array_append (f, (const guint8 *) &hl, 4);
  g_byte_array_append (f, (const guint8 *) hdr, (guint) strlen (hdr));
  g_byte_array_append (f, b->e.out.data, (guint) b->e.out.len);
  guint8 endrec[16] = { VS_BIN_END };
  guint n = 1;
  guint64 c = (guint64) ((gint64) b->e.count + count_delta);
  do
    {
      endrec[n++] = (guint8) ((c & 0x7f) | (c >= 0x80 ? 0x80 : 0));
      c >>= 7;
    }
  while (c > 0);
  g_byte_array_append (f, endrec, n);
  g_byte_array_append (f, (const guint8 *) "VEND", 4);
  if (tail)
    g_byte_array_append (f, (const guint8 *) tail, (guint) strlen (tail));
  char *path = tmp_path (name);
  g_assert_true (g_file_set_contents (path, (const char *) f->data, f->len, NULL));
  g_byte_array_unref (f);
  return path;
}

static void
build_clear (Build *b)
{
  bin_enc_clear (&b->e);
  g_array_free (b->evs, TRUE);
}

/* A full read and the skim (after the body's first 1,000 events) refuse
 * PATH with one message, containing WHAT. */
static void
expect_both_refuse (const char *path, const char *what)
{
  char *full = NULL, *skim = NULL;
  VsTraceSkim got;
  g_autoptr (GArray) evs = full_read (path, "step", 0, &full);
  g_assert_null (evs);
  g_assert_false (skim_path (path, 1000, "step", 0, &got, &skim));
  if (strcmp (full, skim) != 0 || strstr (skim, what) == NULL || !g_str_has_prefix (skim, path))
    g_error ("full read \"%s\", skim \"%s\" (expected \"%s\")", full, skim, what);
  g_free (full);
  g_free (skim);
}

/* What the skim still refuses: the end record's count, bytes after the
 * end, time going back on a small and a large thread id, an undefined
 * string, an unknown record, an alloc of id 0, an out-of-range field. */
static void
test_skim_refuses (void)
{
  struct {
    const char *name, *raw, *what;
    int delta;
    const char *tail;
  } cases[] = {
    { "count.vtrace", NULL, "the end record counts 1861 events but the file holds 1860", 1, NULL },
    { "count2.vtrace", NULL, "the end record counts 1859 events but the file holds 1860", -1, NULL },
    { "after.vtrace", NULL, "data after the end record", 0, "x" },
    /* a mark on thread 0 1,000 ns back (dt -1000: zigzag 1999 = cf 0f) */
    { "back0.vtrace", "09 cf 0f 00 00 00", "is earlier than the previous event of thread 0", 0, NULL },
    /* a mark on thread 70 far back (dt -100: zigzag 199 = c7 01) */
    { "back70.vtrace", "09 c7 01 46 00 00", "is earlier than the previous event of thread 70", 0, NULL },
    /* a mark naming string 9 (4 are defined) */
    { "sid.vtrace", "09 00 00 00 09", "string id 9 is not defined", 0, NULL },
    { "record.vtrace", "0c 00 00 00", "unknown record type 0x0c", 0, NULL },
    /* alloc of id 0 */
    { "id0.vtrace", "00 00 00 00 00 05 00 00 00", "an allocation id must be positive", 0, NULL },
    /* a kernel whose dur has 10 bytes */
    { "dur.vtrace", "04 00 00 00 00 00 ff ff ff ff ff ff ff ff ff 01 00 00 00 00 00", "field 'dur' is out of range", 0,
      NULL },
    /* alloc of kind 7 */
    { "kind.vtrace", "00 00 00 00 63 05 07 00 00", "unknown kind 7", 0, NULL },
    /* Kernels with a shape alone (extension flags 01; the skim frames
     * them itself): flops absent, then precision, grid, block, regs,
     * smem. A precision out of range; */
    { "prec.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 01 00 ff 04 01 01 80 01 01 01 20 00", "precision", 0, NULL },
    /* a grid partly zero; */
    { "grid0.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 01 00 00 04 00 01 80 01 01 01 20 00", "grid", 0, NULL },
    /* a block partly zero (its zero written in two bytes); */
    { "block0.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 01 00 00 04 01 01 80 01 80 00 01 20 00", "block", 0, NULL },
    /* a grid of 2^32 blocks (a five-byte varint); */
    { "grid32.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 01 00 00 80 80 80 80 10 01 01 80 01 01 01 20 00", "grid", 0,
      NULL },
    /* smem of 2^35; */
    { "smem.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 01 00 00 04 01 01 80 01 01 01 20 80 80 80 80 80 01", "smem", 0,
      NULL },
    /* unknown extension flags. */
    { "flags.vtrace", "14 00 00 00 00 00 05 00 00 00 00 00 08 00 00 04 01 01 80 01 01 01 20 00", "extension flags", 0,
      NULL },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      Build b;
      build_init (&b);
      build_body (&b, 400, 1);
      if (cases[c].raw)
        {
          /* One more valid event on thread 70 (the raw "back" record's reference point), then the raw one. */
          VsEvent ev;
          event_init (&ev, VS_OP_MARK);
          ev.t = b.t += 50, ev.tid = 70, ev.name = "step";
          build_event (&b, &ev);
          build_raw (&b, cases[c].raw, TRUE);
        }
      build_body (&b, 200, 100000);
      g_autofree char *path = build_finish (&b, cases[c].name, cases[c].delta, cases[c].tail);
      expect_both_refuse (path, cases[c].what);
      build_clear (&b);
    }
}

/* What the skim does not hold (docs/trace-format.md, "Skimming"): after
 * the stop, a free of an id never allocated, a kernel reading a freed
 * id, an alloc of a live id, a copy and a prefetch of unknown ids. A full
 * read refuses each, naming the event; the skim counts the trace as it
 * is. */
static void
test_skim_ids (void)
{
  for (int c = 0; c < 5; c++)
    {
      Build b;
      build_init (&b);
      build_body (&b, 400, 1);
      VsEvent ev;
      guint64 dead[1] = { 5 };
      switch (c)
        {
        case 0:
          event_init (&ev, VS_OP_FREE);
          ev.id = 999999;
          break;
        case 1:
          event_init (&ev, VS_OP_KERNEL);
          ev.name = "k", ev.dur = 1, ev.reads = dead, ev.n_reads = 1;
          break;
        case 2:
          /* id 777 allocated twice */
          event_init (&ev, VS_OP_ALLOC);
          ev.t = b.t += 1, ev.id = 777, ev.bytes = 1;
          build_event (&b, &ev);
          event_init (&ev, VS_OP_ALLOC);
          ev.id = 777, ev.bytes = 1;
          break;
        case 3:
          event_init (&ev, VS_OP_COPY);
          ev.dir = VS_DIR_D2H, ev.src = 31337, ev.bytes = 8, ev.dur = 99999;
          break;
        default:
          event_init (&ev, VS_OP_PREFETCH);
          ev.id = 4242, ev.bytes = 8, ev.to = VS_TO_HOST;
          break;
        }
      ev.t = b.t += 1;
      build_event (&b, &ev);
      build_body (&b, 200, 100000);
      g_autofree char *path = build_finish (&b, "ids.vtrace", 0, NULL);
      char *full = NULL, *skim = NULL;
      g_autoptr (GArray) evs = full_read (path, "step", 0, &full);
      g_assert_null (evs);
      g_assert_true (g_str_has_prefix (full, path));
      g_assert_true (strstr (full, "is not live") != NULL || strstr (full, "is already live") != NULL);
      VsTraceSkim got, want = fold (b.evs, 1000);
      if (!skim_path (path, 1000, "step", 0, &got, &skim))
        g_error ("case %d: the skim refused it: %s", c, skim);
      assert_skim (&got, &want, "ids", 1000);
      g_free (full);
      build_clear (&b);
    }
}

/* The captured end as the replay counts it, for each op after the stop:
 * t + host_ns, or t + dur for a kernel, a copy or a memset (when larger;
 * a copy's or memset's dur may be absent), one event of each ending
 * after everything else. */
static void
test_skim_ends (void)
{
  for (int op = 0; op < VS_OP_COUNT + 2; op++)
    for (int by_dur = 0; by_dur < 2; by_dur++)
      {
        Build b;
        build_init (&b);
        build_body (&b, 400, 1);
        VsEvent ev;
        guint64 live[1] = { 5000 };
        event_init (&ev, VS_OP_ALLOC);
        ev.t = b.t += 1, ev.id = 5000, ev.bytes = 64;
        build_event (&b, &ev);
        event_init (&ev, op >= VS_OP_COUNT ? VS_OP_COPY : (VsOp) op);
        ev.t = b.t += 1;
        ev.host_ns = 1u << 30;
        switch (ev.op)
          {
          case VS_OP_ALLOC:
            ev.id = 5001, ev.bytes = 1;
            break;
          case VS_OP_FREE:
            ev.id = 5000;
            break;
          case VS_OP_COPY:
            ev.dir = VS_DIR_H2D, ev.dst = 5000, ev.bytes = 64, ev.async = op == VS_OP_COUNT;
            if (op == VS_OP_COUNT)
              ev.dur = (guint64) 1 << 40;   /* (op COUNT + 1: no dur) */
            break;
          case VS_OP_MEMSET:
            ev.dst = 5000, ev.bytes = 64, ev.dur = (guint64) 1 << 40;
            break;
          case VS_OP_KERNEL:
            ev.name = "long", ev.dur = (guint64) 1 << 40, ev.reads = live, ev.n_reads = 1;
            break;
          case VS_OP_SYNC:
            ev.scope = VS_SYNC_STREAM, ev.stream = 2;
            break;
          case VS_OP_PREFETCH:
            ev.id = 5000, ev.bytes = 64, ev.to = VS_TO_DEVICE;
            break;
          case VS_OP_MARK:
            ev.name = "step";
            break;
          default:
            break;
          }
        if (!by_dur && ev.dur != VS_NONE)
          ev.dur = 5;   /* the host call ends last */
        build_event (&b, &ev);
        build_body (&b, 200, 100000);
        g_autofree char *path = build_finish (&b, "ends.vtrace", 0, NULL);
        char *msg = NULL;
        g_autoptr (GArray) evs = full_read (path, "step", 0, &msg);
        g_assert_null (msg);
        VsTraceSkim got, want = fold (evs, 1000);
        g_assert_cmpuint (want.last_end, ==, ev.t + (by_dur && ev.dur != VS_NONE ? ev.dur : ev.host_ns));
        g_assert_true (skim_path (path, 1000, "step", 0, &got, &msg));
        assert_skim (&got, &want, event_op_name (ev.op), 1000);
        build_clear (&b);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  harness_tmpdir_make ("test-skim-XXXXXX");
  g_assert_nonnull (tmpdir);
  g_test_add_func ("/skim/counts", test_skim_counts);
  g_test_add_func ("/skim/truncated", test_skim_truncated);
  g_test_add_func ("/skim/mutations", test_skim_mutations);
  g_test_add_func ("/skim/summary", test_skim_summary);
  g_test_add_func ("/skim/refuses", test_skim_refuses);
  g_test_add_func ("/skim/ids", test_skim_ids);
  g_test_add_func ("/skim/ends", test_skim_ends);
  int rc = g_test_run ();
  harness_tmpdir_remove ();
  g_free (rich_jsonl);
  g_free (rich_bin);
  g_free (rich_v4);
  return rc;
}
