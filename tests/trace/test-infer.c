/* test-infer.c — the touch inference (sim/trace/trace-infer.c; docs/model.md
 * 6b): which allocations each kernel is given, worked out by hand from
 * the rules (made just before it, freed just after it, live at a step's
 * start once in the step). */
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "trace/trace-infer.h"

typedef struct {
  char *path;
  VsTraceReader *r;
  VsInfer *in;
} Fix;

static void
fix_open (Fix *f, const char *body, VsInferMode mode)
{
  g_autoptr (GError) error = NULL;
  int fd = g_file_open_tmp ("vramsim-infer-XXXXXX.jsonl", &f->path, &error);
  g_assert_no_error (error);
  close (fd);
  g_autofree char *text = g_strconcat ("{\"vramsim_trace\": 1}\n", body, NULL);
  g_assert_true (g_file_set_contents (f->path, text, -1, &error));
  f->r = trace_open (f->path, &error);
  g_assert_no_error (error);
  f->in = infer_new (f->r, mode);
}

static void
fix_close (Fix *f)
{
  infer_free (f->in);
  trace_close (f->r);
  g_unlink (f->path);
  g_free (f->path);
}

/* The accesses of every kernel, in trace order, as "name:1w,2r;..." */
static char *
kernels_of (Fix *f)
{
  g_autoptr (GError) error = NULL;
  GString *s = g_string_new (NULL);
  VsEvent ev;
  VsTraceReader *r = infer_reader (f->in);
  while (trace_next (r, &ev, &error))
    {
      if (ev.op != VS_OP_KERNEL)
        continue;
      const guint64 *ids;
      const guint8 *wr;
      guint n = infer_accesses (f->in, &ids, &wr);
      g_string_append_printf (s, "%s%s:", s->len ? ";" : "", ev.name);
      for (guint i = 0; i < n; i++)
        g_string_append_printf (s, "%s%" G_GUINT64_FORMAT "%c", i ? "," : "", ids[i], wr[i] ? 'w' : 'r');
      if (ev.n_reads + ev.n_writes + ev.n_touches > 0)
        g_string_append_printf (s, "(named %u)", ev.n_reads + ev.n_writes + ev.n_touches);
    }
  g_assert_no_error (error);
  return g_string_free (s, FALSE);
}

#define K(t, name) "{\"t\":" #t ",\"op\":\"kernel\",\"name\":\"" name "\",\"stream\":1,\"dur\":10}\n"
#define A(t, id) "{\"t\":" #t ",\"op\":\"alloc\",\"id\":" #id ",\"bytes\":1048576,\"kind\":\"device\"}\n"
#define F(t, id) "{\"t\":" #t ",\"op\":\"free\",\"id\":" #id "}\n"
#define M(t, name) "{\"t\":" #t ",\"op\":\"mark\",\"name\":\"" name "\"}\n"

/* Made and freed. 1 is made before the thread's first kernel (set-up: no
 * kernel made it) and freed after C; 2 and 3 are made between A and B
 * (B's outputs: written) and freed right after B (read: B was their last
 * use). 4 is made after C and freed after an alloc of 5 (the thread moved
 * on: not C's), so D gets 5 only; a pinned buffer (6) is no device
 * memory. */
static void
test_made_and_freed (void)
{
  Fix f;
  fix_open (&f,
            A (0, 1) K (1, "A") A (2, 2) A (3, 3) K (4, "B") F (5, 2) F (6, 3) K (7, "C") F (8, 1)
            A (9, 4) A (10, 5) F (11, 4)
            "{\"t\":12,\"op\":\"alloc\",\"id\":6,\"bytes\":4096,\"kind\":\"pinned\"}\n"
            K (13, "D"),
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "A:;B:2w,3w,2r,3r;C:1r;D:5w");
  VsInferStats st;
  infer_stats (f.in, &st);
  g_assert_true (st.on);
  g_assert_cmpuint (st.kernels, ==, 3);
  g_assert_cmpuint (st.made, ==, 3);
  g_assert_cmpuint (st.freed, ==, 3);
  g_assert_null (st.step_mark);
  fix_close (&f);
}

/* The step rule. 10 and 11 live from the set-up. Point marks "step" at
 * t = 100, 200, 300, four kernels in the first step: at the second start
 * the two live allocations are due, spread over the previous step's
 * K = 4 kernels: kernel j (1-based) gets the entries c with c x K < j x N
 * (N = 2): j = 1 -> c = 0 (0 < 2), c = 1 needs 4 < 2j -> j = 3. So S2a
 * gets 10 and S2c gets 11. In the third step (K = 4 again) the same. */
