/* test-trace.c — trace readers, writers, validation and in-memory buffers.
 * Run `build/tests/trace/test-trace -m perf -p /trace/perf` for the throughput
 * figures quoted in docs/trace-format.md. */
#include <errno.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "trace/trace-priv.h"
#include "trace-harness.h"

static char *
write_file (const char *name, const void *data, gsize len)
{
  char *p = tmp_path (name);
  GError *error = NULL;
  g_file_set_contents (p, data, (gssize) len, &error);
  g_assert_no_error (error);
  return p;
}

static char *
read_file (const char *path, gsize *len)
{
  char *data = NULL;
  GError *error = NULL;
  g_file_get_contents (path, &data, len, &error);
  g_assert_no_error (error);
  return data;
}

/* Reads a whole trace; returns its events as JSONL lines, or NULL with *error. */
static char *
dump_reader (VsTraceReader *r, GError **error)
{
  GString *s = g_string_new (NULL);
  VsEvent ev;
  while (trace_next (r, &ev, error))
    {
      trace_json_append_event (s, &ev);
      g_string_append_c (s, '\n');
    }
  if (error && *error)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  return g_string_free (s, FALSE);
}

static char *
dump_path (const char *path, GError **error)
{
  g_autoptr (VsTraceReader) r = trace_open (path, error);
  if (r == NULL)
    return NULL;
  return dump_reader (r, error);
}

static void
assert_roundtrip (const char *jsonl)
{
  g_autofree char *bin = tmp_path ("rt.vtrace");
  g_autofree char *back = tmp_path ("rt.jsonl");
  convert (jsonl, bin);
  convert (bin, back);
  gsize n1, n2;
  g_autofree char *a = read_file (jsonl, &n1);
  g_autofree char *b = read_file (back, &n2);
  g_assert_cmpstr (a, ==, b);
  /* The binary reader and the JSONL reader agree event by event. */
  GError *error = NULL;
  g_autofree char *d1 = dump_path (jsonl, &error);
  g_assert_no_error (error);
  g_autofree char *d2 = dump_path (bin, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d1, ==, d2);
  /* So does an in-memory buffer. */
  g_autoptr (VsTraceBuf) buf = trace_buf_load (bin, &error);
  g_assert_no_error (error);
  g_autoptr (VsTraceReader) br = trace_buf_reader (buf);
  g_autofree char *d3 = dump_reader (br, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d1, ==, d3);
}

static void
test_roundtrip_samples (void)
{
  const char *samples[] = { "traces/hand-train-step.jsonl", "traces/hand-uvm-oversub.jsonl", "traces/hand-overlap.jsonl" };
  for (gsize i = 0; i < G_N_ELEMENTS (samples); i++)
    {
      g_autofree char *p = g_test_build_filename (G_TEST_DIST, "..", "..", samples[i], NULL);
      if (!g_file_test (p, G_FILE_TEST_EXISTS))
        {
          g_free (p);
          p = g_strdup (samples[i]);
        }
      g_assert_true (g_file_test (p, G_FILE_TEST_EXISTS));
      assert_roundtrip (p);
    }
}

/* Every op, every field, non-default values, odd strings. Canonical form. */
static const char all_fields[] =
  "{\"vramsim_trace\": 1, \"time_unit\": \"ns\", \"capture\": {\"device\": \"Test GPU\", \"config\": \"a100-80g\", "
  "\"tool\": \"test\", \"pid\": 42}, \"note\": [1, 2.5, null, true, {\"a\": \"b\"}]}\n"
  "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 1073741824, \"kind\": \"device\", \"tag\": \"params\"}\n"
  "{\"t\": 10, \"op\": \"alloc\", \"id\": 2, \"bytes\": 4096, \"kind\": \"pinned\", \"host_ns\": 7}\n"
  "{\"t\": 20, \"op\": \"alloc\", \"id\": 9223372036854775807, \"bytes\": 0, \"kind\": \"managed\", \"stream\": 0, "
  "\"tag\": \"kv \\\"cache\\\"\\n\\u0001\\\\ \xc3\xa9\xe2\x82\xac\", \"tid\": 4294967295}\n"
  "{\"t\": 30, \"op\": \"copy\", \"dir\": \"h2d\", \"src\": 2, \"dst\": 1, \"bytes\": 4096, \"stream\": 3, "
  "\"async\": true, \"dur\": 0}\n"
  "{\"t\": 31, \"op\": \"copy\", \"dir\": \"d2h\", \"src\": 1, \"bytes\": 5}\n"
  "{\"t\": 32, \"op\": \"copy\", \"dir\": \"d2d\", \"src\": 1, \"dst\": 1, \"bytes\": 6, \"dur\": 9}\n"
  "{\"t\": 33, \"op\": \"copy\", \"dir\": \"p2p\", \"dst\": 2, \"bytes\": 7, \"stream\": 1}\n"
  "{\"t\": 40, \"op\": \"memset\", \"dst\": 1, \"bytes\": 100, \"stream\": 2, \"async\": true, \"dur\": 3}\n"
  "{\"t\": 41, \"op\": \"memset\", \"dst\": 1, \"bytes\": 100}\n"
  "{\"t\": 50, \"op\": \"kernel\", \"name\": \"void gemm<float, 128>(float const*, int)\", \"stream\": 7, "
  "\"dur\": 1000, \"bytes\": 0, \"compute_ns\": 900, \"reads\": [1, 2], \"writes\": [1], \"touches\": [9223372036854775807]}\n"
  "{\"t\": 51, \"op\": \"kernel\", \"name\": \"\", \"dur\": 0}\n"
  "{\"t\": 52, \"op\": \"kernel\", \"name\": \"void gemm<float, 128>(float const*, int)\", \"dur\": 5, \"touches\": [2]}\n"
  "{\"t\": 60, \"op\": \"sync\", \"scope\": \"device\"}\n"
  "{\"t\": 61, \"op\": \"sync\", \"scope\": \"stream\", \"stream\": 0}\n"
  "{\"t\": 62, \"op\": \"sync\", \"scope\": \"event\", \"event\": 0, \"host_ns\": 1000000}\n"
  "{\"t\": 63, \"op\": \"event_record\", \"event\": 5, \"stream\": 3}\n"
  "{\"t\": 64, \"op\": \"event_record\", \"event\": 6}\n"
  "{\"t\": 65, \"op\": \"stream_wait\", \"stream\": 7, \"event\": 5}\n"
  "{\"t\": 66, \"op\": \"stream_wait\", \"event\": 6}\n"
  "{\"t\": 70, \"op\": \"prefetch\", \"id\": 9223372036854775807, \"bytes\": 0, \"to\": \"host\", \"stream\": 2}\n"
  "{\"t\": 71, \"op\": \"prefetch\", \"id\": 1, \"bytes\": 65536, \"to\": \"device\"}\n"
  "{\"t\": 5, \"op\": \"mark\", \"name\": \"step\", \"tid\": 3}\n"
  "{\"t\": 80, \"op\": \"mark\", \"name\": \"step\"}\n"
  "{\"t\": 90, \"op\": \"free\", \"id\": 9223372036854775807, \"stream\": 2, \"tid\": 4294967295}\n"
  "{\"t\": 91, \"op\": \"free\", \"id\": 2}\n"
  "{\"t\": 92, \"op\": \"alloc\", \"id\": 2, \"bytes\": 8, \"kind\": \"device\"}\n"
  "{\"t\": 9223372036854775807, \"op\": \"free\", \"id\": 2, \"host_ns\": 9223372036854775807}\n"
  "{\"t\": 0, \"op\": \"free\", \"id\": 1, \"tid\": 1}\n";

static void
test_roundtrip_all_fields (void)
{
  g_autofree char *p = write_file ("all.jsonl", all_fields, strlen (all_fields));
  assert_roundtrip (p);
  /* trace_event_to_json_line gives the same lines. */
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (p, &error);
  g_assert_no_error (error);
  g_autofree char *hdr = trace_header_to_line (trace_reader_header (r));
  g_assert_true (g_str_has_prefix (all_fields, hdr));
  const char *line = strchr (all_fields, '\n') + 1;
  VsEvent ev;
  guint64 n = 0;
  while (trace_next (r, &ev, &error))
    {
      g_autofree char *s = trace_event_to_json_line (&ev);
      g_assert_true (strncmp (line, s, strlen (s)) == 0 && line[strlen (s)] == '\n');
      g_assert_cmpuint (ev.index, ==, n);
      line += strlen (s) + 1;
      n++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 28);
  g_assert_cmpuint (trace_reader_count (r), ==, 28);
  const VsTraceHeader *h = trace_reader_header (r);
  g_assert_cmpstr (h->device, ==, "Test GPU");
  g_assert_cmpstr (h->config, ==, "a100-80g");
  g_assert_cmpstr (h->tool, ==, "test");
  g_assert_cmpstr (h->time_unit, ==, "ns");
}

/* The SPEC 3 kernel shape and collective, empty_cache and the header's
 * allocations, in canonical form: every field, absent parts, limits. */
static const char kernel_fields[] =
  "{\"vramsim_trace\": 1, \"time_unit\": \"ns\", \"capture\": {\"config\": \"h100-sxm\"}, \"allocations\": \"tensor\", "
  "\"allocator_settings\": {\"expandable_segments\": true, \"max_split_size\": 268435456}}\n"
  "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 1073741824, \"kind\": \"device\"}\n"
  "{\"t\": 10, \"op\": \"kernel\", \"name\": \"gemm\", \"stream\": 1, \"dur\": 1000, \"reads\": [1], \"flops\": 68719476736, "
  "\"precision\": \"bf16\", \"grid\": [132, 2, 1], \"block\": [256, 1, 1], \"regs\": 168, \"smem\": 232448}\n"
  "{\"t\": 20, \"op\": \"kernel\", \"name\": \"nccl\", \"dur\": 5000, \"writes\": [1], "
  "\"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1073741824, \"ranks\": 8}}\n"
  "{\"t\": 21, \"op\": \"kernel\", \"name\": \"nccl\", \"dur\": 5000, "
  "\"collective\": {\"kind\": \"all_gather\", \"bytes\": 4096, \"ranks\": 8, \"group\": {\"id\": 9007199254740991, "
  "\"role\": \"cp\"}}}\n"
  "{\"t\": 22, \"op\": \"kernel\", \"name\": \"nccl\", \"dur\": 5000, "
  "\"collective\": {\"kind\": \"send\", \"bytes\": 1, \"ranks\": 2, \"group\": {\"id\": 1}}}\n"
  "{\"t\": 30, \"op\": \"kernel\", \"name\": \"gemm\", \"dur\": 7, \"flops\": 0, \"collective\": {\"kind\": \"recv\", "
  "\"bytes\": 9223372036854775807, \"ranks\": 4294967295}}\n"
  "{\"t\": 40, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 7, \"precision\": \"int8\"}\n"
  "{\"t\": 41, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 7, \"grid\": [4294967295, 65535, 65535], \"smem\": 4294967295}\n"
  "{\"t\": 42, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 7, \"flops\": 9223372036854775807, \"regs\": 1}\n"
  "{\"t\": 50, \"op\": \"empty_cache\"}\n"
  "{\"t\": 51, \"op\": \"empty_cache\", \"stream\": 0}\n"
  "{\"t\": 52, \"op\": \"empty_cache\", \"stream\": 7, \"tid\": 2}\n"
  "{\"t\": 60, \"op\": \"free\", \"id\": 1}\n";

