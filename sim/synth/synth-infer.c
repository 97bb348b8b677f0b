/* synth-infer.c — `vramsim synth llm-infer`: batched autoregressive decoding
 * with a KV cache (docs/workloads.md).
 *
 * Assumptions:
 * - Weights: per layer 2·h² for the Q and O projections, 2·h·kv_heads·
 *   head_dim for K and V, 8·h² for the MLP (12·h² without grouped-query
 *   attention; 2·h·F with --ffn F, 3·h·F --gated), and a vocab·h
 *   embedding tied with the LM head; --params overrides the count (spread
 *   over the layers, no embedding).
 * - KV cache: 2 · layers · kv_heads · head_dim · kv_bytes per token per
 *   sequence; with latent attention (--kv-lora-rank R, --qk-rope-head-dim
 *   D) layers · (R + D) · kv_bytes, the latent and the rotary key every
 *   head shares (DeepSeek-V2, section 2.1), which decode attends to with
 *   the up projections absorbed: 2·heads·(2R + D) FLOPs a context token
 *   (scores on R + D dims, the output on R). Paged (--kv-block N): one allocation per block of N token
 *   slots for the whole batch, allocated when the context first needs it
 *   (vLLM-style). --kv-block 0: one contiguous cache, reallocated and copied
 *   (d2d) for every new token (the naive torch.cat pattern).
 * - MoE (--experts E --top-k K, with --ffn F and --gated): a layer holds
 *   E experts of the MLP and a router of h·E; its FLOPs are those of K
 *   experts a token, and a step over T tokens reads the experts they are
 *   expected to reach if routed uniformly and independently,
 *   E·(1 - (1 - K/E)^T) (all of them in a long prefill, K at batch 1).
 * - Tensor parallelism (--tp T, Megatron's layout as vLLM and TensorRT-LLM
 *   run it): the trace is rank 0's of T. Q and the MLP's inner dimension
 *   split by columns, the output projection and the MLP's second matrix by
 *   rows, the heads T ways and the key/value heads with them (each rank
 *   holds kv_heads / T, or one replicated when T exceeds them, as vLLM);
 *   a latent cache is every head's, so each rank holds it whole; the
 *   embedding and the tied head split the vocabulary. Each layer then runs
 *   as two kernels, attention and MLP, each followed by an all-reduce of
 *   its output (tokens · hidden · 2 bytes) over the T ranks; the
 *   vocabulary-parallel embedding all-reduces its output too, and the
 *   head's logits are all-gathered (vLLM gathers them to the first rank:
 *   the same bytes into it) before sampling.
 * - Prefill runs each layer once over the prompt (2·Ψ_layer FLOPs per token
 *   plus causal attention 2·b·p²·h); each decode step runs each layer over
 *   one token per sequence, reading its weights and the layer's KV cache
 *   (2·Ψ_layer per token plus 4·b·ctx·h attention FLOPs). After the LM head
 *   the sampled token ids (4 bytes per sequence) are copied to the host
 *   synchronously: one blocking copy per generated token. */
#include "synth/synth.h"

#include <math.h>

static guint
tp_of (const SynthInferOpts *o)
{
  return MAX (o->tp, 1u);
}

guint
synth_infer_kv_heads_here (const SynthInferOpts *o)
{
  guint t = tp_of (o);
  return o->kv_heads >= t ? o->kv_heads / t : 1;
}

guint64
synth_infer_kv_bytes_per_token (const SynthInferOpts *o)
{
  if (o->kv_lora > 0)
    return (guint64) o->layers * (o->kv_lora + o->qk_rope) * o->kv_bytes;
  guint64 head_dim = o->hidden / o->heads;
  return 2 * (guint64) o->layers * synth_infer_kv_heads_here (o) * head_dim * o->kv_bytes;
}

/* The attention's weights on one rank (Q and the projection h²/T each, K
 * and V h·kv_heads_here·head_dim each) and one MLP's (/T). */
static double
attn_weights (const SynthInferOpts *o)
{
  double h = o->hidden;
  return 2 * h * h / tp_of (o) + 2 * h * synth_infer_kv_heads_here (o) * (double) (o->hidden / o->heads);
}

