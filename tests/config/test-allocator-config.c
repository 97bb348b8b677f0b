/* test-allocator-config.c — the allocator section, memory.context and
 * uvm.first_touch (SPEC 4): defaults, presets, --set, PyTorch's own limits. */
#include <string.h>

#include "config/config.h"

static VsConfig *
load (const char *const *sets, GError **error)
{
  return config_load ("h100-sxm", sets, error);
}

static void
test_defaults (void)
{
  GError *error = NULL;
  g_autoptr (VsConfig) c = load (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c->allocator.kind, ==, VS_ALLOCATOR_AUTO);
  g_assert_false (c->allocator.expandable_segments);
  g_assert_cmpuint (c->allocator.max_split_size, ==, G_MAXUINT64);
  g_assert_cmpuint (c->allocator.max_non_split_rounding, ==, 20u << 20);
  g_assert_cmpuint (c->allocator.roundup_power2_divisions, ==, 0);
  g_assert_cmpfloat (c->allocator.garbage_collection_threshold, ==, 0);
  g_assert_cmpuint (c->allocator.large_segment, ==, 20u << 20);
  g_assert_cmpuint (c->allocator.release_threshold, ==, G_MAXUINT64);
  g_assert_cmpint (c->uvm.first_touch, ==, VS_FIRST_TOUCH_DEVICE);
  /* 8.09 MiB + 2.909 MiB x 132 SMs (docs/config.md) */
  g_assert_cmpuint (c->memory.context, ==, 392u << 20);
}

static void
test_set (void)
{
  const char *sets[] = {
    "allocator.kind=pytorch", "allocator.expandable_segments=true", "allocator.max_split_size=128MiB", "allocator.max_non_split_rounding=64MiB",
    "allocator.roundup_power2_divisions=4", "allocator.garbage_collection_threshold=0.6",
    "allocator.large_segment=64MiB", "allocator.release_threshold=1GiB", "uvm.first_touch=host",
    "memory.context=1GiB", NULL,
  };
  GError *error = NULL;
  g_autoptr (VsConfig) c = load (sets, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c->allocator.kind, ==, VS_ALLOCATOR_PYTORCH);
  g_assert_true (c->allocator.expandable_segments);
  g_assert_cmpuint (c->allocator.max_split_size, ==, 128u << 20);
  g_assert_cmpuint (c->allocator.max_non_split_rounding, ==, 64u << 20);
  g_assert_cmpuint (c->allocator.roundup_power2_divisions, ==, 4);
  g_assert_cmpfloat (c->allocator.garbage_collection_threshold, ==, 0.6);
  g_assert_cmpuint (c->allocator.large_segment, ==, 64u << 20);
  g_assert_cmpuint (c->allocator.release_threshold, ==, 1u << 30);
  g_assert_cmpint (c->uvm.first_touch, ==, VS_FIRST_TOUCH_HOST);
  g_assert_cmpuint (c->memory.context, ==, 1u << 30);
  /* Written back, it loads to the same values. */
  cJSON *j = config_to_json (c);
  cJSON *a = cJSON_GetObjectItemCaseSensitive (j, "allocator");
  g_assert_cmpstr (cJSON_GetObjectItemCaseSensitive (a, "max_split_size")->valuestring, ==, "128MiB");
  g_assert_cmpstr (cJSON_GetObjectItemCaseSensitive (a, "release_threshold")->valuestring, ==, "1GiB");
  g_autoptr (VsConfig) d = config_compile (j, "round-trip", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->allocator.max_split_size, ==, c->allocator.max_split_size);
  g_assert_cmpint (d->uvm.first_touch, ==, VS_FIRST_TOUCH_HOST);
  cJSON_Delete (j);
}

static void
expect_error (const char *set, const char *want)
{
  const char *sets[] = { set, NULL };
  GError *error = NULL;
  g_autoptr (VsConfig) c = load (sets, &error);
  if (c != NULL)
    g_error ("--set %s was accepted", set);
  g_assert_nonnull (error);
  if (strstr (error->message, want) == NULL)
    g_error ("'%s' lacks '%s'", error->message, want);
  g_error_free (error);
}

