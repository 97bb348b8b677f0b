/* test-touches.c — inferred accesses in the replay (model.touches,
 * docs/model.md 6b): spilled and faulted memory costs something though
 * no kernel names an allocation, and the report says it is a lower bound.
 * Numbers by hand.
 *
 * The machine: 1 GiB device, 100 MiB context (924 MiB left), 100 GB/s
 * device memory, a 10 GB/s host link with no latency. The trace (no
 * kernel names anything; no mark, so no step rule):
 *   k0; alloc 1 (600 MiB); k1; alloc 2 (600 MiB); k2; free 2; k3; free 1.
 * The inference gives k1 allocation 1 (made just before it: written),
 * k2 allocation 2 (made, written; freed right after it: read), k3
 * allocation 1 (freed right after it: read). 600 MiB = 629,145,600 B
 * moves over the link in 629145600 / 10e9 s = 62,914,560 ns. */
#include <string.h>

#include "replay-harness.h"

#define MiB 1048576.0
#define MOVE_NS 62914560.0

static const char *base_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"2MiB\","
  "              \"context\": \"100MiB\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\", \"latency\": \"0ns\"}}";

static const char *trace =
  "{\"t\":0,\"op\":\"kernel\",\"name\":\"k0\",\"stream\":1,\"dur\":1000}\n"
  "{\"t\":1000,\"op\":\"alloc\",\"id\":1,\"bytes\":629145600,\"kind\":\"device\"}\n"
  "{\"t\":2000,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":1000}\n"
  "{\"t\":3000,\"op\":\"alloc\",\"id\":2,\"bytes\":629145600,\"kind\":\"device\"}\n"
  "{\"t\":4000,\"op\":\"kernel\",\"name\":\"k2\",\"stream\":1,\"dur\":1000}\n"
  "{\"t\":5000,\"op\":\"free\",\"id\":2}\n"
  "{\"t\":6000,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000}\n"
  "{\"t\":7000,\"op\":\"free\",\"id\":1}\n"
  "{\"t\":8000,\"op\":\"sync\",\"scope\":\"device\"}\n";

static cJSON *
run (const char *policy, const char *touches)
{
  g_autofree char *p = g_strdup_printf ("policy.oversubscription=%s", policy);
  g_autofree char *t = g_strdup_printf ("model.touches=%s", touches);
  const char *sets[] = { p, t, NULL };
  g_autoptr (VsConfig) cfg = harness_config (base_config, sets);
  return harness_replay ("{\"vramsim_trace\": 1}", trace, cfg, cfg, NULL);
}

/* model.touches=named (the trace's word only): nothing is touched, so the
 * spill costs nothing (the old silent answer: the captured 8 us). */
static void
test_named (void)
{
  cJSON *r = run ("spill", "named");
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 8000);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
  g_assert_false (cJSON_IsTrue (harness_at (r, "time.lower_bound")));
  g_assert_false (cJSON_IsTrue (harness_at (r, "touches.inferred")));
  g_assert_false (harness_warned (r, "touches inferred"));
  cJSON_Delete (r);
}

/* spill: alloc 2 (t = 3 us) finds 324 MiB free: allocation 1 (dirty:
 * k1 wrote it) goes to the host, 600 MiB out, and the alloc blocks
 * 62,914,560 ns. k3, issued 3 us later, needs 1 back (2 is freed: room):
 * 600 MiB in, a swap stall of 62,914,560 ns, then its 1 us; the sync
 * returns then: 3,000 + 62,914,560 + 3,000 + 62,914,560 + 1,000 =
 * 125,836,120 ns. */
static void
test_spill (void)
{
  cJSON *r = run ("spill", "auto");
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 600 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_in_bytes"), ==, 600 * MiB);
  g_assert_cmpfloat (harness_num (r, "stalls.swap_ns"), ==, MOVE_NS);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 8000 + 2 * MOVE_NS - 1000);
  g_assert_true (cJSON_IsTrue (harness_at (r, "time.lower_bound")));
  g_assert_true (cJSON_IsTrue (harness_at (r, "touches.inferred")));
  g_assert_cmpfloat (harness_num (r, "touches.kernels"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "touches.made"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "touches.freed"), ==, 2);
  g_assert_true (cJSON_IsNull (harness_at (r, "touches.step_mark")));
  g_assert_true (harness_warned (r, "touches inferred: the trace's kernels name no allocations"));
  cJSON_Delete (r);
}

/* direct: 2 does not fit and lies in host memory for good; k2 writes it
 * there (made) and reads it (freed): one part over the path out, its
 * whole 600 MiB once (the least a kernel using it moves). k2 starts at
 * 4 us and takes its 1 us plus 62,914,560 ns; k3 follows (1 us) and the
 * sync returns then: 4,000 + 1,000 + 62,914,560 + 1,000 = 62,920,560 ns. */
static void
test_direct (void)
{
  cJSON *r = run ("direct", "auto");
  g_assert_cmpfloat (harness_num (r, "touches.reached_below_bytes"), ==, 600 * MiB);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 8000 + MOVE_NS - 2000);
  g_assert_true (cJSON_IsTrue (harness_at (r, "time.lower_bound")));
  cJSON_Delete (r);
}

/* uvm: both are managed and created on the device when first touched
 * (faults, no migration). k1 creates 1 (700 MiB used); k2 needs 600 MiB
 * more where 324 MiB are free: 276 MiB of 1 (dirty: k1 wrote it) are
 * written back, 289,406,976 B. 2 is freed after k2 and its pages leave
 * when k2 ends (section 7); k3 then faults the 276 MiB of 1 back over the
 * link with room to spare: 276 MiB faulted in, nothing more written back.
 * The device never holds more than its 1 GiB. */
static void
test_uvm (void)
{
  cJSON *r = run ("uvm", "auto");
  g_assert_cmpfloat (harness_num (r, "traffic.fault_bytes"), ==, 276 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.writeback_bytes"), ==, 276 * MiB);
  g_assert_true (harness_num (r, "stalls.fault_ns") > 0);
  g_assert_true (cJSON_IsTrue (harness_at (r, "time.lower_bound")));
  g_assert_true (harness_num (r, "memory.device_resident_peak_bytes") <= 1024 * MiB);
  cJSON_Delete (r);
}

/* Everything fits (oom, 16 GiB): the inference changes nothing, and the
 * time is no lower bound. */
static void
test_fits (void)
{
  const char *sets[] = { "memory.capacity=16GiB", NULL };
  g_autoptr (VsConfig) cfg = harness_config (base_config, sets);
  cJSON *r = harness_replay ("{\"vramsim_trace\": 1}", trace, cfg, cfg, NULL);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 8000);
  g_assert_true (cJSON_IsTrue (harness_at (r, "touches.inferred")));
  g_assert_false (cJSON_IsTrue (harness_at (r, "time.lower_bound")));
  g_assert_false (harness_warned (r, "touches inferred"));
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/touches/named", test_named);
  g_test_add_func ("/touches/spill", test_spill);
  g_test_add_func ("/touches/direct", test_direct);
  g_test_add_func ("/touches/uvm", test_uvm);
  g_test_add_func ("/touches/fits", test_fits);
  return g_test_run ();
}
