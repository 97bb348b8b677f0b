/* sim-report.part.c — building the JSON report (SPEC 5.8) from the engine's
 * statistics.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static GPtrArray *
table_values (GHashTable *h)
{
  GPtrArray *a = g_ptr_array_new ();
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, h);
  while (g_hash_table_iter_next (&it, NULL, &v))
    g_ptr_array_add (a, v);
  return a;
}

static gint
kernel_cmp (gconstpointer a, gconstpointer b)
{
  const KernelStat *x = *(KernelStat *const *) a, *y = *(KernelStat *const *) b;
  if (x->predicted_ns != y->predicted_ns)
    return x->predicted_ns > y->predicted_ns ? -1 : 1;
  return g_strcmp0 (x->name, y->name);
}

#define KERNELS_TOP 20

/* touches{} (docs/model.md 6b), time.lower_bound and its warning: when
 * accesses were inferred and memory left the device or paged (or the
 * program does not fit), the swapping, faults and time are lower bounds. */
static void
report_touches (Sim *s, cJSON *r, cJSON *time)
{
  VsInferStats st = s->core.infer_st;
  if (s->core.infer != NULL)
    infer_stats (s->core.infer, &st);
  gboolean inferred = st.on && st.kernels > 0;
  cJSON *o = cJSON_AddObjectToObject (r, "touches");
  cJSON_AddStringToObject (o, "mode", config_touches_name (s->core.cfg->touches));
  cJSON_AddBoolToObject (o, "inferred", inferred);
  gboolean fits = s->mem.dem_known && !s->mem.dem_refused && s->mem.dem_peak <= s->mem.loc_cap[LOC_DEVICE];
  if (!inferred)
    {
      /* (the figures below are all 0: a sweep of a small trace pays for
       * every number a report formats) */
      cJSON_AddBoolToObject (time, "lower_bound", FALSE);
      return;
    }
  cJSON_AddNumberToObject (o, "kernels", (double) st.kernels);
  cJSON_AddNumberToObject (o, "made", (double) st.made);
  cJSON_AddNumberToObject (o, "freed", (double) st.freed);
  cJSON_AddNumberToObject (o, "step", (double) st.step);
  if (st.step_mark)
    cJSON_AddStringToObject (o, "step_mark", st.step_mark);
  else
    cJSON_AddNullToObject (o, "step_mark");
  cJSON_AddNumberToObject (o, "steps", (double) st.steps);
  cJSON_AddNumberToObject (o, "window_cut", (double) st.forced);
  cJSON_AddNumberToObject (o, "reached_below_bytes", round (s->stats.infer_below_bytes));
  gboolean moved = s->stats.swap_in_bytes + s->stats.swap_out_bytes + s->stats.faults + s->stats.writeback_bytes > 0
                   || s->stats.infer_below_bytes > 0;
  /* (a replay stopped at an out-of-memory has no time to bound) */
  gboolean lower = inferred && (moved || !fits) && !(s->core.oom && !s->core.opts->keep_going);
  cJSON_AddBoolToObject (time, "lower_bound", lower);
  if (!lower)
    return;
  g_autofree char *steps = st.step_mark
    ? g_strdup_printf ("and, once in each of the %" G_GUINT64_FORMAT " steps of mark '%.60s', what was live when "
                       "the step began (%" G_GUINT64_FORMAT ")", st.steps, st.step_mark, st.step)
    : g_strdup ("and nothing else: no mark repeats as a step, so memory that lives across the trace is touched "
                "only next to its alloc and free");
  const char *why = s->core.cfg->touches == VS_TOUCHES_INFER
    ? "model.touches is infer: what the trace's kernels name was set aside, and"
    : "the trace's kernels name no allocations (a profiler or Nsight import), so";
  g_autofree char *msg = g_strdup_printf (
    "touches inferred: %s %" G_GUINT64_FORMAT " kernels were given what their thread allocated just before them "
    "(%" G_GUINT64_FORMAT "), what it freed just after them (%" G_GUINT64_FORMAT ") %s (docs/model.md 6b); a "
    "real step touches more (an op's inputs, a parameter in forward, backward and the optimizer): swapping, "
    "faults and the time are at least these", why, st.kernels, st.made, st.freed, steps);
  g_ptr_array_add (s->stats.warnings, g_steal_pointer (&msg));
}

