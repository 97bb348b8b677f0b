/* synth-pipe.c — the pipeline-parallel schedule as Megatron-LM runs it
 * (docs/workloads.md, "Pipeline schedule"): which micro-batch each stage
 * runs when, and how long it waits for its neighbours.
 *
 * Order of the operations of one stage (Narayanan et al., "Efficient
 * Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
 * SC 2021, section 2.2; NVIDIA/Megatron-LM megatron/schedules.py,
 * forward_backward_pipelining_without_interleaving and
 * forward_backward_pipelining_with_interleaving):
 * - 1F1B (v = 1): stage r runs min(p - r - 1, m) warm-up forwards, then
 *   alternates one forward and one backward, then the remaining
 *   backwards.
 * - Interleaved (v > 1 model chunks a stage, m a multiple of p): the m·v
 *   virtual micro-batches k run chunk (k mod p·v) div p (backwards: the
 *   chunks in reverse order, v - 1 - that) of micro-batch (k div p·v)·p +
 *   k mod p; stage r warms up with (p - r - 1)·2 + (v - 1)·p forwards
 *   (all m·v when m = p), then alternates, then drains.
 * Chunk c of stage s is virtual stage c·p + s: a forward takes its input
 * from virtual stage c·p + s - 1 (stage s - 1, or stage p - 1's chunk
 * c - 1 for s = 0) and a backward its gradient from c·p + s + 1.
 *
 * Timing: each stage runs its operations in that order on one stream. An
 * operation's compute takes t_f or t_b of its (stage, chunk). A stage that
 * sends (every forward but the last virtual stage's, every backward but
 * the first's) spends the transfer's time (p2p_ns, or p2p_wrap_ns between
 * the last stage and the first) on the send once its compute ends; the
 * receiver's transfer starts when it reaches the operation and the send
 * has started, whichever is later, and takes as long: the wait before it
 * is the receiver's bubble. With p2p = 0 and equal stages this gives
 * the paper's bubble exactly: (p - 1)·(t_f + t_b) per step for 1F1B and
 * (p - 1)·(t_f + t_b)/v interleaved, t_f and t_b a whole stage's times
 * (tests/synth/test-synth.c /synth/pipeline-bubble works both by hand).
 * Ordering is deadlock-free for these schedules; the simulation checks it
 * anyway. O(p·m·v) time and memory. */
#include "synth/synth.h"

/* The operations of stage R in Megatron's order. */
static void
stage_order (guint p, guint v, guint m, guint r, GArray *ops)
{
  g_array_set_size (ops, 0);
  guint total = m * v;
  guint warm;
  if (v == 1)
    warm = MIN (p - r - 1, m);
  else
    warm = m == p ? total : MIN ((p - r - 1) * 2 + (v - 1) * p, total);
  for (guint j = 0; j < total + warm; j++)
    {
      if (j < total)
        {
          guint k = j;
          SynthPipeOp op = { .fwd = TRUE, .chunk = (k % (p * v)) / p, .micro = (k / (p * v)) * p + k % p };
          if (v == 1)
            op.chunk = 0, op.micro = k;
          g_array_append_val (ops, op);
        }
      if (j >= warm)
        {
          guint k = j - warm;
          SynthPipeOp op = { .fwd = FALSE, .chunk = v - 1 - (k % (p * v)) / p, .micro = (k / (p * v)) * p + k % p };
          if (v == 1)
            op.chunk = 0, op.micro = k;
          g_array_append_val (ops, op);
        }
    }
}

/* The transfer between virtual stages VS and VS + 1 (either way): the
 * wrap from the last stage to the first, or neighbours. */
static inline double
xfer (const SynthPipeSpec *spec, guint vs)
{
  return vs % spec->p == spec->p - 1 ? spec->p2p_wrap_ns : spec->p2p_ns;
}

/* The slot of a forward (or backward) of virtual stage VS, micro-batch I. */
static inline gsize
slot (guint m, guint vs, guint i)
{
  return (gsize) vs * m + i;
}

gboolean
synth_pipe_schedule (const SynthPipeSpec *spec, guint stage, GArray *out, double *span_ns, GError **error)
{
  guint p = spec->p, v = MAX (spec->v, 1u), m = spec->m;
  g_return_val_if_fail (p >= 1 && m >= 1 && stage < p, FALSE);
  if (v > 1 && m % p != 0)
    {
      g_set_error (error, VS_SYNTH_ERROR, 0,
                   "the interleaved schedule needs the micro-batches (%u) to be a multiple of the stages (%u)", m, p);
      return FALSE;
    }
  guint nvs = p * v;
  /* When each send starts (-1: not yet). */
  double *fsend = g_new (double, (gsize) nvs * m), *bsend = g_new (double, (gsize) nvs * m);
  for (gsize i = 0; i < (gsize) nvs * m; i++)
    fsend[i] = bsend[i] = -1;
  GArray **orders = g_new (GArray *, p);
  guint *next = g_new0 (guint, p);
  double *clock = g_new0 (double, p);
  for (guint r = 0; r < p; r++)
    {
      orders[r] = g_array_new (FALSE, FALSE, sizeof (SynthPipeOp));
      stage_order (p, v, m, r, orders[r]);
    }
  guint remaining = 2 * m * v * p;
  gboolean ok = TRUE;
  while (remaining > 0 && ok)
    {
      gboolean progress = FALSE;
      for (guint r = 0; r < p; r++)
        while (next[r] < orders[r]->len)
          {
            SynthPipeOp *op = &g_array_index (orders[r], SynthPipeOp, next[r]);
            guint vs = op->chunk * p + r;
            gboolean first = vs == 0, last = vs == nvs - 1;
            double dep = 0;
            gboolean needs = op->fwd ? !first : !last;
            if (needs)
              {
                dep = op->fwd ? fsend[slot (m, vs - 1, op->micro)] : bsend[slot (m, vs + 1, op->micro)];
                if (dep < 0)
                  break;
              }
            op->wait_ns = 0;
            op->start_ns = clock[r];
            if (needs)
              {
                double begin = MAX (clock[r], dep);
                op->wait_ns = begin - clock[r];
                clock[r] = begin + xfer (spec, op->fwd ? vs - 1 : vs);
              }
            clock[r] += op->fwd ? spec->t_f[vs] : spec->t_b[vs];
            gboolean sends = op->fwd ? !last : !first;
            if (sends)
              {
                (op->fwd ? fsend : bsend)[slot (m, vs, op->micro)] = clock[r];
                clock[r] += xfer (spec, op->fwd ? vs : vs - 1);
              }
            op->end_ns = clock[r];
            op->recv = needs, op->send = sends;
            next[r]++;
            remaining--;
            progress = TRUE;
          }
      if (!progress && remaining > 0)
        {
          g_set_error (error, VS_SYNTH_ERROR, 1, "pipeline schedule deadlocked (p %u, v %u, m %u)", p, v, m);
          ok = FALSE;
        }
    }
  if (ok)
    {
      g_array_set_size (out, 0);
      g_array_append_vals (out, orders[stage]->data, orders[stage]->len);
      if (span_ns != NULL)
        *span_ns = clock[stage];
    }
  for (guint r = 0; r < p; r++)
    g_array_free (orders[r], TRUE);
  g_free (orders);
  g_free (next);
  g_free (clock);
  g_free (fsend);
  g_free (bsend);
  return ok;
}
