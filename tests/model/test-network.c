/* test-network.c — the collective cost model (sim/model/network.c) against
 * times worked out by hand from the model's formulas (docs/model.md
 * section 11). NCCL's figures the arithmetic uses (network.c, from
 * NVIDIA/nccl src/tuning at 1fc949c5):
 *   base latency, ns: ring LL 6600, LL128 14000, Simple 8400; tree 6800,
 *     14000, 8400; NVLS, NVLS-tree, CollNet 0.
 *   steps, us, NVLink row: ring .6 / 1.9 / 3.4, tree .6 / 1.25 / 4.0,
 *     CollNet direct 3.7, chain 2.8, NVLS 25, NVLS-tree 25; network row:
 *     ring 2.7 / 4.0 / 14, tree 5.0 / 8.5 / 14, CollNet direct 31, chain
 *     30, NVLS 18, NVLS-tree 20.9. A level's configured latency is its
 *     ring Simple step; the others scale by these ratios.
 *   bandwidth: ring LL x0.5, LL128 x0.92; tree x0.92, LL x0.92/3.8, LL128
 *     x0.92 x 7/9 (one node) or x0.92 x 120/128; tree correction by
 *     floor(log2(bytes/64)) (1.0 for LL at index 0, .5 for LL at 14, .9
 *     for Simple at 22, none from 24); NVLS x efficiency x 15/16.
 *   across nodes: an intra step is at least the CPU's post overhead
 *     (Intel 1 us, AMD 2 us; x3 for Simple), a Simple ring all_reduce's
 *     latency x1.4; LL ceiling Intel 39 / 20.4 GB/s at 2 / 3+ nodes.
 * (The model against measurements is bench/validate-network.c.) */
#include <glib.h>
#include <string.h>

#include "config/config.h"
#include "model/network.h"

/* 8 GPUs a node on NVSwitch at 300 GB/s, one 25 GB/s NIC each, both at
 * efficiency 1, Intel hosts, no LL ceiling in the node. */
static VsNetwork
dgx (double intra_lat, double inter_lat)
{
  return (VsNetwork) { .ranks_per_node = 8, .intra = { 300e9, intra_lat, 1.0 }, .inter = { 25e9, inter_lat, 1.0 },
                       .intra_kind = VS_FABRIC_NVSWITCH, .cpu = VS_HOST_CPU_INTEL, .nvls_efficiency = 0.85 };
}

/* The same with NVLink SHARP: 450 GB/s, NVLS at 0.8, 50 GB/s NICs. */
static VsNetwork
hgx (void)
{
  VsNetwork n = dgx (3400, 14000);
  n.intra.bandwidth = 450e9, n.inter.bandwidth = 50e9;
  n.nvls = TRUE, n.nvls_efficiency = 0.8;
  return n;
}

static void
test_ring_all_reduce (void)
{
  /* 1 GiB on 8 ranks in one node, NCCL's step latencies. Ring Simple:
   * 8400 + 14 x 3400 = 56000 ns, a ring link carries 2 x 7/8 x 2^30 =
   * 1879048192 B at 300e9: 6263493.97; total 6319493.97 -> 6319494.
   * Tree Simple: 8400 + 2 x 7 x 4000 = 64400, 2 x 2^30 at 276e9 (0.92;
   * no correction above 2^29 B): 7780737.1 -> 7845137, slower. Ring
   * LL128: 14000 + 14 x 1900 = 40600 + 1879048192 / 276e9 = 6808145.6:
   * slower. Ring LL: 15000 + 1879048192 / 150e9: slower. */
  VsNetwork net = dgx (3400, 14000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpuint (c.ns, ==, 6319494);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.nodes, ==, 1);
  g_assert_cmpfloat (c.intra_bytes, ==, 1879048192.0);
  g_assert_cmpfloat (c.inter_bytes, ==, 0.0);
  /* Bus bandwidth: 2 ranks send 2 x 1/2 x 2^30 in 2 steps: 8400 + 6800 +
   * 1073741824 / 300e9 = 3579139.41: 3594339. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 2), ==, 3594339);
  /* 4 ranks, 64 MiB: 8400 + 6 x 3400 = 28800 + 2 x 3/4 x 2^26 = 100663296
   * / 300e9 = 335544.32: 364344. Tree Simple: 8400 + 2 x 3 x 4000 = 32400
   * + 2^27 / (276e9 x .8, the correction at index 20) = 607870.1: slower. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 64ull << 20, 4), ==, 364344);
}

static void
test_small_latency_bound (void)
{
  /* 8 B on 8 ranks: ring LL 6600 + 14 x 600 = 15000 + 14 B at 150e9
   * (0.09 ns) -> 15000; tree LL 6800 + 2 x 7 x 600 = 15200, slower;
   * LL128 and Simple far slower. */
  VsNetwork net = dgx (3400, 14000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, 8, &c);
  g_assert_cmpuint (c.ns, ==, 15000);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  /* A group of one moves nothing, and pays no floor. */
  net.call_floor_ns = 5000;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 1 << 20, 1), ==, 0);
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 0), ==, 0);
  /* The floor is added to the rest: 15000 + 5000. */
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, 8, &c);
  g_assert_cmpuint (c.ns, ==, 20000);
  g_assert_cmpfloat (c.floor_ns, ==, 5000.0);
}

