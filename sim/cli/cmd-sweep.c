/* cmd-sweep.c — `vramsim sweep`: options in, sweep_run / sweep_merge out. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "config/config.h"
#include "sweep/sweep.h"

int
cmd_sweep (int argc, char **argv)
{
  g_auto (GStrv) configs = NULL, varies = NULL, sets = NULL, rest = NULL;
  g_autofree char *output = NULL, *format = NULL, *jobs_file = NULL, *reports_dir = NULL, *capture = NULL;
  g_autofree char *shard = NULL, *metric = NULL;
  gint sample_steps = 0;
  double sample_tol = 0;
  gboolean resume = FALSE, merge = FALSE, status = FALSE, progress = FALSE;
  gint jobs = 0;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &configs, "Target configs, comma-separated (preset names or JSON files; all: every preset); may repeat", "CONFIG[,CONFIG...]" },
    { "vary", 0, 0, G_OPTION_ARG_STRING_ARRAY, &varies, "A key and its values: KEY=V1,V2,... or a range KEY=A..B/STEP or KEY=A..B/xK; may repeat", "KEY=VALUES" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Set a config key for every run; may repeat", "KEY=VALUE" },
    { "capture-config", 0, 0, G_OPTION_ARG_STRING, &capture, "The config the trace was captured on (default: the trace header's)", "CONFIG" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Runs at once (default: all processors)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the rows here (default: stdout)", "RESULTS.csv" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "csv (default) or jsonl", "csv|jsonl" },
    { "resume", 0, 0, G_OPTION_ARG_NONE, &resume, "Skip runs already in -o (or, with --jobs-file, runs whose report exists)", NULL },
    { "jobs-file", 0, 0, G_OPTION_ARG_FILENAME, &jobs_file, "Write one `vramsim replay` command per run here instead of running", "FILE" },
    { "reports-dir", 0, 0, G_OPTION_ARG_FILENAME, &reports_dir, "With --jobs-file: where the commands write their reports (default: FILE without its extension, plus -reports/: jobs.txt -> jobs-reports/)", "DIR" },
    { "merge", 0, 0, G_OPTION_ARG_NONE, &merge, "Join the reports of --jobs-file FILE (or REPORT.json..., or with TRACE -c ... the --shard CSVs) into the sweep's table", NULL },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &progress, "Show progress on stderr even when it is not a terminal", NULL },
    { "status", 0, 0, G_OPTION_ARG_NONE, &status, "With --jobs-file FILE: which runs are done, failed, missing or stale", NULL },
    { "sample-steps", 0, 0, G_OPTION_ARG_INT, &sample_steps, "Each replay as replay --sample-steps K: until K steps are steady, then extrapolated", "K" },
    { "sample-tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &sample_tol, "Relative tolerance of --sample-steps (default 0.01)", "TOL" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric, "time (default) or step: add step_median_ns, the steady time per step (median of the repeated mark's steps after the first), as fit --metric step ranks by", "time|step" },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard, "Run only the K-th of N slices of the runs (rows as the whole sweep writes them)", "K/N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE -c CONFIG[,CONFIG...] | --merge --jobs-file FILE | --status --jobs-file FILE");
  g_option_context_set_summary (ctx,
    "Replays TRACE on every combination of configs and --vary values, in parallel,\n"
    "and writes one row per run: config, the varied keys, status, predicted_ns,\n"
    "slowdown, peak_device_bytes, the stall and traffic totals, error; with\n"
    "--metric step also step_median_ns, after slowdown (empty for runs without\n"
    "repeated marks, with a warning when no run has one). Rows stay in run order.\n\n"
    "Ranges take units: memory.capacity=8GiB..80GiB/8GiB, link.bandwidth=16GB/s..64GB/s/x2.");
  g_option_context_set_description (ctx,
    "Examples:\n"
    "  vramsim sweep t.jsonl -c a100-80g,rtx3090 --vary memory.capacity=8GiB..32GiB/8GiB -o r.csv\n"
    "  vramsim sweep t.jsonl -c a100-80g --vary policy.oversubscription=oom,spill,uvm --jobs-file jobs.txt\n"
    "  vramsim sweep --status --jobs-file jobs.txt\n"
    "  vramsim sweep --merge --jobs-file jobs.txt -o r.csv\n"
    "  vramsim sweep t.jsonl -c a100-80g --vary memory.capacity=8GiB..80GiB/1GiB --shard 3/8 -o part-3.csv\n"
    "  vramsim sweep t.jsonl -c a100-80g --vary memory.capacity=8GiB..80GiB/1GiB --merge part-*.csv -o r.csv\n"
    "Exit status: 0 done, 1 bad input (or, for --status, runs without a report), 2 bad usage,\n"
    "130 interrupted (finished rows kept; use --resume).\n"
    "See docs/cluster.md for GNU parallel and Slurm.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *err = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &err)
      || !g_option_context_parse (ctx, &argc, &argv, &err))
    {
      cmd_error ("sweep: %s", err->message);
      g_error_free (err);
      return 2;
    }

  if (metric && strcmp (metric, "time") != 0 && strcmp (metric, "step") != 0)
    {
      cmd_error ("sweep: --metric must be time or step, not '%s'", metric);
      return 2;
    }
  gboolean step = metric && strcmp (metric, "step") == 0;
  if (step && jobs_file && !merge && !status)
    {
      cmd_error ("sweep: --metric step shapes the table, and --jobs-file writes commands: give it to "
                 "--merge --jobs-file FILE");
      return 2;
    }

  VsSweepFormat fmt = VS_SWEEP_CSV;
  if (format && strcmp (format, "jsonl") == 0)
    fmt = VS_SWEEP_JSONL;
  else if (format && strcmp (format, "csv") != 0)
    {
      cmd_error ("sweep: --format must be csv or jsonl, not '%s'", format);
      return 2;
    }

  if (status)
    {
      if (jobs_file == NULL || rest != NULL || merge)
        {
          cmd_error ("sweep: --status takes --jobs-file FILE and nothing else");
          return 2;
        }
      gboolean complete = FALSE;
      if (!sweep_status (jobs_file, &complete, &err))
        {
          cmd_error ("%s", err->message);
          g_error_free (err);
          return 1;
        }
      return complete ? 0 : 1;
    }
  if (merge && jobs_file)
    {
      if (rest != NULL)
        {
          cmd_error ("sweep: --merge --jobs-file FILE reads the report list from FILE: give no REPORT files");
          return 2;
        }
      if (!sweep_merge_jobs (jobs_file, output, fmt, step, &err))
        {
          cmd_error ("%s", err->message);
          g_error_free (err);
          return 1;
        }
      return 0;
    }
  if (merge && configs == NULL)
    {
      if (rest == NULL || rest[0] == NULL)
        {
          cmd_error ("sweep: --merge needs --jobs-file FILE (or REPORT.json files)");
          return 2;
        }
      if (!sweep_merge (rest, output, fmt, step, &err))
        {
          cmd_error ("%s", err->message);
          g_error_free (err);
          return 1;
        }
      return 0;
    }
  guint shard_k = 0, shard_n = 0;
  if (shard)
    {
      char *end = NULL;
      guint64 k = g_ascii_strtoull (shard, &end, 10), n = 0;
      if (end && *end == '/')
        n = g_ascii_strtoull (end + 1, &end, 10);
      if (!g_ascii_isdigit (shard[0]) || end == NULL || *end != '\0' || k < 1 || n < 1 || k > n || n > 10000000)
        {
          cmd_error ("sweep: --shard %s: expected K/N with 1 <= K <= N (3/8: the third of eight slices)", shard);
          return 2;
        }
      if (jobs_file || merge)
        {
          cmd_error ("sweep: --shard runs a slice in this process: not with --jobs-file or --merge");
          return 2;
        }
      shard_k = (guint) k, shard_n = (guint) n;
    }
  if (merge && (rest == NULL || rest[0] == NULL || rest[1] == NULL))
    {
      cmd_error ("sweep: --merge of --shard parts: give TRACE, the sweep's options and the PART.csv files");
      return 2;
    }

  if (!merge && (rest == NULL || rest[0] == NULL || rest[1] != NULL))
    {
      cmd_error ("sweep: give exactly one TRACE (see vramsim sweep --help)");
      return 2;
    }
  if (configs == NULL)
    {
      cmd_error ("sweep: -c CONFIG is required");
      return 2;
    }
  if (jobs < 0)
    {
      cmd_error ("sweep: -j must be positive");
      return 2;
    }

  /* "all" is every preset not named otherwise, after the named ones, as
   * `fit -c all` takes it. */
  g_autoptr (GPtrArray) cfgs = g_ptr_array_new_with_free_func (g_free);
  gboolean all = FALSE;
  for (char **c = configs; *c; c++)
    {
      g_auto (GStrv) parts = g_strsplit (*c, ",", -1);
      for (char **p = parts; *p; p++)
        if (strcmp (g_strstrip (*p), "all") == 0)
          all = TRUE;
        else if (**p)
          g_ptr_array_add (cfgs, g_strdup (*p));
    }
  if (all)
    {
      g_auto (GStrv) presets = config_list_presets ();
      for (char **p = presets; p && *p; p++)
        if (!g_ptr_array_find_with_equal_func (cfgs, *p, g_str_equal, NULL))
          g_ptr_array_add (cfgs, g_strdup (*p));
    }
  g_ptr_array_add (cfgs, NULL);

  g_autoptr (GPtrArray) vs = g_ptr_array_new_with_free_func ((GDestroyNotify) sweep_vary_free);
  for (char **v = varies; v && *v; v++)
    {
      VsVary *vary = sweep_vary_parse (*v, &err);
      if (vary == NULL)
        {
          cmd_error ("%s", err->message);
          g_error_free (err);
          return 1;
        }
      g_ptr_array_add (vs, vary);
    }
  g_ptr_array_add (vs, NULL);

  VsSweepOptions o = { 0 };
  o.trace_path = rest[0];
  o.configs = (char **) cfgs->pdata;
  o.capture_config = capture;
  o.sets = sets;
  o.varies = (VsVary **) vs->pdata;
  o.n_threads = (guint) jobs;
  o.output = output;
  o.format = fmt;
  o.resume = resume;
  o.progress = progress || isatty (2);
  o.jobs_file = jobs_file;
  o.reports_dir = reports_dir;
  o.shard_k = shard_k;
  o.shard_n = shard_n;
  o.step_metric = step;
  if (!cmd_check_sampling ("sweep: ", sample_steps, sample_tol))
    return 2;
  o.sample_steps = (guint) sample_steps;
  o.sample_tol = sample_tol;
  if (merge ? !sweep_merge_shards (&o, rest + 1, &err) : !sweep_run (&o, &err))
    {
      cmd_error ("%s", err->message);
      int rc = g_error_matches (err, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INTERRUPTED) ? 130 : 1;
      g_error_free (err);
      return rc;
    }
  return 0;
}
