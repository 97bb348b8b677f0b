/* trace-bin.c — the binary encoding (.vtrace, docs/trace-format.md): the
 * event codec (shared with the in-memory buffers of trace-buf.c), the file
 * reader, and trace_next() with the binary fast path inlined.
 *
 * Speed: two decoders. The fast path (dec_event_fast) decodes and validates
 * a record in one pass with no bounds check per byte (it starts only with
 * 1 KiB buffered) and no string or error plumbing; it gives up on anything
 * unusual without changing state, and the careful decoder (dec_event_slow,
 * then trace_validate) reads the record again and words the message. On the
 * plain benchmark trace this took trace_next from about 700 to about 250
 * instructions per event (callgrind; docs/performance.md). No allocation
 * per event: id lists go to one reused array, strings live in the table. */
#include "trace/trace-priv.h"
#include "base/xxh64.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOT static inline __attribute__ ((always_inline))

/* ---- encoder ---- */

static inline void
put_reserve (VsOutBuf *o, gsize n)
{
  if (G_UNLIKELY (o->len + n > o->cap))
    {
      o->cap = MAX (o->cap * 2, o->len + n + 4096);
      o->data = g_realloc (o->data, o->cap);
    }
}

static inline void
put_u8 (VsOutBuf *o, guint8 b)
{
  put_reserve (o, 1);
  o->data[o->len++] = b;
}

static inline void
put_uv (VsOutBuf *o, guint64 v)
{
  put_reserve (o, 10);
  guint8 *p = o->data + o->len;
  while (v >= 0x80)
    {
      *p++ = (guint8) (v | 0x80);
      v >>= 7;
    }
  *p++ = (guint8) v;
  o->len = (gsize) (p - o->data);
}

void
bin_put_uv (VsOutBuf *o, guint64 v)
{
  put_uv (o, v);
}

void
bin_put_bytes (VsOutBuf *o, const void *data, gsize len)
{
  put_reserve (o, len);
  memcpy (o->data + o->len, data, len);
  o->len += len;
}

static inline void
put_sv (VsOutBuf *o, gint64 v)
{
  put_uv (o, ((guint64) v << 1) ^ (guint64) (v >> 63));
}

static inline void
put_opt (VsOutBuf *o, guint64 v)
{
  put_uv (o, v == VS_NONE ? 0 : v + 1);
}

void
bin_enc_init (VsBinEnc *e, gboolean emit_defs)
{
  memset (e, 0, sizeof *e);
  e->sids = g_hash_table_new (g_str_hash, g_str_equal);
  e->chunk = g_string_chunk_new (4096);
  e->strings = g_ptr_array_new ();
  e->emit_defs = emit_defs;
}

void
bin_enc_clear (VsBinEnc *e)
{
  g_clear_pointer (&e->out.data, g_free);
  g_clear_pointer (&e->sids, g_hash_table_destroy);
  g_clear_pointer (&e->chunk, g_string_chunk_free);
  g_clear_pointer (&e->strings, g_ptr_array_unref);
}

static guint64
enc_sid (VsBinEnc *e, const char *s)
{
  gpointer v = g_hash_table_lookup (e->sids, s);
  if (v != NULL)
    return GPOINTER_TO_SIZE (v) - 1;
  guint64 sid = e->strings->len;
  char *k = g_string_chunk_insert (e->chunk, s);
  g_ptr_array_add (e->strings, k);
  g_hash_table_insert (e->sids, k, GSIZE_TO_POINTER ((gsize) sid + 1));
  if (e->emit_defs)
    {
      gsize n = strlen (s);
      put_u8 (&e->out, VS_BIN_STRING_DEF);
      put_uv (&e->out, sid);
      put_uv (&e->out, n);
      put_reserve (&e->out, n);
      memcpy (e->out.data + e->out.len, s, n);
      e->out.len += n;
    }
  return sid;
}

static void
put_ids (VsOutBuf *o, const guint64 *ids, guint32 n)
{
  put_uv (o, n);
  for (guint32 i = 0; i < n; i++)
    put_uv (o, ids[i]);
}

void
bin_enc_event (VsBinEnc *e, const VsEvent *ev)
{
  /* Strings are defined before the record that uses them. */
  guint64 name_sid = 0, tag_sid = 0;
  if ((ev->op == VS_OP_KERNEL || ev->op == VS_OP_MARK))
    name_sid = enc_sid (e, ev->name ? ev->name : "");
  if (ev->op == VS_OP_ALLOC && ev->tag)
    tag_sid = enc_sid (e, ev->tag) + 1;
  VsOutBuf *o = &e->out;
  gboolean ext = ev->op == VS_OP_KERNEL && (ev->shape != NULL || ev->collective != NULL);
  put_u8 (o, ext ? VS_BIN_KERNEL_X : ev->op);
  put_sv (o, (gint64) (ev->t - e->prev_t));
  e->prev_t = ev->t;
  put_uv (o, ev->tid);
  put_uv (o, ev->host_ns);
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      put_uv (o, ev->id);
      put_uv (o, ev->bytes);
      put_u8 (o, ev->kind);
      put_uv (o, ev->has_stream ? ev->stream + 1 : 0);
      put_uv (o, tag_sid);
      break;
    case VS_OP_FREE:
      put_uv (o, ev->id);
      put_uv (o, ev->has_stream ? ev->stream + 1 : 0);
      break;
    case VS_OP_COPY:
      put_u8 (o, ev->dir);
      put_uv (o, ev->bytes);
      put_uv (o, ev->src);
      put_uv (o, ev->dst);
      put_uv (o, ev->stream);
      put_u8 (o, ev->async ? 1 : 0);
      put_opt (o, ev->dur);
      break;
    case VS_OP_MEMSET:
      put_uv (o, ev->dst);
      put_uv (o, ev->bytes);
      put_uv (o, ev->stream);
      put_u8 (o, ev->async ? 1 : 0);
      put_opt (o, ev->dur);
      break;
    case VS_OP_KERNEL:
      put_uv (o, name_sid);
      put_uv (o, ev->stream);
      put_uv (o, ev->dur == VS_NONE ? 0 : ev->dur);
      put_opt (o, ev->bytes);
      put_opt (o, ev->compute_ns);
      put_ids (o, ev->reads, ev->n_reads);
      put_ids (o, ev->writes, ev->n_writes);
      put_ids (o, ev->touches, ev->n_touches);
      if (ext)
        {
          gboolean group = ev->collective != NULL && ev->collective->group != 0;
          put_u8 (o, (ev->shape ? VS_BIN_HAS_SHAPE : 0) | (ev->collective ? VS_BIN_HAS_COLL : 0)
                       | (group ? VS_BIN_HAS_GROUP : 0));
          if (ev->shape)
            {
              const VsKernelShape *k = ev->shape;
              put_opt (o, k->flops);
              put_u8 (o, k->precision);
              for (int i = 0; i < 3; i++)
                put_uv (o, k->grid[i]);
              for (int i = 0; i < 3; i++)
                put_uv (o, k->block[i]);
              put_uv (o, k->regs);
              put_uv (o, k->smem);
            }
          if (ev->collective)
            {
              put_u8 (o, ev->collective->kind);
              put_uv (o, ev->collective->bytes);
              put_uv (o, ev->collective->ranks);
              if (group)
                {
                  put_uv (o, ev->collective->group);
                  put_u8 (o, ev->collective->role);
                }
            }
        }
      break;
    case VS_OP_SYNC:
      put_u8 (o, ev->scope);
      put_uv (o, ev->scope == VS_SYNC_STREAM ? ev->stream : ev->scope == VS_SYNC_EVENT ? ev->event : 0);
      break;
    case VS_OP_EVENT_RECORD:
      put_uv (o, ev->event);
      put_uv (o, ev->stream);
      break;
    case VS_OP_STREAM_WAIT:
      put_uv (o, ev->stream);
      put_uv (o, ev->event);
      break;
    case VS_OP_PREFETCH:
      put_uv (o, ev->id);
      put_uv (o, ev->bytes);
      put_u8 (o, ev->to);
      put_uv (o, ev->stream);
      break;
    case VS_OP_MARK:
      put_uv (o, name_sid);
      break;
    case VS_OP_EMPTY_CACHE:
      put_uv (o, ev->has_stream ? ev->stream + 1 : 0);
      break;
    default:
      g_return_if_reached ();
    }
  e->count++;
}

