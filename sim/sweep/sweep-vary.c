/* sweep-vary.c — --vary KEY=V1,V2,... and its ranges (sweep.h
 * sweep_vary_parse): values, arithmetic and geometric ranges in the units
 * of their bounds. */
#include "sweep/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"

#define MAX_RANGE_VALUES 100000

/* ---------------------------------------------------------------- ranges */

typedef enum { KIND_PLAIN, KIND_BYTES, KIND_RATE, KIND_TIME } ValueKind;

static gboolean
parse_plain (const char *s, double *out)
{
  char *end = NULL;
  while (g_ascii_isspace (*s))
    s++;
  if (*s == '\0')
    return FALSE;
  *out = g_ascii_strtod (s, &end);
  while (end && g_ascii_isspace (*end))
    end++;
  return end && *end == '\0' && isfinite (*out);
}

static gboolean
parse_kind (ValueKind kind, const char *s, double *out, GError **error)
{
  guint64 b;
  switch (kind)
    {
    case KIND_PLAIN:
      if (!parse_plain (s, out))
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "'%s' is not a number", s);
          return FALSE;
        }
      return TRUE;
    case KIND_BYTES:
      if (!units_parse_bytes (s, &b, error))
        return FALSE;
      *out = (double) b;
      return TRUE;
    case KIND_RATE:
      return units_parse_rate (s, out, error);
    case KIND_TIME:
      return units_parse_time (s, out, error);
    }
  g_assert_not_reached ();
}

/* The unit text after the number ("GiB", "TB/s"), trimmed; "" if none. */
static char *
unit_suffix (const char *s)
{
  while (g_ascii_isspace (*s))
    s++;
  if (*s == '+' || *s == '-')
    s++;
  while (g_ascii_isdigit (*s) || *s == '.')
    s++;
  if ((*s == 'e' || *s == 'E') && (g_ascii_isdigit (s[1]) || ((s[1] == '+' || s[1] == '-') && g_ascii_isdigit (s[2]))))
    {
      s += 2;
      while (g_ascii_isdigit (*s))
        s++;
    }
  return g_strstrip (g_strdup (s));
}

static char *
format_number (double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, "%.10g", v);
  return g_strdup (buf);
}

