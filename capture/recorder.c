/* recorder.c — the capture shim's recorder (see recorder.h).
 *
 * Design: one global buffer of events under one mutex. One lock for the
 * buffer and the allocation map keeps the file order consistent with the
 * map: an allocation is always written before a kernel that touches it or
 * the free that ends it, whichever threads do them. Events whose GPU time
 * is not known yet (pending) hold back the events behind them; the buffer
 * is written up to the first pending event whenever it grows past
 * FLUSH_EVENTS and at exit. The file is written only when the first batch
 * goes out, so the header can name the device. */
#define _GNU_SOURCE
#include "recorder.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_EVENTS 8192u
#define POLL_EVERY 1024u

volatile int cap_mode = CAP_MODE_OFF;
void (*cap_resolve_cb) (int blocking);
void (*cap_fork_child_cb) (void);
int (*cap_coll_cb) (uintptr_t stream, CapColl *out);
void (*cap_nothing_cause_cb) (char *buf, size_t cap);

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t g_lock_owner;      /* kernel tid holding g_lock, 0 if none */
static int g_inited;
static uint64_t g_t0;
static int g_requested = CAP_MODE_CUPTI;

/* events not yet written: seq of g_ev[0] is g_base */
static VtEvent *g_ev;
static size_t g_n, g_cap;
static uint64_t g_base;
static uint64_t g_recorded;              /* events recorded by this process */
static uint64_t g_advise;                /* cuMemAdvise calls (not in the trace) */
static uint64_t g_managed_kernels;       /* kernels that touch managed memory */

/* live allocations, sorted by base */
typedef struct { uintptr_t base, end; uint64_t id; int kind; } Range;
static Range *g_map;
static size_t g_map_n, g_map_cap;
static uint64_t g_next_id = 1;

/* small handle -> id tables (streams, events): open addressing */
typedef struct { uintptr_t *keys; uint64_t *vals; size_t cap, n; uint64_t next; } IdTab;
static IdTab g_streams = { .next = 1 }, g_events = { .next = 1 };

/* strings */
static char **g_str;
static size_t g_str_n, g_str_cap;
static uint32_t *g_str_hash;             /* open addressing: sid + 1, 0 = empty */
static size_t g_str_hcap;

/* output */
static char g_out[4096];
static int g_root = 1;
static VtWriter *g_w;
static uint64_t g_defined;               /* string ids defined in the file */
static int g_failed, g_finished;
static CapDevice g_dev;
static int g_have_dev;
static char g_driver[64];

/* The address sidecar (FILE.addrs), written when $VRAMCAP_ADDRS is 1 (vramcap
 * sets it with its PyTorch hook): the device addresses behind the trace's
 * ids, which the trace format does not carry and vramsim convert --tensor
 * needs to join a PyTorch memory snapshot to the trace (docs/capture.md
 * "Tensor-level allocations"). Lines, hex addresses, IDX the event's index
 * in the trace:
 *   vramcap-addrs 1 REALTIME_NS     CLOCK_REALTIME at trace time 0
 *   a IDX ADDR                      alloc: base address
 *   c IDX DST SRC                   copy: its two pointers
 *   m IDX DST                       memset
 *   p IDX PTR                       prefetch
 *   k IDX PTR...                    kernel: parameter words inside allocations
 * Plain write(2) through a buffer (signal handlers finish it too); FILE.addrs
 * is renamed into place with the trace, and removed if the trace is not. */
static int g_addrs_on, g_addrs_fd = -1;
static char g_addrs_tmp[4200], g_addrs_buf[65536];
static size_t g_addrs_len;
static uint64_t g_real0;                 /* CLOCK_REALTIME ns at trace time 0 */

static pid_t g_pid;                      /* the process this state belongs to */
static uint32_t g_next_tid;
static __thread int64_t t_tid = -1;

/* ------------------------------------------------------------------ */

void
cap_warn (const char *fmt, ...)
{
  char buf[1024];
  int n = snprintf (buf, sizeof buf, "vramcap: ");
  va_list ap;
  va_start (ap, fmt);
  n += vsnprintf (buf + n, sizeof buf - (size_t) n - 1, fmt, ap);
  va_end (ap);
  if (n > (int) sizeof buf - 2)
    n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t r = write (2, buf, (size_t) n);
  (void) r;
}

uint64_t
cap_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  uint64_t v = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
  return v - g_t0;
}

uint32_t
cap_tid (void)
{
  if (t_tid < 0)
    t_tid = __atomic_fetch_add (&g_next_tid, 1, __ATOMIC_RELAXED);
  return (uint32_t) t_tid;
}

static __thread pid_t t_ktid;

/* Cached: a system call per lock would double the cost of a launch. */
static pid_t
kernel_tid (void)
{
  if (!t_ktid)
    t_ktid = (pid_t) syscall (SYS_gettid);
  return t_ktid;
}

void
cap_lock (void)
{
  pthread_mutex_lock (&g_lock);
  g_lock_owner = kernel_tid ();
}

void
cap_unlock (void)
{
  g_lock_owner = 0;
  pthread_mutex_unlock (&g_lock);
}

int
cap_requested_mode (void)
{
  return g_requested;
}

/* ---- id tables ---- */

static uint64_t
idtab_get (IdTab *t, uintptr_t key)
{
  if (t->n * 2 >= t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 64;
    uintptr_t *nk = calloc (nc, sizeof *nk);
    uint64_t *nv = calloc (nc, sizeof *nv);
    if (!nk || !nv) {
      free (nk);
      free (nv);
      return 0;
    }
    for (size_t i = 0; i < t->cap; i++)
      if (t->vals[i]) {
        size_t j = (t->keys[i] * 0x9E3779B97F4A7C15ull >> 17) & (nc - 1);
        while (nv[j])
          j = (j + 1) & (nc - 1);
        nk[j] = t->keys[i];
        nv[j] = t->vals[i];
      }
    free (t->keys);
    free (t->vals);
    t->keys = nk;
    t->vals = nv;
    t->cap = nc;
  }
  size_t j = (key * 0x9E3779B97F4A7C15ull >> 17) & (t->cap - 1);
  while (t->vals[j]) {
    if (t->keys[j] == key)
      return t->vals[j];
    j = (j + 1) & (t->cap - 1);
  }
  t->keys[j] = key;
  t->vals[j] = t->next++;
  t->n++;
  return t->vals[j];
}

