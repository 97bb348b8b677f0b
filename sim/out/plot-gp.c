/* plot-gp.c — what every plot kind shares (out/plot-priv.h): gnuplot
 * strings and variables for the script's prologue, TSV cells, numbers and
 * CSV columns, the sweep CSV reader, titles wrapped to the canvas and lists
 * of names. The lowest file of the plots: the kinds and plot.c call it, it
 * calls none of them. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <math.h>
#include <string.h>

#include "sweep/sweep.h"

G_DEFINE_QUARK (vs-plot-error-quark, plot_error)

/* A gnuplot single-quoted string: no escapes, '' is a quote. */
char *
plot_gp_quote (const char *s)
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

void
plot_var_str (GString *vars, const char *name, const char *value)
{
  g_autofree char *q = plot_gp_quote (value);
  g_string_append_printf (vars, "%s = %s\n", name, q);
}

void
plot_var_int (GString *vars, const char *name, gint64 value)
{
  g_string_append_printf (vars, "%s = %" G_GINT64_FORMAT "\n", name, value);
}

void
plot_var_array (GString *vars, const char *name, GPtrArray *items)
{
  g_string_append_printf (vars, "array %s[%u] = [", name, MAX (items->len, 1));
  for (guint i = 0; i < items->len; i++)
    {
      g_autofree char *q = plot_gp_quote (items->pdata[i]);
      g_string_append_printf (vars, "%s%s", i ? ", " : "", q);
    }
  if (items->len == 0)
    g_string_append (vars, "''");
  g_string_append (vars, "]\n");
}

/* A number for a TSV cell. */
void
plot_tsv_num (GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, "%.9g", v));
}

/* A label for a TSV cell: no tabs or newlines. */
void
plot_tsv_label (GString *out, const char *s)
{
  for (const char *p = s; *p; p++)
    g_string_append_c (out, *p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p);
}

gboolean
plot_parse_number (const char *s, double *out)
{
  char *end = NULL;
  if (s == NULL || *s == '\0')
    return FALSE;
  *out = g_ascii_strtod (s, &end);
  return end && *end == '\0' && isfinite (*out);
}

char *
plot_base_stem (const char *path)
{
  char *b = g_path_get_basename (path);
  char *dot = strrchr (b, '.');
  if (dot && dot != b)
    *dot = '\0';
  return b;
}

int
plot_column_index (char **header, const char *name)
{
  for (int i = 0; header[i]; i++)
    if (strcmp (header[i], name) == 0)
      return i;
  return -1;
}

char *
plot_column_list (char **header)
{
  return g_strjoinv (", ", header);
}

/* Reads sweep CSVs with one header into ROWS (header first). */
GPtrArray *
plot_read_sweep_csvs (char **inputs, GError **error)
{
  GPtrArray *all = NULL;
  for (guint i = 0; inputs[i]; i++)
    {
      g_autoptr (GPtrArray) rows = sweep_csv_read (inputs[i], FALSE, error);
      if (rows == NULL)
        goto fail;
      if (rows->len == 0 || plot_column_index (rows->pdata[0], "status") < 1)
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

/* The short name of a varied key in labels: its last part
 * ("memory.capacity" -> "capacity"), and "policy" for the
 * oversubscription policy, so that "policy=oom" never reads as a run
 * that ran out of memory. */
const char *
plot_key_short (const char *key)
{
  if (strcmp (key, "policy.oversubscription") == 0)
    return "policy";
  const char *dot = strrchr (key, '.');
  return dot ? dot + 1 : key;
}

/* The lines of a string gp_wrapped made. */
guint
plot_gp_lines (const char *expr)
{
  guint n = 1;
  for (const char *q = strstr (expr, "\"\\n\""); q; q = strstr (q + 4, "\"\\n\""))
    n++;
  return n;
}

/* A gnuplot string of TEXT broken into lines of at most WIDTH characters
 * at ", " or "; " (or a space): titles and notes stay inside the 1000 px
 * canvas (about 8 px a character of the 13 pt title font). The result is
 * an expression: 'line 1' . "\n" . 'line 2'. */
char *
plot_gp_wrapped (const char *text, gsize width)
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
      g_autofree char *q = plot_gp_quote (g_strchomp (line));
      g_string_append_printf (out, "%s%s", out->len ? " . \"\\n\" . " : "", q);
      p += cut;
    }
  if (out->len == 0)
    g_string_append (out, "''");
  return g_string_free (out, FALSE);
}

/* (transfer full) "a100-80g, rtx3090" for up to 4 names, else "7 configs". */
char *
plot_name_list (GPtrArray *names, const char *what)
{
  if (names->len > 4)
    return g_strdup_printf ("%u %s", names->len, what);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", (const char *) names->pdata[i]);
  return g_string_free (s, FALSE);
}

void
plot_add_unique (GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp (names->pdata[i], name) == 0)
      return;
  g_ptr_array_add (names, g_strdup (name));
}
