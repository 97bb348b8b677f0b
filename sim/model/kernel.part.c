/* kernel.part.c — kernel timing (5.4): alone time from compute and bytes,
 * and its compute and memory flows. model.kernel "waves" (the default)
 * takes the parts of the alone time from the kernel model
 * (sim/model/kernel-model.c); "simple" is SPEC 5.4's rule.
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
      flow_start (s->core.net, s->core.now, c1 * 1e-9, c1 * (1 / d1), &s->gpu.r_sm, 1, op, FLOW_OP);
    }
  return TRUE;
}

/* Whether A and B are one shape class: all but the flops count, which
 * the factors do not depend on, only on whether there is one
 * (kernel_model_factors). */
static inline gboolean
kernel_shape_class_eq (const VsKernelShape *a, const VsKernelShape *b)
{
  return a->grid[0] == b->grid[0] && a->grid[1] == b->grid[1] && a->grid[2] == b->grid[2]
         && a->block[0] == b->block[0] && a->block[1] == b->block[1] && a->block[2] == b->block[2]
         && a->regs == b->regs && a->smem == b->smem && a->precision == b->precision
         && (a->flops == VS_NONE) == (b->flops == VS_NONE);
}

/* The model's factors for kernel event EV: cached by the interned name's
 * address (and the shape class, for kernels that have one), so that the
 * model's own lookup by name text runs once per name and shape class, not
 * per event. */
static const VsKernelFactors *
kernel_factors (Sim *s, const VsEvent *ev)
{
  const char *name = ev->name ? ev->name : "";
  guint h = ptr_slot (name, KF_CACHE_BITS);
  const VsKernelFactors *f;
  if (ev->shape == NULL)
    {
      /* The name's slot or one of the next KF_PROBES - 1: a name takes
       * the first free one, so that two names whose slots collide do not
       * evict each other (the home slot is taken over only when all are
       * used). */
      __typeof__ (&s->gpu.kfcache[0]) e = &s->gpu.kfcache[h], home = e;
      for (guint p = 0; p < KF_PROBES; p++, e = &s->gpu.kfcache[(h + p) & (KF_CACHE - 1)])
        {
          if (G_LIKELY (e->name == name))
            return e->kf;
          if (e->name == NULL)
            break;
        }
      if (e->name != NULL)
        e = home;
      f = kernel_model_factors (s->gpu.kmodel, name, NULL);
      e->name = name;
      e->kf = f;
    }
  else
    {
      /* Likewise, one shape class per name (the last one seen). */
      __typeof__ (&s->gpu.kscache[0]) e = &s->gpu.kscache[h], home = e;
      for (guint p = 0; p < KF_PROBES; p++, e = &s->gpu.kscache[(h + p) & (KF_CACHE - 1)])
        {
          if (G_LIKELY (e->name == name))
            {
              if (G_LIKELY (kernel_shape_class_eq (&e->shape, ev->shape)))
                return e->kf;
              break;
            }
          if (e->name == NULL)
            break;
        }
      if (e->name != NULL && e->name != name)
        e = home;
      f = kernel_model_factors (s->gpu.kmodel, name, ev->shape);
      e->name = name;
      e->shape = *ev->shape;
      e->kf = f;
    }
  if (G_UNLIKELY (f->fallback || f->upgraded) && f->cscale != 1.0)
    kernel_rate_warning (s, f, name);
  return f;
}

/* Where the rate a kernel runs at is not the one its precision names,
 * say so once per precision (docs/model.md 4, "Missing peaks"), where it
 * changes the answer (not when both chips stand in alike): a chip that
 * gives no peak for it (its fallback's rate is used), or FP32 work that
 * runs as TF32 on the target (model.tf32). */