static void
idtab_clear (IdTab *t)
{
  free (t->keys);
  free (t->vals);
  memset (t, 0, sizeof *t);
  t->next = 1;
}

/* Stream ids: 0 is the NULL stream and CU_STREAM_LEGACY (0x1); every other
 * handle gets 1, 2, ... in order of first use. CU_STREAM_PER_THREAD (0x2)
 * is the calling thread's own default stream, so each host thread's gets
 * an id of its own: it is keyed as (tid + 1) << 4 | 2, which no stream
 * handle (an aligned pointer) can equal. */
uint64_t
cap_stream_id_locked (uintptr_t s)
{
  if (s == 0 || s == 1)
    return 0;
  if (s == 2)
    s = ((uintptr_t) cap_tid () + 1) << 4 | 2;
  return idtab_get (&g_streams, s);
}

/* ---- strings ---- */

static uint64_t
str_hash (const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ull;
  return h;
}

static uint32_t
intern_locked (const char *s)
{
  if (g_str_n * 2 >= g_str_hcap) {
    size_t nc = g_str_hcap ? g_str_hcap * 2 : 256;
    uint32_t *nh = calloc (nc, sizeof *nh);
    if (!nh)
      return 0;
    for (size_t i = 0; i < g_str_n; i++) {
      size_t j = str_hash (g_str[i]) & (nc - 1);
      while (nh[j])
        j = (j + 1) & (nc - 1);
      nh[j] = (uint32_t) i + 1;
    }
    free (g_str_hash);
    g_str_hash = nh;
    g_str_hcap = nc;
  }
  size_t j = str_hash (s) & (g_str_hcap - 1);
  while (g_str_hash[j]) {
    if (strcmp (g_str[g_str_hash[j] - 1], s) == 0)
      return g_str_hash[j] - 1;
    j = (j + 1) & (g_str_hcap - 1);
  }
  char **ns = cap_grow (g_str, g_str_n, &g_str_cap, sizeof *g_str, 64);
  if (!ns)
    return 0;
  g_str = ns;
  char *copy = strdup (s);
  if (!copy)
    return 0;
  g_str[g_str_n] = copy;
  g_str_hash[j] = (uint32_t) g_str_n + 1;
  return (uint32_t) g_str_n++;
}

uint32_t
cap_intern (const char *s)
{
  cap_lock ();
  uint32_t sid = intern_locked (s ? s : "?");
  cap_unlock ();
  return sid;
}

/* ---- the allocation map ---- */

