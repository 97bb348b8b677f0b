/* trace.c — the trace reader interface: header, opening by magic, the
 * validation every reader shares (SPEC section 3), and the writers' file
 * handling (temporary file + rename). Encodings live in trace-jsonl.c,
 * trace-bin.c and trace-buf.c. */
#include "trace/trace-priv.h"
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

G_DEFINE_QUARK (vs-trace-error-quark, trace_error)

/* ---- fields ---- */

const char *const trace_field_names[VS_F_COUNT] = {
  "t", "op", "tid", "host_ns", "id", "bytes", "kind", "stream", "tag", "dir",
  "src", "dst", "async", "dur", "name", "reads", "writes", "touches",
  "compute_ns", "scope", "event", "to",
  "flops", "precision", "grid", "block", "regs", "smem", "collective",
};

#define F VS_FB
const guint32 trace_op_fields[VS_OP_COUNT] = {
  [VS_OP_ALLOC] = F (VS_F_ID) | F (VS_F_BYTES) | F (VS_F_KIND) | F (VS_F_STREAM) | F (VS_F_TAG),
  [VS_OP_FREE] = F (VS_F_ID) | F (VS_F_STREAM),
  [VS_OP_COPY] = F (VS_F_DIR) | F (VS_F_SRC) | F (VS_F_DST) | F (VS_F_BYTES) | F (VS_F_STREAM)
                 | F (VS_F_ASYNC) | F (VS_F_DUR),
  [VS_OP_MEMSET] = F (VS_F_DST) | F (VS_F_BYTES) | F (VS_F_STREAM) | F (VS_F_ASYNC) | F (VS_F_DUR),
  [VS_OP_KERNEL] = F (VS_F_NAME) | F (VS_F_STREAM) | F (VS_F_DUR) | F (VS_F_BYTES) | F (VS_F_COMPUTE_NS)
                   | F (VS_F_READS) | F (VS_F_WRITES) | F (VS_F_TOUCHES) | VS_F_SHAPE | F (VS_F_COLLECTIVE),
  [VS_OP_SYNC] = F (VS_F_SCOPE) | F (VS_F_STREAM) | F (VS_F_EVENT),
  [VS_OP_EVENT_RECORD] = F (VS_F_EVENT) | F (VS_F_STREAM),
  [VS_OP_STREAM_WAIT] = F (VS_F_STREAM) | F (VS_F_EVENT),
  [VS_OP_PREFETCH] = F (VS_F_ID) | F (VS_F_BYTES) | F (VS_F_TO) | F (VS_F_STREAM),
  [VS_OP_MARK] = F (VS_F_NAME),
  [VS_OP_EMPTY_CACHE] = F (VS_F_STREAM),
};
const guint32 trace_op_required[VS_OP_COUNT] = {
  [VS_OP_ALLOC] = F (VS_F_ID) | F (VS_F_BYTES) | F (VS_F_KIND),
  [VS_OP_FREE] = F (VS_F_ID),
  [VS_OP_COPY] = F (VS_F_DIR) | F (VS_F_BYTES),
  [VS_OP_MEMSET] = F (VS_F_DST) | F (VS_F_BYTES),
  [VS_OP_KERNEL] = F (VS_F_NAME) | F (VS_F_DUR),
  [VS_OP_SYNC] = F (VS_F_SCOPE),
  [VS_OP_EVENT_RECORD] = F (VS_F_EVENT),
  [VS_OP_STREAM_WAIT] = F (VS_F_EVENT),
  [VS_OP_PREFETCH] = F (VS_F_ID) | F (VS_F_BYTES) | F (VS_F_TO),
  [VS_OP_MARK] = F (VS_F_NAME),
};
#undef F


/* ---- input buffer ---- */

#define VS_INBUF_SIZE (1u << 20)

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

/* ---- header ---- */

VsTraceHeader *
trace_header_new (void)
{
  VsTraceHeader *h = g_new0 (VsTraceHeader, 1);
  h->version = 1;
  h->time_unit = g_strdup ("ns");
  return h;
}