static __attribute__ ((noinline, cold)) void
kernel_rate_warning (Sim *s, const VsKernelFactors *f, const char *name)
{
  guint bit = 1u << f->precision;
  if (f->fallback ? (s->stats.fallback_warned & bit) : (s->stats.upgrade_warned & bit))
    return;
  VsKernelChip cap, tgt;
  kernel_chip_from_config (&cap, s->core.cap_cfg);
  kernel_chip_from_config (&tgt, s->core.cfg);
  const char *pname = event_precision_name (f->precision);
  if (!f->fallback)
    {
      s->stats.upgrade_warned |= bit;
      g_ptr_array_add (s->stats.warnings,
                       g_strdup_printf ("fp32 kernels (first: %.60s) run as tf32 on %s: %s captured them at its FP32 "
                                        "rate (compute.fp32, it has no faster TF32 rate) and %s runs them at its "
                                        "compute.tf32 (model.tf32 \"%s\")", name, s->core.cfg->name,
                                        s->core.cap_cfg->name, s->core.cfg->name,
                                        s->core.cfg->tf32 == VS_TF32_ALL ? "all" : "conv"));
      return;
    }
  s->stats.fallback_warned |= bit;
  /* The precision each chip runs it at (an upgraded kernel: FP32 at
   * capture), and the one whose peak each has instead. */
  guint pc = f->upgraded ? VS_PREC_FP32 : f->precision, used0, used1;
  kernel_chip_peak (&cap, pc, &used0);
  kernel_chip_peak (&tgt, f->precision, &used1);
  gboolean on_tgt = used1 != f->precision, on_cap = used0 != pc;
  guint used = on_tgt ? used1 : used0;
  g_autofree char *uname = g_ascii_strup (event_precision_name (used), -1);
  g_ptr_array_add (s->stats.warnings,
                   g_strdup_printf ("%s kernels (first: %.60s): %s gives no compute.%s peak; its %s rate "
                                    "(compute.%s) is used instead%s", pname, name,
                                    on_tgt ? s->core.cfg->name : s->core.cap_cfg->name, on_tgt ? pname
                                    : event_precision_name (pc), uname, event_precision_name (used),
                                    on_tgt && on_cap ? " (on both configs)" : ""));
}

static void
kernel_run (Sim *s, Op *op)
{
  coll_note (s, op, +1);
  if (G_UNLIKELY (op->has_coll))
    {
      coll_run (s, op);
      return;
    }
  if (s->gpu.simple)
    kernel_run_simple (s, op);
  else
    kernel_run_waves (s, op);
}

/* Splits X bytes of OP's traffic over the locations of its allocations
 * (5.4: in proportion to their sizes; reads and touches over the path in,
 * writes over the path out) into PARTS; returns how many. */
static guint
kernel_parts (Sim *s, Op *op, double x, double wsum, Part *parts)
{
  guint n_parts = 0;
  guint path[VS_FLOW_MAX_PATH];
  if (x <= 0)
    return 0;
  if ((wsum < 0 ? (wsum = op_wsum (op)) : wsum) <= 0)
    {
      /* Traffic without allocations to split it over: the whole of x is
       * one [device_mem] part. */
      path[0] = s->gpu.r_dev;
      part_add (parts, &n_parts, path, 1, x);
      return n_parts;
    }
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      double sz = (double) a->bytes;
      int loc = alloc_loc (s, a);
      if (op->mode[i] & (ACC_R | ACC_TOUCH))
        {
          guint n = read_path (s, loc, path);
          part_add (parts, &n_parts, path, n, x * sz / wsum);
        }
      if ((op->mode[i] & ACC_W) && !(op->mode[i] & ACC_TOUCH))
        {
          guint n = write_path (s, loc, path);
          part_add (parts, &n_parts, path, n, x * sz / wsum);
        }
    }
  return n_parts;
}

/* A kernel's inferred accesses (docs/model.md 6b) that lie off the
 * device (placed below by direct, or a spilled allocation the swap-in
 * could not bring back, or one the host freed first): the kernel reaches
 * each where it lies, its whole size once (a read over the path in, a
 * write over the path out): the least a kernel that uses it moves. Added
 * to PARTS (N_PARTS so far, merged by path); returns how many there are. */
static guint
kernel_infer_parts (Sim *s, Op *op, Part *parts, guint n_parts)
{
  guint path[VS_FLOW_MAX_PATH];
  for (guint i = 0; i < op->n_acc; i++)
    {
      Alloc *a = op->acc[i];
      int loc = alloc_loc (s, a);
      if (loc == LOC_DEVICE || (s->core.cfg->unified && loc == s->mem.loc_host))
        continue;
      double sz = i2d (a->bytes);
      guint n = op->mode[i] & ACC_W ? write_path (s, loc, path) : read_path (s, loc, path);
      part_add (parts, &n_parts, path, n, sz);
      s->stats.infer_below_bytes += sz;
    }
  return n_parts;
}

/* The waves model: the kernel's floor and compute part are one `sm` flow
 * of its share of the SMs (a kernel that fills a tenth of them leaves the
 * rest to kernels beside it), its memory part the flows of the bytes it
 * moves. Alone, every flow ends at the model's alone time d1 (on the
 * capture config: the captured dur). */
