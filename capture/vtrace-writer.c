/* vtrace-writer.c — binary trace writer for the capture shim (see
 * vtrace-writer.h and docs/trace-format.md). Plain libc: write(2) with a
 * private buffer, so it can run from exit handlers and, in the last resort,
 * from a fatal-signal handler. */
#define _GNU_SOURCE
#include "vtrace-writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VTW_BUF (1u << 20)

struct VtWriter {
  int fd;
  int failed;              /* errno of the first failed write, 0 if none */
  size_t len;
  uint64_t count;          /* events written */
  uint64_t last_t;
  char *path, *tmp;
  unsigned char buf[VTW_BUF];
};

static void
flush_buf (VtWriter *w)
{
  size_t off = 0;
  while (off < w->len && !w->failed) {
    ssize_t n = write (w->fd, w->buf + off, w->len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      w->failed = n < 0 ? errno : EIO;
    else
      off += (size_t) n;
  }
  w->len = 0;
}

static void
put (VtWriter *w, const void *p, size_t n)
{
  const unsigned char *s = p;
  while (n > 0) {
    if (w->len == VTW_BUF)
      flush_buf (w);
    size_t k = VTW_BUF - w->len;
    if (k > n)
      k = n;
    memcpy (w->buf + w->len, s, k);
    w->len += k;
    s += k;
    n -= k;
  }
}

/* The small puts write into the buffer in place (a kernel record is about
 * 20 of them; through put's memcpy they were a fifth of the shim's cost
 * per launch, docs/capture.md "Cost"). */
static void
put_u8 (VtWriter *w, unsigned v)
{
  if (w->len == VTW_BUF)
    flush_buf (w);
  w->buf[w->len++] = (unsigned char) v;
}

static void
put_u32 (VtWriter *w, uint32_t v)
{
  unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
  put (w, b, 4);
}

static void
put_uv (VtWriter *w, uint64_t v)
{
  if (w->len + 10 > VTW_BUF)    /* room for the longest varint */
    flush_buf (w);
  unsigned char *b = w->buf + w->len;
  size_t n = 0;
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    b[n++] = c | (v ? 0x80 : 0);
  } while (v);
  w->len += n;
}

static void
put_sv (VtWriter *w, int64_t v)
{
  put_uv (w, ((uint64_t) v << 1) ^ (uint64_t) (v >> 63));
}

/* opt: value + 1, 0 = absent. */
static void
put_opt (VtWriter *w, uint64_t v)
{
  put_uv (w, v == VTW_NONE ? 0 : v + 1);
}

/* PATH with its symlinks followed (the last name need not exist); NULL
 * with errno set. Plain libc: the shim does not link GLib. */
static char *
resolve_links (const char *path)
{
  char *p = strdup (path);
  for (int depth = 0; p && depth < 40; depth++) {
    struct stat st;
    if (lstat (p, &st) != 0 || !S_ISLNK (st.st_mode))
      return p;
    char target[4096];
    ssize_t n = readlink (p, target, sizeof target - 1);
    if (n < 0) {
      free (p);
      return NULL;
    }
    target[n] = '\0';
    char *next;
    const char *slash = strrchr (p, '/');
    if (target[0] == '/' || !slash)
      next = strdup (target);
    else if (asprintf (&next, "%.*s/%s", (int) (slash - p), p, target) < 0)
      next = NULL;
    free (p);
    p = next;
  }
  if (p) {
    free (p);
    errno = ELOOP;
  }
  return NULL;
}

VtWriter *
vtw_open (const char *path, const char *header_json)
{
  VtWriter *w = calloc (1, sizeof *w);
  if (!w)
    return NULL;
  struct stat st;
  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode)) {
    /* A device or FIFO (-o /dev/null) is written in place: renaming over
     * it would replace the node with a regular file. */
    w->path = strdup (path);
    if (!w->path)
      goto fail;
    w->fd = open (path, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0)
      goto fail;
  } else {
    /* A symlink: its target is written, atomically beside it. */
    w->path = resolve_links (path);
    if (!w->path)
      goto fail;
    size_t tl = strlen (w->path) + 32;
    w->tmp = malloc (tl);
    if (!w->tmp)
      goto fail;
    snprintf (w->tmp, tl, "%s.tmp.%ld", w->path, (long) getpid ());
    w->fd = open (w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0)
      goto fail;
  }
  put (w, "VRAMTRC\x1a", 8);
  put_u32 (w, 3);   /* version 3: kernel records may carry a shape, a collective and its group */
  size_t hl = strlen (header_json);
  put_u32 (w, (uint32_t) hl);
  put (w, header_json, hl);
  return w;
fail:;
  int e = errno;
  free (w->path);
  free (w->tmp);
  free (w);
  errno = e;
  return NULL;
}

