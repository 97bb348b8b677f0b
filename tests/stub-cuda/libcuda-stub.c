/* libcuda-stub.c — a test-only stand-in for the CUDA driver (libcuda.so.1),
 * for running the capture shim where there is no GPU.
 *
 * It implements the subset the capture tests call, with deterministic fake
 * GPU times: every stream has a clock; a kernel advances it by 1000 ns per
 * block in x, a copy by 1 ns per byte, a memset by 1 ns per 2 bytes; an
 * event takes its stream's clock when recorded; a graph launch advances it
 * by the sum of its kernel nodes' times (as they were at instantiation). Device pointers come from a
 * bump allocator (they are never dereferenced); host and managed memory are
 * real malloc'd memory. Built with -Bsymbolic, like the real driver, so its
 * own references (cuGetProcAddress answers) are never interposed. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#undef cuMemPrefetchAsync
#undef cuGraphInstantiate

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUdeviceptr next_dev = 0x100000000000ull;
static int inited;

struct CUstream_st { uint64_t clock; };
struct CUevent_st { uint64_t time; int recorded; };
struct CUctx_st { int dummy; };
struct CUmod_st { int dummy; };

static struct CUstream_st legacy;
static struct CUctx_st the_ctx;
static __thread CUcontext cur_ctx;

typedef struct { const char *name; int n; size_t off[4], size[4]; } StubFunc;
static StubFunc funcs[] = {
  { "axpy", 4, { 0, 8, 16, 24 }, { 4, 8, 8, 4 } },          /* (float a, float *x, float *y, int n) */
  { "pairk", 2, { 0, 24 }, { 24, 8 } },                     /* (struct {float *p; int k; float *q;}, long n) */
  { "noargs", 0, { 0 }, { 0 } },
};

static struct CUstream_st *
S (CUstream s)
{
  return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ? &legacy : s;
}

