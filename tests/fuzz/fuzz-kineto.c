/* fuzz-kineto.c — libFuzzer harness for the PyTorch profiler (Kineto)
 * importer: the input is a chrome-trace JSON file, imported with
 * import_kineto() into a scratch .jsonl trace, which is then read back and
 * validated (an importer must only write traces the readers accept). */
#include "fuzz-common.h"
#include "import/import.h"
#include "trace/trace.h"

static char *in_path, *out_path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  in_path = fuzz_scratch_path (".json");
  out_path = fuzz_scratch_path ("-out.jsonl");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_write_file (in_path, data, size);
  GError *error = NULL;
  gboolean ok = import_kineto (in_path, out_path, &error);
  fuzz_check_import (ok, error, out_path);
  g_clear_error (&error);
  unlink (out_path);
  unlink (in_path);
  return 0;
}
