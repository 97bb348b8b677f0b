/* cmd-plan.c — `vramsim plan`: options in, plan_run / plan_merge out
 * (docs/plan.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "plan/plan.h"

/* "1,2,4" or "A-B" (A, 2A, 4A, ... up to B) into L. FALSE on anything else. */
static gboolean
parse_list (const char *s, PlanList *l, gboolean allow_zero)
{
  l->n = 0;
  if (s == NULL || *s == '\0')
    return FALSE;
  g_auto (GStrv) parts = g_strsplit (s, ",", -1);
  for (guint i = 0; parts[i]; i++)
    {
      char *end;
      const char *p = parts[i];
      if (!g_ascii_isdigit (p[0]))
        return FALSE;
      guint64 a = g_ascii_strtoull (p, &end, 10), b = a;
      if (*end == '-')
        {
          const char *q = end + 1;
          if (!g_ascii_isdigit (q[0]))
            return FALSE;
          b = g_ascii_strtoull (q, &end, 10);
          if (a == 0 || b < a)
            return FALSE;
        }
      if (*end != '\0' || b > 10000000 || (a == 0 && !allow_zero))
        return FALSE;
      for (guint64 v = a; v <= b; v = v ? v * 2 : b + 1)
        {
          if (l->n >= PLAN_MAX_VALUES)
            return FALSE;
          gboolean dup = FALSE;
          for (guint k = 0; k < l->n; k++)
            dup |= l->v[k] == v;
          if (!dup)
            l->v[l->n++] = (guint) v;
          if (v == b)
            break;
        }
    }
  return l->n > 0;
}

static gboolean
parse_names (const char *s, PlanList *l, const char *const *names, guint n_names)
{
  l->n = 0;
  g_auto (GStrv) parts = g_strsplit (s, ",", -1);
  for (guint i = 0; parts[i]; i++)
    {
      guint k = 0;
      while (k < n_names && strcmp (parts[i], names[k]) != 0)
        k++;
      if (k == n_names || l->n >= PLAN_MAX_VALUES)
        return FALSE;
      gboolean dup = FALSE;
      for (guint j = 0; j < l->n; j++)
        dup |= l->v[j] == k;
      if (!dup)
        l->v[l->n++] = k;
    }
  return l->n > 0;
}

/* A field of a Hugging Face config.json: *OUT unchanged when absent. */
static gboolean
hf_uint (const cJSON *root, const char *key, guint *out, const char *path, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (root, key);
  if (v == NULL || cJSON_IsNull (v))
    return TRUE;
  if (!cJSON_IsNumber (v) || v->valuedouble < 0 || v->valuedouble > 1e9 || v->valuedouble != (guint) v->valuedouble)
    {
      g_set_error (error, VS_PLAN_ERROR, 0, "%s: field \"%s\": expected a whole number", path, key);
      return FALSE;
    }
  *out = (guint) v->valuedouble;
  return TRUE;
}

/* The number field KEY of O, or -1 when absent or not a number. */
static double
hf_num (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  return cJSON_IsNumber (v) ? v->valuedouble : -1;
}

/* The string field KEY of O, or NULL when absent or not a string. */
static const char *
hf_str (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  return cJSON_IsString (v) ? v->valuestring : NULL;
}

/* Sliding-window attention from a config.json: sliding_window (unless
 * use_sliding_window is false, as Qwen's), on which layers layer_types
 * says ("sliding_attention" or "full_attention": every layer but each
 * N-th full, or all of them), else Gemma 3's sliding_window_pattern N,
 * Gemma 2's alternation (N = 2), or every layer (Mistral). A layer_types
 * of another pattern is said, and taken as full attention. */
static gboolean
read_window (const cJSON *root, const char *mt, SynthTrainOpts *m, GPtrArray *warn, const char *path, GError **error)
{
  if (!hf_uint (root, "sliding_window", &m->window, path, error))
    return FALSE;
  if (cJSON_IsFalse (cJSON_GetObjectItemCaseSensitive (root, "use_sliding_window")))
    m->window = 0;
  if (m->window == 0)
    return TRUE;
  const cJSON *types = cJSON_GetObjectItemCaseSensitive (root, "layer_types");
  if (cJSON_IsArray (types))
    {
      /* N is one past the first full layer; the layers before it are
       * sliding by then, those after are checked against it. */
      guint k = 0;
      gboolean regular = (guint) cJSON_GetArraySize (types) == m->layers;
      const cJSON *t;
      m->global_every = 0;
      cJSON_ArrayForEach (t, types)
        {
          gboolean full = !(cJSON_IsString (t) && strcmp (t->valuestring, "sliding_attention") == 0);
          if (full && m->global_every == 0)
            m->global_every = k + 1;
          if (m->global_every > 0)
            regular &= full == ((k + 1) % m->global_every == 0);
          k++;
        }
      if (!regular)
        {
          g_ptr_array_add (warn, g_strdup_printf ("--model %s: layer_types: not every N-th layer full and the rest "
                                                  "sliding; every layer is taken as full attention", path));
          m->window = m->global_every = 0;
        }
      return TRUE;
    }
  double pattern = 0;
  const cJSON *pv = cJSON_GetObjectItemCaseSensitive (root, "sliding_window_pattern");
  if (cJSON_IsNumber (pv))
    pattern = pv->valuedouble;
  if (pattern >= 1 && pattern <= 1e6)
    m->global_every = (guint) pattern;
  else if (mt && g_str_has_prefix (mt, "gemma2"))
    m->global_every = 2;
  return TRUE;
}

