/* plot.c — `vramsim plot`: prepare TSV data and a gnuplot script, run gnuplot.
 *
 * The script is a generated prologue (terminal, output, data file names,
 * titles and labels as gnuplot variables, legend entries as arrays) plus the
 * kind's template plots/KIND.gp, which holds every style choice, so a user
 * can restyle a plot by editing a template or the --script-only output.
 * Units shown: time in ms (stalls pick us/ms/s by magnitude), memory in
 * GiB, utilization in %, rates in GB/s. Every output (image, script, data)
 * is written to a temporary name and renamed into place (base/outfile.h). */
#include "out/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib/gstdio.h>
#include <cjson/cJSON.h>

#include "base/outfile.h"
#include "sweep/sweep.h"
#include "base/units.h"

G_DEFINE_QUARK (vs-plot-error-quark, plot_error)

static const char *const kind_names[VS_PLOT_COUNT] = { "timeline", "sweep", "stalls", "compare" };

int
plot_kind_from_name (const char *name)
{
  for (int i = 0; i < VS_PLOT_COUNT; i++)
    if (name && strcmp (name, kind_names[i]) == 0)
      return i;
  return -1;
}

const char *
plot_kind_name (VsPlotKind kind)
{
  return kind < VS_PLOT_COUNT ? kind_names[kind] : NULL;
}

char *
plot_template_dir (void)
{
  const char *env = g_getenv ("VRAMSIM_PLOTS");
  if (env && *env)
    return g_strdup (env);
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe)
    {
      g_autofree char *bindir = g_path_get_dirname (exe);
      /* bin/vramsim and build/asan/bin/vramsim both sit below the source tree. */
      const char *const ups[] = { "..", "../../..", "../share/vramsim", NULL };
      for (guint i = 0; ups[i]; i++)
        {
          char *dir = g_build_filename (bindir, ups[i], "plots", NULL);
          g_autofree char *probe = g_build_filename (dir, "timeline.gp", NULL);
          if (g_file_test (probe, G_FILE_TEST_IS_REGULAR))
            return dir;
          g_free (dir);
        }
    }
  return g_strdup (VRAMSIM_PREFIX "/share/vramsim/plots");
}

/* ------------------------------------------------------------ the script */

/* What one plot kind hands to the writer. */
typedef struct {
  GString *vars;        /* prologue: gnuplot assignments */
  GPtrArray *data;      /* TSV contents, one per data file */
  char *title;          /* default title */
  guint height;         /* canvas height in pixels; 0 = the default 600 */
} Prepared;

static void
prepared_clear (Prepared *p)
{
  if (p->vars)
    g_string_free (p->vars, TRUE);
  if (p->data)
    g_ptr_array_unref (p->data);
  g_free (p->title);
}

/* A gnuplot single-quoted string: no escapes, '' is a quote. */
static char *
gp_quote (const char *s)
{
  GString *q = g_string_new ("'");
  for (const char *p = s; *p; p++)
    {
      if (*p == '\'')
        g_string_append_c (q, '\'');
      if (*p == '\n' || *p == '\t')
        g_string_append_c (q, ' ');
      else
        g_string_append_c (q, *p);
    }
  g_string_append_c (q, '\'');
  return g_string_free (q, FALSE);
}

static void
var_str (GString *vars, const char *name, const char *value)
{
  g_autofree char *q = gp_quote (value);
  g_string_append_printf (vars, "%s = %s\n", name, q);
}

static void
var_int (GString *vars, const char *name, gint64 value)
{
  g_string_append_printf (vars, "%s = %" G_GINT64_FORMAT "\n", name, value);
}

static void
var_array (GString *vars, const char *name, GPtrArray *items)
{
  g_string_append_printf (vars, "array %s[%u] = [", name, MAX (items->len, 1));
  for (guint i = 0; i < items->len; i++)
    {
      g_autofree char *q = gp_quote (items->pdata[i]);
      g_string_append_printf (vars, "%s%s", i ? ", " : "", q);
    }
  if (items->len == 0)
    g_string_append (vars, "''");
  g_string_append (vars, "]\n");
}

/* A number for a TSV cell. */
static void
tsv_num (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.9g", v));
}

/* A label for a TSV cell: no tabs or newlines. */
static void
tsv_label (GString *out, const char *s)
{
  for (const char *p = s; *p; p++)
    g_string_append_c (out, *p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p);
}

static gboolean
parse_number (const char *s, double *out)
{
  char *end = NULL;
  if (s == NULL || *s == '\0')
    return FALSE;
  *out = g_ascii_strtod (s, &end);
  return end && *end == '\0' && isfinite (*out);
}

static char *
base_stem (const char *path)
{
  char *b = g_path_get_basename (path);
  char *dot = strrchr (b, '.');
  if (dot && dot != b)
    *dot = '\0';
  return b;
}

static int
column_index (char **header, const char *name)
{
  for (int i = 0; header[i]; i++)
    if (strcmp (header[i], name) == 0)
      return i;
  return -1;
}

static char *
column_list (char **header)
{
  return g_strjoinv (", ", header);
}

/* ------------------------------------------------------------ timeline */

typedef struct {
  char *path;
  char **header;
  guint n_rows, n_cols;
  double *v;            /* n_rows × n_cols */
} Series;

static void
series_free (Series *s)
{
  if (s == NULL)
    return;
  g_free (s->path);
  g_strfreev (s->header);
  g_free (s->v);
  g_free (s);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Series, series_free)

