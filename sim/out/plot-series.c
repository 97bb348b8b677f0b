/* plot-series.c — the kinds drawn from --series CSVs: `plot timeline`
 * (one run's residency and utilization over time) and `plot compare`
 * (several runs' device residency and one column). Calls plot-gp.c. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <string.h>

#include "sweep/sweep.h"

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
  if (rows->len == 0 || plot_column_index (rows->pdata[0], "t_ns") != 0 || plot_column_index (rows->pdata[0], "dt_ns") != 1)
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
        if (!plot_parse_number (cells[c], &s->v[(gsize) r * s->n_cols + c]))
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
      plot_tsv_num (out, t / 1e6);
      for (guint i = 0; i < n; i++)
        {
          g_string_append_c (out, '\t');
          plot_tsv_num (out, series_at (s, src, cols[i]) * series_scale (s->header[cols[i]]));
        }
      g_string_append_c (out, '\n');
    }
}

gboolean
plot_prepare_timeline (const VsPlotOptions *o, Prepared *p, GError **error)
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
  plot_var_int (p->vars, "nres", n_res);
  plot_var_int (p->vars, "nutil", n - n_res);
  plot_var_array (p->vars, "res_titles", res_titles);
  plot_var_array (p->vars, "util_titles", util_titles);
  return TRUE;
}

/* ------------------------------------------------------------ compare */

gboolean
plot_prepare_compare (const VsPlotOptions *o, Prepared *p, GError **error)
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
      int dev = plot_column_index (s->header, "resident_device_bytes");
      int yc = plot_column_index (s->header, ycol);
      if (dev < 0 || yc < 0)
        {
          g_autofree char *cols = plot_column_list (s->header);
          g_set_error (error, VS_PLOT_ERROR, 0, "%s: no column '%s' (columns: %s)", o->inputs[i],
                       dev < 0 ? "resident_device_bytes" : ycol, cols);
          return FALSE;
        }
      guint cols[2] = { (guint) dev, (guint) yc };
      GString *tsv = g_string_new (NULL);
      g_string_append_printf (tsv, "# time_ms\tresident_device_GiB\t%s   (%s)\n", ycol, o->inputs[i]);
      series_tsv (tsv, s, cols, 2);
      g_ptr_array_add (p->data, g_string_free (tsv, FALSE));
      g_ptr_array_add (titles, plot_base_stem (o->inputs[i]));
    }
  g_autofree char *ylabel = series_label (ycol);
  g_autofree char *joined = NULL;
  {
    g_ptr_array_add (titles, NULL);
    joined = g_strjoinv (" vs ", (char **) titles->pdata);
    g_ptr_array_remove_index (titles, titles->len - 1);
  }
  p->title = g_strdup_printf ("Compare: %s", joined);
  plot_var_int (p->vars, "ninputs", n_in);
  plot_var_array (p->vars, "titles", titles);
  plot_var_str (p->vars, "ylabel2", ylabel);
  return TRUE;
}
