/* sample.part.c — `--sample-steps K`: replay a trace of repeated steps
 * only until they are steady, then extrapolate the rest (docs/report.md,
 * "sampled").
 *
 * The repeated mark is the first mark name a thread reaches twice (a
 * point mark, or the start of a range); a step is the host time between
 * two of its reaches. At each reach the state is noted: the bytes used
 * in every memory location, the allocator model's allocated and reserved
 * bytes, and the traffic counters (swap out and in, faults, h2d, d2h).
 * The steps are steady when the last K of them, the first step (warm-up)
 * left out, each last within TOL of their mean, the used and allocator
 * bytes at their K + 1 bounds are within TOL of each other (and of 1
 * MiB), and the traffic of each step within TOL (and 1 MiB) of their
 * mean. Then no more of the trace is replayed: the replay finishes the
 * work already issued, the rest of the trace is read (trace_skim: framed
 * rather than decoded, counted, its captured times kept; its allocation
 * ids are not checked) and the predicted time is
 *
 *   t_stop + (steps_total - steps_replayed) x step + MAX (drain, tail)
 *
 * (t_stop: when the stopping mark was reached; step: the mean of the K
 * steady steps; drain: the replay's time from t_stop to its end; tail:
 * the captured time after the last reach of the mark, up to one step's
 * scaled by the steady steps' predicted over captured time, the rest as
 * captured). Every other figure of the
 * report is the replayed part's. If the steps never settle, everything is
 * replayed and the report says so.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

#define SAMPLE_ABS_BYTES (1024.0 * 1024.0)

enum { SIG_TRAFFIC = 5 };   /* swap out, swap in, fault, h2d, d2h bytes */

typedef struct SampleState SampleState;

/* One mark name's reaches (by the thread that reached it first). */
typedef struct {
  const char *name;
  guint32 tid;
  double last_t, sum;
  guint64 last_cap;
  GArray *dur, *cap_dur; /* double: each step's predicted and captured time */
  GArray *sig;           /* double[n_sig] at each reach */
} Track;

struct SampleState {
  guint k;
  double tol;
  GHashTable *tracks;    /* mark name -> Track* */
  guint n_sig;
  Track *best;           /* the first mark reached: the step's */
  Track *mark;           /* the steady one (or, at the end, best) */
  gboolean steady;
  double stop_t, step_ns, cap_step_ns;
};

static void
track_free (gpointer x)
{
  Track *tr = x;
  g_array_free (tr->dur, TRUE);
  g_array_free (tr->cap_dur, TRUE);
  g_array_free (tr->sig, TRUE);
  g_free (tr);
}

static void
sample_init (Sim *s)
{
  if (s->core.opts->sample_steps == 0)
    return;
  SampleState *p = g_new0 (SampleState, 1);
  p->k = s->core.opts->sample_steps;
  p->tol = s->core.opts->sample_tol > 0 ? s->core.opts->sample_tol : 0.01;
  p->tracks = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, track_free);
  p->n_sig = s->mem.n_locs + 2 + SIG_TRAFFIC;
  s->sample = p;
}

static void
sample_free (Sim *s)
{
  SampleState *p = s->sample;
  if (p == NULL)
    return;
  g_hash_table_destroy (p->tracks);
  g_free (p);
  s->sample = NULL;
}

static gboolean
near (double a, double b, double tol, double abs)
{
  return fabs (a - b) <= tol * MAX (fabs (a), fabs (b)) + abs;
}

/* Whether the last K steps are steady (see the top of the file). */
static gboolean
sample_steady (const SampleState *p, const Track *tr)
{
  guint n = tr->dur->len, k = p->k;
  if (n < k + 1)   /* the first step is warm-up */
    return FALSE;
  const double *d = (const double *) tr->dur->data + (n - k);
  double mean = 0;
  for (guint i = 0; i < k; i++)
    mean += d[i] / k;
  for (guint i = 0; i < k; i++)
    if (!near (d[i], mean, p->tol, 0))
      return FALSE;
  /* Bounds n - k .. n of the steps are reaches n - k .. n. */
  const double *sig = (const double *) tr->sig->data;
  guint ns = p->n_sig, levels = ns - SIG_TRAFFIC;
  const double *first = sig + (gsize) (n - k) * ns;
  for (guint i = 1; i <= k; i++)
    for (guint c = 0; c < levels; c++)
      if (!near (first[(gsize) i * ns + c], first[c], p->tol, SAMPLE_ABS_BYTES))
        return FALSE;
  for (guint c = levels; c < ns; c++)
    {
      double m = 0;
      for (guint i = 0; i < k; i++)
        m += (first[(gsize) (i + 1) * ns + c] - first[(gsize) i * ns + c]) / k;
      for (guint i = 0; i < k; i++)
        if (!near (first[(gsize) (i + 1) * ns + c] - first[(gsize) i * ns + c], m, p->tol, SAMPLE_ABS_BYTES))
          return FALSE;
    }
  return TRUE;
}

/* A thread reached mark NAME at NOW (captured CAP_T): out/marks.part.c. */
static void
sample_sig (const Sim *s, double *sig)
{
  guint c = 0;
  for (guint i = 0; i < s->mem.n_locs; i++)
    sig[c++] = (double) s->mem.loc_used[i];
  sig[c++] = (double) s->mem.dem_cur;
  sig[c++] = (double) s->mem.dem_reserved;
  sig[c++] = (double) s->stats.swap_out_bytes;
  sig[c++] = (double) s->stats.swap_in_bytes;
  sig[c++] = (double) s->stats.fault_bytes;
  sig[c++] = (double) s->stats.h2d_bytes;
  sig[c++] = (double) s->stats.d2h_bytes;
}

