/* sim-priv.h — the replay engine's shared state and the parts' interfaces
 * (private to sim/engine/replay.c, the one translation unit that
 * #includes every part: docs/architecture.md).
 *
 * The engine is one translation unit so that its hot paths inline across
 * parts (docs/performance.md); each part is a file of one job under the
 * room it belongs to (sim/engine, sim/mem, sim/model, sim/out), named
 * NAME.part.c, which the Makefile does not compile alone. The prototypes
 * at the end list what each part offers the others. */
#pragma once

#include "base/jsonw.h"
#include "engine/replay.h"
#include "mem/allocator.h"

#include <errno.h>
#include <stddef.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/evq.h"
#include "base/outfile.h"
#include "flow/flow.h"
#include "base/slotmap.h"
#include "base/units.h"
#include "model/network.h"
#include "model/kernel-model.h"
#include "trace/trace-infer.h"

typedef struct Sim Sim;
typedef struct Op Op;
typedef struct Job Job;
typedef struct Thread Thread;
typedef struct Alloc Alloc;
typedef struct Stream Stream;
typedef struct GpuFront GpuFront;   /* out/gpu-steps.part.c */

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
  int refs;
  Waiter w0;            /* most completions have at most one waiter */
  Waiter *more;         /* the others (only when w0 is taken): n_more in
                         * room for cap_more, made on demand and kept
                         * (emptied) when fired, for the op or job it is
                         * recycled as (refs.part.c) */
  guint32 n_more, cap_more;
} Completion;

/* Every job and allocation is on a live list (a circular list with a
 * sentinel in Sim), so that a replay stopped early (OOM) frees everything
 * whatever references are still held. Live is the first member of jobs;
 * an allocation's hot fields come first (its `live` is found with
 * offsetof). Ops, one per GPU event, are kept in Sim.gpu.ops_made instead:
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
#define LOC_NONE (-1)          /* no location (Alloc.below: no copy kept below) */

/* Alloc.home until the first op of an allocation whose event named no
 * stream (stream ids are below 2^63). */
#define AMODEL_HOME_UNKNOWN G_MAXUINT64

