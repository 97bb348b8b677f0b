/* cupti.c — CUPTI mode: the driver loads libvramcap.so through
 * CUDA_INJECTION64_PATH and calls InitializeInjection during cuInit.
 *
 * Driver API callbacks (exit site) record what the program asked, exactly
 * as hook mode does; GPU start/end times come from CUPTI activity records
 * (concurrent kernel, memcpy, memset), joined to the recorded events by
 * correlation id. Activity buffers are flushed at sync points when many
 * events wait, before the trace is finished, and at exit.
 *
 * libcupti is opened at run time (dlopen), so the shim loads and works in
 * hook mode where CUPTI is absent. If CUPTI cannot be used — another tool
 * already subscribed (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), or
 * no libcupti — the shim says so on stderr and records in hook mode (which
 * works because the launcher also preloads the shim). Record layouts are
 * those of the CUPTI headers the shim was built with; run it with the
 * libcupti of the same CUDA release. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks.h"
#include "recorder.h"
#include "spans.h"

/* CUDA 13 maps these names to the _v2 calls; here they name the CUDA 12.8
 * calls (and their callback ids and *_params), as in CUPTI's headers. */
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync

#ifndef VRAMCAP_CUPTI_DIR
#define VRAMCAP_CUPTI_DIR "/usr/local/cuda/lib64"
#endif

int InitializeInjection (void);

#define CUPTI_FUNCS(X) \
  X (cuptiSubscribe) X (cuptiEnableCallback) X (cuptiActivityEnable) \
  X (cuptiActivityRegisterCallbacks) X (cuptiActivityFlushAll) \
  X (cuptiActivityGetNextRecord) X (cuptiGetResultString)
/* Optional: without them, graph records match nodes in order, there are
 * no unified-memory counters, dropped records go unsaid. */
#define CUPTI_OPTIONAL(X) \
  X (cuptiGetGraphNodeId) X (cuptiActivityConfigureUnifiedMemoryCounter) \
  X (cuptiActivityGetNumDroppedRecords)
#define DECL(fn) static __typeof__ (fn) *p_##fn;
CUPTI_FUNCS (DECL)
CUPTI_OPTIONAL (DECL)
#undef DECL

static CUpti_SubscriberHandle g_sub;

/* ---- correlation id -> event sequence number (under the recorder's lock) ---- */

typedef struct { uint32_t corr; uint64_t seq; } Corr;
/* Open addressing, linear probing; corr 0 marks an empty slot. */
typedef struct { Corr *t; size_t cap, n; } CorrMap;

/* Events waiting for their activity record, and the allocation calls
 * recorded (matched against CUPTI's memory records). */
static CorrMap g_corr, g_alloc_corr;
/* Events waiting: g_corr's and graph kernels' (a sync point flushes the
 * activity buffers when there are many). */
static volatile size_t g_waiting;
static size_t g_graph_waiting, g_batch_waiting;

static size_t
corr_slot (const CorrMap *m, uint32_t corr)
{
  return (corr * 2654435761u) & (m->cap - 1);
}

static void
corr_put_locked (CorrMap *m, uint32_t corr, uint64_t seq)
{
  if ((m->n + 1) * 2 >= m->cap) {
    size_t oc = m->cap;
    Corr *old = m->t;
    size_t nc = oc ? oc * 2 : 4096;
    Corr *nt = calloc (nc, sizeof *nt);
    if (!nt)
      return;
    m->t = nt;
    m->cap = nc;
    for (size_t i = 0; i < oc; i++)
      if (old[i].corr) {
        size_t j = corr_slot (m, old[i].corr);
        while (m->t[j].corr)
          j = (j + 1) & (nc - 1);
        m->t[j] = old[i];
      }
    free (old);
  }
  size_t j = corr_slot (m, corr);
  while (m->t[j].corr && m->t[j].corr != corr)
    j = (j + 1) & (m->cap - 1);
  if (!m->t[j].corr)
    m->n++;
  m->t[j] = (Corr) { corr, seq };
}

/* Removes CORR; returns its seq or UINT64_MAX. */
static uint64_t
corr_take_locked (CorrMap *m, uint32_t corr)
{
  if (!m->cap || !corr)
    return UINT64_MAX;
  size_t j = corr_slot (m, corr);
  while (m->t[j].corr && m->t[j].corr != corr)
    j = (j + 1) & (m->cap - 1);
  if (!m->t[j].corr)
    return UINT64_MAX;
  uint64_t seq = m->t[j].seq;
  /* backward-shift deletion keeps probe chains intact */
  size_t i = j;
  for (;;) {
    m->t[i].corr = 0;
    size_t k = i;
    for (;;) {
      k = (k + 1) & (m->cap - 1);
      if (!m->t[k].corr)
        goto done;
      size_t h = corr_slot (m, m->t[k].corr);
      if (i <= k ? (h <= i || h > k) : (h <= i && h > k))
        break;
    }
    m->t[i] = m->t[k];
    i = k;
  }
done:
  m->n--;
  return seq;
}

static void
corr_clear (CorrMap *m)
{
  if (m->t)
    memset (m->t, 0, m->cap * sizeof *m->t);
  m->n = 0;
}

static void
update_waiting_locked (void)
{
  g_waiting = g_corr.n + g_graph_waiting + g_batch_waiting;
}

/* Kernels on managed memory were launched (sync points then flush the
 * activity buffers and settle their fault time, below). */
static int g_managed_seen;
/* Memory records (CUPTI_ACTIVITY_KIND_MEMORY2) are enabled. */
static int g_memory_records;

static void
pending (uint64_t seq, uint32_t corr)
{
  if (seq == UINT64_MAX)
    return;
  cap_lock ();
  corr_put_locked (&g_corr, corr, seq);
  update_waiting_locked ();
  const VtEvent *e = cap_get_locked (seq);
  if (e && e->managed)
    g_managed_seen = 1;
  cap_unlock ();
}

/* An allocation call was recorded: its memory record is expected. */
static void
alloc_seen (uint32_t corr)
{
  if (!g_memory_records || !corr)
    return;
  cap_lock ();
  corr_put_locked (&g_alloc_corr, corr, 0);
  cap_unlock ();
}

/* ---- graph launches (under the recorder's lock) ----
 * A cuGraphLaunch records one kernel event per kernel node (hooks-graph.c
 * keeps the nodes per exec); CUPTI reports each kernel of the launch with the
 * launch's correlation id and the id of its node (graphNodeId). A record is
 * matched to the node with that id, else to the first node of the launch
 * still waiting. */

typedef struct { uint32_t corr, n, left; uint64_t first; uint64_t *ids; uint8_t *done; } GraphWait;
static GraphWait *g_gw;
static size_t g_gw_n, g_gw_cap;

static void
graph_wait_locked (uint32_t corr, uint64_t first, uint32_t n, uint64_t *ids)
{
  uint8_t *done = calloc (n, 1);
  GraphWait *ng = cap_grow (g_gw, g_gw_n, &g_gw_cap, sizeof *g_gw, 64);
  if (ng)
    g_gw = ng;
  if (!done || !ng) {
    for (uint32_t i = 0; i < n; i++)        /* cannot wait: dur unknown */
      cap_resolve_locked (first + i, VTW_NONE);
    free (done);
    free (ids);
    return;
  }
  g_gw[g_gw_n++] = (GraphWait) { corr, n, n, first, ids, done };
  g_graph_waiting += n;
  update_waiting_locked ();
}

/* The launch CUPTI recorded (grid, block, registers, shared memory), onto
 * E, a kernel event waiting for its time (SPEC 3 kernel shape; smem is
 * static + dynamic shared memory per block, as hook mode gives it). It
 * replaces what the launch's arguments said (kernel_ev). */
