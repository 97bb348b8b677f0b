/* series.part.c — the --series observer: time-weighted means per bucket of
 * residency and resource load, and the CSV.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
series_add (Series *se, guint col, double t0, double t1, double value)
{
  if (t1 <= t0 || value == 0)
    return;
  for (;;)
    {
      guint64 last = (guint64) floor ((t1 - 1e-9) / se->dt);
      if (se->fixed || last < SERIES_MAX)
        break;
      /* Double the width: merge bucket pairs. */
      guint half = (se->n_buckets + 1) / 2;
      double *v = (double *) se->sums->data;
      for (guint b = 0; b < half; b++)
        for (guint c = 0; c < se->n_cols; c++)
          {
            double x = v[(2 * b) * se->n_cols + c];
            if (2 * b + 1 < se->n_buckets)
              x += v[(2 * b + 1) * se->n_cols + c];
            v[b * se->n_cols + c] = x;
          }
      se->n_buckets = half;
      g_array_set_size (se->sums, (gsize) half * se->n_cols);
      se->dt *= 2;
    }
  guint64 first = (guint64) floor (t0 / se->dt);
  guint64 last = (guint64) floor ((t1 - 1e-9) / se->dt);
  if (last + 1 > se->n_buckets)
    {
      guint old = se->sums->len;
      g_array_set_size (se->sums, (gsize) (last + 1) * se->n_cols);
      memset ((double *) se->sums->data + old, 0, (se->sums->len - old) * sizeof (double));
      se->n_buckets = last + 1;
    }
  double *v = (double *) se->sums->data;
  for (guint64 b = first; b <= last; b++)
    {
      double lo = MAX (t0, b * se->dt), hi = MIN (t1, (b + 1) * se->dt);
      if (hi > lo)
        v[b * se->n_cols + col] += value * (hi - lo);
    }
}

/* The observers: the engine calls each behind one unlikely branch on
 * s->out.series (on_load is the flow network's observer, set only with a
 * series). */

/* Takes the allocated and reserved bytes now held (kind none: each
 * allocation charged alone, both the same). */
static void
series_alloc_take (Sim *s)
{
  if (s->mem.amodel)
    {
      VsAllocStats st;
      alloc_stats (s->mem.amodel, &st);
      s->out.alloc_val[0] = st.allocated;
      s->out.alloc_val[1] = st.reserved;
    }
  else
    s->out.alloc_val[0] = s->out.alloc_val[1] = s->mem.none_cur;
}

/* The first event sets the clock's origin: residency is integrated from it. */
static __attribute__ ((noinline, cold)) void
series_begin (Sim *s)
{
  for (guint i = 0; i < s->mem.n_locs; i++)
    s->out.res_cur_t[i] = s->core.t0;
  s->out.alloc_cur_t = s->core.t0;
  series_alloc_take (s);
}

/* Location LOC's use is about to change: integrate its value until now. */
static __attribute__ ((noinline, cold)) void
series_resident (Sim *s, int loc)
{
  series_add (s->out.series, (guint) loc, s->out.res_cur_t[loc] - s->core.t0, s->core.now - s->core.t0,
              (double) s->mem.loc_used[loc]);
  s->out.res_cur_t[loc] = s->core.now;
}

/* The allocator's allocated and reserved bytes (the last two columns):
 * integrates the values held since the last change, then takes the new. */
static __attribute__ ((noinline, cold)) void
series_allocs (Sim *s)
{
  Series *se = s->out.series;
  guint col = se->n_cols - 2;
  double t0 = s->out.alloc_cur_t > s->core.t0 ? s->out.alloc_cur_t - s->core.t0 : 0;
  series_add (se, col, t0, s->core.now - s->core.t0, (double) s->out.alloc_val[0]);
  series_add (se, col + 1, t0, s->core.now - s->core.t0, (double) s->out.alloc_val[1]);
  s->out.alloc_cur_t = s->core.now;
  series_alloc_take (s);
}

static void
on_load (gpointer user, guint res, double t0, double t1, double load)
{
  Sim *s = user;
  if (s->out.series)
    series_add (s->out.series, s->mem.n_locs + res, t0 - s->core.t0, t1 - s->core.t0,
                load / flow_net_resource_capacity (s->core.net, res));
}


/* Writes the series CSV (SERIES: one column per location, then per resource). */
static gboolean
series_write (Sim *s, const char *path, double makespan, GError **error)
{
  Series *se = s->out.series;
  for (guint loc = 0; loc < s->mem.n_locs; loc++)
    series_add (se, loc, s->out.res_cur_t[loc] - s->core.t0, makespan, (double) s->mem.loc_used[loc]);
  {
    double t0 = s->out.alloc_cur_t > s->core.t0 ? s->out.alloc_cur_t - s->core.t0 : 0;
    series_add (se, se->n_cols - 2, t0, makespan, (double) s->out.alloc_val[0]);
    series_add (se, se->n_cols - 1, t0, makespan, (double) s->out.alloc_val[1]);
  }
  GString *out = g_string_new ("t_ns,dt_ns");
  for (guint loc = 0; loc < s->mem.n_locs; loc++)
    if (!(s->core.cfg->unified && (int) loc == s->mem.loc_host))
      g_string_append_printf (out, ",resident_%s_bytes", loc_name (s, (int) loc));
  for (guint i = 0; i < flow_net_n_resources (s->core.net); i++)
    g_string_append_printf (out, ",util_%s", flow_net_resource_name (s->core.net, i));
  g_string_append (out, ",allocated_bytes,reserved_bytes\n");
  const double *v = (const double *) se->sums->data;
  guint n = se->n_buckets;
  for (guint b = 0; b < n; b++)
    {
      double lo = b * se->dt, hi = MIN ((b + 1) * se->dt, makespan);
      double w = hi - lo;
      if (w <= 0)
        break;
      g_string_append_printf (out, "%.0f,%.0f", lo, w);
      for (guint col = 0; col < se->n_cols; col++)
        {
          if (col < s->mem.n_locs)
            {
              if (s->core.cfg->unified && (int) col == s->mem.loc_host)
                continue;
              g_string_append_printf (out, ",%.0f", v[b * se->n_cols + col] / w);
            }
          else if (col >= se->n_cols - 2)
            g_string_append_printf (out, ",%.0f", v[b * se->n_cols + col] / w);
          else
            g_string_append_printf (out, ",%.4f", v[b * se->n_cols + col] / w);
        }
      g_string_append_c (out, '\n');
    }
  gboolean ok = outfile_write_all (path, "--series", out->str, (gssize) out->len, error);
  g_string_free (out, TRUE);
  return ok;
}
