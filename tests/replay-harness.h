/* replay-harness.h — what the engine tests share: a machine config from
 * JSON text edited by --set assignments, and a replay of JSONL events
 * written to a temporary trace. Each test binary includes it once; every
 * step asserts it worked, so a test reads as its numbers. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/config.h"
#include "engine/replay.h"

/* (transfer full) JSON compiled after SETS (NULL-terminated, may be NULL). */
static inline VsConfig *
harness_config (const char *json, const char *const *sets)
{
  g_autoptr (GError) error = NULL;
  cJSON *root = cJSON_Parse (json);
  g_assert_nonnull (root);
  for (guint i = 0; sets && sets[i]; i++)
    {
      gboolean ok = config_set (root, sets[i], "test", &error);
      g_assert_no_error (error);
      g_assert_true (ok);
    }
  VsConfig *c = config_compile (root, "test", &error);
  g_assert_no_error (error);
  cJSON_Delete (root);
  return c;
}

/* (transfer full) The report of HEADER (the trace's first line) and BODY
 * (events, one per line) replayed on TARGET, captured on CAPTURE; OPTS may
 * be NULL. */
static inline cJSON *
harness_replay (const char *header, const char *body, const VsConfig *target, const VsConfig *capture,
                const VsReplayOptions *opts)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("vramsim-test-XXXXXX.jsonl", &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_autofree char *text = g_strconcat (header, "\n", body, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  g_autoptr (VsTraceReader) r = trace_open (path, &error);
  g_assert_no_error (error);
  VsReplayOptions none = { 0 };
  cJSON *report = replay_run (r, target, capture, opts ? opts : &none, &error);
  g_assert_no_error (error);
  g_assert_nonnull (report);
  g_unlink (path);
  return report;
}

/* The report's value at PATH ("memory.tiers.0.capacity": names, and
 * indices into arrays); a path that is not there fails the test. */
static inline const cJSON *
harness_at (const cJSON *o, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  for (guint i = 0; parts[i] && o; i++)
    o = cJSON_IsArray (o) ? cJSON_GetArrayItem (o, atoi (parts[i])) : cJSON_GetObjectItemCaseSensitive (o, parts[i]);
  if (o == NULL)
    g_error ("no %s in the report", path);
  return o;
}

static inline double
harness_num (const cJSON *r, const char *path)
{
  return harness_at (r, path)->valuedouble;
}

static inline const char *
harness_str (const cJSON *r, const char *path)
{
  return harness_at (r, path)->valuestring;
}

/* Whether one of the report's warnings starts with PREFIX. */
static inline gboolean
harness_warned (const cJSON *r, const char *prefix)
{
  const cJSON *w;
  cJSON_ArrayForEach (w, harness_at (r, "warnings"))
    if (cJSON_IsString (w) && g_str_has_prefix (w->valuestring, prefix))
      return TRUE;
  return FALSE;
}
