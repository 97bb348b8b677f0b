/* test-flow.c — fluid sharing against numbers computed by hand. */
#include <math.h>
#include <string.h>

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


/* Processor sharing (virtual time). Three 1 GB flows on 10 GB/s from 0:
 * from three flows on, the resource is served in processor sharing (3.33
 * GB/s each). A fourth, 0.25 GB, at 0.15 s: the three have 0.5 GB left;
 * four at 2.5 GB/s: it ends at 0.25 s, when the three have 0.25 GB left,
 * which they move at 3.33 GB/s: all three end at 0.325 s, in start
 * order. Bytes 3.25 GB, busy and saturated 0.325 s. */
static void
test_ps_hand (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "sm", 10e9);
  Done d = { 0 };
  for (guint i = 1; i <= 3; i++)
    flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, i);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 3e8, 1e-3);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 3);
  flow_start (net, 1.5e8, 0.25e9, INFINITY, &r, 1, NULL, 4);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 4);
  g_assert_cmpuint (flow_net_n_active (net), ==, 4);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2.5e8, 1e-3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 4);
  g_assert_cmpuint (d.tag[0], ==, 4);
  g_assert_cmpfloat_with_epsilon (d.t[0], 2.5e8, 1e-3);
  for (guint i = 1; i <= 3; i++)
    {
      g_assert_cmpuint (d.tag[i], ==, i);
      g_assert_cmpfloat_with_epsilon (d.t[i], 3.25e8, 1e-3);
    }
  g_assert_cmpuint (flow_net_n_active (net), ==, 0);
  flow_net_settle (net, 4e8);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 3.25e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 3.25e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 3.25e8, 1e-3);
}

/* A flow capped below the share ends processor sharing: three 1 GB
 * flows (3.33 GB/s each) and, at 0.15 s, a 0.1 GB flow capped at 1 GB/s
 * (the share of four, 2.5 GB/s, is above its cap): it runs at 1 GB/s and
 * ends at 0.25 s; the three at 3 GB/s have 0.5 - 0.3 = 0.2 GB left then,
 * at 3.33 GB/s: they end at 0.31 s. Then a flow of two resources on a
 * resource in processor sharing: the same. */
static void
test_ps_leave (void)
{
  for (guint multi = 0; multi < 2; multi++)
    {
      g_autoptr (VsFlowNet) net = flow_net_new ();
      guint r[2];
      r[0] = flow_net_add_resource (net, "sm", 10e9);
      r[1] = flow_net_add_resource (net, "link", 1e9);
      Done d = { 0 };
      for (guint i = 1; i <= 3; i++)
        flow_start (net, 0, 1e9, INFINITY, &r[0], 1, NULL, i);
      g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 3e8, 1e-3);
      g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 3);
      if (multi)
        flow_start (net, 1.5e8, 0.1e9, INFINITY, r, 2, NULL, 4);   /* 1 GB/s: the link */
      else
        flow_start (net, 1.5e8, 0.1e9, 1e9, &r[0], 1, NULL, 4);
      g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 0);
      run (net, &d);
      g_assert_cmpuint (d.n, ==, 4);
      g_assert_cmpuint (d.tag[0], ==, 4);
      g_assert_cmpfloat_with_epsilon (d.t[0], 2.5e8, 1e-3);
      for (guint i = 1; i <= 3; i++)
        g_assert_cmpfloat_with_epsilon (d.t[i], 3.1e8, 1e-3);
    }
}

/* Flows ending down to one leave processor sharing on slack: four 1 GB
 * flows capped at 4 GB/s (the share, 2.5 GB/s, is below every cap) and
 * one 0.5 GB: it ends at 0.25 s (2 GB/s of five); the four then have
 * 0.5 GB left at 2.5 GB/s: 0.45 s. With 2 GB flows instead for tags 3,
 * 4: tags 1, 2 end at 0.45 s with 1 GB left for 3 and 4, which then fit
 * (4 GB/s each, slack): 0.45 + 0.25 = 0.7 s. */
