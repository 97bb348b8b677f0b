/* synth-train.c — `vramsim synth transformer-train`: one GPU's view of
 * data-parallel training of a GPT-style decoder (docs/workloads.md).
 *
 * Assumptions (the published accounting this follows):
 * - Model states (Rajbhandari et al., "ZeRO", 2020): mixed-precision Adam
 *   keeps 2Ψ bytes of fp16 params, 2Ψ of fp16 grads and 12Ψ of fp32
 *   master params, momentum and variance (K = 12); ZeRO stage 1 shards the
 *   optimizer states over the N data-parallel ranks, stage 2 the grads too,
 *   stage 3 the params too. Buffers the paper leaves out (gathered stage-3
 *   params, full-layer grads before reduce-scatter, logits, dX) are tagged
 *   `workspace`, so params + grads + optimizer peaks are the paper's figures.
 * - Activations (Korthikanti et al., "Reducing Activation Recomputation in
 *   Large Transformer Models", 2022): a layer saves s·b·h·(34 + 5·a·s/h)
 *   bytes at 16 bits (twice that at fp32). Selective recomputation keeps
 *   34·s·b·h and recomputes the 5·a·s²·b attention part in the backward;
 *   checkpointing every N layers keeps each segment's input (2·s·b·h) and
 *   recomputes the segment's N layers, whose full activations then live
 *   together during its backward.
 * - FLOPs: a layer's forward is 2·Ψ_layer·tokens + 4·b·s²·h (matmuls with
 *   the parameters, plus QKᵀ and attention·V), backward twice the forward,
 *   so a step is ~6Ψ per token; full recomputation adds a forward, selective
 *   adds the 4·b·s²·h attention term.
 * - Tensor parallelism (Shoeybi et al., "Megatron-LM", 2019): a layer's
 *   parameters split t ways; each layer all-reduces its s·b·h activations
 *   twice in the forward (after attention, after the MLP) and twice in the
 *   backward; a recomputed forward repeats its two. With sequence
 *   parallelism (Korthikanti et al.) each all-reduce becomes an all-gather
 *   of the s/t shard and a reduce-scatter, the same bytes on the wire. The
 *   vocabulary-parallel embedding all-reduces its output, the LM head its
 *   input gradient. Activations per layer follow Korthikanti's Table 2
 *   (synth_train_layer_activations).
 * - Pipeline parallelism (Narayanan et al., "Efficient Large-Scale Language
 *   Model Training on GPU Clusters Using Megatron-LM", SC 2021): the trace
 *   is stage 0's, holding ceil(L/p) layers and the embedding; 1F1B runs
 *   min(p-1, m) warm-up forwards, then one forward and one backward per
 *   micro-batch, then the cool-down backwards, so at most min(p, m)
 *   micro-batches' activations live at once. Each forward sends its output
 *   (s·b·h·2/t bytes: the scatter-gather optimisation) to stage 1, each
 *   backward receives its gradient; the bubble, (p-1)·(t_f + t_b) per step
 *   with t_b = 2·t_f, is the first receive's wait for its peer.
 * - Data parallelism over N ranks (ZeRO, Rajbhandari et al. 2020, section
 *   7): stage 0 all-reduces the gradients once per step (2Ψ on the wire);
 *   stages 1 and 2 reduce-scatter them and all-gather the updated
 *   parameters (2Ψ); stage 3 all-gathers each layer's parameters before its
 *   forward and again before its backward, and reduce-scatters its
 *   gradients (3Ψ). Stage 3's gathers run on the communication stream, the
 *   next layer's issued before this layer computes (FSDP's and DeepSpeed's
 *   prefetch), so two layers' gathered parameters can live at once; the
 *   host waits as FSDP's rate limiter makes it (limit_all_gathers, on by
 *   default: params_prefetch), so no more are queued. Gradient all-reduces (stages 0-1) run on a separate
 *   communication stream, overlapping the backward as DDP's buckets do;
 *   stages 2-3 reduce on the compute stream, since their buffers are freed
 *   right after.
 * - Mixture of experts (Lepikhin et al., "GShard", 2021; Fedus et al.,
 *   "Switch Transformers", 2022): every layer's MLP becomes E experts of
 *   8·h² parameters, spread over min(N, E) data-parallel ranks (expert
 *   parallelism); each token goes to top_k experts, so the expert MLP's
 *   16·s·b·h/t activation bytes are kept top_k times and two all-to-alls
 *   (dispatch, combine) of s·b·top_k·h·2 bytes run in the forward, two in
 *   the backward. Expert gradients are reduced with the layer's over the N
 *   data-parallel ranks (an over-count where experts are not replicated).
 * - FP8 (NVIDIA Transformer Engine): weights are kept in bf16 plus an FP8
 *   copy for the GEMMs (3 bytes a parameter), gradients in bf16, master
 *   weights and Adam states in fp32 (12); the GEMM inputs saved for the
 *   backward (QKV and fc1 inputs 2·s·b·h each, attention projection input
 *   2·s·b·h/t, fc2 input 8·s·b·h/t) are FP8, half their 16-bit bytes.
 *   Kernel times stay at the preset's tflops (no FP8 rate in configs yet).
 * - Collectives are kernels with a `collective` field; their time is the
 *   network model's (sim/model/network.c) on the preset's `network`. */
