/* config.c — loading, merging, editing and checking machine configs
 * (SPEC section 4; every default and its reason is in docs/config.md).
 *
 * Three stages: load (read a file, check its keys and values, resolve
 * `extends` depth-first, child wins), set (--set edits on the merged tree,
 * checked as they are applied) and compile (check the whole tree again,
 * cross-check fields, fill defaults, produce a VsConfig). The schema table
 * below is the one list of keys: unknown-key errors, --set paths and the
 * per-field checks all read it. */
#include "config/config.h"
#include "base/suggest.h"
#include "trace/trace.h" /* trace_json_nul_escape */
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

G_DEFINE_QUARK (vs-config-error-quark, config_error)

/* ---- schema ---- */

typedef enum {
  K_STR,      /* string */
  K_EXTENDS,  /* string or null */
  K_BYTES,    /* size: "80GiB" or a whole number of bytes */
  K_RATE,     /* bandwidth: "2039GB/s" or bytes/s */
  K_TIME,     /* "405ns" or ns */
  K_FRAC,     /* number in (0, 1] */
  K_POS,      /* number > 0 */
  K_COUNT,    /* whole number >= 1 */
  K_UINT,     /* whole number >= 0 */
  K_UNIT,     /* number in [0, 1) */
  K_SIZE_UNL, /* a size, or "unlimited" (stored as G_MAXUINT64) */
  K_FREQ,     /* clock: "1410MHz" (Hz, kHz, MHz, GHz); a bare number other than 0 is refused */
  K_BOOL,
  K_ENUM,
  K_OBJ,
  K_TIERS,    /* array of tier objects */
} Kind;

typedef union {
  const char *s;
  guint64 u;
  double d;
  gboolean b;
  int e;
} Val;

typedef struct Field Field;
/* A section check, run once a section (or one tier) has been compiled:
 * the cross-field rules of the keys it holds. AT is the VsConfig, or the
 * VsTier for a tier; PREFIX names it in messages ("memory", "tiers[1]"). */
typedef gboolean (*FieldCheck) (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);

/* One key of the schema. The table is the one list of keys: unknown-key
 * errors, --set paths, the per-value checks, compiling (where each value
 * goes, its default, whether it is required), writing back
 * (config_to_json) and freeing all read it, so a new key is one line. */
struct Field {
  const char *key;
  Kind kind;
  const Field *sub;               /* K_OBJ, K_TIERS: the keys inside */
  const char *const *choices;     /* K_ENUM */
  gsize at;                       /* leaves: offset of the value in VsConfig (VsTier for tier keys) */
  Val def;                        /* leaves: the value when absent (docs/config.md says why) */
  const char *need;               /* required: what to give, for "required (...)"; NULL: optional */
  gboolean unless_unified;        /* required only when "unified" is false */
  FieldCheck check;               /* K_OBJ, K_TIERS (per tier), K_STR: run after compiling it */
};

/* Where a value is stored, by kind: K_STR char * (owned), K_BYTES
 * guint64, K_RATE/K_TIME/K_FRAC/K_POS/K_UNIT/K_FREQ double, K_COUNT/K_UINT guint,
 * K_SIZE_UNL guint64, K_BOOL
 * gboolean, K_ENUM the enum (int-sized). K_EXTENDS is not stored. */
#define AT(member) .at = offsetof (VsConfig, member)
#define TIER(member) .at = offsetof (VsTier, member)
G_STATIC_ASSERT (sizeof (VsOversub) == sizeof (int) && sizeof (VsAttach) == sizeof (int));
G_STATIC_ASSERT (sizeof (VsKernelModelKind) == sizeof (int) && sizeof (VsTf32Policy) == sizeof (int)
                 && sizeof (VsTouchesMode) == sizeof (int));

static const char *const attach_choices[] = { "host", "device", NULL };
#define MAX_TIERS 64

static const char *const oversub_choices[] = { "oom", "spill", "direct", "uvm", NULL };
static const char *const allocator_choices[] = { "auto", "pytorch", "async", "none", NULL };
static const char *const first_touch_choices[] = { "device", "host", NULL };
G_STATIC_ASSERT (sizeof (VsAllocatorKind) == sizeof (int) && sizeof (VsFirstTouch) == sizeof (int));
static const char *const kmodel_choices[] = { "waves", "simple", NULL };
static const char *const tf32_choices[] = { "conv", "all", "none", NULL };
static const char *const touches_choices[] = { "auto", "infer", "named", NULL };

