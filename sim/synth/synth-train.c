/* synth-train.c — `vramsim synth transformer-train`: one GPU's view
 * (tensor rank 0, data-parallel rank 0 of pipeline stage 0, or of the
 * stage o->stage names) of training a GPT-style decoder as Megatron-LM and
 * PyTorch run it (docs/workloads.md).
 *
 * Assumptions (the published accounting this follows):
 * - Model states (Rajbhandari et al., "ZeRO", 2020): mixed-precision Adam
 *   keeps 2Ψ bytes of fp16 params, 2Ψ of fp16 grads and 12Ψ of fp32
 *   master params, momentum and variance (K = 12); ZeRO stage 1 shards the
 *   optimizer states over the N data-parallel ranks, stage 2 the grads too,
 *   stage 3 the params too. Buffers the paper leaves out (gathered stage-3
 *   params, full-layer grads before reduce-scatter, logits, dX, and the
 *   fp32 gradients the optimizer step casts from 16-bit ones: 4 bytes a
 *   parameter it updates, Megatron's _copy_model_grads_to_main_grads) are
 *   tagged `workspace`, so params + grads + optimizer peaks are the paper's
 *   figures.
 * - Activations (Korthikanti et al., "Reducing Activation Recomputation in
 *   Large Transformer Models", 2022): a layer saves s·b·h·(34 + 5·a·s/h)
 *   bytes at 16 bits (twice that at fp32). Selective recomputation keeps
 *   34·s·b·h and recomputes the 5·a·s²·b attention part (QKᵀ, softmax,
 *   its dropout, attention·V) in the backward; checkpointing every N
 *   layers keeps each segment's input (2·s·b·h) and recomputes the
 *   segment's N layers, whose full activations then live together during
 *   its backward.
 * - Kernels: a layer is the kernels Megatron-LM's ParallelTransformerLayer
 *   launches (megatron/model/transformer.py: layer norm, the QKV GEMM,
 *   QKᵀ and attention·V as batched GEMMs (baddbmm, bmm) with the fused
 *   scale-mask-softmax and the attention dropout between them, the
 *   projection GEMM, the fused bias-dropout-add, layer norm, fc1, the
 *   fused bias-GELU, fc2, bias-dropout-add), each GEMM's backward a dX
 *   and a dW GEMM; GEMM times by shape, the others by their bytes
 *   (synth-kernels.c). FLOPs: a layer's forward is 24·s·b·h²/t +
 *   4·b·s²·h/t (Narayanan et al. 2021, eq. 3's count), its backward
 *   twice that; full recomputation adds a forward, selective the
 *   4·b·s²·h/t attention part.
 * - Tensor parallelism (Shoeybi et al., "Megatron-LM", 2019): a layer's
 *   parameters split t ways; each layer all-reduces its s·b·h activations
 *   twice in the forward (after attention, after the MLP) and twice in the
 *   backward (the input gradients of QKV and fc1); a recomputed forward
 *   repeats its two. With sequence parallelism (Korthikanti et al.) each
 *   all-reduce becomes an all-gather of the s/t shard and a
 *   reduce-scatter, the same bytes on the wire, and layer norms and
 *   dropouts run on s/t tokens. The vocabulary-parallel embedding
 *   all-reduces its output, the LM head its input gradient.
 * - Pipeline parallelism (Narayanan et al., SC 2021): stage s holds n_s
 *   layers, L/p evenly or Megatron-Core's uneven split (first and last
 *   stage given, the rest even: synth_train_stage_layers), v chunks of
 *   n_s/v under the interleaved schedule, virtual stage c·p + s holding
 *   the next layers in that order; stage 0 holds the embedding, the last
 *   stage the final layer norm, the LM head (tied to the embedding), the
 *   loss and its labels. The whole pipeline is simulated (synth-pipe.c:
 *   every stage's forward and backward times by its layers, the head on
 *   the last one) and the trace's stage's operations are written in its
 *   order, each receive waiting as long as that stage idles for it: the
 *   bubble where it falls, (p-1)·(t_f + t_b) a step for equal stages, /v
 *   interleaved. Each forward sends its output
 *   (2·s·b·h/t bytes: the scatter-gather optimisation) to the next
 *   virtual stage, each backward its input gradient back; interleaving
 *   multiplies those transfers by v.
 * - Data parallelism over N ranks (ZeRO, Rajbhandari et al. 2020, section
 *   7): stage 0 all-reduces the gradients once per step (2Ψ on the wire):
 *   PyTorch DDP layer by layer on a communication stream as the backward
 *   writes them, or Megatron's LocalDDP once after the step's last
 *   backward (`ddp_local`); stages 1 and 2 reduce-scatter them and
 *   all-gather the updated parameters (2Ψ); stage 3 all-gathers each
 *   layer's parameters before its forward and again before its backward,
 *   and reduce-scatters its gradients (3Ψ). Stage 3's gathers run on the
 *   communication stream, the next layer's issued before this layer
 *   computes (FSDP's and DeepSpeed's prefetch), so two layers' gathered
 *   parameters can live at once; the host waits as FSDP's rate limiter
 *   makes it (limit_all_gathers, on by default: params_prefetch), so no
 *   more are queued. Stages 2-3 reduce on the compute stream, since their
 *   buffers are freed right after. Gradients accumulate across
 *   micro-batches (stages 0-1) in one elementwise pass each (Megatron's
 *   main_grad.add_(grad), PyTorch's AccumulateGrad).
 * - Placement (Megatron's rank order: tensor ranks fastest, then data,
 *   then pipeline): the tensor group is t consecutive GPUs; the
 *   data-parallel group is strided by t, so max(1, g/t) of its ranks
 *   share a node of g GPUs and the rest cross the inter-node network; a
 *   pipeline neighbour is t·N ranks away, in the same node only when
 *   t·N < g. Each collective is priced (network_cost) with its group's
 *   ranks per node and names its group and role.
 * - Mixture of experts (Lepikhin et al., "GShard", 2021; Fedus et al.,
 *   "Switch Transformers", 2022): every layer's MLP becomes E experts of
 *   8·h² parameters, spread over ep = min(N, E) data-parallel ranks
 *   (expert parallelism); each token goes to top_k experts, so the expert
 *   MLP's 16·s·b·h/t activation bytes are kept top_k times and two
 *   all-to-alls (dispatch, combine) of s·b·top_k·h·2 bytes run in the
 *   forward, two in the backward. An expert's gradients are reduced only
 *   over the N/ep ranks that hold the same expert (DeepSpeed-MoE's and
 *   Megatron's expert-data-parallel group), the rest of the layer's over
 *   all N; ZeRO shards the experts over those N/ep ranks.
 * - A tied embedding is reduced once: with p = 1 the embedding's and the
 *   LM head's gradients accumulate in one buffer, reduced (or
 *   reduce-scattered) once per micro-batch under ZeRO 2-3 and once a step
 *   below; with p > 1 stage 0 and the last stage each hold a copy and
 *   all-reduce its gradient between them once a step (Megatron's
 *   embedding group).
 * - FP8 (NVIDIA Transformer Engine): weights are kept in bf16 plus an FP8
 *   copy for the GEMMs (3 bytes a parameter), gradients in bf16, master
 *   weights and Adam states in fp32 (12); the GEMM inputs saved for the
 *   backward (QKV and fc1 inputs 2·s·b·h each, attention projection input
 *   2·s·b·h/t, fc2 input 8·s·b·h/t) are FP8, half their 16-bit bytes;
 *   GEMMs run at the preset's FP8 peak (FP16 where it has none).
 * - Fused attention (flash_attn: FlashAttention-2, Dao 2023): one causal
 *   kernel forward (half of QKᵀ's and P·V's FLOPs) and one backward (2.5
 *   times them), at 0.75 of the GEMM rate; a layer keeps the rows'
 *   log-sum-exps, not the 5·a·s²·b of scores.
 * - Multi-head latent attention (DeepSeek-V2, 2024; DeepSeek-V3's
 *   inference code): x to a KV latent plus shared rotary key dims and
 *   (optionally) a Q latent by weights whole on every tensor rank,
 *   column-parallel up projections per head, the output projection
 *   row-parallel; the up projections' input gradients are reduced at the
 *   latents' width.
 * - Dense layers among MoE ones (DeepSeek's first k, Qwen-MoE's and
 *   Llama 4's every N-th MoE): their own passes, weights and activations;
 *   the schedule times each stage by the layers it holds.
 * - Collectives are kernels with a `collective` field; their time is the
 *   network model's (sim/model/network.c) on the preset's `network`. */
#include "synth/synth.h"

#include <math.h>
#include <string.h>

void
synth_train_state_bytes (SynthPrecision prec, SynthOptimizer opt, guint *p, guint *g, guint *o)
{
  switch (prec)
    {
    case SYNTH_PREC_MIXED:
      /* fp16 params and grads; fp32 master copy + Adam m, v (or SGD momentum). */
      *p = 2, *g = 2, *o = opt == SYNTH_OPT_ADAM ? 12 : 8;
      break;
    case SYNTH_PREC_FP8:
      /* bf16 weights + their FP8 copy, bf16 grads, fp32 master + states. */
      *p = 3, *g = 2, *o = opt == SYNTH_OPT_ADAM ? 12 : 8;
      break;
    case SYNTH_PREC_FP32:
      *p = 4, *g = 4, *o = opt == SYNTH_OPT_ADAM ? 8 : 4;
      break;
    default: /* pure fp16 / bf16: states in the same precision, no master copy */
      *p = 2, *g = 2, *o = opt == SYNTH_OPT_ADAM ? 4 : 2;
      break;
    }
}

/* Whether the optimizer step on the device updates fp32 master weights
 * from 16-bit gradients, which it first casts to fp32 (4 bytes a
 * parameter). Not under ZeRO-Offload: the step runs on the host. */
static gboolean
fp32_main_grads (const SynthTrainOpts *o)
{
  return !o->offload_optimizer && (o->precision == SYNTH_PREC_MIXED || o->precision == SYNTH_PREC_FP8);
}

static guint64
act_scale (const SynthTrainOpts *o)
{
  return o->precision == SYNTH_PREC_FP32 ? 2 : 1;
}

static guint
tp_of (const SynthTrainOpts *o)
{
  return MAX (o->tp, 1u);
}

/* The shape's sizes (Llama's fields; GPT's when 0): the fused QKV GEMM's
 * output (h + 2·kv_heads·head_dim), the MLP's inner size F, fc1's output
 * (F, or 2F gated: gate and up in one GEMM), the weights of a layer's
 * attention and of one MLP. */
static guint64
head_dim_of (const SynthTrainOpts *o)
{
  return o->head_dim ? o->head_dim : o->hidden / o->heads;
}

/* Q's width, the projection's input: heads·head_dim (hidden, for GPT). */
guint64
synth_train_q_width (const SynthTrainOpts *o)
{
  return (guint64) o->heads * head_dim_of (o);
}

/* Latent attention (kv_lora set): a head's QK dims (head_dim, the
 * non-rotary part, plus the rotary qk_rope) and its V dims (v_head, or
 * head_dim); without it both are head_dim. The projection's input is
 * heads·v. */
static gboolean
mla (const SynthTrainOpts *o)
{
  return o->kv_lora > 0;
}

static guint64
qk_dim (const SynthTrainOpts *o)
{
  return head_dim_of (o) + (mla (o) ? o->qk_rope : 0);
}

static guint64
v_dim (const SynthTrainOpts *o)
{
  return mla (o) && o->v_head ? o->v_head : head_dim_of (o);
}

static guint64
proj_in (const SynthTrainOpts *o)
{
  return (guint64) o->heads * v_dim (o);
}

/* Latent attention's widths: the KV latent with the rotary key (what the
 * KV down projection writes), and the Q up projection's input (the Q
 * latent, or x without one). */
static guint64
kv_latent (const SynthTrainOpts *o)
{
  return (guint64) o->kv_lora + o->qk_rope;
}

static guint64
q_in (const SynthTrainOpts *o)
{
  return o->q_lora ? o->q_lora : o->hidden;
}

guint64
synth_train_core_width (const SynthTrainOpts *o)
{
  return (guint64) o->heads * (qk_dim (o) + v_dim (o));
}

/* Latent attention's down projections, x to the Q latent (when q_lora)
 * and to the KV latent with the rotary key: whole on every tensor rank
 * (DeepSeek-V3's wq_a and wkv_a, Megatron-Core's duplicated
 * linear_q_down_proj and linear_kv_down_proj). */
guint64
synth_train_attn_replicated (const SynthTrainOpts *o)
{
  return mla (o) ? (guint64) o->hidden * (o->q_lora + kv_latent (o)) : 0;
}

static guint64
qkv_out (const SynthTrainOpts *o)
{
  guint64 kv = o->kv_heads ? o->kv_heads : o->heads;
  return synth_train_q_width (o) + 2 * kv * head_dim_of (o);
}

static guint64
ffn_of (const SynthTrainOpts *o)
{
  return o->ffn ? o->ffn : 4 * (guint64) o->hidden;
}

static guint64
fc1_out (const SynthTrainOpts *o)
{
  return ffn_of (o) * (o->gated_mlp ? 2 : 1);
}

guint64
synth_train_attn_params (const SynthTrainOpts *o)
{
  guint64 h = o->hidden;
  if (!mla (o))
    return h * (qkv_out (o) + synth_train_q_width (o));
  /* The down projections, Q's up projection (or Q from x), the KV
   * latent's up projection to every head's non-rotary K and its V, the
   * output projection. */
  guint64 heads = o->heads, q = heads * qk_dim (o);
  guint64 up = (o->q_lora ? (guint64) o->q_lora * q : h * q) + (guint64) o->kv_lora * heads * (head_dim_of (o) + v_dim (o));
  return synth_train_attn_replicated (o) + up + proj_in (o) * h;
}

guint64
synth_train_mlp_params (const SynthTrainOpts *o)
{
  return (guint64) o->hidden * ffn_of (o) * (o->gated_mlp ? 3 : 2);
}

