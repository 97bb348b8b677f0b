/* trace-priv.h — what the trace readers and writers (sim/trace*.c) share:
 * the reader base, the input buffer, the validation tables and the binary
 * codec. Not an interface for the rest of vramsim: use trace.h.
 *
 * Each section names the file that owns it. The files call one way, down
 * this list: trace-common.c (error domain, JSON strings); trace-inbuf.c,
 * trace-header.c; trace-reader.c (the reader base and validation); the
 * formats trace-bin.c and trace-jsonl.c, which fill a VsTraceReaderClass;
 * trace.c (trace_open, the writers); trace-buf.c, trace-infer.c. A format
 * never calls trace.c; trace-reader.c reaches a format only through its
 * class (tests/arch.sh checks the includes, docs/architecture.md). */
#pragma once

#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

/* ---- fields, for required-field checks and messages (trace-reader.c) ---- */

enum {
  VS_F_T, VS_F_OP, VS_F_TID, VS_F_HOST_NS, VS_F_ID, VS_F_BYTES, VS_F_KIND,
  VS_F_STREAM, VS_F_TAG, VS_F_DIR, VS_F_SRC, VS_F_DST, VS_F_ASYNC, VS_F_DUR,
  VS_F_NAME, VS_F_READS, VS_F_WRITES, VS_F_TOUCHES, VS_F_COMPUTE_NS,
  VS_F_SCOPE, VS_F_EVENT, VS_F_TO,
  /* the kernel's shape and collective (SPEC 3) */
  VS_F_FLOPS, VS_F_PRECISION, VS_F_GRID, VS_F_BLOCK, VS_F_REGS, VS_F_SMEM, VS_F_COLLECTIVE,
  VS_F_COUNT
};
G_STATIC_ASSERT (VS_F_COUNT <= 31); /* bit 31 is VS_F_VALIDATED */
#define VS_F_SHAPE (VS_FB (VS_F_FLOPS) | VS_FB (VS_F_PRECISION) | VS_FB (VS_F_GRID) | VS_FB (VS_F_BLOCK) \
                    | VS_FB (VS_F_REGS) | VS_FB (VS_F_SMEM))
#define VS_FB(f) (1u << (f))
#define VS_F_COMMON (VS_FB (VS_F_T) | VS_FB (VS_F_OP) | VS_FB (VS_F_TID) | VS_FB (VS_F_HOST_NS))
/* Set in *present by a reader that has validated the event itself (the
 * binary fast path): trace_next() then skips trace_validate(). */
#define VS_F_VALIDATED (1u << 31)

extern const char *const trace_field_names[VS_F_COUNT];
/* Fields each op uses besides the common ones, and those it requires. */
extern const guint32 trace_op_fields[VS_OP_COUNT];
extern const guint32 trace_op_required[VS_OP_COUNT];

/* Largest integer a trace may hold in any field (so that the binary format's
 * `value + 1` encoding and signed time deltas cannot overflow). */
#define VS_TRACE_INT_MAX ((guint64) G_MAXINT64)

#include "base/slotmap.h"

/* ---- buffered input (trace-inbuf.c) ---- */

typedef struct {
  int fd;               /* -1 for a memory source */
  gboolean close_fd;
  guint8 *own;          /* the buffer when reading a file (NULL for memory) */
  gsize cap;
  const guint8 *data;   /* start of the buffer */
  const guint8 *p, *end;/* unread bytes */
  gboolean eof;         /* nothing more will come after end */
  /* gzip input (inbuf_start_gzip): fd's bytes are inflated into the
   * buffer. The stream is on the heap: zlib keeps a pointer to it. */
  struct z_stream_s *z;
  guint8 *zraw;         /* compressed bytes read, not yet inflated */
  gsize zraw_cap;
  gboolean zraw_eof;
  guint64 dropped;      /* bytes of the stream before data (a gzip stream's: inflated) */
  /* A checksum of the bytes read (trace_reader_check_sum): those before
   * hash_from are in it; inbuf_fill adds those it drops. */
  struct VsXxh64_ *hash;
  const guint8 *hash_from;
} VsInBuf;

/* The stream offset of B's cursor. */
static inline guint64
inbuf_offset (const VsInBuf *b)
{
  return b->dropped + (guint64) (b->p - b->data);
}

/* Moves the unread bytes to the front and reads more; grows the buffer when
 * it is full and MIN_FREE more bytes are wanted. FALSE on a read error. */
