/* network.c — the collective cost model (docs/model.md "Collectives").
 *
 * Assumptions and sources:
 * - The alpha-beta model of collectives (Thakur, Rabenseifner & Gropp,
 *   "Optimization of Collective Communication Operations in MPICH", IJHPCA
 *   2005; Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
 *   clusters of workstations", JPDC 2009): a collective is a number of
 *   algorithm steps, each paying a latency, plus the bytes one rank puts on
 *   its slowest link divided by that link's bandwidth.
 * - What one rank sends (the "bus bandwidth" factors of NVIDIA's
 *   nccl-tests, doc/PERFORMANCE.md), S the per-rank input buffer, n ranks:
 *   ring all-reduce 2(n-1)/n·S in 2(n-1) steps; reduce-scatter (n-1)/n·S
 *   and all-gather (n-1)·S (its input is one rank's shard) in n-1 steps;
 *   broadcast and reduce S through a pipelined chain of n-1 hops;
 *   all-to-all (n-1)/n·S sent to all peers at once; send/recv S in one step.
 * - Across nodes NCCL's ring is flat: it threads every rank, and NCCL opens
 *   one ring (channel) per NIC, so each of a node's g NICs carries 1/g of
 *   what a ring link carries (1/k when the node's g GPUs share k NICs) while the NVLink/PCIe links carry all of it.
 *   The bandwidth term is therefore the larger of the two levels' times;
 *   of the ring's steps, the inter-node ones (2(N-1) for all-reduce over N
 *   nodes, N-1 for the others) pay the inter-node latency (NCCL
 *   src/graph/tuning.cc, ncclTopoTuneModel, nInterSteps). Across nodes
 *   all-reduce may also take NCCL's double binary tree (Sanders, Speck &
 *   Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and
 *   scan", Parallel Computing 2009): 2·((g-1) intra + ceil(log2 N) inter)
 *   step latencies, bandwidth half the ring's bus bandwidth and 0.9 of it
 *   (tuning.cc's "ratio .5" and "busBw*.9").
 * - Protocols (tuning.cc): LL carries 4 flag bytes with every 4 data bytes
 *   and runs at 1/4 of the Simple bus bandwidth, LL128 at 120/128 less
 *   8 % = 0.92; their per-step latencies, relative to Simple's, follow
 *   NCCL's hwLat ring table (NVLink .47/1.9/3.4 us -> 0.14, 0.56, 1;
 *   network 2.7/4.0/9.6 us -> 0.28, 0.42, 1), and each has its fixed base
 *   (baseLat ring: 6.6, 14, 8.4 us). The fastest protocol and algorithm
 *   win, as NCCL's tuner picks by predicted time: small messages are
 *   latency-bound and go LL, large ones Simple.
 * - A group of one rank does no communication and costs 0 here (NCCL's
 *   local copy is device-memory traffic, not network time).
 * Not modeled: NVLink SHARP (NVLS) and CollNet in-network reduction, NCCL's
 *   per-size channel count, rail-optimized or oversubscribed fabrics beyond
 *   what `efficiency` absorbs, and topology-aware placement of a group
 *   smaller than the job. */
#include "model/network.h"

#include <math.h>

typedef struct {
  double bw;          /* fraction of the Simple bandwidth */
  double lat_intra;   /* per-step latency, fraction of the level's latency */
  double lat_inter;
  double base_ns;     /* fixed cost of one collective */
} Proto;

static const Proto protos[VS_NET_PROTO_COUNT] = {
  [VS_NET_PROTO_LL] = { 0.25, 0.14, 0.28, 6600 },
  [VS_NET_PROTO_LL128] = { 0.92, 0.56, 0.42, 14000 },
  [VS_NET_PROTO_SIMPLE] = { 1.0, 1.0, 1.0, 8400 },
};

/* NCCL's tree runs at 0.9 of its bus bandwidth (tuning.cc). */
#define TREE_BW 0.9
/* Collectives that reduce move their bytes at 0.7 of the rate send/recv
 * reaches on the same link: the reduction's loads, adds and stores sit in
 * every pipeline step. Measured (vidur, docs/validation.md): 64 MiB over
 * the same bytes on the wire, all-reduce/send time ratio 0.75 between two
 * DGX nodes, 0.68 over NVSwitch, 0.61 over an NVLink bridge. */
#define REDUCE_BW 0.7

const char *
network_proto_name (VsNetProto p)
{
  static const char *names[] = { "LL", "LL128", "Simple" };
  return p < VS_NET_PROTO_COUNT ? names[p] : NULL;
}

const char *
network_algo_name (VsNetAlgo a)
{
  static const char *names[] = { "ring", "tree", "direct" };
  return a < VS_NET_ALGO_COUNT ? names[a] : NULL;
}

static double
rate (const VsNetLevel *l)
{
  return l->bandwidth * l->efficiency;
}

/* One candidate: steps and bytes per level; the levels work concurrently
 * (a pipelined ring or chain), so the slower one bounds the time. */
typedef struct {
  VsNetAlgo algo;
  double steps_intra, steps_inter;
  double intra_bytes, inter_bytes;  /* per rank, on its intra link / its NIC */
  double bw_scale;                  /* algorithm's bandwidth derating */
} Plan;

