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

/* Closes T's open point mark at NOW (capture time CAP_T), the GPU's
 * frontier then FRONT. */
static void
mark_close (Sim *s, Thread *t, double now, guint64 cap_t, GpuFront *front)
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
  sample_add (&m->own, pred - (t->waited_ns - t->mark_waited));
  gpu_sample_add (&m->gpu, MARK_SAMPLES, t->mark_front, front);
  t->mark = NULL;
  gpu_front_unref (s, g_steal_pointer (&t->mark_front));
}

/* T's open marks are dropped (never ended). */
static void
marks_drop (Sim *s, Thread *t)
{
  for (guint k = t->open_first; k < t->open_marks->len; k++)
    gpu_front_unref (s, g_array_index (t->open_marks, OpenMark, k).front);
  g_array_set_size (t->open_marks, 0);
  t->open_first = 0;
}

/* Closes the innermost mark of T named NAME[0..LEN) as a range ending at
 * NOW, reached by thread CLOSER; FALSE when T has none open. */
static gboolean
mark_end (Sim *s, Thread *t, Thread *closer, const char *name, gsize len, double now, guint64 cap_t, GpuFront *front)
{
  if (t->open_marks == NULL)
    return FALSE;
  for (guint i = t->open_marks->len; i-- > t->open_first;)
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
      sample_add (&m->range_own, pred - (t->waited_ns - o->waited));
      gpu_sample_add (&m->range_gpu, MARK_SAMPLES, o->front, front);
      gpu_front_unref (s, o->front);
      if (G_UNLIKELY (s->out.timeline))
        {
          /* A slice on its thread's track when it nests there: ended by
           * its own thread (CLOSER), no older range ended inside it. Then
           * the ranges opened inside it and still open no longer nest. */
          gboolean nested = closer == t && !o->crossed;
          timeline_range (s, t, m->name, o->t, now, nested);
          for (guint k = i + 1; nested && k < t->open_marks->len; k++)
            g_array_index (t->open_marks, OpenMark, k).crossed = TRUE;
        }
      g_array_remove_index (t->open_marks, i);
      return TRUE;
    }
  return FALSE;
}

/* An NVTX start/end range may end on another thread than the one that
 * started it: the most recent thread, in creation order, holding it. */
static gboolean
mark_end_elsewhere (Sim *s, Thread *t, const char *name, gsize len, double now, guint64 cap_t, GpuFront *front)
{
  for (guint i = s->host.thread_list->len; i-- > 0;)
    {
      Thread *o = s->host.thread_list->pdata[i];
      if (o != t && mark_end (s, o, t, name, len, now, cap_t, front))
        return TRUE;
    }
  return FALSE;
}

/* T reached mark NAME at NOW (its capture time CAP_T). */
static void
marks_reached (Sim *s, Thread *t, const char *name, double now, guint64 cap_t)
{
  GpuFront *front = gpu_front_now (s);
  mark_close (s, t, now, cap_t, front);
  gsize len = strlen (name);
  if (len > 4 && strcmp (name + len - 4, "/end") == 0
      && (mark_end (s, t, t, name, len - 4, now, cap_t, front)
          || mark_end_elsewhere (s, t, name, len - 4, now, cap_t, front)))
    {
      gpu_front_unref (s, front);
      return;
    }
  /* A point, or the start of a range: an /end closing nothing is a point
   * of its own name, as before ranges. */
  MarkStat *m = mark_stat (s, name);
  m->count++;
  sample_mark (s, t->tid, m->name, now, cap_t);
  t->mark = m;
  t->mark_front = gpu_front_ref (front);
  t->mark_waited = t->waited_ns;
  t->mark_t = now;
  t->mark_t_cap = cap_t;
  if (t->open_marks == NULL)
    t->open_marks = g_array_new (FALSE, FALSE, sizeof (OpenMark));
  if (t->open_marks->len - t->open_first == MARK_OPEN_MAX)
    {
      /* The oldest goes: skipped, and the skipped ones removed once a
       * MARK_OPEN_MAX of them have gone (one move of the array, not one
       * per mark: a trace of points fills it and then drops at every
       * mark). */
      OpenMark *old = &g_array_index (t->open_marks, OpenMark, t->open_first);
      if (G_UNLIKELY (s->out.timeline))
        timeline_point (s, t, old->m->name, old->t);   /* never ended: a point */
      gpu_front_unref (s, old->front);
      if (++t->open_first == MARK_OPEN_MAX)
        {
          g_array_remove_range (t->open_marks, 0, t->open_first);
          t->open_first = 0;
        }
    }
  OpenMark o = { m, now, cap_t, front, t->waited_ns, FALSE };   /* takes the reference */
  g_array_append_val (t->open_marks, o);
}

/* T has no more events: its point mark ends with its last call; ranges
 * still open never ended. */
