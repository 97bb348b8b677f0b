/* collective.part.c — a kernel with a `collective` (SPEC 5.8): its time from
 * the network model (sim/model/network.c), its SMs and device-memory
 * traffic, its group's size in the replay, and the report's `network`
 * section.
 *
 * Assumptions (docs/model.md section 11, "In the replay"):
 * - Group. A collective runs on its communicator (`collective.group`) of
 *   n0 = `ranks` GPUs. The replay keeps n0 (network.ranks is the job's
 *   size and resizes nothing: the reader refuses a group larger than
 *   it), unless the config resizes the group's role (network.dp, .tp,
 *   .pp, .ep, .cp): then n1 is that size. A collective without a role (an
 *   old trace, a capture: NCCL does not know roles) keeps n0 always.
 * - Placement of a resized group. The network model puts a group of n
 *   ranks on nodes of min(n, ranks_per_node) (consecutive ranks). A tp
 *   group stays so (Megatron places tensor parallelism innermost,
 *   megatron/core/parallel_state.py, order "tp-cp-ep-dp-pp"); a grown
 *   dp, pp, ep or cp group keeps the ranks per node its traced size had,
 *   min(n0, ranks_per_node), and grows across nodes: an outer dimension
 *   of the layout grows by repeating the inner ones on more nodes.
 * - Bytes. `bytes` is a rank's input buffer. An all_gather's input is one
 *   shard of an output that the model fixes (parameters, a sequence's
 *   activations), so a resized all_gather moves bytes x n0 / n1; the
 *   other kinds' inputs (a full buffer to reduce, a rank's tokens to
 *   exchange, a message to send) do not depend on the group's size.
 * - Time. d0 is the captured duration; net0 and net1 the network model's
 *   times on the capture fabric (n0, bytes) and the target (n1, bytes1).
 *   What the model explains moves to the target's network; what it does
 *   not (d0 - net0: waiting for slower peers, a pipeline bubble) is other
 *   GPUs' compute and scales with compute:
 *   d1 = net1 + (d0 - net0) x capture tflops / target tflops. A capture
 *   faster than the model (d0 < net0) is scaled: d1 = d0 x net1 / net0.
 *   Both give d1 = d0 on the capture config (the SPEC's identity).
 * - Resources. NCCL runs one thread block per channel, about 16 on an
 *   8-GPU NVLink node (NCCL_MIN/MAX_NCHANNELS, tuned per topology): 16 of
 *   an A100's 108 SMs, so a collective holds a 0.15 share of `sm` for its
 *   whole time and moves its local traffic (the kernel's `bytes`, else its
 *   input read and output written) over `device_mem`; both flows are capped
 *   to end at d1 alone, so compute on another stream that wants the whole
 *   GPU is slowed by the share NCCL holds, and the collective by the
 *   memory bandwidth that compute takes.
 * - `busy_ns` is the time any collective runs; `exposed_ns` the part of it
 *   with no other kernel running on any stream (communication nothing
 *   hides). Both are counted at kernel starts and ends: O(1) per event.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

#define COLL_SM_SHARE 0.15

static void
coll_setup (Sim *s)
{
  const VsConfig *cfg = s->core.cfg;
  network_from_config (&s->coll.target, cfg);
  network_from_config (&s->coll.capture, s->core.cap_cfg);
  s->coll.ranks = cfg->network.ranks;
  const guint want[VS_ROLE_COUNT] = {
    [VS_ROLE_DP] = cfg->network.dp, [VS_ROLE_TP] = cfg->network.tp, [VS_ROLE_PP] = cfg->network.pp,
    [VS_ROLE_EP] = cfg->network.ep, [VS_ROLE_CP] = cfg->network.cp,
  };
  guint32 resized = 0;
  for (guint r = VS_ROLE_NONE + 1; r < VS_ROLE_COUNT; r++)
    if ((s->coll.role_ranks[r] = want[r]) != 0)
      resized |= 1u << r;
  /* The reader refuses a collective larger than the job, naming its line
   * (config-network.c has checked the resized roles against the job). */
  trace_reader_set_job (s->core.trace, s->coll.ranks, resized);
}

static void
coll_teardown (Sim *s)
{
  g_clear_pointer (&s->coll.groups, g_hash_table_unref);
}

