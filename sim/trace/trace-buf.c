/* trace-buf.c — a whole trace in memory, for sweeps that replay one trace
 * many times. Events are kept in the binary encoding (about 10-20 bytes per
 * event) with the string table beside them; readers are independent cursors
 * over the shared, read-only bytes, so threads can read one buffer at once.
 * The trace is validated once, when loaded; its readers do not check again. */
#include "trace/trace-priv.h"
#include "trace/trace-infer.h"

#include <string.h>

struct _VsTraceBuf {
  VsTraceHeader *header;
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
  while (trace_next (r, &ev, &err))
    {
      bin_enc_event (&enc, &ev);
      if (ev.op == VS_OP_KERNEL && kernels++ < VS_INFER_DECIDE)
        named |= ev.n_reads + ev.n_writes + ev.n_touches > 0;
    }
  if (err != NULL)
    {
      g_propagate_error (error, err);
      bin_enc_clear (&enc);
      return NULL;
    }
  VsTraceBuf *b = g_new0 (VsTraceBuf, 1);
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
  g_free (b);
}

typedef struct {
  VsTraceReader base;
  VsInBuf in;
  VsBinDec dec;
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

static const VsTraceReaderClass buf_class = { buf_next, buf_close };

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
  return &r->base;
}
