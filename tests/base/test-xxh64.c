/* test-xxh64.c — XXH64 against the algorithm's published vectors, and
 * streamed in pieces of every size against one shot. */
#include <glib.h>
#include <string.h>

#include "base/xxh64.h"

static void
test_vectors (void)
{
  /* Seed 0: the vectors the xxHash project publishes (its sanity check
   * and xxhsum's documentation); the last is longer than one stripe. */
  static const struct { const char *s; guint64 h; } v[] = {
    { "", G_GUINT64_CONSTANT (0xEF46DB3751D8E999) },
    { "a", G_GUINT64_CONSTANT (0xD24EC4F1A98C6E5B) },
    { "abc", G_GUINT64_CONSTANT (0x44BC2CF5AD770999) },
    { "Nobody inspects the spammish repetition", G_GUINT64_CONSTANT (0xFBCEA83C8A378BF1) },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
    g_assert_cmphex (vs_xxh64 (v[i].s, strlen (v[i].s), 0), ==, v[i].h);
  g_assert_cmphex (vs_xxh64 ("", 0, 1), !=, vs_xxh64 ("", 0, 0));
}

static void
test_streamed (void)
{
  guint8 data[300];
  for (gsize i = 0; i < sizeof data; i++)
    data[i] = (guint8) (i * 131 + 7);
  for (gsize len = 0; len <= sizeof data; len += 13)
    {
      guint64 want = vs_xxh64 (data, len, 0);
      for (gsize piece = 1; piece <= 40; piece++)
        {
          VsXxh64 s;
          vs_xxh64_init (&s, 0);
          for (gsize at = 0; at < len; at += piece)
            vs_xxh64_update (&s, data + at, MIN (piece, len - at));
          g_assert_cmphex (vs_xxh64_digest (&s), ==, want);
        }
    }
  /* One byte changed changes the hash. */
  guint64 h = vs_xxh64 (data, sizeof data, 0);
  data[150] ^= 1;
  g_assert_cmphex (vs_xxh64 (data, sizeof data, 0), !=, h);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/xxh64/vectors", test_vectors);
  g_test_add_func ("/xxh64/streamed", test_streamed);
  return g_test_run ();
}
