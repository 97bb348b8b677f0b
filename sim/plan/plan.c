/* plan.c — the search of `vramsim plan` (plan.h, docs/plan.md): the
 * layouts it enumerates, the memory bound that prunes them, the replay of
 * each one's generated rank-0 trace, on a pool of threads. */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "base/outfile.h"
#include "base/stopsig.h"
#include "engine/replay.h"
#include "plan/plan.h"
#include "trace/trace.h"

G_DEFINE_QUARK (vramsim-plan-error-quark, plan_error)

const char *
plan_checkpoint_name (guint c)
{
  static const char *names[] = { "none", "selective", "full" };
  return c < PLAN_CKPT_COUNT ? names[c] : "?";
}

void
plan_layout_free (PlanLayout *l)
{
  if (l == NULL)
    return;
  g_free (l->bound);
  g_free (l->error);
  g_free (l);
}

void
plan_result_free (PlanResult *r)
{
  if (r == NULL)
    return;
  g_free (r->identity);
  g_strfreev (r->config_names);
  g_strfreev (r->warnings);
  if (r->layouts)
    g_ptr_array_free (r->layouts, TRUE);
  g_free (r);
}

/* ---- the model's arithmetic ---- */

/* The weights are the generator's (synth_train_*_params): one count of
 * the shape for the search and the traces it replays. */

/* The count, or with ACTIVE what a token runs through: top_k of the
 * experts (and the router and the shared expert) of an MoE layer. */
static double
param_count (const SynthTrainOpts *m, gboolean active)
{
  SynthTrainOpts dense;
  synth_train_dense_shape (m, &dense);
  double attn = synth_train_attn_params (m), mlp = synth_train_mlp_params (m);
  double per = attn + (m->experts ? (active ? m->top_k : m->experts) * mlp + (double) m->hidden * m->experts
                                      + synth_train_shared_params (m)
                                  : mlp);
  /* The dense layers (an MoE model's first, or between its MoE layers) in place of as many MoE ones. */
  double K = synth_train_dense_count (m);
  /* Multi-token prediction: a layer of the last layer's kind and its 2h x h
   * projection a module (the embedding and the head are shared). */
  double last = synth_train_layer_dense (m, m->layers - 1) ? attn + synth_train_mlp_params (&dense) : per;
  return (m->layers - K) * per + K * (attn + synth_train_mlp_params (&dense))
         + (double) m->vocab * m->hidden * (m->untied ? 2 : 1)
         + m->mtp * (last + 2.0 * m->hidden * m->hidden);
}

double
plan_param_count (const SynthTrainOpts *m)
{
  return param_count (m, FALSE);
}

double
plan_active_param_count (const SynthTrainOpts *m)
{
  return param_count (m, TRUE);
}

void
plan_step_flops (const SynthTrainOpts *m, guint64 global_batch, guint ckpt, double *executed, double *model)
{
  double s = m->seq, h = m->hidden, tokens = (double) global_batch * s;
  SynthTrainOpts dense;
  synth_train_dense_shape (m, &dense);
  double one = synth_train_mlp_params (m), K = synth_train_dense_count (m);
  double mlp = m->experts ? m->top_k * one + h * m->experts + synth_train_shared_params (m) : one;
  /* A layer's average over the dense first layers and the MoE ones. */
  mlp = (mlp * (m->layers - K) + K * synth_train_mlp_params (&dense)) / m->layers;
  /* Per token and layer: 2 FLOPs a weight, and QKᵀ and attention·V
   * (2·s·heads·head_dim each, 4·s·h for GPT; latent attention's QK and V
   * dims apart: synth_train_core_width). */
  double core = synth_train_core_width (m), keys = s;
  guint local = 0;
  for (guint g = 0; g < m->layers; g++)
    local += synth_train_layer_local (m, g);
  if (local > 0)   /* a query's keys, on average over the layers: a window's on the local ones */
    keys = (s * (m->layers - local) + (double) MIN (m->window, m->seq) * local) / m->layers;
  double layer = tokens * m->layers * (2 * (synth_train_attn_params (m) + mlp) + 2 * keys * core);
  double logits = tokens * 2.0 * m->vocab * h;
  if (m->mtp > 0)
    {
      /* Each prediction module: its projection, a layer of the last
       * layer's kind over the whole sequence, the head again. */
      double last = synth_train_layer_dense (m, m->layers - 1) ? synth_train_mlp_params (&dense)
                    : m->experts ? m->top_k * one + h * m->experts + synth_train_shared_params (m)
                                 : one;
      layer += tokens * m->mtp * (2 * (synth_train_attn_params (m) + last + 2 * h * h) + 2 * s * core);
      logits *= 1 + m->mtp;
    }
  double fwd = layer + logits;
  *model = 3 * fwd;
  /* Recomputation repeats the layers' forward (full) or the attention
   * core's (selective); never the logits (Narayanan et al. eq. 3). */
  double extra = ckpt == PLAN_CKPT_FULL ? layer : ckpt == PLAN_CKPT_SELECTIVE ? tokens * m->layers * 2 * keys * core : 0;
  *executed = *model + extra;
}

