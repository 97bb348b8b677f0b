/* test-alloc-model.c — the replay with the allocator model (SPEC 5.6, 5.9;
 * sim/mem/alloc-model.part.c) against numbers computed by hand.
 *
 * The test machine: 1 GiB of device memory, a 100 MiB CUDA context,
 * 100 GB/s, granularity 2 MiB. Traces say "allocations": "tensor" unless
 * noted (the default kind then is pytorch). */
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "config/config.h"
#include "engine/replay.h"
#include "replay-harness.h"

#define MiB 1048576.0

static const char *base_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"100GB/s\", \"alloc_granularity\": \"2MiB\","
  "              \"context\": \"100MiB\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\"}}";

static cJSON *
run (const char *header, const char *const *sets, const char *body, gboolean keep_going)
{
  g_autoptr (VsConfig) cfg = harness_config (base_config, sets);
  VsReplayOptions opts = { .keep_going = keep_going };
  return harness_replay (header, body, cfg, cfg, &opts);
}

#define TENSOR "{\"vramsim_trace\": 1, \"allocations\": \"tensor\"}"
#define DRIVER "{\"vramsim_trace\": 1}"

/* Two 5 MiB tensors share one 20 MiB segment (a large-pool request below
 * 10 MiB): the device holds 100 MiB context + 20 MiB. Fragmentation at the
 * reserved peak: at most 10 MiB allocated while 20 MiB reserved,
 * 1 - 10/20 = 0.5. Freed, the segment stays cached (end 20 MiB);
 * empty_cache frees it. */
