/* flow-end.part.c — the next end and ending flows: flow_net_next_end_slow,
 * end_flow (one resource, unrolled) and its forms for several resources
 * and fixed members, flow_net_finish_due and the callbacks in start order.
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

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
      net->act_end = t;
      net->next_flow = first;
      net->next_end_dirty = FALSE;
    }
  next_set (net);
  net->hot.slow = FALSE;
  return net->hot.next_end;
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
  slot_set (moved, i, s);
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
  if (net->next_end_dirty || net->act_end <= lim)
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
      net->act_end = t;
      net->next_flow = next;
      net->next_end_dirty = FALSE;
      for (guint k = 0; k < due.len; k++)
        end_flow (net, due.v[k], now);
    }
  /* Backwards: a resource that leaves takes the last one's place (one
   * seen already). The earliest ps end on the way. */
  double ps_min = INFINITY;
  for (guint k = net->ps_res.len; k-- > 0;)
    {
      Resource *q = RES (net, net->ps_res.v[k]);
      if (q->ps_end <= lim)
        {
          ps_finish (net, net->ps_res.v[k], now, lim, &due, buf);
          if (!q->ps)
            continue;
        }
      ps_min = min_d (ps_min, q->ps_end);
    }
  net->ps_min = ps_min;
  next_set (net);
  net->hot.slow = net->next_end_dirty || net->pending.len > 0;
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

/* flow_net_finish_due() with resources in processor sharing, in the
 * common case: one flow due, the top of one resource's heap, none of the
 * active flows nor the next of its heap due with it, and flows left on
 * its clock. finish_ps() (ps_finish) in one pass, with fewer things to
 * keep (the same arithmetic in the same order); otherwise finish_ps. */
static void G_GNUC_NO_INLINE
finish_ps_one (VsFlowNet *net, double now, double lim, VsFlowDone done, gpointer user)
{
  if (G_UNLIKELY (net->next_end_dirty || net->act_end <= lim))
    goto general;
  Resource *r = NULL;
  guint i = 0;
  double others = INFINITY;
  for (guint k = 0; k < net->ps_res.len; k++)
    {
      Resource *q = RES (net, net->ps_res.v[k]);
      if (q->ps_end <= lim)
        {
          if (r != NULL)
            goto general;
          r = q, i = net->ps_res.v[k];
        }
      else
        others = min_d (others, q->ps_end);
    }
  if (G_UNLIKELY (r == NULL))
    goto general;
  /* M clocked flows stay; the next top is the lesser child. */
  VsFlow **v = (VsFlow **) r->ps_heap.v;
  guint m = r->ps_heap.len - 1;
  if (G_UNLIKELY (m == 0))
    goto general;
  const VsFlow *c = v[1];
  if (m > 1 && vfin_before (v[2], c))
    c = v[2];
  if (r->ps_t + (c->vfin - r->ps_v) / r->ps_share * 1e9 <= lim)
    goto general;
  VsFlow *f = heap_pop (&r->ps_heap);
  ps_advance (net, r, i, now);
  r->st.bytes += f->remaining;
  guint s = f->slot[0];
  VsFlow *moved = r->flows.v[--r->flows.len];
  r->flows.v[s] = moved;
  slot_set (moved, i, s);
  r->cap_sum -= f->cap;
  net->n_ps_flows--;
  double share = (r->cap - r->ps_fixed) / m;
  if (G_UNLIKELY (res_slack (r) || !ps_min_ok (r, share)))
    {
      ps_leave (net, r, i, now);
      pend (net, i);
    }
  else
    {
      r->ps_share = share;
      r->load = r->ps_fixed + share * m;
      ps_top_end (r);
      net->ps_min = min_d (others, r->ps_end);
      next_set (net);
      net->hot.slow = FALSE;    /* flushed, and clean: checked above */
    }
  net->pending_now = now;
  flow_done (net, f, done, user);
  return;
general:
  finish_ps (net, now, lim, done, user);
}

void
flow_net_finish_due (VsFlowNet *net, double now, VsFlowDone done, gpointer user)
{
  flush (net);
  /* A flow is due if it ends within rounding of NOW. */
  double lim = now + (1e-6 + fabs (now) * 1e-12);
  /* A flow in processor sharing due: finish_ps. Otherwise only active
   * flows are (those of a ps resource are fixed members: end_flow). */
  if (G_UNLIKELY (net->ps_min <= lim))
    {
      finish_ps_one (net, now, lim, done, user);
      return;
    }
  if (!net->next_end_dirty && !(net->act_end <= lim))
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
  net->act_end = t;
  net->hot.next_end = min_d (t, net->ps_min);
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
