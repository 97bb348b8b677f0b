/* cmd-fit.c — `vramsim fit`: where does this trace run, and how fast?
 *
 * One replay per config over one parsed copy of the trace, then one row per
 * config: status, whether it fits, peak device memory against capacity,
 * predicted time and slowdown, and the bound that dominates. Rows that run
 * come first, fastest first; rows that do not fit come last, the smallest
 * shortfall first. Each config is replayed once, with --keep-going: a row
 * that runs out of memory takes its status, time and warnings from the
 * moment it first did (what a replay without --keep-going reports,
 * VsReplayOptions.oom_stop) and how much memory is missing (the demand
 * beyond the capacity) from the replay carried on to the end, not only
 * which allocation failed. Fits, the peak and the resident peak are the
 * report's (SPEC 5.9): one definition under every policy.
 *
 * The bound is derived from the report alone (docs/fit.md): the time each
 * kind of work would take by itself — compute (the sm resource's GPU-ns),
 * memory (device_mem bytes at its capacity), link (the busiest other
 * resource: PCIe, host DRAM, a tier), swap and faults (their stalls),
 * communication (exposed collective time), host (the predicted time no
 * resource was busy: CPU gaps, the program's own waits) — and the largest
 * names the row. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "base/jsonw.h"
#include "config/config.h"
#include "base/outfile.h"
#include "engine/replay.h"
#include "base/units.h"

static const char *const bound_names[VS_STEP_BOUND_COUNT] = {
  "compute", "memory", "link", "swap", "faults", "communication", "host",
};

typedef struct {
  char *config;              /* as given (preset name or path) */
  const char *trace_path;
  const VsTraceBuf *buf;
  char **sets;
  const char *capture_name;  /* NULL: the target itself */
  /* results */
  char *error;               /* bad input: the message */
  char *status;              /* "ok", "oom", "overflow" */
  char *config_name;         /* the report's "config" */
  gboolean fits;             /* the report's: demand <= capacity (docs/fit.md) */
  gboolean mem_unknown;      /* the trace allocates no device memory: fits is not known (null) */
  guint64 peak_bytes, capacity, missing;   /* peak: memory.device_demand_bytes */
  guint64 resident;          /* memory.device_resident_peak_bytes: what stayed on the device */
  gboolean at_least;         /* time.lower_bound: touches inferred, memory moved (docs/model.md 6b) */
  double predicted_ns, captured_ns, slowdown;
  double bound_ns[VS_STEP_BOUND_COUNT];
  VsStepBound bound;
  double step_ns;            /* steady_state.step_median_ns; 0 without repeated marks */
  gboolean by_step;          /* --metric step: rank by step_ns */
  char **warnings;           /* the report's warnings[] */
} FitRow;

static void
fit_row_free (FitRow *r)
{
  g_free (r->config);
  g_free (r->error);
  g_free (r->status);
  g_free (r->config_name);
  g_strfreev (r->warnings);
  g_free (r);
}

static const cJSON *
at (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  for (guint i = 0; parts[i] && o; i++)
    o = cJSON_GetObjectItemCaseSensitive (o, parts[i]);
  return o;
}

static double
num (const cJSON *o, const char *path)
{
  const cJSON *v = at (o, path);
  return cJSON_IsNumber (v) ? v->valuedouble : 0;
}

/* Fills the bound fields of ROW from REPORT (see the file's comment). */
static void
fit_bound (FitRow *row, const cJSON *report)
{
  row->bound = report_bounds (report, row->predicted_ns, row->bound_ns);
}

/* One replay carried on past out-of-memory; *OOM_STOP (transfer full):
 * the report's time and warnings at the first out-of-memory, or NULL. */
static guint fit_sample_steps;     /* --sample-steps, --sample-tolerance */
static double fit_sample_tol;

static cJSON *
fit_replay (FitRow *row, const VsConfig *target, const VsConfig *capture, cJSON **oom_stop, GError **error)
{
  g_autoptr (VsTraceReader) reader = trace_buf_reader (row->buf);
  VsReplayOptions opts = { 0 };
  opts.sample_steps = fit_sample_steps;
  opts.sample_tol = fit_sample_tol;
  opts.keep_going = TRUE;
  opts.oom_stop = oom_stop;
  opts.trace_name = row->trace_path;
  cJSON *report = replay_run (reader, target, capture, &opts, error);
  if (report == NULL)
    g_clear_pointer (oom_stop, cJSON_Delete);
  return report;
}