#include "synth/synth.h"

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
  return u * kept_num (o) / tp_of (o);
}

guint64
synth_train_layer_activations (const SynthTrainOpts *o)
{
  guint64 s = o->seq, b = o->batch, a = o->heads;
  return synth_train_layer_kept (o) + 5 * a * s * s * b * act_scale (o) / tp_of (o);
}
/* One sharded unit of the model: a layer, or the (tied) embedding. */
typedef struct {
  guint64 n;          /* parameters on this GPU (after tensor parallelism) */
  guint64 p, g, o;    /* device (or host) allocation ids of its states */
  guint64 hg;         /* offload: pinned host grads/params staging */
  guint64 gathered;   /* stage 3: the full params while in use */
  guint64 gather_event; /* stage 3: recorded after their gather */
} Unit;

typedef struct {
  const SynthTrainOpts *o;
  SynthEmit *e;
  guint P, G, O;
  Unit *units;        /* layers 0..Ls-1 of this stage, then the embedding */
  guint n_units, Ls;  /* Ls: layers on this stage */
  guint t, pp, ep, k;
  guint64 full, kept, attn, ckpt, hidden_buf;
  guint64 tp_msg;     /* one TP all-reduce: s·b·h activations */
  guint64 a2a_msg;    /* one MoE all-to-all: s·b·top_k·h */
  guint64 pp_msg;     /* one pipeline send/recv */
  double layer_fwd_flops, attn_flops;
  guint64 fwd_ns;     /* GPU time of the first micro-batch's forward */
  gboolean measuring;
  guint64 comm_event; /* last gradient collective on COMM, 0 if none */
  GArray *free_events; /* ZeRO-3 rate limiter: events after each release, oldest first */
} Train;

/* One micro-batch's live state between its forward and its backward. */
typedef struct {
  guint64 *A, *C;     /* kept activations per layer; segment inputs */
  guint64 in, out, dy;
} Micro;

#define COMPUTE 1
#define COPY 2
#define COMM 3

static guint64
shard (guint64 bytes, guint dp, gboolean sharded)
{
  return sharded ? (bytes + dp - 1) / dp : bytes;
}

static guint64
kernel (Train *tr, const char *name, double flops, const guint64 *r, guint nr, const guint64 *w, guint nw,
        guint64 bytes)
{
  guint64 d = synth_kernel (tr->e, name, COMPUTE, flops, r, nr, w, nw, bytes);
  if (tr->measuring)
    tr->fwd_ns += d;
  return d;
}

static void
coll (Train *tr, const char *name, guint64 stream, VsCollKind kind, guint64 bytes, guint ranks, guint64 id,
      guint64 wait)
{
  guint64 d = synth_collective (tr->e, name, stream, kind, bytes, ranks, id, id, wait);
  if (tr->measuring)
    tr->fwd_ns += d;
}

