/* replay.c — the discrete-event replay engine (SPEC section 5).
 *
 * Model assumptions, in order of the spec (docs/model.md has the why and
 * the sources):
 *  - Host threads (5.2): each tid is an actor; CPU gaps between calls are
 *    kept from the capture, waiting is re-simulated. Calls are issued in
 *    the trace's order across threads (one event read ahead: memory stays
 *    bounded by live state), a thread's first call at max(its t, now).
 *  - Streams (5.3): one op at a time per stream, in issue order. An op
 *    starts at the latest of issue + launch latency, the previous op's end,
 *    its dependencies (stream_wait events, the legacy default stream),
 *    a free copy engine (h2d: one pool; d2h and p2p: the other; d2d none),
 *    and its memory being resident: first spilled allocations are swapped
 *    back (swap stall), then managed pages fault in (fault stall).
 *  - Kernels (5.4), copies and memsets (5.5) become fluid flows over paths
 *    of resources (flow.c); contention is (actual - alone) run time.
 *  - Capacity (5.6): device allocations are charged their size rounded up
 *    to alloc_granularity; managed memory is charged per resident evict
 *    unit; pinned memory is charged to the host. Before a device
 *    allocation fails, resident managed memory is evicted (as the driver
 *    does for cudaMalloc). The oversubscription policy is a table of
 *    functions (policies[]).
 *  - Managed memory (5.7): residency counted in evict_unit groups per
 *    allocation; LRU is kept per allocation (a kernel touches all of an
 *    allocation, so group LRU and allocation LRU agree, and which of its
 *    groups are resident need not be tracked, only how many; dirty ones
 *    leave in proportion). A fault-in is: write back dirty evicted groups,
 *    then ceil(pages / fault_batch) x fault_latency, then the migration
 *    flow — one after the other.
 */
#include "engine/replay.h"

#include <errno.h>
#include <stddef.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/evq.h"
#include "base/fileio.h"
#include "flow/flow.h"
#include "base/slotmap.h"
#include "base/units.h"

typedef struct Sim Sim;
typedef struct Op Op;
typedef struct Job Job;
typedef struct Thread Thread;
typedef struct Alloc Alloc;

/* ------------------------------------------------------------------ */
/* Completion: something others wait for (an op, a job).               */

typedef void (*WaitFn) (Sim *s, gpointer obj, guint64 arg);
typedef struct {
  WaitFn fn;
  gpointer obj;
  guint64 arg;
} Waiter;

typedef struct {
  gboolean done;
  Waiter w0;            /* most completions have at most one waiter */
  GArray *waiters;      /* the others (Waiter), created on demand: only
                         * when w0 is taken, cleared with it */
  int refs;
} Completion;

/* Every job and allocation is on a live list (a circular list with a
 * sentinel in Sim), so that a replay stopped early (OOM) frees everything
 * whatever references are still held. Live is the first member of jobs;
 * an allocation's hot fields come first (its `live` is found with
 * offsetof). Ops, one per GPU event, are kept in Sim.ops_made instead:
 * every op ever made, live or recycled (cheaper than linking each one in
 * and out; there are only as many as were live at once). */
typedef struct Live {
  struct Live *prev, *next;
} Live;

static void
live_link (Live *head, Live *n)
{
  n->next = head->next;
  n->prev = head;
  head->next->prev = n;
  head->next = n;
}

static void
live_unlink (Live *n)
{
  n->prev->next = n->next;
  n->next->prev = n->prev;
}

enum { EQ_OP_RETRY, EQ_JOB_DELAY };

/* Where an allocation's bytes are: device, one of the tiers, or the host. */
#define LOC_DEVICE 0
#define LOC_TIER(k) ((k) + 1)

struct Alloc {
  /* Hot: what every op that uses it reads or writes (one cache line). */
  guint64 id;            /* key in Sim.allocs */
  guint64 bytes;
  guint64 acc_gen;       /* acc_add's deduplication stamp */
  guint acc_idx;
  guint running;         /* running ops using it */
  guint8 kind;           /* effective VsMemKind */
  gboolean written, dirty;
  gboolean freed;
  int loc;               /* LOC_DEVICE, LOC_TIER(k), or s->loc_host */
  int below;             /* loc of a clean copy kept below, or -1 */
  int refs;
  gboolean fixed;        /* placed by `direct`: never moves */
  /* Colder. */
  Live live;
  guint64 charge;
  int tag;
  Alloc *lru_prev, *lru_next;
  gboolean in_lru;
  Job *moving;           /* an eviction in flight */
  Alloc **pool;          /* the free list it returns to */
  /* managed: residency in evict units, kept as counts (the first
   * resident_groups groups are on the device; see man_bytes) */
  guint32 n_groups, resident_groups, dirty_groups;
};

struct Job {
  Live live;
  Completion c;          /* a Job is waited on like an op */
  int deps;              /* jobs to wait for before starting */
  double delay;          /* ns of pure latency before the flows */
  guint n_flows, pending;
  struct { double amount, cap; guint path[VS_FLOW_MAX_PATH]; guint n_path; } flows[2];
  Job **pool, *next_free;
};

typedef struct Stream Stream;
struct Stream {
  guint64 id;
  Op *head, *tail;
  Op *last;              /* last issued op (ref) */
  guint64 cap_end;       /* estimated end of its last op at capture */
  Stream *busy_prev, *busy_next;  /* on Sim.busy while ops are queued */
};

#define OP_INLINE_ACC 6
/* Managed allocations of more evict units are refused (OOM): the counts
 * are 32-bit. */
#define MAX_MANAGED_GROUPS (1u << 31)
#define ACC_R 1
#define ACC_W 2

struct Op {
  Completion c;
  guint8 type;           /* VsOp */
  guint8 dir, to;
  guint8 async;
  guint8 retry_pending, started;
  guint8 has_managed;    /* some of acc is managed memory (fault_in has work) */
  guint8 has_pinned;     /* some of acc is pinned host memory */
  gint8 ce;              /* copy-engine pool, -1 none */
  guint8 phase;          /* 0 queued, 1 swap-in, 2 fault-in, 3 running */
  int deps;
  int waiting;
  guint32 n_acc, acc_cap;
  guint64 index;
  Stream *st;
  Op *next;
  guint kinds;           /* 1 << kind of each allocation in acc */
  double issue_t, ready_t, phase_t, run_t, alone_ns;
  double swap_ns, fault_ns, ce_ns;
  guint64 bytes, dur, compute_ns;
  const char *name;
  Alloc **acc;           /* acc_inline, or allocated when longer */
  guint8 *mode;
  Alloc *src, *dst;      /* copy (host side may be NULL = pageable) */
  Alloc *target;         /* prefetch, stream-ordered free */
  Op *wait_for;          /* stream_wait */
  Op **pool;             /* the free list it returns to */
  /* Last: not cleared when an op is recycled (acc_add fills them). */
  Alloc *acc_inline[OP_INLINE_ACC];
  guint8 mode_inline[OP_INLINE_ACC];
};

struct Thread {
  guint32 tid;
  gboolean has_cur;      /* the read-ahead event (Sim.ev) is this thread's */
  gboolean idle;         /* its last call has returned */
  gboolean ended;
  guint64 issued_t, issued_h;  /* capture t and host_ns of the call in progress,
                                * or of the last call once it returned (idle) */
  guint8 issued_op;
  gboolean has_prev;
  double f_prev, s_cur;
  int waits;
  const char *mark_name;
  double mark_t;
  guint64 mark_t_cap;
};

typedef struct {
  char *name;
  guint64 cur, peak;
} TagStat;

typedef struct {
  const char *name;
  guint64 count;
  double captured_ns, predicted_ns, stall_ns;
} KernelStat;

typedef struct {
  const char *name;
  guint64 count;
  double predicted_ns, captured_ns;
} MarkStat;

typedef struct {
  gboolean (*nofit) (Sim *s, Alloc *a, GPtrArray *jobs);
} Policy;

typedef struct {
  Alloc *head, *tail;    /* least recently touched first */
} Lru;

/* The --series output: time-weighted means per bucket. Buckets widen (pairs
 * merge) when more than SERIES_MAX would be needed, unless dt is fixed. */
#define SERIES_MAX 4096
typedef struct {
  double dt;
  gboolean fixed;
  guint n_cols;          /* resident locs + resources */
  GArray *sums;          /* double [n_buckets * n_cols]: integral over the bucket */
  guint n_buckets;
} Series;

struct Sim {
  const VsConfig *cfg, *cap_cfg;
  const VsReplayOptions *opts;
  VsTraceReader *reader;
  /* The one event read ahead: it stays valid (the reader's buffers with
   * it) until the next trace_next, which comes only after it is issued. */
  VsEvent ev;
  GError *error;
  VsEvq *q;
  VsFlowNet *net;
  double now, t0;
  gboolean stopped, oom, have_t0, eof;
  gboolean halt;         /* stopped, or error set: the main loop ends */

  /* resources */
  guint r_sm, r_dev, r_h2d, r_d2h, r_host, r_tier0;
  double b_dev, b0_dev;  /* target and capture effective device bandwidth */
  double ns_per_byte, ns_per_byte0;  /* their inverses, in ns per byte */
  double tflops_scale;   /* capture tflops / target tflops */
  double pageable_cap;
  int loc_host;          /* index of the host location */
  guint n_locs;

  /* capacity */
  guint64 *loc_cap, *loc_used, *loc_peak;
  guint64 dev_nonmanaged;
  guint64 man_running_bytes;  /* resident bytes of managed allocations running ops use */
  guint64 overflow_peak;

  VsSlotMap allocs;      /* id -> Alloc* of the live allocations */
  Lru lru_dev, lru_man;   /* device allocations; managed ones with resident groups */
  gboolean spill;        /* the spill policy: device memory can leave the device (swap-in, lru_dev) */
  gboolean dev_only;     /* device and managed memory are always reached on the device */
  GHashTable *threads;   /* tid -> Thread* */
  GPtrArray *thread_list;
  Thread *last_thread;   /* the last thread_get: events come in runs */
  Thread *issue_thread;  /* the thread whose call is issued next, at issue_t */
  double issue_t;        /* INFINITY while issue_thread is NULL */
  VsU64Map streams;      /* stream id + 1 -> Stream* */
  Stream *last_stream;   /* the last stream_find (streams live to the end) */
  GPtrArray *stream_list;
  Stream *busy;          /* streams with queued ops: a device sync waits on these */
  VsU64Map events;       /* event id + 1 -> Op* (last recorded) */
  GQueue ce_queue[2];
  guint ce_busy[2];
  const Policy *policy;
  gboolean issue_extra;  /* a timeline or the legacy default stream: op_issue's rare work */

  /* statistics */
  guint64 n_events;
  double last_end;
  guint64 cap_first_t, cap_last_end;
  gboolean cap_have;
  double blocked_ns, contention_ns, fault_ns, swap_ns, ce_ns;
  guint64 h2d_bytes, d2h_bytes, swap_out_bytes, swap_in_bytes, fault_bytes,
          faults, writeback_bytes, prefetch_bytes, unknown_refs;
  GHashTable *tags;      /* name -> index into tag_stats */
  const char *last_tag;  /* the last tag_index, by address */
  int last_tag_index;
  GArray *tag_stats;
  GHashTable *kernels;   /* name -> KernelStat* */
  VsU64Map kernel_by_ptr;  /* interned name's address -> KernelStat* */
#define KCACHE 64
  /* A direct-mapped cache in front of kernel_by_ptr (a trace has few
   * kernel names): slot (address >> 4) & (KCACHE - 1). */
  struct { const char *name; KernelStat *k; } kcache[KCACHE];
  GHashTable *marks;     /* name -> MarkStat* */
  cJSON *oom_obj;
  guint64 last_progress;
  guint64 next_progress; /* n_events of the next progress line (never without --progress) */

  Series *series;
  double *res_cur_t;     /* per loc: time of the last residency change */
  FILE *timeline;
  char *timeline_tmp;
  gboolean timeline_first;
  guint64 acc_gen;
  struct Part *parts;    /* kernel_run's scratch: 2 per location */
  Live live_jobs, live_allocs;
  GPtrArray *ops_made;   /* every op (live, or recycled on free_ops) */
  Op *free_ops;
  Alloc *free_allocs;    /* recycled, linked through lru_next */
  Job *free_jobs;
  GPtrArray *jobs_spare;
};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* A trace integer as a double: trace integers are below 2^63 (the
 * readers check), so the signed conversion, one instruction, is exact
 * wherever the unsigned one is. */
static inline double
i2d (guint64 v)
{
  return (double) (gint64) v;
}

static inline guint64
round_up (guint64 v, guint64 g)
{
  if (g <= 1 || v > G_MAXUINT64 - g)
    return v;
  return (v + g - 1) / g * g;
}

static void
completion_wait (Completion *c, WaitFn fn, gpointer obj, guint64 arg)
{
  Waiter w = { fn, obj, arg };
  if (c->w0.fn == NULL)
    {
      c->w0 = w;
      return;
    }
  if (c->waiters == NULL)
    c->waiters = g_array_new (FALSE, FALSE, sizeof (Waiter));
  g_array_append_val (c->waiters, w);
}

static void
completion_fire_slow (Sim *s, Completion *c)
{
  Waiter w0 = c->w0;
  GArray *ws = c->waiters;
  c->w0.fn = NULL;
  c->waiters = NULL;
  if (w0.fn)
    w0.fn (s, w0.obj, w0.arg);
  if (ws == NULL)
    return;
  for (guint i = 0; i < ws->len; i++)
    {
      Waiter *w = &g_array_index (ws, Waiter, i);
      w->fn (s, w->obj, w->arg);
    }
  g_array_free (ws, TRUE);
}

/* Marks C done and wakes its waiters (most completions have none). */
static inline void
completion_fire (Sim *s, Completion *c)
{
  c->done = TRUE;
  if (c->w0.fn != NULL)   /* waiters only with w0 */
    completion_fire_slow (s, c);
}

