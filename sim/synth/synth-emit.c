/* synth-emit.c — the event emitter the workload generators write through.
 *
 * Model of the "capture" a generator pretends to be (docs/workloads.md):
 * - the host thread (tid 0) enters each call at its clock and spends a fixed
 *   host cost in it (SYNTH_*_NS); blocking calls (syncs, synchronous copies)
 *   last until the GPU work they wait for ends;
 * - each stream runs its ops in order, an op starting when it is issued and
 *   the previous op on its stream has ended (stream_wait adds the event's
 *   time); there is no contention between streams;
 * - a kernel takes compute_ns + bytes / (memory.bandwidth × efficiency),
 *   compute_ns = FLOPs / (tflops × mfu): what SPEC 5.4 replays on the same
 *   preset; a pinned copy takes link.latency + bytes / (link.bandwidth ×
 *   efficiency), a pageable one bytes / (link.bandwidth ×
 *   pageable_efficiency), a d2d copy link.latency + 2 × bytes over device
 *   memory (SPEC 5.5). */
#include "synth/synth.h"

#include <math.h>
#include <string.h>

#include "model/network.h"
#include "trace/trace.h"

struct _SynthEmit {
  VsTraceWriter *w;
  const VsConfig *cfg;
  double mfu;
  double mem_bps;          /* memory.bandwidth × efficiency */
  guint64 t;               /* host clock, ns */
  guint64 next_id, next_event;
  GHashTable *sizes;       /* id -> bytes (live allocations) */
  GHashTable *kinds;       /* id -> VsMemKind + 1 */
  GHashTable *stream_end;  /* stream -> ns the last op on it ends */
  GHashTable *event_time;  /* event -> ns */
  GError *error;           /* first write error */
  VsNetwork net;           /* the preset's network */
  SynthCommStats *comm;    /* watched, or NULL */
};

static guint64
lookup_u64 (GHashTable *h, guint64 key)
{
  gpointer v;
  guint64 k = key;
  if (g_hash_table_lookup_extended (h, &k, NULL, &v))
    return *(guint64 *) v;
  return 0;
}

static void
store_u64 (GHashTable *h, guint64 key, guint64 value)
{
  guint64 *k = g_new (guint64, 1), *v = g_new (guint64, 1);
  *k = key;
  *v = value;
  g_hash_table_replace (h, k, v);
}

static GHashTable *
u64_table (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
}

SynthEmit *
synth_emit_new (const char *path, const VsConfig *cfg, double mfu, const char *workload, GError **error)
{
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  /* The device: the description up to its first comma ("NVIDIA A100 SXM4 80GB"). */
  const char *desc = cfg->description && *cfg->description ? cfg->description : cfg->name;
  h->device = g_strndup (desc, strcspn (desc, ",("));
  g_strchomp (h->device);
  h->config = g_strdup (cfg->name);
  h->tool = g_strdup_printf ("vramsim synth %s", workload);
  /* A PyTorch job's allocations are tensors (its caching allocator's
   * requests, SPEC 3); the STREAM benchmark's are driver calls. */
  if (strcmp (workload, "stream") != 0)
    trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
  VsTraceWriter *w = trace_writer_new (path, VS_FORMAT_AUTO, h, error);
  if (w == NULL)
    return NULL;
  SynthEmit *e = g_new0 (SynthEmit, 1);
  e->w = w;
  e->cfg = cfg;
  e->mfu = mfu;
  e->mem_bps = cfg->memory.bandwidth * cfg->memory.efficiency;
  e->next_id = 1;
  e->next_event = 1;
  e->sizes = u64_table ();
  e->kinds = u64_table ();
  e->stream_end = u64_table ();
  e->event_time = u64_table ();
  network_from_config (&e->net, cfg);
  return e;
}

const VsConfig *synth_config (SynthEmit *e) { return e->cfg; }

static void
emit (SynthEmit *e, VsEvent *ev, guint64 host_ns)
{
  ev->t = e->t;
  ev->host_ns = host_ns;
  e->t += host_ns;
  if (e->error == NULL)
    trace_writer_write (e->w, ev, &e->error);
}

/* Schedules DUR ns of work on STREAM issued now; returns its end. */
static guint64
gpu_run (SynthEmit *e, guint64 stream, guint64 dur)
{
  guint64 start = MAX (e->t, lookup_u64 (e->stream_end, stream));
  store_u64 (e->stream_end, stream, start + dur);
  return start + dur;
}

static guint64
ns_for (double bytes, double bps)
{
  return bps > 0 ? (guint64) llround (bytes / bps * 1e9) : 0;
}

guint64
synth_compute_ns (SynthEmit *e, double flops)
{
  double rate = e->cfg->tflops * 1e12 * e->mfu;
  return rate > 0 ? (guint64) llround (flops / rate * 1e9) : 0;
}

