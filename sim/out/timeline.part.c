/* timeline.part.c — the --timeline observer: Chrome-trace JSON events of
 * ops, host calls, marks and residency.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
tl_event (Sim *s, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
tl_event (Sim *s, const char *fmt, ...)
{
  if (s->out.timeline == NULL)
    return;
  va_list ap;
  fputs (s->out.timeline_first ? "\n" : ",\n", s->out.timeline);
  s->out.timeline_first = FALSE;
  va_start (ap, fmt);
  vfprintf (s->out.timeline, fmt, ap);
  va_end (ap);
}

/* Times: every slice's start and end are rounded to integer ns first and
 * both written from those integers (us with three decimals, exact), so a
 * slice that ends where the next one on its track starts never overlaps
 * it by a rounding nanosecond, as ts and dur rounded separately did. */
static guint64
tl_ns (const Sim *s, double t)
{
  double d = t - s->core.t0;
  return d > 0 ? (guint64) llround (d) : 0;
}

/* "us.fff" of NS nanoseconds, into BUF (24 bytes). */
static const char *
tl_us (char *buf, guint64 ns)
{
  g_snprintf (buf, 24, "%" G_GUINT64_FORMAT ".%03u", ns / 1000, (guint) (ns % 1000));
  return buf;
}

/* Thread T's track in the host process: its name and place, once. */
static void
tl_thread (Sim *s, Thread *t)
{
  if (t->tl_named)
    return;
  t->tl_named = TRUE;
  tl_event (s, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%u,\"args\":{\"name\":\"host thread %u\"}}",
            t->tid, t->tid);
  tl_event (s, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":2,\"tid\":%u,\"args\":{\"sort_index\":%u}}",
            t->tid, s->out.timeline_threads++);
}

/* The observers: the engine calls each behind one unlikely branch on
 * s->out.timeline. Every name written is either fixed text, a number, a
 * tier name (letters, digits, '_' and '-': config-checks.c checks) or escaped
 * with jsonw_quote. */

/* Location LOC now holds VALUE bytes: a counter event. */
static __attribute__ ((noinline, cold)) void
timeline_resident (Sim *s, int loc, guint64 value)
{
  char ts[24];
  tl_event (s, "{\"name\":\"resident %s\",\"ph\":\"C\",\"pid\":1,\"ts\":%s,\"args\":{\"GiB\":%.6f}}",
            loc_name (s, loc), tl_us (ts, tl_ns (s, s->core.now)), value / 1073741824.0);
}

/* The allocator's allocated and reserved bytes: one counter track. */
static __attribute__ ((noinline, cold)) void
timeline_allocator (Sim *s, guint64 allocated, guint64 reserved)
{
  tl_event (s, "{\"name\":\"allocator\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,"
            "\"args\":{\"allocated GiB\":%.6f,\"reserved GiB\":%.6f}}",
            (s->core.now - s->core.t0) / 1e3, allocated / 1073741824.0, reserved / 1073741824.0);
}

/* T's blocking call, issued at t->s_cur, returns at F. */
static __attribute__ ((noinline, cold)) void
timeline_host_wait (Sim *s, Thread *t, double f)
{
  guint64 a = tl_ns (s, t->s_cur), b = tl_ns (s, f);
  if (b <= a)
    return;
  tl_thread (s, t);
  char ts[24], dur[24];
  tl_event (s, "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%s,\"dur\":%s}",
            event_op_name (t->issued_op), t->tid, tl_us (ts, a), tl_us (dur, b - a));
}

/* A new stream ID: its row in the predicted and the captured GPU. */
static __attribute__ ((noinline, cold)) void
timeline_stream (Sim *s, guint64 id)
{
  /* Streams in the order they first appear, in both GPU processes. */
  guint order = s->out.timeline_streams++;
  for (int pid = 1; pid <= 3; pid += 2)
    {
      tl_event (s, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
                ",\"args\":{\"name\":\"stream %" G_GUINT64_FORMAT "\"}}", pid, id, id);
      tl_event (s, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
                ",\"args\":{\"sort_index\":%u}}", pid, id, order);
    }
}

/* The captured op of event EV on stream ST, beside the predicted one: a
 * trace has each op's GPU duration but not its GPU start, estimated as
 * the later of its host call and the end of the stream's previous op. */