static void
test_two_level_all_reduce (void)
{
  /* 256 MiB on 16 ranks = 2 nodes x 8. Ring Simple: 30 steps, 2 across
   * nodes; an intra step max(3400, 3 x 1000) = 3400: (8400 + 28 x 3400 +
   * 2 x 14000) x 1.4 = 184240 ns. A ring link carries 2 x 15/16 x 2^28 =
   * 503316480 B: over NVSwitch /300e9 = 1677721.6 ns; each of the node's
   * 8 NICs carries 1/8, 62914560 / 25e9 = 2516582.4, the bound: 2700822.4.
   * Tree Simple: 8400 + 2 x (7 x 4000 + 1 x 14000) = 92400; 2 x 2^28 / 8 at
   * 25e9 x .92 x .9 (correction index 22) = 3241974.1: 3334374, slower.
   * Ring LL128: 14000 + 28 x 1900 + 2 x 4000 = 75200 + 62914560 / 23e9 =
   * 2735415.7: 2810616, slower. */
  VsNetwork net = dgx (3400, 14000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 256ull << 20, 16, &c);
  g_assert_cmpuint (c.ns, ==, 2700822);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.nodes, ==, 2);
  g_assert_cmpfloat (c.inter_bytes, ==, 62914560.0);
  /* AMD hosts: an intra step costs max(3400, 3 x 2000) = 6000: (8400 +
   * 28 x 6000 + 28000) x 1.4 = 286160 + 2516582.4 = 2802742; LL128 now
   * 14000 + 28 x 2000 + 8000 = 78000 + 2735415.7 = 2813416, still slower. */
  net.cpu = VS_HOST_CPU_AMD;
  network_cost (&net, VS_COLL_ALL_REDUCE, 256ull << 20, 16, &c);
  g_assert_cmpuint (c.ns, ==, 2802742);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  /* The node's 8 GPUs share 2 NICs: each carries 1/2 of the link,
   * 251658240 / 25e9 = 10066329.6 + 184240 = 10250570 (the tree's 2^28 /
   * 20.7e9 + 92400 and LL128's 251658240 / 23e9 + 75200 are slower). */
  net.cpu = VS_HOST_CPU_INTEL;
  net.nics_per_node = 2;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 256ull << 20, 16), ==, 10250570);
}