guint64
synth_alloc (SynthEmit *e, guint64 bytes, VsMemKind kind, const char *tag)
{
  VsEvent ev;
  event_init (&ev, VS_OP_ALLOC);
  ev.id = e->next_id++;
  ev.bytes = bytes;
  ev.kind = kind;
  ev.tag = tag;
  store_u64 (e->sizes, ev.id, bytes);
  store_u64 (e->kinds, ev.id, kind);
  emit (e, &ev, kind == VS_MEM_DEVICE ? SYNTH_ALLOC_NS : SYNTH_HOST_ALLOC_NS);
  return ev.id;
}

guint64
synth_size (SynthEmit *e, guint64 id)
{
  return lookup_u64 (e->sizes, id);
}

void
synth_free (SynthEmit *e, guint64 id)
{
  g_return_if_fail (g_hash_table_contains (e->sizes, &id));
  VsEvent ev;
  event_init (&ev, VS_OP_FREE);
  ev.id = id;
  g_hash_table_remove (e->sizes, &id);
  g_hash_table_remove (e->kinds, &id);
  emit (e, &ev, SYNTH_FREE_NS);
}

guint64
synth_kernel (SynthEmit *e, const char *name, guint64 stream, double flops,
              const guint64 *reads, guint n_reads, const guint64 *writes, guint n_writes, guint64 bytes)
{
  guint64 r[n_reads + 1], w[n_writes + 1];
  guint nr = 0, nw = 0;
  guint64 sum = 0;
  for (guint i = 0; i < n_reads; i++)
    if (reads[i] != 0)
      {
        r[nr++] = reads[i];
        sum += synth_size (e, reads[i]);
      }
  for (guint i = 0; i < n_writes; i++)
    if (writes[i] != 0)
      {
        w[nw++] = writes[i];
        sum += synth_size (e, writes[i]);
      }
  if (bytes == VS_NONE)
    bytes = sum;
  VsEvent ev;
  event_init (&ev, VS_OP_KERNEL);
  ev.name = name;
  ev.stream = stream;
  ev.compute_ns = synth_compute_ns (e, flops);
  ev.bytes = bytes;
  ev.dur = ev.compute_ns + ns_for ((double) bytes, e->mem_bps);
  ev.reads = r;
  ev.n_reads = nr;
  ev.writes = w;
  ev.n_writes = nw;
  gpu_run (e, stream, ev.dur);
  emit (e, &ev, SYNTH_LAUNCH_NS);
  return ev.dur;
}

void
synth_emit_watch_comm (SynthEmit *e, SynthCommStats *stats)
{
  e->comm = stats;
}

guint64
synth_collective (SynthEmit *e, const char *name, guint64 stream, VsCollKind kind, guint64 bytes,
                  guint32 ranks, guint64 read, guint64 write, guint64 wait_ns)
{
  VsCollective coll = { .kind = (guint8) kind, .ranks = ranks, .bytes = bytes };
  guint64 r[1] = { read }, w[1] = { write };
  VsEvent ev;
  event_init (&ev, VS_OP_KERNEL);
  ev.name = name;
  ev.stream = stream;
  /* No compute_ns: the time is the network's, not the SMs' (until the
   * engine prices collectives, SPEC 5.4 splits it as for any kernel). */
  /* Device-memory traffic: the input read and the output written. */
  guint64 out = kind == VS_COLL_ALL_GATHER ? bytes * ranks
                : kind == VS_COLL_REDUCE_SCATTER ? bytes / MAX (ranks, 1u)
                : kind == VS_COLL_SEND ? 0 : bytes;
  ev.bytes = (kind == VS_COLL_RECV ? 0 : bytes) + out;
  ev.dur = network_time_ns (&e->net, kind, bytes, ranks) + wait_ns;
  ev.reads = r;
  ev.n_reads = read ? 1 : 0;
  ev.writes = w;
  ev.n_writes = write ? 1 : 0;
  ev.collective = &coll;
  if (e->comm != NULL)
    {
      e->comm->count[kind]++;
      e->comm->bytes[kind] += bytes;
    }
  gpu_run (e, stream, ev.dur);
  emit (e, &ev, SYNTH_LAUNCH_NS);
  return ev.dur;
}

static gboolean
is_pinned (SynthEmit *e, guint64 id)
{
  return id != 0 && g_hash_table_contains (e->kinds, &id) && lookup_u64 (e->kinds, id) == VS_MEM_PINNED;
}

