/* flow-priv.h — what the parts of flow.c share: branch-free selections,
 * small growable arrays, the resource, the flow and the network, and the
 * declarations that cross parts (processor sharing is entered from the
 * solvers, pending resources flushed before any rate is read).
 *
 * Private to sim/flow: included by flow.c and its parts only. */
#pragma once

#include "flow/flow.h"

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* MAX (0, X) without a branch (the compiler keeps one for MAX, whose
 * outcome the hot paths cannot predict). */
static inline double
pos (double x)
{
#if defined __SSE2__ && defined __GNUC__
  /* maxsd itself: the intrinsics' _mm_set_sd zeroes the upper half of
   * each operand first (a movq each, for a lane nobody reads). */
  double z = 0.0;
  __asm__ ("maxsd %1, %0" : "+x" (z) : "xm" (x));
  return z;
#elif defined __SSE2__
  return _mm_cvtsd_f64 (_mm_max_sd (_mm_setzero_pd (), _mm_set_sd (x)));
#else
  return MAX (0.0, x);
#endif
}

/* Selections without branches, for conditions whose outcome varies from
 * flow to flow (a mispredicted branch costs more than the arithmetic;
 * the compiler keeps branches for ?: on doubles). */
static inline gpointer
sel_p (gboolean c, gpointer a, gpointer b)
{
#if defined __x86_64__ && defined __GNUC__
  /* A cmov (the masks below took six instructions). */
  __asm__ ("test %2, %2\n\tcmovne %1, %0" : "+r" (b) : "r" (a), "r" (c) : "cc");
  return b;
#else
  guintptr m = -(guintptr) (c != 0);
  return (gpointer) (((guintptr) a & m) | ((guintptr) b & ~m));
#endif
}

/* A < B ? A : B. */
static inline double
min_d (double a, double b)
{
#if defined __SSE2__ && defined __GNUC__
  __asm__ ("minsd %1, %0" : "+x" (a) : "xm" (b));   /* as pos () */
  return a;
#elif defined __SSE2__
  return _mm_cvtsd_f64 (_mm_min_sd (_mm_set_sd (a), _mm_set_sd (b)));
#else
  return a < b ? a : b;
#endif
}

/* Small growable arrays: the hot path must not pay for GArray's
 * generality (measured: 9 % of replay instructions went to it). */
typedef struct { gpointer *v; guint len, cap; } PVec;
typedef struct { guint *v; guint len, cap; } UVec;

static inline void
pvec_push (PVec *a, gpointer p)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      a->cap = a->cap ? 2 * a->cap : 8;
      a->v = g_renew (gpointer, a->v, a->cap);
    }
  a->v[a->len++] = p;
}

/* pvec_push() onto a vector that may start in a buffer of the caller's
 * (STACK: not to be reallocated). */
static inline void
pvec_push_s (PVec *a, gpointer p, gpointer *stack)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      gpointer *v = g_new (gpointer, 2 * a->cap);
      memcpy (v, a->v, a->len * sizeof (gpointer));
      if (a->v != stack)
        g_free (a->v);
      a->v = v;
      a->cap *= 2;
    }
  a->v[a->len++] = p;
}

static inline void
uvec_push (UVec *a, guint x)
{
  if (G_UNLIKELY (a->len == a->cap))
    {
      a->cap = a->cap ? 2 * a->cap : 16;
      a->v = g_renew (guint, a->v, a->cap);
    }
  a->v[a->len++] = x;
}

/* Removes element I by moving the last one into its place. */
static inline void
pvec_remove_fast (PVec *a, guint i)
{
  a->v[i] = a->v[--a->len];
}

typedef struct {
  double cap;
  double load;
  PVec flows;           /* active flows whose path includes it */
  double cap_sum;       /* sum of the caps of its capped flows */
  guint n_inf;          /* its flows without a cap */
  guint n_multi;        /* its flows whose path has other resources too */
  /* derived from cap once */
  double slack_max;     /* cap_sum up to this leaves slack */
  double busy_min;      /* load above this is busy */
  double sat_min;       /* load from this on is saturated */
  double t_last;        /* load accounted up to here */
  VsResourceStats st;   /* bytes counted as the flows move them */
  guint mark;           /* component search stamp */
  gboolean pending;     /* in net->pending */
  char *name;
  /* filling scratch */
  double residual;
  double fit;           /* capacity less its flows' caps */
  guint n_unfrozen;
  /* Processor sharing (flow-ps): while ps, every flow on it is a
   * one-resource flow at the same rate share = cap / n (none capped
   * below it, the resource binds); a flow's progress is the work clock
   * ps_v (amount per flow served since ps began), so a flow ends when
   * ps_v reaches its vfin: the heap of vfin gives the next end. */
  gboolean ps;
  double ps_v, ps_t;    /* work clock at time ps_t */
  double ps_share;
  double ps_end;        /* when the heap's top ends */
  double ps_min_cap;    /* at most the least cap of its flows on the
                         * clock (exact when it matters: ps_min_ok) */
  /* Fixed members (second pass): flows capped below the share (or a
   * star's link flow, at its link's rate) run at their cap as active
   * flows; the clocked ones share what they leave, (cap - ps_fixed) /
   * the heap's length, while no fixed cap exceeds that share. */
  double ps_fixed;      /* the sum of their rates */
  guint ps_n_fixed;
  double ps_fixed_max;  /* the largest of their caps */
  PVec ps_heap;         /* VsFlow*, a min-heap by vfin */
} Resource;

