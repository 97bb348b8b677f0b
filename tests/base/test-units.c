/* test-units.c — parsing and printing sizes, bandwidths and times. */
#include <string.h>

#include "base/units.h"

static void
test_bytes_table (void)
{
  static const struct { const char *s; guint64 v; } ok[] = {
    { "0", 0 },
    { "-0", 0 },                               /* negative zero is zero */
    { "0.0", 0 },
    { "0e-400", 0 },
    { "512B", 512 },
    { "512 B", 512 },
    { "1KB", 1000 },
    { "1MB", 1000000 },
    { "24GB", 24000000000ull },
    { "2TB", 2000000000000ull },
    { "1KiB", 1024 },
    { "2MiB", 2097152 },
    { "80GiB", 85899345920ull },
    { "80 GiB", 85899345920ull },
    { "1TiB", 1099511627776ull },
    { "1.5GiB", 1610612736ull },
    { "1.5 MiB", 1572864 },
    { "0.5KB", 500 },
    { ".5KiB", 512 },
    { "2.KiB", 2048 },
    { "1e3B", 1000 },
    { "1e3 MiB", 1048576000ull },
    { "2.5e1GB", 25000000000ull },
    { "+4KiB", 4096 },
    { "0.3KB", 300 },                          /* 300.00000000000006, rounded */
    { "18446744073709551615B", G_MAXUINT64 },
    { "16777215TiB", 16777215ull << 40 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      GError *error = NULL;
      guint64 v = 1;
      gboolean r = units_parse_bytes (ok[i].s, &v, &error);
      g_assert_no_error (error);
      g_assert_true (r);
      if (v != ok[i].v)
        g_error ("'%s': got %" G_GUINT64_FORMAT ", want %" G_GUINT64_FORMAT, ok[i].s, v, ok[i].v);
    }
}

/* A NAME,BYTES table may give bare byte counts. */
static void
test_bytes_bare (void)
{
  guint64 v = 0;
  GError *error = NULL;
  g_assert_true (units_parse_bytes_bare ("18446744073709551615", &v, &error)); /* exact */
  g_assert_cmpuint (v, ==, G_MAXUINT64);
  g_assert_true (units_parse_bytes_bare ("512", &v, &error));
  g_assert_cmpuint (v, ==, 512);
  g_assert_true (units_parse_bytes_bare ("2KiB", &v, &error));
  g_assert_cmpuint (v, ==, 2048);
  g_assert_no_error (error);
  g_assert_false (units_parse_bytes_bare ("512 ", &v, &error));
  g_clear_error (&error);
  g_assert_false (units_parse_bytes ("512", &v, &error));
  g_clear_error (&error);
}

static void
expect_bytes_error (const char *s, const char *part1, const char *part2)
{
  GError *error = NULL;
  guint64 v = 0;
  g_assert_false (units_parse_bytes (s, &v, &error));
  g_assert_error (error, VS_UNITS_ERROR, 0);
  if (strstr (error->message, part1) == NULL || (part2 && strstr (error->message, part2) == NULL))
    g_error ("'%s': message '%s' lacks '%s' / '%s'", s, error->message, part1, part2 ? part2 : "");
  g_error_free (error);
}

static void
test_bytes_errors (void)
{
  /* Each message quotes the bad text; unit errors list the units. */
  expect_bytes_error ("-1GiB", "'-1GiB'", "negative");
  expect_bytes_error ("24GX", "'24GX'", "B KB MB GB TB KiB MiB GiB TiB");
  expect_bytes_error ("24gb", "unknown size unit 'gb'", "case matters");
  expect_bytes_error ("24Gb", "unknown size unit 'Gb'", NULL);
  expect_bytes_error ("24 GiB/s", "unknown size unit 'GiB/s'", NULL);
  expect_bytes_error ("24GiBx", "'GiBx'", NULL);
  expect_bytes_error ("GiB", "'GiB' is not a size", "80GiB");
  expect_bytes_error ("", "is not a size", NULL);
  expect_bytes_error ("nan", "'nan' is not a size", NULL);
  expect_bytes_error ("inf", "'inf' is not a size", NULL);
  expect_bytes_error ("1.5B", "whole number", NULL);
  /* SPEC 4: a bare number other than 0 needs a unit. */
  expect_bytes_error ("24", "'24': a size needs a unit, such as \"24GiB\"", "(units: B KB MB GB TB KiB MiB GiB TiB; only 0");
  expect_bytes_error ("1e3", "needs a unit", NULL);
  expect_bytes_error ("-5", "cannot be negative", NULL);
  expect_bytes_error ("-0.5GiB", "cannot be negative", NULL);
  /* Nothing before or after (docs/config.md); one space between. */
  expect_bytes_error ("1GiB ", "'1GiB ': text after the unit", NULL);
  expect_bytes_error ("  7 GB  ", "space before the size", NULL);
  expect_bytes_error ("7  GB", "unknown size unit ' GB'", NULL);
  /* Underflow is not 0. */
  expect_bytes_error ("1e-400B", "'1e-400B': size too small to represent (it is not 0)", NULL);
  expect_bytes_error ("18446744073709551616B", "too large", NULL);
  expect_bytes_error ("16777216TiB", "too large", NULL);
  expect_bytes_error ("20000000000000000000B", "too large", NULL);
  expect_bytes_error ("1e30B", "too large", NULL);
  expect_bytes_error ("1e400B", "too large", NULL);
  expect_bytes_error ("1 2 GiB", "unknown size unit '2 GiB'", NULL);
  expect_bytes_error ("0x10", "unknown size unit 'x10'", NULL);
}

static void
test_rate_table (void)
{
  static const struct { const char *s; double v; } ok[] = {
    { "0", 0 },
    { "5B/s", 5 },
    { "1KB/s", 1e3 },
    { "12MB/s", 12e6 },
    { "936GB/s", 936e9 },
    { "936 GB/s", 936e9 },
    { "2039GB/s", 2039e9 },
    { "31.5GB/s", 31.5e9 },
    { "204.8GB/s", 204.8e9 },
    { "5.3TB/s", 5.3e12 },
    { "1KiB/s", 1024 },
    { "1MiB/s", 1048576 },
    { "2GiB/s", 2147483648.0 },
    { "1TiB/s", 1099511627776.0 },
    { "1.5B/s", 1.5 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      GError *error = NULL;
      double v = -1;
      g_assert_true (units_parse_rate (ok[i].s, &v, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat_with_epsilon (v, ok[i].v, ok[i].v * 1e-15 + 1e-12);
    }
  static const struct { const char *s, *part; } bad[] = {
    { "936GB", "unknown bandwidth unit 'GB'" },
    { "936Gbps", "B/s KB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s TiB/s" },
    { "936gb/s", "'936gb/s'" },
    { "-1GB/s", "negative" },
    { "fast", "is not a bandwidth" },
    { "1e300TB/s", "too large" },
    { "1000", "'1000': a bandwidth needs a unit, such as \"1000GB/s\" (units: B/s KB/s" },
    { "1e-400GB/s", "too small to represent" },
    { "1GB/s\n", "text after the unit" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      GError *error = NULL;
      double v;
      g_assert_false (units_parse_rate (bad[i].s, &v, &error));
      g_assert_error (error, VS_UNITS_ERROR, 0);
      if (strstr (error->message, bad[i].part) == NULL)
        g_error ("'%s': message '%s' lacks '%s'", bad[i].s, error->message, bad[i].part);
      g_error_free (error);
    }
}

static void
test_time_table (void)
{
  static const struct { const char *s; double v; } ok[] = {
    { "0", 0 }, { "0s", 0 }, { "-0us", 0 }, { "405ns", 405 }, { "405 ns", 405 },
    { "10us", 10e3 }, { "2.5us", 2500 }, { "45us", 45e3 }, { "3ms", 3e6 },
    { "1.5s", 1.5e9 }, { "0.25ns", 0.25 }, { "1e2us", 1e5 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      GError *error = NULL;
      double v = -1;
      g_assert_true (units_parse_time (ok[i].s, &v, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat_with_epsilon (v, ok[i].v, 1e-9);
    }
  static const struct { const char *s, *part; } bad[] = {
    { "10 µs", "ns us ms s" },
    { "10US", "unknown time unit 'US'" },
    { "10 sec", "unknown time unit 'sec'" },
    { "10m", "unknown time unit 'm'" },
    { "-5ns", "negative" },
    { "soon", "'soon' is not a time" },
    { "1e20s", "too large" },
    { "1", "'1': a time needs a unit, such as \"1us\" (units: ns us ms s; only 0 may go without one)" },
    { "18446744073709551615ns", "'18446744073709551615ns': time too large (below 2^63 ns, 292 years)" },
    { "9223372036854775807ns", "time too large" },
    { "1e-400s", "too small to represent" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      GError *error = NULL;
      double v;
      g_assert_false (units_parse_time (bad[i].s, &v, &error));
      if (strstr (error->message, bad[i].part) == NULL)
        g_error ("'%s': message '%s' lacks '%s'", bad[i].s, error->message, bad[i].part);
      g_error_free (error);
    }
}

#define CHECK_FMT(call, want)                   \
  do {                                          \
    g_autofree char *got_ = (call);             \
    g_assert_cmpstr (got_, ==, want);           \
  } while (0)

static void
test_format (void)
{
  CHECK_FMT (units_format_bytes (0), "0 B");
  CHECK_FMT (units_format_bytes (512), "512 B");
  CHECK_FMT (units_format_bytes (1023), "1023 B");
  CHECK_FMT (units_format_bytes (1024), "1 KiB");
  CHECK_FMT (units_format_bytes (1572864), "1.5 MiB");
  CHECK_FMT (units_format_bytes (24ull << 30), "24 GiB");
  CHECK_FMT (units_format_bytes (80ull << 30), "80 GiB");
  CHECK_FMT (units_format_bytes (24000000000ull), "22.35 GiB");
  CHECK_FMT (units_format_bytes ((1ull << 30) - 1), "1 GiB");
  CHECK_FMT (units_format_bytes (1ull << 40), "1 TiB");
  CHECK_FMT (units_format_bytes (2048ull << 40), "2048 TiB");

  CHECK_FMT (units_format_rate (0), "0 B/s");
  CHECK_FMT (units_format_rate (500), "500 B/s");
  CHECK_FMT (units_format_rate (936e9), "936 GB/s");
  CHECK_FMT (units_format_rate (2039e9), "2039 GB/s");
  CHECK_FMT (units_format_rate (2039e9 * 0.86), "1754 GB/s");
  CHECK_FMT (units_format_rate (31.5e9), "31.5 GB/s");
  CHECK_FMT (units_format_rate (25.2e9), "25.2 GB/s");
  CHECK_FMT (units_format_rate (12.5e6), "12.5 MB/s");
  CHECK_FMT (units_format_rate (999.99e6), "1 GB/s");
  CHECK_FMT (units_format_rate (12e12), "12 TB/s");

  CHECK_FMT (units_format_time (0), "0 ns");
  CHECK_FMT (units_format_time (405), "405 ns");
  CHECK_FMT (units_format_time (1234567), "1.23 ms");
  CHECK_FMT (units_format_time (45e3), "45 us");
  CHECK_FMT (units_format_time (2.5e9), "2.5 s");
  CHECK_FMT (units_format_time (999.9e3), "1 ms");
  CHECK_FMT (units_format_time (7200e9), "7200 s");
}

static void
test_format_exact (void)
{
  CHECK_FMT (units_format_bytes_exact (0), "0B");
  CHECK_FMT (units_format_bytes_exact (80ull << 30), "80GiB");
  CHECK_FMT (units_format_bytes_exact (24000000000ull), "24GB");
  CHECK_FMT (units_format_bytes_exact (1610612736ull), "1.5GiB");
  CHECK_FMT (units_format_bytes_exact (1000), "1KB");
  CHECK_FMT (units_format_bytes_exact (12345), "12345B");
  CHECK_FMT (units_format_bytes_exact (G_MAXUINT64), "18446744073709551615B");
  CHECK_FMT (units_format_rate_exact (31.5e9), "31.5GB/s");
  CHECK_FMT (units_format_rate_exact (2039e9), "2039GB/s");
  CHECK_FMT (units_format_rate_exact (0), "0B/s");
  CHECK_FMT (units_format_time_exact (0), "0ns");
  CHECK_FMT (units_format_time_exact (10e3), "10us");
  CHECK_FMT (units_format_time_exact (405), "405ns");

  /* Whatever is printed parses back to the same value. */
  static const double rates[] = { 2039e9 * 0.86, 1.0 / 3.0, 204.8e9, 15.75e9, 123456789.125 };
  for (gsize i = 0; i < G_N_ELEMENTS (rates); i++)
    {
      g_autofree char *s = units_format_rate_exact (rates[i]);
      double back;
      g_assert_true (units_parse_rate (s, &back, NULL));
      g_assert_cmpfloat (back, ==, rates[i]);
    }
  static const double times[] = { 1.0 / 3.0, 45e3, 1234567.5, 0.25 };
  for (gsize i = 0; i < G_N_ELEMENTS (times); i++)
    {
      g_autofree char *s = units_format_time_exact (times[i]);
      double back;
      g_assert_true (units_parse_time (s, &back, NULL));
      g_assert_cmpfloat (back, ==, times[i]);
    }
  static const guint64 sizes[] = { 1, 999, 3ull << 29, 141ull << 30, 12345678901ull, (1ull << 53) + 1 };
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree char *s = units_format_bytes_exact (sizes[i]);
      guint64 back;
      g_assert_true (units_parse_bytes (s, &back, NULL));
      g_assert_cmpuint (back, ==, sizes[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/units/bytes", test_bytes_table);
  g_test_add_func ("/units/bytes-bare", test_bytes_bare);
  g_test_add_func ("/units/bytes-errors", test_bytes_errors);
  g_test_add_func ("/units/rate", test_rate_table);
  g_test_add_func ("/units/time", test_time_table);
  g_test_add_func ("/units/format", test_format);
  g_test_add_func ("/units/format-exact", test_format_exact);
  return g_test_run ();
}
