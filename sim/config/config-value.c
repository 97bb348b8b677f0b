/* config-value.c — one value against its key (the lowest file of the
 * config room): the error domain, messages naming file and key, "did you
 * mean" hints, parsing a leaf (sizes, rates, times, clocks, enums) and
 * checking an object or value against its Field table. */
#include "config/config-priv.h"
#include "base/suggest.h"
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (vs-config-error-quark, config_error)

const Field *
cfg_field_find (const Field *fields, const char *key)
{
  for (const Field *f = fields; f->key != NULL; f++)
    if (strcmp (f->key, key) == 0)
      return f;
  return NULL;
}

char *
cfg_field_list (const Field *fields)
{
  GString *s = g_string_new (NULL);
  for (const Field *f = fields; f->key != NULL; f++)
    g_string_append_printf (s, "%s%s", s->len ? ", " : "", f->key);
  return g_string_free (s, FALSE);
}

/* (g_strconcat, not a printf: a compile joins a path for every key.) */
char *
cfg_path_join (const char *prefix, const char *key)
{
  return prefix == NULL || *prefix == '\0' ? g_strdup (key) : g_strconcat (prefix, ".", key, NULL);
}

/* (transfer full) "; did you mean 'memory.bandwidth'?" for a KEY that is
 * not one of FIELDS (in the section at PATH), or "". */
char *
cfg_key_hint (const Field *fields, const char *key, const char *path)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  for (const Field *f = fields; f->key != NULL; f++)
    g_ptr_array_add (keys, (gpointer) f->key);
  g_ptr_array_add (keys, NULL);
  g_autofree char *prefix = path && *path ? g_strconcat (path, ".", NULL) : g_strdup ("");
  return suggest_phrase (key, (const char *const *) keys->pdata, prefix);
}

void
cfg_fail (GError **error, const char *origin, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (path != NULL && *path != '\0')
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s: %s", origin, path, msg);
  else
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s", origin, msg);
}

const char *
cfg_json_type_name (const cJSON *v)
{
  if (cJSON_IsString (v)) return "a string";
  if (cJSON_IsNumber (v)) return "a number";
  if (cJSON_IsBool (v)) return "a boolean";
  if (cJSON_IsNull (v)) return "null";
  if (cJSON_IsArray (v)) return "an array";
  if (cJSON_IsObject (v)) return "an object";
  return "an unknown value";
}

/* "1410MHz", "1.98 GHz": a finite number >= 0, an optional space, a unit. */
static gboolean
parse_freq (const char *s, double *hz)
{
  static const struct { const char *unit; double scale; } units[] = {
    { "Hz", 1 }, { "kHz", 1e3 }, { "MHz", 1e6 }, { "GHz", 1e9 },
  };
  char *end = NULL;
  double d = g_ascii_strtod (s, &end);
  if (end == s || !isfinite (d) || d < 0)
    return FALSE;
  if (*end == ' ')
    end++;
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (end, units[i].unit) == 0)
      {
        *hz = d * units[i].scale;
        return TRUE;
      }
  return FALSE;
}

/* A JSON number as a person wrote it: 1073741824, 5000.5, 5e-07. */
static char *
number_text (double d)
{
  if (d == floor (d) && fabs (d) < 1e17)
    return g_strdup_printf ("%.0f", d);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.15g", d));
}