static void
test_roundtrip_kernel_fields (void)
{
  g_autofree char *p = write_file ("kf.jsonl", kernel_fields, strlen (kernel_fields));
  assert_roundtrip (p);
  g_autofree char *bin = tmp_path ("kf.vtrace");
  convert (p, bin);
  /* The values, from each reader: JSONL, binary, in-memory buffer. */
  GError *error = NULL;
  g_autoptr (VsTraceBuf) buf = trace_buf_load (bin, &error);
  g_assert_no_error (error);
  for (int which = 0; which < 3; which++)
    {
      g_autoptr (VsTraceReader) r = which == 2 ? trace_buf_reader (buf) : trace_open (which ? bin : p, &error);
      g_assert_no_error (error);
      const VsTraceHeader *h = trace_reader_header (r);
      g_assert_cmpint (trace_header_allocations (h), ==, VS_ALLOCS_TENSOR);
      const cJSON *set = trace_header_allocator_settings (h);
      g_assert_nonnull (set);
      g_assert_true (cJSON_IsTrue (cJSON_GetObjectItem (set, "expandable_segments")));
      VsEvent ev;
      g_assert_true (trace_next (r, &ev, &error)); /* alloc */
      g_assert_null (ev.shape);
      g_assert_null (ev.collective);
      g_assert_true (trace_next (r, &ev, &error)); /* gemm */
      g_assert_nonnull (ev.shape);
      g_assert_null (ev.collective);
      g_assert_cmpuint (ev.shape->flops, ==, G_GUINT64_CONSTANT (1) << 36);
      g_assert_cmpuint (ev.shape->precision, ==, VS_PREC_BF16);
      g_assert_cmpuint (ev.shape->grid[0], ==, 132);
      g_assert_cmpuint (ev.shape->grid[1], ==, 2);
      g_assert_cmpuint (ev.shape->grid[2], ==, 1);
      g_assert_cmpuint (ev.shape->block[0], ==, 256);
      g_assert_cmpuint (ev.shape->regs, ==, 168);
      g_assert_cmpuint (ev.shape->smem, ==, 232448);
      g_assert_cmpuint (ev.n_reads, ==, 1);
      g_assert_true (trace_next (r, &ev, &error)); /* nccl */
      g_assert_null (ev.shape);
      g_assert_nonnull (ev.collective);
      g_assert_cmpuint (ev.collective->kind, ==, VS_COLL_ALL_REDUCE);
      g_assert_cmpuint (ev.collective->bytes, ==, G_GUINT64_CONSTANT (1) << 30);
      g_assert_cmpuint (ev.collective->ranks, ==, 8);
      g_assert_cmpuint (ev.collective->group, ==, 0);
      g_assert_cmpuint (ev.collective->role, ==, VS_ROLE_NONE);
      g_assert_true (trace_next (r, &ev, &error)); /* a group with a role */
      g_assert_cmpuint (ev.collective->kind, ==, VS_COLL_ALL_GATHER);
      g_assert_cmpuint (ev.collective->group, ==, (G_GUINT64_CONSTANT (1) << 53) - 1);
      g_assert_cmpuint (ev.collective->role, ==, VS_ROLE_CP);
      g_assert_true (trace_next (r, &ev, &error)); /* a group without */
      g_assert_cmpuint (ev.collective->group, ==, 1);
      g_assert_cmpuint (ev.collective->role, ==, VS_ROLE_NONE);
      g_assert_true (trace_next (r, &ev, &error)); /* both */
      g_assert_nonnull (ev.shape);
      g_assert_cmpuint (ev.shape->flops, ==, 0);
      g_assert_cmpuint (ev.shape->precision, ==, VS_PREC_NONE);
      g_assert_cmpuint (ev.shape->grid[0] | ev.shape->block[0], ==, 0);
      g_assert_cmpuint (ev.collective->kind, ==, VS_COLL_RECV);
      g_assert_true (trace_next (r, &ev, &error)); /* int8 only */
      g_assert_cmpuint (ev.shape->flops, ==, VS_NONE);
      g_assert_cmpuint (ev.shape->precision, ==, VS_PREC_INT8);
      for (int i = 0; i < 3; i++)
        g_assert_true (trace_next (r, &ev, &error));
      g_assert_cmpuint (ev.op, ==, VS_OP_EMPTY_CACHE);
      g_assert_false (ev.has_stream);
      g_assert_true (trace_next (r, &ev, &error));
      g_assert_true (ev.has_stream);
      g_assert_cmpuint (ev.stream, ==, 0);
      g_assert_true (trace_next (r, &ev, &error));
      g_assert_cmpuint (ev.stream, ==, 7);
      g_assert_cmpuint (ev.tid, ==, 2);
      g_assert_true (trace_next (r, &ev, &error)); /* free */
      g_assert_null (ev.shape);
      g_assert_false (trace_next (r, &ev, &error));
      g_assert_no_error (error);
    }
  /* Lenient input: a fractional flops count is rounded, shape fields in any
   * order, unknown keys in a collective ignored, smem 0 is absent. */
  const char *lenient =
    "{\"vramsim_trace\": 1, \"allocations\": \"driver\"}\n"
    "{\"collective\": {\"ranks\": 2, \"x\": [1, {}], \"bytes\": 1e3, \"kind\": \"send\"}, \"flops\": 2.5e0, "
    "\"block\": [ 32 , 1.0 , 1 ], \"smem\": 0, \"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1}\n"
    "{\"t\": 1, \"op\": \"mark\", \"name\": \"m\", \"flops\": -1, \"grid\": \"ignored: not a kernel\"}\n";
  g_autofree char *lp = write_file ("kf-lenient.jsonl", lenient, strlen (lenient));
  g_autofree char *d = dump_path (lp, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d, ==,
                   "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"flops\": 3, \"block\": [32, 1, 1], "
                   "\"collective\": {\"kind\": \"send\", \"bytes\": 1000, \"ranks\": 2}}\n"
                   "{\"t\": 1, \"op\": \"mark\", \"name\": \"m\"}\n");
  g_autoptr (VsTraceReader) lr = trace_open (lp, &error);
  g_assert_cmpint (trace_header_allocations (trace_reader_header (lr)), ==, VS_ALLOCS_DRIVER);
  g_assert_null (trace_header_allocator_settings (trace_reader_header (lr)));
  g_autofree char *line = trace_header_to_line (trace_reader_header (lr));
  g_assert_cmpstr (line, ==, "{\"vramsim_trace\": 1, \"time_unit\": \"ns\", \"allocations\": \"driver\"}");
  /* Set through the accessors, a header writes them after capture. */
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
  cJSON *set = cJSON_CreateObject ();
  cJSON_AddBoolToObject (set, "expandable_segments", TRUE);
  trace_header_set_allocator_settings (h, set);
  g_autofree char *l2 = trace_header_to_line (h);
  g_assert_cmpstr (l2, ==, "{\"vramsim_trace\": 1, \"time_unit\": \"ns\", \"allocations\": \"tensor\", "
                           "\"allocator_settings\": {\"expandable_segments\": true}}");
  g_autoptr (VsTraceHeader) hc = trace_header_copy (h);
  g_assert_cmpint (trace_header_allocations (hc), ==, VS_ALLOCS_TENSOR);
  trace_header_set_allocator_settings (hc, NULL);
  g_assert_null (trace_header_allocator_settings (hc));
  g_assert_nonnull (trace_header_allocator_settings (h));
}

/* Non-canonical input reads to the same events as canonical input. */
static void
test_lenient_input (void)
{
  const char *text =
    "  {\"vramsim_trace\":1}\r\n"
    "\n"
    "{\"op\":\"alloc\",\"kind\":\"device\",\"bytes\":1e3,\"id\":1,\"t\":0,\"unknown\":{\"x\":[1,{\"y\":null}]}}\r\n"
    "   \n"
    "{ \"t\" : 1.0 , \"op\" : \"kernel\" , \"name\" : \"k\\u00e9\\ud83d\\ude00\" , \"dur\" : 2, \"reads\": [ ], "
    "\"tag\": 5, \"id\": \"ignored for kernels\" }\n"
    "{\"t\": 2, \"op\": \"free\", \"id\": 1}";
  g_autofree char *p = write_file ("lenient.jsonl", text, strlen (text));
  GError *error = NULL;
  g_autofree char *d = dump_path (p, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d, ==,
                   "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 1000, \"kind\": \"device\"}\n"
                   "{\"t\": 1, \"op\": \"kernel\", \"name\": \"k\xc3\xa9\xf0\x9f\x98\x80\", \"dur\": 2}\n"
                   "{\"t\": 2, \"op\": \"free\", \"id\": 1}\n");
}

/* ---- errors ---- */

static const char header[] = "{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n";

