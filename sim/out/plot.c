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

static const char *const kind_names[VS_PLOT_COUNT] = { "timeline", "sweep", "stalls", "compare", "plan" };

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
  GArray *x, *y;        /* double: the runs drawn (status ok) */
  GPtrArray *xtext;     /* the x cells as written */
  GArray *fx;           /* double: the x of its runs that did not fit (oom, overflow) */
  GPtrArray *fxtext;
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
  g_array_unref (g->fx);
  g_ptr_array_unref (g->fxtext);
  g_free (g);
}

/* Whether G and H have the same points (as x, y sets: rows of a sweep come
 * in one order for every line). */
static gboolean
group_same_points (const Group *g, const Group *h)
{
  if (g->x->len != h->x->len || g->fx->len != h->fx->len)
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
  for (guint i = 0; i < g->fx->len; i++)
    {
      gboolean found = FALSE;
      for (guint j = 0; j < h->fx->len && !found; j++)
        found = g_array_index (h->fx, double, j) == g_array_index (g->fx, double, i);
      if (!found)
        return FALSE;
    }
  return TRUE;
}

/* How many values a merged label part lists: "oom = spill = uvm" -> 3. */
static guint
merged_count (const char *part)
{
  guint n = 1;
  for (const char *q = strstr (part, " = "); q; q = strstr (q + 3, " = "))
    n++;
  return n;
}

/* The short name of a varied key in labels: its last part
 * ("memory.capacity" -> "capacity"), and "policy" for the
 * oversubscription policy, so that "policy=oom" never reads as a run
 * that ran out of memory. */
static const char *
key_short (const char *key)
{
  if (strcmp (key, "policy.oversubscription") == 0)
    return "policy";
  const char *dot = strrchr (key, '.');
  return dot ? dot + 1 : key;
}

/* The lines of a string gp_wrapped made. */
static guint
gp_lines (const char *expr)
{
  guint n = 1;
  for (const char *q = strstr (expr, "\"\\n\""); q; q = strstr (q + 4, "\"\\n\""))
    n++;
  return n;
}

/* The legend of N entries of at most LONGEST characters: beside the plot
 * when they fit there (at most 16 entries of 40 characters), else below
 * it in *COLS columns of *ROWS rows, the canvas grown by those rows, so
 * that no entry is ever clipped. The sizes are gnuplot's own for the 11
 * pt font (GPVAL_TERM_HCHAR, GPVAL_TERM_VCHAR: 9 and 17.1 px on pngcairo,
 * 7.7 and 16.5 on svg), which it lays the key out by: a column is the
 * longest title plus 8 characters (the sample and gaps), a row a
 * character high. The larger figures are used, so that gnuplot never
 * finds the columns too wide for the 990 px it has (it would centre them
 * and cut the first off) nor the rows too many for the canvas. */
#define KEY_CHAR_PX 9.0
#define KEY_ROW_PX 18
static gboolean
key_below (guint n, gsize longest, guint *cols, guint *rows)
{
  if (n <= 16 && longest <= 40)
    {
      *cols = *rows = 0;
      return FALSE;
    }
  *cols = MAX (1, (guint) (990 / ((double) (longest + 8) * KEY_CHAR_PX)));
  *rows = (n + *cols - 1) / *cols;
  return TRUE;
}

/* A gnuplot string of TEXT broken into lines of at most WIDTH characters
 * at ", " or "; " (or a space): titles and notes stay inside the 1000 px
 * canvas (about 8 px a character of the 13 pt title font). The result is
 * an expression: 'line 1' . "\n" . 'line 2'. */
static char *
gp_wrapped (const char *text, gsize width)
{
  GString *out = g_string_new (NULL);
  const char *p = text;
  while (*p)
    {
      gsize left = strlen (p), cut = left;
      if (g_utf8_strlen (p, -1) > (glong) width)
        {
          /* The last break before WIDTH: after ", " or "; " in its last
           * 40 %, else at the last space. */
          const char *lim = g_utf8_offset_to_pointer (p, (glong) width);
          const char *best = NULL;
          for (const char *q = p; q < lim; q++)
            if ((q[0] == ',' || q[0] == ';') && q[1] == ' ')
              best = q + 2;
          if (best != NULL && g_utf8_pointer_to_offset (p, best) < (glong) (width * 6 / 10))
            best = NULL;
          for (const char *q = lim; best == NULL && q > p; q--)
            if (*q == ' ')
              best = q + 1;
          if (best != NULL && best > p)
            cut = (gsize) (best - p);
        }
      g_autofree char *line = g_strndup (p, cut);
      g_autofree char *q = gp_quote (g_strchomp (line));
      g_string_append_printf (out, "%s%s", out->len ? " . \"\\n\" . " : "", q);
      p += cut;
    }
  if (out->len == 0)
    g_string_append (out, "''");
  return g_string_free (out, FALSE);
}