/* The shared expert's fc1 output and weights (0 without one). */
static guint64
shared_fc1_out (const SynthTrainOpts *o)
{
  return o->experts > 0 ? (guint64) o->shared_ffn * (o->gated_mlp ? 2 : 1) : 0;
}

guint64
synth_train_shared_params (const SynthTrainOpts *o)
{
  return o->experts > 0 ? (guint64) o->hidden * o->shared_ffn * (o->gated_mlp ? 3 : 2) : 0;
}

void
synth_train_dense_shape (const SynthTrainOpts *o, SynthTrainOpts *dense)
{
  *dense = *o;
  dense->experts = dense->top_k = dense->shared_ffn = dense->dense_layers = dense->dense_ffn = dense->moe_every = 0;
  dense->ffn = o->dense_ffn;
}

gboolean
synth_train_layer_dense (const SynthTrainOpts *o, guint g)
{
  return o->experts > 0 && (g < o->dense_layers || (o->moe_every > 1 && (g + 1) % o->moe_every != 0));
}

/* A layer's kind: KIND_DENSE (an MoE model's dense layer), KIND_LOCAL
 * (sliding-window attention), both, or neither. */
enum { KIND_DENSE = 1, KIND_LOCAL = 2, KINDS = 4 };

gboolean
synth_train_layer_local (const SynthTrainOpts *o, guint g)
{
  return o->window > 0 && o->window < o->seq && (o->global_every == 0 || (g + 1) % o->global_every != 0);
}

/* Layer G's KIND_DENSE | KIND_LOCAL. */
static guint
layer_kind (const SynthTrainOpts *o, guint g)
{
  return (synth_train_layer_dense (o, g) ? KIND_DENSE : 0) | (synth_train_layer_local (o, g) ? KIND_LOCAL : 0);
}

guint
synth_train_dense_count (const SynthTrainOpts *o)
{
  guint n = 0;
  for (guint g = 0; g < o->layers; g++)
    n += synth_train_layer_dense (o, g);
  return n;
}

/* The MLP activation's traffic per inner element, in activation elements:
 * GELU reads and writes one (2); SwiGLU reads gate and up, writes one (3);
 * backward: 3, and 5 gated (reads dy, gate, up; writes both gradients). */
static double
act_fwd_bytes (const SynthTrainOpts *o)
{
  return o->gated_mlp ? 3 : 2;
}

static double
act_bwd_bytes (const SynthTrainOpts *o)
{
  return o->gated_mlp ? 5 : 3;
}

/* Whether the shape is GPT's (the published formulas, exactly). */
static gboolean
gpt_shape (const SynthTrainOpts *o)
{
  return (o->kv_heads == 0 || o->kv_heads == o->heads) && (o->ffn == 0 || o->ffn == 4 * o->hidden) && !o->gated_mlp
         && synth_train_q_width (o) == o->hidden && synth_train_shared_params (o) == 0 && !mla (o);
}

/* Numerator over t of the bytes a layer keeps besides attention scores,
 * in units of s·b·h (Korthikanti Table 2, with the MoE and FP8 terms). */
static guint64
kept_num (const SynthTrainOpts *o)
{
  guint64 t = tp_of (o);
  guint64 n = o->sp ? 34 : 10 * t + 24;
  if (o->experts > 0)
    n += 16 * (MAX (o->top_k, 1u) - 1);
  if (o->precision == SYNTH_PREC_FP8)
    n -= o->sp ? 7 : 2 * t + 5;
  return n;
}

guint64
synth_train_layer_kept (const SynthTrainOpts *o)
{
  guint64 u = (guint64) o->seq * o->batch * o->hidden * act_scale (o);
  if (gpt_shape (o))
    return u * kept_num (o) / tp_of (o);
  /* Korthikanti's terms with the shape's sizes, in units of s·b·h: 10
   * not split by TP (QKV and fc1 inputs 2 each, two dropout masks, two
   * layer norms' inputs 4), and split t ways: Q 2, K and V 2·kv/heads
   * each, the projection's input 2, fc1's output 2·F'/h (F' = F, or 2F
   * gated) and fc2's input 2·F/h (GPT: 4 + 2 + 2 + 8 + 8 = 24). */
  double t = tp_of (o), h = o->hidden, f = ffn_of (o), kv = o->kv_heads ? o->kv_heads : o->heads;
  double q = (double) synth_train_q_width (o) / h, r = kv * (double) head_dim_of (o) / h;
  double mlp = 2 * (double) fc1_out (o) / h + 2 * f / h;
  double split = 2 * q + 4 * r + 2 * q + mlp, whole = 10;
  if (mla (o))
    {
      /* Latent attention: Q and K of head_dim + qk_rope dims a head, V and
       * the projection's input of v; not split, the down projections'
       * outputs and their norms' (the up projections' inputs): the Q
       * latent twice, the KV latent with the rotary key and the KV latent. */
      double qk = (double) o->heads * qk_dim (o) / h, v = (double) proj_in (o) / h;
      split = 2 * qk + 2 * qk + 2 * v + 2 * v + mlp;
      whole += (4.0 * o->q_lora + 2.0 * kv_latent (o) + 2.0 * o->kv_lora) / h;
    }
  if (o->experts > 0)
    split += mlp * (MAX (o->top_k, 1u) - 1) + 2 * (double) shared_fc1_out (o) / h + 2 * (double) o->shared_ffn / h;
  if (o->precision == SYNTH_PREC_FP8)
    whole -= 2, split -= 1 + f / h;   /* FP8 copies of the QKV, fc1, projection and fc2 inputs */
  double n = o->sp ? (whole + split) / t : whole + split / t;
  return (guint64) llround (u * n);
}

/* What the attention core keeps: the scores, their softmax and dropout
 * mask, 5·a·s²·b bytes at 16 bits (Korthikanti et al.), or under fused
 * attention the fp32 log-sum-exp of each row, 4·a·s·b. Split t ways. */
static guint64
attn_kept (const SynthTrainOpts *o)
{
  guint64 s = o->seq, b = o->batch, a = o->heads;
  return (o->flash_attn ? 4 * a * s * b : 5 * a * s * s * b * act_scale (o)) / tp_of (o);
}

guint64
synth_train_layer_activations (const SynthTrainOpts *o)
{
  return synth_train_layer_kept (o) + attn_kept (o);
}

/* One sharded unit of the model: a layer, or the (tied) embedding. */
typedef struct {
  guint64 n;          /* parameters on this GPU (after tensor parallelism) */
  guint64 n_exp;      /* of which expert parameters (MoE), sharded and reduced over the expert-data group */
  guint64 p, g, o;    /* device (or host) allocation ids of its states */
  guint64 hg;         /* offload: pinned host grads/params staging */
  guint64 gathered;   /* stage 3: the full params while in use */
  guint64 gather_event; /* stage 3: recorded after their gather */
  guint64 pending;    /* a gradient buffer of this micro-batch not yet reduced (the tied embedding under ZeRO 2-3) */
  guint8 kind;        /* KIND_DENSE | KIND_LOCAL of a layer */
} Unit;

/* The kinds of operation a pass is made of. */
/* LOP_RING: context parallelism's attention, m chunks of it on the
 * compute stream while K and V (k bytes a step) go round the ring on
 * the CP stream; n bytes more after the last chunk (the backward's dK
 * and dV home). */
typedef enum { LOP_GEMM, LOP_MEM, LOP_COLL, LOP_FUSED, LOP_RING } LopType;
/* The communicators an operation may use (Train.groups). */
typedef enum { GRP_TP, GRP_DP, GRP_NEXT, GRP_PREV, GRP_EMB, GRP_EP, GRP_EDP, GRP_CP, GRP_COUNT } GroupIndex;

typedef struct {
  const char *name;
  guint8 type;        /* LopType */
  guint8 cls;         /* LOP_MEM: SynthMemClass */
  guint8 kind;        /* LOP_COLL: VsCollKind */
  guint8 group;       /* LOP_COLL: GroupIndex */
  gboolean weights;   /* LOP_GEMM: reads the unit's parameters */
  guint64 m, n, k, batch;
  guint64 bytes;      /* LOP_MEM, LOP_FUSED: traffic; LOP_COLL: per-rank input */
  double flops;       /* LOP_FUSED: at the GEMM rate (synth_kernel's) */
} Lop;

/* The passes every layer runs (one set for each kind of layer), and the
 * embedding's and the head's. */
typedef enum { PASS_FWD, PASS_BWD, PASS_RECOMPUTE, PASS_ATTN_RECOMPUTE, LAYER_PASSES } LayerPassIndex;
typedef enum { PASS_EMB_FWD, PASS_EMB_BWD, PASS_HEAD_FWD, PASS_HEAD_BWD, PASS_MTP_FWD, PASS_MTP_BWD, PASS_COUNT } PassIndex;


typedef struct {
  GArray *ops;        /* Lop */
  guint64 ns;         /* its GPU time on the compute stream */
} Pass;

typedef struct {
  const SynthTrainOpts *o;
  SynthEmit *e;
  guint P, G, O;
  Unit *units;        /* layers 0..Ls-1 of this stage (chunk c: chunk_base (c)..), then the embedding or the head */
  guint n_units, Ls;  /* Ls: layers on this stage */
  guint t, pp, v, dp, ep, edp, k;
  guint cp;           /* context-parallel ranks (dp counts dp x cp: the gradients' and ZeRO's group) */
  guint stage;        /* the pipeline stage the trace is */
  guint nfirst, nmid, nlast; /* layers on the first stage, on each middle one, on the last */
  guint acc_e, acc_z; /* the embedding, the loss counted as a layer in the split (Megatron-Core's account-for flags) */
  guint mtp;          /* multi-token prediction modules on this stage (the last), units Ls + 1 .. */
  guint prec;         /* VsPrecision of the GEMMs */
  double es, gs;      /* bytes of an activation element; of a GEMM operand */
  guint64 full, kept, attn, ckpt, hidden_buf;
  guint64 full_d, kept_d; /* full and kept of a dense layer */
  guint64 layer_n, dense_n; /* parameters on this GPU of a layer, of a dense one */
  SynthTrainOpts dense_o; /* the dense layers' shape (synth_train_dense_shape) */
  guint64 pp_msg;     /* one pipeline send/recv */
  SynthGroup groups[GRP_COUNT];
  Pass pass[PASS_COUNT];
  Pass lpass[KINDS][LAYER_PASSES]; /* the layers' passes, by kind (built for the kinds the model has) */
  guint window;       /* while building a kind's passes: its attention window (0: the whole sequence) */
  guint64 p2p_ns;      /* a send between neighbouring stages */
  guint64 p2p_wrap_ns; /* between the last stage and the first (interleaved) */
  guint64 comm_event; /* last gradient collective on COMM, 0 if none */
  GArray *free_events; /* ZeRO-3 rate limiter: events after each release, oldest first */
} Train;

/* One micro-batch's live state between its forward and its backward (of one chunk). */
typedef struct {
  guint64 *A, *C;     /* kept activations per layer; segment inputs */
  guint64 *M;         /* multi-token prediction, 2 a module: its layer's input (its activations, kept), its logits */
  guint64 in, out, dy, logits;
} Micro;

#define COMPUTE 1
#define COPY 2
#define COMM 3
#define CP_COMM 4   /* context parallelism's ring exchanges (TransformerEngine's own stream) */

static guint64
shard (guint64 bytes, guint dp, gboolean sharded)
{
  return sharded ? (bytes + dp - 1) / dp : bytes;
}

/* Bytes of a unit's state at PER bytes a parameter, sharded (when
 * SHARDED) over the data-parallel ranks, its experts over the
 * expert-data ranks. */
static guint64
unit_bytes (Train *tr, const Unit *u, guint per, gboolean sharded)
{
  return shard ((u->n - u->n_exp) * per, tr->dp, sharded) + shard (u->n_exp * per, tr->edp, sharded);
}

/* ---- passes: the kernels of one layer, the embedding, the head ---- */

static void
add_op (GArray *ops, Lop op)
{
  g_array_append_val (ops, op);
}

static Lop
gemm (const char *name, gboolean weights, guint64 m, guint64 n, guint64 k, guint64 batch)
{
  return (Lop) { .name = name, .type = LOP_GEMM, .weights = weights, .m = m, .n = n, .k = k, .batch = batch };
}

static Lop
memop (const char *name, guint cls, double bytes)
{
  return (Lop) { .name = name, .type = LOP_MEM, .cls = (guint8) cls, .bytes = (guint64) bytes };
}

static Lop
collop (const char *name, VsCollKind kind, GroupIndex g, double bytes)
{
  return (Lop) { .name = name, .type = LOP_COLL, .kind = (guint8) kind, .group = (guint8) g, .bytes = (guint64) bytes };
}

/* A fused kernel of FLOPS (as run at the GEMMs' rate) and BYTES. */
static Lop
fusedop (const char *name, double flops, double bytes)
{
  return (Lop) { .name = name, .type = LOP_FUSED, .flops = flops, .bytes = (guint64) bytes };
}

/* Context parallelism's attention: FLOPS and BYTES in STEPS chunks, each
 * but the last overlapping the ring's exchange of XBYTES; FINAL bytes
 * after them. */
static Lop
ringop (const char *name, double flops, double bytes, guint steps, double xbytes, double final)
{
  return (Lop) { .name = name, .type = LOP_RING, .flops = flops, .bytes = (guint64) bytes, .m = steps,
                 .k = (guint64) xbytes, .n = (guint64) final, .group = GRP_CP, .kind = VS_COLL_SEND };
}

/* Fused attention's compute rate against a GEMM's: FlashAttention-2
 * reaches 50-73 % of an A100's peak where cuBLAS GEMMs reach 80-90 %
 * (Dao 2023, abstract and introduction), FlashAttention-3 75 % of an H100's forward
 * (Shah et al. 2024); 0.75 of the GEMM model's rate, forward and
 * backward alike. */
#define FLASH_REL 0.75

