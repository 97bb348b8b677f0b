/* hooks-copy.c — hook mode's copies and memsets: plain, peer, 2D/3D (also
 * for CUPTI mode: hooks_copy_desc) and CUDA array copies, and memsets, each
 * timed on its stream. See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- copies and memsets ---- */

#define TIMED_OP(call, s, record) \
  do { \
    if (capturing (s)) \
      return call; \
    Timer tm; \
    uint64_t t0 = cap_now (); \
    timer_begin (&tm, s); \
    CUresult r_ = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r_ != CUDA_SUCCESS) { \
      timer_cancel (&tm); \
      return r_; \
    } \
    uint64_t seq_ = record; \
    timer_commit (&tm, seq_, 1); \
    return r_; \
  } while (0)

#define COPY(call, s, dir, dst, src, bytes, async) \
  TIMED_OP (call, s, cap_copy (t0, t1, dir, (uintptr_t) (dst), (uintptr_t) (src), bytes, \
                               (uintptr_t) (s), async, tm.ok, 0))
#define MEMSET(call, s, dst, bytes, async) \
  TIMED_OP (call, s, cap_memset (t0, t1, (uintptr_t) (dst), bytes, (uintptr_t) (s), async, tm.ok, 0))

CUresult
cuMemcpy (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpy, dst, src, n);
  COPY (real_cuMemcpy (dst, src, n), (CUstream) NULL, CAP_DIR_AUTO, dst, src, n, 0);
}

CUresult
cuMemcpyAsync (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyAsync, dst, src, n, s);
  COPY (real_cuMemcpyAsync (dst, src, n, s), s, CAP_DIR_AUTO, dst, src, n, 1);
}

CUresult
cuMemcpyHtoD_v2 (CUdeviceptr dst, const void *src, size_t n)
{
  PASS (cuMemcpyHtoD_v2, dst, src, n);
  COPY (real_cuMemcpyHtoD_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_H2D, dst, src, n, 0);
}

CUresult
cuMemcpyDtoH_v2 (void *dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoH_v2, dst, src, n);
  COPY (real_cuMemcpyDtoH_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_D2H, dst, src, n, 0);
}

CUresult
cuMemcpyDtoD_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoD_v2, dst, src, n);
  COPY (real_cuMemcpyDtoD_v2 (dst, src, n), (CUstream) NULL, CAP_DIR_D2D, dst, src, n, 0);
}

CUresult
cuMemcpyHtoDAsync_v2 (CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoDAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyHtoDAsync_v2 (dst, src, n, s), s, CAP_DIR_H2D, dst, src, n, 1);
}

CUresult
cuMemcpyDtoHAsync_v2 (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoHAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyDtoHAsync_v2 (dst, src, n, s), s, CAP_DIR_D2H, dst, src, n, 1);
}

CUresult
cuMemcpyDtoDAsync_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoDAsync_v2, dst, src, n, s);
  COPY (real_cuMemcpyDtoDAsync_v2 (dst, src, n, s), s, CAP_DIR_D2D, dst, src, n, 1);
}

CUresult
cuMemcpyPeer (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  PASS (cuMemcpyPeer, dst, dc, src, sc, n);
  COPY (real_cuMemcpyPeer (dst, dc, src, sc, n), (CUstream) NULL, CAP_DIR_P2P, dst, src, n, 0);
}

CUresult
cuMemcpyPeerAsync (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                   CUstream s)
{
  PASS (cuMemcpyPeerAsync, dst, dc, src, sc, n, s);
  COPY (real_cuMemcpyPeerAsync (dst, dc, src, sc, n, s), s, CAP_DIR_P2P, dst, src, n, 1);
}

/* 2D/3D descriptors: which side is which comes from the memory types;
 * unified pointers are looked up. */
static int
side_of (CUmemorytype t)
{
  return t == CU_MEMORYTYPE_HOST ? 0 : t == CU_MEMORYTYPE_UNIFIED ? -1 : 1;
}

static int
dir_of (CUmemorytype dt, CUmemorytype st)
{
  int d = side_of (dt), s = side_of (st);
  if (d < 0 || s < 0)
    return CAP_DIR_AUTO;
  return d && s ? CAP_DIR_D2D : d ? CAP_DIR_H2D : s ? CAP_DIR_D2H : CAP_DIR_AUTO;
}

/* A CUDA array side is the trace's synthetic "cuda_arrays" allocation. */
static uintptr_t
ptr_of (CUmemorytype t, const void *host, CUdeviceptr dev)
{
  return t == CU_MEMORYTYPE_HOST ? (uintptr_t) host : t == CU_MEMORYTYPE_ARRAY ? CAP_ARRAY : (uintptr_t) dev;
}