/* ---- decoder ---- */

#define DFAIL(...) (trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE, __VA_ARGS__), FALSE)

static gboolean
need (VsBinDec *d, gsize n, GError **error)
{
  while ((gsize) (d->in->end - d->in->p) < n)
    {
      if (d->in->eof)
        return DFAIL ("truncated: the file ends inside a record");
      if (!inbuf_fill (d->in, d->r->path, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
get_uv_slow (VsBinDec *d, guint64 *out, GError **error)
{
  guint64 v = 0;
  for (int i = 0; i < 10; i++)
    {
      if (!need (d, 1, error))
        return FALSE;
      guint64 b = *d->in->p++;
      if (i == 9 && b > 1)
        return DFAIL (b & 0x80 ? "varint longer than 10 bytes" : "varint overflows 64 bits");
      v |= (b & 0x7f) << (7 * i);
      if (b < 0x80)
        {
          *out = v;
          return TRUE;
        }
    }
  g_assert_not_reached ();
}

HOT gboolean
get_uv (VsBinDec *d, guint64 *out, GError **error)
{
  const guint8 *p = d->in->p;
  if (G_LIKELY (d->in->end - p >= 10))
    {
      guint64 b = p[0];
      if (G_LIKELY (b < 0x80))
        {
          d->in->p = p + 1;
          *out = b;
          return TRUE;
        }
      guint64 v = b & 0x7f;
      for (int i = 1; i < 10; i++)
        {
          b = p[i];
          if (i == 9 && b > 1)
            return DFAIL (b & 0x80 ? "varint longer than 10 bytes" : "varint overflows 64 bits");
          v |= (b & 0x7f) << (7 * i);
          if (b < 0x80)
            {
              d->in->p = p + i + 1;
              *out = v;
              return TRUE;
            }
        }
      g_assert_not_reached ();
    }
  return get_uv_slow (d, out, error);
}

HOT gboolean
get_u8 (VsBinDec *d, guint8 *out, GError **error)
{
  if (G_UNLIKELY (d->in->p >= d->in->end) && !need (d, 1, error))
    return FALSE;
  *out = *d->in->p++;
  return TRUE;
}

/* An integer field of a trace: at most VS_TRACE_INT_MAX. */
HOT gboolean
get_int (VsBinDec *d, const char *field, guint64 *out, GError **error)
{
  if (!get_uv (d, out, error))
    return FALSE;
  if (G_UNLIKELY (*out > VS_TRACE_INT_MAX))
    return DFAIL ("field '%s' is out of range (%" G_GUINT64_FORMAT ")", field, *out);
  return TRUE;
}

/* An `opt` field: value + 1, 0 = absent (VS_NONE). */
HOT gboolean
get_opt (VsBinDec *d, const char *field, guint64 *out, GError **error)
{
  if (!get_uv (d, out, error))
    return FALSE;
  if (*out == 0)
    *out = VS_NONE;
  else if (G_UNLIKELY (--*out > VS_TRACE_INT_MAX))
    return DFAIL ("field '%s' is out of range (%" G_GUINT64_FORMAT ")", field, *out);
  return TRUE;
}

HOT gboolean
get_sid (VsBinDec *d, const char *field, const char **out, GError **error)
{
  guint64 sid;
  if (!get_uv (d, &sid, error))
    return FALSE;
  if (sid >= d->n_strings)
    return DFAIL ("field '%s': string id %" G_GUINT64_FORMAT " is not defined", field, sid);
  *out = d->strings[sid];
  return TRUE;
}

static gboolean
get_ids (VsBinDec *d, const char *field, gsize *at, guint32 *n_out, GError **error)
{
  guint64 n;
  if (!get_uv (d, &n, error))
    return FALSE;
  if (n > G_MAXUINT32 || n > (guint64) (d->in->end - d->in->p) + (d->in->eof ? 0 : (1u << 30)))
    {
      if (d->in->eof)
        return DFAIL ("truncated: the file ends inside a record");
      return DFAIL ("field '%s': list length %" G_GUINT64_FORMAT " is too large", field, n);
    }
  /* The array grows as ids are read, not by the length the file claims:
   * a short file that claims a long list fails as truncated before it
   * can ask for much memory (fuzz regression bin-2). It is never NULL, so
   * the lists of an event may point into it (bin-1). */
  if (d->ids == NULL)
    {
      d->ids_cap = 64;
      d->ids = g_new (guint64, d->ids_cap);
    }
  for (guint64 i = 0; i < n; i++)
    {
      if (*at + i >= d->ids_cap)
        {
          d->ids_cap *= 2;
          d->ids = g_renew (guint64, d->ids, d->ids_cap);
        }
      if (!get_int (d, field, &d->ids[*at + i], error))
        return FALSE;
    }
  *n_out = (guint32) n;
  *at += n;
  return TRUE;
}

static gboolean
dec_string_def (VsBinDec *d, GError **error)
{
  guint64 sid, len;
  if (!get_uv (d, &sid, error) || !get_uv (d, &len, error))
    return FALSE;
  if (sid != d->n_strings && d->own_strings != NULL)
    return DFAIL ("string id %" G_GUINT64_FORMAT " defined out of order (expected %" G_GUINT64_FORMAT ")", sid,
                  d->n_strings);
  if (len > VS_BIN_MAX_STRING)
    return DFAIL ("string %" G_GUINT64_FORMAT " is too long (%" G_GUINT64_FORMAT " bytes)", sid, len);
  if (!need (d, (gsize) len, error))
    return FALSE;
  const char *s = (const char *) d->in->p;
  d->in->p += len;
  if (d->own_strings == NULL)
    return TRUE; /* an in-memory buffer holds its table already */
  if (memchr (s, 0, len) != NULL || !g_utf8_validate (s, (gssize) len, NULL))
    return DFAIL ("string %" G_GUINT64_FORMAT " is not valid UTF-8 text", sid);
  g_ptr_array_add (d->own_strings, g_string_chunk_insert_len (d->chunk, s, (gssize) len));
  d->strings = (const char *const *) d->own_strings->pdata;
  d->n_strings = d->own_strings->len;
  return TRUE;
}

/* An integer of at most MAX. */
static gboolean
get_small (VsBinDec *d, const char *field, guint64 max, guint32 *out, GError **error)
{
  guint64 v;
  if (!get_uv (d, &v, error))
    return FALSE;
  if (v > max)
    return DFAIL ("field '%s' is out of range (%" G_GUINT64_FORMAT ")", field, v);
  *out = (guint32) v;
  return TRUE;
}

/* The extensions of a VS_BIN_KERNEL_X record; trace_validate checks the
 * values. */
static gboolean
dec_kernel_ext (VsBinDec *d, VsEvent *ev, guint32 *present, GError **error)
{
  guint8 has;
  guint32 v;
  if (!get_u8 (d, &has, error))
    return FALSE;
  if (has == 0 || (has & ~(VS_BIN_HAS_SHAPE | VS_BIN_HAS_COLL | VS_BIN_HAS_GROUP)) != 0
      || ((has & VS_BIN_HAS_GROUP) && (!(has & VS_BIN_HAS_COLL) || d->version < 3)))
    return DFAIL ("bad kernel extension flags 0x%02x", has);
  if (has & VS_BIN_HAS_SHAPE)
    {
      VsKernelShape *k = &d->shape;
      *k = (VsKernelShape) { 0 };
      if (!get_opt (d, "flops", &k->flops, error) || !get_u8 (d, &k->precision, error))
        return FALSE;
      for (int i = 0; i < 3; i++)
        if (!get_small (d, "grid", G_MAXUINT32, &k->grid[i], error))
          return FALSE;
      for (int i = 0; i < 3; i++)
        if (!get_small (d, "block", G_MAXUINT32, &k->block[i], error))
          return FALSE;
      if (!get_small (d, "regs", G_MAXUINT32, &k->regs, error) || !get_small (d, "smem", G_MAXUINT32, &k->smem, error))
        return FALSE;
      ev->shape = k;
      *present |= VS_F_SHAPE;
    }
  if (has & VS_BIN_HAS_COLL)
    {
      VsCollective *c = &d->coll;
      *c = (VsCollective) { 0 };
      if (!get_u8 (d, &c->kind, error) || !get_int (d, "collective.bytes", &c->bytes, error)
          || !get_small (d, "collective.ranks", G_MAXUINT32, &v, error))
        return FALSE;
      c->ranks = v;
      /* trace_validate checks the id (positive, below 2^63) and the role. */
      if ((has & VS_BIN_HAS_GROUP) && (!get_uv (d, &c->group, error) || !get_u8 (d, &c->role, error)))
        return FALSE;
      if ((has & VS_BIN_HAS_GROUP) && c->group == 0)
        return DFAIL ("field 'collective.group.id' must be positive (0 is no communicator)");
      ev->collective = c;
      *present |= VS_FB (VS_F_COLLECTIVE);
    }
  return TRUE;
}

/* The careful decoder: checks every byte against the end of the buffer,
 * refills it, and builds the exact message for every kind of bad input. */
static int
dec_event_slow (VsBinDec *d, VsEvent *ev, guint32 *present, GError **error)
{
  guint8 op;
  for (;;)
    {
      if (d->in->p >= d->in->end)
        {
          if (!d->in->eof && !inbuf_fill (d->in, d->r->path, error))
            return -1;
          if (d->in->p >= d->in->end)
            {
              if (d->own_strings == NULL)
                return 0;
              trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE,
                                 "truncated: the file ends without the end record");
              return -1;
            }
        }
      op = *d->in->p++;
      if (op < VS_OP_COUNT || op == VS_BIN_KERNEL_X)
        break;
      if (op == VS_BIN_END)
        return 0;
      if (op != VS_BIN_STRING_DEF)
        {
          trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE, "unknown record type 0x%02x", op);
          return -1;
        }
      if (!dec_string_def (d, error))
        return -1;
    }

  guint64 dt_raw, u;
  gboolean ext = op == VS_BIN_KERNEL_X;
  if (ext)
    op = VS_OP_KERNEL;
  ev->op = op;
  if (!get_uv (d, &dt_raw, error))
    return -1;
  gint64 dt = (gint64) (dt_raw >> 1) ^ -(gint64) (dt_raw & 1);
  if ((dt < 0 && (guint64) -(dt + 1) + 1 > d->prev_t) || (dt > 0 && (guint64) dt > VS_TRACE_INT_MAX - d->prev_t))
    {
      trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE, "field 't' is out of range (time delta %" G_GINT64_FORMAT
                         " from %" G_GUINT64_FORMAT ")", dt, d->prev_t);
      return -1;
    }
  ev->t = d->prev_t + (guint64) dt;
  d->prev_t = ev->t;
  if (!get_uv (d, &u, error))
    return -1;
  if (u > G_MAXUINT32)
    {
      trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE, "field 'tid' is out of range (%" G_GUINT64_FORMAT ")", u);
      return -1;
    }
  ev->tid = (guint32) u;
  if (!get_int (d, "host_ns", &ev->host_ns, error))
    return -1;

  ev->kind = ev->dir = ev->scope = ev->to = 0;
  ev->async = ev->has_stream = FALSE;
  ev->id = ev->bytes = ev->src = ev->dst = ev->stream = ev->event = 0;
  ev->dur = ev->compute_ns = VS_NONE;
  ev->name = ev->tag = NULL;
  ev->reads = ev->writes = ev->touches = NULL;
  ev->n_reads = ev->n_writes = ev->n_touches = 0;
  ev->shape = NULL;
  ev->collective = NULL;
  *present = (VS_F_COMMON | trace_op_fields[op]) & ~(VS_F_SHAPE | VS_FB (VS_F_COLLECTIVE));
  guint8 b;
  switch (op)
    {
    case VS_OP_ALLOC:
      if (!get_int (d, "id", &ev->id, error) || !get_int (d, "bytes", &ev->bytes, error)
          || !get_u8 (d, &ev->kind, error) || !get_opt (d, "stream", &ev->stream, error)
          || !get_uv (d, &u, error))
        return -1;
      if (ev->stream == VS_NONE)
        ev->stream = 0;
      else
        ev->has_stream = TRUE;
      if (u != 0)
        {
          if (u - 1 >= d->n_strings)
            {
              trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE,
                                 "field 'tag': string id %" G_GUINT64_FORMAT " is not defined", u - 1);
              return -1;
            }
          ev->tag = d->strings[u - 1];
        }
      break;
    case VS_OP_FREE:
      if (!get_int (d, "id", &ev->id, error) || !get_opt (d, "stream", &ev->stream, error))
        return -1;
      if (ev->stream == VS_NONE)
        ev->stream = 0;
      else
        ev->has_stream = TRUE;
      break;
    case VS_OP_COPY:
      if (!get_u8 (d, &ev->dir, error) || !get_int (d, "bytes", &ev->bytes, error)
          || !get_int (d, "src", &ev->src, error) || !get_int (d, "dst", &ev->dst, error)
          || !get_int (d, "stream", &ev->stream, error) || !get_u8 (d, &b, error)
          || !get_opt (d, "dur", &ev->dur, error))
        return -1;
      ev->async = b != 0;
      break;
    case VS_OP_MEMSET:
      if (!get_int (d, "dst", &ev->dst, error) || !get_int (d, "bytes", &ev->bytes, error)
          || !get_int (d, "stream", &ev->stream, error) || !get_u8 (d, &b, error)
          || !get_opt (d, "dur", &ev->dur, error))
        return -1;
      ev->async = b != 0;
      break;
    case VS_OP_KERNEL:
      {
        gsize at = 0;
        guint32 nr = 0, nw = 0, nt = 0;
        if (!get_sid (d, "name", &ev->name, error) || !get_int (d, "stream", &ev->stream, error)
            || !get_int (d, "dur", &ev->dur, error) || !get_opt (d, "bytes", &ev->bytes, error)
            || !get_opt (d, "compute_ns", &ev->compute_ns, error) || !get_ids (d, "reads", &at, &nr, error)
            || !get_ids (d, "writes", &at, &nw, error) || !get_ids (d, "touches", &at, &nt, error))
          return -1;
        ev->reads = d->ids;
        ev->writes = d->ids + nr;
        ev->touches = d->ids + nr + nw;
        ev->n_reads = nr;
        ev->n_writes = nw;
        ev->n_touches = nt;
        if (ext && !dec_kernel_ext (d, ev, present, error))
          return -1;
        break;
      }
    case VS_OP_SYNC:
      if (!get_u8 (d, &ev->scope, error) || !get_int (d, "stream", &u, error))
        return -1;
      *present &= ~(VS_FB (VS_F_STREAM) | VS_FB (VS_F_EVENT));
      if (ev->scope == VS_SYNC_STREAM)
        ev->stream = u, *present |= VS_FB (VS_F_STREAM);
      else if (ev->scope == VS_SYNC_EVENT)
        ev->event = u, *present |= VS_FB (VS_F_EVENT);
      break;
    case VS_OP_EVENT_RECORD:
      if (!get_int (d, "event", &ev->event, error) || !get_int (d, "stream", &ev->stream, error))
        return -1;
      break;
    case VS_OP_STREAM_WAIT:
      if (!get_int (d, "stream", &ev->stream, error) || !get_int (d, "event", &ev->event, error))
        return -1;
      break;
    case VS_OP_PREFETCH:
      if (!get_int (d, "id", &ev->id, error) || !get_int (d, "bytes", &ev->bytes, error)
          || !get_u8 (d, &ev->to, error) || !get_int (d, "stream", &ev->stream, error))
        return -1;
      break;
    case VS_OP_MARK:
      if (!get_sid (d, "name", &ev->name, error))
        return -1;
      break;
    case VS_OP_EMPTY_CACHE:
      if (!get_opt (d, "stream", &ev->stream, error))
        return -1;
      if (ev->stream == VS_NONE)
        ev->stream = 0;
      else
        ev->has_stream = TRUE;
      break;
    default:
      g_assert_not_reached ();
    }
  return 1;
}