/* Runs the JSONL trace HEADER + BODY; the error must name NAME:LINE and contain WHAT. */
static void
expect_jsonl_error (const char *body, guint line, const char *what)
{
  g_autofree char *text = g_strconcat (header, body, NULL);
  g_autofree char *p = write_file ("bad.jsonl", text, strlen (text));
  GError *error = NULL;
  g_autofree char *d = dump_path (p, &error);
  if (d != NULL)
    g_error ("for %s\n  read without error", body);
  g_assert_error (error, VS_TRACE_ERROR, error->code);
  g_autofree char *loc = g_strdup_printf ("%s:%u: ", p, line);
  if (!g_str_has_prefix (error->message, loc) || strstr (error->message, what) == NULL)
    g_error ("for %s\n  got      \"%s\"\n  expected \"%s\" ... \"%s\"", body, error->message, loc, what);
  g_error_free (error);
}

static void
test_errors_jsonl (void)
{
  const char *a1 = "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 10, \"kind\": \"device\"}\n";
  struct { const char *body; guint line; const char *what; } cases[] = {
    /* syntax */
    { "[1, 2]\n", 2, "not a JSON object" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"device\"\n", 2, "invalid JSON" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"device\"} x\n", 2, "invalid JSON" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"device\", \"zz\": tru}\n", 2, "invalid JSON: bad value for \"zz\"" },
    { "{t: 0}\n", 2, "invalid JSON" },
    /* op */
    { "{\"t\": 0, \"op\": \"launch\"}\n", 2, "field 'op': unknown op \"launch\"" },
    { "{\"t\": 0}\n", 2, "missing field 'op'" },
    { "{\"op\": \"mark\", \"name\": \"x\"}\n", 2, "missing field 't'" },
    { "{\"t\": 0, \"op\": 3}\n", 2, "field 'op' must be a string" },
    /* required fields, one per op */
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"kind\": \"device\"}\n", 2, "missing field 'bytes' (required for alloc)" },
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5}\n", 2, "missing field 'kind'" },
    { "{\"t\": 0, \"op\": \"free\"}\n", 2, "missing field 'id' (required for free)" },
    { "{\"t\": 0, \"op\": \"copy\", \"bytes\": 1}\n", 2, "missing field 'dir' (required for copy)" },
    { "{\"t\": 0, \"op\": \"copy\", \"dir\": \"h2d\"}\n", 2, "missing field 'bytes' (required for copy)" },
    { "{\"t\": 0, \"op\": \"memset\", \"bytes\": 1}\n", 2, "missing field 'dst' (required for memset)" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\"}\n", 2, "missing field 'dur' (required for kernel)" },
    { "{\"t\": 0, \"op\": \"kernel\", \"dur\": 1}\n", 2, "missing field 'name' (required for kernel)" },
    { "{\"t\": 0, \"op\": \"sync\"}\n", 2, "missing field 'scope' (required for sync)" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"stream\"}\n", 2, "missing field 'stream' (required for sync with scope \"stream\")" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"event\", \"stream\": 1}\n", 2, "missing field 'event' (required for sync with scope \"event\")" },
    { "{\"t\": 0, \"op\": \"event_record\", \"stream\": 1}\n", 2, "missing field 'event' (required for event_record)" },
    { "{\"t\": 0, \"op\": \"stream_wait\", \"stream\": 1}\n", 2, "missing field 'event' (required for stream_wait)" },
    { "{\"t\": 0, \"op\": \"prefetch\", \"bytes\": 1, \"to\": \"device\"}\n", 2, "missing field 'id' (required for prefetch)" },
    { "{\"t\": 0, \"op\": \"mark\"}\n", 2, "missing field 'name' (required for mark)" },
    /* types */
    { "{\"t\": \"0\", \"op\": \"mark\", \"name\": \"x\"}\n", 2, "field 't' must be a non-negative integer" },
    { "{\"t\": 0, \"op\": \"mark\", \"name\": 5}\n", 2, "field 'name' must be a string" },
    { "{\"t\": 0, \"op\": \"copy\", \"dir\": \"h2d\", \"bytes\": 1, \"async\": 1}\n", 2, "field 'async' must be true or false" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"reads\": 1}\n", 2, "field 'reads' must be an array" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"writes\": [\"a\"]}\n", 2, "field 'writes' must be an array" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1.5}\n", 2, "field 'dur' must be a non-negative integer" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": null}\n", 2, "field 'dur' must be a non-negative integer" },
    { "{\"t\": 0, \"op\": \"mark\", \"name\": \"x\", \"tid\": 4294967296}\n", 2, "field 'tid' is out of range" },
    { "{\"t\": 9223372036854775808, \"op\": \"mark\", \"name\": \"x\"}\n", 2, "field 't' is out of range" },
    { "{\"t\": 0, \"op\": \"mark\", \"name\": \"x\\q\"}\n", 2, "field 'name': bad escape" },
    { "{\"t\": 0, \"op\": \"mark\", \"name\": \"\xff\"}\n", 2, "field 'name': string is not valid UTF-8" },
    /* negative values */
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": -5, \"kind\": \"device\"}\n", 2, "field 'bytes' must not be negative (-5)" },
    { "{\"t\": -1, \"op\": \"mark\", \"name\": \"x\"}\n", 2, "field 't' must not be negative" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": -10}\n", 2, "field 'dur' must not be negative" },
    /* enums */
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5, \"kind\": \"gpu\"}\n", 2, "field 'kind': unknown value \"gpu\"" },
    { "{\"t\": 0, \"op\": \"copy\", \"dir\": \"h2h\", \"bytes\": 1}\n", 2, "field 'dir': unknown value \"h2h\"" },
    { "{\"t\": 0, \"op\": \"sync\", \"scope\": \"all\"}\n", 2, "field 'scope': unknown value \"all\"" },
    { "{\"t\": 0, \"op\": \"prefetch\", \"id\": 1, \"bytes\": 1, \"to\": \"cpu\"}\n", 2, "field 'to': unknown value \"cpu\"" },
    /* ids */
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 0, \"bytes\": 5, \"kind\": \"device\"}\n", 2, "field 'id': an allocation id must be positive" },
    { "\n{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5, \"kind\": \"device\"}\n"
      "{\"t\": 1, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5, \"kind\": \"pinned\"}\n", 4, "field 'id': allocation 1 is already live" },
    { "{\"t\": 0, \"op\": \"free\", \"id\": 3}\n", 2, "field 'id': allocation 3 is not live" },
    { "{\"t\": 0, \"op\": \"copy\", \"dir\": \"h2d\", \"bytes\": 1, \"src\": 4}\n", 2, "field 'src': allocation 4 is not live" },
    { "{\"t\": 0, \"op\": \"copy\", \"dir\": \"h2d\", \"bytes\": 1, \"dst\": 4}\n", 2, "field 'dst': allocation 4 is not live" },
    { "{\"t\": 0, \"op\": \"memset\", \"dst\": 0, \"bytes\": 1}\n", 2, "field 'dst': allocation 0 is not live" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"reads\": [2]}\n", 2, "field 'reads': allocation 2 is not live" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"writes\": [2]}\n", 2, "field 'writes': allocation 2 is not live" },
    { "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"touches\": [2]}\n", 2, "field 'touches': allocation 2 is not live" },
    { "{\"t\": 0, \"op\": \"prefetch\", \"id\": 7, \"bytes\": 1, \"to\": \"host\"}\n", 2, "field 'id': allocation 7 is not live" },
    /* the kernel's shape and collective */
#define KERN "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, "
    { KERN "\"precision\": \"fp4\"}\n", 2,
      "field 'precision': unknown value \"fp4\" (expected fp64, fp32, tf32, fp16, bf16, fp8 or int8)" },
    { KERN "\"precision\": 16}\n", 2, "field 'precision' must be a string" },
    { KERN "\"flops\": -1}\n", 2, "field 'flops' must not be negative (-1)" },
    { KERN "\"flops\": \"1e12\"}\n", 2, "field 'flops' must be a non-negative number" },
    { KERN "\"flops\": 1e19}\n", 2, "field 'flops' is out of range" },
    { KERN "\"grid\": [1, 2]}\n", 2, "field 'grid' must be three positive integers [x, y, z]" },
    { KERN "\"grid\": [1, 2, 3, 4]}\n", 2, "field 'grid' must be three positive integers [x, y, z]" },
    { KERN "\"grid\": [1, 0, 3]}\n", 2, "field 'grid' must be three positive integers [x, y, z] (grid y is 0)" },
    { KERN "\"block\": [1, -2, 3]}\n", 2, "field 'block' must not be negative (-2)" },
    { KERN "\"block\": [1, \"2\", 3]}\n", 2, "field 'block' must be three positive integers" },
    { KERN "\"block\": 256}\n", 2, "field 'block' must be three positive integers" },
    { KERN "\"block\": [1, 1, 4294967296]}\n", 2, "field 'block' is out of range" },
    { KERN "\"grid\": [1.5, 1, 1]}\n", 2, "field 'grid' must be a non-negative integer (1.5)" },
    { KERN "\"regs\": -3}\n", 2, "field 'regs' must not be negative" },
    { KERN "\"smem\": 4294967296}\n", 2, "field 'smem' is out of range" },
    { KERN "\"collective\": \"all_reduce\"}\n", 2, "field 'collective' must be an object" },
    { KERN "\"collective\": {\"kind\": \"allreduce\", \"bytes\": 1, \"ranks\": 2}}\n", 2,
      "field 'collective.kind': unknown value \"allreduce\" (expected all_reduce, all_gather, reduce_scatter" },
    { KERN "\"collective\": {\"kind\": \"send\", \"bytes\": 1, \"ranks\": 0}}\n", 2,
      "field 'collective.ranks' must be at least 1" },
    { KERN "\"collective\": {\"kind\": \"send\", \"bytes\": -1, \"ranks\": 2}}\n", 2,
      "field 'collective.bytes' must not be negative (-1)" },
    { KERN "\"collective\": {\"kind\": \"send\", \"bytes\": \"1MiB\", \"ranks\": 2}}\n", 2,
      "field 'collective.bytes' must be a non-negative integer" },
    { KERN "\"collective\": {\"kind\": \"send\", \"ranks\": 2}}\n", 2, "field 'collective': missing key 'bytes'" },
    { KERN "\"collective\": {}}\n", 2, "field 'collective': missing key 'kind'" },
    { KERN "\"collective\": {\"kind\": \"send\", \"bytes\": 1, \"ranks\": 2, \"ranks\": 3}}\n", 2,
      "field 'collective': key 'ranks' appears twice" },
    { KERN "\"collective\": {\"kind\": \"send\", \"bytes\": 1, \"ranks\": 4294967296}}\n", 2,
      "field 'collective.ranks' is out of range" },
    { KERN "\"collective\": {\"kind\": \"send\" \"bytes\": 1}}\n", 2, "invalid JSON: bad value for \"collective\"" },
    /* the collective's group (communicator) */
