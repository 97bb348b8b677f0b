/* config-presets.c — the preset folder (configs/, or $VRAMSIM_CONFIGS):
 * where it is, the presets it holds, a name or a path to its file, and the
 * check that a trace's recorded preset exists. */
#include "config/config-priv.h"
#include "base/suggest.h"

#include <string.h>

/* ---- preset folder ---- */

static char *
find_preset_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe != NULL)
    {
      /* <exe dir>/../configs: bin/vramsim in the source tree. Further up
       * (build/asan/bin/vramsim, build/asan/tests/ROOM/test-*) only where the folder
       * above also holds a Makefile, i.e. it is the source tree. */
      g_autofree char *dir = g_path_get_dirname (exe);
      for (int level = 0; level < 4; level++)
        {
          g_autofree char *up = g_build_filename (dir, "..", NULL);
          g_autofree char *canon = g_canonicalize_filename (up, NULL);
          g_autofree char *cand = g_build_filename (canon, "configs", NULL);
          g_autofree char *mk = g_build_filename (canon, "Makefile", NULL);
          if (g_file_test (cand, G_FILE_TEST_IS_DIR)
              && (level == 0 || g_file_test (mk, G_FILE_TEST_IS_REGULAR)))
            return g_steal_pointer (&cand);
          g_free (dir);
          dir = g_steal_pointer (&canon);
        }
      /* An installed tree, wherever it was installed: PREFIX/bin/vramsim
       * beside PREFIX/share/vramsim/configs. */
      g_autofree char *bindir = g_path_get_dirname (exe);
      g_autofree char *inst = g_build_filename (bindir, "..", "share", "vramsim", "configs", NULL);
      if (g_file_test (inst, G_FILE_TEST_IS_DIR))
        return g_canonicalize_filename (inst, NULL);
    }
  return g_strdup (VRAMSIM_PREFIX "/share/vramsim/configs");
}

const char *
config_preset_dir (void)
{
  static char *dir;
  const char *env = g_getenv ("VRAMSIM_CONFIGS");
  if (env != NULL && *env != '\0')
    return env;
  if (g_once_init_enter (&dir))
    g_once_init_leave (&dir, find_preset_dir ());
  return dir;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
config_list_presets (void)
{
  GPtrArray *names = g_ptr_array_new ();
  GDir *d = g_dir_open (config_preset_dir (), 0, NULL);
  if (d != NULL)
    {
      const char *e;
      while ((e = g_dir_read_name (d)) != NULL)
        if (g_str_has_suffix (e, ".json") && e[0] != '.' && strlen (e) > 5)
          g_ptr_array_add (names, g_strndup (e, strlen (e) - 5));
      g_dir_close (d);
    }
  g_ptr_array_sort (names, cmp_str);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

gboolean
cfg_is_preset_name (const char *s)
{
  return strchr (s, '/') == NULL && !g_str_has_suffix (s, ".json");
}

/* (transfer full) The file of preset NAME, or NULL with an error that lists
 * the presets there are. */
char *
cfg_preset_path (const char *name, GError **error)
{
  const char *dir = config_preset_dir ();
  g_autofree char *file = g_strconcat (name, ".json", NULL);
  char *path = g_build_filename (dir, file, NULL);
  if (*name != '\0' && g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return path;
  g_free (path);
  g_auto (GStrv) names = config_list_presets ();
  if (names[0] == NULL)
    g_set_error (error, VS_CONFIG_ERROR, 0,
                 "unknown preset '%s': no presets in %s (set VRAMSIM_CONFIGS to the configs folder)",
                 name, dir);
  else
    {
      g_autofree char *list = g_strjoinv (", ", names);
      g_autofree char *hint = suggest_phrase (name, (const char *const *) names, NULL);
      g_set_error (error, VS_CONFIG_ERROR, 0, "unknown preset '%s'%s (presets: %s; or give a path to a .json file)",
                   name, hint, list);
    }
  return NULL;
}

char *
config_find (const char *name_or_path, GError **error)
{
  g_return_val_if_fail (name_or_path != NULL, NULL);
  if (*name_or_path == '\0')
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "empty config name");
      return NULL;
    }
  if (cfg_is_preset_name (name_or_path))
    return cfg_preset_path (name_or_path, error);
  return g_strdup (name_or_path);
}

gboolean
config_check_trace_preset (const char *name, const char *trace_path, GError **error)
{
  g_return_val_if_fail (name != NULL, FALSE);
  /* A name of letters, digits, '.', '-' and '_' not starting with '.': no
   * path, no "..", nothing a header could point at a device or another
   * folder with. */
  gboolean ok = g_ascii_isalnum (*name) && strlen (name) <= 128;
  for (const char *p = name; ok && *p; p++)
    ok = g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '_';
  if (ok && cfg_is_preset_name (name))
    {
      g_autofree char *path = cfg_preset_path (name, NULL);
      if (path != NULL)
        return TRUE;
    }
  g_auto (GStrv) names = config_list_presets ();
  g_autofree char *list = g_strjoinv (", ", names);
  g_autofree char *shown = g_strescape (name, NULL);
  g_set_error (error, VS_CONFIG_ERROR, 0,
               "%s: header field 'capture.config' is \"%.80s\", not a preset (presets: %s): a trace names a preset; "
               "a config file is read only when you give it with --capture-config", trace_path, shown, list);
  return FALSE;
}
