/* units.c — parsing and printing sizes, bandwidths and times (SPEC section 4).
 *
 * Units are case-sensitive: "GB" is 10^9 bytes, "GiB" 2^30, "Gb" is an
 * error (bits are not a unit here). A value is a decimal number (digits,
 * optional fraction, optional exponent), an optional space, and a unit;
 * nothing before or after (SPEC 4, docs/config.md). A bare number other
 * than 0 is an error that lists the units: "24" must not quietly mean 24
 * bytes (or a 1 ns series bucket). Integers without fraction or exponent
 * are parsed exactly as integers, so byte counts up to 2^64 - 1 survive;
 * fractional sizes are rounded to the nearest byte. */
#include "base/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK (vs-units-error-quark, units_error)

typedef struct {
  const char *name;
  guint64 mult;
} Unit;

static const Unit size_units[] = {
  { "B", 1 },
  { "KB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull }, { "TB", 1000000000000ull },
  { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
};

static const Unit rate_units[] = {
  { "B/s", 1 },
  { "KB/s", 1000ull }, { "MB/s", 1000000ull }, { "GB/s", 1000000000ull }, { "TB/s", 1000000000000ull },
  { "KiB/s", 1ull << 10 }, { "MiB/s", 1ull << 20 }, { "GiB/s", 1ull << 30 }, { "TiB/s", 1ull << 40 },
};

static const Unit time_units[] = {
  { "ns", 1 }, { "us", 1000ull }, { "ms", 1000000ull }, { "s", 1000000000ull },
};

#define TWO_POW_64 18446744073709551616.0

typedef struct {
  gboolean bare;       /* no unit given */
  gboolean integral;   /* digits only: exact value in ival */
  guint64 ival;
  double dval;
  const Unit *unit;
} Parsed;

static char *
accepted_list (const Unit *units, gsize n)
{
  GString *s = g_string_new (NULL);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? " " : "", units[i].name);
  return g_string_free (s, FALSE);
}

/* Splits S into number and unit. WHAT names the kind ("size", "bandwidth",
 * "time") for messages; a bare number is accepted when BARE_OK or 0. */
static gboolean
parse_value (const char *s, const Unit *units, gsize n_units, const char *what,
             const char *example, gboolean bare_ok, Parsed *out, GError **error)
{
  /* The unit list is for error messages only: built when one is written
   * (a config compile parses some 60 values, and building it for each was
   * a third of a compile's instructions, docs/performance.md). */
  g_autofree char *accepted = NULL;
  const char *p = s;
  gboolean negative = FALSE;

  if (s == NULL)
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "missing %s", what);
      return FALSE;
    }
  if (g_ascii_isspace (*p))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': space before the %s (write it as \"%s\")", s, what, example);
      return FALSE;
    }
  if (*p == '-')
    negative = TRUE, p++; /* refused below unless the number is 0 ("-0") */
  else if (*p == '+')
    p++;

  const char *num = p;
  gsize int_digits = 0, frac_digits = 0;
  gboolean integral = TRUE;
  while (g_ascii_isdigit (*p))
    p++, int_digits++;
  if (*p == '.')
    {
      integral = FALSE;
      p++;
      while (g_ascii_isdigit (*p))
        p++, frac_digits++;
    }
  if (int_digits + frac_digits == 0)
    {
      g_set_error (error, VS_UNITS_ERROR, 0,
                   "'%s' is not a %s: expected a number and a unit such as \"%s\" (units: %s)",
                   s, what, example, accepted = accepted_list (units, n_units));
      return FALSE;
    }
  if (*p == 'e' || *p == 'E')
    {
      const char *q = p + 1;
      if (*q == '+' || *q == '-')
        q++;
      if (g_ascii_isdigit (*q))
        {
          integral = FALSE;
          while (g_ascii_isdigit (*q))
            q++;
          p = q;
        }
    }
  const char *num_end = p;

  if (*p == ' ')
    p++;
  const char *unit = p;
  const char *unit_end = unit + strlen (unit);
  if (p > num_end ? unit_end == unit : unit_end > unit && g_ascii_isspace (unit_end[-1]))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': text after the unit (a %s is a number, an optional space "
                   "and a unit, such as \"%s\")", s, what, example);
      return FALSE;
    }

  out->unit = NULL;
  out->bare = unit_end == unit;
  if (out->bare)
    out->unit = &units[0];   /* bare number: the base unit, if allowed (below) */
  else
    for (gsize i = 0; i < n_units; i++)
      if (strlen (units[i].name) == (gsize) (unit_end - unit)
          && strncmp (units[i].name, unit, unit_end - unit) == 0)
        out->unit = &units[i];
  if (out->unit == NULL)
    {
      g_autofree char *u = g_strndup (unit, unit_end - unit);
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': unknown %s unit '%s' (units: %s; case matters)",
                   s, what, u, accepted = accepted_list (units, n_units));
      return FALSE;
    }

  g_autofree char *numtext = g_strndup (num, num_end - num);
  out->integral = integral;
  out->ival = 0;
  if (integral)
    {
      /* Exact: digits only. */
      guint64 v = 0;
      for (const char *d = numtext; *d; d++)
        {
          guint digit = (guint) (*d - '0');
          if (v > (G_MAXUINT64 - digit) / 10)
            {
              g_set_error (error, VS_UNITS_ERROR, 0, "'%s': %s too large (the number must be below 2^64)", s, what);
              return FALSE;
            }
          v = v * 10 + digit;
        }
      out->ival = v;
      out->dval = (double) v;
    }
  else
    out->dval = g_ascii_strtod (numtext, NULL);
  if (!isfinite (out->dval))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': %s too large", s, what);
      return FALSE;
    }
  /* 1e-400 is not 0: strtod underflows it. */
  if (out->dval == 0 && strpbrk (numtext, "123456789") != NULL
      && (strpbrk (numtext, "eE") == NULL || strpbrk (numtext, "123456789") < strpbrk (numtext, "eE")))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': %s too small to represent (it is not 0)", s, what);
      return FALSE;
    }
  if (negative && out->dval != 0)
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': a %s cannot be negative", s, what);
      return FALSE;
    }
  if (out->bare && !bare_ok && out->dval != 0)
    {
      const char *eg_unit = example + strspn (example, "0123456789.");
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': a %s needs a unit, such as \"%s%s\" or \"%s%s\" (units: %s; "
                   "only 0 may go without one)", s, what, numtext, eg_unit, numtext, units[0].name,
                   accepted = accepted_list (units, n_units));
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_bytes (const char *s, gboolean bare_ok, guint64 *out, GError **error)
{
  Parsed p;
  if (!parse_value (s, size_units, G_N_ELEMENTS (size_units), "size", "80GiB", bare_ok, &p, error))
    return FALSE;
  if (p.integral)
    {
      if (p.unit->mult > 1 && p.ival > G_MAXUINT64 / p.unit->mult)
        goto too_large;
      *out = p.ival * p.unit->mult;
      return TRUE;
    }
  double v = p.dval * (double) p.unit->mult;
  if (p.unit->mult == 1 && v != floor (v))
    {
      g_set_error (error, VS_UNITS_ERROR, 0,
                   "'%s': a size in bytes must be a whole number", s);
      return FALSE;
    }
  v = floor (v + 0.5);
  if (!(v < TWO_POW_64))
    goto too_large;
  *out = (guint64) v;
  return TRUE;

too_large:
  g_set_error (error, VS_UNITS_ERROR, 0, "'%s': size too large (at most 18446744073709551615B, 2^64 - 1 bytes)", s);
  return FALSE;
}

