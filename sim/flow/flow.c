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
 * to 3e-10 relative on lightly used links). */
#include "flow/flow.h"

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* MAX (0, X) without a branch (the compiler keeps one for MAX, whose
 * outcome the hot paths cannot predict). */
static inline double
pos (double x)
{
#ifdef __SSE2__
  return _mm_cvtsd_f64 (_mm_max_sd (_mm_setzero_pd (), _mm_set_sd (x)));
#else
  return MAX (0.0, x);
#endif
}

/* Selections without branches, for conditions whose outcome varies from
 * flow to flow (a mispredicted branch costs more than the arithmetic;
 * the compiler keeps branches for ?: on doubles). */
static inline gpointer
sel_p (gboolean c, gpointer a, gpointer b)
{
  guintptr m = -(guintptr) (c != 0);
  return (gpointer) (((guintptr) a & m) | ((guintptr) b & ~m));
}

/* A < B ? A : B. */
static inline double
min_d (double a, double b)
{
#ifdef __SSE2__
  return _mm_cvtsd_f64 (_mm_min_sd (_mm_set_sd (a), _mm_set_sd (b)));
#else
  return a < b ? a : b;
#endif
}

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

/* pvec_push() onto a vector that may start in a buffer of the caller's
 * (STACK: not to be reallocated). */
static inline void
pvec_push_s (PVec *a, gpointer p, gpointer *stack)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      gpointer *v = g_new (gpointer, 2 * a->cap);
      memcpy (v, a->v, a->len * sizeof (gpointer));
      if (a->v != stack)
        g_free (a->v);
      a->v = v;
      a->cap *= 2;
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
  double cap;
  double load;
  PVec flows;           /* active flows whose path includes it */
  double cap_sum;       /* sum of the caps of its capped flows */
  guint n_inf;          /* its flows without a cap */
  guint n_multi;        /* its flows whose path has other resources too */
  /* derived from cap once */
  double slack_max;     /* cap_sum up to this leaves slack */
  double busy_min;      /* load above this is busy */
  double sat_min;       /* load from this on is saturated */
  double t_last;        /* load accounted up to here */
  VsResourceStats st;   /* bytes counted as the flows move them */
  guint mark;           /* component search stamp */
  gboolean pending;     /* in net->pending */
  char *name;
  /* filling scratch */
  double residual;
  double fit;           /* capacity less its flows' caps */
  guint n_unfrozen;
  /* Processor sharing (flow-ps): while ps, every flow on it is a
   * one-resource flow at the same rate share = cap / n (none capped
   * below it, the resource binds); a flow's progress is the work clock
   * ps_v (amount per flow served since ps began), so a flow ends when
   * ps_v reaches its vfin: the heap of vfin gives the next end. */
  gboolean ps;
  double ps_v, ps_t;    /* work clock at time ps_t */
  double ps_share;
  double ps_end;        /* when the heap's top ends */
  double ps_min_cap;    /* at most the least cap of its flows on the
                         * clock (exact when it matters: ps_min_ok) */
  /* Fixed members (second pass): flows capped below the share (or a
   * star's link flow, at its link's rate) run at their cap as active
   * flows; the clocked ones share what they leave, (cap - ps_fixed) /
   * the heap's length, while no fixed cap exceeds that share. */
  double ps_fixed;      /* the sum of their rates */
  guint ps_n_fixed;
  double ps_fixed_max;  /* the largest of their caps */
  PVec ps_heap;         /* VsFlow*, a min-heap by vfin */
} Resource;

struct _VsFlow {
  double remaining;     /* at t_upd */
  double cap, rate, t_upd;
  double nrate;         /* filling result, compared with rate */
  guint path[VS_FLOW_MAX_PATH];
  guint slot[VS_FLOW_MAX_PATH];  /* index in each resource's flows array */
  guint n_path;
  guint index;          /* in net->active (and net->end) */
  guint mark;
  gboolean frozen;
  guint64 order;        /* start order */
  gpointer owner;
  guint64 tag;
  double vfin;          /* ps: its resource's ps_v when it ends */
};

/* The index of a flow that is on a ps resource's heap, not in active. */
#define PS_INDEX G_MAXUINT

struct _VsFlowNet {
  VsFlowNetHot hot;     /* first: read by flow_net_next_end() in flow.h */
  GArray *res;          /* Resource */
  Resource *rv;         /* res->data, for the hot path */
  guint n_fast;         /* res->len, or 0 with an observer (no fast start) */
  PVec active;          /* VsFlow* */
  double *end;          /* end time of active.v[i] (same length), scanned
                         * without touching the flows */
  guint stamp;
  guint64 next_order;
  /* The earliest end and a flow that has it, kept up to date as flows
   * start, end and change rate; a full scan only when that flow's end
   * moves later (next_end_dirty). */
  VsFlow *next_flow;
  gboolean next_end_dirty;
  VsLoadObserver observer;
  gpointer observer_user;
  /* scratch */
  PVec comp_flows;
  UVec comp_res;
  /* Flows started at one instant are rated together: their resources
   * (each once) wait in pending until something needs rates (deferred
   * recompute). */
  UVec pending;
  double pending_now;
  VsFlow *free_flows;   /* recycled, linked through owner */
  /* Processor sharing: the resources in ps (few), their flows' count,
   * and whether a resource may enter it (flow_net_set_ps). */
  UVec ps_res;
  guint n_ps_flows;
  guint n_ps_fixed_multi;   /* star link flows that are fixed members */
  gboolean no_ps;
};

#define RES(net, i) (&(net)->rv[i])

static void flush_pending (VsFlowNet *net);
/* Processor sharing from this many flows on (below, the filling costs
 * no more: callgrind, 200k-event traces, from 2 flows on the 4-stream
 * trace took 1,743 instructions per event, from 3 1,734). */
#define PS_MIN_FLOWS 3
static void ps_enter (VsFlowNet *net, Resource *r, guint i, double now);
#define ps_maybe_enter(net, r, i, now) \
  do { if (G_UNLIKELY ((r)->flows.len >= PS_MIN_FLOWS)) ps_enter (net, r, i, now); } while (0)

static inline void
flush (VsFlowNet *net)
{
  if (G_UNLIKELY (net->pending.len > 0))
    flush_pending (net);
}

