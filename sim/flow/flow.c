/* flow.c — max-min fair fluid sharing of resources (see flow.h).
 *
 * Model assumptions (docs/model.md): a flow's rate is constant between two
 * changes of the set of active flows; sharing is max-min fair with per-flow
 * caps (progressive filling, as in Bertsekas & Gallager, Data Networks,
 * 6.5.2); a resource serves all flows on it with the same capacity in
 * whatever direction they go (the engine models the two directions of a
 * full-duplex link as two resources).
 *
 * Cost: a start or end recomputes only the connected component of flows
 * that share resources with it, O(flows x resources in it) per filling
 * round, and nothing at all when every resource on its path has slack
 * (the caps of its flows fit: no rate can change). Flows started at one
 * instant, and those ended with them, are rated together. Measured on the
 * benchmark traces (docs/performance.md): the slack test saves 9 % of all
 * instructions, capping flows at their path's slowest resource another
 * 12-16 % where copies and swaps run.
 *
 * Hot path (callgrind, plain-100k: 1,181 -> 684 instructions per event in
 * this file in a first pass, bit-identical; then 433 -> 347 in the replay
 * benchmark's r100k trace, within rounding): resources whose flows all
 * have one-resource paths (the contended `sm`) are rated without a
 * component search, in one pass that tests their caps; the earliest end
 * is kept up to date as flows start, end and change rate (a scan only
 * when the flow that had it now ends later) and read inline from flow.h;
 * end times sit in an array parallel to the active flows. A start on one
 * resource without an observer is straight-line code (slack: at its cap;
 * binding: pending), a flow's end on one resource is inlined into
 * flow_net_finish_due, which handles one or two due flows (a kernel's
 * compute and memory flows end together) in registers. Conditions whose
 * outcome varies from flow to flow are computed without branches where
 * that is cheap. A recompute leaves flows whose rate stays alone (same
 * end, no division). Statistics: busy and saturated time as the load
 * changes; bytes as the flows move them (their amounts, exactly, instead
 * of load x time: the old sum carried the rounding of the end times, up
 * to 3e-10 relative on lightly used links).
 *
 * This file is the flow network's one translation unit (as replay.c is
 * the engine's: the hot paths inline across the parts): the network, its
 * resources and the public API are here; it #includes its parts, files
 * of one job each (docs/architecture.md), which share flow-priv.h:
 * flow-solve.part.c (the max-min solve), flow-star.part.c (stars),
 * flow-flush.part.c (pending resources rated at the next flush),
 * flow-ps.part.c (processor sharing), flow-start.part.c (starting flows),
 * flow-end.part.c (the next end, ending flows). */
#include "flow/flow.h"
#include "flow/flow-priv.h"

VsFlowNet *
flow_net_new (void)
{
  VsFlowNet *net = g_new0 (VsFlowNet, 1);
  net->res = g_array_new (FALSE, TRUE, sizeof (Resource));
  net->hot.next_end = INFINITY;
  net->act_end = INFINITY;
  net->ps_min = INFINITY;
  return net;
}

void
flow_net_free (VsFlowNet *net)
{
  if (net == NULL)
    return;
  for (guint i = 0; i < net->res->len; i++)
    {
      g_free (RES (net, i)->name);
      g_free (RES (net, i)->flows.v);
    }
  for (guint k = 0; k < net->ps_res.len; k++)
    {
      PVec *h = &RES (net, net->ps_res.v[k])->ps_heap;
      for (guint j = 0; j < h->len; j++)
        g_free (h->v[j]);
    }
  for (guint i = 0; i < net->res->len; i++)
    g_free (RES (net, i)->ps_heap.v);
  g_array_free (net->res, TRUE);
  for (guint i = 0; i < net->active.len; i++)
    g_free (net->active.v[i]);
  g_free (net->active.v);
  g_free (net->end);
  g_free (net->comp_flows.v);
  g_free (net->comp_res.v);
  g_free (net->pending.v);
  g_free (net->ps_res.v);
  while (net->free_flows)
    {
      VsFlow *f = net->free_flows;
      net->free_flows = f->owner;
      g_free (f);
    }
  g_free (net);
}

