/* kernel.part.c — kernel timing (5.4): alone time from compute and bytes,
 * and its compute and memory flows.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
part_add (Part *parts, guint *n_parts, const guint *path, guint n, double amount)
{
  if (amount <= 0)
    return;
  for (guint i = 0; i < *n_parts; i++)
    {
      guint k = 0;
      if (parts[i].n == n)
        while (k < n && parts[i].path[k] == path[k])
          k++;
      if (k == n && parts[i].n == n)
        {
          parts[i].amount += amount;
          return;
        }
    }
  Part *p = &parts[(*n_parts)++];
  memcpy (p->path, path, n * sizeof (guint));
  p->n = n;
  p->amount = amount;
}

static int
alloc_loc (Sim *s, const Alloc *a)
{
  if (a->kind == VS_MEM_PINNED)
    return s->mem.loc_host;
  if (a->kind == VS_MEM_MANAGED)
    return LOC_DEVICE;  /* faulted in before the kernel runs */
  return a->loc;
}

/* Sets OP's alone time D1 (5.4) and starts its compute flow, C1 ns on
 * `sm` capped to end at D1 when alone (every flow of the kernel is). FALSE
 * when the kernel takes no time: then nothing starts. */
static inline gboolean
kernel_start_compute (Sim *s, Op *op, double c1, double d1)
{
  op->alone_ns = d1;
  op->waiting = 0;
  if (d1 <= 0)
    return FALSE;
  if (c1 > 0)
    {
      op->waiting++;
      flow_start (s->core.net, s->core.now, c1 * 1e-9, c1 * (1 / d1), &s->gpu.r_sm, 1, op, 0);
    }
  return TRUE;
}

static void
kernel_run (Sim *s, Op *op, Job *j_unused)
{
  double d0 = op->dur == VS_NONE ? 0 : i2d (op->dur);
  double x, wsum = -1;  /* -1: not summed yet */
  if (op->bytes != VS_NONE)
    x = i2d (op->bytes);
  else
    x = wsum = op_wsum (op);
  x = MIN (x, d0 * 1e-9 * s->gpu.b0_dev);
  double m0 = MIN (x * s->gpu.ns_per_byte0, d0);
  double c0 = op->compute_ns != VS_NONE ? i2d (op->compute_ns) : d0 - m0;
  double c1 = c0 * s->gpu.tflops_scale;

  if (x > 0 && s->mem.dev_only && !op->has_pinned)
    {
      /* The common case without the parts: only device memory to reach,
       * the whole of x is one [device_mem] flow (as below, with the same
       * arithmetic). */
      double d1 = c1 + x * s->gpu.ns_per_byte;
      if (!kernel_start_compute (s, op, c1, d1))
        return;
      op->waiting++;
      flow_start (s->core.net, s->core.now, x, x * (1 / d1) * 1e9, &s->gpu.r_dev, 1, op, 0);
      return;
    }

  /* At most one part per (location, direction). */
  Part *parts = s->gpu.parts;
  guint n_parts = 0;
  guint path[VS_FLOW_MAX_PATH];
  if (x > 0)
    {
      if ((wsum < 0 ? (wsum = op_wsum (op)) : wsum) <= 0)
        {
          /* Traffic without allocations to split it over: the whole of x
           * is one [device_mem] part. (Only device memory to reach took
           * the path above.) */
          path[0] = s->gpu.r_dev;
          part_add (parts, &n_parts, path, 1, x);
        }
      else
        for (guint i = 0; i < op->n_acc; i++)
          {
            Alloc *a = op->acc[i];
            double sz = (double) a->bytes;
            int loc = alloc_loc (s, a);
            if (op->mode[i] & (ACC_R | 4))
              {
                guint n = read_path (s, loc, path);
                part_add (parts, &n_parts, path, n, x * sz / wsum);
              }
            if ((op->mode[i] & ACC_W) && !(op->mode[i] & 4))
              {
                guint n = write_path (s, loc, path);
                part_add (parts, &n_parts, path, n, x * sz / wsum);
              }
          }
    }
  double d1 = c1;
  for (guint i = 0; i < n_parts; i++)
    d1 += parts[i].n == 1 && parts[i].path[0] == s->gpu.r_dev ? parts[i].amount * s->gpu.ns_per_byte
      : parts[i].amount / flow_net_alone_rate (s->core.net, parts[i].path, parts[i].n, INFINITY) * 1e9;
  if (!kernel_start_compute (s, op, c1, d1))
    return;
  double per_ns = 1 / d1;
  for (guint i = 0; i < n_parts; i++)
    {
      op->waiting++;
      flow_start (s->core.net, s->core.now, parts[i].amount, parts[i].amount * per_ns * 1e9,
                  parts[i].path, parts[i].n, op, 0);
    }
}
