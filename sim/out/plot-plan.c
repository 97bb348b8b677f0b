/* plot-plan.c — `plot plan`: a figure of the fastest fitting layout of
 * each (config, tp, pp) family against GPU count, from `vramsim plan
 * --format json`. Calls plot-gp.c. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <string.h>
#include <cjson/cJSON.h>

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

gboolean
plot_prepare_plan (const VsPlotOptions *o, Prepared *p, GError **error)
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
  plot_var_int (p->vars, "ngroups", n);
  plot_var_array (p->vars, "titles", titles);
  plot_var_str (p->vars, "ylabel", labels[mi]);
  plot_var_int (p->vars, "logx", o->logx || xmax >= 4 * xmin);
  plot_var_int (p->vars, "logy", o->logy);
  plot_var_int (p->vars, "single_x", xmax == xmin);
  /* The GPU counts as the x axis's ticks (a dozen at most; else gnuplot's). */
  g_autoptr (GArray) xs = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < n; i++)
    {
      PlanFamily *f = list->pdata[i];
      for (guint k = 0; k < f->x->len; k++)
        {
          double x = g_array_index (f->x, double, k);
          guint at = 0;
          while (at < xs->len && g_array_index (xs, double, at) < x)
            at++;
          if (at == xs->len || g_array_index (xs, double, at) != x)
            g_array_insert_val (xs, at, x);
        }
    }
  GString *ticks = g_string_new (NULL);
  if (xs->len <= 12 && xmax > xmin)
    for (guint k = 0; k < xs->len; k++)
      g_string_append_printf (ticks, "%s%.0f", k ? ", " : "(", g_array_index (xs, double, k));
  if (ticks->len)
    g_string_append_c (ticks, ')');
  plot_var_str (p->vars, "xtics_list", ticks->str);
  g_string_free (ticks, TRUE);
  g_autofree char *note = g_strdup_printf ("the fastest fitting layout of each (tp, pp) at each GPU count; %u of %u families%s",
                                           n, list->len, lower ? "; lower is better" : "");
  plot_var_str (p->vars, "note", note);
  p->title = g_strdup_printf ("vramsim plan: %s against GPUs (%s)", labels[mi],
                              configs->len == 1 ? (char *) configs->pdata[0] : "several presets");
  (void) total;
  return TRUE;
}