gboolean inbuf_fill (VsInBuf *b, const char *path, GError **error);
void inbuf_close (VsInBuf *b);
/* From now on B's bytes (from the unread ones on) are a gzip stream
 * (RFC 1952; several members are read one after the other), read through
 * as they come: memory stays bounded. */
gboolean inbuf_start_gzip (VsInBuf *b, const char *path, GError **error);

/* ---- the reader base (trace-reader.c) ---- */

typedef struct {
  /* Decodes the next event: TRUE with *ev and *present (VS_FB bits of the
   * fields the record held) set; FALSE at the end (error unset) or on error. */
  gboolean (*next) (VsTraceReader *r, VsEvent *ev, guint32 *present, GError **error);
  void (*close) (VsTraceReader *r);
  /* trace_skim for a reader that can answer it without reading the
   * rest (an in-memory buffer's summary); NULL: trace_skim reads. */
  gboolean (*skim) (VsTraceReader *r, const char *mark, guint32 tid, struct _VsTraceSkim *out, GError **error);
} VsTraceReaderClass;

#define VS_SMALL_TIDS 64

struct _VsTraceReader {
  const VsTraceReaderClass *klass;
  char *path;
  VsTraceHeader *header;
  guint64 count;          /* events returned so far */
  guint64 line;           /* JSONL: line of the record being read; 0: name events by index */
  gboolean validate;      /* FALSE for in-memory buffers, which were validated when loaded */
  gboolean skim;          /* trace_skim has begun (trace-scan.c): validation leaves the live ids alone */
  gboolean failed;
  gboolean done;
  struct _VsTraceSum *sum; /* version 4 binary files: what the events read so far sum to (trace-sum.c) */
  struct _VsBinDec *fast; /* binary readers: bin_dec_fast() can take the next event; NULL after the end or an error */
  gsize max_live;         /* most allocations live at once (trace_max_live) */
  GHashTable *groups;     /* collective.group id -> TraceGroup (trace-reader.c); NULL until the first */
  guint32 job_ranks;      /* trace_reader_set_job: the job's size (0, 1: not sized) */
  guint32 job_resized;    /* 1 << VsCollRole of the roles the replay resizes */
  guint8 kernels_named;   /* known before reading (a buffer): 1 one of the first VS_INFER_DECIDE
                           * kernels names an allocation, 2 none does; 0 not known */
  VsSlotMap live;         /* live allocation ids (use the trace_live_* functions) */
  VsU64Map last_t;        /* tid + 1 -> last t, for tids from VS_SMALL_TIDS up */
  guint64 small_t[VS_SMALL_TIDS]; /* last t + 1 of the first tids (0 = none yet): no hashing */
};

void trace_reader_init (VsTraceReader *r, const VsTraceReaderClass *klass, const char *path);
/* For a reader of events validated before (an in-memory buffer):
 * validate is FALSE and the live-id map, which only validation reads, is
 * left empty (filling its 4096 slots was an eighth of a small trace's
 * sweep run, docs/performance.md). */
void trace_reader_init_validated (VsTraceReader *r, const VsTraceReaderClass *klass, const char *path);

/* Live allocation ids (values unused): ids reaching validation are below
 * 2^63, so VS_SLOT_EMPTY is none of them. */

static inline gboolean
trace_live_has (VsTraceReader *r, guint64 id)
{
  return slotmap_lookup (&r->live, id) != NULL;
}

/* Adds ID, which is not live. */
static inline void
trace_live_add (VsTraceReader *r, guint64 id)
{
  slotmap_add (&r->live, id, 0);
}

/* Removes ID; FALSE if it was not live. */
static inline gboolean
trace_live_remove (VsTraceReader *r, guint64 id)
{
  return slotmap_remove (&r->live, id);
}
/* Sets ERROR to "PATH:LINE: MSG" or "PATH: event N: MSG" for the record now being read. */
void trace_reader_fail (VsTraceReader *r, GError **error, int code, const char *fmt, ...) G_GNUC_PRINTF (4, 5);
/* trace_next() without the binary fast path (trace_next lives in
 * trace-bin.c, next to the fast path it inlines). */
gboolean trace_next_slow (VsTraceReader *r, VsEvent *ev, GError **error);
/* Checks EV against the rules of SPEC section 3 and the live state. */
gboolean trace_validate (VsTraceReader *r, const VsEvent *ev, guint32 present, GError **error);

/* ---- communicators (collective.group, docs/trace-format.md; trace-reader.c) ---- */

