/* flow-solve.part.c — the max-min solve: progressive filling over the
 * component of the resources that need new rates (recompute), and its
 * one-resource forms without a component search (recompute_simple,
 * recompute_one); the earliest end kept exact as rates change (Ends).
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

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
  if (f == net->next_flow && end > net->act_end)
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
  if (e->later && e->cmin > net->act_end)
    net->next_end_dirty = TRUE, net->hot.slow = TRUE;
  else if (e->later || e->cmin < net->act_end)
    net->act_end = e->cmin, net->next_flow = e->cf;
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

/* Water-filling of one resource of capacity CAP among N > 1 flows (none
 * frozen on entry): flows capped below the fair level take their cap, the
 * rest share what is left equally (each flow's nrate). */
static inline void
level_fill (VsFlow **fv, guint n, double cap)
{
  double residual = cap;
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
        return;
      if (!capped)
        {
          for (guint j = 0; j < n; j++)
            if (!fv[j]->frozen)
              fv[j]->nrate = level;
          return;
        }
    }
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
    level_fill (fv, n, r->cap);
  Ends e = { INFINITY, NULL, FALSE };
  apply_rates (net, r, fv, n, &e, now);
  ends_done (net, &e);
  ps_maybe_enter (net, r, i, now);
}
