/* policy-oom.part.c — the `oom` oversubscription policy (5.6, the default):
 * a device allocation that does not fit, once resident managed memory has
 * been evicted for it (as the driver does for cudaMalloc), is an
 * out-of-memory: the replay stops there (or, with --keep-going, overflows
 * the device and goes on). Device and managed memory are always reached
 * on the device.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static gboolean
nofit_oom (Sim *s, Alloc *a, GPtrArray *jobs)
{
  return FALSE;
}

static const Policy policy_oom = {
  .name = "oom",
  .dev_only = TRUE,
  .nofit = nofit_oom,
};
