/* replay.h — replay one trace against one modeled machine (SPEC section 5).
 *
 * The result is the JSON report of SPEC 5.8: every script, sweep and test
 * reads it. Bad input found while replaying (a trace error the reader
 * reports) fails with a GError; a predicted out-of-memory is a result
 * (status "oom"), not an error. */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#include "config/config.h"
#include "trace/trace.h"

typedef struct {
  gboolean keep_going;         /* on OOM, overflow the device and go on */
  const char *series_path;     /* --series CSV, or NULL */
  double series_dt_ns;         /* bucket width; 0 = automatic */
  const char *timeline_path;   /* --timeline Chrome-trace JSON, or NULL */
  const char *trace_name;      /* for the report's "trace" field */
  gboolean progress;           /* progress on stderr */
  /* With keep_going: where the first out-of-memory stores (transfer full)
   * what a replay without keep_going would have reported when it stopped
   * there: {"predicted_ns": N, "marks": [...], "steady_state": {...},
   * "warnings": [...]} (the report's time, marks and warnings[] at the
   * stop; its captured time is the whole trace's, as here). Left NULL when nothing runs out. `fit` learns from one replay
   * both that a config stops and how much memory it misses. */
  cJSON **oom_stop;
  /* --sample-steps K (engine/sample.part.c): 0 replays everything; K
   * replays until K steps of the repeated mark after the first are
   * steady within sample_tol (0: 0.01), then extrapolates the rest. */
  guint sample_steps;
  double sample_tol;
} VsReplayOptions;

/* (transfer full) Replays every event of READER on TARGET. CAPTURE is the
 * config the trace was recorded on (NULL = TARGET). Output files named in
 * OPTS are written to temporary names and renamed only on success. */
cJSON *replay_run (VsTraceReader *reader, const VsConfig *target,
                   const VsConfig *capture, const VsReplayOptions *opts,
                   GError **error);

/* (transfer full) The short human summary of a report. */
char *report_to_text (const cJSON *report);

/* What bounds a replay, from its report alone (docs/fit.md): the time each
 * kind of work would take by itself — compute (the sm resource's GPU-ns),
 * memory (device_mem bytes at its capacity), link (the busiest other
 * resource), swap and faults (their stalls), communication (exposed
 * collective time), host (PREDICTED_NS less the busiest resource's busy
 * time) — into BOUND_NS, and the largest (the first of equals). Under
 * --sample-steps the resources' figures are the replayed part's; they are
 * scaled as the whole trace's time was. */
typedef enum {
  VS_STEP_BOUND_COMPUTE, VS_STEP_BOUND_MEMORY, VS_STEP_BOUND_LINK, VS_STEP_BOUND_SWAP, VS_STEP_BOUND_FAULTS, VS_STEP_BOUND_COMM, VS_STEP_BOUND_HOST,
  VS_STEP_BOUND_COUNT
} VsStepBound;
VsStepBound report_bounds (const cJSON *report, double predicted_ns, double bound_ns[VS_STEP_BOUND_COUNT]);