/* ---- the fast path ----
 *
 * Most records are small and far from the end of the buffer. The fast path
 * decodes one event from a local cursor without bounds checks (it starts
 * only with FAST_MARGIN bytes buffered, more than any record's fixed part
 * can take, and checks each id list's length against what is left) and,
 * for file readers, validates it in the same pass (trace_validate's rules,
 * specialised to what a binary record can hold). It takes varints of at
 * most 9 bytes: every valid integer field is below 2^63, so it fits, and
 * the range checks of get_int and get_opt hold by construction.
 *
 * It changes no state until the whole event is known to be good. Anything
 * unusual (a longer varint, a value out of range, an undefined string id,
 * an unknown enum value, an id that is not live, time going back, a list
 * longer than the buffer holds) makes it give up: the careful decoder
 * then reads the same record again from its first byte and, with
 * trace_validate, finds the error and words its message, exactly as it
 * did before the fast path existed. */

#define FAST_MARGIN VS_BIN_FAST_MARGIN

/* Reads a varint of at most 9 bytes into V, else gives up. The one-byte
 * case falls through; the others branch out of line. */
#define FUV(v)                                                                                                   \
  do                                                                                                             \
    {                                                                                                            \
      guint64 x_ = *p++;                                                                                         \
      if (G_UNLIKELY (x_ >= 0x80))                                                                               \
        {                                                                                                        \
          guint64 b1_ = *p;                                                                                      \
          if (b1_ < 0x80)                                                                                        \
            {                                                                                                    \
              x_ += (b1_ << 7) - 0x80;                                                                           \
              p++;                                                                                               \
            }                                                                                                    \
          else                                                                                                   \
            {                                                                                                    \
              p--;                                                                                               \
              if (G_UNLIKELY (!bin_uv_long (&p, &x_)))                                                           \
                return FALSE;                                                                                    \
            }                                                                                                    \
        }                                                                                                        \
      (v) = x_;                                                                                                  \
    }                                                                                                            \
  while (0)