/* ---- enumeration ---- */

static gboolean
in_list (const PlanList *l, guint v)
{
  for (guint i = 0; i < l->n; i++)
    if (l->v[i] == v)
      return TRUE;
  return FALSE;
}

/* L if given, else the DEF values. */
static PlanList
list_or (const PlanList *l, const guint *def, guint n_def)
{
  PlanList out = { 0 };
  if (l->n)
    return *l;
  for (guint i = 0; i < n_def && i < PLAN_MAX_VALUES; i++)
    out.v[out.n++] = def[i];
  return out;
}

typedef struct {
  const PlanSearch *s;
  VsConfig **cfgs;
  guint n_cfgs;
  GPtrArray *layouts;     /* PlanLayout*, enumeration order (this shard's) */
  guint all;              /* layouts enumerated, every shard */
} Enum;

/* MoE: the expert-parallel sizes to search at DP data-parallel ranks,
 * those that divide dp and the experts (of --ep, or every power of two
 * and min(dp, E)); a dense model has one, 0. */
static PlanList
ep_sizes (const PlanSearch *s, guint dp)
{
  const SynthTrainOpts *m = &s->model;
  PlanList eps = { 0 };
  if (m->experts == 0)
    {
      eps.v[eps.n++] = 0;
      return eps;
    }
  guint me = MIN (dp, m->experts);
  PlanList cand = s->ep;
  if (!cand.n)
    {
      for (guint e = 1; e <= me && cand.n < PLAN_MAX_VALUES - 1; e *= 2)
        cand.v[cand.n++] = e;
      if (!in_list (&cand, me))
        cand.v[cand.n++] = me;
    }
  for (guint i = 0; i < cand.n; i++)
    if (dp % cand.v[i] == 0 && m->experts % cand.v[i] == 0)
      eps.v[eps.n++] = cand.v[i];
  return eps;
}