/* cuMemcpy3DPeer[Async]: a peer copy when neither side is host memory and
 * the two contexts differ; otherwise as cuMemcpy3D, by the memory types. */
static int
peer_dir_of (const CUDA_MEMCPY3D_PEER *c)
{
  if (c->srcContext && c->dstContext && c->srcContext != c->dstContext
      && c->srcMemoryType != CU_MEMORYTYPE_HOST && c->dstMemoryType != CU_MEMORYTYPE_HOST)
    return CAP_DIR_P2P;
  return dir_of (c->dstMemoryType, c->srcMemoryType);
}

void
hooks_copy_desc (const void *desc, int is3d, int *dir, uintptr_t *dst, uintptr_t *src,
                 uint64_t *bytes)
{
  if (is3d == 2) {
    const CUDA_MEMCPY3D_PEER *c = desc;
    *dir = peer_dir_of (c);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
  } else if (is3d) {
    const CUDA_MEMCPY3D *c = desc;
    *dir = dir_of (c->dstMemoryType, c->srcMemoryType);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height * (c->Depth ? c->Depth : 1);
  } else {
    const CUDA_MEMCPY2D *c = desc;
    *dir = dir_of (c->dstMemoryType, c->srcMemoryType);
    *dst = ptr_of (c->dstMemoryType, c->dstHost, c->dstDevice);
    *src = ptr_of (c->srcMemoryType, c->srcHost, c->srcDevice);
    *bytes = (uint64_t) c->WidthInBytes * c->Height;
  }
}

#define COPY2D(call, c, s, async) \
  COPY (call, s, dir_of ((c)->dstMemoryType, (c)->srcMemoryType), \
        ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height, async)
#define COPY3D(call, c, s, async) \
  COPY (call, s, dir_of ((c)->dstMemoryType, (c)->srcMemoryType), \
        ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height * ((c)->Depth ? (c)->Depth : 1), async)