/* Megatron's two activation reductions of one layer pass (forward,
 * backward or recompute), on the layer's output or input gradient BUF. */
static void
tp_layer (Train *tr, guint64 buf)
{
  if (tr->t <= 1)
    return;
  for (int i = 0; i < 2; i++)
    if (tr->o->sp)
      {
        coll (tr, "nccl_all_gather", COMPUTE, VS_COLL_ALL_GATHER, tr->tp_msg / tr->t, tr->t, buf, 0);
        coll (tr, "nccl_reduce_scatter", COMPUTE, VS_COLL_REDUCE_SCATTER, tr->tp_msg, tr->t, buf, 0);
      }
    else
      coll (tr, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE, tr->tp_msg, tr->t, buf, 0);
}

/* A MoE layer's dispatch and combine. */
static void
moe_layer (Train *tr, guint64 buf)
{
  if (tr->o->experts == 0 || tr->ep <= 1)
    return;
  for (int i = 0; i < 2; i++)
    coll (tr, "nccl_all_to_all", COMPUTE, VS_COLL_ALL_TO_ALL, tr->a2a_msg, tr->ep, buf, 0);
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
  return tr->o->zero >= 3 && tr->o->dp > 1 && !tr->o->no_limit_all_gathers;
}

/* ZeRO-3: all-gathers U's parameters on the communication stream, as
 * FSDP/DeepSpeed prefetch the next layer's while this one computes. */
static void
params_prefetch (Train *tr, Unit *u)
{
  if (tr->o->zero < 3 || tr->o->dp <= 1 || u->gathered != 0 || u->n == 0)
    return;
  if (limits_all_gathers (tr) && tr->free_events->len >= FSDP_MAX_INFLIGHT_ALL_GATHERS)
    {
      guint64 oldest = g_array_index (tr->free_events, guint64, 0);
      g_array_remove_index (tr->free_events, 0);
      synth_event_sync (tr->e, oldest);
    }
  u->gathered = synth_alloc (tr->e, u->n * tr->P, VS_MEM_DEVICE, "workspace");
  synth_stream_wait (tr->e, COMM, synth_event_record (tr->e, COMPUTE));
  synth_collective (tr->e, "nccl_all_gather", COMM, VS_COLL_ALL_GATHER, synth_size (tr->e, u->p), tr->o->dp, u->p,
                    u->gathered, 0);
  u->gather_event = synth_event_record (tr->e, COMM);
}

/* The id a kernel reads the unit's params from; under ZeRO-3 the compute
 * stream waits for their gather. */
static guint64
params_acquire (Train *tr, Unit *u)
{
  if (tr->o->zero < 3 || tr->o->dp <= 1)
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
  if (tr->o->zero < 2 || tr->o->dp <= 1)
    return u->g;
  return synth_alloc (tr->e, u->n * tr->G, VS_MEM_DEVICE, "workspace");
}