#define COLL KERN "\"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1, \"ranks\": 8, \"group\": "
    { COLL "3}}\n", 2, "field 'collective.group' must be an object {\"id\": N, \"role\": \"dp\"} (role optional)" },
    { COLL "{\"role\": \"dp\"}}}\n", 2, "field 'collective.group': missing key 'id'" },
    { COLL "{\"id\": -2}}}\n", 2, "field 'collective.group.id' must not be negative (-2)" },
    { COLL "{\"id\": 0, \"role\": \"dp\"}}}\n", 2, "field 'collective.group.id' must be positive (0 is no communicator)" },
    { COLL "{\"id\": 1.5}}}\n", 2, "field 'collective.group.id' must be a non-negative integer (1.5)" },
    { COLL "{\"id\": 9007199254740992}}}\n", 2, "field 'collective.group.id' is out of range (9007199254740992; at most 9007199254740991)" },
    { COLL "{\"id\": 1, \"role\": \"zp\"}}}\n", 2,
      "field 'collective.group.role': unknown value \"zp\" (expected dp, tp, pp, ep or cp)" },
    { COLL "{\"id\": 1, \"role\": null}}}\n", 2, "field 'collective.group.role' must be a string" },
    { COLL "{\"id\": 1, \"id\": 2}}}\n", 2, "field 'collective.group': key 'id' appears twice" },
    { COLL "{\"id\": 7, \"role\": \"dp\"}}}\n"
      KERN "\"collective\": {\"kind\": \"send\", \"bytes\": 1, \"ranks\": 4, \"group\": {\"id\": 7, \"role\": \"dp\"}}}\n", 3,
      "field 'collective.ranks': group 7 has 4 ranks here but 8 at line 2 (a communicator has one size" },
    { COLL "{\"id\": 7, \"role\": \"dp\"}}}\n" COLL "{\"id\": 7, \"role\": \"tp\"}}}\n", 3,
      "field 'collective.group.role': group 7 has role tp here but dp at line 2 (a communicator has one role)" },
    { COLL "{\"id\": 7, \"role\": \"dp\"}}}\n" COLL "{\"id\": 8}}}\n" COLL "{\"id\": 7}}}\n", 4,
      "field 'collective.group.role': group 7 has role none here but dp at line 2" },
#undef COLL
#undef KERN
    { "{\"t\": 0, \"op\": \"empty_cache\", \"stream\": -1}\n", 2, "field 'stream' must not be negative" },
    /* a field twice (unknown keys may repeat: they are not read) */
    { "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 5, \"bytes\": 6, \"kind\": \"device\"}\n", 2,
      "field 'bytes' appears twice" },
    { "{\"t\": 0, \"op\": \"mark\", \"name\": \"x\", \"t\": 0}\n", 2, "field 't' appears twice" },
    { NULL, 0, NULL },
  };
  for (gsize i = 0; cases[i].body; i++)
    expect_jsonl_error (cases[i].body, cases[i].line, cases[i].what);

  /* Use after free, and time going backwards within one thread (not across threads). */
  g_autofree char *uaf = g_strconcat (a1, "{\"t\": 1, \"op\": \"free\", \"id\": 1}\n",
                                      "{\"t\": 2, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"reads\": [1]}\n", NULL);
  expect_jsonl_error (uaf, 4, "field 'reads': allocation 1 is not live");
  expect_jsonl_error ("{\"t\": 100, \"op\": \"mark\", \"name\": \"a\"}\n"
                      "{\"t\": 50, \"op\": \"mark\", \"name\": \"b\", \"tid\": 1}\n"
                      "{\"t\": 99, \"op\": \"mark\", \"name\": \"c\"}\n",
                      4, "field 't': 99 is earlier than the previous event of thread 0 (t 100)");
}

static void
expect_open_error (const char *name, const void *data, gssize len, const char *what)
{
  g_autofree char *p = write_file (name, data, len < 0 ? strlen (data) : (gsize) len);
  GError *error = NULL;
  g_autofree char *d = dump_path (p, &error);
  g_assert_null (d);
  g_assert_nonnull (error);
  if (!g_str_has_prefix (error->message, p) || strstr (error->message, what) == NULL)
    g_error ("got \"%s\", expected \"%s\" ... \"%s\"", error->message, p, what);
  g_error_free (error);
}

static void
test_errors_header (void)
{
  expect_open_error ("empty.jsonl", "", 0, ": empty file, not a trace");
  expect_open_error ("blank.jsonl", "\n\n  \n", -1, ": empty file, not a trace");
  expect_open_error ("text.txt", "hello world\n", -1, ": not a vramsim trace (neither JSON Lines nor the binary format)");
  expect_open_error ("other.json", "{\"traceEvents\": []}\n", -1,
                     ":1: not a vramsim trace (the header has no \"vramsim_trace\" field)");
  expect_open_error ("broken.json", "{\"traceEvents\": [\n", -1, ":1: not a vramsim trace (the header line is not valid JSON");
  /* A Kineto file as a user first tries it (vramsim info memory-profile-v100.json):
   * its header is "{" alone on its line, and the message says how to import it. */
  expect_open_error ("kineto.json", "\n{\n  \"schemaVersion\": 1,\n", -1, ":2: not a vramsim trace (the header line is "
                     "not valid JSON; a profiler trace, such as a Kineto JSON, is imported with 'vramsim convert FILE OUT' first)");
  expect_open_error ("later.jsonl", "{\"vramsim_trace\": 2}\n", -1,
                     ":1: trace format version 2 is newer than this vramsim reads (1)");
  expect_open_error ("zero.jsonl", "{\"vramsim_trace\": 0}\n", -1, ":1: header field 'vramsim_trace' must be a positive integer");
  expect_open_error ("us.jsonl", "\n{\"vramsim_trace\": 1, \"time_unit\": \"us\"}\n", -1, ":2: header field 'time_unit' must be \"ns\"");
  expect_open_error ("cap.jsonl", "{\"vramsim_trace\": 1, \"capture\": {\"device\": 5}}\n", -1,
                     ":1: header field 'capture.device' must be a string");
  expect_open_error ("short.vtrace", "VRAMTRC", -1, ": truncated binary trace");
  expect_open_error ("allocs.jsonl", "{\"vramsim_trace\": 1, \"allocations\": \"tensors\"}\n", -1,
                     ":1: header field 'allocations' must be \"tensor\" or \"driver\"");
  expect_open_error ("allocs2.jsonl", "{\"vramsim_trace\": 1, \"allocations\": 1}\n", -1,
                     ":1: header field 'allocations' must be \"tensor\" or \"driver\"");
  expect_open_error ("settings.jsonl", "{\"vramsim_trace\": 1, \"allocator_settings\": \"expandable_segments:True\"}\n",
                     -1, ":1: header field 'allocator_settings' must be an object");
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open ("/nonexistent/t.jsonl", &error);
  g_assert_null (r);
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message, "/nonexistent/t.jsonl: cannot open"));
  g_clear_error (&error);
}

/* ---- binary ---- */

static GByteArray *
bin_start (guint32 version, const char *hdr)
{
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) VS_BIN_MAGIC, 8);
  guint32 v = GUINT32_TO_LE (version), n = GUINT32_TO_LE ((guint32) strlen (hdr));
  g_byte_array_append (b, (const guint8 *) &v, 4);
  g_byte_array_append (b, (const guint8 *) &n, 4);
  g_byte_array_append (b, (const guint8 *) hdr, (guint) strlen (hdr));
  return b;
}

static void
bytes (GByteArray *b, const char *hex)
{
  /* "00 0a ff" */
  for (const char *p = hex; *p;)
    {
      if (*p == ' ')
        {
          p++;
          continue;
        }
      guint8 v = (guint8) (g_ascii_xdigit_value (p[0]) * 16 + g_ascii_xdigit_value (p[1]));
      g_byte_array_append (b, &v, 1);
      p += 2;
    }
}

static void
expect_bin_error (GByteArray *b, const char *what)
{
  expect_open_error ("bad.vtrace", b->data, b->len, what);
  g_byte_array_unref (b);
}

