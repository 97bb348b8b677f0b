/* test-host.c — the host held back by the GPU, against numbers computed by
 * hand: the launch queue (gpu.launch_queue), which calls block (the audit
 * in docs/model.md 2), and the steady-state step as the host and as the
 * GPU run it (steady_state.host_step_median_ns, gpu_step_median_ns).
 *
 * The machine: 100 GB/s device memory, a 10 GB/s link with 10 us latency,
 * 100 TFLOPS, launch latency 0. Kernels are replayed on their own capture
 * config, so each takes its captured dur (SPEC 5.4's identity). */
#include <math.h>
#include <string.h>

#include "config/config.h"
#include "engine/replay.h"
#include "replay-harness.h"

static const char *base_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"8GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"1B\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\", \"latency\": \"10us\", \"copy_engines\": 1},"
  " \"host\": {\"capacity\": \"1TiB\", \"bandwidth\": \"1000GB/s\"}}";

/* BODY replayed on the test machine with SETS, captured on the same
 * machine with the same SETS (the queue is the program's, both sides). */
static cJSON *
replay (const char *const *sets, const char *body)
{
  g_autoptr (VsConfig) target = harness_config (base_config, sets);
  g_autoptr (VsConfig) capture = harness_config (base_config, sets);
  return harness_replay ("{\"vramsim_trace\": 1}", body, target, capture, NULL);
}

static const cJSON *
item (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  const cJSON *cur = o;
  for (guint i = 0; parts[i] && cur; i++)
    cur = cJSON_GetObjectItemCaseSensitive (cur, parts[i]);
  if (cur == NULL)
    g_error ("no field %s in the report", path);
  return cur;
}

static double
get (const cJSON *o, const char *path)
{
  const cJSON *v = item (o, path);
  g_assert_true (cJSON_IsNumber (v));
  return v->valuedouble;
}

#define ASSERT_NS(r, path, expect) g_assert_cmpfloat_with_epsilon (get (r, path), (expect), 1.5)

/* N kernels on stream 1, kernel k at t = k x H ns with host_ns H and
 * captured dur D (and HOST_EXTRA[k] more host_ns, the capture's own waits,
 * when given); then a device sync of host_ns SYNC_H. */
static char *
kernels (guint n, guint64 h, guint64 d, const guint64 *host_extra, guint64 sync_h)
{
  GString *b = g_string_new (NULL);
  guint64 t = 0;
  for (guint k = 0; k < n; k++)
    {
      guint64 hk = h + (host_extra ? host_extra[k] : 0);
      g_string_append_printf (b, "{\"t\":%" G_GUINT64_FORMAT ",\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,"
                              "\"dur\":%" G_GUINT64_FORMAT ",\"bytes\":0,\"host_ns\":%" G_GUINT64_FORMAT "}\n",
                              t, d, hk);
      t += hk;
    }
  g_string_append_printf (b, "{\"t\":%" G_GUINT64_FORMAT ",\"op\":\"sync\",\"scope\":\"device\",\"host_ns\":%"
                          G_GUINT64_FORMAT "}\n", t, sync_h);
  return g_string_free (b, FALSE);
}

/* Six kernels of 10 us, each launch 1 us of host time, into a queue of 2.
 * Kernel j starts at 10j us (one after the other on stream 1). Launch k
 * is made at s_k with k + 1 ops issued; those not started yet hold the
 * queue:
 *   k=0 s=0: it starts at once (0 held); returns at 1 us.
 *   k=1 s=1: 1 held (kernel 1, starts at 10); k=2 s=2: 2 held; returns at 3.
 *   k=3 s=3: 3 held > 2: waits until kernel 1 starts at 10 us;
 *            returns at max(3 + 1, 10) = 10 us.
 *   k=4 s=10: kernels 2, 3, 4 held: until kernel 2 starts, 20 us.
 *   k=5 s=20: until kernel 3 starts, 30 us.
 * (Launch k >= Q + 1 returns when kernel k - Q starts: (k - 2) x 10 us.)
 * The sync at 30 us waits for kernel 5's end, 60 us.
 * Waits beyond the captured host_ns: (10 - 4) + (20 - 11) + (30 - 21) =
 * 24 us, 3 launches; host blocked 24 + (60 - 30) = 54 us. */