/* --model FILE: hidden_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads, intermediate_size, vocab_size, num_local_experts
 * (or Qwen's num_experts, DeepSeek's n_routed_experts), num_experts_per_tok,
 * moe_intermediate_size (an expert's inner size), the shared expert's size
 * (shared_expert_intermediate_size, or n_shared_experts times the
 * experts'), head_dim and tie_word_embeddings (false: an LM head of its
 * own); those of text_config when the top level has no hidden_size (a
 * vision-language model's language model). A gated MLP for hidden_act
 * silu or swiglu (Llama, Mistral, Mixtral, Qwen, Phi-3, DeepSeek) and for
 * Gemma (GeGLU). What the generator does not model goes to WARN (stderr
 * and the JSON's warnings[]), and the answer stands for the rest
 * (docs/plan.md). Values the command line gives win. */
static gboolean
read_model (const char *path, SynthTrainOpts *m, GPtrArray *warn, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  cJSON *top = cJSON_Parse (text);
  if (!cJSON_IsObject (top))
    {
      g_set_error (error, VS_PLAN_ERROR, 0, "%s: not a JSON object (a Hugging Face config.json)", path);
      cJSON_Delete (top);
      return FALSE;
    }
  const cJSON *root = top, *tc = cJSON_GetObjectItemCaseSensitive (top, "text_config");
  if (cJSON_GetObjectItemCaseSensitive (top, "hidden_size") == NULL && cJSON_IsObject (tc))
    {
      root = tc;
      g_ptr_array_add (warn, g_strdup_printf ("--model %s: the language model of text_config; its vision tower (if "
                                              "any) is not modeled", path));
    }
  const char *experts_key = cJSON_GetObjectItemCaseSensitive (root, "num_local_experts") ? "num_local_experts"
                            : cJSON_GetObjectItemCaseSensitive (root, "num_experts")    ? "num_experts"
                                                                                         : "n_routed_experts";
  guint moe_ffn = 0;
  gboolean ok = hf_uint (root, "hidden_size", &m->hidden, path, error)
                && hf_uint (root, "num_hidden_layers", &m->layers, path, error)
                && hf_uint (root, "num_attention_heads", &m->heads, path, error)
                && hf_uint (root, "num_key_value_heads", &m->kv_heads, path, error)
                && hf_uint (root, "intermediate_size", &m->ffn, path, error)
                && hf_uint (root, "vocab_size", &m->vocab, path, error)
                && hf_uint (root, experts_key, &m->experts, path, error)
                && hf_uint (root, "num_experts_per_tok", &m->top_k, path, error)
                && hf_uint (root, "moe_intermediate_size", &moe_ffn, path, error)
                && hf_uint (root, "head_dim", &m->head_dim, path, error)
                && hf_uint (root, "kv_lora_rank", &m->kv_lora, path, error)
                && hf_uint (root, "num_nextn_predict_layers", &m->mtp, path, error);
  if (ok && m->mtp > 16)
    {
      g_set_error (error, VS_PLAN_ERROR, 0, "%s: num_nextn_predict_layers %u: at most 16 modules are modeled", path, m->mtp);
      ok = FALSE;
    }
  /* Latent attention (DeepSeek-V2/V3): a head's non-rotary QK part is the
   * generator's head_dim. */
  if (ok && m->kv_lora > 0)
    ok = hf_uint (root, "q_lora_rank", &m->q_lora, path, error)
         && hf_uint (root, "qk_rope_head_dim", &m->qk_rope, path, error)
         && hf_uint (root, "v_head_dim", &m->v_head, path, error)
         && hf_uint (root, "qk_nope_head_dim", &m->head_dim, path, error);
  const char *act = hf_str (root, "hidden_act") ? hf_str (root, "hidden_act") : hf_str (root, "hidden_activation");
  const char *mt = hf_str (root, "model_type") ? hf_str (root, "model_type") : hf_str (top, "model_type");
  if (ok && ((act && (strcmp (act, "silu") == 0 || strcmp (act, "swiglu") == 0)) || (mt && g_str_has_prefix (mt, "gemma"))))
    m->gated_mlp = TRUE;
  if (ok && (m->hidden == 0 || m->layers == 0 || m->heads == 0))
    {
      g_set_error (error, VS_PLAN_ERROR, 0, "%s: needs hidden_size, num_hidden_layers and num_attention_heads%s", path,
                   cJSON_IsObject (tc) ? " (at its top level or in text_config)" : "");
      ok = FALSE;
    }
  if (ok && m->experts > 0 && moe_ffn > 0)
    {
      /* The experts' inner size; intermediate_size is a dense layer's, as
       * DeepSeek's first first_k_dense_replace layers are. */
      m->dense_ffn = m->ffn;
      m->ffn = moe_ffn;
    }
  /* Dense layers among the MoE ones: DeepSeek's first first_k_dense_replace;
   * between them, Qwen-MoE's decoder_sparse_step and Llama 4's
   * interleave_moe_layer_step (MoE on every N-th, dense layers of
   * intermediate_size_mlp for Llama 4, its experts of intermediate_size). */
  if (ok && m->experts > 0)
    ok = hf_uint (root, "first_k_dense_replace", &m->dense_layers, path, error)
         && hf_uint (root, "decoder_sparse_step", &m->moe_every, path, error)
         && hf_uint (root, "interleave_moe_layer_step", &m->moe_every, path, error)
         && hf_uint (root, "intermediate_size_mlp", &m->dense_ffn, path, error);
  if (ok && m->moe_every == 1)
    m->moe_every = 0;
  if (ok && m->dense_layers == 0 && m->moe_every == 0)
    m->dense_ffn = 0;
  if (ok)
    {
      const cJSON *tie = cJSON_GetObjectItemCaseSensitive (root, "tie_word_embeddings");
      if (!cJSON_IsBool (tie))
        tie = cJSON_GetObjectItemCaseSensitive (top, "tie_word_embeddings");
      if (cJSON_IsFalse (tie))
        m->untied = TRUE;
      /* Shared experts: Qwen's one of shared_expert_intermediate_size,
       * DeepSeek's n_shared_experts of the routed experts' size. */
      double sz = hf_num (root, "shared_expert_intermediate_size"), ns = hf_num (root, "n_shared_experts");
      double shared = sz > 0 ? sz : ns > 0 ? ns * m->ffn : 0;
      /* Llama 4's MoE layers run a shared expert of the experts' size
       * (transformers' Llama4TextMoe), which its config does not name. */
      if (mt && g_str_has_prefix (mt, "llama4") && shared <= 0)
        shared = m->ffn;
      if (m->experts > 0 && shared > 0 && shared < 1e9)
        m->shared_ffn = (guint) shared;
      /* What the generator leaves out, said so that the answer is read
       * for what it is. */
      const cJSON *only = cJSON_GetObjectItemCaseSensitive (root, "mlp_only_layers");
      if (m->experts > 0 && cJSON_IsArray (only) && cJSON_GetArraySize (only) > 0)
        g_ptr_array_add (warn, g_strdup_printf ("--model %s: mlp_only_layers: those layers are taken as MoE", path));
      if (m->experts > 0 && hf_num (root, "moe_layer_freq") > 1)
        g_ptr_array_add (warn, g_strdup_printf ("--model %s: moe_layer_freq: every layer after the first "
                                                "first_k_dense_replace is taken as MoE", path));
    }
  if (ok)
    ok = read_window (root, mt, m, warn, path, error);
  if (ok && (m->kv_heads == m->heads || m->kv_lora > 0))
    m->kv_heads = 0;
  if (ok && m->head_dim * m->heads == m->hidden)
    m->head_dim = 0;   /* hidden / heads: GPT's shape when the rest is */
  if (ok && m->ffn == 4 * m->hidden && !m->gated_mlp)
    m->ffn = 0;
  cJSON_Delete (top);
  return ok;
}