gboolean
units_parse_bytes (const char *s, guint64 *out, GError **error)
{
  return parse_bytes (s, FALSE, out, error);
}

gboolean
units_parse_bytes_bare (const char *s, guint64 *out, GError **error)
{
  return parse_bytes (s, TRUE, out, error);
}

gboolean
units_parse_rate (const char *s, double *out_bytes_per_s, GError **error)
{
  Parsed p;
  if (!parse_value (s, rate_units, G_N_ELEMENTS (rate_units), "bandwidth", "936GB/s", FALSE, &p, error))
    return FALSE;
  double v = p.dval * (double) p.unit->mult;
  if (!(v < TWO_POW_64))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': bandwidth too large (limit 2^64 B/s)", s);
      return FALSE;
    }
  *out_bytes_per_s = v;
  return TRUE;
}

gboolean
units_parse_time (const char *s, double *out_ns, GError **error)
{
  Parsed p;
  if (!parse_value (s, time_units, G_N_ELEMENTS (time_units), "time", "10us", FALSE, &p, error))
    return FALSE;
  /* Times become integer ns in the replay, where every time stays below
   * 2^63 (as trace times do). */
  double v = p.dval * (double) p.unit->mult;
  if (!(v < TWO_POW_64 / 2))
    {
      g_set_error (error, VS_UNITS_ERROR, 0, "'%s': time too large (below 2^63 ns, 292 years)", s);
      return FALSE;
    }
  *out_ns = v;
  return TRUE;
}

const char *
units_accepted (VsUnitKind kind)
{
  static const char *const lists[] = {
    "B KB MB GB TB KiB MiB GiB TiB", "B/s KB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s TiB/s", "ns us ms s",
  };
  g_return_val_if_fail ((guint) kind < G_N_ELEMENTS (lists), "");
  return lists[kind];
}

/* ---- printing ---- */

