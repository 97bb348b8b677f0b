/* cupti-probe.c — a test-only CUPTI client for checking the stub libcupti
 * and the stub driver themselves (tests/capture-cupti.sh), independent of
 * the capture shim. Loaded by the stub driver as its injection library
 * (CUDA_INJECTION64_PATH, STUB_CUDA_INJECT=1), it enables every driver
 * callback and the activity kinds the stubs make, and writes one line per
 * callback and per record to $CUPTI_PROBE_OUT, flushing at exit. */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

int InitializeInjection (void);

static FILE *out;
static CUpti_SubscriberHandle sub;

static void CUPTIAPI
on_cb (void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
  (void) ud;
  const CUpti_CallbackData *d = data;
  if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  /* A value that identifies the call, to be found again at exit. */
  uint64_t mark = 0xc0ffee0000000000ull | d->correlationId;
  unsigned long long arg = 0;    /* a parameter, to check the *_params layout */
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: arg = ((const cuMemAlloc_v2_params *) d->functionParams)->bytesize; break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: arg = ((const cuMemAllocManaged_params *) d->functionParams)->bytesize; break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync: arg = ((const cuMemAllocAsync_params *) d->functionParams)->bytesize; break;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: arg = ((const cuLaunchKernel_params *) d->functionParams)->gridDimX; break;
  default: break;
  }
  if (d->callbackSite == CUPTI_API_ENTER) {
    *d->correlationData = mark;
    fprintf (out, "enter %s %u %u %llu\n", d->functionName, cbid, d->correlationId, arg);
  } else {
    fprintf (out, "exit %s %u %u %llu %d %d\n", d->functionName, cbid, d->correlationId, arg,
             (int) *(const CUresult *) d->functionReturnValue, *d->correlationData == mark);
  }
}

static void CUPTIAPI
requested (uint8_t **buf, size_t *size, size_t *max)
{
  *size = 4096;                 /* small: several buffers per run */
  *buf = aligned_alloc (8, *size);
  *max = 0;
}

static void CUPTIAPI
completed (CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
  (void) ctx; (void) stream; (void) size;
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord (buf, valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *) r;
      fprintf (out, "kernel %s %u %llu %llu %u %d\n", k->name, k->correlationId,
               (unsigned long long) k->start, (unsigned long long) k->end, k->streamId, k->gridX);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *) r;
      fprintf (out, "memcpy %u %u %llu %llu %llu\n", m->copyKind, m->correlationId,
               (unsigned long long) m->bytes, (unsigned long long) m->start, (unsigned long long) m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *) r;
      fprintf (out, "memset %u %llu %llu %llu\n", m->correlationId, (unsigned long long) m->bytes,
               (unsigned long long) m->start, (unsigned long long) m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      CUpti_ActivityMemory4 *m = (CUpti_ActivityMemory4 *) r;
      fprintf (out, "memory %u %u %u %llu %u %llu %llu\n", m->memoryOperationType, m->memoryKind,
               m->correlationId, (unsigned long long) m->bytes, m->isAsync,
               (unsigned long long) m->memoryPoolConfig.pool.size,
               (unsigned long long) m->memoryPoolConfig.utilizedSize);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      CUpti_ActivityMemoryPool3 *p = (CUpti_ActivityMemoryPool3 *) r;
      fprintf (out, "pool %u %u %llu %llu\n", p->memoryPoolOperationType, p->correlationId,
               (unsigned long long) p->size, (unsigned long long) p->utilizedSize);
      break;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
      CUpti_ActivityUnifiedMemoryCounter3 *u = (CUpti_ActivityUnifiedMemoryCounter3 *) r;
      fprintf (out, "um %u %llu %llu %llu\n", u->counterKind, (unsigned long long) u->value,
               (unsigned long long) u->start, (unsigned long long) u->end);
      break;
    }
    default:
      fprintf (out, "other %u\n", r->kind);
      break;
    }
  }
  free (buf);
}

static void
at_exit (void)
{
  cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  fclose (out);
}

int
InitializeInjection (void)
{
  const char *path = getenv ("CUPTI_PROBE_OUT");
  out = fopen (path ? path : "/dev/null", "w");
  if (!out)
    return 0;
  fprintf (out, "subscribe %d\n", (int) cuptiSubscribe (&sub, (CUpti_CallbackFunc) on_cb, NULL));
  for (CUpti_CallbackId i = 1; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
    cuptiEnableCallback (1, sub, CUPTI_CB_DOMAIN_DRIVER_API, i);
  cuptiActivityRegisterCallbacks (requested, completed);
  CUpti_ActivityUnifiedMemoryCounterConfig um[] = {
    { CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0, 1 },
    { CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 0, 1 },
  };
  fprintf (out, "um-config %d\n", (int) cuptiActivityConfigureUnifiedMemoryCounter (um, 2));
  static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER,
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    fprintf (out, "enable %d %d\n", (int) kinds[i], (int) cuptiActivityEnable (kinds[i]));
  atexit (at_exit);
  return 1;
}
