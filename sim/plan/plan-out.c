/* plan-out.c — what `vramsim plan` prints (the ranked table, JSON, CSV;
 * docs/plan.md) and the merge of shards (`plan --merge`). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "base/jsonw.h"
#include "plan/plan.h"
#include "sweep/sweep.h"

static const char *
cfg_name (const PlanResult *r, const PlanLayout *l)
{
  return r->config_names && r->config_names[l->config] ? r->config_names[l->config] : "?";
}

static guint64
missing (const PlanLayout *l)
{
  return l->peak > l->capacity ? l->peak - l->capacity : 0;
}

static guint
count_fits (const PlanResult *r)
{
  guint n = 0;
  for (guint i = 0; i < r->layouts->len; i++)
    n += ((PlanLayout *) r->layouts->pdata[i])->fits;
  return n;
}

/* The first layout that does not fit but was replayed (the least missing),
 * or NULL. */
static const PlanLayout *
least_missing (const PlanResult *r)
{
  const PlanLayout *best = NULL;
  for (guint i = 0; i < r->layouts->len; i++)
    {
      const PlanLayout *l = r->layouts->pdata[i];
      if (l->error || l->fits)
        continue;
      if (best == NULL || missing (l) < missing (best) || (missing (l) == missing (best) && l->replayed && !best->replayed))
        best = l;
    }
  return best;
}

/* The sentence for a search in which nothing fits, or NULL. */
static char *
no_fit_message (const PlanResult *r)
{
  if (count_fits (r) > 0)
    return NULL;
  const PlanLayout *l = least_missing (r);
  if (l == NULL)
    return g_strdup ("no layout fits, and none could be generated");
  g_autofree char *need = units_format_bytes (l->peak), *cap = units_format_bytes (l->capacity);
  g_autofree char *miss = units_format_bytes (missing (l));
  char *v = l->v > 1 ? g_strdup_printf (" v=%u", l->v) : g_strdup ("");
  g_autofree char *cps = l->cp > 1 ? g_strdup_printf (" cp=%u", l->cp) : g_strdup ("");
  char *msg = g_strdup_printf ("no layout fits: the one needing the least device memory (%s x%u tp=%u pp=%u%s dp=%u%s "
                               "zero=%u%s checkpoint=%s microbatch=%u) needs %s%s per GPU, %s more than the %s "
                               "there is",
                               cfg_name (r, l), l->gpus, l->tp, l->pp, v, l->dp, cps, l->zero, l->sp ? " sp" : "",
                               plan_checkpoint_name (l->ckpt), l->mbs, l->replayed ? "" : "at least ", need,
                               miss, cap);
  g_free (v);
  return msg;
}

static void
add_num_or_null (cJSON *o, const char *k, gboolean have, double v)
{
  if (have)
    cJSON_AddNumberToObject (o, k, v);
  else
    cJSON_AddNullToObject (o, k);
}

