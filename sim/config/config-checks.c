/* config-checks.c — the cross-field checks of the sections and tiers (the
 * FieldCheck of a schema line, run once the section is compiled), and
 * those of the whole config config_compile runs last: rates slow enough to
 * overflow time, the device capacity floor. The built-in resource names,
 * which a tier may not take. */
#include "config/config-priv.h"
#include "base/units.h"

#include <math.h>
#include <string.h>

const char *const config_builtin_names[VS_BUILTIN_COUNT + 1] = {
  [VS_BUILTIN_DEVICE] = "device",
  [VS_BUILTIN_HOST] = "host",
  [VS_BUILTIN_SM] = "sm",
  [VS_BUILTIN_DEVICE_MEM] = "device_mem",
  [VS_BUILTIN_LINK_H2D] = "link_h2d",
  [VS_BUILTIN_LINK_D2H] = "link_d2h",
  [VS_BUILTIN_HOST_MEM] = "host_mem",
  [VS_BUILTIN_COUNT] = NULL,
};

static gboolean
valid_tier_name (const char *s)
{
  if (*s == '\0' || cfg_all_digits (s))
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

gboolean
cfg_check_name (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->name == NULL)
    c->name = cfg_basename_no_json (origin);
  if (c->name[0] == '\0')
    {
      cfg_fail (error, origin, "name", "must not be empty");
      return FALSE;
    }
  return TRUE;
}

gboolean
cfg_check_memory (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->memory.capacity == 0)
    {
      cfg_fail (error, origin, "memory.capacity", "must be greater than 0");
      return FALSE;
    }
  if (c->memory.bandwidth <= 0)
    {
      cfg_fail (error, origin, "memory.bandwidth", "must be greater than 0");
      return FALSE;
    }
  if (c->memory.reserved >= c->memory.capacity)
    {
      g_autofree char *r = units_format_bytes (c->memory.reserved);
      g_autofree char *cap = units_format_bytes (c->memory.capacity);
      cfg_fail (error, origin, "memory.reserved", "%s leaves nothing of memory.capacity (%s); it must be less", r, cap);
      return FALSE;
    }
  if (c->memory.alloc_granularity == 0
      || (c->memory.alloc_granularity & (c->memory.alloc_granularity - 1)) != 0)
    {
      cfg_fail (error, origin, "memory.alloc_granularity",
            "must be a power of two of at least 1 B (CUDA uses 2MiB), got %" G_GUINT64_FORMAT " B",
            c->memory.alloc_granularity);
      return FALSE;
    }
  return TRUE;
}

gboolean
cfg_check_link (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (!c->unified && c->link.bandwidth <= 0)
    {
      cfg_fail (error, origin, "link.bandwidth", "must be greater than 0");
      return FALSE;
    }
  return TRUE;
}

/* AT is tiers[I], PREFIX "tiers[I]"; the tiers before it are checked. */
gboolean
cfg_check_tier (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  VsTier *tier = at;
  guint i = (guint) (tier - c->tiers);
  g_autofree char *np = g_strdup_printf ("%s.name", prefix);
  if (!valid_tier_name (tier->name))
    {
      cfg_fail (error, origin, np, "'%s' is not a tier name (letters, digits, '_' and '-', not all digits)",
            tier->name);
      return FALSE;
    }
  if (g_strv_contains (config_builtin_names, tier->name))
    {
      cfg_fail (error, origin, np, "'%s' is reserved for a built-in resource; pick another name", tier->name);
      return FALSE;
    }
  for (guint j = 0; j < i; j++)
    if (strcmp (c->tiers[j].name, tier->name) == 0)
      {
        cfg_fail (error, origin, np, "'%s' is already the name of tiers[%u]; names must be unique", tier->name, j);
        return FALSE;
      }
  if (tier->capacity == 0)
    {
      g_autofree char *p = g_strdup_printf ("%s.capacity", prefix);
      cfg_fail (error, origin, p, "must be greater than 0");
      return FALSE;
    }
  if (tier->bandwidth <= 0)
    {
      g_autofree char *p = g_strdup_printf ("%s.bandwidth", prefix);
      cfg_fail (error, origin, p, "must be greater than 0");
      return FALSE;
    }
  if (c->unified && tier->attach == VS_ATTACH_HOST)
    {
      g_autofree char *p = g_strdup_printf ("%s.attach", prefix);
      cfg_fail (error, origin, p, "\"host\" means behind the host link, and a unified machine has none; "
            "use \"device\"");
      return FALSE;
    }
  return TRUE;
}