static void op_release (Op *op);
static inline void op_unref (Op *op);

static void
job_unref (Job *j)
{
  if (j != NULL && --j->c.refs == 0)
    {
      g_assert (j->c.w0.fn == NULL);   /* no waiters */
      live_unlink (&j->live);
      j->next_free = *j->pool;   /* recycled, like ops */
      *j->pool = j;
    }
}

/* A's last reference is gone. */
static void
alloc_unref_last (Alloc *a)
{
  live_unlink (&a->live);
  job_unref (a->moving);
  /* Recycled (one is made per alloc event), linked through lru_next. */
  a->lru_next = *a->pool;
  *a->pool = a;
}

static void
alloc_unref (Alloc *a)
{
  if (a != NULL && --a->refs == 0)
    alloc_unref_last (a);
}

static void
op_release (Op *op)
{
  g_assert (op->c.w0.fn == NULL);   /* no waiters */
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];   /* never NULL */
      if (--a->refs == 0)
        alloc_unref_last (a);
    }
  if (op->acc != op->acc_inline)
    {
      g_free (op->acc);
      g_free (op->mode);
      op->acc = op->acc_inline;   /* nothing for sim_teardown to free */
    }
  /* Only the other ops hold these (a kernel has its acc alone). */
  if (op->type != VS_OP_KERNEL)
    {
      alloc_unref (op->src);
      alloc_unref (op->dst);
      alloc_unref (op->target);
      op_unref (op->wait_for);
    }
  /* Ops are recycled: one is made and freed per GPU event. */
  op->next = *op->pool;
  *op->pool = op;
}

static inline void
op_unref (Op *op)
{
  if (op != NULL && --op->c.refs == 0)
    op_release (op);
}

/* ------------------------------------------------------------------ */
/* Series and timeline                                                 */

static void
series_add (Series *se, guint col, double t0, double t1, double value)
{
  if (t1 <= t0 || value == 0)
    return;
  for (;;)
    {
      guint64 last = (guint64) floor ((t1 - 1e-9) / se->dt);
      if (se->fixed || last < SERIES_MAX)
        break;
      /* Double the width: merge bucket pairs. */
      guint half = (se->n_buckets + 1) / 2;
      double *v = (double *) se->sums->data;
      for (guint b = 0; b < half; b++)
        for (guint c = 0; c < se->n_cols; c++)
          {
            double x = v[(2 * b) * se->n_cols + c];
            if (2 * b + 1 < se->n_buckets)
              x += v[(2 * b + 1) * se->n_cols + c];
            v[b * se->n_cols + c] = x;
          }
      se->n_buckets = half;
      g_array_set_size (se->sums, (gsize) half * se->n_cols);
      se->dt *= 2;
    }
  guint64 first = (guint64) floor (t0 / se->dt);
  guint64 last = (guint64) floor ((t1 - 1e-9) / se->dt);
  if (last + 1 > se->n_buckets)
    {
      guint old = se->sums->len;
      g_array_set_size (se->sums, (gsize) (last + 1) * se->n_cols);
      memset ((double *) se->sums->data + old, 0, (se->sums->len - old) * sizeof (double));
      se->n_buckets = last + 1;
    }
  double *v = (double *) se->sums->data;
  for (guint64 b = first; b <= last; b++)
    {
      double lo = MAX (t0, b * se->dt), hi = MIN (t1, (b + 1) * se->dt);
      if (hi > lo)
        v[b * se->n_cols + col] += value * (hi - lo);
    }
}

static void
on_load (gpointer user, guint res, double t0, double t1, double load)
{
  Sim *s = user;
  if (s->series)
    series_add (s->series, s->n_locs + res, t0 - s->t0, t1 - s->t0,
                load / flow_net_resource_capacity (s->net, res));
}