static void
test_tree_across_nodes (void)
{
  /* One GPU a node, 64 nodes, 8 B: latency is everything. Ring LL: 126
   * steps, all across nodes, 2700 ns each (14000 x 2.7/14): 6600 + 126 x
   * 2700 = 346800. Tree LL: 6800 + 2 x (0 intra + floor(log2 64) = 6 x
   * 5000) = 66800, + 2 x 8 B / (25e9 x .92/3.8) = 2.6 ns: 66803. The tree
   * wins; a tree that counted log2 N network steps once, not twice
   * (up and down), would say 36803. */
  VsNetwork net = dgx (3400, 14000);
  net.ranks_per_node = 1;
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, 64, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_TREE);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 66803);
  g_assert_cmpuint (c.nodes, ==, 64);
  /* Two nodes: ring LL 6600 + 2 x 2700 = 12000 + 8 B / 12.5e9 (0.64 ns)
   * = 12001; tree LL 6800 + 2 x 5000 = 16800: the ring wins. With the
   * tree's network steps counted once it would be 11803 and win. */
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, 2, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 12001);
  /* 8 GPUs a node, 4 nodes (32 ranks), 64 KiB. Tree LL: 6800 + 2 x (7 x
   * 600 + 2 x 5000) = 35200; bandwidth 2 x 65536 B on NVSwitch at 300e9 x
   * .92/3.8 x .6 (index 10) = 43.58e9 B/s: 3007.7 ns, a NIC's 16384 B at
   * 25e9 x .14526 = 4511.5 ns, the LL ceiling 131072 / 20.4e9 = 6425.1 ns:
   * 41625.1 -> 41625. Ring LL: 6600 + 56 x max(600, 1000) + 6 x 2700 =
   * 78800: slower. */
  net = dgx (3400, 14000);
  network_cost (&net, VS_COLL_ALL_REDUCE, 64 << 10, 32, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_TREE);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 41625);
}

static void
test_nvls (void)
{
  /* 1 GiB on 8 ranks with NVLink SHARP: each GPU moves 2^30 x 9/8 =
   * 1207959552 B at 450e9 x .8 x 15/16 = 337.5e9: 3579139.4 + one NVLS
   * step 25000 = 3604139. The ring: 56000 + 1879048192 / 450e9 =
   * 4231663, slower. */
  VsNetwork net = hgx ();
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.ns, ==, 3604139);
  g_assert_cmpfloat (c.intra_bytes, ==, 1207959552.0);
  /* NVLS is set up for more than 2 GPUs only: 2 ranks ring, 8400 + 2 x
   * 3400 + 2^30 / 450e9 = 2386092.9: 2401293. */
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 2, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 2401293);
  /* Two nodes (16 ranks), no SHARP between them: NVLS-tree. NVLink
   * 1207959552 B at 337.5e9 = 3579139.4; a NIC 2^30 / 8 at 50e9 =
   * 2684354.6 (2 nodes: S/k); latency 25000 + 2 x 1 x 20900 = 66800:
   * 3645939. The ring: NICs 251658240 / 50e9 = 5033164.8 + 184240. */
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 16, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS_TREE);
  g_assert_cmpuint (c.ns, ==, 3645939);
  /* Four nodes (32 ranks): a NIC carries 2S/k = 268435456 B: 5368709.1,
   * the bound; latency 25000 + 2 x 2 x 20900 = 108600: 5477309. The
   * ring: 62 steps, 6 across: (8400 + 56 x 3400 + 6 x 14000) x 1.4 =
   * 395920 + 2 x 31/32 x 2^30 / 8 / 50e9 = 5200937: 5596857, slower. */
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 32, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS_TREE);
  g_assert_cmpuint (c.ns, ==, 5477309);
  /* With SHARP between nodes, NVLS itself crosses them: 3579139.4 (NVLink)
   * over a NIC's S/k 2684354.6; 25000 + 18000 = 43000: 3622139. (CollNet
   * direct: 2 x 7/8 x 2^30 / 450e9 = 4175662.6 + 44000, slower.) */
  net.sharp = TRUE;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 16, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS);
  g_assert_cmpuint (c.ns, ==, 3622139);
  /* reduce_scatter of 1 GiB by NVLS moves S = 2^30 at 337.5e9: 3181457.2
   * + 25000 = 3206457; the ring moves 7/8 S at 450e9: 2087831.3 + 8400 +
   * 7 x 3400 = 2120031, and wins. */
  net.sharp = FALSE;
  network_cost (&net, VS_COLL_REDUCE_SCATTER, 1ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 2120031);
}

