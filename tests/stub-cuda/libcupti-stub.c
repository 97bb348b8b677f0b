/* libcupti-stub.c — a test-only stand-in for libcupti, for running the
 * capture shim's CUPTI mode against the stub driver (libcuda-stub.c) where
 * there is no GPU and no CUPTI. Built as build/tests/stub-cuda/libcupti.so;
 * the tests point VRAMCAP_CUPTI at it.
 *
 * It implements what capture/cupti.c calls: one subscriber (a second gets
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as does the first when
 * STUB_CUPTI_BUSY=1), driver-API callbacks enabled one cbid at a time,
 * activity kinds enabled one at a time, the buffer callbacks, flushing,
 * record iteration, result strings, graph node ids, and the unified-memory
 * counter configuration (STUB_CUPTI_NO_UM=1: not supported, as on a
 * platform without UM counters). The driver reports calls and records
 * through stub_cuda_set_cupti (stub-trace.h); records go into the tool's
 * buffers, 8-byte aligned, in the real layouts of the CUPTI headers this
 * is built with. A full buffer is handed back at the end of the call that
 * filled it; cuptiActivityFlushAll hands back every buffer with records,
 * whatever its flag. UM counter records are kept only for the counter
 * kinds configured with enable = 1. */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stub-trace.h"

struct CUpti_Subscriber_st { int dummy; };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUpti_Subscriber_st the_sub;
static int subscribed;
static CUpti_CallbackFunc sub_fn;
static void *sub_ud;
static uint8_t cb_on[CUPTI_DRIVER_TRACE_CBID_SIZE];
static uint8_t kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static uint8_t um_on[CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT];
static CUpti_BuffersCallbackRequestFunc buf_req;
static CUpti_BuffersCallbackCompleteFunc buf_done;

/* The buffer being filled, and the full ones waiting to be handed back. */
static uint8_t *cur;
static size_t cur_size, cur_used;
typedef struct { uint8_t *buf; size_t size, used; } Full;
static Full full[64];
static size_t n_full;

static int
env_is (const char *name)
{
  const char *v = getenv (name);
  return v && strcmp (v, "1") == 0;
}

/* The size of a record of KIND as the stub lays it out; 0: a kind the
 * stub never makes. */