static void
fit_run_one (gpointer data, gpointer user_data)
{
  FitRow *row = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (VsConfig) target = config_load (row->config, (const char *const *) row->sets, &error);
  if (target == NULL)
    {
      row->error = g_strdup (error->message);
      return;
    }
  g_autoptr (VsConfig) capture = NULL;
  if (row->capture_name)
    {
      capture = config_load (row->capture_name, NULL, &error);
      if (capture == NULL)
        {
          row->error = g_strdup_printf ("the capture config: %s", error->message);
          return;
        }
    }
  cJSON *stop = NULL;
  cJSON *report = fit_replay (row, target, capture, &stop, &error);
  if (report == NULL)
    {
      row->error = g_strdup (error->message);
      return;
    }
  /* Out of memory: the row is the stopped replay's (status oom, its time
   * and warnings at the stop); the rest of the report, carried on, says
   * how much is missing. */
  const cJSON *status = cJSON_GetObjectItemCaseSensitive (report, "status");
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive (report, "config");
  row->status = g_strdup (stop ? "oom" : cJSON_IsString (status) ? status->valuestring : "?");
  row->config_name = g_strdup (cJSON_IsString (cfg) ? cfg->valuestring : row->config);
  row->capacity = (guint64) num (cJSON_GetArrayItem (at (report, "memory.tiers"), 0), "capacity");
  row->captured_ns = num (report, "time.captured_ns");
  row->predicted_ns = stop ? num (stop, "predicted_ns") : num (report, "time.predicted_ns");
  row->slowdown = stop ? (row->captured_ns > 0 ? row->predicted_ns / row->captured_ns : 0) : num (report, "time.slowdown");
  row->peak_bytes = (guint64) num (report, "memory.device_demand_bytes");
  row->resident = (guint64) num (report, "memory.device_resident_peak_bytes");
  row->at_least = cJSON_IsTrue (at (report, "time.lower_bound"));
  row->step_ns = num (stop ? stop : report, "steady_state.step_median_ns");
  g_autoptr (GPtrArray) ws = g_ptr_array_new ();
  const cJSON *w;
  cJSON_ArrayForEach (w, at (stop ? stop : report, "warnings"))
    if (cJSON_IsString (w))
      g_ptr_array_add (ws, g_strdup (w->valuestring));
  g_ptr_array_add (ws, NULL);
  row->warnings = (char **) g_ptr_array_free (g_steal_pointer (&ws), FALSE);
  fit_bound (row, report);
  /* fits is the replay's (SPEC 5.9): the program's device demand
   * (reserved, or live, + context, managed memory counted) <= capacity,
   * one definition under every policy; null when the trace allocates no
   * device memory. Not whether memory left the device: the resident
   * peak and the swap and fault columns say that. */
  const cJSON *fits = cJSON_GetObjectItemCaseSensitive (report, "fits");
  row->mem_unknown = !cJSON_IsBool (fits);
  row->fits = cJSON_IsTrue (fits);
  /* How much is missing: the demand beyond the capacity (for an oom row,
   * the run carried on past its out-of-memory). */
  row->missing = !row->fits && row->peak_bytes > row->capacity ? row->peak_bytes - row->capacity : 0;
  cJSON_Delete (stop);
  cJSON_Delete (report);
}

/* Runs first, fastest first; then the rows that stop, least missing first;
 * ties in config order. */
static gint
fit_row_cmp (gconstpointer a, gconstpointer b)
{
  const FitRow *x = *(FitRow *const *) a, *y = *(FitRow *const *) b;
  gboolean xo = strcmp (x->status, "oom") == 0, yo = strcmp (y->status, "oom") == 0;
  if (xo != yo)
    return xo - yo;
  if (xo)
    return (x->missing > y->missing) - (x->missing < y->missing);
  /* --metric step: the steady step time where a row has one. */
  double ta = x->by_step && x->step_ns > 0 ? x->step_ns : x->predicted_ns;
  double tb = y->by_step && y->step_ns > 0 ? y->step_ns : y->predicted_ns;
  return (ta > tb) - (ta < tb);
}

