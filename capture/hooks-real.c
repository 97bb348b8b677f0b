/* hooks-real.c — hook mode's real functions: the driver's own entry
 * points that the wrappers call, looked up once in libcuda
 * (VRAMCAP_LIBCUDA, or libcuda.so.1) through the C library's dlsym. The
 * lowest file of hook mode (hooks-priv.h). */
#define _GNU_SOURCE
#include "hooks-priv.h"

#define DEF_REAL(fn) __typeof__ (fn) *real_##fn;
REAL_LIST (DEF_REAL)
#undef DEF_REAL

GetProcV1 real_cuGetProcAddress;
PrefetchV1 real_cuMemPrefetchAsync, real_cuMemPrefetchAsync_ptsz;
AdviseV1 real_cuMemAdvise;

void *g_libcuda;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* WRAPPED: a function the shim wraps (hooks.c's table hands out its
 * wrapper); the others it only calls. */
typedef struct { const char *name; void **real; int wrapped; } Real;

#define WRAP_ENTRY(fn) { #fn, (void **) &real_##fn, 1 },
#define CALL_ENTRY(fn) { #fn, (void **) &real_##fn, 0 },
static const Real reals[] = {
  WRAP_LIST (WRAP_ENTRY)
  CALL_LIST (CALL_ENTRY)
  { "cuGetProcAddress", (void **) &real_cuGetProcAddress, 1 },
  { "cuMemPrefetchAsync", (void **) &real_cuMemPrefetchAsync, 1 },
  { "cuMemPrefetchAsync_ptsz", (void **) &real_cuMemPrefetchAsync_ptsz, 1 },
  { "cuMemAdvise", (void **) &real_cuMemAdvise, 1 },
};
#undef WRAP_ENTRY
#undef CALL_ENTRY
#define N_REALS (sizeof reals / sizeof reals[0])

void
resolve_once (void)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  const char *lib = getenv ("VRAMCAP_LIBCUDA");
  g_libcuda = dlopen (lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!g_libcuda || !cap_real_dlsym)
    return;
  for (size_t i = 0; i < N_REALS; i++) {
    *reals[i].real = cap_real_dlsym (g_libcuda, reals[i].name);
    if (*reals[i].real || reals[i].wrapped)
      continue;
    /* A function only called: the other version will do (cuEventElapsedTime
     * is cuEventElapsedTime_v2 in CUDA 13 headers, unversioned before). */
    char alt[128];
    size_t n = strlen (reals[i].name);
    if (n > 3 && strcmp (reals[i].name + n - 3, "_v2") == 0)
      snprintf (alt, sizeof alt, "%.*s", (int) (n - 3), reals[i].name);
    else
      snprintf (alt, sizeof alt, "%s_v2", reals[i].name);
    *reals[i].real = cap_real_dlsym (g_libcuda, alt);
  }
}
