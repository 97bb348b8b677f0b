/* test-collective.c — collectives in the replay (sim/model/collective.part.c,
 * SPEC 5.8) against times worked out by hand: identity on the capture
 * config, the network model's time on another fabric with the unexplained
 * part kept, a collective beside a GEMM on another stream, a group's size
 * in the replay (network.ranks sizes the job and no group; network.dp and
 * the other roles resize theirs, with the placement and shard size of
 * docs/model.md section 11). Network constants as in test-network.c:
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

/* The network model's time for KIND of BYTES on RANKS over the test
 * machine changed by SETS, its nodes holding RPN ranks (0: the config's). */
static double
model_ns (const char *const *sets, guint32 rpn, VsCollKind kind, guint64 bytes, guint32 ranks)
{
  g_autoptr (VsConfig) c = make_config (sets);
  VsNetwork net;
  network_from_config (&net, c);
  if (rpn != 0)
    net.ranks_per_node = rpn;
  return (double) network_time_ns (&net, kind, bytes, ranks);
}

/* A 64 MiB all-reduce of the dp group (id 1, 8 ranks) captured at 600 us,
 * and a 1 MiB one of a tp group (id 2, 2 ranks) captured at 20 us. */
#define DP8 "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ar\", \"stream\": 2, \"dur\": 600000," \
            " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 67108864, \"ranks\": 8," \
            " \"group\": {\"id\": 1, \"role\": \"dp\"}}}\n"
#define TP2 "{\"t\": 1, \"op\": \"kernel\", \"name\": \"ar2\", \"stream\": 3, \"dur\": 20000," \
            " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 2," \
            " \"group\": {\"id\": 2, \"role\": \"tp\"}}}\n"

/* network.groups[] entry ID's FIELD. */
static double
group_num (const cJSON *r, guint64 id, const char *field)
{
  const cJSON *it;
  cJSON_ArrayForEach (it, cJSON_GetObjectItem (cJSON_GetObjectItem (r, "network"), "groups"))
    if ((guint64) cJSON_GetObjectItem (it, "id")->valuedouble == id)
      return cJSON_GetObjectItem (it, field)->valuedouble;
  g_error ("no group %" G_GUINT64_FORMAT, id);
  return 0;
}

static void
test_job_size_resizes_nothing (void)
{
  /* The case: a 2-rank collective, alone in its trace, replayed on
   * its capture config as a job of 8 or 64 GPUs. Its group is 2 ranks
   * whatever the job: 20000 ns captured, 20000 replayed (it went to 8
   * ranks when the largest group was taken for the job's world). */
  const char *eight[] = { "network.ranks=8", NULL }, *many[] = { "network.ranks=64", NULL };
  const char *const *jobs[] = { NULL, eight, many };
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      cJSON *r = replay (jobs[i], TP2);
      g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
      g_assert_cmpfloat (group_num (r, 2, "ranks"), ==, 2);
      g_assert_cmpfloat (group_num (r, 2, "captured_ranks"), ==, 2);
      g_assert_cmpfloat (num (r, "network.ranks"), ==, i == 0 ? 2 : i == 1 ? 8 : 64);
      cJSON_Delete (r);
    }
  /* The same without a group (an old trace): also unchanged, and the
   * report says network.ranks resized nothing. */
  const char *old = "{\"t\": 1, \"op\": \"kernel\", \"name\": \"ar2\", \"stream\": 3, \"dur\": 20000,"
                    " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 2}}\n";
  cJSON *r = replay (eight, old);
  g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
  g_assert_cmpint (cJSON_GetArraySize (cJSON_GetObjectItem (cJSON_GetObjectItem (r, "network"), "groups")), ==, 0);
  gboolean said = FALSE;
  const cJSON *w;
  cJSON_ArrayForEach (w, cJSON_GetObjectItem (r, "warnings"))
    said |= strstr (w->valuestring, "network.ranks = 8 is the job's size and resizes no collective") != NULL;
  g_assert_true (said);
  cJSON_Delete (r);
  /* A Megatron-like pair (tp 2 inside dp 8) in a job of 64: both as captured. */
  r = replay (many, DP8 TP2);
  g_assert_cmpfloat (kernel_ns (r, "ar"), ==, 600000);
  g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
  g_assert_cmpint (cJSON_GetArraySize (cJSON_GetObjectItem (r, "warnings")), ==, 1); /* "memory unknown" only */
  cJSON_Delete (r);
}

