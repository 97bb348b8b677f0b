/* alloc-model.part.c — the allocator model (sim/mem/allocator.h) between the
 * trace's device allocations and the device (SPEC 5.6, docs/model.md
 * "Allocator models"): what is charged to the device is the context plus
 * the segments the model reserved, not each allocation rounded up.
 *
 * Decisions (docs/model.md):
 *  - allocator.kind auto follows the trace header: "allocations": "tensor"
 *    -> pytorch (async when its allocator_settings say "kind": "async",
 *    as vramcap's capture of PyTorch's cudaMallocAsync backend does),
 *    anything else -> none (the engine's own per-allocation
 *    charge, unchanged). With kind auto, the header's allocator_settings
 *    (a snapshot's PYTORCH_CUDA_ALLOC_CONF) replace the config's keys.
 *  - The model runs under every policy; alloc-policy.part.c says how
 *    spill, direct and uvm act on what it reserves.
 *  - A free returns the block to the model when the host frees it (the
 *    caching allocator's rule: reusable at once by later work on its
 *    stream); the engine keeps the allocation alive for ops queued before
 *    the free, as before. A block used on other streams returns when their
 *    work queued before the free has run (record_stream:
 *    alloc-streams.part.c).
 *  - The model's driver limit is the device capacity less everything else
 *    charged to it (context, pinned on unified parts, ...).
 *  - A header "allocation_sizes": "block" (the Kineto importer's: its
 *    Bytes are block sizes) makes allocated the sum of the trace's sizes;
 *    the model's blocks still fill its segments (allocator.h,
 *    sizes_are_blocks).
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static const cJSON *
amodel_header (Sim *s, const char *key)
{
  const VsTraceHeader *h = trace_reader_header (s->core.trace);
  return h && h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, key) : NULL;
}

/* The header's allocator_settings (import-snapshot.c writes them) over CFG. */
static void
amodel_header_settings (const cJSON *set, VsAllocConfig *cfg)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (set, "expandable_segments");
  if (cJSON_IsBool (v))
    cfg->expandable_segments = cJSON_IsTrue (v);
  v = cJSON_GetObjectItemCaseSensitive (set, "max_split_size");
  if (cJSON_IsNumber (v) && v->valuedouble > 20.0 * 1024 * 1024 && v->valuedouble < 1e18)
    cfg->max_split_size = (guint64) v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive (set, "garbage_collection_threshold");
  if (cJSON_IsNumber (v) && v->valuedouble >= 0 && v->valuedouble < 1)
    cfg->garbage_collection_threshold = v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive (set, "roundup_power2_divisions");
  if (cJSON_IsArray (v))
    {
      guint i = 0;
      for (const cJSON *d = v->child; d && i < VS_ALLOC_POW2_INTERVALS; d = d->next, i++)
        if (cJSON_IsNumber (d) && d->valuedouble >= 0 && d->valuedouble <= 1 << 16)
          cfg->roundup_power2_divisions[i] = (guint32) d->valuedouble;
    }
}

static guint64
json_u64 (const cJSON *v)
{
  return cJSON_IsNumber (v) && v->valuedouble >= 0 && v->valuedouble < 1.8e19 ? (guint64) v->valuedouble : 0;
}

/* A snapshot window's warm state (segments and their allocated blocks), or
 * a profiler's starting reserved total. */
static void
amodel_seed (Sim *s, const cJSON *state)
{
  const cJSON *segs = cJSON_GetObjectItemCaseSensitive (state, "segments");
  for (const cJSON *g = cJSON_IsArray (segs) ? segs->child : NULL; g; g = g->next)
    {
      if (cJSON_GetArraySize (g) < 5)
        continue;
      guint64 addr = json_u64 (cJSON_GetArrayItem (g, 0)), bytes = json_u64 (cJSON_GetArrayItem (g, 1));
      const cJSON *pool = cJSON_GetArrayItem (g, 3);
      if (addr == 0 || bytes == 0)
        continue;
      alloc_seed_segment (s->mem.amodel, addr, bytes, json_u64 (cJSON_GetArrayItem (g, 2)),
                          cJSON_IsString (pool) && strcmp (pool->valuestring, "small") == 0,
                          cJSON_IsTrue (cJSON_GetArrayItem (g, 4)));
    }
  const cJSON *blocks = cJSON_GetObjectItemCaseSensitive (state, "blocks");
  for (const cJSON *b = cJSON_IsArray (blocks) ? blocks->child : NULL; b; b = b->next)
    {
      guint64 id = json_u64 (cJSON_GetArrayItem (b, 0)), bytes = json_u64 (cJSON_GetArrayItem (b, 2));
      if (id != 0)
        alloc_seed_block (s->mem.amodel, id, json_u64 (cJSON_GetArrayItem (b, 1)), bytes, bytes);
    }
  guint64 cache = json_u64 (cJSON_GetObjectItemCaseSensitive (state, "reserved_bytes"));
  if (cache > 0)
    alloc_seed_cache (s->mem.amodel, cache);
}

