/* gpu-steps.part.c — where the GPU is at each mark: the steps as the GPU
 * runs them, beside the host's (report steady_state.gpu_step_median_ns).
 *
 * A host thread's marks time its steps as the host issues them; a host
 * that runs ahead of a slower GPU (up to the launch queue: launchq.part.c)
 * reaches its marks early, and its step times follow the GPU only once the
 * queue is full. The GPU's step is measured at the other end: the GPU's
 * frontier at a mark is the time every op issued before the mark has
 * completed (the latest completion among the busy streams' last ops; with
 * nothing queued, when the GPU last went idle). A step's GPU time is the
 * frontier at its end less the frontier at its start, the same pairs of
 * marks as the host's samples (points: to the thread's next mark; ranges:
 * NAME to NAME/end). In steady state the slower of the two sets the step
 * (docs/model.md 12). Each front also records how long the GPU had been
 * busy by then (the union of its ops' running time), so a step's GPU work
 * is known beside its span: what says which end bounds the step.
 *
 * A frontier is known only once its ops complete, after the mark: it is a
 * GpuFront, counted by what holds it (its thread's open marks, the waiters
 * on its ops), which writes its time into the sample slots that asked for
 * it (GpuDest) when it is known. Only marks make fronts: no cost per op.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

typedef struct {
  GArray **arr;          /* a MarkStat's gpu sample array (the GArray may move) */
  guint i;               /* the slot of the time; the busy time's is i + 2 */
} GpuDest;

/* A sample is four doubles: the fronts' times at its start and end, then
 * the GPU's busy time at each. */
#define GPU_SAMPLE 4

struct GpuFront {
  double t;              /* the frontier; NAN until known */
  double busy;           /* the GPU's busy time by then */
  guint waits;           /* busy streams' last ops not yet complete */
  int refs;
  guint n_dests;         /* slots waiting for t: the first two inline, the rest in more */
  GpuDest dest[2];
  GArray *more;          /* GpuDest, or NULL */
  GpuFront *next_free;
};

/* Fronts are recycled (one per mark reached): Sim.stats.fronts holds every
 * one made, for the teardown; free_fronts the unused. */
static void
gpu_front_free (Sim *s, GpuFront *f)
{
  if (f->more)
    g_array_set_size (f->more, 0);
  f->next_free = s->stats.free_fronts;
  s->stats.free_fronts = f;
}

static void
gpu_front_unref (Sim *s, GpuFront *f)
{
  if (f != NULL && --f->refs == 0)
    gpu_front_free (s, f);
}

static GpuFront *
gpu_front_ref (GpuFront *f)
{
  if (f != NULL)
    f->refs++;
  return f;
}

/* F is known: the frontier T, now or (nothing queued) when the GPU last
 * went idle; the busy time counts the running ops' time until now. */
static void
gpu_front_known (Sim *s, GpuFront *f, double t)
{
  f->t = t;
  f->busy = s->stats.gpu_busy_ns + (s->stats.gpu_running > 0 ? s->core.now - s->stats.gpu_since : 0);
  for (guint i = 0; i < f->n_dests; i++)
    {
      const GpuDest *d = i < 2 ? &f->dest[i] : &g_array_index (f->more, GpuDest, i - 2);
      g_array_index (*d->arr, double, d->i) = t;
      g_array_index (*d->arr, double, d->i + 2) = f->busy;
    }
  f->n_dests = 0;
}

static void
gpu_front_op_done (Sim *s, gpointer obj, guint64 arg)
{
  GpuFront *f = obj;
  if (--f->waits > 0)
    return;
  gpu_front_known (s, f, s->core.now);
  gpu_front_unref (s, f);   /* the waiters' reference */
}

/* (transfer full) The GPU's frontier now: known at once when nothing is
 * queued, else when the last op of every busy stream has completed. */
static GpuFront *
gpu_front_now (Sim *s)
{
  GpuFront *f = s->stats.free_fronts;
  if (f != NULL)
    s->stats.free_fronts = f->next_free;
  else
    {
      f = g_new0 (GpuFront, 1);
      g_ptr_array_add (s->stats.fronts, f);
    }
  f->refs = 1;
  f->t = NAN;
  f->waits = 0;
  f->n_dests = 0;
  for (Stream *st = s->gpu.busy; st; st = st->busy_next)
    if (!st->last->c.done)
      {
        if (f->waits++ == 0)
          f->refs++;
        completion_wait (&st->last->c, gpu_front_op_done, f, 0);
      }
  if (f->waits == 0)
    gpu_front_known (s, f, s->stats.gpu_idle_t >= 0 ? s->stats.gpu_idle_t : s->core.now);
  return f;
}

/* Slot I of *ARR takes F's time, now or once known. */
static void
gpu_front_put (GpuFront *f, GArray **arr, guint i)
{
  if (f == NULL)
    return;
  if (!isnan (f->t))
    {
      g_array_index (*arr, double, i) = f->t;
      g_array_index (*arr, double, i + 2) = f->busy;
      return;
    }
  GpuDest d = { arr, i };
  if (f->n_dests < 2)
    f->dest[f->n_dests] = d;
  else
    {
      if (f->more == NULL)
        f->more = g_array_new (FALSE, FALSE, sizeof (GpuDest));
      g_array_append_val (f->more, d);
    }
  f->n_dests++;
}

/* A sample from START to END (either may be NULL: unknown) into the
 * sample array *ARR, kept while the host's samples are (MAX). */
static void
gpu_sample_add (GArray **arr, guint max, GpuFront *start, GpuFront *end)
{
  if (*arr == NULL)
    *arr = g_array_new (FALSE, FALSE, sizeof (double));
  if ((*arr)->len / GPU_SAMPLE >= max)
    return;
  guint i = (*arr)->len;
  double nan[GPU_SAMPLE] = { NAN, NAN, NAN, NAN };
  g_array_append_vals (*arr, nan, GPU_SAMPLE);
  gpu_front_put (start, arr, i);
  gpu_front_put (end, arr, i + 1);
}

/* The GPU's steps of the sample array SAMPLES where both ends are known,
 * in sample order (transfer full): their spans (end - start) into *SPANS,
 * the GPU's busy time within them into *BUSY. */
static void
gpu_samples (const GArray *samples, GArray **spans, GArray **busy)
{
  *spans = g_array_new (FALSE, FALSE, sizeof (double));
  *busy = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; samples && i + GPU_SAMPLE <= samples->len; i += GPU_SAMPLE)
    {
      const double *v = &g_array_index (samples, double, i);
      if (isnan (v[0]) || isnan (v[1]))
        continue;
      double d = MAX (0.0, v[1] - v[0]), b = MAX (0.0, v[3] - v[2]);
      g_array_append_val (*spans, d);
      g_array_append_val (*busy, b);
    }
}

static void
gpu_fronts_teardown (Sim *s)
{
  for (guint i = 0; i < s->stats.fronts->len; i++)
    {
      GpuFront *f = s->stats.fronts->pdata[i];
      if (f->more)
        g_array_unref (f->more);
      g_free (f);
    }
  g_ptr_array_free (s->stats.fronts, TRUE);
}
