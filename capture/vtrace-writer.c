/* vtrace-writer.c — binary trace writer for the capture shim (see
 * vtrace-writer.h and docs/trace-format.md). Plain libc: write(2) with a
 * private buffer, so it can run from exit handlers and, in the last resort,
 * from a fatal-signal handler.
 *
 * Version 4's end record summarizes the events (first t, last captured
 * end, each thread's marks) and carries a checksum of the records and its
 * own offset. All of it is kept up to date as events are written and the
 * checksum is taken as the buffer is flushed, so that vtw_finish only
 * writes: no malloc, no sorting, no stdio, nothing a signal handler may
 * not do. */
#define _GNU_SOURCE
#include "vtrace-writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xxh64.h"   /* sim/base: plain C, built into the shim too */

#define VTW_BUF (1u << 20)

/* One (thread, mark name) of the end record's summary. */
typedef struct {
  uint32_t tid, name_sid;
  uint64_t count, last_t;
} VtMarkSum;

struct VtWriter {
  int fd;
  int failed;              /* errno of the first failed write, 0 if none */
  size_t len;
  size_t hashed;           /* bytes of buf already in the checksum */
  int hashing;             /* 0 while the magic and header are written */
  uint64_t flushed;        /* bytes handed to flush_buf: the file offset of buf[0] */
  uint64_t count;          /* events written */
  uint64_t last_t;
  uint64_t min_t;          /* the earliest t (UINT64_MAX: no event yet) */
  uint64_t last_end;       /* the latest captured end, 0 if none */
  VsXxh64 hash;            /* of the records, from the first one on */
  /* The strings defined so far, copied (the mark summary names them, and
   * the caller's may not outlive the call): string SID is str[SID].len
   * bytes at strs + str[SID].off. */
  char *strs;
  size_t strs_len, strs_cap;
  struct { size_t off, len; } *str;
  size_t n_str, str_cap;
  /* The mark summary, kept sorted by tid, then name (bytewise, a prefix
   * first) as the end record lists it, so that vtw_finish need not sort. */
  VtMarkSum *marks;
  size_t n_marks, marks_cap;
  char *path, *tmp;
  unsigned char buf[VTW_BUF];
};

/* The buffer's bytes not yet in the checksum taken into it. */
static void
hash_pending (VtWriter *w)
{
  if (w->hashing && w->len > w->hashed)
    vs_xxh64_update (&w->hash, w->buf + w->hashed, w->len - w->hashed);
  w->hashed = w->len;
}

