/* cmd-configs.c — `vramsim configs`: list the hardware presets, or print
 * one fully resolved (docs/config.md). */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "base/jsonw.h"
#include "config/config.h"
#include "base/units.h"

#define DESC_WIDTH 60

/* (transfer full) S cut to at most N characters, "..." marking a cut. */
static char *
truncate_utf8 (const char *s, glong n)
{
  if (g_utf8_strlen (s, -1) <= n)
    return g_strdup (s);
  const char *end = g_utf8_offset_to_pointer (s, n - 3);
  g_autofree char *head = g_strndup (s, end - s);
  return g_strconcat (g_strchomp (head), "...", NULL);
}

static const char *
or_dash (const char *s)
{
  return s != NULL && *s != '\0' ? s : "-";
}

static char *
link_text (const VsConfig *c)
{
  if (c->unified)
    return g_strdup ("unified");
  if (c->link.tech != NULL && *c->link.tech != '\0')
    return g_strdup (c->link.tech);
  return units_format_rate (c->link.bandwidth);
}

static char *
tiers_text (const VsConfig *c)
{
  if (c->n_tiers == 0)
    return g_strdup ("-");
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < c->n_tiers; i++)
    {
      g_autofree char *cap = units_format_bytes (c->tiers[i].capacity);
      g_string_append_printf (s, "%s%s %s", i ? ", " : "", c->tiers[i].name, cap);
    }
  return g_string_free (s, FALSE);
}

/* Pads S with spaces to WIDTH display columns (strings may be UTF-8). */
static void
put_col (GString *out, const char *s, glong width)
{
  g_string_append (out, s);
  for (glong n = g_utf8_strlen (s, -1); n < width; n++)
    g_string_append_c (out, ' ');
  g_string_append (out, "  ");
}

static cJSON *
summary_json (const VsConfig *c)
{
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "name", c->name);
  cJSON_AddStringToObject (o, "description", c->description);
  cJSON_AddStringToObject (o, "path", c->origin);
  cJSON_AddNumberToObject (o, "tflops", c->tflops);
  cJSON *m = cJSON_AddObjectToObject (o, "memory");
  cJSON_AddStringToObject (m, "tech", c->memory.tech);
  cJSON_AddNumberToObject (m, "capacity", (double) c->memory.capacity);
  cJSON_AddNumberToObject (m, "bandwidth", c->memory.bandwidth);
  cJSON_AddNumberToObject (m, "efficiency", c->memory.efficiency);
  cJSON_AddNumberToObject (m, "effective_bandwidth", c->memory.bandwidth * c->memory.efficiency);
  cJSON_AddBoolToObject (o, "unified", c->unified);
  cJSON *l = cJSON_AddObjectToObject (o, "link");
  cJSON_AddStringToObject (l, "tech", c->link.tech);
  cJSON_AddNumberToObject (l, "bandwidth", c->link.bandwidth);
  cJSON_AddNumberToObject (l, "efficiency", c->link.efficiency);
  cJSON *t = cJSON_AddArrayToObject (o, "tiers");
  for (guint i = 0; i < c->n_tiers; i++)
    {
      cJSON *ti = cJSON_CreateObject ();
      cJSON_AddStringToObject (ti, "name", c->tiers[i].name);
      cJSON_AddStringToObject (ti, "tech", c->tiers[i].tech);
      cJSON_AddNumberToObject (ti, "capacity", (double) c->tiers[i].capacity);
      cJSON_AddNumberToObject (ti, "bandwidth", c->tiers[i].bandwidth);
      cJSON_AddStringToObject (ti, "attach", c->tiers[i].attach == VS_ATTACH_DEVICE ? "device" : "host");
      cJSON_AddItemToArray (t, ti);
    }
  return o;
}

static int
show (const char *name, char **sets)
{
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load (name, (const char *const *) sets, &error);
  if (c == NULL)
    {
      cmd_error ("%s", error->message);
      g_error_free (error);
      return 1;
    }
  cJSON *j = config_to_json (c);
  char *text = jsonw_print (j, TRUE);
  puts (text);
  g_free (text);
  cJSON_Delete (j);
  return 0;
}

