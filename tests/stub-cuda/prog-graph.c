/* prog-graph.c — a capture test program for CUDA graphs: one graph with two
 * kernel nodes (whose parameters point into tracked allocations) and an
 * empty node, instantiated every way the driver offers (the five-argument
 * cuGraphInstantiate and _v2, WithFlags, WithParams and its per-thread
 * variant), launched on a stream and on the per-thread default stream, a
 * failing launch, and a kernel-less graph whose exec may reuse a destroyed
 * exec's address (see tests/capture-hook.sh for the trace it must produce).
 * Built twice, like prog-more: plain linked symbols, and (-DVIA_DLOPEN)
 * dlopen + cuGetProcAddress_v2, where "cuGraphInstantiate" asked for at
 * versions 12000, 11000 and 10000 answers WithFlags, _v2 and the original,
 * as the real driver does. */
#define _GNU_SOURCE
#include <cuda.h>
#include "prog-common.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h maps cuGraphInstantiate to WithFlags; the driver still exports
 * the five-argument originals, and the per-thread variants are declared
 * only with CUDA_API_PER_THREAD_DEFAULT_STREAM. */
#undef cuGraphInstantiate
CUresult cuGraphInstantiate (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
CUresult cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph g, CUgraphNode *err, char *log, size_t n);
__typeof__ (cuGraphInstantiateWithParams) cuGraphInstantiateWithParams_ptsz;
__typeof__ (cuGraphLaunch) cuGraphLaunch_ptsz;
__typeof__ (cuStreamSynchronize) cuStreamSynchronize_ptsz;

/* What CUDA 13's cudart gets for cuCtxSynchronize (cudaDeviceSynchronize). */
#if CUDA_VERSION >= 13000
#define CTXSYNC13(F) F (ctxsync13, cuCtxSynchronize, cuCtxSynchronize_v2, 13000, 0)
#else
#define CTXSYNC13(F)
#endif

/* F(field, name for cuGetProcAddress, linked symbol, version, per-thread flag) */
#define FUNCS(F) \
  F (init, cuInit, cuInit, 12000, 0) F (devget, cuDeviceGet, cuDeviceGet, 12000, 0) \
  F (retain, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 12000, 0) \
  F (setcur, cuCtxSetCurrent, cuCtxSetCurrent, 12000, 0) \
  F (ctxsync, cuCtxSynchronize, cuCtxSynchronize, 12000, 0) CTXSYNC13 (F) \
  F (alloc, cuMemAlloc, cuMemAlloc_v2, 12000, 0) F (free_, cuMemFree, cuMemFree_v2, 12000, 0) \
  F (screate, cuStreamCreate, cuStreamCreate, 12000, 0) \
  F (ssync, cuStreamSynchronize, cuStreamSynchronize, 12000, 0) \
  F (load, cuModuleLoadData, cuModuleLoadData, 12000, 0) \
  F (getfn, cuModuleGetFunction, cuModuleGetFunction, 12000, 0) \
  F (gcreate, cuGraphCreate, cuGraphCreate, 12000, 0) \
  F (gdestroy, cuGraphDestroy, cuGraphDestroy, 12000, 0) \
  F (addkernel, cuGraphAddKernelNode, cuGraphAddKernelNode_v2, 12000, 0) \
  F (addempty, cuGraphAddEmptyNode, cuGraphAddEmptyNode, 12000, 0) \
  F (inst_flags, cuGraphInstantiate, cuGraphInstantiateWithFlags, 12000, 0) \
  F (inst_v2, cuGraphInstantiate, cuGraphInstantiate_v2, 11000, 0) \
  F (inst_v1, cuGraphInstantiate, cuGraphInstantiate, 10000, 0) \
  F (inst_params, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams, 12000, 0) \
  F (pt_inst_params, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz, 12000, 1) \
  F (glaunch, cuGraphLaunch, cuGraphLaunch, 12000, 0) \
  F (pt_glaunch, cuGraphLaunch, cuGraphLaunch_ptsz, 12000, 1) \
  F (pt_ssync, cuStreamSynchronize, cuStreamSynchronize_ptsz, 12000, 1) \
  F (xdestroy, cuGraphExecDestroy, cuGraphExecDestroy, 12000, 0)

DEFINE_API (FUNCS)

/* A kernel node of GX blocks of 128 threads of F with PARAMS and 2048 B of
 * dynamic shared memory. */
