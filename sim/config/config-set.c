/* config-set.c — --set KEY=VALUE edits on the merged tree, checked as they
 * are applied (tiers[N].key, compute aliases, null to drop a key). */
#include "config/config-priv.h"

#include <string.h>

/* ---- --set ---- */

gboolean
config_set (cJSON *root, const char *assignment, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL && assignment != NULL, FALSE);
  if (origin == NULL)
    origin = "config";
  g_autofree char *where = g_strdup_printf ("%s: --set '%s'", origin, assignment);

  const char *eq = strchr (assignment, '=');
  if (eq == NULL || eq == assignment)
    {
      cfg_fail (error, where, NULL, "expected KEY=VALUE, e.g. memory.capacity=24GiB");
      return FALSE;
    }
  g_autofree char *key = g_strndup (assignment, eq - assignment);
  const char *text = eq + 1;
  cJSON *value = cJSON_ParseWithOpts (text, NULL, TRUE);
  if (value == NULL)
    value = cJSON_CreateString (text);

  g_auto (GStrv) seg = g_strsplit (key, ".", -1);
  const Field *fields = cfg_root_fields;
  cJSON *obj = root;
  g_autofree char *path = g_strdup ("");
  gboolean ok = FALSE;

  for (int i = 0; seg[i] != NULL; i++)
    {
      const char *s = seg[i];
      if (*s == '\0')
        {
          cfg_fail (error, where, NULL, "empty key segment in '%s'", key);
          goto out;
        }
      const Field *f = cfg_field_find (fields, s);
      g_autofree char *p = cfg_path_join (path, s);
      if (f == NULL)
        {
          g_autofree char *known = cfg_field_list (fields);
          g_autofree char *hint = cfg_key_hint (fields, s, path);
          cfg_fail (error, where, p, "unknown key%s (known keys%s%s: %s)", hint, *path ? " in " : "", path, known);
          goto out;
        }
      if (f->kind == K_EXTENDS)
        {
          cfg_fail (error, where, p, "extends is resolved before --set applies; pass the parent config with -c");
          goto out;
        }
      if (seg[i + 1] == NULL)
        {
          /* A text field takes the text as typed: name=1 is "1"; so does
           * a size, bandwidth or time, which the unit parser then judges
           * as typed (24 needs a unit, 1e-400 is not 0). */
          if ((f->kind == K_STR || f->kind == K_ENUM || f->kind == K_BYTES || f->kind == K_RATE || f->kind == K_TIME)
              && !cJSON_IsString (value) && !cJSON_IsNull (value))
            {
              cJSON_Delete (value);
              value = cJSON_CreateString (text);
            }
          if (!cfg_check_value (f, value, where, p, error))
            goto out;
          if (fields == cfg_compute_fields && !cJSON_IsNull (value))
            cfg_compute_alias_drop (obj, s);
          if (cJSON_GetObjectItemCaseSensitive (obj, s) != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive (obj, s, value);
          else
            cJSON_AddItemToObject (obj, s, value);
          value = NULL;
          ok = TRUE;
          goto out;
        }
      if (f->kind == K_OBJ)
        {
          cJSON *child = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsObject (child))
            {
              if (child != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              child = cJSON_AddObjectToObject (obj, s);
            }
          obj = child;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&p);
          continue;
        }
      if (f->kind == K_TIERS)
        {
          cJSON *arr = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsArray (arr))
            {
              if (arr != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              arr = cJSON_AddArrayToObject (obj, s);
            }
          const char *sel = seg[++i];
          int n = cJSON_GetArraySize (arr), idx = -1;
          if (cfg_all_digits (sel))
            {
              idx = strlen (sel) > 6 ? G_MAXINT : atoi (sel);
              if (idx > n)
                {
                  cfg_fail (error, where, p, "no tier %s (the config has %d; index %d appends one)", sel, n, n);
                  goto out;
                }
              if (idx == n)
                cJSON_AddItemToArray (arr, cJSON_CreateObject ());
            }
          else
            {
              GString *names = g_string_new (NULL);
              int k = 0;
              for (cJSON *t = arr->child; t != NULL; t = t->next, k++)
                {
                  const cJSON *nm = cJSON_GetObjectItemCaseSensitive (t, "name");
                  if (cJSON_IsString (nm))
                    {
                      g_string_append_printf (names, "%s%s", names->len ? ", " : "", nm->valuestring);
                      if (idx < 0 && strcmp (nm->valuestring, sel) == 0)
                        idx = k;
                    }
                }
              if (idx < 0)
                {
                  cfg_fail (error, where, p, "no tier named '%s' (tiers: %s)", sel, names->len ? names->str : "none");
                  g_string_free (names, TRUE);
                  goto out;
                }
              g_string_free (names, TRUE);
            }
          g_autofree char *tp = g_strdup_printf ("%s[%d]", p, idx);
          cJSON *tier = cJSON_GetArrayItem (arr, idx);
          if (seg[i + 1] == NULL)
            {
              /* A whole tier: tiers.cxl0={...} */
              if (!cJSON_IsObject (value))
                {
                  cfg_fail (error, where, tp, "expected a tier object, got %s", cfg_json_type_name (value));
                  goto out;
                }
              if (!cfg_check_object (cfg_tier_fields, value, where, tp, error))
                goto out;
              cJSON_ReplaceItemInArray (arr, idx, value);
              value = NULL;
              ok = TRUE;
              goto out;
            }
          if (!cJSON_IsObject (tier))
            {
              cJSON_ReplaceItemInArray (arr, idx, cJSON_CreateObject ());
              tier = cJSON_GetArrayItem (arr, idx);
            }
          obj = tier;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&tp);
          continue;
        }
      cfg_fail (error, where, p, "is a value, not a section (nothing below it to set)");
      goto out;
    }

out:
  cJSON_Delete (value);
  return ok;
}
