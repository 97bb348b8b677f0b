/* test-collective.c — collectives in the replay (sim/model/collective.part.c,
 * SPEC 5.8) against times worked out by hand: identity on the capture
 * config, the network model's time on another fabric with the unexplained
 * part kept, a collective beside a GEMM on another stream, and
 * network.ranks sizing the job. Network constants as in test-network.c:
 * ring Simple base 8400 ns, LL 6600 at half the rate; the config's
 * fabric is the default PCIe kind (no LL128) with 0 ns steps. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "engine/replay.h"
#include "model/network.h"
#include "replay-harness.h"

/* 8 GPUs a node over 300 GB/s with no step latency; 25 GB/s NICs. */
static const char *base_config =
  "{\"name\": \"t\", \"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"8GiB\", \"bandwidth\": \"1000GB/s\"},"
  " \"link\": {\"bandwidth\": \"10GB/s\"},"
  " \"network\": {\"ranks_per_node\": 8, \"intra\": {\"bandwidth\": \"300GB/s\", \"latency\": \"0ns\"},"
  "               \"inter\": {\"bandwidth\": \"25GB/s\", \"latency\": \"0ns\"}}}";

static VsConfig *
make_config (const char *const *sets)
{
  return harness_config (base_config, sets);
}

/* Replays BODY on the test machine changed by TARGET_SETS; the capture
 * machine is the plain one. */
static cJSON *
replay (const char *const *target_sets, const char *body)
{
  g_autoptr (VsConfig) target = make_config (target_sets);
  g_autoptr (VsConfig) capture = make_config (NULL);
  return harness_replay ("{\"vramsim_trace\": 1}", body, target, capture, NULL);
}

static double
num (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  const cJSON *cur = o;
  for (guint i = 0; parts[i] && cur; i++)
    cur = cJSON_GetObjectItemCaseSensitive (cur, parts[i]);
  if (!cJSON_IsNumber (cur))
    g_error ("no number %s in the report", path);
  return cur->valuedouble;
}

/* kernels.top[] entry NAME's predicted_ns. */
static double
kernel_ns (const cJSON *r, const char *name)
{
  const cJSON *it;
  cJSON_ArrayForEach (it, cJSON_GetObjectItem (cJSON_GetObjectItem (r, "kernels"), "top"))
    if (strcmp (cJSON_GetObjectItem (it, "name")->valuestring, name) == 0)
      return cJSON_GetObjectItem (it, "predicted_ns")->valuedouble;
  g_error ("no kernel %s", name);
  return 0;
}

/* 64 MiB all-reduce on 8 ranks, captured at 600 us. */
#define AR8 "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ar\", \"stream\": 2, \"dur\": 600000," \
            " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 67108864, \"ranks\": 8}}\n"

static void
test_identity_and_target (void)
{
  /* On the capture config alone: the captured 600000 ns. */
  cJSON *r = replay (NULL, AR8);
  g_assert_cmpfloat (kernel_ns (r, "ar"), ==, 600000);
  g_assert_cmpfloat (num (r, "network.collectives"), ==, 1);
  g_assert_cmpfloat (num (r, "network.bytes"), ==, 67108864);
  g_assert_cmpfloat (num (r, "network.busy_ns"), ==, 600000);
  g_assert_cmpfloat (num (r, "network.exposed_ns"), ==, 600000);
  g_assert_cmpfloat (num (r, "network.ranks"), ==, 8);
  cJSON_Delete (r);

  /* Half the intra-node bandwidth. net0: ring Simple, 8400 + 2·7/8·2^26
   * = 117440512 B / 300e9 = 391468.4 -> 399868 (LL 6600 + 782936.7 and
   * the tree 8400 + 2^27/(276e9·.8) are slower); net1 = 8400 +
   * 117440512/150e9 = 791337. d1 = net1 + (d0 - net0) = 791337 + 200132 =
   * 991469. */
  const char *half[] = { "network.intra.bandwidth=150GB/s", NULL };
  r = replay (half, AR8);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar") - 991469), <=, 1);
  cJSON_Delete (r);

  /* The unexplained part scales as compute: at twice the tflops it halves.
   * 399868 + 200132/2 = 499934. */
  const char *fast[] = { "compute.tflops=200", NULL };
  r = replay (fast, AR8);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar") - 499934), <=, 1);
  cJSON_Delete (r);
}