static void
test_collnet (void)
{
  /* SHARP switches between 2 nodes of 8 on NVSwitch, 1 GiB. CollNet
   * direct: reduce-scatter and all-gather in the node, 2 x 7/8 x 2^30 =
   * 1879048192 B at 300e9 = 6263494.0; each NIC sends 2^30 / 8 at 25e9 =
   * 5368709.1; latency 2 x (3700 + 7 x 400) + 31000 = 44000: 6307494. */
  VsNetwork net = dgx (3400, 14000);
  net.sharp = TRUE;
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 16, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_COLLNET_DIRECT);
  g_assert_cmpuint (c.ns, ==, 6307494);
  /* Without a switch in the node, the chain: 2 x 2^30 at 300e9 =
   * 7158278.8; 2 x 7 x 2800 + 30000 = 69200: 7227479. */
  net.intra_kind = VS_FABRIC_NVLINK;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 16, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_COLLNET_CHAIN);
  g_assert_cmpuint (c.ns, ==, 7227479);
  /* Inside one node CollNet does not apply: the ring, 6319494 as above. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8), ==, 6319494);
  /* A tie goes to the first in NCCL's order. One GPU a node, no step
   * latency, 4 nodes, 1 MiB: CollNet direct and chain both move S a NIC
   * (1048576 / 25e9 = 41943.04) with 0 latency; direct comes first. */
  VsNetwork one = dgx (0, 0);
  one.ranks_per_node = 1, one.sharp = TRUE;
  network_cost (&one, VS_COLL_ALL_REDUCE, 1 << 20, 4, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_COLLNET_DIRECT);
  g_assert_cmpuint (c.ns, ==, 41943);
}

static void
test_selection_by_size (void)
{
  /* 8 ranks, 400 GB/s, LL ceiling 100 GB/s, NVLS at 0.8 x 15/16 = 300e9.
   * Ring LL: 15000 + 1.75 S / 100e9 (the ceiling binds: 0.5 x 400e9 is
   * 200e9) = 15000 + 0.0175 S ns; NVLS: 25000 + 1.125 S / 300e9 = 25000 +
   * 0.00375 S. Equal at S = 10000 / 0.01375 = 727273 B.
   * 512 KiB: LL 24175.0, NVLS 26966.1 -> ring LL, 24175.
   * 1 MiB: LL 33350.1, NVLS 28932.2 -> NVLS, 28932. */
  VsNetwork net = hgx ();
  net.intra.bandwidth = 400e9;
  net.ll_max_bw = 100e9;
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 512 << 10, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 24175);
  network_cost (&net, VS_COLL_ALL_REDUCE, 1 << 20, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS);
  g_assert_cmpuint (c.ns, ==, 28932);

  /* Without NVLS the ring goes LL -> LL128 -> Simple. LL128: 40600 +
   * 1.75 S / 368e9; LL: 15000 + 0.0175 S; Simple: 56000 + 1.75 S / 400e9.
   * 1 MiB: LL 33350.1, LL128 45586.4 -> LL. 4 MiB: LL 88400.3, LL128
   * 60545.7, Simple 74350.1 -> LL128, 60546. 64 MiB: LL128 359731.8, Simple
   * 349600.6 -> Simple, 349601. */
  net.nvls = FALSE;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1 << 20, 8, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  network_cost (&net, VS_COLL_ALL_REDUCE, 4 << 20, 8, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL128);
  g_assert_cmpuint (c.ns, ==, 60546);
  network_cost (&net, VS_COLL_ALL_REDUCE, 64 << 20, 8, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.ns, ==, 349601);
  /* Over PCIe NCCL does not enable LL128: at 4 MiB the ring takes Simple.
   * The config's 3400 ns is now the PCI row's ring Simple step: 56000 +
   * 7340032 / 400e9 = 74350.08. The tree's Simple steps are 3400 x 4/5.7
   * = 2386.0: 8400 + 14 x 2386.0 + 2^23 / (400e9 x .92 x .7) = 74368.0,
   * slower by 18 ns; LL 6600 + 14 x 596.5 + 73400.3, slower. */
  net.intra_kind = VS_FABRIC_PCIE;
  network_cost (&net, VS_COLL_ALL_REDUCE, 4 << 20, 8, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.ns, ==, 74350);
}

