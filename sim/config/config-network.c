/* config-network.c — the network section (docs/config.md "network"): its
 * keys (the rows of the schema under "network") and its checks: job size,
 * roles, NVLS, the levels' rates. */
#include "config/config-priv.h"

#include <string.h>

static gboolean check_network_level (VsConfig *c, void *at, const char *prefix, const char *origin,
                                     GError **error);

static const char *const fabric_choices[] = { "pcie", "nvlink", "nvswitch", NULL };
static const char *const host_cpu_choices[] = { "intel", "amd", "arm", NULL };
static const char *const force_algo_choices[] = { "auto", "ring", "tree", "nvls", "nvls_tree", "collnet_direct",
                                                  "collnet_chain", NULL };
static const char *const force_proto_choices[] = { "auto", "LL", "LL128", "Simple", NULL };
G_STATIC_ASSERT (sizeof (VsFabric) == sizeof (int) && sizeof (VsHostCpu) == sizeof (int));
G_STATIC_ASSERT (sizeof (VsForceAlgo) == sizeof (int) && sizeof (VsForceProto) == sizeof (int));
static const Field network_intra_fields[] = {
  { "tech", K_STR, AT (network.intra.tech), .def.s = "PCIe 4.0 x16" },
  { "kind", K_ENUM, .choices = fabric_choices, AT (network.intra_kind), .def.e = VS_FABRIC_PCIE },
  { "bandwidth", K_RATE, AT (network.intra.bandwidth), .def.d = 31.5e9 },
  { "latency", K_TIME, AT (network.intra.latency_ns), .def.d = 5700 },
  { "efficiency", K_FRAC, AT (network.intra.efficiency), .def.d = 1.0 },
  { "ll_max_bw", K_RATE, AT (network.ll_max_bw), .def.d = 0 },
  { "nvls", K_BOOL, AT (network.nvls), .def.b = FALSE },
  { "nvls_efficiency", K_FRAC, AT (network.nvls_efficiency), .def.d = 0.85 },
  { .key = NULL },
};
static const Field network_inter_fields[] = {
  { "tech", K_STR, AT (network.inter.tech), .def.s = "100 Gb/s Ethernet per GPU" },
  { "bandwidth", K_RATE, AT (network.inter.bandwidth), .def.d = 12.5e9 },
  { "latency", K_TIME, AT (network.inter.latency_ns), .def.d = 14000 },
  { "efficiency", K_FRAC, AT (network.inter.efficiency), .def.d = 1.0 },
  { "sharp", K_BOOL, AT (network.sharp), .def.b = FALSE },
  { "cpu", K_ENUM, .choices = host_cpu_choices, AT (network.cpu), .def.e = VS_HOST_CPU_INTEL },
  { .key = NULL },
};
const Field cfg_network_fields[] = {
  { "ranks", K_COUNT, AT (network.ranks), .def.u = 1 },
  { "ranks_per_node", K_COUNT, AT (network.ranks_per_node), .def.u = 1 },
  { "algorithm", K_ENUM, .choices = force_algo_choices, AT (network.algorithm), .def.e = VS_FORCE_ALGO_AUTO },
  { "protocol", K_ENUM, .choices = force_proto_choices, AT (network.protocol), .def.e = VS_FORCE_PROTO_AUTO },
  { "call_floor", K_TIME, AT (network.call_floor_ns), .def.d = 0 },
  /* What-ifs by role (docs/model.md section 11, "In the replay"): the
   * size to replay every group of that role on; 0 keeps the trace's. */
  { "dp", K_UINT, AT (network.dp), .def.u = 0 },
  { "tp", K_UINT, AT (network.tp), .def.u = 0 },
  { "pp", K_UINT, AT (network.pp), .def.u = 0 },
  { "ep", K_UINT, AT (network.ep), .def.u = 0 },
  { "cp", K_UINT, AT (network.cp), .def.u = 0 },
  { "intra", K_OBJ, .sub = network_intra_fields, .check = check_network_level },
  { "inter", K_OBJ, .sub = network_inter_fields, .check = check_network_level },
  { .key = NULL },
};

/* A fabric level moves bytes: zero bandwidth would make every collective
 * take forever, so it is an error naming the key. */
