/* report.c — the human summary of a replay report (SPEC 5.8). The JSON
 * report is the source of truth; this prints a short view of it. */
#include <math.h>
#include <string.h>

#include "engine/replay.h"
#include "base/units.h"

static double
get (const cJSON *o, const char *path)
{
  char **parts = g_strsplit (path, ".", -1);
  const cJSON *cur = o;
  for (guint i = 0; parts[i] && cur; i++)
    cur = cJSON_GetObjectItemCaseSensitive (cur, parts[i]);
  g_strfreev (parts);
  return cJSON_IsNumber (cur) ? cur->valuedouble : 0;
}

static const char *
str (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  return cJSON_IsString (v) ? v->valuestring : "";
}

static gboolean
stopped_early (const cJSON *r)
{
  return strcmp (str (r, "status"), "oom") == 0;
}

static void
line_time (GString *out, const char *label, double ns)
{
  g_autofree char *t = units_format_time (ns);
  g_string_append_printf (out, "  %-22s %s\n", label, t);
}

char *
report_to_text (const cJSON *r)
{
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "vramsim replay: %s on %s (captured on %s), policy %s\n",
                          str (r, "trace"), str (r, "config"), str (r, "capture_config"), str (r, "policy"));
  const char *status = str (r, "status");
  g_string_append_printf (out, "  %-22s %s\n", "status", status);
  /* Touches inferred and memory moved: the time is a lower bound. */
  const char *ge = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "time"), "lower_bound"))
                   ? "at least " : "";
  const cJSON *o = cJSON_GetObjectItemCaseSensitive (r, "oom");
  if ((strcmp (status, "oom") == 0 || strcmp (status, "overflow") == 0) && o != NULL)
    {
      g_autofree char *req = units_format_bytes ((guint64) get (o, "requested"));
      g_autofree char *use = units_format_bytes ((guint64) get (o, "in_use"));
      g_autofree char *cap = units_format_bytes ((guint64) get (o, "capacity"));
      /* Which memory ran out: under uvm the host can (managed memory off
       * the device is charged to host.capacity), and "16 GiB" alone would
       * read as the device's. */
      const char *mem = str (o, "memory");
      g_autofree char *where = mem[0] != '\0' && strcmp (mem, "device") != 0 ? g_strdup_printf (" (%s memory)", mem)
                                                                              : g_strdup ("");
      g_string_append_printf (out, "  %-22s event %.0f (t=%.0f ns) asked %s with %s of %s in use%s\n",
                              "out of memory", get (o, "event"), get (o, "t_ns"), req, use, cap, where);
      if (cJSON_GetObjectItemCaseSensitive (o, "reserved_free"))
        {
          /* As PyTorch's message: what the cache held but could not use. */
          g_autofree char *rf = units_format_bytes ((guint64) get (o, "reserved_free"));
          g_autofree char *lf = units_format_bytes ((guint64) get (o, "largest_free_block"));
          g_string_append_printf (out, "  %-22s %s reserved but unallocated, largest free block %s\n", "", rf, lf);
        }
    }
  /* Steps first: with repeated marks, the time a step takes once warm is
   * what a user compares, not the window's total with its set-up. */
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive (r, "steady_state");
  if (cJSON_IsObject (ss) && !stopped_early (r))
    {
      g_autofree char *med = units_format_time (get (ss, "step_median_ns"));
      g_autofree char *lo = units_format_time (get (ss, "step_min_ns"));
      g_autofree char *hi = units_format_time (get (ss, "step_max_ns"));
      g_autofree char *first = units_format_time (get (ss, "first_step_ns"));
      g_autofree char *cap = units_format_time (get (ss, "captured_step_median_ns"));
      g_autofree char *label = g_strdup_printf ("per step (%s)", str (ss, "mark"));
      const cJSON *wx = cJSON_GetObjectItemCaseSensitive (ss, "warmup_excluded");
      g_string_append_printf (out, "  %-22s %s%s median of %.0f (%s-%s)", label, ge, med,
                              get (ss, "steps") - (cJSON_IsTrue (wx) ? 1 : 0), lo, hi);
      if (cJSON_IsTrue (wx))
        g_string_append_printf (out, " after a first step of %s", first);
      g_string_append_printf (out, "; captured %s, %.3fx\n", cap, get (ss, "step_slowdown"));
      /* Which end bounds it: the GPU's steps when the host runs ahead of
       * it, else the host's (docs/model.md 12). */
      g_autofree char *host = units_format_time (get (ss, "host_step_median_ns"));
      g_autofree char *hbusy = units_format_time (get (ss, "host_busy_step_median_ns"));
      const cJSON *gs = cJSON_GetObjectItemCaseSensitive (ss, "gpu_step_median_ns");
      const cJSON *gb = cJSON_GetObjectItemCaseSensitive (ss, "gpu_busy_step_median_ns");
      g_autofree char *gpu = cJSON_IsNumber (gs) ? units_format_time (gs->valuedouble) : g_strdup ("?");
      g_autofree char *gbusy = cJSON_IsNumber (gb) ? units_format_time (gb->valuedouble) : g_strdup ("?");
      g_string_append_printf (out, "  %-22s %s (work a step: GPU %s, host %s; steps: GPU %s, host %s)\n", "step bound",
                              strcmp (str (ss, "step_bound"), "gpu") == 0 ? "GPU" : "host", gbusy, hbusy, gpu, host);
    }
  line_time (out, "captured time", get (r, "time.captured_ns"));
  gboolean stopped = strcmp (status, "oom") == 0;
  gboolean no_fit = stopped || strcmp (status, "overflow") == 0;
  {
    g_autofree char *pt = units_format_time (get (r, "time.predicted_ns"));
    g_string_append_printf (out, "  %-22s %s%s\n", stopped ? "predicted time to OOM" : "predicted time", ge, pt);
  }
  const cJSON *smp = cJSON_GetObjectItemCaseSensitive (r, "sampled");
  if (cJSON_IsObject (smp))
    {
      /* --sample-steps (docs/report.md "sampled"). */
      g_autofree char *ex = units_format_time (get (smp, "extrapolated_ns"));
      if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (smp, "steady")))
        g_string_append_printf (out, "  %-22s %.0f of %.0f steps replayed, %s of it extrapolated (tolerance %g)\n", "sampled",
                                get (smp, "steps_replayed"), get (smp, "steps_total"), ex, get (smp, "tolerance"));
      else
        g_string_append_printf (out, "  %-22s never steady within %g: all %.0f steps replayed\n", "sampled",
                                get (smp, "tolerance"), get (smp, "steps_replayed"));
    }
  if (!no_fit)
    {
      /* Nothing captured (an empty trace): no ratio. */
      const cJSON *sd = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "time"), "slowdown");
      if (cJSON_IsNumber (sd))
        g_string_append_printf (out, "  %-22s %s%.3fx\n", "slowdown", ge, sd->valuedouble);
      else
        g_string_append_printf (out, "  %-22s -\n", "slowdown");
    }
  line_time (out, "host blocked", get (r, "host.blocked_ns"));
  g_string_append (out, "stalls\n");
  line_time (out, "contention", get (r, "stalls.contention_ns"));
  line_time (out, "page faults", get (r, "stalls.fault_ns"));
  line_time (out, "swapping", get (r, "stalls.swap_ns"));
  line_time (out, "copy engines", get (r, "stalls.copy_engine_ns"));
  if (get (r, "network.collectives") > 0)
    {
      g_autofree char *b = units_format_bytes ((guint64) get (r, "network.bytes"));
      g_string_append_printf (out, "network (%.0f collectives, %s, job of %.0f ranks", get (r, "network.collectives"), b,
                              get (r, "network.ranks"));
      /* Where they ran, when a collective left its node. */
      if (get (r, "network.nodes") > 1)
        g_string_append_printf (out, "; up to %.0f nodes of %.0f GPUs", get (r, "network.nodes"),
                                get (r, "network.ranks_per_node"));
      g_string_append (out, ")\n");
      line_time (out, "collectives busy", get (r, "network.busy_ns"));
      line_time (out, "exposed", get (r, "network.exposed_ns"));
      /* The groups a role key resized (network.dp, ...): what the what-if changed. */
      const cJSON *g;
      cJSON_ArrayForEach (g, cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "network"), "groups"))
        if (get (g, "ranks") != get (g, "captured_ranks"))
          {
            const cJSON *role = cJSON_GetObjectItemCaseSensitive (g, "role");
            g_autofree char *what = g_strdup_printf ("%s group %.0f", cJSON_IsString (role) ? role->valuestring : "",
                                                     get (g, "id"));
            g_string_append_printf (out, "  %-22s %.0f -> %.0f ranks\n", what, get (g, "captured_ranks"),
                                    get (g, "ranks"));
          }
    }
  g_string_append (out, "memory (peak / capacity)\n");
  /* The program's device demand and whether it fits (SPEC 5.9: one
   * definition whatever the policy did with it; "?" when the trace
   * allocates no device memory), then what each location held at its
   * peak (the device's: what stayed resident). */
  const cJSON *mem = cJSON_GetObjectItemCaseSensitive (r, "memory");
  if (cJSON_GetObjectItemCaseSensitive (mem, "device_demand_bytes"))
    {
      const cJSON *fits = cJSON_GetObjectItemCaseSensitive (r, "fits");
      const cJSON *dev = cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (mem, "tiers"), 0);
      g_autofree char *dem = units_format_bytes ((guint64) get (mem, "device_demand_bytes"));
      g_autofree char *cap = units_format_bytes ((guint64) get (dev, "capacity"));
      g_string_append_printf (out, "  %-22s %s / %s (fits: %s)\n", "demand", dem, cap,
                              !cJSON_IsBool (fits) ? "?" : cJSON_IsTrue (fits) ? "yes" : "no");
    }
  const cJSON *tiers = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "memory"), "tiers");
  const cJSON *t;
  cJSON_ArrayForEach (t, tiers)
    {
      g_autofree char *pk = units_format_bytes ((guint64) get (t, "peak_bytes"));
      g_autofree char *cp = units_format_bytes ((guint64) get (t, "capacity"));
      g_string_append_printf (out, "  %-22s %s / %s\n", str (t, "name"), pk, cp);
    }
  const cJSON *al = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "memory"), "allocator");
  if (al != NULL && cJSON_GetObjectItemCaseSensitive (al, "peak_reserved_bytes"))
    {
      /* torch.cuda.memory_summary's order: allocated, reserved, then what
       * the device holds beside them. */
      g_autofree char *pa = units_format_bytes ((guint64) get (al, "peak_allocated_bytes"));
      g_autofree char *pr = units_format_bytes ((guint64) get (al, "peak_reserved_bytes"));
      g_autofree char *cx = units_format_bytes ((guint64) get (r, "memory.context_bytes"));
      g_string_append_printf (out, "  %-22s %s peak (allocator %s)\n", "allocated", pa, str (al, "kind"));
      g_string_append_printf (out, "  %-22s %s peak, fragmentation %.1f %% at the peak\n", "reserved", pr,
                              100.0 * get (al, "fragmentation_peak"));
      g_string_append_printf (out, "  %-22s %s\n", "context", cx);
    }
  if (get (r, "memory.overflow_bytes") > 0)
    {
      g_autofree char *ov = units_format_bytes ((guint64) get (r, "memory.overflow_bytes"));
      g_string_append_printf (out, "  %-22s %s over capacity (--keep-going)\n", "overflow", ov);
    }
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "memory"), "tags");
  cJSON_ArrayForEach (t, tags)
    {
      g_autofree char *pk = units_format_bytes ((guint64) get (t, "peak_bytes"));
      g_autofree char *label = g_strdup_printf ("tag %s", str (t, "tag"));
      g_string_append_printf (out, "  %-22s %s peak\n", label, pk);
    }
  g_string_append (out, "traffic\n");
  static const char *const tr[][2] = {
    { "h2d_bytes", "copies h2d" }, { "d2h_bytes", "copies d2h" },
    { "swap_out_bytes", "swapped out" }, { "swap_in_bytes", "swapped in" },
    { "fault_bytes", "faulted in" }, { "writeback_bytes", "written back" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (tr); i++)
    {
      g_autofree char *key = g_strdup_printf ("traffic.%s", tr[i][0]);
      double v = get (r, key);
      if (v > 0 || i < 2)
        {
          g_autofree char *b = units_format_bytes ((guint64) v);
          g_string_append_printf (out, "  %-22s %s\n", tr[i][1], b);
        }
    }
  if (get (r, "traffic.faults") > 0)
    g_string_append_printf (out, "  %-22s %.0f pages\n", "page faults", get (r, "traffic.faults"));
  g_string_append (out, "resources (mean utilization, time saturated)\n");
  const cJSON *res = cJSON_GetObjectItemCaseSensitive (r, "resources");
  cJSON_ArrayForEach (t, res)
    {
      g_autofree char *sat = units_format_time (get (t, "saturated_ns"));
      g_string_append_printf (out, "  %-22s %5.1f %%  %s\n", str (t, "name"),
                              100 * get (t, "utilization_mean"), sat);
    }
  const cJSON *classes = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "kernels"), "classes");
  if (cJSON_GetArraySize (classes) > 0)
    {
      g_autofree char *c = units_format_time (get (r, "kernels.captured_ns"));
      g_autofree char *p = units_format_time (get (r, "kernels.predicted_ns"));
      g_string_append_printf (out, "kernels (%s model: count, captured -> predicted, bound)   all: %s -> %s\n",
                              str (cJSON_GetObjectItemCaseSensitive (r, "kernels"), "model"), c, p);
      cJSON_ArrayForEach (t, classes)
        {
          g_autofree char *cc = units_format_time (get (t, "captured_ns"));
          g_autofree char *pp = units_format_time (get (t, "predicted_ns"));
          g_string_append_printf (out, "  %-22s %6.0f  %s -> %s  %s\n", str (t, "class"), get (t, "count"), cc, pp,
                                  str (t, "bound"));
        }
    }
  const cJSON *top = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (r, "kernels"), "top");
  if (cJSON_GetArraySize (top) > 0)
    {
      g_string_append (out, "top kernels (count, captured -> predicted, stalls)\n");
      int n = 0;
      cJSON_ArrayForEach (t, top)
        {
          if (n++ == 5)
            break;
          g_autofree char *c = units_format_time (get (t, "captured_ns"));
          g_autofree char *p = units_format_time (get (t, "predicted_ns"));
          g_autofree char *st = units_format_time (get (t, "stall_ns"));
          g_autofree char *name = g_utf8_strlen (str (t, "name"), -1) > 40
            ? g_strdup_printf ("%.37s...", str (t, "name")) : g_strdup (str (t, "name"));
          g_string_append_printf (out, "  %-40s %6.0f  %s -> %s  %s\n", name, get (t, "count"), c, p, st);
        }
    }
  const cJSON *marks = cJSON_GetObjectItemCaseSensitive (r, "marks");
  if (cJSON_GetArraySize (marks) > 0)
    {
      g_string_append (out, "marks (count, captured -> predicted in all, median)\n");
      cJSON_ArrayForEach (t, marks)
        {
          g_autofree char *c = units_format_time (get (t, "captured_ns"));
          g_autofree char *p = units_format_time (get (t, "predicted_ns"));
          g_autofree char *m = units_format_time (get (t, "median_ns"));
          g_autofree char *name = g_strdup_printf ("%s%s", str (t, "name"),
                                                   strcmp (str (t, "kind"), "range") == 0 ? " (range)" : "");
          g_string_append_printf (out, "  %-22s %6.0f  %s -> %s, median %s\n", name, get (t, "count"), c, p, m);
        }
    }
  const cJSON *warnings = cJSON_GetObjectItemCaseSensitive (r, "warnings");
  if (cJSON_GetArraySize (warnings) > 0)
    {
      g_string_append (out, "warnings\n");
      cJSON_ArrayForEach (t, warnings)
        if (cJSON_IsString (t))
          g_string_append_printf (out, "  %s\n", t->valuestring);
    }
  return g_string_free (out, FALSE);
}

