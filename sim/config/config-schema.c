/* config-schema.c — the config schema: one table, one line per key (kind,
 * default, place in VsConfig, what a required key asks for, the section's
 * check); unknown-key errors, --set paths, compiling, writing back and
 * freeing all read it, so a new key is one line. The names of the enums it
 * holds. */
#include "config/config-priv.h"

G_STATIC_ASSERT (sizeof (VsOversub) == sizeof (int) && sizeof (VsAttach) == sizeof (int));
G_STATIC_ASSERT (sizeof (VsKernelModelKind) == sizeof (int) && sizeof (VsTf32Policy) == sizeof (int)
                 && sizeof (VsTouchesMode) == sizeof (int));

static const char *const attach_choices[] = { "host", "device", NULL };

static const char *const oversub_choices[] = { "oom", "spill", "direct", "uvm", NULL };
static const char *const allocator_choices[] = { "auto", "pytorch", "async", "none", NULL };
static const char *const first_touch_choices[] = { "device", "host", NULL };
G_STATIC_ASSERT (sizeof (VsAllocatorKind) == sizeof (int) && sizeof (VsFirstTouch) == sizeof (int));
static const char *const kmodel_choices[] = { "waves", "simple", NULL };
static const char *const tf32_choices[] = { "conv", "all", "none", NULL };
static const char *const touches_choices[] = { "auto", "infer", "named", NULL };

/* Dense peaks per precision (0 = not given: the kernel model falls back
 * to a documented neighbour, kernel-model.c); cfg_check_compute makes fp16
 * (or its other name, tflops) required. */
const Field cfg_compute_fields[] = {
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
const Field cfg_tier_fields[] = {
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
/* Compiled in this order: the leaves first ("unified" decides what link
 * and tiers require), then each section, then its check. */
const Field cfg_root_fields[] = {
  { "name", K_STR, AT (name), .def.s = NULL /* the file's base name */, .check = cfg_check_name },
  { "description", K_STR, AT (description), .def.s = "" },
  { "extends", K_EXTENDS, .sub = NULL },
  { "compute", K_OBJ, .sub = cfg_compute_fields, .check = cfg_check_compute },
  { "memory", K_OBJ, .sub = memory_fields, .check = cfg_check_memory },
  { "allocator", K_OBJ, .sub = allocator_fields, .check = cfg_check_allocator },
  { "link", K_OBJ, .sub = link_fields, .check = cfg_check_link },
  { "tiers", K_TIERS, .sub = cfg_tier_fields, .check = cfg_check_tier },
  { "host", K_OBJ, .sub = host_fields, .check = cfg_check_host },
  { "unified", K_BOOL, AT (unified), .def.b = FALSE },
  { "uvm", K_OBJ, .sub = uvm_fields, .check = cfg_check_uvm },
  { "policy", K_OBJ, .sub = policy_fields },
  { "gpu", K_OBJ, .sub = gpu_fields },
  { "network", K_OBJ, .sub = cfg_network_fields, .check = cfg_check_network },
  { "model", K_OBJ, .sub = model_fields },
  { .key = NULL },
};


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