static cJSON *
layout_json (const PlanResult *r, const PlanLayout *l, gboolean priced, gboolean shard)
{
  cJSON *j = cJSON_CreateObject ();
  gboolean run = l->fits && l->step_ns > 0;
  cJSON_AddStringToObject (j, "config", cfg_name (r, l));
  cJSON_AddNumberToObject (j, "gpus", l->gpus);
  cJSON_AddNumberToObject (j, "tp", l->tp);
  cJSON_AddNumberToObject (j, "pp", l->pp);
  cJSON_AddNumberToObject (j, "dp", l->dp);
  cJSON_AddNumberToObject (j, "zero", l->zero);
  cJSON_AddBoolToObject (j, "sp", l->sp);
  cJSON_AddStringToObject (j, "checkpoint", plan_checkpoint_name (l->ckpt));
  cJSON_AddNumberToObject (j, "microbatch", l->mbs);
  cJSON_AddNumberToObject (j, "grad_accum", l->accum);
  cJSON_AddBoolToObject (j, "fits", l->fits);
  add_num_or_null (j, "peak_device_bytes", !l->error, (double) l->peak);
  add_num_or_null (j, "step_ns", run, l->step_ns);
  add_num_or_null (j, "tokens_per_s", run, l->tokens_per_s);
  add_num_or_null (j, "tflops_per_gpu", run, l->tflops_per_gpu);
  add_num_or_null (j, "mfu", run, l->mfu);
  cJSON_AddStringToObject (j, "bound", l->bound ? l->bound : "?");
  /* Beyond the fields: the interleaving, whether the peak is the
   * replay's or the generator's bound, the cost, an error. */
  cJSON_AddNumberToObject (j, "virtual_stages", l->v);
  cJSON_AddBoolToObject (j, "peak_lower_bound", !l->replayed);
  if (l->pp > 1)
    cJSON_AddNumberToObject (j, "peak_stage", l->peak_stage);   /* the stage whose demand the peak is */
  if (l->uneven)
    {
      /* Layers on the first stage, on each between, on the last. */
      cJSON *sl = cJSON_AddObjectToObject (j, "stage_layers");
      cJSON_AddNumberToObject (sl, "first", l->first);
      if (l->pp > 2)
        cJSON_AddNumberToObject (sl, "middle", l->mid);
      cJSON_AddNumberToObject (sl, "last", l->last);
      if (l->account)   /* the embedding and the loss counted as layers: chunks of unequal counts */
        cJSON_AddBoolToObject (sl, "embedding_and_loss_as_layers", TRUE);
    }
  if (l->ep > 0)
    cJSON_AddNumberToObject (j, "ep", l->ep);   /* MoE: expert-parallel ranks */
  if (l->cp > 1)
    cJSON_AddNumberToObject (j, "cp", l->cp);   /* context-parallel ranks (dp excludes them) */
  if (priced)
    {
      add_num_or_null (j, "cost_per_step", run && l->cost_per_step >= 0, l->cost_per_step);
      add_num_or_null (j, "cost_per_mtokens", run && l->cost_per_mtok >= 0, l->cost_per_mtok);
    }
  if (l->error)
    cJSON_AddStringToObject (j, "error", l->error);
  if (shard)
    {
      cJSON_AddNumberToObject (j, "index", l->index);
      cJSON_AddNumberToObject (j, "capacity_bytes", (double) l->capacity);
      cJSON_AddBoolToObject (j, "replayed", l->replayed);
    }
  return j;
}

cJSON *
plan_to_json (const PlanResult *r, guint top, gboolean priced)
{
  gboolean shard = r->shard_n > 0;
  cJSON *j = cJSON_CreateObject ();
  cJSON_AddNumberToObject (j, "vramsim_plan", 1);
  cJSON_AddNumberToObject (j, "searched", r->searched);
  cJSON_AddNumberToObject (j, "replays", r->replays);
  cJSON_AddNumberToObject (j, "params", r->params);
  if (r->active_params > 0)
    cJSON_AddNumberToObject (j, "active_params", r->active_params);
  if (shard)
    {
      g_autofree char *k = g_strdup_printf ("%u/%u", r->shard_k, r->shard_n);
      cJSON_AddStringToObject (j, "shard", k);
      cJSON_AddStringToObject (j, "search", r->identity);
      cJSON_AddBoolToObject (j, "priced", priced);
      cJSON *c = cJSON_AddArrayToObject (j, "configs");
      for (guint i = 0; r->config_names[i]; i++)
        cJSON_AddItemToArray (c, cJSON_CreateString (r->config_names[i]));
    }
  g_autofree char *nf = no_fit_message (r);
  if (nf)
    cJSON_AddStringToObject (j, "no_fit", nf);
  /* What the model's reading left out (as on stderr): shards carry them
   * to the merge. */
  if (r->warnings != NULL && r->warnings[0] != NULL)
    {
      cJSON *w = cJSON_AddArrayToObject (j, "warnings");
      for (guint i = 0; r->warnings[i]; i++)
        cJSON_AddItemToArray (w, cJSON_CreateString (r->warnings[i]));
    }
  cJSON *arr = cJSON_AddArrayToObject (j, "layouts");
  for (guint i = 0; i < r->layouts->len && (top == 0 || shard || i < top); i++)
    cJSON_AddItemToArray (arr, layout_json (r, r->layouts->pdata[i], priced, shard));
  return j;
}

/* Whether a layout of R (of its first TOP, 0: all) splits its layers
 * unevenly over its stages. */
static gboolean
any_uneven (const PlanResult *r, guint top)
{
  for (guint i = 0; i < r->layouts->len && (top == 0 || i < top); i++)
    if (((const PlanLayout *) r->layouts->pdata[i])->uneven)
      return TRUE;
  return FALSE;
}

