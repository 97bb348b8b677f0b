/* cmd-plot.c — `vramsim plot`: options in, plot_run out. */
#include <string.h>

#include "cli/cmds.h"
#include "base/outfile.h"
#include "out/plot.h"

int
cmd_plot (int argc, char **argv)
{
  g_auto (GStrv) rest = NULL;
  g_autofree char *output = NULL, *x = NULL, *y = NULL, *by = NULL, *title = NULL;
  gboolean logx = FALSE, logy = FALSE, script_only = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The image: .png (pngcairo) or .svg", "OUT.png" },
    { "x", 0, 0, G_OPTION_ARG_STRING, &x, "sweep: the column on the x axis (default: the first varied key)", "KEY" },
    { "y", 0, 0, G_OPTION_ARG_STRING, &y, "sweep: the metric (default predicted_ns, or step_median_ns in a sweep --metric step CSV); compare: the series column of the lower panel (default util_device_mem)", "KEY" },
    { "by", 0, 0, G_OPTION_ARG_STRING, &by, "sweep: one line per value of these columns, comma-separated (default: every other key)", "KEY[,KEY...]" },
    { "title", 0, 0, G_OPTION_ARG_STRING, &title, "The plot's title", "TEXT" },
    { "logx", 0, 0, G_OPTION_ARG_NONE, &logx, "Log x axis (sweep picks it when x spans 10x or more)", NULL },
    { "logy", 0, 0, G_OPTION_ARG_NONE, &logy, "Log y axis (sweep picks it when y spans 100x or more)", NULL },
    { "script-only", 0, 0, G_OPTION_ARG_NONE, &script_only, "Write OUT.gp and its data beside OUT; do not run gnuplot", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("KIND INPUT... -o OUT.(png|svg)");
  g_option_context_set_summary (ctx,
    "Draws vramsim results with gnuplot. KIND is one of:\n"
    "  timeline  residency per tier (GiB) and utilization per resource (%) over time, from a replay --series CSV\n"
    "  sweep     a metric against a varied key, one line per --by value, from a sweep CSV\n"
    "  stalls    stacked contention/fault/swap/copy-engine stalls, per report JSON or per sweep CSV row\n"
    "  compare   two or more --series CSVs overlaid (residency, and --y below)\n"
    "  plan      TF/s per GPU (or --y step_ns, mfu, tokens_per_s, cost_per_mtokens) against GPUs, per (tp, pp), from plan --format json");
  g_option_context_set_description (ctx,
    "Examples:\n"
    "  vramsim plot timeline series.csv -o timeline.png\n"
    "  vramsim plot sweep results.csv --x memory.capacity --by config -o sweep.svg\n"
    "  vramsim plot stalls a.json b.json -o stalls.png\n"
    "  vramsim plot compare a100.csv rtx3090.csv -o compare.png\n"
    "  vramsim plot plan plan.json -o plan.png\n"
    "Templates come from $VRAMSIM_PLOTS, else the source tree's plots/, else the installed share/vramsim/plots.\n"
    "See docs/plots.md.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *err = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &err)
      || !g_option_context_parse (ctx, &argc, &argv, &err))
    {
      cmd_error ("plot: %s", err->message);
      g_error_free (err);
      return 2;
    }
  if (rest == NULL || rest[0] == NULL || rest[1] == NULL)
    {
      cmd_error ("plot: give KIND and at least one INPUT (see vramsim plot --help)");
      return 2;
    }
  int kind = plot_kind_from_name (rest[0]);
  if (kind < 0)
    {
      cmd_error ("plot: unknown kind '%s' (timeline, sweep, stalls, compare, plan)", rest[0]);
      return 2;
    }
  if (output == NULL)
    {
      cmd_error ("plot: -o OUT.png or OUT.svg is required");
      return 2;
    }
  if (!g_str_has_suffix (output, ".png") && !g_str_has_suffix (output, ".svg"))
    {
      cmd_error ("plot: -o %s: the output must end in .png or .svg", output);
      return 2;
    }

  for (char **in = rest + 1; *in; in++)
    if (!outfile_check_not_input (output, "-o", *in, "the input", &err))
      {
        cmd_error ("plot: %s", err->message);
        g_error_free (err);
        return 1;
      }

  VsPlotOptions o = { 0 };
  o.kind = (VsPlotKind) kind;
  o.inputs = rest + 1;
  o.output = output;
  o.x = x;
  o.y = y;
  o.by = by;
  o.title = title;
  o.logx = logx;
  o.logy = logy;
  o.script_only = script_only;
  if (!plot_run (&o, &err))
    {
      cmd_error ("%s", err->message);
      g_error_free (err);
      return 1;
    }
  return 0;
}