static void
enumerate (Enum *en)
{
  const PlanSearch *s = en->s;
  const SynthTrainOpts *m = &s->model;
  static const guint d_v[] = { 1, 2 }, d_zero[] = { 0, 1, 2, 3 }, d_mbs[] = { 1, 2, 4, 8 }, d_sp[] = { 0, 1 };
  static const guint d_ckpt[] = { PLAN_CKPT_NONE, PLAN_CKPT_SELECTIVE, PLAN_CKPT_FULL };
  PlanList vs = list_or (&s->v, d_v, G_N_ELEMENTS (d_v)), zs = list_or (&s->zero, d_zero, G_N_ELEMENTS (d_zero));
  PlanList ms = list_or (&s->mbs, d_mbs, G_N_ELEMENTS (d_mbs)), sps = list_or (&s->sp, d_sp, G_N_ELEMENTS (d_sp));
  PlanList cs = list_or (&s->ckpt, d_ckpt, G_N_ELEMENTS (d_ckpt));
  guint kv = m->kv_heads ? m->kv_heads : m->heads, ffn = m->ffn ? m->ffn : 4 * m->hidden;
  /* The dense layers' inner size, when the model has any (0 divides by every t). */
  guint dense_ffn = synth_train_dense_count (m) ? (m->dense_ffn ? m->dense_ffn : 4 * m->hidden) : 0;
  /* Context parallelism where it pays, on long sequences, and is modeled
   * (synth_train_check_cp: fused attention, the sequence split in 2·cp),
   * unless --cp says (checked by the command). */
  static const guint d_cp[] = { 1, 2, 4, 8 };
  PlanList cps = list_or (&s->cp, d_cp, m->seq >= 16384 ? G_N_ELEMENTS (d_cp) : 1), cp_ok = { 0 };
  for (guint i = 0; i < cps.n; i++)
    {
      SynthTrainOpts cpo = *m;
      cpo.cp = cps.v[i];
      if (synth_train_check_cp (&cpo, NULL))
        cp_ok.v[cp_ok.n++] = cps.v[i];
    }
  for (guint c = 0; c < en->n_cfgs; c++)
    {
      /* TP up to a node's GPUs (powers of two), unless --tp says. */
      PlanList tps = s->tp;
      if (!tps.n)
        for (guint t = 1; t <= MAX (en->cfgs[c]->network.ranks_per_node, 1u) && tps.n < PLAN_MAX_VALUES; t *= 2)
          tps.v[tps.n++] = t;
      for (guint gi = 0; gi < s->gpus.n; gi++)
        for (guint ti = 0; ti < tps.n; ti++)
          {
            guint g = s->gpus.v[gi], t = tps.v[ti];
            if (g % t || m->hidden % t || m->heads % t || kv % t || ffn % t || m->shared_ffn % t || dense_ffn % t)
              continue;
            for (guint p = 1; p <= m->layers; p++)
            for (guint cpi = 0; cpi < cp_ok.n; cpi++)
              {
                guint cpn = cp_ok.v[cpi];
                if ((g / t) % p || (s->pp.n && !in_list (&s->pp, p)) || (s->even_stages && m->layers % p)
                    || (g / t / p) % cpn)
                  continue;
                guint dp = g / (t * p * cpn);
                PlanList eps = ep_sizes (s, dp);
                for (guint ei = 0; ei < eps.n; ei++)
                for (guint vi = 0; vi < vs.n; vi++)
                  for (guint mi = 0; mi < ms.n; mi++)
                    {
                      guint v = vs.v[vi], mb = ms.v[mi];
                      if (s->global_batch % ((guint64) dp * mb))
                        continue;
                      guint64 accum = s->global_batch / ((guint64) dp * mb);
                      if (accum > G_MAXUINT32)
                        continue;
                      if (v > 1 && (p < 2 || accum % p))
                        continue;
                      /* The stages' layers: even; where p·v does not
                       * divide them but does with the embedding and the
                       * loss counted as layers, Megatron-Core's accounted
                       * split (each virtual stage (L + 2)/(p·v), the first
                       * and the last one fewer, perhaps none: NeMo's
                       * Llama 3.1 405B, 126 on 8 x 8; Llama 3's, on 16 x
                       * 8); else Llama 3's first and last stage
                       * (synth_train_auto_split). */
                      guint first = m->layers, last = m->layers, pv = p * v, per = (m->layers + 2) / pv;
                      gboolean account = FALSE;
                      if (p > 1 && m->layers % pv != 0)
                        {
                          if (s->even_stages)
                            continue;
                          if ((m->layers + 2) % pv == 0 && v * per >= 2)
                            account = TRUE, first = last = v * per - 1;
                          else if (!synth_train_auto_split (m->layers, p, v, &first, &last))
                            continue;
                        }
                      for (guint zi = 0; zi < zs.n; zi++)
                        for (guint si = 0; si < sps.n; si++)
                          for (guint ci = 0; ci < cs.n; ci++)
                            {
                              guint z = zs.v[zi], sp = sps.v[si];
                              /* ZeRO shards over the data-parallel ranks;
                               * stages 2-3 only without a pipeline (as
                               * DeepSpeed); SP only with TP. */
                              if ((z > 0 && dp < 2) || (z >= 2 && p > 1) || (sp && t < 2))
                                continue;
                              guint idx = en->all++;
                              if (s->shard_n && idx % s->shard_n != s->shard_k - 1)
                                continue;
                              PlanLayout *l = g_new0 (PlanLayout, 1);
                              l->index = idx, l->config = c, l->gpus = g, l->tp = t, l->pp = p, l->dp = dp;
                              l->v = v, l->zero = z, l->sp = sp != 0, l->ckpt = cs.v[ci], l->mbs = mb;
                              l->accum = (guint) accum;
                              l->ep = eps.v[ei];
                              l->cp = cpn;
                              l->first = first, l->last = last;
                              l->mid = p > 2 ? (m->layers - first - last) / (p - 2) : 0;
                              l->uneven = p > 1 && m->layers % (p * v) != 0;
                              l->account = account;
                              l->cost_per_step = l->cost_per_mtok = -1;
                              g_ptr_array_add (en->layouts, l);
                            }
                    }
              }
          }
    }
}

/* ---- one layout: generate, bound, replay ---- */

static SynthTrainOpts
layout_opts (const PlanSearch *s, const PlanLayout *l)
{
  SynthTrainOpts o = s->model;
  o.params = 0;
  o.batch = l->mbs, o.tp = l->tp, o.pp = l->pp, o.dp = l->dp, o.zero = l->zero, o.sp = l->sp;
  o.virtual_stages = l->v, o.grad_accum = l->accum, o.steps = 2, o.ep = l->ep, o.cp = l->cp;
  o.stage = 0;
  o.first_stage_layers = l->uneven && !l->account ? l->first : 0;
  o.last_stage_layers = l->uneven && !l->account ? l->last : 0;
  o.account_embedding = o.account_loss = l->account;
  o.checkpoint = l->ckpt == PLAN_CKPT_FULL ? SYNTH_CKPT_EVERY : l->ckpt == PLAN_CKPT_SELECTIVE ? SYNTH_CKPT_SELECTIVE
                                                                                              : SYNTH_CKPT_NONE;
  o.checkpoint_every = 1;
  /* Megatron's choice (examples/sc21): PyTorch DDP without a pipeline,
   * LocalDDP with one. */
  o.ddp_local = s->ddp == PLAN_DDP_AUTO ? l->pp > 1 : s->ddp == PLAN_DDP_LOCAL;
  o.offload_optimizer = FALSE;
  o.no_limit_all_gathers = FALSE;
  return o;
}

