/* flow-ps.part.c — processor sharing in virtual time: a resource's work
 * clock, the heap of its flows' virtual finish times, fixed members below
 * the share; entering and leaving it, and a start and the due ends on a
 * resource in it (ps_start, ps_finish).
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

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

/* Bottom-up: the hole goes down to a leaf along the lesser children,
 * one comparison a level, then the last flow rises from there (little:
 * it came from the bottom). The keys (vfin, order) are unique, so the
 * flows come out in the same order as from any other heap. */
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
      v[i] = v[c];
      i = c;
    }
  while (i > 0)
    {
      guint p = (i - 1) / 2;
      if (!vfin_before (last, v[p]))
        break;
      v[i] = v[p];
      i = p;
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

/* The earliest end of the resources in processor sharing, after one's
 * changed, and the next end with it. */
static inline void
ps_min_update (VsFlowNet *net)
{
  double t = INFINITY;
  for (guint k = 0; k < net->ps_res.len; k++)
    t = min_d (t, RES (net, net->ps_res.v[k])->ps_end);
  net->ps_min = t;
  next_set (net);
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
  ps_min_update (net);
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
  ps_min_update (net);
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
  ps_min_update (net);
}

/* flow_start() of a one-resource flow on resource I, in processor
 * sharing (AMOUNT > 0 and CAP > 0: the callers tested them). */
static void G_GNUC_NO_INLINE
ps_start (VsFlowNet *net, double now, double amount, double cap, guint i, gpointer owner, guint64 tag)
{
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
  double was = r->ps_end;
  ps_top_end (r);
  /* The earliest ps end: R's if earlier, a scan only if R had it. */
  if (r->ps_end <= net->ps_min)
    net->ps_min = r->ps_end;
  else if (was == net->ps_min)
    {
      ps_min_update (net);
      return;
    }
  next_set (net);
}

/* The ps flows of resource I due by LIM, appended to DUE, ended at NOW;
 * R then shares among fewer, or leaves processor sharing (and is pended:
 * rated at the next flush). The caller updates ps_min. */
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
      slot_set (moved, i, s);
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
