/* nccl.c — the NCCL wrap: the shim stands in for NCCL's collective calls
 * (ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclAlltoAll,
 * ncclBroadcast, ncclBcast, ncclReduce, ncclSend, ncclRecv) and for
 * ncclGroupStart / ncclGroupEnd / ncclGroupSimulateEnd, so that the kernel
 * an NCCL call launches carries its `collective` (SPEC 3: kind, the
 * per-rank input buffer in bytes, the communicator's size). docs/capture.md "Collectives" says what
 * is recorded and what is not.
 *
 * How: the shim is preloaded in both modes, so its definitions win over
 * libnccl.so.2's wherever NCCL is linked dynamically (PyTorch's wheels,
 * nccl-tests); each wrapper calls the real function, found with dlsym
 * (RTLD_NEXT) or, for a libnccl opened with RTLD_LOCAL, in the loaded
 * objects (find_real). Before the call that launches (a call outside any
 * group, or the outermost ncclGroupEnd) the calling thread gets one pending
 * collective per stream; cap_kernel, for every kernel launched until the
 * call returns, takes the one waiting on its stream (capnccl_take, the
 * recorder's cap_coll_cb). NCCL
 * launches its kernel on the calling thread, on the user's stream, from
 * inside that call; the pending collectives are dropped when it returns.
 * Calls NCCL makes into its own exported functions (ncclSend runs
 * ncclGroupStart/End, ncclBcast runs ncclBroadcast) pass straight through.
 *
 * Bytes (nccl.h's definitions; the input buffer each rank gives):
 * all_reduce, broadcast, reduce, send, recv: count; all_gather: sendcount;
 * reduce_scatter: recvcount x ranks; all_to_all: count x ranks (count is
 * per peer); times the datatype's size. A group's ops on one stream become
 * one collective, the way NCCL fuses them into one launch: sends and
 * receives that reach every peer (as many sends as receives, ranks of them,
 * or ranks - 1 when ranks > 2: PyTorch's all_to_all includes the rank
 * itself) are an all_to_all of the bytes sent; other sends and receives a
 * send (or a recv, when more is received) of the larger side; collectives
 * of one kind add up their bytes; of mixed kinds the kind with the most
 * bytes wins. $VRAMCAP_NCCL=0 (vramcap --no-nccl) makes every wrapper a
 * plain pass-through.
 *
 * Communicators (collective.group): the shim also stands in for the calls
 * that make one (ncclCommInitRank, ncclCommInitRankConfig,
 * ncclCommInitRankScalable, ncclCommInitAll, ncclCommSplit,
 * ncclCommShrink) and that end one (ncclCommDestroy, ncclCommAbort), and
 * keeps a table communicator -> group id. The id is a hash of what every
 * rank of the communicator gives alike, so that the traces of its ranks
 * name it alike: the unique id(s) and the size for the InitRank calls;
 * the parent's id, the how-many-th split or shrink of that parent (every
 * rank splits its parent in the same order: the calls are collective),
 * the color and the new size for ncclCommSplit; a process-wide count and
 * the size for ncclCommInitAll (one process, one clique). The size is in
 * every hash, so that one id never names two sizes (a trace reader
 * refuses that). A communicator the shim did not see made (one made
 * before it was loaded) gets an id from its address and size: distinct
 * within the trace, not across ranks. Ops of one group on two
 * communicators that share a stream become one collective per
 * communicator, taken by the stream's kernels in the order of their
 * first op. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "realsym.h"
#include "recorder.h"

/* NCCL's ABI (nccl.h 2.x): results, datatypes and reduction ops are enums
 * (int); communicators and CUDA streams are pointers. */
typedef int NcclResult;
typedef void *NcclComm;
typedef void *NcclStream;
#define NCCL_SYSTEM_ERROR 2   /* ncclSystemError: the real function is not there */

enum { K_ALL_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER, K_ALL_TO_ALL, K_BROADCAST, K_REDUCE,
       K_SEND, K_RECV, K_N };

/* Bytes of one element of an ncclDataType_t (nccl.h 2.28: ncclInt8 0,
 * ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5,
 * ncclFloat16 6, ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9,
 * ncclFloat8e4m3 10, ncclFloat8e5m2 11); 0 for a type it does not know. */