static Series *
series_read (const char *path, GError **error)
{
  g_autoptr (GPtrArray) rows = sweep_csv_read (path, FALSE, error);
  if (rows == NULL)
    return NULL;
  if (rows->len == 0 || column_index (rows->pdata[0], "t_ns") != 0 || column_index (rows->pdata[0], "dt_ns") != 1)
    {
      g_set_error (error, VS_PLOT_ERROR, 0,
                   "%s: not a --series CSV (its header must start with t_ns,dt_ns; see vramsim replay --series)", path);
      return NULL;
    }
  if (rows->len < 2)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: the series has no rows", path);
      return NULL;
    }
  Series *s = g_new0 (Series, 1);
  s->path = g_strdup (path);
  s->header = g_strdupv (rows->pdata[0]);
  s->n_cols = g_strv_length (s->header);
  s->n_rows = rows->len - 1;
  s->v = g_new0 (double, (gsize) s->n_rows * s->n_cols);
  for (guint r = 0; r < s->n_rows; r++)
    {
      char **cells = rows->pdata[r + 1];
      if (g_strv_length (cells) != s->n_cols)
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s:%u: %u fields, the header has %u", path, r + 2,
                       g_strv_length (cells), s->n_cols);
          series_free (s);
          return NULL;
        }
      for (guint c = 0; c < s->n_cols; c++)
        if (!parse_number (cells[c], &s->v[(gsize) r * s->n_cols + c]))
          {
            g_set_error (error, VS_PLOT_ERROR, 0, "%s:%u: %s: '%s' is not a number", path, r + 2, s->header[c], cells[c]);
            series_free (s);
            return NULL;
          }
    }
  return s;
}

static double
series_at (const Series *s, guint r, guint c)
{
  return s->v[(gsize) r * s->n_cols + c];
}

static gboolean
series_nonzero (const Series *s, guint c)
{
  for (guint r = 0; r < s->n_rows; r++)
    if (series_at (s, r, c) != 0)
      return TRUE;
  return FALSE;
}

/* "resident_cxl0_bytes" -> "cxl0"; "util_link_h2d" -> "link_h2d". */
static char *
series_short_name (const char *col)
{
  if (g_str_has_prefix (col, "resident_") && g_str_has_suffix (col, "_bytes"))
    return g_strndup (col + 9, strlen (col) - 9 - 6);
  if (g_str_has_prefix (col, "util_"))
    return g_strdup (col + 5);
  return g_strdup (col);
}

/* The value drawn for column COL: GiB for bytes, % for utilization. */
static double
series_scale (const char *col)
{
  if (g_str_has_suffix (col, "_bytes"))
    return 1.0 / (1024.0 * 1024.0 * 1024.0);
  if (g_str_has_prefix (col, "util_"))
    return 100.0;
  if (g_str_has_suffix (col, "_ns"))
    return 1e-6;
  return 1.0;
}

static char *
series_label (const char *col)
{
  g_autofree char *n = series_short_name (col);
  if (g_str_has_prefix (col, "resident_"))
    return g_strdup_printf ("resident on %s (GiB)", n);
  if (g_str_has_prefix (col, "util_"))
    return g_strdup_printf ("%s utilization (%%)", n);
  if (g_str_has_suffix (col, "_ns"))
    return g_strdup_printf ("%s (ms)", col);
  return g_strdup (col);
}

/* Rows as steps: each bucket's start, plus the last bucket's end. */
static void
series_tsv (GString *out, const Series *s, const guint *cols, guint n)
{
  for (guint r = 0; r <= s->n_rows; r++)
    {
      guint src = r < s->n_rows ? r : s->n_rows - 1;
      double t = series_at (s, src, 0) + (r < s->n_rows ? 0 : series_at (s, src, 1));
      tsv_num (out, t / 1e6);
      for (guint i = 0; i < n; i++)
        {
          g_string_append_c (out, '\t');
          tsv_num (out, series_at (s, src, cols[i]) * series_scale (s->header[cols[i]]));
        }
      g_string_append_c (out, '\n');
    }
}

static gboolean
prepare_timeline (const VsPlotOptions *o, Prepared *p, GError **error)
{
  if (o->inputs[1] != NULL)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "timeline draws one --series CSV (use 'compare' for several)");
      return FALSE;
    }
  g_autoptr (Series) s = series_read (o->inputs[0], error);
  if (s == NULL)
    return FALSE;

  g_autofree guint *cols = g_new0 (guint, s->n_cols);
  guint n = 0, n_res = 0;
  g_autoptr (GPtrArray) res_titles = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) util_titles = g_ptr_array_new_with_free_func (g_free);
  /* Residency first (device always; other tiers when used), then every
   * resource that was busy at some point: idle ones only clutter. */
  for (guint c = 2; c < s->n_cols; c++)
    if (g_str_has_prefix (s->header[c], "resident_")
        && (strcmp (s->header[c], "resident_device_bytes") == 0 || series_nonzero (s, c)))
      {
        cols[n++] = c;
        g_ptr_array_add (res_titles, series_short_name (s->header[c]));
      }
  n_res = n;
  for (guint c = 2; c < s->n_cols; c++)
    if (g_str_has_prefix (s->header[c], "util_") && series_nonzero (s, c))
      {
        cols[n++] = c;
        g_ptr_array_add (util_titles, series_short_name (s->header[c]));
      }

  GString *tsv = g_string_new ("# time_ms");
  for (guint i = 0; i < n; i++)
    g_string_append_printf (tsv, "\t%s", s->header[cols[i]]);
  g_string_append (tsv, "   (residency in GiB, utilization in %)\n");
  series_tsv (tsv, s, cols, n);
  g_ptr_array_add (p->data, g_string_free (tsv, FALSE));

  g_autofree char *stem = g_path_get_basename (o->inputs[0]);
  p->title = g_strdup_printf ("Memory residency and bandwidth over time: %s", stem);
  var_int (p->vars, "nres", n_res);
  var_int (p->vars, "nutil", n - n_res);
  var_array (p->vars, "res_titles", res_titles);
  var_array (p->vars, "util_titles", util_titles);
  return TRUE;
}

/* ------------------------------------------------------------ compare */