static void
advance (CUstream s, uint64_t ns)
{
  pthread_mutex_lock (&lock);
  S (s)->clock += ns;
  pthread_mutex_unlock (&lock);
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

#define NEED_INIT() do { if (!inited) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

CUresult cuInit (unsigned int flags) { (void) flags; inited = 1; return CUDA_SUCCESS; }
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
CUresult cuCtxSynchronize (void) { return CUDA_SUCCESS; }
#if CUDA_VERSION >= 13000
CUresult cuCtxSynchronize_v2 (CUcontext ctx) { (void) ctx; return CUDA_SUCCESS; }
#endif

CUresult cuModuleLoadData (CUmodule *m, const void *img) { (void) img; static struct CUmod_st mod; *m = &mod; return CUDA_SUCCESS; }

CUresult
cuModuleGetFunction (CUfunction *f, CUmodule m, const char *name)
{
  (void) m;
  for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
    if (strcmp (funcs[i].name, name) == 0) {
      *f = (CUfunction) &funcs[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncGetName (const char **name, CUfunction f) { *name = ((StubFunc *) f)->name; return CUDA_SUCCESS; }

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

CUresult cuMemAlloc_v2 (CUdeviceptr *p, size_t n) { NEED_INIT (); *p = bump (n); return CUDA_SUCCESS; }
CUresult cuMemFree_v2 (CUdeviceptr p) { (void) p; return CUDA_SUCCESS; }
CUresult cuMemAllocAsync (CUdeviceptr *p, size_t n, CUstream s) { (void) s; *p = bump (n); return CUDA_SUCCESS; }
CUresult cuMemFreeAsync (CUdeviceptr p, CUstream s) { (void) p; (void) s; return CUDA_SUCCESS; }

CUresult
cuMemAllocManaged (CUdeviceptr *p, size_t n, unsigned int flags)
{
  (void) flags;
  void *m = calloc (1, n ? n : 1);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr) (uintptr_t) m;
  return CUDA_SUCCESS;
}

CUresult
cuMemHostAlloc (void **p, size_t n, unsigned int flags)
{
  (void) flags;
  *p = calloc (1, n ? n : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemFreeHost (void *p) { free (p); return CUDA_SUCCESS; }

CUresult cuMemcpyHtoD_v2 (CUdeviceptr d, const void *s, size_t n) { (void) d; (void) s; advance (NULL, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH_v2 (void *d, CUdeviceptr s, size_t n) { (void) d; (void) s; advance (NULL, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD_v2 (CUdeviceptr d, CUdeviceptr s, size_t n) { (void) d; (void) s; advance (NULL, n); return CUDA_SUCCESS; }
CUresult cuMemcpy (CUdeviceptr d, CUdeviceptr s, size_t n) { (void) d; (void) s; advance (NULL, n); return CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync_v2 (CUdeviceptr d, const void *s, size_t n, CUstream st) { (void) d; (void) s; advance (st, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync_v2 (void *d, CUdeviceptr s, size_t n, CUstream st) { (void) d; (void) s; advance (st, n); return CUDA_SUCCESS; }
CUresult cuMemcpyAsync (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void) d; (void) s; advance (st, n); return CUDA_SUCCESS; }
CUresult cuMemsetD8_v2 (CUdeviceptr d, unsigned char v, size_t n) { (void) d; (void) v; advance (NULL, n / 2); return CUDA_SUCCESS; }
CUresult cuMemsetD32Async (CUdeviceptr d, unsigned int v, size_t n, CUstream s) { (void) d; (void) v; advance (s, 4 * n / 2); return CUDA_SUCCESS; }

CUresult
cuMemPrefetchAsync_v2 (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
  (void) p; (void) loc; (void) flags;
  advance (s, n);
  return CUDA_SUCCESS;
}

CUresult
cuLaunchKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                CUstream s, void **params, void **extra)
{
  (void) f; (void) gy; (void) gz; (void) bx; (void) by; (void) bz; (void) shmem;
  (void) params; (void) extra;
  NEED_INIT ();
  advance (s, 1000ull * gx);
  return CUDA_SUCCESS;
}

CUresult
cuLaunchCooperativeKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                           CUstream s, void **params)
{
  return cuLaunchKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

CUresult
cuLaunchKernelEx (const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
  (void) f; (void) params; (void) extra;
  NEED_INIT ();
  advance (c->hStream, 1000ull * c->gridDimX);
  return CUDA_SUCCESS;
}

/* 2D/3D copies take Width x Height (x Depth) ns; peer copies 1 ns a byte. */
CUresult cuMemcpy2D_v2 (const CUDA_MEMCPY2D *c) { advance (NULL, (uint64_t) c->WidthInBytes * c->Height); return CUDA_SUCCESS; }
CUresult cuMemcpy2DUnaligned_v2 (const CUDA_MEMCPY2D *c) { return cuMemcpy2D_v2 (c); }
CUresult cuMemcpy2DAsync_v2 (const CUDA_MEMCPY2D *c, CUstream s) { advance (s, (uint64_t) c->WidthInBytes * c->Height); return CUDA_SUCCESS; }
CUresult cuMemcpy3D_v2 (const CUDA_MEMCPY3D *c) { advance (NULL, (uint64_t) c->WidthInBytes * c->Height * c->Depth); return CUDA_SUCCESS; }
CUresult cuMemcpy3DAsync_v2 (const CUDA_MEMCPY3D *c, CUstream s) { advance (s, (uint64_t) c->WidthInBytes * c->Height * c->Depth); return CUDA_SUCCESS; }
CUresult cuMemcpyPeer (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) { (void) d; (void) dc; (void) s; (void) sc; advance (NULL, n); return CUDA_SUCCESS; }
CUresult cuMemcpyPeerAsync (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { (void) d; (void) dc; (void) s; (void) sc; advance (st, n); return CUDA_SUCCESS; }

CUresult
cuStreamCreate (CUstream *s, unsigned int flags)
{
  (void) flags;
  *s = calloc (1, sizeof **s);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuStreamDestroy_v2 (CUstream s) { free (s); return CUDA_SUCCESS; }
CUresult cuStreamSynchronize (CUstream s) { (void) s; return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing (CUstream s, CUstreamCaptureStatus *st) { (void) s; *st = CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent (CUstream s, CUevent e, unsigned int f) { (void) s; (void) e; (void) f; return CUDA_SUCCESS; }

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

CUresult
cuEventRecord (CUevent e, CUstream s)
{
  pthread_mutex_lock (&lock);
  e->time = S (s)->clock;
  e->recorded = 1;
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

CUresult cuEventQuery (CUevent e) { (void) e; return CUDA_SUCCESS; }
CUresult cuEventSynchronize (CUevent e) { (void) e; return CUDA_SUCCESS; }

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
 * streams, so they only need to forward. */
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
  return cuLaunchKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

CUresult cuLaunchKernelEx_ptsz (const CUlaunchConfig *c, CUfunction f, void **p, void **e) { return cuLaunchKernelEx (c, f, p, e); }

CUresult
cuLaunchCooperativeKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                CUstream s, void **params)
{
  return cuLaunchKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz (CUdeviceptr d, const void *s, size_t n, CUstream st) { return cuMemcpyHtoDAsync_v2 (d, s, n, st); }
CUresult cuMemcpyDtoH_v2_ptds (void *d, CUdeviceptr s, size_t n) { return cuMemcpyDtoH_v2 (d, s, n); }
CUresult cuMemcpy2D_v2_ptds (const CUDA_MEMCPY2D *c) { return cuMemcpy2D_v2 (c); }
CUresult cuMemcpyPeerAsync_ptsz (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { return cuMemcpyPeerAsync (d, dc, s, sc, n, st); }
CUresult cuMemsetD32Async_ptsz (CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return cuMemsetD32Async (d, v, n, s); }
CUresult cuStreamSynchronize_ptsz (CUstream s) { return cuStreamSynchronize (s); }
CUresult cuEventRecord_ptsz (CUevent e, CUstream s) { return cuEventRecord (e, s); }
CUresult cuStreamWaitEvent_ptsz (CUstream s, CUevent e, unsigned int f) { return cuStreamWaitEvent (s, e, f); }

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

CUresult
cuMemMap (CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long f)
{
  (void) p; (void) n; (void) off; (void) h; (void) f;
  return CUDA_SUCCESS;
}

CUresult cuMemUnmap (CUdeviceptr p, size_t n) { (void) p; (void) n; return CUDA_SUCCESS; }

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
struct CUgraphExec_st { size_t n; uint64_t ns[STUB_GRAPH_MAX]; };

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
      e->ns[e->n++] = 1000ull * g->nodes[i]->kp.gridDimX;
  *exec = e;
  return CUDA_SUCCESS;
}

/* The four ways in: the legacy (v1, v2) five-argument calls, the flags and
 * the params calls (and its per-thread variant). */
CUresult cuGraphInstantiate (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
CUresult cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
__typeof__ (cuGraphInstantiateWithParams) cuGraphInstantiateWithParams_ptsz;
__typeof__ (cuGraphLaunch) cuGraphLaunch_ptsz;

CUresult
cuGraphInstantiate (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
  if (err)
    *err = NULL;
  if (log && n)
    log[0] = 0;
  return instantiate (exec, g);
}

CUresult
cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
  return cuGraphInstantiate (exec, g, err, log, n);
}

CUresult
cuGraphInstantiateWithFlags (CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
  (void) flags;
  return instantiate (exec, g);
}

CUresult
cuGraphInstantiateWithParams (CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = instantiate (exec, g);
  p->hErrNode_out = NULL;
  p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}

CUresult
cuGraphInstantiateWithParams_ptsz (CUgraphExec *exec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  return cuGraphInstantiateWithParams (exec, g, p);
}

CUresult
cuGraphLaunch (CUgraphExec e, CUstream s)
{
  NEED_INIT ();
  if (!e)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t ns = 0;
  for (size_t i = 0; i < e->n; i++)
    ns += e->ns[i];
  advance (s, ns);
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch_ptsz (CUgraphExec e, CUstream s) { return cuGraphLaunch (e, s); }
CUresult cuGraphExecDestroy (CUgraphExec e) { free (e); return CUDA_SUCCESS; }

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
  P ("cuFuncGetParamInfo", cuFuncGetParamInfo) P ("cuMemAlloc", cuMemAlloc_v2)
  P ("cuMemFree", cuMemFree_v2) P ("cuMemAllocAsync", cuMemAllocAsync)
  P ("cuMemFreeAsync", cuMemFreeAsync) P ("cuMemAllocManaged", cuMemAllocManaged)
  P ("cuMemHostAlloc", cuMemHostAlloc) P ("cuMemFreeHost", cuMemFreeHost)
  P ("cuMemcpyHtoD", cuMemcpyHtoD_v2) P ("cuMemcpyDtoH", cuMemcpyDtoH_v2)
  P ("cuMemcpyDtoD", cuMemcpyDtoD_v2) P ("cuMemcpy", cuMemcpy)
  P ("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2) P ("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2)
  P ("cuMemcpyAsync", cuMemcpyAsync) P ("cuMemsetD8", cuMemsetD8_v2)
  P ("cuMemsetD32Async", cuMemsetD32Async) P ("cuMemPrefetchAsync", cuMemPrefetchAsync_v2)
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