/* Megatron's f/g conjugates: the TP reduction of a pass's activations
 * (all-reduce, or the sequence-parallel reduce-scatter), and with SP the
 * all-gather in front of a column-parallel GEMM. */
static void
tp_reduce (Train *tr, GArray *ops, double bytes)
{
  if (tr->t <= 1)
    return;
  if (tr->o->sp)
    add_op (ops, collop ("nccl_reduce_scatter", VS_COLL_REDUCE_SCATTER, GRP_TP, bytes));
  else
    add_op (ops, collop ("nccl_all_reduce", VS_COLL_ALL_REDUCE, GRP_TP, bytes));
}

static void
sp_gather (Train *tr, GArray *ops, double bytes)
{
  if (tr->t > 1 && tr->o->sp)
    add_op (ops, collop ("nccl_all_gather", VS_COLL_ALL_GATHER, GRP_TP, bytes / tr->t));
}

/* Twice the (query, key) pairs fused causal attention computes, over the
 * heads and the micro-batch: s² for the whole sequence, 2·s·w - w² through
 * a window of w (the layers being built: tr->window). */
static double
attended (const Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  double s = o->seq, w = tr->window, bh = (double) o->batch * (o->heads / tr->t);
  return bh * (w > 0 && w < s ? 2 * s * w - w * w : s * s);
}

/* Context parallelism: the bytes of this rank's K and V, one step of the
 * ring (its seq/cp tokens; latent attention's after the up projection). */
static double
cp_kv_bytes (const Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  guint64 kvh = mla (o) ? o->heads : o->kv_heads ? o->kv_heads : o->heads;
  return tr->es * (double) o->seq * o->batch * (double) (kvh / tr->t) * (double) (qk_dim (o) + v_dim (o));
}

/* The attention core's forward: QKᵀ, the fused scale-mask-softmax, its
 * dropout, attention·V (NAMES: forward or recompute). */
static void
attention_core (Train *tr, GArray *ops, gboolean rc)
{
  const SynthTrainOpts *o = tr->o;
  guint64 s = o->seq, b = o->batch, heads = o->heads / tr->t;
  double scores = (double) b * heads * s * s;
  if (o->flash_attn)
    {
      /* Causal: half the tiles of QKᵀ and P·V, 2·s²/2·(qk + v) FLOPs a
       * head (through a window of w, 2·(s·w - w²/2)·(qk + v)); it reads
       * Q, K and V, writes O and the log-sum-exps. */
      double flops = attended (tr) * (double) (qk_dim (o) + v_dim (o));
      double io = tr->es * (double) b * heads * s * (2.0 * qk_dim (o) + 2.0 * v_dim (o)) + 4.0 * b * heads * s;
      const char *name = rc ? "flash_attn_fwd_recompute" : "flash_attn_fwd";
      if (tr->cp > 1)
        {
          /* This rank's queries (s = seq/cp of them) against every
           * rank's keys: cp times the local causal FLOPs (the balanced
           * split gives each rank 1/cp of the whole), K and V read from
           * each of the cp chunks, passed on cp - 1 times. */
          double kv = cp_kv_bytes (tr);
          add_op (ops, ringop (name, flops * tr->cp / FLASH_REL, io + (tr->cp - 1) * kv, tr->cp, kv, 0));
          return;
        }
      add_op (ops, fusedop (name, flops / FLASH_REL, io));
      return;
    }
  add_op (ops, gemm (rc ? "gemm_qk_bmm_recompute" : "gemm_qk_bmm_fwd", FALSE, s, s, qk_dim (o), b * heads));
  add_op (ops, memop (rc ? "softmax_recompute" : "softmax_fwd", SYNTH_MEM_NORM, 2 * tr->es * scores));
  add_op (ops, memop (rc ? "dropout_attn_recompute" : "dropout_attn_fwd", SYNTH_MEM_ACT, (2 * tr->es + 1) * scores));
  add_op (ops, gemm (rc ? "gemm_av_bmm_recompute" : "gemm_av_bmm_fwd", FALSE, s, v_dim (o), s, b * heads));
}

/* A layer's forward (RC: as recomputed in the backward). */
static void
build_fwd (Train *tr, GArray *ops, gboolean rc)
{
  const SynthTrainOpts *o = tr->o;
  guint64 h = o->hidden, t = tr->t, T = (guint64) o->seq * o->batch;
  double Tl = o->sp ? (double) T / t : (double) T, es = tr->es;
#define NM(base) (rc ? base "_recompute" : base "_fwd")
  add_op (ops, memop (NM ("layernorm"), SYNTH_MEM_NORM, 2 * es * Tl * h));
  if (mla (o))
    {
      /* The down projections run on this rank's tokens (T/t under
       * sequence parallelism), with the whole weight; the latents are
       * normalised and, under SP, gathered for the up projections, which
       * are column-parallel over the heads. */
      guint64 Tq = o->sp ? T / t : T, heads = o->heads / t;
      if (o->q_lora)
        {
          add_op (ops, gemm (NM ("gemm_q_down"), TRUE, Tq, o->q_lora, h, 1));
          add_op (ops, memop (NM ("rmsnorm_q_latent"), SYNTH_MEM_NORM, 2 * es * (double) Tq * o->q_lora));
          sp_gather (tr, ops, es * T * o->q_lora);
        }
      add_op (ops, gemm (NM ("gemm_kv_down"), TRUE, Tq, kv_latent (o), h, 1));
      add_op (ops, memop (NM ("rmsnorm_kv_latent"), SYNTH_MEM_NORM, 2 * es * (double) Tq * o->kv_lora));
      sp_gather (tr, ops, es * T * kv_latent (o));
      if (!o->q_lora)
        sp_gather (tr, ops, es * T * h);
      add_op (ops, gemm (NM ("gemm_q_up"), TRUE, T, heads * qk_dim (o), q_in (o), 1));
      add_op (ops, gemm (NM ("gemm_kv_up"), TRUE, T, heads * (head_dim_of (o) + v_dim (o)), o->kv_lora, 1));
    }
  else
    {
      sp_gather (tr, ops, es * T * h);
      add_op (ops, gemm (NM ("gemm_qkv"), TRUE, T, qkv_out (o) / t, h, 1));
    }
  attention_core (tr, ops, rc);
  add_op (ops, gemm (NM ("gemm_proj"), TRUE, T, h, proj_in (o) / t, 1));
  tp_reduce (tr, ops, es * T * h);
  add_op (ops, memop (NM ("dropout_add_bias"), SYNTH_MEM_ACT, (3 * es + 1) * Tl * h));
  add_op (ops, memop (NM ("layernorm"), SYNTH_MEM_NORM, 2 * es * Tl * h));
  sp_gather (tr, ops, es * T * h);
  if (o->experts > 0)
    {
      /* The router, dispatch, the local experts' MLPs (E/ep of them, T·k·ep/E
       * tokens each on average), combine. */
      guint64 local = o->experts / tr->ep, tok = MAX (1, T * tr->k / local);
      add_op (ops, gemm (NM ("gemm_router"), TRUE, T, o->experts, h, 1));
      if (tr->ep > 1)
        add_op (ops, collop ("nccl_all_to_all", VS_COLL_ALL_TO_ALL, GRP_EP, es * Tl * tr->k * h));
      add_op (ops, gemm (NM ("gemm_expert_fc1"), TRUE, tok, fc1_out (o) / t, h, local));
      add_op (ops, memop (NM ("gelu_bias"), SYNTH_MEM_ACT, act_fwd_bytes (o) * es * (double) T * tr->k * ffn_of (o) / t));
      add_op (ops, gemm (NM ("gemm_expert_fc2"), TRUE, tok, h, ffn_of (o) / t, local));
      if (tr->ep > 1)
        add_op (ops, collop ("nccl_all_to_all", VS_COLL_ALL_TO_ALL, GRP_EP, es * Tl * tr->k * h));
      if (synth_train_shared_params (o) > 0)
        {
          /* The shared expert: every token, as a dense MLP. */
          add_op (ops, gemm (NM ("gemm_shared_fc1"), TRUE, T, shared_fc1_out (o) / t, h, 1));
          add_op (ops, memop (NM ("gelu_bias_shared"), SYNTH_MEM_ACT, act_fwd_bytes (o) * es * (double) T * o->shared_ffn / t));
          add_op (ops, gemm (NM ("gemm_shared_fc2"), TRUE, T, h, o->shared_ffn / t, 1));
        }
    }
  else
    {
      add_op (ops, gemm (NM ("gemm_fc1"), TRUE, T, fc1_out (o) / t, h, 1));
      add_op (ops, memop (NM ("gelu_bias"), SYNTH_MEM_ACT, act_fwd_bytes (o) * es * (double) T * ffn_of (o) / t));
      add_op (ops, gemm (NM ("gemm_fc2"), TRUE, T, h, ffn_of (o) / t, 1));
    }
  tp_reduce (tr, ops, es * T * h);
  add_op (ops, memop (NM ("dropout_add_bias"), SYNTH_MEM_ACT, (3 * es + 1) * Tl * h));
#undef NM
}

/* A layer's backward: every GEMM's dX and dW, the elementwise backwards,
 * the TP reductions of the input gradients, the gradient accumulation. */
static void
build_bwd (Train *tr, GArray *ops, guint64 layer_params)
{
  const SynthTrainOpts *o = tr->o;
  guint64 h = o->hidden, t = tr->t, T = (guint64) o->seq * o->batch, s = o->seq, b = o->batch;
  guint64 heads = o->heads / t, qk = qk_dim (o), vd = v_dim (o), qw = proj_in (o);
  double Tl = o->sp ? (double) T / t : (double) T, es = tr->es, scores = (double) b * heads * s * s;
  add_op (ops, memop ("dropout_add_bias_bwd", SYNTH_MEM_ACT, (2 * es + 1) * Tl * h));
  sp_gather (tr, ops, es * T * h);
  if (o->experts > 0)
    {
      guint64 local = o->experts / tr->ep, tok = MAX (1, T * tr->k / local);
      if (tr->ep > 1)
        add_op (ops, collop ("nccl_all_to_all", VS_COLL_ALL_TO_ALL, GRP_EP, es * Tl * tr->k * h));
      add_op (ops, gemm ("gemm_expert_fc2_dx", TRUE, tok, ffn_of (o) / t, h, local));
      add_op (ops, gemm ("gemm_expert_fc2_dw", FALSE, ffn_of (o) / t, h, tok, local));
      add_op (ops, memop ("gelu_bias_bwd", SYNTH_MEM_ACT, act_bwd_bytes (o) * es * (double) T * tr->k * ffn_of (o) / t));
      add_op (ops, gemm ("gemm_expert_fc1_dx", TRUE, tok, h, fc1_out (o) / t, local));
      add_op (ops, gemm ("gemm_expert_fc1_dw", FALSE, h, fc1_out (o) / t, tok, local));
      if (tr->ep > 1)
        add_op (ops, collop ("nccl_all_to_all", VS_COLL_ALL_TO_ALL, GRP_EP, es * Tl * tr->k * h));
      add_op (ops, gemm ("gemm_router_dx", TRUE, T, h, o->experts, 1));
      add_op (ops, gemm ("gemm_router_dw", FALSE, o->experts, h, T, 1));
      if (synth_train_shared_params (o) > 0)
        {
          add_op (ops, gemm ("gemm_shared_fc2_dx", TRUE, T, o->shared_ffn / t, h, 1));
          add_op (ops, gemm ("gemm_shared_fc2_dw", FALSE, o->shared_ffn / t, h, T, 1));
          add_op (ops, memop ("gelu_bias_shared_bwd", SYNTH_MEM_ACT, act_bwd_bytes (o) * es * (double) T * o->shared_ffn / t));
          add_op (ops, gemm ("gemm_shared_fc1_dx", TRUE, T, h, shared_fc1_out (o) / t, 1));
          add_op (ops, gemm ("gemm_shared_fc1_dw", FALSE, h, shared_fc1_out (o) / t, T, 1));
        }
    }
  else
    {
      add_op (ops, gemm ("gemm_fc2_dx", TRUE, T, ffn_of (o) / t, h, 1));
      add_op (ops, gemm ("gemm_fc2_dw", FALSE, ffn_of (o) / t, h, T, 1));
      add_op (ops, memop ("gelu_bias_bwd", SYNTH_MEM_ACT, act_bwd_bytes (o) * es * (double) T * ffn_of (o) / t));
      add_op (ops, gemm ("gemm_fc1_dx", TRUE, T, h, fc1_out (o) / t, 1));
      add_op (ops, gemm ("gemm_fc1_dw", FALSE, h, fc1_out (o) / t, T, 1));
    }
  tp_reduce (tr, ops, es * T * h);
  /* Read x, dy and the residual's gradient, write dx. */
  add_op (ops, memop ("layernorm_bwd", SYNTH_MEM_NORM, 4 * es * Tl * h));
  add_op (ops, memop ("dropout_add_bias_bwd", SYNTH_MEM_ACT, (2 * es + 1) * Tl * h));
  /* Under SP, the up projections' inputs gathered again for their dW
   * (x's, or latent attention's latents). */
  sp_gather (tr, ops, es * T * (mla (o) ? q_in (o) + kv_latent (o) : h));
  add_op (ops, gemm ("gemm_proj_dx", TRUE, T, qw / t, h, 1));
  add_op (ops, gemm ("gemm_proj_dw", FALSE, h, qw / t, T, 1));
  if (o->flash_attn)
    {
      /* Five causal half-GEMMs (QKᵀ again, dV, dP, dQ, dK: 2.5 times the
       * forward's FLOPs, Dao 2023); reads Q, K, V, O, dO and the
       * log-sum-exps, writes dQ, dK and dV. */
      double flops = attended (tr) * (3.0 * qk + 2.0 * vd);
      double io = es * (double) b * heads * s * (4.0 * qk + 4.0 * vd) + 4.0 * b * heads * s;
      if (tr->cp > 1)
        {
          /* Each step passes K, V and the dK, dV accumulated so far;
           * after the last chunk the dK and dV go home (TransformerEngine's
           * AttnFuncWithCPAndKVP2P). */
          double kv = cp_kv_bytes (tr);
          add_op (ops, ringop ("flash_attn_bwd", flops * tr->cp / FLASH_REL, io + (tr->cp - 1) * 2 * kv, tr->cp,
                               2 * kv, kv));
        }
      else
        add_op (ops, fusedop ("flash_attn_bwd", flops / FLASH_REL, io));
    }
  else
    {
      add_op (ops, gemm ("gemm_av_bmm_bwd_dp", FALSE, s, s, vd, b * heads));
      add_op (ops, gemm ("gemm_av_bmm_bwd_dv", FALSE, s, vd, s, b * heads));
      add_op (ops, memop ("dropout_attn_bwd", SYNTH_MEM_ACT, (2 * es + 1) * scores));
      add_op (ops, memop ("softmax_bwd", SYNTH_MEM_NORM, 3 * es * scores));
      add_op (ops, gemm ("gemm_qk_bmm_bwd_dq", FALSE, s, qk, s, b * heads));
      add_op (ops, gemm ("gemm_qk_bmm_bwd_dk", FALSE, s, qk, s, b * heads));
    }
  if (mla (o))
    {
      /* The up projections' dX are partial sums over the tensor ranks'
       * heads: reduced at the latents' width (and, for Q straight from x,
       * at x's); the down projections' then need none. */
      guint64 Tq = o->sp ? T / t : T, kvl = kv_latent (o), qin = q_in (o);
      guint64 qn = heads * qk, kvn = heads * (head_dim_of (o) + vd);
      add_op (ops, gemm ("gemm_kv_up_dx", TRUE, T, o->kv_lora, kvn, 1));
      add_op (ops, gemm ("gemm_kv_up_dw", FALSE, kvn, o->kv_lora, T, 1));
      add_op (ops, gemm ("gemm_q_up_dx", TRUE, T, qin, qn, 1));
      add_op (ops, gemm ("gemm_q_up_dw", FALSE, qn, qin, T, 1));
      tp_reduce (tr, ops, es * T * (o->q_lora + kvl));
      if (!o->q_lora)
        tp_reduce (tr, ops, es * T * h);
      add_op (ops, memop ("rmsnorm_latent_bwd", SYNTH_MEM_NORM, 4 * es * (double) Tq * (o->q_lora + o->kv_lora)));
      if (o->q_lora)
        {
          add_op (ops, gemm ("gemm_q_down_dx", TRUE, Tq, h, o->q_lora, 1));
          add_op (ops, gemm ("gemm_q_down_dw", FALSE, o->q_lora, h, Tq, 1));
        }
      add_op (ops, gemm ("gemm_kv_down_dx", TRUE, Tq, h, kvl, 1));
      add_op (ops, gemm ("gemm_kv_down_dw", FALSE, kvl, h, Tq, 1));
    }
  else
    {
      add_op (ops, gemm ("gemm_qkv_dx", TRUE, T, h, qkv_out (o) / t, 1));
      add_op (ops, gemm ("gemm_qkv_dw", FALSE, qkv_out (o) / t, h, T, 1));
      tp_reduce (tr, ops, es * T * h);
    }
  add_op (ops, memop ("layernorm_bwd", SYNTH_MEM_NORM, 4 * es * Tl * h));
  if (o->zero < 2 || tr->dp <= 1)
    add_op (ops, memop ("elementwise_grad_accum", SYNTH_MEM_STREAM, 3.0 * tr->G * (double) layer_params));
}

