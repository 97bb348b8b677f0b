/* test-network.c — the collective cost model (sim/model/network.c) against
 * times worked out by hand. Constants used below, from network.c: protocol
 * base latencies LL 6600, LL128 14000, Simple 8400 ns; per-step latency
 * factors LL 0.14 intra / 0.28 inter, LL128 0.56 / 0.42, Simple 1 / 1;
 * bandwidth factors LL 0.25, LL128 0.92, Simple 1; reducing collectives
 * x0.7; the tree x0.9. (The model against measurements is
 * bench/validate-network.c.) */
#include <glib.h>
#include <string.h>

#include "config/config.h"
#include "model/network.h"

/* 8 GPUs a node, NVSwitch 300 GB/s, 25 GB/s NICs, both efficiency 1. */
static VsNetwork
dgx (double intra_lat, double inter_lat)
{
  return (VsNetwork) { 8, 0, { 300e9, intra_lat, 1.0 }, { 25e9, inter_lat, 1.0 } };
}

static void
test_ring_all_reduce (void)
{
  /* 1 GiB on 8 ranks in one node, no step latency. Ring, Simple: each rank
   * sends 2·7/8·2^30 = 1879048192 B at 300e9 × 0.7 = 210e9 B/s:
   * 8947848.5 ns, + 8400 base = 8956248.5 -> 8956249 (llround). */
  VsNetwork net = dgx (0, 0);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpuint (c.ns, ==, 8956249);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.nodes, ==, 1);
  g_assert_cmpfloat (c.intra_bytes, ==, 1879048192.0);
  g_assert_cmpfloat (c.inter_bytes, ==, 0.0);
  /* Bus bandwidth: the same bytes on 2 ranks send 2·1/2·2^30: half the
   * wire bytes of 8 ranks' 1.75·2^30 ... 1073741824/210e9 = 5113056.3 + 8400. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 2), ==, 5121456);
}

static void
test_small_latency_bound (void)
{
  /* 8 B on 8 ranks, 3 us a step: 14 steps.
   * LL: 6600 + 14·0.14·3000 = 12480, + 8·1.75/(300e9·0.25·0.7) = 0.27 ns;
   * LL128: 14000 + 14·0.56·3000 = 37520; Simple: 8400 + 42000 = 50400.
   * LL wins: 12480. */
  VsNetwork net = dgx (3000, 5000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, 8, &c);
  g_assert_cmpuint (c.ns, ==, 12480);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  /* A group of one moves nothing. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 1 << 20, 1), ==, 0);
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 0), ==, 0);
}

static void
test_two_level_all_reduce (void)
{
  /* 256 MiB on 16 ranks = 2 nodes × 8. Ring, Simple: 30 steps, 2 of them
   * across nodes: 8400 + 28·3000 + 2·5000 = 102400 ns. A ring link carries
   * 2·15/16·2^28 = 503316480 B: over NVSwitch 503316480/210e9 = 2396745.1 ns;
   * each of the node's 8 NICs carries 1/8: 62914560/(25e9·0.7) = 3595117.7 ns,
   * the bound. Total 3697517.7 -> 3697518.
   * Tree, Simple: 8400 + 2·7·3000 + 2·1·5000 = 60400; 2·2^28/8 over
   * 25e9·0.9·0.7 = 4260880.3: 4321280, slower. Ring LL128: 14000 + 28·0.56·3000
   * + 2·0.42·5000 = 65240, + 3595117.7/0.92 = 3972977, slower. */
  VsNetwork net = dgx (3000, 5000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 256ull << 20, 16, &c);
  g_assert_cmpuint (c.ns, ==, 3697518);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.nodes, ==, 2);
  g_assert_cmpfloat (c.inter_bytes, ==, 62914560.0);
  /* The node's 8 GPUs share 2 NICs: each carries 1/2 of the link,
   * 251658240/17.5e9 = 14380470.9 + 102400 = 14482871 (the tree's
   * 2·2^28/2/15.75e9 + 60400 = 17103921 is slower). */
  net.nics_per_node = 2;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 256ull << 20, 16), ==, 14482871);
}

static void
test_all_to_all (void)
{
  /* 16 MiB on 16 ranks, 2 nodes, no step latency: 1 MiB to each peer, 7 of
   * them in the node (7340032 B at 300e9: 24466.8 ns) and 8 in the other
   * (8388608 B at 25e9: 335544.3 ns), at once. Simple: 8400 + 335544.3 =
   * 343944; LL128: 14000 + 335544.3/0.92 = 378722. */
  VsNetwork net = dgx (0, 0);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_TO_ALL, 16 << 20, 16, &c);
  g_assert_cmpuint (c.ns, ==, 343944);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_DIRECT);
  g_assert_cmpfloat (c.intra_bytes, ==, 7340032.0);
  g_assert_cmpfloat (c.inter_bytes, ==, 8388608.0);
  /* Inside one node (8 ranks): 7/8·16 MiB = 14680064 B at 300e9 = 48933.5,
   * + 8400 = 57333.5 -> 57334 (llround: half away from zero). */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_TO_ALL, 16 << 20, 8), ==, 57334);
}

