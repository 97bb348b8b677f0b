/* prog-more.c — a capture test program for the calls prog-basic does not
 * make: 2D/3D copies (host, device and unified memory types), peer copies,
 * cooperative launches, cuLaunchKernelEx, a packed parameter buffer, and
 * the per-thread-default-stream (_ptds/_ptsz) variants on two threads (see
 * tests/capture-hook.sh for the trace it must produce). Built twice, like
 * prog-basic: plain linked symbols, and (-DVIA_DLOPEN) dlopen +
 * cuGetProcAddress_v2, asking for the per-thread variants with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM as the static CUDA runtime
 * does for code built with --default-stream per-thread. */
#define _GNU_SOURCE
#include <cuda.h>
#include "prog-common.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not declared by cuda.h unless CUDA_API_PER_THREAD_DEFAULT_STREAM. */
__typeof__ (cuLaunchKernel) cuLaunchKernel_ptsz;
__typeof__ (cuMemcpyHtoDAsync_v2) cuMemcpyHtoDAsync_v2_ptsz;
__typeof__ (cuMemcpyDtoH_v2) cuMemcpyDtoH_v2_ptds;
__typeof__ (cuMemcpy2D_v2) cuMemcpy2D_v2_ptds;
__typeof__ (cuMemcpyPeerAsync) cuMemcpyPeerAsync_ptsz;
__typeof__ (cuMemsetD32Async) cuMemsetD32Async_ptsz;
__typeof__ (cuStreamSynchronize) cuStreamSynchronize_ptsz;
__typeof__ (cuEventRecord) cuEventRecord_ptsz;
__typeof__ (cuStreamWaitEvent) cuStreamWaitEvent_ptsz;

/* F(field, name for cuGetProcAddress, linked symbol, version, per-thread flag) */
#define FUNCS(F) \
  F (init, cuInit, cuInit, 12000, 0) F (devget, cuDeviceGet, cuDeviceGet, 12000, 0) \
  F (retain, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 12000, 0) \
  F (setcur, cuCtxSetCurrent, cuCtxSetCurrent, 12000, 0) F (ctxsync, cuCtxSynchronize, cuCtxSynchronize, 12000, 0) \
  F (alloc, cuMemAlloc, cuMemAlloc_v2, 12000, 0) F (free_, cuMemFree, cuMemFree_v2, 12000, 0) \
  F (hostalloc, cuMemHostAlloc, cuMemHostAlloc, 12000, 0) F (freehost, cuMemFreeHost, cuMemFreeHost, 12000, 0) \
  F (screate, cuStreamCreate, cuStreamCreate, 12000, 0) F (ssync, cuStreamSynchronize, cuStreamSynchronize, 12000, 0) \
  F (load, cuModuleLoadData, cuModuleLoadData, 12000, 0) F (getfn, cuModuleGetFunction, cuModuleGetFunction, 12000, 0) \
  F (evcreate, cuEventCreate, cuEventCreate, 12000, 0) \
  F (launch, cuLaunchKernel, cuLaunchKernel, 12000, 0) \
  F (coop, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 12000, 0) \
  F (launchex, cuLaunchKernelEx, cuLaunchKernelEx, 12000, 0) \
  F (cp2d, cuMemcpy2D, cuMemcpy2D_v2, 12000, 0) F (cp2du, cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2, 12000, 0) \
  F (cp2da, cuMemcpy2DAsync, cuMemcpy2DAsync_v2, 12000, 0) F (cp3d, cuMemcpy3D, cuMemcpy3D_v2, 12000, 0) \
  F (cp3da, cuMemcpy3DAsync, cuMemcpy3DAsync_v2, 12000, 0) F (peer, cuMemcpyPeer, cuMemcpyPeer, 12000, 0) \
  F (peera, cuMemcpyPeerAsync, cuMemcpyPeerAsync, 12000, 0) \
  F (advise, cuMemAdvise, cuMemAdvise_v2, 12000, 0) \
  F (pt_launch, cuLaunchKernel, cuLaunchKernel_ptsz, 12000, 1) \
  F (pt_h2da, cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2_ptsz, 12000, 1) \
  F (pt_d2h, cuMemcpyDtoH, cuMemcpyDtoH_v2_ptds, 12000, 1) F (pt_cp2d, cuMemcpy2D, cuMemcpy2D_v2_ptds, 12000, 1) \
  F (pt_peera, cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz, 12000, 1) \
  F (pt_memset32a, cuMemsetD32Async, cuMemsetD32Async_ptsz, 12000, 1) \
  F (pt_ssync, cuStreamSynchronize, cuStreamSynchronize_ptsz, 12000, 1) \
  F (pt_evrec, cuEventRecord, cuEventRecord_ptsz, 12000, 1) \
  F (pt_wait, cuStreamWaitEvent, cuStreamWaitEvent_ptsz, 12000, 1)

