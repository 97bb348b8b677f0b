/* prog-manyfuncs.c — capture test program: four threads launch 300
 * distinct functions of the stub driver ("many0" .. "many299"), each
 * thread all of them from its own starting point, so that the shim's table
 * of functions (names, layouts, attributes) grows while other threads use
 * entries already in it. Function I: I % 7 + 1 blocks of 32 threads. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>

#include "prog-common.h"

#define THREADS 4
#define FUNCS 300

static CUcontext ctx;
static CUmodule mod;

static void *
worker (void *arg)
{
  unsigned k = (unsigned) (uintptr_t) arg;
  CUstream s;
  CK (cuCtxSetCurrent (ctx));
  CK (cuStreamCreate (&s, 0));
  for (unsigned i = 0; i < FUNCS; i++) {
    unsigned id = (i + k * (FUNCS / THREADS)) % FUNCS;
    char name[32];
    snprintf (name, sizeof name, "many%u", id);
    CUfunction f;
    CK (cuModuleGetFunction (&f, mod, name));
    CK (cuLaunchKernel (f, id % 7 + 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
  }
  CK (cuStreamSynchronize (s));
  return NULL;
}

int
main (void)
{
  CUdevice dev;
  CK (cuInit (0));
  CK (cuDeviceGet (&dev, 0));
  CK (cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (cuCtxSetCurrent (ctx));
  CK (cuModuleLoadData (&mod, "stub"));
  pthread_t th[THREADS];
  for (unsigned k = 0; k < THREADS; k++)
    pthread_create (&th[k], NULL, worker, (void *) (uintptr_t) k);
  for (unsigned k = 0; k < THREADS; k++)
    pthread_join (th[k], NULL);
  printf ("prog-manyfuncs done\n");
  return 0;
}
