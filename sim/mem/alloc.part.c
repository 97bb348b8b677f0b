/* alloc.part.c — allocation and free events: placement on the device, the
 * policy's answer when it does not fit, OOM.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* The program freed A: its id is free again. Managed memory that ops
 * issued before the free still use stays until they end (their faults and
 * residency count, as the GPU reaches them after the host moved on);
 * everything else goes now. */
static void
alloc_release (Sim *s, Alloc *a)
{
  TagStat *t = &g_array_index (s->stats.tag_stats, TagStat, a->tag);
  t->cur -= a->bytes;
  demand_release (s, a);
  /* A is the one live under its id: do_alloc releases an id's old
   * allocation before it adds the new one. */
  slotmap_remove (&s->mem.allocs, a->id);
  if (a->kind == VS_MEM_MANAGED && a->users > 0)
    {
      a->free_deferred = TRUE;
      return;
    }
  alloc_release_charges (s, a);
}

/* A's memory leaves wherever it is charged, and the table's reference goes. */
static void
alloc_release_charges (Sim *s, Alloc *a)
{
  a->freed = TRUE;
  if (!a->via_model && a->kind == VS_MEM_DEVICE)
    {
      s->mem.none_cur -= a->charge;
      s->mem.none_frees++;
      if (G_UNLIKELY (s->out.series))
        series_allocs (s);
      if (G_UNLIKELY (s->out.timeline))
        timeline_allocator (s, s->mem.none_cur, s->mem.none_cur);
    }
  lru_remove (s, a);
  if (a->via_model && a->kind == VS_MEM_DEVICE)
    amodel_release (s, a);   /* the model's segments are the device charge */
  else if (a->kind == VS_MEM_PINNED)
    loc_sub (s, s->mem.loc_host, a->charge);
  else if (a->kind == VS_MEM_MANAGED)
    {
      if (s->core.cfg->unified)
        loc_sub (s, LOC_DEVICE, a->charge);
      else
        {
          loc_sub (s, LOC_DEVICE, man_resident (s, a));
          loc_sub (s, s->mem.loc_host, a->bytes - man_resident (s, a));  /* its host share */
        }
      man_set_groups (s, a, 0);
      if (a->via_model)
        amodel_release (s, a);   /* its bytes return to the segments' host share */
    }
  else
    {
      loc_sub (s, a->loc, a->charge);
      if (a->loc == LOC_DEVICE)
        s->mem.dev_nonmanaged -= a->charge;
      if (a->below != LOC_NONE)
        loc_sub (s, a->below, a->charge);
      a->below = LOC_NONE;
    }
  alloc_unref (a);       /* the table's */
}

/* Records the first allocation that did not fit in LOC (the device, or
 * the host for pinned and managed memory). */
static void
report_oom (Sim *s, const VsEvent *ev, int loc)
{
  if (s->stats.oom_obj)
    return;
  s->core.oom = TRUE;
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "event", (double) ev->index);
  cJSON_AddNumberToObject (o, "t_ns", (double) ev->t);
  cJSON_AddNumberToObject (o, "predicted_t_ns", floor (s->core.now - s->core.t0));
  cJSON_AddNumberToObject (o, "requested", (double) ev->bytes);
  cJSON_AddNumberToObject (o, "in_use", (double) s->mem.loc_used[loc]);
  cJSON_AddNumberToObject (o, "capacity", (double) s->mem.loc_cap[loc]);
  cJSON_AddStringToObject (o, "memory", loc_name (s, loc));
  s->stats.oom_obj = o;
  if (G_UNLIKELY (s->out.timeline))
    timeline_oom (s, ev, loc);
  if (G_UNLIKELY (s->core.opts->oom_stop != NULL))
    oom_stop_snapshot (s);
}

/* Handles an alloc event. Returns FALSE when the replay must stop (OOM);
 * JOBS receives what the call must wait for. */
