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

static char *
json_str (const char *str)
{
  cJSON *j = cJSON_CreateString (str ? str : "");
  char *out = cJSON_PrintUnformatted (j);
  cJSON_Delete (j);
  return out;
}

/* The observers: the engine calls each behind one unlikely branch on
 * s->out.timeline. Every name written is either fixed text, a number, a
 * tier name (letters, digits, '_' and '-': config.c checks) or escaped
 * with json_str. */

/* Location LOC now holds VALUE bytes: a counter event. */
static __attribute__ ((noinline, cold)) void
timeline_resident (Sim *s, int loc, guint64 value)
{
  tl_event (s, "{\"name\":\"resident %s\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"GiB\":%.6f}}",
            loc_name (s, loc), (s->core.now - s->core.t0) / 1e3, value / 1073741824.0);
}

/* T's blocking call, issued at t->s_cur, returns at F. */
static __attribute__ ((noinline, cold)) void
timeline_host_wait (Sim *s, Thread *t, double f)
{
  if (f > t->s_cur)
    tl_event (s, "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":2,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}",
              event_op_name (t->issued_op), t->tid, (t->s_cur - s->core.t0) / 1e3, (f - t->s_cur) / 1e3);
}

/* A new stream ID: its row in the predicted and the captured GPU. */
static __attribute__ ((noinline, cold)) void
timeline_stream (Sim *s, guint64 id)
{
  for (int pid = 1; pid <= 3; pid += 2)
    tl_event (s, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
              ",\"args\":{\"name\":\"stream %" G_GUINT64_FORMAT "\"}}", pid, id, id);
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
  char *nm = ev->op == VS_OP_KERNEL ? json_str (ev->name ? ev->name : "kernel")
    : ev->op == VS_OP_COPY ? g_strdup_printf ("\"copy %s\"", event_dir_name (ev->dir))
    : g_strdup_printf ("\"%s\"", event_op_name (ev->op));
  tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":3,\"tid\":%" G_GUINT64_FORMAT
            ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"event\":%" G_GUINT64_FORMAT "}}",
            nm, st->id, ((double) start - s->core.t0) / 1e3, ev->dur / 1e3, ev->index);
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
    nm = json_str (op->name ? op->name : "kernel");
  else if (op->type == VS_OP_COPY)
    nm = g_strdup_printf ("\"copy %s\"", event_dir_name (op->dir));
  else
    nm = g_strdup_printf ("\"%s\"", event_op_name (op->type));
  tl_event (s, "{\"name\":%s,\"ph\":\"X\",\"pid\":1,\"tid\":%" G_GUINT64_FORMAT
            ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"event\":%" G_GUINT64_FORMAT
            ",\"bytes\":%" G_GUINT64_FORMAT ",\"alone_ns\":%.0f,\"swap_ns\":%.0f,\"fault_ns\":%.0f,\"copy_engine_ns\":%.0f}}",
            nm, op->st->id, (op->ready_t - s->core.t0) / 1e3, (end - op->ready_t) / 1e3, op->index,
            op->bytes == VS_NONE ? 0 : op->bytes, op->alone_ns, op->swap_ns, op->fault_ns, op->ce_ns);
  g_free (nm);
}

/* Thread T reached mark NAME at NOW. */
static __attribute__ ((noinline, cold)) void
timeline_mark (Sim *s, const Thread *t, const char *name, double now)
{
  char *nm = json_str (name);
  tl_event (s, "{\"name\":%s,\"ph\":\"i\",\"s\":\"p\",\"pid\":2,\"tid\":%u,\"ts\":%.3f}",
            nm, t->tid, (now - s->core.t0) / 1e3);
  g_free (nm);
}

static gboolean
timeline_open (Sim *s, const char *path, GError **error)
{
  s->out.timeline_tmp = g_strdup_printf ("%s.tmp.%d", path, (int) getpid ());
  s->out.timeline = fopen (s->out.timeline_tmp, "w");
  if (s->out.timeline == NULL)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: cannot write: %s", path, g_strerror (e));
      g_clear_pointer (&s->out.timeline_tmp, g_free);
      return FALSE;
    }
  fputs ("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", s->out.timeline);
  s->out.timeline_first = TRUE;
  g_autofree char *gpu = g_strdup_printf ("GPU (predicted, %s)", s->core.cfg->name ? s->core.cfg->name : "");
  char *cfg = json_str (gpu);   /* the config's name, escaped */
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":%s}}", cfg);
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"host threads\"}}");
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"GPU (captured, start estimated)\"}}");
  g_free (cfg);
  return TRUE;
}

static gboolean
timeline_close (Sim *s, const char *path, gboolean ok, GError **error)
{
  if (s->out.timeline == NULL)
    return ok;
  fputs ("\n]}\n", s->out.timeline);
  gboolean wrote = fflush (s->out.timeline) == 0;
  wrote &= fclose (s->out.timeline) == 0;
  s->out.timeline = NULL;
  if (ok && !wrote)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write failed", path);
      ok = FALSE;
    }
  if (ok && g_rename (s->out.timeline_tmp, path) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
      ok = FALSE;
    }
  if (!ok)
    g_unlink (s->out.timeline_tmp);
  g_clear_pointer (&s->out.timeline_tmp, g_free);
  return ok;
}
