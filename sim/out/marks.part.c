/* marks.part.c — marks and ranges (per-mark times, the steady state) and
 * the report's warnings[].
 *
 * A mark NAME is a point, timed from where its thread reaches it to the
 * thread's next mark (SPEC 5.9's "between marks"), unless a NAME/end on
 * the same thread closes it: then the pair is a range, timed from start to
 * end, and ranges nest (ProfilerStep around Optimizer.step:
 * docs/trace-format.md). A name is reported as a range once one of its
 * marks was closed by an /end. Each name keeps its samples (the first
 * MARK_SAMPLES, 4,096: 32 KiB a series at most, so that memory does not
 * grow with the trace: `make bench`'s peak-RSS row), so the report gives the median
 * and spread, and the steady state: the mark that covers the most time,
 * its first sample (warm-up: allocation, weight upload, compilation)
 * apart from the median of the others.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

#define MARK_SAMPLES 4096
/* Open marks a thread keeps for an /end to close: deeper nesting than
 * this is a trace of points (marks no /end closes), the oldest dropped. */
#define MARK_OPEN_MAX 256

static MarkStat *
mark_stat (Sim *s, const char *name)
{
  MarkStat *m = g_hash_table_lookup (s->stats.marks, name);
  if (m == NULL)
    {
      m = g_new0 (MarkStat, 1);
      m->name = g_strdup (name);
      g_hash_table_insert (s->stats.marks, (gpointer) m->name, m);
    }
  return m;
}

static void
sample_add (GArray **a, double v)
{
  if (*a == NULL)
    *a = g_array_new (FALSE, FALSE, sizeof (double));
  if ((*a)->len < MARK_SAMPLES)
    g_array_append_val (*a, v);
}

/* Closes T's open point mark at NOW (capture time CAP_T). */
static void
mark_close (Sim *s, Thread *t, double now, guint64 cap_t)
{
  MarkStat *m = t->mark;
  if (m == NULL)
    return;
  double pred = now - t->mark_t;
  double cap = cap_t > t->mark_t_cap ? (double) (cap_t - t->mark_t_cap) : 0;
  m->predicted_ns += pred;
  m->captured_ns += cap;
  sample_add (&m->pred, pred);
  sample_add (&m->cap, cap);
  t->mark = NULL;
}

/* Closes the innermost mark of T named NAME[0..LEN) as a range ending at
 * NOW; FALSE when T has none open. */
static gboolean
mark_end (Sim *s, Thread *t, const char *name, gsize len, double now, guint64 cap_t)
{
  if (t->open_marks == NULL)
    return FALSE;
  for (guint i = t->open_marks->len; i-- > 0;)
    {
      OpenMark *o = &g_array_index (t->open_marks, OpenMark, i);
      if (strncmp (o->m->name, name, len) != 0 || o->m->name[len] != '\0')
        continue;
      MarkStat *m = o->m;
      double pred = now - o->t;
      double cap = cap_t > o->cap_t ? (double) (cap_t - o->cap_t) : 0;
      m->ranges++;
      m->range_pred_ns += pred;
      m->range_cap_ns += cap;
      sample_add (&m->range_pred, pred);
      sample_add (&m->range_cap, cap);
      g_array_remove_index (t->open_marks, i);
      return TRUE;
    }
  return FALSE;
}

/* An NVTX start/end range may end on another thread than the one that
 * started it: the most recent thread, in creation order, holding it. */
static gboolean
mark_end_elsewhere (Sim *s, Thread *t, const char *name, gsize len, double now, guint64 cap_t)
{
  for (guint i = s->host.thread_list->len; i-- > 0;)
    {
      Thread *o = s->host.thread_list->pdata[i];
      if (o != t && mark_end (s, o, name, len, now, cap_t))
        return TRUE;
    }
  return FALSE;
}

/* T reached mark NAME at NOW (its capture time CAP_T). */
static void
marks_reached (Sim *s, Thread *t, const char *name, double now, guint64 cap_t)
{
  mark_close (s, t, now, cap_t);
  gsize len = strlen (name);
  if (len > 4 && strcmp (name + len - 4, "/end") == 0 && (mark_end (s, t, name, len - 4, now, cap_t)
                                                         || mark_end_elsewhere (s, t, name, len - 4, now, cap_t)))
    return;
  /* A point, or the start of a range: an /end closing nothing is a point
   * of its own name, as before ranges. */
  MarkStat *m = mark_stat (s, name);
  m->count++;
  t->mark = m;
  t->mark_t = now;
  t->mark_t_cap = cap_t;
  if (t->open_marks == NULL)
    t->open_marks = g_array_new (FALSE, FALSE, sizeof (OpenMark));
  if (t->open_marks->len == MARK_OPEN_MAX)
    g_array_remove_index (t->open_marks, 0);
  OpenMark o = { m, now, cap_t };
  g_array_append_val (t->open_marks, o);
}