static gboolean
prepare_compare (const VsPlotOptions *o, Prepared *p, GError **error)
{
  guint n_in = g_strv_length (o->inputs);
  const char *ycol = o->y ? o->y : "util_device_mem";
  if (n_in < 2)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "compare needs two or more --series CSVs");
      return FALSE;
    }
  g_autoptr (GPtrArray) titles = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_in; i++)
    {
      g_autoptr (Series) s = series_read (o->inputs[i], error);
      if (s == NULL)
        return FALSE;
      int dev = column_index (s->header, "resident_device_bytes");
      int yc = column_index (s->header, ycol);
      if (dev < 0 || yc < 0)
        {
          g_autofree char *cols = column_list (s->header);
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: no column '%s' (columns: %s)", o->inputs[i],
                       dev < 0 ? "resident_device_bytes" : ycol, cols);
          return FALSE;
        }
      guint cols[2] = { (guint) dev, (guint) yc };
      GString *tsv = g_string_new (NULL);
      g_string_append_printf (tsv, "# time_ms\tresident_device_GiB\t%s   (%s)\n", ycol, o->inputs[i]);
      series_tsv (tsv, s, cols, 2);
      g_ptr_array_add (p->data, g_string_free (tsv, FALSE));
      g_ptr_array_add (titles, base_stem (o->inputs[i]));
    }
  g_autofree char *ylabel = series_label (ycol);
  g_autofree char *joined = NULL;
  {
    g_ptr_array_add (titles, NULL);
    joined = g_strjoinv (" vs ", (char **) titles->pdata);
    g_ptr_array_remove_index (titles, titles->len - 1);
  }
  p->title = g_strdup_printf ("Compare: %s", joined);
  var_int (p->vars, "ninputs", n_in);
  var_array (p->vars, "titles", titles);
  var_str (p->vars, "ylabel2", ylabel);
  return TRUE;
}

/* --------------------------------------------------------------- sweep */

typedef enum { X_CATEGORY, X_PLAIN, X_BYTES, X_RATE, X_TIME } XKind;

static gboolean
x_value (XKind k, const char *s, double *out)
{
  guint64 b;
  switch (k)
    {
    case X_PLAIN:
      return parse_number (s, out);
    case X_BYTES:
      if (!units_parse_bytes (s, &b, NULL))
        return FALSE;
      *out = (double) b / (1024.0 * 1024.0 * 1024.0);
      return TRUE;
    case X_RATE:
      if (!units_parse_rate (s, out, NULL))
        return FALSE;
      *out /= 1e9;
      return TRUE;
    case X_TIME:
      if (!units_parse_time (s, out, NULL))
        return FALSE;
      *out /= 1e6;
      return TRUE;
    case X_CATEGORY:
      return FALSE;
    }
  return FALSE;
}

static const struct {
  const char *column, *label;
  double scale;
} metric_labels[] = {
  { "predicted_ns", "predicted time (ms)", 1e-6 },
  { "slowdown", "slowdown (predicted / captured)", 1 },
  { "step_median_ns", "steady step time (ms)", 1e-6 },
  { "peak_device_bytes", "peak device memory (GiB)", 1.0 / 1073741824.0 },
  { "contention_ns", "contention stall (ms)", 1e-6 },
  { "fault_ns", "fault stall (ms)", 1e-6 },
  { "swap_ns", "swap stall (ms)", 1e-6 },
  { "copy_engine_ns", "copy-engine stall (ms)", 1e-6 },
  { "blocked_ns", "host blocked (ms)", 1e-6 },
  { "faults", "faulted pages", 1 },
};

static char *
metric_label (const char *col, double *scale)
{
  for (guint i = 0; i < G_N_ELEMENTS (metric_labels); i++)
    if (strcmp (col, metric_labels[i].column) == 0)
      {
        *scale = metric_labels[i].scale;
        return g_strdup (metric_labels[i].label);
      }
  if (g_str_has_suffix (col, "_ns"))
    {
      *scale = 1e-6;
      return g_strdup_printf ("%.*s (ms)", (int) strlen (col) - 3, col);
    }
  if (g_str_has_suffix (col, "_bytes"))
    {
      *scale = 1.0 / 1073741824.0;
      return g_strdup_printf ("%.*s (GiB)", (int) strlen (col) - 6, col);
    }
  *scale = 1;
  return g_strdup (col);
}

/* Reads sweep CSVs with one header into ROWS (header first). */
static GPtrArray *
read_sweep_csvs (char **inputs, GError **error)
{
  GPtrArray *all = NULL;
  for (guint i = 0; inputs[i]; i++)
    {
      g_autoptr (GPtrArray) rows = sweep_csv_read (inputs[i], FALSE, error);
      if (rows == NULL)
        goto fail;
      if (rows->len == 0 || column_index (rows->pdata[0], "status") < 1)
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: not a sweep CSV (no status column; see vramsim sweep)", inputs[i]);
          goto fail;
        }
      if (all == NULL)
        {
          all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
          g_ptr_array_add (all, g_strdupv (rows->pdata[0]));
        }
      else if (!g_strv_equal (all->pdata[0], rows->pdata[0]))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: its columns differ from those of %s", inputs[i], inputs[0]);
          goto fail;
        }
      guint n = g_strv_length (rows->pdata[0]);
      for (guint r = 1; r < rows->len; r++)
        {
          if (g_strv_length (rows->pdata[r]) != n)
            {
              g_set_error (error, VS_PLOT_ERROR, 0, "%s: row %u has %u fields, the header %u", inputs[i], r + 1,
                           g_strv_length (rows->pdata[r]), n);
              goto fail;
            }
          g_ptr_array_add (all, g_strdupv (rows->pdata[r]));
        }
    }
  return all;
fail:
  if (all)
    g_ptr_array_unref (all);
  return NULL;
}

typedef struct {
  char *label;
  guint order;          /* row where the line's key first appears */
  char *color_key;      /* the first --by value: one colour each */
  char *style_key;      /* the other --by values: one dash/point style each */
  GArray *x, *y;        /* double */
  GPtrArray *xtext;     /* the x cells as written */
} Group;

static void
group_free (gpointer p)
{
  Group *g = p;
  g_free (g->label);
  g_free (g->color_key);
  g_free (g->style_key);
  g_array_unref (g->x);
  g_array_unref (g->y);
  g_ptr_array_unref (g->xtext);
  g_free (g);
}

static gint
group_cmp (gconstpointer a, gconstpointer b)
{
  const Group *ga = *(Group *const *) a, *gb = *(Group *const *) b;
  return ga->order < gb->order ? -1 : ga->order > gb->order;
}