VsTraceHeader *
trace_header_copy (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  VsTraceHeader *c = g_new0 (VsTraceHeader, 1);
  c->version = h->version;
  c->time_unit = g_strdup (h->time_unit);
  c->device = g_strdup (h->device);
  c->config = g_strdup (h->config);
  c->tool = g_strdup (h->tool);
  c->extra = h->extra ? cJSON_Duplicate (h->extra, TRUE) : NULL;
  c->allocations = h->allocations;
  return c;
}

static const char *const allocations_names[VS_ALLOCS_COUNT] = { NULL, "tensor", "driver" };

const char *
trace_allocations_name (VsAllocations a)
{
  return (guint) a < VS_ALLOCS_COUNT ? allocations_names[a] : NULL;
}

VsAllocations
trace_header_allocations (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, VS_ALLOCS_UNSPECIFIED);
  return h->allocations;
}

void
trace_header_set_allocations (VsTraceHeader *h, VsAllocations a)
{
  g_return_if_fail (h != NULL && (guint) a < VS_ALLOCS_COUNT);
  h->allocations = a;
}

const cJSON *
trace_header_allocator_settings (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  const cJSON *v = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "allocator_settings") : NULL;
  return cJSON_IsObject (v) ? v : NULL;
}

void
trace_header_set_allocator_settings (VsTraceHeader *h, cJSON *settings)
{
  g_return_if_fail (h != NULL && (settings == NULL || cJSON_IsObject (settings)));
  if (h->extra == NULL)
    h->extra = cJSON_CreateObject ();
  cJSON_DeleteItemFromObjectCaseSensitive (h->extra, "allocator_settings");
  if (settings != NULL)
    cJSON_AddItemToObject (h->extra, "allocator_settings", settings);
}

void
trace_header_free (VsTraceHeader *h)
{
  if (h == NULL)
    return;
  g_free (h->time_unit);
  g_free (h->device);
  g_free (h->config);
  g_free (h->tool);
  cJSON_Delete (h->extra);
  g_free (h);
}

static gboolean
header_string (const cJSON *obj, const char *key, char **out, const char *where, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
  if (v == NULL || cJSON_IsNull (v))
    return TRUE;
  if (!cJSON_IsString (v))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'capture.%s' must be a string", where, key);
      return FALSE;
    }
  *out = g_strdup (v->valuestring);
  return TRUE;
}