static void
test_pytorch (void)
{
  cJSON *r = run (TENSOR, NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":5242880,\"kind\":\"device\"}\n"
    "{\"t\":2,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":3,\"op\":\"free\",\"id\":2}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpstr (harness_str (r, "memory.allocator.kind"), ==, "pytorch");
  g_assert_cmpfloat (harness_num (r, "memory.context_bytes"), ==, 100 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 120 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 10 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 20 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.end_reserved_bytes"), ==, 20 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_alloc_bytes"), ==, 20 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.fragmentation_peak"), ==, 0.5);
  /* No allocator or memory warning; the one there is says the GPU ran
   * nothing in the 3 ns window (warnings[], docs/model.md section 12). */
  g_assert_cmpint (cJSON_GetArraySize (harness_at (r, "warnings")), ==, 1);
  g_assert_true (g_str_has_prefix (cJSON_GetArrayItem (harness_at (r, "warnings"), 0)->valuestring, "the GPU is idle"));
  cJSON_Delete (r);

  r = run (TENSOR, NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":2,\"op\":\"empty_cache\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.end_reserved_bytes"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
  cJSON_Delete (r);
}

/* A driver-level trace keeps the per-allocation charge: each 5 MiB
 * rounded to 6 MiB, 100 + 12 MiB on the device. */
static void
test_driver_none (void)
{
  cJSON *r = run (DRIVER, NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":5242880,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "memory.allocator.kind"), ==, "none");
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 112 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  cJSON_Delete (r);
  /* allocator.kind=pytorch on the same trace: one 20 MiB segment. */
  const char *sets[] = { "allocator.kind=pytorch", NULL };
  r = run (DRIVER, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":5242880,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 120 * MiB);
  cJSON_Delete (r);
}

/* Release and retry, then OOM, on 1 GiB - 100 MiB = 924 MiB for segments:
 * 600 MiB (segment 600) freed and cached; 400 MiB on stream 7 cannot share
 * it and 600 + 400 > 924: the cached segment is released, 400 fits (one
 * retry). Then 600 MiB more: 400 + 600 > 924, nothing cached to free: OOM,
 * with 0 B reserved but free. With --keep-going: status overflow, the
 * device overflows by 100 + 400 + 600 - 1024 = 76 MiB. */
static void
test_retry_oom (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":629145600,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":2,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":7}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":3,\"bytes\":629145600,\"kind\":\"device\",\"stream\":7}\n";
  cJSON *r = run (TENSOR, NULL, body, FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "oom");
  g_assert_cmpfloat (harness_num (r, "oom.event"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "oom.requested"), ==, 600 * MiB);
  g_assert_cmpfloat (harness_num (r, "oom.in_use"), ==, 500 * MiB);
  g_assert_cmpfloat (harness_num (r, "oom.reserved_free"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "oom.largest_free_block"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
  cJSON_Delete (r);

  r = run (TENSOR, NULL, body, TRUE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "overflow");
  g_assert_cmpfloat (harness_num (r, "memory.overflow_bytes"), ==, 76 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 1000 * MiB);
  cJSON_Delete (r);
}

/* A malloc that releases cached segments to retry synchronizes the
 * device (PyTorch's release_cached_blocks cudaFree()s them; cudaFree
 * synchronizes: issue.part.c, allocator_sync). 600 MiB freed and cached;
 * a 1 ms kernel on stream 3 from t = 1 ns (to 1,000,001 ns); at t = 3 ns
 * 400 MiB on stream 7 (host_ns 5 us) needs the cached segment released:
 * the call returns when the kernel is done, at max(3 + 5,000,
 * 1,000,001) ns, blocked 1,000,001 - 5,003 = 994,998 ns beyond its own
 * 5 us (which held the capture's wait and the driver calls). With room
 * for both (2 GiB) nothing is released and nothing waits. */
static void
test_retry_syncs (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":629145600,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k\",\"stream\":3,\"dur\":1000000,\"bytes\":0}\n"
    "{\"t\":2,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":7,\"host_ns\":5000}\n";
  cJSON *r = run (TENSOR, NULL, body, FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "host.blocked_ns"), ==, 1000001 - 5003);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 1000001);
  cJSON_Delete (r);
  const char *big[] = { "memory.capacity=2GiB", NULL };
  r = run (TENSOR, big, body, FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "host.blocked_ns"), ==, 0);
  cJSON_Delete (r);
}

/* The OOM's cache figures when the cache holds free blocks it cannot
 * release (PyTorch's "reserved by PyTorch but unallocated"): on a 132 MiB
 * device (32 MiB after the 100 MiB context), 4 MiB takes a 20 MiB large
 * segment (below 10 MiB), split: 16 MiB free; 512 KiB a 2 MiB small
 * segment, split: 1.5 MiB free. 20 MiB then needs a new 20 MiB segment
 * (the 16 MiB block is too small): 22 + 20 > 32, and both segments hold an
 * allocated block, so nothing is released. reserved_free = 16 MiB +
 * 1.5 MiB = 18,350,080 B; largest_free_block = 16 MiB. */
static void
test_oom_cache_figures (void)
{
  const char *sets[] = { "memory.capacity=132MiB", NULL };
  cJSON *r = run (TENSOR, sets,
                  "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":4194304,\"kind\":\"device\"}\n"
                  "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":524288,\"kind\":\"device\"}\n"
                  "{\"t\":2,\"op\":\"alloc\",\"id\":3,\"bytes\":20971520,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "oom");
  g_assert_cmpfloat (harness_num (r, "oom.event"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "oom.requested"), ==, 20 * MiB);
  g_assert_cmpfloat (harness_num (r, "oom.reserved_free"), ==, 18350080);
  g_assert_cmpfloat (harness_num (r, "oom.largest_free_block"), ==, 16 * MiB);
  cJSON_Delete (r);
}

/* A trace without allocations: the memory is unknown, and the report says so. */
static void
test_unknown (void)
{
  cJSON *r = run (DRIVER, NULL, "{\"t\":0,\"op\":\"kernel\",\"name\":\"k\",\"dur\":1000}\n", FALSE);
  const cJSON *w = harness_at (r, "warnings");
  g_assert_cmpint (cJSON_GetArraySize (w), ==, 1);
  g_assert_nonnull (strstr (cJSON_GetArrayItem (w, 0)->valuestring, "memory unknown"));
  cJSON_Delete (r);
}

/* No warning about the allocator under any policy (it used to say the model
 * ran under oom only). */
static void
assert_no_allocator_warning (const cJSON *r)
{
  const cJSON *w;
  cJSON_ArrayForEach (w, harness_at (r, "warnings"))
    {
      g_assert_null (strstr (w->valuestring, "allocator"));
      g_assert_null (strstr (w->valuestring, "memory unknown"));
    }
}


/* The policy tests' start: A (id 1) and B (id 2), 400 MiB each, written
 * by k1 and k2 on stream 1, a sync, then C (id 3), 400 MiB, which does
 * not fit beside them in the 924 MiB left (1 GiB less the 100 MiB
 * context). */
#define AB_WRITTEN_THEN_C \
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\"}\n" \
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\"}\n" \
    "{\"t\":2,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[1]}\n" \
    "{\"t\":3,\"op\":\"kernel\",\"name\":\"k2\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[2]}\n" \
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n" \
    "{\"t\":5,\"op\":\"alloc\",\"id\":3,\"bytes\":419430400,\"kind\":\"device\"}\n"

/* Three 400 MiB tensors (each >= 10 MiB: a segment of its size) on the
 * 924 MiB the context leaves, under spill. k1 writes A (id 1), k2 B (id 2).
 *  - C's alloc: 800 + 400 > 924, nothing cached to release (retry 1):
 *    the LRU tensor A (touched at k1, before B at k2) is dirty and goes to
 *    the host, 400 MiB over [device_mem, link_d2h, host_mem] after 10 us;
 *    its block returns to its segment, which then serves C (best fit,
 *    stream 0): no new segment.
 *  - k3 (stream 1) reads A: a block for A: 800 + 400 > 924 (retry 2,
 *    nothing cached); victim B (C is newer), dirty, out; B's free block
 *    serves A (the trace's allocations name no stream, so the model keys
 *    A's new block by stream 0 as all of them: no segment freed or made;
 *    keyed by stream 1 it took a third retry, B's segment freed and a
 *    third made); A comes in, 400 MiB over [host_mem, link_h2d,
 *    device_mem] after 10 us.
 * swap_out 800 MiB, swap_in 400 MiB; k3 waits 2 x (10,000 + 419,430,400 B
 * / 10 GB/s = 41,943,040) = 83,906,080 ns (stalls.swap_ns). Time: k1
 * 2-1002, k2 1002-2002, the sync returns at 2002, C's alloc at 2003 waits
 * for A's move (41,953,040): 41,955,043; k3 issued at 41,955,044, runs
 * after its 83,906,080 ns of swap-in: ends 41,955,044 + 83,906,080 + 1000
 * = 125,862,124 ns. Reserved and allocated peak at 800 MiB (device 100 +
 * 800 = 900 MiB); the host holds B and A's clean copy, 800 MiB. */
static void
test_spill (void)
{
  const char *sets[] = { "policy.oversubscription=spill", NULL };
  cJSON *r = run (TENSOR, sets,
    AB_WRITTEN_THEN_C
    "{\"t\":6,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":7,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpstr (harness_str (r, "memory.allocator.kind"), ==, "pytorch");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.end_reserved_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 900 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_in_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "stalls.swap_ns"), ==, 83906080);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 125862124);
  assert_no_allocator_warning (r);
  cJSON_Delete (r);
}

/* The same three tensors under direct: C's alloc fails after the retry (1)
 * and C goes to the host outside the allocator (400 MiB there; reserved
 * and allocated stay 800 MiB, device 900 MiB). k1 reads A on the device:
 * 419,430,400 B at 100 GB/s = 4,194,304 ns, as captured; k2 reads C over
 * [host_mem, link_h2d]: / 10 GB/s = 41,943,040 ns. Issued at t = 3:
 * 3 + 4,194,304 + 41,943,040 = 46,137,347 ns. */
static void
test_direct (void)
{
  const char *sets[] = { "policy.oversubscription=direct", NULL };
  cJSON *r = run (TENSOR, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":2,\"op\":\"alloc\",\"id\":3,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":3,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":4194304,\"bytes\":419430400,\"reads\":[1]}\n"
    "{\"t\":4,\"op\":\"kernel\",\"name\":\"k2\",\"stream\":1,\"dur\":4194304,\"bytes\":419430400,\"reads\":[3]}\n"
    "{\"t\":5,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 900 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 46137347);
  assert_no_allocator_warning (r);
  cJSON_Delete (r);
}

/* Under uvm the segments are managed: no cudaMalloc fails, so C's 400 MiB
 * segment is made beside A's and B's although 1200 > 924 MiB (no retry,
 * nothing released: reserved and allocated peak at 1200 MiB). Pages fault
 * in per tensor as kernels touch them (64 KiB pages, 2 MiB evict units,
 * 256 faults a batch at 30 us):
 *  - k1 writes A: 6400 pages, first touch on the device (created there,
 *    0 B moved): 25 batches = 750,000 ns; k1 runs 750,002-751,002. k2
 *    writes B likewise: 751,002 + 750,000, ends 1,502,002 (the sync).
 *  - k3 (issued 1,502,004) writes C: 100 + 800 + 400 - 1024 = 276 MiB
 *    must go: A's (LRU) 138 units, dirty, written back over
 *    [device_mem, link_d2h]: 289,406,976 B / 10 GB/s = 28,940,697.6 ns,
 *    then C's 6400 pages created (750,000): k3 ends 1,502,004 +
 *    28,940,697.6 + 750,000 + 1000 = 31,193,701.6.
 *  - k4 reads A: its 276 MiB come back: B's 276 MiB (LRU now) written back
 *    (28,940,697.6), 4416 faults = 18 batches (540,000), 276 MiB over
 *    [link_h2d, device_mem] (28,940,697.6): ends 31,193,701.6 +
 *    58,421,395.2 + 1000 = 89,616,096.8 ns.
 * Faults 6400 x 3 + 4416 = 23,616, fault_bytes 276 MiB, write-back
 * 552 MiB; the device peaks full (1024 MiB), the host at 800 MiB (A's
 * and B's segments before k1: reserved minus resident). */
static void
test_uvm (void)
{
  const char *sets[] = { "policy.oversubscription=uvm", NULL };
  cJSON *r = run (TENSOR, sets,
    AB_WRITTEN_THEN_C
    "{\"t\":6,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[3]}\n"
    "{\"t\":7,\"op\":\"kernel\",\"name\":\"k4\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":8,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 1200 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 1200 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 1024 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.faults"), ==, 23616);
  g_assert_cmpfloat (harness_num (r, "traffic.fault_bytes"), ==, 276 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.writeback_bytes"), ==, 552 * MiB);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 89616097);
  assert_no_allocator_warning (r);
  cJSON_Delete (r);
}

/* Under spill the allocator frees its cache before anything moves. A
 * 600 MiB tensor freed stays cached on stream 0; B (400 MiB, stream 7)
 * cannot use it and 600 + 400 > 924: the retry (1) releases the cached
 * segment (segment_free 1) and B's is made, nothing spilled. C (600 MiB,
 * stream 7): 400 + 600 > 924, nothing cached (retry 2): B, the only
 * tensor, goes to the host, for free (never written: no copy, 400 MiB
 * charged there); its free segment is too small for C, so the retry (3)
 * releases it (segment_free 2) and C's is made. Device 100 + 600 =
 * 700 MiB at most. */
static void
test_spill_cache_first (void)
{
  const char *sets[] = { "policy.oversubscription=spill", NULL };
  cJSON *r = run (TENSOR, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":629145600,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":2,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":7}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":3,\"bytes\":629145600,\"kind\":\"device\",\"stream\":7}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 600 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 700 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
  cJSON_Delete (r);
}

/* A spilled tensor freed by the host (a stream-ordered free queued behind
 * k3, which reads it) is not swapped back in: its id may name a new
 * tensor's block by then (it did: a CRITICAL in the model, then a block
 * that was never freed). As test_spill, A (id 1) goes to the host at C's
 * alloc (41,953,040 ns from 2003: 41,955,043); k0 (1 ms) holds stream 1
 * from 41,955,044; k3 reads A where it lies (no swap-in) and ends at
 * 42,956,044, the free op releases A, the sync returns. The new id 1 at
 * 42,956,045: B (the LRU, dirty) goes out (41,953,040 ns) and its
 * segment serves the new tensor: 84,909,085, the sync at 84,909,086.
 * swap_out 800 MiB, swap_in 0; the host holds at most one of them. */
static void
test_spill_freed (void)
{
  const char *sets[] = { "policy.oversubscription=spill", NULL };
  cJSON *r = run (TENSOR, sets,
    AB_WRITTEN_THEN_C
    "{\"t\":6,\"op\":\"kernel\",\"name\":\"k0\",\"stream\":1,\"dur\":1000000,\"bytes\":0}\n"
    "{\"t\":7,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":8,\"op\":\"free\",\"id\":1,\"stream\":1}\n"
    "{\"t\":9,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":10,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":11,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_in_bytes"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.end_reserved_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 84909086);
  cJSON_Delete (r);
}

/* Under uvm the managed segments are host memory until touched: with a
 * 1 GiB host, A's and B's 400 MiB segments take 800 MiB of it; C's would
 * make 1200 MiB: an OOM of the host at event 2, 800 MiB in use. */
static void
test_uvm_host_oom (void)
{
  const char *sets[] = { "policy.oversubscription=uvm", "host.capacity=1GiB", NULL };
  cJSON *r = run (TENSOR, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":2,\"op\":\"alloc\",\"id\":3,\"bytes\":419430400,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "oom");
  g_assert_cmpstr (harness_str (r, "oom.memory"), ==, "host");
  g_assert_cmpfloat (harness_num (r, "oom.event"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "oom.in_use"), ==, 800 * MiB);
  cJSON_Delete (r);
  /* Expandable segments map physical device memory, which cannot be
   * managed: off under uvm, with a warning. */
  const char *sets2[] = { "policy.oversubscription=uvm", "allocator.expandable_segments=true", NULL };
  r = run (TENSOR, sets2,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 20 * MiB);
  g_assert_nonnull (strstr (cJSON_GetArrayItem (harness_at (r, "warnings"), 0)->valuestring, "expandable_segments is off"));
  cJSON_Delete (r);
}

/* --keep-going past the device with expandable segments: a 2 GiB tensor
 * is larger than the 1 1/8 GiB range sized from the device; the range is
 * made large enough (it ran off its end: a crash). 2048 MiB in 20 MiB
 * pages: 103 pages, 2060 MiB reserved; status overflow. */
static void
test_expandable_overflow (void)
{
  const char *sets[] = { "allocator.expandable_segments=true", NULL };
  cJSON *r = run (TENSOR, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":2147483648,\"kind\":\"device\"}\n", TRUE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "overflow");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 2060 * MiB);
  cJSON_Delete (r);
}

/* Resident managed memory makes room for the allocator's segment, as the
 * driver evicts managed pages for cudaMalloc, under oom as under spill
 * (it was an OOM under oom). k1 writes 600 MiB of managed memory: 9600
 * pages created on the device, 38 batches (1,140,000 ns), k1 ends at
 * 1,141,001 (the sync). A 400 MiB tensor's segment: 100 + 600 + 400 -
 * 1024 = 76 MiB of the managed allocation (38 units, dirty) is written
 * back, 79,691,776 B / 10 GB/s = 7,969,177.6 ns from 1,141,002: the sync
 * at 9,110,180.6 (9,110,181). The device peaks full; the host held the
 * 600 MiB before k1 touched them. */
static void
test_managed_evicted (void)
{
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":629145600,\"kind\":\"managed\"}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[1]}\n"
    "{\"t\":2,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":3,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\"}\n"
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n";
  for (guint i = 0; i < 2; i++)
    {
      const char *sets[] = { i == 0 ? "policy.oversubscription=oom" : "policy.oversubscription=spill", NULL };
      cJSON *r = run (TENSOR, sets, body, FALSE);
      g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
      g_assert_cmpfloat (harness_num (r, "traffic.writeback_bytes"), ==, 76 * MiB);
      g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 400 * MiB);
      g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 1024 * MiB);
      g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 600 * MiB);
      g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 9110181);
      cJSON_Delete (r);
    }
}

/* A warm start from the header (a snapshot window): a 20 MiB segment with
 * id 1's 4 MiB block at its start. id 1's alloc takes that block, id 2's
 * 8 MiB the free 16 MiB after it: no new segment, reserved stays 20 MiB. */
static void
test_seeded (void)
{
  cJSON *r = run ("{\"vramsim_trace\": 1, \"allocations\": \"tensor\", \"allocator_state\":"
                  " {\"segments\": [[1099511627776, 20971520, 0, \"large\", false]],"
                  "  \"blocks\": [[1, 1099511627776, 4194304]]}}", NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":4194304,\"kind\":\"device\"}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":8388608,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 20 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 120 * MiB);
  cJSON_Delete (r);
}

/* A profiler window's cache (reserved_bytes) larger than the device: it is
 * released at the start, as PyTorch would at its first failed cudaMalloc,
 * and the replay starts from the context alone: a 5 MiB tensor then makes
 * a 20 MiB segment (peak 120 MiB, status ok). On a device it fits, the
 * 512 MiB cache serves the segment: 100 + 512 MiB, no new segment. */
static void
test_seeded_cache (void)
{
  cJSON *r = run ("{\"vramsim_trace\": 1, \"allocations\": \"tensor\","
                  " \"allocator_state\": {\"reserved_bytes\": 2147483648}}", NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 120 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 20 * MiB);
  cJSON_Delete (r);
  r = run ("{\"vramsim_trace\": 1, \"allocations\": \"tensor\","
           " \"allocator_state\": {\"reserved_bytes\": 536870912}}", NULL,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":5242880,\"kind\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 612 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 0);
  cJSON_Delete (r);
}

/* UVM, a free that the host makes before the GPU reaches the kernel that
 * uses the memory: k0 (1 ms) holds stream 1, k1 reading 64 MiB of managed
 * memory queues behind it, the host frees at t = 2 ns. k1 still faults
 * its 1024 pages in when it starts (64 MiB over the link, first touch on
 * the host), and the device holds context + 64 MiB = 164 MiB meanwhile;
 * before the fix it faulted nothing. */
static void
test_uvm_early_free (void)
{
  const char *sets[] = { "uvm.first_touch=host", NULL };
  cJSON *r = run (DRIVER, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":67108864,\"kind\":\"managed\"}\n"
    "{\"t\":0,\"op\":\"kernel\",\"name\":\"k0\",\"stream\":1,\"dur\":1000000,\"bytes\":0}\n"
    "{\"t\":1,\"op\":\"kernel\",\"name\":\"k1\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":2,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":3,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "traffic.faults"), ==, 1024);
  g_assert_cmpfloat (harness_num (r, "traffic.fault_bytes"), ==, 64 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 164 * MiB);
  cJSON_Delete (r);
}

/* Cross-stream reuse (record_stream; sim/mem/alloc-streams.part.c). Every
 * tensor is 12 MiB on stream 1: a large-pool request of at least 10 MiB
 * gets a segment of its size rounded to 2 MiB, 12 MiB, with nothing left
 * to split, so a second tensor either takes a freed block or makes a new
 * 12 MiB segment. The host frees id 1 at t = 2 ns, while a 1 ms kernel on
 * stream 2 that reads it still runs (kernels take their captured time:
 * capture and target are one machine). */
#define XS_ALLOC(t, id) "{\"t\":" #t ",\"op\":\"alloc\",\"id\":" #id ",\"bytes\":12582912,\"kind\":\"device\",\"stream\":1}\n"
#define XS_KERNEL(t, name, stream, reads) \
  "{\"t\":" #t ",\"op\":\"kernel\",\"name\":\"" name "\",\"stream\":" #stream ",\"dur\":1000000,\"bytes\":0,\"reads\":[" reads "]}\n"
#define XS_FREE(t, id) "{\"t\":" #t ",\"op\":\"free\",\"id\":" #id "}\n"

static void
test_cross_stream (void)
{
  /* Used on stream 2, freed while that kernel runs: id 2 cannot have the
   * block, a new segment: reserved 24 MiB (2 segments), device 100 + 24.
   * Allocated drops at the free (PyTorch's free() counts it out before
   * insert_events): at most 12 MiB; at the reserved peak 12 of 24 MiB,
   * fragmentation 1 - 12/24 = 0.5. */
  cJSON *r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1) XS_ALLOC (3, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 24 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.fragmentation_peak"), ==, 0.5);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 124 * MiB);
  cJSON_Delete (r);

  /* ... and once stream 2 has run (the host syncs on it), id 3 takes id
   * 1's block: still 2 segments, 24 MiB; allocated 12 + 12 = 24 MiB. Were
   * the block never returned, id 3 would make a third (36 MiB). */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1) XS_ALLOC (3, 2)
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"stream\",\"stream\":2}\n" XS_ALLOC (5, 3), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 24 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 24 * MiB);
  cJSON_Delete (r);

  /* The host waits for stream 2 before it allocates: the block is back,
   * id 2 takes it: one 12 MiB segment. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1)
    "{\"t\":3,\"op\":\"sync\",\"scope\":\"stream\",\"stream\":2}\n" XS_ALLOC (4, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 12 * MiB);
  cJSON_Delete (r);

  /* Same stream (the kernel on stream 1, the tensor's own): reusable at
   * once by later work on it, as before: id 2 takes the block while the
   * kernel still runs, one segment. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 1, "1") XS_FREE (2, 1) XS_ALLOC (3, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 12 * MiB);
  cJSON_Delete (r);

  /* The event is stream 2's work queued before the free, not the kernel
   * that used the block: k1 reads id 1, k2 (no ids) is queued after it,
   * then the free. The host waits for an event recorded after k1 (k1 has
   * run, k2 runs until 2 ms): id 2 still makes a new segment. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k1", 2, "1")
    "{\"t\":2,\"op\":\"event_record\",\"event\":9,\"stream\":2}\n"
    XS_KERNEL (3, "k2", 2, "") XS_FREE (4, 1)
    "{\"t\":5,\"op\":\"sync\",\"scope\":\"event\",\"event\":9}\n" XS_ALLOC (6, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  cJSON_Delete (r);

  /* A memset on stream 2 records it too (copies and memsets as kernels). */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1)
    "{\"t\":1,\"op\":\"memset\",\"dst\":1,\"bytes\":12582912,\"stream\":2,\"async\":true,\"dur\":1000000}\n"
    XS_FREE (2, 1) XS_ALLOC (3, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  cJSON_Delete (r);

  /* empty_cache while the block waits: PyTorch synchronises on its events
   * (synchronize_and_free_events: the host waits for the kernel, which
   * started at about 1 ns + launch latency and runs 1 ms, from t = 3 ns),
   * then releases the block's segment: one segment freed, id 2 makes a
   * new one, 12 MiB at the end. The host is blocked for the rest of the
   * kernel: 1 ms less the few microseconds it had run. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1)
    "{\"t\":3,\"op\":\"empty_cache\"}\n" XS_ALLOC (4, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.end_reserved_bytes"), ==, 12 * MiB);
  g_assert_cmpfloat (harness_num (r, "host.blocked_ns"), >, 0.99e6);
  g_assert_cmpfloat (harness_num (r, "host.blocked_ns"), <=, 1e6);
  cJSON_Delete (r);
  /* The same on the tensor's own stream: no event to wait for, the
   * segment is released at once (reserved ends at 12 MiB from id 2's new
   * one); but its cudaFree synchronizes the device (issue.part.c,
   * allocator_sync): the host waits for the kernel, which runs from 1 ns
   * to 1,000,001 ns, from the empty_cache at 3 ns: 999,998 ns blocked. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 1, "1") XS_FREE (2, 1)
    "{\"t\":3,\"op\":\"empty_cache\"}\n" XS_ALLOC (4, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
  g_assert_cmpfloat (harness_num (r, "host.blocked_ns"), ==, 1000001 - 3);
  cJSON_Delete (r);

  /* Two blocks freed while one kernel on stream 2 reads both wait for it
   * together (one FreeBatch): ids 3 and 4 make two new segments (4 in
   * all, 48 MiB); after a sync on stream 2 they take both blocks back
   * (2 segments, 24 MiB). */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_ALLOC (1, 2) XS_KERNEL (2, "k", 2, "1, 2") XS_FREE (3, 1) XS_FREE (4, 2)
    XS_ALLOC (5, 3) XS_ALLOC (6, 4), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 4);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 48 * MiB);
  cJSON_Delete (r);
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_ALLOC (1, 2) XS_KERNEL (2, "k", 2, "1, 2") XS_FREE (3, 1) XS_FREE (4, 2)
    "{\"t\":5,\"op\":\"sync\",\"scope\":\"stream\",\"stream\":2}\n" XS_ALLOC (6, 3) XS_ALLOC (7, 4), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 24 * MiB);
  cJSON_Delete (r);

  /* An allocation whose event names no stream (profilers, generators)
   * belongs to its first op's stream: used on stream 5 alone, it is
   * reusable at once (one segment); used on 5 then on 6, it waits for 6
   * (two). */
#define XS_ALLOC0(t, id) "{\"t\":" #t ",\"op\":\"alloc\",\"id\":" #id ",\"bytes\":12582912,\"kind\":\"device\"}\n"
  r = run (TENSOR, NULL,
    XS_ALLOC0 (0, 1) XS_KERNEL (1, "k", 5, "1") XS_FREE (2, 1) XS_ALLOC0 (3, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 1);
  cJSON_Delete (r);
  r = run (TENSOR, NULL,
    XS_ALLOC0 (0, 1) XS_KERNEL (1, "k1", 5, "1") XS_KERNEL (2, "k2", 6, "1") XS_FREE (3, 1) XS_ALLOC0 (4, 2),
    FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  cJSON_Delete (r);

  /* A trace that reuses id 1 while its first block still waits: the first
   * free's block (segment A) is pending, the second id 1 makes segment B,
   * is used on stream 2 and freed; that free returns A (one pending block
   * per id) and B waits. id 2 then takes A: 2 segments. */
  r = run (TENSOR, NULL,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k1", 2, "1") XS_FREE (2, 1)
    XS_ALLOC (3, 1) XS_KERNEL (4, "k2", 2, "1") XS_FREE (5, 1) XS_ALLOC (6, 2), FALSE);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 24 * MiB);
  cJSON_Delete (r);
}

/* The cross-stream rule under the policies that place tensors themselves
 * (alloc-policy.part.c): tensors placed by spill, direct and uvm take
 * their home stream as the model's own do. The XS_ tensors as above (12
 * MiB on stream 1, a 1 ms kernel on stream 2 reading id 1, freed at
 * t = 2 ns while it runs). */
static void
test_cross_stream_policies (void)
{
  const char *spill[] = { "policy.oversubscription=spill", NULL };
  const char *direct[] = { "policy.oversubscription=direct", NULL };
  const char *uvm[] = { "policy.oversubscription=uvm", NULL };
  const char *const *policies[] = { spill, direct, uvm };
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      /* id 2 (t = 3 ns) cannot have id 1's block while k runs: a second
       * 12 MiB segment (under uvm a managed one), 24 MiB reserved; at most
       * 12 MiB allocated (id 1 counted out at its free); nothing released,
       * nothing moved (24 + 100 MiB fit the 1 GiB device). */
      cJSON *r = run (TENSOR, policies[i],
        XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1) XS_ALLOC (3, 2)
        "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
      g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
      g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 0);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 0);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 24 * MiB);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_allocated_bytes"), ==, 12 * MiB);
      g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
      cJSON_Delete (r);

      /* Once k has run (the host syncs on stream 2 at t = 3), id 2 takes
       * the block: one segment, 12 MiB. */
      r = run (TENSOR, policies[i],
        XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1)
        "{\"t\":3,\"op\":\"sync\",\"scope\":\"stream\",\"stream\":2}\n" XS_ALLOC (4, 2)
        "{\"t\":5,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 1);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 12 * MiB);
      cJSON_Delete (r);
    }

  /* Under uvm the pending block is managed memory no tensor holds: from
   * k's end the host holds it (reserved 24 - live 12 MiB); id 2, never
   * touched, 12 MiB more there: 24 MiB of host. k's read creates id 1's
   * 192 pages (12 MiB / 64 KiB) on the device, nothing migrated; the
   * device peaks at 100 + 12 MiB. */
  cJSON *r = run (TENSOR, uvm,
    XS_ALLOC (0, 1) XS_KERNEL (1, "k", 2, "1") XS_FREE (2, 1) XS_ALLOC (3, 2)
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpfloat (harness_num (r, "traffic.faults"), ==, 192);
  g_assert_cmpfloat (harness_num (r, "traffic.fault_bytes"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 112 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 24 * MiB);
  cJSON_Delete (r);

  /* The waiting block is what avoids a spill. 400 MiB tensors (a segment
   * each) on the 924 MiB the context leaves: A (id 1) read by a 1 ms
   * kernel on stream 2, B (id 2) written on stream 1 (dirty: spilling it
   * would copy 400 MiB), A freed at t = 4 while k runs. C (id 3, t = 5):
   * 400 (B) + 400 (A, waiting) + 400 > 924: the malloc fails, and
   * release_cached_blocks first synchronises on the events
   * (synchronize_and_free_events: A's block is back), then frees the
   * cached unsplit segments (A's: segment_free 1); the retry (1) makes
   * C's segment (3 in all): 800 MiB reserved at most, nothing spilled or
   * placed below, the host holds nothing. The same under direct. */
  const char *body =
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":2,\"op\":\"kernel\",\"name\":\"kw\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[2]}\n"
    "{\"t\":3,\"op\":\"kernel\",\"name\":\"k\",\"stream\":2,\"dur\":1000000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":4,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":5,\"op\":\"alloc\",\"id\":3,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":6,\"op\":\"kernel\",\"name\":\"kc\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[3]}\n"
    "{\"t\":7,\"op\":\"sync\",\"scope\":\"device\"}\n";
  for (guint i = 0; i < 2; i++)
    {
      r = run (TENSOR, policies[i], body, FALSE);
      g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
      g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 3);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 1);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 1);
      g_assert_cmpfloat (harness_num (r, "memory.allocator.peak_reserved_bytes"), ==, 800 * MiB);
      g_assert_cmpfloat (harness_num (r, "memory.tiers.0.peak_bytes"), ==, 900 * MiB);
      g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 0);
      g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 0);
      cJSON_Delete (r);
    }

  /* Under spill a tensor swapped back in has a new block on its op's
   * stream and forgets the streams of its old one. 400 MiB tensors, all
   * allocated on stream 1: A written on stream 2 (A records stream 2), B
   * on stream 1. C's alloc: 800 + 400 > 924 (retry 1, nothing cached):
   * A (LRU) goes to the host, its block serves C. k3 on stream 1 reads
   * A: retry 2, B (LRU) out, its block serves A (stream 1). Then klong
   * (1 ms, no ids) is queued on stream 2 and the host frees A: A's block
   * has been used on stream 1 alone since it came back, so D (stream 1)
   * takes it at once: 2 segments, no more retries (its eviction forgot
   * the old block's streams, and the new block starts with none). Had A
   * kept stream 2 from its first block, A's free would wait for klong and D's alloc
   * would fail, release A's segment and make a third (retries 3).
   * swap_out 800 MiB (A and B, both written), swap_in 400 MiB (A). */
  r = run (TENSOR, spill,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":2,\"op\":\"kernel\",\"name\":\"kA\",\"stream\":2,\"dur\":1000,\"bytes\":0,\"writes\":[1]}\n"
    "{\"t\":3,\"op\":\"kernel\",\"name\":\"kB\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[2]}\n"
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":5,\"op\":\"alloc\",\"id\":3,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":6,\"op\":\"kernel\",\"name\":\"k3\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"reads\":[1]}\n"
    "{\"t\":7,\"op\":\"kernel\",\"name\":\"klong\",\"stream\":2,\"dur\":1000000,\"bytes\":0}\n"
    "{\"t\":8,\"op\":\"free\",\"id\":1}\n"
    "{\"t\":9,\"op\":\"alloc\",\"id\":4,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":10,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 0);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 800 * MiB);
  g_assert_cmpfloat (harness_num (r, "traffic.swap_in_bytes"), ==, 400 * MiB);
  cJSON_Delete (r);
}