/* An `opt` field (value + 1, 0 = absent). A 9-byte varint is below 2^63,
 * so value + 1 - 1 is at most VS_TRACE_INT_MAX. */
#define FOPT(v)                                                                                                  \
  do                                                                                                             \
    {                                                                                                            \
      guint64 o_;                                                                                                \
      FUV (o_);                                                                                                  \
      (v) = o_ - 1; /* 0 - 1 = VS_NONE */                                                                        \
    }                                                                                                            \
  while (0)

/* Whether ID is live: its slot of the live ids, else the spill map (out
 * of line; a find there changes no live set, nothing a bail-out would
 * undo). */
#define FAST_LIVE(id)                                                                                            \
  (__builtin_expect (cache[VS_SLOT (id)] == (id), 1) || slotmap_lookup_spill (&r->live, (id)) != NULL)

/* Lists of up to FAST_LIST ids take the fast path; the ids array always
 * holds three of them (bin_dec_init). */
#define FAST_LIST VS_BIN_FAST_LIST
/* The longest record the fast path reads: a kernel (op, 13 varints, three
 * lists of FAST_LIST ids) with extensions (has, precision, kind and role
 * bytes, 12 varints), 9 bytes a varint. */
G_STATIC_ASSERT (1 + 13 * 9 + 3 * FAST_LIST * 9 + 4 + 12 * 9 <= FAST_MARGIN);

/* The extensions of a VS_BIN_KERNEL_X record at P, into D's shape and
 * collective (which no one reads until the event is returned), checked as
 * trace_validate would (check_kernel_extras). Returns the end of the
 * record, or NULL: give up. Out of line:
 * few kernels carry them, and the plain kernel's loop keeps its registers.
 * (Also trace-scan.c's, which reads them to check them.) */
const guint8 *__attribute__ ((noinline))
bin_fast_kernel_ext (VsBinDec *d, VsEvent *e, const guint8 *p, gboolean validate)
{
  guint64 v[8], u, bytes, ranks;
  guint has = *p++;
  if (G_UNLIKELY (has == 0 || (has & ~(guint) (VS_BIN_HAS_SHAPE | VS_BIN_HAS_COLL | VS_BIN_HAS_GROUP)) != 0
                  || ((has & VS_BIN_HAS_GROUP) && (!(has & VS_BIN_HAS_COLL) || d->version < 3))))
    return NULL;
  e->op = VS_OP_KERNEL;
  if (has & VS_BIN_HAS_SHAPE)
    {
      VsKernelShape *k = &d->shape;
      FOPT (k->flops);
      k->precision = *p++;
      guint64 big = 0;
      for (int i = 0; i < 8; i++)
        {
          FUV (u);
          v[i] = u;
          big |= u;
        }
      if (G_UNLIKELY (big > G_MAXUINT32 || k->precision >= VS_PREC_COUNT))
        return NULL;
      for (int i = 0; i < 3; i++)
        {
          k->grid[i] = (guint32) v[i];
          k->block[i] = (guint32) v[3 + i];
        }
      k->regs = (guint32) v[6];
      k->smem = (guint32) v[7];
      if (validate
          && G_UNLIKELY (trace_dim3_partly_zero (v[0], v[1], v[2]) || trace_dim3_partly_zero (v[3], v[4], v[5])))
        return NULL;
      e->shape = k;
    }
  if (has & VS_BIN_HAS_COLL)
    {
      VsCollective *c = &d->coll;
      c->kind = *p++;
      FUV (bytes);
      FUV (ranks);
      if (G_UNLIKELY (c->kind >= VS_COLL_COUNT || ranks == 0 || ranks > G_MAXUINT32))
        return NULL;
      c->bytes = bytes;
      c->ranks = (guint32) ranks;
      c->group = 0;
      c->role = VS_ROLE_NONE;
      if (has & VS_BIN_HAS_GROUP)
        {
          guint64 g;
          FUV (g);
          c->role = *p++;
          if (G_UNLIKELY (g == 0 || g > VS_GROUP_ID_MAX || c->role >= VS_ROLE_COUNT))
            return NULL;
          c->group = g;
          /* The group's size and role as at its first use (the careful
           * path words a disagreement); remembered even should the event
           * turn out bad below: the careful path then finds it agreeing. */
          if (validate && !trace_group_agrees (d->r, c))
            return NULL;
        }
      /* The job the replay sized, checked with or without validation
       * (a sweep's runs size different jobs over one validated buffer). */
      if (G_UNLIKELY (!trace_job_fits (d->r, c)))
        return NULL;
      e->collective = c;
    }
  return p;
}

