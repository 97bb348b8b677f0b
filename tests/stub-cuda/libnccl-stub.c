/* libnccl-stub.c — a stand-in libnccl.so.2 for tests/capture-nccl.sh: the
 * NCCL calls vramcap's wrap stands in for (capture/nccl.c), with the
 * signatures and enum values of nccl.h 2.28, and NCCL's launch behaviour
 * as far as the wrap sees it: ops issued inside a group are queued and
 * launched at the outermost ncclGroupEnd, one kernel per communicator and
 * stream in the order they were first used (ncclGroupSimulateEnd drops
 * them); ncclCommInitAll and ncclCommSplit make communicators as the
 * comments below say; a call outside any group runs its own
 * ncclGroupStart / ncclGroupEnd through the exported names (as NCCL's
 * ncclSend and ncclRecv do), and ncclBcast calls ncclBroadcast. Each
 * launch is one ncclDevKernel_Generic kernel (grid 1: 1000 ns in the stub
 * driver) on the stream, with no parameters. Nothing is communicated. */
#include <stdlib.h>

#include "stub-nccl.h"

struct ncclComm { int nranks, rank; };
enum { ncclSuccess = 0, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };

static __thread int depth;
static __thread struct { ncclComm_t comm; CUstream s; } queued[64];
static __thread int n_queued;

/* One launch per communicator and stream, as NCCL launches a group. */
static ncclResult_t
enqueue (ncclComm_t comm, cudaStream_t s)
{
  if (!comm || depth == 0)
    return ncclInvalidUsage;
  for (int i = 0; i < n_queued; i++)
    if (queued[i].s == s && queued[i].comm == comm)
      return ncclSuccess;
  if (n_queued == 64)
    return ncclInvalidUsage;
  queued[n_queued].comm = comm;
  queued[n_queued++].s = s;
  return ncclSuccess;
}

/* An op outside a group is a group of one, as in NCCL's collectives.cc. */
static ncclResult_t
op (ncclComm_t comm, cudaStream_t s)
{
  ncclGroupStart ();
  ncclResult_t r = enqueue (comm, s);
  ncclResult_t e = ncclGroupEnd ();
  return r ? r : e;
}

ncclResult_t
ncclGroupStart (void)
{
  depth++;
  return ncclSuccess;
}

ncclResult_t
ncclGroupEnd (void)
{
  if (depth == 0)
    return ncclInvalidUsage;
  if (--depth > 0)
    return ncclSuccess;
  CUmodule mod;
  CUfunction f;
  if (cuModuleLoadData (&mod, "stub") != CUDA_SUCCESS || cuModuleGetFunction (&f, mod, "ncclDevKernel_Generic") != CUDA_SUCCESS)
    return ncclInvalidUsage;
  int n = n_queued;
  n_queued = 0;
  for (int i = 0; i < n; i++)
    if (cuLaunchKernel (f, 1, 1, 1, 64, 1, 1, 0, queued[i].s, NULL, NULL) != CUDA_SUCCESS)
      return ncclInvalidUsage;
  return ncclSuccess;
}

/* Ends the group without launching anything. */
ncclResult_t
ncclGroupSimulateEnd (void *sim_info)
{
  (void) sim_info;
  if (depth == 0)
    return ncclInvalidUsage;
  if (--depth == 0)
    n_queued = 0;
  return ncclSuccess;
}

ncclResult_t
ncclCommInitRank (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
  (void) id;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  *comm = malloc (sizeof **comm);
  (*comm)->nranks = nranks;
  (*comm)->rank = rank;
  return ncclSuccess;
}

ncclResult_t
ncclCommInitRankConfig (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config)
{
  (void) config;
  return ncclCommInitRank (comm, nranks, id, rank);
}

/* One process, NDEV ranks: one communicator of NDEV. */
ncclResult_t
ncclCommInitAll (ncclComm_t *comms, int ndev, const int *devlist)
{
  (void) devlist;
  if (!comms || ndev < 1)
    return ncclInvalidArgument;
  for (int i = 0; i < ndev; i++)
    {
      comms[i] = malloc (sizeof **comms);
      comms[i]->nranks = ndev;
      comms[i]->rank = i;
    }
  return ncclSuccess;
}

/* Alone, the stub cannot know which ranks gave the same color: the new
 * communicator has half its parent's ranks (at least 1); no color, none. */
ncclResult_t
ncclCommSplit (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
  (void) key;
  (void) config;
  if (!comm || !newcomm)
    return ncclInvalidArgument;
  if (color == NCCL_SPLIT_NOCOLOR)
    {
      *newcomm = NULL;
      return ncclSuccess;
    }
  *newcomm = malloc (sizeof **newcomm);
  (*newcomm)->nranks = comm->nranks > 1 ? comm->nranks / 2 : 1;
  (*newcomm)->rank = 0;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy (ncclComm_t comm) { free (comm); return ncclSuccess; }
ncclResult_t ncclCommAbort (ncclComm_t comm) { free (comm); return ncclSuccess; }
ncclResult_t ncclCommCount (const ncclComm_t comm, int *count) { *count = comm->nranks; return ncclSuccess; }
ncclResult_t ncclCommUserRank (const ncclComm_t comm, int *rank) { *rank = comm->rank; return ncclSuccess; }

ncclResult_t
ncclAllReduce (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclRedOp_t o, ncclComm_t comm,
               cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclReduceScatter (const void *sb, void *rb, size_t recvcount, ncclDataType_t dt, ncclRedOp_t o,
                   ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclAllGather (const void *sb, void *rb, size_t sendcount, ncclDataType_t dt, ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclAlltoAll (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclBroadcast (const void *sb, void *rb, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
               cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclBcast (void *buf, size_t count, ncclDataType_t dt, int root, ncclComm_t comm, cudaStream_t s)
{
  return ncclBroadcast (buf, buf, count, dt, root, comm, s);
}

ncclResult_t
ncclReduce (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclRedOp_t o, int root,
            ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclSend (const void *sb, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}

ncclResult_t
ncclRecv (void *rb, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t s)
{
  return op (comm, s);
}
