/* fuzz-replay.c — libFuzzer harness for the replay engine behind the
 * readers: the input is a JSONL (or binary) trace, replayed on a small
 * machine (the a100-80g-cxl preset with 1 GiB of device memory) under
 * each oversubscription policy in turn: oom with --keep-going, spill,
 * direct, uvm. Bad traces must fail with a GError, good ones must give a
 * report. tests/fuzz-regress.sh replays regress inputs the same way. */
#include "fuzz-common.h"
#include "engine/replay.h"

static char *path;
static VsConfig *configs[4];
static const char *const policies[4] = { "oom", "spill", "direct", "uvm" };

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  path = fuzz_scratch_path (".jsonl");
  for (int i = 0; i < 4; i++)
    {
      g_autofree char *pol = g_strdup_printf ("policy.oversubscription=%s", policies[i]);
      const char *sets[] = { "memory.capacity=1GiB", pol, NULL };
      GError *error = NULL;
      configs[i] = config_load ("a100-80g-cxl", sets, &error);
      if (configs[i] == NULL)
        {
          fprintf (stderr, "fuzz-replay: %s (set VRAMSIM_SRC to the source tree)\n", error->message);
          exit (2);
        }
    }
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_write_file (path, data, size);
  for (int i = 0; i < 4; i++)
    {
      GError *error = NULL;
      VsTraceReader *r = trace_open (path, &error);
      if (r == NULL)
        {
          g_clear_error (&error);
          break;
        }
      VsReplayOptions opts = { .keep_going = i == 0, .trace_name = "fuzz" };
      cJSON *report = replay_run (r, configs[i], NULL, &opts, &error);
      if (report == NULL && error == NULL)
        abort ();
      if (report != NULL)
        {
          char *text = report_to_text (report);
          g_free (text);
          cJSON_Delete (report);
        }
      trace_close (r);
      if (error != NULL)
        {
          g_clear_error (&error);
          break;   /* a bad trace is bad under every policy */
        }
    }
  unlink (path);
  return 0;
}