struct Alloc {
  /* Hot: what every op that uses it reads or writes (one cache line). */
  guint64 id;            /* key in Sim.mem.allocs */
  guint64 bytes;
  guint64 acc_gen;       /* acc_add's deduplication stamp */
  guint acc_idx;
  guint running;         /* running ops using it */
  guint8 kind;           /* effective VsMemKind */
  gboolean written, dirty;
  gboolean freed;
  int loc;               /* LOC_DEVICE, LOC_TIER(k), or s->mem.loc_host */
  int below;             /* loc of a clean copy kept below, or LOC_NONE */
  int refs;
  gboolean fixed;        /* placed by `direct`: never moves */
  gboolean via_model;    /* charged through the allocator model (its segments are the device charge) */
  gboolean model_freed;  /* via_model: the host freed it, the model has its block back */
  gboolean start_device; /* managed: untouched pages are created on the device (5.7 first touch) */
  gboolean touched;      /* managed: some page has been faulted in */
  guint users;           /* issued ops that access it and have not completed */
  gboolean free_deferred;  /* managed, freed by the host before its users ran: released when they end */
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
  /* via_model: the stream it was allocated on and the other streams its
   * ops ran on (what record_stream records: alloc-streams.part.c) */
  guint64 home;          /* AMODEL_HOME_UNKNOWN: the event named none, and no op has used it */
  guint64 use_mask;      /* bit i: Sim.gpu.stream_list[i] (i < 64) */
  GPtrArray *uses;       /* the other streams after the 64th (Stream*), or NULL */
  guint model_waits;     /* freed: ops on other streams its block waits for */
  gboolean model_pending;  /* freed: its block is the model's pending one under its id */
  gboolean pool_named;   /* via_model: its event named a stream (else the model's pools key it by 0) */
  guint64 dem;           /* what it adds to the device demand outside the allocator model (demand.part.c) */
  gboolean dem_fixed;    /* dem is fixed on the device (pinned memory of a unified machine) */
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

struct Stream {
  guint64 id;
  Op *head, *tail;
  Op *last;              /* last issued op (ref) */
  guint64 cap_end;       /* estimated end of its last op at capture */
  struct FreeBatch *fb;  /* freed blocks waiting for its last op (alloc-streams.part.c), or NULL */
  guint idx;             /* its index in Sim.gpu.stream_list */
  guint64 bit;           /* 1 << idx below 64, else 0 (Alloc.use_mask) */
  Stream *busy_prev, *busy_next;  /* on Sim.gpu.busy while ops are queued */
};

#define OP_INLINE_ACC 6
/* Managed allocations of more evict units are refused (OOM): the counts
 * are 32-bit. */
#define MAX_MANAGED_GROUPS (1u << 31)
/* How an op uses one of its allocations (Op.mode): bits. A touch reads
 * and writes it without traffic of its own (5.4: it counts for residency
 * and dirtiness, not for the kernel's bytes). */
enum { ACC_R = 1, ACC_W = 2, ACC_TOUCH = 4 };
/* Op.kinds: the kernel's accesses are inferred (docs/model.md 6b: ACC_R /
 * ACC_W for residency and dirtiness only, no traffic of their own unless
 * they lie below, kernel_infer_parts). A bit of kinds, which every op
 * clears anyway (acc_begin), above the memory kinds' bits. */
#define OP_INFERRED (1u << 8)
G_STATIC_ASSERT (VS_MEM_COUNT <= 8);

/* An op's phases (Op.phase), in order: op_phase moves it from one to the
 * next; an op that needs neither swap-in nor fault-in goes straight to
 * running (op_begin). */
typedef enum {
  PHASE_QUEUED,          /* waiting on its stream, dependencies, a copy engine */
  PHASE_SWAP_IN,         /* spilled allocations coming back (the spill policy) */
  PHASE_FAULT_IN,        /* managed pages faulting in */
  PHASE_RUNNING,         /* its flows or job under way */
} OpPhase;

/* Who owns a flow (flow_start's tag, read back in on_flow_done): an op
 * (a kernel's compute and memory flows) or a job (a copy, a move, a
 * fault's migration). */
enum { FLOW_OP = 0, FLOW_JOB = 1 };

#define CE_NONE (-1)           /* Op.ce: the op needs no copy engine */

struct Op {
  Completion c;
  guint8 type;           /* VsOp */
  guint8 dir, to;
  guint8 async;
  guint8 retry_pending, started;
  guint8 has_managed;    /* some of acc is managed memory (fault_in has work) */
  guint8 has_pinned;     /* some of acc is pinned host memory */
  gint8 ce;              /* copy-engine pool (0 h2d, 1 the others), or CE_NONE */
  guint8 phase;          /* OpPhase */
  guint8 kbound;         /* kernel: VsKernelBound of its prediction (kernel_run) */
  int deps;
  int waiting;
  guint32 n_acc, acc_cap;
  guint64 index;
  Stream *st;
  Op *next;
  guint kinds;           /* 1 << kind of each allocation in acc, and OP_INFERRED */
  double issue_t, ready_t, phase_t, run_t, alone_ns;
  double swap_ns, fault_ns, ce_ns;
  guint64 bytes, dur, compute_ns;
  guint64 flops;         /* kernel: its shape's flops, VS_NONE if absent */
  const VsKernelFactors *kf;  /* kernel: the model's factors for its name and shape (kernel_factors) */
  const char *name;
  gboolean has_coll;     /* kernel: coll is its collective (SPEC 3) */
  VsCollective coll;
  Alloc **acc;           /* acc_inline, or allocated when longer */
  guint8 *mode;
  Alloc *src, *dst;      /* copy (host side may be NULL = pageable) */
  Alloc *target;         /* prefetch, stream-ordered free */
  Op **pool;             /* the free list it returns to */
  /* Last: not cleared when an op is recycled (acc_add fills them). */
  Alloc *acc_inline[OP_INLINE_ACC];
  guint8 mode_inline[OP_INLINE_ACC];
};

struct Thread {
  guint32 tid;
  gboolean has_cur;      /* the read-ahead event (Sim.core.ev) is this thread's */
  gboolean idle;         /* its last call has returned */
  gboolean ended;
  guint64 issued_t, issued_h;  /* capture t and host_ns of the call in progress,
                                * or of the last call once it returned (idle) */
  double wait_h;         /* a blocked call returns at max(s_cur + wait_h, the wake):
                          * 0 for a sync, host_ns for a wait the capture's
                          * host_ns already holds (launch queue, allocator) */
  guint8 issued_op;
  gboolean has_prev;
  double f_prev, s_cur;
  int waits;
  struct MarkStat *mark; /* the open point mark, or NULL */
  GpuFront *mark_front;  /* the GPU's frontier when it was reached (a reference) */
  double mark_waited;    /* waited_ns when it was reached */
  double waited_ns;      /* time this thread waited: its calls blocked (its share of
                          * host.blocked_ns), and its calls' issue held for other
                          * threads' (the captured order: docs/model.md 2) */
  double mark_t;
  guint64 mark_t_cap;
  GArray *open_marks;    /* OpenMark: marks a NAME/end may close, innermost last, from open_first */
  guint open_first;      /* the oldest still open (those before it were dropped: out/marks.part.c) */
  gboolean tl_named;     /* its timeline track has its thread_name */
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

/* One mark name (out/marks.part.c). A mark is a point — timed to its
 * thread's next mark — unless a NAME/end on its thread closes it: then
 * the pair is a range, timed start to end (docs/trace-format.md). */
typedef struct MarkStat {
  const char *name;
  guint64 count;                 /* points reached */
  double predicted_ns, captured_ns;
  GArray *pred, *cap;            /* point samples (double ns), at most MARK_SAMPLES */
  guint64 ranges;                /* NAME ... NAME/end pairs closed */
  double range_pred_ns, range_cap_ns;
  GArray *range_pred, *range_cap;
  /* The GPU's frontier and busy time at each sample's start and end (four
   * doubles a sample, NAN until known: out/gpu-steps.part.c), and the
   * thread's own time in it (the sample less its blocked time), for the
   * point and range samples. */
  GArray *gpu, *range_gpu, *own, *range_own;
} MarkStat;

/* A mark that a NAME/end may still close. */
typedef struct {
  MarkStat *m;
  double t;
  guint64 cap_t;
  GpuFront *front;       /* the GPU's frontier at its start (a reference) */
  double waited;         /* its thread's waited_ns at its start */
  gboolean crossed;      /* an older range of its thread ended inside it: the timeline
                          * cannot nest it (out/timeline.part.c, timeline_range) */
} OpenMark;

/* Collectives of one kind, for the report's network.kinds[]. */
typedef struct {
  guint64 count, bytes;
  double captured_ns, predicted_ns;
} CollStat;

/* One communicator of the trace (collective.group) as replayed. */
typedef struct {
  CollStat st;
  guint64 id;
  guint32 captured_ranks, ranks;  /* the trace's size, the replay's */
  guint8 role;
} CollGroup;

/* An oversubscription policy (sim/mem/policy*.part.c): its hooks, and
 * the flags it sets at setup, which the per-event code reads inline from
 * s->mem. */
typedef struct {
  const char *name;            /* as in the config ("oom", "spill", ...) */
  gboolean spill;              /* device memory can leave the device: swap-in before an op, lru_dev kept */
  gboolean dev_only;           /* device and managed memory are always reached on the device
                                * (unless the machine is unified) */
  gboolean device_is_managed;  /* device allocations are made managed memory */
  /* A device allocation A does not fit once managed memory is evicted:
   * place it (TRUE, with the jobs to wait for added to JOBS) or not (OOM). */
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

/* The engine's state, in one sub-struct per concern, so that what a part
 * reaches shows in its code: s->core (the clock, the queue, the flow
 * network, the trace), s->host (host threads), s->gpu (resources,
 * streams, ops, copy engines), s->mem (locations, allocations, LRU, the
 * policy's flags), s->stats (what the report counts) and s->out (the
 * --series and --timeline observers). */
struct Sim {
  struct {
    const VsConfig *cfg, *cap_cfg;
    gboolean cap_assumed;      /* no capture config given or named: the target stands in (report_warnings) */
    const VsReplayOptions *opts;
    VsTraceReader *reader;     /* what the replay reads: the trace's, or infer's while it infers */
    VsTraceReader *trace;      /* the trace's reader */
    /* Inferred accesses (model.touches, docs/model.md 6b): events come
     * through infer_reader (reader) while infer is not NULL; once it
     * passes everything through, reader is the trace's again, infer
     * NULL, its figures in infer_st (infer_done frees it at teardown). */
    VsInfer *infer, *infer_done;
    VsInferStats infer_st;
    /* The one event read ahead: it stays valid (the reader's buffers with
     * it) until the next trace_next, which comes only after it is issued. */
    VsEvent ev;
    GError *error;
    VsEvq *q;
    VsFlowNet *net;
    double now, t0;
    gboolean stopped, oom, have_t0, eof;
    gboolean halt;         /* stopped, or error set: the main loop ends */
    gboolean sample_stop;  /* --sample-steps: steady; read no more (engine/sample.part.c) */
    Live live_jobs, live_allocs;
    Job *free_jobs;
    GPtrArray *jobs_spare;
  } core;

  struct {
    GHashTable *threads;   /* tid -> Thread* */
    GPtrArray *thread_list;
    Thread *last_thread;   /* the last thread_get: events come in runs */
    Thread *prev_thread;   /* the one before it (thread_get_slow) */
    Thread *issue_thread;  /* the thread whose call is issued next, at issue_t */
    double issue_t;        /* INFINITY while issue_thread is NULL */
    GQueue lq_waiters;     /* threads whose launch waits for the launch queue, first first */
  } host;

  struct {
    /* resources */
    guint r_sm, r_dev, r_h2d, r_d2h, r_host, r_tier0;
    double b_dev, b0_dev;  /* target and capture effective device bandwidth */
    double ns_per_byte, ns_per_byte0;  /* their inverses, in ns per byte */
    double tflops_scale;   /* capture tflops / target tflops (model.kernel "simple") */
    VsKernelModel *kmodel; /* capture -> target (sim/model/kernel-model.c) */
    gboolean simple;       /* model.kernel "simple": SPEC 5.4's rule times kernels */
    /* Direct-mapped caches in front of kernel_model_factors, by interned
     * name address (readers intern names): one for kernels without a
     * shape, one holding the last shape seen in the slot. */
#define KF_CACHE_BITS 6
#define KF_CACHE (1u << KF_CACHE_BITS)
/* Slots a name may take from its own on (kernel_factors, stats_kernel). */
#define KF_PROBES 4
    struct { const char *name; const VsKernelFactors *kf; } kfcache[KF_CACHE];
    struct { const char *name; VsKernelShape shape; const VsKernelFactors *kf; } kscache[KF_CACHE];
    double pageable_cap;
    VsU64Map streams;      /* stream id + 1 -> Stream*, ids >= STREAM_DENSE */
    Stream **stream_dense; /* [id]: streams of small ids (stream.part.c) */
    guint n_stream_dense;
    GPtrArray *stream_list;
    Stream *busy;          /* streams with queued ops: a device sync waits on these */
    VsU64Map events;       /* event id + 1 -> Op* (last recorded), ids >= EVENT_DENSE */
    Op **event_dense;      /* [id]: the last record of events of small ids (stream.part.c) */
    guint n_event_dense;
    GQueue ce_queue[2];
    guint ce_busy[2];
    gboolean issue_extra;  /* a timeline or the legacy default stream: op_issue's rare work */
    guint64 acc_gen;
    int acc_drop_hint;     /* acc_add_few: > 0 while kernels' lists are mostly dropped */
    struct Part *parts;    /* kernel_run's scratch: 2 per location */
    GPtrArray *ops_made;   /* every op (live, or recycled on free_ops) */
    Op *free_ops;
    /* The launch queue (engine/launchq.part.c): ops issued and not yet
     * started, and the bound (gpu.launch_queue; G_MAXUINT: none). */
    guint lq_unstarted, lq_cap;
  } gpu;

  struct {
    int loc_host;          /* index of the host location */
    guint n_locs;
    guint64 *loc_cap, *loc_used, *loc_peak;
    guint64 dev_nonmanaged;
    guint64 man_running_bytes;  /* resident bytes of managed allocations running ops use */
    guint64 overflow_peak;
    VsSlotMap allocs;      /* id -> Alloc* of the live allocations */
    Lru lru_dev, lru_man;  /* device allocations; managed ones with resident groups */
    const Policy *policy;
    gboolean spill;        /* the spill policy: device memory can leave the device (swap-in, lru_dev) */
    gboolean dev_only;     /* device and managed memory are always reached on the device */
    gboolean device_is_managed;  /* device allocations are made managed (uvm) */
    Alloc *free_allocs;    /* recycled, linked through lru_next */
    /* The allocator model (alloc-model.part.c): NULL for kind none. */
    VsAlloc *amodel;
    VsAllocKind amodel_kind;
    gboolean amodel_managed;   /* uvm: its segments are managed memory (alloc-policy.part.c) */
    gboolean amodel_places;    /* spill, direct: a tensor that does not fit goes below */
    gboolean amodel_no_expandable;  /* uvm turned expandable_segments off (warned) */
    guint64 amodel_charged;    /* its reserved bytes, as charged to the device
                                * (uvm: the segments' share charged to the host) */
    guint64 amodel_live;       /* uvm: bytes of the live tensors in its segments */
    VsU64Map amodel_pending;   /* id -> Alloc* whose freed block awaits other streams */
    GPtrArray *amodel_batches; /* every FreeBatch made (alloc-streams.part.c) */
    struct FreeBatch *free_batches;  /* the recycled ones */
    guint amodel_empty_waits;  /* ops an empty_cache waits for (alloc-streams.part.c) */
    guint64 amodel_freed_bytes;  /* pytorch: segment bytes it has released (cudaFree, unmap) */
    gboolean amodel_released;  /* it released some since the host call began (issue.part.c) */
    /* Kind none's own figures: device allocations charged one by one. */
    guint64 none_cur, none_peak, none_allocs, none_frees, none_alloc_bytes;
    /* The device demand (demand.part.c): context and charges outside the
     * allocator model (dem_cur; of which dem_fixed is fixed on the
     * device), the model's reserved bytes (dem_reserved), their peak. */
    VsAlloc *dmodel;           /* the demand model (not under oom), or NULL */
    guint64 dem_cur, dem_fixed, dem_reserved, dem_peak;
    gboolean dem_known;        /* the trace allocates device or managed memory */
    gboolean dem_refused;      /* an allocation the oom policy would refuse */
  } mem;

  struct {
    guint64 n_events, n_allocs;
    double last_end;
    guint64 cap_first_t, cap_last_end;
    gboolean cap_have;
    double blocked_ns, contention_ns, fault_ns, swap_ns, ce_ns;
    guint64 h2d_bytes, d2h_bytes, swap_out_bytes, swap_in_bytes, fault_bytes,
            faults, writeback_bytes, prefetch_bytes, unknown_refs;
    double infer_below_bytes;  /* inferred accesses reached off the device (kernel_infer_parts) */
    GHashTable *tags;      /* name -> index into tag_stats */
    const char *last_tag;  /* the last stats_tag, by address */
    int last_tag_index;
    GArray *tag_stats;
    GHashTable *kernels;   /* name -> KernelStat* */
    struct {
      guint64 count;
      double captured_ns, predicted_ns;
      double bound_ns[VS_BOUND_COUNT];  /* predicted time per bound: the class's bound is the largest */
    } kclass[VS_KCLASS_COUNT];
    guint fallback_warned;  /* 1 << precision whose peak a chip lacked (warned once) */
    guint upgrade_warned;   /* 1 << precision of FP32 work run as TF32 (warned once) */
    GPtrArray *warnings;    /* char*: the report's warnings[] */
    VsU64Map kernel_by_ptr;  /* interned name's address -> KernelStat* */
#define KCACHE_BITS 6
#define KCACHE (1u << KCACHE_BITS)
    /* A direct-mapped cache in front of kernel_by_ptr (a trace has few
     * kernel names): from slot ptr_slot (address, KCACHE_BITS), as
     * kernel_factors' (KF_PROBES slots). */
    struct { const char *name; KernelStat *k; } kcache[KCACHE];
    GHashTable *marks;     /* name -> MarkStat* */
    guint gpu_running;     /* ops started and not complete */
    double gpu_since, gpu_busy_ns;   /* union of their running time (warnings) */
    double gpu_idle_t;     /* when gpu_running last fell to 0 (-1: never): the GPU's
                            * frontier at a mark with nothing queued (out/gpu-steps) */
    guint64 lq_waits;      /* launches that waited for the launch queue */
    double lq_blocked_ns;  /* their time blocked beyond their captured host_ns */
    GPtrArray *fronts;     /* GpuFront*: every one made (out/gpu-steps.part.c) */
    GpuFront *free_fronts; /* the recycled ones */
    cJSON *oom_obj;
    guint64 last_progress;
    guint64 next_progress; /* n_events of the next progress line (never without --progress) */
  } stats;

  /* Collectives (sim/model/collective.part.c). */
  struct {
    VsNetwork target, capture;  /* the two configs' fabrics */
    guint32 ranks;         /* target network.ranks; > 1 sizes the job */
    guint32 role_ranks[VS_ROLE_COUNT];  /* network.dp, .tp, ...: the size of that role's groups; 0 keeps the trace's */
    guint32 max_group;     /* the largest group replayed so far */
    guint64 roles_seen;    /* 1 << role of every collective replayed (VS_ROLE_NONE: one with no role) */
    GHashTable *groups;    /* group id -> CollGroup; NULL until a collective names one */
    guint running_coll, running_other;  /* kernels running now */
    double last_t;         /* of the last change of those counts */
    double busy_ns, exposed_ns;
    CollStat kinds[VS_COLL_COUNT];
    guint32 max_nodes;     /* the most nodes a collective spanned on the target's fabric */
    /* Collectives that span more nodes on the target than on the capture
     * fabric (a preset with fewer GPUs a node): how many, and the largest
     * such group's ranks and nodes on each (coll_warnings). */
    guint64 split;
    guint32 split_ranks, split_nodes, split_cap_nodes;
  } coll;

  struct {
    Series *series;
    double *res_cur_t;     /* per loc: time of the last residency change */
    double alloc_cur_t;    /* time of the last allocated/reserved change (--series) */
    guint64 alloc_val[2];  /* allocated, reserved since then */
    FILE *timeline;
    VsOutFile *timeline_file;   /* base/outfile.h; its stream is timeline */
    gboolean timeline_first;
    guint timeline_streams, timeline_threads;   /* tracks named so far: their sort order */
    guint64 timeline_async;    /* ids of the ranges drawn as async slices */
  } out;
  /* --sample-steps (engine/sample.part.c). */
  struct SampleState *sample;
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

/* The slot of an interned name's address in a direct-mapped cache of
 * 2^BITS slots: the top bits of a multiplicative (Fibonacci) hash. The
 * old slot, (address >> 4) & mask, let short names interned within 16
 * bytes of each other (k0 ... k11) share a slot and evict each other on
 * every kernel (issue 25: 148 instructions per event on a 2M-event
 * 4-stream trace). */
static inline guint
ptr_slot (const void *p, guint bits)
{
  return (guint) (((guint64) GPOINTER_TO_SIZE (p) * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) >> (64 - bits));
}

static inline guint64
round_up (guint64 v, guint64 g)
{
  if (g <= 1 || v > G_MAXUINT64 - g)
    return v;
  return (v + g - 1) / g * g;
}


/* ---- running ---- */

typedef struct Part {
  guint path[VS_FLOW_MAX_PATH];
  guint n;
  double amount;
} Part;

/* ------------------------------------------------------------------ */
/* What each part offers the others                                     */

/* engine/refs.part.c */
static inline void completion_wait (Completion *c, WaitFn fn, gpointer obj, guint64 arg);
static inline void completion_fire (Sim *s, Completion *c);
static void job_unref (Job *j);
static void alloc_unref (Alloc *a);
static inline void op_unref (Op *op);

/* out/series.part.c */
static __attribute__ ((noinline, cold)) void series_begin (Sim *s);
static __attribute__ ((noinline, cold)) void series_resident (Sim *s, int loc);
static void on_load (gpointer user, guint res, double t0, double t1, double load);
static gboolean series_write (Sim *s, const char *path, double makespan, GError **error);

/* out/timeline.part.c */
static __attribute__ ((noinline, cold)) void timeline_resident (Sim *s, int loc, guint64 value);
static __attribute__ ((noinline, cold)) void timeline_host_wait (Sim *s, Thread *t, double f);
static __attribute__ ((noinline, cold)) void timeline_stream (Sim *s, guint64 id);
static __attribute__ ((noinline, cold)) void timeline_captured (Sim *s, Stream *st, const VsEvent *ev);
static __attribute__ ((noinline, cold)) void timeline_op (Sim *s, const Op *op, double end);
static __attribute__ ((noinline, cold)) void timeline_point (Sim *s, Thread *t, const char *name, double start);
static __attribute__ ((noinline, cold)) void timeline_range (Sim *s, Thread *t, const char *name, double start,
                                                             double end, gboolean nested);
static void timeline_open_marks (Sim *s);
static __attribute__ ((noinline, cold)) void timeline_oom (Sim *s, const VsEvent *ev, int loc);
static gboolean timeline_open (Sim *s, const char *path, GError **error);
static gboolean timeline_close (Sim *s, const char *path, gboolean ok, GError **error);

/* mem/loc.part.c */
static void oom_stop_snapshot (Sim *s);   /* out/oom-stop.part.c */
static const char *loc_name (Sim *s, int loc);
static void loc_add (Sim *s, int loc, guint64 bytes);
static void loc_sub (Sim *s, int loc, guint64 bytes);
static guint64 loc_free (Sim *s, int loc);
static guint read_path (Sim *s, int loc, guint *p);
static guint write_path (Sim *s, int loc, guint *p);
static guint host_copy_path (Sim *s, int loc, gboolean h2d, guint *p);
static guint move_path (Sim *s, int loc, gboolean out, guint *p);
static int tier_with_room (Sim *s, guint64 bytes);
static gboolean place_below (Sim *s, Alloc *a);

/* mem/lru.part.c */
static void lru_remove (Sim *s, Alloc *a);
static void lru_touch (Sim *s, Alloc *a);
static gboolean evictable (const Alloc *a, Alloc *const *keep, guint n_keep);

/* engine/job.part.c */
static inline Job *job_new (Sim *s, double delay);
static void job_add_flow (Job *j, double amount, double cap, const guint *path, guint n_path);
static double job_alone (Sim *s, const Job *j);
static void job_finish (Sim *s, Job *j);
static void job_after (Job *j, Job *dep);
static void job_run_flows (Sim *s, Job *j);
static void job_start (Sim *s, Job *j);
static GPtrArray *jobs_take (Sim *s);
static void jobs_give (Sim *s, GPtrArray *a);

/* mem/policy-spill.part.c */
static Job *spill_victim (Sim *s, Alloc *v);
static void swap_in (Sim *s, Op *op);

/* mem/managed.part.c */
static guint64 man_bytes (const Sim *s, const Alloc *a, guint64 groups);
static guint64 man_pages (const Sim *s, const Alloc *a, guint64 groups);
static guint64 man_resident (const Sim *s, const Alloc *a);
static void man_set_groups (Sim *s, Alloc *a, guint32 r);
static void man_shrink (Sim *s, Alloc *a, guint32 r);
static Job *evict_managed (Sim *s, guint64 need, Alloc *const *keep, guint n_keep, guint64 *freed_out);
static guint64 sat_add (guint64 a, guint64 b);
static void fault_in (Sim *s, Op *op);

/* mem/policy-oom.part.c, policy-spill, policy-direct, policy-uvm, policy */
static gboolean nofit_oom (Sim *s, Alloc *a, GPtrArray *jobs);
static void policy_setup (Sim *s);

/* engine/thread.part.c */
static __attribute__ ((noinline)) Thread *thread_get_slow (Sim *s, guint32 tid);
static inline Thread *thread_get (Sim *s, guint32 tid);
static inline __attribute__ ((always_inline)) void note_captured (Sim *s, const VsEvent *ev);
static inline __attribute__ ((always_inline)) void thread_schedule (Sim *s, Thread *t);
static inline __attribute__ ((always_inline)) void reader_advance (Sim *s);
static inline __attribute__ ((always_inline)) void thread_finish (Sim *s, Thread *t, double f);
static void thread_wait_done (Sim *s, gpointer obj, guint64 arg);
static void thread_block_on (Thread *t, Completion *c);

/* engine/stream.part.c */
static __attribute__ ((noinline)) Stream *stream_find_slow (Sim *s, guint64 id);
static inline Stream *stream_find (Sim *s, guint64 id);
static __attribute__ ((noinline)) Stream *stream_new (Sim *s, guint64 id);
static inline Stream *stream_get (Sim *s, guint64 id);
static void op_depend (Op *op, Op *on);
static inline Op *event_find (Sim *s, guint64 event);
static inline Op **event_slot (Sim *s, guint64 event);

/* engine/acc.part.c */
static inline Alloc *alloc_find (Sim *s, guint64 id);
static inline Alloc *alloc_lookup (Sim *s, guint64 id);
static void acc_begin (Sim *s, Op *op);
static inline void acc_add (Sim *s, Op *op, guint64 id, guint8 mode);
static void acc_add_few (Sim *s, Op *op, const VsEvent *ev);
static inline void acc_end (Op *op);
static double op_wsum (const Op *op);
static Alloc *ref (Alloc *a);

/* engine/op.part.c */
static __attribute__ ((noinline)) void op_issue_extra (Sim *s, Op *op, const VsEvent *ev);
static __attribute__ ((noinline)) void op_infer (Sim *s, Op *op);
static Op *op_issue (Sim *s, const VsEvent *ev);
static void op_resume (Sim *s, gpointer obj, guint64 arg);
static void op_wait_job (Op *op, Job *j);
static void op_begin (Sim *s, Op *op);
static void op_try_start (Sim *s, Op *op);
static __attribute__ ((noinline)) Op *marker_issue (Sim *s, const VsEvent *ev);

/* model/kernel.part.c */
static int alloc_loc (Sim *s, const Alloc *a);
static const VsKernelFactors *kernel_factors (Sim *s, const VsEvent *ev);
static __attribute__ ((noinline, cold)) void kernel_rate_warning (Sim *s, const VsKernelFactors *f, const char *name);
static void kernel_run_simple (Sim *s, Op *op);
static void kernel_run_waves (Sim *s, Op *op);
static void kernel_run (Sim *s, Op *op);
static guint kernel_infer_parts (Sim *s, Op *op, Part *parts, guint n_parts);

/* model/collective.part.c */
static void coll_setup (Sim *s);
static inline void coll_note (Sim *s, const Op *op, int delta);
static void coll_run (Sim *s, Op *op);
static void coll_done (Sim *s, const Op *op, double end);
static void coll_report (Sim *s, cJSON *r, double makespan);
static void coll_teardown (Sim *s);

/* model/copy.part.c */
static gboolean pageable (const Alloc *host_side);
static Job *copy_job (Sim *s, Op *op);
static Job *prefetch_job (Sim *s, Op *op);

/* engine/phase.part.c */
static void op_run (Sim *s, Op *op);
static void op_phase (Sim *s, Op *op);
static void op_complete (Sim *s, Op *op);
static inline gboolean op_is_marker (const Op *op);
static __attribute__ ((noinline)) void marker_done (Sim *s, Op *op);

/* mem/alloc.part.c */
static void alloc_release (Sim *s, Alloc *a);
static void alloc_release_charges (Sim *s, Alloc *a);
static void report_oom (Sim *s, const VsEvent *ev, int loc);
/* alloc-model.part.c */
static void amodel_setup (Sim *s);
static void amodel_settle (Sim *s);
static gboolean amodel_alloc (Sim *s, Alloc *a, const VsEvent *ev);
static void amodel_free (Sim *s, guint64 id, guint64 t);
static void amodel_empty_cache (Sim *s, guint64 t);
static void amodel_sync (Sim *s, guint64 t);
static void amodel_report (Sim *s, cJSON *mem, cJSON *warnings);
static void amodel_teardown (Sim *s);
/* alloc-policy.part.c */
static gboolean amodel_place (Sim *s, Alloc *a, const VsEvent *ev, GPtrArray *jobs);
static gboolean amodel_swap_room (Sim *s, Alloc *a, Op *op, GPtrArray *jobs);
static void amodel_evicted (Sim *s, Alloc *v);
static void amodel_managed_alloc (Sim *s, Alloc *a, const VsEvent *ev);
static void amodel_settle_managed (Sim *s, guint64 reserved);
static void amodel_release (Sim *s, Alloc *a);
/* alloc-streams.part.c */
static inline void amodel_uses (Sim *s, Stream *st, Alloc *const *acc, guint n);
static gboolean amodel_free_deferred (Sim *s, Alloc *a, guint64 t);
static void amodel_uses_clear (Alloc *a);
static void amodel_streams_teardown (Sim *s);
static gboolean amodel_empty_cache_wait (Sim *s, Thread *t, guint64 tt);
static gboolean do_alloc (Sim *s, const VsEvent *ev, GPtrArray *jobs);

/* engine/launchq.part.c */
static void launch_queue_setup (Sim *s);
static __attribute__ ((noinline)) void launch_queue_block (Sim *s, Thread *t, guint64 host_ns);
static __attribute__ ((noinline)) void launch_queue_release (Sim *s);
static inline __attribute__ ((always_inline)) void launch_queue_started (Sim *s);
static inline __attribute__ ((always_inline)) void launch_queue_check (Sim *s, Thread *t, const Op *op, guint64 host_ns);
static void launch_queue_report (Sim *s, cJSON *host);
static void launch_queue_teardown (Sim *s);

/* out/gpu-steps.part.c */
static GpuFront *gpu_front_now (Sim *s);
static GpuFront *gpu_front_ref (GpuFront *f);
static void gpu_front_unref (Sim *s, GpuFront *f);
static void gpu_sample_add (GArray **arr, guint max, GpuFront *start, GpuFront *end);
static void gpu_samples (const GArray *samples, GArray **spans, GArray **busy);
static void gpu_fronts_teardown (Sim *s);

/* mem/demand.part.c */
static inline void demand_reserved (Sim *s, guint64 reserved);
static void demand_init (Sim *s);
static void demand_setup_model (Sim *s, const VsAllocConfig *ac);
static void demand_seed (Sim *s, const cJSON *state);
static void demand_malloc (Sim *s, const Alloc *a, const VsEvent *ev);
static void demand_free (Sim *s, guint64 id, guint64 t, gboolean deferred);
static void demand_free_complete (Sim *s, guint64 id, guint64 t);
static void demand_empty_cache (Sim *s, guint64 t);
static void demand_sync (Sim *s, guint64 t);
static void demand_alloc (Sim *s, Alloc *a, const VsEvent *ev);
static inline void demand_release (Sim *s, Alloc *a);
static void demand_refused (Sim *s, const VsEvent *ev);
static void demand_fits (Sim *s, cJSON *r);
static void demand_report (Sim *s, cJSON *mem);
static void demand_teardown (Sim *s);

/* engine/issue.part.c */
static inline gboolean call_waits_for_work (const VsEvent *ev, const Op *op);
static void thread_block_device (Sim *s, Thread *t);
static __attribute__ ((noinline)) void allocator_sync (Sim *s, Thread *t, guint64 host_ns);
static void thread_issue (Sim *s, Thread *t);

/* engine/loop.part.c */
static inline void progress (Sim *s);
static void sim_loop (Sim *s);

/* engine/setup.part.c */
static void sim_setup (Sim *s);
static void sim_teardown (Sim *s);

/* out/stats.part.c */
static inline __attribute__ ((always_inline)) void stats_kernel (Sim *s, const Op *op, double end);
static int stats_tag (Sim *s, const char *tag);

/* out/marks.part.c */
static void mark_close (Sim *s, Thread *t, double now, guint64 cap_t, GpuFront *front);
static void marks_drop (Sim *s, Thread *t);
static void marks_reached (Sim *s, Thread *t, const char *name, double now, guint64 cap_t);
static void marks_thread_end (Sim *s, Thread *t);
static void report_steady (Sim *s, cJSON *r, const MarkStat *m);
static void sample_mark (Sim *s, guint32 tid, const char *name, double now, guint64 cap_t);
static void report_marks (Sim *s, cJSON *r);
static void report_warnings (Sim *s, cJSON *r, double makespan, gboolean oom_row);

/* out/sim-report.part.c */
static GPtrArray *table_values (GHashTable *h);
static gint kernel_cmp (gconstpointer a, gconstpointer b);
static cJSON *sim_report (Sim *s, double makespan);