VsTraceHeader *
trace_header_from_json (const cJSON *obj, const char *where, GError **error)
{
  if (!cJSON_IsObject (obj))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                   "%s: not a vramsim trace (the header is not a JSON object)", where);
      return NULL;
    }
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive (obj, "vramsim_trace");
  if (ver == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                   "%s: not a vramsim trace (the header has no \"vramsim_trace\" field)", where);
      return NULL;
    }
  double version = cJSON_IsNumber (ver) ? ver->valuedouble : 0;
  if (!(version >= 1) || version != floor (version) || !isfinite (version))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'vramsim_trace' must be a positive integer (the format version)", where);
      return NULL;
    }
  if (version > 1)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: trace format version %g is newer than this vramsim reads (1); upgrade vramsim",
                   where, version);
      return NULL;
    }
  const cJSON *unit = cJSON_GetObjectItemCaseSensitive (obj, "time_unit");
  if (unit != NULL && !(cJSON_IsString (unit) && strcmp (unit->valuestring, "ns") == 0))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'time_unit' must be \"ns\" (the only unit vramsim reads)", where);
      return NULL;
    }
  const cJSON *cap = cJSON_GetObjectItemCaseSensitive (obj, "capture");
  if (cap != NULL && !cJSON_IsNull (cap) && !cJSON_IsObject (cap))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'capture' must be an object", where);
      return NULL;
    }
  g_autoptr (VsTraceHeader) h = g_new0 (VsTraceHeader, 1);
  h->version = 1;
  h->time_unit = g_strdup ("ns");
  if (cJSON_IsObject (cap)
      && !(header_string (cap, "device", &h->device, where, error)
           && header_string (cap, "config", &h->config, where, error)
           && header_string (cap, "tool", &h->tool, where, error)))
    return NULL;
  const cJSON *allocs = cJSON_GetObjectItemCaseSensitive (obj, "allocations");
  if (allocs != NULL && !cJSON_IsNull (allocs))
    {
      int a = cJSON_IsString (allocs) ? (strcmp (allocs->valuestring, "tensor") == 0   ? VS_ALLOCS_TENSOR
                                         : strcmp (allocs->valuestring, "driver") == 0 ? VS_ALLOCS_DRIVER
                                                                                       : -1)
                                      : -1;
      if (a < 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                       "%s: header field 'allocations' must be \"tensor\" or \"driver\"", where);
          return NULL;
        }
      h->allocations = (VsAllocations) a;
    }
  const cJSON *sizes = cJSON_GetObjectItemCaseSensitive (obj, "allocation_sizes");
  if (sizes != NULL && !cJSON_IsNull (sizes)
      && !(cJSON_IsString (sizes)
           && (strcmp (sizes->valuestring, "block") == 0 || strcmp (sizes->valuestring, "request") == 0)))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'allocation_sizes' must be \"block\" or \"request\"", where);
      return NULL;
    }
  const cJSON *settings = cJSON_GetObjectItemCaseSensitive (obj, "allocator_settings");
  if (settings != NULL && !cJSON_IsNull (settings) && !cJSON_IsObject (settings))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'allocator_settings' must be an object", where);
      return NULL;
    }
  h->extra = cJSON_Duplicate (obj, TRUE);
  return g_steal_pointer (&h);
}

gsize
trace_json_nul_escape (const char *text, gsize len)
{
  /* An escape is a backslash preceded by an even number of backslashes. */
  const char *end = text + len;
  for (const char *p = text; (p = memchr (p, '\\', (gsize) (end - p))) != NULL; p++)
    if (end - p >= 6 && p[1] == 'u' && memcmp (p + 2, "0000", 4) == 0)
      {
        const char *q = p;
        while (q > text && q[-1] == '\\')
          q--;
        if ((p - q) % 2 == 0)
          return (gsize) (p - text);
      }
  return G_MAXSIZE;
}

/* A key of OBJ's members that another member repeats, or NULL. */
static const char *
duplicate_key (const cJSON *obj)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (const cJSON *a = obj->child; a; a = a->next)
    if (a->string && !g_hash_table_add (seen, a->string))
      return a->string;
  return NULL;
}

VsTraceHeader *
trace_header_from_json_text (const cJSON *obj, const char *text, gsize len, const char *where, GError **error)
{
  /* cJSON ends a string at an escaped NUL without a word ("a\u0000b" reads
   * as "a"): refuse it, as event strings are. */
  if (trace_json_nul_escape (text, len) != G_MAXSIZE)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: the header holds a NUL character (\\u0000) in a string", where);
      return NULL;
    }
  /* A key given twice is an error, as in events and configs. */
  if (cJSON_IsObject (obj))
    {
      const char *dup = duplicate_key (obj);
      const cJSON *cap = cJSON_GetObjectItemCaseSensitive (obj, "capture");
      const char *dup_cap = dup == NULL && cJSON_IsObject (cap) ? duplicate_key (cap) : NULL;
      if (dup != NULL || dup_cap != NULL)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: header field '%s%s' appears twice", where,
                       dup_cap ? "capture." : "", dup ? dup : dup_cap);
          return NULL;
        }
    }
  return trace_header_from_json (obj, where, error);
}

