/* fuzz-pickle.c — libFuzzer harness for the plain-data unpickler and the
 * PyTorch memory snapshot importer: the input is parsed in memory
 * (pickle_parse), then, written to a file, imported with import_snapshot()
 * into a scratch .jsonl trace, which is read back and validated (an
 * importer must only write traces the readers accept). */
#include "fuzz-common.h"
#include "import/import.h"
#include "import/pickle.h"
#include "trace/trace.h"

static char *in_path, *out_path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  in_path = fuzz_scratch_path (".pickle");
  out_path = fuzz_scratch_path ("-out.jsonl");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  PkDoc *doc = pickle_parse (data, size, "fuzz.pickle", &error);
  if (doc == NULL && error == NULL)
    abort ();
  g_clear_error (&error);
  if (doc == NULL)
    return 0;
  pickle_free (doc);
  fuzz_write_file (in_path, data, size);
  gboolean ok = import_snapshot (in_path, out_path, -1, &error);
  fuzz_check_import (ok, error, out_path);
  g_clear_error (&error);
  unlink (out_path);
  unlink (in_path);
  return 0;
}
