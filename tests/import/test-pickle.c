/* test-pickle.c — the plain-data unpickler (sim/import/pickle.c): pickles
 * made by CPython 3 pickle.dumps (protocols 2 and 4) read back to the same
 * values, and hostile inputs refused with the byte offset of the opcode. */
#include <string.h>

#include "import/pickle.h"
#include "trace/trace.h"

/* pickle.dumps({'a': [1, 2.5, 'x', None, True, False, (1, 2)], 'b': -1,
 *               'c': 2**64 - 1, 'd': -2**63, 'e': 300, 'f': 70000, 'u': 'é'}, protocol=P) */
static const char P2[] = "\x80\x02\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x61\x71\x01\x5d\x71\x02\x28\x4b\x01\x47\x40\x04\x00\x00\x00\x00\x00\x00\x58\x01\x00\x00\x00\x78\x71\x03\x4e\x88\x89\x4b\x01\x4b\x02\x86\x71\x04\x65\x58\x01\x00\x00\x00\x62\x71\x05\x4a\xff\xff\xff\xff\x58\x01\x00\x00\x00\x63\x71\x06\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00\x58\x01\x00\x00\x00\x64\x71\x07\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x58\x01\x00\x00\x00\x65\x71\x08\x4d\x2c\x01\x58\x01\x00\x00\x00\x66\x71\x09\x4a\x70\x11\x01\x00\x58\x01\x00\x00\x00\x75\x71\x0a\x58\x02\x00\x00\x00\xc3\xa9\x71\x0b\x75\x2e";
static const char P4[] = "\x80\x04\x95\x64\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x61\x94\x5d\x94\x28\x4b\x01\x47\x40\x04\x00\x00\x00\x00\x00\x00\x8c\x01\x78\x94\x4e\x88\x89\x4b\x01\x4b\x02\x86\x94\x65\x8c\x01\x62\x94\x4a\xff\xff\xff\xff\x8c\x01\x63\x94\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00\x8c\x01\x64\x94\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x8c\x01\x65\x94\x4d\x2c\x01\x8c\x01\x66\x94\x4a\x70\x11\x01\x00\x8c\x01\x75\x94\x8c\x02\xc3\xa9\x94\x75\x2e";
/* {'x': s, 'y': s} with s = [1, 2]: the second is a memo reference (BINGET). */
static const char SHARED[] = "\x80\x04\x95\x17\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x78\x94\x5d\x94\x28\x4b\x01\x4b\x02\x65\x8c\x01\x79\x94\x68\x02\x75\x2e";
/* collections.OrderedDict(): STACK_GLOBAL at byte 39. */
static const char OD[] = "\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x0b\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e\x73\x94\x8c\x0b\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x94\x93\x94\x29\x52\x94\x2e";

static PkDoc *
parse (const char *data, gsize len, GError **error)
{
  return pickle_parse ((const guint8 *) data, len, "t.pickle", error);
}

static void
check_obj (const char *data, gsize len)
{
  GError *error = NULL;
  g_autoptr (PkDoc) doc = parse (data, len, &error);
  g_assert_no_error (error);
  const PkVal *r = pickle_root (doc);
  g_assert_cmpint (r->type, ==, PK_DICT);
  g_assert_cmpuint (r->n, ==, 7);
  const PkVal *a = pk_get (r, "a");
  g_assert_cmpint (a->type, ==, PK_LIST);
  g_assert_cmpuint (a->n, ==, 7);
  g_assert_cmpuint (pk_u64 (a->items[0], 0), ==, 1);
  g_assert_cmpfloat (pk_double (a->items[1], 0), ==, 2.5);
  g_assert_true (pk_str_is (a->items[2], "x"));
  g_assert_cmpint (a->items[3]->type, ==, PK_NONE);
  g_assert_cmpint (a->items[4]->type, ==, PK_BOOL);
  g_assert_cmpint (a->items[4]->i, ==, 1);
  g_assert_cmpint (a->items[5]->i, ==, 0);
  g_assert_cmpint (a->items[6]->type, ==, PK_TUPLE);
  g_assert_cmpuint (a->items[6]->n, ==, 2);
  g_assert_cmpuint (pk_u64 (a->items[6]->items[1], 0), ==, 2);
  gint64 v;
  g_assert_true (pk_int (pk_get (r, "b"), &v));
  g_assert_cmpint (v, ==, -1);
  g_assert_cmpuint (pk_u64 (pk_get (r, "b"), 7), ==, 7);          /* negative: the fallback */
  g_assert_cmpuint (pk_u64 (pk_get (r, "c"), 0), ==, G_MAXUINT64); /* LONG1 of 9 bytes */
  g_assert_false (pk_int (pk_get (r, "c"), &v));
  g_assert_true (pk_int (pk_get (r, "d"), &v));
  g_assert_cmpint (v, ==, G_MININT64);
  g_assert_cmpuint (pk_u64 (pk_get (r, "e"), 0), ==, 300);    /* BININT2 */
  g_assert_cmpuint (pk_u64 (pk_get (r, "f"), 0), ==, 70000);  /* BININT */
  g_autofree char *u = pk_strdup (pk_get (r, "u"));
  g_assert_cmpstr (u, ==, "\xc3\xa9");
  g_assert_null (pk_get (r, "missing"));
}

