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
 * 12-16 % where copies and swaps run. */
#include "flow.h"

#include <math.h>
#include <string.h>

/* Small growable arrays: the hot path must not pay for GArray's
 * generality (measured: 9 % of replay instructions went to it). */
typedef struct { gpointer *v; guint len, cap; } PVec;
typedef struct { guint *v; guint len, cap; } UVec;

static inline void
pvec_push (PVec *a, gpointer p)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      a->cap = a->cap ? 2 * a->cap : 8;
      a->v = g_renew (gpointer, a->v, a->cap);
    }
  a->v[a->len++] = p;
}

static inline void
uvec_push (UVec *a, guint x)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      a->cap = a->cap ? 2 * a->cap : 16;
      a->v = g_renew (guint, a->v, a->cap);
    }
  a->v[a->len++] = x;
}

/* Removes element I by moving the last one into its place. */
static inline void
pvec_remove_fast (PVec *a, guint i)
{
  a->v[i] = a->v[--a->len];
}

typedef struct {
  char *name;
  double cap;
  double load;
  double t_last;
  VsResourceStats st;
  PVec flows;           /* active flows whose path includes it */
  double cap_sum;       /* sum of the caps of its capped flows */
  guint n_inf;          /* its flows without a cap */
  guint mark;           /* component search stamp */
  /* filling scratch */
  double residual;
  guint n_unfrozen;
} Resource;

struct _VsFlow {
  double remaining;     /* at t_upd */
  double cap, rate, t_upd, end_t;
  guint path[VS_FLOW_MAX_PATH];
  guint slot[VS_FLOW_MAX_PATH];  /* index in each resource's flows array */
  guint n_path;
  guint index;          /* in net->active */
  guint mark;
  gboolean frozen;
  guint64 order;        /* start order */
  gpointer owner;
  guint64 tag;
};

struct _VsFlowNet {
  GArray *res;          /* Resource */
  Resource *rv;         /* res->data, for the hot path */
  PVec active;          /* VsFlow* */
  guint stamp;
  guint64 next_order;
  double next_end;
  gboolean next_end_dirty;
  VsLoadObserver observer;
  gpointer observer_user;
  /* scratch */
  PVec comp_flows;
  UVec comp_res;
  PVec done, done_spare;
  /* Flows started at one instant are rated together: their paths wait in
   * pending until something needs rates (deferred recompute). */
  UVec pending;
  double pending_now;
  VsFlow *free_flows;   /* recycled, linked through owner */
};

#define RES(net, i) (&(net)->rv[i])

static void flush (VsFlowNet *net);