/* Whether G and H have the same points (as x, y sets: rows of a sweep come
 * in one order for every line). */
static gboolean
group_same_points (const Group *g, const Group *h)
{
  if (g->x->len != h->x->len)
    return FALSE;
  for (guint i = 0; i < g->x->len; i++)
    {
      double gx = g_array_index (g->x, double, i), gy = g_array_index (g->y, double, i);
      gboolean found = FALSE;
      for (guint j = 0; j < h->x->len && !found; j++)
        found = g_array_index (h->x, double, j) == gx && g_array_index (h->y, double, j) == gy;
      if (!found)
        return FALSE;
    }
  return TRUE;
}

/* (transfer full) The legend entry of two lines drawn as one, part by
 * part: "a100-80g, oversubscription=spill" and "a100-80g-cxl,
 * oversubscription=spill" -> "a100-80g = a100-80g-cxl,
 * oversubscription=spill"; "x, policy=oom" and "x, policy=uvm" -> "x,
 * policy=oom = uvm". Labels of other shapes are joined whole. */
static char *
merge_labels (const char *a, const char *b)
{
  g_auto (GStrv) pa = g_strsplit (a, ", ", -1), pb = g_strsplit (b, ", ", -1);
  if (g_strv_length (pa) != g_strv_length (pb))
    return g_strdup_printf ("%s = %s", a, b);
  GString *s = g_string_new (NULL);
  for (guint i = 0; pa[i]; i++)
    {
      if (i)
        g_string_append (s, ", ");
      const char *eq = strchr (pb[i], '=');
      if (strcmp (pa[i], pb[i]) == 0)
        g_string_append (s, pa[i]);
      else if (eq && strncmp (pa[i], pb[i], (gsize) (eq - pb[i]) + 1) == 0)
        g_string_append_printf (s, "%s = %s", pa[i], eq + 1);
      else
        g_string_append_printf (s, "%s = %s", pa[i], pb[i]);
    }
  return g_string_free (s, FALSE);
}

/* (transfer full) "a100-80g, rtx3090" for up to 4 names, else "7 configs". */
static char *
name_list (GPtrArray *names, const char *what)
{
  if (names->len > 4)
    return g_strdup_printf ("%u %s", names->len, what);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", (const char *) names->pdata[i]);
  return g_string_free (s, FALSE);
}

static void
add_unique (GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp (names->pdata[i], name) == 0)
      return;
  g_ptr_array_add (names, g_strdup (name));
}