static void
marks_thread_end (Sim *s, Thread *t)
{
  if (t->mark)
    {
      GpuFront *front = gpu_front_now (s);
      mark_close (s, t, t->f_prev, t->issued_t + t->issued_h, front);
      gpu_front_unref (s, front);
    }
  if (t->open_marks)
    {
      /* Marks no /end closed: points on the timeline. */
      if (G_UNLIKELY (s->out.timeline))
        for (guint k = t->open_first; k < t->open_marks->len; k++)
          {
            const OpenMark *o = &g_array_index (t->open_marks, OpenMark, k);
            timeline_point (s, t, o->m->name, o->t);
          }
      marks_drop (s, t);
    }
}

/* Sorts V[0..N) ascending with the steps of glibc's qsort (the merge
 * sort of its msort.c: halves of n / 2 and the rest, ties taken from the
 * left, so stable and the same order for every input), with the
 * comparison inline instead of a call per step through a pointer (the
 * report's sorts took 7 instructions an event of a 1M-event trace).
 * TMP holds N. */
static void
sort_doubles_rec (double *v, guint n, double *tmp)
{
  if (n <= 1)
    return;
  guint n1 = n / 2, n2 = n - n1;
  double *b1 = v, *b2 = v + n1, *t = tmp;
  sort_doubles_rec (b1, n1, tmp);
  sort_doubles_rec (b2, n2, tmp);
  while (n1 > 0 && n2 > 0)
    {
      /* The comparison qsort was given, (x > y) - (x < y) <= 0: !(x > y). */
      if (!(*b1 > *b2))
        *t++ = *b1++, n1--;
      else
        *t++ = *b2++, n2--;
    }
  if (n1 > 0)
    memcpy (t, b1, n1 * sizeof (double));
  memcpy (v, tmp, (n - n2) * sizeof (double));
}

