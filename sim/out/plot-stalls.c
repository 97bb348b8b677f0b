/* plot-stalls.c — `plot stalls`: stacked stall time per run, from replay
 * reports (JSON) or sweep CSVs, runs that did not fit marked beside their
 * bars. Calls plot-gp.c. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <string.h>
#include <cjson/cJSON.h>

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
  g_autofree char *stem = plot_base_stem (path);
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
  g_autoptr (GPtrArray) rows = plot_read_sweep_csvs (one, error);
  if (rows == NULL)
    return FALSE;
  char **header = rows->pdata[0];
  int status = plot_column_index (header, "status");
  int cols[N_STALLS];
  for (guint k = 0; k < N_STALLS; k++)
    if ((cols[k] = plot_column_index (header, stall_keys[k])) < 0)
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
          g_string_append_printf (label, "%s%s=%s", c ? ", " : "", plot_key_short (header[c]), cells[c]);
      b->mark = bar_mark (cells[status]);
      b->label = g_string_free (label, FALSE);
      int ci = plot_column_index (header, "config");
      b->config = ci >= 0 ? g_strdup (cells[ci]) : NULL;
      for (guint k = 0; k < N_STALLS; k++)
        if (!plot_parse_number (cells[cols[k]], &b->ns[k]))
          b->ns[k] = 0;
      g_ptr_array_add (bars, b);
    }
  return TRUE;
}

gboolean
plot_prepare_stalls (const VsPlotOptions *o, Prepared *p, GError **error)
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
      plot_tsv_label (tsv, b->label);
      for (guint k = 0; k < N_STALLS; k++)
        {
          g_string_append_c (tsv, '\t');
          plot_tsv_num (tsv, b->ns[k] * scale);
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
        plot_add_unique (traces, b->trace);
      if (b->config)
        plot_add_unique (configs, b->config);
      longest = MAX (longest, (gsize) g_utf8_strlen (b->label, -1));
    }
  g_autofree char *tl = plot_name_list (traces, "traces");
  g_autofree char *cl = plot_name_list (configs, "configs");
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
  plot_var_str (p->vars, "ylabel", ylabel);
  plot_var_int (p->vars, "nbars", bars->len);
  plot_var_int (p->vars, "horizontal", horizontal);
  plot_var_int (p->vars, "rotate", rotate);
  plot_var_int (p->vars, "label_chars", (gint64) longest);
  plot_var_int (p->vars, "nmarked", marked);
  return TRUE;
}
