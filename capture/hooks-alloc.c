/* hooks-alloc.c — hook mode's allocations: device, managed, pinned and
 * stream-ordered allocations and frees, virtual memory mappings, and
 * managed memory's prefetches and advice. See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- allocations ---- */

static CUresult
do_alloc (CUresult r, uint64_t t0, uintptr_t p, uint64_t bytes, int kind, int so, CUstream s)
{
  uint64_t t1 = cap_now ();
  if (r == CUDA_SUCCESS)
    cap_alloc (t0, t1, p, bytes, kind, so, (uintptr_t) s);
  return r;
}

static CUresult
do_free (CUresult r, uint64_t t0, uintptr_t p, int so, CUstream s)
{
  uint64_t t1 = cap_now ();
  if (r == CUDA_SUCCESS)
    cap_free (t0, t1, p, so, (uintptr_t) s);
  return r;
}

CUresult
cuMemAlloc_v2 (CUdeviceptr *dptr, size_t bytes)
{
  PASS (cuMemAlloc_v2, dptr, bytes);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAlloc_v2 (dptr, bytes);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemAllocPitch_v2 (CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned int esz)
{
  PASS (cuMemAllocPitch_v2, dptr, pitch, w, h, esz);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocPitch_v2 (dptr, pitch, w, h, esz);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, r == CUDA_SUCCESS ? (uint64_t) *pitch * h : 0,
                   CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemFree_v2 (CUdeviceptr p)
{
  PASS (cuMemFree_v2, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFree_v2 (p), t0, p, 0, NULL);
}

CUresult
cuMemAllocManaged (CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
  PASS (cuMemAllocManaged, dptr, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocManaged (dptr, bytes, flags);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_MANAGED, 0, NULL);
}

CUresult
cuMemHostAlloc (void **pp, size_t bytes, unsigned int flags)
{
  PASS (cuMemHostAlloc, pp, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemHostAlloc (pp, bytes, flags);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? (uintptr_t) *pp : 0, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemAllocHost_v2 (void **pp, size_t bytes)
{
  PASS (cuMemAllocHost_v2, pp, bytes);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocHost_v2 (pp, bytes);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? (uintptr_t) *pp : 0, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemFreeHost (void *p)
{
  PASS (cuMemFreeHost, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeHost (p), t0, (uintptr_t) p, 0, NULL);
}

CUresult
cuMemHostRegister_v2 (void *p, size_t bytes, unsigned int flags)
{
  PASS (cuMemHostRegister_v2, p, bytes, flags);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemHostRegister_v2 (p, bytes, flags);
  return do_alloc (r, t0, (uintptr_t) p, bytes, CAP_MEM_PINNED, 0, NULL);
}

CUresult
cuMemHostUnregister (void *p)
{
  PASS (cuMemHostUnregister, p);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemHostUnregister (p), t0, (uintptr_t) p, 0, NULL);
}

CUresult
cuMemAllocAsync (CUdeviceptr *dptr, size_t bytes, CUstream s)
{
  PASS (cuMemAllocAsync, dptr, bytes, s);
  if (capturing (s))
    return real_cuMemAllocAsync (dptr, bytes, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocAsync (dptr, bytes, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, s);
}

CUresult
cuMemAllocFromPoolAsync (CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
  PASS (cuMemAllocFromPoolAsync, dptr, bytes, pool, s);
  if (capturing (s))
    return real_cuMemAllocFromPoolAsync (dptr, bytes, pool, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocFromPoolAsync (dptr, bytes, pool, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, s);
}

CUresult
cuMemFreeAsync (CUdeviceptr p, CUstream s)
{
  PASS (cuMemFreeAsync, p, s);
  if (capturing (s))
    return real_cuMemFreeAsync (p, s);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeAsync (p, s), t0, p, 1, s);
}

/* Virtual memory management (PyTorch expandable segments): a mapping is
 * what kernels address, so a mapped range is recorded as one device
 * allocation and its unmapping as the free. */
CUresult
cuMemMap (CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
          unsigned long long flags)
{
  PASS (cuMemMap, p, size, offset, h, flags);
  uint64_t t0 = cap_now ();
  return do_alloc (real_cuMemMap (p, size, offset, h, flags), t0, p, size, CAP_MEM_DEVICE, 0, NULL);
}

CUresult
cuMemUnmap (CUdeviceptr p, size_t size)
{
  PASS (cuMemUnmap, p, size);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemUnmap (p, size);
  if (r == CUDA_SUCCESS)
    cap_free_range (t0, cap_now (), p, p + size);
  return r;
}

CUresult
cuMemPrefetchAsync (CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
  PASS (cuMemPrefetchAsync, p, n, dev, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync (p, n, dev, s);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_prefetch (t0, cap_now (), p, n, dev == CU_DEVICE_CPU, (uintptr_t) s);
  return r;
}

CUresult
cuMemPrefetchAsync_v2 (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{
  PASS (cuMemPrefetchAsync_v2, p, n, loc, flags, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_v2 (p, n, loc, flags, s);
  if (r == CUDA_SUCCESS && !capturing (s))
    cap_prefetch (t0, cap_now (), p, n,
                  loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
                  || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, (uintptr_t) s);
  return r;
}

/* Advice shapes where the driver places managed pages; the trace has no op
 * for it (counted, and said at exit). */
CUresult
cuMemAdvise (CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev)
{
  PASS (cuMemAdvise, p, n, advice, dev);
  CUresult r = real_cuMemAdvise (p, n, advice, dev);
  if (r == CUDA_SUCCESS)
    cap_advise ();
  return r;
}

CUresult
cuMemAdvise_v2 (CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
  PASS (cuMemAdvise_v2, p, n, advice, loc);
  CUresult r = real_cuMemAdvise_v2 (p, n, advice, loc);
  if (r == CUDA_SUCCESS)
    cap_advise ();
  return r;
}

/* ---- per-thread default stream variants (_ptds, _ptsz) ----
 * Each records as its base function does, on the stream it runs on (PT,
 * PTDS: hooks-priv.h). */

CUresult
cuMemPrefetchAsync_ptsz (CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
  PASS (cuMemPrefetchAsync_ptsz, p, n, dev, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_ptsz (p, n, dev, s);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_prefetch (t0, cap_now (), p, n, dev == CU_DEVICE_CPU, (uintptr_t) PT (s));
  return r;
}

CUresult
cuMemPrefetchAsync_v2_ptsz (CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags,
                            CUstream s)
{
  PASS (cuMemPrefetchAsync_v2_ptsz, p, n, loc, flags, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemPrefetchAsync_v2_ptsz (p, n, loc, flags, s);
  if (r == CUDA_SUCCESS && !capturing (PT (s)))
    cap_prefetch (t0, cap_now (), p, n,
                  loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
                  || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, (uintptr_t) PT (s));
  return r;
}

CUresult
cuMemAllocAsync_ptsz (CUdeviceptr *dptr, size_t bytes, CUstream s)
{
  PASS (cuMemAllocAsync_ptsz, dptr, bytes, s);
  if (capturing (PT (s)))
    return real_cuMemAllocAsync_ptsz (dptr, bytes, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocAsync_ptsz (dptr, bytes, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, PT (s));
}

CUresult
cuMemAllocFromPoolAsync_ptsz (CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
  PASS (cuMemAllocFromPoolAsync_ptsz, dptr, bytes, pool, s);
  if (capturing (PT (s)))
    return real_cuMemAllocFromPoolAsync_ptsz (dptr, bytes, pool, s);
  uint64_t t0 = cap_now ();
  CUresult r = real_cuMemAllocFromPoolAsync_ptsz (dptr, bytes, pool, s);
  return do_alloc (r, t0, r == CUDA_SUCCESS ? *dptr : 0, bytes, CAP_MEM_DEVICE, 1, PT (s));
}

CUresult
cuMemFreeAsync_ptsz (CUdeviceptr p, CUstream s)
{
  PASS (cuMemFreeAsync_ptsz, p, s);
  if (capturing (PT (s)))
    return real_cuMemFreeAsync_ptsz (p, s);
  uint64_t t0 = cap_now ();
  return do_free (real_cuMemFreeAsync_ptsz (p, s), t0, p, 1, PT (s));
}