/* What determines the rank-0 trace: the layouts that share it share a replay. */
static char *
layout_key (const PlanLayout *l)
{
  return g_strdup_printf ("%u/%u/%u/%u/%u/%u/%u/%u/%u/%u/%u/%u", l->config, l->tp, l->pp, l->dp, l->v, l->zero, l->sp,
                          l->ckpt, l->mbs, l->accum, l->ep, l->cp);
}

static double
num_at (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  for (guint i = 0; parts[i] && o; i++)
    o = cJSON_GetObjectItemCaseSensitive (o, parts[i]);
  return cJSON_IsNumber (o) ? o->valuedouble : 0;
}

/* What bounds the step: report_bounds, as `vramsim fit` derives it, with
 * the exposed collective time named "network" (plan's field), or
 * "pipeline" when most of the collectives' time is receives: a pipeline
 * stage waiting for its neighbour (the bubble), which the generated
 * trace's receives hold. */
static const char *
report_bound (const cJSON *report)
{
  static const char *const names[VS_STEP_BOUND_COUNT] = {
    "compute", "memory", "link", "swap", "faults", "network", "host",
  };
  double b[VS_STEP_BOUND_COUNT];
  VsStepBound k = report_bounds (report, num_at (report, "time.predicted_ns"), b);
  if (k == VS_STEP_BOUND_COMM)
    {
      const cJSON *kinds = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (report, "network"),
                                                             "kinds");
      const cJSON *kind;
      double recv = 0, busy = num_at (report, "network.busy_ns");
      cJSON_ArrayForEach (kind, kinds)
        {
          const cJSON *n = cJSON_GetObjectItemCaseSensitive (kind, "kind");
          if (cJSON_IsString (n) && strcmp (n->valuestring, "recv") == 0)
            recv = num_at (kind, "predicted_ns");
        }
      if (busy > 0 && recv > busy / 2)
        return "pipeline";
    }
  return names[k];
}

typedef struct {
  const PlanSearch *s;
  VsConfig **cfgs;
  const char *tmpdir;
  GPtrArray *todo;        /* PlanLayout* to evaluate (the first of each key) */
  GMutex lock;
  guint next, done, replays;
} Pool;

/* How far evaluate goes: the whole way, pruning by the two floors;
 * only to the live-peak floor (no replay); or the replay whatever the
 * floors say (to learn the demand of a layout that does not fit). */
typedef enum { EVAL_PRUNE, EVAL_LIVE_FLOOR, EVAL_FORCE } EvalMode;

/* The stages a layout's memory and time are the largest of: stage 0
 * (the embedding, the most micro-batches in flight), the last (the head
 * and its logits), and stage 1 for the stages between unless it holds
 * stage 0's layers, kind for kind (synth_train_stage_like_first: it then
 * needs less than stage 0, and the later middle stages less than it,
 * with fewer micro-batches in flight). */
static guint
stages_of (const SynthTrainOpts *o, guint st[3])
{
  guint n = 0, p = MAX (o->pp, 1u);
  st[n++] = 0;
  if (p > 2 && !synth_train_stage_like_first (o, 1))
    st[n++] = 1;
  if (p > 1)
    st[n++] = p - 1;
  return n;
}

/* One stage's trace: generated, bounded by its live peak, replayed
 * (REPORT NULL: only generated, for the bound). Returns FALSE when it
 * stopped short of a replay (*BOUND the live peak plus the context) or
 * failed (L->error set); TRUE with *REPORT. */
static gboolean
evaluate_stage (Pool *pool, PlanLayout *l, guint slot, SynthTrainOpts *o, gboolean prune, guint64 *bound,
                cJSON **report)
{
  const VsConfig *cfg = pool->cfgs[l->config];
  g_autoptr (GError) err = NULL;
  g_autofree char *path = g_strdup_printf ("%s/layout-%u.vtrace", pool->tmpdir, slot);
  if (report != NULL)
    *report = NULL;
  SynthEmit *e = synth_emit_new (path, cfg, 0, "transformer-train", &err);
  if (e == NULL || !synth_transformer_train (o, e, &err))
    {
      if (e)
        synth_emit_abort (e);
      l->error = g_strdup (err ? err->message : "the generator failed");
      return FALSE;
    }
  /* The memory bound: what is live at the generator's peak, plus the
   * context. The replay's demand is the allocator's reserved peak (at
   * least the live peak) plus the context, so a layout over capacity here
   * is over it there. */
  *bound = synth_peak_device (e) + cfg->memory.context;
  if ((*bound > l->capacity && prune) || report == NULL)
    {
      synth_emit_abort (e);
      return FALSE;
    }
  if (!synth_emit_finish (e, &err))
    {
      l->error = g_strdup (err->message);
      return FALSE;
    }
  {
    g_autoptr (VsTraceReader) reader = trace_open (path, &err);
    if (reader)
      {
        VsReplayOptions ro = { 0 };
        ro.keep_going = TRUE;
        ro.trace_name = "plan";
        *report = replay_run (reader, cfg, NULL, &ro, &err);
      }
  }
  g_unlink (path);
  if (*report == NULL)
    {
      l->error = g_strdup (err ? err->message : "the replay failed");
      return FALSE;
    }
  g_mutex_lock (&pool->lock);
  pool->replays++;
  g_mutex_unlock (&pool->lock);
  return TRUE;
}