static void
tl_event (Sim *s, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
tl_event (Sim *s, const char *fmt, ...)
{
  if (s->timeline == NULL)
    return;
  va_list ap;
  fputs (s->timeline_first ? "\n" : ",\n", s->timeline);
  s->timeline_first = FALSE;
  va_start (ap, fmt);
  vfprintf (s->timeline, fmt, ap);
  va_end (ap);
}

static char *
json_str (const char *str)
{
  cJSON *j = cJSON_CreateString (str ? str : "");
  char *out = cJSON_PrintUnformatted (j);
  cJSON_Delete (j);
  return out;
}

static const char *
loc_name (Sim *s, int loc)
{
  if (loc == LOC_DEVICE)
    return config_builtin_names[VS_BUILTIN_DEVICE];
  if (loc == s->loc_host)
    return config_builtin_names[VS_BUILTIN_HOST];
  return s->cfg->tiers[loc - 1].name;
}

/* Residency changes: integrate the old value for the series, then change.
 * Sums saturate: --keep-going may overflow a device with absurd sizes. */
static void
loc_set (Sim *s, int loc, guint64 value)
{
  if (value == s->loc_used[loc])
    return;
  if (s->series)
    series_add (s->series, (guint) loc, s->res_cur_t[loc] - s->t0, s->now - s->t0,
                (double) s->loc_used[loc]);
  s->res_cur_t[loc] = s->now;
  s->loc_used[loc] = value;
  if (value > s->loc_peak[loc])
    s->loc_peak[loc] = value;
  if (loc == LOC_DEVICE && value > s->loc_cap[loc] && value - s->loc_cap[loc] > s->overflow_peak)
    s->overflow_peak = value - s->loc_cap[loc];
  if (s->timeline)
    tl_event (s, "{\"name\":\"resident %s\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"GiB\":%.6f}}",
              loc_name (s, loc), (s->now - s->t0) / 1e3, value / 1073741824.0);
}

static void
loc_add (Sim *s, int loc, guint64 bytes)
{
  guint64 v = s->loc_used[loc];
  loc_set (s, loc, bytes > G_MAXUINT64 - v ? G_MAXUINT64 : v + bytes);
}

static void
loc_sub (Sim *s, int loc, guint64 bytes)
{
  /* Less than BYTES in use only after a saturated sum (absurd sizes). */
  loc_set (s, loc, s->loc_used[loc] >= bytes ? s->loc_used[loc] - bytes : 0);
}

static guint64
loc_free (Sim *s, int loc)
{
  return s->loc_used[loc] >= s->loc_cap[loc] ? 0 : s->loc_cap[loc] - s->loc_used[loc];
}

/* ------------------------------------------------------------------ */
/* LRU of allocations (device-resident or managed)                      */

static Lru *
lru_of (Sim *s, const Alloc *a)
{
  return a->kind == VS_MEM_MANAGED ? &s->lru_man : &s->lru_dev;
}

static void
lru_remove (Sim *s, Alloc *a)
{
  if (!a->in_lru)
    return;
  Lru *l = lru_of (s, a);
  if (a->lru_prev) a->lru_prev->lru_next = a->lru_next; else l->head = a->lru_next;
  if (a->lru_next) a->lru_next->lru_prev = a->lru_prev; else l->tail = a->lru_prev;
  a->lru_prev = a->lru_next = NULL;
  a->in_lru = FALSE;
}

static void
lru_touch (Sim *s, Alloc *a)
{
  if (a->kind == VS_MEM_PINNED || a->freed || (a->kind == VS_MEM_DEVICE && !s->spill))
    return;
  if (a->kind == VS_MEM_MANAGED && a->resident_groups == 0)
    {
      lru_remove (s, a);
      return;
    }
  lru_remove (s, a);
  Lru *l = lru_of (s, a);
  a->lru_prev = l->tail;
  if (l->tail) l->tail->lru_next = a; else l->head = a;
  l->tail = a;
  a->in_lru = TRUE;
}

/* ------------------------------------------------------------------ */
/* Jobs: latency, then up to two concurrent flows                      */

static void job_start (Sim *s, Job *j);

static Job *
job_new (Sim *s, double delay)
{
  Job *j = s->free_jobs;
  if (j != NULL)
    {
      s->free_jobs = j->next_free;
      memset (j, 0, sizeof *j);
    }
  else
    j = g_new0 (Job, 1);
  j->pool = &s->free_jobs;
  live_link (&s->live_jobs, &j->live);
  j->c.refs = 1;
  j->delay = delay;
  return j;
}

static void
job_add_flow (Job *j, double amount, double cap, const guint *path, guint n_path)
{
  g_assert (j->n_flows < G_N_ELEMENTS (j->flows) && n_path <= VS_FLOW_MAX_PATH);
  if (amount <= 0)
    return;
  j->flows[j->n_flows].amount = amount;
  j->flows[j->n_flows].cap = cap;
  memcpy (j->flows[j->n_flows].path, path, n_path * sizeof (guint));
  j->flows[j->n_flows].n_path = n_path;
  j->n_flows++;
}

/* The time J takes alone (latency + the slower of its flows). */
static double
job_alone (Sim *s, const Job *j)
{
  double t = 0;
  for (guint i = 0; i < j->n_flows; i++)
    t = MAX (t, j->flows[i].amount / flow_net_alone_rate (s->net, j->flows[i].path,
                                                           j->flows[i].n_path, j->flows[i].cap) * 1e9);
  return j->delay + t;
}

static void
job_finish (Sim *s, Job *j)
{
  completion_fire (s, &j->c);
  job_unref (j);
}

static void
job_dep_done (Sim *s, gpointer obj, guint64 arg)
{
  Job *j = obj;
  if (--j->deps == 0)
    job_start (s, j);
}

static void
job_after (Job *j, Job *dep)
{
  if (dep == NULL || dep->c.done)
    return;
  j->deps++;
  completion_wait (&dep->c, job_dep_done, j, 0);
}

static void
job_run_flows (Sim *s, Job *j)
{
  if (j->n_flows == 0)
    {
      job_finish (s, j);
      return;
    }
  j->pending = j->n_flows;
  for (guint i = 0; i < j->n_flows; i++)
    flow_start (s->net, s->now, j->flows[i].amount, j->flows[i].cap,
                j->flows[i].path, j->flows[i].n_path, j, 1);
}

/* Starts J now, or when its dependencies end. The engine holds a ref to
 * J until it finishes. */
static void
job_start (Sim *s, Job *j)
{
  if (j->deps > 0)
    return;
  if (j->delay > 0)
    evq_push (s->q, s->now + j->delay, EQ_JOB_DELAY, j, 0);
  else
    job_run_flows (s, j);
}

/* ------------------------------------------------------------------ */
/* Paths                                                               */

static guint
read_path (Sim *s, int loc, guint *p)
{
  if (loc == LOC_DEVICE || (loc == s->loc_host && s->cfg->unified))
    return p[0] = s->r_dev, 1;
  if (loc == s->loc_host)
    return p[0] = s->r_host, p[1] = s->r_h2d, 2;
  const VsTier *t = &s->cfg->tiers[loc - 1];
  p[0] = s->r_tier0 + loc - 1;
  if (t->attach == VS_ATTACH_DEVICE || s->cfg->unified)
    return 1;
  return p[1] = s->r_h2d, 2;
}

static guint
write_path (Sim *s, int loc, guint *p)
{
  if (loc == LOC_DEVICE || (loc == s->loc_host && s->cfg->unified))
    return p[0] = s->r_dev, 1;
  if (loc == s->loc_host)
    return p[0] = s->r_d2h, p[1] = s->r_host, 2;
  const VsTier *t = &s->cfg->tiers[loc - 1];
  if (t->attach == VS_ATTACH_DEVICE || s->cfg->unified)
    return p[0] = s->r_tier0 + loc - 1, 1;
  return p[0] = s->r_d2h, p[1] = s->r_tier0 + loc - 1, 2;
}

/* Path of a host-side copy to or from LOC when a device allocation lies
 * below the device: a host-attached tier or the host are reached without
 * the link, a device-attached tier through it. */
static guint
host_copy_path (Sim *s, int loc, gboolean h2d, guint *p)
{
  if (loc == s->loc_host)
    return p[0] = s->r_host, 1;
  const VsTier *t = &s->cfg->tiers[loc - 1];
  p[0] = s->r_tier0 + loc - 1;
  if (s->cfg->unified)
    return 1;
  if (t->attach == VS_ATTACH_DEVICE)
    return p[1] = h2d ? s->r_h2d : s->r_d2h, 2;
  return p[1] = s->r_host, 2;
}

/* Path of a move between device memory and LOC: out (device -> loc) or in. */
static guint
move_path (Sim *s, int loc, gboolean out, guint *p)
{
  guint n = out ? write_path (s, loc, p + 1) : read_path (s, loc, p);
  if (out)
    p[0] = s->r_dev;
  else
    p[n] = s->r_dev;
  return n + 1;
}

/* ------------------------------------------------------------------ */
/* Capacity: spill and managed eviction                                 */

static int
tier_with_room (Sim *s, guint64 bytes)
{
  for (int loc = 1; loc <= s->loc_host; loc++)
    if (bytes <= loc_free (s, loc))
      return loc;
  return -1;
}

static gboolean
evictable (const Alloc *a, Alloc *const *keep, guint n_keep)
{
  if (a->running > 0 || (a->moving && !a->moving->c.done))
    return FALSE;
  for (guint i = 0; i < n_keep; i++)
    if (keep[i] == a)
      return FALSE;
  return TRUE;
}

/* Spills device allocation V below (5.6). A dirty victim moves like a copy;
 * a clean one (never written, or with a current copy below) for free. */
static Job *
spill_victim (Sim *s, Alloc *v)
{
  int target;
  Job *j = NULL;
  if (v->below >= 0 && !v->dirty)
    target = v->below;
  else
    {
      target = tier_with_room (s, v->charge);
      if (target < 0)
        return NULL;
      loc_add (s, target, v->charge);
      if (v->written)
        {
          guint p[VS_FLOW_MAX_PATH];
          guint n = move_path (s, target, TRUE, p);
          j = job_new (s, s->cfg->unified ? 0 : s->cfg->link.latency_ns);
          job_add_flow (j, v->bytes, INFINITY, p, n);
          s->swap_out_bytes += v->bytes;
        }
    }
  loc_sub (s, LOC_DEVICE, v->charge);
  s->dev_nonmanaged -= v->charge;
  v->loc = target;
  v->below = -1;
  v->dirty = FALSE;
  lru_remove (s, v);
  if (j != NULL)
    {
      j->c.refs += 2;    /* v->moving's and the caller's */
      job_unref (v->moving);
      v->moving = j;
      job_start (s, j);
    }
  return j;
}

/* Bytes and pages of the first GROUPS evict units of managed allocation
 * A (the last unit may be partial). */
static guint64
man_bytes (const Sim *s, const Alloc *a, guint64 groups)
{
  return groups >= a->n_groups ? a->bytes : groups * s->cfg->uvm.evict_unit;
}

static guint64
man_pages (const Sim *s, const Alloc *a, guint64 groups)
{
  guint64 page = s->cfg->uvm.page;
  return (man_bytes (s, a, groups) + page - 1) / page;
}

static guint64
man_resident (const Sim *s, const Alloc *a)
{
  return man_bytes (s, a, a->resident_groups);
}

/* Every change of a managed allocation's residency goes through here, to
 * keep the resident bytes of managed allocations in use by running ops
 * (fault_in needs them per op; summing them per op cost O(allocations)). */
static void
man_set_groups (Sim *s, Alloc *a, guint32 r)
{
  if (a->running > 0)
    s->man_running_bytes += man_bytes (s, a, r) - man_resident (s, a);
  a->resident_groups = r;
}

/* Sets A's resident groups to R, with the dirty ones in proportion. */
static void
man_shrink (Sim *s, Alloc *a, guint32 r)
{
  guint32 old = a->resident_groups;
  g_assert (r <= old);
  if (r == old)
    return;
  guint64 freed = man_bytes (s, a, old) - man_bytes (s, a, r);
  a->dirty_groups = (guint32) ((guint64) a->dirty_groups * r / old);
  man_set_groups (s, a, r);
  loc_sub (s, LOC_DEVICE, freed);
  if (r == 0)
    lru_remove (s, a);
}

/* Evicts A's groups until NEED bytes are freed or none are left; the
 * write-back of its dirty share goes to *WB. Returns bytes freed. All of
 * an allocation is touched at once, so which of its groups go is not
 * tracked, only how many, and dirty ones leave in proportion. */
static guint64
evict_groups (Sim *s, Alloc *a, guint64 need, guint64 *wb)
{
  guint32 r = a->resident_groups;
  if (r == 0)
    return 0;
  guint64 have = man_bytes (s, a, r);
  guint32 r2 = need >= have ? 0 : (guint32) ((have - need) / s->cfg->uvm.evict_unit);
  guint64 freed = have - man_bytes (s, a, r2);
  *wb += (guint64) ((double) freed * a->dirty_groups / r);
  man_shrink (s, a, r2);
  return freed;
}

/* Frees NEED device bytes by evicting managed groups, LRU first, sparing
 * KEEP and running ops. Returns a write-back job (started, with a
 * reference for the caller) or NULL. */
static Job *
evict_managed (Sim *s, guint64 need, Alloc *const *keep, guint n_keep, guint64 *freed_out)
{
  guint64 wb = 0, freed = 0;
  for (Alloc *a = s->lru_man.head, *next; a != NULL && freed < need; a = next)
    {
      next = a->lru_next;
      if (!evictable (a, keep, n_keep))
        continue;
      freed += evict_groups (s, a, need - freed, &wb);
    }
  if (freed_out)
    *freed_out = freed;
  if (wb == 0)
    return NULL;
  s->writeback_bytes += wb;
  guint p[] = { s->r_dev, s->r_d2h };
  Job *j = job_new (s, 0);
  job_add_flow (j, wb, INFINITY, p, s->cfg->unified ? 1 : 2);
  j->c.refs++;
  job_start (s, j);
  return j;
}

/* Frees NEED device bytes by spilling device allocations, LRU first. */
static gboolean
spill_for (Sim *s, guint64 need, Alloc *const *keep, guint n_keep, GPtrArray *jobs)
{
  guint64 avail = 0;
  for (Alloc *a = s->lru_dev.head; a != NULL && avail < need; a = a->lru_next)
    if (a->kind == VS_MEM_DEVICE && a->loc == LOC_DEVICE && evictable (a, keep, n_keep))
      avail += a->charge;
  if (avail < need)
    return FALSE;
  guint64 freed = 0;
  for (Alloc *a = s->lru_dev.head, *next; a != NULL && freed < need; a = next)
    {
      next = a->lru_next;
      if (a->kind != VS_MEM_DEVICE || a->loc != LOC_DEVICE || !evictable (a, keep, n_keep))
        continue;
      if (a->below < 0 || a->dirty)
        if (tier_with_room (s, a->charge) < 0)
          return FALSE;
      freed += a->charge;
      Job *j = spill_victim (s, a);
      if (j)
        g_ptr_array_add (jobs, j);
    }
  return TRUE;
}

/* ---- oversubscription policies (5.6) ---- */

static gboolean
nofit_oom (Sim *s, Alloc *a, GPtrArray *jobs)
{
  return FALSE;
}

static gboolean
place_below (Sim *s, Alloc *a)
{
  int loc = tier_with_room (s, a->charge);
  if (loc < 0)
    return FALSE;
  a->loc = loc;
  loc_add (s, loc, a->charge);
  return TRUE;
}

static gboolean
nofit_spill (Sim *s, Alloc *a, GPtrArray *jobs)
{
  guint64 need = a->charge - loc_free (s, LOC_DEVICE);
  if (a->charge <= s->loc_cap[LOC_DEVICE] && spill_for (s, need, &a, 1, jobs))
    {
      a->loc = LOC_DEVICE;
      loc_add (s, LOC_DEVICE, a->charge);
      s->dev_nonmanaged += a->charge;
      lru_touch (s, a);
      return TRUE;
    }
  /* It cannot fit now: it starts below, and is swapped in when used. */
  return place_below (s, a);
}

static gboolean
nofit_direct (Sim *s, Alloc *a, GPtrArray *jobs)
{
  a->fixed = TRUE;
  return place_below (s, a);
}

static const Policy policies[VS_OVERSUB_COUNT] = {
  [VS_OVERSUB_OOM] = { nofit_oom },
  [VS_OVERSUB_SPILL] = { nofit_spill },
  [VS_OVERSUB_DIRECT] = { nofit_direct },
  [VS_OVERSUB_UVM] = { nofit_oom },  /* device allocations are managed */
};

/* ------------------------------------------------------------------ */
/* Host threads                                                        */


static __attribute__ ((noinline)) Thread *
thread_get_slow (Sim *s, guint32 tid)
{
  Thread *t = g_hash_table_lookup (s->threads, GUINT_TO_POINTER (tid));
  if (t == NULL)
    {
      t = g_new0 (Thread, 1);
      t->tid = tid;
      t->idle = TRUE;
      g_hash_table_insert (s->threads, GUINT_TO_POINTER (tid), t);
      g_ptr_array_add (s->thread_list, t);
    }
  s->last_thread = t;
  return t;
}

static inline Thread *
thread_get (Sim *s, guint32 tid)
{
  Thread *t = s->last_thread;
  if (G_LIKELY (t != NULL && t->tid == tid))
    return t;
  return thread_get_slow (s, tid);
}

/* The captured span: the earliest t and the latest end of a host call
 * or of the GPU work of a kernel, copy or memset. Written as selections
 * (conditional moves): which end is the later one varies from event to
 * event, and the branches were mispredicted often. cap_first_t starts at
 * G_MAXUINT64 and cap_last_end at 0 (sim_setup). */
static inline __attribute__ ((always_inline)) void
note_captured (Sim *s, const VsEvent *ev)
{
  guint64 t = ev->t, end = t + ev->host_ns, gpu_end = t + ev->dur;
  const guint gpu_ops = 1u << VS_OP_KERNEL | 1u << VS_OP_COPY | 1u << VS_OP_MEMSET;
  guint gpu = (ev->dur != VS_NONE) & (((1u << ev->op) & gpu_ops) != 0);
  end = gpu & (gpu_end > end) ? gpu_end : end;
  s->cap_first_t = MIN (s->cap_first_t, t);
  s->cap_last_end = MAX (s->cap_last_end, end);
  s->cap_have = TRUE;
}

static void
mark_close (Sim *s, Thread *t, double now, guint64 cap_t)
{
  if (t->mark_name == NULL)
    return;
  MarkStat *m = g_hash_table_lookup (s->marks, t->mark_name);
  m->predicted_ns += now - t->mark_t;
  m->captured_ns += cap_t > t->mark_t_cap ? (double) (cap_t - t->mark_t_cap) : 0;
  t->mark_name = NULL;
}

/* T is idle and holds the next event of the trace: issue it at
 * s_i = f_{i-1} + max(0, t_i - (t_{i-1} + h_{i-1})) (SPEC 5.2), the first
 * event of a thread at its t, and never before now. */
static inline __attribute__ ((always_inline)) void
thread_schedule (Sim *s, Thread *t)
{
  double at = i2d (s->ev.t);
  if (t->has_prev)
    {
      /* The gap in integer ns (exact), one conversion. Masked rather
       * than branched on: whether there is a gap varies from call to
       * call, and the branch was mispredicted often. */
      guint64 end = t->issued_t + t->issued_h;   /* of the previous call */
      guint64 gap = (s->ev.t - end) & -(guint64) (s->ev.t > end);
      at = t->f_prev + i2d (gap);
    }
  /* Calls are issued in trace order, so at most one issue is pending: it
   * waits in a slot of its own rather than in the event queue. */
  g_assert (s->issue_thread == NULL);
  s->issue_thread = t;
  s->issue_t = MAX (at, s->now);
}

/* A thread that has no more events: close its open mark. */
static void
thread_end (Sim *s, Thread *t)
{
  t->ended = TRUE;
  mark_close (s, t, t->f_prev, t->issued_t + t->issued_h);
}

/* Reads the next event of the trace and hands it to its thread, which
 * issues it when it is idle. Threads issue their calls in the order of
 * the file (the captured order across threads: docs/model.md 2), so only
 * one event is ever read ahead. */
static inline __attribute__ ((always_inline)) void
reader_advance (Sim *s)
{
  VsEvent *ev = &s->ev;
  if (s->halt || s->eof)
    return;
  if (!trace_next (s->reader, ev, &s->error))
    {
      s->eof = TRUE;
      s->halt = s->error != NULL;
      if (s->error == NULL)
        for (guint i = 0; i < s->thread_list->len; i++)
          {
            Thread *t = s->thread_list->pdata[i];
            if (t->idle && !t->ended)
              thread_end (s, t);
          }
      return;
    }
  s->n_events++;
  note_captured (s, ev);
  if (!s->have_t0)
    {
      s->now = s->t0 = s->last_end = (double) ev->t;
      s->have_t0 = TRUE;
      for (guint i = 0; i < s->n_locs; i++)
        s->res_cur_t[i] = s->t0;
    }
  Thread *t = thread_get (s, ev->tid);
  t->has_cur = TRUE;
  if (t->idle)
    thread_schedule (s, t);
}

/* The current call of T ended at F. */
static inline __attribute__ ((always_inline)) void
thread_finish (Sim *s, Thread *t, double f)
{
  t->has_prev = TRUE;
  t->f_prev = f;
  t->idle = TRUE;
  s->last_end = MAX (s->last_end, f);
  if (s->stopped)
    return;
  if (t->has_cur)
    thread_schedule (s, t);
  else if (s->eof)
    thread_end (s, t);
}

static void
thread_wait_done (Sim *s, gpointer obj, guint64 arg)
{
  Thread *t = obj;
  if (--t->waits > 0)
    return;
  double f = MAX (t->s_cur, s->now);
  s->blocked_ns += f - t->s_cur;
  if (s->timeline && f > t->s_cur)
    tl_event (s, "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}",
              event_op_name (t->issued_op), t->tid, (t->s_cur - s->t0) / 1e3, (f - t->s_cur) / 1e3);
  thread_finish (s, t, f);
}

static void
thread_block_on (Thread *t, Completion *c)
{
  if (c == NULL || c->done)
    return;
  t->waits++;
  completion_wait (c, thread_wait_done, t, 0);
}

/* ------------------------------------------------------------------ */
/* Ops on streams                                                      */

static void op_try_start (Sim *s, Op *op);
static void op_complete (Sim *s, Op *op);
static void op_phase (Sim *s, Op *op);
static void op_run (Sim *s, Op *op);

static __attribute__ ((noinline)) Stream *
stream_find_slow (Sim *s, guint64 id)
{
  guint64 *v = u64map_lookup (&s->streams, id + 1);
  Stream *st = v ? GSIZE_TO_POINTER (*v) : NULL;
  if (st)
    s->last_stream = st;
  return st;
}

static inline Stream *
stream_find (Sim *s, guint64 id)
{
  Stream *st = s->last_stream;
  if (G_LIKELY (st != NULL && st->id == id))
    return st;   /* ops come in runs on one stream */
  return stream_find_slow (s, id);
}

static Stream *
stream_get (Sim *s, guint64 id)
{
  Stream *st = stream_find (s, id);
  if (st == NULL)
    {
      st = g_new0 (Stream, 1);
      st->id = id;
      u64map_insert (&s->streams, id + 1, GPOINTER_TO_SIZE (st));
      g_ptr_array_add (s->stream_list, st);
      if (s->timeline)
        for (int pid = 1; pid <= 3; pid += 2)
          tl_event (s, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
                    ",\"args\":{\"name\":\"stream %" G_GUINT64_FORMAT "\"}}", pid, id, id);
    }
  return st;
}

static void
op_dep_done (Sim *s, gpointer obj, guint64 arg)
{
  Op *op = obj;
  if (--op->deps == 0)
    op_try_start (s, op);
  op_unref (op);
}

static void
op_depend (Op *op, Op *on)
{
  if (on == NULL || on->c.done || on == op)
    return;
  op->deps++;
  op->c.refs++;
  completion_wait (&on->c, op_dep_done, op, 0);
}

static inline Op *
event_find (Sim *s, guint64 event)
{
  guint64 *v = u64map_lookup (&s->events, event + 1);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

/* The live allocation ID, or NULL. */
static inline Alloc *
alloc_find (Sim *s, guint64 id)
{
  guint64 *v = slotmap_lookup (&s->allocs, id);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

/* The live allocation ID, or NULL (0 names none), counting references to
 * ids that are not live. */
static inline Alloc *
alloc_lookup (Sim *s, guint64 id)
{
  if (id == 0)
    return NULL;
  Alloc *a = alloc_find (s, id);
  if (G_UNLIKELY (a == NULL))
    s->unknown_refs++;
  return a;
}

/* The allocations an op uses, each once with its access modes: built in
 * Sim's scratch arrays, deduplicated in O(1) by a stamp on the allocation
 * (a kernel may name thousands of ids). */
static void
acc_begin (Sim *s, Op *op)
{
  s->acc_gen++;
  op->acc = op->acc_inline;
  op->mode = op->mode_inline;
  op->acc_cap = OP_INLINE_ACC;
  op->kinds = 0;
}

static inline void acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id,
                                guint8 m, guint *kinds, gboolean ref);

/* Adds allocation ID with MODE to the op (once per allocation: modes
 * merge), growing its arrays past the inline ones when needed. */
static inline void
acc_add (Sim *s, Op *op, guint64 id, guint8 mode)
{
  if (G_UNLIKELY (op->n_acc == op->acc_cap))
    {
      /* Longer than the inline arrays: move to the heap, then double. */
      guint cap = 2 * op->acc_cap;
      if (op->acc == op->acc_inline)
        {
          op->acc = g_memdup2 (op->acc_inline, OP_INLINE_ACC * sizeof (Alloc *));
          op->mode = g_memdup2 (op->mode_inline, OP_INLINE_ACC);
        }
      op->acc = g_renew (Alloc *, op->acc, cap);
      op->mode = g_renew (guint8, op->mode, cap);
      op->acc_cap = cap;
    }
  guint n = op->n_acc, kinds = op->kinds;
  acc_add_one (s, op->acc, op->mode, &n, s->acc_gen, id, mode, &kinds, TRUE);
  op->n_acc = n;
  op->kinds = kinds;
}

/* Adds allocation ID with mode M to ACC/MODE (N entries, room for one
 * more), or merges M into its entry. A new entry adds 1 << its kind to
 * KINDS and, if REF, takes a reference on the allocation. Arrays and
 * count are passed as locals: the mode bytes it stores may alias
 * anything, which would make the compiler reload an op's fields after
 * every store. */
static inline void
acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id, guint8 m, guint *kinds,
             gboolean ref)
{
  Alloc *a = alloc_lookup (s, id);
  if (a == NULL)
    return;
  if (a->acc_gen == gen)
    {
      mode[a->acc_idx] |= m;
      return;
    }
  a->acc_gen = gen;
  a->acc_idx = *n;
  if (ref)
    a->refs++;
  *kinds |= 1u << a->kind;
  acc[*n] = a;
  mode[(*n)++] = m;
}

/* acc_add for a kernel whose ids fit the op's inline arrays (the common
 * case). References are taken after the list is built, and only when
 * the op keeps it: a kernel that reaches only device memory, whose
 * traffic is given, needs its allocations for nothing after this
 * (kernel_run starts it from its bytes, nothing tracks them) and keeps
 * none. */
static void
acc_add_few (Sim *s, Op *op, const VsEvent *ev)
{
  Alloc **acc = op->acc_inline;
  guint8 *mode = op->mode_inline;
  guint n = 0, kinds = 0;
  guint64 gen = s->acc_gen;
  for (guint i = 0; i < ev->n_reads; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->reads[i], ACC_R, &kinds, FALSE);
  for (guint i = 0; i < ev->n_writes; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->writes[i], ACC_W, &kinds, FALSE);
  for (guint i = 0; i < ev->n_touches; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->touches[i], ACC_R | ACC_W | 4, &kinds, FALSE);
  op->kinds = kinds;
  if (s->dev_only && ev->bytes != VS_NONE && !(kinds & (1u << VS_MEM_MANAGED | 1u << VS_MEM_PINNED)))
    n = 0;
  for (guint i = 0; i < n; i++)
    acc[i]->refs++;
  op->n_acc = n;
}

/* What the op's accesses tell: whether it uses managed memory (fault_in
 * has work) and pinned host memory. */
static inline void
acc_end (Op *op)
{
  op->has_managed = (op->kinds >> VS_MEM_MANAGED) & 1;
  op->has_pinned = (op->kinds >> VS_MEM_PINNED) & 1;
}

/* The bytes a kernel's reads and writes name (5.4): an id read and
 * written counts twice, a touched one once. Summed in the order of the
 * accesses (the rounding of large sizes depends on it). Only kernel_run
 * needs it, and only when the kernel's traffic is not given or must be
 * split over locations. */
static double
op_wsum (const Op *op)
{
  double wsum = 0;
  Alloc *const *acc = op->acc;
  const guint8 *mode = op->mode;
  for (guint i = 0, n = op->n_acc; i < n; i++)
    {
      double sz = i2d (acc[i]->bytes);
      if (mode[i] & (ACC_R | 4)) wsum += sz;
      if ((mode[i] & ACC_W) && !(mode[i] & 4)) wsum += sz;
    }
  return wsum;
}

static Alloc *
ref (Alloc *a)
{
  if (a)
    a->refs++;
  return a;
}

/* op_issue's work for a timeline (the captured op beside the predicted
 * one) and the legacy default stream (its implicit dependencies). */
static __attribute__ ((noinline)) void
op_issue_extra (Sim *s, Op *op, const VsEvent *ev)
{
  Stream *st = op->st;
  if (s->timeline && ev->dur != VS_NONE && ev->op != VS_OP_FREE)
    {
      /* The captured timeline beside the predicted one: a trace has each
       * op's GPU duration but not its GPU start, estimated as the later of
       * its host call and the end of the stream's previous op. */
      guint64 start = MAX (ev->t, st->cap_end);
      st->cap_end = start + ev->dur;
      char *nm = ev->op == VS_OP_KERNEL ? json_str (ev->name ? ev->name : "kernel")
        : ev->op == VS_OP_COPY ? g_strdup_printf ("\"copy %s\"", event_dir_name (ev->dir))
        : g_strdup_printf ("\"%s\"", event_op_name (ev->op));
      tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":3,\"tid\":%" G_GUINT64_FORMAT
                ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"event\":%" G_GUINT64_FORMAT "}}",
                nm, st->id, ((double) start - s->t0) / 1e3, ev->dur / 1e3, ev->index);
      g_free (nm);
    }
  if (s->cfg->gpu.legacy_default_stream)
    {
      if (st->id == 0)
        {
          for (Stream *o = s->busy; o; o = o->busy_next)
            if (o != st)
              op_depend (op, o->last);
        }
      else
        {
          Stream *z = stream_find (s, 0);
          if (z)
            op_depend (op, z->last);
        }
    }
}