static CUgraphNode
add_kernel (CUgraph g, CUfunction f, unsigned gx, void **params)
{
  CUDA_KERNEL_NODE_PARAMS kp;
  memset (&kp, 0, sizeof kp);
  kp.func = f;
  kp.gridDimX = gx;
  kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 128;
  kp.blockDimY = kp.blockDimZ = 1;
  kp.sharedMemBytes = 2048;
  kp.kernelParams = params;
  CUgraphNode nd;
  CK (api.addkernel (&nd, g, NULL, 0, &kp));
  return nd;
}

int
main (void)
{
  load_api ();
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction axpy, pairk;
  CK (api.init (0));
  CK (api.devget (&dev, 0));
  CK (api.retain (&ctx, dev));
  CK (api.setcur (ctx));
  CK (api.load (&mod, "stub"));
  CK (api.getfn (&axpy, mod, "axpy"));
  CK (api.getfn (&pairk, mod, "pairk"));

  CUdeviceptr a, b, c;
  CUstream s;
  CK (api.alloc (&a, 1 << 20));                     /* id 1 */
  CK (api.alloc (&b, 1 << 20));                     /* id 2 */
  CK (api.alloc (&c, 4096));                        /* id 3 */
  CK (api.screate (&s, 0));

  /* axpy (3 blocks: 3000 ns) on a and b; an empty node; pairk (5 blocks:
   * 5000 ns) on c and a, through a struct parameter. The driver copies the
   * values, so the locals may change afterwards. */
  CUgraph g;
  CK (api.gcreate (&g, 0));
  float al = 2.0f;
  int n = 4;
  void *p1[] = { &al, &a, &b, &n };
  CUgraphNode k1 = add_kernel (g, axpy, 3, p1);
  CUgraphNode empty;
  CK (api.addempty (&empty, g, &k1, 1));
  struct { CUdeviceptr p; int k; CUdeviceptr q; } pair = { c + 8, 5, a + 64 };
  long count = 7;
  void *p2[] = { &pair, &count };
  add_kernel (g, pairk, 5, p2);
  pair.p = pair.q = 0;

  CUgraphExec e1, e2, e3, e4, e5;
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  memset (&ip, 0, sizeof ip);
  ip.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  char log[64] = "unset";
  CK (api.inst_flags (&e1, g, 0));
  CK (api.inst_params (&e2, g, &ip));
  int result = (int) ip.result_out;
  CK (api.inst_v2 (&e3, g, NULL, log, sizeof log));
  CK (api.inst_v1 (&e4, g, NULL, NULL, 0));
  ip.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  CK (api.pt_inst_params (&e5, g, &ip));
  result += (int) ip.result_out;

  /* A node added after instantiation belongs to no exec made before. */
  add_kernel (g, axpy, 9, p1);

  CK (api.glaunch (e1, s));
  CK (api.glaunch (e1, s));
  CK (api.glaunch (e2, s));
  CK (api.glaunch (e3, s));
  CK (api.glaunch (e4, s));
  CK (api.pt_glaunch (e5, NULL));                   /* this thread's default stream */
  CUresult bad = api.glaunch (NULL, s);             /* fails: nothing recorded */
  CK (api.ssync (s));
  CK (api.pt_ssync (NULL));
  for (CUgraphExec *e = (CUgraphExec[]) { e1, e2, e3, e4, e5 }, *end = e + 5; e < end; e++)
    CK (api.xdestroy (*e));

  /* A graph without kernels: its exec (perhaps at a destroyed one's
   * address) launches no kernels. */
  CUgraph g2;
  CUgraphExec e6;
  CK (api.gcreate (&g2, 0));
  CK (api.addempty (&empty, g2, NULL, 0));
  CK (api.inst_flags (&e6, g2, 0));
  CK (api.glaunch (e6, s));
  CK (api.ssync (s));
  CK (api.xdestroy (e6));
  CK (api.gdestroy (g2));
  CK (api.gdestroy (g));

  CK (api.ctxsync ());
#if CUDA_VERSION >= 13000
  CK (api.ctxsync13 (ctx));
#else
  CK (api.ctxsync ());
#endif
  CK (api.free_ (a));
  CK (api.free_ (b));
  CK (api.free_ (c));
  printf ("prog-graph: instantiate results %d, log \"%s\", bad launch %d\n", result, log, (int) bad);
  printf ("prog-graph done\n");
  return 0;
}