/* Whether a layout of R runs context parallelism. */
static gboolean
any_cp (const PlanResult *r)
{
  for (guint i = 0; i < r->layouts->len; i++)
    if (((const PlanLayout *) r->layouts->pdata[i])->cp > 1)
      return TRUE;
  return FALSE;
}

/* An uneven split as "first/between/last" ("first/last" on two stages);
 * "" when even. */
static char *
stage_layers (const PlanLayout *l)
{
  if (!l->uneven)
    return g_strdup ("");
  if (l->pp > 2)
    return g_strdup_printf ("%u/%u/%u", l->first, l->mid, l->last);
  return g_strdup_printf ("%u/%u", l->first, l->last);
}

static void
fmt_g (GString *s, double v)
{
  g_string_append_printf (s, "%.6g", v);
}

static char *
format_csv (const PlanResult *r, guint top, gboolean priced)
{
  GString *out = g_string_new ("config,gpus,tp,pp,dp,zero,sp,checkpoint,microbatch,grad_accum,fits,peak_device_bytes,"
                               "step_ns,tokens_per_s,tflops_per_gpu,mfu,bound,virtual_stages,peak_lower_bound");
  gboolean moe = r->active_params > 0, split = any_uneven (r, 0), ctx = any_cp (r);
  if (priced)
    g_string_append (out, ",cost_per_step,cost_per_mtokens");
  if (moe)
    g_string_append (out, ",ep");
  if (split)
    g_string_append (out, ",stage_layers");
  if (ctx)
    g_string_append (out, ",cp");
  g_string_append (out, ",error\n");
  for (guint i = 0; i < r->layouts->len && (top == 0 || i < top); i++)
    {
      const PlanLayout *l = r->layouts->pdata[i];
      gboolean run = l->fits && l->step_ns > 0;
      GString *row = g_string_new (NULL);
      g_string_append_printf (row, "%u,%u,%u,%u,%u,%s,%s,%u,%u,%s,", l->gpus, l->tp, l->pp, l->dp, l->zero,
                              l->sp ? "yes" : "no", plan_checkpoint_name (l->ckpt), l->mbs, l->accum,
                              l->fits ? "yes" : "no");
      if (!l->error)
        g_string_append_printf (row, "%" G_GUINT64_FORMAT, l->peak);
      g_string_append_c (row, ',');
      if (run)
        {
          g_string_append_printf (row, "%.0f,", l->step_ns);
          fmt_g (row, l->tokens_per_s);
          g_string_append_c (row, ',');
          fmt_g (row, l->tflops_per_gpu);
          g_string_append_c (row, ',');
          fmt_g (row, l->mfu);
        }
      else
        g_string_append (row, ",,,");
      g_string_append_printf (row, ",%s,%u,%s", l->bound ? l->bound : "", l->v, l->replayed ? "no" : "yes");
      if (priced)
        {
          g_string_append_c (row, ',');
          if (run && l->cost_per_step >= 0)
            fmt_g (row, l->cost_per_step);
          g_string_append_c (row, ',');
          if (run && l->cost_per_mtok >= 0)
            fmt_g (row, l->cost_per_mtok);
        }
      if (moe)
        g_string_append_printf (row, ",%u", l->ep);
      if (split)
        {
          g_autofree char *sl = stage_layers (l);
          g_string_append_printf (row, ",%s", sl);
        }
      if (ctx)
        g_string_append_printf (row, ",%u", MAX (l->cp, 1u));
      const char *cells[3] = { cfg_name (r, l), row->str, l->error ? l->error : "" };
      /* config and error quoted as CSV needs; the middle is numbers. */
      GString *c0 = g_string_new (NULL), *c2 = g_string_new (NULL);
      sweep_csv_append_row (c0, &cells[0], 1);
      sweep_csv_append_row (c2, &cells[2], 1);
      g_string_truncate (c0, c0->len - 1);
      g_string_truncate (c2, c2->len - 1);
      g_string_append_printf (out, "%s,%s,%s\n", c0->str, row->str, c2->str);
      g_string_free (c0, TRUE);
      g_string_free (c2, TRUE);
      g_string_free (row, TRUE);
    }
  return g_string_free (out, FALSE);
}

