/* nccl.h — the NCCL wrap (nccl.c): which collective the kernel being
 * launched runs, when it is launched from inside an NCCL call. */
#pragma once

#include <stdint.h>

/* One kernel's collective: KIND is docs/trace-format.md's code (0
 * all_reduce, 1 all_gather, 2 reduce_scatter, 3 all_to_all, 4 broadcast,
 * 5 reduce, 6 send, 7 recv), BYTES the per-rank input buffer (SPEC 3),
 * RANKS the communicator's size, GROUP its id (collective.group.id: from
 * the unique id it was created with, 1 .. 2^53 - 1; 0: not known). */
typedef struct {
  uint8_t kind;
  uint32_t ranks;
  uint64_t bytes;
  uint64_t group;
} CapColl;

/* While this thread is inside an NCCL call that launches kernels: the
 * collective waiting for the kernel launched on STREAM (or, if none waits
 * on that stream, the first one still waiting), taken so that the next
 * kernel gets nothing; returns 1. Returns 0 otherwise (cheap: one
 * thread-local test). Called by cap_kernel for every launch, both modes. */
int capnccl_take (uintptr_t stream, CapColl *out);

/* The next definition of NAME after the shim in the global scope (dlsym
 * RTLD_NEXT with the real dlsym; hooks.c), or NULL; NAME in HANDLE and its
 * dependencies (the real dlsym). */
void *hooks_next_symbol (const char *name);
void *hooks_symbol_in (void *handle, const char *name);
