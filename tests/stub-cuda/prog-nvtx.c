/* prog-nvtx.c — a capture test program: NVTX v3 (header-only) markers and
 * ranges around stub-driver calls, on two threads (see
 * tests/capture-hook.sh for the marks it must produce). Prints the levels
 * NVTX returns, which depend on whether a tool is attached. */
#define _GNU_SOURCE
#include <cuda.h>
#include "prog-common.h"
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static CUfunction axpy;
static CUdeviceptr x;
static nvtxRangeId_t async_id;

static void
launch (unsigned gx)
{
  float a = 1.0f;
  CUdeviceptr y = x;
  int n = 1;
  void *p[] = { &a, &x, &y, &n };
  CK (cuLaunchKernel (axpy, gx, 1, 1, 32, 1, 1, 0, NULL, p, NULL));
}

static void *
worker (void *arg)
{
  (void) arg;
  CK (cuCtxSetCurrent ((CUcontext) arg));
  int l = nvtxRangePushA ("worker");
  launch (4);
  int e = nvtxRangePop ();
  nvtxRangeEnd (async_id);               /* started on the main thread */
  printf ("worker push %d pop %d\n", l, e);
  return NULL;
}

int
main (void)
{
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CK (cuInit (0));
  CK (cuDeviceGet (&dev, 0));
  CK (cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (cuCtxSetCurrent (ctx));
  CK (cuModuleLoadData (&mod, "stub"));
  CK (cuModuleGetFunction (&axpy, mod, "axpy"));

  nvtxMarkA ("start");
  int l0 = nvtxRangePushA ("step");
  CK (cuMemAlloc (&x, 4096));                                   /* id 1 */
  int l1 = nvtxRangePushA ("forward");
  launch (1);
  int e1 = nvtxRangePop ();
  int l2 = nvtxRangePushW (L"backward \u00fc\u20ac");
  launch (2);
  int e2 = nvtxRangePop ();
  int e0 = nvtxRangePop ();
  printf ("levels push %d %d %d pop %d %d %d\n", l0, l1, l2, e1, e2, e0);

  /* A domain, a registered string, and a default-domain range inside it
   * that ends after the domain's range: each stack pops its own. */
  nvtxDomainHandle_t d = nvtxDomainCreateA ("mydomain");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA (d, "registered");
  nvtxEventAttributes_t at;
  memset (&at, 0, sizeof at);
  at.version = NVTX_VERSION;
  at.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  at.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  at.message.registered = reg;
  int dl = nvtxDomainRangePushEx (d, &at);
  int il = nvtxRangePushA ("inner");
  launch (3);
  int de = nvtxDomainRangePop (d);
  int ie = nvtxRangePop ();
  int none = nvtxRangePop ();                                   /* nothing open */
  printf ("domain push %d %d pop %d %d %d\n", dl, il, de, ie, none);

  at.messageType = NVTX_MESSAGE_TYPE_ASCII;
  at.message.ascii = "ex-mark";
  nvtxDomainMarkEx (d, &at);
  nvtxMarkA ("bad\xff utf8");
  nvtxMarkW (L"wide");

  async_id = nvtxRangeStartA ("async");
  pthread_t th;
  pthread_create (&th, NULL, worker, ctx);
  pthread_join (th, NULL);

  CK (cuCtxSynchronize ());
  CK (cuMemFree (x));
  printf ("prog-nvtx done\n");
  return 0;
}