/* Decodes (and if VALIDATE checks) the event whose op byte (OP, below
 * VS_OP_COUNT) is at *PP.
 * TRUE: done, *PP past the record. FALSE: nothing changed, use the careful
 * decoder. */

/* Event [T, END] into the span a version 4 file's decoder sums for the
 * end record (END as event_captured_end gives it). */
HOT void
dec_sum_span (VsBinDec *d, guint64 t, guint64 end)
{
  d->sum_first_t = MIN (d->sum_first_t, t);
  d->sum_last_end = MAX (d->sum_last_end, end);
}

HOT gboolean
dec_event_fast (VsBinDec *d, VsEvent *e, const guint8 **pp, guint op, gboolean validate)
{
  const guint8 *p = *pp + 1;
  VsTraceReader *r = d->r;
  guint64 dt_raw, tid, host_ns, t, u, gpu_end = 0;
  FUV (dt_raw);
  FUV (tid);
  FUV (host_ns);
  /* dt_raw < 2^63, so |dt| < 2^62: prev_t + dt cannot wrap past 2^64, and
   * a negative result wraps to above VS_TRACE_INT_MAX. */
  t = d->prev_t + (guint64) ((gint64) (dt_raw >> 1) ^ -(gint64) (dt_raw & 1));
  if (G_UNLIKELY (t > VS_TRACE_INT_MAX || tid > G_MAXUINT32))
    return FALSE;

  /* Time runs forward within each host thread (as trace_validate). The
   * new time is stored at once: should the event turn out bad below, the
   * careful path finds the same time check passed (t is not earlier than
   * itself) and stores the same value, as trace_validate would have. */
  if (validate && G_UNLIKELY (!bin_thread_time (r, tid, t)))
    return FALSE;

  /* Copies of what the loops read, so that stores to the event (whose
   * guint8 fields may alias anything) do not force reloads. */
  const guint64 *cache = r->live.keys;
  const char *const *strings = d->strings;
  guint64 n_strings = d->n_strings;

  e->t = t;
  e->host_ns = host_ns;
  e->tid = (guint32) tid;
  e->op = (guint8) op;
  e->kind = e->dir = e->scope = e->to = 0;
  e->async = e->has_stream = FALSE;
  e->id = e->bytes = e->src = e->dst = e->stream = e->event = 0;
  e->dur = e->compute_ns = VS_NONE;
  e->name = e->tag = NULL;
  e->shape = NULL;
  e->collective = NULL;

  /* Every op but kernel clears the id lists (a kernel sets them). */
#define NO_LISTS()                                                                                               \
  do                                                                                                             \
    {                                                                                                            \
      e->reads = e->writes = e->touches = NULL;                                                                  \
      e->n_reads = e->n_writes = e->n_touches = 0;                                                               \
    }                                                                                                            \
  while (0)
  switch (op)
    {
    case VS_OP_ALLOC:
      NO_LISTS ();
      FUV (e->id);
      FUV (e->bytes);
      e->kind = *p++;
      FUV (u);
      if (u != 0)
        {
          e->stream = u - 1;
          e->has_stream = TRUE;
        }
      FUV (u);
      if (u != 0)
        {
          if (G_UNLIKELY (u - 1 >= n_strings))
            return FALSE;
          e->tag = strings[u - 1];
        }
      if (validate)
        {
          /* Live already: the careful path words the error. */
          if (G_UNLIKELY (e->kind >= VS_MEM_COUNT || e->id == 0 || r->live.len >= r->max_live
                          || trace_live_has (r, e->id)))
            return FALSE;
          trace_live_add (r, e->id);
        }
      break;
    case VS_OP_FREE:
      NO_LISTS ();
      FUV (e->id);
      FUV (u);
      if (u != 0)
        {
          e->stream = u - 1;
          e->has_stream = TRUE;
        }
      if (validate && G_UNLIKELY (!trace_live_remove (r, e->id)))
        return FALSE;
      break;
    case VS_OP_COPY:
      NO_LISTS ();
      e->dir = *p++;
      FUV (e->bytes);
      FUV (e->src);
      FUV (e->dst);
      FUV (e->stream);
      e->async = *p++ != 0;
      FOPT (e->dur);
      gpu_end = e->dur != VS_NONE ? t + e->dur : 0;
      if (validate
          && G_UNLIKELY (e->dir >= VS_DIR_COUNT || (e->src != 0 && !FAST_LIVE (e->src))
                         || (e->dst != 0 && !FAST_LIVE (e->dst))))
        return FALSE;
      break;
    case VS_OP_MEMSET:
      NO_LISTS ();
      FUV (e->dst);
      FUV (e->bytes);
      FUV (e->stream);
      e->async = *p++ != 0;
      FOPT (e->dur);
      gpu_end = e->dur != VS_NONE ? t + e->dur : 0;
      if (validate && G_UNLIKELY (!FAST_LIVE (e->dst)))
        return FALSE;
      break;
    case VS_OP_KERNEL:
    case VS_BIN_KERNEL_X:
      {
        FUV (u);
        if (G_UNLIKELY (u >= n_strings))
          return FALSE;
        e->name = strings[u];
        FUV (e->stream);
        FUV (e->dur);
        gpu_end = t + e->dur;
        FOPT (e->bytes);
        FOPT (e->compute_ns);
        /* reads, writes, touches. FAST_MARGIN holds a kernel record with
         * three lists of FAST_LIST ids of 9 bytes and its fixed part
         * (82 bytes), so the lists need no bounds checks. The ids are
         * checked against the live cache as they are read, the few it
         * does not hold against the map afterwards: a call inside the
         * loops would make them save and restore every register. */
        guint64 *ids = d->ids, *w = ids;
        guint64 n, miss = 0;
#define FAST_IDS(ptr, count)                                                                                     \
  FUV (n);                                                                                                       \
  e->ptr = w;                                                                                                    \
  e->count = (guint32) n;                                                                                        \
  if (n != 0)                                                                                                    \
    {                                                                                                            \
      if (G_UNLIKELY (n > FAST_LIST))                                                                            \
        return FALSE;                                                                                            \
      guint64 *stop_ = w + n;                                                                                    \
      do                                                                                                         \
        {                                                                                                        \
          guint64 id_;                                                                                           \
          FUV (id_);                                                                                             \
          miss |= cache[VS_SLOT (id_)] ^ id_;                                                                    \
          *w++ = id_;                                                                                            \
        }                                                                                                        \
      while (w < stop_);                                                                                         \
    }
        FAST_IDS (reads, n_reads)
        FAST_IDS (writes, n_writes)
        FAST_IDS (touches, n_touches)
#undef FAST_IDS
        if (validate && G_UNLIKELY (miss != 0))
          for (const guint64 *q = ids; q < w; q++)
            if (!FAST_LIVE (*q))
              return FALSE;
        /* (p is passed by value: taking its address would keep it in
         * memory through the whole decoder.) */
        if (G_UNLIKELY (op == VS_BIN_KERNEL_X) && (p = bin_fast_kernel_ext (d, e, p, validate)) == NULL)
          return FALSE;
        break;
      }
    case VS_OP_SYNC:
      NO_LISTS ();
      e->scope = *p++;
      FUV (u);
      if (e->scope == VS_SYNC_STREAM)
        e->stream = u;
      else if (e->scope == VS_SYNC_EVENT)
        e->event = u;
      if (validate && G_UNLIKELY (e->scope >= VS_SYNC_COUNT))
        return FALSE;
      break;
    case VS_OP_EVENT_RECORD:
      NO_LISTS ();
      FUV (e->event);
      FUV (e->stream);
      break;
    case VS_OP_STREAM_WAIT:
      NO_LISTS ();
      FUV (e->stream);
      FUV (e->event);
      break;
    case VS_OP_PREFETCH:
      NO_LISTS ();
      FUV (e->id);
      FUV (e->bytes);
      e->to = *p++;
      FUV (e->stream);
      if (validate && G_UNLIKELY (e->to >= VS_TO_COUNT || !FAST_LIVE (e->id)))
        return FALSE;
      break;
    case VS_OP_MARK:
      NO_LISTS ();
      FUV (u);
      if (G_UNLIKELY (u >= n_strings))
        return FALSE;
      e->name = strings[u];
      break;
    case VS_OP_EMPTY_CACHE:
      NO_LISTS ();
      FUV (u);
      if (u != 0)
        {
          e->stream = u - 1;
          e->has_stream = TRUE;
        }
      break;
    default:
      __builtin_unreachable (); /* bin_dec_fast checked op */
    }
#undef NO_LISTS

  /* Good (alloc and free have updated the live ids): move on. A file's
   * reader sums the span for the end record here, where t and the ends
   * are at hand (event_captured_end's rule; the marks are counted by
   * trace_next). */
  if (validate && d->summing)
    dec_sum_span (d, t, MAX (t + host_ns, gpu_end));
  d->prev_t = t;
  *pp = p;
  return TRUE;
}