/* The largest group id: below 2^53, so that every JSON reader (jq,
 * JavaScript, a report's consumer) holds it exactly. */
#define VS_GROUP_ID_MAX ((G_GUINT64_CONSTANT (1) << 53) - 1)

/* At most this many distinct groups in one trace: the reader keeps a
 * table entry for each (memory bounded, as for live ids), and a job has
 * tens (one per parallel dimension and stage), not millions. */
#define VS_MAX_GROUPS 65536

/* Whether C (a collective with a group) agrees with the earlier uses of
 * its group id: the same size and role. A first use is remembered (at
 * most VS_MAX_GROUPS). FALSE without a message: trace_group_check words it. */
gboolean trace_group_agrees (VsTraceReader *r, const VsCollective *c);
/* trace_group_agrees, with the message naming this record and the first. */
gboolean trace_group_check (VsTraceReader *r, const VsCollective *c, GError **error);

/* Whether collective C fits the job the replay sized (trace_reader_set_job):
 * at most job_ranks, unless its role is resized (its size is then the
 * config's, which config-network.c checked against the job). */
static inline gboolean
trace_job_fits (const VsTraceReader *r, const VsCollective *c)
{
  return r->job_ranks <= 1 || c->ranks <= r->job_ranks || (r->job_resized & (1u << c->role)) != 0;
}
/* The message for a collective that does not fit. */
gboolean trace_job_check (VsTraceReader *r, const VsCollective *c, GError **error);

/* ---- the header (trace-header.c) ---- */

/* Parses and checks a header object; WHERE prefixes messages ("t.jsonl:1"). */
VsTraceHeader *trace_header_from_json (const cJSON *obj, const char *where, GError **error);
/* The same for an object parsed from TEXT (LEN bytes), which is checked
 * for what cJSON would hide: a key given twice, a \u0000 in a string. */
VsTraceHeader *trace_header_from_json_text (const cJSON *obj, const char *text, gsize len, const char *where,
                                            GError **error);
/* The header as one line of JSON in the canonical form (no newline). */
char *trace_header_to_line (const VsTraceHeader *h);

/* Format-specific openers (trace-jsonl.c, trace-bin.c), called by
 * trace_open: IN holds the first bytes already read. */
VsTraceReader *trace_jsonl_open (const char *path, VsInBuf *in, GError **error);
VsTraceReader *trace_bin_open (const char *path, VsInBuf *in, GError **error);

/* ---- JSON output ---- */

/* trace-common.c */
void trace_json_append_string (GString *s, const char *str);
/* The canonical JSONL event (trace-jsonl.c). */
void trace_json_append_event (GString *s, const VsEvent *ev);

/* ---- binary codec (trace-bin.c), shared with trace-buf.c ---- */

#define VS_BIN_MAGIC "VRAMTRC\x1a"
/* Version 2 added the empty_cache record (op 10) and the kernel record
 * with extensions (VS_BIN_KERNEL_X); version 3 the collective's group
 * (VS_BIN_HAS_GROUP); version 4 the end record's summary, checksum and
 * offset (trace-sum.c). An older file holds none of what came later and
 * reads as it always did. */
#define VS_BIN_VERSION 4
#define VS_BIN_VERSION_MIN 1
/* A kernel with a shape and/or a collective: the kernel body, then u8 has
 * (bit 0 shape, bit 1 collective, bit 2 the collective's group: version 3,
 * only with bit 1) and the parts it names, in that order. */
#define VS_BIN_KERNEL_X 0x14
#define VS_BIN_HAS_SHAPE 1
#define VS_BIN_HAS_COLL 2
#define VS_BIN_HAS_GROUP 4
#define VS_BIN_STRING_DEF 0xF0
#define VS_BIN_END 0xFE
#define VS_BIN_MAX_HEADER (1u << 20)
#define VS_BIN_MAX_STRING (1u << 20)

typedef struct {
  guint8 *data;
  gsize len, cap;
} VsOutBuf;

typedef struct {
  VsOutBuf out;
  GHashTable *sids;       /* string -> sid + 1 (keys in chunk) */
  GStringChunk *chunk;
  GPtrArray *strings;     /* sid -> string (in chunk) */
  gboolean emit_defs;     /* write string_def records (FALSE for in-memory buffers) */
  guint64 prev_t;
  guint64 count;
} VsBinEnc;