CUresult
cuMemcpy2D_v2 (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2D_v2, c);
  COPY2D (real_cuMemcpy2D_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy2DUnaligned_v2 (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2DUnaligned_v2, c);
  COPY2D (real_cuMemcpy2DUnaligned_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy2DAsync_v2 (const CUDA_MEMCPY2D *c, CUstream s)
{
  PASS (cuMemcpy2DAsync_v2, c, s);
  COPY2D (real_cuMemcpy2DAsync_v2 (c, s), c, s, 1);
}

CUresult
cuMemcpy3D_v2 (const CUDA_MEMCPY3D *c)
{
  PASS (cuMemcpy3D_v2, c);
  COPY3D (real_cuMemcpy3D_v2 (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy3DAsync_v2 (const CUDA_MEMCPY3D *c, CUstream s)
{
  PASS (cuMemcpy3DAsync_v2, c, s);
  COPY3D (real_cuMemcpy3DAsync_v2 (c, s), c, s, 1);
}

#define COPY3DPEER(call, c, s, async) \
  COPY (call, s, peer_dir_of (c), ptr_of ((c)->dstMemoryType, (c)->dstHost, (c)->dstDevice), \
        ptr_of ((c)->srcMemoryType, (c)->srcHost, (c)->srcDevice), \
        (uint64_t) (c)->WidthInBytes * (c)->Height * ((c)->Depth ? (c)->Depth : 1), async)

CUresult
cuMemcpy3DPeer (const CUDA_MEMCPY3D_PEER *c)
{
  PASS (cuMemcpy3DPeer, c);
  COPY3DPEER (real_cuMemcpy3DPeer (c), c, (CUstream) NULL, 0);
}

CUresult
cuMemcpy3DPeerAsync (const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
  PASS (cuMemcpy3DPeerAsync, c, s);
  COPY3DPEER (real_cuMemcpy3DPeerAsync (c, s), c, s, 1);
}

/* Array copies: the array side is CAP_ARRAY (device memory). */
CUresult
cuMemcpyHtoA_v2 (CUarray dst, size_t off, const void *src, size_t n)
{
  PASS (cuMemcpyHtoA_v2, dst, off, src, n);
  COPY (real_cuMemcpyHtoA_v2 (dst, off, src, n), (CUstream) NULL, CAP_DIR_H2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoH_v2 (void *dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoH_v2, dst, src, off, n);
  COPY (real_cuMemcpyAtoH_v2 (dst, src, off, n), (CUstream) NULL, CAP_DIR_D2H, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyAtoD_v2 (CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoD_v2, dst, src, off, n);
  COPY (real_cuMemcpyAtoD_v2 (dst, src, off, n), (CUstream) NULL, CAP_DIR_D2D, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyDtoA_v2 (CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoA_v2, dst, off, src, n);
  COPY (real_cuMemcpyDtoA_v2 (dst, off, src, n), (CUstream) NULL, CAP_DIR_D2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoA_v2 (CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
  PASS (cuMemcpyAtoA_v2, dst, doff, src, soff, n);
  COPY (real_cuMemcpyAtoA_v2 (dst, doff, src, soff, n), (CUstream) NULL, CAP_DIR_D2D, CAP_ARRAY,
        CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyHtoAAsync_v2 (CUarray dst, size_t off, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoAAsync_v2, dst, off, src, n, s);
  COPY (real_cuMemcpyHtoAAsync_v2 (dst, off, src, n, s), s, CAP_DIR_H2D, CAP_ARRAY, src, n, 1);
}

CUresult
cuMemcpyAtoHAsync_v2 (void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
  PASS (cuMemcpyAtoHAsync_v2, dst, src, off, n, s);
  COPY (real_cuMemcpyAtoHAsync_v2 (dst, src, off, n, s), s, CAP_DIR_D2H, dst, CAP_ARRAY, n, 1);
}


CUresult
cuMemsetD8_v2 (CUdeviceptr p, unsigned char v, size_t n)
{
  PASS (cuMemsetD8_v2, p, v, n);
  MEMSET (real_cuMemsetD8_v2 (p, v, n), (CUstream) NULL, p, n, 0);
}

CUresult
cuMemsetD16_v2 (CUdeviceptr p, unsigned short v, size_t n)
{
  PASS (cuMemsetD16_v2, p, v, n);
  MEMSET (real_cuMemsetD16_v2 (p, v, n), (CUstream) NULL, p, 2 * (uint64_t) n, 0);
}

CUresult
cuMemsetD32_v2 (CUdeviceptr p, unsigned int v, size_t n)
{
  PASS (cuMemsetD32_v2, p, v, n);
  MEMSET (real_cuMemsetD32_v2 (p, v, n), (CUstream) NULL, p, 4 * (uint64_t) n, 0);
}

CUresult
cuMemsetD8Async (CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
  PASS (cuMemsetD8Async, p, v, n, s);
  MEMSET (real_cuMemsetD8Async (p, v, n, s), s, p, n, 1);
}

CUresult
cuMemsetD16Async (CUdeviceptr p, unsigned short v, size_t n, CUstream s)
{
  PASS (cuMemsetD16Async, p, v, n, s);
  MEMSET (real_cuMemsetD16Async (p, v, n, s), s, p, 2 * (uint64_t) n, 1);
}

CUresult
cuMemsetD32Async (CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
  PASS (cuMemsetD32Async, p, v, n, s);
  MEMSET (real_cuMemsetD32Async (p, v, n, s), s, p, 4 * (uint64_t) n, 1);
}

CUresult
cuMemsetD2D8_v2 (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h)
{
  PASS (cuMemsetD2D8_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D8_v2 (p, pitch, v, w, h), (CUstream) NULL, p, (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D16_v2 (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h)
{
  PASS (cuMemsetD2D16_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D16_v2 (p, pitch, v, w, h), (CUstream) NULL, p, 2 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D32_v2 (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h)
{
  PASS (cuMemsetD2D32_v2, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D32_v2 (p, pitch, v, w, h), (CUstream) NULL, p, 4 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D8Async (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D8Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D8Async (p, pitch, v, w, h, s), s, p, (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D16Async (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D16Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D16Async (p, pitch, v, w, h, s), s, p, 2 * (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D32Async (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D32Async, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D32Async (p, pitch, v, w, h, s), s, p, 4 * (uint64_t) w * h, 1);
}

/* ---- per-thread default stream variants (_ptds, _ptsz) ----
 * Each records as its base function does, on the stream it runs on (PT,
 * PTDS: hooks-priv.h). */

CUresult
cuMemcpy_ptds (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpy_ptds, dst, src, n);
  COPY (real_cuMemcpy_ptds (dst, src, n), PTDS, CAP_DIR_AUTO, dst, src, n, 0);
}

CUresult
cuMemcpyHtoD_v2_ptds (CUdeviceptr dst, const void *src, size_t n)
{
  PASS (cuMemcpyHtoD_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyHtoD_v2_ptds (dst, src, n), PTDS, CAP_DIR_H2D, dst, src, n, 0);
}

CUresult
cuMemcpyDtoH_v2_ptds (void *dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoH_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyDtoH_v2_ptds (dst, src, n), PTDS, CAP_DIR_D2H, dst, src, n, 0);
}

CUresult
cuMemcpyDtoD_v2_ptds (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoD_v2_ptds, dst, src, n);
  COPY (real_cuMemcpyDtoD_v2_ptds (dst, src, n), PTDS, CAP_DIR_D2D, dst, src, n, 0);
}

CUresult
cuMemcpyPeer_ptds (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
  PASS (cuMemcpyPeer_ptds, dst, dc, src, sc, n);
  COPY (real_cuMemcpyPeer_ptds (dst, dc, src, sc, n), PTDS, CAP_DIR_P2P, dst, src, n, 0);
}

CUresult
cuMemcpy2D_v2_ptds (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2D_v2_ptds, c);
  COPY2D (real_cuMemcpy2D_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy2DUnaligned_v2_ptds (const CUDA_MEMCPY2D *c)
{
  PASS (cuMemcpy2DUnaligned_v2_ptds, c);
  COPY2D (real_cuMemcpy2DUnaligned_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy3D_v2_ptds (const CUDA_MEMCPY3D *c)
{
  PASS (cuMemcpy3D_v2_ptds, c);
  COPY3D (real_cuMemcpy3D_v2_ptds (c), c, PTDS, 0);
}

CUresult
cuMemsetD8_v2_ptds (CUdeviceptr p, unsigned char v, size_t n)
{
  PASS (cuMemsetD8_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD8_v2_ptds (p, v, n), PTDS, p, n, 0);
}

CUresult
cuMemsetD16_v2_ptds (CUdeviceptr p, unsigned short v, size_t n)
{
  PASS (cuMemsetD16_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD16_v2_ptds (p, v, n), PTDS, p, 2 * (uint64_t) n, 0);
}

CUresult
cuMemsetD32_v2_ptds (CUdeviceptr p, unsigned int v, size_t n)
{
  PASS (cuMemsetD32_v2_ptds, p, v, n);
  MEMSET (real_cuMemsetD32_v2_ptds (p, v, n), PTDS, p, 4 * (uint64_t) n, 0);
}

CUresult
cuMemsetD2D8_v2_ptds (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h)
{
  PASS (cuMemsetD2D8_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D8_v2_ptds (p, pitch, v, w, h), PTDS, p, (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D16_v2_ptds (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h)
{
  PASS (cuMemsetD2D16_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D16_v2_ptds (p, pitch, v, w, h), PTDS, p, 2 * (uint64_t) w * h, 0);
}

CUresult
cuMemsetD2D32_v2_ptds (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h)
{
  PASS (cuMemsetD2D32_v2_ptds, p, pitch, v, w, h);
  MEMSET (real_cuMemsetD2D32_v2_ptds (p, pitch, v, w, h), PTDS, p, 4 * (uint64_t) w * h, 0);
}

CUresult
cuMemcpyAsync_ptsz (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyAsync_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyAsync_ptsz (dst, src, n, s), PT (s), CAP_DIR_AUTO, dst, src, n, 1);
}

CUresult
cuMemcpyHtoDAsync_v2_ptsz (CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoDAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyHtoDAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_H2D, dst, src, n, 1);
}

CUresult
cuMemcpyDtoHAsync_v2_ptsz (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoHAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyDtoHAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_D2H, dst, src, n, 1);
}

CUresult
cuMemcpyDtoDAsync_v2_ptsz (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
  PASS (cuMemcpyDtoDAsync_v2_ptsz, dst, src, n, s);
  COPY (real_cuMemcpyDtoDAsync_v2_ptsz (dst, src, n, s), PT (s), CAP_DIR_D2D, dst, src, n, 1);
}

CUresult
cuMemcpyPeerAsync_ptsz (CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                        CUstream s)
{
  PASS (cuMemcpyPeerAsync_ptsz, dst, dc, src, sc, n, s);
  COPY (real_cuMemcpyPeerAsync_ptsz (dst, dc, src, sc, n, s), PT (s), CAP_DIR_P2P, dst, src, n, 1);
}

CUresult
cuMemcpy2DAsync_v2_ptsz (const CUDA_MEMCPY2D *c, CUstream s)
{
  PASS (cuMemcpy2DAsync_v2_ptsz, c, s);
  COPY2D (real_cuMemcpy2DAsync_v2_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpy3DAsync_v2_ptsz (const CUDA_MEMCPY3D *c, CUstream s)
{
  PASS (cuMemcpy3DAsync_v2_ptsz, c, s);
  COPY3D (real_cuMemcpy3DAsync_v2_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpy3DPeer_ptds (const CUDA_MEMCPY3D_PEER *c)
{
  PASS (cuMemcpy3DPeer_ptds, c);
  COPY3DPEER (real_cuMemcpy3DPeer_ptds (c), c, PTDS, 0);
}

CUresult
cuMemcpy3DPeerAsync_ptsz (const CUDA_MEMCPY3D_PEER *c, CUstream s)
{
  PASS (cuMemcpy3DPeerAsync_ptsz, c, s);
  COPY3DPEER (real_cuMemcpy3DPeerAsync_ptsz (c, s), c, PT (s), 1);
}

CUresult
cuMemcpyHtoA_v2_ptds (CUarray dst, size_t off, const void *src, size_t n)
{
  PASS (cuMemcpyHtoA_v2_ptds, dst, off, src, n);
  COPY (real_cuMemcpyHtoA_v2_ptds (dst, off, src, n), PTDS, CAP_DIR_H2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoH_v2_ptds (void *dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoH_v2_ptds, dst, src, off, n);
  COPY (real_cuMemcpyAtoH_v2_ptds (dst, src, off, n), PTDS, CAP_DIR_D2H, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyAtoD_v2_ptds (CUdeviceptr dst, CUarray src, size_t off, size_t n)
{
  PASS (cuMemcpyAtoD_v2_ptds, dst, src, off, n);
  COPY (real_cuMemcpyAtoD_v2_ptds (dst, src, off, n), PTDS, CAP_DIR_D2D, dst, CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyDtoA_v2_ptds (CUarray dst, size_t off, CUdeviceptr src, size_t n)
{
  PASS (cuMemcpyDtoA_v2_ptds, dst, off, src, n);
  COPY (real_cuMemcpyDtoA_v2_ptds (dst, off, src, n), PTDS, CAP_DIR_D2D, CAP_ARRAY, src, n, 0);
}

CUresult
cuMemcpyAtoA_v2_ptds (CUarray dst, size_t doff, CUarray src, size_t soff, size_t n)
{
  PASS (cuMemcpyAtoA_v2_ptds, dst, doff, src, soff, n);
  COPY (real_cuMemcpyAtoA_v2_ptds (dst, doff, src, soff, n), PTDS, CAP_DIR_D2D, CAP_ARRAY,
        CAP_ARRAY, n, 0);
}

CUresult
cuMemcpyHtoAAsync_v2_ptsz (CUarray dst, size_t off, const void *src, size_t n, CUstream s)
{
  PASS (cuMemcpyHtoAAsync_v2_ptsz, dst, off, src, n, s);
  COPY (real_cuMemcpyHtoAAsync_v2_ptsz (dst, off, src, n, s), PT (s), CAP_DIR_H2D, CAP_ARRAY, src,
        n, 1);
}

CUresult
cuMemcpyAtoHAsync_v2_ptsz (void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
  PASS (cuMemcpyAtoHAsync_v2_ptsz, dst, src, off, n, s);
  COPY (real_cuMemcpyAtoHAsync_v2_ptsz (dst, src, off, n, s), PT (s), CAP_DIR_D2H, dst, CAP_ARRAY,
        n, 1);
}

CUresult
cuMemsetD8Async_ptsz (CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
  PASS (cuMemsetD8Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD8Async_ptsz (p, v, n, s), PT (s), p, n, 1);
}

CUresult
cuMemsetD16Async_ptsz (CUdeviceptr p, unsigned short v, size_t n, CUstream s)
{
  PASS (cuMemsetD16Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD16Async_ptsz (p, v, n, s), PT (s), p, 2 * (uint64_t) n, 1);
}

CUresult
cuMemsetD32Async_ptsz (CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
  PASS (cuMemsetD32Async_ptsz, p, v, n, s);
  MEMSET (real_cuMemsetD32Async_ptsz (p, v, n, s), PT (s), p, 4 * (uint64_t) n, 1);
}

CUresult
cuMemsetD2D8Async_ptsz (CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
  PASS (cuMemsetD2D8Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D8Async_ptsz (p, pitch, v, w, h, s), PT (s), p, (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D16Async_ptsz (CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h,
                         CUstream s)
{
  PASS (cuMemsetD2D16Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D16Async_ptsz (p, pitch, v, w, h, s), PT (s), p, 2 * (uint64_t) w * h, 1);
}

CUresult
cuMemsetD2D32Async_ptsz (CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h,
                         CUstream s)
{
  PASS (cuMemsetD2D32Async_ptsz, p, pitch, v, w, h, s);
  MEMSET (real_cuMemsetD2D32Async_ptsz (p, pitch, v, w, h, s), PT (s), p, 4 * (uint64_t) w * h, 1);
}