static void
record_shape (VtEvent *e, const CUpti_ActivityKernel10 *k)
{
  if (!e || e->op != VTW_KERNEL)
    return;
  if (k->gridX < 1 || k->gridY < 1 || k->gridZ < 1 || k->blockX < 1 || k->blockY < 1 || k->blockZ < 1)
    return;
  e->grid[0] = (uint32_t) k->gridX, e->grid[1] = (uint32_t) k->gridY, e->grid[2] = (uint32_t) k->gridZ;
  e->block[0] = (uint32_t) k->blockX, e->block[1] = (uint32_t) k->blockY, e->block[2] = (uint32_t) k->blockZ;
  e->regs = k->registersPerThread;
  int64_t smem = (int64_t) k->staticSharedMemory + (int64_t) k->dynamicSharedMemory;
  e->smem = smem > 0 && smem <= UINT32_MAX ? (uint32_t) smem : 0;
  e->has_shape = 1;
}

/* A kernel record K that is not a plain launch's: one of a graph's? */
static void
graph_time_locked (uint32_t corr, uint64_t node_id, uint64_t dur, const CUpti_ActivityKernel10 *rec)
{
  for (size_t k = 0; k < g_gw_n; k++) {
    GraphWait *w = &g_gw[k];
    if (w->corr != corr)
      continue;
    uint32_t i = w->n;
    if (w->ids && node_id)
      for (uint32_t j = 0; j < w->n && i == w->n; j++)
        if (!w->done[j] && w->ids[j] == node_id)
          i = j;
    for (uint32_t j = 0; j < w->n && i == w->n; j++)
      if (!w->done[j])
        i = j;
    if (i == w->n)
      return;
    w->done[i] = 1;
    record_shape (cap_get_locked (w->first + i), rec);
    cap_resolve_locked (w->first + i, dur);
    if (g_graph_waiting)
      g_graph_waiting--;
    update_waiting_locked ();
    if (--w->left == 0) {
      free (w->ids);
      free (w->done);
      g_gw[k] = g_gw[--g_gw_n];
    }
    return;
  }
}

static uint64_t
graph_node_id (void *node)
{
  uint64_t id = 0;
  if (p_cuptiGetGraphNodeId && p_cuptiGetGraphNodeId ((CUgraphNode) node, &id) != CUPTI_SUCCESS)
    id = 0;
  return id;
}

static void
graph_launch_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CUgraphExec exec,
                 uintptr_t stream)
{
  uint64_t first, *ids = NULL;
  if (hooks_stream_capturing (stream))  /* a child graph of the one being captured */
    return;
  uint32_t n = hooks_graph_kernels (exec, stream, t0, t1, 1, cb->correlationId, &first, &ids);
  if (n == 0) {
    free (ids);
    return;
  }
  cap_lock ();
  graph_wait_locked (cb->correlationId, first, n, ids);
  cap_unlock ();
}

/* ---- batched copies (under the recorder's lock) ----
 * cuMemcpyBatchAsync and cuMemcpy3DBatchAsync record one copy event per
 * entry; CUPTI reports the batch as memcpy records with the call's
 * correlation id, each covering copyCount entries (the driver may merge
 * copies of a batch). Records are matched to the entries in order: when
 * they cover exactly the batch's entries and each record's bytes are those
 * of the entries it covers, each record's time is split over its entries
 * by bytes (one record per entry: each entry gets its own time).
 * Otherwise (more copies reported than entries, bytes that do not match,
 * or fewer records by the next device sync or exit) the sum of the
 * records' times is split over all the entries by bytes; a batch without
 * any record has no dur. */

typedef struct { uint64_t dur, bytes, count; } BatchRec;
typedef struct { uint32_t corr, n, nrec, covered; uint64_t first, sum; BatchRec *rec; int bad; } BatchWait;
static BatchWait *g_bw;
static size_t g_bw_n, g_bw_cap;

static void
batch_wait_locked (uint32_t corr, uint64_t first, uint32_t n)
{
  BatchRec *rec = calloc (n, sizeof *rec);
  BatchWait *nb = cap_grow (g_bw, g_bw_n, &g_bw_cap, sizeof *g_bw, 16);
  if (nb)
    g_bw = nb;
  if (!rec || !nb) {
    cap_resolve_split_locked (first, n, VTW_NONE);     /* cannot wait: dur unknown */
    free (rec);
    return;
  }
  g_bw[g_bw_n++] = (BatchWait) { corr, n, 0, 0, first, 0, rec, 0 };
  g_batch_waiting += n;
  update_waiting_locked ();
}

/* Resolves batch K from the records it has, and forgets it. */
static void
batch_settle_locked (size_t k)
{
  BatchWait *w = &g_bw[k];
  int exact = !w->bad && w->covered == w->n;
  for (uint32_t r = 0, pos = 0; exact && r < w->nrec; pos += (uint32_t) w->rec[r++].count) {
    uint64_t b = 0;
    for (uint32_t i = 0; i < w->rec[r].count; i++) {
      const VtEvent *e = cap_get_locked (w->first + pos + i);
      b += e ? e->bytes : 0;
    }
    exact = b == w->rec[r].bytes;
  }
  if (exact) {
    for (uint32_t r = 0, pos = 0; r < w->nrec; pos += (uint32_t) w->rec[r++].count)
      cap_resolve_split_locked (w->first + pos, (uint32_t) w->rec[r].count, w->rec[r].dur);
  } else {
    cap_resolve_split_locked (w->first, w->n, w->nrec ? w->sum : VTW_NONE);
  }
  g_batch_waiting -= g_batch_waiting >= w->n ? w->n : g_batch_waiting;
  update_waiting_locked ();
  free (w->rec);
  g_bw[k] = g_bw[--g_bw_n];
}

/* A memcpy record that is no plain copy's: one of a batch's? */
static void
batch_time_locked (uint32_t corr, uint64_t bytes, uint64_t count, uint64_t dur)
{
  for (size_t k = 0; k < g_bw_n; k++) {
    BatchWait *w = &g_bw[k];
    if (w->corr != corr)
      continue;
    if (!count)
      count = 1;
    w->sum += dur;
    if (w->bad || count > w->n - w->covered) {
      w->bad = 1;                    /* more copies than entries */
      w->covered = w->n;
    } else {
      w->rec[w->nrec++] = (BatchRec) { dur, bytes, count };
      w->covered += (uint32_t) count;
    }
    if (w->covered == w->n)
      batch_settle_locked (k);
    return;
  }
}

/* Device sync (after a forced flush) or exit: whatever has not all its
 * records now will not get them. */
static void
batch_settle_all_locked (void)
{
  while (g_bw_n)
    batch_settle_locked (g_bw_n - 1);
}

/* ---- unified memory: fault handling taken out of kernel durations ----
 * A kernel that faults on managed memory runs longer by the time the
 * driver spends handling its faults, and replay adds the fault stall of its
 * own model (SPEC 5.7) on top: counted twice. CUPTI's unified-memory
 * counters report each GPU page-fault group and each migration with its
 * start and end; the union of those intervals inside a kernel on managed
 * memory is taken out of its duration. Those kernels wait (pending) for
 * the next sync point, which flushes the activity buffers first, so the
 * counter records of their faults have arrived. Without the counters (not
 * supported: MPS, some virtual GPUs, WSL) durations stay as measured and
 * the shim says so once. */

static int g_um_on;                /* counters configured and enabled */
static CUptiResult g_um_err;       /* why not, if not */
static void enable_um_counters (void);
static int g_um_warned;
static Span *g_um;                 /* fault-handling intervals */
static size_t g_um_n, g_um_cap, g_um_merged;
typedef struct { uint64_t seq, start, end; } Held;
static Held *g_held;               /* kernels on managed memory, waiting */
static size_t g_held_n, g_held_cap;
static uint64_t g_um_groups, g_um_htod, g_um_dtoh, g_um_cpu_faults, g_um_taken, g_um_kernels;
/* Intervals kept at most (merged first, then the oldest half dropped). */
#define UM_MAX_SPANS (1u << 20)

