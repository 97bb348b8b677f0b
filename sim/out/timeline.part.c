/* timeline.part.c — the --timeline observer: Chrome-trace JSON events of ops, host calls, marks and residency.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit, so the hot paths inline across parts; not compiled
 * alone). */
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
  char *cfg = json_str (s->core.cfg->name);
  tl_event (s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"GPU (predicted, %s)\"}}",
            s->core.cfg->name ? s->core.cfg->name : "");
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
