/* recorder.h — the capture shim's recorder, shared by hook mode (hooks.c
 * and its hooks-*.c) and CUPTI mode (cupti.c). It owns the in-memory event
 * buffer, the interval map of live allocations, the stream/event/thread
 * numbering, the string table, the output file, and the exit/signal/fork
 * handling.
 *
 * It knows nothing of CUDA: handles and pointers are uintptr_t. Every
 * cap_* function that takes no lock argument takes the recorder's lock
 * itself; *_locked ones must be called with it held (cap_lock). Times are
 * ns since the shim was loaded (cap_now). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vtrace-writer.h"

#define VRAMCAP_TOOL "vramcap 0.1"

enum { CAP_MEM_DEVICE, CAP_MEM_MANAGED, CAP_MEM_PINNED };
enum { CAP_DIR_H2D, CAP_DIR_D2H, CAP_DIR_D2D, CAP_DIR_P2P, CAP_DIR_AUTO };
enum { CAP_SYNC_DEVICE, CAP_SYNC_STREAM, CAP_SYNC_EVENT };
enum { CAP_MODE_OFF, CAP_MODE_HOOK, CAP_MODE_CUPTI };

/* What the header says about the device (cap_set_device). */
typedef struct {
  char name[256];
  uint64_t memory_bytes;
  int sm_count, cc_major, cc_minor;
  int cuda_version;            /* cuDriverGetVersion, e.g. 12040 */
} CapDevice;

/* The mode that records (CAP_MODE_HOOK or CAP_MODE_CUPTI); the mode the
 * user asked for comes from $VRAMCAP_MODE (default cupti). */
extern volatile int cap_mode;
int cap_requested_mode (void);

void cap_init (void);
uint64_t cap_now (void);
uint32_t cap_tid (void);
/* A note on stderr, prefixed "vramcap: ", never on stdout. */
void cap_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

void cap_lock (void);
void cap_unlock (void);

/* Called with the lock held: RESOLVE (blocking = 0: poll only; 1: wait for
 * the GPU; 2: dying, give up on pending timings) before the buffer is
 * written; FORK_CHILD after fork in the child. Set by the active mode. */
extern void (*cap_resolve_cb) (int blocking);
extern void (*cap_fork_child_cb) (void);

void cap_set_device (const CapDevice *d);
int cap_have_device (void);
/* The preset in configs/ that matches a device name, or NULL. */
const char *cap_preset_for (const char *device_name, uint64_t memory_bytes);

/* ---- events (each takes the lock) ---- */
void cap_alloc (uint64_t t0, uint64_t t1, uintptr_t p, uint64_t bytes, int kind,
                int stream_ordered, uintptr_t stream);
void cap_free (uint64_t t0, uint64_t t1, uintptr_t p, int stream_ordered, uintptr_t stream);
/* Frees every allocation inside [lo, hi) (cuMemUnmap). */
void cap_free_range (uint64_t t0, uint64_t t1, uintptr_t lo, uintptr_t hi);
/* dir CAP_DIR_AUTO: inferred from what dst and src are (device or managed
 * allocations are device side; pinned or untracked pointers host side).
 * Returns the event's sequence number (for cap_resolve_locked); PENDING
 * means its dur comes later. */
uint64_t cap_copy (uint64_t t0, uint64_t t1, int dir, uintptr_t dst, uintptr_t src,
                   uint64_t bytes, uintptr_t stream, int async, int pending, uint64_t corr);
/* A copy side that is a CUDA array (cuArrayCreate is not recorded): the
 * trace's one synthetic allocation "cuda_arrays" (0 bytes, device), made
 * just before the first copy that names an array. */
#define CAP_ARRAY UINTPTR_MAX
/* A batch of copies on one stream (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync):
 * N copy events pushed under one lock, so their sequence numbers are
 * consecutive; returns the first (UINT64_MAX if none) and how many went
 * in (COUNT). The call's host time goes to the last. */
typedef struct { int dir; uintptr_t dst, src; uint64_t bytes; } CapCopyOp;
uint64_t cap_copies (uint64_t t0, uint64_t t1, const CapCopyOp *ops, uint32_t n, uintptr_t stream,
                     int async, int pending, uint64_t corr, uint32_t *count);
