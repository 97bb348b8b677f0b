/* trace-buf.c — a whole trace in memory, for sweeps that replay one trace
 * many times. Events are kept in the binary encoding (about 10-20 bytes per
 * event) with the string table beside them; readers are independent cursors
 * over the shared, read-only bytes, so threads can read one buffer at once.
 * The trace is validated once, when loaded; its readers do not check again. */
#include "trace/trace-priv.h"
#include "trace/trace-infer.h"

#include <string.h>

/* The summary trace_skim reads instead of the events (buf_skim): for
 * each block of SUM_BLOCK events, the earliest t and the latest captured
 * end from that block to the trace's end; and every mark, in order. A
 * sampled sweep's runs each skimmed the rest of the trace (about 100
 * instructions an event, 85 % of a run on a 1,000-step trace); with the
 * summary a run reads at most SUM_BLOCK - 1 events after its stop. */
#define SUM_BLOCK 1024

typedef struct {
  guint64 index;      /* of the event in the trace */
  guint64 t;
  const char *name;   /* in the buffer's string chunk */
  guint32 tid;
} SumMark;

typedef struct {
  guint64 *first_t;   /* [block]: the earliest t from the block on */
  guint64 *last_end;  /* [block]: the latest captured end from the block on */
  SumMark *marks;
  gsize n_marks;
} Summary;

struct _VsTraceBuf {
  VsTraceHeader *header;
  Summary sum;
  char *path;
  guint8 *data;
  gsize len;
  GStringChunk *chunk;
  const char **strings;
  guint64 n_strings;
  guint64 count;
  guint8 kernels_named; /* VsTraceReader.kernels_named: 1 or 2 */
};

VsTraceBuf *
trace_buf_load (const char *path, GError **error)
{
  g_autoptr (VsTraceReader) r = trace_open (path, error);
  if (r == NULL)
    return NULL;
  VsBinEnc enc;
  bin_enc_init (&enc, FALSE);
  VsEvent ev;
  GError *err = NULL;
  guint64 kernels = 0;
  gboolean named = FALSE;
  GArray *first_t = g_array_new (FALSE, FALSE, sizeof (guint64));
  GArray *last_end = g_array_new (FALSE, FALSE, sizeof (guint64));
  GArray *marks = g_array_new (FALSE, FALSE, sizeof (SumMark));
  while (trace_next (r, &ev, &err))
    {
      if (enc.count % SUM_BLOCK == 0)
        {
          g_array_append_val (first_t, ev.t);
          guint64 zero = 0;
          g_array_append_val (last_end, zero);
        }
      guint64 *ft = &g_array_index (first_t, guint64, first_t->len - 1);
      guint64 *le = &g_array_index (last_end, guint64, last_end->len - 1);
      *ft = MIN (*ft, ev.t);
      *le = MAX (*le, event_captured_end (&ev));
      if (ev.op == VS_OP_MARK && ev.name != NULL)
        {
          SumMark m = { enc.count, ev.t, g_string_chunk_insert_const (enc.chunk, ev.name), ev.tid };
          g_array_append_val (marks, m);
        }
      bin_enc_event (&enc, &ev);
      if (ev.op == VS_OP_KERNEL && kernels++ < VS_INFER_DECIDE)
        named |= ev.n_reads + ev.n_writes + ev.n_touches > 0;
    }
  if (err != NULL)
    {
      g_propagate_error (error, err);
      bin_enc_clear (&enc);
      g_array_unref (first_t);
      g_array_unref (last_end);
      g_array_unref (marks);
      return NULL;
    }
  VsTraceBuf *b = g_new0 (VsTraceBuf, 1);
  /* Each block's figures made the suffix's: from the last block back. */
  for (guint i = first_t->len; i-- > 1;)
    {
      guint64 *ft = (guint64 *) first_t->data, *le = (guint64 *) last_end->data;
      ft[i - 1] = MIN (ft[i - 1], ft[i]);
      le[i - 1] = MAX (le[i - 1], le[i]);
    }
  b->sum.first_t = (guint64 *) g_array_free (first_t, FALSE);
  b->sum.last_end = (guint64 *) g_array_free (last_end, FALSE);
  b->sum.n_marks = marks->len;
  b->sum.marks = (SumMark *) g_array_free (marks, FALSE);
  b->header = trace_header_copy (trace_reader_header (r));
  b->path = g_strdup (path);
  b->len = enc.out.len;
  b->data = g_realloc (g_steal_pointer (&enc.out.data), MAX (b->len, 1));
  b->count = enc.count;
  b->kernels_named = named ? 1 : 2;
  b->chunk = g_steal_pointer (&enc.chunk);
  b->n_strings = enc.strings->len;
  b->strings = g_new (const char *, b->n_strings + 1);
  if (b->n_strings > 0)
    memcpy (b->strings, enc.strings->pdata, b->n_strings * sizeof (char *));
  bin_enc_clear (&enc);
  return b;
}

