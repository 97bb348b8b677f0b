/* hooks.c — hook mode: the shim is LD_PRELOADed and stands in for the
 * driver API functions that shape memory.
 *
 * Three ways in, one set of wrappers: plain calls to exported cu* symbols
 * (the preloaded definitions win), dlsym(handle, "cu...") (interposed, for
 * programs that dlopen libcuda), and cuGetProcAddress / _v2 (the static CUDA
 * runtime and PyTorch fetch every driver entry point this way). A wrapper is
 * handed out only where the driver's own answer is the exact function the
 * wrapper stands for (compared by address), so per-thread-default-stream
 * variants and versions the shim does not know pass through untouched.
 *
 * GPU times: two CUDA events from a pool are recorded around each op on its
 * stream; the pair is read back (cuEventQuery + cuEventElapsedTime) at sync
 * points, every POLL_EVERY events, and at exit. Work issued into a stream
 * that is being captured into a graph is not executed then, so it is not
 * recorded; graph launches record their kernel nodes instead.
 *
 * This file is hook mode's top: the ways in (dlsym, cuGetProcAddress),
 * cuInit and the start. Below it (hooks-priv.h, lowest first): the real
 * functions (hooks-real.c), the event-pair timing (hooks-timing.c), kernel
 * names, parameters and launches (hooks-kernels.c), then allocations
 * (hooks-alloc.c), copies and memsets (hooks-copy.c), batched copies
 * (hooks-batch.c), graphs (hooks-graph.c) and synchronization and events
 * (hooks-sync.c), each with its per-thread-default-stream variants. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* What the program's cuInit answered through the shim (-1: never seen),
 * for hooks_nothing_cause. */
static volatile int g_cuinit_result = -1;
static pid_t g_init_pid;        /* the process that registered drain_at_exit */

/* The wrapper of each real function the shim wraps. */
typedef struct { void **real; void *wrap; } Hook;

#define HOOK_ENTRY(fn) { (void **) &real_##fn, (void *) fn },
static const Hook hooks[] = {
  WRAP_LIST (HOOK_ENTRY)
  { (void **) &real_cuGetProcAddress, (void *) cuGetProcAddress },
  { (void **) &real_cuMemPrefetchAsync, (void *) cuMemPrefetchAsync },
  { (void **) &real_cuMemPrefetchAsync_ptsz, (void *) cuMemPrefetchAsync_ptsz },
  { (void **) &real_cuMemAdvise, (void *) cuMemAdvise },
};
#undef HOOK_ENTRY
#define N_HOOKS (sizeof hooks / sizeof hooks[0])

static void *
wrapper_for_address (void *real)
{
  if (!real)
    return NULL;
  for (size_t i = 0; i < N_HOOKS; i++)
    if (*hooks[i].real == real && hooks[i].wrap)
      return hooks[i].wrap;
  return NULL;
}

/* ---- dlsym and cuGetProcAddress ---- */

void *
dlsym (void *handle, const char *name)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  if (handle != RTLD_NEXT && name[0] == 'c' && name[1] == 'u') {
    void *r = cap_real_dlsym (handle, name);
    if (r) {
      resolve ();
      void *w = wrapper_for_address (r);
      if (w)
        return w;
    }
    return r;
  }
  /* A tail call, so that RTLD_NEXT is resolved relative to our caller. */
  return cap_real_dlsym (handle, name);
}

CUresult
cuGetProcAddress_v2 (const char *symbol, void **pfn, int ver, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
  resolve ();
  if (!real_cuGetProcAddress_v2)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuGetProcAddress_v2 (symbol, pfn, ver, flags, status);
  if (r == CUDA_SUCCESS && pfn) {
    void *w = wrapper_for_address (*pfn);
    if (w)
      *pfn = w;
  }
  return r;
}

CUresult
cuGetProcAddress (const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
  resolve ();
  if (!real_cuGetProcAddress)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuGetProcAddress (symbol, pfn, ver, flags);
  if (r == CUDA_SUCCESS && pfn) {
    void *w = wrapper_for_address (*pfn);
    if (w)
      *pfn = w;
  }
  return r;
}

/* ---- device info ---- */

