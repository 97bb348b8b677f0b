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
 * - Data-parallel collectives are kernels that move only local device
 *   memory (their network time is not modeled; the network is outside the
 *   simulated machine). */
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

guint64
synth_train_layer_activations (const SynthTrainOpts *o)
{
  guint64 s = o->seq, b = o->batch, h = o->hidden, a = o->heads;
  return (34 * s * b * h + 5 * a * s * s * b) * act_scale (o);
}

/* One sharded unit of the model: a layer, or the (tied) embedding. */
typedef struct {
  guint64 n;          /* parameters */
  guint64 p, g, o;    /* device (or host) allocation ids of its states */
  guint64 hg;         /* offload: pinned host grads/params staging */
  guint64 gathered;   /* stage 3: the full params while in use */
} Unit;

typedef struct {
  const SynthTrainOpts *o;
  SynthEmit *e;
  guint P, G, O;
  Unit *units;        /* layers 0..L-1, then the embedding */
  guint n_units;
  guint64 full, kept, attn, ckpt, hidden_buf;
  double layer_fwd_flops, attn_flops;
} Train;

#define COMPUTE 1
#define COPY 2

static guint64
shard (guint64 bytes, guint dp, gboolean sharded)
{
  return sharded ? (bytes + dp - 1) / dp : bytes;
}

/* The id a kernel reads the unit's params from; gathers them under ZeRO-3. */
static guint64
params_acquire (Train *tr, Unit *u)
{
  if (tr->o->zero < 3 || tr->o->dp <= 1)
    return u->p;
  u->gathered = synth_alloc (tr->e, u->n * tr->P, VS_MEM_DEVICE, "workspace");
  synth_kernel (tr->e, "nccl_all_gather", COMPUTE, 0, &u->p, 1, &u->gathered, 1, VS_NONE);
  return u->gathered;
}

