/* test-evq.c — the event queue pops by time, equal times first-in
 * first-out, whatever the push order. */
#include <math.h>

#include "base/evq.h"

static void
test_order (void)
{
  g_autoptr (VsEvq) q = evq_new ();
  g_assert_true (isinf (evq_peek_time (q)));
  evq_push (q, 30, 0, NULL, 3);
  evq_push (q, 10, 0, NULL, 1);
  evq_push (q, 20, 0, NULL, 2);
  evq_push (q, 10, 0, NULL, 11);   /* same time as 1: after it */
  g_assert_cmpuint (evq_len (q), ==, 4);
  g_assert_cmpfloat (evq_peek_time (q), ==, 10);
  guint64 want[] = { 1, 11, 2, 3 };
  VsEvqItem it;
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_assert_true (evq_pop (q, &it));
      g_assert_cmpuint (it.arg, ==, want[i]);
    }
  g_assert_false (evq_pop (q, &it));
  g_assert_cmpuint (evq_len (q), ==, 0);
}

/* 10,000 pushes with few distinct times (many ties), interleaved with
 * pops: every pop is the earliest, and ties come out in push order. */
static void
test_many (void)
{
  g_autoptr (VsEvq) q = evq_new ();
  GRand *r = g_rand_new_with_seed (7);
  guint64 pushed = 0, popped = 0;
  double last_t = -1;
  guint64 last_arg = 0;
  VsEvqItem it;
  for (int round = 0; round < 100; round++)
    {
      for (int i = 0; i < 100; i++)
        evq_push (q, last_t + 1 + g_rand_int_range (r, 0, 10), 0, NULL, pushed++);
      for (int i = 0; i < 50; i++)
        {
          g_assert_true (evq_pop (q, &it));
          g_assert_cmpfloat (it.t, >=, last_t);
          if (it.t == last_t)
            g_assert_cmpuint (it.arg, >, last_arg);
          last_t = it.t;
          last_arg = it.arg;
          popped++;
        }
    }
  while (evq_pop (q, &it))
    {
      g_assert_cmpfloat (it.t, >=, last_t);
      if (it.t == last_t)
        g_assert_cmpuint (it.arg, >, last_arg);
      last_t = it.t;
      last_arg = it.arg;
      popped++;
    }
  g_assert_cmpuint (popped, ==, pushed);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/evq/order", test_order);
  g_test_add_func ("/evq/many", test_many);
  return g_test_run ();
}