static gboolean
do_alloc (Sim *s, const VsEvent *ev, GPtrArray *jobs)
{
  Alloc *a = s->mem.free_allocs;
  if (a != NULL)
    {
      s->mem.free_allocs = a->lru_next;
      /* Field by field (a memset's `rep stos` costs more); the fields
       * set below are left out. */
      a->acc_gen = 0;
      a->acc_idx = a->running = 0;
      a->written = a->dirty = a->freed = a->fixed = a->via_model = a->model_freed = FALSE;
      a->start_device = a->touched = a->free_deferred = FALSE;
      a->users = 0;
      a->loc = 0;
      a->lru_prev = a->lru_next = NULL;
      a->in_lru = FALSE;
      a->moving = NULL;
      a->n_groups = a->resident_groups = a->dirty_groups = 0;
      a->model_waits = 0;      /* home is set with via_model; uses were cleared */
      a->model_pending = FALSE;
    }
  else
    a = g_new0 (Alloc, 1);
  a->pool = &s->mem.free_allocs;
  live_link (&s->core.live_allocs, &a->live);
  a->refs = 1;
  a->id = ev->id;
  a->bytes = ev->bytes;
  a->kind = ev->kind;
  a->below = LOC_NONE;
  a->tag = stats_tag (s, ev->tag);
  gboolean made_managed = FALSE;
  if (a->kind == VS_MEM_DEVICE && s->mem.device_is_managed && (s->mem.amodel == NULL || s->mem.amodel_managed))
    {
      /* Device memory the uvm policy made managed never lived on the host. */
      a->kind = VS_MEM_MANAGED;
      a->start_device = TRUE;
      made_managed = TRUE;
    }
  else if (a->kind == VS_MEM_MANAGED)
    a->start_device = s->core.cfg->uvm.first_touch == VS_FIRST_TOUCH_DEVICE;
  a->charge = round_up (a->bytes, s->core.cfg->memory.alloc_granularity);
  s->stats.n_allocs++;
  demand_alloc (s, a, ev);   /* what the program asks of the device, whatever the policy does */
  gboolean ok = TRUE;
  int oom_loc = LOC_DEVICE;

  if (s->core.cfg->unified && a->kind != VS_MEM_DEVICE)
    {
      /* One pool: pinned and managed memory are charged like device memory. */
      if (loc_free (s, LOC_DEVICE) < a->charge)
        {
          if (s->core.opts->keep_going)
            report_oom (s, ev, LOC_DEVICE);
          else
            ok = FALSE;
        }
      if (ok)
        loc_add (s, LOC_DEVICE, a->charge);
      a->loc = LOC_DEVICE;
      if (a->kind == VS_MEM_PINNED)
        a->kind = VS_MEM_DEVICE, s->mem.dev_nonmanaged += a->charge;
    }
  else if (a->kind == VS_MEM_PINNED)
    {
      a->charge = a->bytes;
      a->loc = s->mem.loc_host;
      oom_loc = s->mem.loc_host;
      if (a->charge > loc_free (s, s->mem.loc_host))
        {
          if (s->core.opts->keep_going)
            report_oom (s, ev, s->mem.loc_host);
          else
            ok = FALSE;
        }
      if (ok)
        loc_add (s, s->mem.loc_host, a->charge);
    }
  else if (a->kind == VS_MEM_MANAGED)
    {
      /* Managed memory lives in host memory when not on the device: one
       * larger than the host cannot be allocated (this also bounds the
       * engine's per-group state). */
      if (made_managed && s->mem.amodel != NULL)
        {
          amodel_managed_alloc (s, a, ev);   /* its block in a managed segment */
          demand_malloc (s, a, ev);
        }
      a->charge = a->bytes;
      a->loc = LOC_DEVICE;
      oom_loc = s->mem.loc_host;
      if (a->bytes / s->core.cfg->uvm.evict_unit >= MAX_MANAGED_GROUPS)
        ok = FALSE;
      else if (a->bytes > loc_free (s, s->mem.loc_host) && !s->core.opts->keep_going)
        ok = FALSE;   /* not resident anywhere yet: charged to the host (5.7) */
      else
        {
          if (a->bytes > loc_free (s, s->mem.loc_host))
            report_oom (s, ev, s->mem.loc_host);
          a->n_groups = (guint32) ((a->bytes + s->core.cfg->uvm.evict_unit - 1) / s->core.cfg->uvm.evict_unit);
          loc_add (s, s->mem.loc_host, a->bytes);
        }
    }
  else if (s->mem.amodel != NULL)
    /* (amodel_place also evicts resident managed memory first, under oom too.) */
    {
      ok = s->mem.amodel_places || s->mem.lru_man.head != NULL ? amodel_place (s, a, ev, jobs) : amodel_alloc (s, a, ev);
      demand_malloc (s, a, ev);
    }
  else
    {
      guint64 free_b = loc_free (s, LOC_DEVICE);
      if (a->charge > free_b)
        {
          guint64 got = 0;
          Job *wb = evict_managed (s, a->charge - free_b, NULL, 0, &got);
          if (wb)
            g_ptr_array_add (jobs, wb);
          free_b += got;
        }
      if (a->charge <= free_b)
        {
          a->loc = LOC_DEVICE;
          loc_add (s, LOC_DEVICE, a->charge);
          s->mem.dev_nonmanaged += a->charge;
        }
      else if (!s->mem.policy->nofit (s, a, jobs))
        {
          if (s->core.opts->keep_going)
            {
              report_oom (s, ev, LOC_DEVICE);
              a->loc = LOC_DEVICE;
              loc_add (s, LOC_DEVICE, a->charge);
              s->mem.dev_nonmanaged += a->charge;
            }
          else
            ok = FALSE;
        }
    }
  if (!ok)
    {
      if (oom_loc == LOC_DEVICE)
        demand_refused (s, ev);
      report_oom (s, ev, oom_loc);
      s->core.stopped = TRUE;
      s->core.halt = TRUE;
      alloc_unref (a);
      return FALSE;
    }
  if (!a->via_model && a->kind == VS_MEM_DEVICE)
    {
      /* Kind none's figures: each device allocation its own segment. */
      s->mem.none_cur += a->charge;
      s->mem.none_peak = MAX (s->mem.none_peak, s->mem.none_cur);
      s->mem.none_allocs++;
      s->mem.none_alloc_bytes += a->charge;
      if (G_UNLIKELY (s->out.series))
        series_allocs (s);
      if (G_UNLIKELY (s->out.timeline))
        timeline_allocator (s, s->mem.none_cur, s->mem.none_cur);
    }
  TagStat *t = &g_array_index (s->stats.tag_stats, TagStat, a->tag);
  t->cur += a->bytes;
  t->peak = MAX (t->peak, t->cur);
  Alloc *old = alloc_find (s, a->id);
  if (old)
    alloc_release (s, old);
  slotmap_add (&s->mem.allocs, a->id, GPOINTER_TO_SIZE (a));
  lru_touch (s, a);
  return TRUE;
}