static double
plan_ns (const VsNetwork *net, const Plan *pl, const Proto *p)
{
  double t = p->base_ns + pl->steps_intra * net->intra.latency_ns * p->lat_intra
             + pl->steps_inter * net->inter.latency_ns * p->lat_inter;
  double bi = pl->intra_bytes > 0 ? pl->intra_bytes / (rate (&net->intra) * p->bw * pl->bw_scale) : 0;
  double bn = pl->inter_bytes > 0 ? pl->inter_bytes / (rate (&net->inter) * p->bw * pl->bw_scale) : 0;
  return t + MAX (bi, bn) * 1e9;
}

void
network_cost (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks, VsNetCost *out)
{
  g_return_if_fail (net != NULL && out != NULL && net->ranks_per_node >= 1);
  g_return_if_fail (kind < VS_COLL_COUNT);
  *out = (VsNetCost) { .proto = VS_NET_PROTO_SIMPLE, .algo = VS_NET_ALGO_RING, .nodes = 1 };
  if (ranks <= 1)
    return;
  double n = ranks, S = (double) bytes;
  guint32 g_ranks = MIN (ranks, net->ranks_per_node);
  double g = g_ranks;                                /* ranks per node */
  double N = (double) ((ranks + g_ranks - 1) / g_ranks); /* nodes */
  gboolean multi = N > 1;
  /* The NICs the node's g ranks drive: one each, or the node's all. */
  double nics = net->nics_per_node == 0 ? g : MIN (g, (double) net->nics_per_node);
  out->nodes = (guint32) N;

  /* Bytes one ring (or chain) link carries, and the steps. */
  double link = 0, steps = 0, inter_steps = 0;
  gboolean reduces = kind == VS_COLL_ALL_REDUCE || kind == VS_COLL_REDUCE_SCATTER || kind == VS_COLL_REDUCE;
  double scale = reduces ? REDUCE_BW : 1.0;
  Plan plans[2];
  guint n_plans = 0;
  switch (kind)
    {
    case VS_COLL_ALL_REDUCE:
      link = 2 * (n - 1) / n * S, steps = 2 * (n - 1), inter_steps = 2 * (N - 1);
      break;
    case VS_COLL_REDUCE_SCATTER:
      link = (n - 1) / n * S, steps = n - 1, inter_steps = N - 1;
      break;
    case VS_COLL_ALL_GATHER:
      link = (n - 1) * S, steps = n - 1, inter_steps = N - 1;
      break;
    case VS_COLL_BROADCAST:
    case VS_COLL_REDUCE:
      link = S, steps = n - 1, inter_steps = N - 1;
      break;
    case VS_COLL_ALL_TO_ALL:
      /* Every rank sends S/n to each peer at once: g-1 of them over the
       * node's fabric, n-g over its NIC. */
      plans[n_plans++] = (Plan) { VS_NET_ALGO_DIRECT, 1, multi ? 1 : 0, (g - 1) / n * S,
                                  (n - g) / n * S * g / nics, 1.0 };
      break;
    case VS_COLL_SEND:
    case VS_COLL_RECV:
      plans[n_plans++] = multi ? (Plan) { VS_NET_ALGO_DIRECT, 0, 1, 0, S, 1.0 }
                               : (Plan) { VS_NET_ALGO_DIRECT, 1, 0, S, 0, 1.0 };
      break;
    default:
      g_assert_not_reached ();
    }
  if (n_plans == 0)
    {
      /* The ring: every intra link carries `link`; across nodes each NIC
       * carries link/g (g rings, one per NIC); with one rank per node every
       * hop is a NIC. */
      plans[n_plans++] = (Plan) { VS_NET_ALGO_RING, steps - inter_steps, inter_steps,
                                  g > 1 ? link : 0, multi ? link / nics : 0, scale };
      if (kind == VS_COLL_ALL_REDUCE && multi)
        {
          /* Double binary tree: reduce up then broadcast down, S each way;
           * the node's g NICs share the inter-node traffic. */
          double up = ceil (log2 (N));
          plans[n_plans++] = (Plan) { VS_NET_ALGO_TREE, 2 * (g - 1), 2 * up, g > 1 ? 2 * S : 0,
                                      2 * S / nics, TREE_BW * scale };
        }
    }

  double best = G_MAXDOUBLE;
  for (guint a = 0; a < n_plans; a++)
    for (guint p = 0; p < VS_NET_PROTO_COUNT; p++)
      {
        double t = plan_ns (net, &plans[a], &protos[p]);
        if (t < best)
          {
            best = t;
            out->proto = (VsNetProto) p;
            out->algo = plans[a].algo;
            out->intra_bytes = plans[a].intra_bytes;
            out->inter_bytes = plans[a].inter_bytes;
          }
      }
  /* The config's rates are checked (a 1 GiB transfer ends within 2^63 ns);
   * a larger message on a slow fabric still must not overflow. */
  out->ns = best < 9.2e18 ? (guint64) llround (best) : (guint64) 9.2e18;
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
  };
}
