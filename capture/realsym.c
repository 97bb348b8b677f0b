/* realsym.c — the C library's dlsym, found by version (realsym.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "realsym.h"

void *(*cap_real_dlsym) (void *, const char *);

void
cap_real_dlsym_init (void)
{
  static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0" };
  for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !cap_real_dlsym; i++)
    cap_real_dlsym = (void *(*) (void *, const char *)) dlvsym (RTLD_NEXT, "dlsym", versions[i]);
}

/* Called from inside the shim, so RTLD_NEXT means the objects after it:
 * the program's libnccl for the NCCL wrap (nccl.c). */
void *
cap_next_symbol (const char *name)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  return cap_real_dlsym ? cap_real_dlsym (RTLD_NEXT, name) : NULL;
}

void *
cap_symbol_in (void *handle, const char *name)
{
  if (!cap_real_dlsym)
    cap_real_dlsym_init ();
  return cap_real_dlsym ? cap_real_dlsym (handle, name) : NULL;
}