static double
mlp_weights (const SynthInferOpts *o)
{
  double f = o->ffn ? o->ffn : 4.0 * o->hidden;
  return (o->gated ? 3 : 2) * (double) o->hidden * f / tp_of (o);
}

double
synth_infer_layer_weights (const SynthInferOpts *o)
{
  if (o->experts == 0)
    return attn_weights (o) + mlp_weights (o);
  return attn_weights (o) + o->experts * mlp_weights (o) + (double) o->hidden * o->experts;
}

double
synth_infer_layer_read (const SynthInferOpts *o, double tokens)
{
  if (o->experts == 0)
    return synth_infer_layer_weights (o);
  double e = o->experts, reached = e * (1 - pow (1 - (double) o->top_k / e, tokens));
  return attn_weights (o) + reached * mlp_weights (o) + (double) o->hidden * o->experts;
}

/* The weights a token's FLOPs run through: K experts of an MoE layer. */
static double
layer_active (const SynthInferOpts *o)
{
  if (o->experts == 0)
    return synth_infer_layer_weights (o);
  return attn_weights (o) + o->top_k * mlp_weights (o) + (double) o->hidden * o->experts;
}

#define COMPUTE 1

typedef struct {
  const SynthInferOpts *o;
  SynthEmit *e;
  GArray *blocks;        /* KV allocation ids */
  guint64 slots;         /* token slots allocated per sequence */
  guint64 per_token;     /* KV bytes per token per sequence */
} Kv;

/* Makes room for CTX tokens per sequence. */
static void
kv_grow (Kv *kv, guint64 ctx)
{
  const SynthInferOpts *o = kv->o;
  if (o->kv_block > 0)
    {
      while (kv->slots < ctx)
        {
          guint64 id = synth_alloc (kv->e, o->batch * o->kv_block * kv->per_token, VS_MEM_DEVICE, "kv_cache");
          g_array_append_val (kv->blocks, id);
          kv->slots += o->kv_block;
        }
      return;
    }
  if (kv->slots >= ctx)
    return;
  guint64 id = synth_alloc (kv->e, o->batch * ctx * kv->per_token, VS_MEM_DEVICE, "kv_cache");
  if (kv->blocks->len > 0)
    {
      guint64 old = g_array_index (kv->blocks, guint64, 0);
      synth_copy (kv->e, VS_DIR_D2D, old, id, synth_size (kv->e, old), COMPUTE, TRUE);
      synth_free (kv->e, old);
      g_array_index (kv->blocks, guint64, 0) = id;
    }
  else
    g_array_append_val (kv->blocks, id);
  kv->slots = ctx;
}

static void
layer_kernel (Kv *kv, const char *name, guint64 w, guint64 x, double flops, guint64 bytes)
{
  guint n = kv->blocks->len;
  g_autofree guint64 *r = g_new (guint64, n + 2);
  r[0] = w;
  r[1] = x;
  for (guint i = 0; i < n; i++)
    r[i + 2] = g_array_index (kv->blocks, guint64, i);
  guint64 wr[] = { x, g_array_index (kv->blocks, guint64, n - 1) };
  synth_kernel (kv->e, name, COMPUTE, flops, r, n + 2, wr, 2, bytes);
}

/* The LM head over the batch's last tokens and the sampling: N_EMB weights
 * (the rank's share of the vocabulary), with tensor parallelism its
 * logits (2 bytes each) all-gathered first. */
static void
lm_head (Kv *kv, const SynthGroup *g, guint64 emb, guint64 x, guint64 logits, guint64 tok, guint64 n_emb)
{
  const SynthInferOpts *o = kv->o;
  SynthEmit *e = kv->e;
  guint64 b = o->batch, h = o->hidden, t = tp_of (o);
  guint64 r[] = { emb, x }, w[] = { logits, tok };
  if (t > 1)
    {
      synth_kernel (e, "lm_head", COMPUTE, 2.0 * (double) n_emb * (double) b, r, 2, &logits, 1,
                    n_emb * o->weight_bytes + b * h * 2 + b * (n_emb / h) * 2);
      synth_collective (e, "nccl_all_gather", COMPUTE, VS_COLL_ALL_GATHER, b * (n_emb / h) * 2, g, logits, logits, 0);
      synth_kernel (e, "sample", COMPUTE, 0, &logits, 1, &tok, 1, synth_size (e, logits) + b * 4);
      return;
    }
  synth_kernel (e, "lm_head_sample", COMPUTE, 2.0 * (double) n_emb * (double) b, r, 2, w, 2,
                n_emb * o->weight_bytes + b * h * 2 + synth_size (e, logits) + b * 4);
}