/* V with SIG significant digits, no exponent, no trailing zeros. */
static char *
fmt_num (double v, int sig)
{
  char buf[64];
  if (fabs (v) >= pow (10, sig))
    g_snprintf (buf, sizeof buf, "%.0f", v);
  else
    {
      g_snprintf (buf, sizeof buf, "%.*g", sig, v);
      if (strchr (buf, 'e') != NULL)
        g_snprintf (buf, sizeof buf, "%.*f", sig, v);
      if (strchr (buf, '.') != NULL && strchr (buf, 'e') == NULL)
        {
          char *end = buf + strlen (buf) - 1;
          while (*end == '0')
            *end-- = '\0';
          if (*end == '.')
            *end = '\0';
        }
    }
  return g_strdup (buf);
}

static char *
fmt_with (double v, const char *unit, int sig)
{
  g_autofree char *n = fmt_num (v, sig);
  return g_strdup_printf ("%s %s", n, unit);
}

char *
units_format_bytes (guint64 bytes)
{
  static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  guint i = 0;
  double v = (double) bytes;
  while (i + 1 < G_N_ELEMENTS (names) && v >= 1024.0)
    v /= 1024.0, i++;
  if (i == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " B", bytes);
  /* Round first, so 1023.99 MiB prints as "1 GiB", not "1024 MiB". */
  if (i + 1 < G_N_ELEMENTS (names) && v >= 1023.95)
    v /= 1024.0, i++;
  return fmt_with (v, names[i], 4);
}

char *
units_format_rate (double bytes_per_s)
{
  /* Decimal units; GB/s runs up to 10000 so GPU memory bandwidths read as
   * datasheets print them ("2039 GB/s", not "2.039 TB/s"). */
  static const char *const names[] = { "B/s", "KB/s", "MB/s", "GB/s", "TB/s" };
  if (!isfinite (bytes_per_s))
    return g_strdup_printf ("%g B/s", bytes_per_s);
  guint i = 0;
  double v = bytes_per_s;
  while (i < 3 && fabs (v) >= 999.95)
    v /= 1000.0, i++;
  if (i == 3 && fabs (v) >= 9999.5)
    v /= 1000.0, i++;
  return fmt_with (v, names[i], 4);
}

char *
units_format_time (double ns)
{
  if (!isfinite (ns))
    return g_strdup_printf ("%g ns", ns);
  double a = fabs (ns);
  if (a < 999.5)
    return fmt_with (ns, "ns", 3);
  if (a < 999.5e3)
    return fmt_with (ns / 1e3, "us", 3);
  if (a < 999.5e6)
    return fmt_with (ns / 1e6, "ms", 3);
  return fmt_with (ns / 1e9, "s", 3);
}

/* ---- exact printing (for configs written back out) ---- */

/* The shortest "<number><unit>" that parses back to exactly V (the
 * parsers compute number * unit, so the check repeats that product). */
static char *
exact_with (const Unit *units, gsize n, double v, gboolean whole)
{
  char *best = NULL;
  for (gsize i = 0; i < n; i++)
    {
      if (v == 0 && units[i].mult != 1)
        continue;
      double q = v / (double) units[i].mult;
      for (int dec = 0; dec <= 17; dec++)
        {
          char num[G_ASCII_DTOSTR_BUF_SIZE], fmt[16];
          g_snprintf (fmt, sizeof fmt, "%%.%df", dec);
          g_ascii_formatd (num, sizeof num, fmt, q);
          /* No exponents: the parser takes them, but people read this. */
          if (strchr (num, 'e') != NULL)
            continue;
          double back = g_ascii_strtod (num, NULL) * (double) units[i].mult;
          if (whole)
            back = floor (back + 0.5);
          if (back != v)
            continue;
          if (strchr (num, '.') != NULL)
            {
              char *end = num + strlen (num) - 1;
              while (*end == '0')
                *end-- = '\0';
              if (*end == '.')
                *end = '\0';
            }
          char *cand = g_strdup_printf ("%s%s", num, units[i].name);
          if (best == NULL || strlen (cand) < strlen (best))
            {
              g_free (best);
              best = cand;
            }
          else
            g_free (cand);
          break;
        }
    }
  if (best == NULL)
    {
      char num[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (num, sizeof num, "%.17g", v);
      best = g_strdup_printf ("%s%s", num, units[0].name);
    }
  return best;
}

char *
units_format_bytes_exact (guint64 bytes)
{
  /* Byte counts beyond 2^53 are not all doubles: print them whole. */
  if (bytes > (1ull << 53))
    return g_strdup_printf ("%" G_GUINT64_FORMAT "B", bytes);
  return exact_with (size_units, G_N_ELEMENTS (size_units), (double) bytes, TRUE);
}

char *
units_format_rate_exact (double bytes_per_s)
{
  return exact_with (rate_units, G_N_ELEMENTS (rate_units), bytes_per_s, FALSE);
}

char *
units_format_time_exact (double ns)
{
  return exact_with (time_units, G_N_ELEMENTS (time_units), ns, FALSE);
}
