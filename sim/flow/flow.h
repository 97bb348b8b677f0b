/* flow.h — fluid bandwidth sharing (SPEC 5.1).
 *
 * Resources have a capacity (bytes/s; the `sm` resource is 1.0 GPU-second
 * per second). A flow moves an amount over a path of resources, never
 * faster than its own cap. Concurrent flows share every resource by
 * max-min fairness (progressive filling, caps included); rates are
 * recomputed whenever a flow starts or ends, only for the flows connected
 * to it through shared resources, except on a resource whose flows all
 * run at one share (processor sharing in virtual time: O(log n) a start
 * or an end, flow.c). Time is simulated ns (double: fluid flows
 * end at fractional times); amounts are bytes (or GPU-seconds). */
#pragma once

#include <glib.h>

#define VS_FLOW_MAX_PATH 4

typedef struct _VsFlowNet VsFlowNet;
typedef struct _VsFlow VsFlow;

typedef struct {
  double bytes;         /* amount moved */
  double busy_ns;       /* time with any load */
  double saturated_ns;  /* time at >= 95 % of capacity */
} VsResourceStats;

/* Called whenever a resource's load changes: over [t0, t1) it carried LOAD
 * (amount/s). Used for time series and timelines. */
typedef void (*VsLoadObserver) (gpointer user, guint res, double t0, double t1, double load);
/* Called for each flow that ends, after rates have been recomputed. */
typedef void (*VsFlowDone) (gpointer user, gpointer owner, guint64 tag);

VsFlowNet *flow_net_new (void);
void flow_net_free (VsFlowNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsFlowNet, flow_net_free)

guint flow_net_add_resource (VsFlowNet *net, const char *name, double capacity);
guint flow_net_n_resources (const VsFlowNet *net);
const char *flow_net_resource_name (const VsFlowNet *net, guint res);
double flow_net_resource_capacity (const VsFlowNet *net, guint res);
/* The load (amount/s) a resource carries now. */
double flow_net_resource_load (VsFlowNet *net, guint res);
void flow_net_set_observer (VsFlowNet *net, VsLoadObserver fn, gpointer user);

/* Starts a flow at NOW moving AMOUNT (> 0) over PATH (1..4 resources;
 * duplicates allowed and counted once) at most at CAP amount/s (INFINITY
 * for no cap). OWNER and TAG come back to DONE when it ends. */
void flow_start (VsFlowNet *net, double now, double amount, double cap,
                 const guint *path, guint n_path, gpointer owner, guint64 tag);
/* flow_start (RES0) then flow_start (RES1), one-resource flows of one
 * OWNER and TAG, in one call (a kernel's `sm` and memory flows). */
void flow_start2 (VsFlowNet *net, double now, double amount0, double cap0, guint res0,
                  double amount1, double cap1, guint res1, gpointer owner, guint64 tag);
/* The time the earliest active flow ends, or +infinity. Inline: the
 * event loop asks about twice per event, and the answer is usually kept
 * (a VsFlowNet starts with this; nothing else may read it). */
typedef struct {
  double next_end;      /* valid unless slow */
  gboolean slow;        /* rates to compute or the earliest end to find */
} VsFlowNetHot;
double flow_net_next_end_slow (VsFlowNet *net);
static inline double
flow_net_next_end (VsFlowNet *net)
{
  const VsFlowNetHot *h = (const VsFlowNetHot *) net;
  if (G_LIKELY (!h->slow))
    return h->next_end;
  return flow_net_next_end_slow (net);
}
/* Ends every flow due at NOW (<= NOW within rounding), recomputes rates,
 * then calls DONE for each, in the order they were started. */
void flow_net_finish_due (VsFlowNet *net, double now, VsFlowDone done, gpointer user);
guint flow_net_n_active (const VsFlowNet *net);
/* Whether resources may be served in processor sharing (virtual time,
 * O(log n) a start or an end) where max-min gives all their flows one
 * share, and stars (a resource with links that carry one flow each)
 * rated as one resource (default on; off, every change is rated by the
 * filling of whole components: the tests compare the two). */
void flow_net_set_ps (VsFlowNet *net, gboolean on);
/* How many of the active flows are served in processor sharing now. */
guint flow_net_n_ps_flows (const VsFlowNet *net);
/* The rate a flow of this path and cap would get alone. */
double flow_net_alone_rate (const VsFlowNet *net, const guint *path, guint n_path, double cap);

/* Closes the statistics at NOW and reads them. */
void flow_net_settle (VsFlowNet *net, double now);
void flow_net_resource_stats (const VsFlowNet *net, guint res, VsResourceStats *out);
