/* gen-trace.c — generates large, realistic vramsim traces for `make bench`
 * (bench/run-bench.sh, docs/performance.md). Not part of vramsim.
 *
 * A trace is a training loop on one main host thread plus a data-loader
 * thread: per step the loader copies a batch into pinned memory and h2d on
 * a copy stream and records an event; the compute stream waits for it and
 * runs 40 kernels that read and write a few of the live buffers and the
 * step's activations (allocated and freed every step); during the backward
 * half a communication stream all-reduces gradient buckets (NCCL kernels)
 * beside it, as captured data-parallel training does; then a d2h copy, a
 * device sync and a mark. Modes:
 *   plain   device memory, fits the target (a100-80g: 80 GiB) — no oversubscription
 *   uvm     the buffers are managed memory totalling 1.5x the device: kernels fault
 *   spill   device buffers totalling 1.5x the device: replay with
 *           policy.oversubscription=spill evicts and swaps back
 * plus stress and resource-limit shapes: --streams N (the first layout:
 * kernels round-robin over N compute streams, for N > 4 with events
 * between them) and --live N (N more live allocations, 4 KiB each, all
 * held to the end).
 *
 * Usage: gen-trace -n EVENTS [--mode plain|uvm|spill] [--live N]
 *                  [--streams N] [--seed S] -o OUT(.vtrace|.jsonl) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

typedef struct {
  VsTraceWriter *w;
  guint64 t, count, limit;
  guint64 rng;
  GError *error;
} Gen;

static guint64
rnd (Gen *g, guint64 n)
{
  /* xorshift64*: fast, reproducible. */
  g->rng ^= g->rng >> 12;
  g->rng ^= g->rng << 25;
  g->rng ^= g->rng >> 27;
  return ((g->rng * 2685821657736338717ull) >> 11) % n;
}

static void
emit (Gen *g, VsEvent *ev)
{
  g->t += 1000 + rnd (g, 4000);   /* 1-5 us of host time between calls */
  ev->t = g->t;
  if (!trace_writer_write (g->w, ev, &g->error))
    {
      fprintf (stderr, "gen-trace: %s\n", g->error->message);
      exit (1);
    }
  g->count++;
}


static void
alloc (Gen *g, guint64 id, guint64 bytes, VsMemKind kind, const char *tag, guint32 tid)
{
  VsEvent ev;
  event_init (&ev, VS_OP_ALLOC);
  ev.id = id;
  ev.bytes = bytes;
  ev.kind = kind;
  ev.tag = tag;
  ev.tid = tid;
  emit (g, &ev);
}

static void
free_id (Gen *g, guint64 id, guint32 tid)
{
  VsEvent ev;
  event_init (&ev, VS_OP_FREE);
  ev.id = id;
  ev.tid = tid;
  emit (g, &ev);
}

static void
kernel (Gen *g, const char *name, guint64 stream, guint64 dur, const guint64 *reads, guint32 nr,
        const guint64 *writes, guint32 nw)
{
  VsEvent ev;
  event_init (&ev, VS_OP_KERNEL);
  ev.name = name;
  ev.stream = stream;
  ev.dur = dur;
  ev.reads = reads;
  ev.n_reads = nr;
  ev.writes = writes;
  ev.n_writes = nw;
  ev.bytes = dur * 300;   /* 300 GB/s of DRAM traffic: memory-heavy, not saturating alone */
  ev.host_ns = 3000;
  emit (g, &ev);
}

/* An NCCL all-reduce of one gradient bucket, as a capture records it:
 * its duration and DRAM traffic, no compute time (the model then takes the
 * rest of its time as compute: SPEC 5.4), so while it runs it shares `sm`
 * with the compute stream, as in the real traces (docs/validation.md). */
static void
allreduce (Gen *g, guint64 stream, guint64 dur, const guint64 *bucket)
{
  VsEvent ev;
  event_init (&ev, VS_OP_KERNEL);
  ev.name = "ncclKernel_AllReduce_RING_LL_Sum_float";
  ev.stream = stream;
  ev.dur = dur;
  ev.reads = bucket;
  ev.n_reads = 1;
  ev.writes = bucket;
  ev.n_writes = 1;
  ev.bytes = dur * 150;   /* 150 GB/s of DRAM traffic */
  ev.host_ns = 4000;
  emit (g, &ev);
}

static void
copy (Gen *g, VsDir dir, guint64 src, guint64 dst, guint64 bytes, guint64 stream, gboolean async, guint32 tid)
{
  VsEvent ev;
  event_init (&ev, VS_OP_COPY);
  ev.dir = dir;
  ev.src = src;
  ev.dst = dst;
  ev.bytes = bytes;
  ev.stream = stream;
  ev.async = async;
  ev.tid = tid;
  emit (g, &ev);
}