static uint64_t
dtype_bytes (int dt)
{
  static const uint8_t size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
  return dt >= 0 && (size_t) dt < sizeof size ? size[dt] : 0;
}

/* One stream's share of a group on one communicator: bytes and op count
 * per kind. */
#define MAX_STREAMS 8
typedef struct {
  uintptr_t stream;
  uint64_t group;
  uint32_t ranks;
  uint32_t n[K_N];
  uint64_t bytes[K_N];
} Agg;
typedef struct {
  uintptr_t stream;
  CapColl c;
  int waiting;
} Pend;

static __thread struct {
  int depth;            /* inside a wrapped call: NCCL's own calls pass through */
  int group;            /* the program's ncclGroupStart nesting */
  uint32_t n_agg, n_pend;
  Agg agg[MAX_STREAMS];
  Pend pend[MAX_STREAMS];
} t;

static int
wrap_off (void)
{
  static int off = -1;
  if (off < 0) {
    const char *e = getenv ("VRAMCAP_NCCL");
    off = e && strcmp (e, "0") == 0;
  }
  return off;
}

/* Whether P lies in the shim itself (one of these wrappers). */
static int
in_shim (void *p)
{
  Dl_info a, b;
  return dladdr (p, &a) && dladdr ((void *) in_shim, &b) && a.dli_fbase == b.dli_fbase;
}

typedef struct { const char *name; void *found; } Search;

