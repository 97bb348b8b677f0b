/* test-flow.c — fluid sharing against numbers computed by hand. */
#include <math.h>

#include "flow.h"

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
  return g_test_run ();
}