static void
kernel_run_waves (Sim *s, Op *op)
{
  const VsKernelFactors *f = op->kf;
  guint64 d0 = op->dur == VS_NONE ? 0 : op->dur;
  /* Its traffic: `bytes`, else SPEC 5.4's X from the sizes of what it
   * reads and writes, capped at what the capture could move in d0. */
  guint64 bytes = op->bytes;
  double wsum = -1;
  if (bytes == VS_NONE && op->n_acc > 0 && (wsum = op_wsum (op)) > 0)
    bytes = (guint64) MIN (wsum, i2d (d0) * 1e-9 * s->gpu.b0_dev);
  VsKernelPred p;
  kernel_model_predict (s->gpu.kmodel, f, d0, bytes, op->compute_ns, op->flops, &p);
  op->kbound = p.bound;
  double share = f->sm_share;
  double x = p.mem_bytes;
  /* The floor rides with the compute part on the SMs; a kernel with only
   * a memory part carries it in its memory flows instead (so it does not
   * take SM time from kernels beside it). */
  double c = p.c1_ns > 0 || x <= 0 ? p.floor_ns + p.c1_ns : 0;   /* GPU-ns on the SMs it fills */
  if (x > 0 && s->mem.dev_only && !op->has_pinned)
    {
      /* Only device memory to reach: one [device_mem] flow. */
      double d1 = p.d1_ns;
      op->alone_ns = d1;
      op->waiting = 0;
      if (d1 <= 0)
        return;
      if (c > 0)
        {
          op->waiting = 2;
          flow_start2 (s->core.net, s->core.now, c * share * 1e-9, c * share / d1, s->gpu.r_sm,
                       x, x / d1 * 1e9, s->gpu.r_dev, op, FLOW_OP);
          return;
        }
      op->waiting = 1;
      flow_start (s->core.net, s->core.now, x, x / d1 * 1e9, &s->gpu.r_dev, 1, op, FLOW_OP);
      return;
    }
  Part *parts = s->gpu.parts;
  guint n_base = kernel_parts (s, op, x, wsum, parts), n_parts = n_base;
  if (G_UNLIKELY (op->kinds & OP_INFERRED))
    n_parts = kernel_infer_parts (s, op, parts, n_parts);
  /* The device part takes its share of the model's memory time; parts
   * elsewhere (tiers, the host) their bytes at their path's alone rate. */
  double d1 = c > 0 ? c : p.floor_ns;
  for (guint i = 0; i < n_parts; i++)
    d1 += parts[i].n == 1 && parts[i].path[0] == s->gpu.r_dev ? p.m1_ns * parts[i].amount / x
      : parts[i].amount / flow_net_alone_rate (s->core.net, parts[i].path, parts[i].n, INFINITY) * 1e9;
  if (n_base == 0)
    d1 += p.m1_ns;
  op->alone_ns = d1;
  op->waiting = 0;
  if (d1 <= 0)
    return;
  if (c + (n_base == 0 ? p.m1_ns : 0) > 0)
    {
      /* With no bytes to move (x = 0 cannot have m1 > 0, but keep the
       * time whole), the sm flow carries it. */
      double cc = c + (n_base == 0 ? p.m1_ns : 0);
      op->waiting++;
      flow_start (s->core.net, s->core.now, cc * share * 1e-9, cc * share / d1, &s->gpu.r_sm, 1, op, FLOW_OP);
    }
  for (guint i = 0; i < n_parts; i++)
    {
      op->waiting++;
      flow_start (s->core.net, s->core.now, parts[i].amount, parts[i].amount / d1 * 1e9, parts[i].path,
                  parts[i].n, op, FLOW_OP);
    }
}

/* SPEC 5.4's rule (model.kernel "simple"). */
static void
kernel_run_simple (Sim *s, Op *op)
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
  op->kbound = op->kf->kind.cls == VS_KCLASS_COMM ? VS_BOUND_COMMUNICATION
               : m0 > c0 ? VS_BOUND_MEMORY : VS_BOUND_COMPUTE;

  if (x > 0 && s->mem.dev_only && !op->has_pinned)
    {
      /* The common case without the parts: only device memory to reach,
       * the whole of x is one [device_mem] flow (as below, with the same
       * arithmetic). */
      double d1 = c1 + x * s->gpu.ns_per_byte;
      if (!kernel_start_compute (s, op, c1, d1))
        return;
      op->waiting++;
      flow_start (s->core.net, s->core.now, x, x * (1 / d1) * 1e9, &s->gpu.r_dev, 1, op, FLOW_OP);
      return;
    }

  /* At most one part per (location, direction). */
  Part *parts = s->gpu.parts;
  guint n_parts = kernel_parts (s, op, x, wsum, parts);
  if (G_UNLIKELY (op->kinds & OP_INFERRED))
    n_parts = kernel_infer_parts (s, op, parts, n_parts);
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
                  parts[i].path, parts[i].n, op, FLOW_OP);
    }
}