static gboolean
prepare_sweep (const VsPlotOptions *o, Prepared *p, GError **error)
{
  g_autoptr (GPtrArray) rows = read_sweep_csvs (o->inputs, error);
  if (rows == NULL)
    return FALSE;
  char **header = rows->pdata[0];
  int status = column_index (header, "status");
  int n_keys = status;    /* config and the varied keys come before status */
  const char *xcol = o->x ? o->x : header[n_keys > 1 ? 1 : 0];
  /* A sweep run with --metric step plots the steady step time by default,
   * as fit --metric step ranks by it. */
  const char *ycol = o->y ? o->y : column_index (header, "step_median_ns") >= 0 ? "step_median_ns" : "predicted_ns";
  int xi = column_index (header, xcol), yi = column_index (header, ycol);
  if (xi < 0 || yi < 0)
    {
      g_autofree char *cols = column_list (header);
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: no column '%s' (columns: %s)", o->inputs[0], xi < 0 ? xcol : ycol, cols);
      return FALSE;
    }

  /* Lines: one per value of the --by columns (default: every other key). */
  g_autoptr (GArray) by = g_array_new (FALSE, FALSE, sizeof (int));
  if (o->by)
    {
      g_auto (GStrv) names = g_strsplit (o->by, ",", -1);
      for (char **n = names; *n; n++)
        {
          int c = column_index (header, g_strstrip (*n));
          if (c < 0)
            {
              g_autofree char *cols = column_list (header);
              g_set_error (error, VS_PLOT_ERROR, 0, "%s: --by: no column '%s' (columns: %s)", o->inputs[0], *n, cols);
              return FALSE;
            }
          g_array_append_val (by, c);
        }
    }
  else
    for (int c = 0; c < n_keys; c++)
      if (c != xi)
        g_array_append_val (by, c);

  /* The x axis: numbers (with units) when every x cell parses, else categories. */
  XKind xk = X_CATEGORY;
  const XKind tries[] = { X_PLAIN, X_BYTES, X_RATE, X_TIME };
  for (guint t = 0; t < G_N_ELEMENTS (tries) && xk == X_CATEGORY; t++)
    {
      gboolean all = TRUE;
      double v;
      for (guint r = 1; r < rows->len && all; r++)
        all = x_value (tries[t], ((char **) rows->pdata[r])[xi], &v);
      if (all)
        xk = tries[t];
    }
  g_autoptr (GPtrArray) categories = g_ptr_array_new ();
  double yscale;
  g_autofree char *ylabel = metric_label (ycol, &yscale);

  g_autoptr (GPtrArray) groups = g_ptr_array_new_with_free_func (group_free);
  g_autoptr (GHashTable) by_label = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) first_seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint not_ok = 0, no_step = 0;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (guint r = 1; r < rows->len; r++)
    {
      char **cells = rows->pdata[r];
      double x, y;
      GString *label = g_string_new (NULL);
      GString *style_key = g_string_new (NULL);
      for (guint b = 0; b < by->len; b++)
        {
          int c = g_array_index (by, int, b);
          if (b)
            g_string_append_printf (style_key, "%s\x1f", cells[c]);
          if (b)
            g_string_append (label, ", ");
          /* A bare value is unclear for a varied key: say which. */
          if (c != 0 && by->len > 1)
            {
              const char *dot = strrchr (header[c], '.');
              g_string_append_printf (label, "%s=%s", dot ? dot + 1 : header[c], cells[c]);
            }
          else
            g_string_append (label, cells[c]);
        }
      if (label->len == 0)
        g_string_append (label, ycol);
      /* Lines keep the order their first row has, drawn or not. */
      if (!g_hash_table_contains (first_seen, label->str))
        g_hash_table_insert (first_seen, g_strdup (label->str), GUINT_TO_POINTER (r));
      if (strcmp (cells[status], "ok") != 0)
        {
          not_ok++;
          g_string_free (label, TRUE);
          g_string_free (style_key, TRUE);
          continue;
        }
      /* step_median_ns is empty for a run whose trace repeats no mark. */
      if (cells[yi][0] == '\0' && strcmp (ycol, "step_median_ns") == 0)
        {
          no_step++;
          g_string_free (label, TRUE);
          g_string_free (style_key, TRUE);
          continue;
        }
      if (!parse_number (cells[yi], &y))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: row %u: %s: '%s' is not a number", o->inputs[0], r + 1, ycol, cells[yi]);
          return FALSE;
        }
      y *= yscale;
      if (xk == X_CATEGORY)
        {
          guint k;
          for (k = 0; k < categories->len; k++)
            if (strcmp (categories->pdata[k], cells[xi]) == 0)
              break;
          if (k == categories->len)
            g_ptr_array_add (categories, cells[xi]);
          x = k;
        }
      else
        x_value (xk, cells[xi], &x);

      Group *g = g_hash_table_lookup (by_label, label->str);
      if (g == NULL)
        {
          g = g_new0 (Group, 1);
          g->label = g_strdup (label->str);
          g->order = GPOINTER_TO_UINT (g_hash_table_lookup (first_seen, label->str));
          g->color_key = g_strdup (by->len ? cells[g_array_index (by, int, 0)] : "");
          g->style_key = g_strdup (style_key->str);
          g->x = g_array_new (FALSE, FALSE, sizeof (double));
          g->y = g_array_new (FALSE, FALSE, sizeof (double));
          g->xtext = g_ptr_array_new ();
          g_ptr_array_add (groups, g);
          g_hash_table_insert (by_label, g->label, g);
        }
      g_string_free (label, TRUE);
      g_string_free (style_key, TRUE);
      g_array_append_val (g->x, x);
      g_array_append_val (g->y, y);
      g_ptr_array_add (g->xtext, cells[xi]);
      xmin = MIN (xmin, x), xmax = MAX (xmax, x);
      ymin = MIN (ymin, y), ymax = MAX (ymax, y);
    }
  if (groups->len == 0 && no_step)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: no run has a step_median_ns (the trace repeats no mark): plot "
                   "--y predicted_ns", o->inputs[0]);
      return FALSE;
    }
  if (groups->len == 0)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: no run with status ok to plot (%u runs oom, overflow or error)", o->inputs[0], not_ok);
      return FALSE;
    }

  g_ptr_array_sort (groups, group_cmp);

  /* Lines with the same points would hide one another (a100-80g under
   * a100-80g-cxl when the expander is never used): draw each such set
   * once, its legend naming every member. */
  guint merged = 0;
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      for (guint hi = 0; hi < gi; hi++)
        {
          Group *h = groups->pdata[hi];
          if (!group_same_points (g, h))
            continue;
          char *label = merge_labels (h->label, g->label);
          g_free (h->label);
          h->label = label;
          g_ptr_array_remove_index (groups, gi--);
          merged++;
          break;
        }
    }

  /* Distinct x values: few enough to label each tick with its value as written. */
  g_autoptr (GHashTable) distinct = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      for (guint i = 0; i < g->xtext->len; i++)
        g_hash_table_add (distinct, g->xtext->pdata[i]);
    }
  gboolean value_tics = xk == X_CATEGORY || g_hash_table_size (distinct) <= 12;

  GString *tsv = g_string_new (NULL);
  g_autoptr (GPtrArray) titles = g_ptr_array_new_with_free_func (g_free);
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      /* Points in x order (insertion sort: lines are short). */
      guint n = g->x->len;
      g_autofree guint *order = g_new (guint, n);
      for (guint i = 0; i < n; i++)
        {
          guint j = i;
          while (j > 0 && g_array_index (g->x, double, order[j - 1]) > g_array_index (g->x, double, i))
            order[j] = order[j - 1], j--;
          order[j] = i;
        }
      g_string_append_printf (tsv, "%s# %s\n", gi ? "\n\n" : "", g->label);
      for (guint i = 0; i < n; i++)
        {
          tsv_num (tsv, g_array_index (g->x, double, order[i]));
          g_string_append_c (tsv, '\t');
          tsv_num (tsv, g_array_index (g->y, double, order[i]));
          g_string_append_c (tsv, '\t');
          tsv_label (tsv, g->xtext->pdata[order[i]]);
          g_string_append_c (tsv, '\n');
        }
      g_ptr_array_add (titles, g_strdup (g->label));
    }
  g_ptr_array_add (p->data, g_string_free (tsv, FALSE));

  /* Colour by the first --by column, dash and point by the others, so
   * a machine keeps its colour across policies. */
  GString *colors = g_string_new (NULL), *styles = g_string_new (NULL);
  g_autoptr (GHashTable) color_of = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) style_of = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      if (!g_hash_table_contains (color_of, g->color_key))
        g_hash_table_insert (color_of, g->color_key, GUINT_TO_POINTER (g_hash_table_size (color_of) + 1));
      if (!g_hash_table_contains (style_of, g->style_key))
        g_hash_table_insert (style_of, g->style_key, GUINT_TO_POINTER (g_hash_table_size (style_of) + 1));
      g_string_append_printf (colors, "%s%u", gi ? ", " : "", GPOINTER_TO_UINT (g_hash_table_lookup (color_of, g->color_key)));
      g_string_append_printf (styles, "%s%u", gi ? ", " : "", GPOINTER_TO_UINT (g_hash_table_lookup (style_of, g->style_key)));
    }
  g_string_append_printf (p->vars, "array gcolor[%u] = [%s]\n", groups->len, colors->str);
  g_string_append_printf (p->vars, "array gstyle[%u] = [%s]\n", groups->len, styles->str);
  g_string_free (colors, TRUE);
  g_string_free (styles, TRUE);

  const char *xunit = xk == X_BYTES ? " (GiB)" : xk == X_RATE ? " (GB/s)" : xk == X_TIME ? " (ms)" : "";
  /* Ticks labelled with the values as written carry their own unit. */
  g_autofree char *xlabel = g_strconcat (xcol, value_tics ? "" : xunit, NULL);
  gboolean logx = o->logx || (xk != X_CATEGORY && xmin > 0 && xmax / xmin >= 10);
  gboolean logy = o->logy || (ymin > 0 && ymax / ymin >= 100);
  g_autofree char *ylow = metric_label (ycol, &yscale);
  char *paren = strstr (ylow, " (");
  if (paren)
    *paren = '\0';
  /* The title says what is compared: the metric, the key, the configs
   * (a sweep CSV does not name its trace: give it with --title). */
  g_autoptr (GPtrArray) configs = g_ptr_array_new_with_free_func (g_free);
  int ci = column_index (header, "config");
  for (guint r = 1; r < rows->len && ci >= 0; r++)
    add_unique (configs, ((char **) rows->pdata[r])[ci]);
  g_autofree char *cfgs = name_list (configs, "configs");
  p->title = ci >= 0 ? g_strdup_printf ("%s vs %s on %s", ylow, xcol, cfgs) : g_strdup_printf ("%s vs %s", ylow, xcol);
  p->title[0] = g_ascii_toupper (p->title[0]);
  var_str (p->vars, "xlabel", xlabel);
  var_str (p->vars, "ylabel", ylabel);
  var_int (p->vars, "logx", logx);
  var_int (p->vars, "logy", logy);
  var_int (p->vars, "xcategory", xk == X_CATEGORY);
  var_int (p->vars, "value_tics", value_tics);
  var_int (p->vars, "ngroups", groups->len);
  var_array (p->vars, "titles", titles);
  /* Beside the plot a legend entry takes about 7 px a character of the
   * 1000 px canvas; past 40 characters the plot would shrink to half. */
  gsize longest = 0;
  for (guint i = 0; i < titles->len; i++)
    longest = MAX (longest, (gsize) g_utf8_strlen (titles->pdata[i], -1));
  var_int (p->vars, "key_below", longest > 40);
  GString *note = g_string_new (NULL);
  if (not_ok)
    g_string_append_printf (note, "%u run%s not drawn (status oom, overflow or error)", not_ok, not_ok == 1 ? "" : "s");
  if (no_step)
    g_string_append_printf (note, "%s%u run%s without a step time not drawn", note->len ? "; " : "", no_step,
                            no_step == 1 ? "" : "s");
  if (merged)
    g_string_append_printf (note, "%s%u identical line%s drawn once (legend: A = B)", note->len ? "; " : "",
                            merged, merged == 1 ? "" : "s");
  var_str (p->vars, "note", note->str);
  g_string_free (note, TRUE);
  return TRUE;
}