struct _VsFlow {
  double remaining;     /* at t_upd */
  double cap, rate, t_upd;
  double nrate;         /* filling result, compared with rate */
  guint path[VS_FLOW_MAX_PATH];
  guint slot[VS_FLOW_MAX_PATH];  /* index in each resource's flows array */
  guint n_path;
  guint index;          /* in net->active (and net->end) */
  guint mark;
  gboolean frozen;
  guint64 order;        /* start order */
  gpointer owner;
  guint64 tag;
  double vfin;          /* ps: its resource's ps_v when it ends */
};

/* The index of a flow that is on a ps resource's heap, not in active. */
#define PS_INDEX G_MAXUINT

/* F's slot in resource RES's flow list is now S (F is on RES). */
static inline void
slot_set (VsFlow *f, guint res, guint s)
{
  if (G_LIKELY (f->n_path == 1))
    f->slot[0] = s;
  else
    for (guint q = 0; q < f->n_path; q++)
      if (f->path[q] == res)
        f->slot[q] = s;
}

struct _VsFlowNet {
  VsFlowNetHot hot;     /* first: read by flow_net_next_end() in flow.h */
  GArray *res;          /* Resource */
  Resource *rv;         /* res->data, for the hot path */
  guint n_fast;         /* res->len, or 0 with an observer (no fast start) */
  gboolean next_end_dirty;  /* (below; here, in a hole) */
  PVec active;          /* VsFlow* */
  double *end;          /* end time of active.v[i] (same length), scanned
                         * without touching the flows */
  guint stamp;
  gboolean no_ps;       /* (below; here, in a hole) */
  guint64 next_order;
  /* The earliest end of the active flows (act_end) and a flow that has
   * it, kept up to date as flows start, end and change rate; a full scan
   * only when that flow's end moves later (next_end_dirty). ps_min is
   * the earliest end of the resources in processor sharing (their
   * ps_end; +infinity without any), kept as they change (ps_min_update),
   * so that hot.next_end = MIN (act_end, ps_min) whenever !hot.slow:
   * the next end is read inline with resources in processor sharing
   * too (third pass). */
  double act_end;
  double ps_min;
  VsFlow *next_flow;
  VsLoadObserver observer;
  gpointer observer_user;
  /* scratch */
  PVec comp_flows;
  UVec comp_res;
  /* Flows started at one instant are rated together: their resources
   * (each once) wait in pending until something needs rates (deferred
   * recompute). */
  UVec pending;
  double pending_now;
  VsFlow *free_flows;   /* recycled, linked through owner */
  /* Processor sharing: the resources in ps (few), their flows' count,
   * and whether a resource may enter it (no_ps, above:
   * flow_net_set_ps). */
  UVec ps_res;
  guint n_ps_flows;
  guint n_ps_fixed_multi;   /* star link flows that are fixed members */
};

#define RES(net, i) (&(net)->rv[i])

static void flush_pending (VsFlowNet *net);
/* Processor sharing from this many flows on (below, the filling costs
 * no more: callgrind, 200k-event traces, from 2 flows on the 4-stream
 * trace took 1,743 instructions per event, from 3 1,734). */
#define PS_MIN_FLOWS 3
static void ps_enter (VsFlowNet *net, Resource *r, guint i, double now);
#define ps_maybe_enter(net, r, i, now) \
  do { if (G_UNLIKELY ((r)->flows.len >= PS_MIN_FLOWS)) ps_enter (net, r, i, now); } while (0)

/* The next end from its two parts (harmless while hot.slow: whoever
 * clears it sets it). */
static inline void
next_set (VsFlowNet *net)
{
  net->hot.next_end = min_d (net->act_end, net->ps_min);
}

static inline void
flush (VsFlowNet *net)
{
  if (G_UNLIKELY (net->pending.len > 0))
    flush_pending (net);
}
