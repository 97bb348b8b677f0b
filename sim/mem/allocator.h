/* allocator.h — allocator models: what a program's allocations cost the
 * device (SPEC 5.6, docs/model.md "Allocator models").
 *
 * A trace's alloc/free events are what the program asked for; the device is
 * charged what the allocator reserved from the driver. Three models, one
 * interface (a table of functions behind VsAlloc, named for reports):
 *
 *   pytorch  PyTorch's CUDA caching allocator (alloc-pytorch.c, after
 *            c10/cuda/CUDACachingAllocator.cpp): blocks carved out of cached
 *            segments, per-stream small and large pools, best fit, splitting,
 *            merging, release-and-retry, expandable segments.
 *   async    stream-ordered pools (cudaMallocAsync) as PyTorch's
 *            cudaMallocAsync backend uses them (alloc-async.c).
 *   none     every allocation is a driver call rounded to the granularity
 *            (alloc-none.c).
 *
 * The caller (the engine, a validation driver) says when the program
 * allocates, frees, empties the cache or synchronises; the model keeps
 * allocated and reserved bytes, their peaks and the fragmentation at the
 * peak, and reports each driver-level change (segment alloc/free, page
 * map/unmap) to an optional listener, in the order PyTorch records them in a
 * memory snapshot. Stream order is the caller's: alloc_free() makes a block
 * reusable at once (same-stream reuse, as the caching allocator allows);
 * alloc_free_request() + alloc_free_complete() split it for a block used on
 * other streams (record_stream: reusable once their work has run).
 *
 * Ownership: alloc_new copies the config; alloc_free_model frees the model. */
#pragma once

#include <glib.h>

typedef enum { VS_ALLOC_NONE, VS_ALLOC_PYTORCH, VS_ALLOC_ASYNC, VS_ALLOC_KIND_COUNT } VsAllocKind;

/* roundup_power2_divisions is given per power-of-two interval of request
 * sizes, as PYTORCH_CUDA_ALLOC_CONF's "[1:..,2:..,..]" form does: index 0 is
 * sizes below 2 MiB, index i sizes in [2^(20+i), 2^(21+i)), the last every
 * size from 64 GiB (CUDAAllocatorConfig::roundup_power2_divisions). */
#define VS_ALLOC_POW2_INTERVALS 17
#define VS_ALLOC_UNLIMITED G_MAXUINT64

typedef struct {
  VsAllocKind kind;
  /* pytorch */
  gboolean expandable_segments;
  guint64 max_split_size;           /* VS_ALLOC_UNLIMITED (default) or bytes */
  guint64 max_non_split_rounding;   /* default 20 MiB */
  guint32 roundup_power2_divisions[VS_ALLOC_POW2_INTERVALS]; /* 0 or 1: off */
  double garbage_collection_threshold; /* fraction of the limit; 0: off */
  guint64 large_segment;            /* default 20 MiB */
  /* The sizes asked for are the allocator's block sizes already (a
   * profiler's [memory] Bytes is block->size: rounded, with any remainder
   * the real allocator did not split): they are not rounded again, and
   * allocated counts them as given, not the model's block, which is larger
   * where its guess of the cache's layout left a remainder it does not
   * split (docs/model.md, "Block sizes"). Default FALSE: the sizes are
   * requests (snapshots, generators). */
  gboolean sizes_are_blocks;
  /* async */
  guint64 release_threshold;        /* VS_ALLOC_UNLIMITED (default): keep everything */
  /* none (and the async pool's growth step) */
  guint64 granularity;              /* memory.alloc_granularity, default 2 MiB */
  /* The bytes the driver can give (device capacity less context); a
   * segment that would pass it fails like cudaMalloc. VS_ALLOC_UNLIMITED: no
   * limit. */
  guint64 limit;
  /* Device total memory, which sizes an expandable segment's address
   * range (1 1/8 of it); 0: 256 GiB. */
  guint64 device_total;
} VsAllocConfig;

/* The defaults above (kind pytorch). */
void alloc_config_init (VsAllocConfig *cfg);
/* "pytorch", "async", "none"; NULL out of range. */
const char *alloc_kind_name (guint kind);
/* -1 when unknown. */
int alloc_kind_from_name (const char *name);

typedef enum {
  VS_SEG_ALLOC,   /* cudaMalloc of a new segment */
  VS_SEG_FREE,    /* cudaFree of a whole segment */
  VS_SEG_MAP,     /* expandable segment: pages mapped */
  VS_SEG_UNMAP,   /* expandable segment: pages unmapped */
  VS_SEG_COUNT
} VsSegAction;

typedef struct {
  guint8 action;      /* VsSegAction */
  guint64 addr, bytes, stream;
} VsSegEvent;