static cJSON *
sim_report (Sim *s, double makespan)
{
  const VsConfig *c = s->core.cfg;
  cJSON *r = cJSON_CreateObject ();
  cJSON_AddNumberToObject (r, "vramsim_report", 1);
  /* --keep-going past capacity is an overflow, not a fit (5.9). */
  cJSON_AddStringToObject (r, "status", !s->core.oom ? "ok" : s->core.opts->keep_going ? "overflow" : "oom");
  demand_fits (s, r);   /* demand <= capacity, the same under every policy (mem/demand.part.c) */
  cJSON_AddStringToObject (r, "config", c->name ? c->name : "");
  cJSON_AddStringToObject (r, "capture_config", s->core.cap_cfg->name ? s->core.cap_cfg->name : "");
  cJSON_AddStringToObject (r, "trace", s->core.opts->trace_name ? s->core.opts->trace_name : trace_reader_path (s->core.trace));
  cJSON_AddStringToObject (r, "policy", config_oversub_name (c->oversubscription));
  cJSON_AddNumberToObject (r, "events", (double) s->stats.n_events);

  double captured = s->stats.cap_have ? (double) (s->stats.cap_last_end - s->stats.cap_first_t) : 0;
  cJSON *t = cJSON_AddObjectToObject (r, "time");
  cJSON_AddNumberToObject (t, "captured_ns", captured);
  cJSON_AddNumberToObject (t, "predicted_ns", round (makespan));
  /* Nothing captured (an empty trace): no ratio (null; "-" in text). */
  if (captured > 0)
    cJSON_AddNumberToObject (t, "slowdown", round (makespan) / captured);
  else
    cJSON_AddNullToObject (t, "slowdown");
  report_touches (s, r, t);

  cJSON *h = cJSON_AddObjectToObject (r, "host");
  cJSON_AddNumberToObject (h, "blocked_ns", round (s->stats.blocked_ns));
  cJSON_AddNumberToObject (h, "threads", s->host.thread_list->len);
  launch_queue_report (s, h);

  cJSON *st = cJSON_AddObjectToObject (r, "stalls");
  cJSON_AddNumberToObject (st, "contention_ns", round (s->stats.contention_ns));
  cJSON_AddNumberToObject (st, "fault_ns", round (s->stats.fault_ns));
  cJSON_AddNumberToObject (st, "swap_ns", round (s->stats.swap_ns));
  cJSON_AddNumberToObject (st, "copy_engine_ns", round (s->stats.ce_ns));

  cJSON *m = cJSON_AddObjectToObject (r, "memory");
  cJSON *tiers = cJSON_AddArrayToObject (m, "tiers");
  for (guint loc = 0; loc < s->mem.n_locs; loc++)
    {
      if (c->unified && (int) loc == s->mem.loc_host)
        continue;
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", loc_name (s, (int) loc));
      cJSON_AddNumberToObject (o, "capacity", (double) s->mem.loc_cap[loc]);
      cJSON_AddNumberToObject (o, "peak_bytes", (double) s->mem.loc_peak[loc]);
      cJSON_AddItemToArray (tiers, o);
    }
  cJSON *tags = cJSON_AddArrayToObject (m, "tags");
  for (guint i = 0; i < s->stats.tag_stats->len; i++)
    {
      TagStat *ts = &g_array_index (s->stats.tag_stats, TagStat, i);
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "tag", ts->name);
      cJSON_AddNumberToObject (o, "peak_bytes", (double) ts->peak);
      cJSON_AddItemToArray (tags, o);
    }
  demand_report (s, m);
  cJSON_AddNumberToObject (m, "overflow_bytes", (double) s->mem.overflow_peak);
  cJSON *warnings = cJSON_AddArrayToObject (r, "warnings");
  amodel_report (s, m, warnings);

  cJSON *tr = cJSON_AddObjectToObject (r, "traffic");
  cJSON_AddNumberToObject (tr, "h2d_bytes", (double) s->stats.h2d_bytes);
  cJSON_AddNumberToObject (tr, "d2h_bytes", (double) s->stats.d2h_bytes);
  cJSON_AddNumberToObject (tr, "swap_out_bytes", (double) s->stats.swap_out_bytes);
  cJSON_AddNumberToObject (tr, "swap_in_bytes", (double) s->stats.swap_in_bytes);
  cJSON_AddNumberToObject (tr, "fault_bytes", (double) s->stats.fault_bytes);
  cJSON_AddNumberToObject (tr, "faults", (double) s->stats.faults);
  cJSON_AddNumberToObject (tr, "writeback_bytes", (double) s->stats.writeback_bytes);
  cJSON_AddNumberToObject (tr, "prefetch_bytes", (double) s->stats.prefetch_bytes);

  cJSON *res = cJSON_AddArrayToObject (r, "resources");
  for (guint i = 0; i < flow_net_n_resources (s->core.net); i++)
    {
      VsResourceStats rs;
      flow_net_resource_stats (s->core.net, i, &rs);
      double cap = flow_net_resource_capacity (s->core.net, i);
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", flow_net_resource_name (s->core.net, i));
      cJSON_AddNumberToObject (o, "capacity_bps", cap);
      /* For sm the amount is GPU-time: reported in GPU-ns. */
      cJSON_AddNumberToObject (o, "bytes", round (i == s->gpu.r_sm ? rs.bytes * 1e9 : rs.bytes));
      cJSON_AddNumberToObject (o, "busy_ns", round (rs.busy_ns));
      cJSON_AddNumberToObject (o, "utilization_mean", makespan > 0 ? rs.bytes / (cap * makespan * 1e-9) : 0);
      cJSON_AddNumberToObject (o, "saturated_ns", round (rs.saturated_ns));
      cJSON_AddItemToArray (res, o);
    }

  cJSON *k = cJSON_AddObjectToObject (r, "kernels");
  GPtrArray *ks = table_values (s->stats.kernels);
  g_ptr_array_sort (ks, kernel_cmp);
  cJSON_AddStringToObject (k, "model", s->gpu.simple ? "simple" : "waves");
  double kcap = 0, kpred = 0;
  for (guint i = 0; i < VS_KCLASS_COUNT; i++)
    kcap += s->stats.kclass[i].captured_ns, kpred += s->stats.kclass[i].predicted_ns;
  cJSON_AddNumberToObject (k, "captured_ns", round (kcap));
  cJSON_AddNumberToObject (k, "predicted_ns", round (kpred));
  /* Per class (kernel-class.h), largest predicted time first; a class's
   * bound is the one most of its predicted time had. */
  cJSON *classes = cJSON_AddArrayToObject (k, "classes");
  guint order[VS_KCLASS_COUNT], n_classes = 0;
  for (guint i = 0; i < VS_KCLASS_COUNT; i++)
    if (s->stats.kclass[i].count > 0)
      {
        guint j = n_classes++;
        for (; j > 0 && s->stats.kclass[order[j - 1]].predicted_ns < s->stats.kclass[i].predicted_ns; j--)
          order[j] = order[j - 1];
        order[j] = i;
      }
  for (guint j = 0; j < n_classes; j++)
    {
      guint i = order[j], b = 0;
      for (guint x = 1; x < VS_BOUND_COUNT; x++)
        if (s->stats.kclass[i].bound_ns[x] > s->stats.kclass[i].bound_ns[b])
          b = x;
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "class", kernel_class_name (i));
      cJSON_AddNumberToObject (o, "count", (double) s->stats.kclass[i].count);
      cJSON_AddNumberToObject (o, "captured_ns", round (s->stats.kclass[i].captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (s->stats.kclass[i].predicted_ns));
      cJSON_AddStringToObject (o, "bound", kernel_bound_name (b));
      cJSON_AddItemToArray (classes, o);
    }
  cJSON_AddNumberToObject (k, "distinct", ks->len);
  cJSON *top = cJSON_AddArrayToObject (k, "top");
  for (guint i = 0; i < ks->len && i < KERNELS_TOP; i++)
    {
      KernelStat *ki = ks->pdata[i];
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", ki->name);
      cJSON_AddNumberToObject (o, "count", (double) ki->count);
      cJSON_AddNumberToObject (o, "captured_ns", round (ki->captured_ns));
      cJSON_AddNumberToObject (o, "predicted_ns", round (ki->predicted_ns));
      cJSON_AddNumberToObject (o, "stall_ns", round (ki->stall_ns));
      cJSON_AddItemToArray (top, o);
    }
  g_ptr_array_free (ks, TRUE);

  coll_report (s, r, makespan);

  report_marks (s, r);
  report_warnings (s, r, makespan, s->core.oom && !s->core.opts->keep_going);

  if (s->stats.oom_obj)
    {
      cJSON_AddItemToObject (r, "oom", s->stats.oom_obj);
      s->stats.oom_obj = NULL;
    }
  if (s->stats.unknown_refs)
    cJSON_AddNumberToObject (r, "unresolved_refs", (double) s->stats.unknown_refs);
  /* warnings[] (SPEC 5.9): what the user must know about the answer. */
  if (s->stats.warnings->len > 0)
    {
      cJSON *w = cJSON_GetObjectItemCaseSensitive (r, "warnings");
      if (w == NULL)
        w = cJSON_AddArrayToObject (r, "warnings");
      for (guint i = 0; i < s->stats.warnings->len; i++)
        cJSON_AddItemToArray (w, cJSON_CreateString (s->stats.warnings->pdata[i]));
    }
  return r;
}
