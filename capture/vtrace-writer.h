/* vtrace-writer.h — a small, dependency-free writer of the binary trace
 * format (docs/trace-format.md, version 4) for the capture shim.
 *
 * The shim is injected into arbitrary programs, so this writer uses only
 * libc: no GLib, no stdio buffering shared with the program. Output goes to
 * a temporary file beside PATH that vtw_finish() renames into place, so an
 * interrupted capture never leaves a partial file under PATH. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Marks an optional integer as absent (stream of an alloc/free, dur). */
#define VTW_NONE UINT64_MAX

enum { VTW_ALLOC, VTW_FREE, VTW_COPY, VTW_MEMSET, VTW_KERNEL, VTW_SYNC,
       VTW_EVENT_RECORD, VTW_STREAM_WAIT, VTW_PREFETCH, VTW_MARK, VTW_OP_COUNT };

/* One event as the shim keeps it until it is written. Which fields matter
 * depends on op (SPEC section 3):
 *   alloc: id, bytes, sub = kind (0 device, 1 managed, 2 pinned), stream (opt),
 *          value = tag string id + 1 (0: untagged)
 *   free: id, stream (opt)
 *   copy: sub = dir (0 h2d, 1 d2h, 2 d2d, 3 p2p), bytes, src, dst, stream, async, dur (opt)
 *   memset: dst, bytes, stream, async, dur (opt)
 *   kernel: name_sid, stream, dur (absent is written as 0), touches; with
 *           has_shape, grid, block, regs, smem; with has_coll, the
 *           collective and, when coll_group is not 0, its group (either
 *           makes a kernel record with extensions, docs/trace-format.md)
 *   sync: sub = scope (0 device, 1 stream, 2 event), value
 *   event_record: value = event, stream; stream_wait: stream, value = event
 *   prefetch: id, bytes, sub = to (0 device, 1 host), stream
 *   mark: name_sid */
typedef struct {
  uint64_t t, host_ns;
  uint64_t id, bytes, src, dst, stream, value, dur;
  uint64_t *touches;      /* owned by the shim's buffer (malloc) */
  uint64_t corr;          /* CUPTI correlation id, 0 if none */
  /* Not written to the trace; the address sidecar (recorder.c) takes them:
   * alloc: base; copy: dst pointer, addr2 src; memset: dst; prefetch: the
   * pointer; kernel: n_ptrs parameter words that hit allocations, stored
   * after the touches in the same array. */
  uint64_t addr, addr2;
  uint32_t n_ptrs;
  uint32_t tid, name_sid, n_touches;
  uint8_t op, sub, async, pending;
  uint8_t managed;        /* kernel: touches managed memory (not written) */
  uint8_t has_shape;      /* kernel: grid and block are known (regs, smem 0: absent) */
  uint8_t has_coll;       /* kernel: coll_kind, coll_bytes, coll_ranks (an NCCL call's kernel) */
  uint8_t coll_kind;      /* docs/trace-format.md's code: 0 all_reduce ... 7 recv */
  uint32_t grid[3], block[3], regs, smem;
  uint32_t coll_ranks;
  uint64_t coll_bytes;
  uint64_t coll_group;    /* its communicator's id (collective.group.id), 0: not known */
} VtEvent;

typedef struct VtWriter VtWriter;

/* Creates PATH's temporary file and writes the magic, version and header.
 * Returns NULL with errno set on failure. */
VtWriter *vtw_open (const char *path, const char *header_json);
/* Defines string SID (sids must be defined in order 0, 1, 2, ...). */
int vtw_string (VtWriter *w, uint64_t sid, const char *s);
int vtw_event (VtWriter *w, const VtEvent *ev);
/* Writes the end record, closes and renames into place; frees W. Returns
 * 0, or -1 with errno set (the temporary file is then removed). */
int vtw_finish (VtWriter *w);
/* Closes without renaming or removing (a forked child dropping the parent's
 * writer); frees W. Accepts NULL. */
void vtw_drop (VtWriter *w);
/* Closes and removes the temporary file; frees W. Accepts NULL. */
void vtw_abort (VtWriter *w);
uint64_t vtw_count (const VtWriter *w);