static void
test_errors_binary (void)
{
  const char *h = "{\"vramsim_trace\": 1}";
  GByteArray *b;
  /* A valid file: alloc id 1 of 16 bytes, free it, end with count 2. */
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 10 00 00 00  01 02 00 00 01 00  fe 02 56454e44");
  {
    g_autofree char *p = write_file ("ok.vtrace", b->data, b->len);
    GError *error = NULL;
    g_autofree char *d = dump_path (p, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (d, ==, "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 16, \"kind\": \"device\"}\n"
                            "{\"t\": 1, \"op\": \"free\", \"id\": 1}\n");
  }
  g_byte_array_unref (b);

  b = bin_start (1, h);
  b->data[0] = 'X';
  expect_bin_error (b, ": not a vramsim trace");
  expect_bin_error (bin_start (5, h), ": header: binary trace version 5 is newer than this vramsim reads (4)");
  expect_bin_error (bin_start (0, h), ": header: bad binary trace version 0");
  expect_bin_error (bin_start (1, "{\"vramsim_trace\": 3}"), ": header: trace format version 3 is newer");
  expect_bin_error (bin_start (1, "{\"vramsim_trace\": 1"), ": header: the header is not valid JSON");
  b = bin_start (1, h);
  bytes (b, "fe 00 56454e44 00");
  expect_bin_error (b, ": data after the end record");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 10 00 00 00");
  expect_bin_error (b, ": event 1: truncated: the file ends without the end record");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 10");
  expect_bin_error (b, ": event 0: truncated: the file ends inside a record");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 ffffffffffffffffffff01 00 00 00 fe 01 56454e44");
  expect_bin_error (b, ": event 0: varint longer than 10 bytes");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 ffffffffffffffffff02 00 00 00 fe 01 56454e44");
  expect_bin_error (b, ": event 0: varint overflows 64 bits");
  b = bin_start (1, h);
  bytes (b, "09 00 00 00 03  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'name': string id 3 is not defined");
  b = bin_start (1, h);
  bytes (b, "f0 00 01 61  09 00 00 00 00  f0 02 01 62  fe 02 56454e44");
  expect_bin_error (b, ": event 1: string id 2 defined out of order (expected 1)");
  b = bin_start (1, h);
  bytes (b, "f0 00 02 61ff 09 00 00 00 00 fe 01 56454e44");
  expect_bin_error (b, ": event 0: string 0 is not valid UTF-8 text");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 10 00 00 02  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'tag': string id 1 is not defined");
  b = bin_start (1, h);
  bytes (b, "42");
  expect_bin_error (b, ": event 0: unknown record type 0x42");
  b = bin_start (1, h);
  bytes (b, "09 00 00 00 00 fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'name': string id 0 is not defined");
  b = bin_start (1, h);
  bytes (b, "05 00 00 00 00 00 fe 05 56454e44");
  expect_bin_error (b, ": event 1: the end record counts 5 events but the file holds 1");
  b = bin_start (1, h);
  bytes (b, "05 00 00 00 00 00 fe 01 56454e45");
  expect_bin_error (b, ": event 1: bad end record");
  /* Validation names the event index in binary files. */
  b = bin_start (1, h);
  bytes (b, "05 00 00 00 00 00  01 00 00 00 07 00  fe 02 56454e44");
  expect_bin_error (b, ": event 1: field 'id': allocation 7 is not live");
  b = bin_start (1, h);
  bytes (b, "00 00 00 00 01 10 07 00 00  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'kind': unknown kind 7");
  b = bin_start (1, h);
  bytes (b, "05 00 00 00 03 00  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'scope': unknown scope 3");
  b = bin_start (1, h);
  bytes (b, "05 04 00 00 00 00  05 01 00 00 00 00  fe 02 56454e44");
  expect_bin_error (b, ": event 1: field 't': 1 is earlier than the previous event of thread 0 (t 2)");
  b = bin_start (1, h);
  bytes (b, "05 01 00 00 00 00  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 't' is out of range");
  /* The collective's group (version 3): string 0 "k", then kernels with
   * extensions 06: an all_reduce of 1 byte on R ranks, group id, role. */
#define KX3 "f0 00 01 6b  14 00 00 00 00 00 05 00 00 00 00 00 06 00 01 "
  b = bin_start (2, h);
  bytes (b, KX3 "02 05 01  fe 01 56454e44");
  expect_bin_error (b, ": event 0: bad kernel extension flags 0x06");
  b = bin_start (3, h);
  bytes (b, KX3 "02 00 01  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'collective.group.id' must be positive");
  b = bin_start (3, h);
  bytes (b, KX3 "02 05 06  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'collective.group.role': unknown role 6");
  b = bin_start (3, h);
  bytes (b, KX3 "02 8080808080808010 01  fe 01 56454e44");
  expect_bin_error (b, ": event 0: field 'collective.group.id' is out of range (9007199254740992; at most 2^53 - 1");
  b = bin_start (3, h);
  bytes (b, KX3 "02 05 01  14 00 00 00 00 00 05 00 00 00 00 00 06 00 01 04 05 01  fe 02 56454e44");
  expect_bin_error (b, ": event 1: field 'collective.ranks': group 5 has 4 ranks here but 2 at event 0");
#undef KX3
}

/* ---- the binary fast path ----
 *
 * The decoder takes a fast path for records with FAST_MARGIN (1 KiB) or
 * more after them and falls back to the careful decoder for anything
 * unusual. The tests above use tiny files, which the careful decoder reads
 * alone; these put the record under test in front of 1,200 bytes of
 * padding (200 device syncs), where the fast path meets it first. */

static const char padding_sync[] = "05 00 00 00 00 00 ";

/* Header, then the records HEX, then (if PAD) 200 device syncs, then an end
 * record counting N events (N + 200 with padding). */
static GByteArray *
bin_trace_v (guint32 version, const char *hex, gboolean pad, guint n)
{
  GByteArray *b = bin_start (version, "{\"vramsim_trace\": 1}");
  bytes (b, hex);
  if (pad)
    for (int i = 0; i < 200; i++)
      bytes (b, padding_sync);
  guint8 end[12] = { 0xfe };
  guint count = n + (pad ? 200 : 0), len = 1;
  do
    {
      end[len++] = (guint8) ((count & 0x7f) | (count >= 0x80 ? 0x80 : 0));
      count >>= 7;
    }
  while (count != 0);
  g_byte_array_append (b, end, len);
  g_byte_array_append (b, (const guint8 *) "VEND", 4);
  return b;
}

static GByteArray *
bin_trace (const char *hex, gboolean pad, guint n)
{
  return bin_trace_v (1, hex, pad, n);
}

static void
test_fast_path_errors (void)
{
  /* String 0 is "k". */
  static const struct {
    const char *hex;
    const char *what;
  } cases[] = {
    { "00 00 00 00 01 10 00 00 00  00 00 00 00 01 10 00 00 00", ": event 1: field 'id': allocation 1 is already live" },
    { "00 00 00 00 00 10 00 00 00", ": event 0: field 'id': an allocation id must be positive" },
    { "00 00 00 00 01 10 03 00 00", ": event 0: field 'kind': unknown kind 3" },
    { "00 00 00 00 01 10 00 00 02", ": event 0: field 'tag': string id 1 is not defined" },
    { "01 00 00 00 07 00", ": event 0: field 'id': allocation 7 is not live" },
    { "00 00 00 00 01 10 00 00 00  01 00 00 00 01 00  01 00 00 00 01 00",
      ": event 2: field 'id': allocation 1 is not live" },
    { "02 00 00 00 00 10 05 00 00 00 00", ": event 0: field 'src': allocation 5 is not live" },
    { "02 00 00 00 00 10 00 06 00 00 00", ": event 0: field 'dst': allocation 6 is not live" },
    { "02 00 00 00 04 10 00 00 00 00 00", ": event 0: field 'dir': unknown direction 4" },
    { "03 00 00 00 00 10 00 00 00", ": event 0: field 'dst': allocation 0 is not live" },
    { "f0 00 01 6b  04 00 00 00 00 00 05 00 00 01 09 00 00", ": event 0: field 'reads': allocation 9 is not live" },
    { "f0 00 01 6b  00 00 00 00 01 10 00 00 00  04 00 00 00 00 00 05 00 00 01 01 01 08 00",
      ": event 1: field 'writes': allocation 8 is not live" },
    { "f0 00 01 6b  00 00 00 00 01 10 00 00 00  04 00 00 00 00 00 05 00 00 01 01 01 01 02 01 00",
      ": event 1: field 'touches': allocation 0 is not live" },
    { "04 00 00 00 01 00 05 00 00 00 00 00", ": event 0: field 'name': string id 1 is not defined" },
    { "09 00 00 00 00", ": event 0: field 'name': string id 0 is not defined" },
    { "05 00 00 00 03 00", ": event 0: field 'scope': unknown scope 3" },
    { "08 00 00 00 01 10 00 00", ": event 0: field 'id': allocation 1 is not live" },
    { "00 00 00 00 01 10 00 00 00  08 00 00 00 01 10 02 00", ": event 1: field 'to': unknown destination 2" },
    { "05 00 8080808010 00 00 00", ": event 0: field 'tid' is out of range (4294967296)" },
    { "05 00 00 80808080808080808001 00 00", ": event 0: field 'host_ns' is out of range (9223372036854775808)" },
    { "00 00 00 00 80808080808080808001 10 00 00 00", ": event 0: field 'id' is out of range" },
    { "00 00 00 00 01 10 00 81808080808080808001 00", ": event 0: field 'stream' is out of range" },
    { "05 00 00 00 00 ffffffffffffffffffff01", ": event 0: varint longer than 10 bytes" },
    { "05 00 00 00 00 ffffffffffffffffff02", ": event 0: varint overflows 64 bits" },
    { "05 04 00 00 00 00  05 01 00 00 00 00", ": event 1: field 't': 1 is earlier than the previous event of thread 0 (t 2)" },
    { "05 04 40 00 00 00  05 00 41 00 00 00  05 01 40 00 00 00",
      ": event 2: field 't': 1 is earlier than the previous event of thread 64 (t 2)" },
    { "05 01 00 00 00 00", ": event 0: field 't' is out of range (time delta -1 from 0)" },
    { "05 feffffffffffffffff01 00 00 00 00  05 02 00 00 00 00", ": event 1: field 't' is out of range" },
    { "42", ": event 0: unknown record type 0x42" },
    /* empty_cache, and kernels with extensions (0x14): string 0 is "k";
     * the kernel body is name 0, stream 0, dur 5, no bytes, no compute_ns,
     * three empty lists. */
#define KX "f0 00 01 6b  14 00 00 00 00 00 05 00 00 00 00 00 "
    { "0a 00 00 00 81808080808080808001", ": event 0: field 'stream' is out of range" },
    { KX "00", ": event 0: bad kernel extension flags 0x00" },
    { KX "04", ": event 0: bad kernel extension flags 0x04" },
    { KX "01 00 08 00 00 00 00 00 00 00 00", ": event 0: field 'precision': unknown precision 8" },
    { KX "01 00 00 01 00 01 00 00 00 00 00", ": event 0: field 'grid' must be three positive integers [x, y, z] (got [1, 0, 1])" },
    { KX "01 00 00 00 00 00 01 01 00 00 00", ": event 0: field 'block' must be three positive integers [x, y, z] (got [1, 1, 0])" },
    { KX "01 00 00 8080808010 01 01 00 00 00 00 00", ": event 0: field 'grid' is out of range (4294967296)" },
    { KX "01 00 00 00 00 00 00 00 00 00 8080808010", ": event 0: field 'smem' is out of range (4294967296)" },
    { KX "01 81808080808080808001 00 00 00 00 00 00 00 00 00", ": event 0: field 'flops' is out of range" },
    { KX "02 08 01 02", ": event 0: field 'collective': unknown kind 8" },
    { KX "02 00 01 00", ": event 0: field 'collective': 'ranks' must be at least 1" },
    { KX "02 00 01 8080808010", ": event 0: field 'collective.ranks' is out of range (4294967296)" },
    { KX "02 00 80808080808080808001 02", ": event 0: field 'collective.bytes' is out of range" },
    { KX "03 00 00 00 00 00 00 00 00 00 00 08 01 02", ": event 0: field 'collective': unknown kind 8" },
#undef KX
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    for (int pad = 0; pad < 2; pad++)
      {
        GByteArray *b = bin_trace (cases[i].hex, pad, 0);
        expect_bin_error (b, cases[i].what);
      }
  /* The group (version 3), on the fast path and off it. */
#define KX3 "f0 00 01 6b  14 00 00 00 00 00 05 00 00 00 00 00 06 00 01 "
  static const struct {
    const char *hex;
    const char *what;
  } v3[] = {
    { KX3 "02 00 01", ": event 0: field 'collective.group.id' must be positive" },
    { KX3 "02 05 06", ": event 0: field 'collective.group.role': unknown role 6" },
    { "f0 00 01 6b  14 00 00 00 00 00 05 00 00 00 00 00 04 00 01 05 01", ": event 0: bad kernel extension flags 0x04" },
    { KX3 "02 05 01  14 00 00 00 00 00 05 00 00 00 00 00 06 00 01 04 05 01",
      ": event 1: field 'collective.ranks': group 5 has 4 ranks here but 2 at event 0" },
    { KX3 "02 05 01  14 00 00 00 00 00 05 00 00 00 00 00 06 00 01 02 05 02",
      ": event 1: field 'collective.group.role': group 5 has role tp here but dp at event 0" },
  };
#undef KX3
  for (gsize i = 0; i < G_N_ELEMENTS (v3); i++)
    for (int pad = 0; pad < 2; pad++)
      expect_bin_error (bin_trace_v (3, v3[i].hex, pad, 0), v3[i].what);
}

/* A reader remembers VS_MAX_GROUPS groups (memory bounded by what a job
 * has, not by the trace): one more is refused, naming its line. */
static void
test_group_limit (void)
{
  GString *s = g_string_new ("{\"vramsim_trace\": 1}\n");
  for (guint i = 1; i <= VS_MAX_GROUPS + 1; i++)
    g_string_append_printf (s, "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\", \"dur\": 1, \"collective\": "
                            "{\"kind\": \"send\", \"bytes\": 1, \"ranks\": 2, \"group\": {\"id\": %u}}}\n", i);
  g_autofree char *p = write_file ("groups.jsonl", s->str, s->len);
  g_string_free (s, TRUE);
  GError *error = NULL;
  g_autofree char *d = dump_path (p, &error);
  g_assert_null (d);
  g_autofree char *want = g_strdup_printf ("%s:%u: field 'collective.group': more than %u communicators in one trace",
                                           p, VS_MAX_GROUPS + 2, VS_MAX_GROUPS);
  if (error == NULL || !g_str_has_prefix (error->message, want))
    g_error ("got \"%s\", expected \"%s\"", error ? error->message : "(none)", want);
  g_error_free (error);
}

/* trace_reader_set_job: a collective larger than the job is refused by
 * every reader, naming the record; a resized role is not checked; an
 * unsized job checks nothing. */
static void
test_job_check (void)
{
  const char *text =
    "{\"vramsim_trace\": 1}\n"
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"a\", \"dur\": 1, \"collective\": {\"kind\": \"all_reduce\", "
    "\"bytes\": 1, \"ranks\": 2, \"group\": {\"id\": 3, \"role\": \"tp\"}}}\n"
    "{\"t\": 1, \"op\": \"kernel\", \"name\": \"b\", \"dur\": 1, \"collective\": {\"kind\": \"all_reduce\", "
    "\"bytes\": 1, \"ranks\": 16, \"group\": {\"id\": 5, \"role\": \"dp\"}}}\n"
    "{\"t\": 2, \"op\": \"kernel\", \"name\": \"c\", \"dur\": 1, \"collective\": {\"kind\": \"send\", "
    "\"bytes\": 1, \"ranks\": 12}}\n";
  g_autofree char *p = write_file ("job.jsonl", text, strlen (text));
  g_autofree char *bin = tmp_path ("job.vtrace");
  convert (p, bin);
  GError *error = NULL;
  g_autoptr (VsTraceBuf) buf = trace_buf_load (bin, &error);
  g_assert_no_error (error);
  for (int which = 0; which < 3; which++)
    {
      const char *where = which == 0 ? ":3: " : ": event 1: ";
      /* (ranks, resized roles) -> the message, or NULL: reads through */
      static const struct { guint32 ranks, resized; const char *what; } cases[] = {
        { 8, 0, "field 'collective.ranks': group 5 has 16 ranks, more than the job's 8 (network.ranks)" },
        { 8, 1u << VS_ROLE_DP, "field 'collective.ranks': the collective's group has 12 ranks, more than the job's 8" },
        { 12, 1u << VS_ROLE_TP, "field 'collective.ranks': group 5 has 16 ranks, more than the job's 12" },
        { 16, 0, NULL },
        { 1, 0, NULL },
      };
      for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
        {
          g_autoptr (VsTraceReader) r = which == 2 ? trace_buf_reader (buf) : trace_open (which ? bin : p, &error);
          g_assert_no_error (error);
          trace_reader_set_job (r, cases[i].ranks, cases[i].resized);
          g_autofree char *d = dump_reader (r, &error);
          if (cases[i].what == NULL)
            {
              g_assert_no_error (error);
              continue;
            }
          g_assert_null (d);
          g_assert_nonnull (error);
          const char *w = cases[i].ranks == 8 && cases[i].resized ? (which == 0 ? ":4: " : ": event 2: ") : where;
          g_autofree char *loc = g_strconcat (which == 1 || which == 2 ? bin : p, w, cases[i].what, NULL);
          if (!g_str_has_prefix (error->message, loc))
            g_error ("reader %d case %" G_GSIZE_FORMAT ": got \"%s\", expected \"%s\"", which, i, error->message, loc);
          g_clear_error (&error);
        }
    }
}

/* Events the fast path hands over to the careful decoder midway (long id
 * lists, 9-byte varints, large tids, undefined-looking corners) read the
 * same as their JSONL form, from a file and from an in-memory buffer. */
static void
test_fast_path_roundtrip (void)
{
  GString *s = g_string_new ("{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n");
  guint64 t = 0;
  GRand *rand = g_rand_new_with_seed (11);
  const char *kinds[] = { "device", "managed", "pinned" };
  for (int i = 0; i < 3000; i++)
    {
      guint64 id = (guint64) i + 1;
      guint64 big = G_GUINT64_CONSTANT (1) << (i % 63);
      guint tid = (guint) (i % 7 == 0 ? 64 + i % 3 : i % 3);
      t += (guint64) g_rand_int_range (rand, 0, 1 << (i % 20));
      g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"alloc\", \"id\": %" G_GUINT64_FORMAT
                              ", \"bytes\": %" G_GUINT64_FORMAT ", \"kind\": \"%s\"%s%s",
                              t, id, big, kinds[i % 3], i % 5 == 0 ? ", \"stream\": 0" : "",
                              i % 4 == 0 ? ", \"tag\": \"tag\"" : "");
      if (tid != 0)
        g_string_append_printf (s, ", \"tid\": %u", tid);
      g_string_append (s, "}\n");
      /* A kernel reading up to 40 live ids (lists over 32 take the careful path). */
      guint nr = (guint) (i % 41), nw = (guint) (i % 3), nt = (guint) (i % 37 == 0 ? 35 : i % 2);
      g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"kernel\", \"name\": \"k%d\", "
                              "\"stream\": %" G_GUINT64_FORMAT ", \"dur\": %" G_GUINT64_FORMAT,
                              t, i % 5, (guint64) i % 4, big);
      if (i % 3 == 0)
        g_string_append_printf (s, ", \"bytes\": %" G_GUINT64_FORMAT, big - 1);
      if (i % 6 == 0)
        g_string_append_printf (s, ", \"compute_ns\": %d", i);
      append_access_lists (s, nr, nw, nt, id);
      if (tid != 0)
        g_string_append_printf (s, ", \"tid\": %u", tid);
      g_string_append (s, "}\n");
      if (i % 9 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"copy\", \"dir\": \"h2d\", \"src\": %"
                                G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT ", \"async\": true, \"dur\": %d}\n",
                                t, id, big, i);
      if (i % 11 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"memset\", \"dst\": %" G_GUINT64_FORMAT
                                ", \"bytes\": 1, \"stream\": 9223372036854775807}\n", t, id);
      if (i % 13 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"prefetch\", \"id\": %" G_GUINT64_FORMAT
                                ", \"bytes\": 2, \"to\": \"host\", \"stream\": 1}\n", t, id);
      if (i % 17 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"sync\", \"scope\": \"%s\"%s}\n", t,
                                i % 2 ? "stream" : "event", i % 2 ? ", \"stream\": 3" : ", \"event\": 4");
      if (i % 19 == 0)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"event_record\", \"event\": %d, "
                                "\"stream\": 2}\n{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"stream_wait\", "
                                "\"stream\": 5, \"event\": %d}\n{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"mark\", "
                                "\"name\": \"m\", \"host_ns\": 4611686018427387904}\n", t, i, t, i, t);
      if (i % 2 == 1 && i > 30)
        g_string_append_printf (s, "{\"t\": %" G_GUINT64_FORMAT ", \"op\": \"free\", \"id\": %" G_GUINT64_FORMAT
                                "%s}\n", t, id - 25, i % 3 ? "" : ", \"stream\": 6");
    }
  g_rand_free (rand);
  g_autofree char *p = write_file ("fast.jsonl", s->str, s->len);
  g_string_free (s, TRUE);
  /* The JSONL reader (which shares no decoding with the binary one) is
   * the reference. */
  g_autofree char *bin = tmp_path ("fast.vtrace");
  convert (p, bin);
  GError *error = NULL;
  g_autofree char *d1 = dump_path (p, &error);
  g_assert_no_error (error);
  g_autofree char *d2 = dump_path (bin, &error);
  g_assert_no_error (error);
  g_autoptr (VsTraceBuf) buf = trace_buf_load (bin, &error);
  g_assert_no_error (error);
  g_autoptr (VsTraceReader) br = trace_buf_reader (buf);
  g_autofree char *d3 = dump_reader (br, &error);
  g_assert_no_error (error);
  g_auto (GStrv) l1 = g_strsplit (d1, "\n", -1);
  g_auto (GStrv) l2 = g_strsplit (d2, "\n", -1);
  g_auto (GStrv) l3 = g_strsplit (d3, "\n", -1);
  /* 3000 allocs and kernels, 334 copies, 273 memsets, 231 prefetches, 177
   * syncs, 3 x 158 event ops and marks, 1485 frees; and "" after the last \n. */
  g_assert_cmpuint (g_strv_length (l1), ==, 8974 + 1);
  g_assert_cmpuint (g_strv_length (l1), ==, g_strv_length (l2));
  g_assert_cmpuint (g_strv_length (l1), ==, g_strv_length (l3));
  for (guint i = 0; l1[i] != NULL; i++)
    {
      g_assert_cmpstr (l1[i], ==, l2[i]);
      g_assert_cmpstr (l1[i], ==, l3[i]);
    }
}

