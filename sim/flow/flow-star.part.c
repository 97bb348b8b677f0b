/* flow-star.part.c — stars: a hub whose flows of several resources each
 * have a link that carries them alone, rated by one-resource filling on
 * the hub (recompute_star, flush_stars).
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

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
    level_fill (fv, n, r->cap);
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