/* -------------------------------------------------------------- stalls */

static const char *const stall_keys[] = { "contention_ns", "fault_ns", "swap_ns", "copy_engine_ns" };
#define N_STALLS G_N_ELEMENTS (stall_keys)

typedef struct {
  char *label;
  char *config, *trace;   /* for the title; NULL when not known */
  double ns[N_STALLS];
} Bar;

static void
bar_free (gpointer p)
{
  Bar *b = p;
  g_free (b->label);
  g_free (b->config);
  g_free (b->trace);
  g_free (b);
}

static gboolean
stalls_from_report (const char *path, const char *text, GPtrArray *bars, GError **error)
{
  cJSON *rep = cJSON_Parse (text);
  const cJSON *stalls = cJSON_GetObjectItemCaseSensitive (rep, "stalls");
  if (!cJSON_IsObject (stalls))
    {
      cJSON_Delete (rep);
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: not a replay report (no \"stalls\"; see vramsim replay --format json)", path);
      return FALSE;
    }
  Bar *b = g_new0 (Bar, 1);
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive (rep, "config");
  g_autofree char *stem = base_stem (path);
  const cJSON *pol = cJSON_GetObjectItemCaseSensitive (rep, "policy");
  /* "a100-80g spill (r2)": runs compared side by side often differ only
   * in their oversubscription policy. */
  const cJSON *st = cJSON_GetObjectItemCaseSensitive (rep, "status");
  g_autofree char *status = cJSON_IsString (st) && strcmp (st->valuestring, "ok") != 0
                            ? g_strdup_printf (", %s", st->valuestring) : g_strdup ("");
  if (cJSON_IsString (cfg) && cJSON_IsString (pol))
    b->label = g_strdup_printf ("%s %s (%s%s)", cfg->valuestring, pol->valuestring, stem, status);
  else
    b->label = cJSON_IsString (cfg) ? g_strdup_printf ("%s (%s%s)", cfg->valuestring, stem, status) : g_strdup (stem);
  const cJSON *trace = cJSON_GetObjectItemCaseSensitive (rep, "trace");
  b->config = cJSON_IsString (cfg) ? g_strdup (cfg->valuestring) : NULL;
  b->trace = cJSON_IsString (trace) ? g_path_get_basename (trace->valuestring) : NULL;
  for (guint k = 0; k < N_STALLS; k++)
    {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive (stalls, stall_keys[k]);
      b->ns[k] = cJSON_IsNumber (v) ? v->valuedouble : 0;
    }
  g_ptr_array_add (bars, b);
  cJSON_Delete (rep);
  return TRUE;
}

