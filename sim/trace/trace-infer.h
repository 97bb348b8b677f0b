/* trace-infer.h — what a kernel that names no allocation touches, inferred
 * from the events around it (docs/model.md section 6b).
 *
 * Profiler and Nsight imports give kernels without `reads`, `writes` or
 * `touches`: the replay would never bring spilled memory back nor fault a
 * managed page in for them, and spilling would cost nothing. A VsInfer
 * reads a trace ahead of the replay (a bounded window) and gives each such
 * kernel the allocations a PyTorch training step uses around it:
 *
 *   made   what its host thread allocated since the thread's previous
 *          kernel (the op's outputs and workspace: a framework allocates
 *          them, then launches the kernels that write them), as written;
 *          not what a thread allocated before its first kernel (model
 *          set-up: parameters, buffers, a profiler's "preexisting" block);
 *   freed  what its thread frees right after it, before the thread does
 *          anything else (the last use of a tensor: its storage is freed
 *          when the last reference drops, after the last op using it was
 *          launched: saved activations after their backward kernel), as
 *          read;
 *   step   every allocation live when a step begins, once in that step,
 *          spread evenly over the step's kernels in the order they were
 *          made (parameters, gradients, optimizer state: read by forward,
 *          backward and the optimizer every step), as read. The step is
 *          the repeated mark that covers the most captured time (a range's
 *          own span, a point's time to its next occurrence), once it
 *          covers at least half the time between its first and last start
 *          (ProfilerStep, a synthetic `step`; not nccl:all_reduce nor
 *          "## forward ##"), on the kernels of the step before.
 *
 * Device and managed allocations of non-zero size only, and not an
 * importer's `preexisting` block (the Kineto importer's memory live before
 * the window, docs/importers.md: many tensors of unknown layout in one
 * allocation, which a spill would move whole: its cost is left out, and
 * the figures stay lower bounds). Each rule
 * understates what a real step touches (an op also reads its inputs, a
 * parameter is read in forward and backward and written by the
 * optimizer), so costs from inferred accesses are lower bounds.
 *
 * Mode auto infers only when none of the trace's first kernels (up to 64,
 * read ahead) names an allocation: a trace that names its accesses
 * passes through untouched. Mode always drops what kernels name and
 * infers for every kernel (the check against known touches,
 * docs/validation.md).
 *
 * Memory stays bounded by live state: the window holds at most 4,096
 * events (a kernel whose thread stays silent longer is emitted with the
 * frees seen so far), the table the live allocations. */
#pragma once

#include "trace/trace.h"

typedef struct _VsInfer VsInfer;

/* Mode auto: kernels read before deciding. vramcap names the allocations
 * of a kernel's pointer arguments (docs/capture.md), so a capture's first
 * kernels name some; an import's never do. */
#define VS_INFER_DECIDE 64

typedef enum { VS_INFER_AUTO, VS_INFER_ALWAYS } VsInferMode;

typedef struct {
  gboolean on;            /* accesses are inferred (auto: no early kernel named one) */
  guint64 kernels;        /* kernels given inferred accesses (at least one) */
  guint64 made, freed, step;   /* accesses given, by rule */
  guint64 steps;          /* step starts at which live memory was scheduled */
  const char *step_mark;  /* the step's mark name (the reader's string), or NULL */
  guint64 forced;         /* kernels emitted before their thread's frees ended (the window's bound) */
} VsInferStats;

/* A reader of R (which must outlive it) that infers as MODE says. */
VsInfer *infer_new (VsTraceReader *r, VsInferMode mode);
/* (transfer none) A reader whose events are infer_next's, with R's path
 * and largest group but no header (R's is the trace's); owned by IN. */
VsTraceReader *infer_reader (VsInfer *in);
void infer_free (VsInfer *in);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsInfer, infer_free)

/* As trace_next: the next event of R, valid until the next call. */
gboolean infer_next (VsInfer *in, VsEvent *ev, GError **error);
/* The accesses inferred for the event infer_next returned last (0 for all
 * but kernels that name none, or while inference is off): allocation ids
 * and, for each, whether it is written (else read). Valid until the next
 * infer_next. */
guint infer_accesses (const VsInfer *in, const guint64 **ids, const guint8 **writes);
/* TRUE once inference is off and every event read ahead has been
 * returned: R may be read directly from now on (infer_stats still holds). */
gboolean infer_passthrough (const VsInfer *in);
void infer_stats (const VsInfer *in, VsInferStats *st);