uint64_t cap_memset (uint64_t t0, uint64_t t1, uintptr_t dst, uint64_t bytes,
                     uintptr_t stream, int async, int pending, uint64_t corr);
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

/* Where a kernel's collective comes from, set at load by the NCCL wrap
 * (nccl.c; NULL: none): while the calling thread is inside an NCCL call
 * that launches kernels, the collective waiting for the kernel launched on
 * STREAM (or, if none waits on that stream, the first one still waiting),
 * taken so that the next kernel gets nothing; returns 1. Returns 0
 * otherwise (cheap: one thread-local test). cap_kernel asks it for every
 * launch, both modes, before it takes the lock. */
extern int (*cap_coll_cb) (uintptr_t stream, CapColl *out);

/* Why a process recorded nothing, into BUF (CAP bytes), for the line said
 * at exit; set at load by hook mode (hooks.c: what cuInit answered through
 * the shim, else whether the driver is loaded or can be loaded at all).
 * Not called from a signal handler (it may dlopen the driver). */
extern void (*cap_nothing_cause_cb) (char *buf, size_t cap);

/* A launch's shape (SPEC 3 `grid`, `block`, `regs`, `smem`): grid and
 * block as launched; regs per thread and smem (static + dynamic shared
 * memory per block) 0 where unknown, which the trace writes as absent. */
typedef struct { uint32_t grid[3], block[3], regs, smem; } CapShape;
/* WORDS are the pointer-sized words of the kernel's parameters; the ones
 * inside live allocations become touches (and the event's `managed` says
 * whether one of them is managed memory). SHAPE (NULL: none) rides on the
 * event when its grid and block are all positive. A kernel launched from
 * inside an NCCL call on this thread takes that call's collective
 * (cap_coll_cb). */
uint64_t cap_kernel (uint64_t t0, uint64_t t1, uint32_t name_sid, uintptr_t stream,
                     const uint64_t *words, size_t n_words, int pending, uint64_t corr,
                     const CapShape *shape);
void cap_sync (uint64_t t0, uint64_t t1, int scope, uintptr_t handle);
void cap_event_record (uint64_t t0, uint64_t t1, uintptr_t event, uintptr_t stream);
void cap_stream_wait (uint64_t t0, uint64_t t1, uintptr_t stream, uintptr_t event);
void cap_prefetch (uint64_t t0, uint64_t t1, uintptr_t p, uint64_t bytes, int to_host,
                   uintptr_t stream);
void cap_mark (uint64_t t0, uint64_t t1, const char *name);
/* A cuMemAdvise call: the trace format has no op for it; counted, and said
 * at exit. */
void cap_advise (void);
uint32_t cap_intern (const char *s);

/* ---- for the modes' timing code (lock held) ---- */
/* The event with sequence number SEQ, or NULL once it has been written. */
VtEvent *cap_get_locked (uint64_t seq);
/* Sets its dur (VTW_NONE: unknown) and clears pending. */
void cap_resolve_locked (uint64_t seq, uint64_t dur);
/* Splits DUR (VTW_NONE: unknown) over events FIRST..FIRST+N-1 in
 * proportion to their bytes (evenly if they have none), rounded so that
 * the parts add up to DUR. */
void cap_resolve_split_locked (uint64_t first, uint32_t n, uint64_t dur);
/* 0 for NULL and CU_STREAM_LEGACY; CU_STREAM_PER_THREAD (0x2) is the
 * calling thread's own per-thread default stream. */
uint64_t cap_stream_id_locked (uintptr_t stream);

/* Room for one more element in ARR (N used of *CAP, SIZE bytes each): ARR
 * itself while it has room, else ARR grown to twice its size (FIRST
 * elements the first time), *CAP updated. NULL when memory runs out: ARR
 * and *CAP are then unchanged. */
void *cap_grow (void *arr, size_t n, size_t *cap, size_t size, size_t first);

/* Writes everything and closes the trace (idempotent). */
void cap_finish (void);