/* W without its figures: warnings that differ only in numbers are one kind. */
static char *
warning_kind (const char *w)
{
  GString *s = g_string_new (NULL);
  for (const char *p = w; *p; p++)
    if (!g_ascii_isdigit (*p) && *p != '.')
      g_string_append_c (s, *p);
  return g_string_free (s, FALSE);
}

static char *
fit_text (GPtrArray *rows, const char *trace, const char *capture)
{
  GString *out = g_string_new (NULL);
  const FitRow *first = rows->len ? rows->pdata[0] : NULL;
  g_autofree char *cap_t = units_format_time (first ? first->captured_ns : 0);
  g_string_append_printf (out, "vramsim fit: %s (captured on %s in %s), %u configs\n",
                          trace, capture ? capture : "each target", cap_t, rows->len);
  gboolean steps = FALSE;
  for (guint i = 0; i < rows->len; i++)
    steps |= ((const FitRow *) rows->pdata[i])->step_ns > 0;
  g_string_append_printf (out, "%-18s %-8s %-4s %-30s %10s %11s %10s%s  %s\n",
                          "config", "status", "fits", "peak device / capacity", "resident", "predicted",
                          "slowdown", steps ? "    per step" : "", "bound");
  for (guint i = 0; i < rows->len; i++)
    {
      const FitRow *r = rows->pdata[i];
      g_autofree char *pk = units_format_bytes (r->peak_bytes);
      g_autofree char *cp = units_format_bytes (r->capacity);
      g_autofree char *mem = g_strdup_printf ("%s / %s", pk, cp);
      if (strcmp (r->status, "oom") == 0)
        {
          g_autofree char *miss = units_format_bytes (r->missing);
          g_string_append_printf (out, "%-18s %-8s %-4s %-30s %10s %11s %10s%s  %s more needed\n",
                                  r->config_name, r->status, "no", mem, "-", "-", "-", steps ? "           -" : "", miss);
          continue;
        }
      g_autofree char *rs = units_format_bytes (r->resident);
      /* A lower bound (touches inferred, memory moved) is marked ">=". */
      const char *ge = r->at_least ? ">=" : "";
      g_autofree char *t0 = units_format_time (r->predicted_ns);
      g_autofree char *pt = g_strdup_printf ("%s%s", ge, t0);
      /* Nothing captured (an empty trace): no ratio. */
      g_autofree char *sd = r->captured_ns > 0 ? g_strdup_printf ("%s%.3fx", ge, r->slowdown) : g_strdup ("-");
      g_autofree char *s0 = r->step_ns > 0 ? units_format_time (r->step_ns) : NULL;
      g_autofree char *st = s0 ? g_strdup_printf ("%s%s", ge, s0) : g_strdup ("-");
      g_autofree char *stc = steps ? g_strdup_printf (" %11s", st) : g_strdup ("");
      g_string_append_printf (out, "%-18s %-8s %-4s %-30s %10s %11s %10s%s  %s\n", r->config_name,
                              r->status, r->mem_unknown ? "?" : r->fits ? "yes" : "no", mem, rs, pt, sd, stc,
                              bound_names[r->bound]);
    }
  /* The replays' warnings, each kind once (the same words, whatever
   * figures), with how many configs gave it and the first one's figures. */
  g_autoptr (GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < rows->len; i++)
    for (char **w = ((const FitRow *) rows->pdata[i])->warnings; w && *w; w++)
      {
        g_autofree char *k = warning_kind (*w);
        if (g_ptr_array_find_with_equal_func (seen, k, g_str_equal, NULL))
          continue;
        guint n = 0;
        for (guint j = 0; j < rows->len; j++)
          for (char **v = ((const FitRow *) rows->pdata[j])->warnings; v && *v; v++)
            {
              g_autofree char *kv = warning_kind (*v);
              if (strcmp (kv, k) == 0)
                {
                  n++;
                  break;
                }
            }
        g_string_append_printf (out, "warning (%u of %u configs; figures for %s): %s\n", n, rows->len,
                                ((const FitRow *) rows->pdata[i])->config_name, *w);
        g_ptr_array_add (seen, g_steal_pointer (&k));
      }
  return g_string_free (out, FALSE);
}

