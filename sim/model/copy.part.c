/* copy.part.c — copy, memset and prefetch timing (5.5, 5.7): the job of one
 * transfer over its path.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static gboolean
pageable (const Alloc *host_side)
{
  return host_side == NULL || host_side->kind != VS_MEM_PINNED;
}

/* Builds the job of a copy (5.5). */
static Job *
copy_job (Sim *s, Op *op)
{
  double bytes = (double) op->bytes;
  guint p[VS_FLOW_MAX_PATH];
  guint n;
  if (s->core.cfg->unified && (op->dir == VS_DIR_H2D || op->dir == VS_DIR_D2H))
    {
      Job *j = job_new (s, 0);
      p[0] = s->gpu.r_dev;
      job_add_flow (j, 2 * bytes, INFINITY, p, 1);
      return j;
    }
  Job *j = job_new (s, s->core.cfg->link.latency_ns);
  int src_loc = op->src ? alloc_loc (s, op->src) : s->mem.loc_host;
  int dst_loc = op->dst ? alloc_loc (s, op->dst) : s->mem.loc_host;
  switch (op->dir)
    {
    case VS_DIR_H2D:
      {
        double cap = pageable (op->src) ? s->gpu.pageable_cap : INFINITY;
        if (dst_loc == LOC_DEVICE)
          p[0] = s->gpu.r_h2d, p[1] = s->gpu.r_dev, n = 2;
        else
          n = host_copy_path (s, dst_loc, TRUE, p);  /* a device allocation placed below */
        job_add_flow (j, bytes, cap, p, n);
        s->stats.h2d_bytes += op->bytes;
        break;
      }
    case VS_DIR_D2H:
      {
        double cap = pageable (op->dst) ? s->gpu.pageable_cap : INFINITY;
        if (src_loc == LOC_DEVICE)
          p[0] = s->gpu.r_d2h, p[1] = s->gpu.r_dev, n = 2;
        else
          n = host_copy_path (s, src_loc, FALSE, p);
        job_add_flow (j, bytes, cap, p, n);
        s->stats.d2h_bytes += op->bytes;
        break;
      }
    case VS_DIR_D2D:
      if (src_loc == LOC_DEVICE && dst_loc == LOC_DEVICE)
        {
          p[0] = s->gpu.r_dev;
          job_add_flow (j, 2 * bytes, INFINITY, p, 1);
        }
      else
        {
          n = read_path (s, src_loc, p);
          job_add_flow (j, bytes, INFINITY, p, n);
          n = write_path (s, dst_loc, p);
          job_add_flow (j, bytes, INFINITY, p, n);
        }
      break;
    case VS_DIR_P2P:
      p[0] = s->gpu.r_d2h;
      job_add_flow (j, bytes, INFINITY, p, 1);
      break;
    }
  return j;
}

/* Prefetch (5.7): migrates managed pages as a copy, without fault latency. */
static Job *
prefetch_job (Sim *s, Op *op)
{
  Alloc *a = op->target;
  if (a == NULL || a->kind != VS_MEM_MANAGED || a->freed || s->core.cfg->unified)
    return NULL;
  guint64 eu = s->core.cfg->uvm.evict_unit;
  guint64 limit = op->bytes == 0 ? a->bytes : MIN (op->bytes, a->bytes);
  guint32 ng = (guint32) ((limit + eu - 1) / eu);
  Job *j = job_new (s, 0);
  guint32 r = a->resident_groups;
  guint64 moved = 0;
  if (op->to == VS_TO_DEVICE)
    {
      if (ng > r)
        {
          guint64 missing = man_bytes (s, a, ng) - man_bytes (s, a, r);
          guint64 used = s->mem.loc_used[LOC_DEVICE], cap = s->mem.loc_cap[LOC_DEVICE];
          Job *wb = NULL;
          if (sat_add (used, missing) > cap)
            wb = evict_managed (s, sat_add (used, missing) - cap, &op->target, 1, NULL);
          /* Only what fits moves. */
          guint64 room = loc_free (s, LOC_DEVICE);
          guint32 r2 = ng;
          if (room < missing)
            r2 = (guint32) MIN ((guint64) ng, (man_bytes (s, a, r) + room) / eu);
          if (r2 > r)
            {
              loc_add (s, LOC_DEVICE, man_bytes (s, a, r2) - man_bytes (s, a, r));
              moved = (man_pages (s, a, r2) - man_pages (s, a, r)) * s->core.cfg->uvm.page;
              man_set_groups (s, a, r2);
              lru_touch (s, a);
            }
          job_after (j, wb);
          job_unref (wb);
        }
      guint p[] = { s->gpu.r_h2d, s->gpu.r_dev };
      job_add_flow (j, (double) moved, INFINITY, p, 2);
    }
  else
    {
      guint32 k = MIN (r, ng);
      moved = man_bytes (s, a, r) - man_bytes (s, a, r - k);
      man_shrink (s, a, r - k);
      guint p[] = { s->gpu.r_dev, s->gpu.r_d2h };
      job_add_flow (j, (double) moved, INFINITY, p, 2);
    }
  s->stats.prefetch_bytes += moved;
  return j;
}
