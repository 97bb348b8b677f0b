/* managed.part.c — managed memory (5.7): residency in evict units, eviction
 * LRU first, and faulting an op's pages in.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* Bytes and pages of the first GROUPS evict units of managed allocation
 * A (the last unit may be partial). */
static guint64
man_bytes (const Sim *s, const Alloc *a, guint64 groups)
{
  return groups >= a->n_groups ? a->bytes : groups * s->core.cfg->uvm.evict_unit;
}

static guint64
man_pages (const Sim *s, const Alloc *a, guint64 groups)
{
  guint64 page = s->core.cfg->uvm.page;
  return (man_bytes (s, a, groups) + page - 1) / page;
}

static guint64
man_resident (const Sim *s, const Alloc *a)
{
  return man_bytes (s, a, a->resident_groups);
}

/* Every change of a managed allocation's residency goes through here, to
 * keep the resident bytes of managed allocations in use by running ops
 * (fault_in needs them per op; summing them per op cost O(allocations)). */
static void
man_set_groups (Sim *s, Alloc *a, guint32 r)
{
  if (a->running > 0)
    s->mem.man_running_bytes += man_bytes (s, a, r) - man_resident (s, a);
  /* Managed memory not resident on the device is charged to the host
   * (5.7), under every policy; a unified machine has one pool. */
  if (!s->core.cfg->unified && !a->freed)
    {
      guint64 was = man_resident (s, a), now = man_bytes (s, a, r);
      if (now > was)
        loc_sub (s, s->mem.loc_host, now - was);
      else
        loc_add (s, s->mem.loc_host, was - now);
    }
  a->resident_groups = r;
}

/* Sets A's resident groups to R, with the dirty ones in proportion. */
static void
man_shrink (Sim *s, Alloc *a, guint32 r)
{
  guint32 old = a->resident_groups;
  g_assert (r <= old);
  if (r == old)
    return;
  guint64 freed = man_bytes (s, a, old) - man_bytes (s, a, r);
  a->dirty_groups = (guint32) ((guint64) a->dirty_groups * r / old);
  man_set_groups (s, a, r);
  loc_sub (s, LOC_DEVICE, freed);
  if (r == 0)
    lru_remove (s, a);
}

/* Evicts A's groups until NEED bytes are freed or none are left; the
 * write-back of its dirty share goes to *WB. Returns bytes freed. All of
 * an allocation is touched at once, so which of its groups go is not
 * tracked, only how many, and dirty ones leave in proportion. */
static guint64
evict_groups (Sim *s, Alloc *a, guint64 need, guint64 *wb)
{
  guint32 r = a->resident_groups;
  if (r == 0)
    return 0;
  guint64 have = man_bytes (s, a, r);
  guint32 r2 = need >= have ? 0 : (guint32) ((have - need) / s->core.cfg->uvm.evict_unit);
  guint64 freed = have - man_bytes (s, a, r2);
  *wb += (guint64) ((double) freed * a->dirty_groups / r);
  man_shrink (s, a, r2);
  return freed;
}

/* Frees NEED device bytes by evicting managed groups, LRU first, sparing
 * KEEP and running ops. Returns a write-back job (started, with a
 * reference for the caller) or NULL. */
static Job *
evict_managed (Sim *s, guint64 need, Alloc *const *keep, guint n_keep, guint64 *freed_out)
{
  guint64 wb = 0, freed = 0;
  for (Alloc *a = s->mem.lru_man.head, *next; a != NULL && freed < need; a = next)
    {
      next = a->lru_next;
      if (!evictable (a, keep, n_keep))
        continue;
      freed += evict_groups (s, a, need - freed, &wb);
    }
  if (freed_out)
    *freed_out = freed;
  if (wb == 0)
    return NULL;
  s->stats.writeback_bytes += wb;
  guint p[] = { s->gpu.r_dev, s->gpu.r_d2h };
  Job *j = job_new (s, 0);
  job_add_flow (j, wb, INFINITY, p, s->core.cfg->unified ? 1 : 2);
  j->c.refs++;
  job_start (s, j);
  return j;
}


static guint64
sat_add (guint64 a, guint64 b)
{
  return b > G_MAXUINT64 - a ? G_MAXUINT64 : a + b;
}

