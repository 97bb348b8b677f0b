/* test-jsonw.c — jsonw_print writes what cJSON_Print writes: the layout
 * and every kind of number, by hand, then random trees against the
 * installed cJSON's own printer. */
#include "base/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void
check_print (const cJSON *j, gboolean fmt, const char *want)
{
  g_autofree char *got = jsonw_print (j, fmt);
  g_assert_cmpstr (got, ==, want);
}

static char *
number (double d)
{
  cJSON *j = cJSON_CreateNumber (d);
  char *s = jsonw_print (j, FALSE);
  cJSON_Delete (j);
  return s;
}

static void
check_number (double d, const char *want)
{
  g_autofree char *got = number (d);
  g_assert_cmpstr (got, ==, want);
}

/* Numbers as cJSON 1.7.15 prints them, worked by hand: integral values
 * below 10^15 as digits; else %1.15g when it reads back within
 * DBL_EPSILON relative, else %1.17g. */
static void
test_numbers (void)
{
  check_number (0, "0");
  check_number (-0.0, "0");
  check_number (7, "7");
  check_number (-5, "-5");
  check_number (2147483648.0, "2147483648");            /* beyond an int */
  check_number (5163108336.0, "5163108336");            /* nanoseconds */
  check_number (999999999999999.0, "999999999999999");  /* 15 digits */
  check_number (-999999999999999.0, "-999999999999999");
  check_number (1e15, "1e+15");                         /* %1.15g's exponent */
  check_number (9007199254740992.0, "9.00719925474099e+15");   /* 2^53: 2 off, within 2^53 x eps */
  check_number (9007199254740993.0 * 3, "27021597764222976");  /* 6 off: %1.17g */
  check_number (0.1, "0.1");
  check_number (1.5, "1.5");
  check_number (1.0 / 3, "0.33333333333333331");        /* 15 digits do not read back */
  check_number (1.4395746568351688, "1.4395746568351688");
  check_number (1e-7, "1e-07");
  check_number (-2.5e300, "-2.5e+300");
  check_number (NAN, "null");
  check_number (INFINITY, "null");
  check_number (-INFINITY, "null");
}

static void
test_layout (void)
{
  cJSON *j = cJSON_CreateObject ();
  cJSON_AddNumberToObject (j, "n", 1);
  cJSON_AddStringToObject (j, "s", "a\"b\\c\n\t\x01\x1f\x7f\xc3\xa9/");
  cJSON *o = cJSON_AddObjectToObject (j, "o");
  cJSON_AddTrueToObject (o, "t");
  cJSON_AddObjectToObject (o, "empty");
  cJSON *a = cJSON_AddArrayToObject (j, "a");
  cJSON_AddItemToArray (a, cJSON_CreateNumber (2));
  cJSON *in = cJSON_CreateObject ();
  cJSON_AddNullToObject (in, "z");
  cJSON_AddItemToArray (a, in);
  cJSON_AddItemToArray (a, cJSON_CreateArray ());
  cJSON_AddFalseToObject (j, "f");
  check_print (j, TRUE,
               "{\n"
               "\t\"n\":\t1,\n"
               "\t\"s\":\t\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\x7f\xc3\xa9/\",\n"
               "\t\"o\":\t{\n"
               "\t\t\"t\":\ttrue,\n"
               "\t\t\"empty\":\t{\n"
               "\t\t}\n"
               "\t},\n"
               "\t\"a\":\t[2, {\n"
               "\t\t\t\"z\":\tnull\n"
               "\t\t}, []],\n"
               "\t\"f\":\tfalse\n"
               "}");
  check_print (j, FALSE,
               "{\"n\":1,\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\x7f\xc3\xa9/\",\"o\":{\"t\":true,\"empty\":{}},"
               "\"a\":[2,{\"z\":null},[]],\"f\":false}");
  cJSON_Delete (j);
  g_autofree char *q = jsonw_quote ("say \"hi\"\r\b\f");
  g_assert_cmpstr (q, ==, "\"say \\\"hi\\\"\\r\\b\\f\"");
  g_autofree char *e = jsonw_quote (NULL);
  g_assert_cmpstr (e, ==, "\"\"");
  cJSON *r = cJSON_CreateRaw ("[1,2]");
  check_print (r, TRUE, "[1,2]");   /* a raw item as it is */
  cJSON_free (r->valuestring);
  r->valuestring = NULL;
  g_assert_null (jsonw_print (r, TRUE));   /* as cJSON_Print: nothing to print */
  cJSON_Delete (r);
}

