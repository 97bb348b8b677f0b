/* prog-basic.c — a capture test program: one fixed sequence of driver calls
 * (see tests/capture-hook.sh for the trace it must produce). Built twice:
 * calling the driver through plain linked symbols, and (-DVIA_DLOPEN) the
 * way the static CUDA runtime does: dlopen("libcuda.so.1") + dlsym of
 * cuGetProcAddress_v2, then every entry point through it. */
#define _GNU_SOURCE
#include <cuda.h>
#include "prog-common.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#undef cuMemPrefetchAsync

typedef struct {
#define F(name, type) __typeof__ (type) name;
#include "prog-funcs.h"
#undef F
} Api;

static Api api;


static void
load_api (void)
{
#ifdef VIA_DLOPEN
  GetProcAddressFn *gpa = open_get_proc_address ();
  CUdriverProcAddressQueryResult st;
#define F(name, type) CK (gpa (#name, (void **) &api.name, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
#include "prog-funcs.h"
#undef F
#else
#define F(name, type) api.name = (type) LINKED_##name;
#define LINKED_cuInit cuInit
#include "prog-linked.h"
#include "prog-funcs.h"
#undef F
#endif
}

int
main (void)
{
  load_api ();
  CUdevice dev;
  CUcontext ctx;
  CK (api.cuInit (0));
  CK (api.cuDeviceGet (&dev, 0));
  CK (api.cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (api.cuCtxSetCurrent (ctx));

  CUdeviceptr x, y, m, a, va;
  void *h;
  CUstream s;
  CK (api.cuMemAlloc (&x, 1 << 20));                       /* id 1 */
  CK (api.cuMemAlloc (&y, 2 << 20));                       /* id 2 */
  CK (api.cuMemHostAlloc (&h, 4096, 0));                   /* id 3, pinned */
  CK (api.cuStreamCreate (&s, 0));                         /* stream 1 */
  CK (api.cuMemcpyHtoDAsync (x, h, 4096, s));
  static char pageable[512];                               /* no allocation: blocks */
  CK (api.cuMemcpyHtoDAsync (x, pageable, sizeof pageable, s));

  CUmodule mod;
  CUfunction axpy, pairk, noargs;
  CK (api.cuModuleLoadData (&mod, "stub"));
  CK (api.cuModuleGetFunction (&axpy, mod, "axpy"));
  CK (api.cuModuleGetFunction (&pairk, mod, "pairk"));
  CK (api.cuModuleGetFunction (&noargs, mod, "noargs"));

  float alpha = 2.0f;
  CUdeviceptr yi = y + 256;                                 /* inside id 2 */
  int n = 1000;
  void *p1[] = { &alpha, &x, &yi, &n };
  CK (api.cuLaunchKernel (axpy, 3, 1, 1, 128, 1, 1, 0, s, p1, NULL));

  struct { CUdeviceptr p; int k; void *q; } pair = { y + 8, 5, malloc (64) };
  long count = 7;
  void *p2[] = { &pair, &count };
  CK (api.cuLaunchKernel (pairk, 2, 1, 1, 64, 1, 1, 0, s, p2, NULL));
  CK (api.cuStreamSynchronize (s));

  char *buf = malloc (1000);
  CK (api.cuMemcpyDtoH (buf, y, 1000));
  CK (api.cuMemsetD8 (x, 0, 1 << 20));

  CK (api.cuMemAllocManaged (&m, 8192, CU_MEM_ATTACH_GLOBAL));   /* id 4 */
  CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
  CK (api.cuMemPrefetchAsync (m, 8192, loc, 0, s));
  CK (api.cuMemAllocAsync (&a, 65536, s));                 /* id 5 */
  CK (api.cuMemFreeAsync (a, s));

  CUevent ev;
  CK (api.cuEventCreate (&ev, 0));
  CK (api.cuEventRecord (ev, s));
  CK (api.cuStreamWaitEvent (NULL, ev, 0));
  CK (api.cuEventSynchronize (ev));

  CUmemGenericAllocationHandle mh;
  CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                               .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
  CK (api.cuMemAddressReserve (&va, 2 << 20, 0, 0, 0));
  CK (api.cuMemCreate (&mh, 2 << 20, &prop, 0));
  CK (api.cuMemMap (va, 2 << 20, 0, mh, 0));               /* id 6 */
  void *p3[] = { NULL };
  CK (api.cuLaunchKernel (noargs, 1, 1, 1, 32, 1, 1, 0, NULL, p3, NULL));
  CK (api.cuMemUnmap (va, 2 << 20));
  CK (api.cuMemRelease (mh));

  CK (api.cuCtxSynchronize ());
  CK (api.cuMemFree (x));
  CK (api.cuMemFree (y));
  CK (api.cuMemFreeHost (h));
  CK (api.cuMemFree (m));
  printf ("prog-basic done\n");
  free (buf);
  free (pair.q);
  return 0;
}
