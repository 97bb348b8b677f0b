/* plot-priv.h — what the files of `vramsim plot` share (not for other
 * rooms). Calls go one way: plot.c calls the kinds, the kinds call
 * plot-gp.c, plot-gp.c calls neither. */
#pragma once

#include <glib.h>

#include "out/plot.h"

/* What one plot kind hands to the writer. */
typedef struct {
  GString *vars;        /* prologue: gnuplot assignments */
  GPtrArray *data;      /* TSV contents, one per data file */
  char *title;          /* default title */
  guint height;         /* canvas height in pixels; 0 = the default 600 */
} Prepared;

/* ---- the kinds (plot.c calls them; each calls plot-gp.c only) ---- */

/* Each reads O's inputs into P (its data files, prologue variables and
 * default title); bad input sets ERROR. */
gboolean plot_prepare_timeline (const VsPlotOptions *o, Prepared *p, GError **error); /* plot-series.c */
gboolean plot_prepare_compare (const VsPlotOptions *o, Prepared *p, GError **error);  /* plot-series.c */
gboolean plot_prepare_sweep (const VsPlotOptions *o, Prepared *p, GError **error);    /* plot-sweep.c */
gboolean plot_prepare_stalls (const VsPlotOptions *o, Prepared *p, GError **error);   /* plot-stalls.c */
gboolean plot_prepare_plan (const VsPlotOptions *o, Prepared *p, GError **error);     /* plot-plan.c */

/* ---- plot-gp.c: the lowest file of the plots ---- */

/* (transfer full) A gnuplot single-quoted string: no escapes, '' is a quote. */
char *plot_gp_quote (const char *s);
/* Prologue lines: NAME = 'VALUE', NAME = VALUE, array NAME[n] = [...]. */
void plot_var_str (GString *vars, const char *name, const char *value);
void plot_var_int (GString *vars, const char *name, gint64 value);
void plot_var_array (GString *vars, const char *name, GPtrArray *items);
/* TSV cells: a number (%.9g), a label without tabs or newlines. */
void plot_tsv_num (GString *out, double v);
void plot_tsv_label (GString *out, const char *s);
/* A whole, finite number. */
gboolean plot_parse_number (const char *s, double *out);
/* (transfer full) PATH's file name without its extension. */
char *plot_base_stem (const char *path);
/* The index of column NAME in HEADER, or -1; (transfer full) "a, b, c". */
int plot_column_index (char **header, const char *name);
char *plot_column_list (char **header);
/* Sweep CSVs with one header: the rows, header first (g_strfreev each). */
GPtrArray *plot_read_sweep_csvs (char **inputs, GError **error);
/* A varied key's short name in labels ("memory.capacity" -> "capacity"). */
const char *plot_key_short (const char *key);
/* (transfer full) TEXT as a gnuplot string expression of lines of at most
 * WIDTH characters; plot_gp_lines: how many lines such an expression has. */
char *plot_gp_wrapped (const char *text, gsize width);
guint plot_gp_lines (const char *expr);
/* (transfer full) "a, b" for up to 4 names, else "N WHAT"; adding a name
 * once. */
char *plot_name_list (GPtrArray *names, const char *what);
void plot_add_unique (GPtrArray *names, const char *name);