gboolean
cfg_check_host (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->host.capacity == 0)
    {
      cfg_fail (error, origin, "host.capacity", "must be greater than 0");
      return FALSE;
    }
  if (c->host.bandwidth <= 0)
    {
      cfg_fail (error, origin, "host.bandwidth", "must be greater than 0");
      return FALSE;
    }
  return TRUE;
}

/* PyTorch's own limits on PYTORCH_CUDA_ALLOC_CONF (CUDAAllocatorConfig):
 * max_split_size above 20 MiB (kLargeBuffer), divisions a power of two,
 * and a large segment that is a whole number of 2 MiB pages. */
gboolean
cfg_check_allocator (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->allocator.max_split_size != G_MAXUINT64 && c->allocator.max_split_size <= (20u << 20))
    {
      g_autofree char *m = units_format_bytes (c->allocator.max_split_size);
      cfg_fail (error, origin, "allocator.max_split_size", "%s: PyTorch requires more than 20 MiB (or \"unlimited\")", m);
      return FALSE;
    }
  guint d = c->allocator.roundup_power2_divisions;
  if (d > 1 && (d & (d - 1)) != 0)
    {
      cfg_fail (error, origin, "allocator.roundup_power2_divisions", "%u: must be 0 (off) or a power of two", d);
      return FALSE;
    }
  if (c->allocator.large_segment == 0 || c->allocator.large_segment % (2u << 20) != 0)
    {
      g_autofree char *l = units_format_bytes (c->allocator.large_segment);
      cfg_fail (error, origin, "allocator.large_segment", "%s: must be a whole number (>= 1) of 2 MiB pages", l);
      return FALSE;
    }
  return TRUE;
}

/* The smallest migration page: 4 KiB, the smallest page a GPU's MMU or
 * the host maps (NVIDIA's UVM migrates 4 KiB to 2 MiB, REFERENCE). A
 * smaller one would only give allocations billions of pages, past the
 * engine's 2^31 evict units per allocation (a false OOM). */
#define MIN_UVM_PAGE 4096u

gboolean
cfg_check_uvm (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->uvm.page < MIN_UVM_PAGE)
    {
      g_autofree char *pg = units_format_bytes (c->uvm.page);
      cfg_fail (error, origin, "uvm.page", "%s is below 4KiB, the smallest page a GPU or host maps (NVIDIA UVM moves "
            "4KiB to 2MiB pages)", pg);
      return FALSE;
    }
  if (c->uvm.evict_unit == 0 || c->uvm.evict_unit % c->uvm.page != 0)
    {
      g_autofree char *e = units_format_bytes (c->uvm.evict_unit);
      g_autofree char *pg = units_format_bytes (c->uvm.page);
      cfg_fail (error, origin, "uvm.evict_unit", "%s is not a whole number (>= 1) of uvm.page (%s)", e, pg);
      return FALSE;
    }
  return TRUE;
}

/* Rates slow enough to make a flow end beyond the representable time are
 * errors naming the key (docs/config.md, "Limits"): a 1 GiB transfer must
 * end within 2^63 ns, the replay's time limit, so an effective bandwidth
 * (bandwidth x efficiency) is at least 2^30 B / (2^63 ns) = 0.1164 B/s;
 * compute.tflops at least 1e-6 (1 MFLOPS: a second of compute captured on
 * the fastest chip, ~10^4 TFLOPS, must end within 2^63 ns). Far below any
 * machine; what they exclude is 1e-310 typed for 1e-3. */
#define MIN_RATE_BPS (1073741824.0 / 9223372036.854775808)
#define MIN_TFLOPS 1e-6

gboolean
cfg_check_rate (double bw, double eff, const char *origin, const char *key, const char *eff_key, GError **error)
{
  if (bw * eff >= MIN_RATE_BPS)
    return TRUE;
  g_autofree char *b = bw >= 1 ? units_format_rate (bw) : g_strdup_printf ("%g B/s", bw);
  if (eff_key != NULL && eff < 1)
    cfg_fail (error, origin, bw >= MIN_RATE_BPS ? eff_key : key,
          "%s x %s %g = %g B/s is too slow to simulate: a 1 GiB transfer would end beyond 2^63 ns (292 years); "
          "the least is 0.1164 B/s", b, eff_key, eff, bw * eff);
  else
    cfg_fail (error, origin, key, "%s is too slow to simulate: a 1 GiB transfer would end beyond 2^63 ns (292 years); "
          "the least is 0.1164 B/s", b);
  return FALSE;
}

