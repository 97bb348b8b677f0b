/* trace.c — the top of the trace room: trace_open (which format a file
 * holds, by its first bytes: binary, gzip, JSON Lines, and the messages
 * for what is not a trace) and the writers (temporary file + rename, the
 * JSONL or binary encoding). It calls down into the formats (trace-bin.c,
 * trace-jsonl.c) and the files below them (trace-reader.c,
 * trace-header.c, trace-inbuf.c, trace-common.c); none of them calls it. */
#include "trace/trace-priv.h"
#include "base/outfile.h"
#include "base/xxh64.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

VsTraceReader *
trace_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  VsInBuf in = { .fd = -1 };
  gboolean is_stdin = strcmp (path, "-") == 0;
  if (is_stdin)
    in.fd = 0;
  else
    {
      in.fd = open (path, O_RDONLY | O_CLOEXEC);
      if (in.fd < 0)
        {
          int e = errno;
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: cannot open: %s", path, g_strerror (e));
          return NULL;
        }
      in.close_fd = TRUE;
      struct stat st;
      if (fstat (in.fd, &st) == 0 && S_ISDIR (st.st_mode))
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: is a directory, not a trace", path);
          inbuf_close (&in);
          return NULL;
        }
    }
  /* Enough bytes to tell the encodings apart: the binary magic, a gzip
   * stream (read through, then told apart again), a UTF-8 byte order mark
   * (skipped: editors on Windows write one), else JSON Lines. */
  for (int round = 0;; round++)
    {
      while (!in.eof && (gsize) (in.end - in.p) < 8)
        if (!inbuf_fill (&in, path, error))
          {
            inbuf_close (&in);
            return NULL;
          }
      if (round == 0 && in.end - in.p >= 2 && in.p[0] == 0x1f && in.p[1] == 0x8b)
        {
          if (!inbuf_start_gzip (&in, path, error))
            {
              inbuf_close (&in);
              return NULL;
            }
          continue;
        }
      break;
    }
  gboolean gz = in.z != NULL;
  if (in.end - in.p >= 3 && memcmp (in.p, "\xef\xbb\xbf", 3) == 0)
    {
      in.p += 3;
      while (!in.eof && (gsize) (in.end - in.p) < 8)
        if (!inbuf_fill (&in, path, error))
          {
            inbuf_close (&in);
            return NULL;
          }
    }
  gsize n = (gsize) (in.end - in.p);
  if (n >= 8 && memcmp (in.p, VS_BIN_MAGIC, 8) == 0)
    return trace_bin_open (path, &in, error);
  gsize i = 0;
  while (i < n && g_ascii_isspace (in.p[i]))
    i++;
  if (n == 0)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: empty %s, not a trace", path,
                 gz ? "gzip stream" : "file");
  else if (i < n && in.p[i] == '{')
    return trace_jsonl_open (path, &in, error);
  else if (i == n && in.eof)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: empty file, not a trace", path);
  else if (i == n)
    return trace_jsonl_open (path, &in, error);
  else if (n < 8 && in.eof && memcmp (in.p, VS_BIN_MAGIC, n) == 0)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: truncated binary trace (%zu bytes)", path, n);
  else if (n >= 4 && (memcmp (in.p, "\xff\xfe", 2) == 0 || memcmp (in.p, "\xfe\xff", 2) == 0))
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace: the file is UTF-16 text (traces are UTF-8)", path);
  else if (n >= 4 && (memcmp (in.p, "BZh", 3) == 0 || memcmp (in.p, "\xfd" "7zXZ", 5) == 0
                      || memcmp (in.p, "\x28\xb5\x2f\xfd", 4) == 0 || memcmp (in.p, "PK\x03\x04", 4) == 0))
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace: the file is compressed with %s, which vramsim does not read "
                 "(gzip it, or decompress it first)", path,
                 in.p[0] == 'B' ? "bzip2" : in.p[0] == 0xfd ? "xz" : in.p[0] == 'P' ? "zip" : "zstd");
  else if (g_str_has_suffix (path, ".nsys-rep") || g_str_has_suffix (path, ".qdrep"))
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace: an Nsight Systems report is read from its SQLite export: "
                 "nsys export --type sqlite -o report.sqlite %s, then vramsim convert report.sqlite OUT.vtrace "
                 "(docs/importers.md)", path, path);
  else if (n >= 16 && memcmp (in.p, "SQLite format 3", 16) == 0)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace: an SQLite database (an Nsight Systems export?) is imported first: "
                 "vramsim convert %s OUT.vtrace (docs/importers.md)", path, path);
  else if (n >= 2 && in.p[0] == 0x80 && in.p[1] >= 2 && in.p[1] <= 5)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace: a Python pickle (a PyTorch memory snapshot?) is imported first: "
                 "vramsim convert %s OUT.vtrace (docs/importers.md)", path, path);
  else
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace (neither JSON Lines nor the binary format%s)", path,
                 gz ? ", once gunzipped" : "");
  inbuf_close (&in);
  return NULL;
}