static char *
format_text (const PlanResult *r, guint top, gboolean priced)
{
  GString *out = g_string_new (NULL);
  guint fits = count_fits (r), pruned = 0;
  for (guint i = 0; i < r->layouts->len; i++)
    pruned += !((PlanLayout *) r->layouts->pdata[i])->replayed;
  g_autofree char *active = r->active_params > 0 ? g_strdup_printf (" (%.4g active a token)", r->active_params)
                                                  : g_strdup ("");
  g_string_append_printf (out, "vramsim plan: %.4g parameters%s; searched %u layouts: %u fit, %u replays, %u pruned by "
                          "memory\n", r->params, active, r->searched, fits, r->replays, pruned);
  g_autofree char *nf = no_fit_message (r);
  if (nf)
    g_string_append_printf (out, "%s\n", nf);
  int dpw = r->active_params > 0 || any_cp (r) ? 8 : 5;   /* MoE: "256/e64"; context parallelism: "16/c4" */
  int ppw = any_uneven (r, top) ? 14 : 6;   /* "16:7/8/7" */
  g_string_append_printf (out, "%4s %-12s %5s %3s %*s %*s %4s %3s %-9s %3s %5s %4s %11s %9s %10s %8s %5s %-8s", "rank",
                          "config", "GPUs", "tp", ppw, "pp", dpw, "dp", "zero", "sp", "ckpt", "mb", "accum", "fits", "peak/GPU",
                          "step", "tokens/s", "TF/s/GPU", "MFU", "bound");
  if (priced)
    g_string_append_printf (out, " %9s %9s", "$/step", "$/Mtok");
  g_string_append_c (out, '\n');
  for (guint i = 0; i < r->layouts->len && (top == 0 || i < top); i++)
    {
      const PlanLayout *l = r->layouts->pdata[i];
      gboolean run = l->fits && l->step_ns > 0;
      g_autofree char *pk = units_format_bytes (l->peak), *st = run ? units_format_time (l->step_ns) : g_strdup ("-");
      g_autofree char *pks = l->error ? g_strdup ("-") : g_strdup_printf ("%s%s", l->replayed ? "" : ">=", pk);
      g_autofree char *sl = stage_layers (l);
      g_autofree char *vs = l->v > 1 ? g_strdup_printf ("(v%u)", l->v) : g_strdup ("");
      g_autofree char *pps = g_strdup_printf ("%u%s%s%s", l->pp, vs, *sl ? ":" : "", sl);
      /* MoE: dp with its expert-parallel ranks, "256/e64". */
      g_autofree char *dps = l->ep > 0   ? g_strdup_printf ("%u/e%u", l->dp, l->ep)
                             : l->cp > 1 ? g_strdup_printf ("%u/c%u", l->dp, l->cp)
                                         : g_strdup_printf ("%u", l->dp);
      char tok[32] = "-", tf[32] = "-", mfu[32] = "-";
      if (run)
        {
          g_snprintf (tok, sizeof tok, "%.4g", l->tokens_per_s);
          g_snprintf (tf, sizeof tf, "%.1f", l->tflops_per_gpu);
          g_snprintf (mfu, sizeof mfu, "%.1f%%", 100 * l->mfu);
        }
      g_string_append_printf (out, "%4u %-12s %5u %3u %*s %*s %4u %3s %-9s %3u %5u %4s %11s %9s %10s %8s %5s %-8s",
                              i + 1, cfg_name (r, l), l->gpus, l->tp, ppw, pps, dpw, dps, l->zero, l->sp ? "yes" : "no",
                              plan_checkpoint_name (l->ckpt), l->mbs, l->accum, l->error ? "err" : l->fits ? "yes" : "no",
                              pks, st, tok, tf, mfu, l->bound ? l->bound : "?");
      if (priced)
        {
          if (run && l->cost_per_step >= 0)
            g_string_append_printf (out, " %9.4g %9.4g", l->cost_per_step, l->cost_per_mtok);
          else
            g_string_append_printf (out, " %9s %9s", "-", "-");
        }
      g_string_append_c (out, '\n');
    }
  if (top && r->layouts->len > top)
    g_string_append_printf (out, "(%u more; --top 0 shows every layout)\n", r->layouts->len - top);
  return g_string_free (out, FALSE);
}