guint
flow_net_add_resource (VsFlowNet *net, const char *name, double capacity)
{
  g_return_val_if_fail (capacity > 0, 0);
  Resource r = { 0 };
  r.name = g_strdup (name);
  r.cap = capacity;
  r.slack_max = capacity * (1 + 1e-9);
  r.busy_min = capacity * 1e-9;
  r.sat_min = capacity * 0.95 * (1 - 1e-9);
  g_array_append_val (net->res, r);
  net->rv = (Resource *) net->res->data;
  net->n_fast = net->observer != NULL ? 0 : net->res->len;
  return net->res->len - 1;
}

guint flow_net_n_resources (const VsFlowNet *net) { return net->res->len; }
const char *flow_net_resource_name (const VsFlowNet *net, guint i) { return RES (net, i)->name; }
double flow_net_resource_capacity (const VsFlowNet *net, guint i) { return RES (net, i)->cap; }
double
flow_net_resource_load (VsFlowNet *net, guint i)
{
  flush (net);
  return RES (net, i)->load;
}
guint flow_net_n_active (const VsFlowNet *net) { return net->active.len + net->n_ps_flows; }
void flow_net_set_ps (VsFlowNet *net, gboolean on) { net->no_ps = !on; }
guint flow_net_n_ps_flows (const VsFlowNet *net) { return net->n_ps_flows; }

void
flow_net_set_observer (VsFlowNet *net, VsLoadObserver fn, gpointer user)
{
  net->observer = fn;
  net->observer_user = user;
  net->n_fast = fn != NULL ? 0 : net->res->len;
}

/* Accounts resource R (number I)'s current load up to NOW (busy and
 * saturated time, the observer), before the load changes. Bytes are
 * counted as the flows move them (settle(), end_flow()). */
static inline double
res_account (Resource *r, double now)
{
  double dt = now - r->t_last;    /* >= 0: time never goes back */
  r->st.busy_ns += r->load > r->busy_min ? dt : 0.0;
  r->st.saturated_ns += r->load >= r->sat_min ? dt : 0.0;
  return dt;
}

static inline void
res_advance (VsFlowNet *net, Resource *r, guint i, double now)
{
  double dt = res_account (r, now);
  if (G_UNLIKELY (net->observer != NULL) && dt > 0)
    net->observer (net->observer_user, i, r->t_last, now, r->load);
  r->t_last = now;
}

/* A resource binds no flow when the caps of all its flows fit in it. */
static inline gboolean
res_slack (const Resource *r)
{
  return r->n_inf == 0 && r->cap_sum <= r->slack_max;
}

double
flow_net_alone_rate (const VsFlowNet *net, const guint *path, guint n_path, double cap)
{
  double rate = cap;
  for (guint i = 0; i < n_path; i++)
    rate = MIN (rate, RES (net, path[i])->cap);
  return rate;
}

/* Appends the active flow F ending at END. */
static inline void
active_push (VsFlowNet *net, VsFlow *f, double end)
{
  PVec *a = &net->active;
  if (G_UNLIKELY (a->len == a->cap))
    {
      a->cap = a->cap ? 2 * a->cap : 8;
      a->v = g_renew (gpointer, a->v, a->cap);
      net->end = g_renew (double, net->end, a->cap);
    }
  f->index = a->len;
  net->end[a->len] = end;
  a->v[a->len++] = f;
}

/* Takes F out of the active flows (the last one takes its place). */
static inline void
active_remove (VsFlowNet *net, VsFlow *f)
{
  guint last = --net->active.len;
  VsFlow *lf = net->active.v[last];
  if (lf != f)
    {
      net->active.v[f->index] = lf;
      net->end[f->index] = net->end[last];
      lf->index = f->index;
    }
}

/* The parts, in this order (each uses only what is above it, or what
 * flow-priv.h declares). */
#include "flow/flow-solve.part.c"
#include "flow/flow-star.part.c"
#include "flow/flow-flush.part.c"
#include "flow/flow-ps.part.c"
#include "flow/flow-start.part.c"
#include "flow/flow-end.part.c"

void
flow_net_settle (VsFlowNet *net, double now)
{
  flush (net);
  while (net->ps_res.len > 0)
    ps_leave (net, RES (net, net->ps_res.v[0]), net->ps_res.v[0], now);
  for (guint i = 0; i < net->active.len; i++)
    settle_path (net, net->active.v[i], now);
  for (guint i = 0; i < net->res->len; i++)
    {
      Resource *r = RES (net, i);
      res_advance (net, r, i, now);
    }
}

void
flow_net_resource_stats (const VsFlowNet *net, guint i, VsResourceStats *out)
{
  *out = RES (net, i)->st;
}