static gboolean check_name (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_memory (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_link (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_tier (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_host (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_uvm (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_network_level (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_network (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_allocator (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
static gboolean check_compute (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);

/* Dense peaks per precision (0 = not given: the kernel model falls back
 * to a documented neighbour, kernel-model.c); check_compute makes fp16
 * (or its other name, tflops) required. */
static const Field compute_fields[] = {
  { "tflops", K_POS, AT (tflops), .def.d = 0 },
  { "fp64", K_POS, AT (compute.peak[1]), .def.d = 0 },
  { "fp32", K_POS, AT (compute.peak[2]), .def.d = 0 },
  { "tf32", K_POS, AT (compute.peak[3]), .def.d = 0 },
  { "fp16", K_POS, AT (compute.peak[4]), .def.d = 0 },
  { "bf16", K_POS, AT (compute.peak[5]), .def.d = 0 },
  { "fp8", K_POS, AT (compute.peak[6]), .def.d = 0 },
  { "int8", K_POS, AT (compute.peak[7]), .def.d = 0 },
  { "sms", K_COUNT, AT (compute.sms), .def.u = 0 },
  { "clock", K_FREQ, AT (compute.clock_hz), .def.d = 0 },
  { "l2", K_BYTES, AT (compute.l2), .def.u = 0 },
  { .key = NULL },
};
static const Field model_fields[] = {
  { "kernel", K_ENUM, .choices = kmodel_choices, AT (kernel_model), .def.e = VS_KMODEL_WAVES },
  { "tf32", K_ENUM, .choices = tf32_choices, AT (tf32), .def.e = VS_TF32_CONV },
  { "touches", K_ENUM, .choices = touches_choices, AT (touches), .def.e = VS_TOUCHES_AUTO },
  { .key = NULL },
};
static const Field memory_fields[] = {
  { "tech", K_STR, AT (memory.tech), .def.s = "" },
  { "capacity", K_BYTES, AT (memory.capacity), .need = "the device memory size, e.g. \"80GiB\"" },
  { "bandwidth", K_RATE, AT (memory.bandwidth), .need = "the peak device memory bandwidth, e.g. \"2039GB/s\"" },
  { "efficiency", K_FRAC, AT (memory.efficiency), .def.d = 1.0 },
  { "latency", K_TIME, AT (memory.latency_ns), .def.d = 0 },
  { "reserved", K_BYTES, AT (memory.reserved), .def.u = 0 },
  { "alloc_granularity", K_BYTES, AT (memory.alloc_granularity), .def.u = 2u << 20 },
  /* The CUDA context and loaded modules, charged when the replay starts;
   * presets give a measured figure (docs/config.md), a new file none. */
  { "context", K_BYTES, AT (memory.context), .def.u = 0 },
  { .key = NULL },
};
/* PYTORCH_CUDA_ALLOC_CONF's keys and PyTorch's defaults (sim/mem/alloc-pytorch.c). */
static const Field allocator_fields[] = {
  { "kind", K_ENUM, .choices = allocator_choices, AT (allocator.kind), .def.e = VS_ALLOCATOR_AUTO },
  { "expandable_segments", K_BOOL, AT (allocator.expandable_segments), .def.b = FALSE },
  { "max_split_size", K_SIZE_UNL, AT (allocator.max_split_size), .def.u = G_MAXUINT64 },
  { "max_non_split_rounding", K_BYTES, AT (allocator.max_non_split_rounding), .def.u = 20u << 20 },
  { "roundup_power2_divisions", K_UINT, AT (allocator.roundup_power2_divisions), .def.u = 0 },
  { "garbage_collection_threshold", K_UNIT, AT (allocator.garbage_collection_threshold), .def.d = 0 },
  { "large_segment", K_BYTES, AT (allocator.large_segment), .def.u = 20u << 20 },
  { "release_threshold", K_SIZE_UNL, AT (allocator.release_threshold), .def.u = G_MAXUINT64 },
  { .key = NULL },
};
static const Field link_fields[] = {
  { "tech", K_STR, AT (link.tech), .def.s = "" },
  { "bandwidth", K_RATE, AT (link.bandwidth), .unless_unified = TRUE,
    .need = "the host link's peak bandwidth per direction, e.g. \"31.5GB/s\" for PCIe 4.0 x16; "
            "or set \"unified\": true for one shared memory pool" },
  { "efficiency", K_FRAC, AT (link.efficiency), .def.d = 1.0 },
  { "pageable_efficiency", K_FRAC, AT (link.pageable_efficiency), .def.d = 0.5 },
  { "latency", K_TIME, AT (link.latency_ns), .def.d = 10e3 },
  { "copy_engines", K_COUNT, AT (link.copy_engines), .def.u = 2 },
  { .key = NULL },
};
static const Field tier_fields[] = {
  { "name", K_STR, TIER (name), .need = "the tier's name, e.g. \"cxl0\"; it names its resource in reports" },
  { "tech", K_STR, TIER (tech), .def.s = "" },
  { "capacity", K_BYTES, TIER (capacity), .need = "the tier's size, e.g. \"256GiB\"" },
  { "bandwidth", K_RATE, TIER (bandwidth), .need = "the tier's peak bandwidth, e.g. \"64GB/s\"" },
  { "efficiency", K_FRAC, TIER (efficiency), .def.d = 1.0 },
  { "latency", K_TIME, TIER (latency_ns), .def.d = 0 },
  { "attach", K_ENUM, .choices = attach_choices, TIER (attach), .def.e = VS_ATTACH_HOST },
  { .key = NULL },
};
static const Field host_fields[] = {
  { "tech", K_STR, AT (host.tech), .def.s = "" },
  { "capacity", K_BYTES, AT (host.capacity), .def.u = 1ull << 40 },
  { "bandwidth", K_RATE, AT (host.bandwidth), .def.d = 200e9 },
  { .key = NULL },
};
static const Field uvm_fields[] = {
  { "page", K_BYTES, AT (uvm.page), .def.u = 64u << 10 },
  { "evict_unit", K_BYTES, AT (uvm.evict_unit), .def.u = 2u << 20 },
  { "fault_batch", K_COUNT, AT (uvm.fault_batch), .def.u = 256 },
  { "fault_latency", K_TIME, AT (uvm.fault_latency_ns), .def.d = 30e3 },
  /* Where an untouched page of a program's managed allocation starts: on
   * the device, as the H200 runs showed (docs/validation.md). */
  { "first_touch", K_ENUM, .choices = first_touch_choices, AT (uvm.first_touch), .def.e = VS_FIRST_TOUCH_DEVICE },
  { .key = NULL },
};
static const Field policy_fields[] = {
  { "oversubscription", K_ENUM, .choices = oversub_choices, AT (oversubscription), .def.e = VS_OVERSUB_OOM },
  { .key = NULL },
};
static const Field gpu_fields[] = {
  { "launch_latency", K_TIME, AT (gpu.launch_latency_ns), .def.d = 0 },
  { "legacy_default_stream", K_BOOL, AT (gpu.legacy_default_stream), .def.b = FALSE },
  /* The driver's bound on ops queued but not started (docs/config.md:
   * about 1,000 kernel launches measured on one stream before a launch
   * blocks; 0 = no bound). */
  { "launch_queue", K_UINT, AT (gpu.launch_queue), .def.u = 1024 },
  { .key = NULL },
};
/* SPEC 4 `network` (docs/config.md): with no network given, a job of one
 * GPU whose peers, if a trace names any, sit behind PCIe 4.0 x16 and a
 * 100 Gb/s NIC each; latencies per step are NCCL's Simple ring figures
 * (NVIDIA/nccl src/tuning/cost_model.cc at 1fc949c5, hwLatencies: PCI
 * 5.7 us, network 14 us). The NCCL figures of each preset and their
 * sources are in docs/config.md, "Network presets". */
static const char *const fabric_choices[] = { "pcie", "nvlink", "nvswitch", NULL };
static const char *const host_cpu_choices[] = { "intel", "amd", "arm", NULL };
static const char *const force_algo_choices[] = { "auto", "ring", "tree", "nvls", "nvls_tree", "collnet_direct",
                                                  "collnet_chain", NULL };
static const char *const force_proto_choices[] = { "auto", "LL", "LL128", "Simple", NULL };
G_STATIC_ASSERT (sizeof (VsFabric) == sizeof (int) && sizeof (VsHostCpu) == sizeof (int));
G_STATIC_ASSERT (sizeof (VsForceAlgo) == sizeof (int) && sizeof (VsForceProto) == sizeof (int));
static const Field network_intra_fields[] = {
  { "tech", K_STR, AT (network.intra.tech), .def.s = "PCIe 4.0 x16" },
  { "kind", K_ENUM, .choices = fabric_choices, AT (network.intra_kind), .def.e = VS_FABRIC_PCIE },
  { "bandwidth", K_RATE, AT (network.intra.bandwidth), .def.d = 31.5e9 },
  { "latency", K_TIME, AT (network.intra.latency_ns), .def.d = 5700 },
  { "efficiency", K_FRAC, AT (network.intra.efficiency), .def.d = 1.0 },
  { "ll_max_bw", K_RATE, AT (network.ll_max_bw), .def.d = 0 },
  { "nvls", K_BOOL, AT (network.nvls), .def.b = FALSE },
  { "nvls_efficiency", K_FRAC, AT (network.nvls_efficiency), .def.d = 0.85 },
  { .key = NULL },
};
static const Field network_inter_fields[] = {
  { "tech", K_STR, AT (network.inter.tech), .def.s = "100 Gb/s Ethernet per GPU" },
  { "bandwidth", K_RATE, AT (network.inter.bandwidth), .def.d = 12.5e9 },
  { "latency", K_TIME, AT (network.inter.latency_ns), .def.d = 14000 },
  { "efficiency", K_FRAC, AT (network.inter.efficiency), .def.d = 1.0 },
  { "sharp", K_BOOL, AT (network.sharp), .def.b = FALSE },
  { "cpu", K_ENUM, .choices = host_cpu_choices, AT (network.cpu), .def.e = VS_HOST_CPU_INTEL },
  { .key = NULL },
};
static const Field network_fields[] = {
  { "ranks", K_COUNT, AT (network.ranks), .def.u = 1 },
  { "ranks_per_node", K_COUNT, AT (network.ranks_per_node), .def.u = 1 },
  { "algorithm", K_ENUM, .choices = force_algo_choices, AT (network.algorithm), .def.e = VS_FORCE_ALGO_AUTO },
  { "protocol", K_ENUM, .choices = force_proto_choices, AT (network.protocol), .def.e = VS_FORCE_PROTO_AUTO },
  { "call_floor", K_TIME, AT (network.call_floor_ns), .def.d = 0 },
  /* What-ifs by role (docs/model.md section 11, "In the replay"): the
   * size to replay every group of that role on; 0 keeps the trace's. */
  { "dp", K_UINT, AT (network.dp), .def.u = 0 },
  { "tp", K_UINT, AT (network.tp), .def.u = 0 },
  { "pp", K_UINT, AT (network.pp), .def.u = 0 },
  { "ep", K_UINT, AT (network.ep), .def.u = 0 },
  { "cp", K_UINT, AT (network.cp), .def.u = 0 },
  { "intra", K_OBJ, .sub = network_intra_fields, .check = check_network_level },
  { "inter", K_OBJ, .sub = network_inter_fields, .check = check_network_level },
  { .key = NULL },
};
/* Compiled in this order: the leaves first ("unified" decides what link
 * and tiers require), then each section, then its check. */
static const Field root_fields[] = {
  { "name", K_STR, AT (name), .def.s = NULL /* the file's base name */, .check = check_name },
  { "description", K_STR, AT (description), .def.s = "" },
  { "extends", K_EXTENDS, .sub = NULL },
  { "compute", K_OBJ, .sub = compute_fields, .check = check_compute },
  { "memory", K_OBJ, .sub = memory_fields, .check = check_memory },
  { "allocator", K_OBJ, .sub = allocator_fields, .check = check_allocator },
  { "link", K_OBJ, .sub = link_fields, .check = check_link },
  { "tiers", K_TIERS, .sub = tier_fields, .check = check_tier },
  { "host", K_OBJ, .sub = host_fields, .check = check_host },
  { "unified", K_BOOL, AT (unified), .def.b = FALSE },
  { "uvm", K_OBJ, .sub = uvm_fields, .check = check_uvm },
  { "policy", K_OBJ, .sub = policy_fields },
  { "gpu", K_OBJ, .sub = gpu_fields },
  { "network", K_OBJ, .sub = network_fields, .check = check_network },
  { "model", K_OBJ, .sub = model_fields },
  { .key = NULL },
};

const char *const config_builtin_names[VS_BUILTIN_COUNT + 1] = {
  [VS_BUILTIN_DEVICE] = "device",
  [VS_BUILTIN_HOST] = "host",
  [VS_BUILTIN_SM] = "sm",
  [VS_BUILTIN_DEVICE_MEM] = "device_mem",
  [VS_BUILTIN_LINK_H2D] = "link_h2d",
  [VS_BUILTIN_LINK_D2H] = "link_d2h",
  [VS_BUILTIN_HOST_MEM] = "host_mem",
  [VS_BUILTIN_COUNT] = NULL,
};

static const Field *
field_find (const Field *fields, const char *key)
{
  for (const Field *f = fields; f->key != NULL; f++)
    if (strcmp (f->key, key) == 0)
      return f;
  return NULL;
}

static char *
field_list (const Field *fields)
{
  GString *s = g_string_new (NULL);
  for (const Field *f = fields; f->key != NULL; f++)
    g_string_append_printf (s, "%s%s", s->len ? ", " : "", f->key);
  return g_string_free (s, FALSE);
}

/* (g_strconcat, not a printf: a compile joins a path for every key.) */
static char *
path_join (const char *prefix, const char *key)
{
  return prefix == NULL || *prefix == '\0' ? g_strdup (key) : g_strconcat (prefix, ".", key, NULL);
}

/* (transfer full) "; did you mean 'memory.bandwidth'?" for a KEY that is
 * not one of FIELDS (in the section at PATH), or "". */
static char *
key_hint (const Field *fields, const char *key, const char *path)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  for (const Field *f = fields; f->key != NULL; f++)
    g_ptr_array_add (keys, (gpointer) f->key);
  g_ptr_array_add (keys, NULL);
  g_autofree char *prefix = path && *path ? g_strconcat (path, ".", NULL) : g_strdup ("");
  return suggest_phrase (key, (const char *const *) keys->pdata, prefix);
}

static void
fail (GError **error, const char *origin, const char *path, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static void
fail (GError **error, const char *origin, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (path != NULL && *path != '\0')
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s: %s", origin, path, msg);
  else
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s", origin, msg);
}

static const char *
json_type_name (const cJSON *v)
{
  if (cJSON_IsString (v)) return "a string";
  if (cJSON_IsNumber (v)) return "a number";
  if (cJSON_IsBool (v)) return "a boolean";
  if (cJSON_IsNull (v)) return "null";
  if (cJSON_IsArray (v)) return "an array";
  if (cJSON_IsObject (v)) return "an object";
  return "an unknown value";
}

/* "1410MHz", "1.98 GHz": a finite number >= 0, an optional space, a unit. */
static gboolean
parse_freq (const char *s, double *hz)
{
  static const struct { const char *unit; double scale; } units[] = {
    { "Hz", 1 }, { "kHz", 1e3 }, { "MHz", 1e6 }, { "GHz", 1e9 },
  };
  char *end = NULL;
  double d = g_ascii_strtod (s, &end);
  if (end == s || !isfinite (d) || d < 0)
    return FALSE;
  if (*end == ' ')
    end++;
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (end, units[i].unit) == 0)
      {
        *hz = d * units[i].scale;
        return TRUE;
      }
  return FALSE;
}

/* A JSON number as a person wrote it: 1073741824, 5000.5, 5e-07. */
static char *
number_text (double d)
{
  if (d == floor (d) && fabs (d) < 1e17)
    return g_strdup_printf ("%.0f", d);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.15g", d));
}

/* Checks one leaf value V of kind F->kind and parses it into OUT. */
static gboolean
leaf_value (const Field *f, const cJSON *v, const char *origin, const char *path, Val *out, GError **error)
{
  GError *uerr = NULL;
  switch (f->kind)
    {
    case K_STR:
    case K_EXTENDS:
      if (!cJSON_IsString (v))
        {
          fail (error, origin, path, "expected a string, got %s", json_type_name (v));
          return FALSE;
        }
      out->s = v->valuestring;
      return TRUE;

    case K_BYTES:
      if (cJSON_IsNumber (v))
        {
          /* SPEC 4: a bare number other than 0 is an error. */
          if (v->valuedouble < 0)
            {
              fail (error, origin, path, "a size cannot be negative (got %g)", v->valuedouble);
              return FALSE;
            }
          if (v->valuedouble != 0)
            {
              g_autofree char *n = number_text (v->valuedouble);
              fail (error, origin, path, "%s has no unit: a size needs one, such as \"%sGiB\" or \"%sB\" (units: %s; "
                    "only 0 may go without one)", n, n, n, units_accepted (VS_UNITS_SIZE));
              return FALSE;
            }
          out->u = 0;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          if (!units_parse_bytes (v->valuestring, &out->u, &uerr))
            goto unit_error;
          return TRUE;
        }
      fail (error, origin, path, "expected a size such as \"80GiB\", got %s", json_type_name (v));
      return FALSE;

    case K_RATE:
    case K_TIME:
      if (cJSON_IsNumber (v))
        {
          if (v->valuedouble < 0)
            {
              fail (error, origin, path, "%s cannot be negative (got %g)",
                    f->kind == K_RATE ? "a bandwidth" : "a time", v->valuedouble);
              return FALSE;
            }
          if (v->valuedouble != 0)
            {
              g_autofree char *n = number_text (v->valuedouble);
              fail (error, origin, path, "%s has no unit: %s needs one, such as \"%s%s\" or \"%s%s\" (units: %s; "
                    "only 0 may go without one)", n, f->kind == K_RATE ? "a bandwidth" : "a time", n,
                    f->kind == K_RATE ? "GB/s" : "us", n, f->kind == K_RATE ? "B/s" : "ns",
                    units_accepted (f->kind == K_RATE ? VS_UNITS_RATE : VS_UNITS_TIME));
              return FALSE;
            }
          out->d = 0;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          gboolean ok = f->kind == K_RATE ? units_parse_rate (v->valuestring, &out->d, &uerr)
                                          : units_parse_time (v->valuestring, &out->d, &uerr);
          if (!ok)
            goto unit_error;
          return TRUE;
        }
      fail (error, origin, path, "expected %s, got %s",
            f->kind == K_RATE ? "a bandwidth such as \"936GB/s\"" : "a time such as \"10us\"",
            json_type_name (v));
      return FALSE;

    case K_FRAC:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a number in (0, 1], got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0 && v->valuedouble <= 1))
        {
          fail (error, origin, path, "must be in (0, 1] (a fraction of the peak), got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_POS:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a number, got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0) || !isfinite (v->valuedouble))
        {
          fail (error, origin, path, "must be greater than 0, got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_COUNT:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a whole number, got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 1) || v->valuedouble != floor (v->valuedouble)
          || v->valuedouble > (double) G_MAXUINT)
        {
          fail (error, origin, path, "must be a whole number >= 1, got %g", v->valuedouble);
          return FALSE;
        }
      out->u = (guint64) v->valuedouble;
      return TRUE;

    case K_UINT:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a whole number, got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 0) || v->valuedouble != floor (v->valuedouble)
          || v->valuedouble > (double) G_MAXUINT)
        {
          fail (error, origin, path, "must be a whole number >= 0, got %g", v->valuedouble);
          return FALSE;
        }
      out->u = (guint64) v->valuedouble;
      return TRUE;

    case K_UNIT:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a number in [0, 1), got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 0 && v->valuedouble < 1))
        {
          fail (error, origin, path, "must be in [0, 1) (0: off), got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_SIZE_UNL:
      if (cJSON_IsString (v) && strcmp (v->valuestring, "unlimited") == 0)
        {
          out->u = G_MAXUINT64;
          return TRUE;
        }
      if (!cJSON_IsString (v) && !cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected \"unlimited\" or a size such as \"128MiB\", got %s",
                json_type_name (v));
          return FALSE;
        }
      {
        Field as_bytes = *f;
        as_bytes.kind = K_BYTES;
        return leaf_value (&as_bytes, v, origin, path, out, error);
      }
    case K_FREQ:
      if (cJSON_IsNumber (v) && v->valuedouble == 0)
        {
          out->d = 0;
          return TRUE;
        }
      if (cJSON_IsString (v) && parse_freq (v->valuestring, &out->d))
        return TRUE;
      if (cJSON_IsString (v))
        fail (error, origin, path, "'%s' is not a clock such as \"1410MHz\" (units: Hz kHz MHz GHz; case matters)",
              v->valuestring);
      else
        fail (error, origin, path, "expected a clock with its unit such as \"1410MHz\" (units: Hz kHz MHz GHz), got %s",
              json_type_name (v));
      return FALSE;

    case K_BOOL:
      if (!cJSON_IsBool (v))
        {
          fail (error, origin, path, "expected true or false, got %s", json_type_name (v));
          return FALSE;
        }
      out->b = cJSON_IsTrue (v);
      return TRUE;

    case K_ENUM:
      if (cJSON_IsString (v))
        for (int i = 0; f->choices[i] != NULL; i++)
          if (strcmp (f->choices[i], v->valuestring) == 0)
            {
              out->e = i;
              return TRUE;
            }
      {
        g_autofree char *list = g_strjoinv ("\", \"", (char **) f->choices);
        if (cJSON_IsString (v))
          fail (error, origin, path, "'%s' is not one of \"%s\"", v->valuestring, list);
        else
          fail (error, origin, path, "expected one of \"%s\", got %s", list, json_type_name (v));
      }
      return FALSE;

    case K_OBJ:
    case K_TIERS:
      break;
    }
  g_assert_not_reached ();

unit_error:
  fail (error, origin, path, "%s", uerr->message);
  g_error_free (uerr);
  return FALSE;
}

static gboolean check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error);

/* Checks every key of OBJ against FIELDS (unknown and duplicate keys) and
 * every value against its kind. null stands for "absent" everywhere. */
static gboolean
check_object (const Field *fields, const cJSON *obj, const char *origin, const char *path, GError **error)
{
  for (const cJSON *it = obj->child; it != NULL; it = it->next)
    {
      g_autofree char *p = path_join (path, it->string);
      for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
        if (strcmp (prev->string, it->string) == 0)
          {
            fail (error, origin, p, "duplicate key");
            return FALSE;
          }
      const Field *f = field_find (fields, it->string);
      if (f == NULL)
        {
          g_autofree char *known = field_list (fields);
          g_autofree char *hint = key_hint (fields, it->string, path);
          fail (error, origin, p, "unknown key%s (known keys%s%s: %s)", hint,
                path && *path ? " in " : "", path ? path : "", known);
          return FALSE;
        }
      if (!check_value (f, it, origin, p, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error)
{
  Val dummy;
  if (cJSON_IsNull (v))
    return TRUE;
  if (f->kind == K_OBJ)
    {
      if (!cJSON_IsObject (v))
        {
          fail (error, origin, path, "expected an object, got %s", json_type_name (v));
          return FALSE;
        }
      return check_object (f->sub, v, origin, path, error);
    }
  if (f->kind == K_TIERS)
    {
      if (!cJSON_IsArray (v))
        {
          fail (error, origin, path, "expected an array of tier objects, got %s", json_type_name (v));
          return FALSE;
        }
      /* More tiers than this are refused, before anything else is done
       * with them: each is a resource of the flow network and a location
       * of every allocation's state (100,000 took 75 s to refuse). */
      int n = cJSON_GetArraySize (v);
      if (n > MAX_TIERS)
        {
          fail (error, origin, path, "%d tiers; at most %d (a memory system of more levels is not one vramsim "
                "models)", n, MAX_TIERS);
          return FALSE;
        }
      int i = 0;
      for (const cJSON *t = v->child; t != NULL; t = t->next, i++)
        {
          g_autofree char *tp = g_strdup_printf ("%s[%d]", path, i);
          if (!cJSON_IsObject (t))
            {
              fail (error, origin, tp, "expected a tier object, got %s", json_type_name (t));
              return FALSE;
            }
          if (!check_object (f->sub, t, origin, tp, error))
            return FALSE;
        }
      return TRUE;
    }
  return leaf_value (f, v, origin, path, &dummy, error);
}

/* ---- preset folder ---- */

static char *
find_preset_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe != NULL)
    {
      /* <exe dir>/../configs: bin/vramsim in the source tree. Further up
       * (build/asan/bin/vramsim, build/asan/tests/ROOM/test-*) only where the folder
       * above also holds a Makefile, i.e. it is the source tree. */
      g_autofree char *dir = g_path_get_dirname (exe);
      for (int level = 0; level < 4; level++)
        {
          g_autofree char *up = g_build_filename (dir, "..", NULL);
          g_autofree char *canon = g_canonicalize_filename (up, NULL);
          g_autofree char *cand = g_build_filename (canon, "configs", NULL);
          g_autofree char *mk = g_build_filename (canon, "Makefile", NULL);
          if (g_file_test (cand, G_FILE_TEST_IS_DIR)
              && (level == 0 || g_file_test (mk, G_FILE_TEST_IS_REGULAR)))
            return g_steal_pointer (&cand);
          g_free (dir);
          dir = g_steal_pointer (&canon);
        }
      /* An installed tree, wherever it was installed: PREFIX/bin/vramsim
       * beside PREFIX/share/vramsim/configs. */
      g_autofree char *bindir = g_path_get_dirname (exe);
      g_autofree char *inst = g_build_filename (bindir, "..", "share", "vramsim", "configs", NULL);
      if (g_file_test (inst, G_FILE_TEST_IS_DIR))
        return g_canonicalize_filename (inst, NULL);
    }
  return g_strdup (VRAMSIM_PREFIX "/share/vramsim/configs");
}

const char *
config_preset_dir (void)
{
  static char *dir;
  const char *env = g_getenv ("VRAMSIM_CONFIGS");
  if (env != NULL && *env != '\0')
    return env;
  if (g_once_init_enter (&dir))
    g_once_init_leave (&dir, find_preset_dir ());
  return dir;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
config_list_presets (void)
{
  GPtrArray *names = g_ptr_array_new ();
  GDir *d = g_dir_open (config_preset_dir (), 0, NULL);
  if (d != NULL)
    {
      const char *e;
      while ((e = g_dir_read_name (d)) != NULL)
        if (g_str_has_suffix (e, ".json") && e[0] != '.' && strlen (e) > 5)
          g_ptr_array_add (names, g_strndup (e, strlen (e) - 5));
      g_dir_close (d);
    }
  g_ptr_array_sort (names, cmp_str);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

static gboolean
is_preset_name (const char *s)
{
  return strchr (s, '/') == NULL && !g_str_has_suffix (s, ".json");
}

/* (transfer full) The file of preset NAME, or NULL with an error that lists
 * the presets there are. */
static char *
preset_path (const char *name, GError **error)
{
  const char *dir = config_preset_dir ();
  g_autofree char *file = g_strconcat (name, ".json", NULL);
  char *path = g_build_filename (dir, file, NULL);
  if (*name != '\0' && g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return path;
  g_free (path);
  g_auto (GStrv) names = config_list_presets ();
  if (names[0] == NULL)
    g_set_error (error, VS_CONFIG_ERROR, 0,
                 "unknown preset '%s': no presets in %s (set VRAMSIM_CONFIGS to the configs folder)",
                 name, dir);
  else
    {
      g_autofree char *list = g_strjoinv (", ", names);
      g_autofree char *hint = suggest_phrase (name, (const char *const *) names, NULL);
      g_set_error (error, VS_CONFIG_ERROR, 0, "unknown preset '%s'%s (presets: %s; or give a path to a .json file)",
                   name, hint, list);
    }
  return NULL;
}

char *
config_find (const char *name_or_path, GError **error)
{
  g_return_val_if_fail (name_or_path != NULL, NULL);
  if (*name_or_path == '\0')
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "empty config name");
      return NULL;
    }
  if (is_preset_name (name_or_path))
    return preset_path (name_or_path, error);
  return g_strdup (name_or_path);
}

gboolean
config_check_trace_preset (const char *name, const char *trace_path, GError **error)
{
  g_return_val_if_fail (name != NULL, FALSE);
  /* A name of letters, digits, '.', '-' and '_' not starting with '.': no
   * path, no "..", nothing a header could point at a device or another
   * folder with. */
  gboolean ok = g_ascii_isalnum (*name) && strlen (name) <= 128;
  for (const char *p = name; ok && *p; p++)
    ok = g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '_';
  if (ok && is_preset_name (name))
    {
      g_autofree char *path = preset_path (name, NULL);
      if (path != NULL)
        return TRUE;
    }
  g_auto (GStrv) names = config_list_presets ();
  g_autofree char *list = g_strjoinv (", ", names);
  g_autofree char *shown = g_strescape (name, NULL);
  g_set_error (error, VS_CONFIG_ERROR, 0,
               "%s: header field 'capture.config' is \"%.80s\", not a preset (presets: %s): a trace names a preset; "
               "a config file is read only when you give it with --capture-config", trace_path, shown, list);
  return FALSE;
}

/* ---- loading and extends ---- */

/* The first number in the JSON TEXT that is not 0 but reads as 0 (1e-400:
 * strtod underflows), or NULL. cJSON keeps only the double, so the text is
 * looked at once, outside strings. */
static const char *
underflowing_number (const char *text, gsize len)
{
  gboolean in_str = FALSE;
  for (const char *p = text, *end = text + len; p < end; p++)
    {
      if (in_str)
        {
          if (*p == '\\')
            p++;
          else if (*p == '"')
            in_str = FALSE;
          continue;
        }
      if (*p == '"')
        {
          in_str = TRUE;
          continue;
        }
      if (!(g_ascii_isdigit (*p) || *p == '-'))
        continue;
      const char *q = p;
      gboolean nonzero = FALSE, exp = FALSE;
      while (q < end && (g_ascii_isdigit (*q) || strchr ("+-.eE", *q) != NULL))
        {
          if (*q == 'e' || *q == 'E')
            exp = TRUE;
          else if (!exp && *q >= '1' && *q <= '9')
            nonzero = TRUE;
          q++;
        }
      if (nonzero && exp)
        {
          g_autofree char *num = g_strndup (p, (gsize) (q - p));
          if (g_ascii_strtod (num, NULL) == 0)
            return p;
        }
      p = q - 1;
    }
  return NULL;
}

static cJSON *
read_json_file (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *ioerr = NULL;
  if (!g_file_get_contents (path, &text, &len, &ioerr))
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: cannot read: %s", path,
                   g_strerror (ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_NOENT ? ENOENT
                               : ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_ISDIR ? EISDIR
                               : ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_ACCES ? EACCES
                               : EIO));
      g_error_free (ioerr);
      return NULL;
    }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts (text, len + 1, &end, TRUE);
  if (root == NULL)
    {
      if (end == NULL || end < text || end > text + len)
        end = text + len;
      int line = 1, col = 1;
      for (const char *p = text; p < end; p++)
        if (*p == '\n')
          line++, col = 1;
        else
          col++;
      g_autofree char *cut = g_strndup (end, 20);
      g_autofree char *near = g_utf8_make_valid (cut, -1);
      for (char *p = near; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
          *p = ' ';
      if (*near)
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d:%d: JSON syntax error near '%s'", path, line, col, near);
      else
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d:%d: JSON syntax error at end of file", path, line, col);
      return NULL;
    }
  if (!cJSON_IsObject (root))
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: a config is a JSON object, not %s", path, json_type_name (root));
      cJSON_Delete (root);
      return NULL;
    }
  /* cJSON cuts a string at an escaped NUL without a word ("a\\u0000b" is
   * "a"): refuse it, as the trace readers do. */
  gsize nul = trace_json_nul_escape (text, len);
  if (nul != G_MAXSIZE)
    {
      int line = 1;
      for (gsize i = 0; i < nul; i++)
        line += text[i] == '\n';
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d: a string holds a NUL character (\\u0000)", path, line);
      cJSON_Delete (root);
      return NULL;
    }
  const char *uf = underflowing_number (text, len);
  if (uf != NULL)
    {
      int line = 1;
      for (const char *p = text; p < uf; p++)
        line += *p == '\n';
      gsize n = strspn (uf, "0123456789+-.eE");
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d: %.*s is too small to represent (it is not 0)", path, line,
                   (int) MIN (n, 40), uf);
      cJSON_Delete (root);
      return NULL;
    }
  return root;
}

/* Merges CHILD into BASE: objects key by key, anything else (arrays
 * included) replaced whole; a null in CHILD removes the key (back to its
 * default). */
static void
merge_into (cJSON *base, const cJSON *child)
{
  for (const cJSON *it = child->child; it != NULL; it = it->next)
    {
      cJSON *old = cJSON_GetObjectItemCaseSensitive (base, it->string);
      if (cJSON_IsNull (it))
        {
          if (old != NULL)
            cJSON_DeleteItemFromObjectCaseSensitive (base, it->string);
        }
      else if (cJSON_IsObject (it) && cJSON_IsObject (old))
        merge_into (old, it);
      else if (old != NULL)
        cJSON_ReplaceItemInObjectCaseSensitive (base, it->string, cJSON_Duplicate (it, TRUE));
      else
        cJSON_AddItemToObject (base, it->string, cJSON_Duplicate (it, TRUE));
    }
}

static char *
basename_no_json (const char *path)
{
  char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".json") && strlen (base) > 5)
    base[strlen (base) - 5] = '\0';
  return base;
}

#define MAX_EXTENDS_DEPTH 32

/* compute.tflops is another name for compute.fp16 (SPEC 4): giving one
 * (by --set, or in a config that extends another) removes the other from
 * COMPUTE, so that the new figure is the one that counts. */
static void
compute_alias_drop (cJSON *compute, const char *key)
{
  if (strcmp (key, "tflops") == 0)
    cJSON_DeleteItemFromObjectCaseSensitive (compute, "fp16");
  else if (strcmp (key, "fp16") == 0)
    cJSON_DeleteItemFromObjectCaseSensitive (compute, "tflops");
}

static cJSON *
load_chain (const char *path, GPtrArray *canon_stack, GPtrArray *shown_stack, GError **error)
{
  g_autofree char *canon = g_canonicalize_filename (path, NULL);
  for (guint i = 0; i < canon_stack->len; i++)
    if (strcmp (canon_stack->pdata[i], canon) == 0)
      {
        GString *chain = g_string_new (NULL);
        for (guint j = i; j < shown_stack->len; j++)
          g_string_append_printf (chain, "%s -> ", (char *) shown_stack->pdata[j]);
        g_string_append (chain, path);
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: cycle: %s",
                     (char *) shown_stack->pdata[shown_stack->len - 1], chain->str);
        g_string_free (chain, TRUE);
        return NULL;
      }
  if (canon_stack->len >= MAX_EXTENDS_DEPTH)
    {
      /* Named by the user's file, where the chain starts: the file it
       * reached may be any preset. */
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: chain deeper than %d files (it reached %s)",
                   (char *) shown_stack->pdata[0], MAX_EXTENDS_DEPTH, path);
      return NULL;
    }

  cJSON *root = read_json_file (path, error);
  if (root == NULL)
    return NULL;
  if (!check_object (root_fields, root, path, "", error))
    goto fail;

  /* The name is the file's own, never inherited. */
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (root, "name");
  if (name == NULL || cJSON_IsNull (name))
    {
      g_autofree char *base = basename_no_json (path);
      if (name != NULL)
        cJSON_DeleteItemFromObjectCaseSensitive (root, "name");
      cJSON_AddStringToObject (root, "name", base);
    }

  const cJSON *ext = cJSON_GetObjectItemCaseSensitive (root, "extends");
  if (cJSON_IsString (ext))
    {
      g_autofree char *parent_path = NULL;
      const char *e = ext->valuestring;
      if (*e == '\0')
        {
          g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: empty name", path);
          goto fail;
        }
      if (is_preset_name (e))
        {
          GError *perr = NULL;
          parent_path = preset_path (e, &perr);
          if (parent_path == NULL)
            {
              g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: %s", path, perr->message);
              g_error_free (perr);
              goto fail;
            }
        }
      else if (g_path_is_absolute (e))
        parent_path = g_strdup (e);
      else
        {
          g_autofree char *dir = g_path_get_dirname (path);
          parent_path = g_build_filename (dir, e, NULL);
        }
      g_ptr_array_add (canon_stack, g_strdup (canon));
      g_ptr_array_add (shown_stack, g_strdup (path));
      cJSON *parent = load_chain (parent_path, canon_stack, shown_stack, error);
      g_ptr_array_remove_index (canon_stack, canon_stack->len - 1);
      g_ptr_array_remove_index (shown_stack, shown_stack->len - 1);
      if (parent == NULL)
        goto fail;
      {
        /* compute.tflops and compute.fp16 are one figure: the child's
         * name for it replaces the parent's other name. */
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive (root, "compute");
        cJSON *pc = cJSON_GetObjectItemCaseSensitive (parent, "compute");
        if (cJSON_IsObject (cc) && cJSON_IsObject (pc))
          for (const char *const *k = (const char *const[]) { "tflops", "fp16", NULL }; *k; k++)
            if (cJSON_GetObjectItemCaseSensitive (cc, *k) != NULL
                && !cJSON_IsNull (cJSON_GetObjectItemCaseSensitive (cc, *k)))
              compute_alias_drop (pc, *k);
      }
      merge_into (parent, root);
      cJSON_Delete (root);
      root = parent;
    }
  cJSON_DeleteItemFromObjectCaseSensitive (root, "extends");
  return root;

fail:
  cJSON_Delete (root);
  return NULL;
}