/* Tensor parallelism: the all-reduce of a layer part's output, BYTES a
 * rank, over the tensor group. */
static void
tp_all_reduce (Kv *kv, const SynthGroup *g, guint64 x, guint64 bytes)
{
  synth_collective (kv->e, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE, bytes, g, x, x, 0);
}

/* One layer over TOKENS tokens reading CTX tokens of cache a sequence:
 * one kernel NAME without tensor parallelism, else the attention kernel
 * (its weights, the cache, the new KV) and the MLP kernel (the rest of
 * the weights read, the MLP's activations), each followed by its
 * all-reduce. FLOPS_ATTN is the attention's own (scores and values). */
static void
layer (Kv *kv, const SynthGroup *g, const char *const names[3], guint64 w, guint64 x, double tokens,
       double weights_read, double active, double flops_attn, guint64 kv_read, guint64 act_bytes, guint64 x_bytes)
{
  const SynthInferOpts *o = kv->o;
  guint64 wb = o->weight_bytes;
  if (tp_of (o) == 1)
    {
      layer_kernel (kv, names[0], w, x, 2.0 * active * tokens + flops_attn,
                    (guint64) weights_read * wb + 2 * x_bytes + act_bytes + kv_read);
      return;
    }
  double aw = o->params ? active / 3 : attn_weights (o);
  layer_kernel (kv, names[1], w, x, 2.0 * aw * tokens + flops_attn, (guint64) aw * wb + 2 * x_bytes + kv_read);
  tp_all_reduce (kv, g, x, x_bytes);
  guint64 r[] = { w, x };
  synth_kernel (kv->e, names[2], COMPUTE, 2.0 * (active - aw) * tokens, r, 2, &x, 1,
                (guint64) (weights_read - aw) * wb + 2 * x_bytes + act_bytes);
  tp_all_reduce (kv, g, x, x_bytes);
}

