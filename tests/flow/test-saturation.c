/* test-saturation.c — the saturated time of a resource (VsResourceStats:
 * "time at >= 95 % of capacity") on loads either side of the threshold,
 * computed by hand. Each flow is capped below the resource's capacity, so
 * the load is the cap for as long as the flow runs: amount / cap. */
#include <math.h>

#include "flow/flow.h"

static void
on_done (gpointer user, gpointer owner, guint64 tag)
{
}

static void
run (VsFlowNet *net)
{
  for (;;)
    {
      double t = flow_net_next_end (net);
      if (isinf (t))
        break;
      flow_net_finish_due (net, t, on_done, NULL);
    }
}

/* One flow of AMOUNT bytes capped at FRAC of a 10 GB/s link; returns its
 * stats after it ends (busy = amount / cap). */
static VsResourceStats
one_capped (double frac, double amount)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "link", 10e9);
  flow_start (net, 0, amount, frac * 10e9, &r, 1, NULL, 1);
  run (net);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  return st;
}

/* 0.9 GB at 9 GB/s (90 % of 10 GB/s): busy 0.1 s, never saturated. A
 * threshold below 90 % (0.855 for 0.95 x 0.9) would count 0.1 s. */
static void
test_below (void)
{
  VsResourceStats st = one_capped (0.90, 0.9e9);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 0, 1e-9);
}

/* 0.94 GB at 9.4 GB/s: 94 %, just under the threshold: not saturated. */
static void
test_just_below (void)
{
  VsResourceStats st = one_capped (0.94, 0.94e9);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 0, 1e-9);
}

/* 0.95 GB at exactly 9.5 GB/s: at the threshold counts (">= 95 %"):
 * 0.1 s saturated. 0.96 GB at 9.6 GB/s: 0.1 s too. */
static void
test_at_and_above (void)
{
  VsResourceStats st = one_capped (0.95, 0.95e9);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 1e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1e8, 1e-3);
  st = one_capped (0.96, 0.96e9);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1e8, 1e-3);
}

/* Two capped flows on one 10 GB/s link: A 0.45 GB at 4.5 GB/s (0.1 s),
 * B 0.8 GB at 4 GB/s (0.2 s). Until 0.1 s the load is 8.5 GB/s (85 %),
 * then 4 GB/s (40 %) until 0.2 s: busy 0.2 s, saturated 0. Then a third,
 * C, uncapped, 0.5 GB at 0.2 s: alone at 10 GB/s for 0.05 s: saturated
 * 0.05 s in all. */
static void
test_mixed (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "link", 10e9);
  flow_start (net, 0, 0.45e9, 4.5e9, &r, 1, NULL, 1);
  flow_start (net, 0, 0.8e9, 4e9, &r, 1, NULL, 2);
  run (net);
  flow_start (net, 2e8, 0.5e9, INFINITY, &r, 1, NULL, 3);
  run (net);
  flow_net_settle (net, 2.5e8);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 1.75e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 2.5e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 0.5e8, 1e-3);
}

/* Busy time is time with load, not the time since the first flow: a
 * 1 GB flow over 0-0.1 s at 10 GB/s, nothing until 0.3 s, a 0.5 GB flow
 * at 5 GB/s (capped: 50 %) over 0.3-0.4 s. Settled at 0.5 s: busy 0.2 s,
 * saturated 0.1 s (the first only), bytes 1.5 GB. */
static void
test_idle_gap (void)
{
  g_autoptr (VsFlowNet) net = flow_net_new ();
  guint r = flow_net_add_resource (net, "link", 10e9);
  flow_start (net, 0, 1e9, INFINITY, &r, 1, NULL, 1);
  run (net);
  flow_start (net, 3e8, 0.5e9, 5e9, &r, 1, NULL, 2);
  run (net);
  flow_net_settle (net, 5e8);
  VsResourceStats st;
  flow_net_resource_stats (net, r, &st);
  g_assert_cmpfloat_with_epsilon (st.bytes, 1.5e9, 1);
  g_assert_cmpfloat_with_epsilon (st.busy_ns, 2e8, 1e-3);
  g_assert_cmpfloat_with_epsilon (st.saturated_ns, 1e8, 1e-3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/flow-saturation/90-percent-is-not", test_below);
  g_test_add_func ("/flow-saturation/94-percent-is-not", test_just_below);
  g_test_add_func ("/flow-saturation/95-percent-and-above-is", test_at_and_above);
  g_test_add_func ("/flow-saturation/mixed-loads", test_mixed);
  g_test_add_func ("/flow-saturation/idle-gap", test_idle_gap);
  return g_test_run ();
}