/* The vocabulary-parallel embedding: gather the rows and add the position
 * embedding (rows read, sums written twice), its TP reduction, dropout;
 * backward: dropout, the index-add of dY into the rows (and the dense
 * V/t x h gradient it writes). */
static void
build_emb (Train *tr, GArray *fwd, GArray *bwd)
{
  const SynthTrainOpts *o = tr->o;
  guint64 h = o->hidden, T = (guint64) o->seq * o->batch;
  double Tl = o->sp ? (double) T / tr->t : (double) T, es = tr->es;
  add_op (fwd, memop ("embedding_fwd", SYNTH_MEM_STREAM, 4 * es * T * h));
  tp_reduce (tr, fwd, es * T * h);
  add_op (fwd, memop ("dropout_embedding_fwd", SYNTH_MEM_ACT, (2 * es + 1) * Tl * h));
  add_op (bwd, memop ("dropout_embedding_bwd", SYNTH_MEM_ACT, (2 * es + 1) * Tl * h));
  sp_gather (tr, bwd, es * T * h);
  add_op (bwd, memop ("embedding_bwd", SYNTH_MEM_STREAM, 3 * es * T * h + tr->G * (double) o->vocab * h / tr->t));
}

/* The last stage's final layer norm, the LM head GEMM against the tied
 * embedding and the vocabulary-parallel cross entropy (Megatron's
 * vocab_parallel_cross_entropy: the logits made fp32, then max, exp and
 * sum passes, three small TP all-reduces: 22 bytes an element forward,
 * our count; 10 backward); backward: the loss's gradient, dX and dW,
 * the reduction of dX, the layer norm's. */
static void
build_head (Train *tr, GArray *fwd, GArray *bwd)
{
  const SynthTrainOpts *o = tr->o;
  guint64 h = o->hidden, T = (guint64) o->seq * o->batch, V = o->vocab / tr->t;
  double Tl = o->sp ? (double) T / tr->t : (double) T, es = tr->es, logits = (double) T * V;
  add_op (fwd, memop ("layernorm_fwd", SYNTH_MEM_NORM, 2 * es * Tl * h));
  sp_gather (tr, fwd, es * T * h);
  add_op (fwd, gemm ("gemm_lm_head_fwd", TRUE, T, V, h, 1));
  add_op (fwd, memop ("cross_entropy_fwd", SYNTH_MEM_STREAM, 22 * logits));
  if (tr->t > 1)
    for (int i = 0; i < 3; i++)
      add_op (fwd, collop ("nccl_all_reduce", VS_COLL_ALL_REDUCE, GRP_TP, 4.0 * T));
  add_op (bwd, memop ("cross_entropy_bwd", SYNTH_MEM_STREAM, 10 * logits));
  add_op (bwd, gemm ("gemm_lm_head_dx", TRUE, T, h, V, 1));
  add_op (bwd, gemm ("gemm_lm_head_dw", FALSE, V, h, T, 1));
  tp_reduce (tr, bwd, es * T * h);
  add_op (bwd, memop ("layernorm_bwd", SYNTH_MEM_NORM, 4 * es * Tl * h));
}

/* A multi-token prediction module's own part (DeepSeek-V3, section 2.2):
 * the next tokens' embedding (vocabulary-parallel, reduced), the main
 * model's hidden state and it normalised, the two concatenated and
 * projected from 2h to h (row-parallel over the 2h inputs: the output
 * reduced; backward, the input gradient gathered), before its
 * transformer layer and the shared head. */
static void
build_mtp (Train *tr, GArray *fwd, GArray *bwd)
{
  const SynthTrainOpts *o = tr->o;
  guint64 h = o->hidden, t = tr->t, T = (guint64) o->seq * o->batch;
  double Tl = o->sp ? (double) T / t : (double) T, es = tr->es;
  add_op (fwd, memop ("mtp_embedding_fwd", SYNTH_MEM_STREAM, 4 * es * T * h));
  tp_reduce (tr, fwd, es * T * h);
  add_op (fwd, memop ("mtp_rmsnorm_fwd", SYNTH_MEM_NORM, 4 * es * Tl * h));
  sp_gather (tr, fwd, 2 * es * T * h);
  add_op (fwd, gemm ("gemm_mtp_proj_fwd", TRUE, T, h, 2 * h / t, 1));
  tp_reduce (tr, fwd, es * T * h);
  sp_gather (tr, bwd, es * T * h);
  add_op (bwd, gemm ("gemm_mtp_proj_dx", TRUE, T, 2 * h / t, h, 1));
  add_op (bwd, gemm ("gemm_mtp_proj_dw", FALSE, 2 * h / t, h, T, 1));
  if (t > 1)
    add_op (bwd, collop ("nccl_all_gather", VS_COLL_ALL_GATHER, GRP_TP, 2 * es * T * h / t));
  add_op (bwd, memop ("mtp_rmsnorm_bwd", SYNTH_MEM_NORM, 8 * es * Tl * h));
  add_op (bwd, memop ("mtp_embedding_bwd", SYNTH_MEM_STREAM, 3 * es * T * h + tr->G * (double) o->vocab * h / t));
}

static guint64
lop_ns (Train *tr, const Lop *op)
{
  switch (op->type)
    {
    case LOP_GEMM:
      return synth_gemm_ns (tr->e, tr->prec, tr->gs, op->m, op->n, op->k, op->batch);
    case LOP_MEM:
      return synth_mem_ns (tr->e, op->cls, op->bytes);
    case LOP_FUSED:
      return synth_kernel_ns (tr->e, op->flops, op->bytes);
    case LOP_RING:
      {
        /* The first chunk, then each later one once its K and V are in;
         * then the final exchange. */
        guint64 a = synth_kernel_ns (tr->e, op->flops / op->m, (double) op->bytes / op->m);
        guint64 x = synth_collective_ns (tr->e, op->kind, op->k, &tr->groups[op->group]);
        guint64 f = op->n ? synth_collective_ns (tr->e, op->kind, op->n, &tr->groups[op->group]) : 0;
        return a + (op->m - 1) * MAX (a, x) + f;
      }
    default:
      return synth_collective_ns (tr->e, op->kind, op->bytes, &tr->groups[op->group]);
    }
}

/* A LOP_RING on the compute stream: the CP stream starts once the
 * compute stream has written K and V and passes them on step by step;
 * chunk j + 1 waits for step j. Returns the compute stream's time. */
static guint64
emit_ring (Train *tr, const Lop *op, guint64 in, guint64 out)
{
  SynthEmit *e = tr->e;
  const SynthGroup *g = &tr->groups[op->group];
  guint64 total = 0, r[] = { in }, w[] = { out };
  synth_stream_wait (e, CP_COMM, synth_event_record (e, COMPUTE));
  for (guint j = 0; j < op->m; j++)
    {
      guint64 ev = 0;
      if (j + 1 < op->m)
        {
          synth_collective (e, "nccl_sendrecv_cp", CP_COMM, op->kind, op->k, g, out, out, 0);
          ev = synth_event_record (e, CP_COMM);
        }
      total += synth_kernel (e, op->name, COMPUTE, op->flops / op->m, r, 1, w, 1, op->bytes / op->m);
      if (ev)
        synth_stream_wait (e, COMPUTE, ev);
    }
  if (op->n)
    {
      synth_stream_wait (e, CP_COMM, synth_event_record (e, COMPUTE));
      synth_collective (e, "nccl_sendrecv_cp", CP_COMM, op->kind, op->n, g, out, out, 0);
      synth_stream_wait (e, COMPUTE, synth_event_record (e, CP_COMM));
    }
  return total;
}

/* Emits pass PI on the compute stream: GEMMs read W (when they use the
 * weights) and IN, everything writes OUT; collectives read and write OUT. */
static guint64
emit_pass (Train *tr, const Pass *ps, guint64 w, guint64 in, guint64 out)
{
  guint64 total = 0;
  for (guint i = 0; i < ps->ops->len; i++)
    {
      const Lop *op = &g_array_index (ps->ops, Lop, i);
      guint64 r[] = { op->weights ? w : 0, in }, wr[] = { out };
      switch (op->type)
        {
        case LOP_GEMM:
          total += synth_gemm (tr->e, op->name, COMPUTE, tr->prec, tr->gs, op->m, op->n, op->k, op->batch, r, 2, wr, 1);
          break;
        case LOP_MEM:
          total += synth_mem_kernel (tr->e, op->name, COMPUTE, op->cls, op->bytes, r + 1, 1, wr, 1);
          break;
        case LOP_FUSED:
          total += synth_kernel (tr->e, op->name, COMPUTE, op->flops, r + 1, 1, wr, 1, op->bytes);
          break;
        case LOP_RING:
          total += emit_ring (tr, op, in, out);
          break;
        default:
          total += synth_collective (tr->e, op->name, COMPUTE, op->kind, op->bytes, &tr->groups[op->group], out, out, 0);
          break;
        }
    }
  return total;
}

/* Layer U's pass P, its kind's. */
static const Pass *
layer_pass (const Train *tr, const Unit *u, LayerPassIndex p)
{
  return &tr->lpass[u->kind][p];
}

/* The activations layer U keeps: all of them, or selective's. */
static guint64
layer_act (const Train *tr, const Unit *u, gboolean selective)
{
  gboolean dense = (u->kind & KIND_DENSE) != 0;
  return selective ? (dense ? tr->kept_d : tr->kept) : (dense ? tr->full_d : tr->full);
}

static void
pass_time (Train *tr, Pass *ps)
{
  ps->ns = 0;
  for (guint j = 0; j < ps->ops->len; j++)
    ps->ns += lop_ns (tr, &g_array_index (ps->ops, Lop, j));
}