VsStepBound
report_bounds (const cJSON *report, double predicted_ns, double bound_ns[VS_STEP_BOUND_COUNT])
{
  memset (bound_ns, 0, VS_STEP_BOUND_COUNT * sizeof *bound_ns);
  double busiest = 0;
  const cJSON *res;
  cJSON_ArrayForEach (res, cJSON_GetObjectItemCaseSensitive (report, "resources"))
    {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive (res, "name");
      if (!cJSON_IsString (name))
        continue;
      double bytes = get (res, "bytes"), cap = get (res, "capacity_bps");
      busiest = MAX (busiest, get (res, "busy_ns"));
      if (strcmp (name->valuestring, "sm") == 0)
        bound_ns[VS_STEP_BOUND_COMPUTE] = bytes;   /* GPU-ns of compute */
      else if (cap > 0)
        {
          double t = bytes / cap * 1e9;
          VsStepBound b = strcmp (name->valuestring, "device_mem") == 0 ? VS_STEP_BOUND_MEMORY : VS_STEP_BOUND_LINK;
          bound_ns[b] = MAX (bound_ns[b], t);
        }
    }
  bound_ns[VS_STEP_BOUND_SWAP] = get (report, "stalls.swap_ns");
  bound_ns[VS_STEP_BOUND_FAULTS] = get (report, "stalls.fault_ns");
  bound_ns[VS_STEP_BOUND_COMM] = get (report, "network.exposed_ns");
  /* --sample-steps: the figures are the replayed part's; the whole
   * trace's are theirs scaled as its time was. */
  double ext = get (report, "sampled.extrapolated_ns");
  if (ext > 0 && predicted_ns > ext)
    {
      double scale = predicted_ns / (predicted_ns - ext);
      for (int b = 0; b < VS_STEP_BOUND_COUNT; b++)
        bound_ns[b] *= scale;
      busiest *= scale;
    }
  /* The time no resource of the machine was busy is at least the predicted
   * time less the busiest resource's busy time: the host's (CPU time
   * between calls, the program's own waits). */
  bound_ns[VS_STEP_BOUND_HOST] = MAX (0, predicted_ns - busiest);
  VsStepBound best = VS_STEP_BOUND_COMPUTE;
  for (int b = 0; b < VS_STEP_BOUND_COUNT; b++)
    if (bound_ns[b] > bound_ns[best])
      best = b;
  return best;
}