VsFlowNet *
flow_net_new (void)
{
  VsFlowNet *net = g_new0 (VsFlowNet, 1);
  net->res = g_array_new (FALSE, TRUE, sizeof (Resource));
  net->hot.next_end = INFINITY;
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

/* Recomputed ends of a component: the earliest (CMIN, of flow CF) and
 * whether the flow that had the earliest end of all now ends later. */
typedef struct {
  double cmin;
  VsFlow *cf;
  gboolean later;
} Ends;

static inline void
ends_add (VsFlowNet *net, Ends *e, VsFlow *f, double end)
{
  net->end[f->index] = end;
  if (end < e->cmin)
    e->cmin = end, e->cf = f;
  if (f == net->next_flow && end > net->hot.next_end)
    e->later = TRUE;
}

/* Keeps the earliest end of all exact: the flows outside the component
 * end no earlier than the old earliest end; only when the flow that had
 * it now ends later and no flow of the component ends as early does the
 * next flow_net_next_end scan. */
static inline void
ends_done (VsFlowNet *net, const Ends *e)
{
  if (net->next_end_dirty)
    return;
  if (e->later && e->cmin > net->hot.next_end)
    net->next_end_dirty = TRUE, net->hot.slow = TRUE;
  else if (e->later || e->cmin < net->hot.next_end)
    net->hot.next_end = e->cmin, net->next_flow = e->cf;
}

static void
freeze (VsFlowNet *net, VsFlow *f, double rate)
{
  f->frozen = TRUE;
  f->nrate = rate;
  for (guint p = 0; p < f->n_path; p++)
    {
      Resource *r = RES (net, f->path[p]);
      r->residual = MAX (0.0, r->residual - rate);
      r->n_unfrozen--;
    }
}

/* Brings F's remaining amount to NOW at its old rate; returns the amount
 * it moved since the last time. */
static inline double
settle (VsFlow *f, double now)
{
  double left = MAX (0.0, f->remaining - f->rate * (now - f->t_upd) * 1e-9);
  double moved = f->remaining - left;
  f->remaining = left;
  f->t_upd = now;
  return moved;
}

/* settle() and the amount counted on every resource of F's path. */
static inline void
settle_path (VsFlowNet *net, VsFlow *f, double now)
{
  double moved = settle (f, now);
  for (guint p = 0; p < f->n_path; p++)
    RES (net, f->path[p])->st.bytes += moved;
}

/* Starts the filling at NOW on resource R (number I). */
static inline void
res_init (VsFlowNet *net, Resource *r, guint i, double now)
{
  res_advance (net, r, i, now);
  r->residual = r->cap;
  r->fit = r->cap;
  r->n_unfrozen = 0;
}

/* Recomputes the rates of the component of SEEDS at NOW (progressive
 * filling). The search for the component (the resources reachable from
 * SEEDS through shared flows) also settles the flows' remaining amounts
 * and sums their caps per resource. */
static void
recompute (VsFlowNet *net, double now, const guint *seeds, guint n_seeds)
{
  guint stamp = ++net->stamp;
  PVec *fl = &net->comp_flows;
  UVec *cr = &net->comp_res;
  fl->len = 0;
  cr->len = 0;
  for (guint i = 0; i < n_seeds; i++)
    {
      Resource *r = RES (net, seeds[i]);
      if (r->mark != stamp)
        {
          r->mark = stamp;
          uvec_push (cr, seeds[i]);
          res_init (net, r, seeds[i], now);
        }
    }
  gboolean all_capped = TRUE;
  for (guint k = 0; k < cr->len; k++)
    {
      Resource *r = RES (net, cr->v[k]);
      for (guint j = 0; j < r->flows.len; j++)
        {
          VsFlow *f = r->flows.v[j];
          if (f->mark == stamp)
            continue;
          f->mark = stamp;
          pvec_push (fl, f);
          f->frozen = FALSE;
          all_capped &= !isinf (f->cap);
          for (guint p = 0; p < f->n_path; p++)
            {
              Resource *q = RES (net, f->path[p]);
              if (q->mark != stamp)
                {
                  q->mark = stamp;
                  uvec_push (cr, f->path[p]);
                  res_init (net, q, f->path[p], now);
                }
              q->n_unfrozen++;
              q->fit -= f->cap;
            }
        }
    }
  guint left = fl->len;
  /* Common case: every flow is capped and the caps fit everywhere (no
   * contention): each flow runs at its cap. */
  gboolean caps_fit = left > 1 && all_capped;
  for (guint k = 0; k < cr->len && caps_fit; k++)
    {
      Resource *r = RES (net, cr->v[k]);
      if (r->fit < -r->cap * 1e-12)
        caps_fit = FALSE;
    }
  if (caps_fit)
    {
      for (guint j = 0; j < fl->len; j++)
        {
          VsFlow *f = fl->v[j];
          f->nrate = f->cap;
          f->frozen = TRUE;
        }
      left = 0;
    }
  if (left == 1)
    {
      /* Alone: the slowest resource on the path, or the cap. */
      VsFlow *f = fl->v[0];
      double rate = f->cap;
      for (guint p = 0; p < f->n_path; p++)
        rate = MIN (rate, RES (net, f->path[p])->cap);
      f->nrate = rate;
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
  Ends e = { INFINITY, NULL, FALSE };
  for (guint j = 0; j < fl->len; j++)
    {
      VsFlow *f = fl->v[j];
      double rate = f->nrate;
      g_assert (rate > 0);
      for (guint p = 0; p < f->n_path; p++)
        RES (net, f->path[p])->load += rate;
      if (rate != f->rate)
        {
          settle_path (net, f, now);
          f->rate = rate;
          ends_add (net, &e, f, now + f->remaining / rate * 1e9);
        }
      else
        ends_add (net, &e, f, net->end[f->index]);
    }
  ends_done (net, &e);
}

/* recompute() for seeds none of whose flows has another resource on its
 * path: each seed is its own component, the flows are the seeds' lists
 * (no search), and one pass settles them and tests whether their caps
 * fit. The arithmetic is recompute()'s, in the same order (the same
 * rates to the last bit): the flows in the order the search would find
 * them, the same filling rounds over all seeds together. */
/* Gives the N flows FV of one-resource resource R their new rates
 * (nrate) at NOW, and R its load. A flow whose rate stays keeps its end:
 * no settling, no division. */
static inline void
apply_rates (VsFlowNet *net, Resource *r, VsFlow **fv, guint n, Ends *e, double now)
{
  double load = 0;
  for (guint j = 0; j < n; j++)
    {
      VsFlow *f = fv[j];
      double rate = f->nrate;
      g_assert (rate > 0);
      load += rate;
      if (rate != f->rate)
        {
          r->st.bytes += settle (f, now);
          f->rate = rate;
          ends_add (net, e, f, now + f->remaining / rate * 1e9);
        }
      else
        ends_add (net, e, f, net->end[f->index]);
    }
  r->load = load;
}

static void
recompute_simple (VsFlowNet *net, double now, const guint *seeds, guint n_seeds)
{
  gboolean all_capped = TRUE, caps_fit = TRUE;
  guint left = 0;
  for (guint k = 0; k < n_seeds; k++)
    {
      Resource *r = RES (net, seeds[k]);
      res_advance (net, r, seeds[k], now);
      double fit = r->cap;
      VsFlow **fv = (VsFlow **) r->flows.v;
      for (guint j = 0; j < r->flows.len; j++)
        {
          VsFlow *f = fv[j];
          f->frozen = FALSE;
          all_capped &= !isinf (f->cap);
          fit -= f->cap;
        }
      caps_fit &= !(fit < -r->cap * 1e-12);
      r->residual = r->cap;
      r->n_unfrozen = r->flows.len;
      left += r->flows.len;
    }
  if (left > 1 && all_capped && caps_fit)
    {
      for (guint k = 0; k < n_seeds; k++)
        {
          Resource *r = RES (net, seeds[k]);
          for (guint j = 0; j < r->flows.len; j++)
            {
              VsFlow *f = r->flows.v[j];
              f->nrate = f->cap;
            }
        }
      left = 0;
    }
  else if (left == 1)
    {
      for (guint k = 0; k < n_seeds; k++)
        {
          Resource *r = RES (net, seeds[k]);
          if (r->flows.len == 1)
            {
              VsFlow *f = r->flows.v[0];
              f->nrate = MIN (f->cap, r->cap);
            }
        }
      left = 0;
    }
  while (left > 0)
    {
      double level = INFINITY;
      Resource *b = NULL;
      for (guint k = 0; k < n_seeds; k++)
        {
          Resource *r = RES (net, seeds[k]);
          if (r->n_unfrozen == 0)
            continue;
          double share = r->residual / r->n_unfrozen;
          if (share < level)
            level = share, b = r;
        }
      /* Every flow capped below the lowest fair share runs at its cap. */
      gboolean capped = FALSE;
      for (guint k = 0; k < n_seeds; k++)
        {
          Resource *r = RES (net, seeds[k]);
          if (r->n_unfrozen == 0)
            continue;
          VsFlow **fv = (VsFlow **) r->flows.v;
          for (guint j = 0; j < r->flows.len; j++)
            {
              VsFlow *f = fv[j];
              if (!f->frozen && f->cap < level)
                {
                  f->frozen = TRUE;
                  f->nrate = f->cap;
                  r->residual = MAX (0.0, r->residual - f->cap);
                  r->n_unfrozen--;
                  left--;
                  capped = TRUE;
                }
            }
        }
      if (capped)
        continue;
      g_assert (b != NULL);
      VsFlow **fv = (VsFlow **) b->flows.v;
      for (guint j = 0; j < b->flows.len; j++)
        {
          VsFlow *f = fv[j];
          if (!f->frozen)
            {
              f->frozen = TRUE;
              f->nrate = level;
              left--;
            }
        }
      b->n_unfrozen = 0;
    }
  Ends e = { INFINITY, NULL, FALSE };
  for (guint k = 0; k < n_seeds; k++)
    {
      Resource *r = RES (net, seeds[k]);
      apply_rates (net, r, (VsFlow **) r->flows.v, r->flows.len, &e, now);
    }
  ends_done (net, &e);
  for (guint k = 0; k < n_seeds; k++)
    ps_maybe_enter (net, RES (net, seeds[k]), seeds[k], now);
}

/* recompute_simple() for one seed, the common case (one contended
 * resource): the filling keeps its residual and count in registers. */
static inline __attribute__ ((always_inline)) void
recompute_one (VsFlowNet *net, double now, guint i)
{
  Resource *r = RES (net, i);
  res_advance (net, r, i, now);
  VsFlow **fv = (VsFlow **) r->flows.v;
  guint n = r->flows.len;
  double fit = r->cap;
  gboolean all_capped = TRUE;
  for (guint j = 0; j < n; j++)
    {
      VsFlow *f = fv[j];
      f->frozen = FALSE;
      all_capped &= !isinf (f->cap);
      fit -= f->cap;
    }
  if (n > 1 && all_capped && !(fit < -r->cap * 1e-12))
    for (guint j = 0; j < n; j++)
      fv[j]->nrate = fv[j]->cap;
  else if (n == 1)
    fv[0]->nrate = MIN (fv[0]->cap, r->cap);
  else if (n > 1)
    {
      double residual = r->cap;
      guint left = n;
      for (;;)
        {
          double level = residual / left;
          gboolean capped = FALSE;
          for (guint j = 0; j < n; j++)
            {
              VsFlow *f = fv[j];
              if (!f->frozen && f->cap < level)
                {
                  f->frozen = TRUE;
                  f->nrate = f->cap;
                  residual = MAX (0.0, residual - f->cap);
                  left--;
                  capped = TRUE;
                }
            }
          if (left == 0)
            break;
          if (!capped)
            {
              for (guint j = 0; j < n; j++)
                if (!fv[j]->frozen)
                  fv[j]->nrate = level;
              break;
            }
        }
    }
  Ends e = { INFINITY, NULL, FALSE };
  apply_rates (net, r, fv, n, &e, now);
  ends_done (net, &e);
  ps_maybe_enter (net, r, i, now);
}

/* ------------------------------------------------------------------ */
/* Stars (issue 25, second pass): a resource H whose flows of several
 * resources each have one other resource, which carries that flow alone
 * (a copy on its link and device memory), is a component of its own
 * whose max-min rates are those of H alone with each such flow capped
 * at its cap (flow_start capped it at its link already: the link's only
 * constraint). So it is rated by recompute_one's filling on H, without
 * the component search and the rounds over every resource; the link's
 * load is its flow's rate. The rates are max-min's; the filling's
 * residual is summed in another order than recompute's, so they may
 * differ from it in rounding. */

/* The other resource of two-resource flow F than I. */
static inline guint
other_res (const VsFlow *f, guint i)
{
  return f->path[0] == i ? f->path[1] : f->path[0];
}

/* Whether resource I is the hub of a star. */
static gboolean
star_hub (VsFlowNet *net, guint i)
{
  Resource *r = RES (net, i);
  VsFlow **fv = (VsFlow **) r->flows.v;
  for (guint j = 0; j < r->flows.len; j++)
    {
      const VsFlow *f = fv[j];
      if (f->n_path == 1)
        continue;
      if (f->n_path != 2 || RES (net, other_res (f, i))->flows.len != 1)
        return FALSE;
    }
  return TRUE;
}

/* Rates star hub I's flows at NOW (recompute_one's filling). */
static void
recompute_star (VsFlowNet *net, double now, guint i)
{
  Resource *r = RES (net, i);
  res_advance (net, r, i, now);
  VsFlow **fv = (VsFlow **) r->flows.v;
  guint n = r->flows.len;
  double fit = r->cap;
  for (guint j = 0; j < n; j++)
    {
      VsFlow *f = fv[j];
      f->frozen = FALSE;
      fit -= f->cap;
    }
  /* Every cap is finite (flow_start caps flows at their path). */
  if (n > 1 && !(fit < -r->cap * 1e-12))
    for (guint j = 0; j < n; j++)
      fv[j]->nrate = fv[j]->cap;
  else if (n == 1)
    fv[0]->nrate = MIN (fv[0]->cap, r->cap);
  else if (n > 1)
    {
      double residual = r->cap;
      guint left = n;
      for (;;)
        {
          double level = residual / left;
          gboolean capped = FALSE;
          for (guint j = 0; j < n; j++)
            {
              VsFlow *f = fv[j];
              if (!f->frozen && f->cap < level)
                {
                  f->frozen = TRUE;
                  f->nrate = f->cap;
                  residual = MAX (0.0, residual - f->cap);
                  left--;
                  capped = TRUE;
                }
            }
          if (left == 0)
            break;
          if (!capped)
            {
              for (guint j = 0; j < n; j++)
                if (!fv[j]->frozen)
                  fv[j]->nrate = level;
              break;
            }
        }
    }
  Ends e = { INFINITY, NULL, FALSE };
  double load = 0;
  for (guint j = 0; j < n; j++)
    {
      VsFlow *f = fv[j];
      double rate = f->nrate;
      g_assert (rate > 0);
      load += rate;
      if (f->n_path == 2)
        {
          /* The link: accounted to now, then it carries the new rate. */
          guint l = other_res (f, i);
          Resource *q = RES (net, l);
          res_advance (net, q, l, now);
          q->load = rate;
          if (rate != f->rate)
            {
              double moved = settle (f, now);
              r->st.bytes += moved;
              q->st.bytes += moved;
            }
        }
      else if (rate != f->rate)
        r->st.bytes += settle (f, now);
      if (rate != f->rate)
        {
          f->rate = rate;
          ends_add (net, &e, f, now + f->remaining / rate * 1e9);
        }
      else
        ends_add (net, &e, f, net->end[f->index]);
    }
  r->load = load;
  ends_done (net, &e);
  ps_maybe_enter (net, r, i, now);
}

/* flush_pending() where every pending resource is a one-resource
 * resource, a star's hub or a star's link (or a link left empty): each
 * rated on its own. FALSE (nothing done) otherwise. */
static gboolean
flush_stars (VsFlowNet *net)
{
  double now = net->pending_now;
  guint stamp = ++net->stamp;
  for (guint k = 0; k < net->pending.len; k++)
    {
      guint i = net->pending.v[k];
      Resource *r = RES (net, i);
      if (r->n_multi == 0 || r->flows.len == 0)
        continue;
      if (r->flows.len == 1 && ((VsFlow *) r->flows.v[0])->n_path == 2)
        {
          guint h = other_res (r->flows.v[0], i);
          if (RES (net, h)->flows.len > 1 || RES (net, h)->mark == stamp)
            continue;   /* a link: rated with its hub */
        }
      if (!star_hub (net, i))
        return FALSE;
      r->mark = stamp;
    }
  /* The links pended with their hubs must have them pended too (they
   * always are: a flow of both pends both), or be rated here. */
  for (guint k = 0; k < net->pending.len; k++)
    {
      guint i = net->pending.v[k];
      Resource *r = RES (net, i);
      if (r->n_multi == 0 || r->flows.len == 0 || r->mark == stamp)
        continue;
      guint h = other_res (r->flows.v[0], i);
      if (RES (net, h)->mark != stamp)
        {
          if (!star_hub (net, h))
            return FALSE;
          RES (net, h)->mark = stamp;
          uvec_push (&net->pending, h);
          RES (net, h)->pending = TRUE;
        }
    }
  for (guint k = 0; k < net->pending.len; k++)
    {
      guint i = net->pending.v[k];
      Resource *r = RES (net, i);
      r->pending = FALSE;
      if (r->flows.len == 0)
        {
          res_advance (net, r, i, now);
          r->load = 0;
        }
      else if (r->n_multi == 0)
        recompute_one (net, now, i);
      else if (r->mark == stamp)
        recompute_star (net, now, i);
    }
  return TRUE;
}

static void ps_leave (VsFlowNet *net, Resource *r, guint i, double now);
static inline void pend (VsFlowNet *net, guint i);

/* A pending resource whose flows of several resources reach a ps
 * resource (a star's link with a second flow): that resource leaves
 * processor sharing, to be rated with it. */
static void
unps_pending (VsFlowNet *net)
{
  for (guint k = 0; k < net->pending.len; k++)
    {
      Resource *r = RES (net, net->pending.v[k]);
      if (r->n_multi == 0 || r->ps)
        continue;
      for (guint j = 0; j < r->flows.len; j++)
        {
          const VsFlow *f = r->flows.v[j];
          for (guint p = 0; p < f->n_path && f->n_path > 1; p++)
            if (RES (net, f->path[p])->ps)
              {
                ps_leave (net, RES (net, f->path[p]), f->path[p], net->pending_now);
                pend (net, f->path[p]);
              }
        }
    }
}

/* Rates the flows started since the last flush. */
static void G_GNUC_NO_INLINE
flush_pending (VsFlowNet *net)
{
  if (net->pending.len == 1 && RES (net, net->pending.v[0])->n_multi == 0)
    {
      RES (net, net->pending.v[0])->pending = FALSE;
      recompute_one (net, net->pending_now, net->pending.v[0]);
      net->pending.len = 0;
      net->hot.slow = net->next_end_dirty || net->ps_res.len > 0;
      return;
    }
  if (G_UNLIKELY (net->n_ps_fixed_multi > 0))
    unps_pending (net);
  if (!net->no_ps && flush_stars (net))
    {
      net->pending.len = 0;
      net->hot.slow = net->next_end_dirty || net->ps_res.len > 0;
      return;
    }
  gboolean simple = TRUE;
  for (guint k = 0; k < net->pending.len; k++)
    {
      Resource *r = RES (net, net->pending.v[k]);
      r->pending = FALSE;
      simple &= r->n_multi == 0;
    }
  if (simple)
    recompute_simple (net, net->pending_now, net->pending.v, net->pending.len);
  else
    recompute (net, net->pending_now, net->pending.v, net->pending.len);
  net->pending.len = 0;
  net->hot.slow = net->next_end_dirty || net->ps_res.len > 0;
}

/* Resource I's flows need new rates at the next flush. */
static inline void
pend (VsFlowNet *net, guint i)
{
  Resource *r = RES (net, i);
  if (!r->pending)
    {
      r->pending = TRUE;
      uvec_push (&net->pending, i);
      net->hot.slow = TRUE;
    }
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

/* ------------------------------------------------------------------ */
/* Processor sharing (issue 25): a resource whose flows all have it alone
 * on their path, all at the same share cap / n (none capped below it)
 * while it binds, is served as a processor-sharing queue in virtual
 * time. Its work clock ps_v counts the amount each of its flows has
 * moved since it entered; a flow started at clock v with amount a ends
 * when the clock reaches v + a (its vfin), whatever starts and ends
 * meanwhile, so a start or an end is a heap operation and a change of
 * the share (O(log n)), not a new rate, a settle and a division for
 * every flow (O(n)), and the next end is the heap's top, without a scan
 * of the flows. The rates are max-min's (the same share, cap / n, as
 * recompute_one's filling computes it); the ends differ from the
 * settled ones only in rounding. Where a start or an end breaks the
 * condition (a flow capped below the share, a flow of several
 * resources, slack), the resource leaves processor sharing: its flows
 * are settled at the share and rated by the filling again.
 *
 * Fixed members (second pass): when the filling leaves some flows of a
 * resource below the level (at their caps, or a star's link flow at its
 * link's rate) and at least PS_MIN_FLOWS at it, the latter enter the
 * clock and the former stay active flows at their rates; the clocked
 * ones share cap - ps_fixed. A clocked start that would bring the share
 * below a fixed cap, a start capped below the share, and an end that
 * leaves a clocked cap below the new share take the resource back to
 * the filling, which may enter it again. A pending link of a fixed star
 * flow (a second flow on it) takes the hub out first (unps_pending). */

static inline gboolean
vfin_before (const VsFlow *a, const VsFlow *b)
{
  return a->vfin < b->vfin || (a->vfin == b->vfin && a->order < b->order);
}

static void
heap_push (PVec *h, VsFlow *f)
{
  pvec_push (h, f);
  VsFlow **v = (VsFlow **) h->v;
  guint i = h->len - 1;
  while (i > 0)
    {
      guint p = (i - 1) / 2;
      if (!vfin_before (f, v[p]))
        break;
      v[i] = v[p];
      i = p;
    }
  v[i] = f;
}

static VsFlow *
heap_pop (PVec *h)
{
  VsFlow **v = (VsFlow **) h->v;
  VsFlow *top = v[0], *last = v[--h->len];
  guint n = h->len, i = 0;
  if (n == 0)
    return top;
  for (;;)
    {
      guint c = 2 * i + 1;
      if (c >= n)
        break;
      if (c + 1 < n && vfin_before (v[c + 1], v[c]))
        c++;
      if (!vfin_before (v[c], last))
        break;
      v[i] = v[c];
      i = c;
    }
  v[i] = last;
  return top;
}

/* When R's first flow ends. */
static inline void
ps_top_end (Resource *r)
{
  const VsFlow *top = r->ps_heap.v[0];
  r->ps_end = r->ps_t + (top->vfin - r->ps_v) / r->ps_share * 1e9;
}

/* Brings R's work clock, and its accounting, to NOW. */
static inline void
ps_advance (VsFlowNet *net, Resource *r, guint i, double now)
{
  r->ps_v += r->ps_share * (now - r->ps_t) * 1e-9;
  r->ps_t = now;
  res_advance (net, r, i, now);
}

static void
ps_res_remove (VsFlowNet *net, guint i)
{
  for (guint k = 0; k < net->ps_res.len; k++)
    if (net->ps_res.v[k] == i)
      {
        net->ps_res.v[k] = net->ps_res.v[--net->ps_res.len];
        return;
      }
  g_assert_not_reached ();
}

static double
ps_min_cap (const Resource *r)
{
  double mc = INFINITY;
  for (guint j = 0; j < r->flows.len; j++)
    {
      const VsFlow *f = r->flows.v[j];
      if (f->index == PS_INDEX)
        mc = MIN (mc, f->cap);
    }
  return mc;
}

/* Whether no clocked flow of R is capped below SHARE. ps_min_cap is kept
 * as a lower bound as flows end (a flow's end leaves it), made exact by a
 * scan only when it is below SHARE. */
static inline gboolean
ps_min_ok (Resource *r, double share)
{
  if (G_LIKELY (r->ps_min_cap >= share))
    return TRUE;
  r->ps_min_cap = ps_min_cap (r);
  return r->ps_min_cap >= share;
}

/* The largest cap of R's fixed members. */
static double
ps_fixed_max (const Resource *r)
{
  double mx = 0;
  for (guint j = 0; j < r->flows.len; j++)
    {
      const VsFlow *f = r->flows.v[j];
      if (f->index != PS_INDEX)
        mx = MAX (mx, f->cap);
    }
  return mx;
}

/* Whether F, of several resources, is a star's link flow of hub I (its
 * other resource carries it alone). */
static inline gboolean
star_flow (const VsFlowNet *net, const VsFlow *f, guint i)
{
  return f->n_path == 2 && RES (net, other_res (f, i))->flows.len == 1;
}


/* R (number I), whose flows have just been rated, enters processor
 * sharing at NOW if they all run at its share. */
static void G_GNUC_NO_INLINE
ps_enter (VsFlowNet *net, Resource *r, guint i, double now)
{
  guint n = r->flows.len;
  if (net->no_ps || n < PS_MIN_FLOWS || res_slack (r))
    return;
  VsFlow **fv = (VsFlow **) r->flows.v;
  double share, top = INFINITY;   /* top: the clocked flows' rate */
  guint m = n;
  double fixed = 0, fmax = 0;
  double mc_all = INFINITY;
  for (guint j = 0; j < n; j++)
    mc_all = MIN (mc_all, fv[j]->cap);
  if (r->n_multi == 0 && mc_all >= r->cap / n)
    share = r->cap / n;
  else
    {
      /* The flows at the filling's level go on the clock; those below it
       * (at their caps) are fixed members. */
      top = 0;
      for (guint j = 0; j < n; j++)
        top = MAX (top, fv[j]->rate);
      m = 0;
      for (guint j = 0; j < n; j++)
        {
          const VsFlow *f = fv[j];
          if (f->rate == top)
            {
              if (f->n_path != 1)
                return;
              m++;
            }
          else
            {
              if (f->n_path != 1 && !star_flow (net, f, i))
                return;
              fixed += f->rate;
              fmax = MAX (fmax, f->cap);
            }
        }
      if (m < PS_MIN_FLOWS)
        return;
      share = (r->cap - fixed) / m;
      if (fmax > share)
        return;
    }
  r->ps = TRUE;
  r->ps_v = 0;
  r->ps_t = now;
  r->ps_share = share;
  r->ps_fixed = fixed;
  r->ps_n_fixed = n - m;
  r->ps_fixed_max = fmax;
  r->ps_heap.len = 0;
  double mc = INFINITY;
  for (guint j = 0; j < n; j++)
    {
      VsFlow *f = fv[j];
      if (m < n && f->rate != top)
        continue;
      r->st.bytes += settle (f, now);
      f->vfin = f->remaining;
      active_remove (net, f);
      f->index = PS_INDEX;
      heap_push (&r->ps_heap, f);
      mc = MIN (mc, f->cap);
    }
  r->ps_min_cap = mc;
  net->n_ps_flows += m;
  net->n_ps_fixed_multi += r->n_multi;
  uvec_push (&net->ps_res, i);
  ps_top_end (r);
  /* The earliest end may have been one of them: the others' is found by
   * a scan. */
  net->next_end_dirty = TRUE;
  net->hot.slow = TRUE;
}

/* R (number I) leaves processor sharing at NOW: its flows run on at the
 * share, settled, as active flows (to be rated again where the caller
 * pends R). */
static void
ps_leave (VsFlowNet *net, Resource *r, guint i, double now)
{
  ps_advance (net, r, i, now);
  double share = r->ps_share;
  guint m = 0;
  for (guint j = 0; j < r->flows.len; j++)
    {
      VsFlow *f = r->flows.v[j];
      if (f->index != PS_INDEX)
        continue;   /* a fixed member: active already */
      double left = pos (f->vfin - r->ps_v);
      r->st.bytes += f->remaining - left;
      f->remaining = left;
      f->rate = share;
      f->t_upd = now;
      active_push (net, f, now + left / share * 1e9);
      m++;
    }
  net->n_ps_flows -= m;
  net->n_ps_fixed_multi -= r->n_multi;
  r->ps_fixed = 0;
  r->ps_n_fixed = 0;
  r->ps_fixed_max = 0;
  r->ps = FALSE;
  r->ps_heap.len = 0;
  ps_res_remove (net, i);
  net->next_end_dirty = TRUE;
  net->hot.slow = TRUE;
}

static void flow_start_slow (VsFlowNet *net, double now, double amount, double cap,
                             const guint *path, guint n_path, gpointer owner, guint64 tag);

/* Fixed member F of ps resource R (number I) is taken out at NOW (its
 * resource's clock and accounting advanced by the caller, F out of R's
 * flows): the clocked flows share more, or R leaves processor sharing
 * (and is pended). */
static void
ps_unfix (VsFlowNet *net, Resource *r, guint i, VsFlow *f, double now)
{
  r->ps_n_fixed--;
  if (r->ps_n_fixed == 0)
    r->ps_fixed = 0, r->ps_fixed_max = 0;
  else
    {
      r->ps_fixed -= f->rate;
      if (f->cap >= r->ps_fixed_max)
        r->ps_fixed_max = ps_fixed_max (r);
    }
  double share = (r->cap - r->ps_fixed) / r->ps_heap.len;
  if (r->ps_heap.len == 0 || res_slack (r) || !ps_min_ok (r, share))
    {
      ps_leave (net, r, i, now);
      pend (net, i);
      return;
    }
  r->ps_share = share;
  r->load = r->ps_fixed + share * r->ps_heap.len;
  ps_top_end (r);
}

/* flow_start() of a one-resource flow on resource I, in processor
 * sharing. */
static void G_GNUC_NO_INLINE
ps_start (VsFlowNet *net, double now, double amount, double cap, guint i, gpointer owner, guint64 tag)
{
  g_return_if_fail (amount > 0 && cap > 0);
  Resource *r = RES (net, i);
  double c = MIN (cap, r->cap);
  guint m = r->ps_heap.len;
  double avail = r->cap - r->ps_fixed;
  double share = avail / (m + 1);
  if (c < share)
    {
      /* Capped below the share: the filling rates it (and may make it a
       * fixed member, ps_enter). */
      ps_leave (net, r, i, now);
      flow_start_slow (net, now, amount, cap, &i, 1, owner, tag);
      return;
    }
  if (G_UNLIKELY (r->ps_fixed_max > share))
    {
      /* A fixed cap above the new share: the filling rates them. */
      ps_leave (net, r, i, now);
      flow_start_slow (net, now, amount, cap, &i, 1, owner, tag);
      return;
    }
  guint n = m + 1;
  ps_advance (net, r, i, now);
  VsFlow *f = net->free_flows;
  if (f != NULL)
    net->free_flows = f->owner;
  else
    f = g_new0 (VsFlow, 1);
  f->remaining = amount;
  f->cap = c;
  f->rate = 0;
  f->t_upd = now;
  f->path[0] = i;
  f->slot[0] = r->flows.len;
  f->n_path = 1;
  f->order = net->next_order++;
  f->owner = owner;
  f->tag = tag;
  f->index = PS_INDEX;
  f->vfin = r->ps_v + amount;
  pvec_push (&r->flows, f);
  r->cap_sum += c;
  heap_push (&r->ps_heap, f);
  net->n_ps_flows++;
  r->ps_share = share;
  r->load = r->ps_fixed + share * n;
  r->ps_min_cap = MIN (r->ps_min_cap, c);
  ps_top_end (r);
}

/* The ps flows of resource I due by LIM, appended to DUE, ended at NOW;
 * R then shares among fewer, or leaves processor sharing (and is pended:
 * rated at the next flush). */
static void
ps_finish (VsFlowNet *net, guint i, double now, double lim, PVec *due, gpointer *stack)
{
  Resource *r = RES (net, i);
  guint first = due->len;
  while (r->ps_heap.len > 0)
    {
      ps_top_end (r);
      if (!(r->ps_end <= lim))
        break;
      pvec_push_s (due, heap_pop (&r->ps_heap), stack);
    }
  ps_advance (net, r, i, now);
  for (guint k = first; k < due->len; k++)
    {
      VsFlow *f = due->v[k];
      r->st.bytes += f->remaining;
      guint s = f->slot[0];
      VsFlow *moved = r->flows.v[r->flows.len - 1];
      pvec_remove_fast (&r->flows, s);
      if (G_LIKELY (moved->n_path == 1))
        moved->slot[0] = s;
      else
        for (guint q = 0; q < moved->n_path; q++)
          if (moved->path[q] == i)
            moved->slot[q] = s;
      r->cap_sum -= f->cap;
    }
  net->n_ps_flows -= due->len - first;
  if (r->flows.len == 0)
    {
      r->ps = FALSE;
      r->cap_sum = 0;
      r->load = 0;
      ps_res_remove (net, i);
      return;
    }
  guint m = r->ps_heap.len;
  double share = (r->cap - r->ps_fixed) / m;
  if (m == 0 || res_slack (r) || !ps_min_ok (r, share))
    {
      ps_leave (net, r, i, now);
      pend (net, i);
      return;
    }
  r->ps_share = share;
  r->load = r->ps_fixed + share * m;
  ps_top_end (r);
}

/* flow_start() in general. */
/* A new flow F with slack everywhere on its path runs at its cap. */
static inline void
run_at_cap (VsFlowNet *net, VsFlow *f, double amount, double now)
{
  f->rate = f->cap;
  double end = now + amount / f->cap * 1e9;
  active_push (net, f, end);
  if (!net->next_end_dirty && end < net->hot.next_end)
    net->hot.next_end = end, net->next_flow = f;
}

/* A new flow F binds one of its N resources PATH: it waits for its rate
 * until the next flush, with the others started at NOW. */
static inline void
wait_for_rate (VsFlowNet *net, VsFlow *f, const guint *path, guint n, double now)
{
  f->rate = 0;
  active_push (net, f, INFINITY);
  for (guint p = 0; p < n; p++)
    pend (net, path[p]);
  net->pending_now = now;
}

static void G_GNUC_NO_INLINE
flow_start_slow (VsFlowNet *net, double now, double amount, double cap,
                 const guint *path, guint n_path, gpointer owner, guint64 tag)
{
  g_return_if_fail (amount > 0 && cap > 0 && n_path >= 1 && n_path <= VS_FLOW_MAX_PATH);
  if (G_UNLIKELY (net->ps_res.len > 0))
    {
      if (n_path == 1 && path[0] < net->res->len && RES (net, path[0])->ps)
        {
          ps_start (net, now, amount, cap, path[0], owner, tag);
          return;
        }
      /* A flow of several resources ends their processor sharing. */
      for (guint p = 0; p < n_path; p++)
        if (path[p] < net->res->len && RES (net, path[p])->ps)
          ps_leave (net, RES (net, path[p]), path[p], now);
    }
  if (net->pending.len > 0 && net->pending_now != now)
    flush_pending (net);
  VsFlow *f = net->free_flows;
  if (f != NULL)
    net->free_flows = f->owner;
  else
    f = g_new0 (VsFlow, 1);
  f->remaining = amount;
  f->t_upd = now;
  f->owner = owner;
  f->tag = tag;
  f->order = net->next_order++;
  /* A resource named twice in a path is used once. No flow can go faster
   * than the slowest resource on its path: capping it there changes no
   * max-min rate, and lets resources that carry only such flows be seen
   * to have slack. */
  guint n = 0;
  for (guint i = 0; i < n_path; i++)
    {
      gboolean dup = FALSE;
      for (guint j = 0; j < n; j++)
        dup |= f->path[j] == path[i];
      if (dup)
        continue;
      g_assert (path[i] < net->res->len);
      Resource *r = RES (net, path[i]);
      f->path[n] = path[i];
      f->slot[n] = r->flows.len;
      pvec_push (&r->flows, f);
      cap = MIN (cap, r->cap);
      n++;
    }
  f->n_path = n;
  f->cap = cap;
  gboolean slack = TRUE;
  for (guint p = 0; p < n; p++)
    {
      Resource *r = RES (net, f->path[p]);
      if (isinf (cap))
        r->n_inf++;
      else
        r->cap_sum += cap;
      r->n_multi += n > 1;
      slack &= res_slack (r);
    }
  if (slack)
    {
      /* No resource on its path binds, even with it: it runs at its cap
       * and no other flow's rate changes (no recompute). */
      for (guint p = 0; p < n; p++)
        {
          Resource *r = RES (net, f->path[p]);
          res_advance (net, r, f->path[p], now);
          r->load += cap;
        }
      run_at_cap (net, f, amount, now);
      return;
    }
  wait_for_rate (net, f, f->path, n, now);
}

/* Flow F makes resource I bind: rated at the next
 * flush, with the others started at NOW. */
static void G_GNUC_NO_INLINE
start_binding (VsFlowNet *net, VsFlow *f, guint i, double now)
{
  f->rate = 0;
  net->end[f->index] = INFINITY;
  pend (net, i);
  net->pending_now = now;
}

/* The common case straight-line: one resource, nothing pending from
 * another instant, no observer (n_fast is 0 then), room in the arrays
 * and a recycled flow; anything else goes the general way. (A recycled
 * flow's mark is below any stamp to come.) */
void
flow_start (VsFlowNet *net, double now, double amount, double cap,
            const guint *path, guint n_path, gpointer owner, guint64 tag)
{
  VsFlow *f = net->free_flows;
  guint i = path[0];
  if (G_UNLIKELY (n_path != 1 || f == NULL || i >= net->n_fast
                  || !(amount > 0 && cap > 0)
                  || (net->pending.len > 0 && net->pending_now != now)
                  || net->active.len == net->active.cap))
    goto slow;
  Resource *r = RES (net, i);
  cap = MIN (cap, r->cap);
  guint slot = r->flows.len;
  if (G_UNLIKELY (slot == r->flows.cap || isinf (cap) || r->ps))
    goto slow;
  double cap_sum = r->cap_sum + cap;
  net->free_flows = f->owner;
  r->cap_sum = cap_sum;
  r->flows.v[slot] = f;
  r->flows.len = slot + 1;
  f->remaining = amount;
  f->cap = cap;
  f->t_upd = now;
  f->path[0] = i;
  f->slot[0] = slot;
  f->n_path = 1;
  f->order = net->next_order++;
  f->owner = owner;
  f->tag = tag;
  guint k = net->active.len++;
  f->index = k;
  net->active.v[k] = f;
  if (G_UNLIKELY (r->n_inf > 0 || !(cap_sum <= r->slack_max)))
    {
      start_binding (net, f, i, now);
      return;
    }
  /* Slack: it runs at its cap and no other flow's rate changes. */
  res_account (r, now);
  r->t_last = now;
  r->load += cap;
  f->rate = cap;
  double end = now + amount / cap * 1e9;
  net->end[k] = end;
  /* The earliest end, without a branch (harmless when dirty: the scan
   * to come replaces it). */
  double ne = net->hot.next_end;
  gboolean earlier = end < ne;
  net->hot.next_end = min_d (end, ne);
  net->next_flow = sel_p (earlier, f, net->next_flow);
  return;
slow:
  if (net->ps_res.len > 0 && n_path == 1 && i < net->res->len && RES (net, i)->ps)
    ps_start (net, now, amount, cap, i, owner, tag);
  else
    flow_start_slow (net, now, amount, cap, path, n_path, owner, tag);
}

double
flow_net_next_end_slow (VsFlowNet *net)
{
  flush (net);
  if (net->next_end_dirty)
    {
      double t = INFINITY;
      VsFlow *first = NULL;
      for (guint i = 0; i < net->active.len; i++)
        if (net->end[i] < t)
          t = net->end[i], first = net->active.v[i];
      net->hot.next_end = t;
      net->next_flow = first;
      net->next_end_dirty = FALSE;
    }
  /* With resources in processor sharing, hot.next_end is the earliest
   * end of the others, and every query comes here. */
  double t = net->hot.next_end;
  for (guint k = 0; k < net->ps_res.len; k++)
    t = min_d (t, RES (net, net->ps_res.v[k])->ps_end);
  net->hot.slow = net->ps_res.len > 0;
  return t;
}

/* end_flow() for a fixed member of a ps resource (a one-resource flow,
 * or a star's link flow). */
static void G_GNUC_NO_INLINE
end_fixed (VsFlowNet *net, VsFlow *f, double now)
{
  for (guint p = 0; p < f->n_path; p++)
    {
      guint i = f->path[p];
      Resource *r = RES (net, i);
      if (r->ps)
        ps_advance (net, r, i, now);
      else
        res_advance (net, r, i, now);
      r->st.bytes += f->remaining;
      guint s = f->slot[p];
      VsFlow *moved = r->flows.v[r->flows.len - 1];
      pvec_remove_fast (&r->flows, s);
      if (moved != f)
        for (guint q = 0; q < moved->n_path; q++)
          if (moved->path[q] == i)
            moved->slot[q] = s;
      r->cap_sum -= f->cap;
      r->n_multi -= f->n_path > 1;
    }
  active_remove (net, f);
  for (guint p = 0; p < f->n_path; p++)
    {
      guint i = f->path[p];
      Resource *r = RES (net, i);
      if (r->ps)
        {
          net->n_ps_fixed_multi -= f->n_path > 1;
          ps_unfix (net, r, i, f, now);
        }
      else if (r->flows.len == 0)
        r->cap_sum = 0, r->load = 0;
      else
        {
          r->load = MAX (0.0, r->load - f->rate);
          if (!res_slack (r))
            pend (net, i);
        }
    }
}

/* end_flow()'s end for a fixed member F of ps resource R (number I),
 * accounted and taken out already: the clock to NOW, then the share. */
static void G_GNUC_NO_INLINE
ps_fixed_ended (VsFlowNet *net, Resource *r, guint i, VsFlow *f, double now)
{
  r->ps_v += r->ps_share * (now - r->ps_t) * 1e-9;
  r->ps_t = now;
  ps_unfix (net, r, i, f, now);
}

/* end_flow() for paths of several resources. */
static void G_GNUC_NO_INLINE
end_flow_multi (VsFlowNet *net, VsFlow *f, double now)
{
  if (G_UNLIKELY (net->n_ps_fixed_multi > 0))
    for (guint p = 0; p < f->n_path; p++)
      if (RES (net, f->path[p])->ps)
        {
          end_fixed (net, f, now);
          return;
        }
  gboolean slack = TRUE;
  for (guint p = 0; p < f->n_path; p++)
    {
      Resource *r = RES (net, f->path[p]);
      res_advance (net, r, f->path[p], now);
      r->st.bytes += f->remaining;
      r->load = MAX (0.0, r->load - f->rate);
      slack &= res_slack (r);
    }
  if (!slack)
    for (guint p = 0; p < f->n_path; p++)
      pend (net, f->path[p]);
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
      r->n_multi--;
      if (r->flows.len == 0)
        r->cap_sum = 0, r->load = 0;   /* no drift left behind */
      if (moved != f)
        for (guint q = 0; q < moved->n_path; q++)
          if (moved->path[q] == f->path[p])
            moved->slot[q] = s;
    }
  active_remove (net, f);
}

/* F ends at NOW: it moved what it had left, its resources lose its load,
 * and it is taken out. Where no resource on its path binds (f included),
 * its end changes no other flow's rate: nothing to recompute. */
static inline G_GNUC_UNUSED __attribute__ ((always_inline)) void
end_flow (VsFlowNet *net, VsFlow *f, double now)
{
  if (G_UNLIKELY (f->n_path != 1))
    {
      end_flow_multi (net, f, now);
      return;
    }
  /* The common case, unrolled: one resource, and without branches
   * whose outcome varies from flow to flow. */
  guint i = f->path[0];
  Resource *r = RES (net, i);
  res_advance (net, r, i, now);
  r->st.bytes += f->remaining;
  /* The resource binds with f: its other flows need new rates (or, in
   * processor sharing, where it always binds, F was a fixed member). */
  gboolean bind = !res_slack (r);
  guint s = f->slot[0];
  guint n = --r->flows.len;
  VsFlow *moved = r->flows.v[n];
  r->flows.v[s] = moved;
  if (G_UNLIKELY (isinf (f->cap)))
    r->n_inf--;
  else
    r->cap_sum -= f->cap;
  /* An empty resource leaves no drift behind. */
  double keep = (double) (n != 0);
  r->cap_sum *= keep;
  r->load = pos (r->load - f->rate) * keep;
  if (G_UNLIKELY (bind) && n > 0)
    {
      /* (F is out of R's flows: ps_fixed_ended reads no slot.) */
      if (G_UNLIKELY (r->ps))
        ps_fixed_ended (net, r, i, f, now);
      else
        pend (net, i);
    }
  /* MOVED may be f itself: then this writes to the ended flow. */
  if (G_LIKELY (moved->n_path == 1))
    moved->slot[0] = s;
  else
    for (guint q = 0; q < moved->n_path; q++)
      if (moved->path[q] == i)
        moved->slot[q] = s;
  /* Out of the active flows: the last takes its place (or is f). */
  guint last = --net->active.len, k = f->index;
  VsFlow *lf = net->active.v[last];
  net->active.v[k] = lf;
  net->end[k] = net->end[last];
  lf->index = k;
}

/* Hands F back to the free list and calls DONE for it. */
static inline void
flow_done (VsFlowNet *net, VsFlow *f, VsFlowDone done, gpointer user)
{
  gpointer owner = f->owner;
  guint64 tag = f->tag;
  f->owner = net->free_flows;
  net->free_flows = f;
  done (user, owner, tag);
}

/* flow_net_finish_due() for more than two due flows, the first at index
 * FIRST of the active flows. */
static void G_GNUC_NO_INLINE
finish_many (VsFlowNet *net, double now, double lim, guint first, guint n_due,
             VsFlowDone done, gpointer user)
{
  VsFlow **d = g_new (VsFlow *, n_due);
  guint k = 0;
  for (guint i = first; i < net->active.len; i++)
    if (net->end[i] <= lim)
      d[k++] = net->active.v[i];
  g_assert (k == n_due);
  for (guint i = 0; i < n_due; i++)
    end_flow (net, d[i], now);
  /* Callbacks in start order (insertion sort: usually few). The list is
   * local: callbacks may start and end flows. */
  for (guint i = 1; i < n_due; i++)
    {
      VsFlow *f = d[i];
      guint j = i;
      for (; j > 0 && d[j - 1]->order > f->order; j--)
        d[j] = d[j - 1];
      d[j] = f;
    }
  for (guint i = 0; i < n_due; i++)
    flow_done (net, d[i], done, user);
  g_free (d);
}

/* flow_net_finish_due() with resources in processor sharing: the due
 * flows of the active ones (a scan, as below) and of the heaps. */
static void G_GNUC_NO_INLINE
finish_ps (VsFlowNet *net, double now, double lim, VsFlowDone done, gpointer user)
{
  /* The due flows: on the stack while few (the list is local: callbacks
   * may start and end flows). */
  gpointer buf[16];
  PVec due = { buf, 0, G_N_ELEMENTS (buf) };
  if (net->next_end_dirty || net->hot.next_end <= lim)
    {
      double t = INFINITY;
      VsFlow *next = NULL;
      for (guint i = 0; i < net->active.len; i++)
        {
          double e = net->end[i];
          if (e <= lim)
            pvec_push_s (&due, net->active.v[i], buf);
          else if (e < t)
            t = e, next = net->active.v[i];
        }
      net->hot.next_end = t;
      net->next_flow = next;
      net->next_end_dirty = FALSE;
      for (guint k = 0; k < due.len; k++)
        end_flow (net, due.v[k], now);
    }
  /* Backwards: a resource that leaves takes the last one's place. */
  for (guint k = net->ps_res.len; k-- > 0;)
    if (RES (net, net->ps_res.v[k])->ps_end <= lim)
      ps_finish (net, net->ps_res.v[k], now, lim, &due, buf);
  net->hot.slow = net->next_end_dirty || net->ps_res.len > 0 || net->pending.len > 0;
  if (due.len == 0)
    return;
  net->pending_now = now;
  VsFlow **d = (VsFlow **) due.v;
  for (guint i = 1; i < due.len; i++)
    {
      VsFlow *f = d[i];
      guint j = i;
      for (; j > 0 && d[j - 1]->order > f->order; j--)
        d[j] = d[j - 1];
      d[j] = f;
    }
  for (guint i = 0; i < due.len; i++)
    flow_done (net, d[i], done, user);
  if (due.v != buf)
    g_free (due.v);
}

void
flow_net_finish_due (VsFlowNet *net, double now, VsFlowDone done, gpointer user)
{
  flush (net);
  /* A flow is due if it ends within rounding of NOW. */
  double lim = now + (1e-6 + fabs (now) * 1e-12);
  if (G_UNLIKELY (net->ps_res.len > 0))
    {
      finish_ps (net, now, lim, done, user);
      return;
    }
  if (!net->next_end_dirty && !(net->hot.next_end <= lim))
    return;
  /* One pass finds the due flows (usually one or two: a kernel's compute
   * and memory flows end together) and the earliest end of the others
   * (their ends do not change until the next flush). */
  const double *end = net->end;
  VsFlow **av = (VsFlow **) net->active.v;
  guint n = net->active.len, n_due = 0, i0 = 0, i1 = 0, next = G_MAXUINT;
  double t = INFINITY;
  for (guint i = 0; i < n; i++)
    {
      double e = end[i];
      if (e <= lim)
        {
          if (n_due == 0)
            i0 = i;
          else if (n_due == 1)
            i1 = i;
          n_due++;
        }
      else if (e < t)
        t = e, next = i;
    }
  net->hot.next_end = t;
  net->next_flow = next == G_MAXUINT ? NULL : av[next];
  net->next_end_dirty = FALSE;
  net->hot.slow = FALSE;        /* flushed above */
  if (n_due == 0)
    return;
  /* What the ended flows' resources still carry is rated at the next
   * flush, together with the flows the callbacks start at this instant
   * (one recompute instead of two when a stream starts its next op). */
  net->pending_now = now;
  if (G_UNLIKELY (n_due > 2))
    {
      finish_many (net, now, lim, i0, n_due, done, user);
      return;
    }
  VsFlow *a = av[i0];
  if (n_due == 1)
    {
      end_flow (net, a, now);
      flow_done (net, a, done, user);
      return;
    }
  VsFlow *b = av[i1];
  end_flow (net, a, now);
  end_flow (net, b, now);
  /* Callbacks in start order. */
  if (a->order > b->order)
    {
      VsFlow *x = a;
      a = b, b = x;
    }
  flow_done (net, a, done, user);
  flow_done (net, b, done, user);
}

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