#undef FUV
#undef FOPT

void
bin_dec_init (VsBinDec *d, VsTraceReader *r, VsInBuf *in)
{
  d->r = r;
  d->in = in;
  d->version = VS_BIN_VERSION;
  d->sum_first_t = G_MAXUINT64;
  d->ids_cap = 3 * FAST_LIST;
  d->ids = g_new (guint64, d->ids_cap);
}

/* The fast path on the record at the cursor, if it starts one with the
 * margin the fast path needs. */
HOT gboolean
bin_dec_fast (VsBinDec *d, VsEvent *ev)
{
  VsInBuf *in = d->in;
  const guint8 *p = in->p;
  if (G_UNLIKELY (in->end - p < FAST_MARGIN))
    return FALSE;
  guint op = *p;
  if (G_UNLIKELY (op >= VS_OP_COUNT) && op != VS_BIN_KERNEL_X)
    return FALSE;
  gboolean ok = d->r->validate ? dec_event_fast (d, ev, &p, op, TRUE) : dec_event_fast (d, ev, &p, op, FALSE);
  if (G_LIKELY (ok))
    in->p = p;
  return ok;
}

int
bin_dec_event (VsBinDec *d, VsEvent *ev, guint32 *present, GError **error)
{
  VsInBuf *in = d->in;
  if (G_UNLIKELY (in->end - in->p < FAST_MARGIN) && !in->eof && !inbuf_fill (in, d->r->path, error))
    return -1;
  if (!d->careful_only && bin_dec_fast (d, ev))
    {
      *present = VS_F_VALIDATED;
      return 1;
    }
  return dec_event_slow (d, ev, present, error);
}

gboolean
trace_next (VsTraceReader *r, VsEvent *ev, GError **error)
{
  g_return_val_if_fail (r != NULL && ev != NULL, FALSE);
  /* Binary input: most events take the decoder's fast path, which
   * validates as it decodes; r->fast is cleared at the end or an error. */
  VsBinDec *fast = r->fast;
  if (G_LIKELY (fast != NULL) && G_LIKELY (bin_dec_fast (fast, ev)))
    {
      ev->index = r->count++;
      trace_reader_note_mark (r, ev);   /* the span: dec_event_fast */
      return TRUE;
    }
  gboolean ok = trace_next_slow (r, ev, error);
  if (ok && fast != NULL)
    r->fast = fast; /* the careful path took one record; go on fast */
  return ok;
}

void
bin_dec_clear (VsBinDec *d)
{
  g_clear_pointer (&d->ids, g_free);
  if (d->own_strings)
    g_clear_pointer (&d->own_strings, g_ptr_array_unref);
  if (d->chunk)
    g_clear_pointer (&d->chunk, g_string_chunk_free);
}

#undef DFAIL

/* ---- the end record ---- */

/* The message for a checksum that does not hold (a checking read's and
 * the skim's). */
static char *
checksum_mismatch (guint64 got, guint64 want)
{
  return g_strdup_printf ("the checksum of the records is %016" G_GINT64_MODIFIER "x but the end record gives %016"
                          G_GINT64_MODIFIER "x: the file is corrupt, or was changed", got, want);
}

#define DFAIL(...) (trace_reader_fail (d->r, error, VS_TRACE_ERROR_PARSE, __VA_ARGS__), FALSE)

static guint64
le64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

void
bin_end_clear (VsBinEnd *e)
{
  if (e->marks)
    g_clear_pointer (&e->marks, g_ptr_array_unref);
}

gboolean
bin_end_read (VsBinDec *d, VsBinEnd *e, GError **error)
{
  memset (e, 0, sizeof *e);
  e->first_t = G_MAXUINT64;
  e->marks = g_ptr_array_new_with_free_func (g_free);
  if (!get_uv (d, &e->count, error))
    return FALSE;
  if (d->version >= 4)
    {
      guint64 first, n;
      if (!get_uv (d, &first, error) || !get_uv (d, &e->last_end, error) || !get_uv (d, &n, error))
        return FALSE;
      e->first_t = first == 0 ? G_MAXUINT64 : first - 1;
      if (n > e->count)
        return DFAIL ("the end record's summary lists %" G_GUINT64_FORMAT " mark names, more than its %"
                      G_GUINT64_FORMAT " events", n, e->count);
      const VsMarkSum *prev = NULL;
      for (guint64 i = 0; i < n; i++)
        {
          guint64 tid, len;
          if (!get_uv (d, &tid, error) || !get_uv (d, &len, error))
            return FALSE;
          if (tid > G_MAXUINT32)
            return DFAIL ("the end record's mark %" G_GUINT64_FORMAT ": tid %" G_GUINT64_FORMAT " is out of range",
                          i, tid);
          if (len > VS_BIN_MAX_STRING)
            return DFAIL ("the end record's mark %" G_GUINT64_FORMAT ": its name is too long (%" G_GUINT64_FORMAT
                          " bytes)", i, len);
          if (!need (d, (gsize) len, error))
            return FALSE;
          const char *s = (const char *) d->in->p;
          if (memchr (s, 0, len) != NULL || !g_utf8_validate (s, (gssize) len, NULL))
            return DFAIL ("the end record's mark %" G_GUINT64_FORMAT ": its name is not valid UTF-8 text", i);
          VsMarkSum *m = g_malloc (sizeof *m + len + 1);
          memcpy (m->name, s, len);
          m->name[len] = 0;
          m->tid = (guint32) tid;
          g_ptr_array_add (e->marks, m);
          d->in->p += len;
          if (!get_uv (d, &m->count, error) || !get_uv (d, &m->last_t, error))
            return FALSE;
          if (m->count == 0)
            return DFAIL ("the end record's mark %" G_GUINT64_FORMAT " (\"%s\", tid %u) counts no mark", i, m->name,
                          m->tid);
          if (prev != NULL && (prev->tid > m->tid || (prev->tid == m->tid && strcmp (prev->name, m->name) >= 0)))
            return DFAIL ("the end record's marks are not sorted by tid, then name (mark %" G_GUINT64_FORMAT ")", i);
          prev = m;
        }
      /* The checksum, the offset and "VEND" at once: a refill between
       * them would move the bytes a checking reader hashes up to CHECK_AT. */
      if (!need (d, 20, error))
        return FALSE;
      e->check_at = inbuf_offset (d->in);
      e->checksum = le64 (d->in->p);
      e->end_offset = le64 (d->in->p + 8);
      d->in->p += 16;
    }
  if (!need (d, 4, error))
    return FALSE;
  if (memcmp (d->in->p, "VEND", 4) != 0)
    return DFAIL ("bad end record (no \"VEND\")");
  d->in->p += 4;
  return TRUE;
}

