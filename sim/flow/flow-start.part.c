/* flow-start.part.c — starting a flow: flow_start (one resource,
 * straight-line) and flow_start_slow (paths of several resources,
 * observers, processor sharing).
 *
 * Part of the flow network: #included by sim/flow/flow.c (one
 * translation unit; not compiled alone). */
#include "flow/flow-priv.h"

/* flow_start() in general. */
/* A new flow F with slack everywhere on its path runs at its cap. */
static inline void
run_at_cap (VsFlowNet *net, VsFlow *f, double amount, double now)
{
  f->rate = f->cap;
  double end = now + amount / f->cap * 1e9;
  active_push (net, f, end);
  if (!net->next_end_dirty && end < net->act_end)
    net->act_end = end, net->next_flow = f;
  net->hot.next_end = min_d (end, net->hot.next_end);
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
 * flow's mark is below any stamp to come.) Inlined into flow_start and
 * flow_start2. */
static inline __attribute__ ((always_inline)) void
start_one (VsFlowNet *net, double now, double amount, double cap,
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
  if (G_UNLIKELY (r->ps))
    {
      ps_start (net, now, amount, cap, i, owner, tag);
      return;
    }
  cap = MIN (cap, r->cap);
  guint slot = r->flows.len;
  if (G_UNLIKELY (slot == r->flows.cap || isinf (cap)))
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
  double ne = net->act_end;
  gboolean earlier = end < ne;
  net->act_end = min_d (end, ne);
  net->next_flow = sel_p (earlier, f, net->next_flow);
  net->hot.next_end = min_d (end, net->hot.next_end);
  return;
slow:
  flow_start_slow (net, now, amount, cap, path, n_path, owner, tag);   /* ps_start too */
}

void
flow_start (VsFlowNet *net, double now, double amount, double cap,
            const guint *path, guint n_path, gpointer owner, guint64 tag)
{
  start_one (net, now, amount, cap, path, n_path, owner, tag);
}

/* Two starts in one call (a kernel's `sm` and memory flows): the same
 * steps as the two flow_start calls, in their order. */
void
flow_start2 (VsFlowNet *net, double now, double amount0, double cap0, guint res0,
             double amount1, double cap1, guint res1, gpointer owner, guint64 tag)
{
  start_one (net, now, amount0, cap0, &res0, 1, owner, tag);
  start_one (net, now, amount1, cap1, &res1, 1, owner, tag);
}
