/* plot-sweep.c — `plot sweep`: one column of sweep CSVs against a varied
 * key, a line for each value of the --by keys, identical lines drawn once,
 * runs that did not fit marked at the foot. Calls plot-gp.c. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <math.h>
#include <string.h>

#include "base/units.h"

typedef enum { X_CATEGORY, X_PLAIN, X_BYTES, X_RATE, X_TIME } XKind;

static gboolean
x_value (XKind k, const char *s, double *out)
{
  guint64 b;
  switch (k)
    {
    case X_PLAIN:
      return plot_parse_number (s, out);
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

gboolean
plot_prepare_sweep (const VsPlotOptions *o, Prepared *p, GError **error)
{
  g_autoptr (GPtrArray) rows = plot_read_sweep_csvs (o->inputs, error);
  if (rows == NULL)
    return FALSE;
  char **header = rows->pdata[0];
  int status = plot_column_index (header, "status");
  int n_keys = status;    /* config and the varied keys come before status */
  const char *xcol = o->x ? o->x : header[n_keys > 1 ? 1 : 0];
  /* A sweep run with --metric step plots the steady step time by default,
   * as fit --metric step ranks by it. */
  const char *ycol = o->y ? o->y : plot_column_index (header, "step_median_ns") >= 0 ? "step_median_ns" : "predicted_ns";
  int xi = plot_column_index (header, xcol), yi = plot_column_index (header, ycol);
  if (xi < 0 || yi < 0)
    {
      g_autofree char *cols = plot_column_list (header);
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
          int c = plot_column_index (header, g_strstrip (*n));
          if (c < 0)
            {
              g_autofree char *cols = plot_column_list (header);
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
      if (fits && !plot_parse_number (cells[yi], &y))
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
            g_string_append_printf (label, "%s=%s", plot_key_short (header[c]), cells[c]);
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
      g_autofree char *prefix = g_strdup_printf ("%s=", plot_key_short (header[c]));
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
          plot_tsv_num (tsv, g_array_index (g->x, double, order[i]));
          g_string_append_c (tsv, '\t');
          plot_tsv_num (tsv, g_array_index (g->y, double, order[i]));
          g_string_append_c (tsv, '\t');
          plot_tsv_label (tsv, g->xtext->pdata[order[i]]);
          g_string_append (tsv, "\tNaN\n");
        }
      for (guint i = 0; i < g->fx->len; i++)
        {
          plot_tsv_num (tsv, g_array_index (g->fx, double, i));
          g_string_append (tsv, "\tNaN\t");
          plot_tsv_label (tsv, g->fxtext->pdata[i]);
          g_string_append_c (tsv, '\t');
          plot_tsv_num (tsv, foot);
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
  plot_var_int (p->vars, "nstyles", g_hash_table_size (style_of));
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
  int ci = plot_column_index (header, "config");
  for (guint r = 1; r < rows->len && ci >= 0; r++)
    plot_add_unique (configs, ((char **) rows->pdata[r])[ci]);
  g_autofree char *cfgs = plot_name_list (configs, "configs");
  p->title = ci >= 0 ? g_strdup_printf ("%s vs %s on %s", ylow, xcol, cfgs) : g_strdup_printf ("%s vs %s", ylow, xcol);
  p->title[0] = g_ascii_toupper (p->title[0]);
  plot_var_str (p->vars, "xlabel", xlabel);
  plot_var_str (p->vars, "ylabel", ylabel);
  plot_var_int (p->vars, "logx", logx);
  plot_var_int (p->vars, "logy", logy);
  plot_var_int (p->vars, "xcategory", xk == X_CATEGORY);
  plot_var_int (p->vars, "value_tics", value_tics);
  plot_var_int (p->vars, "xtic_chars", (gint64) xtic_chars);
  plot_var_int (p->vars, "ngroups", groups->len);
  plot_var_array (p->vars, "titles", titles);
  GString *fits = g_string_new (NULL);
  for (guint gi = 0; gi < groups->len; gi++)
    g_string_append_printf (fits, "%s%d", gi ? ", " : "", ((Group *) groups->pdata[gi])->x->len > 0);
  g_string_append_printf (p->vars, "array gfits[%u] = [%s]\n", groups->len, fits->str);
  g_string_free (fits, TRUE);
  plot_var_int (p->vars, "nfail", not_fit);

  /* The device's capacity where the sweep varies it and y is a memory
   * figure: y = x when x is the capacity (both GiB), else a level per
   * capacity the sweep ran at. */
  int capi = plot_column_index (header, "memory.capacity");
  gboolean bytes_y = g_str_has_suffix (ycol, "_bytes");
  plot_var_int (p->vars, "capacity_diagonal", bytes_y && capi == xi && xk == X_BYTES);
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
          plot_tsv_num (v, (double) b / 1073741824.0);
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
  plot_var_int (p->vars, "key_below", below);
  plot_var_int (p->vars, "key_cols", key_cols);
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
  g_autofree char *wrapped = plot_gp_wrapped (note->str, 110);
  g_string_append_printf (p->vars, "note = %s\nnote_lines = %u\n", wrapped, note->len ? plot_gp_lines (wrapped) : 0);
  g_string_free (note, TRUE);
  return TRUE;
}
