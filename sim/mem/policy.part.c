/* policy.part.c — the oversubscription policies (5.6): what happens when an allocation does not fit.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit, so the hot paths inline across parts; not compiled
 * alone). */
#include "engine/sim-priv.h"

/* ---- oversubscription policies (5.6) ---- */

static gboolean
nofit_oom (Sim *s, Alloc *a, GPtrArray *jobs)
{
  return FALSE;
}

static gboolean
place_below (Sim *s, Alloc *a)
{
  int loc = tier_with_room (s, a->charge);
  if (loc < 0)
    return FALSE;
  a->loc = loc;
  loc_add (s, loc, a->charge);
  return TRUE;
}

static gboolean
nofit_spill (Sim *s, Alloc *a, GPtrArray *jobs)
{
  guint64 need = a->charge - loc_free (s, LOC_DEVICE);
  if (a->charge <= s->loc_cap[LOC_DEVICE] && spill_for (s, need, &a, 1, jobs))
    {
      a->loc = LOC_DEVICE;
      loc_add (s, LOC_DEVICE, a->charge);
      s->dev_nonmanaged += a->charge;
      lru_touch (s, a);
      return TRUE;
    }
  /* It cannot fit now: it starts below, and is swapped in when used. */
  return place_below (s, a);
}

static gboolean
nofit_direct (Sim *s, Alloc *a, GPtrArray *jobs)
{
  a->fixed = TRUE;
  return place_below (s, a);
}

static const Policy policies[VS_OVERSUB_COUNT] = {
  [VS_OVERSUB_OOM] = { nofit_oom },
  [VS_OVERSUB_SPILL] = { nofit_spill },
  [VS_OVERSUB_DIRECT] = { nofit_direct },
  [VS_OVERSUB_UVM] = { nofit_oom },  /* device allocations are managed */
};