gboolean
cfg_check_rates (const VsConfig *c, const char *origin, GError **error)
{
  if (!cfg_check_rate (c->memory.bandwidth, c->memory.efficiency, origin, "memory.bandwidth", "memory.efficiency", error)
      || !cfg_check_rate (c->host.bandwidth, 1, origin, "host.bandwidth", NULL, error))
    return FALSE;
  if (!c->unified
      && (!cfg_check_rate (c->link.bandwidth, c->link.efficiency, origin, "link.bandwidth", "link.efficiency", error)
          || !cfg_check_rate (c->link.bandwidth, c->link.pageable_efficiency, origin, "link.bandwidth",
                          "link.pageable_efficiency", error)))
    return FALSE;
  for (guint i = 0; i < c->n_tiers; i++)
    {
      g_autofree char *bk = g_strdup_printf ("tiers[%u].bandwidth", i);
      g_autofree char *ek = g_strdup_printf ("tiers[%u].efficiency", i);
      if (!cfg_check_rate (c->tiers[i].bandwidth, c->tiers[i].efficiency, origin, bk, ek, error))
        return FALSE;
    }
  if (c->tflops < MIN_TFLOPS)
    {
      cfg_fail (error, origin, "compute.tflops", "%g is too slow to simulate (at least 1e-06, 1 MFLOPS: a second of "
            "compute on a fast chip would end beyond 2^63 ns)", c->tflops);
      return FALSE;
    }
  return TRUE;
}

/* The device must hold what is charged before the program's first call:
 * the CUDA context (memory.context, SPEC 5.6) and, under uvm on a discrete
 * GPU, one uvm.evict_unit beside it, the least the driver migrates and
 * evicts at a time (docs/model.md section 7), or no managed page could
 * ever fault in. A smaller device is not a what-if the replay can answer
 * (before, it ran with the context over capacity and warned, falsely, that
 * the trace allocates no device memory): refused here, naming the keys. */
gboolean
cfg_check_capacity_floor (const VsConfig *c, const char *origin, GError **error)
{
  guint64 dev = c->memory.capacity - c->memory.reserved;   /* reserved < capacity: cfg_check_memory */
  gboolean uvm = c->oversubscription == VS_OVERSUB_UVM && !c->unified;
  guint64 need = c->memory.context;
  if (uvm)
    need = need > G_MAXUINT64 - c->uvm.evict_unit ? G_MAXUINT64 : need + c->uvm.evict_unit;
  if (dev >= need)
    return TRUE;
  g_autofree char *cap = units_format_bytes (c->memory.capacity);
  g_autofree char *ctx = units_format_bytes (c->memory.context);
  g_autofree char *left = units_format_bytes (dev);
  g_autofree char *res = units_format_bytes (c->memory.reserved);
  g_autofree char *what = c->memory.reserved > 0
    ? g_strdup_printf ("%s less memory.reserved (%s) leaves %s, which", cap, res, left) : g_strdup (cap);
  if (uvm)
    {
      g_autofree char *eu = units_format_bytes (c->uvm.evict_unit);
      cfg_fail (error, origin, "memory.capacity", "%s is below memory.context (%s) plus one uvm.evict_unit (%s): "
            "policy uvm needs room beside the CUDA context to fault any page in", what, ctx, eu);
    }
  else
    cfg_fail (error, origin, "memory.capacity", "%s is below memory.context (%s), the CUDA context charged before "
          "the program allocates anything; the device must hold it", what, ctx);
  return FALSE;
}

/* compute.tflops is another name for compute.fp16 (SPEC 4): one of them
 * is required, and both, when given, must agree. */
gboolean
cfg_check_compute (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  double *fp16 = &c->compute.peak[4];
  if (c->tflops > 0 && *fp16 > 0 && c->tflops != *fp16)
    {
      cfg_fail (error, origin, "compute.tflops", "is another name for compute.fp16, and they differ (%g and %g); "
            "give one", c->tflops, *fp16);
      return FALSE;
    }
  if (*fp16 == 0)
    *fp16 = c->tflops;
  if (*fp16 == 0)
    {
      cfg_fail (error, origin, "compute.tflops",
            "required (dense FP16 tensor TFLOPS, e.g. 312 for an A100, as compute.fp16 or compute.tflops; "
            "kernel compute time scales by it)");
      return FALSE;
    }
  c->tflops = *fp16;
  return TRUE;
}