/* The size C runs on in the replay. */
static inline guint32
coll_ranks (const Sim *s, const VsCollective *c)
{
  guint32 n = s->coll.role_ranks[c->role];
  return c->role != VS_ROLE_NONE && n != 0 ? n : c->ranks;
}

static inline void
coll_note (Sim *s, const Op *op, int delta)
{
  double now = s->core.now;
  if (s->coll.running_coll > 0)
    {
      double dt = now - s->coll.last_t;
      s->coll.busy_ns += dt;
      if (s->coll.running_other == 0)
        s->coll.exposed_ns += dt;
    }
  s->coll.last_t = now;
  if (op->has_coll)
    s->coll.running_coll += delta;
  else
    s->coll.running_other += delta;
}

/* Device-memory bytes of a collective whose trace gives none: its input
 * read and its output written (SPEC 3's bytes is the input). */
static double
coll_local_bytes (const VsCollective *c)
{
  double in = i2d (c->bytes), n = MAX (c->ranks, 1u);
  switch (c->kind)
    {
    case VS_COLL_ALL_GATHER: return in + in * n;
    case VS_COLL_REDUCE_SCATTER: return in + in / n;
    case VS_COLL_SEND: return in;
    case VS_COLL_RECV: return in;
    default: return 2 * in;
    }
}

static void
coll_run (Sim *s, Op *op)
{
  const VsCollective *c = &op->coll;
  guint32 n0 = c->ranks, n1 = coll_ranks (s, c);
  guint64 bytes1 = c->bytes;
  const VsNetwork *target = &s->coll.target;
  VsNetwork grown;
  if (G_UNLIKELY (n1 != n0))
    {
      if (c->kind == VS_COLL_ALL_GATHER)
        {
          /* The shard of a fixed output: bytes x n0 / n1 (below 2^63). */
          unsigned __int128 b = (unsigned __int128) c->bytes * n0 / n1;
          bytes1 = b > G_MAXINT64 ? (guint64) G_MAXINT64 : (guint64) b;
        }
      if (n1 > n0 && c->role != VS_ROLE_TP && n0 > 1)
        {
          /* Grown across nodes: the ranks per node it had. */
          grown = *target;
          grown.ranks_per_node = MIN (grown.ranks_per_node, n0);
          target = &grown;
        }
    }
  double d0 = op->dur == VS_NONE ? 0 : i2d (op->dur);
  VsNetCost c0, c1;
  network_cost (&s->coll.capture, c->kind, c->bytes, n0, &c0);
  network_cost (target, c->kind, bytes1, n1, &c1);
  double net0 = (double) c0.ns, net1 = (double) c1.ns;
  s->coll.max_nodes = MAX (s->coll.max_nodes, c1.nodes);
  /* A group as captured that the target's nodes split (a resized group
   * that grows across nodes is the what-if asked for). */
  if (G_UNLIKELY (c1.nodes > c0.nodes) && n1 == n0)
    {
      s->coll.split++;
      if (n1 >= s->coll.split_ranks)
        s->coll.split_ranks = n1, s->coll.split_nodes = c1.nodes, s->coll.split_cap_nodes = c0.nodes;
    }
  double d1;
  if (d0 >= net0)
    d1 = net1 + (d0 - net0) * s->gpu.tflops_scale;
  else
    d1 = d0 * net1 / net0;
  op->alone_ns = d1;
  op->waiting = 0;
  /* The network sets its time: the class table's bound (SPEC 5.9). */
  op->kbound = VS_BOUND_COMMUNICATION;
  if (d1 <= 0)
    return;
  op->waiting++;
  flow_start (s->core.net, s->core.now, COLL_SM_SHARE * d1 * 1e-9, COLL_SM_SHARE, &s->gpu.r_sm, 1, op, 0);
  double x = op->bytes != VS_NONE ? i2d (op->bytes) : coll_local_bytes (c);
  x = MIN (x, d1 * 1e-9 * s->gpu.b_dev);
  if (x > 0)
    {
      op->waiting++;
      flow_start (s->core.net, s->core.now, x, x / d1 * 1e9, &s->gpu.r_dev, 1, op, 0);
    }
}

