/* prog-managed.c — a capture test program for CUPTI mode (see
 * tests/capture-cupti.sh): a device, a managed and a stream-ordered
 * allocation, and three axpy launches of 4 blocks (4000 ns each on the stub
 * driver): the first touches the managed allocation for the first time (the
 * stub's CUPTI reports a page fault and a host-to-device migration inside
 * it), the second touches it again (nothing to migrate), the third touches
 * device memory only. Linked against the stub driver. */
#include <cuda.h>
#include "prog-common.h"
#include <stdio.h>

int
main (void)
{
  CUdevice dev;
  CUcontext ctx;
  CK (cuInit (0));
  CK (cuDeviceGet (&dev, 0));
  CK (cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (cuCtxSetCurrent (ctx));

  CUdeviceptr a, m, p;
  CK (cuMemAlloc (&a, 1 << 20));                           /* id 1 */
  CK (cuMemAllocManaged (&m, 1 << 20, CU_MEM_ATTACH_GLOBAL));   /* id 2 */
  CK (cuMemAllocAsync (&p, 1 << 20, NULL));                /* id 3, stream-ordered */
  CK (cuMemFreeAsync (p, NULL));

  CUmodule mod;
  CUfunction axpy;
  CK (cuModuleLoadData (&mod, "stub"));
  CK (cuModuleGetFunction (&axpy, mod, "axpy"));
  float alpha = 2.0f;
  int n = 1 << 18;
  void *pm[] = { &alpha, &m, &a, &n };                    /* x = M, y = A */
  CK (cuLaunchKernel (axpy, 4, 1, 1, 256, 1, 1, 0, NULL, pm, NULL));   /* first touch of M */
  CK (cuLaunchKernel (axpy, 4, 1, 1, 256, 1, 1, 0, NULL, pm, NULL));   /* M already on the GPU */
  void *pa[] = { &alpha, &a, &a, &n };                    /* no managed memory */
  CK (cuLaunchKernel (axpy, 4, 1, 1, 256, 1, 1, 0, NULL, pa, NULL));
  CK (cuCtxSynchronize ());

  CK (cuMemFree (a));
  CK (cuMemFree (m));
  printf ("prog-managed done\n");
  return 0;
}