static void
evaluate (Pool *pool, PlanLayout *l, guint slot, EvalMode mode)
{
  const PlanSearch *s = pool->s;
  const VsConfig *cfg = pool->cfgs[l->config];
  SynthTrainOpts o = layout_opts (s, l);
  l->capacity = cfg->memory.capacity - MIN (cfg->memory.reserved, cfg->memory.capacity);
  guint st[3], n = stages_of (&o, st);
  /* First without generating: the model states the generator allocates
   * for each stage (live together from the start to the end) plus the
   * context are a floor of the replay's demand. */
  guint64 states = 0;
  l->peak_stage = 0;
  for (guint i = 0; i < n; i++)
    {
      o.stage = st[i];
      guint64 b = synth_train_state_device_bytes (&o) + cfg->memory.context;
      if (b > states)
        states = b, l->peak_stage = st[i];
    }
  if (states > l->capacity && mode == EVAL_PRUNE)
    {
      l->peak = states, l->fits = FALSE, l->replayed = FALSE, l->floor = 0;
      l->bound = g_strdup ("memory");
      return;
    }
  /* Then each stage in turn: its live-peak floor, its replay. A layout
   * fits when every stage does; its demand and its step are the largest
   * of theirs. Pruning stops at the first stage over the capacity, so the
   * demand is then a floor. */
  guint64 floor = states, demand = 0;
  guint floor_stage = l->peak_stage, demand_stage = 0;
  gboolean fits = TRUE, all = TRUE;
  double step = 0;
  char *bound_name = NULL;
  for (guint i = 0; i < n && !l->error; i++)
    {
      o.stage = st[i];
      guint64 live = 0;
      cJSON *report = NULL;
      if (!evaluate_stage (pool, l, slot, &o, mode == EVAL_PRUNE, &live, mode == EVAL_LIVE_FLOOR ? NULL : &report))
        {
          if (l->error)
            break;
          if (live > floor)
            floor = live, floor_stage = st[i];
          fits = all = FALSE;
          if (mode == EVAL_PRUNE)
            break;
          continue;
        }
      guint64 d = (guint64) num_at (report, "memory.device_demand_bytes");
      if (d > demand || i == 0)
        demand = d, demand_stage = st[i];
      gboolean f = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (report, "fits"));
      double ns = f ? num_at (report, "steady_state.step_median_ns") : 0;
      if (f && (ns > step || bound_name == NULL))
        {
          step = ns;
          g_free (bound_name);
          bound_name = g_strdup (report_bound (report));
        }
      fits = fits && f;
      cJSON_Delete (report);
      if (!f && mode == EVAL_PRUNE && i + 1 < n)
        {
          all = FALSE;
          break;
        }
    }
  if (l->error)
    {
      g_free (bound_name);
      l->bound = g_strdup ("error");
      return;
    }
  /* Every stage replayed: the demand is theirs (each at least its states);
   * else the largest floor or demand found. */
  l->replayed = all;
  l->floor = 1;
  l->fits = fits;
  if (all || demand >= floor)
    l->peak = demand, l->peak_stage = demand_stage;
  else
    l->peak = floor, l->peak_stage = floor_stage;
  l->step_ns = fits ? step : 0;
  if (fits)
    l->bound = bound_name;
  else
    {
      g_free (bound_name);
      l->bound = g_strdup ("memory");
    }
}

/* SIGINT, SIGTERM and SIGHUP stop the search: layouts in flight finish,
 * the temporary traces are removed, and plan_run fails with
 * PLAN_ERROR_INTERRUPTED (no output). A second signal kills. */

static gpointer
worker (gpointer data)
{
  Pool *pool = data;
  for (;;)
    {
      g_mutex_lock (&pool->lock);
      guint i = pool->next < pool->todo->len && !vs_stop_signal ? pool->next++ : G_MAXUINT;
      g_mutex_unlock (&pool->lock);
      if (i == G_MAXUINT)
        break;
      evaluate (pool, pool->todo->pdata[i], i, EVAL_PRUNE);
      g_mutex_lock (&pool->lock);
      pool->done++;
      g_mutex_unlock (&pool->lock);
    }
  return NULL;
}

