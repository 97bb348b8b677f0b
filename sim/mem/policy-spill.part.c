/* spill.part.c — the spill mechanism (5.6): device allocations moved below
 * (tiers, host) and swapped back in before an op runs.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* Spills device allocation V below (5.6). A dirty victim moves like a copy;
 * a clean one (never written, or with a current copy below) for free. */
static Job *
spill_victim (Sim *s, Alloc *v)
{
  int target;
  Job *j = NULL;
  if (v->below != LOC_NONE && !v->dirty)
    target = v->below;
  else
    {
      target = tier_with_room (s, v->charge);
      if (target == LOC_NONE)
        return NULL;
      loc_add (s, target, v->charge);
      if (v->written)
        {
          guint p[VS_FLOW_MAX_PATH];
          guint n = move_path (s, target, TRUE, p);
          j = job_new (s, s->core.cfg->unified ? 0 : s->core.cfg->link.latency_ns);
          job_add_flow (j, v->bytes, INFINITY, p, n);
          s->stats.swap_out_bytes += v->bytes;
        }
    }
  if (v->via_model)
    amodel_evicted (s, v);   /* its block returns to the allocator's cache */
  else
    {
      loc_sub (s, LOC_DEVICE, v->charge);
      s->mem.dev_nonmanaged -= v->charge;
    }
  v->loc = target;
  v->below = LOC_NONE;
  v->dirty = FALSE;
  lru_remove (s, v);
  if (j != NULL)
    {
      j->c.refs += 2;    /* v->moving's and the caller's */
      job_unref (v->moving);
      v->moving = j;
      job_start (s, j);
    }
  return j;
}


/* Frees NEED device bytes by spilling device allocations, LRU first. */
static gboolean
spill_for (Sim *s, guint64 need, Alloc *const *keep, guint n_keep, GPtrArray *jobs)
{
  guint64 avail = 0;
  for (Alloc *a = s->mem.lru_dev.head; a != NULL && avail < need; a = a->lru_next)
    if (a->kind == VS_MEM_DEVICE && a->loc == LOC_DEVICE && evictable (a, keep, n_keep))
      avail += a->charge;
  if (avail < need)
    return FALSE;
  guint64 freed = 0;
  for (Alloc *a = s->mem.lru_dev.head, *next; a != NULL && freed < need; a = next)
    {
      next = a->lru_next;
      if (a->kind != VS_MEM_DEVICE || a->loc != LOC_DEVICE || !evictable (a, keep, n_keep))
        continue;
      if (a->below == LOC_NONE || a->dirty)
        if (tier_with_room (s, a->charge) < 0)
          return FALSE;
      freed += a->charge;
      Job *j = spill_victim (s, a);
      if (j)
        g_ptr_array_add (jobs, j);
    }
  return TRUE;
}


/* Swap in the op's spilled allocations (5.6). */
static void
swap_in (Sim *s, Op *op)
{
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind != VS_MEM_DEVICE || a->loc == LOC_DEVICE || a->fixed || a->freed)
        continue;
      GPtrArray *jobs = jobs_take (s);
      guint64 free_b = loc_free (s, LOC_DEVICE);
      gboolean ok = TRUE;
      if (a->via_model)
        ok = amodel_swap_room (s, a, op, jobs);   /* a block from the allocator */
      else if (a->charge > free_b)
        {
          guint64 need = a->charge - free_b, got = 0;
          Job *wb = evict_managed (s, need, op->acc, op->n_acc, &got);
          if (wb)
            g_ptr_array_add (jobs, wb);
          if (got < need)
            ok = spill_for (s, need - got, op->acc, op->n_acc, jobs);
        }
      if (!ok)
        {
          /* It cannot fit beside the op's other memory: the op reaches it
           * where it lies. */
          for (guint k = 0; k < jobs->len; k++)
            {
              op_wait_job (op, jobs->pdata[k]);
              job_unref (jobs->pdata[k]);
            }
          jobs_give (s, jobs);
          continue;
        }
      int from = a->loc;
      guint p[VS_FLOW_MAX_PATH];
      guint n = move_path (s, from, FALSE, p);
      Job *j = job_new (s, s->core.cfg->unified ? 0 : s->core.cfg->link.latency_ns);
      job_add_flow (j, a->bytes, INFINITY, p, n);
      job_after (j, a->moving);
      for (guint k = 0; k < jobs->len; k++)
        {
          job_after (j, jobs->pdata[k]);
          job_unref (jobs->pdata[k]);
        }
      jobs_give (s, jobs);
      s->stats.swap_in_bytes += a->bytes;
      /* The copy below stays (clean) until the allocation is written. */
      a->below = from;
      a->dirty = FALSE;
      a->loc = LOC_DEVICE;
      if (!a->via_model)
        {
          loc_add (s, LOC_DEVICE, a->charge);
          s->mem.dev_nonmanaged += a->charge;
        }
      lru_touch (s, a);
      j->c.refs++;
      job_unref (a->moving);
      a->moving = j;
      op_wait_job (op, j);
      job_start (s, j);
    }
}

static gboolean
nofit_spill (Sim *s, Alloc *a, GPtrArray *jobs)
{
  guint64 need = a->charge - loc_free (s, LOC_DEVICE);
  if (a->charge <= s->mem.loc_cap[LOC_DEVICE] && spill_for (s, need, &a, 1, jobs))
    {
      a->loc = LOC_DEVICE;
      loc_add (s, LOC_DEVICE, a->charge);
      s->mem.dev_nonmanaged += a->charge;
      lru_touch (s, a);
      return TRUE;
    }
  /* It cannot fit now: it starts below, and is swapped in when used. */
  return place_below (s, a);
}

static const Policy policy_spill = {
  .name = "spill",
  .spill = TRUE,
  .nofit = nofit_spill,
};
