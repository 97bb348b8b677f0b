/* config.h — one modeled machine (SPEC section 4).
 *
 * A config is read as JSON (a preset name from configs/ or a path), merged
 * through `extends` depth-first (the child wins), edited by --set
 * assignments, then compiled into a VsConfig: every value parsed with its
 * units, checked, and every field given its documented default
 * (docs/config.md). Unknown keys, bad units and impossible values are
 * errors in VS_CONFIG_ERROR naming the file and the field
 * ("configs/x.json: memory.bandwidth: ..."). */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#define VS_CONFIG_ERROR (config_error_quark ())
GQuark config_error_quark (void);

typedef enum { VS_ATTACH_HOST, VS_ATTACH_DEVICE } VsAttach;
/* model.kernel: how a kernel's captured time moves to another chip
 * (docs/model.md): "waves" (kernel-model.c) or SPEC 5.4's "simple" rule. */
typedef enum { VS_KMODEL_WAVES, VS_KMODEL_SIMPLE, VS_KMODEL_COUNT } VsKernelModelKind;
/* model.tf32: which FP32 work captured on a chip without TF32 units runs
 * on the target's TF32 tensor cores (docs/model.md). */
typedef enum { VS_TF32_CONV, VS_TF32_ALL, VS_TF32_NONE, VS_TF32_COUNT } VsTf32Policy;
/* model.touches: what a kernel that names no allocation touches
 * (docs/model.md section 6b): inferred when the trace's kernels name none
 * (auto), inferred for every kernel, named ones dropped (infer: the check
 * against known touches), or nothing (named: the trace's word only). */
typedef enum { VS_TOUCHES_AUTO, VS_TOUCHES_INFER, VS_TOUCHES_NAMED, VS_TOUCHES_COUNT } VsTouchesMode;
typedef enum { VS_OVERSUB_OOM, VS_OVERSUB_SPILL, VS_OVERSUB_DIRECT, VS_OVERSUB_UVM, VS_OVERSUB_COUNT } VsOversub;
/* allocator.kind: auto follows the trace header's "allocations" (pytorch
 * for "tensor", none otherwise); the others name sim/mem's models. */
typedef enum { VS_ALLOCATOR_AUTO, VS_ALLOCATOR_PYTORCH, VS_ALLOCATOR_ASYNC, VS_ALLOCATOR_NONE } VsAllocatorKind;
typedef enum { VS_FIRST_TOUCH_DEVICE, VS_FIRST_TOUCH_HOST } VsFirstTouch;
/* network.intra.kind: what joins a node's GPUs, as NCCL's tuner tells its
 * latency rows and LL128 apart (docs/model.md section 11). */
typedef enum { VS_FABRIC_PCIE, VS_FABRIC_NVLINK, VS_FABRIC_NVSWITCH } VsFabric;
/* network.inter.cpu: the host CPU, whose vendor picks NCCL's network post
 * overhead and LL ceilings across nodes ("arm" takes NCCL's default row). */
typedef enum { VS_HOST_CPU_INTEL, VS_HOST_CPU_AMD, VS_HOST_CPU_ARM } VsHostCpu;
/* network.algorithm / network.protocol: "auto" (NCCL's choice by predicted
 * time) or one forced, as NCCL_ALGO / NCCL_PROTO do. */
typedef enum {
  VS_FORCE_ALGO_AUTO, VS_FORCE_ALGO_RING, VS_FORCE_ALGO_TREE, VS_FORCE_ALGO_NVLS, VS_FORCE_ALGO_NVLS_TREE,
  VS_FORCE_ALGO_COLLNET_DIRECT, VS_FORCE_ALGO_COLLNET_CHAIN
} VsForceAlgo;
typedef enum { VS_FORCE_PROTO_AUTO, VS_FORCE_PROTO_LL, VS_FORCE_PROTO_LL128, VS_FORCE_PROTO_SIMPLE } VsForceProto;
/* network.ranks and network.ranks_per_node are bounded at config compile
 * (docs/config.md): beyond any machine built, and far inside what the
 * network model's 64-bit counts and double arithmetic hold exactly. */
#define VS_NETWORK_MAX_RANKS (1u << 24)
#define VS_NETWORK_MAX_RANKS_PER_NODE (1u << 16)

typedef struct {
  char *name;
  char *tech;
  guint64 capacity;        /* bytes */
  double bandwidth;        /* bytes/s, peak */
  double efficiency;       /* 0 < e <= 1 */
  double latency_ns;
  VsAttach attach;
} VsTier;

