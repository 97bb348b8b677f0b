/* config.c — compiling a checked config tree to a VsConfig (the leaves,
 * then each section and its check, then the whole config's), config_load
 * (load, --set, compile), freeing, and writing a VsConfig back as JSON.
 * The stages below it: config-priv.h.
 *
 * Three stages: load (read a file, check its keys and values, resolve
 * `extends` depth-first, child wins), set (--set edits on the merged tree,
 * checked as they are applied) and compile (check the whole tree again,
 * cross-check fields, fill defaults, produce a VsConfig) (SPEC section 4;
 * every default and its reason is in docs/config.md). */
#include "config/config-priv.h"
#include "base/units.h"

#include <math.h>
#include <string.h>

/* ---- compile ---- */

static const cJSON *
member (const cJSON *obj, const char *key)
{
  const cJSON *v = obj != NULL ? cJSON_GetObjectItemCaseSensitive (obj, key) : NULL;
  return cJSON_IsNull (v) ? NULL : v;
}

static gboolean
is_leaf (Kind k)
{
  return k != K_OBJ && k != K_TIERS && k != K_EXTENDS;
}

/* Stores leaf F's value V (parsed by cfg_leaf_value) at BASE + F->at. */
static void
store (const Field *f, void *base, Val v)
{
  char *p = (char *) base + f->at;
  switch (f->kind)
    {
    case K_STR: *(char **) p = g_strdup (v.s); break;
    case K_BYTES: *(guint64 *) p = v.u; break;
    case K_RATE: case K_TIME: case K_FRAC: case K_POS: case K_FREQ: *(double *) p = v.d; break;
    case K_COUNT: case K_UINT: *(guint *) p = (guint) v.u; break;
    case K_UNIT: *(double *) p = v.d; break;
    case K_SIZE_UNL: *(guint64 *) p = v.u; break;
    case K_BOOL: *(gboolean *) p = v.b; break;
    case K_ENUM: *(int *) p = v.e; break;
    case K_EXTENDS: case K_OBJ: case K_TIERS: g_assert_not_reached ();
    }
}

/* Compiles the leaves of OBJ (at PREFIX, FIELDS) into BASE: each present
 * value, else its default, else "required". The tree was checked whole
 * first (cfg_check_object), so values parse. */
static gboolean
compile_leaves (const Field *fields, const cJSON *obj, const char *prefix, void *base,
                gboolean unified, const char *origin, GError **error)
{
  for (const Field *f = fields; f->key != NULL; f++)
    {
      if (!is_leaf (f->kind))
        continue;
      const cJSON *j = member (obj, f->key);
      g_autofree char *p = cfg_path_join (prefix, f->key);
      Val v = f->def;
      if (j != NULL)
        {
          if (!cfg_leaf_value (f, j, origin, p, &v, error))
            return FALSE;
        }
      else if (f->need != NULL && !(f->unless_unified && unified))
        {
          cfg_fail (error, origin, p, "required (%s)", f->need);
          return FALSE;
        }
      else if (f->need != NULL)
        continue;   /* optional here: left 0 */
      if (f->kind != K_STR || v.s != NULL)
        store (f, base, v);
      if (f->check != NULL && !f->check ((VsConfig *) base, base, prefix, origin, error))
        return FALSE;
    }
  return TRUE;
}

/* Compiles section F (its leaves, then the sections inside it, then its
 * check) from OBJ at PREFIX into C. */
static gboolean
compile_section (const Field *f, const cJSON *obj, const char *prefix, VsConfig *c, const char *origin,
                 GError **error)
{
  if (!compile_leaves (f->sub, obj, prefix, c, c->unified, origin, error))
    return FALSE;
  for (const Field *s = f->sub; s->key != NULL; s++)
    if (s->kind == K_OBJ)
      {
        g_autofree char *p = cfg_path_join (prefix, s->key);
        if (!compile_section (s, member (obj, s->key), p, c, origin, error))
          return FALSE;
      }
  return f->check == NULL || f->check (c, c, prefix, origin, error);
}