static char *dump_either (const char *path, gboolean careful);

/* Kernels with shapes and collectives (record 0x14) and empty_cache
 * records, mixed with plain kernels: the fast path reads them as the JSONL
 * reader does, and random corruptions of them read the same with and
 * without the fast path. */
static void
test_fast_path_kernel_fields (void)
{
  GString *s = g_string_new ("{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}\n");
  GRand *rand = g_rand_new_with_seed (23);
  static const char *const precs[] = { "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8" };
  static const char *const colls[] = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                       "broadcast", "reduce", "send", "recv" };
  g_string_append (s, "{\"t\": 0, \"op\": \"alloc\", \"id\": 1, \"bytes\": 4096, \"kind\": \"device\"}\n");
  for (int i = 0; i < 3000; i++)
    {
      guint64 big = G_GUINT64_CONSTANT (1) << (i % 63);
      g_string_append_printf (s, "{\"t\": %d, \"op\": \"kernel\", \"name\": \"k%d\", \"dur\": %d", i, i % 3, i);
      if (i % 4 == 0)
        g_string_append (s, ", \"reads\": [1]");
      int what = g_rand_int_range (rand, 0, 4); /* 0 plain, 1 shape, 2 collective, 3 both */
      if (what & 1)
        {
          if (g_rand_boolean (rand))
            g_string_append_printf (s, ", \"flops\": %" G_GUINT64_FORMAT, big);
          if (g_rand_boolean (rand))
            g_string_append_printf (s, ", \"precision\": \"%s\"", precs[i % 7]);
          if (g_rand_boolean (rand))
            g_string_append_printf (s, ", \"grid\": [%u, %u, 1]", 1u << (i % 32), (guint) i % 70000 + 1);
          if (g_rand_boolean (rand))
            g_string_append_printf (s, ", \"block\": [%d, 2, 3]", i % 1024 + 1);
          if (g_rand_boolean (rand))
            g_string_append_printf (s, ", \"regs\": %d", i % 255 + 1);
          g_string_append_printf (s, ", \"smem\": %u", (guint) g_rand_int (rand));
        }
      /* Groups: id i % 9 + 1 always has the same size and role (none for id 1). */
      static const char *const roles[] = { "", "dp", "tp", "pp", "ep", "cp" };
      if (what & 2)
        {
          g_string_append_printf (s, ", \"collective\": {\"kind\": \"%s\", \"bytes\": %" G_GUINT64_FORMAT ", \"ranks\": %u",
                                  colls[i % 8], big - 1, i % 9 ? (guint) (i % 9) : 4294967295u);
          if (g_rand_boolean (rand) && i % 9 == 0)
            g_string_append (s, ", \"group\": {\"id\": 1}");
          else if (i % 9 != 0 && g_rand_boolean (rand))
            g_string_append_printf (s, ", \"group\": {\"id\": %d, \"role\": \"%s\"}", i % 9 + 1, roles[i % 9 % 5 + 1]);
          g_string_append (s, "}");
        }
      g_string_append (s, "}\n");
      if (i % 10 == 0)
        g_string_append_printf (s, "{\"t\": %d, \"op\": \"empty_cache\"%s}\n", i,
                                i % 20 ? "" : ", \"stream\": 9223372036854775807");
    }
  g_string_append (s, "{\"t\": 3000, \"op\": \"free\", \"id\": 1}\n");
  g_rand_free (rand);
  g_autofree char *p = write_file ("fastk.jsonl", s->str, s->len);
  g_string_free (s, TRUE);
  g_autofree char *bin = tmp_path ("fastk.vtrace");
  convert (p, bin);
  GError *error = NULL;
  g_autofree char *d1 = dump_path (p, &error);
  g_assert_no_error (error);
  g_autofree char *d2 = dump_path (bin, &error);
  g_assert_no_error (error);
  g_autofree char *d3 = dump_either (bin, TRUE);
  g_autoptr (VsTraceBuf) buf = trace_buf_load (bin, &error);
  g_assert_no_error (error);
  g_autoptr (VsTraceReader) br = trace_buf_reader (buf);
  g_autofree char *d4 = dump_reader (br, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d1, ==, d2);
  g_assert_cmpstr (d1, ==, d3);
  g_assert_cmpstr (d1, ==, d4);

  gsize len;
  g_autofree guint8 *orig = (guint8 *) read_file (bin, &len);
  g_autofree guint8 *data = g_malloc (len);
  rand = g_rand_new_with_seed (29);
  int n_errors = 0;
  for (int round = 0; round < 300; round++)
    {
      memcpy (data, orig, len);
      int n = g_rand_int_range (rand, 1, 5);
      for (int k = 0; k < n; k++)
        {
          gsize at = (gsize) g_rand_int_range (rand, 40, (gint32) len);
          data[at] = (guint8) (g_rand_boolean (rand) ? g_rand_int_range (rand, 0, 256) : data[at] ^ 1);
        }
      g_autofree char *mp = write_file ("mutk.vtrace", data, len);
      g_autofree char *fast = dump_either (mp, FALSE);
      g_autofree char *careful = dump_either (mp, TRUE);
      if (strcmp (fast, careful) != 0)
        g_error ("round %d: fast and careful readers differ", round);
      n_errors += g_str_has_prefix (fast, "error: ");
    }
  g_rand_free (rand);
  g_assert_cmpint (n_errors, >, 150);
}