static void
test_queue_blocks (void)
{
  g_autofree char *body = kernels (6, 1000, 10000, NULL, 0);
  const char *q2[] = { "gpu.launch_queue=2", NULL };
  cJSON *r = replay (q2, body);
  ASSERT_NS (r, "time.predicted_ns", 60000);
  ASSERT_NS (r, "host.launch_queue_waits", 3);
  ASSERT_NS (r, "host.launch_queue_blocked_ns", 24000);
  ASSERT_NS (r, "host.blocked_ns", 54000);
  ASSERT_NS (r, "host.launch_queue", 2);
  cJSON_Delete (r);

  /* No bound (0): the host issues all six by 6 us and waits at the sync
   * from 6 us to 60 us. */
  const char *q0[] = { "gpu.launch_queue=0", NULL };
  r = replay (q0, body);
  ASSERT_NS (r, "time.predicted_ns", 60000);
  ASSERT_NS (r, "host.launch_queue_waits", 0);
  ASSERT_NS (r, "host.blocked_ns", 54000);
  cJSON_Delete (r);

  /* The default, 1024: six launches never fill it. */
  r = replay (NULL, body);
  ASSERT_NS (r, "host.launch_queue", 1024);
  ASSERT_NS (r, "host.launch_queue_waits", 0);
  cJSON_Delete (r);
}

/* The same program as captured on a machine with that queue: its waits
 * are inside the launches' host_ns (launch 3 returned at 10 us: host_ns
 * 7 us; launches 4 and 5 at 20 and 30 us: 10 us each; the sync at 30 us
 * returned at 60: host_ns 30 us). Replayed on its
 * own config the launch returns at max(s + host_ns, the slot): the same
 * times, nothing counted twice: launch_queue_blocked_ns 0, the sync's 30
 * us the only host wait. */
static void
test_queue_identity (void)
{
  const guint64 extra[6] = { 0, 0, 0, 6000, 9000, 9000 };
  g_autofree char *body = kernels (6, 1000, 10000, extra, 30000);
  const char *q2[] = { "gpu.launch_queue=2", NULL };
  cJSON *r = replay (q2, body);
  ASSERT_NS (r, "time.predicted_ns", 60000);
  ASSERT_NS (r, "time.captured_ns", 60000);   /* the sync's return */
  ASSERT_NS (r, "host.launch_queue_waits", 3);
  ASSERT_NS (r, "host.launch_queue_blocked_ns", 0);
  ASSERT_NS (r, "host.blocked_ns", 30000);
  cJSON_Delete (r);
}

/* The bound is the device's: with stream 1 holding 2 queued kernels, an
 * op on an idle stream 2 starts at once, takes no slot and does not
 * block. Kernels on stream 1 at 0, 1, 2 us (10 us each: kernel 0 runs,
 * 1 and 2 held), then an event record on stream 2 at 3 us (an op that
 * uses no SMs, so kernel 0 keeps its 10 us), then a kernel on stream 1
 * at 4 us, which finds 2 held (kernels 1, 2) + itself: waits until
 * kernel 1 starts at 10 us. */
static void
test_queue_other_stream (void)
{
  const char *q2[] = { "gpu.launch_queue=2", NULL };
  cJSON *r = replay (q2,
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":10000,\"bytes\":0,\"host_ns\":1000}\n"
    "{\"t\":1000,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":10000,\"bytes\":0,\"host_ns\":1000}\n"
    "{\"t\":2000,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":10000,\"bytes\":0,\"host_ns\":1000}\n"
    "{\"t\":3000,\"op\":\"event_record\",\"event\":1,\"stream\":2,\"host_ns\":1000}\n"
    "{\"t\":4000,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":10000,\"bytes\":0,\"host_ns\":1000}\n");
  ASSERT_NS (r, "host.launch_queue_waits", 1);
  ASSERT_NS (r, "host.launch_queue_blocked_ns", 10000 - 5000);
  cJSON_Delete (r);
}

/* Which copy and memset calls block (CUDA's API synchronization
 * behavior; docs/model.md 2). 100 MB each way: over the link 10 us +
 * 10 ms; device to device 2 x 100 MB over device memory, 2 ms; a memset
 * of 100 MB, 1 ms. Each call is followed by a mark at its t + host_ns
 * (host_ns 0), so the mark's predicted time is when the call returned:
 * the time between the two marks "a" and "b" around it. */
static double returns_after_end (const char *call, double *end);

static double
returns_after (const char *call)
{
  double end;
  return returns_after_end (call, &end);
}

