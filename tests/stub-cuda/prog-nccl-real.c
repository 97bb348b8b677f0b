/* prog-nccl-real.c — built only where the CUDA install has NCCL (nccl.h
 * and lib64/libnccl.so.2): every call the NCCL wrap stands in for, but
 * those that make a communicator from a unique id (they would start
 * NCCL's bootstrap), with a NULL communicator, against the real libnccl
 * (which refuses each before any GPU work; ncclCommDestroy and
 * ncclCommAbort take NULL as nothing to do). tests/capture-nccl.sh runs
 * it with and without the shim: the same results, and nccl.h's own
 * prototypes, so the wrap's hand-written signatures meet the real ones. */
#include <nccl.h>
#include <stdio.h>

int
main (void)
{
  int v = 0, n = -1;
  ncclComm_t child = NULL;
  ncclResult_t r[16];
  r[0] = ncclGetVersion (&v);
  r[1] = ncclAllReduce (NULL, NULL, 10, ncclFloat, ncclSum, NULL, NULL);
  r[2] = ncclAllGather (NULL, NULL, 10, ncclBfloat16, NULL, NULL);
  r[3] = ncclReduceScatter (NULL, NULL, 10, ncclDouble, ncclSum, NULL, NULL);
  r[4] = ncclAlltoAll (NULL, NULL, 10, ncclInt32, NULL, NULL);
  r[5] = ncclBroadcast (NULL, NULL, 10, ncclInt8, 0, NULL, NULL);
  r[6] = ncclBcast (NULL, 10, ncclInt8, 0, NULL, NULL);
  r[7] = ncclReduce (NULL, NULL, 10, ncclInt64, ncclSum, 0, NULL, NULL);
  r[8] = ncclGroupStart ();
  r[9] = ncclSend (NULL, 10, ncclFloat16, 1, NULL, NULL);
  r[10] = ncclRecv (NULL, 10, ncclFloat16, 1, NULL, NULL);
  r[11] = ncclGroupEnd ();
  r[12] = ncclCommCount (NULL, &n);
  /* The communicator calls the wrap follows (collective.group). */
  r[13] = ncclCommSplit (NULL, 0, 0, &child, NULL);
  r[14] = ncclCommDestroy (NULL);
  r[15] = ncclCommAbort (NULL);
  printf ("version %d:", v);
  for (int i = 0; i < 16; i++)
    printf (" %d", r[i]);
  printf ("\n");
  return 0;
}
