/* bench-launch.c — N kernel launches against the stub driver, to measure
 * the shim's cost per intercepted call (docs/capture.md). Prints ns/launch
 * on stdout. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int
main (int argc, char **argv)
{
  long n = argc > 1 ? atol (argv[1]) : 1000000;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUdeviceptr x, y;
  CUstream s;
  if (cuInit (0) || cuDeviceGet (&dev, 0) || cuDevicePrimaryCtxRetain (&ctx, dev)
      || cuCtxSetCurrent (ctx) || cuModuleLoadData (&mod, "stub")
      || cuModuleGetFunction (&f, mod, "axpy") || cuMemAlloc (&x, 1 << 20)
      || cuMemAlloc (&y, 1 << 20) || cuStreamCreate (&s, 0))
    return 1;
  float a = 1;
  int k = 1;
  void *p[] = { &a, &x, &y, &k };
  struct timespec t0, t1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++) {
    cuLaunchKernel (f, 1, 1, 1, 32, 1, 1, 0, s, p, NULL);
    if (i % 1000 == 999)
      cuStreamSynchronize (s);
  }
  cuCtxSynchronize ();
  clock_gettime (CLOCK_MONOTONIC, &t1);
  double ns = (double) (t1.tv_sec - t0.tv_sec) * 1e9 + (double) (t1.tv_nsec - t0.tv_nsec);
  printf ("%.1f ns/launch (%ld launches)\n", ns / (double) n, n);
  return 0;
}