void bin_enc_init (VsBinEnc *e, gboolean emit_defs);
void bin_put_uv (VsOutBuf *o, guint64 v);
void bin_put_bytes (VsOutBuf *o, const void *data, gsize len);
void bin_enc_clear (VsBinEnc *e);
void bin_enc_event (VsBinEnc *e, const VsEvent *ev);

typedef struct _VsBinDec {
  VsTraceReader *r;       /* for messages */
  VsInBuf *in;
  const char *const *strings; /* sid -> string */
  guint64 n_strings;
  GPtrArray *own_strings; /* file readers: the table they build; NULL for buffers */
  GStringChunk *chunk;
  guint64 prev_t;
  guint64 *ids;           /* reads, writes, touches of the current kernel */
  gsize ids_cap;
  VsKernelShape shape;    /* the current kernel's extensions */
  VsCollective coll;
  guint version;          /* the file's format version (VS_BIN_VERSION for buffers) */
  gboolean summing;       /* a version 4 file's reader: the span of the events decoded, */
  guint64 sum_first_t;    /* their earliest t and latest captured end, for the end */
  guint64 sum_last_end;   /* record's summary (dec_sum_span) */
  gboolean careful_only;  /* tests: never take the fast path */
} VsBinDec;

void bin_dec_init (VsBinDec *d, VsTraceReader *r, VsInBuf *in);

/* ---- version 4's end record: the summary (trace-sum.c) ---- */

/* The marks of one name on one thread: key and value of a summary's table. */
typedef struct {
  guint64 count;
  guint64 last_t;         /* the t of the last of them */
  guint32 tid;
  char name[];
} VsMarkSum;

/* What the events sum to, as version 4's end record gives it: their
 * earliest t, their latest captured end and the marks per thread and
 * name. The writer fills all of it as it writes (trace_sum_note); a
 * file's reader only the marks (trace_reader_note_mark), its decoder
 * summing the span (VsBinDec), to check the end record against. */
typedef struct _VsTraceSum {
  guint64 first_t;        /* G_MAXUINT64: no event */
  guint64 last_end;       /* 0: no event */
  GHashTable *marks;      /* VsMarkSum, key and value */
} VsTraceSum;

void trace_sum_init (VsTraceSum *s);
void trace_sum_clear (VsTraceSum *s);
/* One more mark NAME on thread TID at T (T not before the thread's last). */
void trace_sum_mark (VsTraceSum *s, guint32 tid, const char *name, guint64 t);
/* The marks of NAME on TID (NULL: none). */
const VsMarkSum *trace_sum_lookup (const VsTraceSum *s, guint32 tid, const char *name);
/* The marks (VsMarkSum) sorted by tid, then name bytewise, as the end
 * record lists them; *N of them. Free the array (not the marks). */
gpointer *trace_sum_sorted (const VsTraceSum *s, guint *n);

static inline void
trace_sum_note (VsTraceSum *s, const VsEvent *ev)
{
  s->first_t = MIN (s->first_t, ev->t);
  s->last_end = MAX (s->last_end, event_captured_end (ev));
  if (G_UNLIKELY (ev->op == VS_OP_MARK))
    trace_sum_mark (s, ev->tid, ev->name, ev->t);
}

/* EV, returned by R, counted into R's summary if it is a mark and R
 * reads a version 4 file (trace_next's fast path, trace_next_slow). */
static inline void
trace_reader_note_mark (VsTraceReader *r, const VsEvent *ev)
{
  if (G_UNLIKELY (ev->op == VS_OP_MARK) && r->sum != NULL)
    trace_sum_mark (r->sum, ev->tid, ev->name, ev->t);
}

/* A version 4 end record as read, after its 0xFE. */
typedef struct {
  guint64 count;
  guint64 first_t, last_end; /* first_t G_MAXUINT64: none */
  GPtrArray *marks;       /* VsMarkSum, owned, in the record's order (checked ascending) */
  guint64 checksum;
  guint64 check_at;       /* the stream offset of the checksum's first byte */
  guint64 end_offset;
} VsBinEnd;

/* Reads the rest of an end record (the 0xFE read) with D: the count, and
 * for version 4 the summary, the checksum and the offset; then "VEND".
 * E->marks is set (free it with bin_end_clear) whatever the outcome. */
gboolean bin_end_read (VsBinDec *d, VsBinEnd *e, GError **error);
void bin_end_clear (VsBinEnd *e);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsBinEnd, bin_end_clear)
/* trace_skim from a version 4 file's summary (trace-bin.c): 1 answered,
 * 0 not this reader's (not a version 4 binary file, compressed, not a
 * regular file, or an end record the careful read must word), -1 bad
 * input (ERROR set). */
