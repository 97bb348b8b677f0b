/* trace.h — reading and writing traces (SPEC section 3, docs/trace-format.md).
 *
 * One reader interface over every encoding: JSON Lines (.jsonl), the binary
 * format (.vtrace) and an in-memory buffer (for sweeps, which parse a trace
 * once and replay it many times). Readers stream: memory grows with live
 * state (live allocation ids, interned strings), never with trace length.
 *
 * Every reader validates as it reads (required fields, unknown ops, negative
 * sizes, references to ids that are not live, non-monotonic t within a
 * thread) and reports bad input with a GError in VS_TRACE_ERROR whose
 * message names the file and the line ("t.jsonl:12: ...") or, for binary
 * files, the event ("t.vtrace: event 12: ..."). */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#include "trace/event.h"

#define VS_TRACE_ERROR (trace_error_quark ())
GQuark trace_error_quark (void);
typedef enum { VS_TRACE_ERROR_IO, VS_TRACE_ERROR_PARSE, VS_TRACE_ERROR_INVALID } VsTraceErrorCode;

typedef enum { VS_FORMAT_AUTO, VS_FORMAT_JSONL, VS_FORMAT_BINARY } VsTraceFormat;

/* What the trace's allocations are (header field `allocations`, SPEC 3):
 * a framework's tensors (profilers, memory snapshots, generators) or the
 * driver calls a capture saw. The default allocator model follows it. */
typedef enum {
  VS_ALLOCS_UNSPECIFIED, /* the header does not say */
  VS_ALLOCS_TENSOR,      /* "tensor" */
  VS_ALLOCS_DRIVER,      /* "driver" */
  VS_ALLOCS_COUNT
} VsAllocations;

/* The header: the first JSONL line, or the binary file's header JSON. */
typedef struct {
  guint version;        /* vramsim_trace; 1 */
  char *time_unit;      /* "ns" (the only unit supported) */
  char *device;         /* capture.device, or NULL */
  char *config;         /* capture.config (a preset name), or NULL */
  char *tool;           /* capture.tool, or NULL */
  cJSON *extra;         /* the whole header object as read, for fields not above; may be NULL */
  VsAllocations allocations; /* `allocations` */
} VsTraceHeader;

/* "tensor", "driver"; NULL for VS_ALLOCS_UNSPECIFIED. */
const char *trace_allocations_name (VsAllocations a);
VsAllocations trace_header_allocations (const VsTraceHeader *h);
void trace_header_set_allocations (VsTraceHeader *h, VsAllocations a);
/* (transfer none) The header's `allocator_settings` object (the settings
 * the capture's allocator ran with, e.g. PYTORCH_CUDA_ALLOC_CONF parsed by
 * an importer), or NULL when absent. */
const cJSON *trace_header_allocator_settings (const VsTraceHeader *h);
/* Sets (SETTINGS: transfer full, an object) or removes (NULL) it. */
void trace_header_set_allocator_settings (VsTraceHeader *h, cJSON *settings);

VsTraceHeader *trace_header_new (void);
VsTraceHeader *trace_header_copy (const VsTraceHeader *h);
void trace_header_free (VsTraceHeader *h);
/* (transfer full) The header as the JSON object a file stores. */
cJSON *trace_header_to_json (const VsTraceHeader *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTraceHeader, trace_header_free)

/* ---- reading ---- */

typedef struct _VsTraceReader VsTraceReader;

/* Opens PATH, detecting the encoding from its first bytes ("-" = stdin,
 * JSONL only). Reads and checks the header. */
VsTraceReader *trace_open (const char *path, GError **error);
/* (transfer none) */
const VsTraceHeader *trace_reader_header (VsTraceReader *r);
const char *trace_reader_path (VsTraceReader *r);
/* The job the events will be replayed in (SPEC 5.8): from now on a
 * collective of more than RANKS ranks is bad input naming its line
 * ("field 'collective.ranks': group 3 has 16 ranks, more than the job's
 * 8"), checked by every reader, in-memory ones included. RANKS 0 or 1:
 * not sized, nothing is checked. RESIZED_ROLES (1 << VsCollRole) are the
 * roles whose groups the replay resizes: their size is the config's, not
 * the trace's, and the config is checked against the job instead. */
void trace_reader_set_job (VsTraceReader *r, guint32 ranks, guint32 resized_roles);
/* Whether one of the trace's first 64 kernels (VS_INFER_DECIDE,
 * trace-infer.h) names an allocation, when the reader knows it before
 * reading (a reader over a VsTraceBuf): 1 yes, 0 no; -1 for a file
 * reader. The touch inference's mode auto decides on it. */
