/* test-suggest.c — "did you mean" on the names users actually mistype. */
#include "base/suggest.h"

static const char *const presets[] = {
  "a100-40g", "a100-80g", "a100-80g-cxl", "gh200", "h100-pcie", "h100-sxm", "h100-sxm-cxl",
  "h200", "jetson-agx-orin", "jetson-orin-nano", "l40s", "mi300x", "rtx3090", "rtx4090",
  "seed-gddr6x", "seed-hbm2e", "seed-lpddr5", "v100-pcie-16g", "v100-sxm2-32g", NULL,
};

static void
check (const char *word, const char *want)
{
  g_autofree char *got = suggest_phrase (word, presets, NULL);
  g_assert_cmpstr (got, ==, want);
}

static void
test_presets (void)
{
  /* Written another way: separators and case do not count. */
  check ("rtx-3090", "; did you mean 'rtx3090'?");
  check ("RTX3090", "; did you mean 'rtx3090'?");
  check ("H100_SXM", "; did you mean 'h100-sxm'?");
  /* A prefix: every preset it starts, in list order, at most 3. */
  check ("a100", "; did you mean 'a100-40g', 'a100-80g' or 'a100-80g-cxl'?");
  check ("jetson", "; did you mean 'jetson-agx-orin' or 'jetson-orin-nano'?");
  /* Near misses, the nearest only: "h2000" is one deletion from "h200";
   * "rtx3080" one substitution from rtx3090, two from rtx4090. */
  check ("h2000", "; did you mean 'h200'?");
  check ("rtx3080", "; did you mean 'rtx3090'?");
  check ("l40", "; did you mean 'l40s'?");
  /* Nothing close: no suggestion rather than a wild one. */
  check ("tpu-v5", "");
  check ("", "");
}

static void
test_options (void)
{
  static const char *const opts[] = { "config", "capture-config", "set", "format", "output", NULL };
  g_autofree char *a = suggest_phrase ("confg", opts, "--");
  g_assert_cmpstr (a, ==, "; did you mean '--config'?");
  g_autofree char *b = suggest_phrase ("fromat", opts, "--");   /* a swap of neighbours */
  g_assert_cmpstr (b, ==, "; did you mean '--format'?");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/suggest/presets", test_presets);
  g_test_add_func ("/suggest/options", test_options);
  return g_test_run ();
}
