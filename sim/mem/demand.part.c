/* demand.part.c — the program's device memory demand (report
 * memory.device_demand_bytes, `fits`; docs/model.md section 6): one
 * definition under every oversubscription policy.
 *
 * The demand is the peak over the run of
 *
 *   context + what the allocator reserves (or, without an allocator model,
 *   each live device allocation's charge, rounded to alloc_granularity)
 *   + every live managed allocation's bytes (resident or not)
 *   + pinned memory on a unified machine (one pool),
 *
 * and `fits` is demand <= device capacity (memory.capacity -
 * memory.reserved) with no allocation refused on the way. It is what the
 * program asks of the device, not what stayed there: under spill, direct
 * and uvm memory leaves the device, so the device tier's peak
 * (memory.device_resident_peak_bytes) is another figure.
 *
 * "What the allocator reserves" is the allocator model as the oom policy
 * runs it: its segments' cudaMalloc fails at the device's capacity less
 * the context (and, on a unified machine, pinned memory), it then frees
 * its cache and retries (release-and-retry, as PyTorch does before it
 * raises), and past a failure it goes on without a limit (as --keep-going
 * does), so the demand says how much the program would need. Under oom
 * that is the engine's own allocator model. The other policies change what
 * the model sees (spill frees a victim's block and takes a new one when it
 * comes back; uvm's segments are managed and never refused; direct places
 * a tensor below, outside the model), so under them a second instance,
 * the demand model, is fed the program's own calls only: its mallocs, its
 * frees (with the cross-stream rule as the engine's model applies it:
 * a block used on other streams returns when the engine's model's does),
 * empty_cache and synchronisations. The two agree on every run where
 * nothing moved.
 *
 * Whether the trace allocates device memory at all is counted apart: an
 * alloc event of a device or managed allocation of non-zero size (asked,
 * whether or not it was granted: an OOM on the first one is not "memory
 * unknown"), or a warm allocator state in the header. Pinned and pageable
 * host memory do not count.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* The demand now changed: keep its peak. */
static inline void
demand_note (Sim *s)
{
  guint64 d = sat_add (s->mem.dem_cur, s->mem.dem_reserved);
  if (d > s->mem.dem_peak)
    s->mem.dem_peak = d;
}

static inline void
demand_add (Sim *s, guint64 bytes)
{
  s->mem.dem_cur = sat_add (s->mem.dem_cur, bytes);
  demand_note (s);
}

static inline void
demand_sub (Sim *s, guint64 bytes)
{
  s->mem.dem_cur -= MIN (s->mem.dem_cur, bytes);
}

/* The allocator's reserved bytes for the demand: the engine's model under
 * oom (alloc-model.part.c calls this from amodel_settle), the demand
 * model's otherwise. */
static inline void
demand_reserved (Sim *s, guint64 reserved)
{
  s->mem.dem_reserved = reserved;
  demand_note (s);
}

static void
demand_model_settle (Sim *s)
{
  VsAllocStats st;
  alloc_stats (s->mem.dmodel, &st);
  demand_reserved (s, st.reserved);
}

/* The demand starts with the context (charged whatever the allocator). */
static void
demand_init (Sim *s)
{
  s->mem.dem_cur = s->mem.dem_fixed = s->mem.dem_peak = s->core.cfg->memory.context;
}

/* The demand model, under the policies that change what the engine's
 * model sees: a model of config AC (the engine's, before uvm turns
 * expandable segments off: oom would keep them), limited like oom's.
 * Called by amodel_setup once it has the config. */
static void
demand_setup_model (Sim *s, const VsAllocConfig *ac)
{
  if (s->mem.policy->nofit == nofit_oom && !s->mem.amodel_managed)
    return;   /* oom (and uvm on a unified machine): the engine's model is the demand's */
  s->mem.dmodel = alloc_new (ac);
}

/* After the engine's model was seeded from the header: the demand model
 * gets the same state, shrunk as oom's would be when it passes the device. */
static void
demand_seed (Sim *s, const cJSON *state)
{
  if (s->mem.dmodel == NULL)
    return;
  VsAlloc *keep = s->mem.amodel;
  s->mem.amodel = s->mem.dmodel;     /* amodel_seed fills s->mem.amodel */
  amodel_seed (s, state);
  s->mem.amodel = keep;
  VsAllocStats st;
  alloc_stats (s->mem.dmodel, &st);
  if (sat_add (s->mem.dem_cur, st.reserved) > s->mem.loc_cap[LOC_DEVICE])
    {
      alloc_empty_cache (s->mem.dmodel, 0);
      alloc_reset_stats (s->mem.dmodel);
    }
  demand_model_settle (s);
}

/* The driver limit the demand model sees: the device less the context and
 * what else is fixed there (pinned memory on a unified machine); the
 * trace's managed memory would be evicted for a cudaMalloc (section 6). */
static inline void
demand_limit (Sim *s)
{
  guint64 cap = s->mem.loc_cap[LOC_DEVICE];
  alloc_set_limit (s->mem.dmodel, cap > s->mem.dem_fixed ? cap - s->mem.dem_fixed : 0);
}