static void
grads_commit (Train *tr, Unit *u, guint64 buf, gboolean last_micro)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  if (buf != u->g)
    {
      synth_collective (e, "nccl_reduce_scatter", COMPUTE, VS_COLL_REDUCE_SCATTER, synth_size (e, buf), o->dp, buf,
                        u->g, 0);
      synth_free (e, buf);
    }
  else if (o->dp > 1 && last_micro)
    {
      /* Stage 0 all-reduces, stage 1 reduce-scatters (ZeRO section 7.2.1),
       * on the communication stream once the grads are written. */
      synth_stream_wait (e, COMM, synth_event_record (e, COMPUTE));
      if (o->zero == 1)
        synth_collective (e, "nccl_reduce_scatter", COMM, VS_COLL_REDUCE_SCATTER, synth_size (e, u->g), o->dp, u->g,
                          u->g, 0);
      else
        synth_collective (e, "nccl_all_reduce", COMM, VS_COLL_ALL_REDUCE, synth_size (e, u->g), o->dp, u->g, u->g,
                          0);
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
      u->p = synth_alloc (tr->e, shard (u->n * tr->P, o->dp, o->zero >= 3), VS_MEM_DEVICE, "params");
      u->g = synth_alloc (tr->e, shard (u->n * tr->G, o->dp, o->zero >= 2), VS_MEM_DEVICE, "grads");
      guint64 ob = shard (u->n * tr->O, o->dp, o->zero >= 1);
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

static void
optimizer_step (Train *tr)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  const VsConfig *cfg = synth_config (e);
  const char *name = o->optimizer == SYNTH_OPT_ADAM ? "adam_step" : "sgd_step";
  if (tr->comm_event)
    synth_stream_wait (e, COMPUTE, synth_event_record (e, COMM));
  tr->comm_event = 0;
  for (guint i = 0; i < tr->n_units; i++)
    {
      Unit *u = &tr->units[i];
      if (u->n == 0)
        continue;
      guint64 ns = shard (u->n, o->dp, o->zero >= 1); /* parameters this rank updates */
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
          guint64 r[] = { u->p, u->g, u->o }, w[] = { u->p, u->o };
          guint64 bytes = ns * (2 * tr->P + tr->G + 2 * tr->O);
          synth_kernel (e, name, COMPUTE, 15.0 * (double) ns, r, 3, w, 2, bytes);
        }
      /* Stages 1-2: each rank updated its shard; gather the others'. */
      if (o->dp > 1 && (o->zero == 1 || o->zero == 2))
        synth_collective (e, "nccl_all_gather", COMPUTE, VS_COLL_ALL_GATHER, ns * tr->P, o->dp, u->p, u->p, 0);
    }
}

/* The DRAM traffic of one layer's forward (or recompute): its weights
 * W, its input read (the hidden state, 2·s·b·h), the SAVED bytes it
 * writes, and its output written (the hidden state again). Not the sum
 * of its buffers: a layer's input buffer is the previous layer's whole
 * activation set, of which it reads only the output, and it writes only
 * the first hidden state of the next layer's buffer; charging the whole
 * buffers made an uncheckpointed layer move 2.8x what a checkpointed one
 * does for the same FLOPs. A recompute writes no output (subtract ckpt). */
static guint64
layer_fwd_bytes (Train *tr, guint64 w, guint64 saved)
{
  return synth_size (tr->e, w) + tr->ckpt + saved + tr->ckpt;
}

static gboolean
has_head (Train *tr)
{
  return tr->pp <= 1;
}

