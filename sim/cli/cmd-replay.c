/* cmd-replay.c — `vramsim replay`: one trace on one modeled machine. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "base/jsonw.h"
#include "config/config.h"
#include "base/outfile.h"
#include "engine/replay.h"
#include "base/units.h"
#include "sweep/sweep.h"

/* Writes TEXT to PATH (base/outfile.h), or to stdout for NULL. */
static gboolean
write_out (const char *path, const char *text, GError **error)
{
  return outfile_write_all (path ? path : "-", path ? "report" : NULL, text, -1, error);
}

/* What this report is a run of, for sweeps run as separate jobs
 * (docs/cluster.md): --merge, --status and --resume compare it with the
 * jobs file, so a report of another trace, config or value is never
 * taken for this run's. */
static void
add_run_of (cJSON *report, const char *trace_path, const char *config, const char *capture_config,
            char **sets)
{
  cJSON *run = cJSON_AddObjectToObject (report, "run_of");
  cJSON *id = sweep_trace_identity (trace_path);
  if (id)
    cJSON_AddItemToObject (run, "trace", id);
  if (config)
    {
      cJSON_AddStringToObject (run, "config", config);
      g_autofree char *h = sweep_file_sha256 (config);
      if (h)
        cJSON_AddStringToObject (run, "config_sha256", h);
    }
  if (capture_config)
    {
      cJSON_AddStringToObject (run, "capture_config", capture_config);
      g_autofree char *h = sweep_file_sha256 (capture_config);
      if (h)
        cJSON_AddStringToObject (run, "capture_config_sha256", h);
    }
  if (sets)
    {
      cJSON *o = cJSON_AddObjectToObject (report, "sets");
      for (guint i = 0; sets[i]; i++)
        {
          const char *eq = strchr (sets[i], '=');
          g_autofree char *key = g_strndup (sets[i], eq ? (gsize) (eq - sets[i]) : strlen (sets[i]));
          cJSON_DeleteItemFromObjectCaseSensitive (o, key);
          cJSON_AddStringToObject (o, key, eq ? eq + 1 : "");
        }
    }
}

/* --report-errors: a run that cannot be made (its config does not
 * compile) still leaves a report, status "error", so a sweep's --status
 * tells it from a job that never ran or crashed, and --merge makes the
 * same error row an in-process sweep does. */
static int
fail_with_report (const char *out, const char *message, const char *trace_path, const char *config,
                  const char *capture_config, char **sets)
{
  cmd_error ("%s", message);
  if (out == NULL)
    return 1;
  cJSON *report = cJSON_CreateObject ();
  cJSON_AddNumberToObject (report, "vramsim_report", 1);
  cJSON_AddStringToObject (report, "status", "error");
  g_autoptr (GError) e = NULL;
  cJSON *cfg = config ? config_load_json (config, &e) : NULL;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (cfg, "name");
  cJSON_AddStringToObject (report, "config", cJSON_IsString (name) ? name->valuestring : config ? config : "");
  cJSON_Delete (cfg);
  cJSON_AddStringToObject (report, "trace", trace_path);
  cJSON_AddStringToObject (report, "error", message);
  add_run_of (report, trace_path, config, capture_config, sets);
  char *p = jsonw_print (report, TRUE);
  g_autofree char *text = g_strconcat (p, "\n", NULL);
  g_free (p);
  cJSON_Delete (report);
  g_autoptr (GError) werr = NULL;
  if (!outfile_write_all (out, "report", text, -1, &werr))
    cmd_error ("%s", werr->message);
  return 1;
}