static gboolean
stalls_from_csv (const char *path, GPtrArray *bars, GError **error)
{
  char *one[] = { (char *) path, NULL };
  g_autoptr (GPtrArray) rows = read_sweep_csvs (one, error);
  if (rows == NULL)
    return FALSE;
  char **header = rows->pdata[0];
  int status = column_index (header, "status");
  int cols[N_STALLS];
  for (guint k = 0; k < N_STALLS; k++)
    if ((cols[k] = column_index (header, stall_keys[k])) < 0)
      {
        g_set_error (error, VS_PLOT_ERROR, 0, "%s: no column '%s'", path, stall_keys[k]);
        return FALSE;
      }
  for (guint r = 1; r < rows->len; r++)
    {
      char **cells = rows->pdata[r];
      if (strcmp (cells[status], "error") == 0)
        continue;
      Bar *b = g_new0 (Bar, 1);
      GString *label = g_string_new (NULL);
      for (int c = 0; c < status; c++)
        g_string_append_printf (label, "%s%s", c ? ", " : "", cells[c]);
      if (strcmp (cells[status], "ok") != 0)
        g_string_append_printf (label, " (%s)", cells[status]);
      b->label = g_string_free (label, FALSE);
      int ci = column_index (header, "config");
      b->config = ci >= 0 ? g_strdup (cells[ci]) : NULL;
      for (guint k = 0; k < N_STALLS; k++)
        if (!parse_number (cells[cols[k]], &b->ns[k]))
          b->ns[k] = 0;
      g_ptr_array_add (bars, b);
    }
  return TRUE;
}

static gboolean
prepare_stalls (const VsPlotOptions *o, Prepared *p, GError **error)
{
  g_autoptr (GPtrArray) bars = g_ptr_array_new_with_free_func (bar_free);
  for (guint i = 0; o->inputs[i]; i++)
    {
      g_autofree char *text = NULL;
      if (!g_file_get_contents (o->inputs[i], &text, NULL, error))
        return FALSE;
      const char *t = text;
      while (g_ascii_isspace (*t))
        t++;
      if (*t == '{' ? !stalls_from_report (o->inputs[i], text, bars, error) : !stalls_from_csv (o->inputs[i], bars, error))
        return FALSE;
    }
  if (bars->len == 0)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: nothing to plot (every row is an error)", o->inputs[0]);
      return FALSE;
    }

  double max_total = 0;
  for (guint i = 0; i < bars->len; i++)
    {
      Bar *b = bars->pdata[i];
      double t = 0;
      for (guint k = 0; k < N_STALLS; k++)
        t += b->ns[k];
      max_total = MAX (max_total, t);
    }
  const char *unit = "ms";
  double scale = 1e-6;
  if (max_total < 1e6)
    unit = "us", scale = 1e-3;
  else if (max_total >= 1e10)
    unit = "s", scale = 1e-9;

  GString *tsv = g_string_new ("# run\tcontention\tfault\tswap\tcopy_engine   (stall time)\n");
  for (guint i = 0; i < bars->len; i++)
    {
      Bar *b = bars->pdata[i];
      tsv_label (tsv, b->label);
      for (guint k = 0; k < N_STALLS; k++)
        {
          g_string_append_c (tsv, '\t');
          tsv_num (tsv, b->ns[k] * scale);
        }
      g_string_append_c (tsv, '\n');
    }
  g_ptr_array_add (p->data, g_string_free (tsv, FALSE));
  g_autofree char *ylabel = g_strdup_printf ("stall time (%s)", unit);

  /* What is compared: the traces (reports name theirs) and the configs. */
  g_autoptr (GPtrArray) traces = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) configs = g_ptr_array_new_with_free_func (g_free);
  gsize longest = 0;
  for (guint i = 0; i < bars->len; i++)
    {
      Bar *b = bars->pdata[i];
      if (b->trace)
        add_unique (traces, b->trace);
      if (b->config)
        add_unique (configs, b->config);
      longest = MAX (longest, (gsize) g_utf8_strlen (b->label, -1));
    }
  g_autofree char *tl = name_list (traces, "traces");
  g_autofree char *cl = name_list (configs, "configs");
  GString *title = g_string_new ("Stall time per run");
  if (traces->len)
    g_string_append_printf (title, ": %s", tl);
  if (configs->len)
    g_string_append_printf (title, " on %s", cl);
  g_string_append_printf (title, " (%u run%s)", bars->len, bars->len == 1 ? "" : "s");
  p->title = g_string_free (title, FALSE);

  /* Labels that fit: upright under few short bars, rotated when they
   * would collide (about 7 px a character at 11 pt over 800 px of plot),
   * horizontal bars with one line each beyond 16 runs, the canvas grown
   * to give each bar 16 px. */
  gboolean horizontal = bars->len > 16;
  gboolean rotate = !horizontal && bars->len * (longest + 2) * 7 > 750;
  if (horizontal)
    p->height = MAX (600, 140 + 16 * bars->len);
  var_str (p->vars, "ylabel", ylabel);
  var_int (p->vars, "nbars", bars->len);
  var_int (p->vars, "horizontal", horizontal);
  var_int (p->vars, "rotate", rotate);
  return TRUE;
}

/* ---------------------------------------------------------------- run */

/* OUT with its extension replaced by EXT ("x.png" -> "x.gp", "x-2.tsv"). */
static char *
sibling (const char *out, const char *suffix)
{
  const char *slash = strrchr (out, '/');
  const char *dot = strrchr (out, '.');
  gsize stem = dot && (!slash || dot > slash + 1) ? (gsize) (dot - out) : strlen (out);
  return g_strdup_printf ("%.*s%s", (int) stem, out, suffix);
}

static char *
build_script (const VsPlotOptions *o, const Prepared *p, const char *terminal, const char *image,
              char **data_paths, const char *template_text, const char *template_name)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "# vramsim plot %s: generated from plots/%s and", plot_kind_name (o->kind), template_name);
  for (guint i = 0; o->inputs[i]; i++)
    g_string_append_printf (s, " %s", o->inputs[i]);
  g_string_append (s, "\n# Edit freely, then run: gnuplot THIS_FILE\n");
  g_string_append_printf (s, "set terminal %s\n", terminal);
  g_autofree char *qi = gp_quote (image);
  g_string_append_printf (s, "set output %s\n", qi);
  var_str (s, "plot_title", o->title ? o->title : p->title);
  if (data_paths[0] && data_paths[1] == NULL)
    var_str (s, "datafile", data_paths[0]);
  else
    {
      g_autoptr (GPtrArray) files = g_ptr_array_new ();
      for (guint i = 0; data_paths[i]; i++)
        g_ptr_array_add (files, data_paths[i]);
      var_array (s, "datafiles", files);
    }
  g_string_append (s, p->vars->str);
  g_string_append_printf (s, "# ---- plots/%s ----\n", template_name);
  g_string_append (s, template_text);
  return g_string_free (s, FALSE);
}