static void
draw_progress (guint done, guint total, gint64 t0, gboolean final)
{
  double el = (g_get_monotonic_time () - t0) / 1e6;
  guint width = 30, fill = total ? (guint) ((guint64) done * width / total) : width;
  char bar[64];
  for (guint i = 0; i < width; i++)
    bar[i] = i < fill ? '=' : ' ';
  bar[width] = '\0';
  double rate = el > 0 ? done / el : 0;
  if (el >= 1 && rate > 0 && done < total)
    fprintf (stderr, "\rplan [%s] %u/%u layouts  ETA %.0fs   ", bar, done, total, (total - done) / rate);
  else
    fprintf (stderr, "\rplan [%s] %u/%u layouts            ", bar, done, total);
  if (final)
    fputc ('\n', stderr);
  fflush (stderr);
}

/* Runs the pool over TODO. */
static void
run_pool (Pool *pool, guint n_threads, gboolean progress)
{
  guint n = MIN (MAX (n_threads, 1u), MAX (pool->todo->len, 1u));
  GThread **threads = g_new0 (GThread *, n);
  gint64 t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    threads[i] = g_thread_new ("plan", worker, pool);
  if (progress)
    for (;;)
      {
        g_mutex_lock (&pool->lock);
        guint done = pool->done;
        g_mutex_unlock (&pool->lock);
        draw_progress (done, pool->todo->len, t0, FALSE);
        if (done >= pool->todo->len || vs_stop_signal)
          break;
        g_usleep (100000);
      }
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  if (progress)
    draw_progress (vs_stop_signal ? pool->done : pool->todo->len, pool->todo->len, t0, TRUE);
  g_free (threads);
}

/* The figures that follow from the step time. */
static void
layout_figures (const PlanSearch *s, PlanLayout *l)
{
  if (!l->fits || l->step_ns <= 0)
    return;
  const SynthTrainOpts *m = &s->model;
  double step = l->step_ns * 1e-9, executed, model;
  plan_step_flops (m, s->global_batch, l->ckpt, &executed, &model);
  l->tokens_per_s = (double) s->global_batch * m->seq / step;
  l->tflops_per_gpu = executed / step / l->gpus / 1e12;
  l->mfu = 0;
  l->cost_per_step = l->cost_per_mtok = -1;
  if (s->price && s->price[l->config] > 0)
    {
      l->cost_per_step = s->price[l->config] * l->gpus * step / 3600;
      l->cost_per_mtok = l->cost_per_step / ((double) s->global_batch * m->seq) * 1e6;
    }
}

static double
peak_tflops (const VsConfig *cfg, SynthPrecision p)
{
  guint prec = p == SYNTH_PREC_BF16 ? VS_PREC_BF16 : p == SYNTH_PREC_FP8 ? VS_PREC_FP8
             : p == SYNTH_PREC_FP32 ? (cfg->tf32 == VS_TF32_ALL ? VS_PREC_TF32 : VS_PREC_FP32) : VS_PREC_FP16;
  double v = cfg->compute.peak[prec];
  return v > 0 ? v : cfg->tflops;
}

static char *
search_identity (const PlanSearch *s)
{
  const SynthTrainOpts *m = &s->model;
  GString *id = g_string_new (NULL);
  g_string_append_printf (id, "layers=%u hidden=%u heads=%u kv=%u ffn=%u gated=%d seq=%u vocab=%u experts=%u top_k=%u "
                          "precision=%d optimizer=%d batch=%" G_GUINT64_FORMAT " configs=",
                          m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->gated_mlp, m->seq, m->vocab,
                          m->experts, m->top_k, m->precision, m->optimizer, s->global_batch);
  for (guint i = 0; s->configs[i]; i++)
    g_string_append_printf (id, "%s%s", i ? "," : "", s->configs[i]);
  if (m->head_dim != 0)   /* only when set: parts of searches before it still merge */
    g_string_append_printf (id, " head_dim=%u", m->head_dim);
  if (m->untied)
    g_string_append (id, " untied=1");
  if (m->shared_ffn != 0)
    g_string_append_printf (id, " shared_ffn=%u", m->shared_ffn);
  if (m->flash_attn)
    g_string_append (id, " flash=1");
  if (m->window)
    g_string_append_printf (id, " window=%u,%u", m->window, m->global_every);
  if (m->dense_layers != 0)
    g_string_append_printf (id, " dense=%u,%u", m->dense_layers, m->dense_ffn);
  if (m->moe_every > 1)
    g_string_append_printf (id, " moe_every=%u,%u", m->moe_every, m->dense_ffn);
  if (m->kv_lora != 0)
    g_string_append_printf (id, " mla=%u,%u,%u,%u", m->kv_lora, m->q_lora, m->qk_rope, m->v_head);
  if (m->mtp != 0)
    g_string_append_printf (id, " mtp=%u", m->mtp);
  /* Searches before the uneven split enumerated fewer pipelines: their
   * shards do not merge with these. */
  g_string_append (id, s->even_stages ? " stages=even" : " stages=split");
  if (s->ddp != PLAN_DDP_AUTO)
    g_string_append (id, s->ddp == PLAN_DDP_TORCH ? " ddp=torch" : " ddp=local");
  g_string_append (id, " price=");
  for (guint i = 0; s->configs[i]; i++)
    g_string_append_printf (id, "%s%.17g", i ? "," : "", s->price ? s->price[i] : 0);
  const PlanList *lists[] = { &s->gpus, &s->tp, &s->pp, &s->v, &s->zero, &s->ckpt, &s->mbs, &s->sp, &s->ep, &s->cp };
  const char *names[] = { "gpus", "tp", "pp", "v", "zero", "ckpt", "mbs", "sp", "ep", "cp" };
  for (guint k = 0; k < G_N_ELEMENTS (lists); k++)
    {
      if ((lists[k] == &s->ep || lists[k] == &s->cp) && lists[k]->n == 0)
        continue;   /* only when given: parts of searches before --ep or --cp still merge */
      g_string_append_printf (id, " %s=", names[k]);
      for (guint i = 0; i < lists[k]->n; i++)
        g_string_append_printf (id, "%s%u", i ? "," : "", lists[k]->v[i]);
    }
  return g_string_free (id, FALSE);
}

