/* stub-nccl.h — the NCCL API the stub libnccl (libnccl-stub.c) defines and
 * prog-nccl.c calls: signatures and enum values as in nccl.h 2.28 (written
 * out, so that the tests build where NCCL's headers are not installed). */
#pragma once

#include <cuda.h>
#include <stddef.h>

typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;   /* NCCL_UNIQUE_ID_BYTES */
typedef int ncclResult_t;
typedef int ncclDataType_t;   /* ncclInt8 0, ncclInt32 2, ncclInt64 4, ncclFloat16 6,
                                 ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9 */
typedef int ncclRedOp_t;
typedef CUstream cudaStream_t;

typedef struct ncclConfig ncclConfig_t;                 /* passed through, never read */
#define NCCL_SPLIT_NOCOLOR -1
ncclResult_t ncclCommInitRank (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommInitRankConfig (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config);
ncclResult_t ncclCommInitAll (ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommSplit (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config);
ncclResult_t ncclCommDestroy (ncclComm_t comm);
ncclResult_t ncclCommAbort (ncclComm_t comm);
ncclResult_t ncclCommCount (const ncclComm_t comm, int *count);
ncclResult_t ncclCommUserRank (const ncclComm_t comm, int *rank);
ncclResult_t ncclAllReduce (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclReduceScatter (const void *sb, void *rb, size_t recvcount, ncclDataType_t dt,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclAllGather (const void *sb, void *rb, size_t sendcount, ncclDataType_t dt, ncclComm_t comm,
                            cudaStream_t s);
ncclResult_t ncclAlltoAll (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclComm_t comm,
                           cudaStream_t s);
ncclResult_t ncclBroadcast (const void *sb, void *rb, size_t count, ncclDataType_t dt, int root,
                            ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclBcast (void *buf, size_t count, ncclDataType_t dt, int root, ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclReduce (const void *sb, void *rb, size_t count, ncclDataType_t dt, ncclRedOp_t op, int root,
                         ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclSend (const void *sb, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                       cudaStream_t s);
ncclResult_t ncclRecv (void *rb, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t s);
ncclResult_t ncclGroupStart (void);
ncclResult_t ncclGroupEnd (void);
ncclResult_t ncclGroupSimulateEnd (void *sim_info);   /* ncclSimInfo_t * (NCCL 2.22) */
