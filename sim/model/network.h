/* network.h — how long a collective takes over a modeled interconnect
 * (SPEC 3 `collective`, 4 `network`, 5.8; docs/model.md section 11).
 *
 * A job of `ranks` GPUs sits in nodes of `ranks_per_node`; GPUs inside a
 * node talk over the intra-node fabric (NVLink, NVSwitch, PCIe, Infinity
 * Fabric), nodes over the inter-node one (each GPU's NIC share). Each level
 * is a per-GPU unidirectional bandwidth, an efficiency and a latency per
 * ring step. network_cost() prices one collective the way NCCL's tuner
 * does (NVIDIA/nccl src/tuning/, commit 1fc949c5): every algorithm the
 * hardware has (ring, tree, NVLS, NVLS-tree, CollNet direct and chain)
 * with every protocol it runs (LL, LL128, Simple), the lowest predicted
 * time wins unless the config forces one; plus the config's per-call
 * floor. It is the one pricing function: the replay engine and the
 * trace generators call it. O(1): at most 14 candidates, no per-rank loop. */
#pragma once

#include <glib.h>

#include "config/config.h"
#include "trace/event.h"

/* One level of the fabric. */
typedef struct {
  double bandwidth;   /* bytes/s per GPU per direction, peak; > 0 */
  double latency_ns;  /* per ring step, Simple protocol (NCCL's hwLat ring/Simple row) */
  double efficiency;  /* fraction of bandwidth the Simple protocol reaches, 0 < e <= 1 */
} VsNetLevel;

typedef struct {
  guint32 ranks_per_node;  /* >= 1 */
  guint32 nics_per_node;   /* NICs a node's GPUs share; 0: one per GPU */
  VsNetLevel intra, inter; /* inter.bandwidth is per NIC */
  VsFabric intra_kind;     /* NCCL's NVLink or PCI latency row; LL128 needs NVLink */
  double ll_max_bw;        /* LL's bus-bandwidth ceiling in one node, bytes/s; 0: none */
  gboolean nvls;           /* NVLink SHARP (NVSwitch, Hopper and later) */
  double nvls_efficiency;  /* NVLS's fraction of the intra rate */
  gboolean sharp;          /* in-network reduction between nodes: CollNet */
  VsHostCpu cpu;           /* NCCL's post overhead and LL ceilings across nodes */
  double call_floor_ns;    /* per call, outside NCCL's own time */
  VsForceAlgo algorithm;   /* VS_FORCE_ALGO_AUTO: NCCL's choice */
  VsForceProto protocol;
} VsNetwork;

typedef enum { VS_NET_PROTO_LL, VS_NET_PROTO_LL128, VS_NET_PROTO_SIMPLE, VS_NET_PROTO_COUNT } VsNetProto;
/* NCCL's order (a tie goes to the first, as NCCL's `time < minTime`
 * keeps it), then the point-to-point pattern of send, recv, all_to_all. */
typedef enum {
  VS_NET_ALGO_TREE, VS_NET_ALGO_RING, VS_NET_ALGO_COLLNET_DIRECT, VS_NET_ALGO_COLLNET_CHAIN, VS_NET_ALGO_NVLS,
  VS_NET_ALGO_NVLS_TREE, VS_NET_ALGO_DIRECT, VS_NET_ALGO_COUNT
} VsNetAlgo;

/* What one collective costs, and why. */
typedef struct {
  guint64 ns;              /* predicted time, floor included; 0 for a group of one */
  VsNetProto proto;
  VsNetAlgo algo;
  guint32 nodes;           /* nodes the group spans */
  double floor_ns;         /* the call floor inside ns */
  double intra_bytes;      /* bytes one rank sends over the intra-node fabric */
  double inter_bytes;      /* bytes one NIC sends */
} VsNetCost;

/* The fabric of config C's `network` (one NIC per GPU). */
void network_from_config (VsNetwork *out, const VsConfig *c);
/* Prices KIND of BYTES (the per-rank input buffer, SPEC 3) on a group of
 * RANKS over NET. RANKS 0 or 1 costs nothing. Any RANKS and BYTES are
 * priced without overflow (node counts in 64 bits, times capped at
 * 9.2e18 ns). */
void network_cost (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks, VsNetCost *out);
/* network_cost()'s ns alone. */
guint64 network_time_ns (const VsNetwork *net, VsCollKind kind, guint64 bytes, guint32 ranks);
const char *network_proto_name (VsNetProto p);  /* "LL", "LL128", "Simple" */
/* "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "direct" */
const char *network_algo_name (VsNetAlgo a);