static void
test_ps_slack (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  flow_start (net, 0, 1e9, 4e9, &r, 1, NULL, 1);
  flow_start (net, 0, 1e9, 4e9, &r, 1, NULL, 2);
  flow_start (net, 0, 2e9, 4e9, &r, 1, NULL, 3);
  flow_start (net, 0, 2e9, 4e9, &r, 1, NULL, 4);
  flow_start (net, 0, 0.5e9, 4e9, &r, 1, NULL, 5);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2.5e8, 1e-3);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 5);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 5);
  double want[5] = { 2.5e8, 4.5e8, 4.5e8, 7e8, 7e8 };
  guint64 tags[5] = { 5, 1, 2, 3, 4 };
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpuint (d.tag[i], ==, tags[i]);
      g_assert_cmpfloat_with_epsilon (d.t[i], want[i], 1e-3);
    }
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 0);
}

/* Processor sharing against the filling on random load: 3,000 flows on
 * a 10 GB/s resource at 92 % load (1 to 30 at once), a fifth capped below
 * the share some of the time, one in twenty also on a second resource;
 * every end (tag and time) and the statistics agree within 1e-9
 * relative, and processor sharing served some of the flows. */
typedef struct {
  double t[4096];
  guint64 tag[4096];
  guint n;
  double now;
  guint max_ps;         /* the most flows in processor sharing at once (start2_run) */
} Ends;

static void
on_end (gpointer user, gpointer owner, guint64 tag)
{
  Ends *e = user;
  g_assert_cmpuint (e->n, <, G_N_ELEMENTS (e->t));
  e->t[e->n] = e->now;
  e->tag[e->n++] = tag;
}

static guint
drive (gboolean ps, Ends *e, VsResourceStats *st)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  flow_net_set_ps (net, ps);
  guint r[2];
  r[0] = flow_net_add_resource (net, "sm", 10e9);
  r[1] = flow_net_add_resource (net, "link", 25e9);
  GRand *rng = g_rand_new_with_seed (25);
  double t_start = 0;
  guint started = 0, max_ps = 0;
  const guint n = 3000;
  for (;;)
    {
      double t_end = flow_net_next_end (net);
      if (started < n && t_start <= t_end)
        {
          double amount = g_rand_double_range (rng, 0.1e9, 1e9);
          double cap = g_rand_double (rng) < 0.2 ? g_rand_double_range (rng, 0.2e9, 3e9) : INFINITY;
          guint np = g_rand_double (rng) < 0.05 ? 2 : 1;
          flow_start (net, t_start, amount, cap, r, np, NULL, started++);
          t_start += -log (1 - g_rand_double (rng)) * 0.06e9;
          max_ps = MAX (max_ps, flow_net_n_ps_flows (net));
          continue;
        }
      if (isinf (t_end))
        break;
      e->now = t_end;
      flow_net_finish_due (net, t_end, on_end, e);
    }
  flow_net_settle (net, e->now);
  flow_net_resource_stats (net, r[0], st);
  g_rand_free (rng);
  return max_ps;
}

static void
test_ps_random (void)
{
  static Ends a, b;
  VsResourceStats sa, sb;
  guint pa = drive (FALSE, &a, &sa), pb = drive (TRUE, &b, &sb);
  g_assert_cmpuint (pa, ==, 0);
  g_assert_cmpuint (pb, >=, 10);
  g_assert_cmpuint (a.n, ==, 3000);
  g_assert_cmpuint (b.n, ==, a.n);
  double worst = 0;
  for (guint i = 0; i < a.n; i++)
    {
      g_assert_cmpuint (a.tag[i], ==, b.tag[i]);
      worst = MAX (worst, fabs (a.t[i] - b.t[i]) / a.t[i]);
    }
  g_test_message ("largest relative difference of an end: %.3g", worst);
  g_assert_cmpfloat (worst, <=, 1e-9);
  g_assert_cmpfloat (fabs (sa.bytes - sb.bytes), <=, 1e-9 * sa.bytes);
  g_assert_cmpfloat (fabs (sa.busy_ns - sb.busy_ns), <=, 1e-9 * sa.busy_ns);
  g_assert_cmpfloat (fabs (sa.saturated_ns - sb.saturated_ns), <=, 1e-9 * sa.saturated_ns);
}

/* A fixed member: flows 1-3 (1 GB each, uncapped) and 4 (0.2 GB capped
 * at 1 GB/s) start together on 10 GB/s: 4 runs at its cap, the three
 * share the other 9 (3 GB/s each) in processor sharing beside it. 4
 * ends at 0.2 s; the three, 0.4 GB left each, then share 10 GB/s:
 * 0.2 + 0.12 = 0.32 s. */
