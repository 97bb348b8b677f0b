/* policy.part.c — the oversubscription policies (5.6), one per file
 * (policy-oom, policy-spill, policy-direct, policy-uvm), as a table by
 * VsOversub. A policy is its hooks and the flags it sets at setup
 * (sim_setup copies them into s->mem, where the per-event code reads
 * them inline): no other part tests which policy is in force. To add a
 * policy: a file with its Policy, a line here, its name in config-schema.c's
 * oversub_choices and VsOversub.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static const Policy *const policies[VS_OVERSUB_COUNT] = {
  [VS_OVERSUB_OOM] = &policy_oom,
  [VS_OVERSUB_SPILL] = &policy_spill,
  [VS_OVERSUB_DIRECT] = &policy_direct,
  [VS_OVERSUB_UVM] = &policy_uvm,
};

/* Sets S's policy from its config: the hooks and the flags. */
static void
policy_setup (Sim *s)
{
  const VsConfig *c = s->core.cfg;
  const Policy *p = policies[c->oversubscription];
  g_assert (strcmp (p->name, config_oversub_name (c->oversubscription)) == 0);
  s->mem.policy = p;
  s->mem.spill = p->spill;
  s->mem.dev_only = !c->unified && p->dev_only;
  s->mem.device_is_managed = p->device_is_managed;
}