static void
build_passes (Train *tr)
{
  for (guint i = 0; i < PASS_COUNT; i++)
    tr->pass[i].ops = g_array_new (FALSE, FALSE, sizeof (Lop));
  /* Every kind the model has, for the schedule's stages, and the plain
   * one always. */
  const SynthTrainOpts *o = tr->o;
  gboolean held[KINDS] = { TRUE };
  for (guint g = 0; g < o->layers; g++)
    held[layer_kind (o, g)] = TRUE;
  for (guint k = 0; k < KINDS; k++)
    {
      Pass *lp = tr->lpass[k];
      for (guint i = 0; i < LAYER_PASSES; i++)
        lp[i].ops = g_array_new (FALSE, FALSE, sizeof (Lop));
      if (!held[k])
        continue;
      /* A dense layer's passes are built from its own shape, a local
       * layer's with its window. */
      tr->o = k & KIND_DENSE ? &tr->dense_o : o;
      tr->window = k & KIND_LOCAL ? o->window : 0;
      build_fwd (tr, lp[PASS_FWD].ops, FALSE);
      build_bwd (tr, lp[PASS_BWD].ops, k & KIND_DENSE ? tr->dense_n : tr->layer_n);
      build_fwd (tr, lp[PASS_RECOMPUTE].ops, TRUE);
      attention_core (tr, lp[PASS_ATTN_RECOMPUTE].ops, TRUE);
      for (guint i = 0; i < LAYER_PASSES; i++)
        pass_time (tr, &lp[i]);
    }
  tr->o = o;
  tr->window = 0;
  build_emb (tr, tr->pass[PASS_EMB_FWD].ops, tr->pass[PASS_EMB_BWD].ops);
  build_head (tr, tr->pass[PASS_HEAD_FWD].ops, tr->pass[PASS_HEAD_BWD].ops);
  build_mtp (tr, tr->pass[PASS_MTP_FWD].ops, tr->pass[PASS_MTP_BWD].ops);
  for (guint i = 0; i < PASS_COUNT; i++)
    pass_time (tr, &tr->pass[i]);
}

/* ---- groups ---- */

/* The communicators of this stage's tensor and data rank 0, in
 * Megatron's rank order (tensor fastest, then data, then pipeline) on
 * nodes of g GPUs, and the schedule's transfer times between stages. */
static void
make_groups (Train *tr)
{
  guint g = MAX (synth_config (tr->e)->network.ranks_per_node, 1u);
  guint t = tr->t, n = tr->dp;
  /* Ranks of a group of stride STRIDE that share a node (at least 1). */
#define PER_NODE(stride, size) ((guint32) MIN ((size), MAX (1u, g / MIN ((stride), g))))
  tr->groups[GRP_TP] = (SynthGroup) { 1, VS_ROLE_TP, t, PER_NODE (1u, t) };
  tr->groups[GRP_DP] = (SynthGroup) { 2, VS_ROLE_DP, n, PER_NODE (t, n) };
  /* Neighbouring stages are t·N ranks apart, stage 0 and the last stage
   * p - 1 pipeline steps: the pair that feeds this stage (GRP_PREV) and
   * the pair it feeds (GRP_NEXT) is the wrap for stage 0's and the last
   * stage's outer sides. */
  SynthGroup near = { 3, VS_ROLE_PP, 2, PER_NODE (t * n, 2u) };
  SynthGroup wrap = { 4, VS_ROLE_PP, 2, PER_NODE (t * n * MAX (tr->pp - 1, 1u), 2u) };
  tr->groups[GRP_NEXT] = tr->stage + 1 == tr->pp && tr->pp > 1 ? wrap : near;
  tr->groups[GRP_PREV] = tr->stage == 0 ? wrap : near;
  tr->groups[GRP_NEXT].id = 3, tr->groups[GRP_PREV].id = 4;
  /* The tied embedding's pair is the wrap's ranks. */
  tr->groups[GRP_EMB] = wrap, tr->groups[GRP_EMB].id = 5;
  /* One transfer of the schedule (pp_msg bytes): between neighbours, and
   * from the last stage to the first. */
  tr->p2p_ns = synth_collective_ns (tr->e, VS_COLL_SEND, tr->pp_msg, &near);
  tr->p2p_wrap_ns = synth_collective_ns (tr->e, VS_COLL_SEND, tr->pp_msg, &wrap);
  tr->groups[GRP_EP] = (SynthGroup) { 6, VS_ROLE_EP, tr->ep, PER_NODE (t, tr->ep) };
  tr->groups[GRP_EDP] = (SynthGroup) { 7, VS_ROLE_DP, tr->edp, PER_NODE (t * tr->ep, tr->edp) };
  /* Megatron-Core's order with context parallelism: tensor, context, data,
   * pipeline; the data-parallel group above is its dp x cp one. */
  tr->groups[GRP_CP] = (SynthGroup) { 8, VS_ROLE_CP, tr->cp, PER_NODE (t, tr->cp) };
#undef PER_NODE
}

/* A collective over the data-parallel ranks of unit U's states: the dense
 * part over the data-parallel group, the experts' over the ranks holding
 * the same experts. BYTES_PER: state bytes a parameter; SHARDED: the
 * input is a shard (all-gather). */
static void
dp_collective (Train *tr, Unit *u, const char *name, guint64 stream, VsCollKind kind, guint per, gboolean sharded,
               guint64 read, guint64 write)
{
  guint64 dense = u->n - u->n_exp;
  if (tr->dp > 1 && dense > 0)
    synth_collective (tr->e, name, stream, kind, shard (dense * per, tr->dp, sharded), &tr->groups[GRP_DP], read,
                      write, 0);
  if (tr->edp > 1 && u->n_exp > 0)
    synth_collective (tr->e, name, stream, kind, shard (u->n_exp * per, tr->edp, sharded), &tr->groups[GRP_EDP],
                      read, write, 0);
}

/* FSDP's rate limiter (torch/distributed/fsdp/_limiter_utils.py,
 * _FreeEventQueue, _max_num_inflight_all_gathers = 2 "empirically
 * chosen"; used by _unshard and _reshard in _runtime_utils.py): each
 * reshard records an event on the compute stream after freeing the
 * gathered parameters, and an unshard with two such events queued first
 * blocks the CPU on the oldest (event.synchronize()). Without it the host
 * queues the whole step in milliseconds, and with record_stream every
 * gathered buffer stays out of the cache until the compute stream has run
 * past its free, so each later gather takes a new block. */
#define FSDP_MAX_INFLIGHT_ALL_GATHERS 2

static gboolean
limits_all_gathers (Train *tr)
{
  return tr->o->zero >= 3 && tr->dp > 1 && !tr->o->no_limit_all_gathers;
}

/* ZeRO-3: all-gathers U's parameters on the communication stream, as
 * FSDP/DeepSpeed prefetch the next layer's while this one computes. */
static void
params_prefetch (Train *tr, Unit *u)
{
  if (tr->o->zero < 3 || tr->dp <= 1 || u->gathered != 0 || u->n == 0)
    return;
  if (limits_all_gathers (tr) && tr->free_events->len >= FSDP_MAX_INFLIGHT_ALL_GATHERS)
    {
      guint64 oldest = g_array_index (tr->free_events, guint64, 0);
      g_array_remove_index (tr->free_events, 0);
      synth_event_sync (tr->e, oldest);
    }
  u->gathered = synth_alloc (tr->e, u->n * tr->P, VS_MEM_DEVICE, "workspace");
  synth_stream_wait (tr->e, COMM, synth_event_record (tr->e, COMPUTE));
  dp_collective (tr, u, "nccl_all_gather", COMM, VS_COLL_ALL_GATHER, tr->P, TRUE, u->p, u->gathered);
  u->gather_event = synth_event_record (tr->e, COMM);
}

/* The id a kernel reads the unit's params from; under ZeRO-3 the compute
 * stream waits for their gather. */
static guint64
params_acquire (Train *tr, Unit *u)
{
  if (tr->o->zero < 3 || tr->dp <= 1)
    return u->p;
  params_prefetch (tr, u);
  synth_stream_wait (tr->e, COMPUTE, u->gather_event);
  return u->gathered;
}

static void
params_release (Train *tr, Unit *u)
{
  if (u->gathered == 0)
    return;
  synth_free (tr->e, u->gathered);
  u->gathered = 0;
  if (limits_all_gathers (tr))
    {
      guint64 ev = synth_event_record (tr->e, COMPUTE);
      g_array_append_val (tr->free_events, ev);
    }
}

/* Where a unit's backward writes its grads; reduce the buffer with grads_commit. */
static guint64
grads_acquire (Train *tr, Unit *u)
{
  if (tr->o->zero < 2 || tr->dp <= 1)
    return u->g;
  if (u->pending != 0)
    return u->pending;   /* the tied embedding's second use in this micro-batch */
  return synth_alloc (tr->e, u->n * tr->G, VS_MEM_DEVICE, "workspace");
}

/* Reduces what a backward wrote into BUF: under ZeRO 2-3 a reduce-scatter
 * into the shard now (unless MORE: the tied embedding's other use still
 * adds to it in this micro-batch); below, the step's one reduction after
 * the last micro-batch, layer by layer on the communication stream (DDP),
 * or not at all here (LocalDDP: once after the backward). */
static void
grads_commit (Train *tr, Unit *u, guint64 buf, gboolean last_micro, gboolean more)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  if (buf != u->g)
    {
      if (more)
        {
          u->pending = buf;
          return;
        }
      dp_collective (tr, u, "nccl_reduce_scatter", COMPUTE, VS_COLL_REDUCE_SCATTER, tr->G, FALSE, buf, u->g);
      synth_free (e, buf);
      u->pending = 0;
    }
  else if (tr->dp > 1 && last_micro && !more && !o->ddp_local)
    {
      /* Stage 0 all-reduces, stage 1 reduce-scatters (ZeRO section 7.2.1),
       * on the communication stream once the grads are written. */
      synth_stream_wait (e, COMM, synth_event_record (e, COMPUTE));
      if (o->zero == 1)
        dp_collective (tr, u, "nccl_reduce_scatter", COMM, VS_COLL_REDUCE_SCATTER, tr->G, FALSE, u->g, u->g);
      else
        dp_collective (tr, u, "nccl_all_reduce", COMM, VS_COLL_ALL_REDUCE, tr->G, FALSE, u->g, u->g);
      tr->comm_event = 1;
    }
}

static void
allocate_states (Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  for (guint i = 0; i < tr->n_units; i++)
    {
      Unit *u = &tr->units[i];
      if (u->n == 0)
        continue;
      u->p = synth_alloc (tr->e, unit_bytes (tr, u, tr->P, o->zero >= 3), VS_MEM_DEVICE, "params");
      u->g = synth_alloc (tr->e, unit_bytes (tr, u, tr->G, o->zero >= 2), VS_MEM_DEVICE, "grads");
      guint64 ob = unit_bytes (tr, u, tr->O, o->zero >= 1);
      if (o->offload_optimizer)
        {
          u->o = synth_alloc (tr->e, ob, VS_MEM_PINNED, "optimizer");
          u->hg = synth_alloc (tr->e, synth_size (tr->e, u->g), VS_MEM_PINNED, "grads");
        }
      else
        u->o = synth_alloc (tr->e, ob, VS_MEM_DEVICE, "optimizer");
    }
  /* Weights arrive from the checkpoint file (pageable host memory). */
  for (guint i = 0; i < tr->n_units; i++)
    if (tr->units[i].n != 0)
      synth_copy (tr->e, VS_DIR_H2D, 0, tr->units[i].p, synth_size (tr->e, tr->units[i].p), COMPUTE, TRUE);
  synth_sync_device (tr->e);
}

/* After the step's backward: LocalDDP's one all-reduce of the gradient
 * buffer, and with a pipeline the tied embedding's all-reduce between the
 * first and the last stage (Megatron's _allreduce_embedding_grads). */
static void
after_backward (Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  Unit *emb = &tr->units[tr->Ls];
  if (o->ddp_local && tr->dp > 1 && o->zero < 2)
    {
      guint64 dense = 0, exp = 0;
      for (guint i = 0; i < tr->n_units; i++)
        dense += tr->units[i].n - tr->units[i].n_exp, exp += tr->units[i].n_exp;
      VsCollKind kind = o->zero == 1 ? VS_COLL_REDUCE_SCATTER : VS_COLL_ALL_REDUCE;
      const char *name = o->zero == 1 ? "nccl_reduce_scatter" : "nccl_all_reduce";
      guint64 id = tr->units[0].g;
      if (dense > 0)
        synth_collective (tr->e, name, COMPUTE, kind, dense * tr->G, &tr->groups[GRP_DP], id, id, 0);
      if (exp > 0 && tr->edp > 1)
        synth_collective (tr->e, name, COMPUTE, kind, exp * tr->G, &tr->groups[GRP_EDP], id, id, 0);
    }
  /* Untied, the prediction modules' copy of the embedding on the last
   * stage (half its unit) is reduced with stage 0's. */
  if (tr->pp > 1 && emb->n != 0 && (!o->untied || o->mtp))
    synth_collective (tr->e, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE,
                      synth_size (tr->e, emb->g) / (o->untied && tr->mtp ? 2 : 1), &tr->groups[GRP_EMB], emb->g,
                      emb->g, 0);
  /* Under sequence parallelism the weights every tensor rank holds whole
   * saw only its tokens: latent attention's down projections and the MoE
   * router, summed over the tensor ranks once a step in one all-reduce
   * (Megatron-Core's _allreduce_non_tensor_model_parallel_grads, for
   * parameters marked sequence_parallel; layer norms' weights, which the
   * generator does not count, go with them). */
  if (o->sp && tr->t > 1)
    {
      guint64 whole = 0;
      for (guint i = 0; i < tr->n_units; i++)
        if (i != tr->Ls)   /* the layers and the prediction modules', not the embedding */
          whole += synth_train_attn_replicated (o) + (tr->units[i].kind & KIND_DENSE ? 0 : (guint64) o->hidden * o->experts);
      if (whole > 0)
        synth_collective (tr->e, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE, whole * tr->G, &tr->groups[GRP_TP],
                          tr->units[0].g, tr->units[0].g, 0);
    }
}

/* A memory-bound pass of the optimizer step on the compute stream: by
 * its BYTES under the kernel model, else at FLOPS. */
static void
step_kernel (SynthEmit *e, const char *name, double flops, guint64 bytes, const guint64 *r, guint nr,
             const guint64 *w, guint nw)
{
  if (synth_uses_kernel_model (e))
    synth_mem_kernel (e, name, COMPUTE, SYNTH_MEM_STREAM, bytes, r, nr, w, nw);
  else
    synth_kernel (e, name, COMPUTE, flops, r, nr, w, nw, bytes);
}

