/* replay.c — the discrete-event replay engine (SPEC section 5).
 *
 * Model assumptions, in order of the spec (docs/model.md has the why and
 * the sources):
 *  - Host threads (5.2): each tid is an actor; CPU gaps between calls are
 *    kept from the capture, waiting is re-simulated. Calls are issued in
 *    the trace's order across threads (one event read ahead: memory stays
 *    bounded by live state), a thread's first call at max(its t, now).
 *  - Streams (5.3): one op at a time per stream, in issue order. An op
 *    starts at the latest of issue + launch latency, the previous op's end,
 *    its dependencies (stream_wait events, the legacy default stream),
 *    a free copy engine (h2d: one pool; d2h and p2p: the other; d2d none),
 *    and its memory being resident: first spilled allocations are swapped
 *    back (swap stall), then managed pages fault in (fault stall).
 *  - Kernels (5.4), copies and memsets (5.5) become fluid flows over paths
 *    of resources (flow.c); contention is (actual - alone) run time.
 *  - Capacity (5.6): device allocations are charged their size rounded up
 *    to alloc_granularity; managed memory is charged per resident evict
 *    unit; pinned memory is charged to the host. Before a device
 *    allocation fails, resident managed memory is evicted (as the driver
 *    does for cudaMalloc). The oversubscription policy is a named part,
 *    one file each in sim/mem (policy-*.part.c, the table in policy.part.c).
 *  - Managed memory (5.7): residency counted in evict_unit groups per
 *    allocation; LRU is kept per allocation (a kernel touches all of an
 *    allocation, so group LRU and allocation LRU agree, and which of its
 *    groups are resident need not be tracked, only how many; dirty ones
 *    leave in proportion). A fault-in is: write back dirty evicted groups,
 *    then ceil(pages / fault_batch) x fault_latency, then the migration
 *    flow — one after the other.
 *
 * This file is the engine's one translation unit: it #includes its parts,
 * files of one job each under sim/engine, sim/mem, sim/model and sim/out
 * (docs/architecture.md), so that the hot paths inline across them; their
 * shared types and what each offers the others are in sim-priv.h. Here is
 * replay_run: setup, the main loop, the report and the output files.
 */

#include "engine/sim-priv.h"

/* The parts. sim-priv.h declares what crosses parts, so the order is
 * free but for the policy table (policy.part.c) after the policies; this
 * one keeps the functions where the single file had them. */
#include "engine/refs.part.c"
#include "out/series.part.c"
#include "out/timeline.part.c"
#include "out/stats.part.c"
#include "mem/loc.part.c"
#include "mem/lru.part.c"
#include "engine/job.part.c"
#include "mem/policy-spill.part.c"
#include "mem/managed.part.c"
#include "mem/policy-oom.part.c"
#include "mem/policy-direct.part.c"
#include "mem/policy-uvm.part.c"
#include "mem/policy.part.c"
#include "engine/thread.part.c"
#include "engine/launchq.part.c"
#include "engine/stream.part.c"
#include "engine/acc.part.c"
#include "engine/op.part.c"
#include "model/kernel.part.c"
#include "model/collective.part.c"
#include "model/copy.part.c"
#include "engine/phase.part.c"
#include "mem/alloc.part.c"
#include "mem/alloc-model.part.c"
#include "mem/alloc-policy.part.c"
#include "mem/alloc-streams.part.c"
#include "mem/demand.part.c"
#include "engine/issue.part.c"
#include "engine/loop.part.c"
#include "engine/sample.part.c"
#include "engine/setup.part.c"
#include "out/gpu-steps.part.c"
#include "out/marks.part.c"
#include "out/sim-report.part.c"
#include "out/oom-stop.part.c"

cJSON *
replay_run (VsTraceReader *reader, const VsConfig *target, const VsConfig *capture,
            const VsReplayOptions *opts, GError **error)
{
  static const VsReplayOptions defaults = { 0 };
  Sim sim = { 0 };
  Sim *s = &sim;
  s->core.cfg = target;
  s->core.cap_cfg = capture ? capture : target;
  /* A trace that names its config (a synth trace, a capture) replayed
   * with no capture config given was captured on the target or checked
   * against it; one that names none is assumed so. */
  s->core.cap_assumed = capture == NULL && trace_reader_header (reader)->config == NULL;
  s->core.opts = opts ? opts : &defaults;
  s->core.reader = s->core.trace = reader;
  sim_setup (s);
  if (s->core.opts->series_path)
    {
      s->out.series = g_new0 (Series, 1);
      s->out.series->fixed = s->core.opts->series_dt_ns > 0;
      s->out.series->dt = s->out.series->fixed ? s->core.opts->series_dt_ns : 1000.0;
      /* locations, resources, then allocated and reserved bytes */
      s->out.series->n_cols = s->mem.n_locs + flow_net_n_resources (s->core.net) + 2;
      s->out.series->sums = g_array_new (FALSE, TRUE, sizeof (double));
      flow_net_set_observer (s->core.net, on_load, s);
    }
  if (s->core.opts->timeline_path && !timeline_open (s, s->core.opts->timeline_path, error))
    {
      sim_teardown (s);
      return NULL;
    }
  s->gpu.issue_extra = s->out.timeline != NULL || s->core.cfg->gpu.legacy_default_stream;

  sample_init (s);
  reader_advance (s);
  sim_loop (s);
  /* The loop ends when nothing has a finite time left. With events unread
   * or flows running, that is a flow whose end is beyond any time (a rate
   * too small to represent): say so rather than report a partial replay
   * as done. config_compile refuses such rates; this is the net below. */
  if (s->core.error == NULL && !s->core.stopped && (!s->core.eof || flow_net_n_active (s->core.net) > 0))
    g_set_error (&s->core.error, VS_CONFIG_ERROR, 0,
                 "%s: the replay cannot go on at t = %.0f ns: %u of its flows would never end (a bandwidth, "
                 "efficiency or compute rate too small to represent)",
                 s->core.cfg->origin ? s->core.cfg->origin : "config", s->core.now, flow_net_n_active (s->core.net));
  if (s->core.error == NULL && s->core.stopped)
    {
      /* An OOM stop: drain the reader so that bad input after the stop
       * still fails, and the event count is the trace's. */
      VsEvent ev;
      while (trace_next (s->core.reader, &ev, &s->core.error))
        {
          s->stats.n_events++;
          note_captured (s, &ev);
        }
    }
  double end = MAX (s->stats.last_end, s->core.now);
  flow_net_settle (s->core.net, end);
  double makespan = s->core.have_t0 ? end - s->core.t0 : 0;
  /* --sample-steps: the rest of the trace read, the whole predicted. */
  guint64 steps_total = 0;
  double total = s->sample && s->core.error == NULL && !s->core.stopped
    ? sample_finish (s, makespan, &steps_total) : makespan;
  cJSON *report = NULL;
  gboolean ok = s->core.error == NULL;
  if (!ok)
    g_propagate_error (error, s->core.error);
  else
    report = sim_report (s, makespan);
  if (report && s->sample && !s->core.stopped)
    sample_report (s, report, makespan, total, steps_total);
  if (ok && s->out.series && !series_write (s, s->core.opts->series_path, makespan, error))
    ok = FALSE;
  if (!timeline_close (s, s->core.opts->timeline_path, ok, ok ? error : NULL))
    ok = FALSE;
  if (!ok)
    g_clear_pointer (&report, cJSON_Delete);
  sample_free (s);
  sim_teardown (s);
  return report;
}
