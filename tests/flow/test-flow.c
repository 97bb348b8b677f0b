/* test-flow.c — fluid sharing against numbers computed by hand. */
#include <math.h>

#include "flow/flow.h"

typedef struct {
  double t[8];
  guint64 tag[8];
  guint n;
  double now;
} Done;

static void
on_done (gpointer user, gpointer owner, guint64 tag)
{
  Done *d = user;
  g_assert_cmpuint (d->n, <, 8);
  d->t[d->n] = d->now;
  d->tag[d->n++] = tag;
}

static void
run (VsFlowNet *net, Done *d)
{
  for (;;)
    {
      double t = flow_net_next_end (net);
      if (isinf (t))
        break;
      d->now = t;
      flow_net_finish_due (net, t, on_done, d);
    }
}

/* 1 GB over a 10 GB/s resource: 0.1 s = 1e8 ns. */
static void
test_one_flow (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "link", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 1);
  g_assert_cmpfloat_with_epsilon (d.t[0], 1e8, 1e-3);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 1e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1e8, 1e-3);
}

/* Two 1 GB flows on one 10 GB/s resource: each gets 5 GB/s, both end at
 * 0.2 s. A third flow of 0.5 GB starting at 0.1 s: from then on three share
 * (3.33 GB/s each). At 0.1 s flows 1, 2 have 0.5 GB left, flow 3 0.5 GB:
 * all three end together at 0.1 + 1.5/10 = 0.25 s. */
static void
test_two_flows_share (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 1);
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 2);
  g_assert_cmpuint (flow_net_n_active (net), ==, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8, 1e-3);
  flow_start (net, 1e8, 0.5e9, INFINITY, &r, 1, NULL, 3);
  run (net, &d);
  g_assert_cmpuint (flow_net_n_active (net), ==, 0);
  g_assert_cmpuint (d.n, ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (d.t[i], 2.5e8, 1e-2);
}

/* Caps: flow A capped at 2 GB/s, flow B uncapped, on 10 GB/s. Max-min:
 * A gets 2, B gets 8. A moves 1 GB in 0.5 s; B moves 4 GB in 0.5 s. */
static void
test_cap (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 2e9, &r, 1, NULL, 1);
  flow_start (net, 0, 4e9, INFINITY, &r, 1, NULL, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 2);
  g_assert_cmpfloat_with_epsilon (d.t[0], 5e8, 1e-2);
  g_assert_cmpfloat_with_epsilon (d.t[1], 5e8, 1e-2);
}

/* Paths: flow 1 over [link(4), mem(10)], flow 2 over [mem]. Flow 1 is
 * limited to 4 by the link; flow 2 takes the remaining 6 of mem. */
static void
test_paths (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint link = flow_net_add_resource (net, "link", 4e9);
  guint mem = flow_net_add_resource (net, "mem", 10e9);
  guint p1[] = { link, mem };
  Done d = { 0 };
  flow_start (net, 0, 4e9, INFINITY, p1, 2, NULL, 1);
  flow_start (net, 0, 6e9, INFINITY, &mem, 1, NULL, 2);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 2);
  g_assert_cmpfloat_with_epsilon (d.t[0], 1e9, 1e-2);
  g_assert_cmpfloat_with_epsilon (d.t[1], 1e9, 1e-2);
  g_assert_cmpfloat_with_epsilon (flow_net_alone_rate (net, p1, 2, INFINITY), 4e9, 1);
}

/* Independent resources do not interact (full duplex): two flows on
 * separate resources both run at full speed. Utilization: a 50 % cap is
 * busy but not saturated. */
static void
test_independent (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint a = flow_net_add_resource (net, "h2d", 10e9);
  guint b = flow_net_add_resource (net, "d2h", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, INFINITY, &a, 1, NULL, 1);
  flow_start (net, 0, 1e9, 5e9, &b, 1, NULL, 2);
  run (net, &d);
  g_assert_cmpfloat_with_epsilon (d.t[0], 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.t[1], 2e8, 1e-3);
  VsResourceStats st;
  flow_net_resource_stats (net, b, &st);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 2e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 0, 1e-3);
}

/* Slack and binding: A (cap 4 GB/s, 0.4 GB) and B (cap 4, 0.8 GB) fit in
 * 10 GB/s and run at their caps. C (cap 4, 0.4 GB) at 0.05 s makes the
 * caps exceed the resource: 10/3 GB/s each. A has 0.2 GB left: it ends
 * at 0.05 + 0.06 = 0.11 s. Then B and C fit again at 4 GB/s: B has
 * 0.4 GB left (ends 0.21 s), C 0.2 GB (ends 0.16 s). */