char *
plan_format (const PlanResult *r, const PlanSearch *s, PlanFormat fmt, guint top, gboolean priced)
{
  (void) s;
  if (fmt == PLAN_FMT_CSV)
    return format_csv (r, top, priced);
  if (fmt == PLAN_FMT_JSON)
    {
      cJSON *j = plan_to_json (r, top, priced);
      char *p = jsonw_print (j, TRUE);
      cJSON_Delete (j);
      char *out = g_strconcat (p, "\n", NULL);
      g_free (p);
      return out;
    }
  return format_text (r, top, priced);
}

/* ---- merge ---- */

static double
jnum (const cJSON *o, const char *k, gboolean *ok)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, k);
  if (cJSON_IsNumber (v))
    return v->valuedouble;
  if (!cJSON_IsNull (v))
    *ok = FALSE;
  return 0;
}

static gboolean
jbool (const cJSON *o, const char *k, gboolean *ok)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, k);
  if (!cJSON_IsBool (v))
    *ok = FALSE;
  return cJSON_IsTrue (v);
}

static const char *
jstr (const cJSON *o, const char *k, gboolean *ok)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, k);
  if (!cJSON_IsString (v))
    {
      *ok = FALSE;
      return "";
    }
  return v->valuestring;
}

static PlanLayout *
layout_from_json (const cJSON *j, char **configs, gboolean *ok)
{
  PlanLayout *l = g_new0 (PlanLayout, 1);
  const char *cfg = jstr (j, "config", ok), *ck = jstr (j, "checkpoint", ok);
  l->config = G_MAXUINT;
  for (guint i = 0; configs[i]; i++)
    if (strcmp (configs[i], cfg) == 0)
      l->config = i;
  if (l->config == G_MAXUINT)
    *ok = FALSE;
  l->ckpt = PLAN_CKPT_COUNT;
  for (guint i = 0; i < PLAN_CKPT_COUNT; i++)
    if (strcmp (ck, plan_checkpoint_name (i)) == 0)
      l->ckpt = i;
  if (l->ckpt == PLAN_CKPT_COUNT)
    *ok = FALSE;
  l->gpus = jnum (j, "gpus", ok), l->tp = jnum (j, "tp", ok), l->pp = jnum (j, "pp", ok), l->dp = jnum (j, "dp", ok);
  l->zero = jnum (j, "zero", ok), l->sp = jbool (j, "sp", ok), l->mbs = jnum (j, "microbatch", ok);
  l->accum = jnum (j, "grad_accum", ok), l->fits = jbool (j, "fits", ok);
  l->peak = (guint64) jnum (j, "peak_device_bytes", ok), l->step_ns = jnum (j, "step_ns", ok);
  l->tokens_per_s = jnum (j, "tokens_per_s", ok), l->tflops_per_gpu = jnum (j, "tflops_per_gpu", ok);
  l->mfu = jnum (j, "mfu", ok), l->bound = g_strdup (jstr (j, "bound", ok)), l->v = jnum (j, "virtual_stages", ok);
  l->index = jnum (j, "index", ok), l->capacity = (guint64) jnum (j, "capacity_bytes", ok);
  l->replayed = jbool (j, "replayed", ok);
  const cJSON *ep = cJSON_GetObjectItemCaseSensitive (j, "ep");
  l->ep = cJSON_IsNumber (ep) ? (guint) ep->valuedouble : 0;
  const cJSON *cpj = cJSON_GetObjectItemCaseSensitive (j, "cp");
  l->cp = cJSON_IsNumber (cpj) ? (guint) cpj->valuedouble : 1;
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive (j, "peak_stage");
  l->peak_stage = cJSON_IsNumber (ps) ? (guint) ps->valuedouble : 0;
  const cJSON *sl = cJSON_GetObjectItemCaseSensitive (j, "stage_layers");
  if (sl != NULL)
    {
      l->uneven = TRUE;
      l->first = jnum (sl, "first", ok), l->last = jnum (sl, "last", ok);
      l->mid = l->pp > 2 ? jnum (sl, "middle", ok) : 0;
      l->account = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (sl, "embedding_and_loss_as_layers"));
    }
  l->cost_per_step = l->cost_per_mtok = -1;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive (j, "cost_per_step");
  if (cJSON_IsNumber (c))
    l->cost_per_step = c->valuedouble;
  c = cJSON_GetObjectItemCaseSensitive (j, "cost_per_mtokens");
  if (cJSON_IsNumber (c))
    l->cost_per_mtok = c->valuedouble;
  c = cJSON_GetObjectItemCaseSensitive (j, "error");
  if (cJSON_IsString (c))
    l->error = g_strdup (c->valuestring);
  return l;
}