const VsTraceHeader *
trace_buf_header (const VsTraceBuf *b)
{
  return b->header;
}

guint64
trace_buf_count (const VsTraceBuf *b)
{
  return b->count;
}

void
trace_buf_free (VsTraceBuf *b)
{
  if (b == NULL)
    return;
  trace_header_free (b->header);
  g_free (b->path);
  g_free (b->data);
  g_string_chunk_free (b->chunk);
  g_free (b->strings);
  g_free (b->sum.first_t);
  g_free (b->sum.last_end);
  g_free (b->sum.marks);
  g_free (b);
}

typedef struct {
  VsTraceReader base;
  VsInBuf in;
  VsBinDec dec;
  const VsTraceBuf *buf;
} BufReader;

static gboolean
buf_next (VsTraceReader *base, VsEvent *ev, guint32 *present, GError **error)
{
  BufReader *r = (BufReader *) base;
  return bin_dec_event (&r->dec, ev, present, error) > 0;
}

static void
buf_close (VsTraceReader *base)
{
  BufReader *r = (BufReader *) base;
  bin_dec_clear (&r->dec);
  g_free (r);
}

/* trace_skim from the summary: the events up to the next block boundary
 * read and counted as trace_skim counts them, the blocks after from the
 * summary, the marks after from its list. The buffer was validated when
 * loaded: nothing is left to check. */
static gboolean
buf_skim (VsTraceReader *base, const char *mark, guint32 tid, VsTraceSkim *out, GError **error)
{
  BufReader *r = (BufReader *) base;
  const VsTraceBuf *b = r->buf;
  const Summary *sum = &b->sum;
  guint64 count0 = base->count;
  guint64 edge = MIN ((count0 + SUM_BLOCK - 1) / SUM_BLOCK * SUM_BLOCK, b->count);
  VsTraceSkim k = { b->count - count0, G_MAXUINT64, 0, 0, 0 };
  VsEvent ev;
  while (base->count < edge)
    {
      if (!trace_next (base, &ev, error))
        return FALSE;   /* not for a buffer: it holds b->count events */
      trace_skim_note (&k, &ev, mark, tid);
    }
  if (edge < b->count)
    {
      k.first_t = MIN (k.first_t, sum->first_t[edge / SUM_BLOCK]);
      k.last_end = MAX (k.last_end, sum->last_end[edge / SUM_BLOCK]);
      /* The marks from EDGE on: the first by bisection. */
      gsize lo = 0, hi = sum->n_marks;
      while (lo < hi)
        {
          gsize mid = lo + (hi - lo) / 2;
          if (sum->marks[mid].index < edge)
            lo = mid + 1;
          else
            hi = mid;
        }
      for (gsize i = lo; mark != NULL && i < sum->n_marks; i++)
        if (sum->marks[i].tid == tid && strcmp (sum->marks[i].name, mark) == 0)
          k.reaches++, k.last_reach_t = sum->marks[i].t;
    }
  /* At the end: nothing more to read. */
  r->in.p = r->in.end;
  base->count = b->count;
  base->done = TRUE;
  base->fast = NULL;
  *out = k;
  return TRUE;
}

static const VsTraceReaderClass buf_class = { buf_next, buf_close, buf_skim };

VsTraceReader *
trace_buf_reader (const VsTraceBuf *b)
{
  g_return_val_if_fail (b != NULL, NULL);
  BufReader *r = g_new0 (BufReader, 1);
  trace_reader_init_validated (&r->base, &buf_class, b->path);
  r->base.kernels_named = b->kernels_named;
  r->base.header = trace_header_copy (b->header);
  r->in.fd = -1;
  r->in.data = b->data;
  r->in.p = b->data;
  r->in.end = b->data + b->len;
  r->in.eof = TRUE;
  bin_dec_init (&r->dec, &r->base, &r->in);
  r->dec.strings = b->strings;
  r->dec.n_strings = b->n_strings;
  r->base.fast = &r->dec;
  r->buf = b;
  return &r->base;
}
