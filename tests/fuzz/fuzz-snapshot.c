/* fuzz-snapshot.c — libFuzzer harness for the snapshot importer's join of
 * part dumps (snapshot-parts.h): the input's
 * sections (fuzz-sections.h) are SNAP.part1, SNAP.part2, ..., the last one
 * SNAP; the parts are joined (snapshot_load_parts), then SNAP imported
 * (import_snapshot) and the trace read back and validated. */
#include "fuzz-common.h"
#include "fuzz-sections.h"
#include "import/import.h"
#include "import/snapshot-parts.h"
#include "trace/trace.h"

static char *snap_path, *out_path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  snap_path = fuzz_scratch_path (".pickle");
  out_path = fuzz_scratch_path ("-out.jsonl");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const uint8_t *part[4];
  size_t len[4];
  unsigned n = fuzz_sections (data, size, part, len, 4);
  for (unsigned i = 0; i + 1 < n; i++)
    {
      g_autofree char *p = g_strdup_printf ("%s.part%u", snap_path, i + 1);
      fuzz_write_file (p, part[i], len[i]);
    }
  fuzz_write_file (snap_path, part[n - 1], len[n - 1]);
  GError *error = NULL;
  VsSnapJoin j = { 0 };
  VsSnapshot *s = snapshot_load_parts (snap_path, -1, &j, &error);
  if (s == NULL && error == NULL)
    abort ();
  g_clear_error (&error);
  snapshot_join_clear (&j);
  if (s != NULL)
    snapshot_free (s);
  gboolean ok = import_snapshot (snap_path, out_path, -1, &error);
  fuzz_check_import (ok, error, out_path);
  g_clear_error (&error);
  unlink (out_path);
  unlink (snap_path);
  for (unsigned i = 0; i + 1 < n; i++)
    {
      g_autofree char *p = g_strdup_printf ("%s.part%u", snap_path, i + 1);
      unlink (p);
    }
  return 0;
}