/* Whether the merged part PART ("a100-80g = rtx3090", after any "key=")
 * lists VALUE already. */
static gboolean
part_has (const char *part, const char *value)
{
  g_auto (GStrv) vals = g_strsplit (part, " = ", -1);
  return g_strv_contains ((const char *const *) vals, value);
}

/* (transfer full) The legend entry of two lines drawn as one, part by
 * part: "a100-80g, policy=spill" and "a100-80g-cxl, policy=spill" ->
 * "a100-80g = a100-80g-cxl, policy=spill"; "x, policy=oom" and "x,
 * policy=uvm" -> "x, policy=oom = uvm"; a value a part lists already is
 * not added again. Labels of other shapes are joined whole. */
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
      gsize key = eq && strncmp (pa[i], pb[i], (gsize) (eq - pb[i]) + 1) == 0 ? (gsize) (eq - pb[i]) + 1 : 0;
      g_string_append (s, pa[i]);
      if (!part_has (pa[i] + key, pb[i] + key))
        g_string_append_printf (s, " = %s", pb[i] + key);
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
  guint not_fit = 0, errors = 0, no_step = 0, drawn = 0;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (guint r = 1; r < rows->len; r++)
    {
      char **cells = rows->pdata[r];
      double x, y = 0;
      /* An error row has no numbers: counted, not drawn. */
      if (strcmp (cells[status], "error") == 0)
        {
          errors++;
          continue;
        }
      /* A run that did not fit (status oom; overflow: it went past the
       * capacity with --keep-going) has no time that compares: marked
       * at the foot of the plot in its line's colour, not drawn as a value. */
      gboolean fits = strcmp (cells[status], "ok") == 0;
      if (fits && cells[yi][0] == '\0' && strcmp (ycol, "step_median_ns") == 0)
        {
          /* step_median_ns is empty for a run whose trace repeats no mark. */
          no_step++;
          continue;
        }
      if (fits && !parse_number (cells[yi], &y))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: row %u: %s: '%s' is not a number", o->inputs[0], r + 1, ycol, cells[yi]);
          return FALSE;
        }
      y *= yscale;
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
            g_string_append_printf (label, "%s=%s", key_short (header[c]), cells[c]);
          else
            g_string_append (label, cells[c]);
        }
      if (label->len == 0)
        g_string_append (label, ycol);
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

      /* Lines keep the order their first row has, drawn or not. */
      Group *g = g_hash_table_lookup (by_label, label->str);
      if (g == NULL)
        {
          g = g_new0 (Group, 1);
          g->label = g_strdup (label->str);
          g->order = r;
          g->color_key = g_strdup (by->len ? cells[g_array_index (by, int, 0)] : "");
          g->style_key = g_strdup (style_key->str);
          g->x = g_array_new (FALSE, FALSE, sizeof (double));
          g->y = g_array_new (FALSE, FALSE, sizeof (double));
          g->xtext = g_ptr_array_new ();
          g->fx = g_array_new (FALSE, FALSE, sizeof (double));
          g->fxtext = g_ptr_array_new ();
          g_ptr_array_add (groups, g);
          g_hash_table_insert (by_label, g->label, g);
        }
      g_string_free (label, TRUE);
      g_string_free (style_key, TRUE);
      xmin = MIN (xmin, x), xmax = MAX (xmax, x);
      if (!fits)
        {
          not_fit++;
          g_array_append_val (g->fx, x);
          g_ptr_array_add (g->fxtext, cells[xi]);
          continue;
        }
      drawn++;
      g_array_append_val (g->x, x);
      g_array_append_val (g->y, y);
      g_ptr_array_add (g->xtext, cells[xi]);
      ymin = MIN (ymin, y), ymax = MAX (ymax, y);
    }
  if (drawn == 0 && no_step)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: no run has a step_median_ns (the trace repeats no mark): plot "
                   "--y predicted_ns", o->inputs[0]);
      return FALSE;
    }
  if (drawn == 0)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: no run with status ok to plot (%u runs oom, overflow or error)",
                   o->inputs[0], not_fit + errors);
      return FALSE;
    }

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

  /* A merged part that lists every value its key took in the sweep says
   * so ("policy=oom = spill = direct = uvm" -> "policy=any"): the line is
   * the same whatever that key is. */
  for (guint b = 0; merged && b < by->len; b++)
    {
      int c = g_array_index (by, int, b);
      if (c == 0 || by->len < 2)
        continue;
      g_autoptr (GHashTable) values = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint r = 1; r < rows->len; r++)
        if (strcmp (((char **) rows->pdata[r])[status], "error") != 0)
          g_hash_table_add (values, ((char **) rows->pdata[r])[c]);
      g_autofree char *prefix = g_strdup_printf ("%s=", key_short (header[c]));
      for (guint gi = 0; gi < groups->len; gi++)
        {
          Group *g = groups->pdata[gi];
          g_auto (GStrv) parts = g_strsplit (g->label, ", ", -1);
          gboolean changed = FALSE;
          for (guint k = 0; parts[k]; k++)
            if (g_str_has_prefix (parts[k], prefix) && strstr (parts[k], " = ")
                && merged_count (parts[k] + strlen (prefix)) == g_hash_table_size (values))
              {
                g_free (parts[k]);
                parts[k] = g_strconcat (prefix, "any", NULL);
                changed = TRUE;
              }
          if (changed)
            {
              g_free (g->label);
              g->label = g_strjoinv (", ", parts);
            }
        }
    }

  /* Distinct x values: few enough to label each tick with its value as
   * written; the longest, for the margin its rotated label needs. */
  g_autoptr (GHashTable) distinct = g_hash_table_new (g_str_hash, g_str_equal);
  gsize xtic_chars = 0;
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      for (guint i = 0; i < g->xtext->len; i++)
        g_hash_table_add (distinct, g->xtext->pdata[i]);
      for (guint i = 0; i < g->fxtext->len; i++)
        g_hash_table_add (distinct, g->fxtext->pdata[i]);
    }
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, distinct);
  while (g_hash_table_iter_next (&it, &key, NULL))
    xtic_chars = MAX (xtic_chars, (gsize) g_utf8_strlen (key, -1));
  gboolean value_tics = xk == X_CATEGORY || g_hash_table_size (distinct) <= 12;

  gboolean logx = o->logx || (xk != X_CATEGORY && xmin > 0 && xmax / xmin >= 10);
  gboolean logy = o->logy || (ymin > 0 && ymax / ymin >= 100);
  /* The foot the runs that did not fit are marked at: the axis (0) on a
   * linear y, a twentieth of the range's decades below the lowest value
   * on a log one. */
  double foot = logy ? ymin / pow (MAX (ymax / ymin, 10), 0.05) : 0;

  /* One block per line (gnuplot's index): its runs in x order (x, y, x as
   * written, NaN), then its runs that did not fit (x, NaN, x as written,
   * the foot): NaN ends the line before them and keeps them off it. */
  GString *tsv = g_string_new (NULL);
  g_autoptr (GPtrArray) titles = g_ptr_array_new_with_free_func (g_free);
  for (guint gi = 0; gi < groups->len; gi++)
    {
      Group *g = groups->pdata[gi];
      /* Points in x order (insertion sort: lines are short). */
      guint n = g->x->len;
      g_autofree guint *order = g_new (guint, n + 1);
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
          g_string_append (tsv, "\tNaN\n");
        }
      for (guint i = 0; i < g->fx->len; i++)
        {
          tsv_num (tsv, g_array_index (g->fx, double, i));
          g_string_append (tsv, "\tNaN\t");
          tsv_label (tsv, g->fxtext->pdata[i]);
          g_string_append_c (tsv, '\t');
          tsv_num (tsv, foot);
          g_string_append_c (tsv, '\n');
        }
      g_ptr_array_add (titles, g->x->len ? g_strdup (g->label) : g_strdup_printf ("%s: no run fits", g->label));
    }
  g_ptr_array_add (p->data, g_string_free (tsv, FALSE));

  /* Colour by the first --by column, dash and point by the others, so a
   * machine keeps its colour across policies. gcolor and gstyle are the
   * 1-based orders of a line's colour key and style key; the template
   * makes each (colour, dash) pair its own: past its palette a colour
   * comes back with the next set of dashes (plots/sweep.gp). */
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
  var_int (p->vars, "nstyles", g_hash_table_size (style_of));
  g_string_free (colors, TRUE);
  g_string_free (styles, TRUE);

  const char *xunit = xk == X_BYTES ? " (GiB)" : xk == X_RATE ? " (GB/s)" : xk == X_TIME ? " (ms)" : "";
  /* Ticks labelled with the values as written carry their own unit. */
  g_autofree char *xlabel = g_strconcat (xcol, value_tics ? "" : xunit, NULL);
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
  var_int (p->vars, "xtic_chars", (gint64) xtic_chars);
  var_int (p->vars, "ngroups", groups->len);
  var_array (p->vars, "titles", titles);
  GString *fits = g_string_new (NULL);
  for (guint gi = 0; gi < groups->len; gi++)
    g_string_append_printf (fits, "%s%d", gi ? ", " : "", ((Group *) groups->pdata[gi])->x->len > 0);
  g_string_append_printf (p->vars, "array gfits[%u] = [%s]\n", groups->len, fits->str);
  g_string_free (fits, TRUE);
  var_int (p->vars, "nfail", not_fit);

  /* The device's capacity where the sweep varies it and y is a memory
   * figure: y = x when x is the capacity (both GiB), else a level per
   * capacity the sweep ran at. */
  int capi = column_index (header, "memory.capacity");
  gboolean bytes_y = g_str_has_suffix (ycol, "_bytes");
  var_int (p->vars, "capacity_diagonal", bytes_y && capi == xi && xk == X_BYTES);
  g_autoptr (GPtrArray) caps = g_ptr_array_new_with_free_func (g_free);
  if (bytes_y && capi >= 0 && capi != xi && capi < n_keys)
    {
      g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint r = 1; r < rows->len; r++)
        {
          const char *c = ((char **) rows->pdata[r])[capi];
          guint64 b;
          if (g_hash_table_contains (seen, c) || !units_parse_bytes (c, &b, NULL))
            continue;
          g_hash_table_add (seen, (gpointer) c);
          GString *v = g_string_new (NULL);
          tsv_num (v, (double) b / 1073741824.0);
          g_ptr_array_add (caps, g_string_free (v, FALSE));
        }
    }
  g_string_append_printf (p->vars, "ncaps = %u\narray caps[%u] = [%s", caps->len, MAX (caps->len, 1),
                          caps->len ? (char *) caps->pdata[0] : "0");
  for (guint i = 1; i < caps->len; i++)
    g_string_append_printf (p->vars, ", %s", (char *) caps->pdata[i]);
  g_string_append (p->vars, "]\n");

  /* The legend: beside the plot, or below it in columns with the canvas
   * grown to hold every entry (never clipped). */
  gsize longest = 0;
  for (guint i = 0; i < titles->len; i++)
    longest = MAX (longest, (gsize) g_utf8_strlen (titles->pdata[i], -1));
  /* (the x entry's title, plots/sweep.gp, is 30 characters) */
  if (not_fit)
    longest = MAX (longest, 30);
  guint entries = titles->len + (not_fit ? 1 : 0) + (caps->len || bytes_y ? 1 : 0), key_cols, key_rows;
  gboolean below = key_below (entries, longest, &key_cols, &key_rows);
  var_int (p->vars, "key_below", below);
  var_int (p->vars, "key_cols", key_cols);
  if (below)
    p->height = 600 + KEY_ROW_PX * key_rows;

  GString *note = g_string_new (NULL);
  if (not_fit)
    g_string_append_printf (note, "%u run%s did not fit (status oom or overflow: x at the foot)", not_fit,
                            not_fit == 1 ? "" : "s");
  if (errors)
    g_string_append_printf (note, "%s%u run%s with status error not drawn", note->len ? "; " : "", errors,
                            errors == 1 ? "" : "s");
  if (no_step)
    g_string_append_printf (note, "%s%u run%s without a step time not drawn", note->len ? "; " : "", no_step,
                            no_step == 1 ? "" : "s");
  if (merged)
    g_string_append_printf (note, "%s%u identical line%s drawn once (legend: A = B)", note->len ? "; " : "",
                            merged, merged == 1 ? "" : "s");
  g_autofree char *wrapped = gp_wrapped (note->str, 110);
  g_string_append_printf (p->vars, "note = %s\nnote_lines = %u\n", wrapped, note->len ? gp_lines (wrapped) : 0);
  g_string_free (note, TRUE);
  return TRUE;
}