/* A random value: numbers of every size and sign (integers, fractions,
 * near 2^53, tiny, huge), strings with control bytes, nested objects and
 * arrays. */
static cJSON *
random_value (GRand *g, int depth)
{
  int kind = g_rand_int_range (g, 0, depth > 3 ? 5 : 8);
  switch (kind)
    {
    case 0:
      return cJSON_CreateNull ();
    case 1:
      return cJSON_CreateBool (g_rand_boolean (g));
    case 2:
      {
        char s[12];
        for (int i = 0; i < 11; i++)
          s[i] = (char) g_rand_int_range (g, 1, 128);
        s[11] = 0;
        return cJSON_CreateString (s);
      }
    case 3:
    case 4:
      {
        double d;
        switch (g_rand_int_range (g, 0, 6))
          {
          case 0:
            d = (double) g_rand_int_range (g, -1000000, 1000000);
            break;
          case 1:
            d = floor (g_rand_double_range (g, -2e16, 2e16));
            break;
          case 2:
            d = g_rand_double_range (g, -1e6, 1e6);
            break;
          case 3:
            d = ldexp (g_rand_double (g), g_rand_int_range (g, -1000, 1000));
            break;
          case 4:
            d = 9007199254740992.0 + g_rand_int_range (g, -64, 64);
            break;
          default:
            d = g_rand_int_range (g, 0, 100000) / 1000.0;
            break;
          }
        return cJSON_CreateNumber (d);
      }
    case 5:
    case 6:
      {
        cJSON *o = cJSON_CreateObject ();
        for (int i = g_rand_int_range (g, 0, 5); i > 0; i--)
          {
            char key[8];
            g_snprintf (key, sizeof key, "k%d\t", i);
            cJSON_AddItemToObject (o, key, random_value (g, depth + 1));
          }
        return o;
      }
    default:
      {
        cJSON *a = cJSON_CreateArray ();
        for (int i = g_rand_int_range (g, 0, 5); i > 0; i--)
          cJSON_AddItemToArray (a, random_value (g, depth + 1));
        return a;
      }
    }
}

/* What cJSON prints, on 2,000 random trees; the layout above is 1.7.15's
 * (Debian 12's), and the number rule cJSON's since 1.7.14: other versions
 * are skipped. */
static void
test_against_cjson (void)
{
  int major, minor, patch;
  if (sscanf (cJSON_Version (), "%d.%d.%d", &major, &minor, &patch) != 3 || major != 1 || minor != 7
      || patch < 14)
    {
      g_test_skip ("cJSON other than 1.7.14 or later");
      return;
    }
  GRand *g = g_rand_new_with_seed (25);
  for (int i = 0; i < 2000; i++)
    {
      cJSON *j = random_value (g, 0);
      for (int fmt = 0; fmt < 2; fmt++)
        {
          char *want = fmt ? cJSON_Print (j) : cJSON_PrintUnformatted (j);
          g_autofree char *got = jsonw_print (j, fmt);
          g_assert_cmpstr (got, ==, want);
          cJSON_free (want);
        }
      cJSON_Delete (j);
    }
  g_rand_free (g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jsonw/numbers", test_numbers);
  g_test_add_func ("/jsonw/layout", test_layout);
  g_test_add_func ("/jsonw/against-cjson", test_against_cjson);
  return g_test_run ();
}
