/* network.h — how long a collective takes over a modeled interconnect
 * (SPEC 3 `collective`, 4 `network`, 5.8; docs/model.md "Collectives").
 *
 * A job of `ranks` GPUs sits in nodes of `ranks_per_node`; GPUs inside a
 * node talk over the intra-node fabric (NVLink/NVSwitch, PCIe, Infinity
 * Fabric), nodes over the inter-node one (each GPU's NIC share). Each level
 * is a per-GPU unidirectional bandwidth, a latency per algorithm step and
 * an efficiency. network_cost() prices one collective the way NCCL's
 * tuner does (ring or tree, LL / LL128 / Simple protocol, the fastest
 * wins) with hierarchical intra/inter phases once a group spans nodes.
 * Everything is O(1): a handful of candidates, no per-rank loop. */
#pragma once

#include <glib.h>

#include "config/config.h"
#include "trace/event.h"

/* One level of the fabric. */
typedef struct {
  double bandwidth;   /* bytes/s per GPU per direction, peak; > 0 */
  double latency_ns;  /* per algorithm step, Simple protocol */
  double efficiency;  /* fraction of bandwidth a large transfer reaches, 0 < e <= 1 */
} VsNetLevel;

typedef struct {
  guint32 ranks_per_node;  /* >= 1 */
  guint32 nics_per_node;   /* NICs a node's GPUs share; 0: one per GPU */
  VsNetLevel intra, inter; /* inter.bandwidth is per NIC */
} VsNetwork;

typedef enum { VS_NET_PROTO_LL, VS_NET_PROTO_LL128, VS_NET_PROTO_SIMPLE, VS_NET_PROTO_COUNT } VsNetProto;
typedef enum { VS_NET_ALGO_RING, VS_NET_ALGO_TREE, VS_NET_ALGO_DIRECT, VS_NET_ALGO_COUNT } VsNetAlgo;

/* What one collective costs, and why. */
typedef struct {
  guint64 ns;              /* predicted time; 0 for a group of one */
  VsNetProto proto;
  VsNetAlgo algo;
  guint32 nodes;           /* nodes the group spans */
  double intra_bytes;      /* bytes one rank sends over the intra-node fabric */
  double inter_bytes;      /* bytes one rank sends over its NIC */
} VsNetCost;

/* The fabric of config C's `network` (one NIC per GPU). */
void network_from_config (VsNetwork *out, const VsConfig *c);
/* Prices KIND of BYTES (the per-rank input buffer, SPEC 3) on a group of
 * RANKS over NET. RANKS 0 or 1 costs nothing. */
void network_cost (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks, VsNetCost *out);
/* network_cost()'s ns alone. */
guint64 network_time_ns (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks);
const char *network_proto_name (VsNetProto p);  /* "LL", "LL128", "Simple" */
const char *network_algo_name (VsNetAlgo a);    /* "ring", "tree", "direct" */