/* Reads PATH with the fast path (CAREFUL false) or the careful decoder
 * alone: the events as JSONL lines, or "error: MESSAGE". */
static char *
dump_either (const char *path, gboolean careful)
{
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  if (r == NULL)
    {
      char *m = g_strconcat ("error: ", error->message, NULL);
      g_error_free (error);
      return m;
    }
  if (careful && r->fast != NULL)
    {
      r->fast->careful_only = TRUE;
      r->fast = NULL;
    }
  char *d = dump_reader (r, &error);
  if (d != NULL)
    return d;
  char *m = g_strconcat ("error: ", error->message, NULL);
  g_error_free (error);
  return m;
}

/* Differential test: random corruptions of a valid trace read the same,
 * events and error messages, with and without the fast path. */
static void
test_fast_path_mutations (void)
{
  g_autofree char *good = tmp_path ("fast.vtrace");
  /* Run alone (-p), it writes the file it mutates first: never a skip. */
  if (!g_file_test (good, G_FILE_TEST_EXISTS))
    test_fast_path_roundtrip ();
  gsize len;
  g_autofree guint8 *orig = (guint8 *) read_file (good, &len);
  GRand *rand = g_rand_new_with_seed (5);
  g_autofree guint8 *data = g_malloc (len);
  int n_errors = 0;
  for (int round = 0; round < 300; round++)
    {
      memcpy (data, orig, len);
      int n = g_rand_int_range (rand, 1, 5);
      for (int k = 0; k < n; k++)
        {
          /* Past the header; mostly small bytes, sometimes any byte. */
          gsize at = (gsize) g_rand_int_range (rand, 40, (gint32) len);
          data[at] = (guint8) (g_rand_boolean (rand) ? g_rand_int_range (rand, 0, 256) : data[at] ^ 1);
        }
      g_autofree char *p = write_file ("mut.vtrace", data, len);
      g_autofree char *fast = dump_either (p, FALSE);
      g_autofree char *careful = dump_either (p, TRUE);
      if (strcmp (fast, careful) != 0)
        g_error ("round %d: fast and careful readers differ", round);
      n_errors += g_str_has_prefix (fast, "error: ");
    }
  g_rand_free (rand);
  /* Most corruptions are caught (some only change a value). */
  g_assert_cmpint (n_errors, >, 150);
}

/* Every proper prefix of a valid binary trace is an error, never a crash
 * and never a trace that reads as complete. */
static void
test_truncated_binary (void)
{
  for (int which = 0; which < 2; which++)
    {
      const char *text = which ? kernel_fields : all_fields;
      g_autofree char *src = write_file ("all-t.jsonl", text, strlen (text));
      g_autofree char *bin = tmp_path ("all-t.vtrace");
      convert (src, bin);
      gsize len;
      g_autofree char *data = read_file (bin, &len);
      g_autofree char *cut = tmp_path ("cut.vtrace");
      for (gsize n = 0; n < len; n++)
        {
          GError *error = NULL;
          g_assert_true (g_file_set_contents (cut, data, (gssize) n, NULL));
          g_autofree char *d = dump_path (cut, &error);
          if (d != NULL || error == NULL || !g_str_has_prefix (error->message, cut))
            g_error ("prefix of %zu bytes: %s", n, error ? error->message : "read as a complete trace");
          g_error_free (error);
        }
      GError *error = NULL;
      g_assert_true (g_file_set_contents (cut, data, (gssize) len, NULL));
      g_autofree char *d = dump_path (cut, &error);
      g_assert_no_error (error);
    }
}

/* ---- writer ---- */