static void
simple (Gen *g, VsOp op, guint8 scope, guint64 stream, guint64 event, guint32 tid)
{
  VsEvent ev;
  event_init (&ev, op);
  ev.scope = scope;
  ev.stream = stream;
  ev.event = event;
  ev.tid = tid;
  emit (g, &ev);
}

static const char *const knames[] = {
  "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_tn", "vectorized_elementwise_kernel",
  "layer_norm_fwd", "layer_norm_bwd", "softmax_warp_forward", "softmax_warp_backward",
  "flash_fwd_kernel", "flash_bwd_dq_dk_dv", "multi_tensor_apply_adam", "reduce_kernel",
};

int
main (int argc, char **argv)
{
  gint64 n_events = 1000000, live_extra = 0, n_streams = 0, seed = 1;
  g_autofree char *mode = NULL, *out = NULL;
  GOptionEntry entries[] = {
    { "events", 'n', 0, G_OPTION_ARG_INT64, &n_events, "Events to write (about)", "N" },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode, "plain (default), uvm or spill", "MODE" },
    { "live", 0, 0, G_OPTION_ARG_INT64, &live_extra, "Extra 4 KiB allocations held live to the end", "N" },
    { "streams", 0, 0, G_OPTION_ARG_INT64, &n_streams,
      "Stress layout: kernels round-robin over N compute streams (default: one compute stream and a communication stream)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Random seed", "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Output trace (.vtrace binary, else JSONL)", "FILE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- generate a large benchmark trace");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || out == NULL || n_events < 100 || n_streams < 0
      || live_extra < 0)
    {
      fprintf (stderr, "gen-trace: %s\n", error ? error->message : "need -o FILE, -n >= 100, --streams >= 1");
      return 2;
    }
  gboolean stress = n_streams > 0;
  VsMemKind kind = VS_MEM_DEVICE;
  guint64 total = 48 * GiB;   /* fits an 80 GiB device with room for activations */
  if (mode == NULL || strcmp (mode, "plain") == 0)
    ;
  else if (strcmp (mode, "uvm") == 0)
    kind = VS_MEM_MANAGED, total = 120 * GiB;
  else if (strcmp (mode, "spill") == 0)
    total = 120 * GiB;
  else
    {
      fprintf (stderr, "gen-trace: unknown mode '%s'\n", mode);
      return 2;
    }

  g_autoptr (VsTraceHeader) h = trace_header_new ();
  h->version = 1;
  h->time_unit = g_strdup ("ns");
  h->device = g_strdup ("NVIDIA A100-SXM4-80GB");
  h->config = g_strdup ("a100-80g");
  h->tool = g_strdup ("bench/gen-trace");
  Gen g = { .rng = 0x9E3779B97F4A7C15ull ^ (guint64) seed, .limit = (guint64) n_events };
  g.w = trace_writer_new (out, VS_FORMAT_AUTO, h, &error);
  if (g.w == NULL)
    {
      fprintf (stderr, "gen-trace: %s\n", error->message);
      return 1;
    }

  /* Long-lived buffers: ids 1..NB, 256 MiB .. 1 GiB each. */
  enum { NB = 160 };
  guint64 sizes[NB + 1];
  guint64 sum = 0;
  for (guint i = 1; i <= NB; i++)
    sum += sizes[i] = 256 * MiB + rnd (&g, 3) * 256 * MiB;
  for (guint i = 1; i <= NB; i++)
    {
      guint64 b = (sizes[i] * (total / MiB) / (sum / MiB)) / (2 * MiB) * (2 * MiB);
      alloc (&g, i, b ? b : 2 * MiB, kind, i <= NB / 2 ? "params" : (i <= 3 * NB / 4 ? "grads" : "optimizer"), 0);
    }
  const guint64 pinned = NB + 1, batch_dev = NB + 2;
  alloc (&g, pinned, 64 * MiB, VS_MEM_PINNED, "input", 1);
  alloc (&g, batch_dev, 64 * MiB, VS_MEM_DEVICE, "input", 0);
  guint64 next_id = NB + 10;
  guint64 live_first = next_id;
  for (gint64 i = 0; i < live_extra; i++)
    alloc (&g, next_id++, 4096, VS_MEM_DEVICE, "small", 0);
  guint64 live_last = next_id;

  const guint64 copy_stream = 1000000;   /* apart from the compute streams */
  const guint64 ev_batch = 1;
  guint64 act[8];
  guint64 step = 0, step_gpu_ns = 0;
  while (g.count < g.limit)
    {
      guint64 step_t0 = g.t;
      /* Loader thread: batch h2d on the copy stream, event for the compute streams. */
      copy (&g, VS_DIR_H2D, pinned, batch_dev, 16 * MiB, copy_stream, TRUE, 1);
      simple (&g, VS_OP_EVENT_RECORD, 0, copy_stream, ev_batch, 1);
      for (guint64 s = 1; s <= (guint64) (stress ? MIN (n_streams, 4) : 1); s++)
        simple (&g, VS_OP_STREAM_WAIT, 0, s, ev_batch, 0);
      /* Forward: allocate activations, kernels over params. */
      for (guint a = 0; a < G_N_ELEMENTS (act); a++)
        {
          act[a] = next_id++;
          alloc (&g, act[a], 128 * MiB, VS_MEM_DEVICE, "activations", 0);
        }
      for (guint k = 0; k < 40 && g.count < g.limit; k++)
        {
          guint64 stream = 1;
          if (stress)
            stream = 1 + (n_streams > 4 ? rnd (&g, (guint64) n_streams) : k % (guint64) n_streams);
          guint64 reads[3] = { 1 + rnd (&g, NB), batch_dev, act[rnd (&g, G_N_ELEMENTS (act))] };
          guint64 writes[2] = { act[k % G_N_ELEMENTS (act)], 1 + rnd (&g, NB) };
          guint32 nr = 1 + (guint32) rnd (&g, 3), nw = k % 3 == 2 ? 2 : 1;
          if (live_extra > 0 && k % 4 == 0)
            reads[0] = live_first + rnd (&g, live_last - live_first);
          guint64 dur = 20000 + rnd (&g, 200000);
          step_gpu_ns += dur;
          kernel (&g, knames[rnd (&g, G_N_ELEMENTS (knames))], stream, dur, reads, nr, writes, nw);
          if (stress && n_streams > 4 && k % 8 == 7)
            {
              simple (&g, VS_OP_EVENT_RECORD, 0, stream, 100 + stream, 0);
              simple (&g, VS_OP_STREAM_WAIT, 0, 1 + rnd (&g, (guint64) n_streams), 100 + stream, 0);
            }
          if (!stress && k >= 16 && k % 5 == 0)
            {
              /* Backward: a gradient bucket is ready; the communication
               * stream all-reduces it while the compute stream goes on. */
              guint64 bucket[1] = { NB / 2 + 1 + rnd (&g, NB / 4) };
              simple (&g, VS_OP_EVENT_RECORD, 0, 1, 10, 0);
              simple (&g, VS_OP_STREAM_WAIT, 0, 2, 10, 0);
              allreduce (&g, 2, 100000 + rnd (&g, 200000), bucket);
            }
        }
      if (!stress)
        {
          /* The optimizer waits for the last all-reduce. */
          simple (&g, VS_OP_EVENT_RECORD, 0, 2, 11, 0);
          simple (&g, VS_OP_STREAM_WAIT, 0, 1, 11, 0);
        }
      /* Loss to the host, activations freed, one sync per step. */
      copy (&g, VS_DIR_D2H, act[0], 0, 4096, 1, FALSE, 0);
      for (guint a = 0; a < G_N_ELEMENTS (act); a++)
        free_id (&g, act[a], 0);
      /* The capture's sync waited for the step's kernels: those of the one
       * compute stream, or (stress) spread over the streams. */
      VsEvent sy;
      event_init (&sy, VS_OP_SYNC);
      sy.scope = VS_SYNC_DEVICE;
      guint64 gpu_end = step_t0 + step_gpu_ns / (guint64) (stress ? MIN (n_streams, 4) : 1);
      sy.host_ns = gpu_end > g.t + 5000 ? gpu_end - g.t - 5000 : 0;
      emit (&g, &sy);
      g.t += sy.host_ns;
      step_gpu_ns = 0;
      VsEvent m;
      event_init (&m, VS_OP_MARK);
      m.name = "step";
      emit (&g, &m);
      step++;
    }
  for (guint64 id = live_first; id < live_last; id++)
    free_id (&g, id, 0);
  for (guint i = 1; i <= NB + 2; i++)
    free_id (&g, i, i == pinned ? 1 : 0);
  if (!trace_writer_finish (g.w, &error))
    {
      fprintf (stderr, "gen-trace: %s\n", error->message);
      return 1;
    }
  printf ("%s: %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " steps\n", out, g.count, step);
  return 0;
}