static void
test_forced (void)
{
  /* NCCL_ALGO=Ring on the NVLS case: 56000 + 1879048192 / 450e9 =
   * 4231663. */
  VsNetwork net = hgx ();
  net.algorithm = VS_FORCE_ALGO_RING;
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 4231663);
  /* ...and NCCL_PROTO=LL: 15000 + 1879048192 / 225e9 = 8366325 (no
   * ceiling set). */
  net.protocol = VS_FORCE_PROTO_LL;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 8366325);
  /* The protocol alone: NVLS runs Simple only, so the ring's or the
   * tree's LL: the ring's, 8366325. */
  net.algorithm = VS_FORCE_ALGO_AUTO;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 8366325);
  /* A forced tree for an all_gather, which the tree cannot run: NCCL's
   * ring backup, fastest protocol: LL 6600 + 7 x 600 + 7 x 2^20 / 225e9 =
   * 43422.4 (Simple 48511.2, LL128 45029.5). */
  net.protocol = VS_FORCE_PROTO_AUTO;
  net.algorithm = VS_FORCE_ALGO_TREE;
  network_cost (&net, VS_COLL_ALL_GATHER, 1 << 20, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 43422);
  /* Forced NVLS on 2 GPUs (not set up there): the ring, 2401293. */
  net.algorithm = VS_FORCE_ALGO_NVLS;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 2, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 2401293);
  /* Forced tree where it can run: 8 ranks, 1 GiB: 8400 + 56000 + 2^31 /
   * 414e9 = 5187158.6: 5251559. */
  net.algorithm = VS_FORCE_ALGO_TREE;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_TREE);
  g_assert_cmpuint (c.ns, ==, 5251559);
}

static void
test_all_to_all (void)
{
  /* 16 MiB on 16 ranks, 2 nodes, no step latency: 1 MiB to each peer
   * (above 16 KiB: Simple), 7 of them in the node (7340032 B at 300e9:
   * 24466.8 ns) and 8 in the other (8388608 B at 25e9: 335544.3), at once:
   * 8400 + 335544.3 = 343944. */
  VsNetwork net = dgx (0, 0);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_TO_ALL, 16 << 20, 16, &c);
  g_assert_cmpuint (c.ns, ==, 343944);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_DIRECT);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpfloat (c.intra_bytes, ==, 7340032.0);
  g_assert_cmpfloat (c.inter_bytes, ==, 8388608.0);
  /* Inside one node (8 ranks): 7/8 x 16 MiB = 14680064 B at 300e9 =
   * 48933.5, + 8400 = 57333.5 -> 57334 (llround: half away from zero). */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_TO_ALL, 16 << 20, 8), ==, 57334);
  /* The forced protocol does not apply to point-to-point (NCCL's p2p
   * picks by its 16 KiB threshold): still 57334. */
  net.protocol = VS_FORCE_PROTO_LL;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_TO_ALL, 16 << 20, 8), ==, 57334);
}