static void
test_step (void)
{
  Fix f;
  fix_open (&f,
            A (0, 10) A (1, 11)
            M (100, "step") K (101, "S1a") K (102, "S1b") K (103, "S1c") K (104, "S1d")
            M (200, "step") K (201, "S2a") K (202, "S2b") K (203, "S2c") K (204, "S2d")
            M (300, "step") K (301, "S3a") K (302, "S3b") K (303, "S3c") K (304, "S3d"),
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "S1a:;S1b:;S1c:;S1d:;S2a:10r;S2b:;S2c:11r;S2d:;S3a:10r;S3b:;S3c:11r;S3d:");
  VsInferStats st;
  infer_stats (f.in, &st);
  g_assert_cmpstr (st.step_mark, ==, "step");
  g_assert_cmpuint (st.steps, ==, 2);
  g_assert_cmpuint (st.step, ==, 4);
  fix_close (&f);
}

/* A repeated range that covers a sliver of its span is not a step:
 * "nccl" ranges of 1 ns at t = 100, 200, 300 cover 2 of the 200 ns from
 * the first start to the last (less than half). Nothing is due. */
static void
test_not_a_step (void)
{
  Fix f;
  fix_open (&f,
            A (0, 10) K (1, "a")
            M (100, "nccl") M (101, "nccl/end") K (150, "b")
            M (200, "nccl") M (201, "nccl/end") K (250, "c")
            M (300, "nccl") M (301, "nccl/end") K (350, "d"),
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "a:;b:;c:;d:");
  VsInferStats st;
  infer_stats (f.in, &st);
  g_assert_null (st.step_mark);
  fix_close (&f);
}

/* Mode auto on a trace whose kernels name their accesses: nothing is
 * inferred, the events come out as read, and once the window is drained
 * the inference passes everything through. */
static void
test_auto_named (void)
{
  Fix f;
  fix_open (&f,
            K (0, "first") A (1, 1)
            "{\"t\":2,\"op\":\"kernel\",\"name\":\"n\",\"stream\":1,\"dur\":10,\"reads\":[1],\"writes\":[1]}\n"
            A (3, 2) K (4, "after") F (5, 2),
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "first:;n:(named 2);after:");
  VsInferStats st;
  infer_stats (f.in, &st);
  g_assert_false (st.on);
  g_assert_cmpuint (st.kernels, ==, 0);
  g_assert_true (infer_passthrough (f.in));
  fix_close (&f);
}

/* Mode always (the check against known touches): what a kernel names is
 * set aside, and its accesses are inferred as if it named none: "n" made
 * 1 (written) and frees it right after (read). */
static void
test_always (void)
{
  Fix f;
  fix_open (&f,
            K (0, "first") A (1, 1)
            "{\"t\":2,\"op\":\"kernel\",\"name\":\"n\",\"stream\":1,\"dur\":10,\"reads\":[1],\"writes\":[1]}\n"
            F (3, 1),
            VS_INFER_ALWAYS);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "first:;n:1w,1r");
  fix_close (&f);
}

/* Threads are apart: a free on thread 2 is not thread 0's kernel's last
 * use, and what thread 2 makes goes to thread 2's next kernel (t1a and t1b
 * are thread 0's). */
static void
test_threads (void)
{
  Fix f;
  fix_open (&f,
            K (0, "t1a")
            "{\"t\":1,\"op\":\"kernel\",\"name\":\"t2a\",\"stream\":2,\"dur\":10,\"tid\":2}\n"
            A (2, 1)
            "{\"t\":3,\"op\":\"alloc\",\"id\":2,\"bytes\":1048576,\"kind\":\"device\",\"tid\":2}\n"
            K (4, "t1b")
            "{\"t\":5,\"op\":\"free\",\"id\":1,\"tid\":2}\n"
            "{\"t\":6,\"op\":\"kernel\",\"name\":\"t2b\",\"stream\":2,\"dur\":10,\"tid\":2}\n",
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "t1a:;t2a:;t1b:1w;t2b:2w");
  fix_close (&f);
}

/* An importer's `preexisting` block (the Kineto importer's memory live
 * before the profile: many tensors in one allocation) is given to no
 * kernel, though it is live when each step begins; 7 is, once a step. */
static void
test_preexisting (void)
{
  Fix f;
  fix_open (&f,
            "{\"t\":0,\"op\":\"alloc\",\"id\":1099511627776,\"bytes\":4096,\"kind\":\"device\","
            "\"tag\":\"preexisting\"}\n"
            A (1, 7)
            M (100, "step") K (101, "a") M (200, "step") K (201, "b") M (300, "step") K (301, "c"),
            VS_INFER_AUTO);
  g_autofree char *k = kernels_of (&f);
  g_assert_cmpstr (k, ==, "a:;b:7r;c:7r");
  fix_close (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/made-and-freed", test_made_and_freed);
  g_test_add_func ("/infer/step", test_step);
  g_test_add_func ("/infer/not-a-step", test_not_a_step);
  g_test_add_func ("/infer/auto-named", test_auto_named);
  g_test_add_func ("/infer/always", test_always);
  g_test_add_func ("/infer/threads", test_threads);
  g_test_add_func ("/infer/preexisting", test_preexisting);
  return g_test_run ();
}