static void
um_span_locked (uint64_t start, uint64_t end)
{
  if (g_um_n && g_um_n == g_um_cap) {
    g_um_n = spans_merge (g_um, g_um_n);
    g_um_merged = g_um_n;
    if (g_um_n >= UM_MAX_SPANS / 2) {
      memmove (g_um, g_um + g_um_n / 2, (g_um_n - g_um_n / 2) * sizeof *g_um);
      g_um_n -= g_um_n / 2;
      g_um_merged = g_um_n;
    }
  }
  Span *ns = cap_grow (g_um, g_um_n, &g_um_cap, sizeof *g_um, 1024);
  if (!ns)
    return;
  g_um = ns;
  g_um[g_um_n++] = (Span) { start, end };
}

static void
um_hold_locked (uint64_t seq, uint64_t start, uint64_t end)
{
  Held *nh = cap_grow (g_held, g_held_n, &g_held_cap, sizeof *g_held, 256);
  if (!nh) {                         /* cannot wait: keep the measured time */
    cap_resolve_locked (seq, end > start ? end - start : 0);
    return;
  }
  g_held = nh;
  g_held[g_held_n++] = (Held) { seq, start, end };
}

/* Settles the held kernels against the intervals received so far; DROP:
 * nothing runs any more (device sync, exit), so the intervals can go. */
static void
um_settle_locked (int drop)
{
  if (g_held_n) {
    if (g_um_merged != g_um_n)
      g_um_n = g_um_merged = spans_merge (g_um, g_um_n);
    for (size_t i = 0; i < g_held_n; i++) {
      const Held *h = &g_held[i];
      uint64_t dur = h->end > h->start ? h->end - h->start : 0;
      uint64_t cut = spans_overlap (g_um, g_um_n, h->start, h->end);
      g_um_taken += cut;
      g_um_kernels++;
      cap_resolve_locked (h->seq, dur - cut);
    }
    g_held_n = 0;
  }
  if (drop)
    g_um_n = g_um_merged = 0;
}

/* ---- memory records: what the trace lacks ----
 * CUPTI reports every allocation with the correlation id of its call. One
 * whose call the shim did not record (an API it does not intercept) is
 * counted; static __device__/__managed__ variables (module globals, never
 * an API call) are counted apart; stream-ordered pools' reserved size is
 * tracked against their live allocations. The counts are printed at exit:
 * replay sees none of that memory. */

static uint64_t g_unrec_n, g_unrec_bytes, g_static_bytes;
#define MAX_POOLS 64
typedef struct { uint64_t address, size, used; } Pool;
static Pool g_pools[MAX_POOLS];
static size_t g_pools_n;
static uint64_t g_pool_peak, g_pool_used_peak;

static void
pool_update_locked (uint64_t address, uint64_t size, uint64_t used, int destroyed)
{
  size_t i = 0;
  while (i < g_pools_n && g_pools[i].address != address)
    i++;
  if (destroyed) {
    if (i < g_pools_n)
      g_pools[i] = g_pools[--g_pools_n];
    return;
  }
  if (i == g_pools_n) {
    if (g_pools_n == MAX_POOLS)
      return;
    g_pools_n++;
  }
  g_pools[i] = (Pool) { address, size, used };
  uint64_t sum = 0, sum_used = 0;
  for (size_t k = 0; k < g_pools_n; k++) {
    sum += g_pools[k].size;
    sum_used += g_pools[k].used;
  }
  if (sum > g_pool_peak)
    g_pool_peak = sum;
  if (sum_used > g_pool_used_peak)
    g_pool_used_peak = sum_used;
}

static void
memory_record_locked (const CUpti_ActivityMemory4 *m)
{
  if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
    pool_update_locked (m->memoryPoolConfig.address, m->memoryPoolConfig.pool.size,
                        m->memoryPoolConfig.utilizedSize, 0);
  if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
    return;
  if (m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC
      || m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC) {
    g_static_bytes += m->bytes;
  } else if (corr_take_locked (&g_alloc_corr, m->correlationId) == UINT64_MAX) {
    g_unrec_n++;
    g_unrec_bytes += m->bytes;
  }
}

/* "8.0 MiB" */
static const char *
fmt_bytes (char *buf, size_t len, uint64_t b)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
  if (b < 1024) {
    snprintf (buf, len, "%llu B", (unsigned long long) b);
    return buf;
  }
  double v = (double) b / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024;
    u++;
  }
  snprintf (buf, len, "%.1f %s", v, units[u]);
  return buf;
}

/* At exit: what the memory and unified-memory records showed. */
static void
report_locked (void)
{
  char a[32], b[32];
  if (g_unrec_n)
    cap_warn ("CUPTI saw %llu allocation%s of %s that the trace lacks (made by calls vramcap "
              "does not record)", (unsigned long long) g_unrec_n, g_unrec_n == 1 ? "" : "s",
              fmt_bytes (a, sizeof a, g_unrec_bytes));
  if (g_static_bytes)
    cap_warn ("not in the trace: %s of static __device__/__managed__ variables (module globals)",
              fmt_bytes (a, sizeof a, g_static_bytes));
  if (g_pool_peak > g_pool_used_peak)
    cap_warn ("stream-ordered memory pools reserved up to %s while their allocations peaked at "
              "%s; replay counts live allocations only", fmt_bytes (a, sizeof a, g_pool_peak),
              fmt_bytes (b, sizeof b, g_pool_used_peak));
  if (g_um_groups || g_um_htod || g_um_dtoh || g_um_cpu_faults)
    cap_warn ("unified memory: %llu GPU page-fault groups, %s migrated h2d, %s d2h, %llu CPU "
              "page faults; %.3f ms of fault handling taken out of %llu kernel%s on managed memory",
              (unsigned long long) g_um_groups, fmt_bytes (a, sizeof a, g_um_htod),
              fmt_bytes (b, sizeof b, g_um_dtoh), (unsigned long long) g_um_cpu_faults,
              g_um_taken / 1e6, (unsigned long long) g_um_kernels, g_um_kernels == 1 ? "" : "s");
}

/* ---- activity buffers ---- */

#define BUF_SIZE (4u << 20)

static void CUPTIAPI
buffer_requested (uint8_t **buf, size_t *size, size_t *max_records)
{
  *buf = aligned_alloc (8, BUF_SIZE);
  *size = *buf ? BUF_SIZE : 0;
  *max_records = 0;
}

/* The record of a recorded op: its dur. 0 if no op waits for CORR. */
static int
gpu_time (uint32_t corr, uint64_t start, uint64_t end)
{
  uint64_t seq = corr_take_locked (&g_corr, corr);
  update_waiting_locked ();
  if (seq == UINT64_MAX)
    return 0;
  cap_resolve_locked (seq, end > start ? end - start : 0);
  return 1;
}

/* Kernel record K: its time and shape onto the kernel it times. */
static void
gpu_time_kernel (const CUpti_ActivityKernel10 *k)
{
  uint64_t start = k->start, end = k->end;
  uint64_t dur = end > start ? end - start : 0;
  uint64_t seq = corr_take_locked (&g_corr, k->correlationId);
  update_waiting_locked ();
  if (seq == UINT64_MAX) {
    if (g_gw_n)
      graph_time_locked (k->correlationId, k->graphNodeId, dur, k);
    return;
  }
  VtEvent *e = cap_get_locked (seq);
  record_shape (e, k);
  if (e && e->managed) {
    if (g_um_on) {
      um_hold_locked (seq, start, end);
      return;
    }
    if (!g_um_warned) {
      const char *msg = NULL;
      p_cuptiGetResultString (g_um_err, &msg);
      cap_warn ("unified-memory counters unavailable (%s): kernels on managed memory keep their "
                "page-fault time, which replay adds again", msg ? msg : "?");
      g_um_warned = 1;
    }
  }
  cap_resolve_locked (seq, dur);
}