/* Creates the op for event EV of thread T and queues it on its stream. */
static Op *
op_issue (Sim *s, const VsEvent *ev)
{
  Op *op = s->free_ops;
  if (op != NULL)
    {
      s->free_ops = op->next;
      /* Every field is set below or here: field by field is several
       * times cheaper than a memset of the struct (measured: its `rep
       * stos` was 5 % of replay time). */
      op->c = (Completion) { 0 };
      op->next = NULL;
      op->deps = 0;
      op->retry_pending = op->started = FALSE;
      op->phase = op->waiting = 0;
      /* ready_t, phase_t, run_t and alone_ns are set before they are
       * read (op_try_start, op_begin, op_run, kernel_run). */
      op->swap_ns = op->fault_ns = op->ce_ns = 0;
      op->n_acc = 0;
      op->src = op->dst = op->target = NULL;
      op->wait_for = NULL;
    }
  else
    {
      op = g_new0 (Op, 1);
      g_ptr_array_add (s->ops_made, op);
    }
  op->pool = &s->free_ops;
  /* The stream's `last` (taken below): it keeps the op alive while its
   * caller uses it, until the stream's next op is issued. */
  op->c.refs = 1;
  op->type = ev->op;
  op->index = ev->index;
  op->dir = ev->dir;
  op->to = ev->to;
  op->async = ev->async;
  op->bytes = ev->bytes;
  op->dur = ev->dur;
  op->compute_ns = ev->compute_ns;
  op->name = ev->name;
  op->ce = -1;
  op->issue_t = s->now;
  acc_begin (s, op);
  switch (ev->op)
    {
    case VS_OP_KERNEL:
      if (ev->n_reads + ev->n_writes + ev->n_touches <= OP_INLINE_ACC)
        acc_add_few (s, op, ev);
      else
        {
          for (guint i = 0; i < ev->n_reads; i++) acc_add (s, op, ev->reads[i], ACC_R);
          for (guint i = 0; i < ev->n_writes; i++) acc_add (s, op, ev->writes[i], ACC_W);
          for (guint i = 0; i < ev->n_touches; i++) acc_add (s, op, ev->touches[i], ACC_R | ACC_W | 4);
        }
      break;
    case VS_OP_COPY:
      op->src = ref (alloc_lookup (s, ev->src));
      op->dst = ref (alloc_lookup (s, ev->dst));
      /* The device side must be resident; pinned and pageable host sides are not. */
      if (op->src && op->src->kind != VS_MEM_PINNED && ev->dir != VS_DIR_H2D)
        acc_add (s, op, ev->src, ACC_R);
      if (op->dst && op->dst->kind != VS_MEM_PINNED && ev->dir != VS_DIR_D2H && ev->dir != VS_DIR_P2P)
        acc_add (s, op, ev->dst, ACC_W);
      if (!s->cfg->unified)
        op->ce = ev->dir == VS_DIR_H2D ? 0 : (ev->dir == VS_DIR_D2D ? -1 : 1);
      break;
    case VS_OP_MEMSET:
      op->dst = ref (alloc_lookup (s, ev->dst));
      if (op->dst && op->dst->kind != VS_MEM_PINNED)
        acc_add (s, op, ev->dst, ACC_W);
      break;
    case VS_OP_PREFETCH:
    case VS_OP_FREE:
      op->target = ref (alloc_lookup (s, ev->id));
      break;
    case VS_OP_STREAM_WAIT:
      {
        Op *rec = event_find (s, ev->event);
        if (rec)
          {
            rec->c.refs++;
            op->wait_for = rec;
            op_depend (op, rec);
          }
      }
      break;
    case VS_OP_EVENT_RECORD:
      {
        Op *old = event_find (s, ev->event);
        op->c.refs++;
        u64map_insert (&s->events, ev->event + 1, GPOINTER_TO_SIZE (op));
        op_unref (old);
      }
      break;
    default:
      break;
    }
  acc_end (op);

  Stream *st = stream_get (s, ev->stream);
  op->st = st;
  if (G_UNLIKELY (s->issue_extra))
    op_issue_extra (s, op, ev);
  op->c.refs++;          /* the stream's queue */
  if (st->tail)
    st->tail->next = op;
  else
    {
      st->head = op;
      st->busy_prev = NULL;
      st->busy_next = s->busy;
      if (s->busy)
        s->busy->busy_prev = st;
      s->busy = st;
    }
  st->tail = op;
  op_unref (st->last);
  st->last = op;         /* the reference taken at the start */
  if (st->head == op)
    op_try_start (s, op);
  return op;
}

static void
op_resume (Sim *s, gpointer obj, guint64 arg)
{
  Op *op = obj;
  if (--op->waiting == 0)
    op_phase (s, op);
}

static void
op_wait_job (Op *op, Job *j)
{
  if (j == NULL || j->c.done)
    return;
  op->waiting++;
  completion_wait (&j->c, op_resume, op, 0);
}

/* OP may start now: through its phases, or straight to running when no
 * policy can have moved its memory (no swap-in, no fault-in to do). */
static void
op_begin (Sim *s, Op *op)
{
  op->waiting = 0;
  if (!s->spill && (!op->has_managed || s->cfg->unified))
    {
      op->phase = 3;
      op->phase_t = s->now;
      op_run (s, op);
      return;
    }
  op->phase = 0;
  op_phase (s, op);
}

static void
op_try_start (Sim *s, Op *op)
{
  if (op->started || op->st->head != op || op->deps > 0)
    return;
  double ready = op->issue_t + s->cfg->gpu.launch_latency_ns;
  if (s->now < ready)
    {
      if (!op->retry_pending)
        {
          op->retry_pending = TRUE;
          op->c.refs++;
          evq_push (s->q, ready, EQ_OP_RETRY, op, 0);
        }
      return;
    }
  op->started = TRUE;
  op->ready_t = s->now;
  if (op->ce >= 0 && s->ce_busy[op->ce] >= s->cfg->link.copy_engines)
    {
      g_queue_push_tail (&s->ce_queue[op->ce], op);
      return;
    }
  if (op->ce >= 0)
    s->ce_busy[op->ce]++;
  op_begin (s, op);
}

/* ---- residency before an op runs ---- */

/* A list for the jobs a call must wait for, recycled (one per alloc event
 * otherwise); nested use gets a fresh one. */
static GPtrArray *
jobs_take (Sim *s)
{
  GPtrArray *a = s->jobs_spare;
  s->jobs_spare = NULL;
  return a ? a : g_ptr_array_new ();
}