static int
search_object (struct dl_phdr_info *info, size_t size, void *data)
{
  Search *sr = data;
  (void) size;
  if (!info->dlpi_name || !info->dlpi_name[0])
    return 0;
  void *h = dlopen (info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return 0;
  void *p = cap_symbol_in (h, sr->name);
  dlclose (h);
  if (p && !in_shim (p))
    sr->found = p;
  return sr->found != NULL;
}

/* NCCL's NAME. RTLD_NEXT searches the global scope only, and PyTorch loads
 * libnccl.so.2 with RTLD_LOCAL (a dependency of an extension module that
 * Python opens so): then the loaded libnccl.so.2 by its soname, else any
 * loaded object whose dependencies define NAME outside the shim. */
static void *
find_real (const char *name)
{
  void *p = cap_next_symbol (name);
  if (p && !in_shim (p))
    return p;
  void *h = dlopen ("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    p = cap_symbol_in (h, name);
    dlclose (h);
    if (p && !in_shim (p))
      return p;
  }
  Search sr = { name, NULL };
  dl_iterate_phdr (search_object, &sr);
  return sr.found;
}

typedef NcclResult CountFn (const NcclComm, int *);
static CountFn *real_count;

/* The communicator's size, 0 when NCCL does not say. */
static uint32_t
comm_ranks (NcclComm comm)
{
  if (!real_count)
    real_count = (CountFn *) find_real ("ncclCommCount");
  int n = 0;
  if (!real_count || real_count (comm, &n) != 0 || n <= 0)
    return 0;
  return (uint32_t) n;
}

/* ---- communicators -> group ids ---- */

/* FNV-1a, 64 bits (Fowler, Noll, Vo; the parameters of
 * http://www.isthe.com/chongo/tech/comp/fnv/): H continued over N bytes. */
static uint64_t
fnv (uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}
#define FNV_START 0xcbf29ce484222325ULL

/* A group id from hash H: 1 .. 2^53 - 1 (docs/trace-format.md: JSON
 * readers hold such integers exactly). */
static uint64_t
gid_of (uint64_t h)
{
  uint64_t g = (h ^ (h >> 53)) & ((1ULL << 53) - 1);
  return g ? g : 1;
}

/* The table: open addressing by address, few entries (a job makes tens
 * of communicators); a full table leaves the rest to their address id. */
#define MAX_COMMS 1024
typedef struct {
  NcclComm comm;        /* NULL: free; TOMB: freed */
  uint64_t gid;
  uint32_t splits;      /* splits and shrinks of this communicator so far */
} CommEntry;
#define TOMB ((NcclComm) (uintptr_t) 1)
static CommEntry g_comms[MAX_COMMS];
static pthread_mutex_t g_comms_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_init_alls;   /* ncclCommInitAll calls so far */

static void comms_prepare (void) { pthread_mutex_lock (&g_comms_lock); }
static void comms_parent (void) { pthread_mutex_unlock (&g_comms_lock); }
static void comms_child (void) { pthread_mutex_init (&g_comms_lock, NULL); }
static void comms_atfork (void) { pthread_atfork (comms_prepare, comms_parent, comms_child); }

static void
comms_lock (void)
{
  /* A fork while another thread holds the lock must not leave the child
   * a held one. */
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once (&once, comms_atfork);
  pthread_mutex_lock (&g_comms_lock);
}

static size_t
slot_of (NcclComm c)
{
  uint64_t a = (uint64_t) (uintptr_t) c;
  return (size_t) ((a >> 4) * 0x9E3779B97F4A7C15ULL >> 54) % MAX_COMMS;
}

/* C's entry, or (CREATE) a new one; NULL when absent (or full). Locked. */
static CommEntry *
comm_entry_locked (NcclComm c, int create)
{
  size_t i = slot_of (c), tomb = MAX_COMMS;
  for (size_t n = 0; n < MAX_COMMS; n++, i = (i + 1) % MAX_COMMS) {
    if (g_comms[i].comm == c)
      return &g_comms[i];
    if (g_comms[i].comm == TOMB && tomb == MAX_COMMS)
      tomb = i;
    if (g_comms[i].comm == NULL)
      break;
  }
  if (!create)
    return NULL;
  if (tomb == MAX_COMMS && g_comms[i].comm != NULL)
    return NULL;
  CommEntry *e = &g_comms[tomb < MAX_COMMS ? tomb : i];
  e->comm = c;
  e->gid = 0;
  e->splits = 0;
  return e;
}

static void
comm_set (NcclComm c, uint64_t gid)
{
  if (!c || c == TOMB)
    return;
  comms_lock ();
  CommEntry *e = comm_entry_locked (c, 1);
  if (e) {
    e->gid = gid;
    e->splits = 0;
  }
  pthread_mutex_unlock (&g_comms_lock);
}

static void
comm_forget (NcclComm c)
{
  if (!c)
    return;
  comms_lock ();
  CommEntry *e = comm_entry_locked (c, 0);
  if (e)
    e->comm = TOMB;
  pthread_mutex_unlock (&g_comms_lock);
}

/* The id from C's address and RANKS, for a communicator not seen made. */
static uint64_t
gid_from_address (NcclComm c, uint32_t ranks)
{
  uint64_t a = (uint64_t) (uintptr_t) c, h = fnv (FNV_START, "vramcap-address", 15);
  h = fnv (h, &a, sizeof a);
  return gid_of (fnv (h, &ranks, sizeof ranks));
}

/* C's group id (RANKS its size); for a split, also the how-many-th split
 * of C this is (*SEQ, when SEQ; counted). */
static uint64_t
comm_gid (NcclComm c, uint32_t ranks, uint32_t *seq)
{
  comms_lock ();
  CommEntry *e = comm_entry_locked (c, seq != NULL);
  uint64_t g = e ? e->gid : 0;
  if (e && g == 0)
    g = e->gid = gid_from_address (c, ranks);
  if (seq)
    *seq = e ? e->splits++ : 0;
  pthread_mutex_unlock (&g_comms_lock);
  return g ? g : gid_from_address (c, ranks);
}

static void
agg_add (int kind, uint64_t bytes, uint32_t ranks, uintptr_t stream, uint64_t group)
{
  Agg *a = NULL;
  for (uint32_t i = 0; i < t.n_agg && !a; i++)
    if (t.agg[i].stream == stream && t.agg[i].group == group)
      a = &t.agg[i];
  if (!a) {
    if (t.n_agg == MAX_STREAMS)
      return; /* a group over more streams and communicators than this: the rest go unnamed */
    a = &t.agg[t.n_agg++];
    memset (a, 0, sizeof *a);
    a->stream = stream;
    a->group = group;
  }
  if (ranks > a->ranks)
    a->ranks = ranks;
  a->n[kind]++;
  /* Trace integers stay below 2^63 (docs/trace-format.md). */
  a->bytes[kind] = bytes > INT64_MAX - a->bytes[kind] ? INT64_MAX : a->bytes[kind] + bytes;
}

/* The collective one stream's ops make (the file comment's rules). */
static void
agg_coll (const Agg *a, CapColl *c)
{
  int best = -1;
  uint64_t most = 0;
  for (int k = 0; k < K_SEND; k++)
    if (a->n[k] && (best < 0 || a->bytes[k] > most))
      best = k, most = a->bytes[k];
  if (a->n[K_SEND] || a->n[K_RECV]) {
    uint32_t ns = a->n[K_SEND], r = a->ranks;
    int kind;
    uint64_t b;
    if (ns == a->n[K_RECV] && (ns == r || (r > 2 && ns == r - 1)))
      kind = K_ALL_TO_ALL, b = a->bytes[K_SEND];
    else if (ns && a->bytes[K_SEND] >= a->bytes[K_RECV])
      kind = K_SEND, b = a->bytes[K_SEND];
    else
      kind = K_RECV, b = a->bytes[K_RECV];
    if (best < 0 || b > most)
      best = kind, most = b;
  }
  c->kind = (uint8_t) best;
  c->bytes = most;
  c->ranks = a->ranks;
  c->group = a->group;
}

/* The group's (or the lone call's) collectives wait for their kernels. */
static void
pend_from_aggs (void)
{
  t.n_pend = 0;
  for (uint32_t i = 0; i < t.n_agg; i++) {
    Pend *p = &t.pend[t.n_pend++];
    p->stream = t.agg[i].stream;
    agg_coll (&t.agg[i], &p->c);
    p->waiting = 1;
  }
  t.n_agg = 0;
}

/* cap_coll_cb (recorder.h). */
static int
capnccl_take (uintptr_t stream, CapColl *out)
{
  if (__builtin_expect (t.n_pend == 0, 1))
    return 0;
  Pend *p = NULL;
  for (uint32_t i = 0; i < t.n_pend && !p; i++)
    if (t.pend[i].waiting && t.pend[i].stream == stream)
      p = &t.pend[i];
  for (uint32_t i = 0; i < t.n_pend && !p; i++)
    if (t.pend[i].waiting)
      p = &t.pend[i];
  if (!p)
    return 0;
  p->waiting = 0;
  *out = p->c;
  return 1;
}

/* The recorder asks for a kernel's collective through cap_coll_cb; set at
 * load, before any launch is recorded (a mode starts in hooks.c's
 * constructor or at the driver's InitializeInjection). */
__attribute__ ((constructor)) static void
capnccl_init (void)
{
  cap_coll_cb = capnccl_take;
}

/* Before a wrapped op's real call: notes it (COUNT elements of DTYPE, times
 * the communicator's size when PER_RANK). Returns 0 when the call is not
 * followed (NCCL's own, or the wrap is off), 1 for an op inside a group, 2
 * for the call that launches (outside any group); op_end must follow. */
static int
op_begin (int kind, size_t count, int dtype, int per_rank, NcclComm comm, NcclStream s)
{
  if (t.depth > 0 || wrap_off ())
    return 0;
  uint64_t esz = dtype_bytes (dtype);
  uint32_t ranks = comm_ranks (comm);
  uint64_t mult = esz * (per_rank ? ranks : 1);
  int known = esz && ranks && (mult == 0 || count <= INT64_MAX / mult);
  int grouped = t.group > 0;
  if (!grouped)
    t.n_agg = 0;
  if (known)
    agg_add (kind, (uint64_t) count * mult, ranks, (uintptr_t) s, comm_gid (comm, ranks, NULL));
  if (!grouped)
    pend_from_aggs ();
  t.depth++;
  return grouped ? 1 : 2;
}

static void
op_end (int how)
{
  if (!how)
    return;
  t.depth--;
  if (how == 2)
    t.n_pend = 0;
}

/* The real function NAME of type TYPE, or NCCL_SYSTEM_ERROR from the
 * wrapper when the program's NCCL has none. */
#define REAL(type, name) \
  static type *real; \
  if (!real) \
    real = (type *) find_real (name); \
  if (!real) \
    return NCCL_SYSTEM_ERROR

typedef NcclResult ReduceLikeFn (const void *, void *, size_t, int, int, NcclComm, NcclStream);
typedef NcclResult GatherLikeFn (const void *, void *, size_t, int, NcclComm, NcclStream);
typedef NcclResult RootedFn (const void *, void *, size_t, int, int, NcclComm, NcclStream);
typedef NcclResult ReduceFn (const void *, void *, size_t, int, int, int, NcclComm, NcclStream);
typedef NcclResult BcastFn (void *, size_t, int, int, NcclComm, NcclStream);
typedef NcclResult P2pFn (const void *, size_t, int, int, NcclComm, NcclStream);
typedef NcclResult GroupFn (void);
typedef NcclResult SimulateFn (void *);

/* Exported under NCCL's names (libvramcap.map). */
NcclResult ncclAllReduce (const void *sb, void *rb, size_t count, int dt, int op, NcclComm c, NcclStream s);
NcclResult ncclReduceScatter (const void *sb, void *rb, size_t recvcount, int dt, int op, NcclComm c,
                              NcclStream s);
NcclResult ncclAllGather (const void *sb, void *rb, size_t sendcount, int dt, NcclComm c, NcclStream s);
NcclResult ncclAlltoAll (const void *sb, void *rb, size_t count, int dt, NcclComm c, NcclStream s);
NcclResult ncclBroadcast (const void *sb, void *rb, size_t count, int dt, int root, NcclComm c,
                          NcclStream s);
NcclResult ncclBcast (void *buf, size_t count, int dt, int root, NcclComm c, NcclStream s);
NcclResult ncclReduce (const void *sb, void *rb, size_t count, int dt, int op, int root, NcclComm c,
                       NcclStream s);
NcclResult ncclSend (const void *sb, size_t count, int dt, int peer, NcclComm c, NcclStream s);
NcclResult ncclRecv (void *rb, size_t count, int dt, int peer, NcclComm c, NcclStream s);
NcclResult ncclGroupStart (void);
NcclResult ncclGroupEnd (void);
NcclResult ncclGroupSimulateEnd (void *sim_info);

NcclResult
ncclAllReduce (const void *sb, void *rb, size_t count, int dt, int op, NcclComm c, NcclStream s)
{
  REAL (ReduceLikeFn, "ncclAllReduce");
  int how = op_begin (K_ALL_REDUCE, count, dt, 0, c, s);
  NcclResult r = real (sb, rb, count, dt, op, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclReduceScatter (const void *sb, void *rb, size_t recvcount, int dt, int op, NcclComm c, NcclStream s)
{
  REAL (ReduceLikeFn, "ncclReduceScatter");
  int how = op_begin (K_REDUCE_SCATTER, recvcount, dt, 1, c, s);
  NcclResult r = real (sb, rb, recvcount, dt, op, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclAllGather (const void *sb, void *rb, size_t sendcount, int dt, NcclComm c, NcclStream s)
{
  REAL (GatherLikeFn, "ncclAllGather");
  int how = op_begin (K_ALL_GATHER, sendcount, dt, 0, c, s);
  NcclResult r = real (sb, rb, sendcount, dt, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclAlltoAll (const void *sb, void *rb, size_t count, int dt, NcclComm c, NcclStream s)
{
  REAL (GatherLikeFn, "ncclAlltoAll");
  int how = op_begin (K_ALL_TO_ALL, count, dt, 1, c, s);
  NcclResult r = real (sb, rb, count, dt, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclBroadcast (const void *sb, void *rb, size_t count, int dt, int root, NcclComm c, NcclStream s)
{
  REAL (RootedFn, "ncclBroadcast");
  int how = op_begin (K_BROADCAST, count, dt, 0, c, s);
  NcclResult r = real (sb, rb, count, dt, root, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclBcast (void *buf, size_t count, int dt, int root, NcclComm c, NcclStream s)
{
  REAL (BcastFn, "ncclBcast");
  int how = op_begin (K_BROADCAST, count, dt, 0, c, s);
  NcclResult r = real (buf, count, dt, root, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclReduce (const void *sb, void *rb, size_t count, int dt, int op, int root, NcclComm c, NcclStream s)
{
  REAL (ReduceFn, "ncclReduce");
  int how = op_begin (K_REDUCE, count, dt, 0, c, s);
  NcclResult r = real (sb, rb, count, dt, op, root, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclSend (const void *sb, size_t count, int dt, int peer, NcclComm c, NcclStream s)
{
  REAL (P2pFn, "ncclSend");
  int how = op_begin (K_SEND, count, dt, 0, c, s);
  NcclResult r = real (sb, count, dt, peer, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclRecv (void *rb, size_t count, int dt, int peer, NcclComm c, NcclStream s)
{
  REAL (P2pFn, "ncclRecv");
  int how = op_begin (K_RECV, count, dt, 0, c, s);
  NcclResult r = real (rb, count, dt, peer, c, s);
  op_end (how);
  return r;
}

NcclResult
ncclGroupStart (void)
{
  REAL (GroupFn, "ncclGroupStart");
  if (t.depth == 0 && !wrap_off () && t.group++ == 0)
    t.n_agg = 0;
  return real ();
}

NcclResult
ncclGroupEnd (void)
{
  REAL (GroupFn, "ncclGroupEnd");
  if (t.depth > 0 || wrap_off () || t.group == 0 || --t.group > 0)
    return real ();
  /* The outermost end: NCCL launches the group's kernels now. */
  pend_from_aggs ();
  t.depth++;
  NcclResult r = real ();
  t.depth--;
  t.n_pend = 0;
  return r;
}

/* NCCL 2.22+: ends the group without launching (it only estimates). */
NcclResult
ncclGroupSimulateEnd (void *sim_info)
{
  REAL (SimulateFn, "ncclGroupSimulateEnd");
  if (t.depth == 0 && !wrap_off () && t.group > 0 && --t.group == 0)
    t.n_agg = 0;
  return real (sim_info);
}

/* ---- making and ending communicators ---- */

typedef struct { char internal[128]; } NcclUniqueId;   /* NCCL_UNIQUE_ID_BYTES (nccl.h) */
typedef void *NcclConfig;                             /* ncclConfig_t *: passed through */
#define NCCL_IN_PROGRESS 7   /* ncclInProgress: a non-blocking init, *comm already set */

typedef NcclResult InitRankFn (NcclComm *, int, NcclUniqueId, int);
typedef NcclResult InitRankConfigFn (NcclComm *, int, NcclUniqueId, int, NcclConfig);
typedef NcclResult InitScalableFn (NcclComm *, int, int, int, NcclUniqueId *, NcclConfig);
typedef NcclResult InitAllFn (NcclComm *, int, const int *);
typedef NcclResult SplitFn (NcclComm, int, int, NcclComm *, NcclConfig);
typedef NcclResult ShrinkFn (NcclComm, int *, int, NcclComm *, NcclConfig, int);
typedef NcclResult EndFn (NcclComm);

NcclResult ncclCommInitRank (NcclComm *comm, int nranks, NcclUniqueId id, int rank);
NcclResult ncclCommInitRankConfig (NcclComm *comm, int nranks, NcclUniqueId id, int rank, NcclConfig config);
NcclResult ncclCommInitRankScalable (NcclComm *comm, int nranks, int rank, int n_ids, NcclUniqueId *ids,
                                     NcclConfig config);
NcclResult ncclCommInitAll (NcclComm *comms, int ndev, const int *devlist);
NcclResult ncclCommSplit (NcclComm comm, int color, int key, NcclComm *newcomm, NcclConfig config);
NcclResult ncclCommShrink (NcclComm comm, int *exclude, int n_exclude, NcclComm *newcomm, NcclConfig config,
                           int flags);
NcclResult ncclCommDestroy (NcclComm comm);
NcclResult ncclCommAbort (NcclComm comm);

/* Whether a make call's result leaves a communicator to name. */
static int
made (NcclResult r)
{
  return r == 0 || r == NCCL_IN_PROGRESS;
}

/* The id of a communicator made from IDS (N of them) with NRANKS ranks. */
static uint64_t
gid_from_ids (const NcclUniqueId *ids, int n, int nranks)
{
  uint64_t h = fnv (FNV_START, "vramcap-uid", 11);
  if (ids && n > 0)
    h = fnv (h, ids, (size_t) n * sizeof *ids);
  uint32_t r = (uint32_t) nranks;
  return gid_of (fnv (h, &r, sizeof r));
}

/* Before a make call: whether to follow it (not NCCL's own, wrap on). */
static int
make_begin (void)
{
  if (t.depth > 0 || wrap_off ())
    return 0;
  t.depth++;   /* NCCL's calls into its own exported functions pass through */
  return 1;
}

NcclResult
ncclCommInitRank (NcclComm *comm, int nranks, NcclUniqueId id, int rank)
{
  REAL (InitRankFn, "ncclCommInitRank");
  int follow = make_begin ();
  NcclResult r = real (comm, nranks, id, rank);
  if (follow) {
    t.depth--;
    if (made (r) && comm)
      comm_set (*comm, gid_from_ids (&id, 1, nranks));
  }
  return r;
}

NcclResult
ncclCommInitRankConfig (NcclComm *comm, int nranks, NcclUniqueId id, int rank, NcclConfig config)
{
  REAL (InitRankConfigFn, "ncclCommInitRankConfig");
  int follow = make_begin ();
  NcclResult r = real (comm, nranks, id, rank, config);
  if (follow) {
    t.depth--;
    if (made (r) && comm)
      comm_set (*comm, gid_from_ids (&id, 1, nranks));
  }
  return r;
}

NcclResult
ncclCommInitRankScalable (NcclComm *comm, int nranks, int rank, int n_ids, NcclUniqueId *ids, NcclConfig config)
{
  REAL (InitScalableFn, "ncclCommInitRankScalable");
  int follow = make_begin ();
  NcclResult r = real (comm, nranks, rank, n_ids, ids, config);
  if (follow) {
    t.depth--;
    if (made (r) && comm)
      comm_set (*comm, gid_from_ids (ids, n_ids, nranks));
  }
  return r;
}

NcclResult
ncclCommInitAll (NcclComm *comms, int ndev, const int *devlist)
{
  REAL (InitAllFn, "ncclCommInitAll");
  int follow = make_begin ();
  NcclResult r = real (comms, ndev, devlist);
  if (follow) {
    t.depth--;
    if (made (r) && comms && ndev > 0) {
      uint64_t n = __atomic_fetch_add (&g_init_alls, 1, __ATOMIC_RELAXED);
      uint32_t size = (uint32_t) ndev;
      uint64_t h = fnv (fnv (FNV_START, "vramcap-initall", 15), &n, sizeof n);
      uint64_t g = gid_of (fnv (h, &size, sizeof size));
      for (int i = 0; i < ndev; i++)
        comm_set (comms[i], g);
    }
  }
  return r;
}

/* The id of the KIND-th (0 split, 1 shrink) child of PARENT made by its
 * SEQ-th split or shrink, with COLOR and the child's size. */
static uint64_t
gid_of_child (uint64_t parent, uint32_t seq, int kind, int color, NcclComm child)
{
  uint32_t size = comm_ranks (child);
  int32_t c = color;
  uint64_t h = fnv (FNV_START, kind ? "vramcap-shrink" : "vramcap-split", kind ? 14 : 13);
  h = fnv (h, &parent, sizeof parent);
  h = fnv (h, &seq, sizeof seq);
  h = fnv (h, &c, sizeof c);
  return gid_of (fnv (h, &size, sizeof size));
}

NcclResult
ncclCommSplit (NcclComm comm, int color, int key, NcclComm *newcomm, NcclConfig config)
{
  REAL (SplitFn, "ncclCommSplit");
  int follow = make_begin ();
  uint32_t seq = 0;
  uint64_t parent = follow && comm ? comm_gid (comm, comm_ranks (comm), &seq) : 0;
  NcclResult r = real (comm, color, key, newcomm, config);
  if (follow) {
    t.depth--;
    if (made (r) && newcomm && *newcomm)
      comm_set (*newcomm, gid_of_child (parent, seq, 0, color, *newcomm));
  }
  return r;
}

NcclResult
ncclCommShrink (NcclComm comm, int *exclude, int n_exclude, NcclComm *newcomm, NcclConfig config, int flags)
{
  REAL (ShrinkFn, "ncclCommShrink");
  int follow = make_begin ();
  uint32_t seq = 0;
  uint64_t parent = follow && comm ? comm_gid (comm, comm_ranks (comm), &seq) : 0;
  NcclResult r = real (comm, exclude, n_exclude, newcomm, config, flags);
  if (follow) {
    t.depth--;
    if (made (r) && newcomm && *newcomm)
      comm_set (*newcomm, gid_of_child (parent, seq, 1, 0, *newcomm));
  }
  return r;
}

NcclResult
ncclCommDestroy (NcclComm comm)
{
  REAL (EndFn, "ncclCommDestroy");
  /* Forgotten first: once freed, its address may name the next one made. */
  if (t.depth == 0 && !wrap_off ())
    comm_forget (comm);
  return real (comm);
}

NcclResult
ncclCommAbort (NcclComm comm)
{
  REAL (EndFn, "ncclCommAbort");
  if (t.depth == 0 && !wrap_off ())
    comm_forget (comm);
  return real (comm);
}