/* Fault in the op's managed allocations (5.7). */
static void
fault_in (Sim *s, Op *op)
{
  if (s->core.cfg->unified || !op->has_managed)
    return;
  guint64 total = 0, missing = 0, missing_pages = 0, created_pages = 0;
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind != VS_MEM_MANAGED || a->freed)
        continue;
      total = sat_add (total, a->bytes);
      missing = sat_add (missing, a->bytes - man_resident (s, a));
      guint64 mp = man_pages (s, a, a->n_groups) - man_pages (s, a, a->resident_groups);
      missing_pages += mp;
      if (a->start_device && !a->touched)
        created_pages += mp;
      a->touched = TRUE;
    }
  if (missing == 0)
    return;
  /* Device memory the set could use: all but non-managed memory and the
   * managed memory of running ops outside the set. */
  guint64 held = s->mem.man_running_bytes;
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      if (a->kind == VS_MEM_MANAGED && a->running > 0)
        held -= man_resident (s, a);
    }
  guint64 cap = s->mem.loc_cap[LOC_DEVICE];
  guint64 taken = sat_add (s->mem.dev_nonmanaged, held);
  guint64 avail = cap > taken ? cap - taken : 0;
  guint64 used = s->mem.loc_used[LOC_DEVICE];
  Job *wb = NULL;
  Job *j;
  guint pin[] = { s->gpu.r_h2d, s->gpu.r_dev };
  guint pout[] = { s->gpu.r_dev, s->gpu.r_d2h };
  if (total <= avail)
    {
      if (sat_add (used, missing) > cap)
        wb = evict_managed (s, sat_add (used, missing) - cap, op->acc, op->n_acc, NULL);
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind != VS_MEM_MANAGED || a->freed)
            continue;
          loc_add (s, LOC_DEVICE, a->bytes - man_resident (s, a));
          man_set_groups (s, a, a->n_groups);
          /* Resident now, before its op runs (op_run touches it again):
           * on the LRU at once, so that another op's fault-in meanwhile
           * can evict it. Off the list, its pages were in nobody's reach
           * and the device could be charged past its capacity. */
          lru_touch (s, a);
        }
      guint64 batches = (missing_pages + s->core.cfg->uvm.fault_batch - 1) / s->core.cfg->uvm.fault_batch;
      j = job_new (s, batches * s->core.cfg->uvm.fault_latency_ns);
      /* First touch on the device: pages never touched of an allocation
       * whose pages start there are created on the GPU, faulted (the H200
       * spent the fault time) but not moved (0 B migrated). */
      guint64 moved = missing_pages - MIN (missing_pages, created_pages);
      job_add_flow (j, (double) moved * s->core.cfg->uvm.page, INFINITY, pin, 2);
      s->stats.faults += missing_pages;
      s->stats.fault_bytes += moved * s->core.cfg->uvm.page;
    }
  else
    {
      /* Thrashing: the set does not fit. Everything else that can go
       * goes; every page of the set faults during the kernel; at the end
       * the set's first AVAIL bytes (in the order the op names them) stay
       * resident, and what does not stay is written back if dirty or
       * written by this op. */
      wb = evict_managed (s, used, op->acc, op->n_acc, NULL);
      guint64 pages = 0, wb_set = 0, room = avail;
      guint32 *keep = g_new0 (guint32, op->n_acc);
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind != VS_MEM_MANAGED || a->freed)
            continue;
          guint32 r2 = room >= a->bytes ? a->n_groups : (guint32) (room / s->core.cfg->uvm.evict_unit);
          room -= man_bytes (s, a, r2);
          keep[i] = r2;
          pages += man_pages (s, a, a->n_groups);
          guint64 leaves = a->bytes - man_bytes (s, a, r2);
          if (op->mode[i] & ACC_W)
            wb_set += leaves;
          else if (a->dirty_groups > r2)
            wb_set += MIN (leaves, (guint64) (a->dirty_groups - r2) * s->core.cfg->uvm.evict_unit);
        }
      /* What leaves first, so that no false peak is recorded. */
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind == VS_MEM_MANAGED && !a->freed && keep[i] < a->resident_groups)
            man_shrink (s, a, keep[i]);
        }
      for (guint i = 0; i < op->n_acc; i++)
        {
          Alloc *a = op->acc[i];
          if (a->kind == VS_MEM_MANAGED && !a->freed && keep[i] > a->resident_groups)
            {
              loc_add (s, LOC_DEVICE, man_bytes (s, a, keep[i]) - man_resident (s, a));
              man_set_groups (s, a, keep[i]);
              lru_touch (s, a);   /* as above */
            }
        }
      g_free (keep);
      guint64 batches = (pages + s->core.cfg->uvm.fault_batch - 1) / s->core.cfg->uvm.fault_batch;
      j = job_new (s, batches * s->core.cfg->uvm.fault_latency_ns);
      job_add_flow (j, (double) pages * s->core.cfg->uvm.page, INFINITY, pin, 2);
      job_add_flow (j, (double) wb_set, INFINITY, pout, 2);
      s->stats.faults += pages;
      s->stats.fault_bytes += pages * s->core.cfg->uvm.page;
      s->stats.writeback_bytes += wb_set;
    }
  job_after (j, wb);
  job_unref (wb);
  op_wait_job (op, j);
  job_start (s, j);
}
