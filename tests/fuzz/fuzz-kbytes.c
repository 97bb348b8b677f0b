/* fuzz-kbytes.c — libFuzzer harness for `convert --kernel-bytes` tables:
 * the input is written to a scratch .csv file and read with
 * kernel_bytes_load() (an Nsight Compute CSV export or NAME,BYTES lines);
 * a table that loads is applied to a few kernel events. */
#include "fuzz-common.h"
#include "import/kernel-bytes.h"

static char *path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  path = fuzz_scratch_path (".csv");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_write_file (path, data, size);
  GError *error = NULL;
  VsKernelBytes *kb = kernel_bytes_load (path, &error);
  if (kb == NULL && error == NULL)
    abort ();
  if (kb != NULL)
    {
      static const char *const names[] = { "axpy(float, float const*, float*, unsigned long)", "axpy",
                                           "void at::k<4, float>(int, float*)", "", "<(>" };
      for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
        {
          VsEvent ev;
          event_init (&ev, VS_OP_KERNEL);
          ev.bytes = VS_NONE;
          ev.name = names[i];
          kernel_bytes_apply (kb, &ev);
        }
      kernel_bytes_free (kb);
    }
  g_clear_error (&error);
  return 0;
}
