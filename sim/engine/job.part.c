/* job.part.c — jobs: a latency, then up to two concurrent flows; what a
 * move, a fault or a copy waits on.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void job_start (Sim *s, Job *j);

static inline Job *
job_new (Sim *s, double delay)
{
  Job *j = s->core.free_jobs;
  if (j != NULL)
    {
      s->core.free_jobs = j->next_free;
      /* Its completion fired (no waiters; its room for more is kept). */
      j->c.done = FALSE;
      memset (&j->deps, 0, sizeof *j - offsetof (Job, deps));
    }
  else
    j = g_new0 (Job, 1);
  j->pool = &s->core.free_jobs;
  live_link (&s->core.live_jobs, &j->live);
  j->c.refs = 1;
  j->delay = delay;
  return j;
}

static void
job_add_flow (Job *j, double amount, double cap, const guint *path, guint n_path)
{
  g_assert (j->n_flows < G_N_ELEMENTS (j->flows) && n_path <= VS_FLOW_MAX_PATH);
  if (amount <= 0)
    return;
  j->flows[j->n_flows].amount = amount;
  j->flows[j->n_flows].cap = cap;
  memcpy (j->flows[j->n_flows].path, path, n_path * sizeof (guint));
  j->flows[j->n_flows].n_path = n_path;
  j->n_flows++;
}

/* The time J takes alone (latency + the slower of its flows). */
static double
job_alone (Sim *s, const Job *j)
{
  double t = 0;
  for (guint i = 0; i < j->n_flows; i++)
    t = MAX (t, j->flows[i].amount / flow_net_alone_rate (s->core.net, j->flows[i].path,
                                                           j->flows[i].n_path, j->flows[i].cap) * 1e9);
  return j->delay + t;
}

static void
job_finish (Sim *s, Job *j)
{
  completion_fire (s, &j->c);
  job_unref (j);
}

static void
job_dep_done (Sim *s, gpointer obj, guint64 arg)
{
  Job *j = obj;
  if (--j->deps == 0)
    job_start (s, j);
}

static void
job_after (Job *j, Job *dep)
{
  if (dep == NULL || dep->c.done)
    return;
  j->deps++;
  completion_wait (&dep->c, job_dep_done, j, 0);
}

static void
job_run_flows (Sim *s, Job *j)
{
  if (j->n_flows == 0)
    {
      job_finish (s, j);
      return;
    }
  j->pending = j->n_flows;
  for (guint i = 0; i < j->n_flows; i++)
    flow_start (s->core.net, s->core.now, j->flows[i].amount, j->flows[i].cap,
                j->flows[i].path, j->flows[i].n_path, j, FLOW_JOB);
}

/* Starts J now, or when its dependencies end. The engine holds a ref to
 * J until it finishes. */
static void
job_start (Sim *s, Job *j)
{
  if (j->deps > 0)
    return;
  if (j->delay > 0)
    evq_push (s->core.q, s->core.now + j->delay, EQ_JOB_DELAY, j, 0);
  else
    job_run_flows (s, j);
}

/* A list for the jobs a call must wait for, recycled (one per alloc event
 * otherwise); nested use gets a fresh one. */
static GPtrArray *
jobs_take (Sim *s)
{
  GPtrArray *a = s->core.jobs_spare;
  s->core.jobs_spare = NULL;
  return a ? a : g_ptr_array_new ();
}

static void
jobs_give (Sim *s, GPtrArray *a)
{
  g_ptr_array_set_size (a, 0);
  if (s->core.jobs_spare == NULL)
    s->core.jobs_spare = a;
  else
    g_ptr_array_free (a, TRUE);
}