static void
optimizer_step (Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  const VsConfig *cfg = synth_config (e);
  const char *name = o->optimizer == SYNTH_OPT_ADAM ? "multi_tensor_apply_adam" : "multi_tensor_apply_sgd";
  if (tr->comm_event)
    synth_stream_wait (e, COMPUTE, synth_event_record (e, COMM));
  tr->comm_event = 0;
  /* 16-bit gradients, fp32 master weights: the step first casts the
   * gradients of every parameter this rank updates to fp32 (Megatron's
   * _copy_model_grads_to_main_grads, main_grad.float(); DeepSpeed's
   * FP16_Optimizer and ZeRO 1-2 partitions, .to(fp32); apex's master
   * grads), all before the update, and frees them after it. */
  gboolean main_grads = fp32_main_grads (o);
  g_autofree guint64 *mg = g_new0 (guint64, tr->n_units);
  for (guint i = 0; main_grads && i < tr->n_units; i++)
    {
      Unit *u = &tr->units[i];
      if (u->n == 0)
        continue;
      guint64 ns = unit_bytes (tr, u, 1, o->zero >= 1);
      mg[i] = synth_alloc (e, ns * 4, VS_MEM_DEVICE, "workspace");
      guint64 r[] = { u->g }, w[] = { mg[i] };
      step_kernel (e, "multi_tensor_scale", (double) ns, ns * (tr->G + 4), r, 1, w, 1);
    }
  for (guint i = 0; i < tr->n_units; i++)
    {
      Unit *u = &tr->units[i];
      if (u->n == 0)
        continue;
      guint64 ns = unit_bytes (tr, u, 1, o->zero >= 1); /* parameters this rank updates */
      if (o->offload_optimizer)
        {
          /* ZeRO-Offload: grads down, the step on the CPU, fp16 params up. */
          synth_copy (e, VS_DIR_D2H, u->g, u->hg, synth_size (e, u->g), COMPUTE, TRUE);
          synth_sync_stream (e, COMPUTE);
          double host_bytes = (double) ns * (2.0 * tr->O + tr->G + tr->P);
          synth_host_work (e, cfg->host.bandwidth > 0 ? (guint64) (host_bytes / cfg->host.bandwidth * 1e9) : 0);
          guint64 up = MIN (synth_size (e, u->hg), ns * tr->P);
          synth_copy (e, VS_DIR_H2D, u->hg, u->p, up, COMPUTE, TRUE);
        }
      else
        {
          /* One pass over params, grads and states (apex's multi-tensor
           * Adam): read and write params and states, read grads. */
          guint64 r[] = { u->p, main_grads ? mg[i] : u->g, u->o }, w[] = { u->p, u->o };
          guint64 bytes = ns * (2 * tr->P + (main_grads ? 4 : tr->G) + 2 * tr->O);
          step_kernel (e, name, 15.0 * (double) ns, bytes, r, 3, w, 2);
        }
      /* Stages 1-2: each rank updated its shard; gather the others'. */
      if (o->zero == 1 || o->zero == 2)
        dp_collective (tr, u, "nccl_all_gather", COMPUTE, VS_COLL_ALL_GATHER, tr->P, TRUE, u->p, u->p);
    }
  for (guint i = 0; i < tr->n_units; i++)
    if (mg[i])
      synth_free (e, mg[i]);
}

/* Whether chunk C of this stage is the model's last virtual stage: it
 * then runs the LM head and the loss. */
static gboolean
has_head (Train *tr, guint c)
{
  return tr->stage + 1 == tr->pp && c + 1 == tr->v;
}

/* Whether chunk C of this stage is the model's first virtual stage: it
 * then loads the batch and runs the embedding. */
static gboolean
has_embedding (Train *tr, guint c)
{
  return tr->stage == 0 && c == 0;
}

/* Layers on stage S. */
static guint
stage_n (const Train *tr, guint s)
{
  return s == 0 ? tr->nfirst : s + 1 == tr->pp ? tr->nlast : tr->nmid;
}

/* The layers a virtual stage holds when the embedding and the loss count
 * as layers in the split (Megatron-Core's
 * --account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split): (L + E + Z) / (p·v) a virtual
 * stage, the first one E fewer, the last Z fewer. */
static guint
acc_per (const Train *tr)
{
  return (tr->o->layers + tr->acc_e + tr->acc_z) / (tr->pp * tr->v);
}

/* Layers on virtual stage VS (chunk vs / p of stage vs mod p): a stage's
 * layers / v each, or the accounted split's. */
static guint
vs_n (const Train *tr, guint vs)
{
  if (tr->acc_e || tr->acc_z)
    return acc_per (tr) - (vs == 0 ? tr->acc_e : 0) - (vs + 1 == tr->pp * tr->v ? tr->acc_z : 0);
  return stage_n (tr, vs % tr->pp) / tr->v;
}

/* The model's first layer of virtual stage VS: virtual stages hold
 * consecutive layers. */
static guint
vs_start (const Train *tr, guint vs)
{
  if (tr->acc_e || tr->acc_z)
    return vs == 0 ? 0 : vs * acc_per (tr) - tr->acc_e;
  guint c = vs / tr->pp, s = vs % tr->pp;
  guint before = s == 0 ? 0 : tr->nfirst + (s - 1) * tr->nmid;
  return (c * tr->o->layers + before) / tr->v;
}

/* This stage's chunk C: its layers, and the first of them among the
 * stage's units. */
static guint
chunk_n (const Train *tr, guint c)
{
  return vs_n (tr, c * tr->pp + tr->stage);
}

static guint
chunk_base (const Train *tr, guint c)
{
  guint base = 0;
  for (guint k = 0; k < c; k++)
    base += chunk_n (tr, k);
  return base;
}

/* The multi-token prediction modules' forward on the head's micro-batch
 * (DeepSeek-V3 section 2.2): from the main model's final hidden state
 * H, each module's projection, its layer and the shared head; module
 * d + 1 takes module d's output. Each keeps its layer's input (its
 * activations unless recomputed) and its logits for the backward. */
static void
mtp_forward (Train *tr, Micro *mb, guint64 H)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY, sel = o->checkpoint == SYNTH_CKPT_SELECTIVE;
  guint64 tokens = (guint64) o->seq * o->batch;
  Unit *emb = &tr->units[tr->Ls];
  mb->M = g_new0 (guint64, 2 * tr->mtp);
  guint64 prev = H;
  for (guint d = 0; d < tr->mtp; d++)
    {
      Unit *u = &tr->units[tr->Ls + 1 + d];
      guint64 *M = &mb->M[2 * d];
      guint64 w = params_acquire (tr, u);
      M[0] = synth_alloc (e, every ? tr->ckpt : layer_act (tr, u, sel), VS_MEM_DEVICE, "activations");
      emit_pass (tr, &tr->pass[PASS_MTP_FWD], w, prev, M[0]);
      guint64 tmp = every ? synth_alloc (e, layer_act (tr, u, FALSE), VS_MEM_DEVICE, "activations")
                    : sel ? synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations")
                          : 0;
      guint64 y = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, layer_pass (tr, u, PASS_FWD), w, M[0], y);
      if (tmp != 0)
        synth_free (e, tmp);
      params_release (tr, u);
      guint64 wh = params_acquire (tr, emb);
      M[1] = synth_alloc (e, tokens * o->vocab * 2 * act_scale (o) / tr->t, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, &tr->pass[PASS_HEAD_FWD], wh, y, M[1]);
      if (prev != H)
        synth_free (e, prev);
      prev = y;
    }
  if (prev != H)
    synth_free (e, prev);
}

/* Their backward, last module first: the shared head's (into the
 * embedding unit's gradients), the layer's (recomputed as the main
 * layers are), then the projection's, the norms' and the lookup's, whose
 * input gradient adds to the main hidden state's, DY. */
static void
mtp_backward (Train *tr, Micro *mb, guint64 dy, gboolean last_micro)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY, sel = o->checkpoint == SYNTH_CKPT_SELECTIVE;
  Unit *emb = &tr->units[tr->Ls];
  for (guint d = tr->mtp; d-- > 0;)
    {
      Unit *u = &tr->units[tr->Ls + 1 + d];
      guint64 *M = &mb->M[2 * d];
      guint64 wh = params_acquire (tr, emb), gh = grads_acquire (tr, emb);
      guint64 dyd = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, &tr->pass[PASS_HEAD_BWD], wh, M[1], gh);
      grads_commit (tr, emb, gh, FALSE, TRUE);
      synth_free (e, M[1]);
      guint64 w = params_acquire (tr, u), acts = M[0], tmp = 0;
      if (every)
        {
          acts = tmp = synth_alloc (e, layer_act (tr, u, FALSE), VS_MEM_DEVICE, "activations");
          emit_pass (tr, layer_pass (tr, u, PASS_RECOMPUTE), w, M[0], tmp);
        }
      else if (sel)
        {
          tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          emit_pass (tr, layer_pass (tr, u, PASS_ATTN_RECOMPUTE), w, M[0], tmp);
        }
      guint64 gu = grads_acquire (tr, u);
      guint64 dx = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, layer_pass (tr, u, PASS_BWD), w, acts, dx);
      synth_free (e, dyd);
      if (tmp != 0)
        synth_free (e, tmp);
      synth_free (e, M[0]);
      grads_commit (tr, u, gu, last_micro, FALSE);
      emit_pass (tr, &tr->pass[PASS_MTP_BWD], w, dx, dy);
      params_release (tr, u);
      synth_free (e, dx);
    }
  g_free (mb->M);
  mb->M = NULL;
}