void
hooks_query_device (void)
{
  resolve ();
  if (cap_have_device () || !real_cuDeviceGet)
    return;
  CUdevice d;
  if (real_cuDeviceGet (&d, 0) != CUDA_SUCCESS)
    return;
  CapDevice info;
  memset (&info, 0, sizeof info);
  if (real_cuDeviceGetName)
    real_cuDeviceGetName (info.name, sizeof info.name - 1, d);
  size_t mem = 0;
  if (real_cuDeviceTotalMem_v2 && real_cuDeviceTotalMem_v2 (&mem, d) == CUDA_SUCCESS)
    info.memory_bytes = mem;
  if (real_cuDeviceGetAttribute) {
    real_cuDeviceGetAttribute (&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    real_cuDeviceGetAttribute (&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    real_cuDeviceGetAttribute (&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
  }
  if (real_cuDriverGetVersion)
    real_cuDriverGetVersion (&info.cuda_version);
  cap_set_device (&info);
}

/* ---- start ---- */

/* At exit, before the driver's own teardown: libcuda registers its exit
 * handler inside cuInit, so this one, registered after the first cuInit
 * returns, runs before it and can still read back pending GPU times (the
 * recorder's own handler, registered at load, runs after the driver's). */
static void
drain_at_exit (void)
{
  if (cap_mode == CAP_MODE_HOOK && getpid () == g_init_pid)
    drain_before_ctx_teardown ();
}

/* Why a process recorded nothing (cap_nothing_cause_cb, recorder.h). */
static void
hooks_nothing_cause (char *buf, size_t cap)
{
  int r = g_cuinit_result;
  if (r > 0) {
    const char *name = NULL;
    typedef CUresult ErrName (CUresult, const char **);
    ErrName *err_name = g_libcuda && cap_real_dlsym ? (ErrName *) cap_real_dlsym (g_libcuda, "cuGetErrorName") : NULL;
    if (err_name == NULL || err_name ((CUresult) r, &name) != CUDA_SUCCESS)
      name = NULL;
    const char *vis = getenv ("CUDA_VISIBLE_DEVICES");
    if (r == CUDA_ERROR_NO_DEVICE)
      snprintf (buf, cap, "no CUDA device: cuInit answered CUDA_ERROR_NO_DEVICE (100)%s%s%s",
                vis ? "; CUDA_VISIBLE_DEVICES is \"" : "", vis ? vis : "", vis ? "\"" : "");
    else
      snprintf (buf, cap, "the CUDA driver did not start: cuInit answered %s (%d)", name ? name : "error", r);
    return;
  }
  if (r == 0) {
    snprintf (buf, cap, "the program started CUDA but made no call vramcap records (allocation, copy, kernel, "
              "sync, NVTX range)");
    return;
  }
  /* cuInit never came through the shim (the program never started CUDA):
   * is there a driver on this machine at all? (Whether the process has
   * libcuda loaded says nothing: the shim opens it itself.) */
  const char *lib = getenv ("VRAMCAP_LIBCUDA");
  if (!lib || !*lib)
    lib = "libcuda.so.1";
  void *h = dlopen (lib, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror ();
    snprintf (buf, cap, "no CUDA driver on this machine (dlopen %s)", e ? e : lib);
    return;
  }
  dlclose (h);
  snprintf (buf, cap, "the program never used CUDA (it never called cuInit)");
}

CUresult
cuInit (unsigned int flags)
{
  resolve ();
  if (!real_cuInit)
    return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real_cuInit (flags);
  g_cuinit_result = (int) r;
  if (r == CUDA_SUCCESS) {
    if (cap_mode == CAP_MODE_OFF) {
      /* The driver did not load us as its injection library (hook mode was
       * asked for, or CUDA_INJECTION64_PATH was not honoured). */
      if (cap_requested_mode () == CAP_MODE_CUPTI)
        cap_warn ("CUPTI injection did not start; recording in hook mode");
      hooks_start ();
    }
    if (cap_mode == CAP_MODE_HOOK) {
      hooks_query_device ();
      if (g_init_pid != getpid ()) {
        g_init_pid = getpid ();
        atexit (drain_at_exit);
      }
    }
  }
  return r;
}

void
hooks_start (void)
{
  resolve ();
  cap_resolve_cb = hooks_resolve;
  cap_fork_child_cb = hooks_fork_child;
  cap_mode = CAP_MODE_HOOK;
}

__attribute__ ((constructor)) static void
hooks_init (void)
{
  cap_nothing_cause_cb = hooks_nothing_cause;
  cap_init ();
  cap_real_dlsym_init ();
  if (cap_requested_mode () == CAP_MODE_HOOK)
    hooks_start ();
}