int
vtw_string (VtWriter *w, uint64_t sid, const char *s)
{
  size_t n = strlen (s);
  put_u8 (w, 0xF0);
  put_uv (w, sid);
  put_uv (w, n);
  put (w, s, n);
  return w->failed ? -1 : 0;
}

int
vtw_event (VtWriter *w, const VtEvent *e)
{
  /* The t before the first event is 0 (docs/trace-format.md). */
  int64_t dt = (int64_t) (e->t - w->last_t);
  w->last_t = e->t;
  w->count++;
  /* A kernel with a shape or a collective is record 0x14 (kernel with
   * extensions). */
  put_u8 (w, e->op == VTW_KERNEL && (e->has_shape || e->has_coll) ? 0x14 : e->op);
  put_sv (w, dt);
  put_uv (w, e->tid);
  put_uv (w, e->host_ns);
  switch (e->op) {
  case VTW_ALLOC:
    put_uv (w, e->id);
    put_uv (w, e->bytes);
    put_u8 (w, e->sub);
    put_opt (w, e->stream);
    put_opt (w, e->value ? e->value - 1 : VTW_NONE);  /* tag sid + 1; 0: none */
    break;
  case VTW_FREE:
    put_uv (w, e->id);
    put_opt (w, e->stream);
    break;
  case VTW_COPY:
    put_u8 (w, e->sub);
    put_uv (w, e->bytes);
    put_uv (w, e->src);
    put_uv (w, e->dst);
    put_uv (w, e->stream);
    put_u8 (w, e->async);
    put_opt (w, e->dur);
    break;
  case VTW_MEMSET:
    put_uv (w, e->dst);
    put_uv (w, e->bytes);
    put_uv (w, e->stream);
    put_u8 (w, e->async);
    put_opt (w, e->dur);
    break;
  case VTW_KERNEL:
    put_uv (w, e->name_sid);
    put_uv (w, e->stream);
    put_uv (w, e->dur == VTW_NONE ? 0 : e->dur);
    put_opt (w, VTW_NONE);      /* bytes */
    put_opt (w, VTW_NONE);      /* compute_ns */
    put_uv (w, 0);              /* reads */
    put_uv (w, 0);              /* writes */
    put_uv (w, e->n_touches);
    for (uint32_t i = 0; i < e->n_touches; i++)
      put_uv (w, e->touches[i]);
    if (e->has_shape || e->has_coll)
      put_u8 (w, (uint8_t) ((e->has_shape ? 1 : 0) | (e->has_coll ? 2 : 0)
                            | (e->has_coll && e->coll_group ? 4 : 0)));  /* which extensions */
    if (e->has_shape) {
      put_opt (w, VTW_NONE);      /* flops */
      put_u8 (w, 0);              /* precision: not known */
      for (int i = 0; i < 3; i++)
        put_uv (w, e->grid[i]);
      for (int i = 0; i < 3; i++)
        put_uv (w, e->block[i]);
      put_uv (w, e->regs);
      put_uv (w, e->smem);
    }
    if (e->has_coll) {
      put_u8 (w, e->coll_kind);
      put_uv (w, e->coll_bytes);
      put_uv (w, e->coll_ranks);
      if (e->coll_group) {
        put_uv (w, e->coll_group);
        put_u8 (w, 0);            /* role: NCCL does not know it */
      }
    }
    break;
  case VTW_SYNC:
    put_u8 (w, e->sub);
    put_uv (w, e->value);
    break;
  case VTW_EVENT_RECORD:
    put_uv (w, e->value);
    put_uv (w, e->stream);
    break;
  case VTW_STREAM_WAIT:
    put_uv (w, e->stream);
    put_uv (w, e->value);
    break;
  case VTW_PREFETCH:
    put_uv (w, e->id);
    put_uv (w, e->bytes);
    put_u8 (w, e->sub);
    put_uv (w, e->stream);
    break;
  case VTW_MARK:
    put_uv (w, e->name_sid);
    break;
  default:
    break;
  }
  return w->failed ? -1 : 0;
}

uint64_t
vtw_count (const VtWriter *w)
{
  return w->count;
}

static void
free_writer (VtWriter *w)
{
  free (w->path);
  free (w->tmp);
  free (w);
}

int
vtw_finish (VtWriter *w)
{
  put_u8 (w, 0xFE);
  put_uv (w, w->count);
  put (w, "VEND", 4);
  flush_buf (w);
  int err = w->failed;
  if (close (w->fd) != 0 && !err)
    err = errno;
  if (w->tmp && !err && rename (w->tmp, w->path) != 0)
    err = errno;
  if (w->tmp && err)
    unlink (w->tmp);
  free_writer (w);
  errno = err;
  return err ? -1 : 0;
}

void
vtw_drop (VtWriter *w)
{
  if (!w)
    return;
  close (w->fd);
  free_writer (w);
}

void
vtw_abort (VtWriter *w)
{
  if (!w)
    return;
  close (w->fd);
  if (w->tmp)
    unlink (w->tmp);
  free_writer (w);
}