static void
jobs_give (Sim *s, GPtrArray *a)
{
  g_ptr_array_set_size (a, 0);
  if (s->jobs_spare == NULL)
    s->jobs_spare = a;
  else
    g_ptr_array_free (a, TRUE);
}

/* Swap in the op's spilled allocations (5.6). */
static void
swap_in (Sim *s, Op *op)
{
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind != VS_MEM_DEVICE || a->loc == LOC_DEVICE || a->fixed || a->freed)
        continue;
      GPtrArray *jobs = jobs_take (s);
      guint64 free_b = loc_free (s, LOC_DEVICE);
      gboolean ok = TRUE;
      if (a->charge > free_b)
        {
          guint64 need = a->charge - free_b, got = 0;
          Job *wb = evict_managed (s, need, op->acc, op->n_acc, &got);
          if (wb)
            g_ptr_array_add (jobs, wb);
          if (got < need)
            ok = spill_for (s, need - got, op->acc, op->n_acc, jobs);
        }
      if (!ok)
        {
          /* It cannot fit beside the op's other memory: the op reaches it
           * where it lies. */
          for (guint k = 0; k < jobs->len; k++)
            {
              op_wait_job (op, jobs->pdata[k]);
              job_unref (jobs->pdata[k]);
            }
          jobs_give (s, jobs);
          continue;
        }
      int from = a->loc;
      guint p[VS_FLOW_MAX_PATH];
      guint n = move_path (s, from, FALSE, p);
      Job *j = job_new (s, s->cfg->unified ? 0 : s->cfg->link.latency_ns);
      job_add_flow (j, a->bytes, INFINITY, p, n);
      job_after (j, a->moving);
      for (guint k = 0; k < jobs->len; k++)
        {
          job_after (j, jobs->pdata[k]);
          job_unref (jobs->pdata[k]);
        }
      jobs_give (s, jobs);
      s->swap_in_bytes += a->bytes;
      /* The copy below stays (clean) until the allocation is written. */
      a->below = from;
      a->dirty = FALSE;
      a->loc = LOC_DEVICE;
      loc_add (s, LOC_DEVICE, a->charge);
      s->dev_nonmanaged += a->charge;
      lru_touch (s, a);
      j->c.refs++;
      job_unref (a->moving);
      a->moving = j;
      op_wait_job (op, j);
      job_start (s, j);
    }
}

static guint64
sat_add (guint64 a, guint64 b)
{
  return b > G_MAXUINT64 - a ? G_MAXUINT64 : a + b;
}

/* Fault in the op's managed allocations (5.7). */
static void
fault_in (Sim *s, Op *op)
{
  if (s->cfg->unified || !op->has_managed)
    return;
  guint64 total = 0, missing = 0, missing_pages = 0;
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind != VS_MEM_MANAGED || a->freed)
        continue;
      total = sat_add (total, a->bytes);
      missing = sat_add (missing, a->bytes - man_resident (s, a));
      missing_pages += man_pages (s, a, a->n_groups) - man_pages (s, a, a->resident_groups);
    }
  if (missing == 0)
    return;
  /* Device memory the set could use: all but non-managed memory and the
   * managed memory of running ops outside the set. */
  guint64 held = s->man_running_bytes;
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind == VS_MEM_MANAGED && a->running > 0)
        held -= man_resident (s, a);
    }
  guint64 cap = s->loc_cap[LOC_DEVICE];
  guint64 taken = sat_add (s->dev_nonmanaged, held);
  guint64 avail = cap > taken ? cap - taken : 0;
  guint64 used = s->loc_used[LOC_DEVICE];
  Job *wb = NULL;
  Job *j;
  guint pin[] = { s->r_h2d, s->r_dev };
  guint pout[] = { s->r_dev, s->r_d2h };
  if (total <= avail)
    {
      if (sat_add (used, missing) > cap)
        wb = evict_managed (s, sat_add (used, missing) - cap, op->acc, op->n_acc, NULL);
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind != VS_MEM_MANAGED || a->freed)
            continue;
          loc_add (s, LOC_DEVICE, a->bytes - man_resident (s, a));
          man_set_groups (s, a, a->n_groups);
        }
      guint64 batches = (missing_pages + s->cfg->uvm.fault_batch - 1) / s->cfg->uvm.fault_batch;
      j = job_new (s, batches * s->cfg->uvm.fault_latency_ns);
      job_add_flow (j, (double) missing_pages * s->cfg->uvm.page, INFINITY, pin, 2);
      s->faults += missing_pages;
      s->fault_bytes += missing_pages * s->cfg->uvm.page;
    }
  else
    {
      /* Thrashing: the set does not fit. Everything else that can go
       * goes; every page of the set faults during the kernel; at the end
       * the set's first AVAIL bytes (in the order the op names them) stay
       * resident, and what does not stay is written back if dirty or
       * written by this op. */
      wb = evict_managed (s, used, op->acc, op->n_acc, NULL);
      guint64 pages = 0, wb_set = 0, room = avail;
      guint32 *keep = g_new0 (guint32, op->n_acc);
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind != VS_MEM_MANAGED || a->freed)
            continue;
          guint32 r2 = room >= a->bytes ? a->n_groups : (guint32) (room / s->cfg->uvm.evict_unit);
          room -= man_bytes (s, a, r2);
          keep[i] = r2;
          pages += man_pages (s, a, a->n_groups);
          guint64 leaves = a->bytes - man_bytes (s, a, r2);
          if (op->mode[i] & ACC_W)
            wb_set += leaves;
          else if (a->dirty_groups > r2)
            wb_set += MIN (leaves, (guint64) (a->dirty_groups - r2) * s->cfg->uvm.evict_unit);
        }
      /* What leaves first, so that no false peak is recorded. */
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind == VS_MEM_MANAGED && !a->freed && keep[i] < a->resident_groups)
            man_shrink (s, a, keep[i]);
        }
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind == VS_MEM_MANAGED && !a->freed && keep[i] > a->resident_groups)
            {
              loc_add (s, LOC_DEVICE, man_bytes (s, a, keep[i]) - man_resident (s, a));
              man_set_groups (s, a, keep[i]);
            }
        }
      g_free (keep);
      guint64 batches = (pages + s->cfg->uvm.fault_batch - 1) / s->cfg->uvm.fault_batch;
      j = job_new (s, batches * s->cfg->uvm.fault_latency_ns);
      job_add_flow (j, (double) pages * s->cfg->uvm.page, INFINITY, pin, 2);
      job_add_flow (j, (double) wb_set, INFINITY, pout, 2);
      s->faults += pages;
      s->fault_bytes += pages * s->cfg->uvm.page;
      s->writeback_bytes += wb_set;
    }
  job_after (j, wb);
  job_unref (wb);
  op_wait_job (op, j);
  job_start (s, j);
}

/* ---- running ---- */

typedef struct Part {
  guint path[VS_FLOW_MAX_PATH];
  guint n;
  double amount;
} Part;

static void
part_add (Part *parts, guint *n_parts, const guint *path, guint n, double amount)
{
  if (amount <= 0)
    return;
  for (guint i = 0; i < *n_parts; i++)
    {
      guint k = 0;
      if (parts[i].n == n)
        while (k < n && parts[i].path[k] == path[k])
          k++;
      if (k == n && parts[i].n == n)
        {
          parts[i].amount += amount;
          return;
        }
    }
  Part *p = &parts[(*n_parts)++];
  memcpy (p->path, path, n * sizeof (guint));
  p->n = n;
  p->amount = amount;
}

static int
alloc_loc (Sim *s, const Alloc *a)
{
  if (a->kind == VS_MEM_PINNED)
    return s->loc_host;
  if (a->kind == VS_MEM_MANAGED)
    return LOC_DEVICE;  /* faulted in before the kernel runs */
  return a->loc;
}

/* Sets OP's alone time D1 (5.4) and starts its compute flow, C1 ns on
 * `sm` capped to end at D1 when alone (every flow of the kernel is). FALSE
 * when the kernel takes no time: then nothing starts. */
static inline gboolean
kernel_start_compute (Sim *s, Op *op, double c1, double d1)
{
  op->alone_ns = d1;
  op->waiting = 0;
  if (d1 <= 0)
    return FALSE;
  if (c1 > 0)
    {
      op->waiting++;
      flow_start (s->net, s->now, c1 * 1e-9, c1 * (1 / d1), &s->r_sm, 1, op, 0);
    }
  return TRUE;
}

static void
kernel_run (Sim *s, Op *op, Job *j_unused)
{
  double d0 = op->dur == VS_NONE ? 0 : i2d (op->dur);
  double x, wsum = -1;  /* -1: not summed yet */
  if (op->bytes != VS_NONE)
    x = i2d (op->bytes);
  else
    x = wsum = op_wsum (op);
  x = MIN (x, d0 * 1e-9 * s->b0_dev);
  double m0 = MIN (x * s->ns_per_byte0, d0);
  double c0 = op->compute_ns != VS_NONE ? i2d (op->compute_ns) : d0 - m0;
  double c1 = c0 * s->tflops_scale;

  if (x > 0 && s->dev_only && !op->has_pinned)
    {
      /* The common case without the parts: only device memory to reach,
       * the whole of x is one [device_mem] flow (as below, with the same
       * arithmetic). */
      double d1 = c1 + x * s->ns_per_byte;
      if (!kernel_start_compute (s, op, c1, d1))
        return;
      op->waiting++;
      flow_start (s->net, s->now, x, x * (1 / d1) * 1e9, &s->r_dev, 1, op, 0);
      return;
    }

  /* At most one part per (location, direction). */
  Part *parts = s->parts;
  guint n_parts = 0;
  guint path[VS_FLOW_MAX_PATH];
  if (x > 0)
    {
      if ((wsum < 0 ? (wsum = op_wsum (op)) : wsum) <= 0)
        {
          /* Traffic without allocations to split it over: the whole of x
           * is one [device_mem] part. (Only device memory to reach took
           * the path above.) */
          path[0] = s->r_dev;
          part_add (parts, &n_parts, path, 1, x);
        }
      else
        for (guint i = 0; i < op->n_acc; i++)
          {
            Alloc *a = op->acc[i];
            double sz = (double) a->bytes;
            int loc = alloc_loc (s, a);
            if (op->mode[i] & (ACC_R | 4))
              {
                guint n = read_path (s, loc, path);
                part_add (parts, &n_parts, path, n, x * sz / wsum);
              }
            if ((op->mode[i] & ACC_W) && !(op->mode[i] & 4))
              {
                guint n = write_path (s, loc, path);
                part_add (parts, &n_parts, path, n, x * sz / wsum);
              }
          }
    }
  double d1 = c1;
  for (guint i = 0; i < n_parts; i++)
    d1 += parts[i].n == 1 && parts[i].path[0] == s->r_dev ? parts[i].amount * s->ns_per_byte
      : parts[i].amount / flow_net_alone_rate (s->net, parts[i].path, parts[i].n, INFINITY) * 1e9;
  if (!kernel_start_compute (s, op, c1, d1))
    return;
  double per_ns = 1 / d1;
  for (guint i = 0; i < n_parts; i++)
    {
      op->waiting++;
      flow_start (s->net, s->now, parts[i].amount, parts[i].amount * per_ns * 1e9,
                  parts[i].path, parts[i].n, op, 0);
    }
}

static gboolean
pageable (const Alloc *host_side)
{
  return host_side == NULL || host_side->kind != VS_MEM_PINNED;
}

/* Builds the job of a copy (5.5). */
static Job *
copy_job (Sim *s, Op *op)
{
  double bytes = (double) op->bytes;
  guint p[VS_FLOW_MAX_PATH];
  guint n;
  if (s->cfg->unified && (op->dir == VS_DIR_H2D || op->dir == VS_DIR_D2H))
    {
      Job *j = job_new (s, 0);
      p[0] = s->r_dev;
      job_add_flow (j, 2 * bytes, INFINITY, p, 1);
      return j;
    }
  Job *j = job_new (s, s->cfg->link.latency_ns);
  int src_loc = op->src ? alloc_loc (s, op->src) : s->loc_host;
  int dst_loc = op->dst ? alloc_loc (s, op->dst) : s->loc_host;
  switch (op->dir)
    {
    case VS_DIR_H2D:
      {
        double cap = pageable (op->src) ? s->pageable_cap : INFINITY;
        if (dst_loc == LOC_DEVICE)
          p[0] = s->r_h2d, p[1] = s->r_dev, n = 2;
        else
          n = host_copy_path (s, dst_loc, TRUE, p);  /* a device allocation placed below */
        job_add_flow (j, bytes, cap, p, n);
        s->h2d_bytes += op->bytes;
        break;
      }
    case VS_DIR_D2H:
      {
        double cap = pageable (op->dst) ? s->pageable_cap : INFINITY;
        if (src_loc == LOC_DEVICE)
          p[0] = s->r_d2h, p[1] = s->r_dev, n = 2;
        else
          n = host_copy_path (s, src_loc, FALSE, p);
        job_add_flow (j, bytes, cap, p, n);
        s->d2h_bytes += op->bytes;
        break;
      }
    case VS_DIR_D2D:
      if (src_loc == LOC_DEVICE && dst_loc == LOC_DEVICE)
        {
          p[0] = s->r_dev;
          job_add_flow (j, 2 * bytes, INFINITY, p, 1);
        }
      else
        {
          n = read_path (s, src_loc, p);
          job_add_flow (j, bytes, INFINITY, p, n);
          n = write_path (s, dst_loc, p);
          job_add_flow (j, bytes, INFINITY, p, n);
        }
      break;
    case VS_DIR_P2P:
      p[0] = s->r_d2h;
      job_add_flow (j, bytes, INFINITY, p, 1);
      break;
    }
  return j;
}

