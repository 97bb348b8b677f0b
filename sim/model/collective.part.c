/* collective.part.c — a kernel with a `collective` (SPEC 5.8): its time from
 * the network model (sim/model/network.c), its SMs and device-memory
 * traffic, and the report's `network` section.
 *
 * Assumptions (docs/model.md section 11, "In the replay"):
 * - Time. d0 is the captured duration, n0 the trace's group; net0 and net1
 *   the network model's times on the capture and the target fabric (n1 =
 *   network.ranks for the trace's largest group when the target sizes the
 *   job, else n0). What the model explains moves to the target's network;
 *   what it does not (d0 - net0: waiting for slower peers, a pipeline
 *   bubble) is other GPUs' compute and scales with compute:
 *   d1 = net1 + (d0 - net0) x capture tflops / target tflops. A capture
 *   faster than the model (d0 < net0) is scaled: d1 = d0 x net1 / net0.
 *   Both give d1 = d0 on the capture config (the SPEC's identity).
 * - Resources. NCCL runs one thread block per channel, about 16 on an
 *   8-GPU NVLink node (NCCL_MIN/MAX_NCHANNELS, tuned per topology): 16 of
 *   an A100's 108 SMs, so a collective holds a 0.15 share of `sm` for its
 *   whole time and moves its local traffic (the kernel's `bytes`, else its
 *   input read and output written) over `device_mem`; both flows are capped
 *   to end at d1 alone, so compute on another stream that wants the whole
 *   GPU is slowed by the share NCCL holds, and the collective by the
 *   memory bandwidth that compute takes.
 * - `busy_ns` is the time any collective runs; `exposed_ns` the part of it
 *   with no other kernel running on any stream (communication nothing
 *   hides). Both are counted at kernel starts and ends: O(1) per event.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

#define COLL_SM_SHARE 0.15

/* The largest group named by the trace at PATH, or 0. A second pass over
 * the file, made only when the target sizes the job (network.ranks > 1),
 * the capture config does not say what the trace's world was, and the
 * reader does not know it already (a sweep's or fit's in-memory trace
 * found it while loading: no file is read again per run). */
static guint32
coll_world_of (const char *path)
{
  if (path == NULL || strcmp (path, "-") == 0)
    return 0;
  g_autoptr (GError) err = NULL;
  VsTraceReader *r = trace_open (path, &err);
  if (r == NULL)
    return 0;
  guint32 world = 0;
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    if (ev.collective != NULL)
      world = MAX (world, ev.collective->ranks);
  trace_close (r);
  return err == NULL ? world : 0;
}

static void
coll_setup (Sim *s)
{
  network_from_config (&s->coll.target, s->core.cfg);
  network_from_config (&s->coll.capture, s->core.cap_cfg);
  s->coll.ranks = s->core.cfg->network.ranks;
  if (s->coll.ranks > 1)
    s->coll.world = s->core.cap_cfg->network.ranks > 1 ? s->core.cap_cfg->network.ranks
                    : trace_reader_max_group (s->core.trace) > 0 ? trace_reader_max_group (s->core.trace)
                    : coll_world_of (trace_reader_path (s->core.trace));
}

static inline void
coll_note (Sim *s, const Op *op, int delta)
{
  double now = s->core.now;
  if (s->coll.running_coll > 0)
    {
      double dt = now - s->coll.last_t;
      s->coll.busy_ns += dt;
      if (s->coll.running_other == 0)
        s->coll.exposed_ns += dt;
    }
  s->coll.last_t = now;
  if (op->has_coll)
    s->coll.running_coll += delta;
  else
    s->coll.running_other += delta;
}

/* Device-memory bytes of a collective whose trace gives none: its input
 * read and its output written (SPEC 3's bytes is the input). */
static double
coll_local_bytes (const VsCollective *c)
{
  double in = i2d (c->bytes), n = MAX (c->ranks, 1u);
  switch (c->kind)
    {
    case VS_COLL_ALL_GATHER: return in + in * n;
    case VS_COLL_REDUCE_SCATTER: return in + in / n;
    case VS_COLL_SEND: return in;
    case VS_COLL_RECV: return in;
    default: return 2 * in;
    }
}

static void
coll_run (Sim *s, Op *op)
{
  const VsCollective *c = &op->coll;
  guint32 n0 = c->ranks;
  guint32 n1 = s->coll.ranks > 1 && s->coll.world > 1 && n0 == s->coll.world ? s->coll.ranks : n0;
  double d0 = op->dur == VS_NONE ? 0 : i2d (op->dur);
  double net0 = (double) network_time_ns (&s->coll.capture, c->kind, c->bytes, n0);
  double net1 = (double) network_time_ns (&s->coll.target, c->kind, c->bytes, n1);
  double d1;
  if (d0 >= net0)
    d1 = net1 + (d0 - net0) * s->gpu.tflops_scale;
  else
    d1 = d0 * net1 / net0;
  op->alone_ns = d1;
  op->waiting = 0;
  /* The network sets its time: the class table's bound (SPEC 5.9). */
  op->kbound = VS_BOUND_COMMUNICATION;
  if (d1 <= 0)
    return;
  op->waiting++;
  flow_start (s->core.net, s->core.now, COLL_SM_SHARE * d1 * 1e-9, COLL_SM_SHARE, &s->gpu.r_sm, 1, op, 0);
  double x = op->bytes != VS_NONE ? i2d (op->bytes) : coll_local_bytes (c);
  x = MIN (x, d1 * 1e-9 * s->gpu.b_dev);
  if (x > 0)
    {
      op->waiting++;
      flow_start (s->core.net, s->core.now, x, x / d1 * 1e9, &s->gpu.r_dev, 1, op, 0);
    }
}

static void
coll_done (Sim *s, const Op *op, double end)
{
  CollStat *k = &s->coll.kinds[op->coll.kind];
  k->count++;
  k->bytes += op->coll.bytes;
  k->captured_ns += op->dur == VS_NONE ? 0 : i2d (op->dur);
  k->predicted_ns += end - op->ready_t;
  s->coll.max_group = MAX (s->coll.max_group, op->coll.ranks);
}

static void
coll_report (Sim *s, cJSON *r)
{
  cJSON *n = cJSON_AddObjectToObject (r, "network");
  guint64 count = 0, bytes = 0;
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    count += s->coll.kinds[k].count, bytes += s->coll.kinds[k].bytes;
  cJSON_AddNumberToObject (n, "collectives", (double) count);
  cJSON_AddNumberToObject (n, "bytes", (double) bytes);
  cJSON_AddNumberToObject (n, "busy_ns", round (s->coll.busy_ns));
  cJSON_AddNumberToObject (n, "exposed_ns", round (s->coll.exposed_ns));
  /* The job's size: network.ranks when it sizes the job, else the
   * largest group the trace named. */
  cJSON_AddNumberToObject (n, "ranks", s->coll.ranks > 1 ? s->coll.ranks : s->coll.max_group);
  cJSON *kinds = cJSON_AddArrayToObject (n, "kinds");
  for (guint k = 0; k < VS_COLL_COUNT; k++)
    {
      const CollStat *c = &s->coll.kinds[k];
      if (c->count == 0)
        continue;
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "kind", event_collective_name (k));
      cJSON_AddNumberToObject (o, "count", (double) c->count);
      cJSON_AddNumberToObject (o, "bytes", (double) c->bytes);
      cJSON_AddNumberToObject (o, "captured_ns", round (c->captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (c->predicted_ns));
      cJSON_AddItemToArray (kinds, o);
    }
}