cJSON *
trace_header_to_json (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "vramsim_trace", h->version ? h->version : 1);
  cJSON_AddStringToObject (o, "time_unit", "ns");
  const cJSON *xcap = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "capture") : NULL;
  if (h->device || h->config || h->tool || cJSON_IsObject (xcap))
    {
      cJSON *cap = cJSON_AddObjectToObject (o, "capture");
      if (h->device)
        cJSON_AddStringToObject (cap, "device", h->device);
      if (h->config)
        cJSON_AddStringToObject (cap, "config", h->config);
      if (h->tool)
        cJSON_AddStringToObject (cap, "tool", h->tool);
      if (cJSON_IsObject (xcap))
        for (const cJSON *it = xcap->child; it; it = it->next)
          if (strcmp (it->string, "device") != 0 && strcmp (it->string, "config") != 0
              && strcmp (it->string, "tool") != 0 && !cJSON_GetObjectItemCaseSensitive (cap, it->string))
            cJSON_AddItemToObject (cap, it->string, cJSON_Duplicate (it, TRUE));
    }
  if (trace_allocations_name (h->allocations) != NULL)
    cJSON_AddStringToObject (o, "allocations", trace_allocations_name (h->allocations));
  if (h->extra)
    for (const cJSON *it = h->extra->child; it; it = it->next)
      if (it->string && strcmp (it->string, "vramsim_trace") != 0 && strcmp (it->string, "time_unit") != 0
          && strcmp (it->string, "capture") != 0 && strcmp (it->string, "allocations") != 0
          && !cJSON_GetObjectItemCaseSensitive (o, it->string))
        cJSON_AddItemToObject (o, it->string, cJSON_Duplicate (it, TRUE));
  return o;
}

/* JSON in the style of the trace lines: `{"k": v, "k2": v2}`, one line. */
static void
append_json_value (GString *s, const cJSON *v)
{
  if (cJSON_IsObject (v) || cJSON_IsArray (v))
    {
      gboolean obj = cJSON_IsObject (v);
      g_string_append_c (s, obj ? '{' : '[');
      for (const cJSON *it = v->child; it; it = it->next)
        {
          if (it != v->child)
            g_string_append (s, ", ");
          if (obj)
            {
              trace_json_append_string (s, it->string);
              g_string_append (s, ": ");
            }
          append_json_value (s, it);
        }
      g_string_append_c (s, obj ? '}' : ']');
    }
  else if (cJSON_IsString (v))
    trace_json_append_string (s, v->valuestring);
  else if (cJSON_IsNumber (v))
    {
      double d = v->valuedouble;
      if (d > -9e15 && d < 9e15 && d == (double) (gint64) d)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64) d);
      else
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.17g", d));
        }
    }
  else if (cJSON_IsTrue (v))
    g_string_append (s, "true");
  else if (cJSON_IsFalse (v))
    g_string_append (s, "false");
  else
    g_string_append (s, "null");
}

char *
trace_header_to_line (const VsTraceHeader *h)
{
  cJSON *o = trace_header_to_json (h);
  GString *s = g_string_new (NULL);
  append_json_value (s, o);
  cJSON_Delete (o);
  return g_string_free (s, FALSE);
}

/* ---- readers ---- */

static gsize trace_max_live (void);

void
trace_reader_init (VsTraceReader *r, const VsTraceReaderClass *klass, const char *path)
{
  r->klass = klass;
  r->path = g_strdup (path);
  r->validate = TRUE;
  r->max_live = trace_max_live ();
  slotmap_init (&r->live);
  u64map_init (&r->last_t);
}

void
trace_reader_init_validated (VsTraceReader *r, const VsTraceReaderClass *klass, const char *path)
{
  r->klass = klass;
  r->path = g_strdup (path);
  r->validate = FALSE;
  r->max_live = trace_max_live ();
  u64map_init (&r->last_t);   /* (r->live stays zero: slotmap_clear takes it) */
}

void
trace_reader_fail (VsTraceReader *r, GError **error, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (r->line > 0)
    g_set_error (error, VS_TRACE_ERROR, code, "%s:%" G_GUINT64_FORMAT ": %s", r->path, r->line, msg);
  else
    g_set_error (error, VS_TRACE_ERROR, code, "%s: event %" G_GUINT64_FORMAT ": %s", r->path, r->count, msg);
}