static gboolean
check_network_level (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  double bw = g_str_has_suffix (prefix, "intra") ? c->network.intra.bandwidth : c->network.inter.bandwidth;
  if (!(bw > 0))
    {
      g_autofree char *p = cfg_path_join (prefix, "bandwidth");
      cfg_fail (error, origin, p, "must be greater than 0 (the per-GPU bandwidth of this fabric level, e.g. \"300GB/s\")");
      return FALSE;
    }
  double eff = g_str_has_suffix (prefix, "intra") ? c->network.intra.efficiency : c->network.inter.efficiency;
  g_autofree char *bk = cfg_path_join (prefix, "bandwidth");
  g_autofree char *ek = cfg_path_join (prefix, "efficiency");
  return cfg_check_rate (bw, eff, origin, bk, ek, error);
}

/* The job's size; a group resized by role is part of the job and may not
 * outgrow network.ranks when that sizes it; and what the forced algorithm and protocol need of the
 * fabric (NCCL_ALGO / NCCL_PROTO name what NCCL may use; here a choice the
 * hardware cannot run is an error, not NCCL's silent fallback). */
gboolean
cfg_check_network (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->network.ranks > VS_NETWORK_MAX_RANKS)
    {
      cfg_fail (error, origin, "network.ranks", "at most %u (2^24 GPUs, beyond any machine built), got %u",
            VS_NETWORK_MAX_RANKS, c->network.ranks);
      return FALSE;
    }
  if (c->network.ranks_per_node > VS_NETWORK_MAX_RANKS_PER_NODE)
    {
      cfg_fail (error, origin, "network.ranks_per_node", "at most %u (2^16), got %u", VS_NETWORK_MAX_RANKS_PER_NODE,
            c->network.ranks_per_node);
      return FALSE;
    }
  const struct { const char *key; guint v; } roles[] = {
    { "dp", c->network.dp }, { "tp", c->network.tp }, { "pp", c->network.pp },
    { "ep", c->network.ep }, { "cp", c->network.cp },
  };
  for (guint i = 0; i < G_N_ELEMENTS (roles); i++)
    if (c->network.ranks > 1 && roles[i].v > c->network.ranks)
      {
        g_autofree char *p = cfg_path_join (prefix, roles[i].key);
        cfg_fail (error, origin, p, "%u is more than the job's %u GPUs (network.ranks): a %s group is part of its job; "
              "raise network.ranks too", roles[i].v, c->network.ranks, roles[i].key);
        return FALSE;
      }
  if (c->network.nvls && c->network.intra_kind != VS_FABRIC_NVSWITCH)
    {
      cfg_fail (error, origin, "network.intra.nvls", "NVLink SHARP lives in NVSwitches: it needs network.intra.kind "
            "\"nvswitch\"");
      return FALSE;
    }
  VsForceAlgo a = c->network.algorithm;
  const char *an = force_algo_choices[a];
  if ((a == VS_FORCE_ALGO_NVLS || a == VS_FORCE_ALGO_NVLS_TREE) && !c->network.nvls)
    {
      cfg_fail (error, origin, "network.algorithm", "%s needs NVLink SHARP (an NVSwitch system of Hopper or later: "
            "network.intra.nvls true), which this config does not have", an);
      return FALSE;
    }
  if ((a == VS_FORCE_ALGO_COLLNET_DIRECT || a == VS_FORCE_ALGO_COLLNET_CHAIN) && !c->network.sharp)
    {
      cfg_fail (error, origin, "network.algorithm", "%s needs in-network reduction between nodes (SHARP switches: "
            "network.inter.sharp true), which this config does not have", an);
      return FALSE;
    }
  if (a == VS_FORCE_ALGO_COLLNET_DIRECT && c->network.intra_kind != VS_FABRIC_NVSWITCH)
    {
      cfg_fail (error, origin, "network.algorithm", "collnet_direct needs an NVSwitch node (network.intra.kind "
            "\"nvswitch\"; NCCL disables it elsewhere): use collnet_chain");
      return FALSE;
    }
  VsForceProto p = c->network.protocol;
  if (p == VS_FORCE_PROTO_LL128 && c->network.intra_kind == VS_FABRIC_PCIE && c->network.ranks_per_node > 1)
    {
      cfg_fail (error, origin, "network.protocol", "LL128 needs NVLink between the node's GPUs (NCCL enables it only "
            "there); this config's network.intra.kind is \"pcie\"");
      return FALSE;
    }
  if (p != VS_FORCE_PROTO_AUTO && p != VS_FORCE_PROTO_SIMPLE && a >= VS_FORCE_ALGO_NVLS)
    {
      cfg_fail (error, origin, "network.protocol", "%s runs the Simple protocol only, not %s", an,
            force_proto_choices[p]);
      return FALSE;
    }
  return TRUE;
}