static void
sample_mark (Sim *s, guint32 tid, const char *name, double now, guint64 cap_t)
{
  SampleState *p = s->sample;
  if (G_LIKELY (p == NULL) || p->steady)
    return;
  Track *tr = g_hash_table_lookup (p->tracks, name);
  if (tr == NULL && p->best != NULL)
    return;   /* only the first mark's steps count */
  if (tr == NULL)
    {
      tr = g_new0 (Track, 1);
      tr->name = name;
      tr->tid = tid;
      tr->dur = g_array_new (FALSE, FALSE, sizeof (double));
      tr->cap_dur = g_array_new (FALSE, FALSE, sizeof (double));
      tr->sig = g_array_new (FALSE, FALSE, sizeof (double));
      g_hash_table_insert (p->tracks, (gpointer) name, tr);
      p->best = tr;
    }
  else if (tr->tid != tid)
    return;
  else
    {
      double d = now - tr->last_t, cd = (double) (cap_t - tr->last_cap);
      g_array_append_val (tr->dur, d);
      g_array_append_val (tr->cap_dur, cd);
      tr->sum += d;
    }
  double sig[64];
  g_assert (p->n_sig <= G_N_ELEMENTS (sig));
  sample_sig (s, sig);
  g_array_append_vals (tr->sig, sig, p->n_sig);
  tr->last_t = now;
  tr->last_cap = cap_t;
  if (tr == p->best && sample_steady (p, tr))
    {
      p->steady = TRUE;
      p->mark = tr;
      p->stop_t = now;
      guint n = tr->dur->len;
      p->step_ns = p->cap_step_ns = 0;
      for (guint i = n - p->k; i < n; i++)
        {
          p->step_ns += g_array_index (tr->dur, double, i) / p->k;
          p->cap_step_ns += g_array_index (tr->cap_dur, double, i) / p->k;
        }
      s->core.sample_stop = TRUE;
    }
}

/* After the loop: reads the rest of the trace (when the steps were
 * steady) and returns the predicted time of the whole trace (MAKESPAN
 * when not sampled). */
static double
sample_finish (Sim *s, double makespan, guint64 *steps_total)
{
  SampleState *p = s->sample;
  if (p->mark == NULL)
    p->mark = p->best;
  *steps_total = p->mark ? p->mark->dur->len : 0;
  if (!p->steady)
    return makespan;
  const Track *tr = p->mark;
  /* The rest, skimmed: counted, not decoded (trace.h). */
  VsTraceSkim sk;
  trace_skim (s->core.reader, tr->name, tr->tid, &sk, &s->core.error);
  guint64 more = sk.reaches, last_cap = more > 0 ? sk.last_reach_t : tr->last_cap;
  s->stats.n_events += sk.events;
  if (sk.events > 0)
    {
      s->stats.cap_first_t = MIN (s->stats.cap_first_t, sk.first_t);
      s->stats.cap_last_end = MAX (s->stats.cap_last_end, sk.last_end);
      s->stats.cap_have = TRUE;
    }
  *steps_total += more;
  double t_stop = p->stop_t - s->core.t0, drain = makespan - t_stop;
  /* After the last reach: up to a step's captured time runs as the
   * steady steps did, the rest (teardown) as captured. */
  double cap_tail = s->stats.cap_have && s->stats.cap_last_end > last_cap ? (double) (s->stats.cap_last_end - last_cap) : 0;
  double in_step = MIN (cap_tail, p->cap_step_ns);
  double tail = p->cap_step_ns > 0 ? in_step * (p->step_ns / p->cap_step_ns) + (cap_tail - in_step) : cap_tail;
  return t_stop + (double) more * p->step_ns + MAX (drain, tail);
}

/* The report's "sampled" and its predicted time, TOTAL (the replayed
 * part's figures stay). */
static void
sample_report (Sim *s, cJSON *r, double makespan, double total, guint64 steps_total)
{
  SampleState *p = s->sample;
  cJSON *o = cJSON_AddObjectToObject (r, "sampled");
  cJSON_AddNumberToObject (o, "steps_replayed", p->mark ? p->mark->dur->len : 0);
  cJSON_AddNumberToObject (o, "steps_total", (double) steps_total);
  cJSON_AddNumberToObject (o, "extrapolated_ns", round (total) - round (makespan));
  cJSON_AddNumberToObject (o, "tolerance", p->tol);
  cJSON_AddStringToObject (o, "mark", p->mark ? p->mark->name : "");
  cJSON_AddBoolToObject (o, "steady", p->steady);
  cJSON *t = cJSON_GetObjectItemCaseSensitive (r, "time");
  const cJSON *cap = cJSON_GetObjectItemCaseSensitive (t, "captured_ns");
  cJSON_ReplaceItemInObjectCaseSensitive (t, "predicted_ns", cJSON_CreateNumber (round (total)));
  if (cJSON_IsNumber (cap) && cap->valuedouble > 0)
    cJSON_ReplaceItemInObjectCaseSensitive (t, "slowdown", cJSON_CreateNumber (round (total) / cap->valuedouble));
  if (!p->steady)
    {
      cJSON *w = cJSON_GetObjectItemCaseSensitive (r, "warnings");
      if (!cJSON_IsArray (w))
        w = cJSON_AddArrayToObject (r, "warnings");
      g_autofree char *msg = p->mark
        ? g_strdup_printf ("--sample-steps %u: the steps of mark \"%s\" never repeated within %g for %u steps: "
                           "the whole trace was replayed (%u steps)", p->k, p->mark->name, p->tol, p->k,
                           p->mark->dur->len)
        : g_strdup_printf ("--sample-steps %u: no mark repeats: the whole trace was replayed", p->k);
      cJSON_AddItemToArray (w, cJSON_CreateString (msg));
    }
}