static void
test_dp_resizes_dp_only (void)
{
  /* network.dp=16: the dp group goes from 8 to 16 ranks, the tp group
   * stays 2. d1 = net1 + (d0 - net0): with this commit's network model,
   * net0 = 8400 + 2·7/8·2^26/(300e9·0.7) = 567641 (one node) and net1 =
   * 8400 + (2·15/16·2^26 / 8 NICs)/(25e9·0.7) = 907179 (two nodes of 8,
   * NIC-bound), so d1 = 907179 + 32359 = 939538; the expected values are
   * taken from network_cost here, so the test holds as the model changes. */
  const char *dp16[] = { "network.dp=16", NULL };
  double net0 = model_ns (NULL, 0, VS_COLL_ALL_REDUCE, 67108864, 8);
  double net1 = model_ns (dp16, 0, VS_COLL_ALL_REDUCE, 67108864, 16);
  cJSON *r = replay (dp16, DP8 TP2);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar") - (net1 + 600000 - net0)), <=, 1);
  g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
  g_assert_cmpfloat (group_num (r, 1, "ranks"), ==, 16);
  g_assert_cmpfloat (group_num (r, 1, "captured_ranks"), ==, 8);
  g_assert_cmpfloat (group_num (r, 2, "ranks"), ==, 2);
  g_assert_cmpfloat (num (r, "network.ranks"), ==, 16);
  cJSON_Delete (r);

  /* network.tp=16 on the same trace: only the tp group moves. */
  const char *tp16[] = { "network.tp=16", NULL };
  r = replay (tp16, DP8 TP2);
  g_assert_cmpfloat (kernel_ns (r, "ar"), ==, 600000);
  g_assert_cmpfloat (group_num (r, 2, "ranks"), ==, 16);
  cJSON_Delete (r);

  /* network.pp=4 on a trace with no pp group: nothing moves, and the
   * report says why. */
  const char *pp4[] = { "network.pp=4", NULL };
  r = replay (pp4, DP8 TP2);
  g_assert_cmpfloat (kernel_ns (r, "ar"), ==, 600000);
  g_assert_cmpfloat (kernel_ns (r, "ar2"), ==, 20000);
  gboolean said = FALSE;
  const cJSON *w;
  cJSON_ArrayForEach (w, cJSON_GetObjectItem (r, "warnings"))
    said |= strstr (w->valuestring, "network.pp = 4 resized no collective: the trace names no pp group") != NULL;
  g_assert_true (said);
  cJSON_Delete (r);
}