static __attribute__ ((noinline, cold)) void
timeline_captured (Sim *s, Stream *st, const VsEvent *ev)
{
  if (ev->dur == VS_NONE || ev->op == VS_OP_FREE)
    return;
  guint64 start = MAX (ev->t, st->cap_end);
  st->cap_end = start + ev->dur;
  char *nm = ev->op == VS_OP_KERNEL ? jsonw_quote (ev->name ? ev->name : "kernel")
    : ev->op == VS_OP_COPY ? g_strdup_printf ("\"copy %s\"", event_dir_name (ev->dir))
    : g_strdup_printf ("\"%s\"", event_op_name (ev->op));
  char ts[24], dur[24];
  guint64 a = tl_ns (s, (double) start);
  tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":3,\"tid\":%" G_GUINT64_FORMAT
            ",\"ts\":%s,\"dur\":%s,\"args\":{\"event\":%" G_GUINT64_FORMAT "}}",
            nm, st->id, tl_us (ts, a), tl_us (dur, ev->dur), ev->index);
  g_free (nm);
}

/* OP completed at END: the predicted op, with its stalls. */
static __attribute__ ((noinline, cold)) void
timeline_op (Sim *s, const Op *op, double end)
{
  if (op->type == VS_OP_EVENT_RECORD || op->type == VS_OP_STREAM_WAIT)
    return;
  char *nm;
  if (op->type == VS_OP_KERNEL)
    nm = jsonw_quote (op->name ? op->name : "kernel");
  else if (op->type == VS_OP_COPY)
    nm = g_strdup_printf ("\"copy %s\"", event_dir_name (op->dir));
  else
    nm = g_strdup_printf ("\"%s\"", event_op_name (op->type));
  char ts[24], dur[24];
  guint64 a = tl_ns (s, op->ready_t), b = tl_ns (s, end);
  tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":1,\"tid\":%" G_GUINT64_FORMAT
            ",\"ts\":%s,\"dur\":%s,\"args\":{\"event\":%" G_GUINT64_FORMAT
            ",\"bytes\":%" G_GUINT64_FORMAT ",\"alone_ns\":%.0f,\"swap_ns\":%.0f,\"fault_ns\":%.0f,\"copy_engine_ns\":%.0f}}",
            nm, op->st->id, tl_us (ts, a), tl_us (dur, b > a ? b - a : 0), op->index,
            op->bytes == VS_NONE ? 0 : op->bytes, op->alone_ns, op->swap_ns, op->fault_ns, op->ce_ns);
  g_free (nm);
}

/* Marks: a range (an NVTX or profiler range, NAME to NAME/end) is a
 * slice on the track of the thread that opened it, written when its end
 * comes; a mark no /end closed is a point (an instant), written when it
 * can no longer be closed (its thread ended, or the replay did). */

/* Thread T's mark NAME reached at START, never closed. */
static __attribute__ ((noinline, cold)) void
timeline_point (Sim *s, Thread *t, const char *name, double start)
{
  tl_thread (s, t);
  char *nm = jsonw_quote (name);
  char ts[24];
  tl_event (s, "{\"name\":%s,\"ph\":\"i\",\"s\":\"t\",\"pid\":2,\"tid\":%u,\"ts\":%s}",
            nm, t->tid, tl_us (ts, tl_ns (s, start)));
  g_free (nm);
}

/* Thread T's range NAME, from START to END: a slice on T's track when it
 * NESTED there (ended by T, inside every range of T around it), else an
 * async slice of its own (an NVTX start/end range ended on another thread,
 * or one that overlaps another part way: Perfetto draws those on tracks of
 * their own, where a plain slice would break its track's nesting). */
