/* hooks.h — hook mode (hooks.c and its hooks-*.c, over hooks-priv.h):
 * interposed driver API entry points, and what CUPTI mode uses of them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"

/* Most parameter words looked at per kernel launch. */
#define HOOKS_MAX_WORDS 4096

/* Makes the wrappers record (hook mode proper, or CUPTI's fallback). */
void hooks_start (void);
/* Fills the header's device fields from device 0 (once). */
void hooks_query_device (void);
/* The kernel name's string id and the pointer-sized words of a launch's
 * parameters (WORDS holds HOOKS_MAX_WORDS), for CUPTI mode too. SHAPE
 * (NULL: not wanted) comes in with the launch's grid, block and dynamic
 * shared memory in smem, and goes out with the function's registers per
 * thread and static + dynamic shared memory (cuFuncGetAttribute, read
 * once per function; 0 where the driver does not say). */
uint32_t hooks_kernel_words (void *f, void **params, void **extra, uint64_t *words, size_t *nw,
                             CapShape *shape);

/* Whether stream S (a handle; CU_STREAM_PER_THREAD and NULL included) is
 * being captured into a graph: work issued there does not run then, and is
 * recorded when the graph is launched. */
int hooks_stream_capturing (uintptr_t s);

/* Graphs (both modes): the kernel nodes of an instantiated graph are kept
 * by exec, with their names, parameter words and, when NODE_ID_CB is set
 * (CUPTI mode: cuptiGetGraphNodeId), their node ids. */
extern uint64_t (*hooks_graph_node_id_cb) (void *node);
void hooks_graph_remember (void *exec, void *graph);
void hooks_graph_forget (void *exec);
/* Records one kernel event per kernel node of EXEC, in node order, all at
 * T0 except the last (host_ns T1 - T0), with PENDING and CORR. Returns the
 * count and the first event's seq in *FIRST (UINT64_MAX if none); with
 * NODE_IDS, a malloc'd array of the nodes' ids (the caller frees it). */
uint32_t hooks_graph_kernels (void *exec, uintptr_t stream, uint64_t t0, uint64_t t1, int pending,
                              uint64_t corr, uint64_t *first, uint64_t **node_ids);
/* Direction, destination, source and size of a CUDA_MEMCPY2D (IS3D 0),
 * CUDA_MEMCPY3D (1) or CUDA_MEMCPY3D_PEER (2) copy, as hook mode records
 * it (a CUDA array side is CAP_ARRAY). */
void hooks_copy_desc (const void *desc, int is3d, int *dir, uintptr_t *dst, uintptr_t *src,
                      uint64_t *bytes);
/* The copies of a cuMemcpyBatchAsync (DSTS, SRCS, SIZES; direction
 * inferred) and of a cuMemcpy3DBatchAsync (N CUDA_MEMCPY3D_BATCH_OPs at
 * OPS: extent in elements, an array operand's element size looked up), as
 * hook mode records them, into OUT (N entries). */
void hooks_batch_ops (unsigned long long *dsts, unsigned long long *srcs, size_t *sizes, size_t n,
                      CapCopyOp *out);
void hooks_batch3d_ops (const void *ops, size_t n, CapCopyOp *out);