/* ---- writers ---- */

#define VS_OUT_FLUSH (1u << 20)

struct _VsTraceWriter {
  VsTraceFormat format;
  int fd;
  char *path;
  VsOutFile *out;       /* base/outfile.h: temporary + rename, or direct */
  GString *text;        /* JSONL pending output */
  VsBinEnc enc;         /* binary encoder (its out buffer is the pending output) */
  /* Binary: version 4's end record (docs/trace-format.md). */
  VsTraceSum sum;       /* what the events written sum to */
  VsXxh64 xxh;          /* the checksum of the bytes from the first record */
  gsize hashed;         /* bytes of enc.out in xxh already (the header's count as taken) */
  guint64 written;      /* bytes written to the file */
};

/* The summary, as the end record holds it after the count: opt first_t,
 * uv last_end, uv n_marks, the marks (docs/trace-format.md). */
static void
sum_encode (const VsTraceSum *s, VsOutBuf *o)
{
  bin_put_uv (o, s->first_t == G_MAXUINT64 ? 0 : s->first_t + 1);
  bin_put_uv (o, s->last_end);
  guint n;
  g_autofree gpointer *all = trace_sum_sorted (s, &n);
  bin_put_uv (o, n);
  for (guint i = 0; i < n; i++)
    {
      const VsMarkSum *m = all[i];
      gsize len = strlen (m->name);
      bin_put_uv (o, m->tid);
      bin_put_uv (o, len);
      bin_put_bytes (o, m->name, len);
      bin_put_uv (o, m->count);
      bin_put_uv (o, m->last_t);
    }
}

/* The bytes pending in the binary encoder's buffer taken into the checksum. */
static void
writer_hash (VsTraceWriter *w)
{
  vs_xxh64_update (&w->xxh, w->enc.out.data + w->hashed, w->enc.out.len - w->hashed);
  w->hashed = w->enc.out.len;
}

static gboolean
write_all (VsTraceWriter *w, const void *data, gsize len, GError **error)
{
  const guint8 *p = data;
  while (len > 0)
    {
      ssize_t n = write (w->fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: write failed: %s", w->path, g_strerror (e));
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}

static gboolean
writer_flush (VsTraceWriter *w, GError **error)
{
  if (w->format == VS_FORMAT_JSONL)
    {
      gboolean ok = write_all (w, w->text->str, w->text->len, error);
      g_string_truncate (w->text, 0);
      return ok;
    }
  writer_hash (w);
  gboolean ok = write_all (w, w->enc.out.data, w->enc.out.len, error);
  w->written += w->enc.out.len;
  w->enc.out.len = 0;
  w->hashed = 0;
  return ok;
}

VsTraceWriter *
trace_writer_new (const char *path, VsTraceFormat format, const VsTraceHeader *header, GError **error)
{
  g_return_val_if_fail (path != NULL && header != NULL, NULL);
  gboolean is_stdout = strcmp (path, "-") == 0;
  if (format == VS_FORMAT_AUTO)
    format = g_str_has_suffix (path, ".vtrace") ? VS_FORMAT_BINARY : VS_FORMAT_JSONL;
  if (is_stdout && format == VS_FORMAT_BINARY)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "the binary format cannot be written to stdout");
      return NULL;
    }
  g_autofree char *line = trace_header_to_line (header);
  /* The writer refuses what its reader would (docs/trace-format.md). */
  if (format == VS_FORMAT_BINARY && strlen (line) > VS_BIN_MAX_HEADER)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: the header is %zu bytes of JSON; the binary format holds at most %u (1 MiB): write JSONL "
                   "instead", path, strlen (line), VS_BIN_MAX_HEADER);
      return NULL;
    }
  VsTraceWriter *w = g_new0 (VsTraceWriter, 1);
  w->format = format;
  w->path = g_strdup (path);
  GError *oe = NULL;
  w->out = outfile_open (path, NULL, &oe);
  if (w->out == NULL)
    {
      g_set_error_literal (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, oe->message);
      g_error_free (oe);
      g_free (w->path);
      g_free (w);
      return NULL;
    }
  w->fd = outfile_fd (w->out);
  if (format == VS_FORMAT_JSONL)
    {
      w->text = g_string_sized_new (VS_OUT_FLUSH + 4096);
      g_string_append (w->text, line);
      g_string_append_c (w->text, '\n');
    }
  else
    {
      bin_enc_init (&w->enc, TRUE);
      guint8 head[16];
      memcpy (head, VS_BIN_MAGIC, 8);
      guint32 ver = GUINT32_TO_LE (VS_BIN_VERSION), len = GUINT32_TO_LE ((guint32) strlen (line));
      memcpy (head + 8, &ver, 4);
      memcpy (head + 12, &len, 4);
      bin_put_bytes (&w->enc.out, head, 16);
      bin_put_bytes (&w->enc.out, line, strlen (line));
      w->hashed = w->enc.out.len;   /* the checksum starts at the first record */
      vs_xxh64_init (&w->xxh, 0);
      trace_sum_init (&w->sum);
    }
  return w;
}

