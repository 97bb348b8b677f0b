/* cmd-replay.c — `vramsim replay`: one trace on one modeled machine. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "config/config.h"
#include "base/fileio.h"
#include "engine/replay.h"
#include "base/units.h"

/* Writes TEXT to PATH through a temporary name, or to stdout for NULL. */
static gboolean
write_out (const char *path, const char *text, GError **error)
{
  if (path == NULL)
    {
      fputs (text, stdout);
      return fflush (stdout) == 0;
    }
  return fileio_write_atomic (path, text, -1, error);
}

int
cmd_replay (int argc, char **argv)
{
  g_autofree char *config = NULL, *capture_config = NULL, *format = NULL, *out = NULL;
  g_autofree char *series = NULL, *series_dt = NULL, *timeline = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean keep_going = FALSE, progress = FALSE;
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
    { "progress", 0, 0, G_OPTION_ARG_NONE, &progress, "Show progress on stderr even when it is not a terminal", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - replay a trace against a modeled machine");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Exit status: 0 success (a predicted out-of-memory is a result: status \"oom\"),\n"
    "1 bad input, 2 bad usage.\n\n"
    "Example:\n  vramsim replay traces/train-step.jsonl -c rtx3090 --set memory.capacity=16GiB\n");
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("%s", error->message);
      return 2;
    }
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

  /* Outputs that cannot be written fail now, not after a long replay. */
  if ((out && !fileio_check_writable (out, "report", &error))
      || (series && !fileio_check_writable (series, "--series", &error))
      || (timeline && !fileio_check_writable (timeline, "--timeline", &error)))
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  const char *trace_path = argv[1];
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
  g_autoptr (VsConfig) target = config_load (target_name, (const char *const *) sets, &error);
  if (target == NULL)
    {
      cmd_error ("%s", error->message);
      return 1;
    }
  const char *cap_name = capture_config ? capture_config : h->config;
  g_autoptr (VsConfig) cap = NULL;
  if (cap_name)
    {
      cap = config_load (cap_name, NULL, &error);
      if (cap == NULL)
        {
          cmd_error ("%s%s", capture_config ? "" : "the trace's capture config: ", error->message);
          return 1;
        }
    }
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
  g_autofree char *text = NULL;
  if (json)
    {
      char *p = cJSON_Print (report);
      text = g_strconcat (p, "\n", NULL);
      cJSON_free (p);
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