#define FAIL(...) (trace_reader_fail (r, error, VS_TRACE_ERROR_INVALID, __VA_ARGS__), FALSE)

/* How many allocations may be live at once: a reader and a replay hold
 * about 300 bytes for each (docs/performance.md, "Resource limits"), so
 * half of physical memory, rather than leaving a huge trace to the
 * kernel's out-of-memory killer. VRAMSIM_MAX_LIVE overrides it. */
static gsize
trace_max_live (void)
{
  static gsize max;
  if (g_once_init_enter (&max))
    {
      gsize m = 0;
      const char *env = g_getenv ("VRAMSIM_MAX_LIVE");
      if (env != NULL && *env != '\0')
        m = (gsize) g_ascii_strtoull (env, NULL, 10);
      if (m == 0)
        {
          long pages = sysconf (_SC_PHYS_PAGES), size = sysconf (_SC_PAGESIZE);
          guint64 mem = pages > 0 && size > 0 ? (guint64) pages * (guint64) size : (guint64) 1 << 34;
          m = (gsize) MAX ((guint64) 1 << 20, mem / 2 / 300);
        }
      g_once_init_leave (&max, m);
    }
  return max;
}

static gboolean
check_live (VsTraceReader *r, guint64 id, int field, GError **error)
{
  if (!trace_live_has (r, id))
    return FAIL ("field '%s': allocation %" G_GUINT64_FORMAT " is not live", trace_field_names[field], id);
  return TRUE;
}

static gboolean
check_list (VsTraceReader *r, const guint64 *ids, guint32 n, int field, GError **error)
{
  for (guint32 i = 0; i < n; i++)
    if (!check_live (r, ids[i], field, error))
      return FALSE;
  return TRUE;
}

/* A grid or block: all three absent (0) or all positive. */
static gboolean
check_dim3 (VsTraceReader *r, const guint32 *d, int field, GError **error)
{
  if ((d[0] == 0 || d[1] == 0 || d[2] == 0) && (d[0] | d[1] | d[2]) != 0)
    return FAIL ("field '%s' must be three positive integers [x, y, z] (got [%u, %u, %u])", trace_field_names[field],
                 d[0], d[1], d[2]);
  return TRUE;
}

/* The shape and collective of a kernel (SPEC 3); the JSONL reader has
 * checked its own, the binary careful path comes here. */
