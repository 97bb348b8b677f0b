/* loc.part.c — locations (device, tiers, host): their capacity and use, and
 * the resource paths that reach them.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static const char *
loc_name (Sim *s, int loc)
{
  if (loc == LOC_DEVICE)
    return config_builtin_names[VS_BUILTIN_DEVICE];
  if (loc == s->mem.loc_host)
    return config_builtin_names[VS_BUILTIN_HOST];
  return s->core.cfg->tiers[loc - 1].name;
}

/* Residency changes: the series integrates the old value, then it changes.
 * Sums saturate: --keep-going may overflow a device with absurd sizes. */
static void
loc_set (Sim *s, int loc, guint64 value)
{
  if (value == s->mem.loc_used[loc])
    return;
  if (G_UNLIKELY (s->out.series))
    series_resident (s, loc);
  s->mem.loc_used[loc] = value;
  if (value > s->mem.loc_peak[loc])
    s->mem.loc_peak[loc] = value;
  if (loc == LOC_DEVICE && value > s->mem.loc_cap[loc] && value - s->mem.loc_cap[loc] > s->mem.overflow_peak)
    s->mem.overflow_peak = value - s->mem.loc_cap[loc];
  if (G_UNLIKELY (s->out.timeline))
    timeline_resident (s, loc, value);
}

static void
loc_add (Sim *s, int loc, guint64 bytes)
{
  guint64 v = s->mem.loc_used[loc];
  loc_set (s, loc, bytes > G_MAXUINT64 - v ? G_MAXUINT64 : v + bytes);
}

static void
loc_sub (Sim *s, int loc, guint64 bytes)
{
  /* Less than BYTES in use only after a saturated sum (absurd sizes). */
  loc_set (s, loc, s->mem.loc_used[loc] >= bytes ? s->mem.loc_used[loc] - bytes : 0);
}

static guint64
loc_free (Sim *s, int loc)
{
  return s->mem.loc_used[loc] >= s->mem.loc_cap[loc] ? 0 : s->mem.loc_cap[loc] - s->mem.loc_used[loc];
}

/* Paths: the resources a flow to or from a location crosses. */

static guint
read_path (Sim *s, int loc, guint *p)
{
  if (loc == LOC_DEVICE || (loc == s->mem.loc_host && s->core.cfg->unified))
    return p[0] = s->gpu.r_dev, 1;
  if (loc == s->mem.loc_host)
    return p[0] = s->gpu.r_host, p[1] = s->gpu.r_h2d, 2;
  const VsTier *t = &s->core.cfg->tiers[loc - 1];
  p[0] = s->gpu.r_tier0 + loc - 1;
  if (t->attach == VS_ATTACH_DEVICE || s->core.cfg->unified)
    return 1;
  return p[1] = s->gpu.r_h2d, 2;
}

static guint
write_path (Sim *s, int loc, guint *p)
{
  if (loc == LOC_DEVICE || (loc == s->mem.loc_host && s->core.cfg->unified))
    return p[0] = s->gpu.r_dev, 1;
  if (loc == s->mem.loc_host)
    return p[0] = s->gpu.r_d2h, p[1] = s->gpu.r_host, 2;
  const VsTier *t = &s->core.cfg->tiers[loc - 1];
  if (t->attach == VS_ATTACH_DEVICE || s->core.cfg->unified)
    return p[0] = s->gpu.r_tier0 + loc - 1, 1;
  return p[0] = s->gpu.r_d2h, p[1] = s->gpu.r_tier0 + loc - 1, 2;
}

/* Path of a host-side copy to or from LOC when a device allocation lies
 * below the device: a host-attached tier or the host are reached without
 * the link, a device-attached tier through it. */
static guint
host_copy_path (Sim *s, int loc, gboolean h2d, guint *p)
{
  if (loc == s->mem.loc_host)
    return p[0] = s->gpu.r_host, 1;
  const VsTier *t = &s->core.cfg->tiers[loc - 1];
  p[0] = s->gpu.r_tier0 + loc - 1;
  if (s->core.cfg->unified)
    return 1;
  if (t->attach == VS_ATTACH_DEVICE)
    return p[1] = h2d ? s->gpu.r_h2d : s->gpu.r_d2h, 2;
  return p[1] = s->gpu.r_host, 2;
}

/* Path of a move between device memory and LOC: out (device -> loc) or in. */
static guint
move_path (Sim *s, int loc, gboolean out, guint *p)
{
  guint n = out ? write_path (s, loc, p + 1) : read_path (s, loc, p);
  if (out)
    p[0] = s->gpu.r_dev;
  else
    p[n] = s->gpu.r_dev;
  return n + 1;
}

static int
tier_with_room (Sim *s, guint64 bytes)
{
  for (int loc = 1; loc <= s->mem.loc_host; loc++)
    if (bytes <= loc_free (s, loc))
      return loc;
  return -1;
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