static void
amodel_setup (Sim *s)
{
  const VsConfig *c = s->core.cfg;
  /* The context is charged whatever the allocator (5.6). */
  demand_init (s);
  if (c->memory.context > 0)
    {
      loc_add (s, LOC_DEVICE, c->memory.context);
      s->mem.dev_nonmanaged += c->memory.context;
    }
  VsAllocKind kind = VS_ALLOC_NONE;
  const VsTraceHeader *h = trace_reader_header (s->core.trace);
  switch (c->allocator.kind)
    {
    case VS_ALLOCATOR_AUTO:
      if (h != NULL && trace_header_allocations (h) == VS_ALLOCS_TENSOR)
        {
          /* vramcap's capture of the cudaMallocAsync backend says so */
          const cJSON *k = cJSON_GetObjectItemCaseSensitive (amodel_header (s, "allocator_settings"), "kind");
          kind = cJSON_IsString (k) && strcmp (k->valuestring, "async") == 0 ? VS_ALLOC_ASYNC : VS_ALLOC_PYTORCH;
        }
      break;
    case VS_ALLOCATOR_PYTORCH: kind = VS_ALLOC_PYTORCH; break;
    case VS_ALLOCATOR_ASYNC: kind = VS_ALLOC_ASYNC; break;
    case VS_ALLOCATOR_NONE: kind = VS_ALLOC_NONE; break;
    }
  s->mem.amodel_kind = kind;
  if (kind == VS_ALLOC_NONE)
    return;
  /* uvm (not on a unified machine, where managed memory is device memory):
   * the segments are managed; spill and direct place what does not fit
   * below (alloc-policy.part.c). */
  s->mem.amodel_managed = s->mem.device_is_managed && !c->unified;
  s->mem.amodel_places = s->mem.policy->nofit != nofit_oom;
  VsAllocConfig ac;
  alloc_config_init (&ac);
  ac.kind = kind;
  ac.expandable_segments = c->allocator.expandable_segments;
  ac.max_split_size = c->allocator.max_split_size;
  ac.max_non_split_rounding = c->allocator.max_non_split_rounding;
  for (guint i = 0; i < VS_ALLOC_POW2_INTERVALS; i++)
    ac.roundup_power2_divisions[i] = c->allocator.roundup_power2_divisions;
  ac.garbage_collection_threshold = c->allocator.garbage_collection_threshold;
  ac.large_segment = c->allocator.large_segment;
  ac.release_threshold = c->allocator.release_threshold;
  ac.granularity = c->memory.alloc_granularity;
  ac.device_total = c->memory.capacity;
  if (c->allocator.kind == VS_ALLOCATOR_AUTO)
    amodel_header_settings (amodel_header (s, "allocator_settings"), &ac);
  /* A profiler's sizes are block sizes (the readers check the value). */
  const cJSON *sizes = amodel_header (s, "allocation_sizes");
  ac.sizes_are_blocks = cJSON_IsString (sizes) && strcmp (sizes->valuestring, "block") == 0;
  demand_setup_model (s, &ac);   /* the model as oom runs it (demand.part.c) */
  if (s->mem.amodel_managed && ac.expandable_segments)
    {
      /* Expandable segments map physical device memory (cuMemCreate),
       * which cannot be managed: under uvm the segments are
       * cudaMallocManaged ranges. */
      ac.expandable_segments = FALSE;
      s->mem.amodel_no_expandable = TRUE;
    }
  s->mem.amodel = alloc_new (&ac);
  u64map_init (&s->mem.amodel_pending);
  s->mem.amodel_batches = g_ptr_array_new ();
  const cJSON *state = amodel_header (s, "allocator_state");
  if (cJSON_IsObject (state))
    {
      amodel_seed (s, state);
      demand_seed (s, state);
    }
  VsAllocStats st;
  alloc_stats (s->mem.amodel, &st);
  if (st.reserved > 0)
    s->mem.dem_known = TRUE;   /* a warm cache: the program held device memory */
  if (s->mem.amodel_managed)
    {
      /* Managed segments: cudaMallocManaged does not fail for lack of
       * device memory, and a warm cache is host memory until touched. */
      alloc_set_limit (s->mem.amodel, VS_ALLOC_UNLIMITED);
      amodel_settle_managed (s, st.reserved);
      return;
    }
  s->mem.amodel_charged = st.reserved;
  if (st.reserved > 0)
    {
      loc_add (s, LOC_DEVICE, st.reserved);
      s->mem.dev_nonmanaged += st.reserved;
    }
  if (s->mem.dmodel == NULL)
    demand_reserved (s, st.reserved);
  /* A warm cache larger than this device (with its context): PyTorch would
   * have released what it did not use at its first failed cudaMalloc;
   * start from there. */
  if (s->mem.loc_used[LOC_DEVICE] > s->mem.loc_cap[LOC_DEVICE])
    {
      alloc_empty_cache (s->mem.amodel, 0);
      alloc_reset_stats (s->mem.amodel);
      amodel_settle (s);
      s->mem.loc_peak[LOC_DEVICE] = s->mem.loc_used[LOC_DEVICE];  /* the replay starts here */
      s->mem.overflow_peak = 0;
      if (s->mem.dmodel == NULL)
        s->mem.dem_peak = sat_add (s->mem.dem_cur, s->mem.dem_reserved);
    }
}