VsFlowNet *
flow_net_new (void)
{
  VsFlowNet *net = g_new0 (VsFlowNet, 1);
  net->res = g_array_new (FALSE, TRUE, sizeof (Resource));
  net->next_end = INFINITY;
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
  g_array_free (net->res, TRUE);
  for (guint i = 0; i < net->active.len; i++)
    g_free (net->active.v[i]);
  g_free (net->active.v);
  g_free (net->comp_flows.v);
  g_free (net->comp_res.v);
  g_free (net->done.v);
  g_free (net->done_spare.v);
  g_free (net->pending.v);
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
  g_array_append_val (net->res, r);
  net->rv = (Resource *) net->res->data;
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
guint flow_net_n_active (const VsFlowNet *net) { return net->active.len; }

void
flow_net_set_observer (VsFlowNet *net, VsLoadObserver fn, gpointer user)
{
  net->observer = fn;
  net->observer_user = user;
}

/* Accounts the resource's current load up to NOW. */
static void
res_advance (VsFlowNet *net, guint i, double now)
{
  Resource *r = RES (net, i);
  double dt = now - r->t_last;
  if (dt <= 0)
    return;
  if (r->load > 0)
    {
      r->st.bytes += r->load * dt * 1e-9;
      if (r->load > r->cap * 1e-9)
        r->st.busy_ns += dt;
      if (r->load >= r->cap * 0.95 * (1 - 1e-9))
        r->st.saturated_ns += dt;
    }
  if (net->observer)
    net->observer (net->observer_user, i, r->t_last, now, r->load);
  r->t_last = now;
}

/* A resource binds no flow when the caps of all its flows fit in it. */
static inline gboolean
res_slack (const Resource *r)
{
  return r->n_inf == 0 && r->cap_sum <= r->cap * (1 + 1e-9);
}

double
flow_net_alone_rate (const VsFlowNet *net, const guint *path, guint n_path, double cap)
{
  double rate = cap;
  for (guint i = 0; i < n_path; i++)
    rate = MIN (rate, RES (net, path[i])->cap);
  return rate;
}

/* Collects into comp_flows/comp_res the component reachable from the
 * resources in SEEDS. */
static void
collect_component (VsFlowNet *net, const guint *seeds, guint n_seeds)
{
  guint stamp = ++net->stamp;
  net->comp_flows.len = 0;
  net->comp_res.len = 0;
  for (guint i = 0; i < n_seeds; i++)
    if (RES (net, seeds[i])->mark != stamp)
      {
        RES (net, seeds[i])->mark = stamp;
        uvec_push (&net->comp_res, seeds[i]);
      }
  for (guint k = 0; k < net->comp_res.len; k++)
    {
      Resource *r = RES (net, net->comp_res.v[k]);
      for (guint j = 0; j < r->flows.len; j++)
        {
          VsFlow *f = r->flows.v[j];
          if (f->mark == stamp)
            continue;
          f->mark = stamp;
          pvec_push (&net->comp_flows, f);
          for (guint p = 0; p < f->n_path; p++)
            {
              Resource *q = RES (net, f->path[p]);
              if (q->mark != stamp)
                {
                  q->mark = stamp;
                  uvec_push (&net->comp_res, f->path[p]);
                }
            }
        }
    }
}

static void
freeze (VsFlowNet *net, VsFlow *f, double rate)
{
  f->frozen = TRUE;
  f->rate = rate;
  for (guint p = 0; p < f->n_path; p++)
    {
      Resource *r = RES (net, f->path[p]);
      r->residual = MAX (0.0, r->residual - rate);
      r->n_unfrozen--;
    }
}

/* Recomputes the rates of the component of SEEDS at NOW (progressive
 * filling). Flows' remaining amounts are settled first. */
static void
recompute (VsFlowNet *net, double now, const guint *seeds, guint n_seeds)
{
  collect_component (net, seeds, n_seeds);
  PVec *fl = &net->comp_flows;
  for (guint k = 0; k < net->comp_res.len; k++)
    {
      guint i = net->comp_res.v[k];
      res_advance (net, i, now);
      Resource *r = RES (net, i);
      r->residual = r->cap;
      r->n_unfrozen = 0;
    }
  gboolean all_capped = TRUE;
  for (guint j = 0; j < fl->len; j++)
    {
      VsFlow *f = fl->v[j];
      f->remaining = MAX (0.0, f->remaining - f->rate * (now - f->t_upd) * 1e-9);
      f->t_upd = now;
      f->frozen = FALSE;
      all_capped &= !isinf (f->cap);
      for (guint p = 0; p < f->n_path; p++)
        RES (net, f->path[p])->n_unfrozen++;
    }
  guint left = fl->len;
  /* Common case: every flow is capped and the caps fit everywhere (no
   * contention): each flow runs at its cap. */
  gboolean caps_fit = left > 1 && all_capped;
  for (guint j = 0; j < fl->len && caps_fit; j++)
    {
      VsFlow *f = fl->v[j];
      if (isinf (f->cap))
        caps_fit = FALSE;
      for (guint p = 0; p < f->n_path; p++)
        RES (net, f->path[p])->residual -= f->cap;
    }
  for (guint k = 0; k < net->comp_res.len && caps_fit; k++)
    {
      Resource *r = RES (net, net->comp_res.v[k]);
      if (r->residual < -r->cap * 1e-12)
        caps_fit = FALSE;
    }
  if (caps_fit)
    {
      for (guint j = 0; j < fl->len; j++)
        {
          VsFlow *f = fl->v[j];
          f->rate = f->cap;
          f->frozen = TRUE;
        }
      left = 0;
    }
  else if (left > 1 && all_capped)
    for (guint k = 0; k < net->comp_res.len; k++)
      {
        Resource *r = RES (net, net->comp_res.v[k]);
        r->residual = r->cap;
      }
  if (left == 1)
    {
      /* Alone: the slowest resource on the path, or the cap. */
      VsFlow *f = fl->v[0];
      double rate = f->cap;
      for (guint p = 0; p < f->n_path; p++)
        rate = MIN (rate, RES (net, f->path[p])->cap);
      f->rate = rate;
      f->frozen = TRUE;
      left = 0;
    }
  while (left > 0)
    {
      double level = INFINITY;
      gint bottleneck = -1;
      VsFlow *capped = NULL;
      for (guint k = 0; k < net->comp_res.len; k++)
        {
          guint i = net->comp_res.v[k];
          Resource *r = RES (net, i);
          if (r->n_unfrozen == 0)
            continue;
          double share = r->residual / r->n_unfrozen;
          if (share < level)
            level = share, bottleneck = (gint) i;
        }
      /* Every flow capped below the lowest fair share runs at its cap:
       * freezing one only raises the others' shares, so all go at once. */
      for (guint j = 0; j < fl->len; j++)
        {
          VsFlow *f = fl->v[j];
          if (!f->frozen && f->cap < level)
            {
              freeze (net, f, f->cap);
              left--;
              capped = f;
            }
        }
      if (capped != NULL)
        continue;
      g_assert (bottleneck >= 0);
      Resource *b = RES (net, bottleneck);
      for (guint j = 0; j < b->flows.len; j++)
        {
          VsFlow *f = b->flows.v[j];
          if (!f->frozen)
            {
              freeze (net, f, level);
              left--;
            }
        }
    }
  for (guint k = 0; k < net->comp_res.len; k++)
    RES (net, net->comp_res.v[k])->load = 0;
  for (guint j = 0; j < fl->len; j++)
    {
      VsFlow *f = fl->v[j];
      g_assert (f->rate > 0);
      for (guint p = 0; p < f->n_path; p++)
        RES (net, f->path[p])->load += f->rate;
      f->end_t = now + f->remaining / f->rate * 1e9;
    }
  net->next_end_dirty = TRUE;
}

/* Rates the flows started since the last flush. */
static void
flush (VsFlowNet *net)
{
  if (net->pending.len == 0)
    return;
  recompute (net, net->pending_now, net->pending.v, net->pending.len);
  net->pending.len = 0;
}

void
flow_start (VsFlowNet *net, double now, double amount, double cap,
            const guint *path, guint n_path, gpointer owner, guint64 tag)
{
  g_return_if_fail (amount > 0 && cap > 0 && n_path >= 1 && n_path <= VS_FLOW_MAX_PATH);
  if (net->pending.len > 0 && net->pending_now != now)
    flush (net);
  VsFlow *f = net->free_flows;
  if (f != NULL)
    {
      net->free_flows = f->owner;
      memset (f, 0, sizeof *f);
    }
  else
    f = g_new0 (VsFlow, 1);
  f->remaining = amount;
  f->cap = cap;
  f->t_upd = now;
  f->owner = owner;
  f->tag = tag;
  f->order = net->next_order++;
  /* A resource named twice in a path is used once. */
  for (guint i = 0; i < n_path; i++)
    {
      gboolean dup = FALSE;
      for (guint j = 0; j < f->n_path; j++)
        dup |= f->path[j] == path[i];
      if (dup)
        continue;
      g_assert (path[i] < net->res->len);
      Resource *r = RES (net, path[i]);
      f->path[f->n_path] = path[i];
      f->slot[f->n_path] = r->flows.len;
      pvec_push (&r->flows, f);
      f->n_path++;
    }
  /* No flow can go faster than the slowest resource on its path: capping
   * it there changes no max-min rate, and lets resources that carry only
   * such flows be seen to have slack. */
  for (guint p = 0; p < f->n_path; p++)
    cap = MIN (cap, RES (net, f->path[p])->cap);
  f->cap = cap;
  f->index = net->active.len;
  f->end_t = INFINITY;
  pvec_push (&net->active, f);
  gboolean slack = TRUE;
  for (guint p = 0; p < f->n_path; p++)
    {
      Resource *r = RES (net, f->path[p]);
      if (isinf (cap))
        r->n_inf++;
      else
        r->cap_sum += cap;
      slack &= res_slack (r);
    }
  if (slack)
    {
      /* No resource on its path binds, even with it: it runs at its cap
       * and no other flow's rate changes (no recompute). */
      for (guint p = 0; p < f->n_path; p++)
        {
          res_advance (net, f->path[p], now);
          RES (net, f->path[p])->load += cap;
        }
      f->rate = cap;
      f->end_t = now + amount / cap * 1e9;
      if (!net->next_end_dirty)
        net->next_end = MIN (net->next_end, f->end_t);
      return;
    }
  for (guint p = 0; p < f->n_path; p++)
    uvec_push (&net->pending, f->path[p]);
  net->pending_now = now;
  net->next_end_dirty = TRUE;
}

static void
detach (VsFlowNet *net, VsFlow *f)
{
  for (guint p = 0; p < f->n_path; p++)
    {
      Resource *r = RES (net, f->path[p]);
      guint s = f->slot[p];
      VsFlow *moved = r->flows.v[r->flows.len - 1];
      pvec_remove_fast (&r->flows, s);
      if (isinf (f->cap))
        r->n_inf--;
      else
        r->cap_sum -= f->cap;
      if (r->flows.len == 0)
        r->cap_sum = 0, r->load = 0;   /* no drift left behind */
      if (moved != f)
        for (guint q = 0; q < moved->n_path; q++)
          if (moved->path[q] == f->path[p])
            moved->slot[q] = s;
    }
  VsFlow *last = net->active.v[net->active.len - 1];
  pvec_remove_fast (&net->active, f->index);
  if (last != f)
    last->index = f->index;
}

double
flow_net_next_end (VsFlowNet *net)
{
  flush (net);
  if (net->next_end_dirty)
    {
      double t = INFINITY;
      for (guint i = 0; i < net->active.len; i++)
        t = MIN (t, ((VsFlow *) net->active.v[i])->end_t);
      net->next_end = t;
      net->next_end_dirty = FALSE;
    }
  return net->next_end;
}


void
flow_net_finish_due (VsFlowNet *net, double now, VsFlowDone done, gpointer user)
{
  flush (net);
  /* A flow is due if it ends within rounding of NOW. */
  double eps = 1e-6 + fabs (now) * 1e-12;
  PVec *d = &net->done;
  d->len = 0;
  for (guint i = 0; i < net->active.len; i++)
    {
      VsFlow *f = net->active.v[i];
      if (f->end_t <= now + eps)
        pvec_push (d, f);
    }
  if (d->len == 0)
    return;
  for (guint i = 0; i < d->len; i++)
    {
      VsFlow *f = d->v[i];
      /* Bring the resources' accounts up to now while f still loads them.
       * Where no resource on its path binds (f included), its end changes
       * no other flow's rate: nothing to recompute. */
      gboolean slack = TRUE;
      for (guint p = 0; p < f->n_path; p++)
        {
          res_advance (net, f->path[p], now);
          Resource *r = RES (net, f->path[p]);
          r->load = MAX (0.0, r->load - f->rate);
          slack &= res_slack (r);
        }
      if (!slack)
        for (guint p = 0; p < f->n_path; p++)
          uvec_push (&net->pending, f->path[p]);
      detach (net, f);
    }
  /* What the ended flows' resources still carry is rated at the next
   * flush, together with the flows the callbacks start at this instant
   * (one recompute instead of two when a stream starts its next op). */
  net->pending_now = now;
  net->next_end_dirty = TRUE;
  /* Callbacks in start order (usually one or two flows: insertion sort). */
  for (guint i = 1; i < d->len; i++)
    {
      VsFlow *f = d->v[i];
      guint j = i;
      for (; j > 0 && ((VsFlow *) d->v[j - 1])->order > f->order; j--)
        d->v[j] = d->v[j - 1];
      d->v[j] = f;
    }
  /* Callbacks may start and end flows, which reuses net->done: take the
   * list and leave the spare in its place while calling them. */
  PVec list = *d;
  *d = net->done_spare;
  net->done_spare = (PVec) { 0 };
  for (guint i = 0; i < list.len; i++)
    {
      VsFlow *f = list.v[i];
      gpointer owner = f->owner;
      guint64 tag = f->tag;
      f->owner = net->free_flows;
      net->free_flows = f;
      done (user, owner, tag);
    }
  list.len = 0;
  if (net->done_spare.v == NULL)
    net->done_spare = list;
  else
    g_free (list.v);
}

void
flow_net_settle (VsFlowNet *net, double now)
{
  flush (net);
  for (guint i = 0; i < net->res->len; i++)
    res_advance (net, i, now);
}

void
flow_net_resource_stats (const VsFlowNet *net, guint i, VsResourceStats *out)
{
  *out = RES (net, i)->st;
}