static void
test_slack_then_binding (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 0.4e9, 4e9, &r, 1, NULL, 1);
  flow_start (net, 0, 0.8e9, 4e9, &r, 1, NULL, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 8e9, 1);
  d.now = flow_net_next_end (net);
  g_assert_cmpfloat_with_epsilon (d.now, 1e8, 1e-3);
  flow_start (net, 0.5e8, 0.4e9, 4e9, &r, 1, NULL, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 3);
  g_assert_cmpuint (d.tag[0], ==, 1);
  g_assert_cmpfloat_with_epsilon (d.t[0], 1.1e8, 1e-2);
  g_assert_cmpuint (d.tag[1], ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[1], 1.6e8, 1e-2);
  g_assert_cmpuint (d.tag[2], ==, 2);
  g_assert_cmpfloat_with_epsilon (d.t[2], 2.1e8, 1e-2);
  VsResourceStats st;
  flow_net_settle (net, 2.1e8);
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 1.6e9, 10);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 0.6e8, 1e-2);
}

typedef struct {
  guint n;
  guint res[8];
  double t0[8], t1[8], load[8];
} Obs;

static void
on_load (gpointer user, guint res, double t0, double t1, double load)
{
  Obs *o = user;
  g_assert_cmpuint (o->n, <, 8);
  o->res[o->n] = res;
  o->t0[o->n] = t0;
  o->t1[o->n] = t1;
  o->load[o->n++] = load;
}

/* Three capped flows on one 10 GB/s resource (the one-resource filling):
 * caps 2, 5 and 6 GB/s sum above it. Fair share 10/3: A's cap (2) binds,
 * B and C share the other 8 (4 each, under their caps). A (1 GB) and B
 * (2 GB) both end at 0.5 s; C (4 GB) has 2 GB left and alone runs at its
 * cap, 6 GB/s: ends at 0.5 + 1/3 s. The observer sees the load change
 * once at 0.5 s (10 GB/s before) and the end (6 GB/s). */
static void
test_one_resource_cap_binds (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Obs o = { 0 };
  flow_net_set_observer (net, on_load, &o);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 2e9, &r, 1, NULL, 1);
  flow_start (net, 0, 2e9, 5e9, &r, 1, NULL, 2);
  flow_start (net, 0, 4e9, 6e9, &r, 1, NULL, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 5e8, 1e-3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 3);
  g_assert_cmpuint (d.tag[0], ==, 1);
  g_assert_cmpuint (d.tag[1], ==, 2);
  g_assert_cmpfloat_with_epsilon (d.t[0], 5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.t[1], 5e8, 1e-3);
  g_assert_cmpuint (d.tag[2], ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[2], 5e8 + 1e9 / 3, 1e-2);
  g_assert_cmpuint (o.n, ==, 2);
  g_assert_cmpfloat (o.t0[0], ==, 0);
  g_assert_cmpfloat_with_epsilon (o.t1[0], 5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (o.load[0], 10e9, 1);
  g_assert_cmpfloat_with_epsilon (o.t0[1], 5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (o.t1[1], 5e8 + 1e9 / 3, 1e-2);
  g_assert_cmpfloat_with_epsilon (o.load[1], 6e9, 1);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 7e9, 10);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 5e8, 1e-2);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 5e8 + 1e9 / 3, 1e-2);
}

/* A component mixing a two-resource flow and single-resource ones: X over
 * [link 4, mem 10] (capped at the link's 4), Y (cap 2) and Z (cap 5) on
 * mem. Mem's fair share 10/3: Y's cap binds (2); then link and mem both
 * leave 4 per flow: X 4, Z 4 (mem carries 10). Y (1 GB) ends at 0.5 s;
 * X and Z then fit (4 + 5 <= 10): Z (4 GB, 2 left) at 5 ends at 0.9 s, X
 * (4 GB, 2 left) at 4 ends at 1.0 s. */