PlanResult *
plan_merge (char **paths, GError **error)
{
  PlanResult *r = NULL;
  guint n = 0, *seen = NULL;
  gboolean priced = FALSE;
  for (guint p = 0; paths[p]; p++)
    {
      g_autofree char *text = NULL;
      if (!g_file_get_contents (paths[p], &text, NULL, error))
        goto fail;
      cJSON *j = cJSON_Parse (text);
      gboolean ok = j != NULL && cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (j, "vramsim_plan"));
      const char *shard = ok ? jstr (j, "shard", &ok) : "", *search = ok ? jstr (j, "search", &ok) : "";
      guint k = 0, nn = 0;
      if (ok && (sscanf (shard, "%u/%u", &k, &nn) != 2 || k < 1 || k > nn))
        ok = FALSE;
      if (!ok)
        {
          g_set_error (error, VS_PLAN_ERROR, 0, "%s: not the JSON of a `vramsim plan --shard K/N --format json` run",
                       paths[p]);
          cJSON_Delete (j);
          goto fail;
        }
      if (r == NULL)
        {
          r = g_new0 (PlanResult, 1);
          r->identity = g_strdup (search);
          r->layouts = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_layout_free);
          GPtrArray *names = g_ptr_array_new ();
          const cJSON *c;
          cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (j, "configs"))
            if (cJSON_IsString (c))
              g_ptr_array_add (names, g_strdup (c->valuestring));
          g_ptr_array_add (names, NULL);
          r->config_names = (char **) g_ptr_array_free (names, FALSE);
          r->params = jnum (j, "params", &ok);
          const cJSON *ap = cJSON_GetObjectItemCaseSensitive (j, "active_params");
          r->active_params = cJSON_IsNumber (ap) ? ap->valuedouble : 0;
          GPtrArray *ws = g_ptr_array_new ();
          cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (j, "warnings"))
            if (cJSON_IsString (c))
              g_ptr_array_add (ws, g_strdup (c->valuestring));
          g_ptr_array_add (ws, NULL);
          r->warnings = (char **) g_ptr_array_free (ws, FALSE);
          priced = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (j, "priced"));
          n = nn;
          seen = g_new0 (guint, n + 1);
        }
      else if (strcmp (search, r->identity) != 0 || nn != n)
        {
          g_set_error (error, VS_PLAN_ERROR, 0, "%s: shard %s of another search than %s's (other options or shard "
                       "count)", paths[p], shard, paths[0]);
          cJSON_Delete (j);
          goto fail;
        }
      if (seen[k]++)
        {
          g_set_error (error, VS_PLAN_ERROR, 0, "%s: shard %s given twice", paths[p], shard);
          cJSON_Delete (j);
          goto fail;
        }
      r->searched += jnum (j, "searched", &ok);
      r->replays += jnum (j, "replays", &ok);
      const cJSON *l;
      cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive (j, "layouts"))
        g_ptr_array_add (r->layouts, layout_from_json (l, r->config_names, &ok));
      cJSON_Delete (j);
      if (!ok)
        {
          g_set_error (error, VS_PLAN_ERROR, 0, "%s: a layout lacks a field or has a wrong one", paths[p]);
          goto fail;
        }
    }
  if (r == NULL)
    {
      g_set_error (error, VS_PLAN_ERROR, 0, "--merge: no shard files given");
      goto fail;
    }
  for (guint k = 1; k <= n; k++)
    if (!seen[k])
      {
        g_set_error (error, VS_PLAN_ERROR, 0, "--merge: shard %u/%u is missing", k, n);
        goto fail;
      }
  (void) priced;
  g_free (seen);
  return r;
fail:
  g_free (seen);
  plan_result_free (r);
  return NULL;
}

gboolean
plan_merged_priced (char **paths)
{
  g_autofree char *text = NULL;
  if (!paths[0] || !g_file_get_contents (paths[0], &text, NULL, NULL))
    return FALSE;
  cJSON *j = cJSON_Parse (text);
  gboolean p = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (j, "priced"));
  cJSON_Delete (j);
  return p;
}