static gboolean
check_kernel_extras (VsTraceReader *r, const VsEvent *ev, GError **error)
{
  const VsKernelShape *k = ev->shape;
  if (k != NULL)
    {
      if (k->precision >= VS_PREC_COUNT)
        return FAIL ("field 'precision': unknown precision %u", k->precision);
      if (k->flops != VS_NONE && k->flops > VS_TRACE_INT_MAX)
        return FAIL ("field 'flops' is out of range (%" G_GUINT64_FORMAT ")", k->flops);
      if (!check_dim3 (r, k->grid, VS_F_GRID, error) || !check_dim3 (r, k->block, VS_F_BLOCK, error))
        return FALSE;
    }
  const VsCollective *c = ev->collective;
  if (c != NULL)
    {
      if (c->kind >= VS_COLL_COUNT)
        return FAIL ("field 'collective': unknown kind %u", c->kind);
      if (c->ranks == 0)
        return FAIL ("field 'collective': 'ranks' must be at least 1");
      if (c->bytes > VS_TRACE_INT_MAX)
        return FAIL ("field 'collective': 'bytes' is out of range (%" G_GUINT64_FORMAT ")", c->bytes);
      if (c->group > VS_GROUP_ID_MAX)
        return FAIL ("field 'collective.group.id' is out of range (%" G_GUINT64_FORMAT "; at most 2^53 - 1 = %"
                     G_GUINT64_FORMAT ")", c->group, VS_GROUP_ID_MAX);
      if (c->role >= VS_ROLE_COUNT)
        return FAIL ("field 'collective.group.role': unknown role %u", c->role);
      if (c->group == 0 && c->role != VS_ROLE_NONE)
        return FAIL ("field 'collective.group': a role (\"%s\") needs the group's id", event_role_name (c->role));
      if (c->group != 0 && !trace_group_check (r, c, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- communicators ---- */

/* What the first collective of a group said. The id is the table's key. */
typedef struct {
  guint64 id;
  guint32 ranks;
  guint8 role;
  gboolean by_line;   /* where is a JSONL line, else an event index */
  guint64 where;
} TraceGroup;

gboolean
trace_group_agrees (VsTraceReader *r, const VsCollective *c)
{
  if (G_UNLIKELY (r->groups == NULL))
    r->groups = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  const TraceGroup *g = g_hash_table_lookup (r->groups, &c->group);
  if (g != NULL)
    return g->ranks == c->ranks && g->role == c->role;
  if (g_hash_table_size (r->groups) >= VS_MAX_GROUPS)
    return FALSE;
  TraceGroup *n = g_new (TraceGroup, 1);
  *n = (TraceGroup) { c->group, c->ranks, c->role, r->line > 0, r->line > 0 ? r->line : r->count };
  g_hash_table_insert (r->groups, &n->id, n);
  return TRUE;
}

static const char *
role_or_none (guint role)
{
  return role == VS_ROLE_NONE ? "none" : event_role_name (role);
}

gboolean
trace_group_check (VsTraceReader *r, const VsCollective *c, GError **error)
{
  if (trace_group_agrees (r, c))
    return TRUE;
  const TraceGroup *g = g_hash_table_lookup (r->groups, &c->group);
  if (g == NULL)
    return FAIL ("field 'collective.group': more than %u communicators in one trace (each is remembered to check "
                 "its size; a job has tens)", VS_MAX_GROUPS);
  g_autofree char *first = g->by_line ? g_strdup_printf ("line %" G_GUINT64_FORMAT, g->where)
                                      : g_strdup_printf ("event %" G_GUINT64_FORMAT, g->where);
  if (g->ranks != c->ranks)
    return FAIL ("field 'collective.ranks': group %" G_GUINT64_FORMAT " has %u ranks here but %u at %s (a "
                 "communicator has one size: give another group id to another communicator)",
                 c->group, c->ranks, g->ranks, first);
  return FAIL ("field 'collective.group.role': group %" G_GUINT64_FORMAT " has role %s here but %s at %s (a "
               "communicator has one role)", c->group, role_or_none (c->role), role_or_none (g->role), first);
}

gboolean
trace_job_check (VsTraceReader *r, const VsCollective *c, GError **error)
{
  if (trace_job_fits (r, c))
    return TRUE;
  g_autofree char *which = c->group != 0 ? g_strdup_printf ("group %" G_GUINT64_FORMAT " has", c->group)
                                         : g_strdup ("the collective's group has");
  return FAIL ("field 'collective.ranks': %s %u ranks, more than the job's %u (network.ranks): a group is part "
               "of its job (set network.ranks to the job's size, or network.%s to resize this group)",
               which, c->ranks, r->job_ranks, c->role != VS_ROLE_NONE ? event_role_name (c->role) : "dp");
}

void
trace_reader_set_job (VsTraceReader *r, guint32 ranks, guint32 resized_roles)
{
  g_return_if_fail (r != NULL);
  r->job_ranks = ranks;
  r->job_resized = resized_roles;
}

gboolean
trace_validate (VsTraceReader *r, const VsEvent *ev, guint32 present, GError **error)
{
  if (ev->op >= VS_OP_COUNT)
    return FAIL ("field 'op': unknown op %u", ev->op);
  guint32 required = trace_op_required[ev->op];
  if (ev->op == VS_OP_SYNC && ev->scope == VS_SYNC_STREAM)
    required |= VS_FB (VS_F_STREAM);
  if (ev->op == VS_OP_SYNC && ev->scope == VS_SYNC_EVENT)
    required |= VS_FB (VS_F_EVENT);
  if (ev->op == VS_OP_KERNEL && ev->dur == VS_NONE)
    present &= ~VS_FB (VS_F_DUR);
  guint32 missing = required & ~present;
  if (missing)
    {
      int f = __builtin_ctz (missing);
      if (ev->op == VS_OP_SYNC && (f == VS_F_STREAM || f == VS_F_EVENT))
        return FAIL ("missing field '%s' (required for sync with scope \"%s\")", trace_field_names[f],
                     event_scope_name (ev->scope));
      return FAIL ("missing field '%s' (required for %s)", trace_field_names[f], event_op_name (ev->op));
    }
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      if (ev->kind >= VS_MEM_COUNT)
        return FAIL ("field 'kind': unknown kind %u", ev->kind);
      break;
    case VS_OP_COPY:
      if (ev->dir >= VS_DIR_COUNT)
        return FAIL ("field 'dir': unknown direction %u", ev->dir);
      break;
    case VS_OP_SYNC:
      if (ev->scope >= VS_SYNC_COUNT)
        return FAIL ("field 'scope': unknown scope %u", ev->scope);
      break;
    case VS_OP_PREFETCH:
      if (ev->to >= VS_TO_COUNT)
        return FAIL ("field 'to': unknown destination %u", ev->to);
      break;
    case VS_OP_KERNEL:
      if (G_UNLIKELY (ev->shape != NULL || ev->collective != NULL) && !check_kernel_extras (r, ev, error))
        return FALSE;
      /* fall through */
    case VS_OP_MARK:
      if (ev->name == NULL)
        return FAIL ("missing field 'name' (required for %s)", event_op_name (ev->op));
      break;
    default:
      break;
    }

  /* Time runs forward within each host thread. */
  guint64 prev_t = 0;
  gboolean seen;
  if (ev->tid < VS_SMALL_TIDS)
    {
      seen = r->small_t[ev->tid] != 0;
      prev_t = r->small_t[ev->tid] - 1;
      if (!seen || ev->t >= prev_t)
        r->small_t[ev->tid] = ev->t + 1;
    }
  else
    {
      guint64 *last = u64map_lookup (&r->last_t, (guint64) ev->tid + 1);
      seen = last != NULL;
      if (seen)
        {
          prev_t = *last;
          *last = MAX (*last, ev->t);
        }
      else
        u64map_insert (&r->last_t, (guint64) ev->tid + 1, ev->t);
    }
  if (seen && ev->t < prev_t)
    return FAIL ("field 't': %" G_GUINT64_FORMAT " is earlier than the previous event of thread %u (t %"
                 G_GUINT64_FORMAT ")", ev->t, ev->tid, prev_t);

  /* Allocation ids, tracked in file order. */
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      if (ev->id == 0)
        return FAIL ("field 'id': an allocation id must be positive");
      if (trace_live_has (r, ev->id))
        return FAIL ("field 'id': allocation %" G_GUINT64_FORMAT " is already live", ev->id);
      if (G_UNLIKELY (r->live.len >= r->max_live))
        return FAIL ("%" G_GSIZE_FORMAT " allocations live at once: more than this machine's memory "
                     "can replay (each live allocation costs about 300 bytes; the limit is half of "
                     "physical memory, VRAMSIM_MAX_LIVE overrides it)", r->live.len + 1);
      trace_live_add (r, ev->id);
      break;
    case VS_OP_FREE:
      if (!check_live (r, ev->id, VS_F_ID, error))
        return FALSE;
      trace_live_remove (r, ev->id);
      break;
    case VS_OP_COPY:
      if (ev->src != 0 && !check_live (r, ev->src, VS_F_SRC, error))
        return FALSE;
      if (ev->dst != 0 && !check_live (r, ev->dst, VS_F_DST, error))
        return FALSE;
      break;
    case VS_OP_MEMSET:
      return check_live (r, ev->dst, VS_F_DST, error);
    case VS_OP_KERNEL:
      return check_list (r, ev->reads, ev->n_reads, VS_F_READS, error)
             && check_list (r, ev->writes, ev->n_writes, VS_F_WRITES, error)
             && check_list (r, ev->touches, ev->n_touches, VS_F_TOUCHES, error);
    case VS_OP_PREFETCH:
      return check_live (r, ev->id, VS_F_ID, error);
    default:
      break;
    }
  return TRUE;
}

#undef FAIL

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

const VsTraceHeader *
trace_reader_header (VsTraceReader *r)
{
  return r->header;
}

const char *
trace_reader_path (VsTraceReader *r)
{
  return r->path;
}

int
trace_reader_kernels_named (VsTraceReader *r)
{
  return r->kernels_named == 0 ? -1 : r->kernels_named == 1;
}

guint64
trace_reader_count (VsTraceReader *r)
{
  return r->count;
}

gboolean
trace_next_slow (VsTraceReader *r, VsEvent *ev, GError **error)
{
  r->fast = NULL;
  if (r->failed)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: reading stopped at an earlier error", r->path);
      return FALSE;
    }
  if (r->done)
    return FALSE;
  guint32 present = 0;
  GError *err = NULL;
  if (!r->klass->next (r, ev, &present, &err))
    {
      if (err != NULL)
        {
          r->failed = TRUE;
          g_propagate_error (error, err);
        }
      else
        r->done = TRUE;
      return FALSE;
    }
  ev->index = r->count;
  if (r->validate && !(present & VS_F_VALIDATED) && !trace_validate (r, ev, present, error))
    {
      r->failed = TRUE;
      return FALSE;
    }
  if (G_UNLIKELY (ev->collective != NULL) && !trace_job_check (r, ev->collective, error))
    {
      r->failed = TRUE;
      return FALSE;
    }
  r->count++;
  return TRUE;
}

void
trace_close (VsTraceReader *r)
{
  if (r == NULL)
    return;
  g_free (r->path);
  trace_header_free (r->header);
  slotmap_clear (&r->live);
  u64map_clear (&r->last_t);
  g_clear_pointer (&r->groups, g_hash_table_unref);
  r->klass->close (r);
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
};

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
  gboolean ok = write_all (w, w->enc.out.data, w->enc.out.len, error);
  w->enc.out.len = 0;
  return ok;
}

