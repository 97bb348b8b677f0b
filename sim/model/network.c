/* network.c — the collective cost model (docs/model.md section 11).
 *
 * The anchor is NCCL's own tuner, NVIDIA/nccl at commit 1fc949c5
 * (src/tuning/cost_model.cc: the latency and ceiling tables; ring.cc,
 * tree.cc, nvls.cc, collnet.cc: each algorithm's latency and bandwidth;
 * tuning_general.cc: the architecture and node-count indexes): a
 * collective on an algorithm and protocol takes a latency plus its bytes
 * over a bandwidth, every pair the hardware has is priced, and the lowest
 * predicted time is what NCCL runs. Our structure and names, not NCCL's
 * code; where we depart from it the comment says so. Two defaults come
 * from files found by search (they have held across releases):
 * src/transport/nvls.cc NCCL_NVLS_NCHANNELS 16 and NVLS only above 2
 * GPUs, src/enqueue.cc NCCL_P2P_LL_THRESHOLD 16384.
 *
 * - Bytes. NCCL converts a "bus bandwidth" to each algorithm's rate with
 *   the algorithm's step ratio; we count instead the bytes one GPU puts on
 *   each level of the fabric (per direction) and divide by that level's
 *   rate, which gives NCCL's ratios for the ring and the tree and extends
 *   to two levels at once (the levels pipeline, so the slower one bounds
 *   the time). The rate of a level is bandwidth x efficiency: the presets'
 *   NVLink efficiencies are NCCL's effective per-link rates over the line
 *   rate (src/graph/topo.h at 069a3d4f: SM80_NVLINK_BW 20.0, SM90 20.6,
 *   SM100 40.1 GB/s per 25 / 25 / 50 GB/s link; docs/config.md).
 * - Ring (every kind but point-to-point): a ring link carries
 *   2(n-1)/n S (all_reduce), (n-1)/n S (reduce_scatter), (n-1) S
 *   (all_gather of S a rank) or S (broadcast, reduce) — nccl-tests'
 *   doc/PERFORMANCE.md bus-bandwidth factors; across nodes each of the
 *   node's k NICs carries 1/k of it (NCCL opens rings over every NIC).
 *   Steps 2(n-1) or n-1, of which 2(N-1) or N-1 cross nodes (ring.cc
 *   nSteps, nInterSteps); broadcast and reduce are a pipelined chain of
 *   n-1 hops (N-1 across nodes; ring.cc prices them as one or n hops by
 *   channel layout, which we do not model). Across nodes an intra step
 *   costs at least the CPU's network post overhead (ring.cc
 *   getNetOverhead: 1 us Intel and others, 2 us AMD; x3 for Simple), and
 *   a Simple all_reduce's latency is x1.4 (ring.cc "plateau effect";
 *   NCCL applies it above nChannels x nRanks x 64 bytes, sizes where
 *   Simple is the choice anyway, and 1.9 on Volta, not modeled).
 * - Tree (all_reduce; tree.cc): NCCL's double binary tree across nodes, a
 *   chain inside each: 2S per GPU on each level it crosses (S up, S down;
 *   the k NICs share the node's 2S), at 0.92 of the rate; latency
 *   2((n/N - 1) intra + floor(log2 N) inter) steps. Its bandwidth is
 *   scaled by NCCL's treeCorrectionFactor by size.
 * - NVLS (NVLink SHARP, nvls.cc): the NVSwitch reduces (multimem
 *   ld_reduce) and multicasts (multimem st): an all_reduce moves
 *   S + S/g out of and into each GPU (a reduce_scatter S, an all_gather
 *   g S), at the intra rate x nvls_efficiency x (C-1)/C of NCCL's C = 16
 *   NVLS channels (src/transport/nvls.cc NCCL_NVLS_NCHANNELS). NCCL
 *   counts S(n-1)/n for the all_reduce (intraBw x 2, ratio n/nSteps); we
 *   count the multicast bytes the switch delivers, which is what the
 *   published 8xH100 figure shows (docs/validation.md). Latency: one NVLS
 *   step (25 us over NVLink), plus one network step across nodes (with
 *   SHARP only: NCCL runs NVLS across nodes only with CollNet). NCCL
 *   sets NVLS up only for more than 2 GPUs a node (src/transport/nvls.cc).
 * - NVLS-tree (all_reduce across nodes): NVLS in each node, a tree of
 *   nodes between (each GPU's NIC carries its 1/g share: per NIC S/k at 2
 *   nodes, 2S/k beyond; nvls.cc's interBw x 2 for nNodes <= 2); latency
 *   one NVLS step + 2 floor(log2 N) network steps.
 * - CollNet (all_reduce across nodes with SHARP switches; collnet.cc):
 *   each NIC sends S/k up and gets S/k back. Direct (NVSwitch nodes):
 *   reduce-scatter and all-gather in the node, 2(g-1)/g S per GPU;
 *   latency 2(min(1, g-1) intra step + (g-1) x 0.4 us) + a network step.
 *   Chain: a chain in the node, 2S per GPU; 2(g-1) intra steps + one
 *   network step. Both for at most 8 GPUs a node (NCCL_MAX_DIRECT_ARITY
 *   + 1), Simple only.
 * - Protocols (ring.cc, tree.cc): LL moves data at 0.5 of Simple's rate
 *   (4 flag bytes per 4 data bytes) under a ceiling (llMaxBws: in one node
 *   the GPU's, network.intra.ll_max_bw; across nodes the CPU's, Intel and
 *   ARM 39 / 20.4 GB/s, AMD 22.5 / 19 GB/s at 2 / 3+ nodes); LL128 at
 *   0.92 (120 of 128 bytes), enabled only with NVLink inside the node
 *   (cost_model.cc isLL128Enabled); the tree's LL at 0.92/3.8 and LL128
 *   at 0.92 x 7/9 in one node, 0.92 x 120/128 across. NVLS, NVLS-tree
 *   and CollNet run Simple only. Per-channel ceilings (perChMax*Bws x
 *   channels) are left out: on every preset they exceed the link rate
 *   (docs/model.md).
 * - Latencies: NCCL's baseLatencies and hwLatencies (us), rows NVLink,
 *   PCI and network. A config's level latency is the ring Simple step of
 *   its row (NCCL: NVLink 3.4, PCI 5.7, network 14 us), and every other
 *   algorithm and protocol on that level scales with it by NCCL's ratios:
 *   with NCCL's figures in the config, NCCL's table comes out exactly.
 * - Point-to-point (send, recv, all_to_all): not in NCCL's tuner. One
 *   step on each level it crosses plus the ring's base; all_to_all sends
 *   S/n to each peer at once, g-1 of them in the node. The protocol is
 *   NCCL's p2p rule: LL up to 16 KiB a peer, else Simple
 *   (src/enqueue.cc NCCL_P2P_LL_THRESHOLD); network.protocol does not
 *   apply (NCCL_PROTO chooses among the tuner's protocols).
 * - Forcing (NCCL_ALGO / NCCL_PROTO): network.algorithm and .protocol
 *   keep only that candidate; a kind or group the forced algorithm cannot
 *   run (a tree for an all_gather, NVLS for 2 GPUs) takes the ring, as
 *   NCCL falls back to it (tuning.cc "at least set ring algo available").
 *   What the hardware cannot run at all is refused at config compile.
 * - The call floor (network.call_floor) is added to every call of two
 *   ranks or more: host and launch cost outside NCCL, not scaled by
 *   compute; every preset has 0 (a captured kernel's duration holds none).
 * - A group of one rank costs 0 (NCCL's local copy is memory traffic). */
