/* fuzz-tensor.c — libFuzzer harness for the tensor merge (merge-tensor.h):
 * the input's sections (fuzz-sections.h) are a PyTorch memory snapshot, a
 * vramcap trace (JSONL) and its address sidecar; the merge writes a scratch
 * trace, which is read back and validated. */
#include "fuzz-common.h"
#include "fuzz-sections.h"
#include "import/merge-tensor.h"
#include "trace/trace.h"

static char *snap_path, *trace_path, *addrs_path, *out_path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  snap_path = fuzz_scratch_path (".pickle");
  trace_path = fuzz_scratch_path (".jsonl");
  addrs_path = fuzz_scratch_path (".jsonl.addrs");
  out_path = fuzz_scratch_path ("-out.jsonl");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const uint8_t *part[3];
  size_t len[3];
  if (fuzz_sections (data, size, part, len, 3) != 3)
    return -1;  /* not a useful input: keep it out of the corpus */
  fuzz_write_file (snap_path, part[0], len[0]);
  fuzz_write_file (trace_path, part[1], len[1]);
  fuzz_write_file (addrs_path, part[2], len[2]);
  GError *error = NULL;
  VsMergeStats st;
  gboolean ok = merge_tensor (snap_path, -1, trace_path, addrs_path, out_path, &st, &error);
  fuzz_check_import (ok, error, out_path);
  g_clear_error (&error);
  unlink (out_path);
  unlink (snap_path);
  unlink (trace_path);
  unlink (addrs_path);
  return 0;
}
