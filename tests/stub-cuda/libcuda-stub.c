/* libcuda-stub.c — a test-only stand-in for the CUDA driver (libcuda.so.1),
 * for running the capture shim where there is no GPU.
 *
 * It implements the subset the capture tests call, with deterministic fake
 * GPU times: every stream has a clock (starting at 1,000,000 ns); a kernel
 * advances it by 1000 ns per block in x, a copy by 1 ns per byte, a memset
 * by 1 ns per 2 bytes; an event takes its stream's clock when recorded; a
 * graph launch advances it by the sum of its kernel nodes' times (as they
 * were at instantiation). Device pointers come from a bump allocator (they
 * are never dereferenced); host and managed memory are real malloc'd
 * memory. Functions (axpy, pairk, noargs) have fixed registers and static
 * shared memory (StubFunc), which cuFuncGetAttribute answers
 * (STUB_CUDA_NO_FUNC_ATTR=1: it refuses). STUB_CUDA_NO_DEVICE=1: cuInit
 * answers CUDA_ERROR_NO_DEVICE. Built with -Bsymbolic, like the
 * real driver, so its own references (cuGetProcAddress answers) are never
 * interposed.
 *
 * CUPTI: with STUB_CUDA_INJECT=1 and CUDA_INJECTION64_PATH set, cuInit
 * loads that library and calls its InitializeInjection once, as the real
 * driver does. The stub libcupti (libcupti-stub.c) registers itself with
 * stub_cuda_set_cupti (stub-trace.h); from then on every traced call (the
 * TRACED wrappers below) reports its enter and exit sites with its
 * *_params struct and a fresh correlation id, and its GPU work as activity
 * records in the real CUPTI layouts: kernel (grid, block, the function's
 * registers and static shared memory, the launch's dynamic), memcpy, memset (start and end
 * from the stream clocks), memory (MEMORY2: an ALLOCATION per allocation
 * call, a RELEASE per free; stream-ordered ones with the default pool's
 * state), the pool's CREATED record at its first allocation, and unified
 * memory counters (a kernel whose parameters point into a managed
 * allocation no earlier kernel touched: a GPU page fault over
 * [S, S + D/4] and a host-to-device transfer of the allocation over
 * [S + D/8, S + D/2], S and D the kernel's start and duration). At
 * injection: STUB_CUPTI_STATIC=N adds a DEVICE_STATIC allocation of N
 * bytes (correlation id 0), STUB_CUPTI_UNRECORDED=1 a 4096-byte DEVICE
 * allocation under a correlation id no call had. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stub-trace.h"

#undef cuMemPrefetchAsync
#undef cuGraphInstantiate
/* The CUDA 12.8 batch calls (with failIdx); CUDA 13 maps the names to _v2. */
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync

#define CLOCK_BASE 1000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUdeviceptr next_dev = 0x100000000000ull;
static int inited;

struct CUstream_st { uint64_t clock; uint32_t id; };
struct CUevent_st { uint64_t time; int recorded; };
struct CUctx_st { int dummy; };
struct CUmod_st { int dummy; };

static struct CUstream_st legacy = { CLOCK_BASE, 7 };
static uint32_t next_stream_id = 13;
static struct CUctx_st the_ctx;
static __thread CUcontext cur_ctx;

/* A function: its parameter layout, and what cuFuncGetAttribute says of
 * it (registers per thread, static shared memory per block), which its
 * kernels' CUPTI records carry too (with the launch's dynamic shared
 * memory): fixed values, chosen so that every test can tell them apart. */
typedef struct { const char *name; int n; size_t off[4], size[4]; int regs, smem; } StubFunc;
static StubFunc funcs[] = {
  { "axpy", 4, { 0, 8, 16, 24 }, { 4, 8, 8, 4 }, 32, 1024 },  /* (float a, float *x, float *y, int n) */
  { "pairk", 2, { 0, 24 }, { 24, 8 }, 40, 512 },              /* (struct {float *p; int k; float *q;}, long n) */
  { "noargs", 0, { 0 }, { 0 }, 8, 0 },
  { "ncclDevKernel_Generic", 0, { 0 }, { 0 }, 0, 0 },          /* the stub libnccl's kernel */
};

static struct CUstream_st *
S (CUstream s)
{
  return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ? &legacy : s;
}

/* Advances S's clock by NS; returns the clock before. */
static uint64_t
advance (CUstream s, uint64_t ns)
{
  pthread_mutex_lock (&lock);
  uint64_t t = S (s)->clock;
  S (s)->clock += ns;
  pthread_mutex_unlock (&lock);
  return t;
}

static uint64_t
stream_clock (CUstream s)
{
  pthread_mutex_lock (&lock);
  uint64_t t = S (s)->clock;
  pthread_mutex_unlock (&lock);
  return t;
}

static CUdeviceptr
bump (size_t n)
{
  pthread_mutex_lock (&lock);
  CUdeviceptr p = next_dev;
  next_dev += (n + 511) & ~(CUdeviceptr) 511;
  if (n == 0)
    next_dev += 512;
  pthread_mutex_unlock (&lock);
  return p;
}

/* ---- CUPTI: callbacks and activity records ---- */

static const StubCuptiHooks *volatile tracer;
static uint32_t next_corr;
static __thread uint32_t cur_corr;      /* the traced call this thread is in */

void
stub_cuda_set_cupti (const StubCuptiHooks *hooks)
{
  tracer = hooks;
}

typedef struct { CUpti_CallbackId cbid; const char *name; const void *params; uint32_t corr, outer; uint64_t data; } Call;

static void
call_enter (Call *c, CUpti_CallbackId cbid, const char *name, const void *params)
{
  *c = (Call) { cbid, name, params, __atomic_add_fetch (&next_corr, 1, __ATOMIC_RELAXED), cur_corr, 0 };
  cur_corr = c->corr;
  const StubCuptiHooks *t = tracer;
  if (t) {
    CUresult r = CUDA_SUCCESS;
    t->api (CUPTI_API_ENTER, cbid, name, params, &r, c->corr, &c->data);
  }
}

/* CLOCK_REALTIME (us) as this thread's last driver call ended, before its
 * exit callback and the shim's own clock read: the fake torch
 * (tests/stub-cuda/fake-torch) stamps a segment event with it, as PyTorch
 * stamps it in C++ next to the call, so that the tensor merge's clock
 * anchor does not move with how long Python took to get there (a loaded
 * machine: milliseconds). */
static __thread uint64_t last_end_us;
uint64_t stub_last_call_end_us (void);
uint64_t
stub_last_call_end_us (void)
{
  return last_end_us;
}

static CUresult
call_exit (Call *c, CUresult r)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  last_end_us = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
  cur_corr = c->outer;
  const StubCuptiHooks *t = tracer;
  if (t)
    t->api (CUPTI_API_EXIT, c->cbid, c->name, c->params, &r, c->corr, &c->data);
  return r;
}

/* The body of a traced entry point NAME: its *_params struct from the
 * arguments (in order), the enter callback, IMPL (the work), the exit
 * callback. */