static cJSON *
load_json_origin (const char *name_or_path, char **origin, GError **error)
{
  g_autofree char *path = config_find (name_or_path, error);
  if (path == NULL)
    return NULL;
  g_autoptr (GPtrArray) canon = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) shown = g_ptr_array_new_with_free_func (g_free);
  cJSON *root = load_chain (path, canon, shown, error);
  if (root != NULL && origin != NULL)
    *origin = g_steal_pointer (&path);
  return root;
}

cJSON *
config_load_json (const char *name_or_path, GError **error)
{
  return load_json_origin (name_or_path, NULL, error);
}

/* ---- --set ---- */

static gboolean
all_digits (const char *s)
{
  if (*s == '\0')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

gboolean
config_set (cJSON *root, const char *assignment, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL && assignment != NULL, FALSE);
  if (origin == NULL)
    origin = "config";
  g_autofree char *where = g_strdup_printf ("%s: --set '%s'", origin, assignment);

  const char *eq = strchr (assignment, '=');
  if (eq == NULL || eq == assignment)
    {
      fail (error, where, NULL, "expected KEY=VALUE, e.g. memory.capacity=24GiB");
      return FALSE;
    }
  g_autofree char *key = g_strndup (assignment, eq - assignment);
  const char *text = eq + 1;
  cJSON *value = cJSON_ParseWithOpts (text, NULL, TRUE);
  if (value == NULL)
    value = cJSON_CreateString (text);

  g_auto (GStrv) seg = g_strsplit (key, ".", -1);
  const Field *fields = root_fields;
  cJSON *obj = root;
  g_autofree char *path = g_strdup ("");
  gboolean ok = FALSE;

  for (int i = 0; seg[i] != NULL; i++)
    {
      const char *s = seg[i];
      if (*s == '\0')
        {
          fail (error, where, NULL, "empty key segment in '%s'", key);
          goto out;
        }
      const Field *f = field_find (fields, s);
      g_autofree char *p = path_join (path, s);
      if (f == NULL)
        {
          g_autofree char *known = field_list (fields);
          g_autofree char *hint = key_hint (fields, s, path);
          fail (error, where, p, "unknown key%s (known keys%s%s: %s)", hint, *path ? " in " : "", path, known);
          goto out;
        }
      if (f->kind == K_EXTENDS)
        {
          fail (error, where, p, "extends is resolved before --set applies; pass the parent config with -c");
          goto out;
        }
      if (seg[i + 1] == NULL)
        {
          /* A text field takes the text as typed: name=1 is "1"; so does
           * a size, bandwidth or time, which the unit parser then judges
           * as typed (24 needs a unit, 1e-400 is not 0). */
          if ((f->kind == K_STR || f->kind == K_ENUM || f->kind == K_BYTES || f->kind == K_RATE || f->kind == K_TIME)
              && !cJSON_IsString (value) && !cJSON_IsNull (value))
            {
              cJSON_Delete (value);
              value = cJSON_CreateString (text);
            }
          if (!check_value (f, value, where, p, error))
            goto out;
          if (fields == compute_fields && !cJSON_IsNull (value))
            compute_alias_drop (obj, s);
          if (cJSON_GetObjectItemCaseSensitive (obj, s) != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive (obj, s, value);
          else
            cJSON_AddItemToObject (obj, s, value);
          value = NULL;
          ok = TRUE;
          goto out;
        }
      if (f->kind == K_OBJ)
        {
          cJSON *child = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsObject (child))
            {
              if (child != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              child = cJSON_AddObjectToObject (obj, s);
            }
          obj = child;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&p);
          continue;
        }
      if (f->kind == K_TIERS)
        {
          cJSON *arr = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsArray (arr))
            {
              if (arr != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              arr = cJSON_AddArrayToObject (obj, s);
            }
          const char *sel = seg[++i];
          int n = cJSON_GetArraySize (arr), idx = -1;
          if (all_digits (sel))
            {
              idx = strlen (sel) > 6 ? G_MAXINT : atoi (sel);
              if (idx > n)
                {
                  fail (error, where, p, "no tier %s (the config has %d; index %d appends one)", sel, n, n);
                  goto out;
                }
              if (idx == n)
                cJSON_AddItemToArray (arr, cJSON_CreateObject ());
            }
          else
            {
              GString *names = g_string_new (NULL);
              int k = 0;
              for (cJSON *t = arr->child; t != NULL; t = t->next, k++)
                {
                  const cJSON *nm = cJSON_GetObjectItemCaseSensitive (t, "name");
                  if (cJSON_IsString (nm))
                    {
                      g_string_append_printf (names, "%s%s", names->len ? ", " : "", nm->valuestring);
                      if (idx < 0 && strcmp (nm->valuestring, sel) == 0)
                        idx = k;
                    }
                }
              if (idx < 0)
                {
                  fail (error, where, p, "no tier named '%s' (tiers: %s)", sel, names->len ? names->str : "none");
                  g_string_free (names, TRUE);
                  goto out;
                }
              g_string_free (names, TRUE);
            }
          g_autofree char *tp = g_strdup_printf ("%s[%d]", p, idx);
          cJSON *tier = cJSON_GetArrayItem (arr, idx);
          if (seg[i + 1] == NULL)
            {
              /* A whole tier: tiers.cxl0={...} */
              if (!cJSON_IsObject (value))
                {
                  fail (error, where, tp, "expected a tier object, got %s", json_type_name (value));
                  goto out;
                }
              if (!check_object (tier_fields, value, where, tp, error))
                goto out;
              cJSON_ReplaceItemInArray (arr, idx, value);
              value = NULL;
              ok = TRUE;
              goto out;
            }
          if (!cJSON_IsObject (tier))
            {
              cJSON_ReplaceItemInArray (arr, idx, cJSON_CreateObject ());
              tier = cJSON_GetArrayItem (arr, idx);
            }
          obj = tier;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&tp);
          continue;
        }
      fail (error, where, p, "is a value, not a section (nothing below it to set)");
      goto out;
    }