gboolean
trace_writer_write (VsTraceWriter *w, const VsEvent *ev, GError **error)
{
  g_return_val_if_fail (w != NULL && ev != NULL, FALSE);
  if (w->format == VS_FORMAT_JSONL)
    {
      trace_json_append_event (w->text, ev);
      g_string_append_c (w->text, '\n');
      return w->text->len < VS_OUT_FLUSH || writer_flush (w, error);
    }
  const char *str = ev->op == VS_OP_KERNEL || ev->op == VS_OP_MARK ? ev->name : ev->op == VS_OP_ALLOC ? ev->tag : NULL;
  if (G_UNLIKELY (str != NULL && strlen (str) > VS_BIN_MAX_STRING))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: event %" G_GUINT64_FORMAT ": the %s is %zu bytes; the binary format holds strings of at "
                   "most %u (1 MiB): write JSONL instead", w->path, w->enc.count,
                   ev->op == VS_OP_ALLOC ? "tag" : "name", strlen (str), VS_BIN_MAX_STRING);
      return FALSE;
    }
  bin_enc_event (&w->enc, ev);
  trace_sum_note (&w->sum, ev);
  return w->enc.out.len < VS_OUT_FLUSH || writer_flush (w, error);
}

static void
writer_free (VsTraceWriter *w)
{
  if (w->text)
    g_string_free (w->text, TRUE);
  if (w->format == VS_FORMAT_BINARY)
    {
      bin_enc_clear (&w->enc);
      trace_sum_clear (&w->sum);
    }
  g_free (w->path);
  g_free (w);
}

gboolean
trace_writer_finish (VsTraceWriter *w, GError **error)
{
  g_return_val_if_fail (w != NULL, FALSE);
  if (w->format == VS_FORMAT_BINARY)
    {
      /* 0xFE, the count, the summary, the checksum of everything from
       * the first record to here, the 0xFE's offset, "VEND". */
      guint64 at = w->written + w->enc.out.len;
      bin_put_bytes (&w->enc.out, (const guint8[]) { VS_BIN_END }, 1);
      bin_put_uv (&w->enc.out, w->enc.count);
      sum_encode (&w->sum, &w->enc.out);
      writer_hash (w);
      guint64 tail[2] = { GUINT64_TO_LE (vs_xxh64_digest (&w->xxh)), GUINT64_TO_LE (at) };
      bin_put_bytes (&w->enc.out, tail, 16);
      bin_put_bytes (&w->enc.out, "VEND", 4);
      w->hashed = w->enc.out.len;
    }
  gboolean ok = writer_flush (w, error);
  GError *oe = NULL;
  if (ok && !(ok = outfile_commit (g_steal_pointer (&w->out), &oe)))
    {
      g_set_error_literal (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, oe->message);
      g_error_free (oe);
    }
  else if (!ok)
    outfile_abort (g_steal_pointer (&w->out));
  writer_free (w);
  return ok;
}

void
trace_writer_abort (VsTraceWriter *w)
{
  if (w == NULL)
    return;
  outfile_abort (g_steal_pointer (&w->out));
  writer_free (w);
}

char *
trace_event_to_json_line (const VsEvent *ev)
{
  g_return_val_if_fail (ev != NULL, NULL);
  GString *s = g_string_new (NULL);
  trace_json_append_event (s, ev);
  return g_string_free (s, FALSE);
}