#define DFAIL_R(...) (trace_reader_fail (r, error, VS_TRACE_ERROR_PARSE, __VA_ARGS__), FALSE)

/* The summary of version 4 end record E against what the events read
 * sum to: D's span, S's marks. */
static gboolean
end_check_sum (VsTraceReader *r, const VsBinEnd *e, const VsBinDec *d, const VsTraceSum *s, GError **error)
{
  if (e->first_t != d->sum_first_t)
    return DFAIL_R ("the end record's summary gives first_t %" G_GINT64_FORMAT " but the events' earliest t is %"
                    G_GINT64_FORMAT, e->first_t == G_MAXUINT64 ? (gint64) -1 : (gint64) e->first_t,
                    d->sum_first_t == G_MAXUINT64 ? (gint64) -1 : (gint64) d->sum_first_t);
  if (e->last_end != d->sum_last_end)
    return DFAIL_R ("the end record's summary gives last_end %" G_GUINT64_FORMAT
                    " but the events' latest captured end is %" G_GUINT64_FORMAT, e->last_end, d->sum_last_end);
  for (guint i = 0; i < e->marks->len; i++)
    {
      const VsMarkSum *m = g_ptr_array_index (e->marks, i), *k = trace_sum_lookup (s, m->tid, m->name);
      if (k == NULL || k->count != m->count || k->last_t != m->last_t)
        return DFAIL_R ("the end record's summary gives %" G_GUINT64_FORMAT " marks \"%s\" on tid %u, the last at t=%"
                        G_GUINT64_FORMAT ", but the events hold %" G_GUINT64_FORMAT "%s%" G_GUINT64_FORMAT,
                        m->count, m->name, m->tid, m->last_t, k ? k->count : 0, k ? ", the last at t=" : "",
                        k ? k->last_t : 0);
    }
  if (e->marks->len != g_hash_table_size (s->marks))
    return DFAIL_R ("the end record's summary lists %u mark names and threads but the events hold %u", e->marks->len,
                    g_hash_table_size (s->marks));
  return TRUE;
}

#undef DFAIL
#undef DFAIL_R

/* ---- file reader ---- */

typedef struct {
  VsTraceReader base;
  VsInBuf in;
  VsBinDec dec;
  guint64 magic_off;      /* the stream offsets of the magic and of the first record */
  guint64 rec_off;
  VsTraceSum sum;         /* version 4: the events read so far (base.sum) */
  VsXxh64 xxh;            /* trace_reader_check_sum: in.hash */
} BinReader;

static gboolean
bin_next (VsTraceReader *base, VsEvent *ev, guint32 *present, GError **error)
{
  BinReader *r = (BinReader *) base;
  int rc = bin_dec_event (&r->dec, ev, present, error);
  if (rc > 0)
    {
      /* The careful decoder's events join the span here (the fast
       * path's are in it already). */
      if (r->dec.summing && !(*present & VS_F_VALIDATED))
        dec_sum_span (&r->dec, ev->t, event_captured_end (ev));
      return TRUE;
    }
  if (rc < 0)
    return FALSE;
  /* The end record (its 0xFE read): uv count, for version 4 the
   * summary, checksum and offset, "VEND", then nothing. */
  VsBinDec *d = &r->dec;
  guint64 at = inbuf_offset (&r->in) - 1 - r->magic_off;
  g_auto (VsBinEnd) e;
  if (!bin_end_read (d, &e, error))
    return FALSE;
  guint64 n = e.count;
  if (n != base->count)
    {
      trace_reader_fail (base, error, VS_TRACE_ERROR_PARSE,
                         "the end record counts %" G_GUINT64_FORMAT " events but the file holds %" G_GUINT64_FORMAT,
                         n, base->count);
      return FALSE;
    }
  if (d->version >= 4)
    {
      if (e.end_offset != at)
        {
          trace_reader_fail (base, error, VS_TRACE_ERROR_PARSE,
                             "the end record gives its offset as %" G_GUINT64_FORMAT " but it is at %"
                             G_GUINT64_FORMAT, e.end_offset, at);
          return FALSE;
        }
      /* The skim framed the events without summing them. */
      if (!base->skim && !end_check_sum (base, &e, d, &r->sum, error))
        return FALSE;
      if (r->in.hash != NULL)
        {
          /* The bytes before the checksum: in.hash has those before
           * hash_from, the buffer the rest (the checksum is in it). */
          guint64 upto = e.check_at - r->in.dropped;
          vs_xxh64_update (r->in.hash, r->in.hash_from, (gsize) (r->in.data + upto - r->in.hash_from));
          r->in.hash_from = r->in.data + upto;
          guint64 h = vs_xxh64_digest (r->in.hash);
          r->in.hash = NULL;
          if (h != e.checksum)
            {
              g_autofree char *msg = checksum_mismatch (h, e.checksum);
              trace_reader_fail (base, error, VS_TRACE_ERROR_PARSE, "%s", msg);
              return FALSE;
            }
        }
    }
  if (d->in->p == d->in->end && !inbuf_fill (d->in, base->path, error))
    return FALSE;
  if (d->in->p != d->in->end)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: data after the end record", base->path);
      return FALSE;
    }
  return FALSE;
}

static void
bin_close (VsTraceReader *base)
{
  BinReader *r = (BinReader *) base;
  bin_dec_clear (&r->dec);
  inbuf_close (&r->in);
  if (r->sum.marks)
    trace_sum_clear (&r->sum);
  g_free (r);
}

static const VsTraceReaderClass bin_class = { bin_next, bin_close, NULL };