static void
test_values (void)
{
  check_obj (P2, sizeof P2 - 1);
  check_obj (P4, sizeof P4 - 1);
  GError *error = NULL;
  g_autoptr (PkDoc) doc = parse (SHARED, sizeof SHARED - 1, &error);
  g_assert_no_error (error);
  const PkVal *r = pickle_root (doc);
  g_assert_true (pk_get (r, "x") == pk_get (r, "y"));
  g_assert_cmpuint (pk_get (r, "y")->n, ==, 2);
}

/* Each bad input: an error naming the byte of the opcode. */
static void
expect_error (const char *data, gsize len, const char *want)
{
  GError *error = NULL;
  g_autoptr (PkDoc) doc = parse (data, len, &error);
  g_assert_null (doc);
  g_assert_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE);
  if (strstr (error->message, want) == NULL)
    g_error ("message '%s' lacks '%s'", error->message, want);
  g_error_free (error);
}

static void
test_hostile (void)
{
  expect_error (OD, sizeof OD - 1, "t.pickle: byte 39: class reference (STACK_GLOBAL) refused");
  /* GLOBAL (the protocol 2 form): c builtins\neval\n */
  static const char glob[] = "\x80\x02" "cbuiltins\neval\n" "q\x00.";
  expect_error (glob, sizeof glob - 1, "byte 2: class reference (GLOBAL) refused");
  static const char reduce[] = "\x80\x04" "N)R.";
  expect_error (reduce, sizeof reduce - 1, "byte 4: object construction (opcode 0x52) refused");
  /* Cut inside the LONG1 of 'c' (opcode at byte 59); cut before STOP. */
  expect_error (P4, 62, "byte 59: integer of 9 bytes, only 1 left");
  expect_error (P4, sizeof P4 - 2, "byte 110: truncated: no STOP opcode");
  /* A string claiming 2^60 bytes. */
  static const char huge[] = "\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10.";
  expect_error (huge, sizeof huge - 1, "byte 2: string of 1152921504606846976 bytes, only 1 left");
  static const char unknown[] = "\x80\x04\xff.";
  expect_error (unknown, sizeof unknown - 1, "byte 2: unsupported pickle opcode 0xff");
  static const char bytes[] = "\x80\x04" "C\x01x.";
  expect_error (bytes, sizeof bytes - 1, "byte 2: unsupported pickle opcode 0x43");
  static const char memo[] = "\x80\x04h\x05.";
  expect_error (memo, sizeof memo - 1, "byte 2: memo index 5 not set");
  static const char empty[] = "\x80\x04.";
  expect_error (empty, sizeof empty - 1, "byte 2: STOP with an empty stack");
  static const char proto1[] = "\x80\x01N.";
  expect_error (proto1, sizeof proto1 - 1, "byte 0: pickle protocol 1");
  expect_error ("N.", 2, "byte 0: not a pickle of protocol 2 or later");
  static const char utf[] = "\x80\x04\x8c\x01\xff.";
  expect_error (utf, sizeof utf - 1, "byte 2: string is not valid UTF-8");
  static const char appends[] = "\x80\x04}(K\x01" "e.";
  expect_error (appends, sizeof appends - 1, "byte 6: APPENDS on a dict");
  static const char unhash[] = "\x80\x04}]K\x01s.";
  expect_error (unhash, sizeof unhash - 1, "byte 6: unhashable dict key");
  static const char wide[] = "\x80\x04\x8a\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01.";
  expect_error (wide, sizeof wide - 1, "byte 2: integer wider than 64 bits");
  static const char pop[] = "\x80\x04" "0.";
  expect_error (pop, sizeof pop - 1, "byte 2: stack underflow");
  /* 300 nested lists, built from the inside out by APPEND: the 257th level
   * is refused at its APPEND (the 257th, byte 2 + 300 + 256). */
  GString *deep = g_string_new ("\x80\x04");
  for (int i = 0; i < 300; i++)
    g_string_append_c (deep, ']');
  for (int i = 0; i < 299; i++)
    g_string_append_c (deep, 'a');
  g_string_append_c (deep, '.');
  expect_error (deep->str, deep->len, "byte 558: nesting deeper than 256");
  g_string_free (deep, TRUE);
  GString *marks = g_string_new ("\x80\x04");
  for (int i = 0; i < 5000; i++)
    g_string_append_c (marks, '(');
  expect_error (marks->str, marks->len, "byte 4098: more than 4096 open MARKs");
  g_string_free (marks, TRUE);
  /* 65,600 TUPLE1s: the depth is counted (and refused) by TUPLE1..3,
   * TUPLE and LIST too, not only by APPEND (it used to wrap 16 bits). */
  GString *t1 = g_string_new ("\x80\x04]");
  for (int i = 0; i < 65600; i++)
    g_string_append_c (t1, '\x85');
  g_string_append_c (t1, '.');
  expect_error (t1->str, t1->len, "byte 259: nesting deeper than 256");
  g_string_free (t1, TRUE);
  /* 300 MARKs, a list, 300 LISTs wrapping it: the 257th LIST (byte
   * 2 + 300 + 1 + 256) is refused. */
  GString *tl = g_string_new ("\x80\x04");
  for (int i = 0; i < 300; i++)
    g_string_append_c (tl, '(');
  g_string_append_c (tl, ']');
  for (int i = 0; i < 300; i++)
    g_string_append_c (tl, 'l');
  g_string_append_c (tl, '.');
  expect_error (tl->str, tl->len, "byte 559: nesting deeper than 256");
  g_string_free (tl, TRUE);
}