static void
test_gather_scatter_send (void)
{
  /* 4 ranks, one NVLink node at 100 GB/s, no step latency. all_gather of a
   * 1 MiB shard: 3 x 2^20 = 3145728 B at 100e9 = 31457.28, + 8400 =
   * 39857; reduce_scatter of 4 MiB: 3/4 x 4 MiB, the same bytes and, as in
   * NCCL's model, the same rate: 39857. */
  VsNetwork net = { .ranks_per_node = 4, .intra = { 100e9, 0, 1.0 }, .inter = { 25e9, 0, 1.0 },
                    .intra_kind = VS_FABRIC_NVLINK };
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 4), ==, 39857);
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_REDUCE_SCATTER, 4 << 20, 4), ==, 39857);
  /* Efficiency scales the bandwidth: at 0.5, 62914.56 + 8400 = 71315. */
  net.intra.efficiency = 0.5;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1 << 20, 4), ==, 71315);
  /* Send between nodes (one rank a node), 1 MiB, 5 us a step: Simple (over
   * 16 KiB) 8400 + 5000 + 1048576 / 25e9 = 41943.04: 55343. */
  VsNetwork two = { .ranks_per_node = 1, .intra = { 300e9, 3000, 1.0 }, .inter = { 25e9, 5000, 1.0 },
                    .intra_kind = VS_FABRIC_NVLINK };
  VsNetCost c;
  network_cost (&two, VS_COLL_SEND, 1 << 20, 2, &c);
  g_assert_cmpuint (c.ns, ==, 55343);
  g_assert_cmpfloat (c.inter_bytes, ==, 1048576.0);
  g_assert_cmpuint (network_time_ns (&two, VS_COLL_RECV, 1 << 20, 2), ==, 55343);
  /* 4 KiB in a node of 8 (3 us steps): LL, 6600 + 3000 x .6/3.4 = 529.4
   * + 4096 / 150e9 = 27.3: 7156.7 -> 7157. */
  VsNetwork node = dgx (3000, 5000);
  network_cost (&node, VS_COLL_SEND, 4096, 2, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 7157);
  /* NCCL's threshold is inclusive: 16384 B still go LL (6600 + 529.4 +
   * 16384 / 150e9 = 109.2: 7238.6 -> 7239), one byte more Simple (8400 +
   * 3000 + 16385 / 300e9 = 54.6: 11455). */
  network_cost (&node, VS_COLL_SEND, 16384, 2, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 7239);
  network_cost (&node, VS_COLL_SEND, 16385, 2, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_SIMPLE);
  g_assert_cmpuint (c.ns, ==, 11455);
  /* Broadcast of 1 MiB down 4 ranks in a node at 300 GB/s, 3 us: a chain
   * of 3 hops. LL 6600 + 3 x 529.4 + 1048576 / 150e9 = 6990.5: 15178.7;
   * Simple 8400 + 9000 + 3495.3 = 20895; LL128 14000 + 3 x 1676.5 +
   * 1048576 / 276e9 = 22828.6. LL: 15179. */
  network_cost (&node, VS_COLL_BROADCAST, 1 << 20, 4, &c);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 15179);
}

static void
test_huge (void)
{
  /* Issue 26: 2^32 - 1 ranks, 8 a node, 8 B. The node count is
   * ceil((2^32 - 1) / 8) = 536870912 in 64 bits (32 bits wrapped it to
   * 0). The tree: NCCL's ranks a node 4294967295 / 536870912 = 7,
   * floor(log2 536870912) = 29: LL 6800 + 2 x (6 x 600 + 29 x 5000) =
   * 304000 + 16 B / (300e9 x .2421) and the LL ceiling 16 / 20.4e9 =
   * 0.78 ns: 304001. The ring would take 2^33 steps. */
  VsNetwork net = dgx (3400, 14000);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 8, G_MAXUINT32, &c);
  g_assert_cmpuint (c.nodes, ==, 536870912);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_TREE);
  g_assert_cmpuint (c.ns, ==, 304001);
  /* Times past 2^63 ns are capped, not wrapped: an all_gather of 2^40 B
   * shards over 2^32 - 1 ranks would put 4.7e21 B on a ring link. */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_GATHER, 1ull << 40, G_MAXUINT32), ==, 9200000000000000000ull);
  /* 2^64 - 1 B over 1 MB/s NICs: 1.8e19 x 2 x 15/16 / 8 / 1e6 s. */
  net.inter.bandwidth = 1e6;
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, G_MAXUINT64, 16), ==, 9200000000000000000ull);
}

static void
test_monotonic (void)
{
  /* More bytes never take less time, for every kind and group size. */
  VsNetwork nets[] = { dgx (3400, 14000), hgx () };
  nets[1].sharp = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (nets); i++)
    for (guint k = 0; k < VS_COLL_COUNT; k++)
      for (guint32 n = 2; n <= 64; n *= 2)
        {
          guint64 prev = 0;
          for (guint64 b = 1; b <= (1ull << 32); b *= 4)
            {
              guint64 t = network_time_ns (&nets[i], (VsCollKind) k, b, n);
              g_assert_cmpuint (t, >=, prev);
              prev = t;
            }
        }
  g_assert_cmpstr (network_proto_name (VS_NET_PROTO_LL128), ==, "LL128");
  g_assert_cmpstr (network_algo_name (VS_NET_ALGO_TREE), ==, "tree");
  g_assert_cmpstr (network_algo_name (VS_NET_ALGO_NVLS_TREE), ==, "nvls_tree");
}

