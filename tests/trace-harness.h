/* trace-harness.h — what the trace tests share: a scratch folder, a
 * conversion through the library as `vramsim convert` does it, a
 * kernel's access lists. Each test binary includes it once; every step
 * asserts it worked. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

#include "trace/trace.h"

/* The scratch folder (harness_tmpdir_make in main, harness_tmpdir_remove
 * after the tests) and a path in it (transfer full). */
static char *tmpdir;

static inline char *
tmp_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static inline void
harness_tmpdir_make (const char *template_)
{
  tmpdir = g_dir_make_tmp (template_, NULL);
  g_assert_nonnull (tmpdir);
}

/* Removes the scratch folder and the files in it. */
static inline void
harness_tmpdir_remove (void)
{
  GDir *dir = g_dir_open (tmpdir, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *p = tmp_path (name);
      g_unlink (p);
    }
  if (dir)
    g_dir_close (dir);
  g_rmdir (tmpdir);
  g_clear_pointer (&tmpdir, g_free);
}

/* Converts IN to OUT (format from OUT's name). */
static inline void
convert (const char *in, const char *out)
{
  GError *error = NULL;
  g_autoptr (VsTraceReader) r = trace_open (in, &error);
  g_assert_no_error (error);
  VsTraceWriter *w = trace_writer_new (out, VS_FORMAT_AUTO, trace_reader_header (r), &error);
  g_assert_no_error (error);
  VsEvent ev;
  while (trace_next (r, &ev, &error))
    g_assert_true (trace_writer_write (w, &ev, &error));
  g_assert_no_error (error);
  g_assert_true (trace_writer_finish (w, &error));
  g_assert_no_error (error);
}

/* Appends a kernel's "reads", "writes" and "touches" lists of NR, NW and
 * NT ids to S: ids at or below ID, up to 19 back (j·7 mod 20), repeats
 * allowed. */
static inline void
append_access_lists (GString *s, guint nr, guint nw, guint nt, guint64 id)
{
  const char *lists[] = { "reads", "writes", "touches" };
  guint ns[] = { nr, nw, nt };
  for (int l = 0; l < 3; l++)
    if (ns[l] > 0)
      {
        g_string_append_printf (s, ", \"%s\": [", lists[l]);
        for (guint j = 0; j < ns[l]; j++)
          g_string_append_printf (s, "%s%" G_GUINT64_FORMAT, j ? ", " : "", id - MIN (id - 1, (guint64) j * 7 % 20));
        g_string_append (s, "]");
      }
}
