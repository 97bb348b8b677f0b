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

/* The driver entry points a program calls, as FUNCS(F) with F(field, name
 * for cuGetProcAddress, linked symbol, cudaVersion to ask for, per-thread
 * flag): DEFINE_API (FUNCS) makes `api`, a struct of one pointer per entry,
 * and load_api (), which fills it through cuGetProcAddress_v2 (the way
 * static cudart does) when built with VIA_DLOPEN, else from the linked
 * symbols. */
#define API_FIELD(field, name, sym, ver, pt) __typeof__ (sym) *field;
#ifdef VIA_DLOPEN
#define API_GET(field, name, sym, ver, pt) \
  CK (gpa (#name, (void **) &api.field, ver, \
           pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT, &st));
#define DEFINE_API(FUNCS) \
  static struct { FUNCS (API_FIELD) } api; \
  static void \
  load_api (void) \
  { \
    GetProcAddressFn *gpa = open_get_proc_address (); \
    CUdriverProcAddressQueryResult st; \
    FUNCS (API_GET) \
  }
#else
#define API_GET(field, name, sym, ver, pt) api.field = sym;
#define DEFINE_API(FUNCS) \
  static struct { FUNCS (API_FIELD) } api; \
  static void \
  load_api (void) \
  { \
    FUNCS (API_GET) \
  }
#endif