/* Prefetch (5.7): migrates managed pages as a copy, without fault latency. */
static Job *
prefetch_job (Sim *s, Op *op)
{
  Alloc *a = op->target;
  if (a == NULL || a->kind != VS_MEM_MANAGED || a->freed || s->cfg->unified)
    return NULL;
  guint64 eu = s->cfg->uvm.evict_unit;
  guint64 limit = op->bytes == 0 ? a->bytes : MIN (op->bytes, a->bytes);
  guint32 ng = (guint32) ((limit + eu - 1) / eu);
  Job *j = job_new (s, 0);
  guint32 r = a->resident_groups;
  guint64 moved = 0;
  if (op->to == VS_TO_DEVICE)
    {
      if (ng > r)
        {
          guint64 missing = man_bytes (s, a, ng) - man_bytes (s, a, r);
          guint64 used = s->loc_used[LOC_DEVICE], cap = s->loc_cap[LOC_DEVICE];
          Job *wb = NULL;
          if (sat_add (used, missing) > cap)
            wb = evict_managed (s, sat_add (used, missing) - cap, &op->target, 1, NULL);
          /* Only what fits moves. */
          guint64 room = loc_free (s, LOC_DEVICE);
          guint32 r2 = ng;
          if (room < missing)
            r2 = (guint32) MIN ((guint64) ng, (man_bytes (s, a, r) + room) / eu);
          if (r2 > r)
            {
              loc_add (s, LOC_DEVICE, man_bytes (s, a, r2) - man_bytes (s, a, r));
              moved = (man_pages (s, a, r2) - man_pages (s, a, r)) * s->cfg->uvm.page;
              man_set_groups (s, a, r2);
              lru_touch (s, a);
            }
          job_after (j, wb);
          job_unref (wb);
        }
      guint p[] = { s->r_h2d, s->r_dev };
      job_add_flow (j, (double) moved, INFINITY, p, 2);
    }
  else
    {
      guint32 k = MIN (r, ng);
      moved = man_bytes (s, a, r) - man_bytes (s, a, r - k);
      man_shrink (s, a, r - k);
      guint p[] = { s->r_dev, s->r_d2h };
      job_add_flow (j, (double) moved, INFINITY, p, 2);
    }
  s->prefetch_bytes += moved;
  return j;
}

static void alloc_release (Sim *s, Alloc *a);

/* How many of OP's allocations keep running counts, LRU order and
 * written/dirty state: all of them, or none when neither the spill policy
 * nor managed memory is involved (nothing reads that state then).
 * op_run counts them in, op_complete out. */
static inline guint
op_tracked (const Sim *s, const Op *op)
{
  return op->has_managed || s->spill ? op->n_acc : 0;
}

static void
op_run (Sim *s, Op *op)
{
  op->run_t = s->now;
  for (guint i = 0, n = op_tracked (s, op); i < n; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind == VS_MEM_MANAGED && a->running == 0)
        s->man_running_bytes += man_resident (s, a);
      a->running++;
      lru_touch (s, a);
      if (op->mode[i] & ACC_W)
        {
          a->written = TRUE;
          if (!a->dirty && a->below >= 0 && a->kind == VS_MEM_DEVICE)
            {
              /* The copy below is stale now: give its room back. */
              loc_sub (s, a->below, a->charge);
              a->below = -1;
            }
          a->dirty = TRUE;
          if (a->kind == VS_MEM_MANAGED)
            a->dirty_groups = a->resident_groups;
        }
    }
  Job *j = NULL;
  switch (op->type)
    {
    case VS_OP_KERNEL:
      kernel_run (s, op, NULL);
      if (op->waiting == 0)
        op_complete (s, op);
      return;
    case VS_OP_COPY:
      j = copy_job (s, op);
      break;
    case VS_OP_MEMSET:
      {
        guint p[VS_FLOW_MAX_PATH];
        int loc = op->dst ? alloc_loc (s, op->dst) : LOC_DEVICE;
        guint n = write_path (s, loc, p);
        j = job_new (s, 0);
        job_add_flow (j, (double) op->bytes, INFINITY, p, n);
        break;
      }
    case VS_OP_PREFETCH:
      j = prefetch_job (s, op);
      break;
    case VS_OP_FREE:
      if (op->target && !op->target->freed)
        alloc_release (s, op->target);
      break;
    default:
      break;
    }
  if (j == NULL)
    {
      op->alone_ns = 0;
      op_complete (s, op);
      return;
    }
  op->alone_ns = job_alone (s, j);
  op->waiting = 1;
  completion_wait (&j->c, op_resume, op, 0);
  job_start (s, j);
}

/* Moves OP through its phases: swap-in, fault-in, run. */
static void
op_phase (Sim *s, Op *op)
{
  for (;;)
    {
      double spent = s->now - op->phase_t;
      if (op->phase == 1)
        op->swap_ns += spent;
      else if (op->phase == 2)
        op->fault_ns += spent;
      else if (op->phase == 3)
        {
          op_complete (s, op);
          return;
        }
      op->phase++;
      op->phase_t = s->now;
      op->waiting = 0;
      if (op->phase == 1)
        {
          if (s->spill)
            swap_in (s, op);
        }
      else if (op->phase == 2)
        fault_in (s, op);
      else
        {
          op_run (s, op);
          return;
        }
      if (op->waiting > 0)
        return;
    }
}

static void
op_complete (Sim *s, Op *op)
{
  if (op->c.done)
    return;
  double end = s->now;
  double run = end - op->run_t;
  double contention = MAX (0.0, run - op->alone_ns);
  /* Rounding of fluid times is not contention. */
  if (contention < 1e-6 * MAX (1.0, op->alone_ns))
    contention = 0;
  s->contention_ns += contention;
  s->swap_ns += op->swap_ns;
  s->fault_ns += op->fault_ns;
  s->ce_ns += op->ce_ns;
  s->last_end = MAX (s->last_end, end);
  for (guint i = 0, n = op_tracked (s, op); i < n; i++)
    {
      Alloc *a = op->acc[i];
      if (--a->running == 0 && a->kind == VS_MEM_MANAGED)
        s->man_running_bytes -= man_resident (s, a);
    }
  if (op->type == VS_OP_KERNEL)
    {
      const char *name = op->name ? op->name : "(unnamed)";
      /* Readers intern names: look up by address first (a small cache,
       * then the map), by text after. */
      guint ks = (GPOINTER_TO_SIZE (name) >> 4) & (KCACHE - 1);
      KernelStat *k = s->kcache[ks].k;
      if (G_UNLIKELY (s->kcache[ks].name != name))
        {
          guint64 *kp = u64map_lookup (&s->kernel_by_ptr, GPOINTER_TO_SIZE (name));
          k = kp ? GSIZE_TO_POINTER (*kp) : NULL;
        }
      if (k == NULL)
        {
          k = g_hash_table_lookup (s->kernels, name);
          if (k == NULL)
            {
              k = g_new0 (KernelStat, 1);
              k->name = name;
              g_hash_table_insert (s->kernels, (gpointer) name, k);
            }
          u64map_insert (&s->kernel_by_ptr, GPOINTER_TO_SIZE (name), GPOINTER_TO_SIZE (k));
        }
      s->kcache[ks].name = name;
      s->kcache[ks].k = k;
      k->count++;
      k->captured_ns += op->dur == VS_NONE ? 0 : i2d (op->dur);
      k->predicted_ns += end - op->ready_t;
      k->stall_ns += MAX (0.0, end - op->ready_t - op->alone_ns);
    }
  if (s->timeline && op->type != VS_OP_EVENT_RECORD && op->type != VS_OP_STREAM_WAIT)
    {
      char *nm;
      if (op->type == VS_OP_KERNEL)
        nm = json_str (op->name ? op->name : "kernel");
      else if (op->type == VS_OP_COPY)
        nm = g_strdup_printf ("\"copy %s\"", event_dir_name (op->dir));
      else
        nm = g_strdup_printf ("\"%s\"", event_op_name (op->type));
      tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":1,\"tid\":%" G_GUINT64_FORMAT
                ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"event\":%" G_GUINT64_FORMAT
                ",\"bytes\":%" G_GUINT64_FORMAT ",\"alone_ns\":%.0f,\"swap_ns\":%.0f,\"fault_ns\":%.0f,\"copy_engine_ns\":%.0f}}",
                nm, op->st->id, (op->ready_t - s->t0) / 1e3, (end - op->ready_t) / 1e3, op->index,
                op->bytes == VS_NONE ? 0 : op->bytes, op->alone_ns, op->swap_ns, op->fault_ns, op->ce_ns);
      g_free (nm);
    }
  if (op->ce >= 0)
    {
      s->ce_busy[op->ce]--;
      Op *next = g_queue_pop_head (&s->ce_queue[op->ce]);
      if (next)
        {
          next->ce_ns += s->now - next->ready_t;
          s->ce_busy[op->ce]++;
          op_begin (s, next);
        }
    }
  /* Leave the stream, wake waiters, start the next op. */
  Stream *st = op->st;
  g_assert (st->head == op);
  st->head = op->next;
  if (st->head == NULL)
    {
      st->tail = NULL;
      if (st->busy_prev) st->busy_prev->busy_next = st->busy_next; else s->busy = st->busy_next;
      if (st->busy_next) st->busy_next->busy_prev = st->busy_prev;
      st->busy_prev = st->busy_next = NULL;
    }
  op->next = NULL;
  completion_fire (s, &op->c);
  if (st->head)
    op_try_start (s, st->head);
  op_unref (op);         /* the stream's queue */
}

/* ------------------------------------------------------------------ */
/* Allocations                                                         */

static int
tag_index (Sim *s, const char *tag)
{
  if (tag == NULL)
    tag = "untagged";
  if (tag == s->last_tag)
    return s->last_tag_index;   /* readers intern strings: same text, same address */
  gpointer v;
  if (g_hash_table_lookup_extended (s->tags, tag, NULL, &v))
    {
      s->last_tag = tag;
      s->last_tag_index = GPOINTER_TO_INT (v);
      return GPOINTER_TO_INT (v);
    }
  TagStat t = { g_strdup (tag), 0, 0 };
  g_array_append_val (s->tag_stats, t);
  int i = (int) s->tag_stats->len - 1;
  g_hash_table_insert (s->tags, t.name, GINT_TO_POINTER (i));
  return i;
}

static void
alloc_release (Sim *s, Alloc *a)
{
  a->freed = TRUE;
  TagStat *t = &g_array_index (s->tag_stats, TagStat, a->tag);
  t->cur -= a->bytes;
  lru_remove (s, a);
  if (a->kind == VS_MEM_PINNED)
    loc_sub (s, s->loc_host, a->charge);
  else if (a->kind == VS_MEM_MANAGED)
    {
      if (s->cfg->unified)
        loc_sub (s, LOC_DEVICE, a->charge);
      else
        loc_sub (s, LOC_DEVICE, man_resident (s, a));
      man_set_groups (s, a, 0);
    }
  else
    {
      loc_sub (s, a->loc, a->charge);
      if (a->loc == LOC_DEVICE)
        s->dev_nonmanaged -= a->charge;
      if (a->below >= 0)
        loc_sub (s, a->below, a->charge);
      a->below = -1;
    }
  /* A is the one live under its id: do_alloc releases an id's old
   * allocation before it adds the new one. */
  slotmap_remove (&s->allocs, a->id);
  alloc_unref (a);       /* the table's */
}

/* Records the first allocation that did not fit in LOC (the device, or
 * the host for pinned and managed memory). */
static void
report_oom (Sim *s, const VsEvent *ev, int loc)
{
  if (s->oom_obj)
    return;
  s->oom = TRUE;
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "event", (double) ev->index);
  cJSON_AddNumberToObject (o, "t_ns", (double) ev->t);
  cJSON_AddNumberToObject (o, "predicted_t_ns", floor (s->now - s->t0));
  cJSON_AddNumberToObject (o, "requested", (double) ev->bytes);
  cJSON_AddNumberToObject (o, "in_use", (double) s->loc_used[loc]);
  cJSON_AddNumberToObject (o, "capacity", (double) s->loc_cap[loc]);
  cJSON_AddStringToObject (o, "memory", loc_name (s, loc));
  s->oom_obj = o;
}

/* Handles an alloc event. Returns FALSE when the replay must stop (OOM);
 * JOBS receives what the call must wait for. */