/* "segment_alloc", ... as in PyTorch snapshots. */
const char *alloc_seg_action_name (guint action);

typedef void (*VsSegFn) (const VsSegEvent *ev, gpointer data);
/* Gives the address of a new segment (or expandable range) of BYTES on
 * STREAM; 0: let the model choose. Validation uses the recorded addresses,
 * so that best-fit ties (broken by address) fall as they fell. */
typedef guint64 (*VsSegAddrFn) (guint64 bytes, guint64 stream, gpointer data);

typedef struct {
  guint64 allocated, reserved;          /* now */
  guint64 peak_allocated, peak_reserved;
  guint64 segment_allocs, segment_frees, segment_alloc_bytes, segment_free_bytes;
  double fragmentation_peak;            /* 1 - (most allocated while reserved was at its peak) / peak */
  guint64 peak_reserved_t;              /* the caller's time of that moment */
  guint64 retries;                      /* mallocs that freed cached segments to fit */
  guint64 ooms;
  /* At the last OOM, as PyTorch's message gives them. */
  guint64 oom_requested, oom_largest_free, oom_reserved_free;
} VsAllocStats;

typedef struct _VsAlloc VsAlloc;

VsAlloc *alloc_new (const VsAllocConfig *cfg);
void alloc_free_model (VsAlloc *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsAlloc, alloc_free_model)

VsAllocKind alloc_kind (const VsAlloc *a);
void alloc_set_listener (VsAlloc *a, VsSegFn fn, gpointer data);
void alloc_set_addr_source (VsAlloc *a, VsSegAddrFn fn, gpointer data);
/* Changes the driver limit (--keep-going lifts it after an OOM). */
void alloc_set_limit (VsAlloc *a, guint64 limit);

/* The program allocates BYTES for ID (nonzero, not live) on STREAM at time
 * T. TRUE with *addr (may be NULL) set; FALSE: out of memory after the
 * model's retries (stats say why), nothing allocated. */
gboolean alloc_malloc (VsAlloc *a, guint64 id, guint64 bytes, guint64 stream, guint64 t,
                       guint64 *addr);
/* The program frees ID: its block is reusable at once on its stream. */
void alloc_free (VsAlloc *a, guint64 id, guint64 t);
/* Split form of alloc_free: the bytes stop counting as allocated now, the
 * block returns to the cache at alloc_free_complete. */
void alloc_free_request (VsAlloc *a, guint64 id, guint64 t);
void alloc_free_complete (VsAlloc *a, guint64 id, guint64 t);
/* torch.cuda.empty_cache(): every cached segment with no allocated block is
 * released (pages of expandable segments unmapped). */
void alloc_empty_cache (VsAlloc *a, guint64 t);
/* A device synchronisation: the async model trims its pool to the release
 * threshold; the others do nothing. */
void alloc_sync (VsAlloc *a, guint64 t);
gboolean alloc_is_live (const VsAlloc *a, guint64 id);
/* The block size ID holds (what allocated counts), 0 if not live. */
guint64 alloc_block_bytes (const VsAlloc *a, guint64 id);

/* Warm start (a snapshot window that begins on a cached state): a segment
 * that already exists, with every byte free, then blocks in it already
 * allocated to ids. A seeded id's later alloc_malloc returns its block and
 * changes nothing. Seeding emits no segment events. pytorch only; the
 * others count the bytes. */
void alloc_seed_segment (VsAlloc *a, guint64 addr, guint64 bytes, guint64 stream,
                         gboolean small, gboolean expandable);
/* FALSE when [addr, addr + bytes) is not free space of one seeded segment. */
gboolean alloc_seed_block (VsAlloc *a, guint64 id, guint64 addr, guint64 bytes,
                           guint64 requested);

/* Warm start of unknown layout (a profiler trace gives only the reserved
 * total): BYTES of cached segments that serve the window's new segments
 * before the driver is asked, on the assumption that a steady-state job's
 * cache holds the segments its next steps need. Counted as reserved; freed
 * whole by empty_cache and by a release-and-retry (one segment_free). */
void alloc_seed_cache (VsAlloc *a, guint64 bytes);

void alloc_stats (const VsAlloc *a, VsAllocStats *st);
/* Peaks and counters start again from now (a replay's setup that had to
 * shrink a seeded state). */
void alloc_reset_stats (VsAlloc *a);

/* PyTorch's rounding of a request (CUDACachingAllocator.cpp round_size). */
guint64 alloc_pytorch_round_size (const VsAllocConfig *cfg, guint64 bytes);
/* PyTorch's segment size for a rounded request (get_allocation_size). */
guint64 alloc_pytorch_segment_size (const VsAllocConfig *cfg, guint64 size);
