/* snapshot-parts.h — the dumps of one PyTorch memory history joined into
 * one window (docs/capture.md "Tensor-level allocations"): vramcap's hook
 * dumps SNAP.part1, SNAP.part2, ... before the ring buffer wraps, then SNAP
 * at exit; each holds the last N actions at its dump, so consecutive dumps
 * overlap, or, when the hook looked too late, entries were lost between
 * them. */
#pragma once

#include "import/import-snapshot.h"

typedef struct {
  guint dumps;           /* files joined (the parts and the final one) */
  guint64 overlap;       /* actions found in two consecutive dumps, kept once */
  guint gaps;            /* consecutive dumps with no action in common */
  guint64 gap_actions;   /* actions made up at the gaps (resynchronising the state) */
  char *note;            /* (owned) what the gaps lost, for the header's warnings; NULL: none */
} VsSnapJoin;

void snapshot_join_clear (VsSnapJoin *j);

/* Joins PARTS[0..N) (earliest first; all of one device), consuming them:
 * PARTS[0]'s start state, every action once, PARTS[N-1]'s final state.
 * Two consecutive dumps share the longest run of actions that ends the
 * earlier and begins the later (compared by action, address, size, stream
 * and time_us). Where they share none, entries may have been lost between
 * them: the state the earlier ends with is compared with the later's
 * rewound start, and the differences are made up as synthetic actions at
 * the later's first time (blocks freed, segments freed or unmapped,
 * segments allocated or mapped, blocks allocated; the first segment
 * freed is marked as an empty_cache), counted in J. NAMES
 * (may be NULL) name the dumps in J's note. */
VsSnapshot *snapshot_join (VsSnapshot **parts, guint n, const char *const *names, VsSnapJoin *j);

/* PATH and the parts beside it (every PATH.partK, by K: a missing K is a
 * gap like any other), joined; DEVICE as snapshot_load (the final dump picks it for all). */
VsSnapshot *snapshot_load_parts (const char *path, int device, VsSnapJoin *j, GError **error);