static void
params_release (Train *tr, Unit *u)
{
  if (u->gathered != 0)
    synth_free (tr->e, u->gathered);
  u->gathered = 0;
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
  if (buf != u->g)
    {
      synth_kernel (tr->e, "nccl_reduce_scatter", COMPUTE, 0, &buf, 1, &u->g, 1, VS_NONE);
      synth_free (tr->e, buf);
    }
  else if (tr->o->dp > 1 && last_micro)
    synth_kernel (tr->e, "nccl_all_reduce", COMPUTE, 0, &u->g, 1, &u->g, 1, VS_NONE);
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
      if (o->dp > 1 && (o->zero == 1 || o->zero == 2))
        synth_kernel (e, "nccl_all_gather", COMPUTE, 0, &u->p, 1, &u->p, 1, ns * tr->P + u->n * tr->P);
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

static void
micro_batch (Train *tr, guint64 pinned_inputs, gboolean last_micro)
{
  const SynthTrainOpts *o = tr->o;
  SynthEmit *e = tr->e;
  guint L = o->layers;
  guint64 tokens = (guint64) o->seq * o->batch;
  Unit *emb = &tr->units[L];
  gboolean every = o->checkpoint == SYNTH_CKPT_EVERY;
  guint N = every ? o->checkpoint_every : 1;
  guint nseg = (L + N - 1) / N;
  g_autofree guint64 *A = g_new0 (guint64, L + 1);   /* kept activations per layer, or temps */
  g_autofree guint64 *C = g_new0 (guint64, nseg + 1); /* segment inputs */

  /* The batch: token ids over a side stream, the compute stream waits. */
  guint64 in = synth_alloc (e, tokens * 8, VS_MEM_DEVICE, "inputs");
  synth_copy (e, VS_DIR_H2D, pinned_inputs, in, tokens * 8, COPY, TRUE);
  synth_stream_wait (e, COMPUTE, synth_event_record (e, COPY));

  /* ---- forward ---- */
  guint64 layer_size = o->checkpoint == SYNTH_CKPT_SELECTIVE ? tr->kept : tr->full;
  guint64 first = every ? (C[0] = synth_alloc (e, tr->ckpt, VS_MEM_DEVICE, "activations"))
                        : (A[0] = synth_alloc (e, layer_size, VS_MEM_DEVICE, "activations"));
  if (emb->n != 0)
    {
      guint64 w = params_acquire (tr, emb);
      guint64 r[] = { w, in };
      synth_kernel (e, "embedding_fwd", COMPUTE, 0, r, 2, &first, 1, VS_NONE);
      params_release (tr, emb);
    }
  guint64 out = 0;
  for (guint i = 0; i < L; i++)
    {
      Unit *u = &tr->units[i];
      guint64 w = params_acquire (tr, u);
      if (!every)
        {
          guint64 tmp = 0;
          if (o->checkpoint == SYNTH_CKPT_SELECTIVE)
            tmp = synth_alloc (e, tr->attn, VS_MEM_DEVICE, "activations");
          guint64 next = i + 1 < L ? (A[i + 1] = synth_alloc (e, layer_size, VS_MEM_DEVICE, "activations"))
                                   : (out = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace"));
          guint64 r[] = { w, A[i] }, wr[] = { A[i], tmp, next };
          synth_kernel (e, "transformer_layer_fwd", COMPUTE, tr->layer_fwd_flops, r, 2, wr, 3,
                        layer_fwd_bytes (tr, w, layer_size + (tmp ? tr->attn : 0)));
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
          synth_kernel (e, "transformer_layer_fwd", COMPUTE, tr->layer_fwd_flops, r, 2, wr, 2,
                        layer_fwd_bytes (tr, w, tr->full));
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

  /* Loss: logits over the vocabulary (tied embedding). */
  guint64 dy = synth_alloc (e, tr->hidden_buf, VS_MEM_DEVICE, "workspace");
  if (emb->n != 0)
    {
      guint64 w = params_acquire (tr, emb);
      guint64 logits = synth_alloc (e, tokens * o->vocab * 2 * act_scale (o), VS_MEM_DEVICE, "workspace");
      guint64 r[] = { w, out }, wr[] = { logits };
      synth_kernel (e, "lm_head_loss_fwd", COMPUTE, 2.0 * (double) emb->n * tokens, r, 2, wr, 1, VS_NONE);
      guint64 gbuf = grads_acquire (tr, emb);
      guint64 r2[] = { w, out, logits }, w2[] = { gbuf, dy };
      synth_kernel (e, "lm_head_loss_bwd", COMPUTE, 4.0 * (double) emb->n * tokens, r2, 3, w2, 2, VS_NONE);
      grads_commit (tr, emb, gbuf, last_micro);
      synth_free (e, logits);
      params_release (tr, emb);
    }
  synth_free (e, out);

  /* ---- backward ---- */
  for (guint ii = L; ii-- > 0;)
    {
      Unit *u = &tr->units[ii];
      guint64 w = params_acquire (tr, u);
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
      guint64 r[] = { dy, in };
      synth_kernel (e, "embedding_bwd", COMPUTE, 0, r, 2, &gbuf, 1, VS_NONE);
      grads_commit (tr, emb, gbuf, last_micro);
    }
  synth_free (e, dy);
  synth_free (e, in);
}

gboolean
synth_transformer_train (const SynthTrainOpts *o, SynthEmit *e, GError **error)
{
  Train tr = { 0 };
  tr.o = o;
  tr.e = e;
  synth_train_state_bytes (o->precision, o->optimizer, &tr.P, &tr.G, &tr.O);
  guint L = o->layers;
  tr.n_units = L + 1;
  tr.units = g_new0 (Unit, tr.n_units);
  guint64 h = o->hidden, s = o->seq, b = o->batch;
  if (o->params != 0)
    {
      /* --params: spread Ψ over the layers (embedding folded in). */
      for (guint i = 0; i < L; i++)
        tr.units[i].n = o->params / L + (i < o->params % L ? 1 : 0);
    }
  else
    {
      for (guint i = 0; i < L; i++)
        tr.units[i].n = 12 * h * h;
      tr.units[L].n = (guint64) o->vocab * h;
    }
  guint64 scale = act_scale (o);
  tr.full = synth_train_layer_activations (o);
  tr.kept = 34 * s * b * h * scale;
  tr.attn = 5 * (guint64) o->heads * s * s * b * scale;
  tr.ckpt = 2 * s * b * h * scale;
  tr.hidden_buf = 2 * s * b * h * scale;
  tr.attn_flops = 4.0 * (double) b * (double) s * (double) s * (double) h;
  tr.layer_fwd_flops = 2.0 * (double) tr.units[0].n * (double) (s * b) + tr.attn_flops;

  guint64 pinned_inputs = synth_alloc (e, s * b * 8, VS_MEM_PINNED, "inputs");
  guint64 loss = synth_alloc (e, 4, VS_MEM_DEVICE, "workspace");
  allocate_states (&tr);
  for (guint step = 0; step < o->steps; step++)
    {
      synth_mark (e, "step");
      for (guint i = 0; i < tr.n_units; i++)
        if (tr.units[i].n != 0)
          synth_memset (e, tr.units[i].g, COMPUTE);
      for (guint k = 0; k < o->grad_accum; k++)
        micro_batch (&tr, pinned_inputs, k + 1 == o->grad_accum);
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
  (void) error;
  return TRUE;
}
