/* prog-threads.c — capture test program: N threads, each with its own
 * stream, allocating, launching and freeing in a loop; then a fork whose
 * child makes calls of its own (it must get its own trace file). */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define ITERS 50

static CUcontext ctx;
static CUfunction axpy;

static void
ck (CUresult r)
{
  if (r != CUDA_SUCCESS)
    abort ();
}

static void *
worker (void *arg)
{
  size_t k = (size_t) (uintptr_t) arg;
  CUstream s;
  ck (cuCtxSetCurrent (ctx));
  ck (cuStreamCreate (&s, 0));
  for (int i = 0; i < ITERS; i++) {
    CUdeviceptr x;
    ck (cuMemAlloc (&x, 4096 * (k + 1)));
    float a = 1;
    int n = 4;
    CUdeviceptr none = 0;
    void *p[] = { &a, &x, &none, &n };
    ck (cuLaunchKernel (axpy, 1, 1, 1, 32, 1, 1, 0, s, p, NULL));
    ck (cuStreamSynchronize (s));
    ck (cuMemFree (x));
  }
  return NULL;
}

int
main (void)
{
  CUdevice dev;
  CUmodule mod;
  ck (cuInit (0));
  ck (cuDeviceGet (&dev, 0));
  ck (cuDevicePrimaryCtxRetain (&ctx, dev));
  ck (cuCtxSetCurrent (ctx));
  ck (cuModuleLoadData (&mod, "stub"));
  ck (cuModuleGetFunction (&axpy, mod, "axpy"));
  CUdeviceptr keep;
  ck (cuMemAlloc (&keep, 1 << 20));                  /* the main thread's event: tid 0 */
  pthread_t th[THREADS];
  for (size_t k = 0; k < THREADS; k++)
    pthread_create (&th[k], NULL, worker, (void *) (uintptr_t) k);
  for (size_t k = 0; k < THREADS; k++)
    pthread_join (th[k], NULL);
  fflush (stdout);
  pid_t child = fork ();
  if (child == 0) {
    CUdeviceptr c;
    ck (cuMemAlloc (&c, 12345));
    ck (cuMemFree (c));
    _exit (0);
  }
  int st;
  waitpid (child, &st, 0);
  printf ("child %ld\n", (long) child);
  ck (cuMemFree (keep));
  return WIFEXITED (st) && WEXITSTATUS (st) == 0 ? 0 : 1;
}