static void
test_mixed_component (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint link = flow_net_add_resource (net, "link", 4e9);
  guint mem = flow_net_add_resource (net, "mem", 10e9);
  guint px[] = { link, mem };
  Done d = { 0 };
  flow_start (net, 0, 4e9, INFINITY, px, 2, NULL, 1);
  flow_start (net, 0, 1e9, 2e9, &mem, 1, NULL, 2);
  flow_start (net, 0, 4e9, 5e9, &mem, 1, NULL, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, mem), 10e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, link), 4e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 3);
  g_assert_cmpuint (d.tag[0], ==, 2);
  g_assert_cmpfloat_with_epsilon (d.t[0], 5e8, 1e-3);
  g_assert_cmpuint (d.tag[1], ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[1], 9e8, 1e-2);
  g_assert_cmpuint (d.tag[2], ==, 1);
  g_assert_cmpfloat_with_epsilon (d.t[2], 1e9, 1e-2);
  VsResourceStats st;
  flow_net_resource_stats (net, mem, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 9e9, 10);
}

/* Two contended resources rated together (two one-resource components in
 * one recompute): on each, two flows capped at 6 share 10 (5 each). a1
 * and b1 (1 GB) end together at 0.2 s; a2 (2 GB, 1 left) then runs at 6:
 * ends at 0.2 + 1/6 s; b2 (3 GB, 2 left) at 0.2 + 1/3 s. The earliest end
 * moves later after each end. */
static void
test_two_components (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint a = flow_net_add_resource (net, "a", 10e9);
  guint b = flow_net_add_resource (net, "b", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 6e9, &a, 1, NULL, 1);
  flow_start (net, 0, 1e9, 6e9, &b, 1, NULL, 2);
  flow_start (net, 0, 2e9, 6e9, &a, 1, NULL, 3);
  flow_start (net, 0, 3e9, 6e9, &b, 1, NULL, 4);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8, 1e-3);
  d.now = 2e8;
  flow_net_finish_due (net, 2e8, on_done, &d);
  g_assert_cmpuint (d.n, ==, 2);
  g_assert_cmpuint (d.tag[0], ==, 1);
  g_assert_cmpuint (d.tag[1], ==, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8 + 1e9 / 6, 1e-2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, b), 6e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 4);
  g_assert_cmpuint (d.tag[2], ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[2], 2e8 + 1e9 / 6, 1e-2);
  g_assert_cmpuint (d.tag[3], ==, 4);
  g_assert_cmpfloat_with_epsilon (d.t[3], 2e8 + 1e9 / 3, 1e-2);
}

/* A flow started at an instant where nothing is due yet: finish_due at an
 * earlier time ends nothing and changes nothing. */
static void
test_nothing_due (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 1);
  flow_net_finish_due (net, 5e7, on_done, &d);
  g_assert_cmpuint (d.n, ==, 0);
  g_assert_cmpuint (flow_net_n_active (net), ==, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 1e8, 1e-3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 1);
  g_assert_cmpfloat_with_epsilon (d.t[0], 1e8, 1e-3);
}

/* Due flows are handed back in start order, not in the order they sit in
 * the network: A (0.5 GB), B and C (1 GB each) on three 10 GB/s
 * resources, capped at the capacity (the straight-line start). A ends at
 * 0.05 s; B and C together at 0.1 s, B first. */
static void
test_due_in_start_order (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r[3];
  for (guint i = 0; i < 3; i++)
    r[i] = flow_net_add_resource (net, "link", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 0.5e9, 10e9, &r[0], 1, NULL, 1);
  flow_start (net, 0, 1e9, 10e9, &r[1], 1, NULL, 2);
  flow_start (net, 0, 1e9, 10e9, &r[2], 1, NULL, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 5e7, 1e-3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 3);
  g_assert_cmpuint (d.tag[0], ==, 1);
  g_assert_cmpuint (d.tag[1], ==, 2);
  g_assert_cmpuint (d.tag[2], ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[0], 5e7, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.t[1], 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.t[2], 1e8, 1e-3);
  g_assert_cmpuint (flow_net_n_active (net), ==, 0);
}

/* More than two flows due at once (the general list): five 1 GB flows
 * capped at 1.8 GB/s and one at 1 GB/s fit in 10 GB/s; the five end
 * together at 1/1.8 s, in start order; the first, at 1 GB/s, at 1 s. */
static void
test_many_due (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 1e9, &r, 1, NULL, 9);
  for (guint i = 1; i <= 5; i++)
    flow_start (net, 0, 1e9, 1.8e9, &r, 1, NULL, i);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 6);
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpuint (d.tag[i], ==, i + 1);
      g_assert_cmpfloat_with_epsilon (d.t[i], 1e9 / 1.8, 1e-3);
    }
  g_assert_cmpuint (d.tag[5], ==, 9);
  g_assert_cmpfloat_with_epsilon (d.t[5], 1e9, 1e-3);
}

