/* merge-tensor.h — a vramcap driver-level trace joined with the PyTorch
 * memory snapshot of the same run (docs/capture.md "Tensor-level
 * allocations"): the caching allocator's tensors replace the segments they
 * explain. */
#pragma once

#include <glib.h>

#include "import/snapshot-parts.h"

/* Counts the merge reports (also written to the header's "tensor_merge"). */
typedef struct {
  guint64 tensors;            /* tensor allocations written */
  guint64 segments;           /* driver allocations explained (replaced) */
  guint64 driver_kept;        /* device allocations no tensor explains */
  guint64 anchors;            /* snapshot segment events matched to driver allocations */
  gint64 offset_ns;           /* trace t = time_us * 1000 + offset_ns */
  gint64 offset_vs_side_ns;   /* offset_ns less the sidecar's clock (-REALTIME at t 0) */
  guint64 anchor_dev_ns;      /* largest |anchor - offset| among the anchors */
  guint64 refs, refs_exact;   /* segment references remapped; of them inside the tensor's life */
  guint64 stretched;          /* tensor lives widened to cover a reference */
  guint64 stretch_max_ns;
  guint64 unresolved;         /* references no tensor could take (dropped) */
  guint64 first_tensor_id;
  guint64 maps_tiled;         /* segment_maps explained by several driver mappings (expandable segments) */
  guint64 mappings_tiled;     /* the mappings in them */
  guint dumps, gaps;          /* snapshot dumps joined (snapshot-parts.h); gaps between them */
} VsMergeStats;

/* Writes OUT_PATH: TRACE_PATH (a vramcap trace) with the tensors of
 * SNAPSHOT_PATH (device DEVICE, -1: the busiest) in place of the segment
 * allocations they explain. ADDRS_PATH is vramcap's address sidecar (NULL:
 * TRACE_PATH.addrs). STATS may be NULL. OUT_PATH may be TRACE_PATH. The
 * part dumps beside SNAPSHOT_PATH (SNAPSHOT_PATH.part1, ...) are joined
 * first (snapshot_load_parts). */
gboolean merge_tensor (const char *snapshot_path, int device, const char *trace_path,
                       const char *addrs_path, const char *out_path, VsMergeStats *stats,
                       GError **error);

/* merge_tensor with the snapshot already read (and joined: JOIN, NULL for
 * one dump); SNAPSHOT_PATH names it in the header and in errors. */
gboolean merge_tensor_snapshot (const VsSnapshot *s, const VsSnapJoin *join, const char *snapshot_path,
                                const char *trace_path, const char *addrs_path, const char *out_path,
                                VsMergeStats *stats, GError **error);

/* Copies TRACE_PATH to OUT_PATH with "allocations": "driver" and
 * "tensor_note": NOTE in the header (why there are no tensors). */
gboolean merge_tensor_note (const char *trace_path, const char *note, const char *out_path,
                            GError **error);

/* The cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync),
 * which keeps no memory history: every tensor is one cudaMallocAsync, so
 * the trace's stream-ordered allocations already are the tensors. Copies
 * TRACE_PATH with "allocations": "tensor", allocator_settings {"kind":
 * "async", PYTORCH_CUDA_ALLOC_CONF: ALLOC_CONF (may be NULL)}, NOTE (may be
 * NULL) as "tensor_note", and the counts in "tensor_merge" (STATS: tensors =
 * stream-ordered device allocations, driver_kept = the other device ones). */
gboolean merge_tensor_async (const char *trace_path, const char *alloc_conf, const char *note,
                             const char *out_path, VsMergeStats *stats, GError **error);