static gboolean
do_alloc (Sim *s, const VsEvent *ev, GPtrArray *jobs)
{
  Alloc *a = s->free_allocs;
  if (a != NULL)
    {
      s->free_allocs = a->lru_next;
      /* Field by field (a memset's `rep stos` costs more); the fields
       * set below are left out. */
      a->acc_gen = 0;
      a->acc_idx = a->running = 0;
      a->written = a->dirty = a->freed = a->fixed = FALSE;
      a->loc = 0;
      a->lru_prev = a->lru_next = NULL;
      a->in_lru = FALSE;
      a->moving = NULL;
      a->n_groups = a->resident_groups = a->dirty_groups = 0;
    }
  else
    a = g_new0 (Alloc, 1);
  a->pool = &s->free_allocs;
  live_link (&s->live_allocs, &a->live);
  a->refs = 1;
  a->id = ev->id;
  a->bytes = ev->bytes;
  a->kind = ev->kind;
  a->below = -1;
  a->tag = tag_index (s, ev->tag);
  if (a->kind == VS_MEM_DEVICE && s->cfg->oversubscription == VS_OVERSUB_UVM)
    a->kind = VS_MEM_MANAGED;
  a->charge = round_up (a->bytes, s->cfg->memory.alloc_granularity);
  gboolean ok = TRUE;
  int oom_loc = LOC_DEVICE;

  if (s->cfg->unified && a->kind != VS_MEM_DEVICE)
    {
      /* One pool: pinned and managed memory are charged like device memory. */
      if (loc_free (s, LOC_DEVICE) < a->charge)
        {
          if (s->opts->keep_going)
            report_oom (s, ev, LOC_DEVICE);
          else
            ok = FALSE;
        }
      if (ok)
        loc_add (s, LOC_DEVICE, a->charge);
      a->loc = LOC_DEVICE;
      if (a->kind == VS_MEM_PINNED)
        a->kind = VS_MEM_DEVICE, s->dev_nonmanaged += a->charge;
    }
  else if (a->kind == VS_MEM_PINNED)
    {
      a->charge = a->bytes;
      a->loc = s->loc_host;
      oom_loc = s->loc_host;
      if (a->charge > loc_free (s, s->loc_host))
        {
          if (s->opts->keep_going)
            report_oom (s, ev, s->loc_host);
          else
            ok = FALSE;
        }
      if (ok)
        loc_add (s, s->loc_host, a->charge);
    }
  else if (a->kind == VS_MEM_MANAGED)
    {
      /* Managed memory lives in host memory when not on the device: one
       * larger than the host cannot be allocated (this also bounds the
       * engine's per-group state). */
      a->charge = a->bytes;
      a->loc = LOC_DEVICE;
      oom_loc = s->loc_host;
      if (a->bytes > s->loc_cap[s->loc_host]
          || a->bytes / s->cfg->uvm.evict_unit >= MAX_MANAGED_GROUPS)
        ok = FALSE;
      else
        {
          a->n_groups = (guint32) ((a->bytes + s->cfg->uvm.evict_unit - 1) / s->cfg->uvm.evict_unit);
        }
    }
  else
    {
      guint64 free_b = loc_free (s, LOC_DEVICE);
      if (a->charge > free_b)
        {
          guint64 got = 0;
          Job *wb = evict_managed (s, a->charge - free_b, NULL, 0, &got);
          if (wb)
            g_ptr_array_add (jobs, wb);
          free_b += got;
        }
      if (a->charge <= free_b)
        {
          a->loc = LOC_DEVICE;
          loc_add (s, LOC_DEVICE, a->charge);
          s->dev_nonmanaged += a->charge;
        }
      else if (!s->policy->nofit (s, a, jobs))
        {
          if (s->opts->keep_going)
            {
              report_oom (s, ev, LOC_DEVICE);
              a->loc = LOC_DEVICE;
              loc_add (s, LOC_DEVICE, a->charge);
              s->dev_nonmanaged += a->charge;
            }
          else
            ok = FALSE;
        }
    }
  if (!ok)
    {
      report_oom (s, ev, oom_loc);
      s->stopped = TRUE;
      s->halt = TRUE;
      alloc_unref (a);
      return FALSE;
    }
  TagStat *t = &g_array_index (s->tag_stats, TagStat, a->tag);
  t->cur += a->bytes;
  t->peak = MAX (t->peak, t->cur);
  Alloc *old = alloc_find (s, a->id);
  if (old)
    alloc_release (s, old);
  slotmap_add (&s->allocs, a->id, GPOINTER_TO_SIZE (a));
  lru_touch (s, a);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Issuing a host event                                                */

static void
thread_issue (Sim *s, Thread *t)
{
  const VsEvent *ev = &s->ev;
  double now = s->now;
  t->s_cur = now;
  t->idle = FALSE;
  t->has_cur = FALSE;
  t->issued_t = ev->t;
  t->issued_h = ev->host_ns;
  t->issued_op = ev->op;
  double f = now + i2d (ev->host_ns);
  t->waits = 0;
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      {
        GPtrArray *jobs = jobs_take (s);
        gboolean ok = do_alloc (s, ev, jobs);
        for (guint i = 0; i < jobs->len; i++)
          {
            Job *j = jobs->pdata[i];
            thread_block_on (t, &j->c);
            job_unref (j);
          }
        jobs_give (s, jobs);
        if (!ok)
          {
            s->last_end = MAX (s->last_end, now);
            return;
          }
        break;
      }
    case VS_OP_FREE:
      if (ev->has_stream)
        {
          op_issue (s, ev);
        }
      else
        {
          Alloc *a = alloc_lookup (s, ev->id);
          if (a)
            alloc_release (s, a);
        }
      break;
    case VS_OP_COPY:
    case VS_OP_MEMSET:
    case VS_OP_KERNEL:
    case VS_OP_PREFETCH:
    case VS_OP_EVENT_RECORD:
    case VS_OP_STREAM_WAIT:
      {
        Op *op = op_issue (s, ev);
        if ((ev->op == VS_OP_COPY || ev->op == VS_OP_MEMSET) && !ev->async)
          {
            thread_block_on (t, &op->c);
            f = now;   /* returns when the work is done (below) */
          }
        break;
      }
    case VS_OP_SYNC:
      f = now;
      if (ev->scope == VS_SYNC_DEVICE)
        {
          /* A stream with nothing queued has finished its last op. */
          for (Stream *st = s->busy; st; st = st->busy_next)
            thread_block_on (t, &st->last->c);
        }
      else if (ev->scope == VS_SYNC_STREAM)
        {
          Stream *st = stream_find (s, ev->stream);
          if (st && st->last)
            thread_block_on (t, &st->last->c);
        }
      else
        {
          Op *rec = event_find (s, ev->event);
          if (rec)
            thread_block_on (t, &rec->c);
        }
      break;
    case VS_OP_MARK:
      {
        mark_close (s, t, now, ev->t);
        const char *name = ev->name ? ev->name : "";
        MarkStat *m = g_hash_table_lookup (s->marks, name);
        if (m == NULL)
          {
            m = g_new0 (MarkStat, 1);
            m->name = g_strdup (name);
            g_hash_table_insert (s->marks, (gpointer) m->name, m);
          }
        m->count++;
        t->mark_name = m->name;
        t->mark_t = now;
        t->mark_t_cap = ev->t;
        if (s->timeline)
          {
            char *nm = json_str (name);
            tl_event (s, "{\"name\":%s,\"ph\":\"i\",\"s\":\"p\",\"pid\":2,\"tid\":%u,\"ts\":%.3f}",
                      nm, t->tid, (now - s->t0) / 1e3);
            g_free (nm);
          }
        break;
      }
    default:
      break;
    }
  /* A blocking call returns at f = max(s, the awaited work's end) (5.2),
   * in thread_wait_done; one whose work is already done returns now (f
   * was set to now above). */
  if (t->waits == 0)
    thread_finish (s, t, f);
  /* Done with ev: the next event of the trace may now be read into it. */
  reader_advance (s);
}

/* ------------------------------------------------------------------ */
/* Main loop                                                           */

static void
on_flow_done (gpointer user, gpointer owner, guint64 tag)
{
  Sim *s = user;
  if (tag == 1)
    {
      Job *j = owner;
      if (--j->pending == 0)
        job_finish (s, j);
    }
  else
    {
      Op *op = owner;
      if (--op->waiting == 0)
        op_complete (s, op);
    }
}

static inline void
progress (Sim *s)
{
  if (G_LIKELY (s->n_events < s->next_progress))
    return;
  s->last_progress = s->n_events;
  s->next_progress = s->n_events + 1000000;
  fprintf (stderr, "\rvramsim: replayed %" G_GUINT64_FORMAT " events", s->n_events);
}

static void
sim_loop (Sim *s)
{
  VsEvqItem it;
  while (!s->halt)
    {
      double te = evq_peek_time (s->q);
      double tf = flow_net_next_end (s->net);
      double ti = s->issue_t;
      if (tf <= te && tf <= ti)
        {
          if (G_UNLIKELY (isinf (tf)))
            break;   /* all three are: nothing left to do */
          s->now = MAX (s->now, tf);
          flow_net_finish_due (s->net, s->now, on_flow_done, s);
        }
      else if (ti < te)
        {
          Thread *t = s->issue_thread;
          s->issue_thread = NULL;
          s->issue_t = INFINITY;
          s->now = MAX (s->now, ti);
          thread_issue (s, t);
          progress (s);
        }
      else
        {
          evq_pop (s->q, &it);
          s->now = MAX (s->now, it.t);
          switch (it.kind)
            {
            case EQ_OP_RETRY:
              {
                Op *op = it.obj;
                op->retry_pending = FALSE;
                op_try_start (s, op);
                op_unref (op);
                break;
              }
            case EQ_JOB_DELAY:
              job_run_flows (s, it.obj);
              break;
            }
        }
    }
  if (s->opts->progress && s->last_progress)
    fputc ('\n', stderr);
}

/* ------------------------------------------------------------------ */
/* Setup, report, teardown                                             */

static void
sim_setup (Sim *s)
{
  const VsConfig *c = s->cfg;
  s->ops_made = g_ptr_array_new ();
  s->live_jobs.next = s->live_jobs.prev = &s->live_jobs;
  s->live_allocs.next = s->live_allocs.prev = &s->live_allocs;
  s->q = evq_new ();
  s->issue_t = INFINITY;
  s->cap_first_t = G_MAXUINT64;   /* note_captured */
  s->next_progress = s->opts->progress ? 1000000 : G_MAXUINT64;
  s->net = flow_net_new ();
  s->b_dev = c->memory.bandwidth * c->memory.efficiency;
  s->b0_dev = s->cap_cfg->memory.bandwidth * s->cap_cfg->memory.efficiency;
  s->ns_per_byte0 = 1e9 / s->b0_dev;
  s->ns_per_byte = 1e9 / s->b_dev;
  s->tflops_scale = s->cap_cfg->tflops / c->tflops;
  s->pageable_cap = c->link.bandwidth * c->link.pageable_efficiency;
  s->r_sm = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_SM], 1.0);
  s->r_dev = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_DEVICE_MEM], s->b_dev);
  if (!c->unified)
    {
      double l = c->link.bandwidth * c->link.efficiency;
      s->r_h2d = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_LINK_H2D], l);
      s->r_d2h = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_LINK_D2H], l);
    }
  else
    s->r_h2d = s->r_d2h = s->r_dev;
  s->r_tier0 = flow_net_n_resources (s->net);
  for (guint i = 0; i < c->n_tiers; i++)
    flow_net_add_resource (s->net, c->tiers[i].name, c->tiers[i].bandwidth * c->tiers[i].efficiency);
  s->r_host = c->unified ? s->r_dev : flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_HOST_MEM], c->host.bandwidth);

  s->loc_host = (int) c->n_tiers + 1;
  s->n_locs = c->n_tiers + 2;
  s->loc_cap = g_new0 (guint64, s->n_locs);
  s->loc_used = g_new0 (guint64, s->n_locs);
  s->loc_peak = g_new0 (guint64, s->n_locs);
  s->res_cur_t = g_new0 (double, s->n_locs);
  s->parts = g_new (Part, 2 * s->n_locs);
  s->loc_cap[LOC_DEVICE] = c->memory.capacity > c->memory.reserved ? c->memory.capacity - c->memory.reserved : 0;
  for (guint i = 0; i < c->n_tiers; i++)
    s->loc_cap[LOC_TIER (i)] = c->tiers[i].capacity;
  s->loc_cap[s->loc_host] = c->unified ? 0 : c->host.capacity;
  s->policy = &policies[c->oversubscription];
  s->spill = c->oversubscription == VS_OVERSUB_SPILL;
  s->dev_only = !c->unified && (c->oversubscription == VS_OVERSUB_OOM || c->oversubscription == VS_OVERSUB_UVM);

  slotmap_init (&s->allocs);
  s->threads = g_hash_table_new (NULL, NULL);
  s->thread_list = g_ptr_array_new ();
  u64map_init (&s->streams);
  s->stream_list = g_ptr_array_new ();
  u64map_init (&s->events);
  s->tags = g_hash_table_new (g_str_hash, g_str_equal);
  s->tag_stats = g_array_new (FALSE, FALSE, sizeof (TagStat));
  s->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  u64map_init (&s->kernel_by_ptr);
  s->marks = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&s->ce_queue[0]);
  g_queue_init (&s->ce_queue[1]);
}

static void
mark_free (gpointer p)
{
  MarkStat *m = p;
  g_free ((char *) m->name);
  g_free (m);
}

static void
sim_teardown (Sim *s)
{
  /* Free every op, job and allocation still alive, whatever holds them. */
  for (guint i = 0; i < s->ops_made->len; i++)
    {
      Op *op = s->ops_made->pdata[i];
      if (op->c.waiters)
        g_array_free (op->c.waiters, TRUE);
      if (op->acc != op->acc_inline)
        {
          g_free (op->acc);
          g_free (op->mode);
        }
      g_free (op);
    }
  g_ptr_array_free (s->ops_made, TRUE);
  while (s->free_allocs)
    {
      Alloc *a = s->free_allocs;
      s->free_allocs = a->lru_next;
      g_free (a);
    }
  while (s->free_jobs)
    {
      Job *j = s->free_jobs;
      s->free_jobs = j->next_free;
      g_free (j);
    }
  while (s->live_jobs.next != &s->live_jobs)
    {
      Job *j = (Job *) s->live_jobs.next;
      live_unlink (&j->live);
      if (j->c.waiters)
        g_array_free (j->c.waiters, TRUE);
      g_free (j);
    }
  while (s->live_allocs.next != &s->live_allocs)
    {
      Alloc *a = (Alloc *) (gpointer) ((char *) s->live_allocs.next - offsetof (Alloc, live));
      live_unlink (&a->live);
      g_free (a);
    }
  u64map_clear (&s->events);
  for (guint i = 0; i < s->stream_list->len; i++)
    g_free (s->stream_list->pdata[i]);
  g_ptr_array_free (s->stream_list, TRUE);
  u64map_clear (&s->streams);
  for (guint i = 0; i < s->thread_list->len; i++)
    {
      Thread *t = s->thread_list->pdata[i];
      g_free (t);
    }
  g_ptr_array_free (s->thread_list, TRUE);
  g_hash_table_destroy (s->threads);
  slotmap_clear (&s->allocs);
  g_hash_table_destroy (s->tags);
  for (guint i = 0; i < s->tag_stats->len; i++)
    g_free (g_array_index (s->tag_stats, TagStat, i).name);
  g_array_free (s->tag_stats, TRUE);
  g_hash_table_destroy (s->kernels);
  u64map_clear (&s->kernel_by_ptr);
  GList *ms = g_hash_table_get_values (s->marks);
  g_list_free_full (ms, mark_free);
  g_hash_table_destroy (s->marks);
  g_queue_clear (&s->ce_queue[0]);
  g_queue_clear (&s->ce_queue[1]);
  evq_free (s->q);
  flow_net_free (s->net);
  g_free (s->loc_cap);
  g_free (s->loc_used);
  g_free (s->loc_peak);
  g_free (s->res_cur_t);
  g_free (s->parts);
  if (s->jobs_spare)
    g_ptr_array_free (s->jobs_spare, TRUE);
  if (s->series)
    {
      g_array_free (s->series->sums, TRUE);
      g_free (s->series);
    }
  cJSON_Delete (s->oom_obj);
}