/* Bytes are the amounts the flows moved, exactly: three flows of 1/3 GB,
 * 1/7 GB and 0.25 GB one after another sum to their amounts to the last
 * bit. Settling mid-flow counts the part moved so far (1 GB at 10 GB/s,
 * settled at 0.05 s: 0.5 GB, busy 5e7 ns), and the rest at its end. */
static void
test_stats_bytes (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  double a[3] = { 1e9 / 3, 1e9 / 7, 0.25e9 };
  double t = 0;
  for (guint i = 0; i < 3; i++)
    {
      flow_start (net, t, a[i], 10e9, &r, 1, NULL, i);
      run (net, &d);
      t = d.t[i];
    }
  VsResourceStats st;
  flow_net_settle (net, t);
  flow_net_resource_stats (net, r, &st);
  g_assert_true (st.bytes == a[0] + a[1] + a[2]);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, (a[0] + a[1] + a[2]) / 10, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, st.busy_ns, 1e-6);

  g_autoptr (VsFlowNet) net2 = flow_net_new ();
  guint r2 = flow_net_add_resource (net2, "mem", 10e9);
  Done d2 = { 0 };
  flow_start (net2, 0, 1e9, INFINITY, &r2, 1, NULL, 1);
  flow_net_settle (net2, 5e7);
  flow_net_resource_stats (net2, r2, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 0.5e9, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 5e7, 1e-3);
  run (net2, &d2);
  g_assert_cmpfloat_with_epsilon (d2.t[0], 1e8, 1e-3);
  flow_net_settle (net2, 1e8);
  flow_net_resource_stats (net2, r2, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 1e9, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1e8, 1e-3);
}

/* A flow whose rate does not change when another ends keeps its end: A
 * (1 GB, cap 2 GB/s) and B (1 GB, uncapped) share 10 GB/s: A 2, B 8 GB/s.
 * B ends at 0.125 s, A still runs at 2 GB/s and ends at 0.5 s. Then C
 * (0.4 GB, uncapped) alone at 0.5 s ends at 0.54 s. */
static void
test_rate_unchanged (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 2e9, &r, 1, NULL, 1);
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  d.now = flow_net_next_end (net);
  g_assert_cmpfloat_with_epsilon (d.now, 1.25e8, 1e-3);
  flow_net_finish_due (net, d.now, on_done, &d);
  g_assert_cmpuint (d.tag[0], ==, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 2e9, 1);
  d.now = flow_net_next_end (net);
  g_assert_cmpfloat_with_epsilon (d.now, 5e8, 1e-3);
  flow_net_finish_due (net, d.now, on_done, &d);
  g_assert_cmpuint (d.tag[1], ==, 1);
  flow_start (net, d.now, 0.4e9, INFINITY, &r, 1, NULL, 3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 3);
  g_assert_cmpfloat_with_epsilon (d.t[2], 5.4e8, 1e-3);
  VsResourceStats st;
  flow_net_settle (net, d.t[2]);
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 2.4e9, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 5.4e8, 1e-3);
  /* saturated: 10 GB/s until 0.125 s, 10 GB/s again from 0.5 s */
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1.65e8, 1e-3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/flow/one-flow", test_one_flow);
  g_test_add_func ("/flow/two-flows-share", test_two_flows_share);
  g_test_add_func ("/flow/cap", test_cap);
  g_test_add_func ("/flow/paths", test_paths);
  g_test_add_func ("/flow/independent", test_independent);
  g_test_add_func ("/flow/slack-then-binding", test_slack_then_binding);
  g_test_add_func ("/flow/one-resource-cap-binds", test_one_resource_cap_binds);
  g_test_add_func ("/flow/mixed-component", test_mixed_component);
  g_test_add_func ("/flow/two-components", test_two_components);
  g_test_add_func ("/flow/nothing-due", test_nothing_due);
  g_test_add_func ("/flow/due-in-start-order", test_due_in_start_order);
  g_test_add_func ("/flow/many-due", test_many_due);
  g_test_add_func ("/flow/stats-bytes", test_stats_bytes);
  g_test_add_func ("/flow/rate-unchanged", test_rate_unchanged);
  return g_test_run ();
}