VsConfig *
config_compile (const cJSON *root, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL, NULL);
  if (origin == NULL)
    origin = "config";
  if (!cJSON_IsObject (root))
    {
      cfg_fail (error, origin, NULL, "a config is a JSON object, not %s", cfg_json_type_name (root));
      return NULL;
    }
  if (!cfg_check_object (cfg_root_fields, root, origin, "", error))
    return NULL;

  VsConfig *c = g_new0 (VsConfig, 1);
  c->origin = g_strdup (origin);
  if (!compile_leaves (cfg_root_fields, root, "", c, FALSE, origin, error))
    goto fail;
  for (const Field *f = cfg_root_fields; f->key != NULL; f++)
    {
      const cJSON *obj = member (root, f->key);
      if (f->kind == K_OBJ)
        {
          if (!compile_section (f, obj, f->key, c, origin, error))
            goto fail;
        }
      else if (f->kind == K_TIERS)
        {
          c->n_tiers = obj != NULL ? (guint) cJSON_GetArraySize (obj) : 0; /* <= MAX_TIERS (cfg_check_value) */
          c->tiers = g_new0 (VsTier, c->n_tiers + 1);
          for (guint i = 0; i < c->n_tiers; i++)
            {
              g_autofree char *tp = g_strdup_printf ("%s[%u]", f->key, i);
              if (!compile_leaves (f->sub, cJSON_GetArrayItem (obj, (int) i), tp, &c->tiers[i], c->unified,
                                   origin, error)
                  || !f->check (c, &c->tiers[i], tp, origin, error))
                goto fail;
            }
        }
    }
  if (!cfg_check_rates (c, origin, error))
    goto fail;
  if (!cfg_check_capacity_floor (c, origin, error))
    goto fail;
  return c;

fail:
  config_free (c);
  return NULL;
}

/* SETS applied to ROOT (taken) from ORIGIN, compiled. */
static VsConfig *
load_tree (cJSON *root, const char *origin, const char *const *sets, GError **error)
{
  for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
    if (!config_set (root, sets[i], origin, error))
      {
        cJSON_Delete (root);
        return NULL;
      }
  GError *err = NULL;
  VsConfig *c = config_compile (root, origin, &err);
  cJSON_Delete (root);
  if (c == NULL)
    {
      /* A value that parsed but is impossible (--set memory.bandwidth=0)
       * is found here: say which --set put it there. */
      for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
        {
          const char *eq = strchr (sets[i], '=');
          g_autofree char *key = g_strndup (sets[i], eq ? (gsize) (eq - sets[i]) : strlen (sets[i]));
          g_autofree char *needle = g_strdup_printf (": %s", key);
          if (strstr (err->message, needle) != NULL)
            {
              g_autofree char *old = err->message;
              err->message = g_strdup_printf ("%s (set by --set %s)", old, sets[i]);
              break;
            }
        }
      g_propagate_error (error, err);
    }
  return c;
}

VsConfig *
config_load (const char *name_or_path, const char *const *sets, GError **error)
{
  g_autofree char *origin = NULL;
  cJSON *root = cfg_load_json_origin (name_or_path, &origin, error);
  return root ? load_tree (root, origin, sets, error) : NULL;
}

VsConfig *
config_load_with_plain (const char *name_or_path, const char *const *sets, VsConfig **plain,
                        GError **plain_error, GError **error)
{
  *plain = NULL;
  g_autofree char *origin = NULL;
  cJSON *root = cfg_load_json_origin (name_or_path, &origin, error);
  if (root == NULL)
    return NULL;
  cJSON *copy = cJSON_Duplicate (root, TRUE);
  VsConfig *c = load_tree (root, origin, sets, error);
  if (c == NULL)
    cJSON_Delete (copy);
  else
    *plain = load_tree (copy, origin, NULL, plain_error);
  return c;
}