/* A pass of unit U, with its parameters gathered (ZeRO-3) around it. */
static void
forward (Train *tr, guint c, guint64 pinned_inputs, Micro *mb, guint64 recv_wait)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  guint L = chunk_n (tr, c), base = chunk_base (tr, c);
  guint64 tokens = (guint64) o->seq * o->batch;
  Unit *emb = &tr->units[tr->Ls];
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY;
  guint N = every ? o->checkpoint_every : 1;
  guint nseg = (L + N - 1) / N;
  guint64 *A = mb->A = g_new0 (guint64, L + 1);   /* kept activations per layer, or temps */
  guint64 *C = mb->C = g_new0 (guint64, nseg + 1); /* segment inputs */

  gboolean sel = o->checkpoint == SYNTH_CKPT_SELECTIVE;
  /* A chunk of no layer (the accounted split's first or last, one layer
   * a chunk): the embedding's output, or what it receives, is its output. */
  guint64 out = 0;
  guint64 first = L == 0 ? (out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace"))
                  : every ? (C[0] = synth_alloc (e, tr->ckpt, VS_MEM_DEVICE, "activations"))
                          : (A[0] = synth_alloc (e, layer_act (tr, &tr->units[base], sel), VS_MEM_DEVICE, "activations"));
  if (has_embedding (tr, c))
    {
      /* The batch: token ids over a side stream, the compute stream waits. */
      guint64 in = mb->in = synth_alloc (e, tokens * 8, VS_MEM_DEVICE, "inputs");
      synth_copy (e, VS_DIR_H2D, pinned_inputs, in, tokens * 8, COPY, TRUE);
      synth_stream_wait (e, COMPUTE, synth_event_record (e, COPY));
      if (emb->n != 0)
        {
          guint64 w = params_acquire (tr, emb);
          emit_pass (tr, &tr->pass[PASS_EMB_FWD], w, in, first);
          params_release (tr, emb);
        }
    }
  else
    /* The previous virtual stage's output: the previous stage's, or on
     * stage 0 the last stage's previous chunk. */
    synth_collective (e, "nccl_recv", COMPUTE, VS_COLL_RECV, tr->pp_msg, &tr->groups[GRP_PREV], 0, first, recv_wait);
  for (guint i = 0; i < L; i++)
    {
      Unit *u = &tr->units[base + i];
      guint64 w = params_acquire (tr, u);
      if (i + 1 < L)
        params_prefetch (tr, &tr->units[base + i + 1]);
      if (!every)
        {
          guint64 tmp = 0;
          if (o->checkpoint == SYNTH_CKPT_SELECTIVE)
            tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          guint64 next = i + 1 < L ? (A[i + 1] = synth_alloc (e, layer_act (tr, u + 1, sel), VS_MEM_DEVICE, "activations"))
                                   : (out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace"));
          emit_pass (tr, layer_pass (tr, u, PASS_FWD), w, A[i], next);
          if (tmp != 0)
            synth_free (e, tmp);
        }
      else
        {
          guint seg = i / N;
          guint64 input = i % N == 0 ? C[seg] : A[i - 1];
          A[i] = synth_alloc (e, layer_act (tr, u, FALSE), VS_MEM_DEVICE, "activations");
          guint64 next = 0;
          if (i + 1 == L)
            next = out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
          else if ((i + 1) % N == 0)
            next = C[seg + 1] = synth_alloc (e, tr->ckpt, VS_MEM_DEVICE, "activations");
          emit_pass (tr, layer_pass (tr, u, PASS_FWD), w, input, next != 0 ? next : A[i]);
          /* Without grad, a layer's activations die once the next layer has run. */
          if (i % N != 0)
            {
              synth_free (e, A[i - 1]);
              A[i - 1] = 0;
            }
          if (next != 0)
            {
              synth_free (e, A[i]);
              A[i] = 0;
            }
        }
      params_release (tr, u);
    }
  mb->out = out;

  if (!has_head (tr, c))
    {
      /* The output goes to the next virtual stage: the next stage, or
       * from the last stage stage 0's next chunk. */
      synth_collective (e, "nccl_send", COMPUTE, VS_COLL_SEND, tr->pp_msg, &tr->groups[GRP_NEXT], out, 0, 0);
      synth_free (e, out);
      mb->out = 0;
      return;
    }
  /* Loss: logits over the vocabulary (tied embedding), kept for its
   * backward. With a pipeline the last stage loads the labels itself
   * (Megatron's get_batch: tokens on the first stage, labels on the last). */
  if (tr->pp > 1)
    {
      guint64 in = mb->in = synth_alloc (e, tokens * 8, VS_MEM_DEVICE, "inputs");
      synth_copy (e, VS_DIR_H2D, pinned_inputs, in, tokens * 8, COPY, TRUE);
      synth_stream_wait (e, COMPUTE, synth_event_record (e, COPY));
    }
  mb->dy = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
  if (emb->n != 0)
    {
      guint64 w = params_acquire (tr, emb);
      mb->logits = synth_alloc (e, tokens * o->vocab * 2 * act_scale (o) / tr->t, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, &tr->pass[PASS_HEAD_FWD], w, out, mb->logits);
      /* Kept gathered (ZeRO-3) for the head's backward, which follows. */
      if (tr->mtp)
        mtp_forward (tr, mb, out);
    }
  synth_free (e, out);
  mb->out = 0;
}

static void
backward (Train *tr, guint c, Micro *mb, gboolean last_micro, guint64 recv_wait)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  guint L = chunk_n (tr, c), base = chunk_base (tr, c);
  Unit *emb = &tr->units[tr->Ls];
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY;
  guint N = every ? o->checkpoint_every : 1;
  guint64 *A = mb->A, *Cs = mb->C;
  guint64 dy = mb->dy;
  if (!has_head (tr, c))
    {
      /* The output's gradient from the next virtual stage; waits as long
       * as the pipeline leaves this stage idle. */
      dy = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      synth_collective (e, "nccl_recv", COMPUTE, VS_COLL_RECV, tr->pp_msg, &tr->groups[GRP_NEXT], 0, dy, recv_wait);
    }
  else if (emb->n != 0)
    {
      /* The loss's and the LM head's backward; the tied embedding's
       * gradient buffer takes the head's part first. */
      guint64 w = params_acquire (tr, emb);
      guint64 gbuf = grads_acquire (tr, emb);
      emit_pass (tr, &tr->pass[PASS_HEAD_BWD], w, mb->logits, gbuf);
      grads_commit (tr, emb, gbuf, FALSE, TRUE);
      synth_free (e, mb->logits);
      mb->logits = 0;
      params_release (tr, emb);
    }
  if (has_head (tr, c) && tr->mtp && mb->M != NULL)
    mtp_backward (tr, mb, dy, last_micro);
  if (tr->pp > 1 && has_head (tr, c) && mb->in != 0)
    {
      synth_free (e, mb->in); /* the last stage's labels */
      mb->in = 0;
    }

  for (guint ii = L; ii-- > 0;)
    {
      Unit *u = &tr->units[base + ii];
      guint64 w = params_acquire (tr, u);
      /* FSDP's default backward prefetch (BACKWARD_PRE): the next layer's
       * gather is issued before this one's recompute and backward; a
       * segment of several layers recomputes them all first. */
      if (ii > 0 && !(every && N > 1 && (ii + 1 == L || (ii + 1) % N == 0)))
        params_prefetch (tr, &tr->units[base + ii - 1]);
      guint64 tmp = 0;
      if (every && (ii + 1 == L || (ii + 1) % N == 0))
        {
          /* Recompute this whole segment from its input. */
          guint seg = ii / N;
          for (guint j = seg * N; j <= ii; j++)
            {
              guint64 wj = j == ii ? w : params_acquire (tr, &tr->units[base + j]);
              guint64 input = j == seg * N ? Cs[seg] : A[j - 1];
              const Unit *uj = &tr->units[base + j];
              A[j] = synth_alloc (e, layer_act (tr, uj, FALSE), VS_MEM_DEVICE, "activations");
              emit_pass (tr, layer_pass (tr, uj, PASS_RECOMPUTE), wj, input, A[j]);
              if (j != ii)
                params_release (tr, &tr->units[base + j]);
            }
        }
      else if (o->checkpoint == SYNTH_CKPT_SELECTIVE)
        {
          tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          emit_pass (tr, layer_pass (tr, u, PASS_ATTN_RECOMPUTE), w, A[ii], tmp);
        }
      guint64 gbuf = grads_acquire (tr, u);
      guint64 dx = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      emit_pass (tr, layer_pass (tr, u, PASS_BWD), w, A[ii], dx);
      synth_free (e, dy);
      dy = dx;
      if (tmp != 0)
        synth_free (e, tmp);
      synth_free (e, A[ii]);
      A[ii] = 0;
      if (every && ii % N == 0)
        synth_free (e, Cs[ii / N]);
      params_release (tr, u);
      grads_commit (tr, u, gbuf, last_micro, FALSE);
    }
  if (has_embedding (tr, c))
    {
      if (emb->n != 0)
        {
          guint64 gbuf = grads_acquire (tr, emb);
          emit_pass (tr, &tr->pass[PASS_EMB_BWD], 0, dy, gbuf);
          grads_commit (tr, emb, gbuf, last_micro, FALSE);
        }
      synth_free (e, mb->in);
    }
  else
    /* The input gradient back to the previous virtual stage. */
    synth_collective (e, "nccl_send", COMPUTE, VS_COLL_SEND, tr->pp_msg, &tr->groups[GRP_PREV], dy, 0, 0);
  synth_free (e, dy);
  g_free (mb->A);
  g_free (mb->C);
  *mb = (Micro) { 0 };
}

/* Per (stage, chunk) compute times of one micro-batch, for the schedule. */
static void
stage_times (Train *tr, double *t_f, double *t_b)
{
  const SynthTrainOpts *o = tr->o;
  guint p = tr->pp, v = tr->v;
  gboolean emb = o->params == 0 && o->vocab > 0; /* --params folds the embedding into the layers */
  LayerPassIndex rc = o->checkpoint == SYNTH_CKPT_EVERY ? PASS_RECOMPUTE : PASS_ATTN_RECOMPUTE;
  for (guint c = 0; c < v; c++)
    for (guint s = 0; s < p; s++)
      {
        guint vs = c * p + s;
        /* Its layers, counted by kind. */
        guint n[KINDS] = { 0 };
        for (guint g = vs_start (tr, vs); g < vs_start (tr, vs) + vs_n (tr, vs); g++)
          n[layer_kind (o, g)]++;
        t_f[vs] = t_b[vs] = 0;
        for (guint k = 0; k < KINDS; k++)
          {
            const Pass *lp = tr->lpass[k];
            double recompute = o->checkpoint == SYNTH_CKPT_NONE ? 0 : (double) lp[rc].ns;
            t_f[vs] += (double) n[k] * (double) lp[PASS_FWD].ns;
            t_b[vs] += (double) n[k] * ((double) lp[PASS_BWD].ns + recompute);
          }
        if (vs == 0 && emb)
          t_f[vs] += (double) tr->pass[PASS_EMB_FWD].ns, t_b[vs] += (double) tr->pass[PASS_EMB_BWD].ns;
        if (vs + 1 == p * v && emb)
          {
            t_f[vs] += (double) tr->pass[PASS_HEAD_FWD].ns, t_b[vs] += (double) tr->pass[PASS_HEAD_BWD].ns;
            /* The prediction modules: each its part, a layer of the last
             * layer's kind and the head again. */
            const Pass *lp = tr->lpass[layer_kind (o, o->layers - 1)];
            double recompute = o->checkpoint == SYNTH_CKPT_NONE ? 0 : (double) lp[rc].ns;
            for (guint d = 0; d < o->mtp; d++)
              {
                t_f[vs] += (double) (tr->pass[PASS_MTP_FWD].ns + lp[PASS_FWD].ns + tr->pass[PASS_HEAD_FWD].ns);
                t_b[vs] += (double) (tr->pass[PASS_HEAD_BWD].ns + lp[PASS_BWD].ns + tr->pass[PASS_MTP_BWD].ns) + recompute;
              }
          }
      }
}

/* One optimizer step's micro-batches: forward-backward pairs without a
 * pipeline, else this stage's part of the simulated schedule. */
static gboolean
schedule (Train *tr, guint64 pinned_inputs, GError **error)
{
  guint m = tr->o->grad_accum, v = tr->v;
  g_autofree Micro *mbs = g_new0 (Micro, (gsize) m * v);
  if (tr->pp <= 1)
    {
      for (guint i = 0; i < m; i++)
        {
          forward (tr, 0, pinned_inputs, &mbs[i], 0);
          backward (tr, 0, &mbs[i], i + 1 == m, 0);
        }
      return TRUE;
    }
  guint nvs = tr->pp * v;
  g_autofree double *t_f = g_new0 (double, nvs), *t_b = g_new0 (double, nvs);
  stage_times (tr, t_f, t_b);
  SynthPipeSpec spec = { tr->pp, v, m, t_f, t_b, (double) tr->p2p_ns, (double) tr->p2p_wrap_ns };
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (SynthPipeOp));
  if (!synth_pipe_schedule (&spec, tr->stage, ops, NULL, error))
    return FALSE;
  for (guint j = 0; j < ops->len; j++)
    {
      const SynthPipeOp *op = &g_array_index (ops, SynthPipeOp, j);
      Micro *mb = &mbs[(gsize) op->chunk * m + op->micro];
      guint64 wait = (guint64) llround (op->wait_ns);
      if (op->fwd)
        forward (tr, op->chunk, pinned_inputs, mb, wait);
      else
        backward (tr, op->chunk, mb, op->micro + 1 == m, wait);
    }
  return TRUE;
}

/* The layout (sizes of the parallel groups, state bytes a parameter):
 * what both the generator and synth_train_state_device_bytes start from. */
static void
layout_of (Train *tr, const SynthTrainOpts *o)
{
  tr->o = o;
  synth_train_state_bytes (o->precision, o->optimizer, &tr->P, &tr->G, &tr->O);
  tr->t = tp_of (o);
  tr->pp = MAX (o->pp, 1u);
  tr->v = tr->pp > 1 ? MAX (o->virtual_stages, 1u) : 1;
  tr->cp = MAX (o->cp, 1u);
  tr->dp = MAX (o->dp, 1u) * tr->cp;
  tr->k = MAX (o->top_k, 1u);
  tr->ep = o->experts > 0 ? (o->ep ? o->ep : MIN (tr->dp, o->experts)) : 1;
  tr->edp = o->experts > 0 ? tr->dp / tr->ep : 1;
  tr->stage = MIN (o->stage, tr->pp - 1);
  tr->acc_e = tr->pp > 1 && o->account_embedding, tr->acc_z = tr->pp > 1 && o->account_loss;
  tr->nfirst = synth_train_stage_layers (o, 0);
  tr->nmid = tr->pp > 2 ? synth_train_stage_layers (o, 1) : 0;
  tr->nlast = synth_train_stage_layers (o, tr->pp - 1);
}

/* This stage's units and their parameter counts (tr->layer_n, and
 * tr->dense_n for the dense layers). */
static void
units_of (Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  guint L = o->layers;
  guint64 h = o->hidden;
  tr->Ls = stage_n (tr, tr->stage);
  /* The multi-token prediction modules follow the head, on the last stage. */
  tr->mtp = tr->stage + 1 == tr->pp && o->params == 0 ? o->mtp : 0;
  tr->n_units = tr->Ls + 1 + tr->mtp;
  tr->units = g_new0 (Unit, tr->n_units);
  synth_train_dense_shape (o, &tr->dense_o);
  if (o->params != 0)
    {
      /* --params: spread Ψ over the layers (embedding folded in), split t ways. */
      for (guint i = 0; i < tr->Ls; i++)
        tr->units[i].n = (o->params / L + (i < o->params % L ? 1 : 0)) / tr->t;
      tr->layer_n = tr->units[0].n;
      return;
    }
  /* Split t ways but for the weights every tensor rank holds whole. */
  guint64 whole = synth_train_attn_replicated (o), split_attn = synth_train_attn_params (o) - whole;
  guint64 layer = split_attn + synth_train_mlp_params (o), exp = 0;
  if (o->experts > 0)
    {
      /* Attention (GPT: 4h²), the router h·E, E/ep experts (GPT: 8h²) here. */
      exp = (guint64) (o->experts / tr->ep) * synth_train_mlp_params (o) / tr->t;
      layer = split_attn + (guint64) (o->experts / tr->ep) * synth_train_mlp_params (o) + synth_train_shared_params (o);
    }
  tr->layer_n = layer / tr->t + whole + (o->experts > 0 ? h * o->experts : 0);
  tr->dense_n = (split_attn + synth_train_mlp_params (&tr->dense_o)) / tr->t + whole;
  for (guint i = 0; i < tr->Ls; i++)
    {
      /* This stage's layer i: its chunk's, from that chunk's first. */
      guint c = 0, j = i;
      while (j >= chunk_n (tr, c))
        j -= chunk_n (tr, c++);
      guint global = vs_start (tr, c * tr->pp + tr->stage) + j;
      Unit *u = &tr->units[i];
      u->kind = (guint8) layer_kind (o, global);
      gboolean dense = (u->kind & KIND_DENSE) != 0;
      u->n = dense ? tr->dense_n : tr->layer_n;
      u->n_exp = dense ? 0 : exp;
    }
  /* The embedding on the first stage, the head on the last (both on one
   * stage: one unit, twice its size untied; so too on a last stage whose
   * prediction modules look the next tokens up), neither in between. */
  if (tr->stage == 0 || tr->stage + 1 == tr->pp)
    tr->units[tr->Ls].n = (guint64) o->vocab * h / tr->t * (o->untied && (tr->pp == 1 || tr->mtp) ? 2 : 1);
  /* A prediction module: a layer of the last layer's kind and its 2h x h
   * projection (split t ways). */
  for (guint d = 0; d < tr->mtp; d++)
    {
      Unit *u = &tr->units[tr->Ls + 1 + d];
      u->kind = (guint8) layer_kind (o, L - 1);
      gboolean dense = (u->kind & KIND_DENSE) != 0;
      u->n = (dense ? tr->dense_n : tr->layer_n) + 2 * h * h / tr->t;
      u->n_exp = dense ? 0 : exp;
    }
}