static void
um_record_locked (const CUpti_ActivityUnifiedMemoryCounter3 *u)
{
  switch (u->counterKind) {
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
    g_um_groups++;
    um_span_locked (u->start, u->end);
    break;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    g_um_htod += u->value;
    um_span_locked (u->start, u->end);
    break;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
    g_um_dtoh += u->value;
    um_span_locked (u->start, u->end);
    break;
  case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
    g_um_cpu_faults++;
    break;
  default:
    break;
  }
}

/* Records received, by kind (VRAMCAP_VERBOSE=1 prints them at exit). */
#define N_KINDS 64
static uint64_t g_kind_n[N_KINDS];
/* Records CUPTI could not store (its buffers were full): their ops have no
 * dur. */
static uint64_t g_dropped;
static int g_verbose;

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
  (void) size;
  CUpti_Activity *rec = NULL;
  cap_lock ();
  while (p_cuptiActivityGetNextRecord (buf, valid, &rec) == CUPTI_SUCCESS) {
    g_kind_n[rec->kind < N_KINDS ? rec->kind : 0]++;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *) rec;
      gpu_time_kernel (k);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *) rec;
      if (!gpu_time (m->correlationId, m->start, m->end) && g_bw_n)
        batch_time_locked (m->correlationId, m->bytes, m->copyCount,
                           m->end > m->start ? m->end - m->start : 0);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *) rec;
      gpu_time (m->correlationId, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      memory_record_locked ((const CUpti_ActivityMemory4 *) rec);
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      const CUpti_ActivityMemoryPool3 *m = (const CUpti_ActivityMemoryPool3 *) rec;
      pool_update_locked (m->address, m->size, m->utilizedSize,
                          m->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED);
      break;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      um_record_locked ((const CUpti_ActivityUnifiedMemoryCounter3 *) rec);
      break;
    default:
      break;
    }
  }
  size_t dropped = 0;
  if (p_cuptiActivityGetNumDroppedRecords
      && p_cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) == CUPTI_SUCCESS)
    g_dropped += dropped;
  cap_unlock ();
  free (buf);
}

/* Called by the recorder with its lock held: at exit (blocking 1), flush
 * the activity buffers, settle the kernels on managed memory and say what
 * the records showed; dying (2), settle with what has arrived. */
static void
cupti_resolve (int blocking)
{
  if (blocking == 0)
    return;
  if (blocking == 1 && p_cuptiActivityFlushAll) {
    cap_unlock ();
    p_cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cap_lock ();
  }
  um_settle_locked (1);
  batch_settle_all_locked ();
  if (blocking != 1)
    return;
  report_locked ();
  if (g_dropped)
    cap_warn ("CUPTI dropped %llu activity records: their ops have no GPU time in the trace",
              (unsigned long long) g_dropped);
  if (g_verbose) {
    char line[512];
    size_t n = 0;
    for (int k = 1; k < N_KINDS && n < sizeof line - 32; k++)
      if (g_kind_n[k])
        n += (size_t) snprintf (line + n, sizeof line - n, " %d:%llu", k, (unsigned long long) g_kind_n[k]);
    cap_warn ("CUPTI records by kind (CUpti_ActivityKind: count):%s; memory records %s, "
              "unified-memory counters %s (%d)", n ? line : " none",
              g_memory_records ? "on" : "off", g_um_on ? "on" : "off", (int) g_um_err);
  }
}

static void
cupti_fork_child (void)
{
  corr_clear (&g_corr);
  corr_clear (&g_alloc_corr);
  for (size_t k = 0; k < g_gw_n; k++) {
    free (g_gw[k].ids);
    free (g_gw[k].done);
  }
  g_gw_n = 0;
  g_graph_waiting = 0;
  for (size_t k = 0; k < g_bw_n; k++)
    free (g_bw[k].rec);
  g_bw_n = 0;
  g_batch_waiting = 0;
  update_waiting_locked ();
  /* The parent's kernels and counts are the parent's. */
  g_held_n = g_um_n = g_um_merged = 0;
  g_um_groups = g_um_htod = g_um_dtoh = g_um_cpu_faults = g_um_taken = g_um_kernels = 0;
  g_unrec_n = g_unrec_bytes = g_static_bytes = 0;
  g_pools_n = 0;
  g_pool_peak = g_pool_used_peak = 0;
}

/* ---- driver API callbacks ---- */

#define P(type) ((const type##_params *) cb->functionParams)
/* The stream a call names; in a _ptsz variant NULL is the calling thread's
 * per-thread default stream. A _ptds call runs on that stream (PTDS0). */
#define STREAM(s) ((uintptr_t) ((pt && !(s)) ? CU_STREAM_PER_THREAD : (s)))
#define PTDS0 ((uintptr_t) (pt ? CU_STREAM_PER_THREAD : NULL))
/* Work issued into a stream being captured into a graph does not run: it
 * is recorded when the graph is launched (hook mode skips it the same way). */
#define CAPTURED(s) hooks_stream_capturing ((uintptr_t) (s))
#define COPY_EV(dir, dst, src, n, s, async) \
  do { \
    if (!CAPTURED (s)) \
      pending (cap_copy (t0, t1, dir, (uintptr_t) (dst), (uintptr_t) (src), n, (uintptr_t) (s), \
                         async, 1, cb->correlationId), cb->correlationId); \
  } while (0)
#define MEMSET_EV(dst, n, s, async) \
  do { \
    if (!CAPTURED (s)) \
      pending (cap_memset (t0, t1, (uintptr_t) (dst), n, (uintptr_t) (s), async, 1, \
                           cb->correlationId), cb->correlationId); \
  } while (0)

/* SHAPE: the launch's grid, block and dynamic shared memory, so that a
 * kernel whose activity record never comes (CONCURRENT_KERNEL refused,
 * records dropped) keeps the shape hook mode would give it; the record,
 * when it comes, replaces it (record_shape). */
static void
kernel_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CUfunction f, uintptr_t s,
           void **params, void **extra, CapShape *shape)
{
  static __thread uint64_t words[HOOKS_MAX_WORDS];
  size_t nw = 0;
  if (CAPTURED (s))
    return;
  uint32_t sid = hooks_kernel_words (f, params, extra, words, &nw, shape);
  pending (cap_kernel (t0, t1, sid, s, words, nw, 1, cb->correlationId, shape), cb->correlationId);
}

static void
copy_desc_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, const void *desc, int is3d,
              uintptr_t s, int async)
{
  int dir;
  uintptr_t dst, src;
  uint64_t bytes;
  if (!desc)
    return;
  hooks_copy_desc (desc, is3d, &dir, &dst, &src, &bytes);
  COPY_EV (dir, dst, src, bytes, s, async);
}

/* A batch of N copies (OPS, malloc'd; freed here) on S: its entries wait
 * for the batch's memcpy records. */
static void
batch_ev (const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1, CapCopyOp *ops, size_t n,
          uintptr_t s)
{
  uint32_t cnt = 0;
  uint64_t first = UINT64_MAX;
  if (ops && n && n <= UINT32_MAX && !CAPTURED (s))
    first = cap_copies (t0, t1, ops, (uint32_t) n, s, 1, 1, cb->correlationId, &cnt);
  free (ops);
  if (!cnt)
    return;
  cap_lock ();
  batch_wait_locked (cb->correlationId, first, cnt);
  cap_unlock ();
}