static void
test_ps_fixed (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "mem", 10e9);
  Done d = { 0 };
  for (guint i = 1; i <= 3; i++)
    flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, i);
  flow_start (net, 0, 0.2e9, 1e9, &r, 1, NULL, 4);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8, 1e-3);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, r), 10e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 4);
  const guint64 tags[] = { 4, 1, 2, 3 };
  const double want[] = { 2e8, 3.2e8, 3.2e8, 3.2e8 };
  for (guint i = 0; i < 4; i++)
    {
      g_assert_cmpuint (d.tag[i], ==, tags[i]);
      g_assert_cmpfloat_with_epsilon (d.t[i], want[i], 1e-3);
    }
  flow_net_settle (net, d.now);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 3.2e9, 1);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 3.2e8, 1e-3);
}

/* A star: copies C1 (2 GB over link l1, 2 GB/s, and mem) and C2 (3 GB
 * over l2, 3 GB/s, and mem) run at their links' rate, K (10 GB on mem)
 * at the rest, 5 GB/s. At 0.5 s C3 (0.5 GB) joins l1: C1 and C3 share it
 * (1 GB/s each; not a star while l1 carries two), K stays at 5. At 1 s
 * C2 (3 GB at 3) and C3 (0.5 GB at 1) end; C1 (0.5 GB left) runs at 2
 * again, K (5 GB left) at 8: C1 ends at 1.25 s, K (3 GB left) alone at
 * 10 GB/s at 1.55 s. */
static void
test_star (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint mem = flow_net_add_resource (net, "mem", 10e9);
  guint l1 = flow_net_add_resource (net, "l1", 2e9);
  guint l2 = flow_net_add_resource (net, "l2", 3e9);
  guint p1[] = { l1, mem }, p2[] = { l2, mem };
  Done d = { 0 };
  flow_start (net, 0, 2e9, INFINITY, p1, 2, NULL, 1);
  flow_start (net, 0, 3e9, INFINITY, p2, 2, NULL, 2);
  flow_start (net, 0, 10e9, INFINITY, &mem, 1, NULL, 4);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, mem), 10e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, l1), 2e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, l2), 3e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 1e9, 1e-3);
  flow_start (net, 5e8, 0.5e9, INFINITY, p1, 2, NULL, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, l1), 2e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, mem), 10e9, 1);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 4);
  const guint64 tags[] = { 2, 3, 1, 4 };
  const double want[] = { 1e9, 1e9, 1.25e9, 1.55e9 };
  for (guint i = 0; i < 4; i++)
    {
      g_assert_cmpuint (d.tag[i], ==, tags[i]);
      g_assert_cmpfloat_with_epsilon (d.t[i], want[i], 1e-2);
    }
  flow_net_settle (net, d.now);
  VsResourceStats st;
  flow_net_resource_stats (net, l1, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 2.5e9, 10);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1.25e9, 1e-2);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1.25e9, 1e-2);
  flow_net_resource_stats (net, mem, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 15.5e9, 10);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1.55e9, 1e-2);
}

/* Stars against the filling on random load: 3,000 flows on a 10 GB/s
 * resource at 95 % load, a third of them also on one of four 2.5 GB/s
 * links (a star while each link carries one, the whole component
 * otherwise), a fifth capped; ends and every resource's statistics
 * agree within 1e-9 relative. */
static void
drive_star (gboolean on, Ends *e, VsResourceStats *st)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  flow_net_set_ps (net, on);
  guint hub = flow_net_add_resource (net, "mem", 10e9), links[4];
  for (guint k = 0; k < 4; k++)
    links[k] = flow_net_add_resource (net, "link", 2.5e9);
  GRand *rng = g_rand_new_with_seed (26);
  double t_start = 0;
  guint started = 0;
  for (;;)
    {
      double t_end = flow_net_next_end (net);
      if (started < 3000 && t_start <= t_end)
        {
          double amount = g_rand_double_range (rng, 0.1e9, 1e9);
          double cap = g_rand_double (rng) < 0.2 ? g_rand_double_range (rng, 0.2e9, 3e9) : INFINITY;
          guint path[2] = { links[g_rand_int_range (rng, 0, 4)], hub };
          guint np = g_rand_double (rng) < 1.0 / 3 ? 2 : 1;
          flow_start (net, t_start, amount, cap, np == 2 ? path : &hub, np, NULL, started++);
          t_start += -log (1 - g_rand_double (rng)) * 0.058e9;
          continue;
        }
      if (isinf (t_end))
        break;
      e->now = t_end;
      flow_net_finish_due (net, t_end, on_end, e);
    }
  flow_net_settle (net, e->now);
  for (guint k = 0; k < 5; k++)
    flow_net_resource_stats (net, k, &st[k]);
  g_rand_free (rng);
}

