/* opts.c — what every subcommand checks on its command line before GLib
 * parses it: unknown options (with "did you mean"), a single-valued option
 * given twice (GLib would silently keep the last), and `--set KEY VALUE`
 * with a space where `--set KEY=VALUE` was meant (GLib would take VALUE
 * as a second TRACE). */
#include <string.h>

#include "cli/cmds.h"
#include "base/suggest.h"

static gboolean
takes_value (const GOptionEntry *e)
{
  return e->arg != G_OPTION_ARG_NONE
         && !(e->arg == G_OPTION_ARG_CALLBACK && (e->flags & G_OPTION_FLAG_NO_ARG));
}

static gboolean
repeatable (const GOptionEntry *e)
{
  return e->arg == G_OPTION_ARG_STRING_ARRAY || e->arg == G_OPTION_ARG_FILENAME_ARRAY
         || e->arg == G_OPTION_ARG_CALLBACK;
}

static const GOptionEntry *
find_long (const GOptionEntry *const *groups, const char *name, gsize len)
{
  for (guint g = 0; groups[g]; g++)
    for (const GOptionEntry *e = groups[g]; e->long_name; e++)
      if (*e->long_name && strlen (e->long_name) == len && strncmp (e->long_name, name, len) == 0)
        return e;
  return NULL;
}

static const GOptionEntry *
find_short (const GOptionEntry *const *groups, char c)
{
  for (guint g = 0; groups[g]; g++)
    for (const GOptionEntry *e = groups[g]; e->long_name; e++)
      if (e->short_name == c)
        return e;
  return NULL;
}

static char *
option_name (const GOptionEntry *e)
{
  return e->short_name ? g_strdup_printf ("-%c/--%s", e->short_name, e->long_name)
                       : g_strdup_printf ("--%s", e->long_name);
}

/* A "--set" value without "=": the KEY VALUE written with a space. */
static gboolean
check_set_value (const char *value, const char *next, GError **error)
{
  if (strchr (value, '=') != NULL)
    return TRUE;
  if (next && *next != '-')
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 "--set takes KEY=VALUE as one argument: --set %s=%s, not --set %s %s",
                 value, next, value, next);
  else
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 "--set takes KEY=VALUE: --set %s=VALUE", value);
  return FALSE;
}

gboolean
cmd_check_options (int argc, char **argv, const GOptionEntry *const *groups, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (strcmp (a, "--") == 0)
        break;
      if (a[0] != '-' || a[1] == '\0')
        continue;
      const GOptionEntry *e = NULL;
      const char *inline_value = NULL;
      if (a[1] == '-')
        {
          const char *name = a + 2, *eq = strchr (name, '=');
          gsize len = eq ? (gsize) (eq - name) : strlen (name);
          if (g_str_has_prefix (name, "help"))
            continue;
          e = find_long (groups, name, len);
          if (e == NULL)
            {
              g_autofree char *word = g_strndup (name, len);
              g_autoptr (GPtrArray) names = g_ptr_array_new ();
              for (guint g = 0; groups[g]; g++)
                for (const GOptionEntry *x = groups[g]; x->long_name; x++)
                  if (*x->long_name && !(x->flags & G_OPTION_FLAG_HIDDEN))
                    g_ptr_array_add (names, (gpointer) x->long_name);
              g_ptr_array_add (names, NULL);
              g_autofree char *hint = suggest_phrase (word, (const char *const *) names->pdata, "--");
              g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION,
                           "unknown option --%s%s", word, hint);
              return FALSE;
            }
          inline_value = eq ? eq + 1 : NULL;
        }
      else
        {
          if (a[1] == '?' || a[1] == 'h')
            continue;
          e = find_short (groups, a[1]);
          if (e == NULL)
            continue;   /* GLib names it */
          inline_value = a[2] ? a + 2 : NULL;
        }
      if (!repeatable (e))
        {
          if (g_hash_table_contains (seen, e))
            {
              g_autofree char *n = option_name (e);
              g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                           "%s given twice: give it once%s", n,
                           e->short_name == 'c' ? " (several configs: -c A,B)" : "");
              return FALSE;
            }
          g_hash_table_add (seen, (gpointer) e);
        }
      const char *value = inline_value;
      if (takes_value (e) && inline_value == NULL && i + 1 < argc)
        value = argv[++i];
      if (value && strcmp (e->long_name, "set") == 0
          && !check_set_value (value, i + 1 < argc ? argv[i + 1] : NULL, error))
        return FALSE;
    }
  return TRUE;
}

void
cmd_end_options (int *argc, char **argv)
{
  for (int i = 1; i < *argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        memmove (argv + i, argv + i + 1, (size_t) (*argc - i) * sizeof *argv); /* with the NULL */
        (*argc)--;
        return;
      }
}

gboolean
cmd_check_sampling (const char *prefix, gint steps, double tol)
{
  if (steps >= 0 && tol >= 0 && tol < 1)
    return TRUE;
  cmd_error ("%s%s", prefix, steps < 0 ? "--sample-steps: K must be 1 or more (0: replay everything)"
                                       : "--sample-tolerance: TOL must be at least 0 and below 1");
  return FALSE;
}