#define BATCH_EV(type, dsts, srcs, sizes, count, stream) \
  do { \
    const type##_params *p_ = P (type); \
    CapCopyOp *ops_ = p_->count ? malloc (p_->count * sizeof *ops_) : NULL; \
    if (ops_) \
      hooks_batch_ops (p_->dsts, p_->srcs, p_->sizes, p_->count, ops_); \
    batch_ev (cb, t0, t1, ops_, p_->count, STREAM (p_->stream)); \
  } while (0)
#define BATCH3D_EV(type) \
  do { \
    const type##_params *p_ = P (type); \
    CapCopyOp *ops_ = p_->numOps && p_->opList ? malloc (p_->numOps * sizeof *ops_) : NULL; \
    if (ops_) \
      hooks_batch3d_ops (p_->opList, p_->numOps, ops_); \
    batch_ev (cb, t0, t1, ops_, p_->numOps, STREAM (p_->hStream)); \
  } while (0)

/* After a sync the program made: flush the activity buffers when many
 * events wait for their times, or when kernels on managed memory were
 * launched (a forced flush, so that their counter records have arrived;
 * then they are settled). */
static void
sync_point (uint64_t t0, uint64_t t1, int scope, uintptr_t h)
{
  cap_sync (t0, t1, scope, h);
  if (!p_cuptiActivityFlushAll)
    return;
  if ((g_managed_seen && g_um_on) || (scope == CAP_SYNC_DEVICE && g_bw_n)) {
    p_cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cap_lock ();
    um_settle_locked (scope == CAP_SYNC_DEVICE);
    if (scope == CAP_SYNC_DEVICE)
      batch_settle_all_locked ();
    cap_unlock ();
  } else if (g_waiting > 4096) {
    p_cuptiActivityFlushAll (0);
  }
}

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

/* Per-thread-default-stream variants and the base function whose
 * parameters (same layout) and event they share. */
static const struct { CUpti_CallbackId pt, base; } pt_map[] = {
  { CB (cuMemcpy_ptds), CB (cuMemcpy) }, { CB (cuMemcpyAsync_ptsz), CB (cuMemcpyAsync) },
  { CB (cuMemcpyHtoD_v2_ptds), CB (cuMemcpyHtoD_v2) }, { CB (cuMemcpyDtoH_v2_ptds), CB (cuMemcpyDtoH_v2) },
  { CB (cuMemcpyDtoD_v2_ptds), CB (cuMemcpyDtoD_v2) },
  { CB (cuMemcpyHtoDAsync_v2_ptsz), CB (cuMemcpyHtoDAsync_v2) },
  { CB (cuMemcpyDtoHAsync_v2_ptsz), CB (cuMemcpyDtoHAsync_v2) },
  { CB (cuMemcpyDtoDAsync_v2_ptsz), CB (cuMemcpyDtoDAsync_v2) },
  { CB (cuMemcpyPeer_ptds), CB (cuMemcpyPeer) }, { CB (cuMemcpyPeerAsync_ptsz), CB (cuMemcpyPeerAsync) },
  { CB (cuMemcpy2D_v2_ptds), CB (cuMemcpy2D_v2) },
  { CB (cuMemcpy2DUnaligned_v2_ptds), CB (cuMemcpy2DUnaligned_v2) },
  { CB (cuMemcpy2DAsync_v2_ptsz), CB (cuMemcpy2DAsync_v2) },
  { CB (cuMemcpy3D_v2_ptds), CB (cuMemcpy3D_v2) }, { CB (cuMemcpy3DAsync_v2_ptsz), CB (cuMemcpy3DAsync_v2) },
  { CB (cuMemsetD8_v2_ptds), CB (cuMemsetD8_v2) }, { CB (cuMemsetD16_v2_ptds), CB (cuMemsetD16_v2) },
  { CB (cuMemsetD32_v2_ptds), CB (cuMemsetD32_v2) },
  { CB (cuMemsetD8Async_ptsz), CB (cuMemsetD8Async) }, { CB (cuMemsetD16Async_ptsz), CB (cuMemsetD16Async) },
  { CB (cuMemsetD32Async_ptsz), CB (cuMemsetD32Async) },
  { CB (cuMemAllocAsync_ptsz), CB (cuMemAllocAsync) },
  { CB (cuMemAllocFromPoolAsync_ptsz), CB (cuMemAllocFromPoolAsync) },
  { CB (cuMemFreeAsync_ptsz), CB (cuMemFreeAsync) },
  { CB (cuMemPrefetchAsync_v2_ptsz), CB (cuMemPrefetchAsync_v2) },
  { CB (cuLaunchKernel_ptsz), CB (cuLaunchKernel) }, { CB (cuLaunchKernelEx_ptsz), CB (cuLaunchKernelEx) },
  { CB (cuLaunchCooperativeKernel_ptsz), CB (cuLaunchCooperativeKernel) },
  { CB (cuGraphInstantiateWithParams_ptsz), CB (cuGraphInstantiateWithParams) },
  { CB (cuGraphLaunch_ptsz), CB (cuGraphLaunch) },
  { CB (cuStreamSynchronize_ptsz), CB (cuStreamSynchronize) },
  { CB (cuEventRecord_ptsz), CB (cuEventRecord) }, { CB (cuStreamWaitEvent_ptsz), CB (cuStreamWaitEvent) },
  { CB (cuMemcpyHtoA_v2_ptds), CB (cuMemcpyHtoA_v2) }, { CB (cuMemcpyAtoH_v2_ptds), CB (cuMemcpyAtoH_v2) },
  { CB (cuMemcpyAtoD_v2_ptds), CB (cuMemcpyAtoD_v2) }, { CB (cuMemcpyDtoA_v2_ptds), CB (cuMemcpyDtoA_v2) },
  { CB (cuMemcpyAtoA_v2_ptds), CB (cuMemcpyAtoA_v2) },
  { CB (cuMemcpyHtoAAsync_v2_ptsz), CB (cuMemcpyHtoAAsync_v2) },
  { CB (cuMemcpyAtoHAsync_v2_ptsz), CB (cuMemcpyAtoHAsync_v2) },
  { CB (cuMemcpy3DPeer_ptds), CB (cuMemcpy3DPeer) }, { CB (cuMemcpy3DPeerAsync_ptsz), CB (cuMemcpy3DPeerAsync) },
#if CUDA_VERSION >= 12080
  { CB (cuMemcpyBatchAsync_ptsz), CB (cuMemcpyBatchAsync) },
  { CB (cuMemcpy3DBatchAsync_ptsz), CB (cuMemcpy3DBatchAsync) },
#endif
#if CUDA_VERSION >= 13000
  { CB (cuMemcpyBatchAsync_v2_ptsz), CB (cuMemcpyBatchAsync_v2) },
  { CB (cuMemcpy3DBatchAsync_v2_ptsz), CB (cuMemcpy3DBatchAsync_v2) },
#endif
};
#define N_PT (sizeof pt_map / sizeof pt_map[0])