static GPtrArray *
table_values (GHashTable *h)
{
  GPtrArray *a = g_ptr_array_new ();
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, h);
  while (g_hash_table_iter_next (&it, NULL, &v))
    g_ptr_array_add (a, v);
  return a;
}

static gint
kernel_cmp (gconstpointer a, gconstpointer b)
{
  const KernelStat *x = *(KernelStat *const *) a, *y = *(KernelStat *const *) b;
  if (x->predicted_ns != y->predicted_ns)
    return x->predicted_ns > y->predicted_ns ? -1 : 1;
  return g_strcmp0 (x->name, y->name);
}

static gint
mark_cmp (gconstpointer a, gconstpointer b)
{
  const MarkStat *x = *(MarkStat *const *) a, *y = *(MarkStat *const *) b;
  return g_strcmp0 (x->name, y->name);
}

#define KERNELS_TOP 20

static cJSON *
sim_report (Sim *s, double makespan)
{
  const VsConfig *c = s->cfg;
  cJSON *r = cJSON_CreateObject ();
  cJSON_AddNumberToObject (r, "vramsim_report", 1);
  cJSON_AddStringToObject (r, "status", s->oom && !s->opts->keep_going ? "oom" : "ok");
  cJSON_AddStringToObject (r, "config", c->name ? c->name : "");
  cJSON_AddStringToObject (r, "capture_config", s->cap_cfg->name ? s->cap_cfg->name : "");
  cJSON_AddStringToObject (r, "trace", s->opts->trace_name ? s->opts->trace_name : trace_reader_path (s->reader));
  cJSON_AddStringToObject (r, "policy", config_oversub_name (c->oversubscription));
  cJSON_AddNumberToObject (r, "events", (double) s->n_events);

  double captured = s->cap_have ? (double) (s->cap_last_end - s->cap_first_t) : 0;
  cJSON *t = cJSON_AddObjectToObject (r, "time");
  cJSON_AddNumberToObject (t, "captured_ns", captured);
  cJSON_AddNumberToObject (t, "predicted_ns", round (makespan));
  cJSON_AddNumberToObject (t, "slowdown", captured > 0 ? round (makespan) / captured : 0);

  cJSON *h = cJSON_AddObjectToObject (r, "host");
  cJSON_AddNumberToObject (h, "blocked_ns", round (s->blocked_ns));
  cJSON_AddNumberToObject (h, "threads", s->thread_list->len);

  cJSON *st = cJSON_AddObjectToObject (r, "stalls");
  cJSON_AddNumberToObject (st, "contention_ns", round (s->contention_ns));
  cJSON_AddNumberToObject (st, "fault_ns", round (s->fault_ns));
  cJSON_AddNumberToObject (st, "swap_ns", round (s->swap_ns));
  cJSON_AddNumberToObject (st, "copy_engine_ns", round (s->ce_ns));

  cJSON *m = cJSON_AddObjectToObject (r, "memory");
  cJSON *tiers = cJSON_AddArrayToObject (m, "tiers");
  for (guint loc = 0; loc < s->n_locs; loc++)
    {
      if (c->unified && (int) loc == s->loc_host)
        continue;
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", loc_name (s, (int) loc));
      cJSON_AddNumberToObject (o, "capacity", (double) s->loc_cap[loc]);
      cJSON_AddNumberToObject (o, "peak_bytes", (double) s->loc_peak[loc]);
      cJSON_AddItemToArray (tiers, o);
    }
  cJSON *tags = cJSON_AddArrayToObject (m, "tags");
  for (guint i = 0; i < s->tag_stats->len; i++)
    {
      TagStat *ts = &g_array_index (s->tag_stats, TagStat, i);
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "tag", ts->name);
      cJSON_AddNumberToObject (o, "peak_bytes", (double) ts->peak);
      cJSON_AddItemToArray (tags, o);
    }
  cJSON_AddNumberToObject (m, "overflow_bytes", (double) s->overflow_peak);

  cJSON *tr = cJSON_AddObjectToObject (r, "traffic");
  cJSON_AddNumberToObject (tr, "h2d_bytes", (double) s->h2d_bytes);
  cJSON_AddNumberToObject (tr, "d2h_bytes", (double) s->d2h_bytes);
  cJSON_AddNumberToObject (tr, "swap_out_bytes", (double) s->swap_out_bytes);
  cJSON_AddNumberToObject (tr, "swap_in_bytes", (double) s->swap_in_bytes);
  cJSON_AddNumberToObject (tr, "fault_bytes", (double) s->fault_bytes);
  cJSON_AddNumberToObject (tr, "faults", (double) s->faults);
  cJSON_AddNumberToObject (tr, "writeback_bytes", (double) s->writeback_bytes);
  cJSON_AddNumberToObject (tr, "prefetch_bytes", (double) s->prefetch_bytes);

  cJSON *res = cJSON_AddArrayToObject (r, "resources");
  for (guint i = 0; i < flow_net_n_resources (s->net); i++)
    {
      VsResourceStats rs;
      flow_net_resource_stats (s->net, i, &rs);
      double cap = flow_net_resource_capacity (s->net, i);
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", flow_net_resource_name (s->net, i));
      cJSON_AddNumberToObject (o, "capacity_bps", cap);
      /* For sm the amount is GPU-time: reported in GPU-ns. */
      cJSON_AddNumberToObject (o, "bytes", round (i == s->r_sm ? rs.bytes * 1e9 : rs.bytes));
      cJSON_AddNumberToObject (o, "busy_ns", round (rs.busy_ns));
      cJSON_AddNumberToObject (o, "utilization_mean", makespan > 0 ? rs.bytes / (cap * makespan * 1e-9) : 0);
      cJSON_AddNumberToObject (o, "saturated_ns", round (rs.saturated_ns));
      cJSON_AddItemToArray (res, o);
    }

  cJSON *k = cJSON_AddObjectToObject (r, "kernels");
  GPtrArray *ks = table_values (s->kernels);
  g_ptr_array_sort (ks, kernel_cmp);
  cJSON_AddNumberToObject (k, "distinct", ks->len);
  cJSON *top = cJSON_AddArrayToObject (k, "top");
  for (guint i = 0; i < ks->len && i < KERNELS_TOP; i++)
    {
      KernelStat *ki = ks->pdata[i];
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", ki->name);
      cJSON_AddNumberToObject (o, "count", (double) ki->count);
      cJSON_AddNumberToObject (o, "captured_ns", round (ki->captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (ki->predicted_ns));
      cJSON_AddNumberToObject (o, "stall_ns", round (ki->stall_ns));
      cJSON_AddItemToArray (top, o);
    }
  g_ptr_array_free (ks, TRUE);

  cJSON *marks = cJSON_AddArrayToObject (r, "marks");
  GPtrArray *ms = table_values (s->marks);
  g_ptr_array_sort (ms, mark_cmp);
  for (guint i = 0; i < ms->len; i++)
    {
      MarkStat *mi = ms->pdata[i];
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", mi->name);
      cJSON_AddNumberToObject (o, "count", (double) mi->count);
      cJSON_AddNumberToObject (o, "captured_ns", round (mi->captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (mi->predicted_ns));
      cJSON_AddItemToArray (marks, o);
    }
  g_ptr_array_free (ms, TRUE);

  if (s->oom_obj)
    {
      cJSON_AddItemToObject (r, "oom", s->oom_obj);
      s->oom_obj = NULL;
    }
  if (s->unknown_refs)
    cJSON_AddNumberToObject (r, "unresolved_refs", (double) s->unknown_refs);
  return r;
}

/* Writes the series CSV (SERIES: one column per location, then per resource). */
static gboolean
series_write (Sim *s, const char *path, double makespan, GError **error)
{
  Series *se = s->series;
  for (guint loc = 0; loc < s->n_locs; loc++)
    series_add (se, loc, s->res_cur_t[loc] - s->t0, makespan, (double) s->loc_used[loc]);
  GString *out = g_string_new ("t_ns,dt_ns");
  for (guint loc = 0; loc < s->n_locs; loc++)
    if (!(s->cfg->unified && (int) loc == s->loc_host))
      g_string_append_printf (out, ",resident_%s_bytes", loc_name (s, (int) loc));
  for (guint i = 0; i < flow_net_n_resources (s->net); i++)
    g_string_append_printf (out, ",util_%s", flow_net_resource_name (s->net, i));
  g_string_append_c (out, '\n');
  const double *v = (const double *) se->sums->data;
  guint n = se->n_buckets;
  for (guint b = 0; b < n; b++)
    {
      double lo = b * se->dt, hi = MIN ((b + 1) * se->dt, makespan);
      double w = hi - lo;
      if (w <= 0)
        break;
      g_string_append_printf (out, "%.0f,%.0f", lo, w);
      for (guint col = 0; col < se->n_cols; col++)
        {
          if (col < s->n_locs)
            {
              if (s->cfg->unified && (int) col == s->loc_host)
                continue;
              g_string_append_printf (out, ",%.0f", v[b * se->n_cols + col] / w);
            }
          else
            g_string_append_printf (out, ",%.4f", v[b * se->n_cols + col] / w);
        }
      g_string_append_c (out, '\n');
    }
  gboolean ok = fileio_write_atomic (path, out->str, out->len, error);
  g_string_free (out, TRUE);
  return ok;
}

static gboolean
timeline_open (Sim *s, const char *path, GError **error)
{
  s->timeline_tmp = g_strdup_printf ("%s.tmp.%d", path, (int) getpid ());
  s->timeline = fopen (s->timeline_tmp, "w");
  if (s->timeline == NULL)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: cannot write: %s", path, g_strerror (e));
      g_clear_pointer (&s->timeline_tmp, g_free);
      return FALSE;
    }
  fputs ("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", s->timeline);
  s->timeline_first = TRUE;
  char *cfg = json_str (s->cfg->name);
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"GPU (predicted, %s)\"}}",
            s->cfg->name ? s->cfg->name : "");
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"host threads\"}}");
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"GPU (captured, start estimated)\"}}");
  g_free (cfg);
  return TRUE;
}

static gboolean
timeline_close (Sim *s, const char *path, gboolean ok, GError **error)
{
  if (s->timeline == NULL)
    return ok;
  fputs ("\n]}\n", s->timeline);
  gboolean wrote = fflush (s->timeline) == 0;
  wrote &= fclose (s->timeline) == 0;
  s->timeline = NULL;
  if (ok && !wrote)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write failed", path);
      ok = FALSE;
    }
  if (ok && g_rename (s->timeline_tmp, path) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
      ok = FALSE;
    }
  if (!ok)
    g_unlink (s->timeline_tmp);
  g_clear_pointer (&s->timeline_tmp, g_free);
  return ok;
}

cJSON *
replay_run (VsTraceReader *reader, const VsConfig *target, const VsConfig *capture,
            const VsReplayOptions *opts, GError **error)
{
  static const VsReplayOptions defaults = { 0 };
  Sim sim = { 0 };
  Sim *s = &sim;
  s->cfg = target;
  s->cap_cfg = capture ? capture : target;
  s->opts = opts ? opts : &defaults;
  s->reader = reader;
  sim_setup (s);
  if (s->opts->series_path)
    {
      s->series = g_new0 (Series, 1);
      s->series->fixed = s->opts->series_dt_ns > 0;
      s->series->dt = s->series->fixed ? s->opts->series_dt_ns : 1000.0;
      s->series->n_cols = s->n_locs + flow_net_n_resources (s->net);
      s->series->sums = g_array_new (FALSE, TRUE, sizeof (double));
      flow_net_set_observer (s->net, on_load, s);
    }
  if (s->opts->timeline_path && !timeline_open (s, s->opts->timeline_path, error))
    {
      sim_teardown (s);
      return NULL;
    }
  s->issue_extra = s->timeline != NULL || s->cfg->gpu.legacy_default_stream;

  reader_advance (s);
  sim_loop (s);
  if (s->error == NULL && s->stopped)
    {
      /* An OOM stop: drain the reader so that bad input after the stop
       * still fails, and the event count is the trace's. */
      VsEvent ev;
      while (trace_next (reader, &ev, &s->error))
        {
          s->n_events++;
          note_captured (s, &ev);
        }
    }
  double end = MAX (s->last_end, s->now);
  flow_net_settle (s->net, end);
  double makespan = s->have_t0 ? end - s->t0 : 0;
  cJSON *report = NULL;
  gboolean ok = s->error == NULL;
  if (!ok)
    g_propagate_error (error, s->error);
  else
    report = sim_report (s, makespan);
  if (ok && s->series && !series_write (s, s->opts->series_path, makespan, error))
    ok = FALSE;
  if (!timeline_close (s, s->opts->timeline_path, ok, ok ? error : NULL))
    ok = FALSE;
  if (!ok)
    g_clear_pointer (&report, cJSON_Delete);
  sim_teardown (s);
  return report;
}