static void
test_presets (void)
{
  GError *error = NULL;
  /* 8xH100 (h100-sxm: 450 GB/s x .824 = 370.8e9, LL ceiling 141e9, NVLS
   * .85 x 15/16): ring LL at 1 MiB, 15000 + 1.75 x 2^20 / 141e9 = 13014.3:
   * 28014; NVLS 25000 + 1.125 x 2^20 / 295.48125e9 = 3992.5: 28992.5. At
   * 2 MiB: LL 41029, NVLS 32985. NCCL switches there too (8B-1MB ring LL,
   * from 2MB NVLS Simple: NVIDIA/nccl-tests issue 309). */
  g_autoptr (VsConfig) h = config_load ("h100-sxm", NULL, &error);
  g_assert_no_error (error);
  VsNetwork net;
  network_from_config (&net, h);
  VsNetCost c;
  network_cost (&net, VS_COLL_ALL_REDUCE, 1 << 20, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpint (c.proto, ==, VS_NET_PROTO_LL);
  g_assert_cmpuint (c.ns, ==, 28014);
  network_cost (&net, VS_COLL_ALL_REDUCE, 2 << 20, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_NVLS);
  g_assert_cmpuint (c.ns, ==, 32985);
  /* 8 GiB: 1.125 x 2^33 / 295.48125e9 = 32704871.9 + 25000 = 32729872:
   * bus bandwidth 2^33 / 32729872 ns x 14/8 = 459.3 GB/s (published
   * ~480). With the ring forced: 56000 + 1.75 x 2^33 / 370.8e9 =
   * 40540414.1: 40596414, 370.3 GB/s (published ~370). */
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 8ull << 30, 8), ==, 32729872);
  const char *ring[] = { "network.algorithm=ring", NULL };
  g_autoptr (VsConfig) hr = config_load ("h100-sxm", ring, &error);
  g_assert_no_error (error);
  network_from_config (&net, hr);
  g_assert_cmpuint (network_time_ns (&net, VS_COLL_ALL_REDUCE, 8ull << 30, 8), ==, 40596414);
  /* 8xA100 (a100-80g: 300 GB/s x .8 = 240e9): 8 GiB, ring Simple, 56000 +
   * 1.75 x 2^33 / 240e9 = 62634939.7: 62690940 (239.8 GB/s bus; ~230
   * published). */
  g_autoptr (VsConfig) a = config_load ("a100-80g", NULL, &error);
  g_assert_no_error (error);
  network_from_config (&net, a);
  network_cost (&net, VS_COLL_ALL_REDUCE, 8ull << 30, 8, &c);
  g_assert_cmpint (c.algo, ==, VS_NET_ALGO_RING);
  g_assert_cmpuint (c.ns, ==, 62690940);
  g_assert_false (net.nvls);
  g_assert_cmpint (net.cpu, ==, VS_HOST_CPU_AMD);
}