int trace_reader_kernels_named (VsTraceReader *r);
/* Reads the next event into *ev. Returns TRUE with *ev filled; FALSE at the
 * end of the trace (error unset) or on bad input (error set). Pointers in
 * *ev stay valid until the next call. */
gboolean trace_next (VsTraceReader *r, VsEvent *ev, GError **error);
/* Events read so far. */
guint64 trace_reader_count (VsTraceReader *r);

/* What trace_skim found in the events it read. */
typedef struct _VsTraceSkim {
  guint64 events;         /* events read */
  guint64 first_t;        /* their earliest t (G_MAXUINT64: none) */
  guint64 last_end;       /* their latest end (0: none): of a host call (t + host_ns), or of
                           * the GPU work of a kernel, copy or memset (t + dur), as the replay's
                           * captured time counts it */
  guint64 reaches;        /* marks named MARK on thread TID */
  guint64 last_reach_t;   /* the t of the last of them (0: none) */
} VsTraceSkim;

/* Reads the rest of R's trace (to its end) for what a replay that has
 * stopped replaying still needs (--sample-steps): the events counted,
 * their captured span and the reaches of one mark. An in-memory
 * buffer's reader (trace_buf_reader) answers from the buffer's summary,
 * made when it was loaded and validated, reading at most the events up
 * to the next block of 1024. A version 4 binary file (regular, not
 * gzipped) answers from its end record's summary, after checking the
 * checksum of the whole file; its FIRST_T and LAST_END are then the
 * whole trace's (with the events read before, the same min and max).
 * Other binary files' records are framed, not decoded:
 * their fields are skipped but for the times, the string ids, the enum
 * bytes and a kernel's extensions, and every rule is checked but the
 * allocation ids' (alloc of a live id, a reference to an id that is not
 * live, the live count's limit: docs/trace-format.md, "Skimming"); the
 * end record's count, truncation and bytes after the end still fail.
 * Other readers (JSONL, the touch inference's) read on with trace_next.
 * FALSE on bad input (ERROR set); R reads nothing more afterwards. */
gboolean trace_skim (VsTraceReader *r, const char *mark, guint32 tid, VsTraceSkim *out, GError **error);
/* A version 4 binary file's reader checks the checksum of its records
 * too, at the end record (vramsim info; a replay does not hash what it
 * decodes). Call before the first trace_next; other readers ignore it. */
void trace_reader_check_sum (VsTraceReader *r);
/* The binary format version of R's file (1 to 4), or 0 for any other
 * reader (JSONL, an in-memory buffer, the touch inference's). */
guint trace_reader_binary_version (const VsTraceReader *r);
void trace_close (VsTraceReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTraceReader, trace_close)

/* ---- in-memory traces (read once, replay many times, shared read-only) ---- */

typedef struct _VsTraceBuf VsTraceBuf;

/* Reads the whole trace at PATH into memory (compactly) and validates it. */
VsTraceBuf *trace_buf_load (const char *path, GError **error);
/* (transfer none) */
const VsTraceHeader *trace_buf_header (const VsTraceBuf *b);
guint64 trace_buf_count (const VsTraceBuf *b);
/* A new reader over B; several may read one buffer at once from different
 * threads. B must outlive it. */
VsTraceReader *trace_buf_reader (const VsTraceBuf *b);
void trace_buf_free (VsTraceBuf *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTraceBuf, trace_buf_free)

/* ---- writing ---- */

typedef struct _VsTraceWriter VsTraceWriter;

/* Creates a writer for PATH ("-" = stdout, JSONL only). VS_FORMAT_AUTO picks
 * binary for a name ending in .vtrace, JSONL otherwise. Output goes to a
 * temporary file beside PATH that trace_writer_finish() renames, so a failed
 * or interrupted run never leaves a partial file under PATH. */
VsTraceWriter *trace_writer_new (const char *path, VsTraceFormat format,
                                 const VsTraceHeader *header, GError **error);
/* Writes one event. The writer does not validate beyond what its encoding
 * needs; the readers check. */
gboolean trace_writer_write (VsTraceWriter *w, const VsEvent *ev, GError **error);
/* Flushes, closes and renames into place. Frees W whatever the outcome. */
gboolean trace_writer_finish (VsTraceWriter *w, GError **error);
/* Removes the temporary file and frees W. Accepts NULL. */
void trace_writer_abort (VsTraceWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTraceWriter, trace_writer_abort)

/* The offset of the first escaped NUL ("\u0000") in the JSON TEXT, or
 * G_MAXSIZE: cJSON cuts strings there without a word, so a reader that
 * parses with cJSON refuses such text first. */
gsize trace_json_nul_escape (const char *text, gsize len);

/* Formats one event as its JSONL line (no newline), for tests and tools. */
char *trace_event_to_json_line (const VsEvent *ev);