/* Frees the strings of FIELDS at BASE (and of every section and tier). */
static void
free_fields (const Field *fields, VsConfig *c, void *base)
{
  for (const Field *f = fields; f->key != NULL; f++)
    if (f->kind == K_STR)
      g_free (*(char **) ((char *) base + f->at));
    else if (f->kind == K_OBJ)
      free_fields (f->sub, c, c);
    else if (f->kind == K_TIERS)
      for (guint i = 0; c->tiers != NULL && i < c->n_tiers; i++)
        free_fields (f->sub, c, &c->tiers[i]);
}

void
config_free (VsConfig *c)
{
  if (c == NULL)
    return;
  free_fields (cfg_root_fields, c, c);
  g_free (c->origin);
  g_free (c->tiers);
  g_free (c);
}

/* ---- writing back ---- */

static void
add_owned_string (cJSON *obj, const char *key, char *s)
{
  cJSON_AddStringToObject (obj, key, s);
  g_free (s);
}

/* Writes the values of FIELDS at BASE into OBJ, in table order. */
static void
fields_to_json (const Field *fields, const VsConfig *c, const void *base, cJSON *obj)
{
  for (const Field *f = fields; f->key != NULL; f++)
    {
      const char *p = (const char *) base + f->at;
      switch (f->kind)
        {
        case K_STR: cJSON_AddStringToObject (obj, f->key, *(char *const *) p); break;
        case K_EXTENDS: break;
        case K_BYTES: add_owned_string (obj, f->key, units_format_bytes_exact (*(const guint64 *) p)); break;
        case K_RATE: add_owned_string (obj, f->key, units_format_rate_exact (*(const double *) p)); break;
        case K_TIME: add_owned_string (obj, f->key, units_format_time_exact (*(const double *) p)); break;
        case K_FRAC: case K_POS:
          /* 0: an optional figure not given (compute peaks): left out */
          if (*(const double *) p > 0)
            cJSON_AddNumberToObject (obj, f->key, *(const double *) p);
          break;
        case K_COUNT:
          if (*(const guint *) p > 0)
            cJSON_AddNumberToObject (obj, f->key, *(const guint *) p);
          break;
        case K_FREQ:
          if (*(const double *) p > 0)
            {
              double hz = *(const double *) p;
              add_owned_string (obj, f->key, fmod (hz, 1e6) == 0 ? g_strdup_printf ("%.17gMHz", hz / 1e6)
                                                                 : g_strdup_printf ("%.17gHz", hz));
            }
          break;
        case K_UINT: cJSON_AddNumberToObject (obj, f->key, *(const guint *) p); break;
        case K_UNIT: cJSON_AddNumberToObject (obj, f->key, *(const double *) p); break;
        case K_SIZE_UNL:
          if (*(const guint64 *) p == G_MAXUINT64)
            cJSON_AddStringToObject (obj, f->key, "unlimited");
          else
            add_owned_string (obj, f->key, units_format_bytes_exact (*(const guint64 *) p));
          break;
        case K_BOOL: cJSON_AddBoolToObject (obj, f->key, *(const gboolean *) p); break;
        case K_ENUM: cJSON_AddStringToObject (obj, f->key, f->choices[*(const int *) p]); break;
        case K_OBJ: fields_to_json (f->sub, c, c, cJSON_AddObjectToObject (obj, f->key)); break;
        case K_TIERS:
          {
            cJSON *a = cJSON_AddArrayToObject (obj, f->key);
            for (guint i = 0; i < c->n_tiers; i++)
              {
                cJSON *o = cJSON_CreateObject ();
                fields_to_json (f->sub, c, &c->tiers[i], o);
                cJSON_AddItemToArray (a, o);
              }
          }
          break;
        }
    }
}

cJSON *
config_to_json (const VsConfig *c)
{
  g_return_val_if_fail (c != NULL, NULL);
  cJSON *root = cJSON_CreateObject ();
  fields_to_json (cfg_root_fields, c, c, root);
  return root;
}