gboolean
synth_llm_infer (const SynthInferOpts *o, SynthEmit *e, GError **error)
{
  guint L = o->layers, t = tp_of (o);
  guint64 h = o->hidden, b = o->batch, wb = o->weight_bytes;
  guint64 n_layer = o->params ? o->params / L / t : (guint64) synth_infer_layer_weights (o);
  /* Weights a step reads and a token's FLOPs run through (MoE: fewer). */
  double n_active = o->params ? (double) n_layer : layer_active (o);
  guint64 n_emb = o->params ? 0 : ((guint64) o->vocab + t - 1) / t * h;
  guint rpn = MAX (synth_config (e)->network.ranks_per_node, 1u);
  SynthGroup tpg = { 1, VS_ROLE_TP, t, MIN (t, rpn) };
  Kv kv = { o, e, g_array_new (FALSE, FALSE, sizeof (guint64)), 0, synth_infer_kv_bytes_per_token (o) };
  guint64 kv_layer_token = kv.per_token / L; /* per token per sequence per layer */

  /* Load the weights from a pageable checkpoint. */
  g_autofree guint64 *W = g_new0 (guint64, L);
  for (guint i = 0; i < L; i++)
    {
      W[i] = synth_alloc (e, n_layer * wb, VS_MEM_DEVICE, "params");
      synth_copy (e, VS_DIR_H2D, 0, W[i], n_layer * wb, COMPUTE, TRUE);
    }
  guint64 emb = 0;
  if (n_emb)
    {
      emb = synth_alloc (e, n_emb * wb, VS_MEM_DEVICE, "params");
      synth_copy (e, VS_DIR_H2D, 0, emb, n_emb * wb, COMPUTE, TRUE);
    }
  synth_sync_device (e);

  /* ---- prefill ---- */
  synth_mark (e, "prefill");
  guint64 P = o->prompt;
  guint64 ids = synth_alloc (e, b * P * 8, VS_MEM_DEVICE, "inputs");
  synth_copy (e, VS_DIR_H2D, 0, ids, b * P * 8, COMPUTE, TRUE);
  guint64 x = synth_alloc (e, b * P * h * 2, VS_MEM_DEVICE, "activations");
  /* The MLP's intermediate: F (2F gated) a token, for each of its
   * experts; its T-th on a rank. */
  guint64 inner = (o->ffn ? o->ffn : 4 * h) * (o->gated ? 2 : 1) * (o->experts ? o->top_k : 1) / t;
  guint64 act = synth_alloc (e, b * P * inner * 2, VS_MEM_DEVICE, "activations");
  guint64 logits = synth_alloc (e, b * o->vocab * 4, VS_MEM_DEVICE, "workspace");
  guint64 tok = synth_alloc (e, b * 4, VS_MEM_DEVICE, "workspace");
  static const char *const prefill_names[3] = { "prefill_layer", "prefill_attn", "prefill_mlp" };
  static const char *const decode_names[3] = { "decode_layer", "decode_attn", "decode_mlp" };
  if (emb)
    {
      guint64 r[] = { emb, ids };
      synth_kernel (e, "embedding", COMPUTE, 0, r, 2, &x, 1, VS_NONE);
      if (t > 1)
        tp_all_reduce (&kv, &tpg, x, b * P * h * 2);
    }
  kv_grow (&kv, P);
  for (guint i = 0; i < L; i++)
    {
      double read = o->params ? (double) n_layer : synth_infer_layer_read (o, (double) (b * P));
      layer (&kv, &tpg, prefill_names, W[i], x, (double) (b * P), read, n_active,
             2.0 * (double) b * (double) (P * P) * (double) h / t, b * P * kv_layer_token, 2 * synth_size (e, act),
             synth_size (e, x));
    }
  synth_free (e, act);
  if (emb)
    lm_head (&kv, &tpg, emb, x, logits, tok, n_emb);
  synth_copy (e, VS_DIR_D2H, tok, 0, b * 4, COMPUTE, FALSE);
  synth_free (e, x);
  synth_free (e, ids);

  /* ---- decode: one token per sequence per step ---- */
  x = synth_alloc (e, b * h * 2, VS_MEM_DEVICE, "activations");
  for (guint g = 0; g < o->gen; g++)
    {
      synth_mark (e, "token");
      guint64 ctx = P + g + 1;
      kv_grow (&kv, ctx);
      synth_copy (e, VS_DIR_H2D, 0, tok, b * 4, COMPUTE, TRUE);
      if (emb)
        {
          guint64 r[] = { emb, tok };
          synth_kernel (e, "embedding", COMPUTE, 0, r, 2, &x, 1, b * h * 2 * 2 + b * 4);
          if (t > 1)
            tp_all_reduce (&kv, &tpg, x, b * h * 2);
        }
      for (guint i = 0; i < L; i++)
        {
          double attn = o->kv_lora > 0 ? 2.0 * o->heads * (2.0 * o->kv_lora + o->qk_rope) : 4.0 * (double) h;
          double read = o->params ? (double) n_layer : synth_infer_layer_read (o, (double) b);
          layer (&kv, &tpg, decode_names, W[i], x, (double) b, read, n_active, attn * (double) b * (double) ctx / t,
                 b * ctx * kv_layer_token, 0, b * h * 2);
        }
      if (emb)
        lm_head (&kv, &tpg, emb, x, logits, tok, n_emb);
      synth_copy (e, VS_DIR_D2H, tok, 0, b * 4, COMPUTE, FALSE);
    }
  synth_sync_device (e);
  synth_free (e, x);
  synth_free (e, tok);
  synth_free (e, logits);
  for (guint i = 0; i < kv.blocks->len; i++)
    synth_free (e, g_array_index (kv.blocks, guint64, i));
  g_array_unref (kv.blocks);
  for (guint i = 0; i < L; i++)
    synth_free (e, W[i]);
  if (emb)
    synth_free (e, emb);
  (void) error;
  return TRUE;
}