VsTraceReader *
trace_bin_open (const char *path, VsInBuf *in, GError **error)
{
  BinReader *r = g_new0 (BinReader, 1);
  trace_reader_init (&r->base, &bin_class, path);
  r->in = *in;
  bin_dec_init (&r->dec, &r->base, &r->in);
  r->dec.own_strings = g_ptr_array_new ();
  r->dec.chunk = g_string_chunk_new (4096);
  GError *err = NULL;
  while (!r->in.eof && (gsize) (r->in.end - r->in.p) < 16)
    if (!inbuf_fill (&r->in, path, &err))
      goto fail;
  if ((gsize) (r->in.end - r->in.p) < 16)
    {
      g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: header: truncated binary trace", path);
      goto fail;
    }
  guint32 ver, len;
  memcpy (&ver, r->in.p + 8, 4);
  memcpy (&len, r->in.p + 12, 4);
  ver = GUINT32_FROM_LE (ver);
  len = GUINT32_FROM_LE (len);
  if (ver < VS_BIN_VERSION_MIN || ver > VS_BIN_VERSION)
    {
      if (ver > 255)
        {
          /* No vramsim will write version 256: these are other bytes
           * after the magic (text, say), not a later format. */
          char shown[5];
          for (int i = 0; i < 4; i++)
            shown[i] = g_ascii_isprint (r->in.p[8 + i]) ? (char) r->in.p[8 + i] : '.';
          shown[4] = 0;
          g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                       "%s: header: the binary magic is followed by \"%s\", not a format version: the file is "
                       "corrupt, or not a binary trace", path, shown);
        }
      else if (ver > VS_BIN_VERSION)
        g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                     "%s: header: binary trace version %u is newer than this vramsim reads (%u); upgrade vramsim",
                     path, ver, VS_BIN_VERSION);
      else
        g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: header: bad binary trace version %u", path, ver);
      goto fail;
    }
  if (len > VS_BIN_MAX_HEADER)
    {
      g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: header: header length %u is too large", path, len);
      goto fail;
    }
  r->dec.version = ver;
  r->magic_off = inbuf_offset (&r->in);
  r->in.p += 16;
  while (!r->in.eof && (gsize) (r->in.end - r->in.p) < len)
    if (!inbuf_fill (&r->in, path, &err))
      goto fail;
  if ((gsize) (r->in.end - r->in.p) < len)
    {
      g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: header: truncated binary trace", path);
      goto fail;
    }
  char *where = g_strdup_printf ("%s: header", path);
  cJSON *obj = memchr (r->in.p, 0, len) ? NULL : cJSON_ParseWithLength ((const char *) r->in.p, len);
  r->in.p += len;
  if (obj == NULL)
    {
      g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: the header is not valid JSON", where);
      g_free (where);
      goto fail;
    }
  r->base.header = trace_header_from_json_text (obj, (const char *) r->in.p - len, len, where, &err);
  g_free (where);
  cJSON_Delete (obj);
  if (r->base.header == NULL)
    goto fail;
  r->rec_off = inbuf_offset (&r->in);
  r->in.hash_from = r->in.p;
  if (ver >= 4)
    {
      trace_sum_init (&r->sum);
      r->base.sum = &r->sum;
      r->dec.summing = TRUE;
    }
  r->base.fast = &r->dec;
  return &r->base;

fail:
  g_propagate_error (error, err);
  trace_close (&r->base);
  return NULL;
}

/* ---- the rest of a version 4 file from its end record ---- */

/* LEN bytes at OFF of FD; FALSE on a short read or an error. */
static gboolean
pread_all (int fd, void *buf, gsize len, guint64 off)
{
  guint8 *p = buf;
  while (len > 0)
    {
      ssize_t n = pread (fd, p, len, (off_t) off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      len -= (gsize) n;
      off += (guint64) n;
    }
  return TRUE;
}

/* The end record larger than this is read by the careful path (the
 * summary's names are the file's mark names once each: kilobytes). */
#define SUMMARY_MAX (64u << 20)

int
bin_skim_summary (VsTraceReader *base, const char *mark, guint32 tid, VsTraceSkim *out, GError **error)
{
  if (base->klass != &bin_class || base->sum == NULL || base->failed || base->done)
    return 0;
  BinReader *r = (BinReader *) base;
  struct stat st;
  if (r->in.z != NULL || r->in.fd < 0 || fstat (r->in.fd, &st) != 0 || !S_ISREG (st.st_mode))
    return 0;
  /* The last 12 bytes: the end record's offset and "VEND". */
  guint64 size = (guint64) st.st_size, here = inbuf_offset (&r->in) + (guint64) (r->in.end - r->in.p);
  guint8 tail[12];
  if (size < r->rec_off + 22 || here > size || !pread_all (r->in.fd, tail, 12, size - 12)
      || memcmp (tail + 8, "VEND", 4) != 0)
    return 0;
  guint64 at = r->magic_off + le64 (tail);
  if (at < r->rec_off || at < inbuf_offset (&r->in) || at > size - 22 || size - at > SUMMARY_MAX)
    return 0;
  gsize len = (gsize) (size - at);
  g_autofree guint8 *buf = g_malloc (len);
  if (!pread_all (r->in.fd, buf, len, at) || buf[0] != VS_BIN_END)
    return 0;
  /* Read as the careful path reads it, from memory. */
  VsInBuf mem = { .fd = -1, .data = buf, .p = buf + 1, .end = buf + len, .eof = TRUE };
  VsBinDec md = { .r = base, .in = &mem, .version = r->dec.version };
  g_auto (VsBinEnd) e;
  GError *perr = NULL;
  if (!bin_end_read (&md, &e, &perr) || mem.p != mem.end || e.end_offset != at - r->magic_off
      || e.count < base->count)
    {
      g_clear_error (&perr);
      return 0;   /* the careful path words it */
    }
  /* The checksum: the records from the first, then the end record's
   * bytes before it. */
  VsXxh64 h;
  vs_xxh64_init (&h, 0);
  gsize blk = 64u << 10;
  g_autofree guint8 *chunk = g_malloc (blk);
  for (guint64 off = r->rec_off; off < at;)
    {
      gsize n = (gsize) MIN ((guint64) blk, at - off);
      errno = 0;
      if (!pread_all (r->in.fd, chunk, n, off))
        {
          int en = errno;
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: read failed: %s", base->path,
                       en ? g_strerror (en) : "the file shrank");
          base->failed = TRUE;
          base->fast = NULL;
          return -1;
        }
      vs_xxh64_update (&h, chunk, n);
      off += n;
    }
  vs_xxh64_update (&h, buf, (gsize) e.check_at);
  guint64 sum = vs_xxh64_digest (&h);
  if (sum != e.checksum)
    {
      g_autofree char *msg = checksum_mismatch (sum, e.checksum);
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: %s", base->path, msg);
      base->failed = TRUE;
      base->fast = NULL;
      return -1;
    }
  /* The reaches after what was read: the whole file's less those read. */
  guint64 all = 0, last = 0;
  for (guint i = 0; mark != NULL && i < e.marks->len; i++)
    {
      const VsMarkSum *m = g_ptr_array_index (e.marks, i);
      if (m->tid == tid && strcmp (m->name, mark) == 0)
        all = m->count, last = m->last_t;
    }
  const VsMarkSum *seen = mark != NULL ? trace_sum_lookup (base->sum, tid, mark) : NULL;
  guint64 before = seen ? seen->count : 0;
  if (all < before)
    return 0;
  /* The whole trace's earliest t and latest end: with those of the
   * events read, the same as the rest's (trace.h). */
  out->events = e.count - base->count;
  out->first_t = e.first_t;
  out->last_end = e.last_end;
  out->reaches = all - before;
  out->last_reach_t = all > before ? last : 0;
  base->count = e.count;
  base->skim = TRUE;
  base->done = TRUE;
  base->fast = NULL;
  return 1;
}

guint
trace_reader_binary_version (const VsTraceReader *r)
{
  return r->klass == &bin_class ? ((const BinReader *) r)->dec.version : 0;
}

void
trace_reader_check_sum (VsTraceReader *base)
{
  g_return_if_fail (base != NULL && base->count == 0);
  if (base->klass != &bin_class || base->sum == NULL)
    return;
  BinReader *r = (BinReader *) base;
  vs_xxh64_init (&r->xxh, 0);
  r->in.hash = &r->xxh;
}
