/* replay-harness.h — what the engine tests share: a machine config from
 * JSON text edited by --set assignments, and a replay of JSONL events
 * written to a temporary trace. Each test binary includes it once; every
 * step asserts it worked, so a test reads as its numbers. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
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