static void
test_beside_gemm (void)
{
  /* A 1 ms compute-bound GEMM on stream 1 and a 500 us collective on stream
   * 2, both issued at t 0 (the collective's modeled time is far below its
   * captured one, so it takes 500 us here too). The collective holds 0.15
   * of the SMs: the GEMM runs at 0.85 for 500 us (425 us of its work),
   * then alone for the remaining 575 us: it ends at 1075 us. The collective
   * is never exposed: the GEMM runs beside it all along. */
  const char *body =
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"gemm\", \"stream\": 1, \"dur\": 1000000, \"compute_ns\": 1000000, \"bytes\": 0}\n"
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ar\", \"stream\": 2, \"dur\": 500000, \"bytes\": 0,"
    " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 8}}\n";
  cJSON *r = replay (NULL, body);
  g_assert_cmpfloat (fabs (kernel_ns (r, "gemm") - 1075000), <=, 1);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar") - 500000), <=, 1);
  g_assert_cmpfloat (num (r, "network.busy_ns"), ==, 500000);
  g_assert_cmpfloat (num (r, "network.exposed_ns"), ==, 0);
  cJSON_Delete (r);

  /* After the GEMM (same stream, in order): all of it exposed. */
  const char *serial =
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"gemm\", \"stream\": 1, \"dur\": 1000000, \"compute_ns\": 1000000, \"bytes\": 0}\n"
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ar\", \"stream\": 1, \"dur\": 500000, \"bytes\": 0,"
    " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 8}}\n";
  r = replay (NULL, serial);
  g_assert_cmpfloat (num (r, "time.predicted_ns"), ==, 1500000);
  g_assert_cmpfloat (num (r, "network.exposed_ns"), ==, 500000);
  cJSON_Delete (r);
}

/* The class table (SPEC 5.9): an NCCL kernel that carries a `collective`
 * is timed by the network, so its class row's bound is "communication"
 * (it was "compute": the network path left the bound unset), and the row
 * keeps the captured 600000 ns on the capture config. */
static void
test_class_bound (void)
{
  cJSON *r = replay (NULL,
    "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"stream\": 2,"
    " \"dur\": 600000, \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 67108864, \"ranks\": 8}}\n");
  const cJSON *cl = cJSON_GetObjectItem (cJSON_GetObjectItem (r, "kernels"), "classes");
  g_assert_cmpint (cJSON_GetArraySize (cl), ==, 1);
  const cJSON *o = cJSON_GetArrayItem (cl, 0);
  g_assert_cmpstr (cJSON_GetObjectItem (o, "class")->valuestring, ==, "communication");
  g_assert_cmpstr (cJSON_GetObjectItem (o, "bound")->valuestring, ==, "communication");
  g_assert_cmpfloat (cJSON_GetObjectItem (o, "captured_ns")->valuedouble, ==, 600000);
  g_assert_cmpfloat (cJSON_GetObjectItem (o, "predicted_ns")->valuedouble, ==, 600000);
  cJSON_Delete (r);
}

static void
test_ranks_size_the_job (void)
{
  /* --set network.ranks=16 with the trace's largest group 8: that group
   * spans 2 nodes, the 2-rank group stays. 16 ranks, ring Simple: link
   * 2·15/16·2^26 = 125829120 B; per NIC /8 = 15728640 B at 25e9 = 629145.6
   * ns (the bound: NVLink 419430.4); latency (8400 + 28 x 3000, NCCL's
   * Intel post overhead x3 for an intra step across nodes) x 1.4 =
   * 129360: net1 = 758506 (the tree's 2^24/(25e9·.92·.8) + 8400 is
   * slower). d1 = 758506 + 200132 = 958638. The 2-rank one: 2^20/300e9 =
   * 3495.3 + 8400 = 11895 on both, captured 20000: unchanged. */
  const char *body =
    AR8 "{\"t\": 1, \"op\": \"kernel\", \"name\": \"ar2\", \"stream\": 3, \"dur\": 20000,"
    " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 2}}\n";
  const char *sixteen[] = { "network.ranks=16", NULL };
  /* A file the engine can reopen for the prescan of the largest group. */
  cJSON *r = replay (sixteen, body);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar") - 958638), <=, 1);
  g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
  g_assert_cmpfloat (num (r, "network.ranks"), ==, 16);
  cJSON_Delete (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/collective/identity-and-target", test_identity_and_target);
  g_test_add_func ("/collective/beside-gemm", test_beside_gemm);
  g_test_add_func ("/collective/ranks-size-the-job", test_ranks_size_the_job);
  g_test_add_func ("/collective/class-bound", test_class_bound);
  return g_test_run ();
}
