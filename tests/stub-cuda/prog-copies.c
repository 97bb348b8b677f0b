/* prog-copies.c — a capture test program for the copies prog-more does
 * not make: the array copies (HtoA, AtoH, AtoD, DtoA, AtoA, HtoAAsync,
 * AtoHAsync), cuMemcpy3DPeer[Async] (same and different contexts, a host
 * to array side), cuMemcpyBatchAsync and cuMemcpy3DBatchAsync (CUDA 12.8's
 * calls with failIdx and CUDA 13's _v2; array operands), and their
 * per-thread-default-stream variants (see tests/capture-hook.sh for the
 * trace it must produce). Built twice, like prog-more: plain linked
 * symbols, and (-DVIA_DLOPEN) dlopen + cuGetProcAddress_v2, which answers
 * the batch calls by version (12080: the 12.8 ones; 13000: _v2) and the
 * per-thread variants with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
#define _GNU_SOURCE
#include <cuda.h>
#include "prog-common.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUDA 13 maps these names to _v2; here they are the 12.8 calls. */
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync
typedef CUresult BatchV1Fn (CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                            size_t *, size_t, size_t *, CUstream);
typedef CUresult Batch3DV1Fn (size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
BatchV1Fn cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz;
Batch3DV1Fn cuMemcpy3DBatchAsync;

/* Not declared by cuda.h unless CUDA_API_PER_THREAD_DEFAULT_STREAM. */
__typeof__ (cuMemcpyHtoA_v2) cuMemcpyHtoA_v2_ptds;
__typeof__ (cuMemcpyAtoHAsync_v2) cuMemcpyAtoHAsync_v2_ptsz;
__typeof__ (cuMemcpy3DPeer) cuMemcpy3DPeer_ptds;
__typeof__ (cuMemcpyBatchAsync_v2) cuMemcpyBatchAsync_v2_ptsz;
__typeof__ (cuMemcpy3DBatchAsync_v2) cuMemcpy3DBatchAsync_v2_ptsz;
__typeof__ (cuStreamSynchronize) cuStreamSynchronize_ptsz;

/* F(field, name for cuGetProcAddress, linked symbol, version, per-thread flag) */
#define FUNCS(F) \
  F (init, cuInit, cuInit, 12000, 0) F (devget, cuDeviceGet, cuDeviceGet, 12000, 0) \
  F (retain, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 12000, 0) \
  F (setcur, cuCtxSetCurrent, cuCtxSetCurrent, 12000, 0) \
  F (ctxsync, cuCtxSynchronize, cuCtxSynchronize, 12000, 0) \
  F (alloc, cuMemAlloc, cuMemAlloc_v2, 12000, 0) F (free_, cuMemFree, cuMemFree_v2, 12000, 0) \
  F (hostalloc, cuMemHostAlloc, cuMemHostAlloc, 12000, 0) \
  F (freehost, cuMemFreeHost, cuMemFreeHost, 12000, 0) \
  F (screate, cuStreamCreate, cuStreamCreate, 12000, 0) \
  F (ssync, cuStreamSynchronize, cuStreamSynchronize, 12000, 0) \
  F (acreate, cuArrayCreate, cuArrayCreate_v2, 12000, 0) \
  F (adestroy, cuArrayDestroy, cuArrayDestroy, 12000, 0) \
  F (htoa, cuMemcpyHtoA, cuMemcpyHtoA_v2, 12000, 0) F (atoh, cuMemcpyAtoH, cuMemcpyAtoH_v2, 12000, 0) \
  F (atod, cuMemcpyAtoD, cuMemcpyAtoD_v2, 12000, 0) F (dtoa, cuMemcpyDtoA, cuMemcpyDtoA_v2, 12000, 0) \
  F (atoa, cuMemcpyAtoA, cuMemcpyAtoA_v2, 12000, 0) \
  F (htoaa, cuMemcpyHtoAAsync, cuMemcpyHtoAAsync_v2, 12000, 0) \
  F (atoha, cuMemcpyAtoHAsync, cuMemcpyAtoHAsync_v2, 12000, 0) \
  F (peer3d, cuMemcpy3DPeer, cuMemcpy3DPeer, 12000, 0) \
  F (peer3da, cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync, 12000, 0) \
  F (batch, cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2, 13000, 0) \
  F (batch1, cuMemcpyBatchAsync, cuMemcpyBatchAsync, 12080, 0) \
  F (batch3d, cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_v2, 13000, 0) \
  F (batch3d1, cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, 12080, 0) \
  F (pt_htoa, cuMemcpyHtoA, cuMemcpyHtoA_v2_ptds, 12000, 1) \
  F (pt_atoha, cuMemcpyAtoHAsync, cuMemcpyAtoHAsync_v2_ptsz, 12000, 1) \
  F (pt_peer3d, cuMemcpy3DPeer, cuMemcpy3DPeer_ptds, 12000, 1) \
  F (pt_batch, cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2_ptsz, 13000, 1) \
  F (pt_batch1, cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz, 12080, 1) \
  F (pt_batch3d, cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_v2_ptsz, 13000, 1) \
  F (pt_ssync, cuStreamSynchronize, cuStreamSynchronize_ptsz, 12000, 1)

DEFINE_API (FUNCS)

static CUDA_MEMCPY3D_PEER
peer (CUmemorytype st, const void *sh, CUdeviceptr sd, CUcontext sc, CUmemorytype dt, CUdeviceptr dd,
      CUarray da, CUcontext dc, size_t w, size_t h, size_t d)
{
  CUDA_MEMCPY3D_PEER c;
  memset (&c, 0, sizeof c);
  c.srcMemoryType = st;
  c.srcHost = sh;
  c.srcDevice = sd;
  c.srcContext = sc;
  c.srcPitch = w;
  c.srcHeight = h;
  c.dstMemoryType = dt;
  c.dstDevice = dd;
  c.dstArray = da;
  c.dstContext = dc;
  c.dstPitch = w;
  c.dstHeight = h;
  c.WidthInBytes = w;
  c.Height = h;
  c.Depth = d;
  return c;
}

static CUmemcpy3DOperand
ptr_op (CUdeviceptr p)
{
  CUmemcpy3DOperand o;
  memset (&o, 0, sizeof o);
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  o.op.ptr.ptr = p;
  return o;
}

static CUmemcpy3DOperand
array_op (CUarray a)
{
  CUmemcpy3DOperand o;
  memset (&o, 0, sizeof o);
  o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  o.op.array.array = a;
  return o;
}

static CUDA_MEMCPY3D_BATCH_OP
op3 (CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h, size_t d)
{
  CUDA_MEMCPY3D_BATCH_OP o;
  memset (&o, 0, sizeof o);
  o.src = src;
  o.dst = dst;
  o.extent.width = w;
  o.extent.height = h;
  o.extent.depth = d;
  o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  return o;
}

int
main (void)
{
  load_api ();
  CUdevice dev;
  CUcontext ctx;
  static int other;                                 /* a second context (the stub never looks) */
  CUcontext ctx2 = (CUcontext) (void *) &other;
  CK (api.init (0));
  CK (api.devget (&dev, 0));
  CK (api.retain (&ctx, dev));
  CK (api.setcur (ctx));

  CUdeviceptr a, b;
  void *h;
  CUstream s;
  CK (api.alloc (&a, 1 << 20));                     /* id 1 */
  CK (api.alloc (&b, 1 << 20));                     /* id 2 */
  CK (api.hostalloc (&h, 65536, 0));                /* id 3 */
  char *pg = malloc (65536);                        /* pageable: id 0 */
  CK (api.screate (&s, 0));
  CUarray arr1, arr2;
  CUDA_ARRAY_DESCRIPTOR ad = { 64, 16, CU_AD_FORMAT_FLOAT, 1 };   /* 4-byte elements */
  CK (api.acreate (&arr1, &ad));
  ad = (CUDA_ARRAY_DESCRIPTOR) { 32, 8, CU_AD_FORMAT_UNSIGNED_INT16, 2 };  /* 4-byte elements */
  CK (api.acreate (&arr2, &ad));

  /* Array copies: the array side is the "cuda_arrays" allocation (id 4). */
  CK (api.htoa (arr1, 0, h, 4096));
  CK (api.atoh (pg, arr1, 0, 2048));
  CK (api.atod (a, arr1, 0, 1024));
  CK (api.dtoa (arr2, 0, b, 512));
  CK (api.atoa (arr2, 0, arr1, 0, 256));
  CK (api.htoaa (arr1, 0, h, 300, s));
  CK (api.atoha (h, arr1, 0, 200, s));

  /* 3D peer copies: same context (d2d), two contexts (p2p), host to array. */
  CUDA_MEMCPY3D_PEER c = peer (CU_MEMORYTYPE_DEVICE, NULL, a, ctx, CU_MEMORYTYPE_DEVICE, b, NULL, ctx,
                               64, 4, 2);
  CK (api.peer3d (&c));
  c = peer (CU_MEMORYTYPE_DEVICE, NULL, b, ctx2, CU_MEMORYTYPE_DEVICE, a, NULL, ctx, 32, 2, 3);
  CK (api.peer3da (&c, s));
  c = peer (CU_MEMORYTYPE_HOST, h, 0, ctx, CU_MEMORYTYPE_ARRAY, 0, arr1, ctx2, 16, 2, 1);
  CK (api.peer3d (&c));

  /* Batches on s. */
  CUmemcpyAttributes attr;
  memset (&attr, 0, sizeof attr);
  attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t attr_idx = 0, fail = 0;
  CUdeviceptr d4[] = { a, (CUdeviceptr) (uintptr_t) h + 4096, b, (CUdeviceptr) (uintptr_t) pg };
  CUdeviceptr s4[] = { (CUdeviceptr) (uintptr_t) h, b, a, a };
  size_t z4[] = { 1000, 3000, 2000, 500 };
  CK (api.batch (d4, s4, z4, 4, &attr, &attr_idx, 1, s));
  CUdeviceptr d2[] = { b, a }, s2[] = { a, b };
  size_t z2[] = { 700, 300 };
  CK (api.batch1 (d2, s2, z2, 2, &attr, &attr_idx, 1, &fail, s));
  CUDA_MEMCPY3D_BATCH_OP ops[] = {
    op3 (ptr_op (a), ptr_op (b), 64, 2, 1),                               /* 128 bytes d2d */
    op3 (array_op (arr1), ptr_op ((CUdeviceptr) (uintptr_t) h), 16, 4, 1), /* 64 floats: 256 d2h */
    op3 (ptr_op ((CUdeviceptr) (uintptr_t) h), array_op (arr2), 10, 3, 1), /* 30 x 4 bytes: 120 h2d */
  };
  CK (api.batch3d (3, ops, 0, s));
  CUDA_MEMCPY3D_BATCH_OP op1 = op3 (ptr_op (a), ptr_op (b), 100, 1, 1);
  CK (api.batch3d1 (1, &op1, &fail, 0, s));
  CK (api.ssync (s));

  /* The per-thread default stream (NULL in a _ptsz call, a _ptds call's). */
  CK (api.pt_htoa (arr1, 0, h, 64));
  CK (api.pt_atoha (h, arr1, 0, 32, NULL));
  c = peer (CU_MEMORYTYPE_DEVICE, NULL, a, ctx, CU_MEMORYTYPE_DEVICE, b, NULL, ctx, 16, 1, 1);
  CK (api.pt_peer3d (&c));
  size_t z2b[] = { 40, 60 };
  CK (api.pt_batch (d2, s2, z2b, 2, &attr, &attr_idx, 1, NULL));
  size_t z1[] = { 10 };
  CK (api.pt_batch1 (s2, d2, z1, 1, &attr, &attr_idx, 1, &fail, NULL));
  CUDA_MEMCPY3D_BATCH_OP op20 = op3 (ptr_op (a), ptr_op (b), 20, 1, 1);
  CK (api.pt_batch3d (1, &op20, 0, NULL));
  CK (api.pt_ssync (NULL));

  CK (api.ctxsync ());
  CK (api.adestroy (arr1));
  CK (api.adestroy (arr2));
  CK (api.free_ (a));
  CK (api.free_ (b));
  CK (api.freehost (h));
  free (pg);
  printf ("prog-copies done\n");
  return 0;
}