/* Expands "A..B/STEP" or "A..B/xK" into VALUES. */
static gboolean
expand_range (const char *key, const char *item, const char *dots, GPtrArray *values, GError **error)
{
  g_autofree char *a_text = g_strstrip (g_strndup (item, dots - item));
  const char *rest = dots + 2;
  const char *slash = NULL;
  /* The step follows the last '/' that is not the one of a rate unit
   * ("4TB/s/x2": the first '/' belongs to TB/s). */
  for (const char *p = rest; *p; p++)
    if (*p == '/' && !(p[1] == 's' && (p[2] == '\0' || p[2] == '/')))
      slash = p;
  if (slash == NULL)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--vary %s: bad range '%s': expected A..B/STEP or A..B/xK", key, item);
      return FALSE;
    }
  g_autofree char *b_text = g_strstrip (g_strndup (rest, slash - rest));
  g_autofree char *s_text = g_strstrip (g_strdup (slash + 1));
  gboolean geometric = s_text[0] == 'x' || s_text[0] == 'X';
  g_autofree char *a_unit = unit_suffix (a_text);
  g_autofree char *b_unit = unit_suffix (b_text);
  g_autofree char *s_unit = geometric ? g_strdup ("") : unit_suffix (s_text);
  const char *unit = *a_unit ? a_unit : *b_unit ? b_unit : s_unit;

  if (!*a_text || !*b_text || !*s_text)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--vary %s: bad range '%s': expected A..B/STEP or A..B/xK", key, item);
      return FALSE;
    }

  ValueKind kind = KIND_PLAIN;
  if (*unit)
    {
      g_autofree char *probe = g_strconcat ("1", unit, NULL);
      double d;
      guint64 b;
      if (units_parse_bytes (probe, &b, NULL))
        kind = KIND_BYTES;
      else if (units_parse_rate (probe, &d, NULL))
        kind = KIND_RATE;
      else if (units_parse_time (probe, &d, NULL))
        kind = KIND_TIME;
      else
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "--vary %s: bad range '%s': unknown unit '%s' (sizes B KB MB GB TB KiB MiB GiB TiB, "
                       "rates like GB/s, times ns us ms s)", key, item, unit);
          return FALSE;
        }
    }

  double a, b, step, factor = 1;
  GError *e = NULL;
  if (!parse_kind (kind, a_text, &a, &e) || !parse_kind (kind, b_text, &b, &e)
      || (!geometric && !parse_kind (kind, s_text, &step, &e)))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--vary %s: bad range '%s': %s", key, item, e->message);
      g_error_free (e);
      return FALSE;
    }
  if (geometric && !parse_plain (s_text + 1, &step))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--vary %s: bad range '%s': '%s' is not a factor like x2", key, item, s_text);
      return FALSE;
    }
  if (*unit)
    {
      g_autofree char *probe = g_strconcat ("1", unit, NULL);
      parse_kind (kind, probe, &factor, NULL);
    }

  const char *why = NULL;
  if (a > b)
    why = "the start is above the end";
  else if (geometric && step <= 1)
    why = "a geometric factor must be above 1";
  else if (geometric && a <= 0)
    why = "a geometric range must start above 0";
  else if (!geometric && step <= 0)
    why = "the step must be above 0";
  else if (!geometric && (b - a) / step >= MAX_RANGE_VALUES)
    why = "more than 100000 values";
  else if (geometric && log (b / a) / log (step) >= MAX_RANGE_VALUES)
    why = "more than 100000 values";
  if (why)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--vary %s: bad range '%s': %s", key, item, why);
      return FALSE;
    }

  double limit = b * (1 + 1e-12) + 1e-12;
  for (guint i = 0;; i++)
    {
      double v = geometric ? a * pow (step, i) : a + i * step;
      if (v > limit)
        break;
      if (kind == KIND_BYTES)
        v = round (v);
      g_autofree char *num = format_number (v / factor);
      g_ptr_array_add (values, g_strconcat (num, unit, NULL));
    }
  return TRUE;
}

VsVary *
sweep_vary_parse (const char *spec, GError **error)
{
  const char *eq = strchr (spec, '=');
  if (eq == NULL || eq == spec)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--vary '%s': expected KEY=V1,V2,... or KEY=A..B/STEP", spec);
      return NULL;
    }
  g_autofree char *key = g_strstrip (g_strndup (spec, eq - spec));
  g_autoptr (GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) items = g_strsplit (eq + 1, ",", -1);
  for (char **it = items; *it; it++)
    {
      g_strstrip (*it);
      const char *dots = strstr (*it, "..");
      if (**it == '\0')
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--vary %s: empty value in '%s'", key, eq + 1);
          return NULL;
        }
      if (dots)
        {
          if (!expand_range (key, *it, dots, values, error))
            return NULL;
        }
      else
        g_ptr_array_add (values, g_strdup (*it));
    }
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < values->len; i++)
    if (!g_hash_table_add (seen, values->pdata[i]))
      {
        g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--vary %s: value '%s' given twice",
                     key, (char *) values->pdata[i]);
        return NULL;
      }

  VsVary *v = g_new0 (VsVary, 1);
  v->key = g_steal_pointer (&key);
  v->n_values = values->len;
  g_ptr_array_add (values, NULL);
  v->values = (char **) g_ptr_array_free (g_steal_pointer (&values), FALSE);
  return v;
}

void
sweep_vary_free (VsVary *v)
{
  if (v == NULL)
    return;
  g_free (v->key);
  g_strfreev (v->values);
  g_free (v);
}

