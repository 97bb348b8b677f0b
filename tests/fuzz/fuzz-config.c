/* fuzz-config.c — libFuzzer harness for the config loader: the input is
 * zero or more lines "--set KEY=VALUE" followed by a config file's JSON.
 * The JSON is written to a scratch .json file and loaded with config_load()
 * (parse, `extends` against the presets, every --set, compile), as
 * `vramsim configs --show FILE --set ...` does; a compiled config is also
 * turned back into JSON (config_to_json) and compiled again. */
#include "fuzz-common.h"
#include "config/config.h"

static char *path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  path = fuzz_scratch_path (".json");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GPtrArray *sets = g_ptr_array_new_with_free_func (g_free);
  size_t off = 0;
  while (size - off >= 6 && memcmp (data + off, "--set ", 6) == 0)
    {
      const uint8_t *nl = memchr (data + off, '\n', size - off);
      size_t end = nl ? (size_t) (nl - data) : size;
      char *a = g_strndup ((const char *) data + off + 6, end - off - 6);
      g_ptr_array_add (sets, a);
      off = nl ? end + 1 : size;
    }
  g_ptr_array_add (sets, NULL);
  fuzz_write_file (path, data + off, size - off);

  GError *error = NULL;
  VsConfig *c = config_load (path, (const char *const *) sets->pdata, &error);
  if (c == NULL && error == NULL)
    abort ();
  if (c != NULL)
    {
      /* What --show prints must compile back to a config. */
      cJSON *j = config_to_json (c);
      GError *e2 = NULL;
      VsConfig *c2 = config_compile (j, "round-trip", &e2);
      if (c2 == NULL)
        {
          fprintf (stderr, "config_to_json output does not compile: %s\n", e2->message);
          abort ();
        }
      config_free (c2);
      cJSON_Delete (j);
      config_free (c);
    }
  g_clear_error (&error);
  g_ptr_array_unref (sets);
  unlink (path);
  return 0;
}