guint64
synth_copy (SynthEmit *e, VsDir dir, guint64 src, guint64 dst, guint64 bytes, guint64 stream, gboolean async)
{
  const VsConfig *c = e->cfg;
  /* Every copy first waits link.latency (SPEC 5.5). */
  guint64 dur = (guint64) llround (c->link.latency_ns);
  if (dir == VS_DIR_D2D)
    dur += ns_for (2.0 * (double) bytes, e->mem_bps);
  else
    {
      guint64 host = dir == VS_DIR_H2D ? src : dst;
      double bps = c->link.bandwidth * (is_pinned (e, host) ? c->link.efficiency : c->link.pageable_efficiency);
      dur += ns_for ((double) bytes, bps);
    }
  VsEvent ev;
  event_init (&ev, VS_OP_COPY);
  ev.dir = dir;
  ev.src = src;
  ev.dst = dst;
  ev.bytes = bytes;
  ev.stream = stream;
  ev.async = async;
  ev.dur = dur;
  guint64 end = gpu_run (e, stream, dur);
  emit (e, &ev, async ? SYNTH_LAUNCH_NS : MAX (SYNTH_LAUNCH_NS, end > e->t ? end - e->t : 0));
  return dur;
}

void
synth_memset (SynthEmit *e, guint64 dst, guint64 stream)
{
  VsEvent ev;
  event_init (&ev, VS_OP_MEMSET);
  ev.dst = dst;
  ev.bytes = synth_size (e, dst);
  ev.stream = stream;
  ev.async = TRUE;
  ev.dur = ns_for ((double) ev.bytes, e->mem_bps);
  gpu_run (e, stream, ev.dur);
  emit (e, &ev, SYNTH_LAUNCH_NS);
}

void
synth_prefetch (SynthEmit *e, guint64 id, VsPrefetchTo to, guint64 stream)
{
  const VsConfig *c = e->cfg;
  VsEvent ev;
  event_init (&ev, VS_OP_PREFETCH);
  ev.id = id;
  ev.bytes = synth_size (e, id);
  ev.to = to;
  ev.stream = stream;
  gpu_run (e, stream, ns_for ((double) ev.bytes, c->link.bandwidth * c->link.efficiency));
  emit (e, &ev, SYNTH_LAUNCH_NS);
}

guint64
synth_event_record (SynthEmit *e, guint64 stream)
{
  VsEvent ev;
  event_init (&ev, VS_OP_EVENT_RECORD);
  ev.stream = stream;
  ev.event = e->next_event++;
  store_u64 (e->event_time, ev.event, MAX (e->t, lookup_u64 (e->stream_end, stream)));
  emit (e, &ev, SYNTH_LAUNCH_NS / 2);
  return ev.event;
}

void
synth_stream_wait (SynthEmit *e, guint64 stream, guint64 event)
{
  VsEvent ev;
  event_init (&ev, VS_OP_STREAM_WAIT);
  ev.stream = stream;
  ev.event = event;
  guint64 at = lookup_u64 (e->event_time, event);
  if (at > lookup_u64 (e->stream_end, stream))
    store_u64 (e->stream_end, stream, at);
  emit (e, &ev, SYNTH_LAUNCH_NS / 2);
}

static guint64
all_streams_end (SynthEmit *e)
{
  GHashTableIter it;
  gpointer v;
  guint64 end = 0;
  g_hash_table_iter_init (&it, e->stream_end);
  while (g_hash_table_iter_next (&it, NULL, &v))
    end = MAX (end, *(guint64 *) v);
  return end;
}

static void
sync_until (SynthEmit *e, VsEvent *ev, guint64 end)
{
  /* A blocking call lasts until the work ends (at least 1 µs). */
  emit (e, ev, MAX (1000, end > e->t ? end - e->t : 0));
}

void
synth_sync_device (SynthEmit *e)
{
  VsEvent ev;
  event_init (&ev, VS_OP_SYNC);
  ev.scope = VS_SYNC_DEVICE;
  sync_until (e, &ev, all_streams_end (e));
}

void
synth_sync_stream (SynthEmit *e, guint64 stream)
{
  VsEvent ev;
  event_init (&ev, VS_OP_SYNC);
  ev.scope = VS_SYNC_STREAM;
  ev.stream = stream;
  sync_until (e, &ev, lookup_u64 (e->stream_end, stream));
}

void
synth_mark (SynthEmit *e, const char *name)
{
  VsEvent ev;
  event_init (&ev, VS_OP_MARK);
  ev.name = name;
  emit (e, &ev, 0);
}

void
synth_host_work (SynthEmit *e, guint64 ns)
{
  e->t += ns;
}

static void
emit_free (SynthEmit *e)
{
  g_hash_table_unref (e->sizes);
  g_hash_table_unref (e->kinds);
  g_hash_table_unref (e->stream_end);
  g_hash_table_unref (e->event_time);
  g_clear_error (&e->error);
  g_free (e);
}

gboolean
synth_emit_finish (SynthEmit *e, GError **error)
{
  if (e->error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&e->error));
      trace_writer_abort (e->w);
      emit_free (e);
      return FALSE;
    }
  gboolean ok = trace_writer_finish (e->w, error);
  emit_free (e);
  return ok;
}

void
synth_emit_abort (SynthEmit *e)
{
  if (e == NULL)
    return;
  trace_writer_abort (e->w);
  emit_free (e);
}
