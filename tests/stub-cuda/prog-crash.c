/* prog-crash.c — capture test program that dies after a few events:
 * "abort" calls abort(), "segv" dereferences a bad pointer, "exit3" exits
 * with status 3. The trace must still be written and readable. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUdeviceptr x;
  if (cuInit (0) || cuDeviceGet (&dev, 0) || cuDevicePrimaryCtxRetain (&ctx, dev)
      || cuCtxSetCurrent (ctx) || cuModuleLoadData (&mod, "stub")
      || cuModuleGetFunction (&f, mod, "axpy") || cuMemAlloc (&x, 4096))
    return 1;
  float a = 1;
  int n = 1;
  void *p[] = { &a, &x, &x, &n };
  cuLaunchKernel (f, 5, 1, 1, 32, 1, 1, 0, NULL, p, NULL);
  const char *how = argc > 1 ? argv[1] : "abort";
  if (strcmp (how, "segv") == 0) {
    volatile int *bad = (int *) 8;
    *bad = 1;
  }
  if (strcmp (how, "exit3") == 0)
    exit (3);
  abort ();
}
