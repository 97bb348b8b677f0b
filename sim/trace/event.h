/* event.h — one trace event, as every reader produces and every writer takes.
 * See docs/trace-format.md for the encodings and the fields. */
#pragma once

#include <glib.h>

/* Marks an optional integer field as absent (kernel bytes, dur, compute_ns). */
#define VS_NONE G_MAXUINT64

typedef enum {
  VS_OP_ALLOC,
  VS_OP_FREE,
  VS_OP_COPY,
  VS_OP_MEMSET,
  VS_OP_KERNEL,
  VS_OP_SYNC,
  VS_OP_EVENT_RECORD,
  VS_OP_STREAM_WAIT,
  VS_OP_PREFETCH,
  VS_OP_MARK,
  VS_OP_EMPTY_CACHE, /* the program released its allocator's cached segments */
  VS_OP_COUNT
} VsOp;

typedef enum { VS_MEM_DEVICE, VS_MEM_MANAGED, VS_MEM_PINNED, VS_MEM_COUNT } VsMemKind;
typedef enum { VS_DIR_H2D, VS_DIR_D2H, VS_DIR_D2D, VS_DIR_P2P, VS_DIR_COUNT } VsDir;
typedef enum { VS_SYNC_DEVICE, VS_SYNC_STREAM, VS_SYNC_EVENT, VS_SYNC_COUNT } VsSyncScope;
typedef enum { VS_TO_DEVICE, VS_TO_HOST, VS_TO_COUNT } VsPrefetchTo;
/* kernel precision (SPEC 3 `precision`); VS_PREC_NONE: not given. */
typedef enum {
  VS_PREC_NONE, VS_PREC_FP64, VS_PREC_FP32, VS_PREC_TF32, VS_PREC_FP16, VS_PREC_BF16,
  VS_PREC_FP8, VS_PREC_INT8, VS_PREC_COUNT
} VsPrecision;
/* collective kind (SPEC 3 `collective.kind`). */
typedef enum {
  VS_COLL_ALL_REDUCE, VS_COLL_ALL_GATHER, VS_COLL_REDUCE_SCATTER, VS_COLL_ALL_TO_ALL,
  VS_COLL_BROADCAST, VS_COLL_REDUCE, VS_COLL_SEND, VS_COLL_RECV, VS_COLL_COUNT
} VsCollKind;
/* a communicator's role in the job's layout (`collective.group.role`);
 * VS_ROLE_NONE: not given. */
typedef enum {
  VS_ROLE_NONE, VS_ROLE_DP, VS_ROLE_TP, VS_ROLE_PP, VS_ROLE_EP, VS_ROLE_CP, VS_ROLE_COUNT
} VsCollRole;

/* The optional shape of a kernel's work (SPEC 3): what a cross-GPU kernel
 * model needs. Absent parts are 0 (flops: VS_NONE). */
typedef struct {
  guint64 flops;      /* floating-point (or integer) operations; VS_NONE if absent */
  guint8 precision;   /* VsPrecision */
  guint32 grid[3];    /* blocks; all 0 if absent */
  guint32 block[3];   /* threads per block; all 0 if absent */
  guint32 regs;       /* registers per thread; 0 if absent */
  guint32 smem;       /* shared memory bytes per block (static + dynamic); 0 if absent */
} VsKernelShape;

/* A kernel's collective (SPEC 3 `collective`). */
typedef struct {
  guint8 kind;        /* VsCollKind */
  guint32 ranks;      /* group size, >= 1 */
  guint64 bytes;      /* per-rank message size (the input buffer) */
  guint64 group;      /* communicator id (`collective.group.id`); 0: not given */
  guint8 role;        /* VsCollRole of that communicator */
} VsCollective;

/* One event. Integers count (bytes, ns, ids). Which fields matter depends on
 * op, as in SPEC section 3; unused fields are 0 (or VS_NONE where noted).
 * Strings and id arrays are owned by the reader (or the caller, for a
 * writer) and are valid until the next event is read. */
typedef struct {
  guint64 t;          /* ns, host time the call was entered */
  guint64 host_ns;    /* time the call took on the host at capture */
  guint64 index;      /* 0-based position among the trace's events (readers set it) */
  guint32 tid;        /* host thread */
  guint8 op;          /* VsOp */
  guint8 kind;        /* alloc: VsMemKind */
  guint8 dir;         /* copy: VsDir */
  guint8 scope;       /* sync: VsSyncScope */
  guint8 to;          /* prefetch: VsPrefetchTo */
  gboolean async;     /* copy, memset */
  gboolean has_stream;/* alloc, free: stream-ordered (stream is valid) */
  guint64 id;         /* alloc, free, prefetch */
  guint64 bytes;      /* alloc, copy, memset, prefetch; kernel: VS_NONE if absent */
  guint64 src, dst;   /* copy: allocation ids, 0 = untracked pageable host; memset: dst */
  guint64 stream;     /* copy, memset, kernel, sync(stream), event_record, stream_wait, prefetch */
  guint64 event;      /* sync(event), event_record, stream_wait */
  guint64 dur;        /* captured GPU ns; VS_NONE if absent (required for kernel) */
  guint64 compute_ns; /* kernel: VS_NONE if absent */
  const char *name;   /* kernel, mark */
  const char *tag;    /* alloc: what the memory holds, or NULL */
  const guint64 *reads, *writes, *touches;
  guint32 n_reads, n_writes, n_touches;
  /* kernel, optional; NULL when the trace gives none. Owned like name. */
  const VsKernelShape *shape;
  const VsCollective *collective;
} VsEvent;

/* Clears EV to an event of OP: every field 0, dur and compute_ns absent. */
static inline void
event_init (VsEvent *ev, VsOp op)
{
  *ev = (VsEvent) { .op = (guint8) op, .dur = VS_NONE, .compute_ns = VS_NONE };
}

/* When EV's captured work ended: its host call's end (t + host_ns), or,
 * for a kernel, copy or memset with a captured dur, the later of that
 * and its GPU work's end (t + dur). Without a branch: the replay's
 * captured time counts it for every event. */
static inline guint64
event_captured_end (const VsEvent *ev)
{
  guint64 end = ev->t + ev->host_ns, gpu_end = ev->t + ev->dur;
  const guint gpu_ops = 1u << VS_OP_KERNEL | 1u << VS_OP_COPY | 1u << VS_OP_MEMSET;
  guint gpu = (ev->dur != VS_NONE) & (((1u << ev->op) & gpu_ops) != 0);
  return gpu & (gpu_end > end) ? gpu_end : end;
}

/* Names as they appear in traces ("alloc", "h2d", ...); NULL when out of range. */
const char *event_op_name (guint op);
const char *event_kind_name (guint kind);
const char *event_dir_name (guint dir);
const char *event_scope_name (guint scope);
const char *event_to_name (guint to);
const char *event_precision_name (guint p);   /* "fp16", ...; NULL for NONE */
const char *event_collective_name (guint k);  /* "all_reduce", ... */
const char *event_role_name (guint r);        /* "dp", ...; NULL for NONE */
/* Reverse lookups: return -1 when the name is unknown. */
int event_op_from_name (const char *s);
int event_kind_from_name (const char *s);
int event_dir_from_name (const char *s);
int event_scope_from_name (const char *s);
int event_to_from_name (const char *s);
int event_precision_from_name (const char *s);
int event_collective_from_name (const char *s);
int event_role_from_name (const char *s);