int
cmd_configs (int argc, char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *show_name = NULL;
  g_auto (GStrv) sets = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "Output format: text (default) or json", "text|json" },
    { "show", 0, 0, G_OPTION_ARG_STRING, &show_name,
      "Print CONFIG (a preset name or a .json path) fully resolved: extends merged, defaults filled, as JSON",
      "CONFIG" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "With --show: override one field (repeatable)", "KEY=VALUE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the hardware presets");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
      "One line per preset: name, memory technology, capacity, peak bandwidth,\n"
      "host link, extra tiers and the description (cut to fit). Presets are read\n"
      "from $VRAMSIM_CONFIGS, else the configs/ folder of the source tree, else\n"
      "PREFIX/share/vramsim/configs. Every field is explained in docs/config.md.\n\n"
      "Examples:\n"
      "  vramsim configs\n"
      "  vramsim configs --format json\n"
      "  vramsim configs --show a100-80g-cxl --set memory.capacity=40GiB\n");
  GError *error = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &error)
      || !g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("%s", error->message);
      g_error_free (error);
      return 2;
    }
  if (argc > 1)
    {
      cmd_error ("configs: unexpected argument '%s' (use --show NAME to print one config)", argv[1]);
      return 2;
    }
  gboolean json = FALSE;
  if (format != NULL && strcmp (format, "json") == 0)
    json = TRUE;
  else if (format != NULL && strcmp (format, "text") != 0)
    {
      cmd_error ("configs: --format must be text or json, not '%s'", format);
      return 2;
    }
  if (show_name != NULL)
    return show (show_name, sets);
  if (sets != NULL)
    {
      cmd_error ("configs: --set only applies with --show");
      return 2;
    }

  g_auto (GStrv) names = config_list_presets ();
  if (names[0] == NULL)
    {
      cmd_error ("no presets found in %s (set VRAMSIM_CONFIGS to the configs folder)", config_preset_dir ());
      return 1;
    }
  int status = 0;
  GPtrArray *configs = g_ptr_array_new_with_free_func ((GDestroyNotify) config_free);
  for (char **n = names; *n != NULL; n++)
    {
      VsConfig *c = config_load (*n, NULL, &error);
      if (c == NULL)
        {
          cmd_error ("%s", error->message);
          g_clear_error (&error);
          status = 1;
          continue;
        }
      g_ptr_array_add (configs, c);
    }

  if (json)
    {
      cJSON *arr = cJSON_CreateArray ();
      for (guint i = 0; i < configs->len; i++)
        cJSON_AddItemToArray (arr, summary_json (configs->pdata[i]));
      char *text = jsonw_print (arr, TRUE);
      puts (text);
      g_free (text);
      cJSON_Delete (arr);
    }
  else
    {
      /* Columns sized to their widest entry. */
      enum { NAME, TECH, CAP, BW, LINK, TIERS, NCOL };
      static const char *const head[NCOL] = { "NAME", "MEMORY", "CAPACITY", "BANDWIDTH", "LINK", "TIERS" };
      GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
      glong width[NCOL];
      for (int k = 0; k < NCOL; k++)
        width[k] = (glong) strlen (head[k]);
      for (guint i = 0; i < configs->len; i++)
        {
          const VsConfig *c = configs->pdata[i];
          char **row = g_new0 (char *, NCOL + 1);
          row[NAME] = g_strdup (c->name);
          row[TECH] = g_strdup (or_dash (c->memory.tech));
          row[CAP] = units_format_bytes (c->memory.capacity);
          row[BW] = units_format_rate (c->memory.bandwidth);
          row[LINK] = link_text (c);
          row[TIERS] = tiers_text (c);
          for (int k = 0; k < NCOL; k++)
            width[k] = MAX (width[k], g_utf8_strlen (row[k], -1));
          g_ptr_array_add (rows, row);
        }
      GString *out = g_string_new (NULL);
      for (int k = 0; k < NCOL; k++)
        put_col (out, head[k], width[k]);
      g_string_append (out, "DESCRIPTION\n");
      for (guint i = 0; i < rows->len; i++)
        {
          char **row = rows->pdata[i];
          const VsConfig *c = configs->pdata[i];
          for (int k = 0; k < NCOL; k++)
            put_col (out, row[k], width[k]);
          g_autofree char *d = truncate_utf8 (c->description, DESC_WIDTH);
          g_string_append_printf (out, "%s\n", d);
        }
      fputs (out->str, stdout);
      g_string_free (out, TRUE);
      g_ptr_array_free (rows, TRUE);
    }
  g_ptr_array_free (configs, TRUE);
  return status;
}