static __attribute__ ((noinline, cold)) void
timeline_range (Sim *s, Thread *t, const char *name, double start, double end, gboolean nested)
{
  tl_thread (s, t);
  char *nm = jsonw_quote (name);
  char ts[24], dur[24];
  guint64 a = tl_ns (s, start), b = tl_ns (s, end);
  if (b < a)
    b = a;
  if (nested)
    tl_event (s, "{\"name\":%s,\"cat\":\"range\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%s,\"dur\":%s}",
              nm, t->tid, tl_us (ts, a), tl_us (dur, b - a));
  else
    {
      guint64 id = ++s->out.timeline_async;
      tl_event (s, "{\"name\":%s,\"cat\":\"range\",\"ph\":\"b\",\"id\":%" G_GUINT64_FORMAT
                ",\"pid\":2,\"tid\":%u,\"ts\":%s}", nm, id, t->tid, tl_us (ts, a));
      tl_event (s, "{\"name\":%s,\"cat\":\"range\",\"ph\":\"e\",\"id\":%" G_GUINT64_FORMAT
                ",\"pid\":2,\"tid\":%u,\"ts\":%s}", nm, id, t->tid, tl_us (ts, b));
    }
  g_free (nm);
}

/* The replay is over: the marks still open are points. */
static void
timeline_open_marks (Sim *s)
{
  for (guint i = 0; i < s->host.thread_list->len; i++)
    {
      Thread *t = s->host.thread_list->pdata[i];
      for (guint k = t->open_first; t->open_marks && k < t->open_marks->len; k++)
        {
          const OpenMark *o = &g_array_index (t->open_marks, OpenMark, k);
          timeline_point (s, t, o->m->name, o->t);
        }
    }
}

/* An allocation failed (the first out-of-memory: report_oom): an instant
 * on the track of the thread that asked, scoped to the whole timeline so
 * that it shows over every track. */
static __attribute__ ((noinline, cold)) void
timeline_oom (Sim *s, const VsEvent *ev, int loc)
{
  Thread *t = thread_get (s, ev->tid);
  tl_thread (s, t);
  char ts[24];
  tl_event (s, "{\"name\":\"out of memory\",\"cat\":\"oom\",\"ph\":\"i\",\"s\":\"g\",\"pid\":2,\"tid\":%u,"
            "\"ts\":%s,\"args\":{\"event\":%" G_GUINT64_FORMAT ",\"alloc_id\":%" G_GUINT64_FORMAT
            ",\"requested\":%" G_GUINT64_FORMAT ",\"in_use\":%" G_GUINT64_FORMAT ",\"capacity\":%" G_GUINT64_FORMAT
            ",\"memory\":\"%s\"}}",
            t->tid, tl_us (ts, tl_ns (s, s->core.now)), ev->index, ev->id, ev->bytes, s->mem.loc_used[loc],
            s->mem.loc_cap[loc], loc_name (s, loc));
}

static gboolean
timeline_open (Sim *s, const char *path, GError **error)
{
  /* base/outfile.h: a temporary beside PATH (removed on error and on
   * SIGINT/SIGTERM/SIGHUP), or PATH itself for a device or FIFO. */
  s->out.timeline_file = outfile_open (path, "--timeline", error);
  if (s->out.timeline_file == NULL)
    return FALSE;
  s->out.timeline = outfile_stream (s->out.timeline_file);
  if (s->out.timeline == NULL)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, "--timeline %s: cannot write", path);
      outfile_abort (g_steal_pointer (&s->out.timeline_file));
      return FALSE;
    }
  fputs ("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", s->out.timeline);
  s->out.timeline_first = TRUE;
  g_autofree char *gpu = g_strdup_printf ("GPU (predicted, %s)", s->core.cfg->name ? s->core.cfg->name : "");
  char *cfg = jsonw_quote (gpu);   /* the config's name, escaped */
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":%s}}", cfg);
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"host threads\"}}");
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"GPU (captured, start estimated)\"}}");
  /* Predicted GPU, then the host threads, then the captured GPU. */
  for (int pid = 1; pid <= 3; pid++)
    tl_event (s, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}}", pid, pid);
  g_free (cfg);
  return TRUE;
}

static gboolean
timeline_close (Sim *s, const char *path, gboolean ok, GError **error)
{
  if (s->out.timeline == NULL)
    return ok;
  if (ok)
    timeline_open_marks (s);
  VsOutFile *out = g_steal_pointer (&s->out.timeline_file);
  s->out.timeline = NULL;
  if (!ok)
    {
      outfile_abort (out);
      return FALSE;
    }
  outfile_write (out, "\n]}\n", 4, NULL);   /* a failure is reported by the commit */
  return outfile_commit (out, error);
}