static gboolean
run_gnuplot (const char *script_path, GError **error)
{
  const char *gp = g_getenv ("VRAMSIM_GNUPLOT");
  char *argv[] = { (char *) (gp && *gp ? gp : "gnuplot"), (char *) script_path, NULL };
  g_autofree char *err_text = NULL;
  gint status = 0;
  GError *e = NULL;
  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                     NULL, &err_text, &status, &e))
    {
      if (g_error_matches (e, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
        g_set_error (error, VS_PLOT_ERROR, 0,
                     "gnuplot not found (install it, e.g. apt-get install gnuplot-nox, or use --script-only "
                     "to write the script and data): %s", e->message);
      else
        g_set_error (error, VS_PLOT_ERROR, 0, "cannot run %s: %s", argv[0], e->message);
      g_error_free (e);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, &e))
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot failed (%s): %s", e->message,
                   err_text && *err_text ? g_strstrip (err_text) : "no message");
      g_error_free (e);
      return FALSE;
    }
  return TRUE;
}

static void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *f = g_build_filename (dir, name, NULL);
      g_unlink (f);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

gboolean
plot_run (const VsPlotOptions *o, GError **error)
{
  g_return_val_if_fail (o->inputs && o->inputs[0] && o->output, FALSE);
  /* The canvas is 1000 wide; its height is the kind's (many bars need more). */
  const char *terminal_size;
  const char *terminal_rest;
  if (g_str_has_suffix (o->output, ".png"))
    terminal_size = "pngcairo size 1000,", terminal_rest = " noenhanced font 'Sans,11'";
  else if (g_str_has_suffix (o->output, ".svg"))
    terminal_size = "svg size 1000,", terminal_rest = " dynamic noenhanced font 'Sans,11' background rgb 'white'";
  else
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: the output must end in .png or .svg", o->output);
      return FALSE;
    }

  g_autofree char *tdir = plot_template_dir ();
  g_autofree char *tname = g_strconcat (plot_kind_name (o->kind), ".gp", NULL);
  g_autofree char *tpath = g_build_filename (tdir, tname, NULL);
  g_autofree char *template_text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents (tpath, &template_text, NULL, &e))
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot template %s: %s (set VRAMSIM_PLOTS to the plots/ folder)",
                   tpath, e->message);
      g_error_free (e);
      return FALSE;
    }

  Prepared p = { g_string_new (NULL), g_ptr_array_new_with_free_func (g_free), NULL, 0 };
  gboolean ok = FALSE;
  switch (o->kind)
    {
    case VS_PLOT_TIMELINE: ok = prepare_timeline (o, &p, error); break;
    case VS_PLOT_SWEEP:    ok = prepare_sweep (o, &p, error); break;
    case VS_PLOT_STALLS:   ok = prepare_stalls (o, &p, error); break;
    case VS_PLOT_COMPARE:  ok = prepare_compare (o, &p, error); break;
    default: g_return_val_if_reached (FALSE);
    }
  if (!ok)
    {
      prepared_clear (&p);
      return FALSE;
    }
  if (o->kind == VS_PLOT_TIMELINE || o->kind == VS_PLOT_COMPARE)
    {
      var_int (p.vars, "logx", o->logx);
      var_int (p.vars, "logy", o->logy);
    }
  else if (o->kind == VS_PLOT_STALLS)
    var_int (p.vars, "logy", o->logy);
  g_autofree char *terminal = g_strdup_printf ("%s%u%s", terminal_size, p.height ? p.height : 600, terminal_rest);

  /* Data file names: beside OUT for --script-only, else in a private
   * temporary folder. */
  g_autofree char *tmpdir = NULL;
  char **data_paths = g_new0 (char *, p.data->len + 1);
  if (!o->script_only)
    {
      tmpdir = g_dir_make_tmp ("vramsim-plot-XXXXXX", error);
      if (tmpdir == NULL)
        goto out_fail;
    }
  for (guint i = 0; i < p.data->len; i++)
    {
      g_autofree char *suffix = p.data->len == 1 ? g_strdup (".tsv") : g_strdup_printf ("-%u.tsv", i + 1);
      if (o->script_only)
        data_paths[i] = sibling (o->output, suffix);
      else
        {
          g_autofree char *stem = g_strdup_printf ("data%s", suffix);
          data_paths[i] = g_build_filename (tmpdir, stem, NULL);
        }
      if (!outfile_write_all (data_paths[i], NULL, p.data->pdata[i], -1, error))
        goto out_fail;
    }

  if (o->script_only)
    {
      g_autofree char *script = build_script (o, &p, terminal, o->output, data_paths, template_text, tname);
      g_autofree char *gp = sibling (o->output, ".gp");
      ok = outfile_write_all (gp, NULL, script, -1, error);
      goto out;
    }
  else
    {
      /* gnuplot writes the image by name: a temporary beside OUT renamed
       * on success, or OUT itself for a device or FIFO (base/outfile.h). */
      VsOutFile *img = outfile_open_named (o->output, NULL, error);
      if (img == NULL)
        goto out_fail;
      const char *target = outfile_write_path (img);
      g_autofree char *script = build_script (o, &p, terminal, target, data_paths, template_text, tname);
      g_autofree char *gp = g_build_filename (tmpdir, "plot.gp", NULL);
      ok = outfile_write_all (gp, NULL, script, -1, error) && run_gnuplot (gp, error);
      struct stat st;
      if (ok && outfile_is_atomic (img) && (g_stat (target, &st) != 0 || st.st_size == 0))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot wrote no image for %s", o->output);
          ok = FALSE;
        }
      if (ok)
        ok = outfile_commit (img, error);
      else
        outfile_abort (img);
      goto out;
    }

out_fail:
  ok = FALSE;
out:
  if (tmpdir)
    remove_tree (tmpdir);
  g_strfreev (data_paths);
  prepared_clear (&p);
  return ok;
}