static void
forward (Train *tr, guint64 pinned_inputs, Micro *mb)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  guint L = tr->Ls;
  guint64 tokens = (guint64) o->seq * o->batch;
  Unit *emb = &tr->units[L];
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY;
  guint N = every ? o->checkpoint_every : 1;
  guint nseg = (L + N - 1) / N;
  guint64 *A = mb->A = g_new0 (guint64, L + 1);   /* kept activations per layer, or temps */
  guint64 *C = mb->C = g_new0 (guint64, nseg + 1); /* segment inputs */

  /* The batch: token ids over a side stream, the compute stream waits. */
  guint64 in = mb->in = synth_alloc (e, tokens * 8, VS_MEM_DEVICE, "inputs");
  synth_copy (e, VS_DIR_H2D, pinned_inputs, in, tokens * 8, COPY, TRUE);
  synth_stream_wait (e, COMPUTE, synth_event_record (e, COPY));

  guint64 layer_size = o->checkpoint == SYNTH_CKPT_SELECTIVE ? tr->kept : tr->full;
  guint64 first = every ? (C[0] = synth_alloc (e, tr->ckpt, VS_MEM_DEVICE, "activations"))
                        : (A[0] = synth_alloc (e, layer_size, VS_MEM_DEVICE, "activations"));
  if (emb->n != 0)
    {
      guint64 w = params_acquire (tr, emb);
      guint64 r[] = { w, in };
      kernel (tr, "embedding_fwd", 0, r, 2, &first, 1, VS_NONE);
      if (tr->t > 1)
        coll (tr, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE, tr->tp_msg, tr->t, first, 0);
      params_release (tr, emb);
    }
  guint64 out = 0;
  for (guint i = 0; i < L; i++)
    {
      Unit *u = &tr->units[i];
      guint64 w = params_acquire (tr, u);
      if (i + 1 < L)
        params_prefetch (tr, &tr->units[i + 1]);
      if (!every)
        {
          guint64 tmp = 0;
          if (o->checkpoint == SYNTH_CKPT_SELECTIVE)
            tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          guint64 next = i + 1 < L ? (A[i + 1] = synth_alloc (e, layer_size, VS_MEM_DEVICE, "activations"))
                                   : (out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace"));
          guint64 r[] = { w, A[i] }, wr[] = { A[i], tmp, next };
          kernel (tr, "transformer_layer_fwd", tr->layer_fwd_flops, r, 2, wr, 3,
                  layer_fwd_bytes (tr, w, layer_size + (tmp ? tr->attn : 0)));
          tp_layer (tr, next);
          moe_layer (tr, next);
          if (tmp != 0)
            synth_free (e, tmp);
        }
      else
        {
          guint seg = i / N;
          guint64 input = i % N == 0 ? C[seg] : A[i - 1];
          A[i] = synth_alloc (e, tr->full, VS_MEM_DEVICE, "activations");
          guint64 next = 0;
          if (i + 1 == L)
            next = out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
          else if ((i + 1) % N == 0)
            next = C[seg + 1] = synth_alloc (e, tr->ckpt, VS_MEM_DEVICE, "activations");
          guint64 r[] = { w, input }, wr[] = { A[i], next };
          kernel (tr, "transformer_layer_fwd", tr->layer_fwd_flops, r, 2, wr, 2, layer_fwd_bytes (tr, w, tr->full));
          tp_layer (tr, A[i]);
          moe_layer (tr, A[i]);
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

  if (!has_head (tr))
    {
      /* Stage 0 of a pipeline: the output goes to stage 1. */
      coll (tr, "nccl_send", COMPUTE, VS_COLL_SEND, tr->pp_msg, 2, out, 0);
      synth_free (e, out);
      mb->out = 0;
      return;
    }
  /* Loss: logits over the vocabulary (tied embedding). */
  guint64 dy = mb->dy = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
  if (emb->n != 0)
    {
      guint64 w = params_acquire (tr, emb);
      guint64 logits = synth_alloc (e, tokens * o->vocab * 2 * act_scale (o) / tr->t, VS_MEM_DEVICE, "workspace");
      guint64 r[] = { w, out }, wr[] = { logits };
      synth_kernel (e, "lm_head_loss_fwd", COMPUTE, 2.0 * (double) emb->n * tokens, r, 2, wr, 1, VS_NONE);
      guint64 gbuf = grads_acquire (tr, emb);
      guint64 r2[] = { w, out, logits }, w2[] = { gbuf, dy };
      synth_kernel (e, "lm_head_loss_bwd", COMPUTE, 4.0 * (double) emb->n * tokens, r2, 3, w2, 2, VS_NONE);
      if (tr->t > 1)
        synth_collective (e, "nccl_all_reduce", COMPUTE, VS_COLL_ALL_REDUCE, tr->tp_msg, tr->t, dy, dy, 0);
      grads_commit (tr, emb, gbuf, FALSE);
      synth_free (e, logits);
      params_release (tr, emb);
    }
  synth_free (e, out);
  mb->out = 0;
}

static void
backward (Train *tr, Micro *mb, gboolean last_micro, guint64 wait_ns)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  guint L = tr->Ls;
  Unit *emb = &tr->units[L];
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY;
  guint N = every ? o->checkpoint_every : 1;
  guint64 *A = mb->A, *C = mb->C;
  guint64 dy = mb->dy;
  if (!has_head (tr))
    {
      /* The output's gradient from stage 1; the first one of a step waits
       * out the pipeline bubble. */
      dy = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      synth_collective (e, "nccl_recv", COMPUTE, VS_COLL_RECV, tr->pp_msg, 2, 0, dy, wait_ns);
    }

  for (guint ii = L; ii-- > 0;)
    {
      Unit *u = &tr->units[ii];
      guint64 w = params_acquire (tr, u);
      /* FSDP's default backward prefetch (BACKWARD_PRE): the next layer's
       * gather is issued before this one's recompute and backward; a
       * segment of several layers recomputes them all first. */
      if (ii > 0 && !(every && N > 1 && (ii + 1 == L || (ii + 1) % N == 0)))
        params_prefetch (tr, &tr->units[ii - 1]);
      guint64 tmp = 0;
      if (every && (ii + 1 == L || (ii + 1) % N == 0))
        {
          /* Recompute this whole segment from its input. */
          guint seg = ii / N;
          for (guint j = seg * N; j <= ii; j++)
            {
              guint64 wj = j == ii ? w : params_acquire (tr, &tr->units[j]);
              guint64 input = j == seg * N ? C[seg] : A[j - 1];
              A[j] = synth_alloc (e, tr->full, VS_MEM_DEVICE, "activations");
              guint64 r[] = { wj, input };
              synth_kernel (e, "transformer_layer_recompute", COMPUTE, tr->layer_fwd_flops, r, 2, &A[j], 1,
                            layer_fwd_bytes (tr, wj, tr->full) - tr->ckpt);
              tp_layer (tr, A[j]);
              moe_layer (tr, A[j]);
              if (j != ii)
                params_release (tr, &tr->units[j]);
            }
        }
      else if (o->checkpoint == SYNTH_CKPT_SELECTIVE)
        {
          tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          guint64 r[] = { w, A[ii] };
          synth_kernel (e, "attention_recompute", COMPUTE, tr->attn_flops, r, 2, &tmp, 1, VS_NONE);
        }
      guint64 gbuf = grads_acquire (tr, u);
      guint64 dx = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
      guint64 input = every && ii % N == 0 ? C[ii / N] : 0;
      guint64 r[] = { w, A[ii], tmp, dy, input }, wr[] = { gbuf, dx };
      synth_kernel (e, "transformer_layer_bwd", COMPUTE, 2.0 * tr->layer_fwd_flops, r, 5, wr, 2, VS_NONE);
      moe_layer (tr, dx);
      tp_layer (tr, dx);
      synth_free (e, dy);
      dy = dx;
      if (tmp != 0)
        synth_free (e, tmp);
      synth_free (e, A[ii]);
      A[ii] = 0;
      if (every && ii % N == 0)
        synth_free (e, C[ii / N]);
      params_release (tr, u);
      grads_commit (tr, u, gbuf, last_micro);
    }
  if (emb->n != 0)
    {
      guint64 gbuf = grads_acquire (tr, emb);
      guint64 r[] = { dy, mb->in };
      synth_kernel (e, "embedding_bwd", COMPUTE, 0, r, 2, &gbuf, 1, VS_NONE);
      grads_commit (tr, emb, gbuf, last_micro);
    }
  synth_free (e, dy);
  synth_free (e, mb->in);
  g_free (mb->A);
  g_free (mb->C);
  *mb = (Micro) { 0 };
}

/* One optimizer step's micro-batches in 1F1B order (all forward-backward
 * pairs when there is no pipeline). */
static void
schedule (Train *tr, guint64 pinned_inputs, gboolean first_step)
{
  guint m = tr->o->grad_accum;
  guint w = MIN (tr->pp - 1, m);
  g_autofree Micro *mbs = g_new0 (Micro, m);
  /* Narayanan et al.: the bubble, (p-1)·(t_f + t_b) with t_b = 2·t_f,
   * waited out by the step's first receive. */
  for (guint j = 0; j < m + w; j++)
    {
      if (j < m)
        {
          tr->measuring = first_step && j == 0;
          forward (tr, pinned_inputs, &mbs[j]);
          tr->measuring = FALSE;
        }
      if (j >= w)
        {
          guint i = j - w;
          guint64 wait = i == 0 && tr->pp > 1 ? (guint64) (tr->pp - 1) * 3 * tr->fwd_ns : 0;
          backward (tr, &mbs[i], i + 1 == m, wait);
        }
    }
}

gboolean
synth_transformer_train (const SynthTrainOpts *o, SynthEmit *e, GError **error)
{
  Train tr = { 0 };
  tr.o = o;
  tr.e = e;
  synth_train_state_bytes (o->precision, o->optimizer, &tr.P, &tr.G, &tr.O);
  tr.t = tp_of (o);
  tr.pp = MAX (o->pp, 1u);
  tr.k = MAX (o->top_k, 1u);
  tr.ep = o->experts > 0 ? MIN (o->dp, o->experts) : 1;
  guint L = o->layers;
  tr.Ls = (L + tr.pp - 1) / tr.pp;
  tr.n_units = tr.Ls + 1;
  tr.units = g_new0 (Unit, tr.n_units);
  tr.free_events = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 h = o->hidden, s = o->seq, b = o->batch;
  double flop_params;  /* parameters a token's forward multiplies by, per layer */
  if (o->params != 0)
    {
      /* --params: spread Ψ over the layers (embedding folded in), split t ways. */
      for (guint i = 0; i < tr.Ls; i++)
        tr.units[i].n = (o->params / L + (i < o->params % L ? 1 : 0)) / tr.t;
      flop_params = (double) tr.units[0].n;
    }
  else
    {
      guint64 layer = 12 * h * h;
      flop_params = (double) layer / tr.t;
      if (o->experts > 0)
        {
          /* Attention 4h², the router h·E, E/ep experts of 8h² here. */
          layer = 4 * h * h + (guint64) (o->experts / tr.ep) * 8 * h * h;
          flop_params = (double) (4 * h * h + (guint64) tr.k * 8 * h * h) / tr.t;
        }
      for (guint i = 0; i < tr.Ls; i++)
        tr.units[i].n = layer / tr.t + (o->experts > 0 ? h * o->experts : 0);
      tr.units[tr.Ls].n = (guint64) o->vocab * h / tr.t;
    }
  guint64 scale = act_scale (o);
  tr.full = synth_train_layer_activations (o);
  tr.kept = synth_train_layer_kept (o);
  tr.attn = 5 * (guint64) o->heads * s * s * b * scale / tr.t;
  tr.ckpt = 2 * s * b * h * scale / (o->sp ? tr.t : 1);
  tr.hidden_buf = 2 * s * b * h * scale / (o->sp ? tr.t : 1);
  tr.tp_msg = 2 * s * b * h * scale;
  tr.a2a_msg = 2 * s * b * tr.k * h * scale / (o->sp ? tr.t : 1);
  tr.pp_msg = 2 * s * b * h * scale / tr.t;
  tr.attn_flops = 4.0 * (double) b * (double) s * (double) s * (double) h / tr.t;
  tr.layer_fwd_flops = 2.0 * flop_params * (double) (s * b) + tr.attn_flops;

  guint64 pinned_inputs = synth_alloc (e, s * b * 8, VS_MEM_PINNED, "inputs");
  guint64 loss = synth_alloc (e, 4, VS_MEM_DEVICE, "workspace");
  allocate_states (&tr);
  for (guint step = 0; step < o->steps; step++)
    {
      synth_mark (e, "step");
      for (guint i = 0; i < tr.n_units; i++)
        if (tr.units[i].n != 0)
          synth_memset (e, tr.units[i].g, COMPUTE);
      schedule (&tr, pinned_inputs, step == 0);
      optimizer_step (&tr);
      synth_copy (e, VS_DIR_D2H, loss, 0, 4, COMPUTE, FALSE); /* loss.item() */
      synth_sync_device (e);
    }
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
  g_free (tr.units);
  g_array_free (tr.free_events, TRUE);
  (void) error;
  return TRUE;
}