static cJSON *
fit_json (GPtrArray *rows, const char *trace, const char *capture)
{
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "vramsim_fit", 1);
  cJSON_AddStringToObject (o, "trace", trace);
  if (capture)
    cJSON_AddStringToObject (o, "capture_config", capture);
  else
    cJSON_AddNullToObject (o, "capture_config");
  const FitRow *first = rows->len ? rows->pdata[0] : NULL;
  cJSON_AddNumberToObject (o, "captured_ns", first ? first->captured_ns : 0);
  cJSON *arr = cJSON_AddArrayToObject (o, "rows");
  for (guint i = 0; i < rows->len; i++)
    {
      const FitRow *r = rows->pdata[i];
      gboolean oom = strcmp (r->status, "oom") == 0;
      cJSON *j = cJSON_CreateObject ();
      cJSON_AddStringToObject (j, "config", r->config_name);
      cJSON_AddStringToObject (j, "status", r->status);
      if (r->mem_unknown)
        cJSON_AddNullToObject (j, "fits");
      else
        cJSON_AddBoolToObject (j, "fits", r->fits);
      cJSON_AddNumberToObject (j, "peak_device_bytes", (double) r->peak_bytes);
      cJSON_AddNumberToObject (j, "capacity_bytes", (double) r->capacity);
      cJSON_AddNumberToObject (j, "missing_bytes", (double) r->missing);
      if (oom)
        cJSON_AddNullToObject (j, "resident_peak_bytes");
      else
        cJSON_AddNumberToObject (j, "resident_peak_bytes", (double) r->resident);
      if (oom)
        {
          cJSON_AddNullToObject (j, "predicted_ns");
          cJSON_AddNullToObject (j, "slowdown");
          cJSON_AddNullToObject (j, "bound");
        }
      else
        {
          cJSON_AddNumberToObject (j, "predicted_ns", round (r->predicted_ns));
          if (r->captured_ns > 0)
            cJSON_AddNumberToObject (j, "slowdown", r->slowdown);
          else
            cJSON_AddNullToObject (j, "slowdown");
          cJSON_AddBoolToObject (j, "lower_bound", r->at_least);
          cJSON_AddStringToObject (j, "bound", bound_names[r->bound]);
          if (r->step_ns > 0)
            cJSON_AddNumberToObject (j, "step_median_ns", round (r->step_ns));
          else
            cJSON_AddNullToObject (j, "step_median_ns");
          cJSON *wa = cJSON_AddArrayToObject (j, "warnings");
          for (char **w = r->warnings; w && *w; w++)
            cJSON_AddItemToArray (wa, cJSON_CreateString (*w));
          cJSON *b = cJSON_AddObjectToObject (j, "bound_ns");
          for (int k = 0; k < VS_STEP_BOUND_COUNT; k++)
            cJSON_AddNumberToObject (b, bound_names[k], round (r->bound_ns[k]));
        }
      cJSON_AddItemToArray (arr, j);
    }
  return o;
}

static char *
fit_csv (GPtrArray *rows)
{
  /* New columns go at the end (resident_peak_bytes, lower_bound), so
   * that scripts reading the older ones by position still work. */
  GString *out = g_string_new ("config,status,fits,peak_device_bytes,capacity_bytes,missing_bytes,"
                               "predicted_ns,slowdown,bound,step_median_ns,resident_peak_bytes,lower_bound\n");
  for (guint i = 0; i < rows->len; i++)
    {
      const FitRow *r = rows->pdata[i];
      if (strcmp (r->status, "oom") == 0)
        g_string_append_printf (out, "%s,%s,no,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                ",%" G_GUINT64_FORMAT ",,,,,,\n", r->config_name, r->status,
                                r->peak_bytes, r->capacity, r->missing);
      else
        {
          g_autofree char *st = r->step_ns > 0 ? g_strdup_printf ("%.0f", r->step_ns) : g_strdup ("");
          g_autofree char *sd = r->captured_ns > 0 ? g_strdup_printf ("%.6g", r->slowdown) : g_strdup ("");
          g_string_append_printf (out, "%s,%s,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                  ",%" G_GUINT64_FORMAT ",%.0f,%s,%s,%s,%" G_GUINT64_FORMAT ",%s\n",
                                  r->config_name, r->status,
                                  r->mem_unknown ? "unknown" : r->fits ? "yes" : "no", r->peak_bytes, r->capacity,
                                  r->missing, r->predicted_ns, sd, bound_names[r->bound], st, r->resident,
                                  r->at_least ? "yes" : "no");
        }
    }
  return g_string_free (out, FALSE);
}