#include "model/network.h"

#include <math.h>

enum { ROW_NVLINK, ROW_PCI, ROW_NET };
/* NCCL's algorithms in the tables' order (cost_model.cc). */
enum { A_TREE, A_RING, A_COLLNET_DIRECT, A_COLLNET_CHAIN, A_NVLS, A_NVLS_TREE, A_TUNED };
G_STATIC_ASSERT ((int) VS_NET_ALGO_NVLS_TREE == A_NVLS_TREE && (int) VS_NET_ALGO_DIRECT == A_TUNED);

/* hwLatencies, us: [row][algorithm][LL, LL128, Simple]. */
static const double hw_lat_us[3][A_TUNED][VS_NET_PROTO_COUNT] = {
  [ROW_NVLINK] = { { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 25 }, { 0, 0, 25 } },
  [ROW_PCI] = { { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 3.7 }, { 0, 0, 2.8 }, { 0, 0, 0 }, { 0, 0, 0 } },
  [ROW_NET] = { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 31 }, { 0, 0, 30 }, { 0, 0, 18 }, { 0, 0, 20.9 } },
};
/* baseLatencies, us: the fixed cost of one call. */
static const double base_lat_us[A_TUNED][VS_NET_PROTO_COUNT] = {
  [A_TREE] = { 6.8, 14.0, 8.4 }, [A_RING] = { 6.6, 14.0, 8.4 },
};
/* treeCorrectionFactor: the tree's bandwidth by floor(log2(bytes/64)). */
static const double tree_correction[VS_NET_PROTO_COUNT][24] = {
  { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
  { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0 },
  { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 },
};
/* llMaxBws across nodes by CPU vendor (index1 = AMD ? 1 : 0), GB/s at 2
 * and at 3+ nodes (index2 = 1, 2); netOverhead per step, us. */
static const struct {
  double ll_max_gbs[2], post_us;
} cpu_row[] = {
  [VS_HOST_CPU_INTEL] = { { 39.0, 20.4 }, 1.0 },
  [VS_HOST_CPU_AMD] = { { 22.5, 19.0 }, 2.0 },
  [VS_HOST_CPU_ARM] = { { 39.0, 20.4 }, 1.0 },
};

#define RING_LL_BW 0.5          /* ring.cc: LL busBw x .5 */
#define RING_LL128_BW 0.92      /* ring.cc: 120/128 less the flag overhead */
#define TREE_BW 0.92            /* tree.cc: busBw x .92 */
#define TREE_LL_BW (1.0 / 3.8)  /* tree.cc */
#define TREE_LL128_BW_NODE (7.0 / 9.0)
#define TREE_LL128_BW_NET (120.0 / 128.0)
#define RING_PLATEAU 1.4        /* ring.cc: Ampere and later */
#define NVLS_CHANNELS 16.0      /* src/transport/nvls.cc NCCL_NVLS_NCHANNELS */
#define COLLNET_ARITY_NS 400.0  /* collnet.cc: 0.4 us a local rank */
#define COLLNET_MAX_LOCAL 8     /* collnet.cc: NCCL_MAX_DIRECT_ARITY + 1 */
#define P2P_LL_THRESHOLD 16384  /* src/enqueue.cc NCCL_P2P_LL_THRESHOLD */
#define MAX_NS 9.2e18           /* below 2^63 */

const char *
network_proto_name (VsNetProto p)
{
  static const char *names[] = { "LL", "LL128", "Simple" };
  return p < VS_NET_PROTO_COUNT ? names[p] : NULL;
}

const char *
network_algo_name (VsNetAlgo a)
{
  static const char *names[] = { "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "direct" };
  return a < VS_NET_ALGO_COUNT ? names[a] : NULL;
}

/* The group as NCCL's tuner sees it. */
typedef struct {
  const VsNetwork *net;
  VsCollKind kind;
  double S, n, g, N, k;  /* bytes; ranks; ranks a node; nodes; NICs a node */
  double ppn;            /* NCCL's nRanks / nNodes, integer division */
  double log2N;          /* NCCL's log2i(nNodes): floor */
  double ri, rn;         /* rate of the intra level per GPU, of one NIC */
  int intra_row;
} Group;

/* One candidate's latency and bytes. */
typedef struct {
  double lat_ns;
  double xi, xn;     /* bytes a GPU moves on the intra level, a NIC on the inter level */
  double ri, rn;     /* their rates, after the algorithm's and protocol's factors */
  double bus, cap;   /* bytes under the LL ceiling CAP (0: none) */
} Plan;

/* NCCL's latency of ALGO / PROTO on ROW, scaled by the config's ring
 * Simple step of that level. */
static double
step_ns (const Group *gr, int row, int algo, VsNetProto p)
{
  const VsNetLevel *l = row == ROW_NET ? &gr->net->inter : &gr->net->intra;
  return l->latency_ns * hw_lat_us[row][algo][p] / hw_lat_us[row][A_RING][VS_NET_PROTO_SIMPLE];
}

static double
base_ns (int algo, VsNetProto p)
{
  return base_lat_us[algo][p] * 1e3;
}

/* The LL ceiling for this group: the GPU's in one node, the CPU's across. */
static double
ll_cap (const Group *gr)
{
  if (gr->N <= 1)
    return gr->net->ll_max_bw;
  guint c = gr->net->cpu < G_N_ELEMENTS (cpu_row) ? gr->net->cpu : VS_HOST_CPU_INTEL;
  return cpu_row[c].ll_max_gbs[gr->N <= 2 ? 0 : 1] * 1e9;
}

static double
floor_log2 (double x)
{
  return x < 2 ? 0 : floor (log2 (x));
}

static gboolean
plan_ring (const Group *gr, VsNetProto p, Plan *pl)
{
  double n = gr->n, N = gr->N, S = gr->S, link, steps, inter_steps;
  gboolean ar = gr->kind == VS_COLL_ALL_REDUCE;
  switch (gr->kind)
    {
    case VS_COLL_ALL_REDUCE: link = 2 * (n - 1) / n * S, steps = 2 * (n - 1), inter_steps = 2 * (N - 1); break;
    case VS_COLL_REDUCE_SCATTER: link = (n - 1) / n * S, steps = n - 1, inter_steps = N - 1; break;
    case VS_COLL_ALL_GATHER: link = (n - 1) * S, steps = n - 1, inter_steps = N - 1; break;
    case VS_COLL_BROADCAST:
    case VS_COLL_REDUCE: link = S, steps = n - 1, inter_steps = N - 1; break;
    default: return FALSE;
    }
  double intra = step_ns (gr, gr->intra_row, A_RING, p);
  double inter = N > 1 ? step_ns (gr, ROW_NET, A_RING, p) : intra;
  gboolean chain = gr->kind == VS_COLL_BROADCAST || gr->kind == VS_COLL_REDUCE;
  if (N > 1 && !chain)
    {
      guint c = gr->net->cpu < G_N_ELEMENTS (cpu_row) ? gr->net->cpu : VS_HOST_CPU_INTEL;
      intra = MAX (intra, cpu_row[c].post_us * 1e3 * (p == VS_NET_PROTO_SIMPLE ? 3 : 1));
    }
  pl->lat_ns = base_ns (A_RING, p) + (steps - inter_steps) * intra + inter_steps * inter;
  if (ar && N > 1 && p == VS_NET_PROTO_SIMPLE)
    pl->lat_ns *= RING_PLATEAU;
  double f = p == VS_NET_PROTO_LL ? RING_LL_BW : p == VS_NET_PROTO_LL128 ? RING_LL128_BW : 1.0;
  pl->xi = gr->g > 1 ? link : 0;
  pl->xn = N > 1 ? link / gr->k : 0;
  pl->ri = gr->ri * f, pl->rn = gr->rn * f;
  pl->bus = link;
  pl->cap = p == VS_NET_PROTO_LL ? ll_cap (gr) : 0;
  return TRUE;
}

static gboolean
plan_tree (const Group *gr, VsNetProto p, Plan *pl)
{
  if (gr->kind != VS_COLL_ALL_REDUCE)
    return FALSE;
  double S = gr->S, N = gr->N;
  double intra = step_ns (gr, gr->intra_row, A_TREE, p);
  double inter = N > 1 ? step_ns (gr, ROW_NET, A_TREE, p) : intra;
  pl->lat_ns = base_ns (A_TREE, p) + 2 * ((gr->ppn - 1) * intra + gr->log2N * inter);
  double f = TREE_BW;
  if (p == VS_NET_PROTO_LL)
    f *= TREE_LL_BW;
  else if (p == VS_NET_PROTO_LL128)
    f *= N > 1 ? TREE_LL128_BW_NET : TREE_LL128_BW_NODE;
  double sz = S / 64, idx = floor_log2 (sz);
  if (idx < G_N_ELEMENTS (tree_correction[0]))
    f *= tree_correction[p][(int) idx];
  pl->xi = gr->g > 1 ? 2 * S : 0;
  pl->xn = N > 1 ? 2 * S / gr->k : 0;
  pl->ri = gr->ri * f, pl->rn = gr->rn * f;
  pl->bus = 2 * S;
  pl->cap = p == VS_NET_PROTO_LL ? ll_cap (gr) : 0;
  return TRUE;
}

/* NVLS in each node; across nodes with SHARP (NVLS) or a tree (NVLS-tree). */
static gboolean
plan_nvls (const Group *gr, gboolean tree, Plan *pl)
{
  const VsNetwork *net = gr->net;
  double S = gr->S, g = gr->g, N = gr->N;
  if (!net->nvls || g <= 2)
    return FALSE;
  if (tree ? (N < 2 || gr->kind != VS_COLL_ALL_REDUCE) : (N > 1 && (!net->sharp || gr->kind != VS_COLL_ALL_REDUCE)))
    return FALSE;
  switch (gr->kind)
    {
    case VS_COLL_ALL_REDUCE: pl->xi = S * (g + 1) / g; break;
    case VS_COLL_REDUCE_SCATTER: pl->xi = S; break;
    case VS_COLL_ALL_GATHER: pl->xi = g * S; break;
    default: return FALSE;
    }
  int a = tree ? A_NVLS_TREE : A_NVLS;
  double intra = step_ns (gr, ROW_NVLINK, a, VS_NET_PROTO_SIMPLE);
  double inter = N > 1 ? step_ns (gr, ROW_NET, a, VS_NET_PROTO_SIMPLE) : 0;
  pl->lat_ns = intra + (tree ? 2 * gr->log2N * inter : inter);
  pl->xn = N <= 1 ? 0 : tree && N > 2 ? 2 * S / gr->k : S / gr->k;
  pl->ri = gr->ri * net->nvls_efficiency * (NVLS_CHANNELS - 1) / NVLS_CHANNELS;
  pl->rn = gr->rn;
  pl->bus = pl->cap = 0;
  return TRUE;
}

static gboolean
plan_collnet (const Group *gr, gboolean direct, Plan *pl)
{
  const VsNetwork *net = gr->net;
  double S = gr->S, g = gr->g;
  if (!net->sharp || gr->N < 2 || gr->kind != VS_COLL_ALL_REDUCE || gr->ppn > COLLNET_MAX_LOCAL)
    return FALSE;
  if (direct && net->intra_kind != VS_FABRIC_NVSWITCH)
    return FALSE;
  int a = direct ? A_COLLNET_DIRECT : A_COLLNET_CHAIN;
  double intra = step_ns (gr, gr->intra_row, a, VS_NET_PROTO_SIMPLE);
  double inter = step_ns (gr, ROW_NET, a, VS_NET_PROTO_SIMPLE);
  double local = gr->ppn - 1;
  pl->lat_ns = direct ? 2 * (MIN (1.0, local) * intra + local * COLLNET_ARITY_NS) + inter : 2 * local * intra + inter;
  pl->xi = g <= 1 ? 0 : direct ? 2 * (g - 1) / g * S : 2 * S;
  pl->xn = S / gr->k;
  pl->ri = gr->ri, pl->rn = gr->rn;
  pl->bus = pl->cap = 0;
  return TRUE;
}

/* send, recv, all_to_all: one step on each level crossed. */
static void
plan_direct (const Group *gr, Plan *pl, VsNetProto *proto)
{
  double S = gr->S, n = gr->n, g = gr->g;
  gboolean multi = gr->N > 1;
  double peer;
  if (gr->kind == VS_COLL_ALL_TO_ALL)
    {
      pl->xi = (g - 1) / n * S;
      pl->xn = multi ? (n - g) / n * S * g / gr->k : 0;
      peer = S / n;
    }
  else
    {
      pl->xi = multi ? 0 : S;
      pl->xn = multi ? S : 0;
      peer = S;
    }
  VsNetProto p = peer <= P2P_LL_THRESHOLD ? VS_NET_PROTO_LL : VS_NET_PROTO_SIMPLE;
  double f = p == VS_NET_PROTO_LL ? RING_LL_BW : 1.0;
  pl->lat_ns = base_ns (A_RING, p) + (pl->xi > 0 ? step_ns (gr, gr->intra_row, A_RING, p) : 0)
               + (pl->xn > 0 ? step_ns (gr, ROW_NET, A_RING, p) : 0);
  pl->ri = gr->ri * f, pl->rn = gr->rn * f;
  pl->bus = pl->cap = 0;
  *proto = p;
}

static gboolean
plan_for (const Group *gr, VsNetAlgo a, VsNetProto p, Plan *pl)
{
  gboolean simple_only = a != VS_NET_ALGO_RING && a != VS_NET_ALGO_TREE;
  if (simple_only && p != VS_NET_PROTO_SIMPLE)
    return FALSE;
  /* cost_model.cc isLL128Enabled: NVLink inside the node (a node of one
   * GPU has no intra path to refuse it). */
  if (p == VS_NET_PROTO_LL128 && gr->net->intra_kind == VS_FABRIC_PCIE && gr->g > 1)
    return FALSE;
  switch (a)
    {
    case VS_NET_ALGO_TREE: return plan_tree (gr, p, pl);
    case VS_NET_ALGO_RING: return plan_ring (gr, p, pl);
    case VS_NET_ALGO_COLLNET_DIRECT: return plan_collnet (gr, TRUE, pl);
    case VS_NET_ALGO_COLLNET_CHAIN: return plan_collnet (gr, FALSE, pl);
    case VS_NET_ALGO_NVLS: return plan_nvls (gr, FALSE, pl);
    case VS_NET_ALGO_NVLS_TREE: return plan_nvls (gr, TRUE, pl);
    default: return FALSE;
    }
}

static double
plan_time (const Plan *pl)
{
  double t = pl->xi > 0 ? pl->xi / pl->ri : 0;
  if (pl->xn > 0)
    t = MAX (t, pl->xn / pl->rn);
  if (pl->cap > 0)
    t = MAX (t, pl->bus / pl->cap);
  return pl->lat_ns + t * 1e9;
}

static const VsNetAlgo forced_algo[] = {
  [VS_FORCE_ALGO_RING] = VS_NET_ALGO_RING, [VS_FORCE_ALGO_TREE] = VS_NET_ALGO_TREE,
  [VS_FORCE_ALGO_NVLS] = VS_NET_ALGO_NVLS, [VS_FORCE_ALGO_NVLS_TREE] = VS_NET_ALGO_NVLS_TREE,
  [VS_FORCE_ALGO_COLLNET_DIRECT] = VS_NET_ALGO_COLLNET_DIRECT,
  [VS_FORCE_ALGO_COLLNET_CHAIN] = VS_NET_ALGO_COLLNET_CHAIN,
};

/* The fastest candidate among algorithms [A0, A1) and the allowed
 * protocols; FALSE when none applies. */
static gboolean
pick (const Group *gr, VsNetAlgo a0, VsNetAlgo a1, VsNetCost *out, double *best)
{
  VsForceProto fp = gr->net->protocol;
  gboolean found = FALSE;
  for (VsNetAlgo a = a0; a < a1; a++)
    for (VsNetProto p = 0; p < VS_NET_PROTO_COUNT; p++)
      {
        if (fp != VS_FORCE_PROTO_AUTO && (int) p != (int) fp - 1)
          continue;
        Plan pl;
        if (!plan_for (gr, a, p, &pl))
          continue;
        double t = plan_time (&pl);
        if (!found || t < *best)
          {
            found = TRUE;
            *best = t;
            out->algo = a, out->proto = p;
            out->intra_bytes = pl.xi, out->inter_bytes = pl.xn;
          }
      }
  return found;
}
G_STATIC_ASSERT (VS_FORCE_PROTO_LL - 1 == (int) VS_NET_PROTO_LL && VS_FORCE_PROTO_SIMPLE - 1 == (int) VS_NET_PROTO_SIMPLE);

void
network_cost (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks, VsNetCost *out)
{
  g_return_if_fail (net != NULL && out != NULL && net->ranks_per_node >= 1);
  g_return_if_fail (kind < VS_COLL_COUNT);
  *out = (VsNetCost) { .proto = VS_NET_PROTO_SIMPLE, .algo = VS_NET_ALGO_RING, .nodes = 1 };
  if (ranks <= 1)
    return;
  /* 64-bit counts: a group of 2^32 - 1 ranks does not wrap (issue 26). */
  guint64 g = MIN ((guint64) ranks, (guint64) net->ranks_per_node);
  guint64 N = ((guint64) ranks + g - 1) / g;
  Group gr = {
    .net = net, .kind = kind, .S = (double) bytes, .n = ranks, .g = (double) g, .N = (double) N,
    .ppn = (double) (ranks / N), .log2N = floor_log2 ((double) N),
    .ri = net->intra.bandwidth * net->intra.efficiency, .rn = net->inter.bandwidth * net->inter.efficiency,
    .intra_row = net->intra_kind == VS_FABRIC_PCIE ? ROW_PCI : ROW_NVLINK,
  };
  gr.k = net->nics_per_node == 0 ? gr.g : MIN (gr.g, (double) net->nics_per_node);
  out->nodes = (guint32) N;

  double best = 0;
  if (kind == VS_COLL_ALL_TO_ALL || kind == VS_COLL_SEND || kind == VS_COLL_RECV)
    {
      Plan pl;
      plan_direct (&gr, &pl, &out->proto);
      out->algo = VS_NET_ALGO_DIRECT;
      out->intra_bytes = pl.xi, out->inter_bytes = pl.xn;
      best = plan_time (&pl);
    }
  else
    {
      gboolean found = FALSE;
      if (net->algorithm != VS_FORCE_ALGO_AUTO && (guint) net->algorithm < G_N_ELEMENTS (forced_algo))
        {
          VsNetAlgo a = forced_algo[net->algorithm];
          found = pick (&gr, a, a + 1, out, &best);
          if (!found)  /* NCCL's ring backup */
            found = pick (&gr, VS_NET_ALGO_RING, VS_NET_ALGO_RING + 1, out, &best);
        }
      else
        found = pick (&gr, VS_NET_ALGO_TREE, VS_NET_ALGO_DIRECT, out, &best);
      if (!found)  /* a forced protocol nothing runs here: the ring's Simple */
        {
          VsNetwork any = *net;
          any.protocol = VS_FORCE_PROTO_SIMPLE;
          gr.net = &any;
          pick (&gr, VS_NET_ALGO_RING, VS_NET_ALGO_RING + 1, out, &best);
          gr.net = net;
        }
    }
  out->floor_ns = net->call_floor_ns;
  best += net->call_floor_ns;
  out->ns = best < MAX_NS ? (guint64) llround (best) : (guint64) MAX_NS;
}

guint64
network_time_ns (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks)
{
  VsNetCost c;
  network_cost (net, kind, bytes, ranks, &c);
  return c.ns;
}

void
network_from_config (VsNetwork *out, const VsConfig *c)
{
  *out = (VsNetwork) {
    .ranks_per_node = MAX (c->network.ranks_per_node, 1u),
    .nics_per_node = 0,
    .intra = { c->network.intra.bandwidth, c->network.intra.latency_ns, c->network.intra.efficiency },
    .inter = { c->network.inter.bandwidth, c->network.inter.latency_ns, c->network.inter.efficiency },
    .intra_kind = c->network.intra_kind,
    .ll_max_bw = c->network.ll_max_bw,
    .nvls = c->network.nvls,
    .nvls_efficiency = c->network.nvls_efficiency,
    .sharp = c->network.sharp,
    .cpu = c->network.cpu,
    .call_floor_ns = c->network.call_floor_ns,
    .algorithm = c->network.algorithm,
    .protocol = c->network.protocol,
  };
}
