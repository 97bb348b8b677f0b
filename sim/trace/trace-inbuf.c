/* trace-inbuf.c — the readers' buffered input (VsInBuf, trace-priv.h):
 * a file descriptor or memory, read in growing chunks, gzip inflated on
 * the way (zlib). Used by the format readers (trace-bin.c, trace-jsonl.c)
 * and by trace_open (trace.c) to tell the formats apart. */
#include "trace/trace-priv.h"
#include "base/xxh64.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ---- input buffer ---- */

#define VS_INBUF_SIZE (256u << 10)

static gboolean inbuf_fill_gzip (VsInBuf *b, gsize left, const char *path, GError **error);

gboolean
inbuf_fill (VsInBuf *b, const char *path, GError **error)
{
  if (b->eof || (b->fd < 0 && b->z == NULL))
    {
      b->eof = TRUE;
      return TRUE;
    }
  gsize left = (gsize) (b->end - b->p);
  /* The bytes read are dropped (the unread ones move to the front). */
  if (b->hash != NULL && b->hash_from != NULL && b->p > b->hash_from)
    vs_xxh64_update (b->hash, b->hash_from, (gsize) (b->p - b->hash_from));
  b->dropped += (guint64) (b->p - b->data);
  if (b->own == NULL)
    {
      b->cap = VS_INBUF_SIZE;
      b->own = g_malloc (b->cap);
    }
  else if (left == b->cap)
    {
      b->cap *= 2;
      guint8 *n = g_malloc (b->cap);
      memcpy (n, b->p, left);
      g_free (b->own);
      b->own = n;
    }
  else if (left > 0 && b->p != b->own)
    memmove (b->own, b->p, left);
  b->data = b->own;
  b->p = b->own;
  b->hash_from = b->p;
  b->end = b->own + left;
  if (b->z != NULL)
    return inbuf_fill_gzip (b, left, path, error);
  for (;;)
    {
      ssize_t n = read (b->fd, b->own + left, b->cap - left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: read failed: %s", path, g_strerror (e));
          return FALSE;
        }
      if (n == 0)
        b->eof = TRUE;
      b->end = b->own + left + n;
      return TRUE;
    }
}

void
inbuf_close (VsInBuf *b)
{
  if (b->close_fd && b->fd >= 0)
    close (b->fd);
  b->fd = -1;
  g_clear_pointer (&b->own, g_free);
  if (b->z != NULL)
    {
      inflateEnd (b->z);
      g_clear_pointer (&b->z, g_free);
    }
  g_clear_pointer (&b->zraw, g_free);
}

/* Reads raw (compressed) bytes into the raw buffer once it is used up. */
static gboolean
zraw_read (VsInBuf *b, const char *path, GError **error)
{
  ssize_t n;
  do
    n = read (b->fd, b->zraw, b->zraw_cap);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    {
      int e = errno;
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: read failed: %s", path, g_strerror (e));
      return FALSE;
    }
  b->zraw_eof = n == 0;
  b->z->next_in = b->zraw;
  b->z->avail_in = (uInt) n;
  return TRUE;
}

gboolean
inbuf_start_gzip (VsInBuf *b, const char *path, GError **error)
{
  g_return_val_if_fail (b->z == NULL, FALSE);
  /* The compressed bytes read so far start the raw buffer. */
  gsize n = (gsize) (b->end - b->p);
  b->zraw_cap = MAX ((gsize) VS_INBUF_SIZE, n);
  b->zraw = g_malloc (b->zraw_cap);
  memcpy (b->zraw, b->p, n);
  b->zraw_eof = b->eof || b->fd < 0;
  b->z = g_new0 (z_stream, 1);
  b->z->next_in = b->zraw;
  b->z->avail_in = (uInt) n;
  if (inflateInit2 (b->z, 16 + MAX_WBITS) != Z_OK) /* 16 +: the gzip wrapper */
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: gzip: cannot start zlib", path);
      return FALSE;
    }
  if (b->own == NULL)
    {
      b->cap = VS_INBUF_SIZE;
      b->own = g_malloc (b->cap);
    }
  b->p = b->end = b->data = b->own;
  b->dropped = 0;   /* offsets count the inflated stream */
  b->hash_from = b->p;
  b->eof = FALSE;
  return TRUE;
}

/* inbuf_fill for gzip input: inflates into the buffer after its LEFT
 * unread bytes until some come out or the stream ends. */
static gboolean
inbuf_fill_gzip (VsInBuf *b, gsize left, const char *path, GError **error)
{
  z_stream *z = b->z;
  for (;;)
    {
      if (z->avail_in == 0 && !b->zraw_eof && !zraw_read (b, path, error))
        return FALSE;
      z->next_out = b->own + left;
      z->avail_out = (uInt) MIN (b->cap - left, (gsize) G_MAXUINT32);
      int rc = inflate (z, Z_NO_FLUSH);
      gsize got = (gsize) (z->next_out - (b->own + left));
      left += got;
      b->end = b->own + left;
      if (rc == Z_STREAM_END)
        {
          /* Another member may follow (cat a.gz b.gz), or nothing. */
          if (z->avail_in == 0 && !b->zraw_eof && !zraw_read (b, path, error))
            return FALSE;
          if (z->avail_in == 0)
            {
              b->eof = TRUE;
              return TRUE;
            }
          inflateReset (z);
        }
      else if ((rc == Z_OK || rc == Z_BUF_ERROR) && z->avail_in == 0 && b->zraw_eof && got == 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                       "%s: gzip: truncated (the compressed data ends early)", path);
          return FALSE;
        }
      else if (rc != Z_OK && rc != Z_BUF_ERROR)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: gzip: corrupt data (%s)", path,
                       z->msg ? z->msg : "inflate failed");
          return FALSE;
        }
      if (got > 0 || left == b->cap)
        return TRUE;
    }
}
