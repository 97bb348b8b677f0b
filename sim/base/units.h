/* units.h — sizes, bandwidths and times with units (SPEC section 4).
 * Sizes: B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of 1024).
 * Rates: B/s KB/s MB/s GB/s TB/s (and KiB/s ... TiB/s). Times: ns us ms s.
 * A bare number is bytes, bytes/s or ns. Parsers accept an optional space
 * between number and unit and a fractional number ("1.5GiB"). */
#pragma once

#include <glib.h>

#define VS_UNITS_ERROR (units_error_quark ())
GQuark units_error_quark (void);

gboolean units_parse_bytes (const char *s, guint64 *out, GError **error);
/* As units_parse_bytes, but a bare integer is a number of bytes (for
 * formats documented so, like a NAME,BYTES table). */
gboolean units_parse_bytes_bare (const char *s, guint64 *out, GError **error);
gboolean units_parse_rate (const char *s, double *out_bytes_per_s, GError **error);
gboolean units_parse_time (const char *s, double *out_ns, GError **error);

/* (transfer full) Human forms: "24 GiB", "1.5 MiB", "936 GB/s", "1.23 ms". */
typedef enum { VS_UNITS_SIZE, VS_UNITS_RATE, VS_UNITS_TIME } VsUnitKind;
/* The accepted units of KIND, for messages: "B KB MB ...". */
const char *units_accepted (VsUnitKind kind);

char *units_format_bytes (guint64 bytes);
char *units_format_rate (double bytes_per_s);
char *units_format_time (double ns);

/* (transfer full) Exact forms that parse back to the same value, for
 * configs written out: the largest unit that divides the value exactly
 * ("80GiB", "24GB", "2039GB/s", "405ns", "10us"), else the bare base unit
 * ("12345B", "1753540000000B/s"). */
char *units_format_bytes_exact (guint64 bytes);
char *units_format_rate_exact (double bytes_per_s);
char *units_format_time_exact (double ns);