DEFINE_API (FUNCS)

static CUfunction axpy, pairk;
static CUdeviceptr a, b;

static void
axpy_on (CUresult (*fn) (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, CUstream, void **, void **), unsigned gx, CUstream s)
{
  float al = 1.0f;
  int n = 4;
  void *p[] = { &al, &a, &b, &n };
  CK (fn (axpy, gx, 1, 1, 32, 1, 1, 0, s, p, NULL));
}

static void *
worker (void *ctx)
{
  CK (api.setcur ((CUcontext) ctx));
  axpy_on (api.pt_launch, 3, NULL);                  /* this thread's own default stream */
  CK (api.pt_ssync (NULL));
  return NULL;
}

int
main (void)
{
  load_api ();
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CK (api.init (0));
  CK (api.devget (&dev, 0));
  CK (api.retain (&ctx, dev));
  CK (api.setcur (ctx));
  CK (api.load (&mod, "stub"));
  CK (api.getfn (&axpy, mod, "axpy"));
  CK (api.getfn (&pairk, mod, "pairk"));

  void *h;
  CUstream s;
  CK (api.alloc (&a, 1 << 20));                     /* id 1 */
  CK (api.alloc (&b, 1 << 20));                     /* id 2 */
  CK (api.hostalloc (&h, 65536, 0));                /* id 3 */
  CK (api.screate (&s, 0));

  /* 2D: host -> device, 256 x 16 */
  CUDA_MEMCPY2D c2;
  memset (&c2, 0, sizeof c2);
  c2.srcMemoryType = CU_MEMORYTYPE_HOST;
  c2.srcHost = h;
  c2.srcPitch = 256;
  c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.dstDevice = a;
  c2.dstPitch = 1024;
  c2.WidthInBytes = 256;
  c2.Height = 16;
  CK (api.cp2d (&c2));
  /* 2D async: device -> device, 512 x 8, on s */
  c2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.srcDevice = a;
  c2.dstDevice = b;
  c2.WidthInBytes = 512;
  c2.Height = 8;
  CK (api.cp2da (&c2, s));
  /* 2D unaligned: device -> host, 100 x 3 */
  c2.srcDevice = b + 64;
  c2.dstMemoryType = CU_MEMORYTYPE_HOST;
  c2.dstHost = (char *) h + 128;
  c2.WidthInBytes = 100;
  c2.Height = 3;
  CK (api.cp2du (&c2));
  /* 2D with unified memory types: the direction comes from the pointers */
  c2.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  c2.srcDevice = (CUdeviceptr) (uintptr_t) h;
  c2.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  c2.dstDevice = b;
  c2.WidthInBytes = 128;
  c2.Height = 2;
  CK (api.cp2d (&c2));

  /* 3D: host -> device 64 x 4 x 2; async device -> host 32 x 2 x 3 on s */
  CUDA_MEMCPY3D c3;
  memset (&c3, 0, sizeof c3);
  c3.srcMemoryType = CU_MEMORYTYPE_HOST;
  c3.srcHost = h;
  c3.srcPitch = 64;
  c3.srcHeight = 4;
  c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.dstDevice = a;
  c3.dstPitch = 64;
  c3.dstHeight = 4;
  c3.WidthInBytes = 64;
  c3.Height = 4;
  c3.Depth = 2;
  CK (api.cp3d (&c3));
  c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.srcDevice = b;
  c3.dstMemoryType = CU_MEMORYTYPE_HOST;
  c3.dstHost = h;
  c3.WidthInBytes = 32;
  c3.Height = 2;
  c3.Depth = 3;
  CK (api.cp3da (&c3, s));

  /* Peer copies (one device here: the contexts are the same). */
  CK (api.peer (a, ctx, b, ctx, 2048));
  CK (api.peera (b + 4096, ctx, a, ctx, 1024, s));

  /* Advice: no event, one note at exit (the stub does not check that the
   * range is managed memory). */
  CUmemLocation dev0 = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
  CK (api.advise (a, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));

  /* Cooperative launch, cuLaunchKernelEx, a packed parameter buffer. */
  float al = 1.0f;
  int n = 4;
  void *p1[] = { &al, &a, &b, &n };
  CK (api.coop (axpy, 5, 1, 1, 32, 1, 1, 256, s, p1));     /* 256 B of dynamic shared memory */
  struct { CUdeviceptr p; int k; void *q; } pair = { b + 8, 5, NULL };
  long count = 7;
  void *p2[] = { &pair, &count };
  CUlaunchConfig cfg;
  memset (&cfg, 0, sizeof cfg);
  cfg.gridDimX = 6;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 64;
  cfg.blockDimY = 2;
  cfg.blockDimZ = 1;
  cfg.sharedMemBytes = 4096;
  cfg.hStream = s;
  CK (api.launchex (&cfg, pairk, p2, NULL));
  struct { float al; int pad; CUdeviceptr x, y; int n; int pad2; } packed = { 1.0f, 0, a + 16, b + 16, 4, 0 };
  size_t psize = sizeof packed;
  void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                    CU_LAUNCH_PARAM_END };
  CK (api.launch (axpy, 7, 1, 1, 32, 1, 1, 0, s, NULL, extra));
  CK (api.ssync (s));

  /* Per-thread default stream: NULL in a _ptsz call, the _ptds sync copies,
   * and CU_STREAM_PER_THREAD in a plain call are all this thread's stream. */
  axpy_on (api.pt_launch, 2, NULL);
  CK (api.pt_h2da (a, h, 1000, NULL));
  CK (api.pt_d2h (h, a, 500));
  c2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.srcDevice = a;
  c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c2.dstDevice = b;
  c2.WidthInBytes = 64;
  c2.Height = 2;
  CK (api.pt_cp2d (&c2));
  CK (api.pt_peera (a, ctx, b, ctx, 300, NULL));
  CK (api.pt_memset32a (b, 0, 256, NULL));
  axpy_on (api.launch, 1, CU_STREAM_PER_THREAD);
  CK (api.pt_ssync (NULL));

  pthread_t th;
  pthread_create (&th, NULL, worker, ctx);
  pthread_join (th, NULL);

  CUevent ev;
  CK (api.evcreate (&ev, 0));
  CK (api.pt_evrec (ev, NULL));
  CK (api.pt_wait (NULL, ev, 0));
  axpy_on (api.launch, 1, NULL);                    /* plain NULL: the legacy stream */
  axpy_on (api.pt_launch, 1, CU_STREAM_LEGACY);     /* legacy, named in a _ptsz call */

  CK (api.ctxsync ());
  CK (api.free_ (a));
  CK (api.free_ (b));
  CK (api.freehost (h));
  printf ("prog-more done\n");
  return 0;
}
