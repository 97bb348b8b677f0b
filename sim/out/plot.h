/* plot.h — draw vramsim results with gnuplot (SPEC section 7, docs/plots.md).
 *
 * Each kind reads its inputs, writes the numbers it draws as TSV files, and
 * builds a gnuplot script: a generated prologue (terminal, output, file
 * names, titles, labels, arrays of legend entries) followed by the kind's
 * template from plots/KIND.gp, which holds all the styling. */
#pragma once

#include <glib.h>

#define VS_PLOT_ERROR (plot_error_quark ())
GQuark plot_error_quark (void);

typedef enum { VS_PLOT_TIMELINE, VS_PLOT_SWEEP, VS_PLOT_STALLS, VS_PLOT_COMPARE, VS_PLOT_PLAN, VS_PLOT_COUNT } VsPlotKind;

/* "timeline", "sweep", "stalls", "compare", "plan"; -1 / NULL when unknown. */
int plot_kind_from_name (const char *name);
const char *plot_kind_name (VsPlotKind kind);

typedef struct {
  VsPlotKind kind;
  char **inputs;          /* NULL-terminated */
  const char *output;     /* OUT.png or OUT.svg */
  const char *x, *y, *by; /* column names; NULL = the kind's default */
  const char *title;      /* NULL = a title made from the inputs */
  gboolean logx, logy;    /* force log axes (sweep also picks them itself) */
  gboolean script_only;   /* write OUT.gp and the data; do not run gnuplot */
} VsPlotOptions;

/* Draws (or, with script_only, writes the script and data of) one plot.
 * Bad input, a missing template or gnuplot, or a gnuplot failure set ERROR
 * and leave no output file. */
gboolean plot_run (const VsPlotOptions *opts, GError **error);

/* The folder templates are read from: $VRAMSIM_PLOTS, else plots/ beside
 * the executable's ../ (the source tree), else $(PREFIX)/share/vramsim/plots. */
char *plot_template_dir (void);