/* The same, and *END the replay's end (all work done). */
static double
returns_after_end (const char *call, double *end)
{
  g_autofree char *body = g_strdup_printf (
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":100000000,\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":2,\"bytes\":100000000,\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":3,\"bytes\":100000000,\"kind\":\"pinned\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":4,\"bytes\":100000000,\"kind\":\"managed\"}\n"
    "{\"t\":0,\"op\":\"mark\",\"name\":\"a\"}\n"
    "%s\n"
    "{\"t\":0,\"op\":\"mark\",\"name\":\"b\"}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"device\"}\n", call);
  cJSON *r = replay (NULL, body);
  const cJSON *m = cJSON_GetArrayItem (item (r, "marks"), 0);
  g_assert_cmpstr (cJSON_GetObjectItem (m, "name")->valuestring, ==, "a");
  double v = cJSON_GetObjectItem (m, "predicted_ns")->valuedouble;
  *end = get (r, "time.predicted_ns");
  cJSON_Delete (r);
  return v;
}

static void
test_blocking_calls (void)
{
  /* cudaMemcpy H2D (pinned, pageable) and D2H: return once done. Pageable
   * runs at 10 GB/s x 0.5 (the default pageable_efficiency): 20.01 ms. */
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"h2d\",\"src\":3,\"dst\":1,\"bytes\":100000000}"), 10010000, 1.5);
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"h2d\",\"src\":0,\"dst\":1,\"bytes\":100000000}"), 20010000, 1.5);
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"d2h\",\"src\":1,\"dst\":3,\"bytes\":100000000}"), 10010000, 1.5);
  /* cudaMemcpy device to device and peer: CUDA does not synchronize the
   * host, but SPEC 5.2 makes every async: false copy a blocking call: 10
   * us latency + 2 ms over device memory; the peer copy over link_d2h at
   * 10 GB/s, 10 us + 10 ms. */
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"d2d\",\"src\":1,\"dst\":2,\"bytes\":100000000}"), 2010000, 1.5);
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"p2p\",\"src\":1,\"dst\":2,\"bytes\":100000000}"), 10010000, 1.5);
  /* cudaMemcpyAsync: pinned does not block; pageable D2H returns once
   * done; pageable H2D is staged, taken as done. */
  g_assert_cmpfloat (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"h2d\",\"src\":3,\"dst\":1,\"bytes\":100000000,\"async\":true,\"stream\":1}"), ==, 0);
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"d2h\",\"src\":1,\"dst\":0,\"bytes\":100000000,\"async\":true,\"stream\":1}"),
    20010000, 1.5);
  g_assert_cmpfloat_with_epsilon (returns_after (
    "{\"t\":0,\"op\":\"copy\",\"dir\":\"h2d\",\"src\":0,\"dst\":1,\"bytes\":100000000,\"async\":true,\"stream\":1}"),
    20010000, 1.5);
  /* cudaMemset (async: false) blocks (SPEC 5.2; CUDA itself only waits
   * on pinned or managed memory): 100 MB over device memory, 1 ms; on
   * pinned memory over the 10 GB/s link, 10 ms. cudaMemsetAsync never
   * blocks. */
  g_assert_cmpfloat_with_epsilon (returns_after ("{\"t\":0,\"op\":\"memset\",\"dst\":1,\"bytes\":100000000}"),
                                  1000000, 1.5);
  g_assert_cmpfloat_with_epsilon (returns_after ("{\"t\":0,\"op\":\"memset\",\"dst\":3,\"bytes\":100000000}"),
                                  10000000, 1.5);
  g_assert_cmpfloat (returns_after (
    "{\"t\":0,\"op\":\"memset\",\"dst\":1,\"bytes\":100000000,\"async\":true,\"stream\":1}"), ==, 0);
}

/* Five steps of a GPU ten times slower than its host: each step a mark
 * "step" then ten kernels, each launch 1 us of host time and 10 us on
 * the GPU. Kernel j (of 50) runs from 10j to 10(j + 1) us.
 * With no launch-queue bound the host reaches its marks at 0, 10, 20, 30,
 * 40 us and ends at 50 us: host steps 10 us. The GPU's frontier at mark m
 * is the end of the last kernel issued before it, kernel 10m - 1: 100m
 * us (at the first mark nothing ran: 0), and at the thread's end 500 us:
 * GPU steps 100 us. The step is the slower: 100 us, bound by the GPU,
 * 10x the captured (host) step. */