static void
test_resized_placement (void)
{
  /* A dp group captured on 2 ranks, grown to 16, keeps 2 ranks a node
   * (8 nodes), where a packed group of 16 would fill 2. This commit's
   * model, S = 2^20: the ring link 2·15/16·S = 1966080 B; each node's 2
   * NICs carry half, 983040 B at 25e9·0.7 = 56173.7 ns (NVLink 9362.3);
   * + 8400 = 64574 ns; packed: /8 NICs, 14043.4 + 8400 = 22443 ns. net0 =
   * 8400 + 2^20/(300e9·0.7) = 13393 (one node); captured 20000: d1 =
   * 64574 + 6607 = 71181. */
  const char *dp16[] = { "network.dp=16", NULL };
  const char *body = "{\"t\": 1, \"op\": \"kernel\", \"name\": \"dp2\", \"stream\": 3, \"dur\": 20000,"
                     " \"collective\": {\"kind\": \"all_reduce\", \"bytes\": 1048576, \"ranks\": 2,"
                     " \"group\": {\"id\": 4, \"role\": \"dp\"}}}\n";
  double net0 = model_ns (NULL, 0, VS_COLL_ALL_REDUCE, 1048576, 2);
  double kept = model_ns (dp16, 2, VS_COLL_ALL_REDUCE, 1048576, 16);
  double packed = model_ns (dp16, 0, VS_COLL_ALL_REDUCE, 1048576, 16);
  g_assert_cmpfloat (kept, >, packed * 1.5);   /* the two placements differ here */
  cJSON *r = replay (dp16, body);
  g_assert_cmpfloat (fabs (kernel_ns (r, "dp2") - (kept + 20000 - net0)), <=, 1);
  cJSON_Delete (r);

  /* A tp group grown from 2 to 8 stays packed (one node of 8). */
  const char *tp8[] = { "network.tp=8", NULL };
  net0 = model_ns (NULL, 0, VS_COLL_ALL_REDUCE, 1048576, 2);
  packed = model_ns (tp8, 0, VS_COLL_ALL_REDUCE, 1048576, 8);
  kept = model_ns (tp8, 2, VS_COLL_ALL_REDUCE, 1048576, 8);
  g_assert_cmpfloat (kept, >, packed * 1.5);
  r = replay (tp8, TP2);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ar2") - (packed + 20000 - net0)), <=, 1);
  cJSON_Delete (r);

  /* A dp all_gather grown from 8 to 16 gathers the same output: each
   * rank's input shard halves, 4 MiB -> 2 MiB. */
  const char *ag = "{\"t\": 0, \"op\": \"kernel\", \"name\": \"ag\", \"stream\": 2, \"dur\": 900000,"
                   " \"collective\": {\"kind\": \"all_gather\", \"bytes\": 4194304, \"ranks\": 8,"
                   " \"group\": {\"id\": 1, \"role\": \"dp\"}}}\n";
  net0 = model_ns (NULL, 0, VS_COLL_ALL_GATHER, 4194304, 8);
  double net1 = model_ns (dp16, 0, VS_COLL_ALL_GATHER, 2097152, 16);
  g_assert_cmpfloat (net1, !=, model_ns (dp16, 0, VS_COLL_ALL_GATHER, 4194304, 16));
  r = replay (dp16, ag);
  g_assert_cmpfloat (fabs (kernel_ns (r, "ag") - (net1 + 900000 - net0)), <=, 1);
  /* network.groups[].bytes is the trace's */
  g_assert_cmpfloat (group_num (r, 1, "bytes"), ==, 4194304);
  cJSON_Delete (r);
}

/* Bad group data is the reader's (tests/trace); what the job adds: a
 * group larger than network.ranks names its line, and a role resized
 * beyond the job names the key. */
static void
test_group_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("vramsim-test-XXXXXX.jsonl", &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_autofree char *text = g_strconcat ("{\"vramsim_trace\": 1}\n", DP8, TP2, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  const char *four[] = { "network.ranks=4", NULL };
  g_autoptr (VsConfig) target = make_config (four);
  g_autoptr (VsConfig) capture = make_config (NULL);
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  g_assert_no_error (error);
  VsReplayOptions none = { 0 };
  cJSON *rep = replay_run (r, target, capture, &none, &error);
  g_assert_null (rep);
  g_autofree char *want = g_strdup_printf ("%s:2: field 'collective.ranks': group 1 has 8 ranks, more than the job's 4 "
                                           "(network.ranks)", path);
  g_assert_nonnull (error);
  if (!g_str_has_prefix (error->message, want))
    g_error ("got \"%s\", expected \"%s\"", error->message, want);
  g_clear_error (&error);
  g_unlink (path);

  cJSON *root = cJSON_Parse (base_config);
  g_assert_true (config_set (root, "network.ranks=8", "test", &error));
  g_assert_true (config_set (root, "network.dp=16", "test", &error));
  VsConfig *c = config_compile (root, "test", &error);
  cJSON_Delete (root);
  g_assert_null (c);
  g_assert_cmpstr (error->message, ==, "test: network.dp: 16 is more than the job's 8 GPUs (network.ranks): a dp group "
                   "is part of its job; raise network.ranks too");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/collective/identity-and-target", test_identity_and_target);
  g_test_add_func ("/collective/beside-gemm", test_beside_gemm);
  g_test_add_func ("/collective/job-size-resizes-nothing", test_job_size_resizes_nothing);
  g_test_add_func ("/collective/dp-resizes-dp-only", test_dp_resizes_dp_only);
  g_test_add_func ("/collective/resized-placement", test_resized_placement);
  g_test_add_func ("/collective/group-errors", test_group_errors);
  g_test_add_func ("/collective/class-bound", test_class_bound);
  return g_test_run ();
}
