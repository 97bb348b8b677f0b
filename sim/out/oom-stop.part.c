/* oom-stop.part.c — under keep_going, what the replay would have reported
 * had it stopped at its first out-of-memory (VsReplayOptions.oom_stop):
 * its predicted time and its warnings[], taken at that moment.
 *
 * Why this is the stop's answer: until the first out-of-memory a replay
 * with keep_going runs exactly as one without (keep_going is read only
 * where an allocation does not fit), and report_oom is called at the same
 * point of that allocation either way. A stopped replay then only drains
 * the reader (its events still count towards the captured time, which a
 * replay that goes on counts too; no thread ends, so no mark closes),
 * settles its flows (neither the marks nor a warning reads them) and
 * reports from that state: the time MAX (last end, now) - t0, marks[] and
 * steady_state (report_marks only reads the statistics) and the warnings
 * below, in sim_report's order. `fit` (sim/cli/cmd-fit.c)
 * compares the two ways on every shipped and real trace.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
oom_stop_snapshot (Sim *s)
{
  if (*s->core.opts->oom_stop != NULL)
    return;   /* the first out-of-memory only (report_oom says it once anyway) */
  double end = MAX (s->stats.last_end, s->core.now);
  double makespan = s->core.have_t0 ? end - s->core.t0 : 0;
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "predicted_ns", round (makespan));
  report_marks (s, o);
  cJSON *w = cJSON_AddArrayToObject (o, "warnings");
  amodel_warnings (s, w);
  report_warnings (s, o, makespan, TRUE);
  for (guint i = 0; i < s->stats.warnings->len; i++)
    cJSON_AddItemToArray (w, cJSON_CreateString (s->stats.warnings->pdata[i]));
  *s->core.opts->oom_stop = o;
}