#define TRACED(name, impl, ...) \
  do { \
    name##_params prm_ = { __VA_ARGS__ }; \
    Call c_; \
    call_enter (&c_, CUPTI_DRIVER_TRACE_CBID_##name, #name, &prm_); \
    return call_exit (&c_, impl); \
  } while (0)
#define TRACED0(name, impl) \
  do { \
    Call c_; \
    call_enter (&c_, CUPTI_DRIVER_TRACE_CBID_##name, #name, NULL); \
    return call_exit (&c_, impl); \
  } while (0)

static void
emit (const void *rec, size_t size)
{
  const StubCuptiHooks *t = tracer;
  if (t)
    t->record ((const CUpti_Activity *) rec, size);
}

/* Allocations the driver made (for release records, managed ranges, the
 * kinds of copy ends), under the lock. */
typedef struct { uintptr_t p; uint64_t bytes; uint8_t kind, async, touched; } Alloc;
static Alloc *allocs;
static size_t n_allocs, cap_allocs;
/* The default memory pool: live stream-ordered bytes, their peak, its base. */
static uint64_t pool_live, pool_peak, pool_base;
#define POOL_GRAIN (32ull << 20)

static void
alloc_add (uintptr_t p, uint64_t bytes, uint8_t kind, uint8_t async)
{
  pthread_mutex_lock (&lock);
  if (n_allocs == cap_allocs) {
    size_t nc = cap_allocs ? 2 * cap_allocs : 64;
    Alloc *na = realloc (allocs, nc * sizeof *na);
    if (!na) {
      pthread_mutex_unlock (&lock);
      return;
    }
    allocs = na;
    cap_allocs = nc;
  }
  allocs[n_allocs++] = (Alloc) { p, bytes, kind, async, 0 };
  pthread_mutex_unlock (&lock);
}

/* Removes the allocation at P into *OUT; 0 when there is none. */
static int
alloc_take (uintptr_t p, Alloc *out)
{
  int found = 0;
  pthread_mutex_lock (&lock);
  for (size_t i = 0; i < n_allocs; i++)
    if (allocs[i].p == p) {
      *out = allocs[i];
      allocs[i] = allocs[--n_allocs];
      found = 1;
      break;
    }
  pthread_mutex_unlock (&lock);
  return found;
}

static uint8_t
mem_kind (uintptr_t p, uint8_t dflt)
{
  uint8_t k = dflt;
  pthread_mutex_lock (&lock);
  for (size_t i = 0; i < n_allocs; i++)
    if (p >= allocs[i].p && p - allocs[i].p < (allocs[i].bytes ? allocs[i].bytes : 1)) {
      k = allocs[i].kind;
      break;
    }
  pthread_mutex_unlock (&lock);
  return k;
}

static void
rec_memory (CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind, uintptr_t p,
            uint64_t bytes, uint32_t corr, int async, CUstream s)
{
  if (!tracer)
    return;
  CUpti_ActivityMemory4 r;
  memset (&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = op;
  r.memoryKind = kind;
  r.correlationId = corr;
  r.address = p;
  r.bytes = bytes;
  r.timestamp = stream_clock (s);
  r.processId = (uint32_t) getpid ();
  r.contextId = 1;
  r.streamId = S (s)->id;
  r.isAsync = (uint32_t) async;
  if (async) {
    pthread_mutex_lock (&lock);
    r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    r.memoryPoolConfig.address = pool_base;
    r.memoryPoolConfig.pool.size = (pool_peak + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN;
    r.memoryPoolConfig.utilizedSize = pool_live;
    pthread_mutex_unlock (&lock);
  }
  emit (&r, sizeof r);
}

static void
rec_kernel (const StubFunc *sf, CUstream s, uint64_t start, uint64_t end, unsigned gx, unsigned gy,
            unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned dyn_smem, uint64_t node_id)
{
  if (!tracer)
    return;
  CUpti_ActivityKernel10 r;
  memset (&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.start = start;
  r.end = end;
  r.completed = end;
  r.contextId = 1;
  r.streamId = S (s)->id;
  r.gridX = (int32_t) gx; r.gridY = (int32_t) gy; r.gridZ = (int32_t) gz;
  r.blockX = (int32_t) bx; r.blockY = (int32_t) by; r.blockZ = (int32_t) bz;
  r.registersPerThread = (uint16_t) sf->regs;   /* what the capture's kernel shape reads (SPEC 3) */
  r.staticSharedMemory = sf->smem;
  r.dynamicSharedMemory = (int32_t) dyn_smem;
  r.correlationId = cur_corr;
  r.name = sf->name;
  r.graphNodeId = node_id;
  emit (&r, sizeof r);
}

/* A memcpy record covering COUNT copies (copyCount: more than 1 only for
 * a batch's copies merged into one record). */
static void
rec_copy_n (uint8_t kind, uintptr_t dst, uintptr_t src, uint64_t bytes, CUstream s, uint64_t start,
            uint64_t ns, uint64_t count)
{
  if (!tracer)
    return;
  CUpti_ActivityMemcpy6 r;
  memset (&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? mem_kind (src, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
            : mem_kind (src, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  r.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? mem_kind (dst, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
            : mem_kind (dst, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  r.copyKind = kind;
  r.bytes = bytes;
  r.start = start;
  r.end = start + ns;
  r.contextId = 1;
  r.streamId = S (s)->id;
  r.correlationId = cur_corr;
  r.copyCount = count;
  emit (&r, sizeof r);
}

static void
rec_copy (uint8_t kind, uintptr_t dst, uintptr_t src, uint64_t bytes, CUstream s, uint64_t start)
{
  rec_copy_n (kind, dst, src, bytes, s, start, bytes, 1);
}

static void
rec_memset (uint64_t bytes, uint32_t value, CUstream s, uint64_t start, uint64_t ns)
{
  if (!tracer)
    return;
  CUpti_ActivityMemset4 r;
  memset (&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = value;
  r.bytes = bytes;
  r.start = start;
  r.end = start + ns;
  r.contextId = 1;
  r.streamId = S (s)->id;
  r.correlationId = cur_corr;
  r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  emit (&r, sizeof r);
}

static void
rec_um (CUpti_ActivityUnifiedMemoryCounterKind kind, uint64_t value, uint64_t start, uint64_t end,
        uintptr_t p, CUstream s)
{
  CUpti_ActivityUnifiedMemoryCounter3 r;
  memset (&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  r.counterKind = kind;
  r.value = value;
  r.start = start;
  r.end = end;
  r.address = p;
  r.streamId = S (s)->id;
  r.processId = (uint32_t) getpid ();
  emit (&r, sizeof r);
}

/* A kernel of function F with parameters PARAMS ran over [start, start+dur]
 * on S: the unified-memory counters of the managed allocations its
 * parameters point into that no earlier kernel touched. */
static void
um_faults (CUfunction f, void **params, CUstream s, uint64_t start, uint64_t dur)
{
  const StubFunc *sf = (const StubFunc *) f;
  if (!tracer || !params)
    return;
  for (int i = 0; i < sf->n; i++)
    for (size_t o = 0; o + 8 <= sf->size[i]; o += 8) {
      uint64_t w;
      memcpy (&w, (const char *) params[i] + o, 8);
      uintptr_t p = 0;
      uint64_t bytes = 0;
      pthread_mutex_lock (&lock);
      for (size_t k = 0; k < n_allocs; k++)
        if (allocs[k].kind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED && !allocs[k].touched
            && w >= allocs[k].p && w - allocs[k].p < allocs[k].bytes) {
          allocs[k].touched = 1;
          p = allocs[k].p;
          bytes = allocs[k].bytes;
          break;
        }
      pthread_mutex_unlock (&lock);
      if (!p)
        continue;
      rec_um (CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 1, start, start + dur / 4, p, s);
      rec_um (CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, bytes, start + dur / 8,
              start + dur / 2, p, s);
    }
}

/* After InitializeInjection: the allocations made before any call. */
static void
injection_records (void)
{
  const char *st = getenv ("STUB_CUPTI_STATIC");
  if (st && *st)
    rec_memory (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC,
                0x0f0000000000ull, strtoull (st, NULL, 0), 0, 0, NULL);
  const char *un = getenv ("STUB_CUPTI_UNRECORDED");
  if (un && strcmp (un, "1") == 0)
    rec_memory (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                0x0f0000100000ull, 4096, 0x7fffffff, 0, NULL);
}

#define NEED_INIT() do { if (!inited) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

/* The real driver loads CUDA_INJECTION64_PATH in cuInit and calls its
 * InitializeInjection once; the stub only when STUB_CUDA_INJECT=1 too (the
 * hook tests run with CUDA_INJECTION64_PATH set and no injection). */
static void
inject (void)
{
  static int done;
  const char *path = getenv ("CUDA_INJECTION64_PATH"), *on = getenv ("STUB_CUDA_INJECT");
  if (!path || !*path || !on || strcmp (on, "1") != 0 || __atomic_exchange_n (&done, 1, __ATOMIC_ACQ_REL))
    return;
  void *h = dlopen (path, RTLD_NOW | RTLD_GLOBAL);
  int (*init) (void) = h ? (int (*) (void)) dlsym (h, "InitializeInjection") : NULL;
  if (!init) {
    fprintf (stderr, "stub libcuda: cannot load injection library %s\n", path);
    return;
  }
  init ();
  injection_records ();
}

/* STUB_CUDA_NO_DEVICE=1: a driver that finds no GPU, as cuInit answers on
 * a machine whose GPUs are hidden or missing. */
CUresult
cuInit (unsigned int flags)
{
  (void) flags;
  const char *none = getenv ("STUB_CUDA_NO_DEVICE");
  if (none && strcmp (none, "1") == 0)
    return CUDA_ERROR_NO_DEVICE;
  inited = 1;
  inject ();
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion (int *v) { *v = 12040; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount (int *n) { NEED_INIT (); *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet (CUdevice *d, int i) { NEED_INIT (); if (i != 0) return CUDA_ERROR_INVALID_DEVICE; *d = 0; return CUDA_SUCCESS; }

CUresult
cuDeviceGetName (char *name, int len, CUdevice d)
{
  (void) d;
  const char *n = getenv ("STUB_CUDA_NAME");
  strncpy (name, n ? n : "NVIDIA H100 80GB HBM3", (size_t) len);
  name[len - 1] = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2 (size_t *b, CUdevice d) { (void) d; *b = 85520809984ull; return CUDA_SUCCESS; }

CUresult
cuDeviceGetAttribute (int *v, CUdevice_attribute a, CUdevice d)
{
  (void) d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain (CUcontext *c, CUdevice d) { (void) d; NEED_INIT (); *c = &the_ctx; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2 (CUdevice d) { (void) d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent (CUcontext c) { cur_ctx = c; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent (CUcontext *c) { *c = cur_ctx; return CUDA_SUCCESS; }

CUresult cuModuleLoadData (CUmodule *m, const void *img) { (void) img; static struct CUmod_st mod; *m = &mod; return CUDA_SUCCESS; }

/* "many0" .. "many1023" (prog-manyfuncs): functions without parameters,
 * I's registers 16 + I % 64 and static shared memory 256 x (I % 8) bytes;
 * made at their first lookup. */
#define MANY 1024
static StubFunc many[MANY];
static char many_names[MANY][16];

CUresult
cuModuleGetFunction (CUfunction *f, CUmodule m, const char *name)
{
  (void) m;
  for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
    if (strcmp (funcs[i].name, name) == 0) {
      *f = (CUfunction) &funcs[i];
      return CUDA_SUCCESS;
    }
  char *end;
  unsigned long i = strncmp (name, "many", 4) == 0 ? strtoul (name + 4, &end, 10) : MANY;
  if (i >= MANY || end == name + 4 || *end)
    return CUDA_ERROR_NOT_FOUND;
  pthread_mutex_lock (&lock);
  if (!many[i].name) {
    snprintf (many_names[i], sizeof many_names[i], "many%lu", i);
    many[i] = (StubFunc) { many_names[i], 0, { 0 }, { 0 }, 16 + (int) (i % 64), 256 * (int) (i % 8) };
  }
  pthread_mutex_unlock (&lock);
  *f = (CUfunction) &many[i];
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName (const char **name, CUfunction f) { *name = ((StubFunc *) f)->name; return CUDA_SUCCESS; }

/* STUB_CUDA_NO_FUNC_ATTR=1: refused, as a driver that cannot say would. */
CUresult
cuFuncGetAttribute (int *v, CUfunction_attribute a, CUfunction f)
{
  const char *no = getenv ("STUB_CUDA_NO_FUNC_ATTR");
  if (no && *no == '1')
    return CUDA_ERROR_NOT_SUPPORTED;
  const StubFunc *sf = (const StubFunc *) f;
  switch (a) {
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = sf->regs; return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = sf->smem; return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult
cuFuncGetParamInfo (CUfunction f, size_t i, size_t *off, size_t *size)
{
  StubFunc *sf = (StubFunc *) f;
  if ((int) i >= sf->n)
    return CUDA_ERROR_INVALID_VALUE;
  *off = sf->off[i];
  *size = sf->size[i];
  return CUDA_SUCCESS;
}

/* Every entry point below that the capture shim takes a CUPTI callback
 * for is traced (TRACED: a *_params struct, the enter and exit sites, one
 * correlation id); its work is a static do_* or impl_* function, so one
 * entry point calling another's work (a _ptsz variant, the cooperative
 * launch) reports one call, as the real driver does. */

static CUresult
do_alloc (CUdeviceptr *p, size_t n, CUstream s, int async)
{
  NEED_INIT ();
  *p = bump (n);
  if (async) {
    int created = 0;
    pthread_mutex_lock (&lock);
    if (!pool_base) {
      pool_base = *p;
      created = 1;
    }
    pool_live += n;
    if (pool_live > pool_peak)
      pool_peak = pool_live;
    uint64_t reserve = (pool_peak + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN, live = pool_live;
    pthread_mutex_unlock (&lock);
    if (created && tracer) {
      CUpti_ActivityMemoryPool3 r;
      memset (&r, 0, sizeof r);
      r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
      r.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
      r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
      r.correlationId = cur_corr;
      r.processId = (uint32_t) getpid ();
      r.address = pool_base;
      r.size = reserve;
      r.timestamp = stream_clock (s);
      r.utilizedSize = live;
      emit (&r, sizeof r);
    }
  }
  alloc_add (*p, n, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, (uint8_t) async);
  rec_memory (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, *p, n,
              cur_corr, async, s);
  return CUDA_SUCCESS;
}

static CUresult
do_free (uintptr_t p, CUstream s, int async)
{
  Alloc a;
  if (!alloc_take (p, &a))
    return CUDA_SUCCESS;        /* the stub never checks pointers */
  if (async && a.async) {
    pthread_mutex_lock (&lock);
    pool_live -= a.bytes;
    pthread_mutex_unlock (&lock);
  }
  rec_memory (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a.kind, p, a.bytes, cur_corr, async && a.async, s);
  if (a.kind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
    free ((void *) p);          /* managed and pinned memory are malloc'd */
  return CUDA_SUCCESS;
}

static CUresult
do_host_alloc (void **p, size_t n, uint8_t kind)
{
  *p = calloc (1, n ? n : 1);
  if (!*p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  alloc_add ((uintptr_t) *p, n, kind, 0);
  rec_memory (CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, kind, (uintptr_t) *p, n, cur_corr, 0, NULL);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2 (CUdeviceptr *p, size_t n) { TRACED (cuMemAlloc_v2, do_alloc (p, n, NULL, 0), p, n); }
CUresult cuMemFree_v2 (CUdeviceptr p) { TRACED (cuMemFree_v2, do_free (p, NULL, 0), p); }
CUresult cuMemAllocAsync (CUdeviceptr *p, size_t n, CUstream s) { TRACED (cuMemAllocAsync, do_alloc (p, n, s, 1), p, n, s); }
CUresult cuMemFreeAsync (CUdeviceptr p, CUstream s) { TRACED (cuMemFreeAsync, do_free (p, s, 1), p, s); }

CUresult
cuMemAllocManaged (CUdeviceptr *p, size_t n, unsigned int flags)
{
  TRACED (cuMemAllocManaged, do_host_alloc ((void **) p, n, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), p, n, flags);
}

CUresult
cuMemHostAlloc (void **p, size_t n, unsigned int flags)
{
  TRACED (cuMemHostAlloc, do_host_alloc (p, n, CUPTI_ACTIVITY_MEMORY_KIND_PINNED), p, n, flags);
}

CUresult cuMemAllocHost_v2 (void **p, size_t n) { TRACED (cuMemAllocHost_v2, do_host_alloc (p, n, CUPTI_ACTIVITY_MEMORY_KIND_PINNED), p, n); }
CUresult cuMemFreeHost (void *p) { TRACED (cuMemFreeHost, do_free ((uintptr_t) p, NULL, 0), p); }

#define HTOD CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
#define DTOH CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
#define DTOD CUPTI_ACTIVITY_MEMCPY_KIND_DTOD
#define PTOP CUPTI_ACTIVITY_MEMCPY_KIND_PTOP

/* A copy of N bytes on S: N ns on its clock, one memcpy record. */
static CUresult
do_copy (uint8_t kind, uintptr_t d, uintptr_t s, uint64_t n, CUstream st)
{
  uint64_t t = advance (st, n);
  rec_copy (kind, d, s, n, st, t);
  return CUDA_SUCCESS;
}

/* cuMemcpy[Async]: the direction from what the two pointers are. */
static uint8_t
copy_kind (uintptr_t d, uintptr_t s)
{
  int dd = mem_kind (d, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  int sd = mem_kind (s, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return dd && sd ? DTOD : dd ? HTOD : sd ? DTOH : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static CUresult
do_memset (CUdeviceptr d, uint32_t v, uint64_t bytes, CUstream s)
{
  uint64_t t = advance (s, bytes / 2);
  rec_memset (bytes, v, s, t, bytes / 2);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2 (CUdeviceptr d, const void *s, size_t n) { TRACED (cuMemcpyHtoD_v2, do_copy (HTOD, d, (uintptr_t) s, n, NULL), d, s, n); }
CUresult cuMemcpyDtoH_v2 (void *d, CUdeviceptr s, size_t n) { TRACED (cuMemcpyDtoH_v2, do_copy (DTOH, (uintptr_t) d, s, n, NULL), d, s, n); }
CUresult cuMemcpyDtoD_v2 (CUdeviceptr d, CUdeviceptr s, size_t n) { TRACED (cuMemcpyDtoD_v2, do_copy (DTOD, d, s, n, NULL), d, s, n); }
CUresult cuMemcpy (CUdeviceptr d, CUdeviceptr s, size_t n) { TRACED (cuMemcpy, do_copy (copy_kind (d, s), d, s, n, NULL), d, s, n); }
CUresult cuMemcpyHtoDAsync_v2 (CUdeviceptr d, const void *s, size_t n, CUstream st) { TRACED (cuMemcpyHtoDAsync_v2, do_copy (HTOD, d, (uintptr_t) s, n, st), d, s, n, st); }
CUresult cuMemcpyDtoHAsync_v2 (void *d, CUdeviceptr s, size_t n, CUstream st) { TRACED (cuMemcpyDtoHAsync_v2, do_copy (DTOH, (uintptr_t) d, s, n, st), d, s, n, st); }
CUresult cuMemcpyAsync (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { TRACED (cuMemcpyAsync, do_copy (copy_kind (d, s), d, s, n, st), d, s, n, st); }
CUresult cuMemsetD8_v2 (CUdeviceptr d, unsigned char v, size_t n) { TRACED (cuMemsetD8_v2, do_memset (d, v, n, NULL), d, v, n); }
CUresult cuMemsetD8Async (CUdeviceptr d, unsigned char v, size_t n, CUstream s) { TRACED (cuMemsetD8Async, do_memset (d, v, n, s), d, v, n, s); }
CUresult cuMemsetD32Async (CUdeviceptr d, unsigned int v, size_t n, CUstream s) { TRACED (cuMemsetD32Async, do_memset (d, v, 4 * (uint64_t) n, s), d, v, n, s); }

static CUresult
do_prefetch (size_t n, CUstream s)
{
  advance (s, n);
  return CUDA_SUCCESS;
}

CUresult
cuMemPrefetchAsync_v2 (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
  TRACED (cuMemPrefetchAsync_v2, do_prefetch (n, s), p, n, loc, flags, s);
}

/* Advice changes nothing the stub models. */
CUresult
cuMemAdvise_v2 (CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
  TRACED (cuMemAdvise_v2, inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED, p, n, advice, loc);
}

static CUresult
impl_launch (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s,
             void **params)
{
  NEED_INIT ();
  uint64_t dur = 1000ull * gx, t = advance (s, dur);
  rec_kernel ((StubFunc *) f, s, t, t + dur, gx, gy, gz, bx, by, bz, shmem, 0);
  um_faults (f, params, s, t, dur);
  return CUDA_SUCCESS;
}

CUresult
cuLaunchKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                CUstream s, void **params, void **extra)
{
  TRACED (cuLaunchKernel, impl_launch (f, gx, gy, gz, bx, by, bz, shmem, s, params),
          f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

CUresult
cuLaunchCooperativeKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                           CUstream s, void **params)
{
  TRACED (cuLaunchCooperativeKernel, impl_launch (f, gx, gy, gz, bx, by, bz, shmem, s, params),
          f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

static CUresult
impl_launch_ex (const CUlaunchConfig *c, CUfunction f, void **params)
{
  return impl_launch (f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                      c->blockDimZ, c->sharedMemBytes, c->hStream, params);
}

CUresult
cuLaunchKernelEx (const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
  TRACED (cuLaunchKernelEx, impl_launch_ex (c, f, params), c, f, params, extra);
}

/* 2D/3D copies take Width x Height (x Depth) ns; peer copies 1 ns a byte. */
static uint8_t
desc_kind (CUmemorytype dst, CUmemorytype src)
{
  int dd = dst == CU_MEMORYTYPE_DEVICE || dst == CU_MEMORYTYPE_ARRAY;
  int sd = src == CU_MEMORYTYPE_DEVICE || src == CU_MEMORYTYPE_ARRAY;
  return dd && sd ? DTOD : dd ? HTOD : sd ? DTOH : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static CUresult
do_copy2d (const CUDA_MEMCPY2D *c, CUstream s)
{
  return do_copy (desc_kind (c->dstMemoryType, c->srcMemoryType), c->dstDevice, c->srcDevice,
                  (uint64_t) c->WidthInBytes * c->Height, s);
}

static CUresult
do_copy3d (const CUDA_MEMCPY3D *c, CUstream s)
{
  return do_copy (desc_kind (c->dstMemoryType, c->srcMemoryType), c->dstDevice, c->srcDevice,
                  (uint64_t) c->WidthInBytes * c->Height * c->Depth, s);
}

CUresult cuMemcpy2D_v2 (const CUDA_MEMCPY2D *c) { TRACED (cuMemcpy2D_v2, do_copy2d (c, NULL), c); }
CUresult cuMemcpy2DUnaligned_v2 (const CUDA_MEMCPY2D *c) { TRACED (cuMemcpy2DUnaligned_v2, do_copy2d (c, NULL), c); }
CUresult cuMemcpy2DAsync_v2 (const CUDA_MEMCPY2D *c, CUstream s) { TRACED (cuMemcpy2DAsync_v2, do_copy2d (c, s), c, s); }
CUresult cuMemcpy3D_v2 (const CUDA_MEMCPY3D *c) { TRACED (cuMemcpy3D_v2, do_copy3d (c, NULL), c); }
CUresult cuMemcpy3DAsync_v2 (const CUDA_MEMCPY3D *c, CUstream s) { TRACED (cuMemcpy3DAsync_v2, do_copy3d (c, s), c, s); }
CUresult cuMemcpyPeer (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { TRACED (cuMemcpyPeer, do_copy (PTOP, d, s, n, NULL), d, dc, s, sc, n); }
CUresult cuMemcpyPeerAsync (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { TRACED (cuMemcpyPeerAsync, do_copy (PTOP, d, s, n, st), d, dc, s, sc, n, st); }

CUresult
cuStreamCreate (CUstream *s, unsigned int flags)
{
  (void) flags;
  *s = calloc (1, sizeof **s);
  if (!*s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  (*s)->clock = CLOCK_BASE;
  (*s)->id = __atomic_fetch_add (&next_stream_id, 1, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2 (CUstream s) { free (s); return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing (CUstream s, CUstreamCaptureStatus *st) { (void) s; *st = CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }

/* Syncs and stream waits do nothing (the stub's GPU is done at once). */
static CUresult nothing (void) { return CUDA_SUCCESS; }

CUresult cuCtxSynchronize (void) { TRACED0 (cuCtxSynchronize, nothing ()); }
#if CUDA_VERSION >= 13000
CUresult cuCtxSynchronize_v2 (CUcontext ctx) { TRACED (cuCtxSynchronize_v2, nothing (), ctx); }
#endif
CUresult cuStreamSynchronize (CUstream s) { TRACED (cuStreamSynchronize, nothing (), s); }
CUresult cuStreamWaitEvent (CUstream s, CUevent e, unsigned int f) { TRACED (cuStreamWaitEvent, nothing (), s, e, f); }
CUresult cuEventSynchronize (CUevent e) { TRACED (cuEventSynchronize, nothing (), e); }

CUresult
cuEventCreate (CUevent *e, unsigned int flags)
{
  (void) flags;
  if (!cur_ctx)
    return CUDA_ERROR_INVALID_CONTEXT;
  *e = calloc (1, sizeof **e);
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuEventDestroy_v2 (CUevent e) { free (e); return CUDA_SUCCESS; }

static CUresult
impl_event_record (CUevent e, CUstream s)
{
  pthread_mutex_lock (&lock);
  e->time = S (s)->clock;
  e->recorded = 1;
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord (CUevent e, CUstream s) { TRACED (cuEventRecord, impl_event_record (e, s), e, s); }
CUresult cuEventQuery (CUevent e) { (void) e; return CUDA_SUCCESS; }

CUresult
cuEventElapsedTime (float *ms, CUevent a, CUevent b)
{
  if (!a->recorded || !b->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = (float) ((double) (b->time - a->time) / 1e6);
  return CUDA_SUCCESS;
}

/* Per-thread default stream variants (what -default-stream per-thread code
 * and cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 * reach). The stub keeps one clock for the NULL, legacy and per-thread
 * streams, so they only need the base call's work. */
__typeof__ (cuLaunchKernel) cuLaunchKernel_ptsz;
__typeof__ (cuLaunchKernelEx) cuLaunchKernelEx_ptsz;
__typeof__ (cuLaunchCooperativeKernel) cuLaunchCooperativeKernel_ptsz;
__typeof__ (cuMemcpyHtoDAsync_v2) cuMemcpyHtoDAsync_v2_ptsz;
__typeof__ (cuMemcpyDtoH_v2) cuMemcpyDtoH_v2_ptds;
__typeof__ (cuMemcpy2D_v2) cuMemcpy2D_v2_ptds;
__typeof__ (cuMemcpyPeerAsync) cuMemcpyPeerAsync_ptsz;
__typeof__ (cuMemsetD32Async) cuMemsetD32Async_ptsz;
__typeof__ (cuStreamSynchronize) cuStreamSynchronize_ptsz;
__typeof__ (cuEventRecord) cuEventRecord_ptsz;
__typeof__ (cuStreamWaitEvent) cuStreamWaitEvent_ptsz;

CUresult
cuLaunchKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                     CUstream s, void **params, void **extra)
{
  TRACED (cuLaunchKernel_ptsz, impl_launch (f, gx, gy, gz, bx, by, bz, shmem, s, params),
          f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

CUresult cuLaunchKernelEx_ptsz (const CUlaunchConfig *c, CUfunction f, void **p, void **e) { TRACED (cuLaunchKernelEx_ptsz, impl_launch_ex (c, f, p), c, f, p, e); }

CUresult
cuLaunchCooperativeKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                CUstream s, void **params)
{
  TRACED (cuLaunchCooperativeKernel_ptsz, impl_launch (f, gx, gy, gz, bx, by, bz, shmem, s, params),
          f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz (CUdeviceptr d, const void *s, size_t n, CUstream st) { TRACED (cuMemcpyHtoDAsync_v2_ptsz, do_copy (HTOD, d, (uintptr_t) s, n, st), d, s, n, st); }
CUresult cuMemcpyDtoH_v2_ptds (void *d, CUdeviceptr s, size_t n) { TRACED (cuMemcpyDtoH_v2_ptds, do_copy (DTOH, (uintptr_t) d, s, n, NULL), d, s, n); }
CUresult cuMemcpy2D_v2_ptds (const CUDA_MEMCPY2D *c) { TRACED (cuMemcpy2D_v2_ptds, do_copy2d (c, NULL), c); }
CUresult cuMemcpyPeerAsync_ptsz (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { TRACED (cuMemcpyPeerAsync_ptsz, do_copy (PTOP, d, s, n, st), d, dc, s, sc, n, st); }
CUresult cuMemsetD32Async_ptsz (CUdeviceptr d, unsigned int v, size_t n, CUstream s) { TRACED (cuMemsetD32Async_ptsz, do_memset (d, v, 4 * (uint64_t) n, s), d, v, n, s); }
CUresult cuStreamSynchronize_ptsz (CUstream s) { TRACED (cuStreamSynchronize_ptsz, nothing (), s); }
CUresult cuEventRecord_ptsz (CUevent e, CUstream s) { TRACED (cuEventRecord_ptsz, impl_event_record (e, s), e, s); }
CUresult cuStreamWaitEvent_ptsz (CUstream s, CUevent e, unsigned int f) { TRACED (cuStreamWaitEvent_ptsz, nothing (), s, e, f); }

/* ---- CUDA arrays and the copies that name them ----
 * An array keeps its descriptor (cuArray3DGetDescriptor_v2 answers it: the
 * shim sizes cuMemcpy3DBatchAsync's array operands with it). Array copies
 * take 1 ns a byte like the others; their records have the array kinds. */
struct CUarray_st { CUDA_ARRAY3D_DESCRIPTOR d; };

CUresult
cuArrayCreate_v2 (CUarray *a, const CUDA_ARRAY_DESCRIPTOR *d)
{
  NEED_INIT ();
  if (!a || !d)
    return CUDA_ERROR_INVALID_VALUE;
  *a = calloc (1, sizeof **a);
  if (!*a)
    return CUDA_ERROR_OUT_OF_MEMORY;
  (*a)->d.Width = d->Width;
  (*a)->d.Height = d->Height;
  (*a)->d.Format = d->Format;
  (*a)->d.NumChannels = d->NumChannels;
  return CUDA_SUCCESS;
}

CUresult
cuArray3DGetDescriptor_v2 (CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
  if (!d || !a)
    return CUDA_ERROR_INVALID_VALUE;
  *d = a->d;
  return CUDA_SUCCESS;
}

CUresult cuArrayDestroy (CUarray a) { free (a); return CUDA_SUCCESS; }

#define HTOA CUPTI_ACTIVITY_MEMCPY_KIND_HTOA
#define ATOH CUPTI_ACTIVITY_MEMCPY_KIND_ATOH
#define ATOA CUPTI_ACTIVITY_MEMCPY_KIND_ATOA
#define ATOD CUPTI_ACTIVITY_MEMCPY_KIND_ATOD
#define DTOA CUPTI_ACTIVITY_MEMCPY_KIND_DTOA

__typeof__ (cuMemcpyHtoA_v2) cuMemcpyHtoA_v2_ptds;
__typeof__ (cuMemcpyAtoH_v2) cuMemcpyAtoH_v2_ptds;
__typeof__ (cuMemcpyAtoD_v2) cuMemcpyAtoD_v2_ptds;
__typeof__ (cuMemcpyDtoA_v2) cuMemcpyDtoA_v2_ptds;
__typeof__ (cuMemcpyAtoA_v2) cuMemcpyAtoA_v2_ptds;
__typeof__ (cuMemcpyHtoAAsync_v2) cuMemcpyHtoAAsync_v2_ptsz;
__typeof__ (cuMemcpyAtoHAsync_v2) cuMemcpyAtoHAsync_v2_ptsz;
__typeof__ (cuMemcpy3DPeer) cuMemcpy3DPeer_ptds;
__typeof__ (cuMemcpy3DPeerAsync) cuMemcpy3DPeerAsync_ptsz;

CUresult cuMemcpyHtoA_v2 (CUarray a, size_t o, const void *h, size_t n) { TRACED (cuMemcpyHtoA_v2, do_copy (HTOA, 0, (uintptr_t) h, n, NULL), a, o, h, n); }
CUresult cuMemcpyAtoH_v2 (void *h, CUarray a, size_t o, size_t n) { TRACED (cuMemcpyAtoH_v2, do_copy (ATOH, (uintptr_t) h, 0, n, NULL), h, a, o, n); }
CUresult cuMemcpyAtoD_v2 (CUdeviceptr d, CUarray a, size_t o, size_t n) { TRACED (cuMemcpyAtoD_v2, do_copy (ATOD, d, 0, n, NULL), d, a, o, n); }
CUresult cuMemcpyDtoA_v2 (CUarray a, size_t o, CUdeviceptr d, size_t n) { TRACED (cuMemcpyDtoA_v2, do_copy (DTOA, 0, d, n, NULL), a, o, d, n); }
CUresult cuMemcpyAtoA_v2 (CUarray a, size_t o, CUarray b, size_t p, size_t n) { TRACED (cuMemcpyAtoA_v2, do_copy (ATOA, 0, 0, n, NULL), a, o, b, p, n); }
CUresult cuMemcpyHtoAAsync_v2 (CUarray a, size_t o, const void *h, size_t n, CUstream s) { TRACED (cuMemcpyHtoAAsync_v2, do_copy (HTOA, 0, (uintptr_t) h, n, s), a, o, h, n, s); }
CUresult cuMemcpyAtoHAsync_v2 (void *h, CUarray a, size_t o, size_t n, CUstream s) { TRACED (cuMemcpyAtoHAsync_v2, do_copy (ATOH, (uintptr_t) h, 0, n, s), h, a, o, n, s); }
CUresult cuMemcpyHtoA_v2_ptds (CUarray a, size_t o, const void *h, size_t n) { TRACED (cuMemcpyHtoA_v2_ptds, do_copy (HTOA, 0, (uintptr_t) h, n, NULL), a, o, h, n); }
CUresult cuMemcpyAtoH_v2_ptds (void *h, CUarray a, size_t o, size_t n) { TRACED (cuMemcpyAtoH_v2_ptds, do_copy (ATOH, (uintptr_t) h, 0, n, NULL), h, a, o, n); }
CUresult cuMemcpyAtoD_v2_ptds (CUdeviceptr d, CUarray a, size_t o, size_t n) { TRACED (cuMemcpyAtoD_v2_ptds, do_copy (ATOD, d, 0, n, NULL), d, a, o, n); }
CUresult cuMemcpyDtoA_v2_ptds (CUarray a, size_t o, CUdeviceptr d, size_t n) { TRACED (cuMemcpyDtoA_v2_ptds, do_copy (DTOA, 0, d, n, NULL), a, o, d, n); }
CUresult cuMemcpyAtoA_v2_ptds (CUarray a, size_t o, CUarray b, size_t p, size_t n) { TRACED (cuMemcpyAtoA_v2_ptds, do_copy (ATOA, 0, 0, n, NULL), a, o, b, p, n); }
CUresult cuMemcpyHtoAAsync_v2_ptsz (CUarray a, size_t o, const void *h, size_t n, CUstream s) { TRACED (cuMemcpyHtoAAsync_v2_ptsz, do_copy (HTOA, 0, (uintptr_t) h, n, s), a, o, h, n, s); }
CUresult cuMemcpyAtoHAsync_v2_ptsz (void *h, CUarray a, size_t o, size_t n, CUstream s) { TRACED (cuMemcpyAtoHAsync_v2_ptsz, do_copy (ATOH, (uintptr_t) h, 0, n, s), h, a, o, n, s); }

/* 3D peer copies: peer-to-peer when the contexts differ and neither side
 * is host memory, else as cuMemcpy3D. */
static CUresult
do_copy3d_peer (const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
  if (!c)
    return CUDA_ERROR_INVALID_VALUE;
  int p2p = c->srcContext && c->dstContext && c->srcContext != c->dstContext
            && c->srcMemoryType != CU_MEMORYTYPE_HOST && c->dstMemoryType != CU_MEMORYTYPE_HOST;
  return do_copy (p2p ? PTOP : desc_kind (c->dstMemoryType, c->srcMemoryType), c->dstDevice,
                  c->srcDevice, (uint64_t) c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1), s);
}

CUresult cuMemcpy3DPeer (const CUDA_MEMCPY3D_PEER *c) { TRACED (cuMemcpy3DPeer, do_copy3d_peer (c, NULL), c); }
CUresult cuMemcpy3DPeerAsync (const CUDA_MEMCPY3D_PEER *c, CUstream s) { TRACED (cuMemcpy3DPeerAsync, do_copy3d_peer (c, s), c, s); }
CUresult cuMemcpy3DPeer_ptds (const CUDA_MEMCPY3D_PEER *c) { TRACED (cuMemcpy3DPeer_ptds, do_copy3d_peer (c, NULL), c); }
CUresult cuMemcpy3DPeerAsync_ptsz (const CUDA_MEMCPY3D_PEER *c, CUstream s) { TRACED (cuMemcpy3DPeerAsync_ptsz, do_copy3d_peer (c, s), c, s); }

/* Batches: the copies run back to back on the stream, 1 ns a byte each.
 * Their memcpy records carry the call's correlation id: one per copy
 * (copyCount 1), or as STUB_CUPTI_BATCH says: "merged", one record for the
 * whole batch (copyCount = the count, the bytes and time of all); "pairs",
 * one record per two consecutive copies (the last may be alone) that also
 * takes 1000 ns more than its bytes (so that the times are not in
 * proportion to the bytes); "first", only the first copy's record (the
 * others are lost). */
static CUresult
do_batch (size_t n, const uint64_t *bytes, const uintptr_t *dst, const uintptr_t *src, CUstream s)
{
  NEED_INIT ();
  if (n == 0 || s == NULL || s == CU_STREAM_LEGACY)
    return CUDA_ERROR_INVALID_VALUE;                /* not the legacy NULL stream */
  const char *how = getenv ("STUB_CUPTI_BATCH");
  int merged = how && strcmp (how, "merged") == 0, first = how && strcmp (how, "first") == 0;
  int pairs = how && strcmp (how, "pairs") == 0;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += bytes[i];
  uint64_t t = advance (s, total + (pairs ? 1000 * ((n + 1) / 2) : 0));
  if (pairs) {
    for (size_t i = 0; i < n; i += 2) {
      uint64_t b = bytes[i] + (i + 1 < n ? bytes[i + 1] : 0);
      rec_copy_n (copy_kind (dst[i], src[i]), dst[i], src[i], b, s, t, b + 1000, i + 1 < n ? 2 : 1);
      t += b + 1000;
    }
    return CUDA_SUCCESS;
  }
  if (merged) {
    rec_copy_n (copy_kind (dst[0], src[0]), dst[0], src[0], total, s, t, total, n);
    return CUDA_SUCCESS;
  }
  for (size_t i = 0; i < n && (!first || i == 0); i++) {
    rec_copy (copy_kind (dst[i], src[i]), dst[i], src[i], bytes[i], s, t);
    t += bytes[i];
  }
  return CUDA_SUCCESS;
}

static CUresult
do_batch_flat (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t n, CUstream s)
{
  if (!dsts || !srcs || !sizes || n > 64)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t b[64];
  uintptr_t d[64], r[64];
  for (size_t i = 0; i < n; i++)
    b[i] = sizes[i], d[i] = dsts[i], r[i] = srcs[i];
  return do_batch (n, b, d, r, s);
}

/* Bytes per element of a stub array: its format's size times its channels. */
static uint64_t
elem_bytes (CUarray a)
{
  uint64_t f = a->d.Format == CU_AD_FORMAT_FLOAT || a->d.Format == CU_AD_FORMAT_UNSIGNED_INT32 ? 4
             : a->d.Format == CU_AD_FORMAT_UNSIGNED_INT16 || a->d.Format == CU_AD_FORMAT_HALF ? 2 : 1;
  return f * (a->d.NumChannels ? a->d.NumChannels : 1);
}

static CUresult
do_batch3d (size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, CUstream s)
{
  if (!ops || n > 64)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t b[64];
  uintptr_t d[64], r[64];
  for (size_t i = 0; i < n; i++) {
    const CUDA_MEMCPY3D_BATCH_OP *o = &ops[i];
    int sa = o->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY, da = o->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
    uint64_t esz = sa ? elem_bytes (o->src.op.array.array) : da ? elem_bytes (o->dst.op.array.array) : 1;
    b[i] = esz * o->extent.width * o->extent.height * o->extent.depth;
    d[i] = da ? 0 : o->dst.op.ptr.ptr;
    r[i] = sa ? 0 : o->src.op.ptr.ptr;
  }
  return do_batch (n, b, d, r, s);
}

__typeof__ (cuMemcpyBatchAsync_v2) cuMemcpyBatchAsync_v2_ptsz;
__typeof__ (cuMemcpy3DBatchAsync_v2) cuMemcpy3DBatchAsync_v2_ptsz;
typedef CUresult BatchV1Fn (CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                            size_t *, size_t, size_t *, CUstream);
typedef CUresult Batch3DV1Fn (size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
BatchV1Fn cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz;
Batch3DV1Fn cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_ptsz;

CUresult
cuMemcpyBatchAsync (CUdeviceptr *d, CUdeviceptr *r, size_t *z, size_t n, CUmemcpyAttributes *at,
                    size_t *ai, size_t na, size_t *fail, CUstream s)
{
  TRACED (cuMemcpyBatchAsync, do_batch_flat (d, r, z, n, s), d, r, z, n, at, ai, na, fail, s);
}

CUresult
cuMemcpyBatchAsync_ptsz (CUdeviceptr *d, CUdeviceptr *r, size_t *z, size_t n, CUmemcpyAttributes *at,
                         size_t *ai, size_t na, size_t *fail, CUstream s)
{
  TRACED (cuMemcpyBatchAsync_ptsz, do_batch_flat (d, r, z, n, s ? s : CU_STREAM_PER_THREAD), d, r, z,
          n, at, ai, na, fail, s);
}

CUresult
cuMemcpyBatchAsync_v2 (CUdeviceptr *d, CUdeviceptr *r, size_t *z, size_t n, CUmemcpyAttributes *at,
                       size_t *ai, size_t na, CUstream s)
{
  TRACED (cuMemcpyBatchAsync_v2, do_batch_flat (d, r, z, n, s), d, r, z, n, at, ai, na, s);
}

CUresult
cuMemcpyBatchAsync_v2_ptsz (CUdeviceptr *d, CUdeviceptr *r, size_t *z, size_t n,
                            CUmemcpyAttributes *at, size_t *ai, size_t na, CUstream s)
{
  TRACED (cuMemcpyBatchAsync_v2_ptsz, do_batch_flat (d, r, z, n, s ? s : CU_STREAM_PER_THREAD), d, r,
          z, n, at, ai, na, s);
}

CUresult
cuMemcpy3DBatchAsync (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long f,
                      CUstream s)
{
  TRACED (cuMemcpy3DBatchAsync, do_batch3d (n, ops, s), n, ops, fail, f, s);
}

CUresult
cuMemcpy3DBatchAsync_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, unsigned long long f,
                           CUstream s)
{
  TRACED (cuMemcpy3DBatchAsync_ptsz, do_batch3d (n, ops, s ? s : CU_STREAM_PER_THREAD), n, ops, fail,
          f, s);
}

CUresult
cuMemcpy3DBatchAsync_v2 (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long f, CUstream s)
{
  TRACED (cuMemcpy3DBatchAsync_v2, do_batch3d (n, ops, s), n, ops, f, s);
}

CUresult
cuMemcpy3DBatchAsync_v2_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long f, CUstream s)
{
  TRACED (cuMemcpy3DBatchAsync_v2_ptsz, do_batch3d (n, ops, s ? s : CU_STREAM_PER_THREAD), n, ops, f, s);
}

/* Virtual memory management: reserve, create, map. */
CUresult
cuMemAddressReserve (CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr, unsigned long long f)
{
  (void) align; (void) addr; (void) f;
  *p = bump (n);
  return CUDA_SUCCESS;
}

CUresult cuMemAddressFree (CUdeviceptr p, size_t n) { (void) p; (void) n; return CUDA_SUCCESS; }

CUresult
cuMemCreate (CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *prop,
             unsigned long long f)
{
  (void) prop; (void) f;
  *h = (CUmemGenericAllocationHandle) n;
  return CUDA_SUCCESS;
}

CUresult cuMemRelease (CUmemGenericAllocationHandle h) { (void) h; return CUDA_SUCCESS; }

/* Mapping is traced (the shim records it) but makes no memory record. */
CUresult
cuMemMap (CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long f)
{
  TRACED (cuMemMap, nothing (), p, n, off, h, f);
}

CUresult cuMemUnmap (CUdeviceptr p, size_t n) { TRACED (cuMemUnmap, nothing (), p, n); }

/* Graphs: kernel and empty nodes, in creation order. A kernel node keeps a
 * copy of its parameter values (laid out by the function's StubFunc), as the
 * real driver does; an exec keeps the kernel times of the graph as it was
 * when instantiated. Dependencies are accepted and ignored. */
#define STUB_GRAPH_MAX 16
struct CUgraphNode_st {
  CUgraphNodeType type;
  CUDA_KERNEL_NODE_PARAMS kp;
  unsigned char args[4][32];
  void *argp[4];
};
struct CUgraph_st { size_t n; struct CUgraphNode_st *nodes[STUB_GRAPH_MAX]; };
struct CUgraphExec_st {
  size_t n;
  uint64_t ns[STUB_GRAPH_MAX];
  CUDA_KERNEL_NODE_PARAMS kp[STUB_GRAPH_MAX];      /* for the kernel records: name, dims */
  uint64_t node_id[STUB_GRAPH_MAX];                /* the node's pointer (cuptiGetGraphNodeId) */
};

CUresult
cuGraphCreate (CUgraph *g, unsigned int flags)
{
  (void) flags;
  NEED_INIT ();
  *g = calloc (1, sizeof **g);
  return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult
cuGraphDestroy (CUgraph g)
{
  if (!g)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < g->n; i++)
    free (g->nodes[i]);
  free (g);
  return CUDA_SUCCESS;
}

static CUresult
graph_add (CUgraphNode *ph, CUgraph g, struct CUgraphNode_st *nd)
{
  if (!ph || !g || g->n == STUB_GRAPH_MAX) {
    free (nd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  g->nodes[g->n++] = nd;
  *ph = nd;
  return CUDA_SUCCESS;
}

CUresult
cuGraphAddEmptyNode (CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps)
{
  (void) deps; (void) ndeps;
  struct CUgraphNode_st *nd = calloc (1, sizeof *nd);
  if (!nd)
    return CUDA_ERROR_OUT_OF_MEMORY;
  nd->type = CU_GRAPH_NODE_TYPE_EMPTY;
  return graph_add (ph, g, nd);
}

CUresult
cuGraphAddKernelNode_v2 (CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                         const CUDA_KERNEL_NODE_PARAMS *p)
{
  (void) deps; (void) ndeps;
  if (!p || !p->func || !p->kernelParams)     /* the stub takes kernelParams only */
    return CUDA_ERROR_INVALID_VALUE;
  StubFunc *sf = (StubFunc *) p->func;
  struct CUgraphNode_st *nd = calloc (1, sizeof *nd);
  if (!nd)
    return CUDA_ERROR_OUT_OF_MEMORY;
  nd->type = CU_GRAPH_NODE_TYPE_KERNEL;
  nd->kp = *p;
  for (int i = 0; i < sf->n; i++) {
    memcpy (nd->args[i], p->kernelParams[i], sf->size[i]);
    nd->argp[i] = nd->args[i];
  }
  nd->kp.kernelParams = nd->argp;
  nd->kp.extra = NULL;
  return graph_add (ph, g, nd);
}

CUresult
cuGraphGetNodes (CUgraph g, CUgraphNode *nodes, size_t *num)
{
  if (!g || !num)
    return CUDA_ERROR_INVALID_VALUE;
  if (!nodes) {
    *num = g->n;
    return CUDA_SUCCESS;
  }
  size_t k = 0;
  for (; k < *num && k < g->n; k++)
    nodes[k] = g->nodes[k];
  for (size_t i = k; i < *num; i++)
    nodes[i] = NULL;
  *num = k;
  return CUDA_SUCCESS;
}

CUresult
cuGraphNodeGetType (CUgraphNode nd, CUgraphNodeType *type)
{
  if (!nd || !type)
    return CUDA_ERROR_INVALID_VALUE;
  *type = nd->type;
  return CUDA_SUCCESS;
}

CUresult
cuGraphKernelNodeGetParams_v2 (CUgraphNode nd, CUDA_KERNEL_NODE_PARAMS *p)
{
  if (!nd || !p || nd->type != CU_GRAPH_NODE_TYPE_KERNEL)
    return CUDA_ERROR_INVALID_VALUE;
  *p = nd->kp;
  return CUDA_SUCCESS;
}

static CUresult
instantiate (CUgraphExec *exec, CUgraph g)
{
  if (!exec || !g)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphExec_st *e = calloc (1, sizeof *e);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_KERNEL)
    {
      e->kp[e->n] = g->nodes[i]->kp;
      e->node_id[e->n] = (uint64_t) (uintptr_t) g->nodes[i];
      e->ns[e->n++] = 1000ull * g->nodes[i]->kp.gridDimX;
    }
  *exec = e;
  return CUDA_SUCCESS;
}

/* The four ways in: the legacy (v1, v2) five-argument calls, the flags and
 * the params calls (and its per-thread variant). */
CUresult cuGraphInstantiate (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
CUresult cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
__typeof__ (cuGraphInstantiateWithParams) cuGraphInstantiateWithParams_ptsz;
__typeof__ (cuGraphLaunch) cuGraphLaunch_ptsz;

static CUresult
instantiate_log (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
  if (err)
    *err = NULL;
  if (log && n)
    log[0] = 0;
  return instantiate (exec, g);
}

CUresult
cuGraphInstantiate (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
  TRACED (cuGraphInstantiate, instantiate_log (exec, g, err, log, n), exec, g, err, log, n);
}

CUresult
cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
  TRACED (cuGraphInstantiate_v2, instantiate_log (exec, g, err, log, n), exec, g, err, log, n);
}

CUresult
cuGraphInstantiateWithFlags (CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
  TRACED (cuGraphInstantiateWithFlags, instantiate (exec, g), exec, g, flags);
}

static CUresult
instantiate_params (CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = instantiate (exec, g);
  p->hErrNode_out = NULL;
  p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}

CUresult
cuGraphInstantiateWithParams (CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  TRACED (cuGraphInstantiateWithParams, instantiate_params (exec, g, p), exec, g, p);
}

CUresult
cuGraphInstantiateWithParams_ptsz (CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  TRACED (cuGraphInstantiateWithParams_ptsz, instantiate_params (exec, g, p), exec, g, p);
}

/* One kernel record per kernel node, each with the launch's correlation
 * id and its node's id; the nodes run back to back on the stream in node
 * order, but their records come last node first (the nodes are
 * independent, and CUPTI's order need not be the graph's: the tool must
 * match records to nodes by graphNodeId). */
static CUresult
graph_launch (CUgraphExec e, CUstream s)
{
  NEED_INIT ();
  if (!e)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t ns = 0;
  for (size_t i = 0; i < e->n; i++)
    ns += e->ns[i];
  uint64_t end = advance (s, ns) + ns;
  for (size_t i = e->n; i-- > 0;) {
    const CUDA_KERNEL_NODE_PARAMS *kp = &e->kp[i];
    rec_kernel ((StubFunc *) kp->func, s, end - e->ns[i], end, kp->gridDimX, kp->gridDimY,
                kp->gridDimZ, kp->blockDimX, kp->blockDimY, kp->blockDimZ, kp->sharedMemBytes,
                e->node_id[i]);
    end -= e->ns[i];
  }
  return CUDA_SUCCESS;
}

static CUresult
exec_destroy (CUgraphExec e)
{
  free (e);
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch (CUgraphExec e, CUstream s) { TRACED (cuGraphLaunch, graph_launch (e, s), e, s); }
CUresult cuGraphLaunch_ptsz (CUgraphExec e, CUstream s) { TRACED (cuGraphLaunch_ptsz, graph_launch (e, s), e, s); }
CUresult cuGraphExecDestroy (CUgraphExec e) { TRACED (cuGraphExecDestroy, exec_destroy (e), e); }

/* The static CUDA runtime's way in: every entry point by name. */
static const struct { const char *name; void *fn; } procs[] = {
#define P(n, f) { n, (void *) f },
  P ("cuInit", cuInit) P ("cuDriverGetVersion", cuDriverGetVersion)
  P ("cuDeviceGetCount", cuDeviceGetCount) P ("cuDeviceGet", cuDeviceGet)
  P ("cuDeviceGetName", cuDeviceGetName) P ("cuDeviceTotalMem", cuDeviceTotalMem_v2)
  P ("cuDeviceGetAttribute", cuDeviceGetAttribute)
  P ("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain)
  P ("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2)
  P ("cuCtxSetCurrent", cuCtxSetCurrent) P ("cuCtxGetCurrent", cuCtxGetCurrent)
  P ("cuCtxSynchronize", cuCtxSynchronize) P ("cuModuleLoadData", cuModuleLoadData)
  P ("cuModuleGetFunction", cuModuleGetFunction) P ("cuFuncGetName", cuFuncGetName)
  P ("cuFuncGetParamInfo", cuFuncGetParamInfo) P ("cuFuncGetAttribute", cuFuncGetAttribute)
  P ("cuMemAlloc", cuMemAlloc_v2)
  P ("cuMemFree", cuMemFree_v2) P ("cuMemAllocAsync", cuMemAllocAsync)
  P ("cuMemFreeAsync", cuMemFreeAsync) P ("cuMemAllocManaged", cuMemAllocManaged)
  P ("cuMemHostAlloc", cuMemHostAlloc) P ("cuMemFreeHost", cuMemFreeHost)
  P ("cuMemAllocHost", cuMemAllocHost_v2) P ("cuMemsetD8Async", cuMemsetD8Async)
  P ("cuMemcpyHtoD", cuMemcpyHtoD_v2) P ("cuMemcpyDtoH", cuMemcpyDtoH_v2)
  P ("cuMemcpyDtoD", cuMemcpyDtoD_v2) P ("cuMemcpy", cuMemcpy)
  P ("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2) P ("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2)
  P ("cuMemcpyAsync", cuMemcpyAsync) P ("cuMemsetD8", cuMemsetD8_v2)
  P ("cuMemsetD32Async", cuMemsetD32Async) P ("cuMemPrefetchAsync", cuMemPrefetchAsync_v2)
  P ("cuMemAdvise", cuMemAdvise_v2)
  P ("cuLaunchKernel", cuLaunchKernel) P ("cuStreamCreate", cuStreamCreate)
  P ("cuStreamDestroy", cuStreamDestroy_v2) P ("cuStreamSynchronize", cuStreamSynchronize)
  P ("cuStreamIsCapturing", cuStreamIsCapturing) P ("cuStreamWaitEvent", cuStreamWaitEvent)
  P ("cuEventCreate", cuEventCreate) P ("cuEventDestroy", cuEventDestroy_v2)
  P ("cuEventRecord", cuEventRecord) P ("cuEventQuery", cuEventQuery)
  P ("cuEventSynchronize", cuEventSynchronize) P ("cuEventElapsedTime", cuEventElapsedTime)
  P ("cuMemAddressReserve", cuMemAddressReserve) P ("cuMemAddressFree", cuMemAddressFree)
  P ("cuMemCreate", cuMemCreate) P ("cuMemRelease", cuMemRelease)
  P ("cuMemMap", cuMemMap) P ("cuMemUnmap", cuMemUnmap)
  P ("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel) P ("cuLaunchKernelEx", cuLaunchKernelEx)
  P ("cuMemcpy2D", cuMemcpy2D_v2) P ("cuMemcpy2DUnaligned", cuMemcpy2DUnaligned_v2)
  P ("cuMemcpy2DAsync", cuMemcpy2DAsync_v2) P ("cuMemcpy3D", cuMemcpy3D_v2)
  P ("cuMemcpy3DAsync", cuMemcpy3DAsync_v2) P ("cuMemcpyPeer", cuMemcpyPeer)
  P ("cuMemcpyPeerAsync", cuMemcpyPeerAsync)
  P ("cuGraphCreate", cuGraphCreate) P ("cuGraphDestroy", cuGraphDestroy)
  P ("cuGraphAddEmptyNode", cuGraphAddEmptyNode) P ("cuGraphAddKernelNode", cuGraphAddKernelNode_v2)
  P ("cuGraphGetNodes", cuGraphGetNodes) P ("cuGraphNodeGetType", cuGraphNodeGetType)
  P ("cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams_v2)
  P ("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags)
  P ("cuGraphInstantiateWithParams", cuGraphInstantiateWithParams)
  P ("cuGraphLaunch", cuGraphLaunch) P ("cuGraphExecDestroy", cuGraphExecDestroy)
  P ("cuArrayCreate", cuArrayCreate_v2) P ("cuArray3DGetDescriptor", cuArray3DGetDescriptor_v2)
  P ("cuArrayDestroy", cuArrayDestroy)
  P ("cuMemcpyHtoA", cuMemcpyHtoA_v2) P ("cuMemcpyAtoH", cuMemcpyAtoH_v2)
  P ("cuMemcpyAtoD", cuMemcpyAtoD_v2) P ("cuMemcpyDtoA", cuMemcpyDtoA_v2)
  P ("cuMemcpyAtoA", cuMemcpyAtoA_v2) P ("cuMemcpyHtoAAsync", cuMemcpyHtoAAsync_v2)
  P ("cuMemcpyAtoHAsync", cuMemcpyAtoHAsync_v2)
  P ("cuMemcpy3DPeer", cuMemcpy3DPeer) P ("cuMemcpy3DPeerAsync", cuMemcpy3DPeerAsync)
#undef P
};

/* What CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM answers instead. */
static const struct { const char *name; void *fn; } ptds_procs[] = {
#define P(n, f) { n, (void *) f },
  P ("cuLaunchKernel", cuLaunchKernel_ptsz) P ("cuLaunchKernelEx", cuLaunchKernelEx_ptsz)
  P ("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel_ptsz)
  P ("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2_ptsz) P ("cuMemcpyDtoH", cuMemcpyDtoH_v2_ptds)
  P ("cuMemcpy2D", cuMemcpy2D_v2_ptds) P ("cuMemcpyPeerAsync", cuMemcpyPeerAsync_ptsz)
  P ("cuMemsetD32Async", cuMemsetD32Async_ptsz) P ("cuStreamSynchronize", cuStreamSynchronize_ptsz)
  P ("cuEventRecord", cuEventRecord_ptsz) P ("cuStreamWaitEvent", cuStreamWaitEvent_ptsz)
  P ("cuGraphLaunch", cuGraphLaunch_ptsz)
  P ("cuGraphInstantiateWithParams", cuGraphInstantiateWithParams_ptsz)
  P ("cuMemcpyHtoA", cuMemcpyHtoA_v2_ptds) P ("cuMemcpyAtoH", cuMemcpyAtoH_v2_ptds)
  P ("cuMemcpyAtoD", cuMemcpyAtoD_v2_ptds) P ("cuMemcpyDtoA", cuMemcpyDtoA_v2_ptds)
  P ("cuMemcpyAtoA", cuMemcpyAtoA_v2_ptds) P ("cuMemcpyHtoAAsync", cuMemcpyHtoAAsync_v2_ptsz)
  P ("cuMemcpyAtoHAsync", cuMemcpyAtoHAsync_v2_ptsz)
  P ("cuMemcpy3DPeer", cuMemcpy3DPeer_ptds) P ("cuMemcpy3DPeerAsync", cuMemcpy3DPeerAsync_ptsz)
#undef P
};

CUresult
cuGetProcAddress_v2 (const char *symbol, void **pfn, int ver, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
  /* "cuGraphInstantiate" names a different function by the version asked
   * for, as in the real driver: WithFlags from 12.0, the five-argument _v2
   * from 11.0, the original before. */
  if (strcmp (symbol, "cuGraphInstantiate") == 0) {
    *pfn = ver >= 12000 ? (void *) cuGraphInstantiateWithFlags
         : ver >= 11000 ? (void *) cuGraphInstantiate_v2 : (void *) cuGraphInstantiate;
    if (status)
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
#if CUDA_VERSION >= 13000
  /* cuCtxSynchronize takes the context from 13.0: what cudart 13 calls. */
  if (strcmp (symbol, "cuCtxSynchronize") == 0 && ver >= 13000) {
    *pfn = (void *) cuCtxSynchronize_v2;
    if (status)
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
#endif
  /* The batch calls by version, as the driver answers: the 12.8 ones
   * (with failIdx) before 13.0, the _v2 from 13.0; _ptsz when asked. */
  int pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  void *batch = strcmp (symbol, "cuMemcpyBatchAsync") == 0
    ? (ver >= 13000 ? (pt ? (void *) cuMemcpyBatchAsync_v2_ptsz : (void *) cuMemcpyBatchAsync_v2)
       : ver >= 12080 ? (pt ? (void *) cuMemcpyBatchAsync_ptsz : (void *) cuMemcpyBatchAsync) : NULL)
    : strcmp (symbol, "cuMemcpy3DBatchAsync") == 0
    ? (ver >= 13000 ? (pt ? (void *) cuMemcpy3DBatchAsync_v2_ptsz : (void *) cuMemcpy3DBatchAsync_v2)
       : ver >= 12080 ? (pt ? (void *) cuMemcpy3DBatchAsync_ptsz : (void *) cuMemcpy3DBatchAsync) : NULL)
    : NULL;
  if (batch) {
    *pfn = batch;
    if (status)
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    for (size_t i = 0; i < sizeof ptds_procs / sizeof ptds_procs[0]; i++)
      if (strcmp (ptds_procs[i].name, symbol) == 0) {
        *pfn = ptds_procs[i].fn;
        if (status)
          *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
      }
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
    if (strcmp (procs[i].name, symbol) == 0 || strcmp (symbol, "cuGetProcAddress") == 0) {
      *pfn = strcmp (symbol, "cuGetProcAddress") == 0 ? (void *) cuGetProcAddress_v2 : procs[i].fn;
      if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = NULL;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