out:
  cJSON_Delete (value);
  return ok;
}

/* ---- compile ---- */

static const cJSON *
member (const cJSON *obj, const char *key)
{
  const cJSON *v = obj != NULL ? cJSON_GetObjectItemCaseSensitive (obj, key) : NULL;
  return cJSON_IsNull (v) ? NULL : v;
}

static gboolean
valid_tier_name (const char *s)
{
  if (*s == '\0' || all_digits (s))
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

static gboolean
is_leaf (Kind k)
{
  return k != K_OBJ && k != K_TIERS && k != K_EXTENDS;
}

/* Stores leaf F's value V (parsed by leaf_value) at BASE + F->at. */
static void
store (const Field *f, void *base, Val v)
{
  char *p = (char *) base + f->at;
  switch (f->kind)
    {
    case K_STR: *(char **) p = g_strdup (v.s); break;
    case K_BYTES: *(guint64 *) p = v.u; break;
    case K_RATE: case K_TIME: case K_FRAC: case K_POS: case K_FREQ: *(double *) p = v.d; break;
    case K_COUNT: case K_UINT: *(guint *) p = (guint) v.u; break;
    case K_UNIT: *(double *) p = v.d; break;
    case K_SIZE_UNL: *(guint64 *) p = v.u; break;
    case K_BOOL: *(gboolean *) p = v.b; break;
    case K_ENUM: *(int *) p = v.e; break;
    case K_EXTENDS: case K_OBJ: case K_TIERS: g_assert_not_reached ();
    }
}

/* Compiles the leaves of OBJ (at PREFIX, FIELDS) into BASE: each present
 * value, else its default, else "required". The tree was checked whole
 * first (check_object), so values parse. */
static gboolean
compile_leaves (const Field *fields, const cJSON *obj, const char *prefix, void *base,
                gboolean unified, const char *origin, GError **error)
{
  for (const Field *f = fields; f->key != NULL; f++)
    {
      if (!is_leaf (f->kind))
        continue;
      const cJSON *j = member (obj, f->key);
      g_autofree char *p = path_join (prefix, f->key);
      Val v = f->def;
      if (j != NULL)
        {
          if (!leaf_value (f, j, origin, p, &v, error))
            return FALSE;
        }
      else if (f->need != NULL && !(f->unless_unified && unified))
        {
          fail (error, origin, p, "required (%s)", f->need);
          return FALSE;
        }
      else if (f->need != NULL)
        continue;   /* optional here: left 0 */
      if (f->kind != K_STR || v.s != NULL)
        store (f, base, v);
      if (f->check != NULL && !f->check ((VsConfig *) base, base, prefix, origin, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_name (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->name == NULL)
    c->name = basename_no_json (origin);
  if (c->name[0] == '\0')
    {
      fail (error, origin, "name", "must not be empty");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_memory (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->memory.capacity == 0)
    {
      fail (error, origin, "memory.capacity", "must be greater than 0");
      return FALSE;
    }
  if (c->memory.bandwidth <= 0)
    {
      fail (error, origin, "memory.bandwidth", "must be greater than 0");
      return FALSE;
    }
  if (c->memory.reserved >= c->memory.capacity)
    {
      g_autofree char *r = units_format_bytes (c->memory.reserved);
      g_autofree char *cap = units_format_bytes (c->memory.capacity);
      fail (error, origin, "memory.reserved", "%s leaves nothing of memory.capacity (%s); it must be less", r, cap);
      return FALSE;
    }
  if (c->memory.alloc_granularity == 0
      || (c->memory.alloc_granularity & (c->memory.alloc_granularity - 1)) != 0)
    {
      fail (error, origin, "memory.alloc_granularity",
            "must be a power of two of at least 1 B (CUDA uses 2MiB), got %" G_GUINT64_FORMAT " B",
            c->memory.alloc_granularity);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_link (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (!c->unified && c->link.bandwidth <= 0)
    {
      fail (error, origin, "link.bandwidth", "must be greater than 0");
      return FALSE;
    }
  return TRUE;
}

/* AT is tiers[I], PREFIX "tiers[I]"; the tiers before it are checked. */
static gboolean
check_tier (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  VsTier *tier = at;
  guint i = (guint) (tier - c->tiers);
  g_autofree char *np = g_strdup_printf ("%s.name", prefix);
  if (!valid_tier_name (tier->name))
    {
      fail (error, origin, np, "'%s' is not a tier name (letters, digits, '_' and '-', not all digits)",
            tier->name);
      return FALSE;
    }
  if (g_strv_contains (config_builtin_names, tier->name))
    {
      fail (error, origin, np, "'%s' is reserved for a built-in resource; pick another name", tier->name);
      return FALSE;
    }
  for (guint j = 0; j < i; j++)
    if (strcmp (c->tiers[j].name, tier->name) == 0)
      {
        fail (error, origin, np, "'%s' is already the name of tiers[%u]; names must be unique", tier->name, j);
        return FALSE;
      }
  if (tier->capacity == 0)
    {
      g_autofree char *p = g_strdup_printf ("%s.capacity", prefix);
      fail (error, origin, p, "must be greater than 0");
      return FALSE;
    }
  if (tier->bandwidth <= 0)
    {
      g_autofree char *p = g_strdup_printf ("%s.bandwidth", prefix);
      fail (error, origin, p, "must be greater than 0");
      return FALSE;
    }
  if (c->unified && tier->attach == VS_ATTACH_HOST)
    {
      g_autofree char *p = g_strdup_printf ("%s.attach", prefix);
      fail (error, origin, p, "\"host\" means behind the host link, and a unified machine has none; "
            "use \"device\"");
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_host (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->host.capacity == 0)
    {
      fail (error, origin, "host.capacity", "must be greater than 0");
      return FALSE;
    }
  if (c->host.bandwidth <= 0)
    {
      fail (error, origin, "host.bandwidth", "must be greater than 0");
      return FALSE;
    }
  return TRUE;
}

/* PyTorch's own limits on PYTORCH_CUDA_ALLOC_CONF (CUDAAllocatorConfig):
 * max_split_size above 20 MiB (kLargeBuffer), divisions a power of two,
 * and a large segment that is a whole number of 2 MiB pages. */
static gboolean
check_allocator (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->allocator.max_split_size != G_MAXUINT64 && c->allocator.max_split_size <= (20u << 20))
    {
      g_autofree char *m = units_format_bytes (c->allocator.max_split_size);
      fail (error, origin, "allocator.max_split_size", "%s: PyTorch requires more than 20 MiB (or \"unlimited\")", m);
      return FALSE;
    }
  guint d = c->allocator.roundup_power2_divisions;
  if (d > 1 && (d & (d - 1)) != 0)
    {
      fail (error, origin, "allocator.roundup_power2_divisions", "%u: must be 0 (off) or a power of two", d);
      return FALSE;
    }
  if (c->allocator.large_segment == 0 || c->allocator.large_segment % (2u << 20) != 0)
    {
      g_autofree char *l = units_format_bytes (c->allocator.large_segment);
      fail (error, origin, "allocator.large_segment", "%s: must be a whole number (>= 1) of 2 MiB pages", l);
      return FALSE;
    }
  return TRUE;
}

/* The smallest migration page: 4 KiB, the smallest page a GPU's MMU or
 * the host maps (NVIDIA's UVM migrates 4 KiB to 2 MiB, REFERENCE). A
 * smaller one would only give allocations billions of pages, past the
 * engine's 2^31 evict units per allocation (a false OOM). */
#define MIN_UVM_PAGE 4096u

static gboolean
check_uvm (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->uvm.page < MIN_UVM_PAGE)
    {
      g_autofree char *pg = units_format_bytes (c->uvm.page);
      fail (error, origin, "uvm.page", "%s is below 4KiB, the smallest page a GPU or host maps (NVIDIA UVM moves "
            "4KiB to 2MiB pages)", pg);
      return FALSE;
    }
  if (c->uvm.evict_unit == 0 || c->uvm.evict_unit % c->uvm.page != 0)
    {
      g_autofree char *e = units_format_bytes (c->uvm.evict_unit);
      g_autofree char *pg = units_format_bytes (c->uvm.page);
      fail (error, origin, "uvm.evict_unit", "%s is not a whole number (>= 1) of uvm.page (%s)", e, pg);
      return FALSE;
    }
  return TRUE;
}

/* Compiles section F (its leaves, then the sections inside it, then its
 * check) from OBJ at PREFIX into C. */
static gboolean
compile_section (const Field *f, const cJSON *obj, const char *prefix, VsConfig *c, const char *origin,
                 GError **error)
{
  if (!compile_leaves (f->sub, obj, prefix, c, c->unified, origin, error))
    return FALSE;
  for (const Field *s = f->sub; s->key != NULL; s++)
    if (s->kind == K_OBJ)
      {
        g_autofree char *p = path_join (prefix, s->key);
        if (!compile_section (s, member (obj, s->key), p, c, origin, error))
          return FALSE;
      }
  return f->check == NULL || f->check (c, c, prefix, origin, error);
}

/* Rates slow enough to make a flow end beyond the representable time are
 * errors naming the key (docs/config.md, "Limits"): a 1 GiB transfer must
 * end within 2^63 ns, the replay's time limit, so an effective bandwidth
 * (bandwidth x efficiency) is at least 2^30 B / (2^63 ns) = 0.1164 B/s;
 * compute.tflops at least 1e-6 (1 MFLOPS: a second of compute captured on
 * the fastest chip, ~10^4 TFLOPS, must end within 2^63 ns). Far below any
 * machine; what they exclude is 1e-310 typed for 1e-3. */
#define MIN_RATE_BPS (1073741824.0 / 9223372036.854775808)
#define MIN_TFLOPS 1e-6

static gboolean
check_rate (double bw, double eff, const char *origin, const char *key, const char *eff_key, GError **error)
{
  if (bw * eff >= MIN_RATE_BPS)
    return TRUE;
  g_autofree char *b = bw >= 1 ? units_format_rate (bw) : g_strdup_printf ("%g B/s", bw);
  if (eff_key != NULL && eff < 1)
    fail (error, origin, bw >= MIN_RATE_BPS ? eff_key : key,
          "%s x %s %g = %g B/s is too slow to simulate: a 1 GiB transfer would end beyond 2^63 ns (292 years); "
          "the least is 0.1164 B/s", b, eff_key, eff, bw * eff);
  else
    fail (error, origin, key, "%s is too slow to simulate: a 1 GiB transfer would end beyond 2^63 ns (292 years); "
          "the least is 0.1164 B/s", b);
  return FALSE;
}

static gboolean
check_rates (const VsConfig *c, const char *origin, GError **error)
{
  if (!check_rate (c->memory.bandwidth, c->memory.efficiency, origin, "memory.bandwidth", "memory.efficiency", error)
      || !check_rate (c->host.bandwidth, 1, origin, "host.bandwidth", NULL, error))
    return FALSE;
  if (!c->unified
      && (!check_rate (c->link.bandwidth, c->link.efficiency, origin, "link.bandwidth", "link.efficiency", error)
          || !check_rate (c->link.bandwidth, c->link.pageable_efficiency, origin, "link.bandwidth",
                          "link.pageable_efficiency", error)))
    return FALSE;
  for (guint i = 0; i < c->n_tiers; i++)
    {
      g_autofree char *bk = g_strdup_printf ("tiers[%u].bandwidth", i);
      g_autofree char *ek = g_strdup_printf ("tiers[%u].efficiency", i);
      if (!check_rate (c->tiers[i].bandwidth, c->tiers[i].efficiency, origin, bk, ek, error))
        return FALSE;
    }
  if (c->tflops < MIN_TFLOPS)
    {
      fail (error, origin, "compute.tflops", "%g is too slow to simulate (at least 1e-06, 1 MFLOPS: a second of "
            "compute on a fast chip would end beyond 2^63 ns)", c->tflops);
      return FALSE;
    }
  return TRUE;
}

/* A fabric level moves bytes: zero bandwidth would make every collective
 * take forever, so it is an error naming the key. */
static gboolean
check_network_level (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  double bw = g_str_has_suffix (prefix, "intra") ? c->network.intra.bandwidth : c->network.inter.bandwidth;
  if (!(bw > 0))
    {
      g_autofree char *p = path_join (prefix, "bandwidth");
      fail (error, origin, p, "must be greater than 0 (the per-GPU bandwidth of this fabric level, e.g. \"300GB/s\")");
      return FALSE;
    }
  double eff = g_str_has_suffix (prefix, "intra") ? c->network.intra.efficiency : c->network.inter.efficiency;
  g_autofree char *bk = path_join (prefix, "bandwidth");
  g_autofree char *ek = path_join (prefix, "efficiency");
  return check_rate (bw, eff, origin, bk, ek, error);
}

/* The job's size; a group resized by role is part of the job and may not
 * outgrow network.ranks when that sizes it; and what the forced algorithm and protocol need of the
 * fabric (NCCL_ALGO / NCCL_PROTO name what NCCL may use; here a choice the
 * hardware cannot run is an error, not NCCL's silent fallback). */
static gboolean
check_network (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  if (c->network.ranks > VS_NETWORK_MAX_RANKS)
    {
      fail (error, origin, "network.ranks", "at most %u (2^24 GPUs, beyond any machine built), got %u",
            VS_NETWORK_MAX_RANKS, c->network.ranks);
      return FALSE;
    }
  if (c->network.ranks_per_node > VS_NETWORK_MAX_RANKS_PER_NODE)
    {
      fail (error, origin, "network.ranks_per_node", "at most %u (2^16), got %u", VS_NETWORK_MAX_RANKS_PER_NODE,
            c->network.ranks_per_node);
      return FALSE;
    }
  const struct { const char *key; guint v; } roles[] = {
    { "dp", c->network.dp }, { "tp", c->network.tp }, { "pp", c->network.pp },
    { "ep", c->network.ep }, { "cp", c->network.cp },
  };
  for (guint i = 0; i < G_N_ELEMENTS (roles); i++)
    if (c->network.ranks > 1 && roles[i].v > c->network.ranks)
      {
        g_autofree char *p = path_join (prefix, roles[i].key);
        fail (error, origin, p, "%u is more than the job's %u GPUs (network.ranks): a %s group is part of its job; "
              "raise network.ranks too", roles[i].v, c->network.ranks, roles[i].key);
        return FALSE;
      }
  if (c->network.nvls && c->network.intra_kind != VS_FABRIC_NVSWITCH)
    {
      fail (error, origin, "network.intra.nvls", "NVLink SHARP lives in NVSwitches: it needs network.intra.kind "
            "\"nvswitch\"");
      return FALSE;
    }
  VsForceAlgo a = c->network.algorithm;
  const char *an = force_algo_choices[a];
  if ((a == VS_FORCE_ALGO_NVLS || a == VS_FORCE_ALGO_NVLS_TREE) && !c->network.nvls)
    {
      fail (error, origin, "network.algorithm", "%s needs NVLink SHARP (an NVSwitch system of Hopper or later: "
            "network.intra.nvls true), which this config does not have", an);
      return FALSE;
    }
  if ((a == VS_FORCE_ALGO_COLLNET_DIRECT || a == VS_FORCE_ALGO_COLLNET_CHAIN) && !c->network.sharp)
    {
      fail (error, origin, "network.algorithm", "%s needs in-network reduction between nodes (SHARP switches: "
            "network.inter.sharp true), which this config does not have", an);
      return FALSE;
    }
  if (a == VS_FORCE_ALGO_COLLNET_DIRECT && c->network.intra_kind != VS_FABRIC_NVSWITCH)
    {
      fail (error, origin, "network.algorithm", "collnet_direct needs an NVSwitch node (network.intra.kind "
            "\"nvswitch\"; NCCL disables it elsewhere): use collnet_chain");
      return FALSE;
    }
  VsForceProto p = c->network.protocol;
  if (p == VS_FORCE_PROTO_LL128 && c->network.intra_kind == VS_FABRIC_PCIE && c->network.ranks_per_node > 1)
    {
      fail (error, origin, "network.protocol", "LL128 needs NVLink between the node's GPUs (NCCL enables it only "
            "there); this config's network.intra.kind is \"pcie\"");
      return FALSE;
    }
  if (p != VS_FORCE_PROTO_AUTO && p != VS_FORCE_PROTO_SIMPLE && a >= VS_FORCE_ALGO_NVLS)
    {
      fail (error, origin, "network.protocol", "%s runs the Simple protocol only, not %s", an,
            force_proto_choices[p]);
      return FALSE;
    }
  return TRUE;
}

/* The device must hold what is charged before the program's first call:
 * the CUDA context (memory.context, SPEC 5.6) and, under uvm on a discrete
 * GPU, one uvm.evict_unit beside it, the least the driver migrates and
 * evicts at a time (docs/model.md section 7), or no managed page could
 * ever fault in. A smaller device is not a what-if the replay can answer
 * (before, it ran with the context over capacity and warned, falsely, that
 * the trace allocates no device memory): refused here, naming the keys. */
static gboolean
check_capacity_floor (const VsConfig *c, const char *origin, GError **error)
{
  guint64 dev = c->memory.capacity - c->memory.reserved;   /* reserved < capacity: check_memory */
  gboolean uvm = c->oversubscription == VS_OVERSUB_UVM && !c->unified;
  guint64 need = c->memory.context;
  if (uvm)
    need = need > G_MAXUINT64 - c->uvm.evict_unit ? G_MAXUINT64 : need + c->uvm.evict_unit;
  if (dev >= need)
    return TRUE;
  g_autofree char *cap = units_format_bytes (c->memory.capacity);
  g_autofree char *ctx = units_format_bytes (c->memory.context);
  g_autofree char *left = units_format_bytes (dev);
  g_autofree char *res = units_format_bytes (c->memory.reserved);
  g_autofree char *what = c->memory.reserved > 0
    ? g_strdup_printf ("%s less memory.reserved (%s) leaves %s, which", cap, res, left) : g_strdup (cap);
  if (uvm)
    {
      g_autofree char *eu = units_format_bytes (c->uvm.evict_unit);
      fail (error, origin, "memory.capacity", "%s is below memory.context (%s) plus one uvm.evict_unit (%s): "
            "policy uvm needs room beside the CUDA context to fault any page in", what, ctx, eu);
    }
  else
    fail (error, origin, "memory.capacity", "%s is below memory.context (%s), the CUDA context charged before "
          "the program allocates anything; the device must hold it", what, ctx);
  return FALSE;
}

/* compute.tflops is another name for compute.fp16 (SPEC 4): one of them
 * is required, and both, when given, must agree. */
static gboolean
check_compute (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error)
{
  double *fp16 = &c->compute.peak[4];
  if (c->tflops > 0 && *fp16 > 0 && c->tflops != *fp16)
    {
      fail (error, origin, "compute.tflops", "is another name for compute.fp16, and they differ (%g and %g); "
            "give one", c->tflops, *fp16);
      return FALSE;
    }
  if (*fp16 == 0)
    *fp16 = c->tflops;
  if (*fp16 == 0)
    {
      fail (error, origin, "compute.tflops",
            "required (dense FP16 tensor TFLOPS, e.g. 312 for an A100, as compute.fp16 or compute.tflops; "
            "kernel compute time scales by it)");
      return FALSE;
    }
  c->tflops = *fp16;
  return TRUE;
}

VsConfig *
config_compile (const cJSON *root, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL, NULL);
  if (origin == NULL)
    origin = "config";
  if (!cJSON_IsObject (root))
    {
      fail (error, origin, NULL, "a config is a JSON object, not %s", json_type_name (root));
      return NULL;
    }
  if (!check_object (root_fields, root, origin, "", error))
    return NULL;

  VsConfig *c = g_new0 (VsConfig, 1);
  c->origin = g_strdup (origin);
  if (!compile_leaves (root_fields, root, "", c, FALSE, origin, error))
    goto fail;
  for (const Field *f = root_fields; f->key != NULL; f++)
    {
      const cJSON *obj = member (root, f->key);
      if (f->kind == K_OBJ)
        {
          if (!compile_section (f, obj, f->key, c, origin, error))
            goto fail;
        }
      else if (f->kind == K_TIERS)
        {
          c->n_tiers = obj != NULL ? (guint) cJSON_GetArraySize (obj) : 0; /* <= MAX_TIERS (check_value) */
          c->tiers = g_new0 (VsTier, c->n_tiers + 1);
          for (guint i = 0; i < c->n_tiers; i++)
            {
              g_autofree char *tp = g_strdup_printf ("%s[%u]", f->key, i);
              if (!compile_leaves (f->sub, cJSON_GetArrayItem (obj, (int) i), tp, &c->tiers[i], c->unified,
                                   origin, error)
                  || !f->check (c, &c->tiers[i], tp, origin, error))
                goto fail;
            }
        }
    }
  if (!check_rates (c, origin, error))
    goto fail;
  if (!check_capacity_floor (c, origin, error))
    goto fail;
  return c;

fail:
  config_free (c);
  return NULL;
}

VsConfig *
config_load (const char *name_or_path, const char *const *sets, GError **error)
{
  g_autofree char *origin = NULL;
  cJSON *root = load_json_origin (name_or_path, &origin, error);
  if (root == NULL)
    return NULL;
  for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
    if (!config_set (root, sets[i], origin, error))
      {
        cJSON_Delete (root);
        return NULL;
      }
  GError *err = NULL;
  VsConfig *c = config_compile (root, origin, &err);
  cJSON_Delete (root);
  if (c == NULL)
    {
      /* A value that parsed but is impossible (--set memory.bandwidth=0)
       * is found here: say which --set put it there. */
      for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
        {
          const char *eq = strchr (sets[i], '=');
          g_autofree char *key = g_strndup (sets[i], eq ? (gsize) (eq - sets[i]) : strlen (sets[i]));
          g_autofree char *needle = g_strdup_printf (": %s", key);
          if (strstr (err->message, needle) != NULL)
            {
              g_autofree char *old = err->message;
              err->message = g_strdup_printf ("%s (set by --set %s)", old, sets[i]);
              break;
            }
        }
      g_propagate_error (error, err);
    }
  return c;
}

/* Frees the strings of FIELDS at BASE (and of every section and tier). */
static void
free_fields (const Field *fields, VsConfig *c, void *base)
{
  for (const Field *f = fields; f->key != NULL; f++)
    if (f->kind == K_STR)
      g_free (*(char **) ((char *) base + f->at));
    else if (f->kind == K_OBJ)
      free_fields (f->sub, c, c);
    else if (f->kind == K_TIERS)
      for (guint i = 0; c->tiers != NULL && i < c->n_tiers; i++)
        free_fields (f->sub, c, &c->tiers[i]);
}

void
config_free (VsConfig *c)
{
  if (c == NULL)
    return;
  free_fields (root_fields, c, c);
  g_free (c->origin);
  g_free (c->tiers);
  g_free (c);
}

const char *
config_oversub_name (VsOversub o)
{
  return o < VS_OVERSUB_COUNT ? oversub_choices[o] : NULL;
}

const char *
config_touches_name (VsTouchesMode m)
{
  return m < VS_TOUCHES_COUNT ? touches_choices[m] : NULL;
}

/* ---- writing back ---- */

static void
add_owned_string (cJSON *obj, const char *key, char *s)
{
  cJSON_AddStringToObject (obj, key, s);
  g_free (s);
}

/* Writes the values of FIELDS at BASE into OBJ, in table order. */
static void
fields_to_json (const Field *fields, const VsConfig *c, const void *base, cJSON *obj)
{
  for (const Field *f = fields; f->key != NULL; f++)
    {
      const char *p = (const char *) base + f->at;
      switch (f->kind)
        {
        case K_STR: cJSON_AddStringToObject (obj, f->key, *(char *const *) p); break;
        case K_EXTENDS: break;
        case K_BYTES: add_owned_string (obj, f->key, units_format_bytes_exact (*(const guint64 *) p)); break;
        case K_RATE: add_owned_string (obj, f->key, units_format_rate_exact (*(const double *) p)); break;
        case K_TIME: add_owned_string (obj, f->key, units_format_time_exact (*(const double *) p)); break;
        case K_FRAC: case K_POS:
          /* 0: an optional figure not given (compute peaks): left out */
          if (*(const double *) p > 0)
            cJSON_AddNumberToObject (obj, f->key, *(const double *) p);
          break;
        case K_COUNT:
          if (*(const guint *) p > 0)
            cJSON_AddNumberToObject (obj, f->key, *(const guint *) p);
          break;
        case K_FREQ:
          if (*(const double *) p > 0)
            {
              double hz = *(const double *) p;
              add_owned_string (obj, f->key, fmod (hz, 1e6) == 0 ? g_strdup_printf ("%.17gMHz", hz / 1e6)
                                                                 : g_strdup_printf ("%.17gHz", hz));
            }
          break;
        case K_UINT: cJSON_AddNumberToObject (obj, f->key, *(const guint *) p); break;
        case K_UNIT: cJSON_AddNumberToObject (obj, f->key, *(const double *) p); break;
        case K_SIZE_UNL:
          if (*(const guint64 *) p == G_MAXUINT64)
            cJSON_AddStringToObject (obj, f->key, "unlimited");
          else
            add_owned_string (obj, f->key, units_format_bytes_exact (*(const guint64 *) p));
          break;
        case K_BOOL: cJSON_AddBoolToObject (obj, f->key, *(const gboolean *) p); break;
        case K_ENUM: cJSON_AddStringToObject (obj, f->key, f->choices[*(const int *) p]); break;
        case K_OBJ: fields_to_json (f->sub, c, c, cJSON_AddObjectToObject (obj, f->key)); break;
        case K_TIERS:
          {
            cJSON *a = cJSON_AddArrayToObject (obj, f->key);
            for (guint i = 0; i < c->n_tiers; i++)
              {
                cJSON *o = cJSON_CreateObject ();
                fields_to_json (f->sub, c, &c->tiers[i], o);
                cJSON_AddItemToArray (a, o);
              }
          }
          break;
        }
    }
}

cJSON *
config_to_json (const VsConfig *c)
{
  g_return_val_if_fail (c != NULL, NULL);
  cJSON *root = cJSON_CreateObject ();
  fields_to_json (root_fields, c, c, root);
  return root;
}