/* Index of the first range with base > p. */
static size_t
map_upper (uintptr_t p)
{
  size_t lo = 0, hi = g_map_n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g_map[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static const Range *
map_find (uintptr_t p)
{
  size_t i = map_upper (p);
  if (i > 0 && p < g_map[i - 1].end)
    return &g_map[i - 1];
  return NULL;
}

void *
cap_grow (void *arr, size_t n, size_t *cap, size_t size, size_t first)
{
  if (n < *cap)
    return arr;
  size_t nc = *cap ? *cap * 2 : first;
  void *na = realloc (arr, nc * size);
  if (na)
    *cap = nc;
  return na;
}

/* ---- the event buffer ---- */

static void write_prefix_locked (int all);

static VtEvent *
push_locked (uint64_t t0, uint64_t t1, int op, uint64_t *seq)
{
  if (g_finished || g_failed)
    return NULL;
  VtEvent *ne = cap_grow (g_ev, g_n, &g_cap, sizeof *g_ev, 4096);
  if (!ne)
    return NULL;
  g_ev = ne;
  VtEvent *e = &g_ev[g_n];
  memset (e, 0, sizeof *e);
  e->t = t0;
  e->host_ns = t1 > t0 ? t1 - t0 : 0;
  e->tid = cap_tid ();
  e->op = (uint8_t) op;
  e->stream = 0;
  e->dur = VTW_NONE;
  if (seq)
    *seq = g_base + g_n;
  g_n++;
  g_recorded++;
  return e;
}

/* Called after each push, lock held: poll pending timings now and then,
 * and write the resolved prefix when the buffer is big. */
static void
after_push_locked (void)
{
  if (g_recorded % POLL_EVERY == 0 && cap_resolve_cb)
    cap_resolve_cb (0);
  if (g_n >= FLUSH_EVENTS)
    write_prefix_locked (0);
}

VtEvent *
cap_get_locked (uint64_t seq)
{
  if (seq < g_base || seq >= g_base + g_n)
    return NULL;
  return &g_ev[seq - g_base];
}

void
cap_resolve_locked (uint64_t seq, uint64_t dur)
{
  VtEvent *e = cap_get_locked (seq);
  if (e) {
    e->dur = dur;
    e->pending = 0;
  }
}

static void
free_event_locked (uint64_t t, uint64_t host_ns, const Range *r, int stream_ordered,
                   uintptr_t stream)
{
  VtEvent *e = push_locked (t, t + host_ns, 1 /* free */, NULL);
  if (!e)
    return;
  e->op = VTW_FREE;
  e->id = r->id;
  e->stream = stream_ordered ? cap_stream_id_locked (stream) : VTW_NONE;
}

/* Removes ranges overlapping [lo, hi), writing a free for each (a free the
 * shim did not see, or cuMemUnmap). */
static void
map_remove_overlap_locked (uint64_t t, uint64_t host_ns, uintptr_t lo, uintptr_t hi)
{
  size_t i = map_upper (lo);
  if (i > 0 && g_map[i - 1].end > lo)
    i--;
  size_t j = i;
  while (j < g_map_n && g_map[j].base < hi) {
    free_event_locked (t, host_ns, &g_map[j], 0, 0);
    j++;
  }
  if (j > i) {
    memmove (g_map + i, g_map + j, (g_map_n - j) * sizeof *g_map);
    g_map_n -= j - i;
  }
}

void
cap_alloc (uint64_t t0, uint64_t t1, uintptr_t p, uint64_t bytes, int kind,
           int stream_ordered, uintptr_t stream)
{
  if (bytes == 0)
    return;
  cap_lock ();
  map_remove_overlap_locked (t0, 0, p, p + bytes);
  Range *nm = cap_grow (g_map, g_map_n, &g_map_cap, sizeof *g_map, 256);
  if (!nm) {
    cap_unlock ();
    return;
  }
  g_map = nm;
  VtEvent *e = push_locked (t0, t1, VTW_ALLOC, NULL);
  if (e) {
    size_t i = map_upper (p);
    memmove (g_map + i + 1, g_map + i, (g_map_n - i) * sizeof *g_map);
    g_map[i] = (Range) { p, p + bytes, g_next_id++, kind };
    g_map_n++;
    e->id = g_map[i].id;
    e->addr = p;
    e->bytes = bytes;
    e->sub = (uint8_t) kind;
    e->stream = stream_ordered ? cap_stream_id_locked (stream) : VTW_NONE;
    after_push_locked ();
  }
  cap_unlock ();
}

void
cap_free (uint64_t t0, uint64_t t1, uintptr_t p, int stream_ordered, uintptr_t stream)
{
  cap_lock ();
  size_t i = map_upper (p);
  if (i > 0 && g_map[i - 1].base == p) {
    free_event_locked (t0, t1 - t0, &g_map[i - 1], stream_ordered, stream);
    memmove (g_map + i - 1, g_map + i, (g_map_n - i) * sizeof *g_map);
    g_map_n--;
    after_push_locked ();
  }
  cap_unlock ();
}

void
cap_free_range (uint64_t t0, uint64_t t1, uintptr_t lo, uintptr_t hi)
{
  cap_lock ();
  map_remove_overlap_locked (t0, t1 > t0 ? t1 - t0 : 0, lo, hi);
  after_push_locked ();
  cap_unlock ();
}

static int
is_device_side (const Range *r)
{
  return r && r->kind != CAP_MEM_PINNED;
}

/* CUDA arrays (CAP_ARRAY): one synthetic allocation stands for all of
 * them, made (0 bytes, device, tag "cuda_arrays") just before the first
 * copy that names one, so that the replay moves their bytes in device
 * memory (an id-0 side would be pageable host memory). Never freed. */
static Range g_arrays;

static const Range *
side_locked (uintptr_t p, uint64_t t)
{
  if (p != CAP_ARRAY)
    return map_find (p);
  if (!g_arrays.id) {
    uint32_t sid = intern_locked ("cuda_arrays");
    VtEvent *e = push_locked (t, t, VTW_ALLOC, NULL);
    if (!e)
      return NULL;
    g_arrays = (Range) { 0, 0, g_next_id++, CAP_MEM_DEVICE };
    e->id = g_arrays.id;
    e->bytes = 0;
    e->sub = CAP_MEM_DEVICE;
    e->stream = VTW_NONE;
    e->value = (uint64_t) sid + 1;
  }
  return &g_arrays;
}

static uint64_t
copy_locked (uint64_t t0, uint64_t t1, int dir, uintptr_t dst, uintptr_t src, uint64_t bytes,
             uintptr_t stream, int async, int pending, uint64_t corr)
{
  uint64_t seq = UINT64_MAX;
  const Range *d = side_locked (dst, t0), *s = side_locked (src, t0);
  if (dir == CAP_DIR_AUTO) {
    int dd = is_device_side (d), sd = is_device_side (s);
    dir = dd && sd ? CAP_DIR_D2D : dd ? CAP_DIR_H2D : sd ? CAP_DIR_D2H : CAP_DIR_H2D;
    /* host to host: the driver still moves it; call it h2d (rare) */
  }
  /* A copy to or from pageable host memory (no tracked allocation on the
   * host side) blocks the calling thread whatever the API: the driver
   * stages it through pinned buffers and returns when the copy is done
   * (d2h) or staged (h2d). On an H200 a 256 MiB cudaMemcpyAsync from
   * malloc'd memory returned after 32.3 ms of its 32.9 ms. Recorded as
   * such, the replay re-times the wait on the target's link instead of
   * keeping the capture's call time. */
  if ((dir == CAP_DIR_H2D && !s) || (dir == CAP_DIR_D2H && !d))
    async = 0;
  /* And a synchronous copy between two device allocations (or peers)
   * returns at once: "for transfers from device memory to device memory,
   * no host-side synchronization is performed" (CUDA Runtime API, "API
   * synchronization behavior"). A managed side keeps it synchronous. */
  if ((dir == CAP_DIR_D2D || dir == CAP_DIR_P2P) && d && s && d->kind == CAP_MEM_DEVICE
      && s->kind == CAP_MEM_DEVICE)
    async = 1;
  VtEvent *e = push_locked (t0, t1, VTW_COPY, &seq);
  if (e) {
    e->sub = (uint8_t) dir;
    e->bytes = bytes;
    e->src = s ? s->id : 0;
    e->dst = d ? d->id : 0;
    e->addr = dst;
    e->addr2 = src;
    e->stream = cap_stream_id_locked (stream);
    e->async = (uint8_t) async;
    e->pending = (uint8_t) pending;
    e->corr = corr;
  }
  return seq;
}

uint64_t
cap_copy (uint64_t t0, uint64_t t1, int dir, uintptr_t dst, uintptr_t src, uint64_t bytes,
          uintptr_t stream, int async, int pending, uint64_t corr)
{
  cap_lock ();
  uint64_t seq = copy_locked (t0, t1, dir, dst, src, bytes, stream, async, pending, corr);
  if (seq != UINT64_MAX)
    after_push_locked ();
  cap_unlock ();
  return seq;
}

uint64_t
cap_copies (uint64_t t0, uint64_t t1, const CapCopyOp *ops, uint32_t n, uintptr_t stream,
            int async, int pending, uint64_t corr, uint32_t *count)
{
  uint64_t first = UINT64_MAX;
  uint32_t k = 0;
  cap_lock ();
  for (; k < n; k++) {
    uint64_t seq = copy_locked (t0, k + 1 == n ? t1 : t0, ops[k].dir, ops[k].dst, ops[k].src,
                                ops[k].bytes, stream, async, pending, corr);
    if (seq == UINT64_MAX)
      break;
    if (first == UINT64_MAX)
      first = seq;
  }
  /* Written only after the whole batch is in (a flush in between would
   * not matter, but polling could resolve a half-made batch). */
  if (k)
    after_push_locked ();
  cap_unlock ();
  *count = k;
  return first;
}

void
cap_resolve_split_locked (uint64_t first, uint32_t n, uint64_t dur)
{
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    const VtEvent *e = cap_get_locked (first + i);
    total += e ? e->bytes : 0;
  }
  /* Cumulative shares rounded down: the parts add up to DUR exactly. */
  uint64_t cum = 0, done = 0;
  for (uint32_t i = 0; i < n; i++) {
    VtEvent *e = cap_get_locked (first + i);
    if (!e)
      continue;
    if (dur == VTW_NONE) {
      cap_resolve_locked (first + i, VTW_NONE);
      continue;
    }
    cum += total ? e->bytes : 1;
    __extension__ unsigned __int128 x = (unsigned __int128) dur * cum;
    uint64_t upto = (uint64_t) (x / (total ? total : n));
    cap_resolve_locked (first + i, upto - done);
    done = upto;
  }
}

uint64_t
cap_memset (uint64_t t0, uint64_t t1, uintptr_t dst, uint64_t bytes, uintptr_t stream,
            int async, int pending, uint64_t corr)
{
  uint64_t seq = UINT64_MAX;
  cap_lock ();
  const Range *d = map_find (dst);
  /* A memset of device memory is asynchronous to the host whatever the API
   * ("except when the target is pinned host memory or a Unified Memory
   * region", CUDA Driver API, "API synchronization behavior"). */
  if (d && d->kind == CAP_MEM_DEVICE)
    async = 1;
  VtEvent *e = push_locked (t0, t1, VTW_MEMSET, &seq);
  if (e) {
    e->dst = d ? d->id : 0;
    e->addr = dst;
    e->bytes = bytes;
    e->stream = cap_stream_id_locked (stream);
    e->async = (uint8_t) async;
    e->pending = (uint8_t) pending;
    e->corr = corr;
    after_push_locked ();
  }
  cap_unlock ();
  return seq;
}

uint64_t
cap_kernel (uint64_t t0, uint64_t t1, uint32_t name_sid, uintptr_t stream,
            const uint64_t *words, size_t n_words, int pending, uint64_t corr,
            const CapShape *shape)
{
  uint64_t seq = UINT64_MAX;
  /* ids[0..n) the touched ids, ptrs[0..np) the words that hit them (the
   * address sidecar's). */
  uint64_t local[128];
  uint64_t *ids = n_words <= 64 ? local : malloc (2 * n_words * sizeof *ids);
  if (!ids)
    n_words = 0, ids = local;
  uint64_t *ptrs = ids + (n_words <= 64 ? 64 : n_words);
  CapColl coll;
  int has_coll = cap_coll_cb && cap_coll_cb (stream, &coll);
  cap_lock ();
  size_t n = 0, np = 0;
  int managed = 0;
  for (size_t i = 0; i < n_words; i++) {
    const Range *r = map_find ((uintptr_t) words[i]);
    if (!r)
      continue;
    ptrs[np++] = words[i];
    managed |= r->kind == CAP_MEM_MANAGED;
    size_t k = 0;
    while (k < n && ids[k] != r->id)
      k++;
    if (k == n)
      ids[n++] = r->id;
  }
  VtEvent *e = push_locked (t0, t1, VTW_KERNEL, &seq);
  if (e) {
    e->name_sid = name_sid;
    e->stream = cap_stream_id_locked (stream);
    e->managed = (uint8_t) managed;
    g_managed_kernels += managed;
    e->pending = (uint8_t) pending;
    e->corr = corr;
    if (shape && shape->grid[0] && shape->grid[1] && shape->grid[2] && shape->block[0]
        && shape->block[1] && shape->block[2]) {
      memcpy (e->grid, shape->grid, sizeof e->grid);
      memcpy (e->block, shape->block, sizeof e->block);
      e->regs = shape->regs;
      e->smem = shape->smem;
      e->has_shape = 1;
    }
    if (has_coll) {
      e->has_coll = 1;
      e->coll_kind = coll.kind;
      e->coll_bytes = coll.bytes;
      e->coll_ranks = coll.ranks;
      e->coll_group = coll.group;
    }
    if (n) {
      size_t keep = g_addrs_on ? np : 0;
      e->touches = malloc ((n + keep) * sizeof *e->touches);
      if (e->touches) {
        memcpy (e->touches, ids, n * sizeof *ids);
        memcpy (e->touches + n, ptrs, keep * sizeof *ptrs);
        e->n_touches = (uint32_t) n;
        e->n_ptrs = (uint32_t) keep;
      }
    }
    after_push_locked ();
  }
  cap_unlock ();
  if (ids != local)
    free (ids);
  return seq;
}

void
cap_advise (void)
{
  cap_lock ();
  g_advise++;
  cap_unlock ();
}

void
cap_sync (uint64_t t0, uint64_t t1, int scope, uintptr_t handle)
{
  cap_lock ();
  VtEvent *e = push_locked (t0, t1, VTW_SYNC, NULL);
  if (e) {
    e->sub = (uint8_t) scope;
    e->value = scope == CAP_SYNC_STREAM ? cap_stream_id_locked (handle)
             : scope == CAP_SYNC_EVENT ? idtab_get (&g_events, handle) : 0;
    after_push_locked ();
  }
  cap_unlock ();
}

/* event_record and stream_wait: an op of TYPE naming an event and a stream. */
static void
event_op (uint64_t t0, uint64_t t1, int type, uintptr_t event, uintptr_t stream)
{
  cap_lock ();
  VtEvent *e = push_locked (t0, t1, type, NULL);
  if (e) {
    e->value = idtab_get (&g_events, event);
    e->stream = cap_stream_id_locked (stream);
    after_push_locked ();
  }
  cap_unlock ();
}

void
cap_event_record (uint64_t t0, uint64_t t1, uintptr_t event, uintptr_t stream)
{
  event_op (t0, t1, VTW_EVENT_RECORD, event, stream);
}

void
cap_stream_wait (uint64_t t0, uint64_t t1, uintptr_t stream, uintptr_t event)
{
  event_op (t0, t1, VTW_STREAM_WAIT, event, stream);
}

void
cap_prefetch (uint64_t t0, uint64_t t1, uintptr_t p, uint64_t bytes, int to_host,
              uintptr_t stream)
{
  cap_lock ();
  const Range *r = map_find (p);
  if (r) {
    VtEvent *e = push_locked (t0, t1, VTW_PREFETCH, NULL);
    if (e) {
      e->id = r->id;
      e->addr = p;
      e->bytes = bytes;
      e->sub = (uint8_t) (to_host ? 1 : 0);
      e->stream = cap_stream_id_locked (stream);
      after_push_locked ();
    }
  }
  cap_unlock ();
}

void
cap_mark (uint64_t t0, uint64_t t1, const char *name)
{
  cap_lock ();
  uint32_t sid = intern_locked (name ? name : "?");
  VtEvent *e = push_locked (t0, t1, VTW_MARK, NULL);
  if (e) {
    e->name_sid = sid;
    after_push_locked ();
  }
  cap_unlock ();
}

/* ---- device and header ---- */

void
cap_set_device (const CapDevice *d)
{
  cap_lock ();
  g_dev = *d;
  g_have_dev = 1;
  cap_unlock ();
}

int
cap_have_device (void)
{
  return g_have_dev;
}

/* Device names as cuDeviceGetName reports them; the first match wins. */
static const struct { const char *needle; const char *preset; } presets[] = {
  { "GH200", "gh200" },
  { "H200", "h200" },
  { "H100 PCIe", "h100-pcie" },
  { "H100 80GB HBM3", "h100-sxm" },
  { "H100 SXM", "h100-sxm" },
  { "A100-SXM4-80GB", "a100-80g" },
  { "A100 80GB", "a100-80g" },
  { "A100-SXM4-40GB", "a100-40g" },
  { "A100-PCIE-40GB", "a100-40g" },
  { "V100-PCIE-16GB", "v100-pcie-16g" },
  { "V100-SXM2-32GB", "v100-sxm2-32g" },
  { "RTX 3090", "rtx3090" },
  { "RTX 4090", "rtx4090" },
  { "L40S", "l40s" },
  { "NVIDIA A40", "a40" },        /* not "NVIDIA RTX A4000", which contains "A40" */
  { "MI300X", "mi300x" },
};

const char *
cap_preset_for (const char *name, uint64_t memory_bytes)
{
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (strstr (name, presets[i].needle))
      return presets[i].preset;
  /* Jetson: the integrated GPU reports "Orin"; tell the two by memory. */
  if (strstr (name, "Orin"))
    return memory_bytes >= (24ull << 30) ? "jetson-agx-orin" : "jetson-orin-nano";
  return NULL;
}

/* The kernel module's version from /proc/driver/nvidia/version (or the
 * file $VRAMCAP_DRIVER_VERSION_FILE names, for tests): the first token of
 * the first line made of digits and dots with at least one dot, so that
 * both "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..." and
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ..."
 * give the number. */
static void
read_driver_version (void)
{
  const char *path = getenv ("VRAMCAP_DRIVER_VERSION_FILE");
  int fd = open (path && *path ? path : "/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[512];
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return;
  buf[n] = 0;
  for (char *p = buf; *p && *p != '\n';) {
    while (*p == ' ' || *p == '\t')
      p++;
    size_t k = 0, dots = 0, other = 0;
    while (p[k] && p[k] != ' ' && p[k] != '\t' && p[k] != '\n') {
      if (p[k] == '.')
        dots++;
      else if (p[k] < '0' || p[k] > '9')
        other++;
      k++;
    }
    if (k > 0 && dots > 0 && !other && p[0] != '.' && k < sizeof g_driver) {
      memcpy (g_driver, p, k);
      g_driver[k] = 0;
      return;
    }
    p += k;
  }
}

static size_t
json_str (char *out, size_t cap, const char *s)
{
  size_t n = 0;
  if (n < cap)
    out[n++] = '"';
  for (; *s && n + 7 < cap; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\') {
      out[n++] = '\\';
      out[n++] = (char) c;
    } else if (c < 0x20) {
      n += (size_t) snprintf (out + n, cap - n, "\\u%04x", c);
    } else {
      out[n++] = (char) c;
    }
  }
  if (n < cap)
    out[n++] = '"';
  if (n < cap)
    out[n] = 0;
  return n;
}

static void
header_json (char *out, size_t cap)
{
  char dev[600] = "null", cfg[64] = "null", drv[160] = "null", cuda[32] = "null", cc[32] = "null";
  uint64_t mem = 0;
  int sm = 0;
  if (g_have_dev) {
    json_str (dev, sizeof dev, g_dev.name);
    const char *p = cap_preset_for (g_dev.name, g_dev.memory_bytes);
    if (p)
      json_str (cfg, sizeof cfg, p);
    snprintf (cuda, sizeof cuda, "\"%d.%d\"", g_dev.cuda_version / 1000,
              (g_dev.cuda_version % 1000) / 10);
    snprintf (cc, sizeof cc, "\"%d.%d\"", g_dev.cc_major, g_dev.cc_minor);
    mem = g_dev.memory_bytes;
    sm = g_dev.sm_count;
  }
  if (g_driver[0])
    json_str (drv, sizeof drv, g_driver);
  snprintf (out, cap,
            "{\"vramsim_trace\":1,\"time_unit\":\"ns\",\"capture\":{\"device\":%s,"
            "\"config\":%s,\"tool\":\"" VRAMCAP_TOOL "\",\"memory_bytes\":%llu,"
            "\"sm_count\":%d,\"compute_capability\":%s,\"driver_version\":%s,"
            "\"cuda_version\":%s,\"mode\":\"%s\",\"pid\":%ld},\"allocations\":\"driver\"}",
            dev, cfg, (unsigned long long) mem, sm, cc, drv, cuda,
            cap_mode == CAP_MODE_CUPTI ? "cupti" : "hook", (long) getpid ());
}

static void
write_failed (void)
{
  if (!g_failed)
    cap_warn ("cannot write %s: %s; recording stops", g_out, strerror (errno));
  g_failed = 1;
}

static void
addrs_flush (void)
{
  size_t off = 0;
  while (g_addrs_fd >= 0 && off < g_addrs_len) {
    ssize_t r = write (g_addrs_fd, g_addrs_buf + off, g_addrs_len - off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      cap_warn ("cannot write %s: %s; no address sidecar", g_addrs_tmp, strerror (errno));
      close (g_addrs_fd);
      unlink (g_addrs_tmp);
      g_addrs_fd = -1;
      break;
    }
    off += (size_t) r;
  }
  g_addrs_len = 0;
}

static void
addrs_put (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void
addrs_put (const char *fmt, ...)
{
  if (g_addrs_fd < 0)
    return;
  if (g_addrs_len + 64 > sizeof g_addrs_buf)
    addrs_flush ();
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (g_addrs_buf + g_addrs_len, sizeof g_addrs_buf - g_addrs_len, fmt, ap);
  va_end (ap);
  if (n > 0)
    g_addrs_len += (size_t) n;
}

static void
addrs_open (void)
{
  if (!g_addrs_on || g_addrs_fd >= 0)
    return;
  snprintf (g_addrs_tmp, sizeof g_addrs_tmp, "%s.addrs.tmp.%ld", g_out, (long) getpid ());
  g_addrs_fd = open (g_addrs_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_addrs_fd < 0) {
    cap_warn ("cannot create %s: %s; no address sidecar", g_addrs_tmp, strerror (errno));
    g_addrs_on = 0;
    return;
  }
  g_addrs_len = 0;
  addrs_put ("vramcap-addrs 1 %llu\n", (unsigned long long) g_real0);
}

/* The sidecar line of E, the trace's event IDX. */
static void
addrs_event (uint64_t idx, const VtEvent *e)
{
  unsigned long long i = (unsigned long long) idx;
  switch (e->op) {
  case VTW_ALLOC:
    addrs_put ("a %llu %llx\n", i, (unsigned long long) e->addr);
    break;
  case VTW_COPY:
    if (e->src || e->dst)
      addrs_put ("c %llu %llx %llx\n", i, (unsigned long long) e->addr, (unsigned long long) e->addr2);
    break;
  case VTW_MEMSET:
    if (e->dst)
      addrs_put ("m %llu %llx\n", i, (unsigned long long) e->addr);
    break;
  case VTW_PREFETCH:
    addrs_put ("p %llu %llx\n", i, (unsigned long long) e->addr);
    break;
  case VTW_KERNEL:
    if (!e->n_ptrs)
      break;
    addrs_put ("k %llu", i);
    for (uint32_t k = 0; k < e->n_ptrs; k++)
      addrs_put (" %llx", (unsigned long long) e->touches[e->n_touches + k]);
    addrs_put ("\n");
    break;
  default:
    break;
  }
}

/* After the trace is finished (OK: renamed into place). */
static void
addrs_close (int ok)
{
  if (g_addrs_fd < 0)
    return;
  addrs_flush ();
  if (g_addrs_fd < 0)
    return;
  close (g_addrs_fd);
  g_addrs_fd = -1;
  char final[4200];
  snprintf (final, sizeof final, "%s.addrs", g_out);
  if (!ok || rename (g_addrs_tmp, final) != 0)
    unlink (g_addrs_tmp);
}

/* Writes the buffer up to the first pending event (ALL: everything). */
static void
write_prefix_locked (int all)
{
  if (g_failed)
    return;
  size_t k = 0;
  while (k < g_n && (all || !g_ev[k].pending))
    k++;
  if (k == 0)
    return;
  if (!g_w) {
    char hdr[2048];
    header_json (hdr, sizeof hdr);
    g_w = vtw_open (g_out, hdr);
    if (!g_w) {
      write_failed ();
      return;
    }
    addrs_open ();
  }
  for (size_t i = 0; i < k; i++) {
    VtEvent *e = &g_ev[i];
    uint64_t sid = e->op == VTW_KERNEL || e->op == VTW_MARK ? e->name_sid
                 : e->op == VTW_ALLOC && e->value ? e->value - 1 : UINT64_MAX;
    if (sid != UINT64_MAX)
      while (g_defined <= sid && g_defined < g_str_n) {
        vtw_string (g_w, g_defined, g_str[g_defined]);
        g_defined++;
      }
    if (vtw_event (g_w, e) != 0) {
      write_failed ();
      return;
    }
    if (g_addrs_fd >= 0)
      addrs_event (vtw_count (g_w) - 1, e);
    free (e->touches);
    e->touches = NULL;
  }
  memmove (g_ev, g_ev + k, (g_n - k) * sizeof *g_ev);
  g_n -= k;
  g_base += k;
}

static int g_dying_sig;                  /* the fatal signal being handled, or 0 */

/* The root process's word to the launcher ($VRAMCAP_STATUS, one line):
 * "nothing CAUSE" (it recorded nothing) or "failed" (the trace could not
 * be written; the shim has said why). FALSE without a launcher. */
static int
status_put (const char *line)
{
  const char *st = getenv ("VRAMCAP_STATUS");
  if (!st || !*st)
    return 0;
  int fd = open (st, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return 0;
  ssize_t w = write (fd, line, strlen (line));
  (void) w;
  close (fd);
  return 1;
}

/* The root process recorded nothing: no trace is written (and an earlier
 * run's FILE and FILE.addrs, which would pass for this one's, are
 * removed), and the cause is said in one line: to the launcher through
 * $VRAMCAP_STATUS (vramcap prints it and decides its exit status:
 * docs/capture.md), else on stderr. Plain write(2): a signal handler may
 * be here (then the cause is the signal; no dlopen). */
static void
nothing_recorded (int dying)
{
  char cause[768], line[1024];
  if (dying)
    snprintf (cause, sizeof cause, "the program died of signal %d before any CUDA call vramcap records", g_dying_sig);
  else if (cap_nothing_cause_cb)
    cap_nothing_cause_cb (cause, sizeof cause);
  else
    snprintf (cause, sizeof cause, "the program made no call vramcap records");
  unlink (g_out);
  char addrs[sizeof g_out + 16];
  snprintf (addrs, sizeof addrs, "%s.addrs", g_out);
  unlink (addrs);
  snprintf (line, sizeof line, "nothing %s\n", cause);
  if (!status_put (line))
    cap_warn ("nothing recorded: %s; no trace written to %s", cause, g_out);
}

static void
finish_locked (int dying)
{
  if (g_finished)
    return;
  if (cap_resolve_cb)
    cap_resolve_cb (dying ? 2 : 1);
  /* CUPTI mode takes measured fault time out of such kernels (or says it
   * cannot); hook mode has nothing to measure it with. */
  if (g_managed_kernels && cap_mode == CAP_MODE_HOOK && !dying)
    cap_warn ("%llu kernel%s on managed memory keep their page-fault time, which replay adds "
              "again (hook mode has no unified-memory counters; CUPTI mode takes it out)",
              (unsigned long long) g_managed_kernels, g_managed_kernels == 1 ? "" : "s");
  if (g_advise && !dying)
    cap_warn ("%llu cuMemAdvise call%s not in the trace: the trace format has no advise op, "
              "and replay places managed pages by its own model", (unsigned long long) g_advise,
              g_advise == 1 ? " is" : "s are");
  /* A process writes a file only if it recorded something; the root
   * process says why it did not (nothing_recorded). */
  if (g_root && g_recorded == 0 && !g_w && !g_failed)
    nothing_recorded (dying);
  else if (g_recorded > 0) {
    write_prefix_locked (1);
    if (!g_w && !g_failed) {
      char hdr[2048];
      header_json (hdr, sizeof hdr);
      g_w = vtw_open (g_out, hdr);
      if (!g_w)
        write_failed ();
      else
        addrs_open ();
    }
  }
  if (g_w) {
    uint64_t n = vtw_count (g_w);
    if (g_failed) {
      vtw_abort (g_w);
      addrs_close (0);
    } else if (vtw_finish (g_w) != 0) {
      write_failed ();
      addrs_close (0);
    } else {
      addrs_close (1);
    }
    if (!g_failed && !g_root) {
      cap_warn ("process %ld wrote %llu events to %s", (long) getpid (),
                (unsigned long long) n, g_out);
    }
    g_w = NULL;
  }
  if (g_root && g_failed)
    status_put ("failed\n");
  g_finished = 1;
}

void
cap_finish (void)
{
  cap_lock ();
  finish_locked (0);
  cap_unlock ();
}

/* ---- exit, signals, fork ---- */

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                     SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction g_old_sa[N_FATAL];

static void
on_fatal_signal (int sig)
{
  int saved = errno;
  /* Take the lock unless this thread holds it (it died inside the shim) or
   * another thread keeps it for long: we are dying either way. */
  int locked = 0;
  if (g_lock_owner != kernel_tid ()) {
    for (int i = 0; i < 200 && !locked; i++) {
      if (pthread_mutex_trylock (&g_lock) == 0)
        locked = 1;
      else {
        struct timespec ts = { 0, 1000000 };
        nanosleep (&ts, NULL);
      }
    }
  }
  g_dying_sig = sig;
  finish_locked (1);
  if (locked)
    pthread_mutex_unlock (&g_lock);
  for (size_t i = 0; i < N_FATAL; i++)
    if (fatal_signals[i] == sig)
      sigaction (sig, &g_old_sa[i], NULL);
  errno = saved;
  raise (sig);
}

static void
on_exit_handler (void)
{
  cap_finish ();
}

static void
atfork_prepare (void)
{
  cap_lock ();
}

static void
atfork_parent (void)
{
  cap_unlock ();
}

/* The distributed rank of this process ($RANK, else $LOCAL_RANK: what
 * torchrun and torch.distributed.launch give each worker), or -1. */
static long
env_rank (void)
{
  const char *names[] = { "RANK", "LOCAL_RANK" };
  for (size_t i = 0; i < 2; i++) {
    const char *v = getenv (names[i]);
    if (!v || !isdigit ((unsigned char) v[0]))
      continue;
    char *end;
    errno = 0;
    long r = strtol (v, &end, 10);
    if (errno == 0 && *end == 0 && r >= 0 && r < 1000000)
      return r;
  }
  return -1;
}

/* A rank names the first process that has it: $VRAMCAP_RANK_OWNER is
 * "RANK:PID" of that process, so its forked and exec'd children (data
 * loader workers inherit RANK) see a rank they do not own and keep their
 * pid. Called at load (claims the rank if no ancestor has). The Python hook
 * (capture/python-hook) reads the same variable to name its snapshot. */
static void
claim_rank (void)
{
  long r = env_rank ();
  if (r < 0)
    return;
  const char *cur = getenv ("VRAMCAP_RANK_OWNER");
  if (cur && strtol (cur, NULL, 10) == r && strchr (cur, ':'))
    return;
  char v[64];
  snprintf (v, sizeof v, "%ld:%ld", r, (long) getpid ());
  setenv ("VRAMCAP_RANK_OWNER", v, 1);
}

/* "rankN" when this process owns its rank, else its pid. */
static void
process_tag (char *tag, size_t cap)
{
  long r = env_rank ();
  const char *cur = getenv ("VRAMCAP_RANK_OWNER");
  char want[64];
  snprintf (want, sizeof want, "%ld:%ld", r, (long) getpid ());
  if (r >= 0 && cur && strcmp (cur, want) == 0)
    snprintf (tag, cap, "rank%ld", r);
  else
    snprintf (tag, cap, "%ld", (long) getpid ());
}

static void
set_output_path (void)
{
  const char *out = getenv ("VRAMCAP_OUTPUT");
  if (!out || !*out)
    out = "vramcap.vtrace";
  if (g_root) {
    snprintf (g_out, sizeof g_out, "%s", out);
    return;
  }
  char tag[64];
  process_tag (tag, sizeof tag);
  size_t n = strlen (out);
  const char *ext = ".vtrace";
  size_t el = strlen (ext);
  if (n > el && strcmp (out + n - el, ext) == 0)
    snprintf (g_out, sizeof g_out, "%.*s.%s%s", (int) (n - el), out, tag, ext);
  else
    snprintf (g_out, sizeof g_out, "%s.%s", out, tag);
}

/* The child starts a trace of its own (out.<pid>.vtrace, written only if it
 * records something); the parent's buffered events stay the parent's. CUDA
 * does not survive fork, so the allocation map starts empty. */
static void
atfork_child (void)
{
  t_ktid = 0;
  g_lock_owner = 0;
  pthread_mutex_init (&g_lock, NULL);
  vtw_drop (g_w);
  g_w = NULL;
  if (g_addrs_fd >= 0)
    close (g_addrs_fd); /* the parent's */
  g_addrs_fd = -1;
  g_addrs_len = 0;
  for (size_t i = 0; i < g_n; i++)
    free (g_ev[i].touches);
  g_n = 0;
  g_base = 0;
  g_recorded = 0;
  g_advise = 0;
  g_managed_kernels = 0;
  g_map_n = 0;
  g_next_id = 1;
  g_arrays.id = 0;
  idtab_clear (&g_streams);
  idtab_clear (&g_events);
  g_defined = 0;
  for (size_t i = 0; i < g_str_n; i++)
    free (g_str[i]);
  g_str_n = 0;
  memset (g_str_hash, 0, g_str_hcap * sizeof *g_str_hash);
  g_root = 0;
  g_pid = getpid ();
  g_failed = 0;
  g_finished = 0;
  g_next_tid = 1;
  t_tid = 0;
  set_output_path ();
  if (cap_fork_child_cb)
    cap_fork_child_cb ();
}

__attribute__ ((constructor)) void
cap_init (void)
{
  if (g_inited)
    return;
  g_inited = 1;
  g_t0 = 0;
  struct timespec rt;
  clock_gettime (CLOCK_REALTIME, &rt);
  g_t0 = cap_now ();
  g_real0 = (uint64_t) rt.tv_sec * 1000000000u + (uint64_t) rt.tv_nsec;
  const char *ad = getenv ("VRAMCAP_ADDRS");
  g_addrs_on = ad && strcmp (ad, "1") == 0;
  g_pid = getpid ();
  const char *m = getenv ("VRAMCAP_MODE");
  g_requested = m && strcmp (m, "hook") == 0 ? CAP_MODE_HOOK : CAP_MODE_CUPTI;
  /* The launcher names the root process; a program started without it is
   * its own root, and what it execs inherits that. */
  char me[32];
  snprintf (me, sizeof me, "%ld", (long) getpid ());
  const char *root = getenv ("VRAMCAP_PID");
  if (root && *root)
    g_root = strcmp (root, me) == 0;
  else
    setenv ("VRAMCAP_PID", me, 1);
  claim_rank ();
  set_output_path ();
  read_driver_version ();
  for (size_t i = 0; i < N_FATAL; i++) {
    struct sigaction sa, old;
    if (sigaction (fatal_signals[i], NULL, &old) != 0)
      continue;
    g_old_sa[i] = old;
    /* Leave alone what the program (or its parent) already chose. */
    if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
      continue;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset (&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    sigaction (fatal_signals[i], &sa, NULL);
  }
  pthread_atfork (atfork_prepare, atfork_parent, atfork_child);
  atexit (on_exit_handler);
}

__attribute__ ((destructor)) static void
cap_fini (void)
{
  cap_finish ();
}

/* _exit and _Exit skip atexit handlers; shells (dash's exit) and forked
 * workers (Python's os._exit) end that way. Flush first, unless this is a
 * vfork child sharing its parent's memory (its pid is not ours). */
void _exit (int status) __attribute__ ((noreturn));
void _Exit (int status) __attribute__ ((noreturn));

void
_exit (int status)
{
  if (getpid () == g_pid)
    cap_finish ();
  syscall (SYS_exit_group, status);
  for (;;)
    ;
}

void
_Exit (int status)
{
  _exit (status);
}