static void
sort_doubles (double *v, guint n)
{
  g_autofree double *tmp = g_new (double, MAX (n, 1));
  sort_doubles_rec (v, n, tmp);
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
  /* CAP NULL: no captured figures (the GPU's steps). */
  double cfirst = cap ? g_array_index (cap, double, 0) : out->first;
  g_autofree double *v = g_memdup2 (pred->data, n * sizeof (double));
  g_autofree double *c = cap ? g_memdup2 (cap->data, n * sizeof (double)) : NULL;
  sort_doubles (v, n);
  if (c == NULL)
    c = g_memdup2 (v, n * sizeof (double));
  else
    sort_doubles (c, n);
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

/* The k-th smallest of V[0..N) (reorders V): Hoare's selection. */
static double
select_kth (double *v, guint n, guint k)
{
  guint lo = 0, hi = n - 1;
  while (lo < hi)
    {
      double pivot = v[lo + (hi - lo) / 2];
      guint i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              double x = v[i];
              v[i] = v[j];
              v[j] = x;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        return v[k];
    }
  return v[k];
}

/* The steady median of A's samples (all but the first when three or
 * more, as spread_of's steady_median) without sorting: the report needs
 * only this of the host's own time and the GPU's busy time. */
static double
steady_median_of (const GArray *a)
{
  if (a == NULL || a->len == 0)
    return 0;
  guint skip = a->len >= 3 ? 1 : 0, n = a->len - skip;
  g_autofree double *v = g_memdup2 ((const double *) a->data + skip, n * sizeof (double));
  if (n % 2)
    return select_kth (v, n, n / 2);
  double hi = select_kth (v, n, n / 2);
  double lo = v[0];
  for (guint i = 1; i < n / 2; i++)   /* after the selection, v[0..n/2) holds the smaller half */
    lo = MAX (lo, v[i]);
  return (lo + hi) / 2;
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

/* steady_state, from mark M: the host's steps (its thread's times between
 * the marks) and the GPU's (out/gpu-steps.part.c), each its median after
 * the first (warm-up), and the step of the end that bounds it: a host
 * that runs ahead of its GPU still waits for it at the next sync or full
 * launch queue, and a GPU that finishes early waits for the host's next
 * launch (docs/model.md 12). Ties go to the host. The captured step is
 * the host's: at capture the host was held back by the real GPU, so its
 * marks timed the steps the user saw. */
static void
report_steady (Sim *s, cJSON *r, const MarkStat *m)
{
  gboolean range = m->ranges > 0;
  Spread host, gpu;
  spread_of (range ? m->range_pred : m->pred, range ? m->range_cap : m->cap, &host);
  g_autoptr (GArray) spans = NULL;
  g_autoptr (GArray) gbusy = NULL;
  gpu_samples (range ? m->range_gpu : m->gpu, &spans, &gbusy);
  spread_of (spans, NULL, &gpu);
  struct { double steady_median; } own = { steady_median_of (range ? m->range_own : m->own) },
                                   busy = { steady_median_of (gbusy) };
  /* A GPU step is known for every host step unless the replay stopped
   * with work in flight (an OOM): then its figures are the host's. */
  gboolean have_gpu = gpu.n == host.n;
  /* What bounds the step is the end with more work in it: the GPU's busy
   * time against the host's own time (its step less its time waiting:
   * blocked, or held for other threads' calls). A host held back by a full
   * launch queue has steps as long as the GPU's but little work of its
   * own in them; a GPU that waits for launches has its steps as long as
   * the host's but idle in them. The step is the bounding end's. */
  gboolean gpu_bound = have_gpu && busy.steady_median > own.steady_median;
  const Spread *b = gpu_bound ? &gpu : &host;
  cJSON *st = cJSON_AddObjectToObject (r, "steady_state");
  cJSON_AddStringToObject (st, "mark", m->name);
  cJSON_AddNumberToObject (st, "steps", host.n);
  add_ns (st, "first_step_ns", b->first);
  add_ns (st, "step_median_ns", b->steady_median);
  add_ns (st, "step_min_ns", b->steady_min);
  add_ns (st, "step_max_ns", b->steady_max);
  cJSON_AddStringToObject (st, "step_bound", gpu_bound ? "gpu" : "host");
  add_ns (st, "host_step_median_ns", host.steady_median);
  add_ns (st, "host_busy_step_median_ns", own.steady_median);
  if (have_gpu)
    {
      add_ns (st, "gpu_step_median_ns", gpu.steady_median);
      add_ns (st, "gpu_busy_step_median_ns", busy.steady_median);
    }
  else
    {
      cJSON_AddNullToObject (st, "gpu_step_median_ns");
      cJSON_AddNullToObject (st, "gpu_busy_step_median_ns");
    }
  add_ns (st, "captured_step_median_ns", host.cap_steady_median);
  cJSON_AddNumberToObject (st, "step_slowdown",
                           host.cap_steady_median > 0 ? round (b->steady_median) / round (host.cap_steady_median) : 0);
  cJSON_AddBoolToObject (st, "warmup_excluded", host.n >= 3);
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
    report_steady (s, r, best);
  g_ptr_array_free (ms, TRUE);
}

/* warnings[]: what the user must know about the answer. */
static void
report_warnings (Sim *s, cJSON *r, double makespan, gboolean oom_row)
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
  /* The GPU idle most of the window: the time is the host's. Not for a
   * run that stopped at an out-of-memory: its time is to the stop, and
   * the row says oom. */
  double busy = s->stats.gpu_busy_ns;
  if (makespan > 0 && busy < 0.1 * makespan && !oom_row)
    {
      g_autofree char *b = units_format_time (busy);
      g_autofree char *m = units_format_time (makespan);
      g_autofree char *msg = g_strdup_printf ("the GPU is idle %.2f %% of the predicted time (%s of GPU work in %s): "
                                              "the time is the host's, and a slowdown near 1 says little about the GPU",
                                              100 * (1 - busy / makespan), b, m);
      cJSON_AddItemToArray (w, cJSON_CreateString (msg));
    }
  /* No capture config (an import whose GPU the profiler did not name,
   * and none given): the target stands in for it, so the GPU's times are
   * the captured ones by construction. */
  if (s->core.cap_assumed && s->stats.n_events > 0)
    {
      /* The same words for every target, so that fit and sweep say it once. */
      cJSON_AddItemToArray (w, cJSON_CreateString (
        "no capture config: the trace does not name the machine it ran on, so the target is taken as that machine "
        "and the GPU's times replay as captured (a slowdown near 1 by construction); give the machine with "
        "--capture-config"));
    }
  /* A unified machine (Jetson): one pool that the OS, the CUDA libraries
   * and the CPU side of the program share with the GPU, none of which the
   * trace records. Said when the preset reserves nothing for them and the
   * program fits with less than a quarter of the pool or 4 GiB left,
   * whichever is less (an OS and a PyTorch process take gigabytes): a
   * "yes" with no room left for them would mislead. */
  const VsConfig *cfg = s->core.cfg;
  guint64 cap = s->mem.loc_cap[LOC_DEVICE];
  if (cfg->unified && cfg->memory.reserved == 0 && s->mem.dem_known && s->mem.dem_peak <= cap
      && cap - s->mem.dem_peak < MIN (cfg->memory.capacity / 4, (guint64) 4 << 30))
    {
      g_autofree char *pool = units_format_bytes (cfg->memory.capacity);
      g_autofree char *dem = units_format_bytes (s->mem.dem_peak);
      g_autofree char *left = units_format_bytes (cap - s->mem.dem_peak);
      g_autofree char *msg = g_strdup_printf (
        "unified memory: on %s the OS, the CUDA libraries and the CPU side of the program share the %s pool with the "
        "GPU and are not in the trace; the preset reserves nothing for them (memory.reserved = 0 B), so the "
        "program's demand (%s at its peak) leaves them %s. Set memory.reserved to what they take on your system",
        cfg->name ? cfg->name : "this config", pool, dem, left);
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
