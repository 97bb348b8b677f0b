/* import.h — importers of other tools' traces into vramsim traces
 * (docs/importers.md). Each writes OUT_PATH through a VsTraceWriter (so a
 * failed import leaves no file) with a header naming the device and the
 * matching preset. Bad input is a GError naming the file and the event. */
#pragma once

#include <glib.h>

/* PyTorch profiler (Kineto) chrome-trace JSON, plain or gzipped. */
gboolean import_kineto_detect (const char *path);
gboolean import_kineto (const char *path, const char *out_path, GError **error);

/* Nsight Systems SQLite export (nsys export --type sqlite). */
gboolean import_nsys_detect (const char *path);
gboolean import_nsys (const char *path, const char *out_path, GError **error);

/* PyTorch memory snapshot pickle (torch.cuda.memory._dump_snapshot()), one
 * device (-1: the one with the most recorded actions). */
gboolean import_snapshot_detect (const char *path);
gboolean import_snapshot (const char *path, const char *out_path, int device, GError **error);
