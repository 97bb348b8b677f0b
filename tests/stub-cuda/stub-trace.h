/* stub-trace.h — how the test-only stub libcupti (libcupti-stub.c) and the
 * stub driver (libcuda-stub.c) talk. The driver knows what a call does (its
 * parameters, the fake GPU clocks, the allocations); libcupti-stub knows
 * what the tool asked for (the subscriber, enabled callbacks and activity
 * kinds, the buffers). Both use the real CUPTI headers, so the parameter
 * structs (generated_cuda_meta.h) and the activity records are laid out as
 * the real ones. */
#pragma once

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  /* A driver API call: SITE CUPTI_API_ENTER before the call's work,
   * CUPTI_API_EXIT after it (RET then holds its result). CORR is the call's
   * correlation id (the same at both sites, and in its activity records);
   * CORR_DATA its correlationData slot. PARAMS is the cbid's *_params
   * struct (NULL for calls without parameters). */
  void (*api) (CUpti_ApiCallbackSite site, CUpti_CallbackId cbid, const char *name,
               const void *params, CUresult *ret, uint32_t corr, uint64_t *corr_data);
  /* One activity record in the real layout of its kind; dropped unless the
   * tool enabled that kind (UM counters: and configured that counter). */
  void (*record) (const CUpti_Activity *rec, size_t size);
} StubCuptiHooks;

/* Exported by the stub driver; libcupti-stub registers itself from
 * cuptiSubscribe (NULL from cuptiUnsubscribe). */
void stub_cuda_set_cupti (const StubCuptiHooks *hooks);