typedef struct {
  char *name;
  char *description;
  char *origin;            /* file it was read from */
  double tflops;           /* compute.fp16 (compute.tflops is another name for it) */
  struct {
    /* Dense peak TFLOPS (TOPS for int8) indexed by VsPrecision
     * (trace/event.h: [1] fp64 .. [7] int8; [0] unused); 0 = not given. */
    double peak[8];
    guint sms;             /* streaming multiprocessors (CUs); 0 = not given */
    double clock_hz;       /* boost clock; 0 = not given */
    guint64 l2;            /* L2 cache bytes; 0 = not given */
  } compute;
  VsKernelModelKind kernel_model;  /* model.kernel */
  VsTf32Policy tf32;               /* model.tf32 */
  VsTouchesMode touches;           /* model.touches */
  struct {
    char *tech;
    guint64 capacity, reserved, alloc_granularity;
    guint64 context;         /* CUDA context + modules, charged at the start */
    double bandwidth, efficiency, latency_ns;
  } memory;
  struct {
    VsAllocatorKind kind;
    gboolean expandable_segments;
    guint64 max_split_size;  /* G_MAXUINT64: unlimited */
    guint64 max_non_split_rounding;  /* an oversize block serves a request this much smaller */
    guint roundup_power2_divisions;
    double garbage_collection_threshold;  /* 0: off */
    guint64 large_segment;
    guint64 release_threshold;  /* async; G_MAXUINT64: keep everything */
  } allocator;
  struct {
    char *tech;
    double bandwidth, efficiency, pageable_efficiency, latency_ns;
    guint copy_engines;
  } link;
  VsTier *tiers;
  guint n_tiers;
  struct {
    char *tech;
    guint64 capacity;
    double bandwidth;
  } host;
  gboolean unified;
  struct {
    guint64 page, evict_unit;
    guint fault_batch;
    double fault_latency_ns;
    VsFirstTouch first_touch;
  } uvm;
  VsOversub oversubscription;
  struct {
    double launch_latency_ns;
    gboolean legacy_default_stream;
    guint launch_queue;          /* ops queued, not started, before a launch blocks; 0 = no bound */
  } gpu;
  /* SPEC 4 `network`: the job's ranks and the fabric they talk over
   * (sim/model/network.h prices collectives on it). */
  struct {
    guint ranks, ranks_per_node;
    VsForceAlgo algorithm;
    VsForceProto protocol;
    double call_floor_ns;  /* per call, outside NCCL's own time */
    /* the size to replay the groups of each role on (collective.group.role);
     * 0: the trace's */
    guint dp, tp, pp, ep, cp;
    struct {
      char *tech;
      double bandwidth;    /* bytes/s per GPU per direction (inter: the GPU's NIC share) */
      double latency_ns;   /* per ring step, Simple protocol */
      double efficiency;
    } intra, inter;
    /* network.intra's NCCL figures */
    VsFabric intra_kind;
    double ll_max_bw;          /* LL's bus-bandwidth ceiling in one node, bytes/s */
    gboolean nvls;             /* NVLink SHARP in the node's NVSwitches */
    double nvls_efficiency;
    gboolean sharp;            /* in-network reduction (SHARP) between nodes: CollNet */
    VsHostCpu cpu;
  } network;
} VsConfig;

/* The built-in location and resource names: the engine names its
 * locations ("device", "host") and flow-network resources by them, and a
 * tier may not take one (config_builtin_names[VS_BUILTIN_COUNT] is NULL). */
typedef enum {
  VS_BUILTIN_DEVICE, VS_BUILTIN_HOST,                            /* locations */
  VS_BUILTIN_SM, VS_BUILTIN_DEVICE_MEM, VS_BUILTIN_LINK_H2D,     /* resources */
  VS_BUILTIN_LINK_D2H, VS_BUILTIN_HOST_MEM,
  VS_BUILTIN_COUNT
} VsBuiltin;
extern const char *const config_builtin_names[VS_BUILTIN_COUNT + 1];

/* "oom", "spill", "direct", "uvm". */
const char *config_oversub_name (VsOversub o);
/* "auto", "infer", "named"; NULL out of range. */
const char *config_touches_name (VsTouchesMode m);

/* (transfer full) Loads NAME_OR_PATH (a preset name, or a path to a JSON
 * file) and resolves `extends`, returning the merged JSON tree. */
cJSON *config_load_json (const char *name_or_path, GError **error);
/* Applies one "dotted.key=value" assignment to a merged tree (tiers by
 * index or name: tiers.0.capacity, tiers.cxl0.capacity). Unknown keys are
 * errors. ORIGIN names the tree in messages. */
gboolean config_set (cJSON *root, const char *assignment, const char *origin, GError **error);
/* (transfer full) Checks and compiles a merged tree. */
VsConfig *config_compile (const cJSON *root, const char *origin, GError **error);
/* (transfer full) All three: load, apply SETS (NULL-terminated, may be
 * NULL), compile. */
VsConfig *config_load (const char *name_or_path, const char *const *sets, GError **error);
/* config_load, and into *PLAIN the same config without SETS (what
 * config_load (NAME_OR_PATH, NULL, PLAIN_ERROR) gives), the file read
 * and checked once: a replay whose capture config is its target's preset.
 * *PLAIN is NULL when the result is, or with PLAIN_ERROR set. */
VsConfig *config_load_with_plain (const char *name_or_path, const char *const *sets, VsConfig **plain,
                                  GError **plain_error, GError **error);
void config_free (VsConfig *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsConfig, config_free)

/* The folder presets are read from: $VRAMSIM_CONFIGS, else configs/ beside
 * the executable's ../ (the source tree), else $(PREFIX)/share/vramsim/configs. */
const char *config_preset_dir (void);
/* (transfer full) Sorted preset names, NULL-terminated. */
char **config_list_presets (void);

/* (transfer full) The file NAME_OR_PATH names: a preset's file in
 * config_preset_dir(), or the path itself. NULL with an error listing the
 * presets when no such preset exists. */
char *config_find (const char *name_or_path, GError **error);
/* Whether NAME, a trace header's capture.config, is a preset there is
 * (SPEC 2: the header names a preset). A path, or a name of no preset, is
 * an error naming TRACE_PATH: a trace must not decide which file is read
 * (/dev/stdin, ../../etc/passwd); a config file is read only when the user
 * gives it. */
gboolean config_check_trace_preset (const char *name, const char *trace_path, GError **error);
/* (transfer full) C as a config tree with every default filled in and
 * every value written exactly (units_format_*_exact), so it loads back to
 * the same VsConfig. `vramsim configs --show` prints it. */
cJSON *config_to_json (const VsConfig *c);