/* Under spill the victim is never a tensor the host has freed. A
 * (300 MiB) and B (400 MiB), both written on stream 1; k0 (1 ms) holds
 * stream 1 and the host frees A behind it (a stream-ordered free: A stays
 * until k0 has run, while the model has its block back at once). C
 * (600 MiB) at 2005 ns (kA 2-1002, kB 1002-2002, the sync returns at
 * 2002, k0 and the free take 2003 and 2004): 400 + 300 + 600 > 924, the
 * retry (1) releases A's cached segment (segment_free 1), 400 + 600 > 924
 * still; the victim is B, not A (A's bytes are dead, and moving them makes
 * no room): B out, 10 us + 419,430,400 B / 10 GB/s = 41,953,040 ns; the
 * retry (2) releases B's segment (segment_free 2) and makes C's (3
 * segments). C's alloc returns at 2005 + 41,953,040 = 41,955,045, the
 * sync at 41,955,046. swap_out 400 MiB and the host holds 400 MiB; when A
 * was taken first, 700 MiB went out (A's 300 for nothing), 3 retries,
 * 73.4 ms. */
static void
test_spill_not_freed (void)
{
  const char *sets[] = { "policy.oversubscription=spill", NULL };
  cJSON *r = run (TENSOR, sets,
    "{\"t\":0,\"op\":\"alloc\",\"id\":1,\"bytes\":314572800,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":1,\"op\":\"alloc\",\"id\":2,\"bytes\":419430400,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":2,\"op\":\"kernel\",\"name\":\"kA\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[1]}\n"
    "{\"t\":3,\"op\":\"kernel\",\"name\":\"kB\",\"stream\":1,\"dur\":1000,\"bytes\":0,\"writes\":[2]}\n"
    "{\"t\":4,\"op\":\"sync\",\"scope\":\"device\"}\n"
    "{\"t\":5,\"op\":\"kernel\",\"name\":\"k0\",\"stream\":1,\"dur\":1000000,\"bytes\":0}\n"
    "{\"t\":6,\"op\":\"free\",\"id\":1,\"stream\":1}\n"
    "{\"t\":7,\"op\":\"alloc\",\"id\":3,\"bytes\":629145600,\"kind\":\"device\",\"stream\":1}\n"
    "{\"t\":8,\"op\":\"sync\",\"scope\":\"device\"}\n", FALSE);
  g_assert_cmpstr (harness_str (r, "status"), ==, "ok");
  g_assert_cmpfloat (harness_num (r, "traffic.swap_out_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.tiers.1.peak_bytes"), ==, 400 * MiB);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_allocs"), ==, 3);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.segment_frees"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "memory.allocator.retries"), ==, 2);
  g_assert_cmpfloat (harness_num (r, "time.predicted_ns"), ==, 41955046);
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/alloc-model/retry-syncs-the-device", test_retry_syncs);
  g_test_add_func ("/alloc-model/pytorch", test_pytorch);
  g_test_add_func ("/alloc-model/driver-none", test_driver_none);
  g_test_add_func ("/alloc-model/retry-oom", test_retry_oom);
  g_test_add_func ("/alloc-model/unknown", test_unknown);
  g_test_add_func ("/alloc-model/spill", test_spill);
  g_test_add_func ("/alloc-model/direct", test_direct);
  g_test_add_func ("/alloc-model/uvm", test_uvm);
  g_test_add_func ("/alloc-model/spill-cache-first", test_spill_cache_first);
  g_test_add_func ("/alloc-model/spill-freed", test_spill_freed);
  g_test_add_func ("/alloc-model/uvm-host-oom", test_uvm_host_oom);
  g_test_add_func ("/alloc-model/expandable-overflow", test_expandable_overflow);
  g_test_add_func ("/alloc-model/managed-evicted", test_managed_evicted);
  g_test_add_func ("/alloc-model/seeded", test_seeded);
  g_test_add_func ("/alloc-model/seeded-cache", test_seeded_cache);
  g_test_add_func ("/alloc-model/uvm-early-free", test_uvm_early_free);
  g_test_add_func ("/alloc-model/oom-cache-figures", test_oom_cache_figures);
  g_test_add_func ("/alloc-model/cross-stream", test_cross_stream);
  g_test_add_func ("/alloc-model/cross-stream-policies", test_cross_stream_policies);
  g_test_add_func ("/alloc-model/spill-not-freed", test_spill_not_freed);
  return g_test_run ();
}