static void
test_errors (void)
{
  expect_error ("allocator.max_split_size=20MiB", "allocator.max_split_size: 20 MiB: PyTorch requires more than 20 MiB");
  expect_error ("allocator.max_split_size=lots", "allocator.max_split_size: 'lots' is not a size");
  expect_error ("allocator.roundup_power2_divisions=6", "must be 0 (off) or a power of two");
  expect_error ("allocator.roundup_power2_divisions=-1", "must be a whole number >= 0");
  expect_error ("allocator.garbage_collection_threshold=1", "must be in [0, 1)");
  expect_error ("allocator.large_segment=0B", "allocator.large_segment: 0 B: must be a whole number (>= 1) of 2 MiB pages");
  expect_error ("allocator.kind=cub", "'cub' is not one of \"auto\", \"pytorch\", \"async\", \"none\"");
  expect_error ("uvm.first_touch=gpu", "'gpu' is not one of \"device\", \"host\"");
}

/* Every preset charges a CUDA context, the figure of docs/config.md's
 * table ("The CUDA context of each preset"): 8.09 MiB + 2.909 MiB per SM
 * rounded to MiB (108 SMs: 322; 84: 252; 132: 392; 114: 340; 142: 421;
 * 128: 380; 80: 241; 16: 55; 8: 31), rtx3090 InvokeAI's 256 MiB, mi300x and
 * the seed machines PR #86509's 274 MiB. A preset added without one, or
 * changed without the table, fails here. */
static void
test_preset_contexts (void)
{
  static const struct { const char *preset; guint64 mib; } want[] = {
    { "a100-40g", 322 }, { "a100-80g", 322 }, { "a100-80g-cxl", 322 }, { "a40", 252 },
    { "h100-sxm", 392 }, { "h100-sxm-cxl", 392 }, { "h200", 392 }, { "gh200", 392 },
    { "h100-pcie", 340 }, { "l40s", 421 }, { "rtx3090", 256 }, { "rtx4090", 380 },
    { "v100-pcie-16g", 241 }, { "v100-sxm2-32g", 241 }, { "jetson-agx-orin", 55 },
    { "jetson-orin-nano", 31 }, { "mi300x", 274 }, { "seed-gddr6x", 274 }, { "seed-hbm2e", 274 },
    { "seed-lpddr5", 274 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      GError *error = NULL;
      g_autoptr (VsConfig) c = config_load (want[i].preset, NULL, &error);
      g_assert_no_error (error);
      if (c->memory.context != want[i].mib << 20)
        g_error ("%s: memory.context %" G_GUINT64_FORMAT " B, the table says %" G_GUINT64_FORMAT " MiB",
                 want[i].preset, c->memory.context, want[i].mib);
    }
  /* ...and the table covers every preset in the folder. */
  g_autoptr (GDir) d = g_dir_open (g_getenv ("VRAMSIM_CONFIGS"), 0, NULL);
  g_assert_nonnull (d);
  guint n = 0;
  for (const char *f; (f = g_dir_read_name (d)) != NULL;)
    n += g_str_has_suffix (f, ".json");
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The source tree's presets (tests/config/ is two folders below it). */
  g_autofree char *srcdir = g_path_get_dirname (__FILE__);
  g_autofree char *rel = g_build_filename (srcdir, "..", "..", "configs", NULL);
  g_autofree char *configs = g_canonicalize_filename (rel, NULL);
  g_setenv ("VRAMSIM_CONFIGS", configs, TRUE);
  g_test_add_func ("/allocator-config/defaults", test_defaults);
  g_test_add_func ("/allocator-config/set", test_set);
  g_test_add_func ("/allocator-config/errors", test_errors);
  g_test_add_func ("/allocator-config/preset-contexts", test_preset_contexts);
  return g_test_run ();
}