static char *
steps_body (void)
{
  GString *b = g_string_new (NULL);
  for (guint m = 0; m < 5; m++)
    {
      g_string_append_printf (b, "{\"t\":%u,\"op\":\"mark\",\"name\":\"step\"}\n", m * 10000);
      for (guint k = 0; k < 10; k++)
        g_string_append_printf (b, "{\"t\":%u,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":10000,"
                                "\"bytes\":0,\"host_ns\":1000}\n", m * 10000 + k * 1000);
    }
  return g_string_free (b, FALSE);
}

static void
test_steady_gpu_bound (void)
{
  g_autofree char *body = steps_body ();
  const char *q0[] = { "gpu.launch_queue=0", NULL };
  cJSON *r = replay (q0, body);
  ASSERT_NS (r, "steady_state.steps", 5);
  ASSERT_NS (r, "steady_state.host_step_median_ns", 10000);
  ASSERT_NS (r, "steady_state.gpu_step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.captured_step_median_ns", 10000);
  ASSERT_NS (r, "steady_state.step_slowdown", 10);
  ASSERT_NS (r, "steady_state.gpu_busy_step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.host_busy_step_median_ns", 10000);
  g_assert_cmpstr (item (r, "steady_state.step_bound")->valuestring, ==, "gpu");
  ASSERT_NS (r, "time.predicted_ns", 500000);
  cJSON_Delete (r);

  /* A queue of 4: launch k >= 5 returns when kernel k - 4 starts,
   * 10(k - 4) us, so mark m (after launch 10m - 1) comes at 100m - 50 us
   * for m >= 1, and the thread ends with launch 49 at 450 us. Host steps:
   * 50 (the first, left out), then 100, 100, 100, 100 us; the GPU's are
   * 100 us as before: the step is 100 us. What bounds it: a step's work
   * on the GPU is 10 kernels x 10 us = 100 us, the host's own 10 x 1 us =
   * 10 us (the rest of its 100 us it waits for the queue): the GPU. */
  const char *q4[] = { "gpu.launch_queue=4", NULL };
  r = replay (q4, body);
  /* The step's figures are the bounding end's: the GPU's first step is
   * 0 to 100 us (the host's was 50 us). */
  ASSERT_NS (r, "steady_state.first_step_ns", 100000);
  ASSERT_NS (r, "steady_state.host_step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.gpu_step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.gpu_busy_step_median_ns", 100000);
  ASSERT_NS (r, "steady_state.host_busy_step_median_ns", 10000);
  g_assert_cmpstr (item (r, "steady_state.step_bound")->valuestring, ==, "gpu");
  cJSON_Delete (r);
}

/* A host-bound program: the same steps with kernels of 100 ns. The host
 * takes 10 us a step; the GPU's frontier at mark m is kernel 10m - 1's
 * end, (10m - 1) x 1 us + 100 ns: 10 us apart. Both 10 us; a step's work
 * is 10 us on the host (never blocked), 10 x 100 ns = 1 us on the GPU:
 * the host bounds it. */
static void
test_steady_host_bound (void)
{
  g_autofree char *slow = steps_body ();
  g_auto (GStrv) parts = g_strsplit (slow, "\"dur\":10000,", -1);
  g_autofree char *body = g_strjoinv ("\"dur\":100,", parts);
  cJSON *r = replay (NULL, body);
  ASSERT_NS (r, "steady_state.host_step_median_ns", 10000);
  ASSERT_NS (r, "steady_state.gpu_step_median_ns", 10000);
  ASSERT_NS (r, "steady_state.step_median_ns", 10000);
  ASSERT_NS (r, "steady_state.step_slowdown", 1);
  ASSERT_NS (r, "steady_state.gpu_busy_step_median_ns", 1000);
  ASSERT_NS (r, "steady_state.host_busy_step_median_ns", 10000);
  g_assert_cmpstr (item (r, "steady_state.step_bound")->valuestring, ==, "host");
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/host/launch-queue/blocks", test_queue_blocks);
  g_test_add_func ("/host/launch-queue/identity", test_queue_identity);
  g_test_add_func ("/host/launch-queue/other-stream", test_queue_other_stream);
  g_test_add_func ("/host/blocking-calls", test_blocking_calls);
  g_test_add_func ("/host/steady/gpu-bound", test_steady_gpu_bound);
  g_test_add_func ("/host/steady/host-bound", test_steady_host_bound);
  return g_test_run ();
}