int
cmd_fit (int argc, char **argv)
{
  g_auto (GStrv) configs = NULL, sets = NULL, rest = NULL;
  g_autofree char *format = NULL, *out = NULL, *capture = NULL, *metric = NULL;
  gint jobs = 0, sample_steps = 0;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &configs, "Configs to try, comma-separated, or 'all' (default: all presets)", "all|CONFIG[,CONFIG...]" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one field of every config, with units (memory.capacity=24GiB); repeatable", "KEY=VALUE" },
    { "capture-config", 0, 0, G_OPTION_ARG_STRING, &capture, "The machine the trace was recorded on (default: the trace header's)", "CONFIG" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (default), json or csv", "text|json|csv" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Write the table to FILE (default: stdout)", "FILE" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Replays at once (default: all processors)", "N" },
    { "sample-steps", 0, 0, G_OPTION_ARG_INT, &sample_steps, "Each replay as replay --sample-steps K: until K steps are steady, then extrapolated", "K" },
    { "sample-tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &fit_sample_tol, "Relative tolerance of --sample-steps (default 0.01)", "TOL" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric, "Rank by the whole predicted time (default) or by the steady step time (median of the repeated mark's steps after the first)", "time|step" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - where does this trace fit, and how fast does it run?");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
    "Replays TRACE on each config and prints one row per config: status, whether\n"
    "it fits in device memory, peak device memory / capacity, predicted time,\n"
    "slowdown against the capture, and the bound that dominates (compute, memory,\n"
    "link, swap, faults, communication, or host when the GPU mostly waits).\n"
    "Rows are sorted by predicted time (--metric step: by the steady time per step\n"
    "when the trace repeats a mark); out-of-memory rows come last with how\n"
    "much memory is missing.");
  g_option_context_set_description (ctx,
    "Exit status: 0 success (out-of-memory rows are answers), 1 bad input, 2 bad usage.\n\n"
    "Examples:\n"
    "  vramsim fit traces/hand-train-step.jsonl\n"
    "  vramsim fit traces/hand-train-step.jsonl -c a100-80g,rtx3090 --set memory.capacity=512MiB\n"
    "See docs/fit.md for how each column is derived.\n");
  g_autoptr (GError) error = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &error)
      || !g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("fit: %s", error->message);
      return 2;
    }
  if (!cmd_check_sampling ("fit: ", sample_steps, fit_sample_tol))
    return 2;
  fit_sample_steps = (guint) sample_steps;
  if (rest == NULL || rest[0] == NULL || rest[1] != NULL)
    {
      cmd_error ("fit takes one TRACE (see 'vramsim fit --help')");
      return 2;
    }
  enum { F_TEXT, F_JSON, F_CSV } fmt = F_TEXT;
  if (format == NULL)
    fmt = out && g_str_has_suffix (out, ".json") ? F_JSON : out && g_str_has_suffix (out, ".csv") ? F_CSV : F_TEXT;
  else if (strcmp (format, "json") == 0)
    fmt = F_JSON;
  else if (strcmp (format, "csv") == 0)
    fmt = F_CSV;
  else if (strcmp (format, "text") != 0)
    {
      cmd_error ("fit: --format must be text, json or csv, not '%s'", format);
      return 2;
    }
  if (jobs < 0)
    {
      cmd_error ("fit: -j must be positive");
      return 2;
    }
  if (metric && strcmp (metric, "time") != 0 && strcmp (metric, "step") != 0)
    {
      cmd_error ("fit: --metric must be time or step, not '%s'", metric);
      return 2;
    }
  if (out && !outfile_check_writable (out, "output", &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }

  /* The configs: "all" (or none given) is every preset. */
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  gboolean all = configs == NULL;
  for (char **c = configs; c && *c; c++)
    {
      g_auto (GStrv) parts = g_strsplit (*c, ",", -1);
      for (char **p = parts; *p; p++)
        if (strcmp (g_strstrip (*p), "all") == 0)
          all = TRUE;
        else if (**p)
          g_ptr_array_add (names, g_strdup (*p));
    }
  if (all)
    {
      g_auto (GStrv) presets = config_list_presets ();
      for (char **p = presets; p && *p; p++)
        if (!g_ptr_array_find_with_equal_func (names, *p, g_str_equal, NULL))
          g_ptr_array_add (names, g_strdup (*p));
    }
  if (names->len == 0)
    {
      cmd_error ("fit: no configs to try");
      return 2;
    }
  /* A misspelt name fails before any replay. */
  const char *trace_path = rest[0];
  g_autoptr (GArray) ins = g_array_new (FALSE, FALSE, sizeof (VsIoPath));
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  g_array_append_val (ins, ((VsIoPath) { trace_path, "the trace" }));
  for (guint i = 0; i < names->len; i++)
    {
      char *path = config_find (names->pdata[i], &error);
      if (path == NULL)
        {
          cmd_error ("%s", error->message);
          return 1;
        }
      g_ptr_array_add (keep, path);
      g_array_append_val (ins, ((VsIoPath) { path, "the config" }));
    }
  if (capture != NULL)
    {
      char *path = config_find (capture, NULL);
      if (path != NULL)
        {
          g_ptr_array_add (keep, path);
          g_array_append_val (ins, ((VsIoPath) { path, "--capture-config" }));
        }
    }
  /* The output rule (base/outfile.h): the output is none of what is read. */
  if (!outfile_check_rule (&(VsIoPath) { out, "output" }, 1, (const VsIoPath *) ins->data, ins->len, &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  g_autoptr (VsTraceBuf) buf = trace_buf_load (trace_path, &error);
  if (buf == NULL)
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  const char *cap_name = capture ? capture : trace_buf_header (buf)->config;
  /* The header names a preset, never a file to open (replay and sweep
   * check it the same way). */
  if (capture == NULL && cap_name != NULL && !config_check_trace_preset (cap_name, trace_path, &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }

  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) fit_row_free);
  for (guint i = 0; i < names->len; i++)
    {
      FitRow *r = g_new0 (FitRow, 1);
      r->config = g_strdup (names->pdata[i]);
      r->trace_path = trace_path;
      r->buf = buf;
      r->sets = sets;
      r->capture_name = cap_name;
      r->by_step = metric && strcmp (metric, "step") == 0;
      g_ptr_array_add (rows, r);
    }
  guint n_threads = jobs > 0 ? (guint) jobs : g_get_num_processors ();
  GThreadPool *pool = g_thread_pool_new (fit_run_one, NULL, (gint) MIN (n_threads, rows->len), TRUE, NULL);
  for (guint i = 0; i < rows->len; i++)
    g_thread_pool_push (pool, rows->pdata[i], NULL);
  g_thread_pool_free (pool, FALSE, TRUE);
  for (guint i = 0; i < rows->len; i++)
    {
      const FitRow *r = rows->pdata[i];
      if (r->error)
        {
          cmd_error ("%s", r->error);
          return 1;
        }
    }
  g_ptr_array_sort (rows, fit_row_cmp);
  /* --metric step falls back to the whole predicted time for a row
   * without a step time; when no row that runs has one, the trace repeats
   * no mark and the ranking is by predicted time: say so. */
  if (metric && strcmp (metric, "step") == 0)
    {
      guint n_ok = 0, n_steps = 0;
      for (guint i = 0; i < rows->len; i++)
        {
          const FitRow *r = rows->pdata[i];
          n_ok += strcmp (r->status, "oom") != 0;
          n_steps += strcmp (r->status, "oom") != 0 && r->step_ns > 0;
        }
      if (n_ok > 0 && n_steps == 0)
        fprintf (stderr, "vramsim: warning: fit --metric step: %s repeats no mark, so no config has a steady "
                 "step: rows are ranked by predicted time (see docs/model.md, Marks)\n", trace_path);
    }

  g_autofree char *text = NULL;
  if (fmt == F_JSON)
    {
      cJSON *j = fit_json (rows, trace_path, cap_name);
      char *p = jsonw_print (j, TRUE);
      text = g_strconcat (p, "\n", NULL);
      g_free (p);
      cJSON_Delete (j);
    }
  else if (fmt == F_CSV)
    text = fit_csv (rows);
  else
    text = fit_text (rows, trace_path, cap_name);
  if (out == NULL)
    {
      fputs (text, stdout);
      return fflush (stdout) == 0 ? 0 : 1;
    }
  if (!outfile_write_all (out, "output", text, -1, &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  return 0;
}