/* Brings the device's charge to the model's reserved bytes. */
static void
amodel_settle (Sim *s)
{
  VsAllocStats st;
  alloc_stats (s->mem.amodel, &st);
  guint64 was = s->mem.amodel_charged;
  if (s->mem.amodel_managed)
    amodel_settle_managed (s, st.reserved);
  else if (st.reserved > was)
    {
      loc_add (s, LOC_DEVICE, st.reserved - was);
      s->mem.dev_nonmanaged += st.reserved - was;
    }
  else if (st.reserved < was)
    {
      loc_sub (s, LOC_DEVICE, was - st.reserved);
      s->mem.dev_nonmanaged -= was - st.reserved;
    }
  if (!s->mem.amodel_managed)
    s->mem.amodel_charged = st.reserved;
  /* cudaFree or an unmap of a segment: the host call synchronizes
   * (issue.part.c, allocator_sync). cudaMallocAsync's pool trims do not. */
  if (G_UNLIKELY (st.segment_free_bytes != s->mem.amodel_freed_bytes))
    {
      s->mem.amodel_freed_bytes = st.segment_free_bytes;
      s->mem.amodel_released = s->mem.amodel_kind == VS_ALLOC_PYTORCH;
    }
  if (s->mem.dmodel == NULL)
    demand_reserved (s, st.reserved);   /* under oom the model is the demand's (demand.part.c) */
  if (G_UNLIKELY (s->out.series))
    series_allocs (s);
  if (G_UNLIKELY (s->out.timeline))
    timeline_allocator (s, st.allocated, st.reserved);
}

/* Device allocation A of event EV through the model. FALSE: out of memory
 * after the model's retries (and --keep-going is off); the OOM is recorded. */
static gboolean
amodel_alloc (Sim *s, Alloc *a, const VsEvent *ev)
{
  VsAlloc *m = s->mem.amodel;
  /* (The readers reject an alloc of a live id; a live id here is one the
   * header seeded, whose alloc takes its block.) */
  guint64 other = s->mem.loc_used[LOC_DEVICE] - MIN (s->mem.loc_used[LOC_DEVICE], s->mem.amodel_charged);
  guint64 cap = s->mem.loc_cap[LOC_DEVICE];
  alloc_set_limit (m, cap > other ? cap - other : 0);
  guint64 stream = ev->has_stream ? ev->stream : 0;
  gboolean ok = alloc_malloc (m, a->id, a->bytes, stream, ev->t, NULL);
  if (!ok)
    {
      if (s->mem.dmodel == NULL)
        s->mem.dem_refused = TRUE;   /* oom's own model refused it */
      report_oom (s, ev, LOC_DEVICE);
      VsAllocStats st;
      alloc_stats (m, &st);
      if (s->stats.oom_obj && !cJSON_GetObjectItemCaseSensitive (s->stats.oom_obj, "largest_free_block"))
        {
          cJSON_AddNumberToObject (s->stats.oom_obj, "largest_free_block", (double) st.oom_largest_free);
          cJSON_AddNumberToObject (s->stats.oom_obj, "reserved_free", (double) st.oom_reserved_free);
        }
      if (!s->core.opts->keep_going)
        {
          amodel_settle (s);
          return FALSE;
        }
      alloc_set_limit (m, VS_ALLOC_UNLIMITED);
      ok = alloc_malloc (m, a->id, a->bytes, stream, ev->t, NULL);
      g_assert (ok);
    }
  a->loc = LOC_DEVICE;
  a->charge = alloc_block_bytes (m, a->id);
  a->via_model = TRUE;
  a->home = ev->has_stream ? ev->stream : AMODEL_HOME_UNKNOWN;   /* alloc-streams.part.c */
  a->pool_named = ev->has_stream;
  amodel_settle (s);
  return TRUE;
}