PlanResult *
plan_run (const PlanSearch *s, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  guint n_cfgs = g_strv_length (s->configs);
  VsConfig **cfgs = g_new0 (VsConfig *, n_cfgs + 1);
  PlanResult *r = g_new0 (PlanResult, 1);
  r->config_names = g_new0 (char *, n_cfgs + 1);
  r->shard_k = s->shard_k, r->shard_n = s->shard_n;
  r->identity = search_identity (s);
  r->params = plan_param_count (&s->model);
  r->active_params = s->model.experts ? plan_active_param_count (&s->model) : 0;
  r->warnings = g_strdupv (s->warnings);
  r->layouts = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_layout_free);
  gboolean ok = TRUE;
  for (guint i = 0; i < n_cfgs && ok; i++)
    {
      cfgs[i] = config_load (s->configs[i], NULL, error);
      ok = cfgs[i] != NULL;
      if (ok)
        r->config_names[i] = g_strdup (cfgs[i]->name);
    }
  g_autofree char *tmpdir = ok ? g_dir_make_tmp ("vramsim-plan-XXXXXX", error) : NULL;
  ok = ok && tmpdir != NULL;
  if (ok)
    {
      Enum en = { s, cfgs, n_cfgs, r->layouts, 0 };
      enumerate (&en);
      r->searched = r->layouts->len;
      if (en.all == 0)
        {
          g_set_error (error, VS_PLAN_ERROR, 0,
                       "plan: no layout to search: no tp x pp x dp of the --gpus divides the model (%u layers, %u "
                       "heads, hidden %u) and the global batch (%" G_GUINT64_FORMAT ") into micro-batches",
                       s->model.layers, s->model.heads, s->model.hidden, s->global_batch);
          ok = FALSE;
        }
    }
  if (ok)
    {
      /* One replay per rank-0 trace. */
      g_autoptr (GHashTable) first = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_autoptr (GPtrArray) todo = g_ptr_array_new ();
      g_autoptr (GPtrArray) dups = g_ptr_array_new ();
      for (guint i = 0; i < r->layouts->len; i++)
        {
          PlanLayout *l = r->layouts->pdata[i];
          char *key = layout_key (l);
          PlanLayout *f = g_hash_table_lookup (first, key);
          if (f)
            {
              g_ptr_array_add (dups, l);
              g_ptr_array_add (dups, f);
              g_free (key);
            }
          else
            {
              g_hash_table_insert (first, key, l);
              g_ptr_array_add (todo, l);
            }
        }
      Pool pool = { s, cfgs, tmpdir, todo, { 0 }, 0, 0, 0 };
      g_mutex_init (&pool.lock);
      VsStopSignals old_sig;
      stopsig_install (&old_sig);
      run_pool (&pool, s->n_threads ? s->n_threads : g_get_num_processors (), s->progress);
      /* Nothing fits: replay the pruned layouts, least bound first, until
       * no bound is below the least demand found, so that the missing
       * memory is the replay's. */
      gboolean any = vs_stop_signal != 0;
      for (guint i = 0; i < todo->len; i++)
        any |= ((PlanLayout *) todo->pdata[i])->fits;
      if (!any)
        {
          g_autoptr (GPtrArray) pruned = g_ptr_array_new ();
          for (guint i = 0; i < todo->len; i++)
            if (!((PlanLayout *) todo->pdata[i])->replayed && !((PlanLayout *) todo->pdata[i])->error)
              g_ptr_array_add (pruned, todo->pdata[i]);
          guint64 best = G_MAXUINT64;
          for (guint i = 0; i < todo->len; i++)
            if (((PlanLayout *) todo->pdata[i])->replayed)
              best = MIN (best, ((PlanLayout *) todo->pdata[i])->peak);
          while (pruned->len)
            {
              guint k = 0;
              for (guint i = 1; i < pruned->len; i++)
                {
                  PlanLayout *a = pruned->pdata[i], *b = pruned->pdata[k];
                  if (a->peak < b->peak || (a->peak == b->peak && a->index < b->index))
                    k = i;
                }
              PlanLayout *l = pruned->pdata[k];
              if (l->peak >= best)
                break;
              g_free (l->bound);
              l->bound = NULL;
              if (l->floor == 0)
                {
                  /* Pruned by its states: its live peak first (a higher
                   * floor, no replay), then it takes its turn again. */
                  evaluate (&pool, l, 0, EVAL_LIVE_FLOOR);
                  if (l->error)
                    g_ptr_array_remove_index (pruned, k);
                  continue;
                }
              g_ptr_array_remove_index (pruned, k);
              /* The replay carries on past the capacity (keep_going). */
              evaluate (&pool, l, 0, EVAL_FORCE);
              if (l->replayed)
                best = MIN (best, l->peak);
            }
        }
      g_mutex_clear (&pool.lock);
      stopsig_restore (&old_sig);
      if (vs_stop_signal)
        {
          g_set_error (error, VS_PLAN_ERROR, PLAN_ERROR_INTERRUPTED, "plan: interrupted (signal %d) after %u of %u "
                       "layouts; nothing written", (int) vs_stop_signal, pool.done, todo->len);
          ok = FALSE;
        }
      for (guint i = 0; i < dups->len; i += 2)
        {
          PlanLayout *d = dups->pdata[i], *f = dups->pdata[i + 1];
          d->replayed = f->replayed, d->floor = f->floor, d->fits = f->fits, d->peak = f->peak, d->capacity = f->capacity;
          d->peak_stage = f->peak_stage;
          d->step_ns = f->step_ns, d->bound = g_strdup (f->bound), d->error = g_strdup (f->error);
          r->cached++;
        }
      r->replays = pool.replays;
      for (guint i = 0; i < r->layouts->len; i++)
        {
          PlanLayout *l = r->layouts->pdata[i];
          layout_figures (s, l);
          if (l->fits && l->step_ns > 0)
            {
              double executed, model;
              plan_step_flops (&s->model, s->global_batch, l->ckpt, &executed, &model);
              l->mfu = model / (l->step_ns * 1e-9) / l->gpus / 1e12 / peak_tflops (cfgs[l->config], s->model.precision);
            }
        }
    }
  if (tmpdir)
    outfile_remove_tmpdir (tmpdir);
  for (guint i = 0; i < n_cfgs; i++)
    if (cfgs[i])
      config_free (cfgs[i]);
  g_free (cfgs);
  if (!ok)
    {
      plan_result_free (r);
      return NULL;
    }
  r->wall_s = (g_get_monotonic_time () - t0) / 1e6;
  return r;
}