static void
test_config (void)
{
  /* The a100-80g preset as an 8-GPU DGX node; --set sizes the job. */
  const char *sets[] = { "network.ranks=64", "network.intra.efficiency=0.5", "network.call_floor=12us", NULL };
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load ("a100-80g", sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->network.ranks, ==, 64);
  g_assert_cmpuint (c->network.ranks_per_node, ==, 8);
  g_assert_cmpfloat (c->network.intra.bandwidth, ==, 300e9);
  g_assert_cmpfloat (c->network.intra.efficiency, ==, 0.5);
  g_assert_cmpfloat (c->network.inter.bandwidth, ==, 25e9);
  g_assert_cmpfloat (c->network.inter.latency_ns, ==, 14000);
  g_assert_cmpfloat (c->network.call_floor_ns, ==, 12000);
  g_assert_cmpint (c->network.intra_kind, ==, VS_FABRIC_NVSWITCH);
  VsNetwork net;
  network_from_config (&net, c);
  g_assert_cmpuint (net.ranks_per_node, ==, 8);
  g_assert_cmpfloat (net.intra.efficiency, ==, 0.5);
  g_assert_cmpfloat (net.inter.efficiency, ==, 0.8);
  g_assert_cmpfloat (net.ll_max_bw, ==, 87.7e9);
  g_assert_cmpfloat (net.call_floor_ns, ==, 12000);

  /* Bad values, hardware a forced choice needs, bounds: one message
   * naming the key. */
  static const struct { const char *preset, *set, *part; } bad[] = {
    { "a100-80g", "network.inter.bandwidth=0", "network.inter.bandwidth: must be greater than 0" },
    { "a100-80g", "network.intra.bandwidth=0GB/s", "network.intra.bandwidth: must be greater than 0" },
    { "a100-80g", "network.ranks=0", "network.ranks: must be a whole number >= 1" },
    { "a100-80g", "network.ranks_per_node=2.5", "network.ranks_per_node: must be a whole number >= 1" },
    { "a100-80g", "network.intra.bandwith=1GB/s", "network.intra.bandwith: unknown key" },
    { "a100-80g", "network.ranks=4294967295", "network.ranks: at most 16777216" },
    { "a100-80g", "network.ranks=16777217", "network.ranks: at most 16777216" },
    { "a100-80g", "network.ranks_per_node=65537", "network.ranks_per_node: at most 65536" },
    { "a100-80g", "network.algorithm=nvls", "network.algorithm: nvls needs NVLink SHARP" },
    { "a100-80g", "network.algorithm=nvls_tree", "network.algorithm: nvls_tree needs NVLink SHARP" },
    { "a100-80g", "network.algorithm=collnet_chain", "network.algorithm: collnet_chain needs in-network reduction" },
    { "a100-80g", "network.algorithm=Ring", "network.algorithm: 'Ring' is not one of" },
    { "l40s", "network.protocol=LL128", "network.protocol: LL128 needs NVLink" },
    { "l40s", "network.intra.nvls=true", "network.intra.nvls: NVLink SHARP lives in NVSwitches" },
    { "h100-sxm", "network.protocol=LL", NULL },
    { "v100-sxm2-32g", "network.inter.sharp=true", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *one[] = { bad[i].set, NULL };
      g_autoptr (VsConfig) b = config_load (bad[i].preset, one, &error);
      if (bad[i].part == NULL)
        {
          g_assert_no_error (error);
          continue;
        }
      g_assert_null (b);
      g_assert_nonnull (error);
      if (strstr (error->message, bad[i].part) == NULL)
        g_error ("--set %s: '%s' lacks '%s'", bad[i].set, error->message, bad[i].part);
      g_clear_error (&error);
    }
  /* Two keys together: NVLS with LL; CollNet direct off NVSwitch. */
  static const struct { const char *preset, *a, *b, *part; } pairs[] = {
    { "h100-sxm", "network.algorithm=nvls", "network.protocol=LL", "network.protocol: nvls runs the Simple protocol only" },
    { "v100-sxm2-32g", "network.inter.sharp=true", "network.algorithm=collnet_direct",
      "network.algorithm: collnet_direct needs an NVSwitch node" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      const char *two[] = { pairs[i].a, pairs[i].b, NULL };
      g_autoptr (VsConfig) b = config_load (pairs[i].preset, two, &error);
      g_assert_null (b);
      if (strstr (error->message, pairs[i].part) == NULL)
        g_error ("'%s' lacks '%s'", error->message, pairs[i].part);
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
  g_test_add_func ("/network/tree-across-nodes", test_tree_across_nodes);
  g_test_add_func ("/network/nvls", test_nvls);
  g_test_add_func ("/network/collnet", test_collnet);
  g_test_add_func ("/network/selection-by-size", test_selection_by_size);
  g_test_add_func ("/network/forced", test_forced);
  g_test_add_func ("/network/all-to-all", test_all_to_all);
  g_test_add_func ("/network/gather-scatter-send", test_gather_scatter_send);
  g_test_add_func ("/network/huge", test_huge);
  g_test_add_func ("/network/monotonic", test_monotonic);
  g_test_add_func ("/network/presets", test_presets);
  g_test_add_func ("/network/config", test_config);
  return g_test_run ();
}
