/* jsonw.c — jsonw_print (jsonw.h): a cJSON tree as cJSON_Print writes it,
 * with numbers formatted without a printf in the common case.
 *
 * Why it looks the way it does:
 * - Every report, sweep, plan and timeline is a cJSON tree printed once;
 *   cJSON's own printer spends most of its time on numbers (sprintf
 *   "%1.15g", sscanf back, compare), and a report is mostly integers
 *   (nanoseconds, bytes). %1.15g prints an integral value below 10^15 as
 *   its digits, so those are written directly; anything else takes
 *   cJSON's own rule, the shortest of %1.15g and %1.17g that reads back.
 * - The layout is cJSON 1.7.15's, byte for byte (bench/diff-check.sh
 *   compares the reports of a binary printing with cJSON against this
 *   one's): an object's members one a line, indented by one tab a level
 *   of objects and arrays, `"key":<TAB>value`, a closing brace one tab
 *   less; arrays on one line, `[a, b]`; unformatted, no white space. */
#include "base/jsonw.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's check that a printed number reads back as D: within
 * DBL_EPSILON of the larger magnitude. */
static gboolean
reads_back (const char *text, double d)
{
  double back = g_ascii_strtod (text, NULL);
  double big = fabs (back) > fabs (d) ? fabs (back) : fabs (d);
  return fabs (back - d) <= big * DBL_EPSILON;
}

static void
put_number (GString *s, double d)
{
  if (isnan (d) || isinf (d))
    {
      g_string_append_len (s, "null", 4);
      return;
    }
  if (fabs (d) < 1e15 && d == floor (d))
    {
      /* The digits of an integral value below 10^15: what %1.15g prints
       * (at most 15 digits, no exponent), -0 as 0 as cJSON does. */
      gint64 v = (gint64) d;
      char buf[24], *e = buf + sizeof buf, *p = e;
      guint64 u = v < 0 ? (guint64) -v : (guint64) v;
      do
        *--p = (char) ('0' + u % 10);
      while ((u /= 10) != 0);
      if (v < 0)
        *--p = '-';
      g_string_append_len (s, p, e - p);
      return;
    }
  char buf[32];
  g_ascii_formatd (buf, sizeof buf, "%1.15g", d);
  if (!reads_back (buf, d))
    g_ascii_formatd (buf, sizeof buf, "%1.17g", d);
  g_string_append (s, buf);
}

/* The escapes cJSON writes by name; the other control characters are
 * written as \u00XX. */
static const char named_escape[] = {
  ['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

/* A string as cJSON quotes it: ", \ and the control characters escaped,
 * every other byte as it is. */
static void
put_string (GString *s, const char *str)
{
  g_string_append_c (s, '"');
  if (str != NULL)
    {
      const char *run = str;
      for (const char *p = str; *p; p++)
        {
          unsigned char c = (unsigned char) *p;
          if (c > 31 && c != '"' && c != '\\')
            continue;
          g_string_append_len (s, run, p - run);
          run = p + 1;
          if (named_escape[c] != 0)
            {
              g_string_append_c (s, '\\');
              g_string_append_c (s, named_escape[c]);
            }
          else
            g_string_append_printf (s, "\\u%04x", c);
        }
      g_string_append (s, run);
    }
  g_string_append_c (s, '"');
}

static void
put_tabs (GString *s, guint n)
{
  for (guint i = 0; i < n; i++)
    g_string_append_c (s, '\t');
}

/* ITEM at DEPTH (the levels of objects and arrays around it). */
static gboolean
put_value (GString *s, const cJSON *item, guint depth, gboolean fmt)
{
  switch (item->type & 0xff)
    {
    case cJSON_NULL:
      g_string_append_len (s, "null", 4);
      return TRUE;
    case cJSON_False:
      g_string_append_len (s, "false", 5);
      return TRUE;
    case cJSON_True:
      g_string_append_len (s, "true", 4);
      return TRUE;
    case cJSON_Number:
      put_number (s, item->valuedouble);
      return TRUE;
    case cJSON_String:
      put_string (s, item->valuestring);
      return TRUE;
    case cJSON_Raw:
      if (item->valuestring == NULL)
        return FALSE;
      g_string_append (s, item->valuestring);
      return TRUE;
    case cJSON_Array:
      g_string_append_c (s, '[');
      for (const cJSON *c = item->child; c != NULL; c = c->next)
        {
          if (!put_value (s, c, depth + 1, fmt))
            return FALSE;
          if (c->next != NULL)
            g_string_append_len (s, ", ", fmt ? 2 : 1);
        }
      g_string_append_c (s, ']');
      return TRUE;
    case cJSON_Object:
      g_string_append_len (s, "{\n", fmt ? 2 : 1);
      for (const cJSON *c = item->child; c != NULL; c = c->next)
        {
          if (fmt)
            put_tabs (s, depth + 1);
          put_string (s, c->string);
          g_string_append_len (s, ":\t", fmt ? 2 : 1);
          if (!put_value (s, c, depth + 1, fmt))
            return FALSE;
          if (c->next != NULL)
            g_string_append_c (s, ',');
          if (fmt)
            g_string_append_c (s, '\n');
        }
      if (fmt)
        put_tabs (s, depth);
      g_string_append_c (s, '}');
      return TRUE;
    default:
      return FALSE;   /* cJSON_Invalid */
    }
}

char *
jsonw_print (const cJSON *item, gboolean formatted)
{
  g_return_val_if_fail (item != NULL, NULL);
  GString *s = g_string_sized_new (4096);
  if (!put_value (s, item, 0, formatted))
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  return g_string_free (s, FALSE);
}

char *
jsonw_quote (const char *str)
{
  GString *s = g_string_sized_new (str ? strlen (str) + 2 : 2);
  put_string (s, str);
  return g_string_free (s, FALSE);
}