static void CUPTIAPI
on_callback (void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
  (void) ud;
  if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  const CUpti_CallbackData *cb = data;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = cap_now ();
    return;
  }
  uint64_t t0 = *cb->correlationData, t1 = cap_now ();
  if (!cb->functionReturnValue || *(const CUresult *) cb->functionReturnValue != CUDA_SUCCESS)
    return;
  if (!cap_have_device ())
    hooks_query_device ();
  int pt = 0;
  for (size_t i = 0; i < N_PT; i++)
    if (pt_map[i].pt == cbid) {
      cbid = pt_map[i].base;
      pt = 1;
      break;
    }
  switch (cbid) {
  case CB (cuMemAlloc_v2):
    cap_alloc (t0, t1, *P (cuMemAlloc_v2)->dptr, P (cuMemAlloc_v2)->bytesize, CAP_MEM_DEVICE, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemAllocPitch_v2):
    cap_alloc (t0, t1, *P (cuMemAllocPitch_v2)->dptr,
               (uint64_t) *P (cuMemAllocPitch_v2)->pPitch * P (cuMemAllocPitch_v2)->Height,
               CAP_MEM_DEVICE, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemAllocManaged):
    enable_um_counters ();
    cap_alloc (t0, t1, *P (cuMemAllocManaged)->dptr, P (cuMemAllocManaged)->bytesize,
               CAP_MEM_MANAGED, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemHostAlloc):
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemHostAlloc)->pp, P (cuMemHostAlloc)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemAllocHost_v2):
    cap_alloc (t0, t1, (uintptr_t) *P (cuMemAllocHost_v2)->pp, P (cuMemAllocHost_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemHostRegister_v2):
    cap_alloc (t0, t1, (uintptr_t) P (cuMemHostRegister_v2)->p, P (cuMemHostRegister_v2)->bytesize,
               CAP_MEM_PINNED, 0, 0);
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemAllocAsync):
    if (CAPTURED (STREAM (P (cuMemAllocAsync)->hStream)))
      break;                    /* a graph's allocation node */
    cap_alloc (t0, t1, *P (cuMemAllocAsync)->dptr, P (cuMemAllocAsync)->bytesize, CAP_MEM_DEVICE,
               1, STREAM (P (cuMemAllocAsync)->hStream));
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemAllocFromPoolAsync):
    if (CAPTURED (STREAM (P (cuMemAllocFromPoolAsync)->hStream)))
      break;
    cap_alloc (t0, t1, *P (cuMemAllocFromPoolAsync)->dptr, P (cuMemAllocFromPoolAsync)->bytesize,
               CAP_MEM_DEVICE, 1, STREAM (P (cuMemAllocFromPoolAsync)->hStream));
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemCreate):         /* the physical memory of cuMemMap's allocations */
    alloc_seen (cb->correlationId);
    break;
  case CB (cuMemMap):
    cap_alloc (t0, t1, P (cuMemMap)->ptr, P (cuMemMap)->size, CAP_MEM_DEVICE, 0, 0);
    break;
  case CB (cuMemFree_v2):
    cap_free (t0, t1, P (cuMemFree_v2)->dptr, 0, 0);
    break;
  case CB (cuMemFreeHost):
    cap_free (t0, t1, (uintptr_t) P (cuMemFreeHost)->p, 0, 0);
    break;
  case CB (cuMemHostUnregister):
    cap_free (t0, t1, (uintptr_t) P (cuMemHostUnregister)->p, 0, 0);
    break;
  case CB (cuMemFreeAsync):
    if (CAPTURED (STREAM (P (cuMemFreeAsync)->hStream)))
      break;
    cap_free (t0, t1, P (cuMemFreeAsync)->dptr, 1, STREAM (P (cuMemFreeAsync)->hStream));
    break;
  case CB (cuMemUnmap):
    cap_free_range (t0, t1, P (cuMemUnmap)->ptr, P (cuMemUnmap)->ptr + P (cuMemUnmap)->size);
    break;
  case CB (cuMemcpy):
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpy)->dst, P (cuMemcpy)->src, P (cuMemcpy)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyAsync):
    COPY_EV (CAP_DIR_AUTO, P (cuMemcpyAsync)->dst, P (cuMemcpyAsync)->src,
             P (cuMemcpyAsync)->ByteCount, STREAM (P (cuMemcpyAsync)->hStream), 1);
    break;
  case CB (cuMemcpyHtoD_v2):
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoD_v2)->dstDevice, P (cuMemcpyHtoD_v2)->srcHost,
             P (cuMemcpyHtoD_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyDtoH_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoH_v2)->dstHost, P (cuMemcpyDtoH_v2)->srcDevice,
             P (cuMemcpyDtoH_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyDtoD_v2):
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoD_v2)->dstDevice, P (cuMemcpyDtoD_v2)->srcDevice,
             P (cuMemcpyDtoD_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyHtoDAsync_v2):
    COPY_EV (CAP_DIR_H2D, P (cuMemcpyHtoDAsync_v2)->dstDevice, P (cuMemcpyHtoDAsync_v2)->srcHost,
             P (cuMemcpyHtoDAsync_v2)->ByteCount, STREAM (P (cuMemcpyHtoDAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyDtoHAsync_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyDtoHAsync_v2)->dstHost, P (cuMemcpyDtoHAsync_v2)->srcDevice,
             P (cuMemcpyDtoHAsync_v2)->ByteCount, STREAM (P (cuMemcpyDtoHAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyDtoDAsync_v2):
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyDtoDAsync_v2)->dstDevice, P (cuMemcpyDtoDAsync_v2)->srcDevice,
             P (cuMemcpyDtoDAsync_v2)->ByteCount, STREAM (P (cuMemcpyDtoDAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyPeer):
    COPY_EV (CAP_DIR_P2P, P (cuMemcpyPeer)->dstDevice, P (cuMemcpyPeer)->srcDevice,
             P (cuMemcpyPeer)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyPeerAsync):
    COPY_EV (CAP_DIR_P2P, P (cuMemcpyPeerAsync)->dstDevice, P (cuMemcpyPeerAsync)->srcDevice,
             P (cuMemcpyPeerAsync)->ByteCount, STREAM (P (cuMemcpyPeerAsync)->hStream), 1);
    break;
  case CB (cuMemcpy2D_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2D_v2)->pCopy, 0, PTDS0, 0);
    break;
  case CB (cuMemcpy2DUnaligned_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2DUnaligned_v2)->pCopy, 0, PTDS0, 0);
    break;
  case CB (cuMemcpy2DAsync_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy2DAsync_v2)->pCopy, 0,
                  STREAM (P (cuMemcpy2DAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpy3D_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3D_v2)->pCopy, 1, PTDS0, 0);
    break;
  case CB (cuMemcpy3DAsync_v2):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3DAsync_v2)->pCopy, 1,
                  STREAM (P (cuMemcpy3DAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpy3DPeer):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3DPeer)->pCopy, 2, PTDS0, 0);
    break;
  case CB (cuMemcpy3DPeerAsync):
    copy_desc_ev (cb, t0, t1, P (cuMemcpy3DPeerAsync)->pCopy, 2,
                  STREAM (P (cuMemcpy3DPeerAsync)->hStream), 1);
    break;
  /* Array copies: the array side is the synthetic "cuda_arrays" allocation. */
  case CB (cuMemcpyHtoA_v2):
    COPY_EV (CAP_DIR_H2D, CAP_ARRAY, P (cuMemcpyHtoA_v2)->srcHost, P (cuMemcpyHtoA_v2)->ByteCount,
             PTDS0, 0);
    break;
  case CB (cuMemcpyAtoH_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyAtoH_v2)->dstHost, CAP_ARRAY, P (cuMemcpyAtoH_v2)->ByteCount,
             PTDS0, 0);
    break;
  case CB (cuMemcpyAtoD_v2):
    COPY_EV (CAP_DIR_D2D, P (cuMemcpyAtoD_v2)->dstDevice, CAP_ARRAY, P (cuMemcpyAtoD_v2)->ByteCount,
             PTDS0, 0);
    break;
  case CB (cuMemcpyDtoA_v2):
    COPY_EV (CAP_DIR_D2D, CAP_ARRAY, P (cuMemcpyDtoA_v2)->srcDevice, P (cuMemcpyDtoA_v2)->ByteCount,
             PTDS0, 0);
    break;
  case CB (cuMemcpyAtoA_v2):
    COPY_EV (CAP_DIR_D2D, CAP_ARRAY, CAP_ARRAY, P (cuMemcpyAtoA_v2)->ByteCount, PTDS0, 0);
    break;
  case CB (cuMemcpyHtoAAsync_v2):
    COPY_EV (CAP_DIR_H2D, CAP_ARRAY, P (cuMemcpyHtoAAsync_v2)->srcHost,
             P (cuMemcpyHtoAAsync_v2)->ByteCount, STREAM (P (cuMemcpyHtoAAsync_v2)->hStream), 1);
    break;
  case CB (cuMemcpyAtoHAsync_v2):
    COPY_EV (CAP_DIR_D2H, P (cuMemcpyAtoHAsync_v2)->dstHost, CAP_ARRAY,
             P (cuMemcpyAtoHAsync_v2)->ByteCount, STREAM (P (cuMemcpyAtoHAsync_v2)->hStream), 1);
    break;