guint64
synth_train_state_device_bytes (const SynthTrainOpts *o)
{
  Train tr = { 0 };
  layout_of (&tr, o);
  units_of (&tr);
  guint64 sum = 0;
  for (guint i = 0; i < tr.n_units; i++)
    {
      const Unit *u = &tr.units[i];
      if (u->n == 0)
        continue;
      sum += unit_bytes (&tr, u, tr.P, o->zero >= 3) + unit_bytes (&tr, u, tr.G, o->zero >= 2);
      if (!o->offload_optimizer)
        sum += unit_bytes (&tr, u, tr.O, o->zero >= 1);
      if (fp32_main_grads (o))
        sum += unit_bytes (&tr, u, 4, o->zero >= 1); /* the step's fp32 gradients */
    }
  g_free (tr.units);
  return sum;
}

gboolean
synth_train_check_size (const SynthTrainOpts *o, GError **error)
{
  struct { const char *name; guint v, max; } sizes[] = {
    { "layers", o->layers, 1u << 20 }, { "hidden", o->hidden, 1u << 20 }, { "heads", o->heads, 1u << 20 },
    { "kv-heads", o->kv_heads, 1u << 20 }, { "ffn", o->ffn, 1u << 20 }, { "head-dim", o->head_dim, 1u << 20 },
    { "experts", o->experts, 1u << 20 }, { "shared-ffn", o->shared_ffn, 1u << 20 }, { "dense-ffn", o->dense_ffn, 1u << 20 },
    { "kv-lora-rank", o->kv_lora, 1u << 20 }, { "q-lora-rank", o->q_lora, 1u << 20 },
    { "qk-rope-head-dim", o->qk_rope, 1u << 20 }, { "v-head-dim", o->v_head, 1u << 20 }, { "vocab", o->vocab, 1u << 27 },
    { "seq", o->seq, 1u << 24 }, { "batch", o->batch, 1u << 20 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    if (sizes[i].v > sizes[i].max)
      {
        g_set_error (error, VS_SYNTH_ERROR, 0, "transformer-train: --%s %u is more than %u", sizes[i].name, sizes[i].v,
                     sizes[i].max);
        return FALSE;
      }
  /* Under those bounds each weight count below fits in 64 bits; what they
   * add up to, and the activations, are checked in doubles. */
  double h = o->hidden, T = (double) o->seq * o->batch;
  double layer = (double) synth_train_attn_params (o) + (double) synth_train_shared_params (o)
                 + (double) synth_train_mlp_params (o) * MAX (o->experts, 1u) + h * o->experts;
  double params = o->layers * layer + 2.0 * o->vocab * h;
  double act = T * (h * 64 + (double) synth_train_core_width (o) * 8 + (double) ffn_of (o) * 8 * MAX (o->top_k, 1u));
  double scores = 10.0 * o->heads * o->seq * T;
  if (params > 1e15 || act > 0x1p56 || scores > 0x1p56)
    {
      g_set_error (error, VS_SYNTH_ERROR, 0,
                   "transformer-train: the shape is too large to count (%.3g parameters, %.3g bytes of a layer's "
                   "activations, %.3g of its scores; at most 1e15 and 2^56)", params, act, scores);
      return FALSE;
    }
  return TRUE;
}

guint
synth_train_stage_layers (const SynthTrainOpts *o, guint s)
{
  guint p = MAX (o->pp, 1u), L = o->layers;
  if (p == 1)
    return L;
  if (o->account_embedding || o->account_loss)
    {
      guint v = MAX (o->virtual_stages, 1u), e = o->account_embedding, z = o->account_loss;
      guint per = (L + e + z) / (p * v);
      return v * per - (s == 0 ? e : 0) - (s + 1 == p ? z : 0);
    }
  guint F = o->first_stage_layers, Z = o->last_stage_layers;
  if (s == 0 && F)
    return F;
  if (s + 1 == p && Z)
    return Z;
  guint rest = p - (F ? 1 : 0) - (Z ? 1 : 0), given = F + Z;
  return rest > 0 && given <= L ? (L - given) / rest : 0;
}

gboolean
synth_train_stage_like_first (const SynthTrainOpts *o, guint s)
{
  Train tr = { 0 };
  layout_of (&tr, o);
  if (s >= tr.pp || stage_n (&tr, s) != stage_n (&tr, 0))
    return FALSE;
  for (guint c = 0; c < tr.v; c++)
    {
      guint n = vs_n (&tr, c * tr.pp);
      if (vs_n (&tr, c * tr.pp + s) != n)
        return FALSE;
      guint k0[KINDS] = { 0 }, ks[KINDS] = { 0 };
      guint a = vs_start (&tr, c * tr.pp), b = vs_start (&tr, c * tr.pp + s);
      for (guint i = 0; i < n; i++)
        k0[layer_kind (o, a + i)]++, ks[layer_kind (o, b + i)]++;
      if (memcmp (k0, ks, sizeof k0) != 0)
        return FALSE;
    }
  return TRUE;
}

gboolean
synth_train_auto_split (guint L, guint p, guint v, guint *first, guint *last)
{
  v = MAX (v, 1u);
  if (p < 2 || L % v != 0)
    return FALSE;
  if (L % (p * v) == 0)
    {
      *first = *last = L / p;
      return TRUE;
    }
  guint rest;
  if (p == 2)
    rest = L;
  else
    {
      guint c = ((L + p - 1) / p + v - 1) / v * v;
      if ((guint64) (p - 2) * c >= L)
        return FALSE;
      rest = L - (p - 2) * c;
      if (rest > 2 * c)
        return FALSE;
    }
  guint z = rest / 2 / v * v;
  if (z < v || rest - z < v)
    return FALSE;
  *first = rest - z, *last = z;
  return TRUE;
}

gboolean
synth_train_check_cp (const SynthTrainOpts *o, GError **error)
{
  guint cp = MAX (o->cp, 1u);
  if (cp == 1)
    return TRUE;
  const char *why = NULL;
  if (!o->flash_attn)
    why = "needs --flash-attn (Megatron-Core runs it through TransformerEngine's fused attention)";
  else if (o->seq % (2 * cp) != 0)
    why = "needs --seq to be a multiple of 2 x --cp (the load-balanced split into 2 x cp chunks)";
  else if (o->window > 0)
    why = "with --window is not modeled";
  else if (o->experts > 0)
    why = "with --experts is not modeled";
  if (why == NULL)
    return TRUE;
  g_set_error (error, VS_SYNTH_ERROR, 0, "transformer-train: --cp %u %s", cp, why);
  return FALSE;
}

gboolean
synth_train_check_split (const SynthTrainOpts *o, GError **error)
{
  guint p = MAX (o->pp, 1u), v = p > 1 ? MAX (o->virtual_stages, 1u) : 1, L = o->layers;
  guint F = o->first_stage_layers, Z = o->last_stage_layers;
  const char *w = "transformer-train";
  if (p == 1)
    {
      if (F || Z || o->stage || o->account_embedding || o->account_loss)
        {
          g_set_error (error, VS_SYNTH_ERROR, 0, "%s: --stage, --first-stage-layers, --last-stage-layers and the "
                       "--account-for flags need --pp 2 or more", w);
          return FALSE;
        }
      return TRUE;
    }
  if (o->stage >= p)
    {
      g_set_error (error, VS_SYNTH_ERROR, 0, "%s: --stage %u is not one of the %u pipeline stages (0 to %u)", w,
                   o->stage, p, p - 1);
      return FALSE;
    }
  if (v > 1 && o->grad_accum % p != 0)
    {
      g_set_error (error, VS_SYNTH_ERROR, 0, "%s: the interleaved schedule (--virtual-stages %u) needs --grad-accum (%u) "
                   "to be a multiple of --pp (%u)", w, v, o->grad_accum, p);
      return FALSE;
    }
  if (o->account_embedding || o->account_loss)
    {
      guint e = o->account_embedding, z = o->account_loss, pv = p * v;
      if (F || Z)
        {
          g_set_error (error, VS_SYNTH_ERROR, 0, "%s: --account-for-embedding and --account-for-loss split the layers "
                       "themselves: not with --first-stage-layers or --last-stage-layers", w);
          return FALSE;
        }
      gboolean fits = (L + e + z) % pv == 0 && (L + e + z) / pv >= MAX (e, z);
      for (guint s = 0; fits && s < p; s++)
        fits = synth_train_stage_layers (o, s) >= 1;
      if (!fits)
        {
          g_set_error (error, VS_SYNTH_ERROR, 0, "%s: %u layers%s%s do not split into %u virtual stages (pp x "
                       "virtual stages) of a whole number each, every stage at least one layer", w, L,
                       e ? " and the embedding" : "", z ? " and the loss" : "", pv);
          return FALSE;
        }
      return TRUE;
    }
  guint rest = p - (F ? 1 : 0) - (Z ? 1 : 0);
  guint64 given = (guint64) F + Z;
  gboolean ok = given <= L && (rest == 0 ? given == L : (L - given) % rest == 0);
  for (guint s = 0; ok && s < p; s++)
    {
      guint n = synth_train_stage_layers (o, s);
      ok = n >= v && n % v == 0;
    }
  if (ok)
    return TRUE;
  if (!F && !Z)
    {
      guint a, z;
      g_autofree char *of = v > 1 ? g_strdup_printf (" of %u chunks", v) : g_strdup ("");
      if (synth_train_auto_split (L, p, v, &a, &z))
        g_set_error (error, VS_SYNTH_ERROR, 0, "%s: %u layers do not split evenly over %u stages%s: give the first "
                     "and the last stage's with --first-stage-layers and --last-stage-layers (e.g. %u and %u, %u on "
                     "each stage between)", w, L, p, of, a, z, p > 2 ? (L - a - z) / (p - 2) : 0);
      else
        g_set_error (error, VS_SYNTH_ERROR, 0, "%s: %u layers do not split over %u stages of %u chunks (each stage "
                     "at least one layer a chunk, a multiple of the chunks)", w, L, p, v);
      return FALSE;
    }
  g_set_error (error, VS_SYNTH_ERROR, 0, "%s: --first-stage-layers %u and --last-stage-layers %u (0: an even share) leave %u of the %u "
               "layers to the %u other stages: each stage needs a whole share, at least one layer a chunk and a "
               "multiple of the %u chunks", w, F, Z, given <= L ? (guint) (L - given) : 0, L, rest, v);
  return FALSE;
}

gboolean
synth_transformer_train (const SynthTrainOpts *o, SynthEmit *e, GError **error)
{
  if (!synth_train_check_size (o, error))
    return FALSE;
  Train tr = { 0 };
  tr.e = e;
  if (!synth_train_check_split (o, error) || !synth_train_check_cp (o, error))
    return FALSE;
  /* Context parallelism: each rank holds seq / cp tokens of every
   * sequence, and all but the attention's FLOPs and its ring (cp_kv_bytes,
   * LOP_RING) follow from that shape. */
  SynthTrainOpts local;
  if (o->cp > 1)
    {
      local = *o;
      local.seq = o->seq / o->cp;
      o = &local;
    }
  layout_of (&tr, o);
  units_of (&tr);
  tr.free_events = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 h = o->hidden, s = o->seq, b = o->batch;
  switch (o->precision)
    {
    case SYNTH_PREC_FP32:
      tr.prec = synth_config (e)->tf32 == VS_TF32_ALL ? VS_PREC_TF32 : VS_PREC_FP32;
      tr.es = tr.gs = 4;
      break;
    case SYNTH_PREC_BF16:
      tr.prec = VS_PREC_BF16, tr.es = tr.gs = 2;
      break;
    case SYNTH_PREC_FP8:
      tr.prec = VS_PREC_FP8, tr.es = 2, tr.gs = 1;
      break;
    default:
      tr.prec = VS_PREC_FP16, tr.es = tr.gs = 2;
      break;
    }
  guint64 scale = act_scale (o);
  tr.full = synth_train_layer_activations (o);
  tr.kept = synth_train_layer_kept (o);
  tr.full_d = synth_train_layer_activations (&tr.dense_o);
  tr.kept_d = synth_train_layer_kept (&tr.dense_o);
  tr.attn = attn_kept (o);
  tr.ckpt = 2 * s * b * h * scale / (o->sp ? tr.t : 1);
  tr.hidden_buf = 2 * s * b * h * scale / (o->sp ? tr.t : 1);
  tr.pp_msg = 2 * s * b * h * scale / tr.t;
  make_groups (&tr);
  build_passes (&tr);

  gboolean ok = TRUE;
  guint64 pinned_inputs = synth_alloc (e, s * b * 8, VS_MEM_PINNED, "inputs");
  guint64 loss = synth_alloc (e, 4, VS_MEM_DEVICE, "workspace");
  allocate_states (&tr);
  for (guint step = 0; step < o->steps && ok; step++)
    {
      synth_mark (e, "step");
      for (guint i = 0; i < tr.n_units; i++)
        if (tr.units[i].n != 0)
          synth_memset (e, tr.units[i].g, COMPUTE);
      ok = schedule (&tr, pinned_inputs, error);
      if (!ok)
        break;
      after_backward (&tr);
      optimizer_step (&tr);
      synth_copy (e, VS_DIR_D2H, loss, 0, 4, COMPUTE, FALSE); /* loss.item() */
      synth_sync_device (e);
    }
  if (ok)
    {
      for (guint i = 0; i < tr.n_units; i++)
        {
          Unit *u = &tr.units[i];
          if (u->n == 0)
            continue;
          synth_free (e, u->p);
          synth_free (e, u->g);
          synth_free (e, u->o);
          if (u->hg)
            synth_free (e, u->hg);
        }
      synth_free (e, loss);
      synth_free (e, pinned_inputs);
    }
  for (guint i = 0; i < PASS_COUNT; i++)
    g_array_free (tr.pass[i].ops, TRUE);
  for (guint k = 0; k < KINDS; k++)
    for (guint i = 0; i < LAYER_PASSES; i++)
      g_array_free (tr.lpass[k][i].ops, TRUE);
  g_free (tr.units);
  g_array_free (tr.free_events, TRUE);
  return ok;
}

gboolean
synth_precision_from_name (const char *s, SynthPrecision *p)
{
  static const char *names[] = { "fp32", "fp16", "bf16", "mixed", "fp8" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (s, names[i]) == 0)
      {
        *p = (SynthPrecision) i;
        return TRUE;
      }
  return FALSE;
}