static void
outbuf_put (VsOutBuf *o, const void *data, gsize len)
{
  if (o->len + len > o->cap)
    {
      o->cap = MAX (o->cap * 2, o->len + len + 256);
      o->data = g_realloc (o->data, o->cap);
    }
  memcpy (o->data + o->len, data, len);
  o->len += len;
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
      outbuf_put (&w->enc.out, head, 16);
      outbuf_put (&w->enc.out, line, strlen (line));
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
  return w->enc.out.len < VS_OUT_FLUSH || writer_flush (w, error);
}

static void
writer_free (VsTraceWriter *w)
{
  if (w->text)
    g_string_free (w->text, TRUE);
  if (w->format == VS_FORMAT_BINARY)
    bin_enc_clear (&w->enc);
  g_free (w->path);
  g_free (w);
}

gboolean
trace_writer_finish (VsTraceWriter *w, GError **error)
{
  g_return_val_if_fail (w != NULL, FALSE);
  if (w->format == VS_FORMAT_BINARY)
    {
      guint8 end[16];
      gsize n = 0;
      end[n++] = VS_BIN_END;
      guint64 c = w->enc.count;
      do
        {
          guint8 b = c & 0x7f;
          c >>= 7;
          end[n++] = b | (c ? 0x80 : 0);
        }
      while (c);
      memcpy (end + n, "VEND", 4);
      outbuf_put (&w->enc.out, end, n + 4);
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