static size_t
rec_size (CUpti_ActivityKind kind)
{
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof (CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof (CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof (CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof (CUpti_ActivityMemory4);
  case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof (CUpti_ActivityMemoryPool3);
  case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: return sizeof (CUpti_ActivityUnifiedMemoryCounter3);
  default: return 0;
  }
}

#define ROUND8(n) (((n) + 7) & ~(size_t) 7)

/* Hands back the full buffers (outside the lock). */
static void
deliver_full (void)
{
  for (;;) {
    pthread_mutex_lock (&mu);
    if (!n_full) {
      pthread_mutex_unlock (&mu);
      return;
    }
    Full f = full[0];
    memmove (full, full + 1, --n_full * sizeof *full);
    CUpti_BuffersCallbackCompleteFunc done = buf_done;
    pthread_mutex_unlock (&mu);
    if (done)
      done (NULL, 0, f.buf, f.size, f.used);
  }
}

/* With the lock held: the buffer being filled goes to the full ones. */
static void
retire_locked (void)
{
  if (cur && cur_used && n_full < sizeof full / sizeof full[0]) {
    full[n_full++] = (Full) { cur, cur_size, cur_used };
    cur = NULL;
  }
}

static void
on_record (const CUpti_Activity *rec, size_t size)
{
  CUpti_ActivityKind kind = rec->kind;
  size_t need = rec_size (kind);
  if (!need || need != size)
    return;
  pthread_mutex_lock (&mu);
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && !kind_on[kind] && kind_on[CUPTI_ACTIVITY_KIND_KERNEL])
    kind = CUPTI_ACTIVITY_KIND_KERNEL;      /* the serialized kind asked for instead */
  int keep = kind_on[kind] && buf_req;
  if (keep && kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
    CUpti_ActivityUnifiedMemoryCounterKind ck = ((const CUpti_ActivityUnifiedMemoryCounter3 *) rec)->counterKind;
    keep = ck < CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT && um_on[ck];
  }
  if (!keep) {
    pthread_mutex_unlock (&mu);
    return;
  }
  if (cur && cur_used + ROUND8 (size) > cur_size)
    retire_locked ();
  if (cur && cur_used + ROUND8 (size) > cur_size) {     /* too many full ones waiting: dropped */
    pthread_mutex_unlock (&mu);
    return;
  }
  if (!cur) {
    uint8_t *b = NULL;
    size_t bs = 0, max = 0;
    buf_req (&b, &bs, &max);
    if (!b || bs < ROUND8 (size)) {       /* the tool gave no room: dropped */
      pthread_mutex_unlock (&mu);
      return;
    }
    cur = b;
    cur_size = bs;
    cur_used = 0;
  }
  memcpy (cur + cur_used, rec, size);
  ((CUpti_Activity *) (cur + cur_used))->kind = kind;
  cur_used += ROUND8 (size);
  pthread_mutex_unlock (&mu);
}

static void
on_api (CUpti_ApiCallbackSite site, CUpti_CallbackId cbid, const char *name, const void *params,
        CUresult *ret, uint32_t corr, uint64_t *corr_data)
{
  pthread_mutex_lock (&mu);
  CUpti_CallbackFunc fn = subscribed && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && cb_on[cbid] ? sub_fn : NULL;
  void *ud = sub_ud;
  pthread_mutex_unlock (&mu);
  if (fn) {
    CUpti_CallbackData d = {
      .callbackSite = site, .functionName = name, .functionParams = params,
      .functionReturnValue = ret, .symbolName = NULL, .context = NULL, .contextUid = 1,
      .correlationData = corr_data, .correlationId = corr,
    };
    fn (ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
  }
  if (site == CUPTI_API_EXIT)
    deliver_full ();
}

static const StubCuptiHooks hooks = { on_api, on_record };

CUptiResult CUPTIAPI
cuptiSubscribe (CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
  if (!subscriber || !callback)
    return CUPTI_ERROR_INVALID_PARAMETER;
  /* The driver: the libcuda.so.1 the program loaded. */
  void *drv = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*set) (const StubCuptiHooks *) = drv ? (void (*) (const StubCuptiHooks *)) dlsym (drv, "stub_cuda_set_cupti") : NULL;
  if (!set)
    return CUPTI_ERROR_NOT_INITIALIZED;     /* not the stub driver */
  pthread_mutex_lock (&mu);
  if (subscribed || env_is ("STUB_CUPTI_BUSY")) {
    pthread_mutex_unlock (&mu);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  subscribed = 1;
  sub_fn = callback;
  sub_ud = userdata;
  *subscriber = &the_sub;
  pthread_mutex_unlock (&mu);
  set (&hooks);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiUnsubscribe (CUpti_SubscriberHandle subscriber)
{
  if (subscriber != &the_sub)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock (&mu);
  subscribed = 0;
  memset (cb_on, 0, sizeof cb_on);
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiEnableCallback (uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                     CUpti_CallbackId cbid)
{
  if (subscriber != &the_sub || domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock (&mu);
  cb_on[cbid] = enable != 0;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityEnable (CUpti_ActivityKind kind)
{
  if ((unsigned) kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_KIND;
  if (kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER && env_is ("STUB_CUPTI_NO_UM"))
    return CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED;
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && env_is ("STUB_CUPTI_NO_KERNELS"))
    return CUPTI_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock (&mu);
  kind_on[kind] = 1;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityDisable (CUpti_ActivityKind kind)
{
  if ((unsigned) kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_KIND;
  pthread_mutex_lock (&mu);
  kind_on[kind] = 0;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityConfigureUnifiedMemoryCounter (CUpti_ActivityUnifiedMemoryCounterConfig *config, uint32_t count)
{
  if (env_is ("STUB_CUPTI_NO_UM"))
    return CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED;
  if (!config || !count)
    return CUPTI_ERROR_INVALID_PARAMETER;
  for (uint32_t i = 0; i < count; i++)
    if ((unsigned) config[i].kind >= CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT
        || config[i].kind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_UNKNOWN)
      return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock (&mu);
  for (uint32_t i = 0; i < count; i++)
    um_on[config[i].kind] = config[i].enable != 0;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks (CUpti_BuffersCallbackRequestFunc requested,
                                CUpti_BuffersCallbackCompleteFunc completed)
{
  if (!requested || !completed)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock (&mu);
  buf_req = requested;
  buf_done = completed;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityFlushAll (uint32_t flag)
{
  (void) flag;
  pthread_mutex_lock (&mu);
  retire_locked ();
  pthread_mutex_unlock (&mu);
  deliver_full ();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityGetNextRecord (uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
  if (!buffer || !record)
    return CUPTI_ERROR_INVALID_PARAMETER;
  size_t off = 0;
  if (*record) {
    size_t sz = rec_size ((*record)->kind);
    if (!sz)
      return CUPTI_ERROR_INVALID_KIND;
    off = (size_t) ((uint8_t *) *record - buffer) + ROUND8 (sz);
  }
  if (off + sizeof (CUpti_Activity) > valid) {
    *record = NULL;
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = (CUpti_Activity *) (buffer + off);
  return CUPTI_SUCCESS;
}

/* STUB_CUPTI_DROPPED=N: N records were dropped, said once. */
CUptiResult CUPTIAPI
cuptiActivityGetNumDroppedRecords (CUcontext context, uint32_t streamId, size_t *dropped)
{
  (void) context; (void) streamId;
  static int said;
  if (!dropped)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const char *v = getenv ("STUB_CUPTI_DROPPED");
  pthread_mutex_lock (&mu);
  *dropped = v && !said ? strtoull (v, NULL, 10) : 0;
  said = 1;
  pthread_mutex_unlock (&mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiGetGraphNodeId (CUgraphNode node, uint64_t *id)
{
  if (!node || !id)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *id = (uint64_t) (uintptr_t) node;        /* as the stub driver's kernel records say */
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiGetResultString (CUptiResult result, const char **str)
{
  if (!str)
    return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
  case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
  case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
  case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
  case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
  case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
  case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
  case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED: *str = "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED"; break;
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    break;
  default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}