static void
test_star_random (void)
{
  static Ends a, b;
  VsResourceStats sa[5], sb[5];
  drive_star (FALSE, &a, sa);
  drive_star (TRUE, &b, sb);
  g_assert_cmpuint (a.n, ==, 3000);
  g_assert_cmpuint (b.n, ==, a.n);
  double worst = 0;
  for (guint i = 0; i < a.n; i++)
    {
      g_assert_cmpuint (a.tag[i], ==, b.tag[i]);
      worst = MAX (worst, fabs (a.t[i] - b.t[i]) / a.t[i]);
    }
  g_test_message ("largest relative difference of an end: %.3g", worst);
  g_assert_cmpfloat (worst, <=, 1e-9);
  for (guint k = 0; k < 5; k++)
    {
      g_assert_cmpfloat (sa[k].bytes, >, 0);
      g_assert_cmpfloat (fabs (sa[k].bytes - sb[k].bytes), <=, 1e-9 * sa[k].bytes);
      g_assert_cmpfloat (fabs (sa[k].busy_ns - sb[k].busy_ns), <=, 1e-9 * sa[k].busy_ns);
      g_assert_cmpfloat (fabs (sa[k].saturated_ns - sb[k].saturated_ns), <=, 1e-9 * sa[k].saturated_ns + 1e-3);
    }
}

/* Ends while a resource is in processor sharing, by hand (third pass:
 * the next end read inline, only active flows due beside it, one ps end
 * in one pass, a kernel's two flows ending at once). "sm", 10 GB/s:
 * 0.5, 1, 2 and 2 GB (2.5 GB/s each, in processor sharing); "dev",
 * 100 GB/s: 10 GB alone, ending at 0.1 s (sm's ends later); 25 GB from
 * 0.1 s, ending at 0.35 s. At 0.2 s the 0.5 GB flow ends (0.5, 1.5, 1.5
 * GB left, at 3.33 GB/s); at 0.35 s sm's 1 GB flow and dev's 25 GB one
 * end at once, called back in start order; the last two have 1 GB left
 * at 5 GB/s: they end together at 0.55 s (a tie on the heap). */
static void
test_ps_ends (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint sm = flow_net_add_resource (net, "sm", 10e9);
  guint dev = flow_net_add_resource (net, "dev", 100e9);
  Done d = { 0 };
  const double amount[4] = { 0.5e9, 1e9, 2e9, 2e9 };
  for (guint i = 0; i < 4; i++)
    flow_start (net, 0, amount[i], INFINITY, &sm, 1, NULL, i + 1);
  flow_start (net, 0, 10e9, INFINITY, &dev, 1, NULL, 5);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 1e8, 1e-3);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 4);
  d.now = 1e8;
  flow_net_finish_due (net, d.now, on_done, &d);
  g_assert_cmpuint (d.n, ==, 1);
  g_assert_cmpuint (d.tag[0], ==, 5);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 4);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8, 1e-3);
  flow_start (net, 1e8, 25e9, INFINITY, &dev, 1, NULL, 6);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 2e8, 1e-3);
  d.now = flow_net_next_end (net);
  flow_net_finish_due (net, d.now, on_done, &d);
  g_assert_cmpuint (d.n, ==, 2);
  g_assert_cmpuint (d.tag[1], ==, 1);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 3);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 3.5e8, 1e-3);
  d.now = flow_net_next_end (net);
  flow_net_finish_due (net, d.now, on_done, &d);
  g_assert_cmpuint (d.n, ==, 4);
  g_assert_cmpuint (d.tag[2], ==, 2);
  g_assert_cmpuint (d.tag[3], ==, 6);
  g_assert_cmpfloat_with_epsilon (d.t[3], 3.5e8, 1e-3);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 2);
  g_assert_cmpfloat_with_epsilon (flow_net_resource_load (net, sm), 10e9, 1);
  g_assert_cmpfloat_with_epsilon (flow_net_next_end (net), 5.5e8, 1e-3);
  run (net, &d);
  g_assert_cmpuint (d.n, ==, 6);
  g_assert_cmpuint (d.tag[4], ==, 3);
  g_assert_cmpuint (d.tag[5], ==, 4);
  g_assert_cmpfloat_with_epsilon (d.t[4], 5.5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (d.t[5], 5.5e8, 1e-3);
  g_assert_cmpuint (flow_net_n_active (net), ==, 0);
  g_assert_cmpuint (flow_net_n_ps_flows (net), ==, 0);
  flow_net_settle (net, 6e8);
  VsResourceStats st;
  flow_net_resource_stats (net, sm, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 5.5e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 5.5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 5.5e8, 1e-3);
  flow_net_resource_stats (net, dev, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 35e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 3.5e8, 1e-3);
}