/* T has no more events: its point mark ends with its last call; ranges
 * still open never ended. */
static void
marks_thread_end (Sim *s, Thread *t)
{
  mark_close (s, t, t->f_prev, t->issued_t + t->issued_h);
  if (t->open_marks)
    g_array_set_size (t->open_marks, 0);
}

static gint
double_cmp (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Sample I of sorted V without its element J (J == G_MAXUINT: none). */
static inline double
sorted_at (const double *v, guint j, guint i)
{
  return v[i < j ? i : i + 1];
}

/* The median of the N sorted samples of V without element J. */
static double
sorted_median (const double *v, guint n, guint j)
{
  if (n == 0)
    return 0;
  return n % 2 ? sorted_at (v, j, n / 2)
               : (sorted_at (v, j, n / 2 - 1) + sorted_at (v, j, n / 2)) / 2;
}

/* Where X (a value of V) lies in sorted V of N: its first index. */
static guint
sorted_find (const double *v, guint n, double x)
{
  guint lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (v[mid] < x)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

typedef struct {
  guint n;
  double first, median, min, max;           /* over every sample */
  double steady_median, steady_min, steady_max;   /* without the first, when n >= 3 */
  double cap_median, cap_steady_median;
} Spread;

/* Each series is sorted once: the steady figures leave out the first
 * sample by skipping one element equal to it in the sorted copy (the same
 * values as sorting the others apart; half the sorting, which dominated
 * the report's cost on traces with many marks). */
static void
spread_of (const GArray *pred, const GArray *cap, Spread *out)
{
  memset (out, 0, sizeof *out);
  if (pred == NULL || pred->len == 0)
    return;
  guint n = pred->len;
  out->n = n;
  out->first = g_array_index (pred, double, 0);
  double cfirst = g_array_index (cap, double, 0);
  g_autofree double *v = g_memdup2 (pred->data, n * sizeof (double));
  g_autofree double *c = g_memdup2 (cap->data, n * sizeof (double));
  qsort (v, n, sizeof *v, double_cmp);
  qsort (c, n, sizeof *c, double_cmp);
  out->median = sorted_median (v, n, G_MAXUINT);
  out->min = v[0];
  out->max = v[n - 1];
  out->cap_median = sorted_median (c, n, G_MAXUINT);
  /* Steady: every sample but the first (warm-up), when two remain. */
  if (n >= 3)
    {
      guint jv = sorted_find (v, n, out->first), jc = sorted_find (c, n, cfirst);
      out->steady_median = sorted_median (v, n - 1, jv);
      out->steady_min = sorted_at (v, jv, 0);
      out->steady_max = sorted_at (v, jv, n - 2);
      out->cap_steady_median = sorted_median (c, n - 1, jc);
    }
  else
    {
      out->steady_median = out->median;
      out->steady_min = out->min;
      out->steady_max = out->max;
      out->cap_steady_median = out->cap_median;
    }
}

static void
add_ns (cJSON *o, const char *key, double ns)
{
  cJSON_AddNumberToObject (o, key, round (ns));
}

static gint
mark_name_cmp (gconstpointer a, gconstpointer b)
{
  const MarkStat *x = *(MarkStat *const *) a, *y = *(MarkStat *const *) b;
  return g_strcmp0 (x->name, y->name);
}

/* marks[]: per name, its kind, count, sums, median and spread; and
 * steady_state, from the mark that covers the most predicted time among
 * those reached at least twice. */
static void
report_marks (Sim *s, cJSON *r)
{
  cJSON *marks = cJSON_AddArrayToObject (r, "marks");
  GPtrArray *ms = table_values (s->stats.marks);
  g_ptr_array_sort (ms, mark_name_cmp);
  const MarkStat *best = NULL;
  double best_total = -1;
  for (guint i = 0; i < ms->len; i++)
    {
      MarkStat *mi = ms->pdata[i];
      gboolean range = mi->ranges > 0;
      guint64 count = range ? mi->ranges : mi->count;
      double pred = range ? mi->range_pred_ns : mi->predicted_ns;
      Spread sp;
      spread_of (range ? mi->range_pred : mi->pred, range ? mi->range_cap : mi->cap, &sp);
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", mi->name);
      cJSON_AddStringToObject (o, "kind", range ? "range" : "point");
      cJSON_AddNumberToObject (o, "count", (double) count);
      add_ns (o, "captured_ns", range ? mi->range_cap_ns : mi->captured_ns);
      add_ns (o, "predicted_ns", pred);
      if (sp.n > 0)
        {
          add_ns (o, "median_ns", sp.median);
          add_ns (o, "min_ns", sp.min);
          add_ns (o, "max_ns", sp.max);
          add_ns (o, "captured_median_ns", sp.cap_median);
        }
      cJSON_AddItemToArray (marks, o);
      if (count >= 2 && pred > best_total)
        best = mi, best_total = pred;
    }
  if (best)
    {
      gboolean range = best->ranges > 0;
      Spread sp;
      spread_of (range ? best->range_pred : best->pred, range ? best->range_cap : best->cap, &sp);
      cJSON *st = cJSON_AddObjectToObject (r, "steady_state");
      cJSON_AddStringToObject (st, "mark", best->name);
      cJSON_AddNumberToObject (st, "steps", sp.n);
      add_ns (st, "first_step_ns", sp.first);
      add_ns (st, "step_median_ns", sp.steady_median);
      add_ns (st, "step_min_ns", sp.steady_min);
      add_ns (st, "step_max_ns", sp.steady_max);
      add_ns (st, "captured_step_median_ns", sp.cap_steady_median);
      cJSON_AddNumberToObject (st, "step_slowdown",
                               sp.cap_steady_median > 0 ? round (sp.steady_median) / round (sp.cap_steady_median) : 0);
      cJSON_AddBoolToObject (st, "warmup_excluded", sp.n >= 3);
    }
  g_ptr_array_free (ms, TRUE);
}

/* warnings[]: what the user must know about the answer. */
static void
report_warnings (Sim *s, cJSON *r, double makespan)
{
  /* One warnings[] per report: the memory section's (sim/mem/alloc-model.part.c)
   * may have opened it already. */
  cJSON *w = cJSON_GetObjectItemCaseSensitive (r, "warnings");
  if (w == NULL)
    w = cJSON_AddArrayToObject (r, "warnings");
  gboolean mem_said = FALSE;
  const cJSON *said;
  cJSON_ArrayForEach (said, w)
    mem_said |= cJSON_IsString (said) && g_str_has_prefix (said->valuestring, "memory unknown");
  /* What the trace's maker said (synth: a trace that does not fit its
   * own capture preset, a flag without effect). */
  const VsTraceHeader *h = trace_reader_header (s->core.trace);
  const cJSON *hw = h && h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "warnings") : NULL;
  const cJSON *it;
  cJSON_ArrayForEach (it, hw)
    if (cJSON_IsString (it))
      {
        g_autofree char *msg = g_strdup_printf ("the trace: %s", it->valuestring);
        cJSON_AddItemToArray (w, cJSON_CreateString (msg));
      }
  /* The GPU idle most of the window: the time is the host's. */
  double busy = s->stats.gpu_busy_ns;
  if (makespan > 0 && busy < 0.1 * makespan)
    {
      g_autofree char *b = units_format_time (busy);
      g_autofree char *m = units_format_time (makespan);
      g_autofree char *msg = g_strdup_printf ("the GPU is idle %.2f %% of the predicted time (%s of GPU work in %s): "
                                              "the time is the host's, and a slowdown near 1 says little about the GPU",
                                              100 * (1 - busy / makespan), b, m);
      cJSON_AddItemToArray (w, cJSON_CreateString (msg));
    }
  /* No device memory at all: fits, OOM and spill answers mean nothing.
   * Counted from what the trace asks (mem/demand.part.c: a device or
   * managed allocation of non-zero size, granted or not, or a warm
   * allocator state), not from the device's peak: an OOM on the first
   * allocation leaves the peak at the context, and a 0-byte placeholder
   * (an importer's "untracked") may reserve a segment. Pinned and
   * pageable host memory do not count. Said once: a trace without any
   * allocation is already told so. */
  if (!mem_said && !s->mem.dem_known && s->stats.n_events > 0)
    cJSON_AddItemToArray (w, cJSON_CreateString (
      "memory unknown: the trace allocates no device memory (record it with vramcap, or the PyTorch "
      "profiler with profile_memory=True); whether it fits, and any OOM or spill, are not predicted"));
}
