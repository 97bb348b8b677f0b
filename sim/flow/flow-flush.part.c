/* flow-flush.part.c — deferred rating: resources wait in net->pending
 * (pend) until something needs rates; flush_pending rates them with the
 * cheapest solver that fits (one resource, stars, one-resource seeds, the
 * full component search).
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

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
      net->hot.slow = net->next_end_dirty;
      next_set (net);
      return;
    }
  if (G_UNLIKELY (net->n_ps_fixed_multi > 0))
    unps_pending (net);
  if (!net->no_ps && flush_stars (net))
    {
      net->pending.len = 0;
      net->hot.slow = net->next_end_dirty;
      next_set (net);
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
  net->hot.slow = net->next_end_dirty;
  next_set (net);
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

