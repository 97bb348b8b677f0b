/* prog-common.h — what every stub-driver test program needs: CK() to stop
 * on a failed driver call, and (for the programs that reach the driver the
 * way static cudart does) cuGetProcAddress_v2 from dlopen("libcuda.so.1"). */
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static inline void
check (CUresult r, const char *what)
{
  if (r != CUDA_SUCCESS) {
    fprintf (stderr, "%s failed: %d\n", what, (int) r);
    exit (1);
  }
}

#define CK(call) check (call, #call)

typedef __typeof__ (cuGetProcAddress_v2) GetProcAddressFn;

/* cuGetProcAddress_v2 of libcuda.so.1, found with dlopen + dlsym; exits on failure. */
static inline GetProcAddressFn *
open_get_proc_address (void)
{
  void *h = dlopen ("libcuda.so.1", RTLD_NOW);
  if (!h) {
    fprintf (stderr, "dlopen: %s\n", dlerror ());
    exit (1);
  }
  GetProcAddressFn *gpa = (GetProcAddressFn *) dlsym (h, "cuGetProcAddress_v2");
  if (!gpa)
    exit (1);
  return gpa;
}
