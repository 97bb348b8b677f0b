/* test-config.c — config loading, extends, --set, validation, presets. */
#include <glib/gstdio.h>
#include <string.h>

#include "config/config.h"
#include "base/units.h"
#include "trace/event.h"

static char *tmpdir;

/* A minimal valid config: only the required fields. */
static const char *const minimal =
  "{\"compute\": {\"tflops\": 100},"
  " \"memory\": {\"capacity\": \"16GiB\", \"bandwidth\": \"1000GB/s\"},"
  " \"link\": {\"bandwidth\": \"32GB/s\"}}";

static char *
write_file (const char *name, const char *text)
{
  char *path = g_build_filename (tmpdir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
assert_msg (const GError *error, const char *part1, const char *part2)
{
  g_assert_nonnull (error);
  if (strstr (error->message, part1) == NULL || (part2 != NULL && strstr (error->message, part2) == NULL))
    g_error ("message '%s' lacks '%s' / '%s'", error->message, part1, part2 ? part2 : "");
}

/* ---- defaults ---- */

static void
test_defaults (void)
{
  g_autofree char *path = write_file ("mini.json", minimal);
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->name, ==, "mini");
  g_assert_cmpstr (c->description, ==, "");
  g_assert_cmpstr (c->origin, ==, path);
  g_assert_cmpfloat (c->tflops, ==, 100);
  g_assert_cmpuint (c->memory.capacity, ==, 16ull << 30);
  g_assert_cmpfloat (c->memory.bandwidth, ==, 1000e9);
  g_assert_cmpfloat (c->memory.efficiency, ==, 1.0);
  g_assert_cmpfloat (c->memory.latency_ns, ==, 0);
  g_assert_cmpuint (c->memory.reserved, ==, 0);
  g_assert_cmpuint (c->memory.alloc_granularity, ==, 2u << 20);
  g_assert_cmpfloat (c->link.bandwidth, ==, 32e9);
  g_assert_cmpfloat (c->link.efficiency, ==, 1.0);
  g_assert_cmpfloat (c->link.pageable_efficiency, ==, 0.5);
  g_assert_cmpfloat (c->link.latency_ns, ==, 10000);
  g_assert_cmpuint (c->link.copy_engines, ==, 2);
  g_assert_cmpuint (c->n_tiers, ==, 0);
  g_assert_cmpuint (c->host.capacity, ==, 1ull << 40);
  g_assert_cmpfloat (c->host.bandwidth, ==, 200e9);
  g_assert_false (c->unified);
  g_assert_cmpuint (c->uvm.page, ==, 65536);
  g_assert_cmpuint (c->uvm.evict_unit, ==, 2u << 20);
  g_assert_cmpuint (c->uvm.fault_batch, ==, 256);
  g_assert_cmpfloat (c->uvm.fault_latency_ns, ==, 30000);
  g_assert_cmpint (c->oversubscription, ==, VS_OVERSUB_OOM);
  g_assert_cmpstr (config_oversub_name (c->oversubscription), ==, "oom");
  g_assert_cmpfloat (c->gpu.launch_latency_ns, ==, 0);
  g_assert_false (c->gpu.legacy_default_stream);
  g_unlink (path);
}

static void
test_bare_numbers (void)
{
  /* SPEC 4: a size, bandwidth or time needs its unit; a bare number other
   * than 0 (a JSON number, or text without a unit) is an error that lists
   * the units. 0 may go without one. */
  static const struct { const char *json, *what; } bad[] = {
    { "{\"memory\": {\"capacity\": 1073741824}}",
      "memory.capacity: 1073741824 has no unit: a size needs one, such as \"1073741824GiB\" or \"1073741824B\" "
      "(units: B KB MB GB TB KiB MiB GiB TiB; only 0 may go without one)" },
    { "{\"memory\": {\"bandwidth\": 5e11}}", "memory.bandwidth: 500000000000 has no unit: a bandwidth needs one" },
    { "{\"memory\": {\"latency\": 250}}", "memory.latency: 250 has no unit: a time needs one, such as \"250us\" or \"250ns\" (units: ns us ms s" },
    { "{\"memory\": {\"reserved\": \"1000\"}}", "memory.reserved: '1000': a size needs a unit, such as \"1000GiB\"" },
    { "{\"link\": {\"latency\": 5000.5}}", "link.latency: 5000.5 has no unit" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *path = write_file ("bare.json", bad[i].json);
      GError *error = NULL;
      g_autoptr (VsConfig) c = config_load (path, NULL, &error);
      g_assert_null (c);
      g_assert_nonnull (error);
      if (strstr (error->message, bad[i].what) == NULL)
        g_error ("%s: got '%s', want '%s'", bad[i].json, error->message, bad[i].what);
      g_clear_error (&error);
      g_unlink (path);
    }
  g_autofree char *path = write_file ("bare.json",
      "{\"compute\": {\"tflops\": 1.5}, \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\", \"reserved\": 0, "
      "\"latency\": \"0\"}, \"link\": {\"bandwidth\": \"1GB/s\"}, \"gpu\": {\"launch_latency\": 0}}");
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->memory.reserved, ==, 0);
  g_assert_cmpfloat (c->memory.latency_ns, ==, 0);
  g_unlink (path);
}

/* ---- extends ---- */

static void
test_extends_merge (void)
{
  g_autofree char *parent = write_file ("parent.json",
      "{\"description\": \"the parent\", \"compute\": {\"tflops\": 100},"
      " \"memory\": {\"tech\": \"HBM\", \"capacity\": \"16GiB\", \"bandwidth\": \"1000GB/s\", \"efficiency\": 0.9,"
      "              \"latency\": \"300ns\"},"
      " \"link\": {\"bandwidth\": \"32GB/s\", \"latency\": \"5us\", \"copy_engines\": 3},"
      " \"tiers\": [{\"name\": \"a\", \"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\"},"
      "             {\"name\": \"b\", \"capacity\": \"2GiB\", \"bandwidth\": \"2GB/s\"}],"
      " \"policy\": {\"oversubscription\": \"spill\"}}");
  g_autofree char *sub = g_build_filename (tmpdir, "sub", NULL);
  g_mkdir (sub, 0700);
  /* Relative to the extending file, not the working directory. */
  g_autofree char *child = write_file ("sub/child.json",
      "{\"extends\": \"../parent.json\","
      " \"memory\": {\"bandwidth\": \"2000GB/s\"},"
      " \"link\": {\"latency\": null},"
      " \"tiers\": [{\"name\": \"c\", \"capacity\": \"3GiB\", \"bandwidth\": \"3GB/s\", \"attach\": \"device\"}]}");
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load (child, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->name, ==, "child");                 /* a name is never inherited */
  g_assert_cmpstr (c->description, ==, "the parent");      /* other fields are */
  g_assert_cmpfloat (c->memory.bandwidth, ==, 2000e9);     /* child wins */
  g_assert_cmpfloat (c->memory.efficiency, ==, 0.9);       /* objects merge key by key */
  g_assert_cmpfloat (c->memory.latency_ns, ==, 300);
  g_assert_cmpstr (c->memory.tech, ==, "HBM");
  g_assert_cmpuint (c->memory.capacity, ==, 16ull << 30);
  g_assert_cmpfloat (c->link.latency_ns, ==, 10000);       /* null: back to the default */
  g_assert_cmpuint (c->link.copy_engines, ==, 3);
  g_assert_cmpuint (c->n_tiers, ==, 1);                    /* arrays are replaced whole */
  g_assert_cmpstr (c->tiers[0].name, ==, "c");
  g_assert_cmpint (c->tiers[0].attach, ==, VS_ATTACH_DEVICE);
  g_assert_cmpint (c->oversubscription, ==, VS_OVERSUB_SPILL);

  /* The merged tree has no extends left. */
  cJSON *tree = config_load_json (child, &error);
  g_assert_no_error (error);
  g_assert_null (cJSON_GetObjectItem (tree, "extends"));
  cJSON_Delete (tree);

  /* Three levels, depth-first: grandchild over child over parent. */
  g_autofree char *grand = write_file ("grand.json",
      "{\"name\": \"g\", \"extends\": \"sub/child.json\", \"memory\": {\"efficiency\": 0.5}}");
  g_autoptr (VsConfig) g = config_load (grand, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (g->name, ==, "g");
  g_assert_cmpfloat (g->memory.efficiency, ==, 0.5);
  g_assert_cmpfloat (g->memory.bandwidth, ==, 2000e9);
  g_assert_cmpfloat (g->memory.latency_ns, ==, 300);
  g_unlink (grand);
  g_unlink (child);
  g_rmdir (sub);
  g_unlink (parent);
}

static void
test_extends_preset (void)
{
  g_autofree char *path = write_file ("mine.json", "{\"extends\": \"a100-80g\", \"memory\": {\"capacity\": \"40GiB\"}}");
  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->name, ==, "mine");
  g_assert_cmpuint (c->memory.capacity, ==, 40ull << 30);
  g_assert_cmpfloat (c->memory.bandwidth, ==, 2039e9);
  g_assert_cmpfloat (c->tflops, ==, 312);
  g_unlink (path);

  path = (g_free (path), write_file ("bad-parent.json", "{\"extends\": \"a100-81g\"}"));
  VsConfig *bad = config_load (path, NULL, &error);
  g_assert_null (bad);
  assert_msg (error, "bad-parent.json: extends: unknown preset 'a100-81g'", "a100-80g, a100-80g-cxl");
  g_clear_error (&error);
  g_unlink (path);
}

static void
test_extends_cycle (void)
{
  g_autofree char *a = write_file ("cyc-a.json", "{\"extends\": \"cyc-b.json\"}");
  g_autofree char *b = write_file ("cyc-b.json", "{\"extends\": \"./cyc-a.json\"}");
  GError *error = NULL;
  g_assert_null (config_load (a, NULL, &error));
  assert_msg (error, "cycle", "cyc-a.json -> ");
  assert_msg (error, "cyc-b.json -> ", NULL);
  g_clear_error (&error);

  g_autofree char *self = write_file ("cyc-self.json", "{\"extends\": \"cyc-self.json\"}");
  g_assert_null (config_load_json (self, &error));
  assert_msg (error, "cyc-self.json: extends: cycle", NULL);
  g_clear_error (&error);
  g_unlink (a);
  g_unlink (b);
  g_unlink (self);
}

/* ---- load errors ---- */

static void
test_load_errors (void)
{
  GError *error = NULL;
  g_autofree char *path = write_file ("syntax.json", "{\n  \"memory\": {\n    \"capacity\": 80GiB\n  }\n}\n");
  g_assert_null (config_load (path, NULL, &error));
  assert_msg (error, "syntax.json:3:", "JSON syntax error");
  g_clear_error (&error);

  g_autofree char *trail = write_file ("trail.json", "{} {}");
  g_assert_null (config_load (trail, NULL, &error));
  assert_msg (error, "trail.json:1:", NULL);
  g_clear_error (&error);

  g_autofree char *arr = write_file ("array.json", "[1, 2]");
  g_assert_null (config_load (arr, NULL, &error));
  assert_msg (error, "array.json: a config is a JSON object", NULL);
  g_clear_error (&error);

  g_autofree char *dup = write_file ("dup.json",
      "{\"compute\": {\"tflops\": 1}, \"memory\": {\"capacity\": \"1B\", \"capacity\": \"2B\", \"bandwidth\": \"1B/s\"}}");
  g_assert_null (config_load (dup, NULL, &error));
  assert_msg (error, "dup.json: memory.capacity: duplicate key", NULL);
  g_clear_error (&error);

  /* A bad value in a parent names the parent's file. */
  g_autofree char *bp = write_file ("badparent.json", "{\"memory\": {\"efficiency\": 2}}");
  g_autofree char *bc = write_file ("badchild.json", "{\"extends\": \"badparent.json\"}");
  g_assert_null (config_load (bc, NULL, &error));
  assert_msg (error, "badparent.json: memory.efficiency:", "(0, 1]");
  g_clear_error (&error);

  g_assert_null (config_load ("/nonexistent/x.json", NULL, &error));
  assert_msg (error, "/nonexistent/x.json: cannot read", NULL);
  g_clear_error (&error);

  g_assert_null (config_load ("no-such-preset", NULL, &error));
  assert_msg (error, "unknown preset 'no-such-preset'", "a100-40g, a100-80g");
  g_clear_error (&error);

  g_assert_null (config_load ("", NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  g_unlink (path);
  g_unlink (trail);
  g_unlink (arr);
  g_unlink (dup);
  g_unlink (bp);
  g_unlink (bc);
}

/* ---- --set ---- */

static cJSON *
tiered_tree (void)
{
  cJSON *root = cJSON_Parse (minimal);
  g_assert_true (config_set (root,
      "tiers=[{\"name\": \"cxl0\", \"capacity\": \"256GiB\", \"bandwidth\": \"64GB/s\"},"
      " {\"name\": \"cxl1\", \"capacity\": \"128GiB\", \"bandwidth\": \"32GB/s\"}]", "t.json", NULL));
  return root;
}

static void
test_set (void)
{
  GError *error = NULL;
  cJSON *root = tiered_tree ();
  static const char *const sets[] = {
    "memory.capacity=24GiB",
    "memory.efficiency=0.75",
    "tiers.0.bandwidth=32GB/s",
    "tiers.cxl1.latency=300ns",
    "tiers.cxl1.attach=device",
    "uvm.fault_batch=128",          /* a section absent from the tree is created */
    "policy.oversubscription=spill",
    "gpu.legacy_default_stream=true",
    "name=renamed",
    "description=\"quoted\"",
    "host.tech=DDR5-4800 8ch",
    "tiers.cxl1.tech=1",            /* text fields take the text as typed */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (sets); i++)
    {
      g_assert_true (config_set (root, sets[i], "t.json", &error));
      g_assert_no_error (error);
    }
  g_autoptr (VsConfig) c = config_compile (root, "t.json", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->memory.capacity, ==, 24ull << 30);
  g_assert_cmpfloat (c->memory.efficiency, ==, 0.75);
  g_assert_cmpfloat (c->memory.bandwidth, ==, 1000e9);   /* siblings untouched */
  g_assert_cmpuint (c->n_tiers, ==, 2);
  g_assert_cmpfloat (c->tiers[0].bandwidth, ==, 32e9);
  g_assert_cmpuint (c->tiers[0].capacity, ==, 256ull << 30);
  g_assert_cmpfloat (c->tiers[1].latency_ns, ==, 300);
  g_assert_cmpint (c->tiers[1].attach, ==, VS_ATTACH_DEVICE);
  g_assert_cmpuint (c->uvm.fault_batch, ==, 128);
  g_assert_cmpint (c->oversubscription, ==, VS_OVERSUB_SPILL);
  g_assert_true (c->gpu.legacy_default_stream);
  g_assert_cmpstr (c->name, ==, "renamed");
  g_assert_cmpstr (c->description, ==, "quoted");
  g_assert_cmpstr (c->host.tech, ==, "DDR5-4800 8ch");
  g_assert_cmpstr (c->tiers[1].tech, ==, "1");

  /* Appending a tier by index, one field at a time. */
  g_assert_true (config_set (root, "tiers.2.name=nvme", "t.json", &error));
  g_assert_true (config_set (root, "tiers.nvme.capacity=1TiB", "t.json", &error));
  g_assert_true (config_set (root, "tiers.2.bandwidth=7GB/s", "t.json", &error));
  g_assert_no_error (error);
  /* Unified machines need no link. */
  g_assert_true (config_set (root, "unified=true", "t.json", &error));
  g_assert_true (config_set (root, "tiers=[]", "t.json", &error));
  g_assert_true (config_set (root, "link=null", "t.json", &error));
  g_assert_no_error (error);
  g_autoptr (VsConfig) u = config_compile (root, "t.json", &error);
  g_assert_no_error (error);
  g_assert_true (u->unified);
  g_assert_cmpuint (u->n_tiers, ==, 0);
  g_assert_cmpfloat (u->link.bandwidth, ==, 0);
  cJSON_Delete (root);

  /* Through config_load. */
  g_autofree char *path = write_file ("s.json", minimal);
  const char *const load_sets[] = { "memory.capacity=8GiB", "compute.tflops=50", NULL };
  g_autoptr (VsConfig) l = config_load (path, load_sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (l->memory.capacity, ==, 8ull << 30);
  g_assert_cmpfloat (l->tflops, ==, 50);
  const char *const bad_sets[] = { "memory.capacty=8GiB", NULL };
  g_assert_null (config_load (path, bad_sets, &error));
  assert_msg (error, "s.json: --set 'memory.capacty=8GiB': memory.capacty: unknown key", "capacity");
  g_clear_error (&error);
  g_unlink (path);
}

static void
test_set_errors (void)
{
  static const struct { const char *set, *part1, *part2; } bad[] = {
    { "memory.capacty=1GiB", "t.json: --set 'memory.capacty=1GiB': memory.capacty: unknown key", "known keys in memory" },
    { "memry.capacity=1GiB", "memry: unknown key", NULL },
    { "tiers.0.bandwith=1GB/s", "tiers[0].bandwith: unknown key", NULL },
    { "tiers.9.capacity=1GiB", "tiers: no tier 9", NULL },
    { "tiers.cxl9.capacity=1GiB", "no tier named 'cxl9'", "cxl0, cxl1" },
    { "memory.capacity=24GX", "memory.capacity: '24GX': unknown size unit 'GX'", "KiB MiB GiB TiB" },
    { "memory.capacity=-1GiB", "memory.capacity", "negative" },
    { "memory.efficiency=1.5", "memory.efficiency: must be in (0, 1]", NULL },
    { "memory.efficiency=high", "memory.efficiency: expected a number", NULL },
    { "unified=yes", "unified: expected true or false", NULL },
    { "policy.oversubscription=swap", "'swap' is not one of", "\"oom\", \"spill\", \"direct\", \"uvm\"" },
    { "memory.capacity.x=1", "memory.capacity: is a value, not a section", NULL },
    { "extends=a100-80g", "extends: extends is resolved before --set", NULL },
    { "memory", "expected KEY=VALUE", NULL },
    { "=5", "expected KEY=VALUE", NULL },
    { "memory..capacity=1", "empty key segment", NULL },
    { "memory={\"capacity\": \"1B\", \"speed\": 2}", "memory.speed: unknown key", NULL },
    { "tiers=[{\"name\": \"x\", \"cap\": 1}]", "tiers[0].cap: unknown key", NULL },
    { "tiers.cxl0=5", "tiers[0]: expected a tier object", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      cJSON *root = tiered_tree ();
      GError *error = NULL;
      g_assert_false (config_set (root, bad[i].set, "t.json", &error));
      g_assert_error (error, VS_CONFIG_ERROR, 0);
      if (!g_str_has_prefix (error->message, "t.json: --set '"))
        g_error ("'%s': message '%s' does not name the origin", bad[i].set, error->message);
      assert_msg (error, bad[i].part1, bad[i].part2);
      g_error_free (error);
      cJSON_Delete (root);
    }
}

/* ---- validation ---- */

/* Merges PATCH (JSON text) into ROOT; null removes. */
static void
patch_into (cJSON *root, const cJSON *patch)
{
  for (const cJSON *it = patch->child; it != NULL; it = it->next)
    {
      cJSON *old = cJSON_GetObjectItemCaseSensitive (root, it->string);
      if (cJSON_IsNull (it))
        cJSON_DeleteItemFromObjectCaseSensitive (root, it->string);
      else if (cJSON_IsObject (it) && cJSON_IsObject (old))
        patch_into (old, it);
      else
        {
          cJSON_DeleteItemFromObjectCaseSensitive (root, it->string);
          cJSON_AddItemToObject (root, it->string, cJSON_Duplicate (it, TRUE));
        }
    }
}

#define TIER "{\"name\": \"cxl0\", \"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\"}"

static void
test_validation (void)
{
  /* Each patch of the minimal config must fail, naming origin and field. */
  static const struct { const char *patch, *field, *part; } bad[] = {
    { "{\"memry\": {}}", "memry", "unknown key" },
    { "{\"memory\": {\"capcity\": 1}}", "memory.capcity", "unknown key" },
    { "{\"uvm\": {\"pages\": 1}}", "uvm.pages", "unknown key" },
    { "{\"tiers\": [" TIER ", {\"name\": \"b\", \"foo\": 1}]}", "tiers[1].foo", "unknown key" },
    { "{\"name\": 5}", "name", "expected a string" },
    { "{\"name\": \"\"}", "name", "must not be empty" },
    { "{\"compute\": 5}", "compute", "expected an object" },
    { "{\"tiers\": {}}", "tiers", "expected an array" },
    { "{\"tiers\": [5]}", "tiers[0]", "expected a tier object" },
    { "{\"memory\": {\"capacity\": true}}", "memory.capacity", "expected a size" },
    { "{\"memory\": {\"capacity\": -5}}", "memory.capacity", "negative" },
    { "{\"memory\": {\"capacity\": \"1.5B\"}}", "memory.capacity", "a size in bytes must be a whole number" },
    { "{\"memory\": {\"capacity\": \"80 gib\"}}", "memory.capacity", "unknown size unit 'gib'" },
    { "{\"memory\": {\"bandwidth\": \"2039GB\"}}", "memory.bandwidth", "unknown bandwidth unit 'GB'" },
    { "{\"memory\": {\"bandwidth\": [1]}}", "memory.bandwidth", "expected a bandwidth" },
    { "{\"memory\": {\"latency\": \"5m\"}}", "memory.latency", "unknown time unit 'm'" },
    { "{\"memory\": {\"latency\": -1}}", "memory.latency", "negative" },
    { "{\"memory\": {\"efficiency\": 0}}", "memory.efficiency", "(0, 1]" },
    { "{\"memory\": {\"efficiency\": 1.01}}", "memory.efficiency", "(0, 1]" },
    { "{\"memory\": {\"efficiency\": \"0.9\"}}", "memory.efficiency", "expected a number" },
    { "{\"link\": {\"efficiency\": -0.5}}", "link.efficiency", "(0, 1]" },
    { "{\"link\": {\"pageable_efficiency\": 0}}", "link.pageable_efficiency", "(0, 1]" },
    { "{\"link\": {\"pageable_efficiency\": 1.2}}", "link.pageable_efficiency", "(0, 1]" },
    { "{\"tiers\": [{\"name\": \"cxl0\", \"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\", \"efficiency\": 0}]}",
      "tiers[0].efficiency", "(0, 1]" },
    { "{\"memory\": {\"bandwidth\": \"0GB/s\"}}", "memory.bandwidth", "greater than 0" },
    { "{\"link\": {\"bandwidth\": 0}}", "link.bandwidth", "greater than 0" },
    { "{\"host\": {\"bandwidth\": \"0B/s\"}}", "host.bandwidth", "greater than 0" },
    { "{\"tiers\": [{\"name\": \"cxl0\", \"capacity\": \"1GiB\", \"bandwidth\": 0}]}", "tiers[0].bandwidth", "greater than 0" },
    { "{\"memory\": {\"capacity\": \"0B\"}}", "memory.capacity", "greater than 0" },
    { "{\"host\": {\"capacity\": 0}}", "host.capacity", "greater than 0" },
    { "{\"tiers\": [{\"name\": \"cxl0\", \"capacity\": 0, \"bandwidth\": \"1GB/s\"}]}", "tiers[0].capacity", "greater than 0" },
    { "{\"memory\": {\"reserved\": \"16GiB\"}}", "memory.reserved", "must be less" },
    { "{\"memory\": {\"reserved\": \"17GiB\"}}", "memory.reserved", "must be less" },
    { "{\"memory\": {\"alloc_granularity\": 0}}", "memory.alloc_granularity", "power of two" },
    { "{\"memory\": {\"alloc_granularity\": \"3MiB\"}}", "memory.alloc_granularity", "power of two" },
    { "{\"uvm\": {\"page\": 0}}", "uvm.page", "0 B is below 4KiB" },
    { "{\"uvm\": {\"page\": \"2KiB\", \"evict_unit\": \"2MiB\"}}", "uvm.page", "2 KiB is below 4KiB, the smallest page" },
    { "{\"uvm\": {\"evict_unit\": \"100KiB\"}}", "uvm.evict_unit", "whole number (>= 1) of uvm.page" },
    { "{\"uvm\": {\"evict_unit\": 0}}", "uvm.evict_unit", "uvm.page" },
    { "{\"uvm\": {\"fault_batch\": 0}}", "uvm.fault_batch", ">= 1" },
    { "{\"uvm\": {\"fault_batch\": 2.5}}", "uvm.fault_batch", ">= 1" },
    { "{\"uvm\": {\"fault_batch\": \"256\"}}", "uvm.fault_batch", "expected a whole number" },
    { "{\"link\": {\"copy_engines\": 0}}", "link.copy_engines", ">= 1" },
    { "{\"tiers\": [{\"name\": \"cxl0\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\", \"attach\": \"pcie\"}]}",
      "tiers[0].attach", "'pcie' is not one of \"host\", \"device\"" },
    { "{\"tiers\": [" TIER ", " TIER "]}", "tiers[1].name", "already the name of tiers[0]" },
    { "{\"tiers\": [{\"name\": \"device\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"host\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"sm\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"device_mem\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"link_h2d\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"link_d2h\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"host_mem\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "reserved" },
    { "{\"tiers\": [{\"name\": \"a.b\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "not a tier name" },
    { "{\"tiers\": [{\"name\": \"7\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "not a tier name" },
    { "{\"tiers\": [{\"capacity\": \"1B\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].name", "required" },
    { "{\"tiers\": [{\"name\": \"x\", \"bandwidth\": \"1B/s\"}]}", "tiers[0].capacity", "required" },
    { "{\"tiers\": [{\"name\": \"x\", \"capacity\": \"1B\"}]}", "tiers[0].bandwidth", "required" },
    { "{\"policy\": {\"oversubscription\": \"swap\"}}", "policy.oversubscription", "'swap' is not one of" },
    { "{\"policy\": {\"oversubscription\": 1}}", "policy.oversubscription", "expected one of" },
    { "{\"compute\": {\"tflops\": 0}}", "compute.tflops", "greater than 0" },
    { "{\"compute\": {\"tflops\": -3}}", "compute.tflops", "greater than 0" },
    { "{\"compute\": null}", "compute.tflops", "required" },
    { "{\"memory\": {\"capacity\": null}}", "memory.capacity", "required" },
    { "{\"memory\": {\"bandwidth\": null}}", "memory.bandwidth", "required" },
    { "{\"link\": null}", "link.bandwidth", "required" },
    { "{\"unified\": \"yes\"}", "unified", "expected true or false" },
    { "{\"unified\": true, \"tiers\": [" TIER "]}", "tiers[0].attach", "unified" },
    { "{\"gpu\": {\"legacy_default_stream\": 1}}", "gpu.legacy_default_stream", "expected true or false" },
    { "{\"gpu\": {\"launch_latency\": \"fast\"}}", "gpu.launch_latency", "is not a time" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      cJSON *root = cJSON_Parse (minimal);
      cJSON *patch = cJSON_Parse (bad[i].patch);
      g_assert_nonnull (patch);
      patch_into (root, patch);
      GError *error = NULL;
      VsConfig *c = config_compile (root, "v.json", &error);
      if (c != NULL)
        g_error ("patch %s: compiled, want an error on %s", bad[i].patch, bad[i].field);
      g_assert_error (error, VS_CONFIG_ERROR, 0);
      g_autofree char *prefix = g_strdup_printf ("v.json: %s: ", bad[i].field);
      if (!g_str_has_prefix (error->message, prefix) || strstr (error->message, bad[i].part) == NULL)
        g_error ("patch %s: message '%s', want prefix '%s' and '%s'", bad[i].patch, error->message, prefix,
                 bad[i].part);
      g_error_free (error);
      cJSON_Delete (patch);
      cJSON_Delete (root);
    }

  /* And these are fine. */
  static const char *const good[] = {
    "{\"unified\": true, \"link\": null}",
    "{\"unified\": true, \"tiers\": [{\"name\": \"nvme\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\", \"attach\": \"device\"}]}",
    "{\"memory\": {\"alloc_granularity\": \"1B\", \"reserved\": \"1GiB\"}}",
    "{\"uvm\": {\"page\": \"4KiB\", \"evict_unit\": \"4KiB\", \"fault_batch\": 1}}",
    "{\"extends\": null, \"description\": null}",
    "{\"tiers\": [{\"name\": \"cxl_0-a\", \"capacity\": \"1B\", \"bandwidth\": \"1B/s\", \"efficiency\": 1}]}",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (good); i++)
    {
      cJSON *root = cJSON_Parse (minimal);
      cJSON *patch = cJSON_Parse (good[i]);
      patch_into (root, patch);
      GError *error = NULL;
      VsConfig *c = config_compile (root, "v.json", &error);
      if (c == NULL)
        g_error ("patch %s: %s", good[i], error->message);
      config_free (c);
      cJSON_Delete (patch);
      cJSON_Delete (root);
    }
}

/* ---- presets ---- */

static void
test_presets_all (void)
{
  static const char *const required[] = {
    "v100-pcie-16g", "v100-sxm2-32g", "a100-40g", "a100-80g", "h100-pcie", "h100-sxm", "h200", "gh200",
    "rtx3090", "rtx4090", "l40s", "jetson-agx-orin", "jetson-orin-nano", "mi300x", "seed-hbm2e",
    "seed-gddr6x", "seed-lpddr5", "a100-80g-cxl", "h100-sxm-cxl", "a40",
  };
  g_auto (GStrv) names = config_list_presets ();
  for (gsize i = 0; i < G_N_ELEMENTS (required); i++)
    if (!g_strv_contains ((const char *const *) names, required[i]))
      g_error ("preset %s missing from %s", required[i], config_preset_dir ());

  /* Also every file in the folder, not only the listed names. */
  GDir *d = g_dir_open (config_preset_dir (), 0, NULL);
  g_assert_nonnull (d);
  const char *e;
  guint n = 0;
  while ((e = g_dir_read_name (d)) != NULL)
    {
      g_assert_true (g_str_has_suffix (e, ".json"));
      g_autofree char *name = g_strndup (e, strlen (e) - 5);
      GError *error = NULL;
      g_autoptr (VsConfig) c = config_load (name, NULL, &error);
      if (c == NULL)
        g_error ("preset %s: %s", name, error->message);
      g_assert_cmpstr (c->name, ==, name);
      g_assert_nonnull (strstr (c->description, "REFERENCE"));
      g_assert_cmpuint (c->uvm.fault_batch, ==, 256);
      g_assert_cmpfloat (c->uvm.fault_latency_ns, ==, 45000);
      g_assert_cmpuint (c->uvm.page, ==, 65536);
      g_assert_cmpuint (c->uvm.evict_unit, ==, 2u << 20);
      if (!c->unified)
        g_assert_cmpfloat (c->link.bandwidth, >, 0);

      /* --show output loads back to the same machine. */
      cJSON *j = config_to_json (c);
      g_autoptr (VsConfig) again = config_compile (j, "shown", &error);
      g_assert_no_error (error);
      cJSON *j2 = config_to_json (again);
      g_assert_true (cJSON_Compare (j, j2, TRUE));
      g_assert_cmpuint (again->memory.capacity, ==, c->memory.capacity);
      g_assert_cmpfloat (again->memory.bandwidth, ==, c->memory.bandwidth);
      g_assert_cmpfloat (again->link.bandwidth, ==, c->link.bandwidth);
      cJSON_Delete (j);
      cJSON_Delete (j2);
      n++;
    }
  g_dir_close (d);
  g_assert_cmpuint (n, ==, g_strv_length (names));
  g_assert_cmpuint (n, >=, G_N_ELEMENTS (required));
}

static void
test_presets_numbers (void)
{
  GError *error = NULL;
  g_autoptr (VsConfig) a = config_load ("a100-80g", NULL, &error);
  g_assert_no_error (error);
  /* device_mem = 2039 GB/s x 1759/2039 (triad) rounded to 0.86. */
  g_assert_cmpfloat_with_epsilon (a->memory.bandwidth * a->memory.efficiency, 2039e9 * 0.86, 1);
  g_assert_cmpuint (a->memory.capacity, ==, 80ull << 30);
  g_assert_cmpfloat (a->memory.latency_ns, ==, 405);
  g_assert_cmpfloat (a->tflops, ==, 312);
  /* link_h2d = 31.5 GB/s x 0.8 = 25.2 GB/s (measured pinned 25.1). */
  g_assert_cmpfloat_with_epsilon (a->link.bandwidth * a->link.efficiency, 25.2e9, 1);
  g_assert_cmpfloat (a->link.pageable_efficiency, ==, 0.4);
  g_assert_cmpuint (a->link.copy_engines, ==, 2);
  g_assert_false (a->unified);

  g_autoptr (VsConfig) x = config_load ("a100-80g-cxl", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (x->memory.bandwidth, ==, 2039e9);   /* inherited */
  g_assert_cmpuint (x->n_tiers, ==, 1);
  g_assert_cmpstr (x->tiers[0].name, ==, "cxl0");
  g_assert_cmpuint (x->tiers[0].capacity, ==, 256ull << 30);
  g_assert_cmpfloat_with_epsilon (x->tiers[0].bandwidth * x->tiers[0].efficiency, 51.2e9, 1);
  g_assert_cmpfloat (x->tiers[0].latency_ns, ==, 250);
  g_assert_cmpint (x->tiers[0].attach, ==, VS_ATTACH_HOST);

  g_autoptr (VsConfig) g = config_load ("gh200", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (g->host.bandwidth, ==, 546e9);
  g_assert_cmpuint (g->host.capacity, ==, 480ull << 30);
  g_assert_cmpfloat_with_epsilon (g->link.bandwidth * g->link.efficiency, 450e9 * 0.83, 1);
  g_assert_cmpuint (g->memory.capacity, ==, 96ull << 30);

  g_autoptr (VsConfig) j = config_load ("jetson-orin-nano", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (j->unified);
  g_assert_cmpfloat (j->memory.bandwidth, ==, 68e9);
  g_assert_cmpuint (j->memory.capacity, ==, 8ull << 30);

  g_autoptr (VsConfig) v = config_load ("v100-sxm2-32g", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (v->memory.capacity, ==, 32ull << 30);
  g_assert_cmpfloat (v->memory.efficiency, ==, 0.9);
  g_assert_cmpfloat (v->link.bandwidth, ==, 15.75e9);

  g_autoptr (VsConfig) s = config_load ("seed-hbm2e", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (s->memory.bandwidth * s->memory.efficiency, ==, 935e9);
  g_assert_cmpfloat (s->memory.latency_ns, ==, 100);

  g_autoptr (VsConfig) h = config_load ("h100-sxm-cxl", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (h->n_tiers, ==, 2);
  g_assert_cmpstr (h->tiers[1].name, ==, "cxl1");
  g_assert_cmpfloat (h->tflops, ==, 989.4);

  /* The A40's machine (issue 14): context 8.09 MiB + 2.909 MiB x 84 SMs
   * = 252.45 MiB, rounded to 252 MiB (docs/config.md); an 8-card PCIe 4.0
   * server, 1 TiB of host memory, cards joined by PCIe 4.0 x16 (31.5 GB/s
   * at NCCL's PCIe rate 12/15.75 = 0.76, NCCL's 5.7 us PCI ring step),
   * 6.25 GB/s of NIC per GPU (4 x 100 Gb/s = 50 GB/s shared by 8). */
  g_autoptr (VsConfig) a40 = config_load ("a40", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a40->memory.context, ==, 252ull << 20);
  g_assert_cmpuint (a40->host.capacity, ==, 1ull << 40);
  g_assert_cmpuint (a40->network.ranks_per_node, ==, 8);
  g_assert_cmpfloat (a40->network.intra.bandwidth, ==, 31.5e9);
  g_assert_cmpfloat (a40->network.intra.efficiency, ==, 0.76);
  g_assert_cmpfloat_with_epsilon (a40->network.intra.latency_ns, 5700, 1e-6);
  g_assert_cmpint (a40->network.intra_kind, ==, VS_FABRIC_PCIE);
  g_assert_cmpfloat (a40->network.inter.bandwidth, ==, 4 * 100e9 / 8 / 8);
  g_assert_cmpuint (a40->compute.sms, ==, 84);

  /* Preset names and --set together. */
  const char *const sets[] = { "tiers.cxl0.capacity=512GiB", "policy.oversubscription=direct", NULL };
  g_autoptr (VsConfig) xs = config_load ("a100-80g-cxl", sets, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (xs->tiers[0].capacity, ==, 512ull << 30);
  g_assert_cmpint (xs->oversubscription, ==, VS_OVERSUB_DIRECT);
  g_assert_cmpstr (config_oversub_name (VS_OVERSUB_UVM), ==, "uvm");
  g_assert_null (config_oversub_name (VS_OVERSUB_COUNT));
}

/* The schema table drives compiling and writing back. Every preset,
 * written with config_to_json and compiled again, gives the same text
 * (the writing is exact for every kind); and a100-80g-cxl's written
 * values are those of its files (configs/a100-80g.json, -cxl.json) key by
 * key: two keys given the same place in VsConfig, or a value stored with
 * the wrong width, would break one of them. */
static void
test_to_json_round_trip (void)
{
  g_auto (GStrv) names = config_list_presets ();
  g_assert_true (g_strv_length (names) >= 19);
  for (guint i = 0; names[i]; i++)
    {
      GError *error = NULL;
      g_autoptr (VsConfig) c = config_load (names[i], NULL, &error);
      g_assert_no_error (error);
      cJSON *j1 = config_to_json (c);
      g_autoptr (VsConfig) c2 = config_compile (j1, "round-trip", &error);
      g_assert_no_error (error);
      cJSON *j2 = config_to_json (c2);
      g_autofree char *t1 = cJSON_PrintUnformatted (j1);
      g_autofree char *t2 = cJSON_PrintUnformatted (j2);
      g_assert_cmpstr (t1, ==, t2);
      /* Every value written is a value compiled: spot checks per kind. */
      g_assert_cmpuint (c2->memory.capacity, ==, c->memory.capacity);
      g_assert_cmpfloat (c2->link.pageable_efficiency, ==, c->link.pageable_efficiency);
      g_assert_cmpuint (c2->link.copy_engines, ==, c->link.copy_engines);
      g_assert_cmpint (c2->oversubscription, ==, c->oversubscription);
      g_assert_cmpuint (c2->n_tiers, ==, c->n_tiers);
      for (guint k = 0; k < c->n_tiers; k++)
        {
          g_assert_cmpstr (c2->tiers[k].name, ==, c->tiers[k].name);
          g_assert_cmpint (c2->tiers[k].attach, ==, c->tiers[k].attach);
        }
      cJSON_Delete (j1);
      cJSON_Delete (j2);
    }

  GError *error = NULL;
  g_autoptr (VsConfig) c = config_load ("a100-80g-cxl", NULL, &error);
  g_assert_no_error (error);
  cJSON *j = config_to_json (c);
  static const struct { const char *a, *b, *want; } keys[] = {
    { "memory", "capacity", "80GiB" }, { "memory", "bandwidth", "2039GB/s" },
    { "memory", "latency", "405ns" }, { "memory", "reserved", "0B" },
    { "memory", "alloc_granularity", "2MiB" }, { "memory", "tech", "HBM2e" },
    { "link", "bandwidth", "31.5GB/s" }, { "link", "latency", "10us" },
    { "link", "tech", "PCIe 4.0 x16" }, { "host", "capacity", "2TiB" },  /* a100-80g's host: DGX A100 640GB, 2 TB (issue 17) */
    { "host", "bandwidth", "200GB/s" }, { "uvm", "page", "64KiB" },
    { "uvm", "evict_unit", "2MiB" }, { "uvm", "fault_latency", "45us" },
    { "policy", "oversubscription", "oom" }, { "gpu", "launch_latency", "0ns" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      const cJSON *v = cJSON_GetObjectItem (cJSON_GetObjectItem (j, keys[i].a), keys[i].b);
      g_assert_true (cJSON_IsString (v));
      if (strcmp (v->valuestring, keys[i].want) != 0)
        g_error ("%s.%s: %s, expected %s", keys[i].a, keys[i].b, v->valuestring, keys[i].want);
    }
  const cJSON *link = cJSON_GetObjectItem (j, "link"), *mem = cJSON_GetObjectItem (j, "memory");
  g_assert_cmpfloat (cJSON_GetObjectItem (mem, "efficiency")->valuedouble, ==, 0.86);
  g_assert_cmpfloat (cJSON_GetObjectItem (link, "efficiency")->valuedouble, ==, 0.8);
  g_assert_cmpfloat (cJSON_GetObjectItem (link, "pageable_efficiency")->valuedouble, ==, 0.4);
  g_assert_cmpfloat (cJSON_GetObjectItem (link, "copy_engines")->valuedouble, ==, 2);
  g_assert_cmpfloat (cJSON_GetObjectItem (cJSON_GetObjectItem (j, "uvm"), "fault_batch")->valuedouble, ==, 256);
  g_assert_cmpfloat (cJSON_GetObjectItem (cJSON_GetObjectItem (j, "compute"), "tflops")->valuedouble, ==, 312);
  g_assert_true (cJSON_IsFalse (cJSON_GetObjectItem (j, "unified")));
  g_assert_true (cJSON_IsFalse (cJSON_GetObjectItem (cJSON_GetObjectItem (j, "gpu"), "legacy_default_stream")));
  const cJSON *t = cJSON_GetArrayItem (cJSON_GetObjectItem (j, "tiers"), 0);
  g_assert_cmpstr (cJSON_GetObjectItem (t, "name")->valuestring, ==, "cxl0");
  g_assert_cmpstr (cJSON_GetObjectItem (t, "capacity")->valuestring, ==, "256GiB");
  g_assert_cmpstr (cJSON_GetObjectItem (t, "bandwidth")->valuestring, ==, "64GB/s");
  g_assert_cmpstr (cJSON_GetObjectItem (t, "latency")->valuestring, ==, "250ns");
  g_assert_cmpstr (cJSON_GetObjectItem (t, "attach")->valuestring, ==, "host");
  g_assert_cmpfloat (cJSON_GetObjectItem (t, "efficiency")->valuedouble, ==, 0.8);
  cJSON_Delete (j);
}

/* The compute section (SPEC 4): per-precision peaks, tflops as another
 * name for fp16, clock units, and what the presets say. */
static void
test_compute (void)
{
  GError *error = NULL;
  g_autoptr (VsConfig) v = config_load ("v100-pcie-16g", NULL, &error);
  g_assert_no_error (error);
  /* The PCIe part: 112 dense FP16 tensor TFLOPS, not the SXM2's 125. */
  g_assert_cmpfloat (v->tflops, ==, 112);
  g_assert_cmpfloat (v->compute.peak[VS_PREC_FP16], ==, 112);
  g_assert_cmpfloat (v->compute.peak[VS_PREC_FP32], ==, 14);
  g_assert_cmpfloat (v->compute.peak[VS_PREC_FP8], ==, 0);   /* Volta has none */
  g_assert_cmpuint (v->compute.sms, ==, 80);
  g_assert_cmpfloat (v->compute.clock_hz, ==, 1380e6);
  g_assert_cmpuint (v->compute.l2, ==, 6ull << 20);
  g_autoptr (VsConfig) s = config_load ("v100-sxm2-32g", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (s->tflops, ==, 125);
  g_assert_cmpfloat (s->compute.peak[VS_PREC_FP32], ==, 15.7);
  g_assert_cmpfloat (s->compute.clock_hz, ==, 1530e6);
  g_autoptr (VsConfig) a = config_load ("a100-80g", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (a->compute.peak[VS_PREC_FP32], ==, 19.5);
  g_assert_cmpfloat (a->compute.peak[VS_PREC_TF32], ==, 156);
  g_assert_cmpfloat (a->compute.peak[VS_PREC_BF16], ==, 312);
  g_assert_cmpuint (a->compute.sms, ==, 108);
  g_assert_cmpint (a->kernel_model, ==, VS_KMODEL_WAVES);
  /* GeForce at the FP32-accumulate tensor rate. */
  g_autoptr (VsConfig) r = config_load ("rtx3090", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (r->compute.peak[VS_PREC_FP16], ==, 71);
  g_assert_cmpfloat (r->compute.peak[VS_PREC_FP32], ==, 35.6);

  /* tflops and fp16 are one figure; --show writes it back loadable. */
  const char *const sets[] = { "compute.fp16=200", "compute.tflops=null", "compute.clock=1.5GHz",
                               "model.kernel=simple", NULL };
  g_autoptr (VsConfig) x = config_load ("a100-80g", sets, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (x->tflops, ==, 200);
  g_assert_cmpfloat (x->compute.clock_hz, ==, 1.5e9);
  g_assert_cmpint (x->kernel_model, ==, VS_KMODEL_SIMPLE);
  cJSON *j = config_to_json (x);
  g_autoptr (VsConfig) y = config_compile (j, "shown", &error);
  cJSON_Delete (j);
  g_assert_no_error (error);
  g_assert_cmpfloat (y->compute.clock_hz, ==, 1.5e9);
  g_assert_cmpfloat (y->compute.peak[VS_PREC_FP8], ==, 0);
  g_assert_cmpint (y->kernel_model, ==, VS_KMODEL_SIMPLE);

  /* --set of either name replaces the figure (a100-80g gives fp16). */
  const char *const t100[] = { "compute.tflops=100", NULL };
  g_autoptr (VsConfig) t = config_load ("a100-80g", t100, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (t->compute.peak[VS_PREC_FP16], ==, 100);
  /* So does a child config's, over its parent's other name. */
  g_autofree char *dir = g_dir_make_tmp ("vs-config-XXXXXX", NULL);
  g_autofree char *child = g_build_filename (dir, "child.json", NULL);
  g_assert_true (g_file_set_contents (child, "{\"extends\": \"a100-80g\", \"compute\": {\"tflops\": 400}}", -1, NULL));
  g_autoptr (VsConfig) ch = config_load (child, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (ch->tflops, ==, 400);
  g_assert_cmpfloat (ch->compute.peak[VS_PREC_FP32], ==, 19.5);   /* the rest inherited */
  g_unlink (child);
  g_rmdir (dir);
  /* One file giving both, differently: refused. */
  cJSON *both = cJSON_Parse ("{\"compute\": {\"tflops\": 100, \"fp16\": 312},"
                             " \"memory\": {\"capacity\": \"1GiB\", \"bandwidth\": \"1GB/s\"},"
                             " \"link\": {\"bandwidth\": \"1GB/s\"}}");
  VsConfig *bc = config_compile (both, "both.json", &error);
  cJSON_Delete (both);
  g_assert_null (bc);
  g_assert_nonnull (strstr (error->message, "both.json: compute.tflops: is another name for compute.fp16, and they differ (100 and 312)"));
  g_clear_error (&error);

  static const struct { const char *set, *want; } bad[] = {
    { "compute.clock=1410", "compute.clock: expected a clock with its unit" },
    { "compute.clock=1410mhz", "compute.clock: '1410mhz' is not a clock" },
    { "compute.fp32=-1", "compute.fp32: must be greater than 0" },
    { "compute.sms=1.5", "compute.sms: must be a whole number" },
    { "model.kernel=fast", "model.kernel: 'fast' is not one of \"waves\", \"simple\"" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *const one[] = { bad[i].set, NULL };
      VsConfig *c = config_load ("a100-80g", one, &error);
      g_assert_null (c);
      g_assert_error (error, VS_CONFIG_ERROR, 0);
      if (strstr (error->message, bad[i].want) == NULL)
        g_error ("%s: got '%s'", bad[i].set, error->message);
      g_clear_error (&error);
    }
}

/* config_load_with_plain: the target with its --set values, the plain
 * config as config_load without them gives it, from one read. */
static void
test_load_with_plain (void)
{
  GError *error = NULL, *plain_error = NULL;
  const char *const sets[] = { "memory.capacity=24GiB", "memory.bandwidth=936GB/s", NULL };
  VsConfig *plain = NULL;
  g_autoptr (VsConfig) t = config_load_with_plain ("a100-80g", sets, &plain, &plain_error, &error);
  g_assert_no_error (error);
  g_assert_no_error (plain_error);
  g_assert_nonnull (plain);
  g_autoptr (VsConfig) want = config_load ("a100-80g", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->memory.capacity, ==, 24ull << 30);
  g_assert_cmpfloat (t->memory.bandwidth, ==, 936e9);
  g_assert_cmpuint (plain->memory.capacity, ==, 80ull << 30);
  g_assert_cmpuint (plain->memory.capacity, ==, want->memory.capacity);
  g_assert_cmpfloat (plain->memory.bandwidth, ==, want->memory.bandwidth);
  g_assert_cmpstr (plain->name, ==, want->name);
  cJSON *a = config_to_json (plain), *b = config_to_json (want);
  g_assert_true (cJSON_Compare (a, b, TRUE));
  cJSON_Delete (a);
  cJSON_Delete (b);
  config_free (plain);

  /* A bad --set: no target, no plain, the error names the --set. */
  const char *const bad[] = { "memory.bandwidth=0", NULL };
  plain = (VsConfig *) 1;
  g_assert_null (config_load_with_plain ("a100-80g", bad, &plain, &plain_error, &error));
  g_assert_null (plain);
  g_assert_no_error (plain_error);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "--set memory.bandwidth=0"));
  g_clear_error (&error);
  g_assert_null (config_load_with_plain ("no-such-preset", NULL, &plain, &plain_error, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  /* Presets come from the source tree's configs/: this file's folder is
   * tests/ROOM/, so ../../configs (relative to the working directory the build
   * compiled from when __FILE__ is relative). */
  g_autofree char *srcdir = g_path_get_dirname (__FILE__);
  g_autofree char *rel = g_build_filename (srcdir, "..", "..", "configs", NULL);
  g_autofree char *configs = g_canonicalize_filename (rel, NULL);
  if (!g_file_test (configs, G_FILE_TEST_IS_DIR))
    g_error ("no configs folder at %s (run from the source tree)", configs);
  g_setenv ("VRAMSIM_CONFIGS", configs, TRUE);
  g_assert_cmpstr (config_preset_dir (), ==, configs);

  tmpdir = g_dir_make_tmp ("vramsim-config-XXXXXX", NULL);
  g_assert_nonnull (tmpdir);

  g_test_add_func ("/config/defaults", test_defaults);
  g_test_add_func ("/config/load-with-plain", test_load_with_plain);
  g_test_add_func ("/config/bare-numbers", test_bare_numbers);
  g_test_add_func ("/config/extends-merge", test_extends_merge);
  g_test_add_func ("/config/extends-preset", test_extends_preset);
  g_test_add_func ("/config/extends-cycle", test_extends_cycle);
  g_test_add_func ("/config/load-errors", test_load_errors);
  g_test_add_func ("/config/set", test_set);
  g_test_add_func ("/config/set-errors", test_set_errors);
  g_test_add_func ("/config/validation", test_validation);
  g_test_add_func ("/config/presets-all", test_presets_all);
  g_test_add_func ("/config/presets-numbers", test_presets_numbers);
  g_test_add_func ("/config/to-json-round-trip", test_to_json_round_trip);
  g_test_add_func ("/config/compute", test_compute);
  int status = g_test_run ();
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return status;
}