#if CUDA_VERSION >= 12080
  case CB (cuMemcpyBatchAsync):
    BATCH_EV (cuMemcpyBatchAsync, dsts, srcs, sizes, count, hStream);
    break;
  case CB (cuMemcpy3DBatchAsync):
    BATCH3D_EV (cuMemcpy3DBatchAsync);
    break;
#endif
#if CUDA_VERSION >= 13000
  case CB (cuMemcpyBatchAsync_v2):
    BATCH_EV (cuMemcpyBatchAsync_v2, dsts, srcs, sizes, count, hStream);
    break;
  case CB (cuMemcpy3DBatchAsync_v2):
    BATCH3D_EV (cuMemcpy3DBatchAsync_v2);
    break;
#endif
  case CB (cuMemsetD8_v2):
    MEMSET_EV (P (cuMemsetD8_v2)->dstDevice, P (cuMemsetD8_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD16_v2):
    MEMSET_EV (P (cuMemsetD16_v2)->dstDevice, 2 * (uint64_t) P (cuMemsetD16_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD32_v2):
    MEMSET_EV (P (cuMemsetD32_v2)->dstDevice, 4 * (uint64_t) P (cuMemsetD32_v2)->N, PTDS0, 0);
    break;
  case CB (cuMemsetD8Async):
    MEMSET_EV (P (cuMemsetD8Async)->dstDevice, P (cuMemsetD8Async)->N,
               STREAM (P (cuMemsetD8Async)->hStream), 1);
    break;
  case CB (cuMemsetD16Async):
    MEMSET_EV (P (cuMemsetD16Async)->dstDevice, 2 * (uint64_t) P (cuMemsetD16Async)->N,
               STREAM (P (cuMemsetD16Async)->hStream), 1);
    break;
  case CB (cuMemsetD32Async):
    MEMSET_EV (P (cuMemsetD32Async)->dstDevice, 4 * (uint64_t) P (cuMemsetD32Async)->N,
               STREAM (P (cuMemsetD32Async)->hStream), 1);
    break;
  case CB (cuMemPrefetchAsync_v2): {
    const cuMemPrefetchAsync_v2_params *p = P (cuMemPrefetchAsync_v2);
    if (CAPTURED (STREAM (p->hStream)))
      break;
    cap_prefetch (t0, t1, p->devPtr, p->count, p->location.type != CU_MEM_LOCATION_TYPE_DEVICE,
                  STREAM (p->hStream));
    break;
  }
  case CB (cuMemAdvise):
  case CB (cuMemAdvise_v2):
    cap_advise ();
    break;
  case CB (cuLaunchKernel): {
    const cuLaunchKernel_params *p = P (cuLaunchKernel);
    CapShape sh = { { p->gridDimX, p->gridDimY, p->gridDimZ },
                    { p->blockDimX, p->blockDimY, p->blockDimZ }, 0, p->sharedMemBytes };
    kernel_ev (cb, t0, t1, p->f, STREAM (p->hStream), p->kernelParams, p->extra, &sh);
    break;
  }
  case CB (cuLaunchKernelEx): {
    const cuLaunchKernelEx_params *p = P (cuLaunchKernelEx);
    const CUlaunchConfig *c = p->config;
    CapShape sh;
    memset (&sh, 0, sizeof sh);
    if (c)
      sh = (CapShape) { { c->gridDimX, c->gridDimY, c->gridDimZ },
                        { c->blockDimX, c->blockDimY, c->blockDimZ }, 0, c->sharedMemBytes };
    kernel_ev (cb, t0, t1, p->f, STREAM (c ? c->hStream : NULL), p->kernelParams, p->extra, &sh);
    break;
  }
  case CB (cuLaunchCooperativeKernel): {
    const cuLaunchCooperativeKernel_params *p = P (cuLaunchCooperativeKernel);
    CapShape sh = { { p->gridDimX, p->gridDimY, p->gridDimZ },
                    { p->blockDimX, p->blockDimY, p->blockDimZ }, 0, p->sharedMemBytes };
    kernel_ev (cb, t0, t1, p->f, STREAM (p->hStream), p->kernelParams, NULL, &sh);
    break;
  }
  /* Graphs: kernel nodes are remembered at instantiation, recorded at launch. */
  case CB (cuGraphInstantiateWithFlags):
    hooks_graph_remember (*P (cuGraphInstantiateWithFlags)->phGraphExec,
                          P (cuGraphInstantiateWithFlags)->hGraph);
    break;
  case CB (cuGraphInstantiate_v2):
    hooks_graph_remember (*P (cuGraphInstantiate_v2)->phGraphExec, P (cuGraphInstantiate_v2)->hGraph);
    break;
  case CB (cuGraphInstantiate):
    hooks_graph_remember (*P (cuGraphInstantiate)->phGraphExec, P (cuGraphInstantiate)->hGraph);
    break;
  case CB (cuGraphInstantiateWithParams):
    hooks_graph_remember (*P (cuGraphInstantiateWithParams)->phGraphExec,
                          P (cuGraphInstantiateWithParams)->hGraph);
    break;
  case CB (cuGraphExecDestroy):
    hooks_graph_forget (P (cuGraphExecDestroy)->hGraphExec);
    break;
  case CB (cuGraphLaunch):
    graph_launch_ev (cb, t0, t1, P (cuGraphLaunch)->hGraph, STREAM (P (cuGraphLaunch)->hStream));
    break;
  case CB (cuCtxSynchronize):
#if CUDA_VERSION >= 13000
  case CB (cuCtxSynchronize_v2):
#endif
    sync_point (t0, t1, CAP_SYNC_DEVICE, 0);
    break;
  case CB (cuStreamSynchronize):
    sync_point (t0, t1, CAP_SYNC_STREAM, STREAM (P (cuStreamSynchronize)->hStream));
    break;
  case CB (cuEventSynchronize):
    sync_point (t0, t1, CAP_SYNC_EVENT, (uintptr_t) P (cuEventSynchronize)->hEvent);
    break;
  case CB (cuEventRecord):
    if (CAPTURED (STREAM (P (cuEventRecord)->hStream)))
      break;
    cap_event_record (t0, t1, (uintptr_t) P (cuEventRecord)->hEvent,
                      STREAM (P (cuEventRecord)->hStream));
    break;
  case CB (cuStreamWaitEvent):
    if (CAPTURED (STREAM (P (cuStreamWaitEvent)->hStream)))
      break;
    cap_stream_wait (t0, t1, STREAM (P (cuStreamWaitEvent)->hStream),
                     (uintptr_t) P (cuStreamWaitEvent)->hEvent);
    break;
  default:
    break;
  }
}

