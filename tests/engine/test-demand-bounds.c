/* test-demand-bounds.c — the demand's and the UVM fault path's rules at
 * their boundaries, by hand (docs/model.md 6, "Demand"; 7, UVM).
 *
 * Demand machine (as test-demand.c's): 1 GiB of device memory, a 100 MiB
 * CUDA context, driver-level allocations charged to 1 B. UVM machine
 * (test-replay.c's round one): 1 GiB, no context, a 10 GB/s link, 64 KiB
 * pages, 256 faults a batch at 30 us, first touch on the host. */
#include <string.h>

#include "replay-harness.h"

#define MiB 1048576.0

static const char *demand_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"1B\","
  "              \"context\": \"100MiB\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\"}}";

static const char *uvm_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"1B\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\", \"pageable_efficiency\": 0.5, \"latency\": \"10us\", \"copy_engines\": 1},"
  " \"host\": {\"capacity\": \"1TiB\", \"bandwidth\": \"1000GB/s\"},"
  " \"uvm\": {\"page\": \"64KiB\", \"evict_unit\": \"2MiB\", \"fault_batch\": 256, \"fault_latency\": \"30us\","
  "          \"first_touch\": \"host\"}}";

static const char *const policies[] = { "oom", "spill", "direct", "uvm" };

static cJSON *
run (const char *config, const char *policy, const char *body)
{
  g_autofree char *set = g_strdup_printf ("policy.oversubscription=%s", policy);
  const char *sets[] = { set, NULL };
  g_autoptr (VsConfig) cfg = harness_config (config, sets);
  return harness_replay ("{\"vramsim_trace\": 1}", body, cfg, cfg, NULL);
}

/* Two 462 MiB allocations: demand 100 + 924 = 1024 MiB, the capacity
 * exactly: fits ("demand <= capacity") under every policy. */
static void
test_fits_at_capacity (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":484442112,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":484442112,\"kind\":\"device\"}\n"
    "{\"t\":2,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":1000,\"reads\":[1,2]}\n"
    "{\"t\":3,\"op\":\"sync\",\"scope\":\"device\"}\n";
  for (guint p = 0; p < G_N_ELEMENTS (policies); p++)
    {
      cJSON *r = run (demand_config, policies[p], body);
      g_assert_cmpfloat (harness_at (r, "memory.device_demand_bytes")->valuedouble, ==, 1024 * MiB);
      g_assert_true (cJSON_IsTrue (harness_at (r, "fits")));
      cJSON_Delete (r);
    }
}

/* Four 512 KiB allocations, one after the other: the demand grows by
 * 0.5 MiB each time and peaks at 100 + 2 = 102 MiB (every step counts,
 * however small). */
static void
test_peak_small_steps (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":524288,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":524288,\"kind\":\"device\"}\n"
    "{\"t\":2,\"op\":\"alloc\",\"id\":3,\"bytes\":524288,\"kind\":\"device\"}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":4,\"bytes\":524288,\"kind\":\"device\"}\n";
  cJSON *r = run (demand_config, "oom", body);
  g_assert_cmpfloat (harness_at (r, "memory.device_demand_bytes")->valuedouble, ==, 102 * MiB);
  cJSON_Delete (r);
}

/* A managed 1 GiB allocation, first touched on the host, read by a 1 us
 * kernel on a 1 GiB device: the set is exactly what the device has, so it
 * faults in once (not the thrashing path): 16,384 pages of 64 KiB in 64
 * batches of 256 (64 x 30 us = 1.92 ms), then 1 GiB over the 10 GB/s link
 * (107.3741824 ms), then the kernel (1 us): 109.2951824 ms, all of it
 * resident after. */
static void
test_managed_set_exactly_fits (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":1073741824,\"kind\":\"managed\"}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":2,\"op\":\"sync\",\"scope\":\"device\"}\n";
  cJSON *r = run (uvm_config, "uvm", body);
  g_assert_cmpstr (cJSON_GetObjectItem (r, "status")->valuestring, ==, "ok");
  g_assert_cmpfloat (harness_at (r, "traffic.fault_bytes")->valuedouble, ==, 1073741824);
  g_assert_cmpfloat_with_epsilon (harness_at (r, "time.predicted_ns")->valuedouble, 109295182, 2.5);
  cJSON_Delete (r);
}

/* The same set read by a 100 ms kernel: the set fits, so its pages fault
 * in before the kernel runs (1.92 + 107.3741824 ms), then the kernel's
 * 100 ms: 209.2941824 ms. (A set that does not fit faults during the
 * kernel instead.) */
static void
test_managed_set_faults_before (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":1073741824,\"kind\":\"managed\"}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":100000000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":2,\"op\":\"sync\",\"scope\":\"device\"}\n";
  cJSON *r = run (uvm_config, "uvm", body);
  g_assert_cmpfloat_with_epsilon (harness_at (r, "time.predicted_ns")->valuedouble, 209294182, 2.5);
  cJSON_Delete (r);
}

/* Room for a device allocation taken from managed memory a group at a
 * time, no more groups than needed and no fewer: A (64 MiB managed,
 * 32 groups of 2 MiB) faulted in by a kernel; D (961 MiB of device
 * memory) needs 1 MiB more than the 960 MiB free: one group of A goes
 * (clean: nothing written back), A keeps 62 MiB, D fits: status ok, no
 * out-of-memory. */
static void
test_evict_whole_groups (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":67108864,\"kind\":\"managed\"}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":2,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":2,\"bytes\":1007681536,\"kind\":\"device\"}\n"
    "{\"t\":4,\"op\":\"free\",\"id\":2}\n";
  /* Under oom (under uvm device memory is managed too). */
  cJSON *r = run (uvm_config, "oom", body);
  g_assert_cmpstr (cJSON_GetObjectItem (r, "status")->valuestring, ==, "ok");
  g_assert_cmpfloat (harness_at (r, "traffic.fault_bytes")->valuedouble, ==, 67108864);
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/demand-bounds/fits-at-capacity", test_fits_at_capacity);
  g_test_add_func ("/demand-bounds/peak-small-steps", test_peak_small_steps);
  g_test_add_func ("/demand-bounds/managed-set-exactly-fits", test_managed_set_exactly_fits);
  g_test_add_func ("/demand-bounds/managed-set-faults-before", test_managed_set_faults_before);
  g_test_add_func ("/demand-bounds/evict-whole-groups", test_evict_whole_groups);
  return g_test_run ();
}
