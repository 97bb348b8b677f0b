/* hooks-batch.c — hook mode's batched copies (CUDA 12.8's
 * cuMemcpyBatchAsync and cuMemcpy3DBatchAsync, CUDA 13's _v2): one copy
 * event per entry, on the call's stream (also for CUPTI mode:
 * hooks_batch_ops, hooks_batch3d_ops). See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- batched copies: one copy event per entry, on the call's stream ----
 * The event pair brackets the whole batch; its time is split over the
 * entries in proportion to their bytes. */

void
hooks_batch_ops (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t n, CapCopyOp *out)
{
  for (size_t i = 0; i < n; i++)
    out[i] = (CapCopyOp) { CAP_DIR_AUTO, (uintptr_t) dsts[i], (uintptr_t) srcs[i], sizes[i] };
}

/* Bytes per element of a CUDA array (its format times its channels); 1
 * when the driver cannot say or the format is not a plain one. */
static uint64_t
array_elem_bytes (CUarray a)
{
  CUDA_ARRAY3D_DESCRIPTOR d;
  if (!real_cuArray3DGetDescriptor_v2 || real_cuArray3DGetDescriptor_v2 (&d, a) != CUDA_SUCCESS)
    return 1;
  uint64_t ch = d.NumChannels ? d.NumChannels : 1;
  switch (d.Format) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return ch;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2 * ch;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4 * ch;
#if CUDA_VERSION >= 11050
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 1;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2:
  case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return 2;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4:
  case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: return 4;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 8;
#endif
  default: return 1;
  }
}

#if CUDA_VERSION >= 12080
/* One CUDA_MEMCPY3D_BATCH_OP: its extent is in elements (1 byte for
 * pointer-to-pointer copies, the array's element size when an operand is
 * an array); the direction from what the two operands are. */
void
hooks_batch3d_ops (const void *ops, size_t n, CapCopyOp *out)
{
  resolve ();
  const CUDA_MEMCPY3D_BATCH_OP *op = ops;
  for (size_t i = 0; i < n; i++, op++) {
    int sa = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY, da = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
    uint64_t esz = sa ? array_elem_bytes (op->src.op.array.array)
                 : da ? array_elem_bytes (op->dst.op.array.array) : 1;
    out[i] = (CapCopyOp) { CAP_DIR_AUTO, da ? CAP_ARRAY : (uintptr_t) op->dst.op.ptr.ptr,
                           sa ? CAP_ARRAY : (uintptr_t) op->src.op.ptr.ptr,
                           esz * op->extent.width * op->extent.height * op->extent.depth };
  }
}

/* Records N copies (OPS, malloc'd by the caller) made by CALL on S. */
#define BATCH(call, s, n, fill) \
  do { \
    if (capturing (s) || (n) == 0 || (n) > UINT32_MAX) \
      return call; \
    CapCopyOp *ops_ = malloc ((n) * sizeof *ops_); \
    if (!ops_) \
      return call; \
    fill; \
    Timer tm; \
    uint64_t t0 = cap_now (); \
    timer_begin (&tm, s); \
    CUresult r_ = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r_ != CUDA_SUCCESS) { \
      free (ops_); \
      timer_cancel (&tm); \
      return r_; \
    } \
    uint32_t cnt_; \
    uint64_t first_ = cap_copies (t0, t1, ops_, (uint32_t) (n), (uintptr_t) (s), 1, tm.ok, 0, &cnt_); \
    free (ops_); \
    timer_commit_split (&tm, first_, cnt_, 1); \
    return r_; \
  } while (0)

CUresult
cuMemcpyBatchAsync (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                    CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs, size_t *fail_idx,
                    CUstream s)
{
  PASS (cuMemcpyBatchAsync, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s);
  BATCH (real_cuMemcpyBatchAsync (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s),
         s, count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpyBatchAsync_ptsz (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                         CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs,
                         size_t *fail_idx, CUstream s)
{
  PASS (cuMemcpyBatchAsync_ptsz, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, fail_idx, s);
  BATCH (real_cuMemcpyBatchAsync_ptsz (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs,
                                       fail_idx, s),
         PT (s), count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpy3DBatchAsync (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                      unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync, n, ops, fail_idx, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync (n, ops, fail_idx, flags, s), s, n,
         hooks_batch3d_ops (ops, n, ops_));
}

CUresult
cuMemcpy3DBatchAsync_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                           unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_ptsz, n, ops, fail_idx, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_ptsz (n, ops, fail_idx, flags, s), PT (s), n,
         hooks_batch3d_ops (ops, n, ops_));
}
#endif

#if CUDA_VERSION >= 13000
CUresult
cuMemcpyBatchAsync_v2 (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                       CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs, CUstream s)
{
  PASS (cuMemcpyBatchAsync_v2, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s);
  BATCH (real_cuMemcpyBatchAsync_v2 (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s), s,
         count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpyBatchAsync_v2_ptsz (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                            CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t n_attrs,
                            CUstream s)
{
  PASS (cuMemcpyBatchAsync_v2_ptsz, dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s);
  BATCH (real_cuMemcpyBatchAsync_v2_ptsz (dsts, srcs, sizes, count, attrs, attrs_idxs, n_attrs, s),
         PT (s), count, hooks_batch_ops (dsts, srcs, sizes, count, ops_));
}

CUresult
cuMemcpy3DBatchAsync_v2 (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_v2, n, ops, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_v2 (n, ops, flags, s), s, n, hooks_batch3d_ops (ops, n, ops_));
}

CUresult
cuMemcpy3DBatchAsync_v2_ptsz (size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                              CUstream s)
{
  PASS (cuMemcpy3DBatchAsync_v2_ptsz, n, ops, flags, s);
  BATCH (real_cuMemcpy3DBatchAsync_v2_ptsz (n, ops, flags, s), PT (s), n,
         hooks_batch3d_ops (ops, n, ops_));
}
#endif