static gint
cmp_time (const PlanLayout *a, const PlanLayout *b)
{
  return (a->step_ns > b->step_ns) - (a->step_ns < b->step_ns);
}

static PlanObjective rank_objective;

static gint
layout_cmp (gconstpointer pa, gconstpointer pb)
{
  const PlanLayout *a = *(PlanLayout *const *) pa, *b = *(PlanLayout *const *) pb;
  gboolean fa = a->fits && !a->error, fb = b->fits && !b->error;
  if (fa != fb)
    return fb - fa;
  gint c = 0;
  if (fa)
    {
      if (rank_objective == PLAN_BY_COST && a->cost_per_step >= 0 && b->cost_per_step >= 0)
        c = (a->cost_per_step > b->cost_per_step) - (a->cost_per_step < b->cost_per_step);
      if (c == 0)
        c = cmp_time (a, b);
    }
  else
    {
      gboolean ea = a->error != NULL, eb = b->error != NULL;
      if (ea != eb)
        return ea - eb;
      guint64 ma = a->peak > a->capacity ? a->peak - a->capacity : 0, mb = b->peak > b->capacity ? b->peak - b->capacity : 0;
      c = (ma > mb) - (ma < mb);
    }
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

void
plan_rank (PlanResult *r, PlanObjective objective)
{
  /* qsort is not reentrant over a global, but ranking runs once, after
   * the threads. */
  rank_objective = objective;
  g_ptr_array_sort (r->layouts, layout_cmp);
}