/* -------------------------------------------------------------- stalls */

static const char *const stall_keys[] = { "contention_ns", "fault_ns", "swap_ns", "copy_engine_ns" };
#define N_STALLS G_N_ELEMENTS (stall_keys)

typedef struct {
  char *label;
  char *config, *trace;   /* for the title; NULL when not known */
  const char *mark;       /* a run that did not fit: what its bar says; NULL when ok */
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

/* What the bar of a run with STATUS says beside it: its stalls are those
 * until it stopped (oom) or of a device past its capacity (overflow). */
static const char *
bar_mark (const char *status)
{
  if (status == NULL || strcmp (status, "ok") == 0)
    return NULL;
  if (strcmp (status, "oom") == 0)
    return "out of memory: stopped here";
  if (strcmp (status, "overflow") == 0)
    return "overflow: past the capacity";
  return "did not finish";
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
  /* "a100-80g, policy=spill (r2)": runs compared side by side often
   * differ only in their oversubscription policy; "policy=oom" is the
   * policy, and a run that ran out of memory says so beside its bar. */
  const cJSON *st = cJSON_GetObjectItemCaseSensitive (rep, "status");
  b->mark = bar_mark (cJSON_IsString (st) ? st->valuestring : NULL);
  if (cJSON_IsString (cfg) && cJSON_IsString (pol))
    b->label = g_strdup_printf ("%s, policy=%s (%s)", cfg->valuestring, pol->valuestring, stem);
  else
    b->label = cJSON_IsString (cfg) ? g_strdup_printf ("%s (%s)", cfg->valuestring, stem) : g_strdup (stem);
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
      /* "a100-80g, capacity=8GiB, policy=oom": each varied key named. */
      for (int c = 0; c < status; c++)
        if (c == 0 && strcmp (header[0], "config") == 0)
          g_string_append (label, cells[c]);
        else
          g_string_append_printf (label, "%s%s=%s", c ? ", " : "", key_short (header[c]), cells[c]);
      b->mark = bar_mark (cells[status]);
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

  GString *tsv = g_string_new ("# run\tcontention\tfault\tswap\tcopy_engine\tmark   (stall time; mark: a run that did not fit)\n");
  guint marked = 0;
  for (guint i = 0; i < bars->len; i++)
    {
      Bar *b = bars->pdata[i];
      tsv_label (tsv, b->label);
      for (guint k = 0; k < N_STALLS; k++)
        {
          g_string_append_c (tsv, '\t');
          tsv_num (tsv, b->ns[k] * scale);
        }
      /* gnuplot reads an empty field as missing: "-" for no mark. */
      g_string_append_printf (tsv, "\t%s\n", b->mark ? b->mark : "-");
      marked += b->mark != NULL;
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
   * horizontal bars with one line each beyond 16 runs or for labels too
   * long to rotate inside the canvas (24 characters: the first, rotated
   * by 30 degrees, needs 0.87 x its length of left margin), the canvas
   * grown to give each bar 16 px. */
  gboolean rotate = bars->len * (longest + 2) * 7 > 750;
  gboolean horizontal = bars->len > 16 || (rotate && longest > 24);
  rotate = rotate && !horizontal;
  if (horizontal)
    p->height = MAX (600, 140 + 16 * bars->len);
  var_str (p->vars, "ylabel", ylabel);
  var_int (p->vars, "nbars", bars->len);
  var_int (p->vars, "horizontal", horizontal);
  var_int (p->vars, "rotate", rotate);
  var_int (p->vars, "label_chars", (gint64) longest);
  var_int (p->vars, "nmarked", marked);
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

/* ------------------------------------------------------------- plan */

/* `plot plan PLAN.json`: the y figure (tflops_per_gpu by default, or
 * step_ns, mfu, tokens_per_s, cost_per_mtokens) of the fastest fitting
 * layout of each family (config, tp, pp) at each GPU count, one line a
 * family, the ten best families (by their best point). */
typedef struct {
  char *name;
  double best;
  GArray *x, *y, *step;   /* doubles, by GPU count ascending; the chosen layout's step */
} PlanFamily;

static void
plan_family_free (gpointer p)
{
  PlanFamily *f = p;
  g_free (f->name);
  g_array_unref (f->x);
  g_array_unref (f->y);
  g_array_unref (f->step);
  g_free (f);
}

static gint
plan_family_cmp (gconstpointer a, gconstpointer b, gpointer lower_better)
{
  const PlanFamily *x = *(PlanFamily *const *) a, *y = *(PlanFamily *const *) b;
  gint c = GPOINTER_TO_INT (lower_better) ? (x->best > y->best) - (x->best < y->best)
                                          : (x->best < y->best) - (x->best > y->best);
  return c ? c : strcmp (x->name, y->name);
}

static gboolean
prepare_plan (const VsPlotOptions *o, Prepared *p, GError **error)
{
  const char *metric = o->y ? o->y : "tflops_per_gpu";
  static const char *const metrics[] = { "tflops_per_gpu", "step_ns", "mfu", "tokens_per_s", "cost_per_mtokens" };
  static const char *const labels[] = { "TF/s per GPU", "step time (s)", "MFU (%)", "tokens/s", "USD per million tokens" };
  static const double scales[] = { 1, 1e-9, 100, 1, 1 };
  guint mi = 0;
  while (mi < G_N_ELEMENTS (metrics) && strcmp (metric, metrics[mi]) != 0)
    mi++;
  if (mi == G_N_ELEMENTS (metrics))
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "plot plan: --y %s: expected tflops_per_gpu, step_ns, mfu, tokens_per_s "
                   "or cost_per_mtokens", metric);
      return FALSE;
    }
  gboolean lower = mi == 1 || mi == 4;
  g_autoptr (GHashTable) fams = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (plan_family_free);
  g_autoptr (GPtrArray) configs = g_ptr_array_new_with_free_func (g_free);
  guint total = 0;
  for (guint i = 0; o->inputs[i]; i++)
    {
      g_autofree char *text = NULL;
      if (!g_file_get_contents (o->inputs[i], &text, NULL, error))
        return FALSE;
      cJSON *j = cJSON_Parse (text);
      const cJSON *ls = cJSON_GetObjectItemCaseSensitive (j, "layouts");
      if (!cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (j, "vramsim_plan")) || !cJSON_IsArray (ls))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: not the JSON of `vramsim plan --format json`", o->inputs[i]);
          cJSON_Delete (j);
          return FALSE;
        }
      const cJSON *l;
      cJSON_ArrayForEach (l, ls)
        {
          const cJSON *cfg = cJSON_GetObjectItemCaseSensitive (l, "config");
          const cJSON *v = cJSON_GetObjectItemCaseSensitive (l, metric);
          const cJSON *g = cJSON_GetObjectItemCaseSensitive (l, "gpus");
          const cJSON *st = cJSON_GetObjectItemCaseSensitive (l, "step_ns");
          double tp = 0, pp = 0;
          const cJSON *t = cJSON_GetObjectItemCaseSensitive (l, "tp"), *q = cJSON_GetObjectItemCaseSensitive (l, "pp");
          if (!cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (l, "fits")) || !cJSON_IsNumber (v) || !cJSON_IsNumber (g)
              || !cJSON_IsNumber (st)
              || !cJSON_IsString (cfg) || !cJSON_IsNumber (t) || !cJSON_IsNumber (q))
            continue;
          tp = t->valuedouble, pp = q->valuedouble;
          gboolean seen = FALSE;
          for (guint k = 0; k < configs->len; k++)
            seen |= strcmp (configs->pdata[k], cfg->valuestring) == 0;
          if (!seen)
            g_ptr_array_add (configs, g_strdup (cfg->valuestring));
          g_autofree char *key = g_strdup_printf ("%s\t%.0f\t%.0f", cfg->valuestring, tp, pp);
          PlanFamily *f = g_hash_table_lookup (fams, key);
          if (f == NULL)
            {
              f = g_new0 (PlanFamily, 1);
              f->name = g_strdup_printf ("%s tp=%.0f pp=%.0f", cfg->valuestring, tp, pp);
              f->x = g_array_new (FALSE, FALSE, sizeof (double));
              f->y = g_array_new (FALSE, FALSE, sizeof (double));
              f->step = g_array_new (FALSE, FALSE, sizeof (double));
              f->best = lower ? G_MAXDOUBLE : -G_MAXDOUBLE;
              g_hash_table_insert (fams, g_strdup (key), f);
              g_ptr_array_add (list, f);
            }
          /* At each GPU count the family's fastest layout (as plan ranks):
           * its figure, not the family's highest (a layout that
           * recomputes more executes more TF/s in a longer step). */
          double x = g->valuedouble, y = v->valuedouble * scales[mi], step = st->valuedouble;
          guint k = 0;
          while (k < f->x->len && g_array_index (f->x, double, k) < x)
            k++;
          if (k < f->x->len && g_array_index (f->x, double, k) == x)
            {
              if (step < g_array_index (f->step, double, k))
                g_array_index (f->y, double, k) = y, g_array_index (f->step, double, k) = step;
            }
          else
            {
              g_array_insert_val (f->x, k, x);
              g_array_insert_val (f->y, k, y);
              g_array_insert_val (f->step, k, step);
            }
          total++;
        }
      cJSON_Delete (j);
    }
  if (list->len == 0)
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "plot plan: no layout that fits has a %s (nothing to draw)", metric);
      return FALSE;
    }
  for (guint i = 0; i < list->len; i++)
    {
      PlanFamily *f = list->pdata[i];
      for (guint k = 0; k < f->y->len; k++)
        f->best = lower ? MIN (f->best, g_array_index (f->y, double, k)) : MAX (f->best, g_array_index (f->y, double, k));
    }
  g_ptr_array_sort_with_data (list, plan_family_cmp, GINT_TO_POINTER (lower));
  guint n = MIN (list->len, 10u);
  GString *tsv = g_string_new (NULL);
  g_autoptr (GPtrArray) titles = g_ptr_array_new_with_free_func (g_free);
  double xmin = G_MAXDOUBLE, xmax = 0;
  for (guint i = 0; i < n; i++)
    {
      PlanFamily *f = list->pdata[i];
      if (i)
        g_string_append (tsv, "\n\n");
      for (guint k = 0; k < f->x->len; k++)
        {
          double x = g_array_index (f->x, double, k);
          xmin = MIN (xmin, x), xmax = MAX (xmax, x);
          g_string_append_printf (tsv, "%.0f\t%.6g\n", x, g_array_index (f->y, double, k));
        }
      /* One preset: the config need not be in every title. */
      const char *name = f->name;
      if (configs->len == 1)
        name = strchr (f->name, ' ') + 1;
      g_ptr_array_add (titles, g_strdup (name));
    }
  g_ptr_array_add (p->data, g_string_free (tsv, FALSE));
  var_int (p->vars, "ngroups", n);
  var_array (p->vars, "titles", titles);
  var_str (p->vars, "ylabel", labels[mi]);
  var_int (p->vars, "logx", o->logx || xmax >= 4 * xmin);
  var_int (p->vars, "logy", o->logy);
  var_int (p->vars, "single_x", xmax == xmin);
  g_autofree char *note = g_strdup_printf ("the fastest fitting layout of each (tp, pp) at each GPU count; %u of %u families%s",
                                           n, list->len, lower ? "; lower is better" : "");
  var_str (p->vars, "note", note);
  p->title = g_strdup_printf ("vramsim plan: %s against GPUs (%s)", labels[mi],
                              configs->len == 1 ? (char *) configs->pdata[0] : "several presets");
  (void) total;
  return TRUE;
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
  /* A title longer than the canvas is wide goes on several lines
   * (title_lines: the templates leave that much room above the plot). */
  g_autofree char *title = gp_wrapped (o->title ? o->title : p->title, 100);
  g_string_append_printf (s, "plot_title = %s\ntitle_lines = %u\n", title, gp_lines (title));
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
    case VS_PLOT_PLAN:     ok = prepare_plan (o, &p, error); break;
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