static const CUpti_CallbackId cbids[] = {
  CB (cuMemAlloc_v2), CB (cuMemAllocPitch_v2), CB (cuMemAllocManaged), CB (cuMemHostAlloc),
  CB (cuMemAllocHost_v2), CB (cuMemHostRegister_v2), CB (cuMemAllocAsync),
  CB (cuMemAllocFromPoolAsync), CB (cuMemCreate), CB (cuMemMap), CB (cuMemFree_v2), CB (cuMemFreeHost),
  CB (cuMemHostUnregister), CB (cuMemFreeAsync), CB (cuMemUnmap),
  CB (cuMemcpy), CB (cuMemcpyAsync), CB (cuMemcpyHtoD_v2), CB (cuMemcpyDtoH_v2),
  CB (cuMemcpyDtoD_v2), CB (cuMemcpyHtoDAsync_v2), CB (cuMemcpyDtoHAsync_v2),
  CB (cuMemcpyDtoDAsync_v2), CB (cuMemcpyPeer), CB (cuMemcpyPeerAsync),
  CB (cuMemcpy2D_v2), CB (cuMemcpy2DUnaligned_v2), CB (cuMemcpy2DAsync_v2),
  CB (cuMemcpy3D_v2), CB (cuMemcpy3DAsync_v2), CB (cuMemcpy3DPeer), CB (cuMemcpy3DPeerAsync),
  CB (cuMemcpyHtoA_v2), CB (cuMemcpyAtoH_v2), CB (cuMemcpyAtoD_v2), CB (cuMemcpyDtoA_v2),
  CB (cuMemcpyAtoA_v2), CB (cuMemcpyHtoAAsync_v2), CB (cuMemcpyAtoHAsync_v2),
#if CUDA_VERSION >= 12080
  CB (cuMemcpyBatchAsync), CB (cuMemcpy3DBatchAsync),
#endif
#if CUDA_VERSION >= 13000
  CB (cuMemcpyBatchAsync_v2), CB (cuMemcpy3DBatchAsync_v2),
#endif
  CB (cuMemsetD8_v2), CB (cuMemsetD16_v2), CB (cuMemsetD32_v2),
  CB (cuMemsetD8Async), CB (cuMemsetD16Async), CB (cuMemsetD32Async),
  CB (cuMemAdvise), CB (cuMemAdvise_v2),
  CB (cuMemPrefetchAsync_v2),
  CB (cuLaunchKernel), CB (cuLaunchKernelEx), CB (cuLaunchCooperativeKernel),
  CB (cuGraphInstantiateWithFlags), CB (cuGraphInstantiate_v2), CB (cuGraphInstantiate),
  CB (cuGraphInstantiateWithParams),
  CB (cuGraphExecDestroy), CB (cuGraphLaunch),
  CB (cuCtxSynchronize), CB (cuStreamSynchronize), CB (cuEventSynchronize), CB (cuEventRecord),
  CB (cuStreamWaitEvent),
#if CUDA_VERSION >= 13000
  CB (cuCtxSynchronize_v2),
#endif
};

static int
load_cupti (void)
{
  static const char *const names[] = { "libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                       VRAMCAP_CUPTI_DIR "/libcupti.so" };
  void *h = NULL;
  const char *env = getenv ("VRAMCAP_CUPTI");
  if (env && *env)
    h = dlopen (env, RTLD_NOW | RTLD_GLOBAL);
  for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++)
    h = dlopen (names[i], RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    return 0;
#define LOAD(fn) p_##fn = (__typeof__ (fn) *) dlsym (h, #fn); if (!p_##fn) return 0;
  CUPTI_FUNCS (LOAD)
#undef LOAD
#define LOAD_OPTIONAL(fn) p_##fn = (__typeof__ (fn) *) dlsym (h, #fn);
  CUPTI_OPTIONAL (LOAD_OPTIONAL)
#undef LOAD_OPTIONAL
  return 1;
}

/* Unified-memory counters: the fault groups and migrations, with their
 * times, on every device (the old per-device scope is ignored since CUDA
 * 7.0). Not every setup has them; g_um_err keeps why for the note. During
 * cuInit (InitializeInjection) CUPTI answers CUPTI_ERROR_NOT_READY: the
 * next try is at the program's first managed allocation, before any kernel
 * can fault on it. */
static void
enable_um_counters (void)
{
  if (g_um_on || (g_um_err != CUPTI_SUCCESS && g_um_err != CUPTI_ERROR_NOT_READY))
    return;
  static const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
  };
  CUpti_ActivityUnifiedMemoryCounterConfig cfg[sizeof kinds / sizeof kinds[0]];
  if (!p_cuptiActivityConfigureUnifiedMemoryCounter) {
    g_um_err = CUPTI_ERROR_NOT_SUPPORTED;
    return;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    cfg[i] = (CUpti_ActivityUnifiedMemoryCounterConfig) {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES, kinds[i], 0, 1 };
  /* CPU fault counts are the ones some setups lack: without them, the three
   * that matter for kernel durations. */
  g_um_err = p_cuptiActivityConfigureUnifiedMemoryCounter (cfg, 4);
  if (g_um_err != CUPTI_SUCCESS)
    g_um_err = p_cuptiActivityConfigureUnifiedMemoryCounter (cfg, 3);
  if (g_um_err == CUPTI_SUCCESS)
    g_um_err = p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  g_um_on = g_um_err == CUPTI_SUCCESS;
}

static void
no_times (const char *what, CUptiResult r)
{
  const char *msg = NULL;
  p_cuptiGetResultString (r, &msg);
  cap_warn ("CUPTI: %s failed (%s): GPU times will be missing from the trace", what,
            msg ? msg : "?");
}

static void
fall_back (const char *why)
{
  cap_warn ("%s; recording in hook mode instead", why);
  hooks_start ();
}

int
InitializeInjection (void)
{
  cap_init ();
  if (cap_mode != CAP_MODE_OFF)
    return 1;
  if (cap_requested_mode () == CAP_MODE_HOOK) {
    hooks_start ();
    return 1;
  }
  if (!load_cupti ()) {
    fall_back ("cannot load libcupti (set VRAMCAP_CUPTI to its path)");
    return 1;
  }
  CUptiResult r = p_cuptiSubscribe (&g_sub, (CUpti_CallbackFunc) on_callback, NULL);
  if (r != CUPTI_SUCCESS) {
    const char *msg = NULL;
    p_cuptiGetResultString (r, &msg);
    char why[512];
    snprintf (why, sizeof why, "%s (%s)",
              r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? "CUPTI is already in use by another profiler or tool"
                : "cuptiSubscribe failed", msg ? msg : "?");
    fall_back (why);
    return 1;
  }
  for (size_t i = 0; i < sizeof cbids / sizeof cbids[0]; i++)
    p_cuptiEnableCallback (1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, cbids[i]);
  for (size_t i = 0; i < N_PT; i++)
    p_cuptiEnableCallback (1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, pt_map[i].pt);
  hooks_graph_node_id_cb = graph_node_id;
  const char *v = getenv ("VRAMCAP_VERBOSE");
  g_verbose = v && *v && strcmp (v, "0") != 0;
  /* Without these, ops are recorded but have no GPU time: say so. */
  static const struct { CUpti_ActivityKind kind; const char *name; } timing[] = {
    { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL" },
    { CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY" }, { CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET" },
  };
  r = p_cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS)
    no_times ("cuptiActivityRegisterCallbacks", r);
  for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof timing / sizeof timing[0]; i++) {
    CUptiResult e = p_cuptiActivityEnable (timing[i].kind);
    if (e != CUPTI_SUCCESS)
      no_times (timing[i].name, e);
  }
  g_memory_records = p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS;
  p_cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMORY_POOL);
  enable_um_counters ();
  cap_resolve_cb = cupti_resolve;
  cap_fork_child_cb = cupti_fork_child;
  cap_mode = CAP_MODE_CUPTI;
  return 1;
}