/* Checks one leaf value V of kind F->kind and parses it into OUT. */
gboolean
cfg_leaf_value (const Field *f, const cJSON *v, const char *origin, const char *path, Val *out, GError **error)
{
  GError *uerr = NULL;
  switch (f->kind)
    {
    case K_STR:
    case K_EXTENDS:
      if (!cJSON_IsString (v))
        {
          cfg_fail (error, origin, path, "expected a string, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      out->s = v->valuestring;
      return TRUE;

    case K_BYTES:
      if (cJSON_IsNumber (v))
        {
          /* SPEC 4: a bare number other than 0 is an error. */
          if (v->valuedouble < 0)
            {
              cfg_fail (error, origin, path, "a size cannot be negative (got %g)", v->valuedouble);
              return FALSE;
            }
          if (v->valuedouble != 0)
            {
              g_autofree char *n = number_text (v->valuedouble);
              cfg_fail (error, origin, path, "%s has no unit: a size needs one, such as \"%sGiB\" or \"%sB\" (units: %s; "
                    "only 0 may go without one)", n, n, n, units_accepted (VS_UNITS_SIZE));
              return FALSE;
            }
          out->u = 0;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          if (!units_parse_bytes (v->valuestring, &out->u, &uerr))
            goto unit_error;
          return TRUE;
        }
      cfg_fail (error, origin, path, "expected a size such as \"80GiB\", got %s", cfg_json_type_name (v));
      return FALSE;

    case K_RATE:
    case K_TIME:
      if (cJSON_IsNumber (v))
        {
          if (v->valuedouble < 0)
            {
              cfg_fail (error, origin, path, "%s cannot be negative (got %g)",
                    f->kind == K_RATE ? "a bandwidth" : "a time", v->valuedouble);
              return FALSE;
            }
          if (v->valuedouble != 0)
            {
              g_autofree char *n = number_text (v->valuedouble);
              cfg_fail (error, origin, path, "%s has no unit: %s needs one, such as \"%s%s\" or \"%s%s\" (units: %s; "
                    "only 0 may go without one)", n, f->kind == K_RATE ? "a bandwidth" : "a time", n,
                    f->kind == K_RATE ? "GB/s" : "us", n, f->kind == K_RATE ? "B/s" : "ns",
                    units_accepted (f->kind == K_RATE ? VS_UNITS_RATE : VS_UNITS_TIME));
              return FALSE;
            }
          out->d = 0;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          gboolean ok = f->kind == K_RATE ? units_parse_rate (v->valuestring, &out->d, &uerr)
                                          : units_parse_time (v->valuestring, &out->d, &uerr);
          if (!ok)
            goto unit_error;
          return TRUE;
        }
      cfg_fail (error, origin, path, "expected %s, got %s",
            f->kind == K_RATE ? "a bandwidth such as \"936GB/s\"" : "a time such as \"10us\"",
            cfg_json_type_name (v));
      return FALSE;

    case K_FRAC:
      if (!cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected a number in (0, 1], got %s", cfg_json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0 && v->valuedouble <= 1))
        {
          cfg_fail (error, origin, path, "must be in (0, 1] (a fraction of the peak), got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_POS:
      if (!cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected a number, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0) || !isfinite (v->valuedouble))
        {
          cfg_fail (error, origin, path, "must be greater than 0, got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_COUNT:
      if (!cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected a whole number, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 1) || v->valuedouble != floor (v->valuedouble)
          || v->valuedouble > (double) G_MAXUINT)
        {
          cfg_fail (error, origin, path, "must be a whole number >= 1, got %g", v->valuedouble);
          return FALSE;
        }
      out->u = (guint64) v->valuedouble;
      return TRUE;

    case K_UINT:
      if (!cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected a whole number, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 0) || v->valuedouble != floor (v->valuedouble)
          || v->valuedouble > (double) G_MAXUINT)
        {
          cfg_fail (error, origin, path, "must be a whole number >= 0, got %g", v->valuedouble);
          return FALSE;
        }
      out->u = (guint64) v->valuedouble;
      return TRUE;

    case K_UNIT:
      if (!cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected a number in [0, 1), got %s", cfg_json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 0 && v->valuedouble < 1))
        {
          cfg_fail (error, origin, path, "must be in [0, 1) (0: off), got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_SIZE_UNL:
      if (cJSON_IsString (v) && strcmp (v->valuestring, "unlimited") == 0)
        {
          out->u = G_MAXUINT64;
          return TRUE;
        }
      if (!cJSON_IsString (v) && !cJSON_IsNumber (v))
        {
          cfg_fail (error, origin, path, "expected \"unlimited\" or a size such as \"128MiB\", got %s",
                cfg_json_type_name (v));
          return FALSE;
        }
      {
        Field as_bytes = *f;
        as_bytes.kind = K_BYTES;
        return cfg_leaf_value (&as_bytes, v, origin, path, out, error);
      }
    case K_FREQ:
      if (cJSON_IsNumber (v) && v->valuedouble == 0)
        {
          out->d = 0;
          return TRUE;
        }
      if (cJSON_IsString (v) && parse_freq (v->valuestring, &out->d))
        return TRUE;
      if (cJSON_IsString (v))
        cfg_fail (error, origin, path, "'%s' is not a clock such as \"1410MHz\" (units: Hz kHz MHz GHz; case matters)",
              v->valuestring);
      else
        cfg_fail (error, origin, path, "expected a clock with its unit such as \"1410MHz\" (units: Hz kHz MHz GHz), got %s",
              cfg_json_type_name (v));
      return FALSE;

    case K_BOOL:
      if (!cJSON_IsBool (v))
        {
          cfg_fail (error, origin, path, "expected true or false, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      out->b = cJSON_IsTrue (v);
      return TRUE;

    case K_ENUM:
      if (cJSON_IsString (v))
        for (int i = 0; f->choices[i] != NULL; i++)
          if (strcmp (f->choices[i], v->valuestring) == 0)
            {
              out->e = i;
              return TRUE;
            }
      {
        g_autofree char *list = g_strjoinv ("\", \"", (char **) f->choices);
        if (cJSON_IsString (v))
          cfg_fail (error, origin, path, "'%s' is not one of \"%s\"", v->valuestring, list);
        else
          cfg_fail (error, origin, path, "expected one of \"%s\", got %s", list, cfg_json_type_name (v));
      }
      return FALSE;

    case K_OBJ:
    case K_TIERS:
      break;
    }
  g_assert_not_reached ();

unit_error:
  cfg_fail (error, origin, path, "%s", uerr->message);
  g_error_free (uerr);
  return FALSE;
}


/* Checks every key of OBJ against FIELDS (unknown and duplicate keys) and
 * every value against its kind. null stands for "absent" everywhere. */
gboolean
cfg_check_object (const Field *fields, const cJSON *obj, const char *origin, const char *path, GError **error)
{
  for (const cJSON *it = obj->child; it != NULL; it = it->next)
    {
      g_autofree char *p = cfg_path_join (path, it->string);
      for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
        if (strcmp (prev->string, it->string) == 0)
          {
            cfg_fail (error, origin, p, "duplicate key");
            return FALSE;
          }
      const Field *f = cfg_field_find (fields, it->string);
      if (f == NULL)
        {
          g_autofree char *known = cfg_field_list (fields);
          g_autofree char *hint = cfg_key_hint (fields, it->string, path);
          cfg_fail (error, origin, p, "unknown key%s (known keys%s%s: %s)", hint,
                path && *path ? " in " : "", path ? path : "", known);
          return FALSE;
        }
      if (!cfg_check_value (f, it, origin, p, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
cfg_check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error)
{
  Val dummy;
  if (cJSON_IsNull (v))
    return TRUE;
  if (f->kind == K_OBJ)
    {
      if (!cJSON_IsObject (v))
        {
          cfg_fail (error, origin, path, "expected an object, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      return cfg_check_object (f->sub, v, origin, path, error);
    }
  if (f->kind == K_TIERS)
    {
      if (!cJSON_IsArray (v))
        {
          cfg_fail (error, origin, path, "expected an array of tier objects, got %s", cfg_json_type_name (v));
          return FALSE;
        }
      /* More tiers than this are refused, before anything else is done
       * with them: each is a resource of the flow network and a location
       * of every allocation's state (100,000 took 75 s to refuse). */
      int n = cJSON_GetArraySize (v);
      if (n > MAX_TIERS)
        {
          cfg_fail (error, origin, path, "%d tiers; at most %d (a memory system of more levels is not one vramsim "
                "models)", n, MAX_TIERS);
          return FALSE;
        }
      int i = 0;
      for (const cJSON *t = v->child; t != NULL; t = t->next, i++)
        {
          g_autofree char *tp = g_strdup_printf ("%s[%d]", path, i);
          if (!cJSON_IsObject (t))
            {
              cfg_fail (error, origin, tp, "expected a tier object, got %s", cfg_json_type_name (t));
              return FALSE;
            }
          if (!cfg_check_object (f->sub, t, origin, tp, error))
            return FALSE;
        }
      return TRUE;
    }
  return cfg_leaf_value (f, v, origin, path, &dummy, error);
}

gboolean
cfg_all_digits (const char *s)
{
  if (*s == '\0')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

char *
cfg_basename_no_json (const char *path)
{
  char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".json") && strlen (base) > 5)
    base[strlen (base) - 5] = '\0';
  return base;
}
