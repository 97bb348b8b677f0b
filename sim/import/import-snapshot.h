/* import-snapshot.h — PyTorch memory snapshots
 * (torch.cuda.memory._dump_snapshot() pickles) read into one device's
 * allocator history: the state at the window's first event, rebuilt by
 * rewinding the final `segments` through the ring buffer of actions (as
 * PyTorch's memory_viz does), then the actions. The importer
 * (import_snapshot, import.h) writes them as a vramsim trace; the
 * validation test replays them through the allocator model. */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#include "mem/allocator.h"

typedef enum {
  SNAP_ALLOC, SNAP_FREE_REQUESTED, SNAP_FREE_COMPLETED, SNAP_SEGMENT_ALLOC, SNAP_SEGMENT_FREE,
  SNAP_SEGMENT_MAP, SNAP_SEGMENT_UNMAP, SNAP_SNAPSHOT, SNAP_OOM, SNAP_ACTION_COUNT
} VsSnapActionKind;

typedef struct {
  guint8 action;        /* VsSnapActionKind */
  gboolean user;        /* segment_free/unmap: the program's empty_cache, not the allocator */
  gboolean empty_cache; /* the first action of such a release */
  gboolean synthetic;   /* made up by snapshot_join at a gap between dumps (snapshot-parts.h) */
  guint64 addr, size, stream;
  guint64 t_us;         /* time_us, or 0 when the file has none */
  const char *frame;    /* innermost user frame "file.py:line function", or NULL */
} VsSnapAction;

typedef struct {
  guint64 addr, size, stream;
  gboolean small, expandable;
} VsSnapSegment;

typedef struct {
  guint64 addr, size, requested, stream;  /* size: the block's (what allocated counts) */
  const char *frame;
} VsSnapBlock;

typedef struct {
  int device, n_devices;
  gboolean has_settings;       /* allocator_settings was in the file */
  VsAllocConfig settings;      /* kind pytorch, the file's settings (defaults when absent) */
  char *alloc_conf;            /* PYTORCH_CUDA_ALLOC_CONF as recorded, or NULL */
  GArray *start_segments;      /* VsSnapSegment at the window's start, by address */
  GArray *start_blocks;        /* VsSnapBlock allocated then, by address */
  GArray *actions;             /* VsSnapAction in order */
  GArray *final_segments;      /* VsSnapSegment at the dump */
  guint64 start_reserved, final_reserved;
  gboolean has_time;
  guint64 rewind_mismatches;   /* actions the final state did not explain (ring buffer edges) */
  GStringChunk *strings;
} VsSnapshot;

/* Reads PATH for DEVICE (-1: the device with the most recorded actions,
 * else the most segments). */
VsSnapshot *snapshot_load (const char *path, int device, GError **error);
/* PATH as if it had been dumped right after its action TO - 1 with a ring
 * buffer holding actions [FROM, TO) only: the state at TO is rewound from
 * the final one. For tests of the join of part dumps (snapshot-parts.h). */
VsSnapshot *snapshot_load_window (const char *path, int device, guint from, guint to, GError **error);
void snapshot_free (VsSnapshot *s);

/* Segments by address in a GTree (VsSnapSegment*, owned): O(log n) per
 * action, for rewinding a dump (import-snapshot.c) and playing parts
 * forward (snapshot-parts.c). put replaces a segment at the same address. */
GTree *snapshot_seg_tree_new (void);
void snapshot_seg_tree_put (GTree *t, const VsSnapSegment *g);
/* The node of the last segment starting at or before ADDR, or NULL. */
GTreeNode *snapshot_seg_tree_at_or_before (GTree *t, guint64 addr);
/* The segment holding ADDR, or NULL. */
VsSnapSegment *snapshot_seg_tree_find (GTree *t, guint64 addr);
/* Appends the segments, by address, to OUT (of VsSnapSegment). */
void snapshot_seg_tree_collect (GTree *t, GArray *out);
/* Marks the program's releases of the cache (empty_cache, user) afresh;
 * synthetic actions keep the flags snapshot_join gave them. */
void snapshot_classify_frees (VsSnapshot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsSnapshot, snapshot_free)
const char *snapshot_action_name (guint action);
/* (transfer full) The header's "allocator_settings" and "allocator_state"
 * (the window's first state; its blocks are ids FIRST_ID, FIRST_ID + 1, ...
 * in address order), as import_snapshot writes them; also used by the
 * tensor merge (merge-tensor.h). */
cJSON *snapshot_settings_json (const VsSnapshot *s);
cJSON *snapshot_state_json (const VsSnapshot *s, guint64 first_id);