/* The program allocates A (event EV) through the allocator model. */
static void
demand_malloc (Sim *s, const Alloc *a, const VsEvent *ev)
{
  if (s->mem.dmodel == NULL)
    return;
  guint64 stream = ev->has_stream ? ev->stream : 0;
  demand_limit (s);
  if (!alloc_malloc (s->mem.dmodel, a->id, a->bytes, stream, ev->t, NULL))
    {
      /* oom would stop (or, carried on, overflow) here */
      s->mem.dem_refused = TRUE;
      alloc_set_limit (s->mem.dmodel, VS_ALLOC_UNLIMITED);
      gboolean ok = alloc_malloc (s->mem.dmodel, a->id, a->bytes, stream, ev->t, NULL);
      g_assert (ok);
    }
  demand_model_settle (s);
}

/* The program frees ID at trace time T; DEFERRED: the engine's model's
 * block waits for other streams (alloc_free_request, completed by
 * demand_free_complete). */
static void
demand_free (Sim *s, guint64 id, guint64 t, gboolean deferred)
{
  if (s->mem.dmodel == NULL || !alloc_is_live (s->mem.dmodel, id))
    return;
  if (deferred)
    alloc_free_request (s->mem.dmodel, id, t);
  else
    alloc_free (s->mem.dmodel, id, t);
  demand_model_settle (s);
}

static void
demand_free_complete (Sim *s, guint64 id, guint64 t)
{
  if (s->mem.dmodel == NULL)
    return;
  alloc_free_complete (s->mem.dmodel, id, t);
  demand_model_settle (s);
}

static void
demand_empty_cache (Sim *s, guint64 t)
{
  if (s->mem.dmodel == NULL)
    return;
  alloc_empty_cache (s->mem.dmodel, t);
  demand_model_settle (s);
}

static void
demand_sync (Sim *s, guint64 t)
{
  if (s->mem.dmodel == NULL)
    return;
  alloc_sync (s->mem.dmodel, t);
  demand_model_settle (s);
}

/* Alloc event EV made A (before it is placed): what it adds to the demand
 * outside the allocator model, and whether the trace allocates device
 * memory at all. EV->kind is the trace's kind (A's may be managed: uvm). */
static void
demand_alloc (Sim *s, Alloc *a, const VsEvent *ev)
{
  const VsConfig *c = s->core.cfg;
  if (ev->kind != VS_MEM_PINNED && ev->bytes > 0)
    s->mem.dem_known = TRUE;
  a->dem = 0;
  if (ev->kind == VS_MEM_MANAGED)
    a->dem = ev->bytes;
  else if (ev->kind == VS_MEM_DEVICE && s->mem.amodel == NULL)
    a->dem = round_up (ev->bytes, c->memory.alloc_granularity);
  else if (ev->kind == VS_MEM_PINNED && c->unified)
    {
      a->dem = round_up (ev->bytes, c->memory.alloc_granularity);
      s->mem.dem_fixed = sat_add (s->mem.dem_fixed, a->dem);
      a->dem_fixed = TRUE;
    }
  demand_add (s, a->dem);
}

/* The program freed A (alloc_release): it leaves the demand. */
static inline void
demand_release (Sim *s, Alloc *a)
{
  demand_sub (s, a->dem);
  if (a->dem_fixed)
    s->mem.dem_fixed -= MIN (s->mem.dem_fixed, a->dem);
  a->dem = 0;
  a->dem_fixed = FALSE;
}

/* An allocation of EV that the device refused (the replay stops): the
 * demand at that moment includes it (outside a model, demand_alloc has
 * counted it already; the demand model has taken it). */
static void
demand_refused (Sim *s, const VsEvent *ev)
{
  s->mem.dem_refused = TRUE;
  if (s->mem.amodel == NULL || s->mem.dmodel != NULL || ev->kind != VS_MEM_DEVICE)
    return;
  guint64 d = sat_add (sat_add (s->mem.dem_cur, s->mem.dem_reserved),
                       round_up (ev->bytes, s->core.cfg->memory.alloc_granularity));
  s->mem.dem_peak = MAX (s->mem.dem_peak, d);
}

/* `fits` (SPEC 5.9): null when the trace allocates no device memory. */
static void
demand_fits (Sim *s, cJSON *r)
{
  if (!s->mem.dem_known)
    cJSON_AddNullToObject (r, "fits");
  else
    cJSON_AddBoolToObject (r, "fits", !s->mem.dem_refused && s->mem.dem_peak <= s->mem.loc_cap[LOC_DEVICE]);
}

/* memory.device_demand_bytes and memory.device_resident_peak_bytes (the
 * device tier's peak: what stayed there). */
static void
demand_report (Sim *s, cJSON *mem)
{
  cJSON_AddNumberToObject (mem, "device_demand_bytes", (double) s->mem.dem_peak);
  cJSON_AddNumberToObject (mem, "device_resident_peak_bytes", (double) s->mem.loc_peak[LOC_DEVICE]);
}

static void
demand_teardown (Sim *s)
{
  g_clear_pointer (&s->mem.dmodel, alloc_free_model);
}