static void
coll_stat_add (CollStat *k, const Op *op, double end)
{
  k->count++;
  k->bytes += op->coll.bytes;
  k->captured_ns += op->dur == VS_NONE ? 0 : i2d (op->dur);
  k->predicted_ns += end - op->ready_t;
}

static void
coll_done (Sim *s, const Op *op, double end)
{
  const VsCollective *c = &op->coll;
  guint32 n1 = coll_ranks (s, c);
  coll_stat_add (&s->coll.kinds[c->kind], op, end);
  s->coll.max_group = MAX (s->coll.max_group, n1);
  s->coll.roles_seen |= (guint64) 1 << c->role;
  if (c->group == 0)
    return;
  if (s->coll.groups == NULL)
    s->coll.groups = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  CollGroup *g = g_hash_table_lookup (s->coll.groups, &c->group);
  if (g == NULL)
    {
      g = g_new0 (CollGroup, 1);
      g->id = c->group;
      g->captured_ranks = c->ranks;
      g->ranks = n1;
      g->role = c->role;
      g_hash_table_insert (s->coll.groups, &g->id, g);
    }
  coll_stat_add (&g->st, op, end);
}

static gint
coll_group_cmp (gconstpointer a, gconstpointer b)
{
  guint64 x = (*(const CollGroup *const *) a)->id, y = (*(const CollGroup *const *) b)->id;
  return x < y ? -1 : x > y;
}

/* warnings[] of the network: a what-if that changed nothing; groups that
 * a node held on the capture machine and that the target's smaller nodes
 * split, whose time is then the inter-node fabric's. */
static void
coll_warnings (Sim *s, cJSON *r, double makespan)
{
  cJSON *w = cJSON_GetObjectItemCaseSensitive (r, "warnings");
  if (w == NULL)
    w = cJSON_AddArrayToObject (r, "warnings");
  const VsConfig *cfg = s->core.cfg;
  const struct { guint role; guint v; } keys[] = {
    { VS_ROLE_DP, cfg->network.dp }, { VS_ROLE_TP, cfg->network.tp }, { VS_ROLE_PP, cfg->network.pp },
    { VS_ROLE_EP, cfg->network.ep }, { VS_ROLE_CP, cfg->network.cp },
  };
  guint64 collectives = 0;
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    collectives += s->coll.kinds[k].count;
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    if (keys[i].v != 0 && collectives > 0 && !(s->coll.roles_seen & ((guint64) 1 << keys[i].role)))
      {
        const char *name = event_role_name (keys[i].role);
        g_autofree char *m = g_strdup_printf ("network.%s = %u resized no collective: the trace names no %s group "
                                              "(collective.group.role, docs/trace-format.md); its collectives keep "
                                              "their traced sizes", name, keys[i].v, name);
        cJSON_AddItemToArray (w, cJSON_CreateString (m));
      }
  /* network.ranks once resized the trace's largest group; now it sizes
   * the job only. Say so where a user may expect the old answer: no role
   * anywhere, and a job larger than every group. */
  if (s->coll.ranks > 1 && collectives > 0 && s->coll.roles_seen == 1 && s->coll.max_group < s->coll.ranks)
    {
      g_autofree char *m = g_strdup_printf (
        "network.ranks = %u is the job's size and resizes no collective; this trace's collectives name no role "
        "(collective.group.role), so they keep their traced sizes (at most %u ranks); network.dp, .tp, .pp, .ep "
        "and .cp resize groups by role (docs/model.md section 11)", s->coll.ranks, s->coll.max_group);
      cJSON_AddItemToArray (w, cJSON_CreateString (m));
    }
  if (s->coll.split > 0)
    {
      const VsConfig *cap = s->core.cap_cfg;
      g_autofree char *bw = units_format_rate (cfg->network.inter.bandwidth);
      g_autofree char *ex = units_format_time (s->coll.exposed_ns);
      g_autofree char *mk = units_format_time (makespan);
      const char *tn = cfg->name ? cfg->name : "the target", *cn = cap->name ? cap->name : "the capture config";
      guint cap_rpn = MAX (cap->network.ranks_per_node, 1u), rpn = MAX (cfg->network.ranks_per_node, 1u);
      g_autofree char *m = g_strdup_printf (
        "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " collectives span more nodes on the target (%s) than on the "
        "capture config (%s): the largest, of %u ranks, ran in %u node%s of %s (%u GPU%s a node) and spans %u here "
        "(%u GPU%s a node, network.ranks_per_node), so it crosses %s's inter-node fabric at %s a GPU "
        "(network.inter.bandwidth); %s of the predicted %s is network time no kernel hides. If the job's GPUs share "
        "a node on the machine you mean, set network.ranks_per_node",
        s->coll.split, collectives, tn, cn, s->coll.split_ranks, s->coll.split_cap_nodes,
        s->coll.split_cap_nodes == 1 ? "" : "s", cn, cap_rpn, cap_rpn == 1 ? "" : "s", s->coll.split_nodes, rpn,
        rpn == 1 ? "" : "s", tn, bw, ex, mk);
      cJSON_AddItemToArray (w, cJSON_CreateString (m));
    }
}

