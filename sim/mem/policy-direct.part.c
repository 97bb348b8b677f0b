/* policy-direct.part.c — the `direct` oversubscription policy (5.6): a
 * device allocation that does not fit is placed below (the first tier with
 * room, else the host) and stays there; kernels reach it over the link or
 * the tier's resource (zero-copy, as cudaHostAlloc'ed or CXL memory is
 * used). Nothing moves, so no LRU is kept.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static gboolean
nofit_direct (Sim *s, Alloc *a, GPtrArray *jobs)
{
  a->fixed = TRUE;
  return place_below (s, a);
}

static const Policy policy_direct = {
  .name = "direct",
  .nofit = nofit_direct,
};
