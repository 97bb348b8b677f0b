/* prog-nccl.c — a capture test program for the NCCL wrap (capture/nccl.c):
 * every wrapped NCCL call once, on the stub libnccl (libnccl-stub.c), with
 * arguments whose collectives tests/capture-nccl.sh works out by hand. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "prog-common.h"
#include "stub-nccl.h"

enum { I8 = 0, I32 = 2, I64 = 4, F16 = 6, F32 = 7, F64 = 8, BF16 = 9 };
#define NK(call) do { ncclResult_t r_ = (call); if (r_) { fprintf (stderr, "%s: %d\n", #call, r_); exit (1); } } while (0)

/* Built as a program, and (-DNCCL_USER_LIB) as libnccl-user.so, which
 * prog-nccl-local opens with RTLD_LOCAL, as Python opens PyTorch: then the
 * stub libnccl is outside the global scope that dlsym(RTLD_NEXT) sees. */
int prog_nccl_run (void);

#ifndef NCCL_USER_LIB
int
main (void)
{
  return prog_nccl_run ();
}
#endif

int
prog_nccl_run (void)
{
  CUdevice dev;
  CUcontext ctx;
  CUstream s1, s2;
  CUmodule mod;
  CUfunction noargs;
  CK (cuInit (0));
  CK (cuDeviceGet (&dev, 0));
  CK (cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (cuCtxSetCurrent (ctx));
  CK (cuStreamCreate (&s1, 0));                                    /* stream 1 */
  CK (cuStreamCreate (&s2, 0));                                    /* stream 2 */
  CK (cuModuleLoadData (&mod, "stub"));
  CK (cuModuleGetFunction (&noargs, mod, "noargs"));
  CUdeviceptr b;
  CK (cuMemAlloc (&b, 1 << 20));
  void *p = (void *) (uintptr_t) b;

  /* $STUB_NCCL_RANK: the rank this process plays in c8 (and c4), so that
   * two captures as two ranks can be compared. */
  const char *re = getenv ("STUB_NCCL_RANK");
  int rank = re ? atoi (re) : 0;
  ncclComm_t c8, c4;
  ncclUniqueId id8 = { { 8 } }, id4 = { { 4 } };
  NK (ncclCommInitRank (&c8, 8, id8, rank));
  NK (ncclCommInitRank (&c4, 4, id4, rank % 4));

  NK (ncclAllReduce (p, p, 1000, F32, 0, c8, s1));
  NK (ncclAllGather (p, p, 256, BF16, c8, s1));
  NK (ncclReduceScatter (p, p, 100, F64, 0, c8, s1));
  CK (cuLaunchKernel (noargs, 1, 1, 1, 32, 1, 1, 0, s1, NULL, NULL));   /* not NCCL's */
  NK (ncclBroadcast (p, p, 33, I8, 0, c4, s2));
  NK (ncclBcast (p, 7, F64, 0, c4, s2));
  NK (ncclReduce (p, p, 10, I64, 0, 0, c4, s2));
  NK (ncclSend (p, 64, F16, 1, c8, s1));
  NK (ncclRecv (p, 48, F32, 2, c8, s1));
  NK (ncclAlltoAll (p, p, 5, I32, c4, s2));

  /* all_to_all as PyTorch builds it: a send and a receive per rank. */
  NK (ncclGroupStart ());
  for (int r = 0; r < 8; r++) {
    NK (ncclSend (p, 16, F32, r, c8, s1));
    NK (ncclRecv (p, 16, F32, r, c8, s1));
  }
  NK (ncclGroupEnd ());

  /* Coalesced, over two streams, nested groups: one kernel per stream. */
  NK (ncclGroupStart ());
  NK (ncclAllReduce (p, p, 100, F32, 0, c8, s1));
  NK (ncclGroupStart ());
  NK (ncclAllGather (p, p, 10, F32, c4, s2));
  NK (ncclGroupEnd ());
  NK (ncclAllReduce (p, p, 50, F32, 0, c8, s1));
  NK (ncclGroupEnd ());

  /* A pipeline exchange: send to the next stage, receive from the previous. */
  NK (ncclGroupStart ());
  NK (ncclSend (p, 100, F32, 1, c8, s1));
  NK (ncclRecv (p, 200, F32, 7, c8, s1));
  NK (ncclGroupEnd ());

  /* A simulated group launches nothing, and ends the group. */
  NK (ncclGroupStart ());
  NK (ncclAllReduce (p, p, 1 << 20, F32, 0, c8, s1));
  NK (ncclGroupSimulateEnd (NULL));
  NK (ncclAllReduce (p, p, 25, F32, 0, c8, s1));

  /* Another rank of c8 in this process (its unique id, through the Config
   * call): the same communicator. */
  ncclComm_t c8b;
  NK (ncclCommInitRankConfig (&c8b, 8, id8, (rank + 1) % 8, NULL));
  NK (ncclAllReduce (p, p, 64, F32, 0, c8b, s1));

  /* A clique of 2 in one process: one communicator, on two streams. */
  ncclComm_t cs[2];
  NK (ncclCommInitAll (cs, 2, NULL));
  NK (ncclGroupStart ());
  NK (ncclAllReduce (p, p, 10, F32, 0, cs[0], s1));
  NK (ncclAllReduce (p, p, 10, F32, 0, cs[1], s2));
  NK (ncclGroupEnd ());

  /* Two splits of c8 with the same color (4 ranks each in the stub): two
   * communicators; a rank without a color gets none. */
  ncclComm_t sp1, sp2, none = (ncclComm_t) &none;
  NK (ncclCommSplit (c8, 0, rank, &sp1, NULL));
  NK (ncclAllReduce (p, p, 8, F32, 0, sp1, s2));
  NK (ncclCommSplit (c8, 0, rank, &sp2, NULL));
  NK (ncclAllReduce (p, p, 8, F32, 0, sp2, s2));
  NK (ncclCommSplit (c8, NCCL_SPLIT_NOCOLOR, rank, &none, NULL));
  if (none != NULL)
    return 1;

  /* One group, two communicators on one stream: a kernel each. */
  NK (ncclGroupStart ());
  NK (ncclAllReduce (p, p, 100, F32, 0, c8, s1));
  NK (ncclAllGather (p, p, 5, F32, sp1, s1));
  NK (ncclGroupEnd ());

  CK (cuCtxSynchronize ());
  NK (ncclCommDestroy (sp1));
  NK (ncclCommAbort (sp2));
  NK (ncclCommDestroy (cs[0]));
  NK (ncclCommDestroy (cs[1]));
  NK (ncclCommDestroy (c8b));
  NK (ncclCommDestroy (c8));
  NK (ncclCommDestroy (c4));
  CK (cuMemFree (b));
  printf ("done\n");
  return 0;
}