/* --price PRESET=USD,... into PRICE (per config name as given). */
static gboolean
parse_prices (char **prices, char **configs, double *price, char **bad)
{
  for (guint i = 0; prices && prices[i]; i++)
    {
      g_auto (GStrv) parts = g_strsplit (prices[i], ",", -1);
      for (guint k = 0; parts[k]; k++)
        {
          char *eq = strchr (parts[k], '=');
          char *end = NULL;
          double v = eq ? g_ascii_strtod (eq + 1, &end) : 0;
          if (eq == NULL || end == eq + 1 || *end != '\0' || !(v > 0))
            {
              *bad = g_strdup (parts[k]);
              return FALSE;
            }
          *eq = '\0';
          gboolean found = FALSE;
          for (guint c = 0; configs[c]; c++)
            if (strcmp (configs[c], parts[k]) == 0)
              price[c] = v, found = TRUE;
          if (!found)
            {
              *eq = '=';
              *bad = g_strdup (parts[k]);
              return FALSE;
            }
        }
    }
  return TRUE;
}

int
cmd_plan (int argc, char **argv)
{
  g_auto (GStrv) configs = NULL, prices = NULL, rest = NULL;
  g_autofree char *epl = NULL, *model = NULL, *precision = NULL, *optimizer = NULL, *gpus = NULL, *tp = NULL, *pp = NULL,
                  *vst = NULL, *zero = NULL, *ckpt = NULL, *mbs = NULL, *sp = NULL, *format = NULL, *objective = NULL,
                  *shard = NULL, *cpl = NULL, *ddp = NULL;
  gint layers = -1, hidden = -1, heads = -1, kv_heads = -1, ffn = -1, seq = 2048, vocab = -1, experts = -1, top_k = -1;
  gint head_dim = -1, shared_ffn = -1, dense_layers = -1, dense_ffn = -1, moe_every = -1, mtp = -1;
  gint kv_lora = -1, q_lora = -1, qk_rope = -1, v_head = -1;
  gint jobs = 0, top = -1;
  gint64 batch = 0;
  gint window = -1, global_every = -1;
  gboolean gated = FALSE, untied = FALSE, flash = FALSE, merge = FALSE, progress = FALSE, no_progress = FALSE;
  gboolean even_stages = FALSE;
  GOptionEntry entries[] = {
    { "model", 0, 0, G_OPTION_ARG_FILENAME, &model, "A Hugging Face config.json for the shape (the flags below override it)", "FILE" },
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers, "Transformer layers", "L" },
    { "hidden", 0, 0, G_OPTION_ARG_INT, &hidden, "Hidden size", "H" },
    { "heads", 0, 0, G_OPTION_ARG_INT, &heads, "Attention heads", "A" },
    { "kv-heads", 0, 0, G_OPTION_ARG_INT, &kv_heads, "Key/value heads (grouped-query attention; default: --heads)", "N" },
    { "ffn", 0, 0, G_OPTION_ARG_INT, &ffn, "MLP inner size (default 4 x hidden)", "F" },
    { "head-dim", 0, 0, G_OPTION_ARG_INT, &head_dim,
      "Size of an attention head (default hidden / heads); with --kv-lora-rank its non-rotary QK part", "D" },
    { "kv-lora-rank", 0, 0, G_OPTION_ARG_INT, &kv_lora, "Multi-head latent attention: the K/V latent's rank (0 = none)", "R" },
    { "q-lora-rank", 0, 0, G_OPTION_ARG_INT, &q_lora, "Latent attention: Q's latent rank (0 = Q straight from x)", "R" },
    { "qk-rope-head-dim", 0, 0, G_OPTION_ARG_INT, &qk_rope, "Latent attention: rotary QK dims a head adds (0)", "D" },
    { "v-head-dim", 0, 0, G_OPTION_ARG_INT, &v_head, "Latent attention: a head's V size (default: --head-dim)", "D" },
    { "gated", 0, 0, G_OPTION_ARG_NONE, &gated, "Gated MLP (SwiGLU: three weight matrices)", NULL },
    { "untied", 0, 0, G_OPTION_ARG_NONE, &untied, "The LM head is its own matrix, not the embedding's (tie_word_embeddings false)", NULL },
    { "flash-attn", 0, 0, G_OPTION_ARG_NONE, &flash,
      "Fused causal attention (FlashAttention, TE/cuDNN, SDPA): no scores in memory (default: materialized, Megatron-LM 2021's)", NULL },
    { "window", 0, 0, G_OPTION_ARG_INT, &window, "Sliding-window attention over the last W tokens (0 = none)", "W" },
    { "global-every", 0, 0, G_OPTION_ARG_INT, &global_every, "With --window: every N-th layer attends to the whole sequence (0 = none)", "N" },
    { "seq", 0, 0, G_OPTION_ARG_INT, &seq, "Sequence length (2048)", "S" },
    { "vocab", 0, 0, G_OPTION_ARG_INT, &vocab, "Vocabulary size (51200)", "V" },
    { "experts", 0, 0, G_OPTION_ARG_INT, &experts, "Experts per MoE layer; 0 = dense (0)", "E" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &top_k, "Experts each token is routed to (2)", "K" },
    { "shared-ffn", 0, 0, G_OPTION_ARG_INT, &shared_ffn, "MoE: inner size of a shared expert every token also runs (0 = none)", "S" },
    { "dense-layers", 0, 0, G_OPTION_ARG_INT, &dense_layers, "MoE: the first K layers are dense (first_k_dense_replace; 0)", "K" },
    { "moe-every", 0, 0, G_OPTION_ARG_INT, &moe_every, "MoE: only every N-th layer is MoE, the rest dense (1)", "N" },
    { "mtp", 0, 0, G_OPTION_ARG_INT, &mtp, "Multi-token prediction modules (num_nextn_predict_layers; 0)", "D" },
    { "dense-ffn", 0, 0, G_OPTION_ARG_INT, &dense_ffn, "MoE: the dense layers' MLP inner size (default 4 x hidden)", "F" },
    { "global-batch", 0, 0, G_OPTION_ARG_INT64, &batch, "Sequences per optimizer step (required)", "B" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision, "fp32, fp16, bf16, mixed or fp8 (mixed)", "P" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &optimizer, "adam or sgd (adam)", "OPT" },
    { "config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &configs, "Presets (or config files), comma-separated; may repeat", "CONFIG[,...]" },
    { "gpus", 0, 0, G_OPTION_ARG_STRING, &gpus, "GPU counts: 64,128,256, or A-B for A, 2A, 4A, ... up to B (required)", "N[,N...]" },
    { "tp", 0, 0, G_OPTION_ARG_STRING, &tp, "Tensor-parallel sizes to search (default: 1, 2, 4, ... up to a node's GPUs)", "LIST" },
    { "pp", 0, 0, G_OPTION_ARG_STRING, &pp,
      "Pipeline stages to search (default: every count dividing the GPUs a tensor group leaves that splits --layers, "
      "evenly or with fewer on the first and last stage)", "LIST" },
    { "cp", 0, 0, G_OPTION_ARG_STRING, &cpl,
      "Context-parallel sizes to search (default: 1; with --flash-attn and --seq 16384 or more: 1,2,4,8)", "LIST" },
    { "ddp", 0, 0, G_OPTION_ARG_STRING, &ddp,
      "Gradient reduction: auto (PyTorch DDP without a pipeline, Megatron's LocalDDP with one, as its 2021 scripts), "
      "torch (bucketed, overlapping the backward; Megatron-Core's --overlap-grad-reduce) or local (once after it) (auto)",
      "IMPL" },
    { "even-stages", 0, 0, G_OPTION_ARG_NONE, &even_stages,
      "Only pipelines whose stages (and chunks) split the layers evenly, as Megatron-LM before Megatron-Core", NULL },
    { "virtual-stages", 0, 0, G_OPTION_ARG_STRING, &vst, "Interleaved schedule's chunks per stage to search (1,2)", "LIST" },
    { "zero", 0, 0, G_OPTION_ARG_STRING, &zero, "ZeRO stages to search (0,1,2,3; 2 and 3 only without a pipeline)", "LIST" },
    { "checkpoint", 0, 0, G_OPTION_ARG_STRING, &ckpt, "Recomputation to search: none,selective,full (all three)", "LIST" },
    { "microbatch", 0, 0, G_OPTION_ARG_STRING, &mbs, "Micro-batch sizes to search (1,2,4,8)", "LIST" },
    { "ep", 0, 0, G_OPTION_ARG_STRING, &epl,
      "MoE: expert-parallel sizes to search (default: every power of two dividing dp and the experts, and min(dp, E))", "LIST" },
    { "sp", 0, 0, G_OPTION_ARG_STRING, &sp, "Sequence parallelism: on, off or both (both; on needs tp >= 2)", "on|off|both" },
    { "price", 0, 0, G_OPTION_ARG_STRING_ARRAY, &prices, "USD per GPU-hour of a preset: adds the cost per step and per million tokens; may repeat", "PRESET=USD[,...]" },
    { "objective", 0, 0, G_OPTION_ARG_STRING, &objective, "Rank by time (default) or cost (needs --price)", "time|cost" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "Print the K best layouts (text: 10; json and csv: all; 0: all)", "K" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "text (default), json or csv", "FMT" },
    { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Layouts at once (default: all processors)", "N" },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &progress, "Show progress on stderr even when it is not a terminal", NULL },
    { "no-progress", 0, 0, G_OPTION_ARG_NONE, &no_progress, "No progress, even on a terminal", NULL },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard, "Search only the K-th of N slices of the layouts (write --format json; join with --merge)", "K/N" },
    { "merge", 0, 0, G_OPTION_ARG_NONE, &merge, "Join the --shard JSON files given as arguments into the whole search's output", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- which parallel layout trains this model fastest, or cheapest");
  g_option_context_set_summary (ctx,
    "For a model, a global batch and a cluster (presets and GPU counts), enumerates\n"
    "layouts (tensor, pipeline and data parallelism, interleaving, ZeRO stage,\n"
    "sequence parallelism, recomputation, micro-batch), prunes them by memory and\n"
    "replays the generated rank-0 trace of each that may fit; prints them ranked,\n"
    "fitting layouts first.");
  g_option_context_set_description (ctx,
    "Examples:\n"
    "  vramsim plan --layers 48 --hidden 8192 --heads 64 --vocab 51200 --global-batch 1536 -c a100-80g --gpus 512\n"
    "  vramsim plan --model config.json --global-batch 1024 -c h100-sxm,a100-80g --gpus 64-512 --price h100-sxm=4,a100-80g=2 --objective cost\n"
    "  vramsim plan ... --shard 2/4 --format json > part-2.json;  vramsim plan --merge part-*.json\n"
    "Exit status: 0 done (also when nothing fits: the output says what is missing), 1 bad input, 2 bad usage,\n130 interrupted (nothing written).\n"
    "See docs/plan.md.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *err = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &err)
      || !g_option_context_parse (ctx, &argc, &argv, &err))
    {
      cmd_error ("plan: %s", err->message);
      g_error_free (err);
      return 2;
    }
  PlanFormat fmt = PLAN_FMT_TEXT;
  if (format && strcmp (format, "json") == 0)
    fmt = PLAN_FMT_JSON;
  else if (format && strcmp (format, "csv") == 0)
    fmt = PLAN_FMT_CSV;
  else if (format && strcmp (format, "text") != 0)
    {
      cmd_error ("plan: --format: expected text, json or csv, not '%s'", format);
      return 2;
    }
  PlanObjective obj = PLAN_BY_TIME;
  if (objective && strcmp (objective, "cost") == 0)
    obj = PLAN_BY_COST;
  else if (objective && strcmp (objective, "time") != 0)
    {
      cmd_error ("plan: --objective: expected time or cost, not '%s'", objective);
      return 2;
    }
  if (top < -1 || (top == -1 && fmt != PLAN_FMT_TEXT))
    top = top < -1 ? -2 : 0;
  if (top == -2)
    {
      cmd_error ("plan: --top: expected 0 or more");
      return 2;
    }
  guint ntop = top == -1 ? 10 : (guint) top;
  gboolean tty = isatty (STDERR_FILENO);

  if (merge)
    {
      if (rest == NULL || rest[0] == NULL)
        {
          cmd_error ("plan: --merge needs the shard files (vramsim plan --merge part-*.json)");
          return 2;
        }
      if (shard || configs || gpus || batch)
        {
          cmd_error ("plan: --merge takes only shard files, --format, --top and --objective: the search's options are "
                     "in them");
          return 2;
        }
      g_autoptr (PlanResult) r = plan_merge (rest, &err);
      if (r == NULL)
        {
          cmd_error ("plan: %s", err->message);
          g_error_free (err);
          return 1;
        }
      plan_rank (r, obj);
      gboolean priced = plan_merged_priced (rest);
      g_autofree char *out = plan_format (r, NULL, fmt, ntop, priced);
      fputs (out, stdout);
      return 0;
    }
  if (rest && rest[0])
    {
      cmd_error ("plan: unexpected argument '%s' (files only with --merge)", rest[0]);
      return 2;
    }

  PlanSearch s = { 0 };
  SynthTrainOpts *m = &s.model;
  m->vocab = 51200, m->precision = SYNTH_PREC_MIXED, m->optimizer = SYNTH_OPT_ADAM, m->top_k = 2;
  g_autoptr (GPtrArray) warn = g_ptr_array_new_with_free_func (g_free);
  if (model && !read_model (model, m, warn, &err))
    {
      cmd_error ("plan: --model %s", err->message);
      g_error_free (err);
      return 1;
    }
  /* A config.json describes a model of today's frameworks, whose
   * attention is fused. */
  if (model && !flash)
    g_ptr_array_add (warn, g_strdup ("attention is Megatron-LM 2021's, its scores materialized in memory; frameworks "
                                     "now fuse it (FlashAttention, cuDNN, PyTorch SDPA): give --flash-attn for that"));
  /* Said now, and kept in the JSON (warnings[]). */
  for (guint i = 0; i < warn->len; i++)
    fprintf (stderr, "vramsim: plan: %s\n", (const char *) warn->pdata[i]);
  g_ptr_array_add (warn, NULL);
  s.warnings = (char **) warn->pdata;
  if (layers != -1) m->layers = layers;
  if (hidden != -1) m->hidden = hidden;
  if (heads != -1) m->heads = heads;
  if (kv_heads != -1) m->kv_heads = kv_heads;
  if (head_dim != -1) m->head_dim = head_dim;
  if (ffn != -1) m->ffn = ffn;
  if (vocab != -1) m->vocab = vocab;
  if (experts != -1) m->experts = experts;
  if (top_k != -1) m->top_k = top_k;
  if (shared_ffn != -1) m->shared_ffn = shared_ffn;
  if (dense_layers != -1) m->dense_layers = dense_layers;
  if (dense_ffn != -1) m->dense_ffn = dense_ffn;
  if (moe_every != -1) m->moe_every = moe_every > 1 ? moe_every : 0;
  if (mtp != -1) m->mtp = (guint) mtp;
  if (kv_lora != -1) m->kv_lora = kv_lora;
  if (q_lora != -1) m->q_lora = q_lora;
  if (qk_rope != -1) m->qk_rope = qk_rope;
  if (v_head != -1) m->v_head = v_head;
  if (gated) m->gated_mlp = TRUE;
  if (untied) m->untied = TRUE;
  if (flash) m->flash_attn = TRUE;
  if (window != -1) m->window = window;
  if (global_every != -1) m->global_every = global_every;
  m->seq = seq > 0 ? (guint) seq : 0;
  if (m->experts == 0)
    m->top_k = 0;
  if (layers < -1 || hidden < -1 || heads < -1 || kv_heads < -1 || ffn < -1 || vocab < -1 || experts < -1 || top_k < -1
      || head_dim < -1 || shared_ffn < -1 || dense_layers < -1 || dense_ffn < -1 || moe_every < -1 || window < -1 || global_every < -1 || kv_lora < -1 || q_lora < -1 || qk_rope < -1 || v_head < -1 || mtp < -1 || mtp > 16)
    {
      cmd_error ("plan: the shape's sizes are positive (--mtp at most 16)");
      return 2;
    }
  if (m->layers == 0 || m->hidden == 0 || m->heads == 0 || m->seq == 0)
    {
      cmd_error ("plan: the model needs --layers, --hidden and --heads (or --model FILE) and a positive --seq");
      return 2;
    }
  if ((m->head_dim == 0 && m->hidden % m->heads) || (m->kv_heads && (m->kv_heads > m->heads || m->heads % m->kv_heads))
      || (m->experts && (m->top_k < 1 || m->top_k > m->experts)) || (m->shared_ffn && !m->experts)
      || (m->kv_lora == 0 && (m->q_lora || m->qk_rope || m->v_head)) || (m->kv_lora && m->kv_heads)
      || ((m->dense_layers || m->dense_ffn || m->moe_every) && !m->experts) || m->dense_layers > m->layers
      || (m->global_every && !m->window))
    {
      cmd_error ("plan: --hidden must be a multiple of --heads (unless --head-dim is given), --kv-heads divide --heads, "
                 "--top-k be 1..experts, --shared-ffn, --dense-layers (at most --layers) and --moe-every go with --experts, --q-lora-rank, --qk-rope-head-dim and "
                 "--v-head-dim with --kv-lora-rank (which takes no --kv-heads), --global-every with --window");
      return 2;
    }
  if (batch < 1)
    {
      cmd_error ("plan: --global-batch B (sequences per optimizer step) is required");
      return 2;
    }
  s.global_batch = (guint64) batch;
  if (precision && !synth_precision_from_name (precision, &m->precision))
    {
      cmd_error ("plan: --precision: expected fp32, fp16, bf16, mixed or fp8, not '%s'", precision);
      return 2;
    }
  if (optimizer && strcmp (optimizer, "adam") != 0 && strcmp (optimizer, "sgd") != 0)
    {
      cmd_error ("plan: --optimizer: expected adam or sgd, not '%s'", optimizer);
      return 2;
    }
  m->optimizer = optimizer && strcmp (optimizer, "sgd") == 0 ? SYNTH_OPT_SGD : SYNTH_OPT_ADAM;
  if (configs == NULL)
    {
      cmd_error ("plan: -c PRESET is required (the GPUs to plan on)");
      return 2;
    }
  g_autoptr (GPtrArray) cl = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; configs[i]; i++)
    {
      g_auto (GStrv) parts = g_strsplit (configs[i], ",", -1);
      for (guint k = 0; parts[k]; k++)
        if (*parts[k])
          g_ptr_array_add (cl, g_strdup (parts[k]));
    }
  g_ptr_array_add (cl, NULL);
  s.configs = (char **) cl->pdata;
  if (!gpus || !parse_list (gpus, &s.gpus, FALSE))
    {
      cmd_error ("plan: --gpus: expected GPU counts, as 64,128,256 or 64-512, not '%s'", gpus ? gpus : "");
      return 2;
    }
  static const char *ck_names[] = { "none", "selective", "full" };
  static const char *sp_none[] = { "off", "on" };
  struct { const char *arg, *name; PlanList *l; gboolean zero_ok; } lists[] = {
    { tp, "--tp", &s.tp, FALSE }, { pp, "--pp", &s.pp, FALSE }, { vst, "--virtual-stages", &s.v, FALSE },
    { zero, "--zero", &s.zero, TRUE }, { mbs, "--microbatch", &s.mbs, FALSE }, { epl, "--ep", &s.ep, FALSE },
    { cpl, "--cp", &s.cp, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    if (lists[i].arg && !parse_list (lists[i].arg, lists[i].l, lists[i].zero_ok))
      {
        cmd_error ("plan: %s: expected a list of sizes (1,2,4 or 1-8), not '%s'", lists[i].name, lists[i].arg);
        return 2;
      }
  for (guint i = 0; i < s.zero.n; i++)
    if (s.zero.v[i] > 3)
      {
        cmd_error ("plan: --zero: stages are 0-3, not %u", s.zero.v[i]);
        return 2;
      }
  for (guint i = 0; i < s.cp.n; i++)
    {
      SynthTrainOpts cpo = *m;
      cpo.cp = s.cp.v[i];
      g_autoptr (GError) cp_err = NULL;
      if (!synth_train_check_cp (&cpo, &cp_err))
        {
          cmd_error ("plan: %s", cp_err->message + strlen ("transformer-train: "));
          return 2;
        }
    }
  if (s.ep.n && !m->experts)
    {
      cmd_error ("plan: --ep goes with an MoE model (--experts, or a config.json's experts)");
      return 2;
    }
  {
    /* A shape the generator cannot count, at the largest micro-batch searched. */
    SynthTrainOpts big = *m;
    big.batch = 8;
    for (guint i = 0; i < s.mbs.n; i++)
      big.batch = i ? MAX (big.batch, s.mbs.v[i]) : s.mbs.v[i];
    g_autoptr (GError) size_err = NULL;
    if (!synth_train_check_size (&big, &size_err))
      {
        cmd_error ("plan: %s", size_err->message);
        return 2;
      }
  }
  if (ckpt && !parse_names (ckpt, &s.ckpt, ck_names, 3))
    {
      cmd_error ("plan: --checkpoint: expected none, selective and/or full, not '%s'", ckpt);
      return 2;
    }
  if (sp && strcmp (sp, "both") != 0 && !parse_names (sp, &s.sp, sp_none, 2))
    {
      cmd_error ("plan: --sp: expected on, off or both, not '%s'", sp);
      return 2;
    }
  guint n_cfg = cl->len - 1;
  g_autofree double *price = g_new0 (double, n_cfg + 1);
  g_autofree char *bad = NULL;
  if (!parse_prices (prices, s.configs, price, &bad))
    {
      cmd_error ("plan: --price: expected PRESET=USD_PER_GPU_HOUR for a preset given to -c, not '%s'", bad);
      return 2;
    }
  gboolean priced = prices != NULL;
  if (obj == PLAN_BY_COST && !priced)
    {
      cmd_error ("plan: --objective cost needs --price PRESET=USD_PER_GPU_HOUR");
      return 2;
    }
  s.price = price;
  if (shard)
    {
      if (sscanf (shard, "%u/%u", &s.shard_k, &s.shard_n) != 2 || s.shard_k < 1 || s.shard_k > s.shard_n
          || !g_ascii_isdigit (shard[0]))
        {
          cmd_error ("plan: --shard %s: expected K/N with 1 <= K <= N", shard);
          return 2;
        }
      if (fmt != PLAN_FMT_JSON)
        {
          cmd_error ("plan: --shard writes what --merge reads: add --format json");
          return 2;
        }
    }
  if (jobs < 0)
    {
      cmd_error ("plan: -j: expected 1 or more");
      return 2;
    }
  s.n_threads = (guint) jobs;
  s.even_stages = even_stages;
  if (ddp && strcmp (ddp, "auto") != 0 && strcmp (ddp, "torch") != 0 && strcmp (ddp, "local") != 0)
    {
      cmd_error ("plan: --ddp: expected auto, torch or local, not '%s'", ddp);
      return 2;
    }
  s.ddp = !ddp || strcmp (ddp, "auto") == 0 ? PLAN_DDP_AUTO : strcmp (ddp, "torch") == 0 ? PLAN_DDP_TORCH : PLAN_DDP_LOCAL;
  s.progress = !no_progress && (progress || tty);
  g_autoptr (PlanResult) r = plan_run (&s, &err);
  if (r == NULL)
    {
      int code = g_error_matches (err, VS_PLAN_ERROR, PLAN_ERROR_INTERRUPTED) ? 130 : 1;
      cmd_error ("%s", err->message);
      g_error_free (err);
      return code;
    }
  /* What the search added to the model's warnings. */
  for (guint i = g_strv_length (s.warnings); r->warnings && i < g_strv_length (r->warnings); i++)
    fprintf (stderr, "vramsim: plan: %s\n", r->warnings[i]);
  plan_rank (r, obj);
  g_autofree char *out = plan_format (r, &s, fmt, ntop, priced);
  fputs (out, stdout);
  if (s.progress)
    fprintf (stderr, "vramsim: plan: %u layouts, %u replays in %.1f s\n", r->searched, r->replays, r->wall_s);
  return 0;
}
