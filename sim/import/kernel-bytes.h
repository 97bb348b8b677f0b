/* kernel-bytes.h — per-kernel DRAM traffic from a table (an Nsight Compute
 * CSV export or NAME,BYTES lines), for `vramsim convert --kernel-bytes`.
 * Captured kernels carry no `bytes`: the replay then estimates traffic from
 * the allocations a kernel touches, which undercounts kernels that read and
 * write the same buffer (docs/validation.md, "Contention on the GPU"). */
#pragma once

#include <glib.h>

#include "trace/event.h"

typedef struct VsKernelBytes VsKernelBytes;

/* Reads PATH. Nsight Compute's `--csv` output (a header row naming "Kernel
 * Name", "Metric Name", "Metric Unit" and "Metric Value") gives the mean
 * of each kernel's `dram__bytes.sum`; otherwise every non-empty line not
 * starting with '#' is NAME,BYTES (NAME quoted as CSV when it holds a
 * comma; BYTES a size with an optional unit, "3GiB"). Errors name the file
 * and line. */
VsKernelBytes *kernel_bytes_load (const char *path, GError **error);
void kernel_bytes_free (VsKernelBytes *kb);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsKernelBytes, kernel_bytes_free)

/* Sets EV->bytes of a kernel event that has none from the table: by its
 * exact name, else by its base name (the function name without return
 * type and parameter list). Returns whether it did. Counts every kernel
 * seen and every one set. */
gboolean kernel_bytes_apply (VsKernelBytes *kb, VsEvent *ev);
void kernel_bytes_counts (const VsKernelBytes *kb, guint64 *kernels, guint64 *set);
