/* import-priv.h — what the importers (import-kineto.c, import-nsys.c) share. */
#pragma once

#include <glib.h>

#include "trace/event.h"

/* Ids of the synthetic allocations docs/importers.md describes, far above
 * the ids given to the source's own allocations (1, 2, ...). */
#define IMPORT_PREEXISTING_ID (G_GUINT64_CONSTANT (1) << 40)
#define IMPORT_UNTRACKED_ID (IMPORT_PREEXISTING_ID + 1)
#define IMPORT_PINNED_BASE (IMPORT_PREEXISTING_ID + 16)

/* One event to write, with what import_write() resolves at write time. */
typedef struct {
  VsEvent ev;
  gint64 seq;            /* tie-break among equal t: order of creation */
  gboolean pinned_host;  /* copy: the host side is pinned (a staging buffer is made) */
  gboolean stream_unknown; /* sync: the stream the thread last launched on */
  gboolean has_shape;    /* kernel: shape holds what the source says (ev.shape is set at write time) */
  VsKernelShape shape;
} ImportOut;

/* The preset for a device name ("NVIDIA A100-SXM4-80GB" -> "a100-80g"), or NULL. */
const char *import_preset_for_device (const char *name);
/* S as valid UTF-8 (the trace readers reject anything else): S itself, or
 * a copy in CHUNK with each invalid byte replaced by U+FFFD. NULL for NULL. */
const char *import_utf8 (GStringChunk *chunk, const char *s);
/* Appends an event with absent optional fields; returns it (valid until the next push). */
ImportOut *import_push (GArray *outs, guint64 t, guint32 tid, VsOp op);
/* Sorts by (t, seq). */
void import_sort (GArray *outs);
/* Writes sorted OUTS to OUT_PATH through a VsTraceWriter, adding the
 * synthetic allocations. */
gboolean import_write (GArray *outs, const char *out_path, const char *device, const char *tool, GError **error);
