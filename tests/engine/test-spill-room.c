/* test-spill-room.c — the spill policy's room rules at their edges, by
 * hand (docs/model.md, "Oversubscription"), on test-replay.c's round
 * machine: device memory 100 GB/s, a 10 GB/s link with 10 us latency, a
 * 4 GiB CXL tier behind the host at 10 GB/s, 1 GiB of device memory. */
#include <string.h>

#include "replay-harness.h"

static const char *base_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"8GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"1B\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\", \"pageable_efficiency\": 0.5, \"latency\": \"10us\", \"copy_engines\": 1},"
  " \"tiers\": [{\"name\": \"cxl0\", \"capacity\": \"4GiB\", \"bandwidth\": \"10GB/s\", \"attach\": \"host\"}],"
  " \"host\": {\"capacity\": \"1TiB\", \"bandwidth\": \"1000GB/s\"},"
  " \"uvm\": {\"page\": \"64KiB\", \"evict_unit\": \"2MiB\", \"fault_batch\": 256, \"fault_latency\": \"30us\","
  "          \"first_touch\": \"host\"}}";

static double
get (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  const cJSON *cur = o;
  for (guint i = 0; parts[i] && cur; i++)
    if (cJSON_IsArray (cur))
      {
        /* an array of objects by name: memory.tiers.device */
        const cJSON *it, *found = NULL;
        cJSON_ArrayForEach (it, cur)
          {
            const cJSON *n = cJSON_GetObjectItem (it, "name");
            if (cJSON_IsString (n) && strcmp (n->valuestring, parts[i]) == 0)
              found = it;
          }
        cur = found;
      }
    else
      cur = cJSON_GetObjectItemCaseSensitive (cur, parts[i]);
  if (cur == NULL || !cJSON_IsNumber (cur))
    g_error ("no number %s in the report", path);
  return cur->valuedouble;
}

static cJSON *
spill_replay (const char *body)
{
  const char *sets[] = { "memory.capacity=1GiB", "policy.oversubscription=spill", NULL };
  g_autoptr (VsConfig) target = harness_config (base_config, sets);
  g_autoptr (VsConfig) capture = harness_config (base_config, NULL);
  return harness_replay ("{\"vramsim_trace\": 1}", body, target, capture, NULL);
}

#define MiB512 "536870912"
#define MiB128 "134217728"

/* A (512 MiB, written by a memset: 5.36870912 ms) and B (512 MiB) fill
 * the device; C (512 MiB) takes B's place (B never written: it moves for
 * free); D (512 MiB) takes A's (dirty: 10 us + 53.6870912 ms over the
 * link, the allocating call waits). D is freed: 512 MiB free; E (128 MiB)
 * fits: 384 MiB free. A kernel reads A: 512 MiB > 384 MiB free, so C,
 * the LRU device allocation, clean, moves below for free, and A swaps
 * back in: 10 us + 53.6870912 ms, the kernel's wait. The device never
 * holds more than its 1 GiB (A + E + nothing else: 640 MiB at the end).
 * Predicted: 5.36870912 + 53.6970912 + 53.6970912 + 0.001 ms. */
static void
test_swap_in_needs_room (void)
{
  cJSON *r = spill_replay (
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":2,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"memset\",\"dst\":1,\"bytes\":" MiB512 ",\"stream\":1}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":3,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":4,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"free\",\"id\":4}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":5,\"bytes\":" MiB128 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"device\"}\n");
  g_assert_cmpstr (cJSON_GetObjectItem (r, "status")->valuestring, ==, "ok");
  g_assert_cmpfloat_with_epsilon (get (r, "memory.tiers.device.peak_bytes"), 1073741824, 1);
  g_assert_cmpfloat_with_epsilon (get (r, "traffic.swap_in_bytes"), 536870912, 1);
  g_assert_cmpfloat_with_epsilon (get (r, "traffic.swap_out_bytes"), 536870912, 1);
  g_assert_cmpfloat_with_epsilon (get (r, "stalls.swap_ns"), 53697091, 1.5);
  g_assert_cmpfloat_with_epsilon (get (r, "time.predicted_ns"), 5368709 + 53697091 + 53697091 + 1000, 2.5);
  cJSON_Delete (r);
}

/* An allocation a running kernel reads is not a victim, even when it is
 * the least recently used. A and B (512 MiB each) fill the device; k1
 * (100 ms) reads A on stream 1, then k2 (1 us) reads B on stream 2, so B
 * is used after A; the host waits for stream 2. C (512 MiB) needs room:
 * A heads the LRU but k1 is running on it, so B moves below (clean:
 * free). After the device sync, k3 (1 us) reads A: resident, no swap.
 * k1 and k2 share the SMs while both run (kernels without a grid are all
 * compute): k2 takes 2 us at half, k1 loses 1 us and ends at 100.001 ms;
 * k3 then takes 1 us. Predicted: 100.002 ms. */
static void
test_running_not_evicted (void)
{
  cJSON *r = spill_replay (
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":2,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":100000000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k2\",\"stream\":2,\"dur\":1000,\"bytes\":0,\"reads\":[2]}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"stream\",\"stream\":2}\n"
    "{\"t\":0,\"op\":\"alloc\",\"id\":3,\"bytes\":" MiB512 ",\"kind\":\"device\"}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":0,\"op\":\"sync\",\"scope\":\"device\"}\n");
  g_assert_cmpstr (cJSON_GetObjectItem (r, "status")->valuestring, ==, "ok");
  g_assert_cmpfloat_with_epsilon (get (r, "traffic.swap_in_bytes"), 0, 0.5);
  g_assert_cmpfloat_with_epsilon (get (r, "traffic.swap_out_bytes"), 0, 0.5);
  g_assert_cmpfloat_with_epsilon (get (r, "stalls.swap_ns"), 0, 0.5);
  g_assert_cmpfloat_with_epsilon (get (r, "time.predicted_ns"), 100000000 + 2000, 2.5);
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/spill-room/swap-in-needs-room", test_swap_in_needs_room);
  g_test_add_func ("/spill-room/running-not-evicted", test_running_not_evicted);
  return g_test_run ();
}