static void
coll_report (Sim *s, cJSON *r, double makespan)
{
  cJSON *n = cJSON_AddObjectToObject (r, "network");
  guint64 count = 0, bytes = 0;
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    count += s->coll.kinds[k].count, bytes += s->coll.kinds[k].bytes;
  cJSON_AddNumberToObject (n, "collectives", (double) count);
  cJSON_AddNumberToObject (n, "bytes", (double) bytes);
  cJSON_AddNumberToObject (n, "busy_ns", round (s->coll.busy_ns));
  cJSON_AddNumberToObject (n, "exposed_ns", round (s->coll.exposed_ns));
  /* The job's size: network.ranks when it sizes the job, else the
   * largest group replayed. */
  cJSON_AddNumberToObject (n, "ranks", s->coll.ranks > 1 ? s->coll.ranks : s->coll.max_group);
  /* Where the collectives ran: the target's GPUs a node, and the most
   * nodes one collective spanned (1: all inside a node). */
  cJSON_AddNumberToObject (n, "ranks_per_node", MAX (s->core.cfg->network.ranks_per_node, 1u));
  cJSON_AddNumberToObject (n, "nodes", MAX (s->coll.max_nodes, 1u));
  cJSON *groups = cJSON_AddArrayToObject (n, "groups");
  if (s->coll.groups != NULL)
    {
      g_autoptr (GPtrArray) gs = g_ptr_array_new ();
      GHashTableIter it;
      gpointer v;
      g_hash_table_iter_init (&it, s->coll.groups);
      while (g_hash_table_iter_next (&it, NULL, &v))
        g_ptr_array_add (gs, v);
      g_ptr_array_sort (gs, coll_group_cmp);
      for (guint i = 0; i < gs->len; i++)
        {
          const CollGroup *g = gs->pdata[i];
          cJSON *o = cJSON_CreateObject ();
          cJSON_AddNumberToObject (o, "id", (double) g->id);   /* exact: below 2^53 (the readers check) */
          if (g->role != VS_ROLE_NONE)
            cJSON_AddStringToObject (o, "role", event_role_name (g->role));
          else
            cJSON_AddNullToObject (o, "role");
          cJSON_AddNumberToObject (o, "captured_ranks", g->captured_ranks);
          cJSON_AddNumberToObject (o, "ranks", g->ranks);
          cJSON_AddNumberToObject (o, "collectives", (double) g->st.count);
          cJSON_AddNumberToObject (o, "bytes", (double) g->st.bytes);
          cJSON_AddNumberToObject (o, "captured_ns", round (g->st.captured_ns));
          cJSON_AddNumberToObject (o, "predicted_ns", round (g->st.predicted_ns));
          cJSON_AddItemToArray (groups, o);
        }
    }
  cJSON *kinds = cJSON_AddArrayToObject (n, "kinds");
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    {
      const CollStat *c = &s->coll.kinds[k];
      if (c->count == 0)
        continue;
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "kind", event_collective_name (k));
      cJSON_AddNumberToObject (o, "count", (double) c->count);
      cJSON_AddNumberToObject (o, "bytes", (double) c->bytes);
      cJSON_AddNumberToObject (o, "captured_ns", round (c->captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (c->predicted_ns));
      cJSON_AddItemToArray (kinds, o);
    }
  coll_warnings (s, r, makespan);
}