int bin_skim_summary (VsTraceReader *r, const char *mark, guint32 tid, struct _VsTraceSkim *out, GError **error);

/* The fast paths (trace-bin.c's decoder, trace-scan.c's skim) start a
 * record only with VS_BIN_FAST_MARGIN bytes buffered, and take id lists
 * of at most VS_BIN_FAST_LIST ids: no bounds check per byte. */
#define VS_BIN_FAST_MARGIN 1280
#define VS_BIN_FAST_LIST 32

/* A varint of three to nine bytes at *PP (the first two have the
 * continuation bit): unrolled, each byte added in place with its
 * continuation bit taken out afterwards. FALSE for ten bytes or more
 * (values from 2^63: the careful decoder judges them). */
static inline __attribute__ ((always_inline)) gboolean
bin_uv_long (const guint8 **pp, guint64 *out)
{
  const guint8 *p = *pp;
  guint64 v = p[0] + ((guint64) p[1] << 7) - 0x80 - (0x80 << 7);
  guint64 b;
#define STEP(i)                                                                                                  \
  b = p[i];                                                                                                      \
  v += b << (7 * (i));                                                                                           \
  if (b < 0x80)                                                                                                  \
    {                                                                                                            \
      *pp = p + (i) + 1;                                                                                         \
      *out = v;                                                                                                  \
      return TRUE;                                                                                               \
    }                                                                                                            \
  v -= (guint64) 0x80 << (7 * (i));
  STEP (2) STEP (3) STEP (4) STEP (5) STEP (6) STEP (7) STEP (8)
#undef STEP
  return FALSE;
}

/* EV counted into K as trace_skim counts an event (K's events aside):
 * its captured span, and a reach when it is MARK on thread TID (the
 * careful path of trace-scan.c and an in-memory buffer's, trace-buf.c). */
static inline void
trace_skim_note (VsTraceSkim *k, const VsEvent *ev, const char *mark, guint32 tid)
{
  k->first_t = MIN (k->first_t, ev->t);
  k->last_end = MAX (k->last_end, event_captured_end (ev));
  if (ev->op == VS_OP_MARK && ev->tid == tid && mark != NULL && ev->name != NULL && strcmp (ev->name, mark) == 0)
    {
      k->reaches++;
      k->last_reach_t = ev->t;
    }
}

/* Whether a grid or block (X, Y, Z) breaks the rule that its three are
 * all absent (0) or all positive: some zero, not all. trace_validate,
 * the fast decoder and the skim judge it alike. */
static inline gboolean
trace_dim3_partly_zero (guint64 x, guint64 y, guint64 z)
{
  return (x == 0 || y == 0 || z == 0) && (x | y | z) != 0;
}

/* The fast paths' check that time runs forward within host thread TID
 * (as trace_validate's, which words the error): FALSE if T is earlier
 * than the thread's last time; else T becomes it. small_t holds the
 * last t + 1, 0 before the first event: T is earlier than the last
 * exactly when T + 1 is below the slot. */
static inline __attribute__ ((always_inline)) gboolean
bin_thread_time (VsTraceReader *r, guint64 tid, guint64 t)
{
  if (G_LIKELY (tid < VS_SMALL_TIDS))
    {
      guint64 *slot = &r->small_t[tid];
      if (G_UNLIKELY (t + 1 < *slot))
        return FALSE;
      *slot = t + 1;
      return TRUE;
    }
  guint64 *last = u64map_lookup (&r->last_t, tid + 1);
  if (G_UNLIKELY (last != NULL && t < *last))
    return FALSE;
  if (last != NULL)
    *last = t;
  else
    u64map_insert (&r->last_t, tid + 1, t);
  return TRUE;
}

/* The fast path's extensions of a VS_BIN_KERNEL_X record at P (past the
 * kernel body), into D's shape and collective and EV's pointers to them,
 * checked as trace_validate would: the end of the record, or NULL (give
 * up: the careful decoder words what is wrong). */
const guint8 *bin_fast_kernel_ext (VsBinDec *d, VsEvent *e, const guint8 *p, gboolean validate);
/* 1 = an event, 0 = the end record (file) or the end of the data (memory), -1 = error. */
int bin_dec_event (VsBinDec *d, VsEvent *ev, guint32 *present, GError **error);
void bin_dec_clear (VsBinDec *d);