static void
flush_buf (VtWriter *w)
{
  hash_pending (w);
  w->flushed += w->len;
  w->hashed = 0;
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
put_u64 (VtWriter *w, uint64_t v)
{
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char) (v >> (8 * i));
  put (w, b, 8);
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

static void
free_writer (VtWriter *w)
{
  free (w->strs);
  free (w->str);
  free (w->marks);
  free (w->path);
  free (w->tmp);
  free (w);
}

VtWriter *
vtw_open (const char *path, const char *header_json)
{
  VtWriter *w = calloc (1, sizeof *w);
  if (!w)
    return NULL;
  w->min_t = UINT64_MAX;
  vs_xxh64_init (&w->hash, 0);
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
  put_u32 (w, 4);   /* version 4: the end record has the summary, checksum and offset */
  size_t hl = strlen (header_json);
  put_u32 (w, (uint32_t) hl);
  put (w, header_json, hl);
  /* The checksum starts at the first record (offset 16 + hdr_len). */
  w->hashing = 1;
  w->hashed = w->len;
  return w;
fail:;
  int e = errno;
  free_writer (w);
  errno = e;
  return NULL;
}

/* Grows *P (of *CAP elements of SIZE bytes) to hold at least NEED. */
static int
grow (void *p, size_t *cap, size_t need, size_t size)
{
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : 16;
  while (nc < need)
    nc *= 2;
  void *np = realloc (*(void **) p, nc * size);
  if (!np)
    return -1;
  *(void **) p = np;
  *cap = nc;
  return 0;
}

int
vtw_string (VtWriter *w, uint64_t sid, const char *s)
{
  size_t n = strlen (s);
  /* Kept for the mark summary's names; sids come in order 0, 1, 2, ... */
  if (sid != w->n_str) {
    w->failed = w->failed ? w->failed : EINVAL;
    return -1;
  }
  if (grow (&w->strs, &w->strs_cap, w->strs_len + n, 1) != 0
      || grow (&w->str, &w->str_cap, w->n_str + 1, sizeof *w->str) != 0) {
    w->failed = w->failed ? w->failed : ENOMEM;
    return -1;
  }
  if (n)
    memcpy (w->strs + w->strs_len, s, n);
  w->str[w->n_str].off = w->strs_len;
  w->str[w->n_str].len = n;
  w->strs_len += n;
  w->n_str++;
  put_u8 (w, 0xF0);
  put_uv (w, sid);
  put_uv (w, n);
  put (w, s, n);
  return w->failed ? -1 : 0;
}

/* Orders string A before B bytewise, a prefix first (the summary's
 * order, docs/trace-format.md): <0, 0 or >0. */
static int
name_cmp (const VtWriter *w, uint32_t a, uint32_t b)
{
  if (a == b)
    return 0;
  size_t la = w->str[a].len, lb = w->str[b].len;
  int c = memcmp (w->strs + w->str[a].off, w->strs + w->str[b].off, la < lb ? la : lb);
  return c ? c : la < lb ? -1 : la > lb;
}

/* Counts mark E in the summary: a binary search of the sorted table, and
 * an insertion in place for a (thread, name) not seen yet. */
static int
count_mark (VtWriter *w, const VtEvent *e)
{
  if (e->name_sid >= w->n_str)
    return -1;                    /* a name never defined: the file is wrong anyway */
  size_t lo = 0, hi = w->n_marks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const VtMarkSum *m = &w->marks[mid];
    int c = m->tid != e->tid ? (m->tid < e->tid ? -1 : 1) : name_cmp (w, m->name_sid, e->name_sid);
    if (c == 0) {
      w->marks[mid].count++;
      w->marks[mid].last_t = e->t;   /* t does not go back on a thread */
      return 0;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (grow (&w->marks, &w->marks_cap, w->n_marks + 1, sizeof *w->marks) != 0)
    return -1;
  memmove (w->marks + lo + 1, w->marks + lo, (w->n_marks - lo) * sizeof *w->marks);
  w->marks[lo] = (VtMarkSum) { .tid = e->tid, .name_sid = e->name_sid, .count = 1, .last_t = e->t };
  w->n_marks++;
  return 0;
}

int
vtw_event (VtWriter *w, const VtEvent *e)
{
  /* The summary: the earliest t, the latest captured end (t + host_ns,
   * or t + dur of a kernel, copy or memset that has one, as the record
   * below writes it; a kernel's absent dur is written as 0) and the marks. */
  if (e->t < w->min_t)
    w->min_t = e->t;
  uint64_t end = e->t + e->host_ns;
  if ((e->op == VTW_KERNEL || e->op == VTW_COPY || e->op == VTW_MEMSET)
      && e->dur != VTW_NONE && e->t + e->dur > end)
    end = e->t + e->dur;
  if (end > w->last_end)
    w->last_end = end;
  if (e->op == VTW_MARK && count_mark (w, e) != 0 && !w->failed)
    w->failed = e->name_sid >= w->n_str ? EINVAL : ENOMEM;

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

/* Writes the end record (version 4): the count, the summary, the
 * checksum of every byte from the first record to here, the record's
 * offset. Only puts: the summary is ready and sorted (see the top). */
int
vtw_finish (VtWriter *w)
{
  uint64_t end_offset = w->flushed + w->len;
  put_u8 (w, 0xFE);
  put_uv (w, w->count);
  put_opt (w, w->count ? w->min_t : VTW_NONE);   /* first_t */
  put_uv (w, w->last_end);
  put_uv (w, w->n_marks);
  for (size_t i = 0; i < w->n_marks; i++) {
    const VtMarkSum *m = &w->marks[i];
    put_uv (w, m->tid);
    put_uv (w, w->str[m->name_sid].len);
    put (w, w->strs + w->str[m->name_sid].off, w->str[m->name_sid].len);
    put_uv (w, m->count);
    put_uv (w, m->last_t);
  }
  /* What the buffer holds beyond the flushed part joins the checksum
   * here; the checksum's own bytes and what follows do not. */
  hash_pending (w);
  w->hashing = 0;
  put_u64 (w, vs_xxh64_digest (&w->hash));
  put_u64 (w, end_offset);
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