/* The memo holds what was stored, whatever its indices (a 4-byte
 * LONG_BINPUT index is one entry, not an array of 2^32): the top index,
 * read back; MEMOIZE after it takes the next free count, as Python's
 * len(memo); an index stored ahead joins the run when it is reached. */
static void
test_memo (void)
{
  static const char top[] = "\x80\x04K\x07r\xff\xff\xff\xff" "0" "j\xff\xff\xff\xff" "K\x08\x94" "0" "h\x01" "\x86.";
  GError *error = NULL;
  g_autoptr (PkDoc) doc = parse (top, sizeof top - 1, &error);
  g_assert_no_error (error);
  const PkVal *r = pickle_root (doc);
  g_assert_cmpint (r->type, ==, PK_TUPLE);
  g_assert_cmpuint (r->n, ==, 2);
  g_assert_cmpint (r->items[0]->i, ==, 7);
  g_assert_cmpint (r->items[1]->i, ==, 8);
  /* put 1 ahead of 0, then 0: BINGET 1 still finds the first */
  static const char ahead[] = "\x80\x04K\x01q\x01" "0K\x02q\x00" "0h\x01h\x00\x86.";
  g_autoptr (PkDoc) d2 = parse (ahead, sizeof ahead - 1, &error);
  g_assert_no_error (error);
  r = pickle_root (d2);
  g_assert_cmpint (r->items[0]->i, ==, 1);
  g_assert_cmpint (r->items[1]->i, ==, 2);
}

/* A list appended to itself through the memo parses (nothing walks it). */
static void
test_cycle (void)
{
  static const char cyc[] = "\x80\x04]\x94h\x00" "a.";
  GError *error = NULL;
  g_autoptr (PkDoc) doc = parse (cyc, sizeof cyc - 1, &error);
  g_assert_no_error (error);
  const PkVal *r = pickle_root (doc);
  g_assert_true (r->items[0] == r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pickle/values", test_values);
  g_test_add_func ("/pickle/hostile", test_hostile);
  g_test_add_func ("/pickle/cycle", test_cycle);
  g_test_add_func ("/pickle/memo", test_memo);
  return g_test_run ();
}