static void
test_writer_abort (void)
{
  g_autofree char *p = tmp_path ("aborted.vtrace");
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  GError *error = NULL;
  VsTraceWriter *w = trace_writer_new (p, VS_FORMAT_AUTO, h, &error);
  g_assert_no_error (error);
  VsEvent ev = { .op = VS_OP_MARK, .name = "x", .dur = VS_NONE, .compute_ns = VS_NONE };
  g_assert_true (trace_writer_write (w, &ev, &error));
  trace_writer_abort (w);
  g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
  g_autoptr (GDir) dir = g_dir_open (tmpdir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)))
    g_assert_false (g_str_has_prefix (name, "aborted"));

  /* A header with no capture fields writes the minimal header line. */
  g_autofree char *line = trace_header_to_line (h);
  g_assert_cmpstr (line, ==, "{\"vramsim_trace\": 1, \"time_unit\": \"ns\"}");
  cJSON *j = trace_header_to_json (h);
  g_assert_cmpint (cJSON_GetObjectItem (j, "vramsim_trace")->valueint, ==, 1);
  cJSON_Delete (j);
  /* An unwritable place is an error naming the path. */
  w = trace_writer_new ("/nonexistent/x.jsonl", VS_FORMAT_AUTO, h, &error);
  g_assert_null (w);
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message, "/nonexistent/x.jsonl: cannot create"));
  g_clear_error (&error);
}

/* ---- in-memory buffers from threads ---- */

typedef struct {
  const VsTraceBuf *buf;
  char *out;
} ThreadJob;

static gpointer
read_buf_thread (gpointer data)
{
  ThreadJob *job = data;
  GString *s = g_string_new (NULL);
  for (int rep = 0; rep < 20; rep++)
    {
      g_string_truncate (s, 0);
      VsTraceReader *r = trace_buf_reader (job->buf);
      GError *error = NULL;
      VsEvent ev;
      while (trace_next (r, &ev, &error))
        {
          trace_json_append_event (s, &ev);
          g_string_append_c (s, '\n');
        }
      g_assert_no_error (error);
      trace_close (r);
    }
  job->out = g_string_free (s, FALSE);
  return NULL;
}

static void
test_buf_threads (void)
{
  g_autofree char *p = write_file ("all-b.jsonl", all_fields, strlen (all_fields));
  GError *error = NULL;
  g_autoptr (VsTraceBuf) buf = trace_buf_load (p, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (trace_buf_count (buf), ==, 28);
  g_assert_cmpstr (trace_buf_header (buf)->config, ==, "a100-80g");
  ThreadJob jobs[2] = { { buf, NULL }, { buf, NULL } };
  GThread *t0 = g_thread_new ("r0", read_buf_thread, &jobs[0]);
  GThread *t1 = g_thread_new ("r1", read_buf_thread, &jobs[1]);
  g_thread_join (t0);
  g_thread_join (t1);
  g_autofree char *direct = dump_path (p, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (jobs[0].out, ==, direct);
  g_assert_cmpstr (jobs[1].out, ==, direct);
  g_free (jobs[0].out);
  g_free (jobs[1].out);

  /* A bad trace does not load. */
  const char *bad = "{\"vramsim_trace\": 1}\n{\"t\": 0, \"op\": \"free\", \"id\": 1}\n";
  g_autofree char *bp = write_file ("bad-b.jsonl", bad, strlen (bad));
  VsTraceBuf *b2 = trace_buf_load (bp, &error);
  g_assert_null (b2);
  g_assert_nonnull (strstr (error->message, ":2: field 'id': allocation 1 is not live"));
  g_clear_error (&error);
}

/* ---- the id map ---- */

static void
test_u64map (void)
{
  VsU64Map m;
  u64map_init (&m);
  GHashTable *ref = g_hash_table_new (g_int64_hash, g_int64_equal);
  GRand *rand = g_rand_new_with_seed (7);
  static guint64 keys[4096];
  for (int i = 0; i < 4096; i++)
    keys[i] = (guint64) g_rand_int_range (rand, 1, 3000) * (i % 3 == 0 ? 1 : 0x100000001ULL);
  for (int step = 0; step < 200000; step++)
    {
      guint64 *k = &keys[g_rand_int_range (rand, 0, 4096)];
      int what = g_rand_int_range (rand, 0, 4);
      if (what == 0)
        {
          u64map_insert (&m, *k, *k * 3);
          g_hash_table_add (ref, k);
        }
      else if (what == 1)
        {
          /* Inserts only what is absent; an existing value stays. */
          guint64 *old = u64map_lookup (&m, *k);
          g_assert_cmpint (u64map_insert_new (&m, *k, old ? 1 : *k * 3), ==, old == NULL);
          g_hash_table_add (ref, k);
        }
      else
        g_assert_cmpint (u64map_remove (&m, *k), ==, g_hash_table_remove (ref, k));
    }
  g_assert_cmpuint (m.len, ==, g_hash_table_size (ref));
  for (int i = 0; i < 4096; i++)
    {
      guint64 *v = u64map_lookup (&m, keys[i]);
      g_assert_cmpint (v != NULL, ==, g_hash_table_contains (ref, &keys[i]));
      if (v)
        g_assert_cmpuint (*v, ==, keys[i] * 3);
    }
  g_rand_free (rand);
  g_hash_table_destroy (ref);
  u64map_clear (&m);
}

/* ---- throughput (-m perf) ---- */

/* CPU seconds of this process: steadier than wall time on a shared machine. */
static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_perf (void)
{
  const guint64 n = 1000000;
  g_autofree char *pj = tmp_path ("perf.jsonl");
  g_autofree char *pb = tmp_path ("perf.vtrace");
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  GError *error = NULL;
  /* A typical mix: kernels with reads/writes, copies, allocs and frees. */
  for (int f = 0; f < 2; f++)
    {
      VsTraceWriter *w = trace_writer_new (f ? pb : pj, VS_FORMAT_AUTO, h, &error);
      g_assert_no_error (error);
      guint64 ids[2] = { 1, 2 };
      for (guint64 i = 0; i < n; i++)
        {
          VsEvent ev = { .t = i * 1000, .dur = VS_NONE, .compute_ns = VS_NONE, .bytes = VS_NONE };
          guint64 k = i % 10;
          if (k == 0)
            ev.op = VS_OP_ALLOC, ev.id = i + 100, ev.bytes = 1 << 20, ev.kind = VS_MEM_DEVICE, ev.tag = "activations";
          else if (k == 9)
            ev.op = VS_OP_FREE, ev.id = i - 9 + 100;
          else if (k == 5)
            ev.op = VS_OP_COPY, ev.dir = VS_DIR_H2D, ev.bytes = 4096, ev.dst = i - 5 + 100, ev.stream = 1,
            ev.async = TRUE, ev.dur = 2000;
          else
            ev.op = VS_OP_KERNEL, ev.name = k & 1 ? "gemm_kernel_128x128" : "elementwise_add", ev.stream = 1,
            ev.dur = 5000 + k, ev.bytes = 1 << 22, ev.reads = ids, ev.n_reads = 0, ev.writes = ids, ev.n_writes = 0;
          if (ev.op == VS_OP_KERNEL)
            {
              static guint64 rw[2];
              rw[0] = i / 10 * 10 + 100;
              ev.reads = rw;
              ev.n_reads = 1;
              ev.writes = rw;
              ev.n_writes = 1;
            }
          g_assert_true (trace_writer_write (w, &ev, &error));
        }
      g_assert_true (trace_writer_finish (w, &error));
    }
  for (int f = 0; f < 2; f++)
    {
      for (int rep = 0; rep < 3; rep++)
        {
          double t0 = cpu_now ();
          g_autoptr (VsTraceReader) r = trace_open (f ? pb : pj, &error);
          VsEvent ev;
          guint64 c = 0;
          while (trace_next (r, &ev, &error))
            c++;
          g_assert_no_error (error);
          g_assert_cmpuint (c, ==, n);
          double s = cpu_now () - t0;
          GStatBuf st;
          g_stat (f ? pb : pj, &st);
          g_test_message ("%s: %.2f M events/s (%.3f s, %.1f bytes/event)", f ? "binary" : "jsonl", n / s / 1e6, s,
                          (double) st.st_size / n);
          g_printerr ("%s: %.2f M events/s (%.3f s, %.1f bytes/event)\n", f ? "binary" : "jsonl", n / s / 1e6, s,
                      (double) st.st_size / n);
        }
    }
  double t0 = cpu_now ();
  g_autoptr (VsTraceBuf) buf = trace_buf_load (pb, &error);
  g_assert_no_error (error);
  double s = cpu_now () - t0;
  g_printerr ("buf load: %.3f s\n", s);
  t0 = cpu_now ();
  g_autoptr (VsTraceReader) r = trace_buf_reader (buf);
  VsEvent ev;
  while (trace_next (r, &ev, &error))
    ;
  s = cpu_now () - t0;
  g_printerr ("buf read: %.2f M events/s\n", n / s / 1e6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  harness_tmpdir_make ("test-trace-XXXXXX");
  g_assert_nonnull (tmpdir);
  g_test_add_func ("/trace/roundtrip-samples", test_roundtrip_samples);
  g_test_add_func ("/trace/roundtrip-all-fields", test_roundtrip_all_fields);
  g_test_add_func ("/trace/roundtrip-kernel-fields", test_roundtrip_kernel_fields);
  g_test_add_func ("/trace/lenient-input", test_lenient_input);
  g_test_add_func ("/trace/errors-jsonl", test_errors_jsonl);
  g_test_add_func ("/trace/errors-header", test_errors_header);
  g_test_add_func ("/trace/errors-binary", test_errors_binary);
  g_test_add_func ("/trace/fast-path-errors", test_fast_path_errors);
  g_test_add_func ("/trace/job-check", test_job_check);
  g_test_add_func ("/trace/group-limit", test_group_limit);
  g_test_add_func ("/trace/fast-path-roundtrip", test_fast_path_roundtrip);
  g_test_add_func ("/trace/fast-path-mutations", test_fast_path_mutations);
  g_test_add_func ("/trace/fast-path-kernel-fields", test_fast_path_kernel_fields);
  g_test_add_func ("/trace/truncated-binary", test_truncated_binary);
  g_test_add_func ("/trace/writer-abort", test_writer_abort);
  g_test_add_func ("/trace/buf-threads", test_buf_threads);
  g_test_add_func ("/trace/u64map", test_u64map);
  /* Timings only, no verdict: registered with -m perf, not skipped. */
  if (g_test_perf ())
    g_test_add_func ("/trace/perf", test_perf);
  int rc = g_test_run ();
  harness_tmpdir_remove ();
  return rc;
}
