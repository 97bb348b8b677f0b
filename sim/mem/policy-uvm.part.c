/* policy-uvm.part.c — the `uvm` oversubscription policy (5.6, 5.7): every
 * device allocation is made managed memory (as if cudaMallocManaged), so
 * it faults in when used and is evicted LRU first (managed.part.c); one
 * that cannot fit even after eviction is an out-of-memory, as under `oom`.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static const Policy policy_uvm = {
  .name = "uvm",
  .dev_only = TRUE,
  .device_is_managed = TRUE,
  .nofit = nofit_oom,
};