/* flow_start2 takes the steps of flow_start (RES0) then flow_start
 * (RES1): two nets, one started each way, kernel-like pairs (an `sm` flow
 * and a memory flow ending at the same alone time) from up to five
 * streams, so that `sm` and device memory pass through slack, binding and
 * processor sharing: every end (time, tag, order) and every resource's
 * statistics the same to the bit. */
static void
start2_run (gboolean pair, Ends *l, VsResourceStats st[3])
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint sm = flow_net_add_resource (net, "sm", 1.0);
  guint dev = flow_net_add_resource (net, "device_mem", 2e12);
  guint link = flow_net_add_resource (net, "link", 25e9);
  GRand *rand = g_rand_new_with_seed (25);
  double now = 0;
  guint64 tag = 1;
  for (guint step = 0; step < 1500; step++)
    {
      double next = flow_net_next_end (net);
      double gap = g_rand_double_range (rand, 0, 2e4);
      if (next <= now + gap)
        {
          now = next;
          l->now = now;
          flow_net_finish_due (net, now, on_end, l);
          continue;
        }
      now += gap;
      double d1 = g_rand_double_range (rand, 1e3, 5e4);
      double share = g_rand_double_range (rand, 0.05, 1.0);
      double c = d1 * g_rand_double_range (rand, 0.2, 1.0);
      double x = g_rand_double_range (rand, 1e3, 1e8);
      if (g_rand_int_range (rand, 0, 10) == 0)
        {
          flow_start (net, now, x, INFINITY, &link, 1, NULL, tag++);
          continue;
        }
      if (pair)
        flow_start2 (net, now, c * share * 1e-9, c * share / d1, sm, x, x / d1 * 1e9, dev, NULL, tag);
      else
        {
          flow_start (net, now, c * share * 1e-9, c * share / d1, &sm, 1, NULL, tag);
          flow_start (net, now, x, x / d1 * 1e9, &dev, 1, NULL, tag);
        }
      tag++;
      l->max_ps = MAX (l->max_ps, flow_net_n_ps_flows (net));
    }
  for (double t; !isinf (t = flow_net_next_end (net));)
    {
      l->now = t;
      flow_net_finish_due (net, t, on_end, l);
    }
  flow_net_settle (net, now);
  flow_net_resource_stats (net, sm, &st[0]);
  flow_net_resource_stats (net, dev, &st[1]);
  flow_net_resource_stats (net, link, &st[2]);
  g_rand_free (rand);
}

static void
test_start2 (void)
{
  g_autofree Ends *a = g_new0 (Ends, 1);
  g_autofree Ends *b = g_new0 (Ends, 1);
  VsResourceStats sa[3], sb[3];
  start2_run (FALSE, a, sa);
  start2_run (TRUE, b, sb);
  g_assert_cmpuint (a->n, >, 1000);
  g_assert_cmpuint (a->max_ps, >=, 3);
  g_assert_cmpuint (a->n, ==, b->n);
  for (guint i = 0; i < a->n; i++)
    {
      g_assert_true (a->t[i] == b->t[i]);
      g_assert_cmpuint (a->tag[i], ==, b->tag[i]);
    }
  g_assert_true (memcmp (sa, sb, sizeof sa) == 0);
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
  g_test_add_func ("/flow/ps-hand", test_ps_hand);
  g_test_add_func ("/flow/ps-leave", test_ps_leave);
  g_test_add_func ("/flow/ps-slack", test_ps_slack);
  g_test_add_func ("/flow/ps-random", test_ps_random);
  g_test_add_func ("/flow/ps-fixed", test_ps_fixed);
  g_test_add_func ("/flow/star", test_star);
  g_test_add_func ("/flow/star-random", test_star_random);
  g_test_add_func ("/flow/ps-ends", test_ps_ends);
  g_test_add_func ("/flow/start2", test_start2);
  return g_test_run ();
}