int
cmd_replay (int argc, char **argv)
{
  g_autofree char *config = NULL, *capture_config = NULL, *format = NULL, *out = NULL;
  g_autofree char *series = NULL, *series_dt = NULL, *timeline = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean keep_going = FALSE, progress = FALSE, report_errors = FALSE;
  gint sample_steps = 0;
  double sample_tol = 0;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_STRING, &config, "Target machine: a preset name or a JSON file (default: the trace's capture config)", "CONFIG" },
    { "capture-config", 0, 0, G_OPTION_ARG_STRING, &capture_config, "The machine the trace was recorded on (default: the trace header's, else the target)", "CONFIG" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one field of the target, with units (memory.capacity=24GiB); repeatable", "KEY=VALUE" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "Report format: text (default) or json", "text|json" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Write the report to FILE (JSON when it ends in .json)", "FILE" },
    { "series", 0, 0, G_OPTION_ARG_FILENAME, &series, "Write a CSV time series of residency and utilization", "CSV" },
    { "series-dt", 0, 0, G_OPTION_ARG_STRING, &series_dt, "Series bucket width (default: automatic)", "TIME" },
    { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &timeline, "Write a Chrome-trace JSON timeline (open in ui.perfetto.dev)", "FILE" },
    { "keep-going", 0, 0, G_OPTION_ARG_NONE, &keep_going, "On out-of-memory, overflow the device and go on", NULL },
    { "sample-steps", 0, 0, G_OPTION_ARG_INT, &sample_steps, "Replay until K steps of the repeated mark are steady (times and memory state within --sample-tolerance), then extrapolate the rest (report: sampled)", "K" },
    { "sample-tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &sample_tol, "Relative tolerance of --sample-steps (default 0.01)", "TOL" },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &progress, "Show progress on stderr even when it is not a terminal", NULL },
    { "report-errors", 0, 0, G_OPTION_ARG_NONE, &report_errors, "When the config does not compile, still write a JSON report (status \"error\") to -o, then exit 1 (sweep --jobs-file commands use it)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - replay a trace against a modeled machine");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Exit status: 0 success (a predicted out-of-memory is a result: status \"oom\"),\n"
    "1 bad input, 2 bad usage.\n\n"
    "Example:\n  vramsim replay traces/hand-train-step.jsonl -c rtx3090 --set memory.capacity=16GiB\n");
  g_autoptr (GError) error = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &error)
      || !g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("%s", error->message);
      return 2;
    }
  cmd_end_options (&argc, argv);
  if (argc != 2)
    {
      cmd_error ("replay takes one TRACE (see 'vramsim replay --help')");
      return 2;
    }
  gboolean json = FALSE;
  if (format == NULL)
    json = out != NULL && g_str_has_suffix (out, ".json");
  else if (strcmp (format, "json") == 0)
    json = TRUE;
  else if (strcmp (format, "text") != 0)
    {
      cmd_error ("--format must be text or json, not '%s'", format);
      return 2;
    }
  VsReplayOptions opts = { 0 };
  if (series_dt && !units_parse_time (series_dt, &opts.series_dt_ns, &error))
    {
      cmd_error ("--series-dt: %s", error->message);
      return 2;
    }
  if (series_dt && opts.series_dt_ns <= 0)
    {
      cmd_error ("--series-dt must be positive");
      return 2;
    }

  /* The output rule (base/outfile.h): outputs that cannot be written, or
   * that are what the replay reads (the trace, the configs), fail now, not
   * after a long replay. */
  const char *trace_path = argv[1];
  g_autofree char *config_file = config ? config_find (config, NULL) : NULL;
  g_autofree char *capture_file = capture_config ? config_find (capture_config, NULL) : NULL;
  const VsIoPath outs[] = { { out, "report" }, { series, "--series" }, { timeline, "--timeline" } };
  const VsIoPath ins[] = { { trace_path, "the trace" }, { config_file, "the config (-c)" },
                           { capture_file, "--capture-config" } };
  if (!outfile_check_rule (outs, G_N_ELEMENTS (outs), ins, G_N_ELEMENTS (ins), &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  g_autoptr (VsTraceReader) reader = trace_open (trace_path, &error);
  if (reader == NULL)
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  const VsTraceHeader *h = trace_reader_header (reader);
  const char *target_name = config ? config : h->config;
  if (target_name == NULL)
    {
      cmd_error ("%s: the trace names no capture config: give one with -c", trace_path);
      return 2;
    }
  if ((config == NULL || capture_config == NULL) && h->config != NULL
      && !config_check_trace_preset (h->config, trace_path, &error))
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  /* The capture config named as the target: one file read and checked
   * for both (a config's load is a twentieth of a sampled replay's
   * instructions), the capture without the --set values. */
  const char *cap_name = capture_config ? capture_config : h->config;
  gboolean cap_is_target = cap_name != NULL && strcmp (cap_name, target_name) == 0;
  g_autoptr (VsConfig) cap = NULL;
  g_autoptr (GError) cap_error = NULL;
  g_autoptr (VsConfig) target = cap_is_target
      ? config_load_with_plain (target_name, (const char *const *) sets, &cap, &cap_error, &error)
      : config_load (target_name, (const char *const *) sets, &error);
  if (target == NULL && report_errors)
    return fail_with_report (out, error->message, trace_path, config, capture_config, sets);
  if (target == NULL)
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  if (cap_name && !cap_is_target)
    cap = config_load (cap_name, NULL, &cap_error);
  if (cap_name && cap == NULL)
    {
      cmd_error ("%s%s", capture_config ? "" : "the trace's capture config: ", cap_error->message);
      return 1;
    }
  if (!cmd_check_sampling ("", sample_steps, sample_tol))
    return 2;
  opts.sample_steps = (guint) sample_steps;
  opts.sample_tol = sample_tol;
  opts.keep_going = keep_going;
  opts.series_path = series;
  opts.timeline_path = timeline;
  opts.trace_name = trace_path;
  opts.progress = progress || isatty (2);
  cJSON *report = replay_run (reader, target, cap, &opts, &error);
  if (report == NULL)
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  /* What the user must know about the answer, whatever the format, and
   * once: the text view on stdout ends with its warnings, so they go to
   * stderr only when the report goes elsewhere (-o FILE) or is JSON. */
  gboolean text_on_stdout = !json && (out == NULL || strcmp (out, "-") == 0);
  const cJSON *w;
  cJSON_ArrayForEach (w, cJSON_GetObjectItemCaseSensitive (report, "warnings"))
    if (cJSON_IsString (w) && !text_on_stdout)
      fprintf (stderr, "vramsim: warning: %s\n", w->valuestring);
  add_run_of (report, trace_path, config, capture_config, sets);
  g_autofree char *text = NULL;
  if (json)
    {
      char *p = jsonw_print (report, TRUE);
      text = g_strconcat (p, "\n", NULL);
      g_free (p);
    }
  else
    text = report_to_text (report);
  cJSON_Delete (report);
  if (!write_out (out, text, &error))
    {
      cmd_error ("%s", error ? error->message : "cannot write the report");
      return 1;
    }
  return 0;
}