static void
test_gather_scatter_send (void)
{
  /* 4 ranks, one node at 100 GB/s, no step latency.
   * all_gather of a 1 MiB shard: 3·2^20 = 3145728 B at 100e9 = 31457.28,
   * + 8400 = 39857; reduce_scatter of 4 MiB: 3/4·4 MiB, the same bytes,
   * at 0.7 of the rate: 44939.0 + 8400 = 53339. */
  VsNetwork net = { 4, 0, { 100e9, 0, 1.0 }, { 25e9, 0, 1.0 } };
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 4), ==, 39857);
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_REDUCE_SCATTER, 4 << 20, 4), ==, 53339);
  /* Efficiency scales the bandwidth: at 0.5, 62914.56 + 8400 = 71315. */
  net.intra.efficiency = 0.5;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 4), ==, 71315);
  /* Send between nodes (one rank a node), 1 MiB, 5 us: Simple 8400 + 5000
   * + 1048576/25e9 = 41943.04: 55343; LL 6600 + 1400 + 167772.16 and LL128
   * 14000 + 2100 + 45590.3 are slower. */
  VsNetwork two = { 1, 0, { 300e9, 3000, 1.0 }, { 25e9, 5000, 1.0 } };
  VsNetCost c;
  network_cost (&two, VS_COLL_SEND, 1 << 20, 2, &c);
  g_assert_cmpuint (c.ns, ==, 55343);
  g_assert_cmpfloat (c.inter_bytes, ==, 1048576.0);
  g_assert_cmpuint (network_time_ns (&two, VS_COLL_RECV, 1 << 20, 2), ==, 55343);
  /* Broadcast of 1 MiB down 4 ranks in a node at 300 GB/s, 3 us: chain of 3
   * hops. Simple 8400 + 9000 + 3495.3 = 20895; LL 6600 + 3·420 + 13981.0 =
   * 21841; LL128 14000 + 5040 + 3799.3 = 22839. */
  VsNetwork node = dgx (3000, 5000);
  g_assert_cmpuint (network_time_ns (&node, VS_COLL_BROADCAST, 1 << 20, 4), ==, 20895);
}

static void
test_monotonic (void)
{
  /* More bytes never take less time; latency-bound sizes grow slowly. */
  VsNetwork net = dgx (3000, 5000);
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    for (guint32 n = 2; n <= 64; n *= 2)
      {
        guint64 prev = 0;
        for (guint64 b = 1; b <= (1ull << 32); b *= 4)
          {
            guint64 t = network_time_ns (&net, (VsCollKind) k, b, n);
            g_assert_cmpuint (t, >=, prev);
            prev = t;
          }
      }
  g_assert_cmpstr (network_proto_name (VS_NET_PROTO_LL128), ==, "LL128");
  g_assert_cmpstr (network_algo_name (VS_NET_ALGO_TREE), ==, "tree");
}

static void
test_config (void)
{
  /* The a100-80g preset as an 8-GPU DGX node; --set sizes the job. */
  const char *sets[] = { "network.ranks=64", "network.intra.efficiency=0.5", NULL };
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load ("a100-80g", sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->network.ranks, ==, 64);
  g_assert_cmpuint (c->network.ranks_per_node, ==, 8);
  g_assert_cmpfloat (c->network.intra.bandwidth, ==, 300e9);
  g_assert_cmpfloat (c->network.intra.efficiency, ==, 0.5);
  g_assert_cmpfloat (c->network.inter.bandwidth, ==, 25e9);
  g_assert_cmpfloat (c->network.inter.latency_ns, ==, 22000);
  VsNetwork net;
  network_from_config (&net, c);
  g_assert_cmpuint (net.ranks_per_node, ==, 8);
  g_assert_cmpfloat (net.intra.efficiency, ==, 0.5);
  g_assert_cmpfloat (net.inter.efficiency, ==, 0.62);

  /* Zero bandwidth, zero ranks and a misspelt key name the key. */
  static const struct { const char *set, *part; } bad[] = {
    { "network.inter.bandwidth=0", "network.inter.bandwidth: must be greater than 0" },
    { "network.intra.bandwidth=0GB/s", "network.intra.bandwidth: must be greater than 0" },
    { "network.ranks=0", "network.ranks: must be a whole number >= 1" },
    { "network.ranks_per_node=2.5", "network.ranks_per_node: must be a whole number >= 1" },
    { "network.intra.bandwith=1GB/s", "network.intra.bandwith: unknown key" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *one[] = { bad[i].set, NULL };
      g_autoptr (VsConfig) b = config_load ("a100-80g", one, &error);
      g_assert_null (b);
      g_assert_nonnull (error);
      if (strstr (error->message, bad[i].part) == NULL)
        g_error ("--set %s: '%s' lacks '%s'", bad[i].set, error->message, bad[i].part);
      g_clear_error (&error);
    }

  /* Every preset has a network that loads back from its written form. */
  g_auto (GStrv) names = config_list_presets ();
  g_assert_nonnull (names[0]);
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr (VsConfig) p = config_load (names[i], NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpfloat (p->network.intra.bandwidth, >, 0);
      g_assert_cmpfloat (p->network.inter.bandwidth, >, 0);
      g_assert_cmpuint (p->network.ranks_per_node, >=, 1);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/network/ring-all-reduce", test_ring_all_reduce);
  g_test_add_func ("/network/small-latency-bound", test_small_latency_bound);
  g_test_add_func ("/network/two-level-all-reduce", test_two_level_all_reduce);
  g_test_add_func ("/network/all-to-all", test_all_to_all);
  g_test_add_func ("/network/gather-scatter-send", test_gather_scatter_send);
  g_test_add_func ("/network/monotonic", test_monotonic);
  g_test_add_func ("/network/config", test_config);
  return g_test_run ();
}