static void
amodel_free (Sim *s, guint64 id, guint64 t)
{
  Alloc *a = s->mem.amodel ? alloc_find (s, id) : NULL;
  if (a != NULL)
    a->model_freed = TRUE;   /* not swapped back in (alloc-policy.part.c) */
  gboolean deferred = FALSE;
  if (s->mem.amodel && alloc_is_live (s->mem.amodel, id))
    {
      /* Used on other streams: its block waits for them (alloc-streams.part.c). */
      if (a == NULL || !a->via_model || !(deferred = amodel_free_deferred (s, a, t)))
        alloc_free (s->mem.amodel, id, t);
      amodel_settle (s);
    }
  demand_free (s, id, t, deferred);   /* the demand model as the engine's (a spilled one: at once) */
}

static void
amodel_empty_cache (Sim *s, guint64 t)
{
  if (s->mem.amodel)
    {
      alloc_empty_cache (s->mem.amodel, t);
      amodel_settle (s);
    }
  demand_empty_cache (s, t);
}

static void
amodel_sync (Sim *s, guint64 t)
{
  if (s->mem.amodel)
    {
      alloc_sync (s->mem.amodel, t);
      amodel_settle (s);
    }
  demand_sync (s, t);
}

/* The memory section's warnings (also out/oom-stop.part.c's). */
static void
amodel_warnings (Sim *s, cJSON *warnings)
{
  if (s->mem.amodel_no_expandable)
    cJSON_AddItemToArray (warnings, cJSON_CreateString (
        "allocator: expandable_segments is off under policy uvm (its pages are physical device memory, "
        "which cannot be managed; the segments are cudaMallocManaged ranges)"));
  if (s->stats.n_allocs == 0 && !s->mem.dem_known)
    cJSON_AddItemToArray (warnings, cJSON_CreateString (
        "memory unknown: the trace has no allocation events (a profiler run without profile_memory?); "
        "the device figures hold only the context"));
}

/* memory.context_bytes, memory.allocator (SPEC 5.9) and the warnings. */
static void
amodel_report (Sim *s, cJSON *mem, cJSON *warnings)
{
  const VsConfig *c = s->core.cfg;
  cJSON_AddNumberToObject (mem, "context_bytes", (double) c->memory.context);
  cJSON *o = cJSON_AddObjectToObject (mem, "allocator");
  cJSON_AddStringToObject (o, "kind", alloc_kind_name (s->mem.amodel_kind));
  if (s->mem.amodel)
    {
      VsAllocStats st;
      alloc_stats (s->mem.amodel, &st);
      cJSON_AddNumberToObject (o, "peak_allocated_bytes", (double) st.peak_allocated);
      cJSON_AddNumberToObject (o, "peak_reserved_bytes", (double) st.peak_reserved);
      cJSON_AddNumberToObject (o, "end_reserved_bytes", (double) st.reserved);
      cJSON_AddNumberToObject (o, "segment_allocs", (double) st.segment_allocs);
      cJSON_AddNumberToObject (o, "segment_frees", (double) st.segment_frees);
      cJSON_AddNumberToObject (o, "segment_alloc_bytes", (double) st.segment_alloc_bytes);
      cJSON_AddNumberToObject (o, "fragmentation_peak", st.fragmentation_peak);
      cJSON_AddNumberToObject (o, "retries", (double) st.retries);
    }
  else
    {
      /* kind none: each allocation is its own segment. */
      cJSON_AddNumberToObject (o, "peak_allocated_bytes", (double) s->mem.none_peak);
      cJSON_AddNumberToObject (o, "peak_reserved_bytes", (double) s->mem.none_peak);
      cJSON_AddNumberToObject (o, "end_reserved_bytes", (double) s->mem.none_cur);
      cJSON_AddNumberToObject (o, "segment_allocs", (double) s->mem.none_allocs);
      cJSON_AddNumberToObject (o, "segment_frees", (double) s->mem.none_frees);
      cJSON_AddNumberToObject (o, "segment_alloc_bytes", (double) s->mem.none_alloc_bytes);
      cJSON_AddNumberToObject (o, "fragmentation_peak", 0);
    }
  amodel_warnings (s, warnings);
}

static void
amodel_teardown (Sim *s)
{
  if (s->mem.amodel)
    u64map_clear (&s->mem.amodel_pending);
  amodel_streams_teardown (s);
  g_clear_pointer (&s->mem.amodel, alloc_free_model);
  demand_teardown (s);
}
