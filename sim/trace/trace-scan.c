/* trace-scan.c — trace_skim (trace.h): the rest of a trace read for what
 * a replay that stopped replaying still needs (replay --sample-steps,
 * engine/sample.part.c): the events counted, their captured span and the
 * reaches of one mark.
 *
 * A version 4 file answers from its end record instead (bin_skim_summary,
 * trace-bin.c: its checksum checked, nothing framed); what follows is for
 * the rest of every other binary file.
 *
 * A binary record is framed, not decoded: its type byte, then each field
 * skipped as its varint's bytes, but for what is counted (t, tid, host_ns,
 * a kernel's, copy's or memset's dur, a mark's name) and what costs no
 * more to check than to skip (a string id against the table, an enum byte
 * against its range, a list's length, a kernel's extensions, time going
 * forward on each thread). No event is built and no allocation id is
 * looked up: the live set is not kept from here on (trace_validate leaves
 * it alone once r->skim is set), which is the one rule a skimmed trace is
 * not held to (docs/trace-format.md, "Skimming"). Anything else unusual
 * (a string definition, the end record, a varint of ten bytes, a long
 * list, a value out of range, a record too near the end of the buffer)
 * goes to the careful decoder, one record at a time, which frames and
 * checks it as trace_next would and words the message; the end record's
 * count, truncation and bytes after the end fail there as ever.
 *
 * On the 1,000-step spill trace (76k events) this reads the 75k events
 * after the sampler's stop in about 126 instructions each, where decoding
 * and validating them took 235 and the loop around it 40 more
 * (callgrind; docs/performance.md, "Sampling without decoding"). A
 * kernel's shape alone (what vramcap and synth write) is framed in the loop
 * too: 118.97 M instructions for a sampled replay of a 1,000-step synth
 * trace, 137.55 M when it went to bin_fast_kernel_ext ("sixth pass"). */
#include "trace/trace-priv.h"

#include <string.h>

#define HOT static inline __attribute__ ((always_inline))
#define MARGIN VS_BIN_FAST_MARGIN

/* Each record the fast loop reads fits in MARGIN bytes: a kernel's fixed
 * part (op, 8 varints), three lists of VS_BIN_FAST_LIST ids, the
 * extensions (4 bytes, 12 varints), 9 bytes a varint. */
G_STATIC_ASSERT (1 + 11 * 9 + 3 * VS_BIN_FAST_LIST * 9 + 4 + 12 * 9 <= MARGIN);

/* What trace_skim counts (its VsTraceSkim, events aside: those are the
 * reader's count's growth). */
typedef struct {
  VsTraceSkim k;      /* first_t, last_end, reaches, last_reach_t */
  const char *mark;   /* the mark whose reaches are counted, on thread mark_tid */
  guint32 mark_tid;
} Acc;

/* A varint of at most 8 bytes skipped as its word's first terminating
 * byte (below 0x80, read little-endian), for a field that is rarely one
 * or two bytes (a size); else give up (the careful decoder reads it). */
#define SKIP_WIDE()                                                                                              \
  do                                                                                                             \
    {                                                                                                            \
      guint64 w_;                                                                                                \
      memcpy (&w_, p, 8);                                                                                        \
      w_ = ~GUINT64_FROM_LE (w_) & G_GUINT64_CONSTANT (0x8080808080808080);                                      \
      if (G_UNLIKELY (w_ == 0))                                                                                  \
        goto bail;                                                                                               \
      p += (__builtin_ctzll (w_) >> 3) + 1;                                                                      \
    }                                                                                                            \
  while (0)

/* A varint of at most 8 bytes, skipped; else give up (the careful decoder
 * reads it). One of three or more bytes as SKIP_WIDE. */
#define SKIP()                                                                                                   \
  do                                                                                                             \
    {                                                                                                            \
      if (G_LIKELY (*p < 0x80))                                                                                  \
        p++;                                                                                                     \
      else if (G_LIKELY (p[1] < 0x80))                                                                           \
        p += 2;                                                                                                  \
      else                                                                                                       \
        SKIP_WIDE ();                                                                                            \
    }                                                                                                            \
  while (0)

/* A varint of at most 9 bytes into V (below 2^63 by construction); else
 * give up. */
#define UV(v)                                                                                                    \
  do                                                                                                             \
    {                                                                                                            \
      guint64 x_ = *p;                                                                                           \
      if (G_LIKELY (x_ < 0x80))                                                                                  \
        p++;                                                                                                     \
      else if (p[1] < 0x80)                                                                                      \
        {                                                                                                        \
          x_ += ((guint64) p[1] << 7) - 0x80;                                                                    \
          p += 2;                                                                                                \
        }                                                                                                        \
      else if (G_UNLIKELY (!bin_uv_long (&p, &x_)))                                                              \
        goto bail;                                                                                               \
      (v) = x_;                                                                                                  \
    }                                                                                                            \
  while (0)

/* The records from *PP while MARGIN bytes are buffered, each checked and
 * counted into A, with the reader's count, D's previous time and the
 * times per thread brought up to it; stops at the first record it does
 * not take (a string definition, the end record, anything unusual),
 * having changed nothing for it that the careful decoder would not change
 * the same way (the thread's time, as in trace-bin.c's fast path). */
HOT void
skim_fast (VsTraceReader *r, VsBinDec *d, const guint8 **pp, const guint8 *end, Acc *acc, gboolean validate)
{
  const guint8 *p = *pp, *rec = p;
  if (end - p < MARGIN)
    return;
  const guint8 *last = end - MARGIN;   /* the last record start with the margin */
  guint64 prev_t = d->prev_t, first_t = acc->k.first_t, last_end = acc->k.last_end;
  VsEvent scratch;   /* for a kernel's extensions */
  while (p <= last)
    {
      rec = p;
      guint op = *p++;
      /* A string definition, the end record, or bad; the switch gives up
       * on ops 11 to 19, which the careful decoder refuses before it
       * looks at their time. */
      if (G_UNLIKELY (op > VS_BIN_KERNEL_X))
        goto bail;
      guint64 dt_raw, tid, host_ns, t, u, n;
      UV (dt_raw);
      UV (tid);
      UV (host_ns);
      /* As trace-bin.c's fast path: a negative t wraps above the maximum. */
      t = prev_t + (guint64) ((gint64) (dt_raw >> 1) ^ -(gint64) (dt_raw & 1));
      if (G_UNLIKELY (t > VS_TRACE_INT_MAX || tid > G_MAXUINT32))
        goto bail;
      if (validate && G_UNLIKELY (!bin_thread_time (r, tid, t)))
        goto bail;
      guint64 e = t + host_ns;   /* both below 2^63 */
      if (G_LIKELY (op == VS_OP_KERNEL))   /* most records: before the switch */
        {
        kernel:
          UV (u);
          if (G_UNLIKELY (u >= d->n_strings))
            goto bail;
          SKIP ();
          UV (u);   /* dur */
          e = MAX (e, t + u);
          SKIP_WIDE ();   /* bytes */
          SKIP ();        /* compute_ns */
/* A list's length: one byte (a longer one is above VS_BIN_FAST_LIST). */
#define IDS()                                                                                                    \
  n = *p++;                                                                                                      \
  if (G_UNLIKELY (n > VS_BIN_FAST_LIST))                                                                         \
    goto bail;                                                                                                   \
  for (; n > 0; n--)                                                                                             \
    SKIP ();
          IDS ();   /* reads */
          IDS ();   /* writes */
          IDS ();   /* touches */
#undef IDS
          if (G_UNLIKELY (op == VS_BIN_KERNEL_X))
            {
              /* A shape alone (what vramcap and synth write on every
               * kernel) is framed here, checked as bin_fast_kernel_ext
               * checks it; a collective or a group goes there. */
              if (*p == VS_BIN_HAS_SHAPE)
                {
                  guint64 g0, g1, g2, b0, b1, b2, regs, smem;
                  p++;
                  SKIP ();   /* flops */
                  if (G_UNLIKELY (*p >= VS_PREC_COUNT))
                    goto bail;
                  p++;
                  UV (g0);
                  UV (g1);
                  UV (g2);
                  UV (b0);
                  UV (b1);
                  UV (b2);
                  UV (regs);
                  UV (smem);
                  if (G_UNLIKELY ((g0 | g1 | g2 | b0 | b1 | b2 | regs | smem) > G_MAXUINT32))
                    goto bail;
                  if (validate
                      && G_UNLIKELY (trace_dim3_partly_zero (g0, g1, g2) || trace_dim3_partly_zero (b0, b1, b2)))
                    goto bail;
                }
              else if ((p = bin_fast_kernel_ext (d, &scratch, p, validate)) == NULL)
                goto bail;
            }
        }
      else
        switch (op)
        {
        case VS_OP_ALLOC:
          if (validate && G_UNLIKELY (*p == 0))
            goto bail;   /* id 0 */
          SKIP ();
          SKIP_WIDE ();   /* bytes */
          if (validate && G_UNLIKELY (*p >= VS_MEM_COUNT))
            goto bail;
          p++;
          SKIP ();
          UV (u);
          if (G_UNLIKELY (u != 0 && u - 1 >= d->n_strings))
            goto bail;
          break;
        case VS_OP_FREE:
        case VS_OP_EVENT_RECORD:
        case VS_OP_STREAM_WAIT:
          SKIP ();
          SKIP ();
          break;
        case VS_OP_COPY:
          if (validate && G_UNLIKELY (*p >= VS_DIR_COUNT))
            goto bail;
          p++;
          SKIP_WIDE ();   /* bytes */
          SKIP ();
          SKIP ();
          SKIP ();
          p++;
          goto dur;
        case VS_OP_MEMSET:
          SKIP ();
          SKIP_WIDE ();   /* bytes */
          SKIP ();
          p++;
        dur:
          UV (u);   /* opt: 0 absent */
          if (u != 0)
            e = MAX (e, t + u - 1);
          break;
        case VS_BIN_KERNEL_X:
          goto kernel;
        case VS_OP_SYNC:
          if (validate && G_UNLIKELY (*p >= VS_SYNC_COUNT))
            goto bail;
          p++;
          SKIP ();
          break;
        case VS_OP_PREFETCH:
          SKIP ();
          SKIP ();
          if (validate && G_UNLIKELY (*p >= VS_TO_COUNT))
            goto bail;
          p++;
          SKIP ();
          break;
        case VS_OP_MARK:
          UV (u);
          if (G_UNLIKELY (u >= d->n_strings))
            goto bail;
          if (G_UNLIKELY (tid == acc->mark_tid) && acc->mark != NULL && strcmp (d->strings[u], acc->mark) == 0)
            {
              acc->k.reaches++;
              acc->k.last_reach_t = t;
            }
          break;
        case VS_OP_EMPTY_CACHE:
          SKIP ();
          break;
        default:
          goto bail;   /* ops 11 to 19 */
        }
      prev_t = t;
      r->count++;   /* (a group's first use is remembered at its index) */
      first_t = MIN (first_t, t);
      last_end = MAX (last_end, e);
      rec = p;
    }
bail:
  *pp = rec;
  d->prev_t = prev_t;
  acc->k.first_t = first_t;
  acc->k.last_end = last_end;
}

#undef SKIP
#undef SKIP_WIDE
#undef UV

/* An event the careful path read, counted (out of line: the loops
 * around it stay as lean as the fast path needs). */
static __attribute__ ((noinline)) void
skim_note (Acc *a, const VsEvent *ev)
{
  trace_skim_note (&a->k, ev, a->mark, a->mark_tid);
}

/* A binary reader's rest: the fast loop while it can, else one record by
 * the careful path (which refills the buffer, reads string definitions
 * and the end record, and words errors). */
HOT gboolean
skim_bin (VsTraceReader *r, VsBinDec *d, Acc *a, gboolean validate, GError **error)
{
  VsInBuf *in = d->in;
  for (;;)
    {
      if (G_UNLIKELY (in->end - in->p < MARGIN) && !in->eof && !inbuf_fill (in, r->path, error))
        {
          r->failed = TRUE;
          r->fast = NULL;
          return FALSE;
        }
      skim_fast (r, d, &in->p, in->end, a, validate);
      if (in->end - in->p < MARGIN && !in->eof)
        continue;   /* refill */
      VsEvent ev;
      if (!trace_next_slow (r, &ev, error))
        return !r->failed;   /* the end (checked), or bad input */
      r->fast = d;
      skim_note (a, &ev);
    }
}

gboolean
trace_skim (VsTraceReader *r, const char *mark, guint32 tid, VsTraceSkim *out, GError **error)
{
  g_return_val_if_fail (r != NULL && out != NULL, FALSE);
  if (r->klass->skim != NULL)
    return r->klass->skim (r, mark, tid, out, error);   /* a buffer's summary (trace-buf.c) */
  Acc a = { { 0, G_MAXUINT64, 0, 0, 0 }, mark, tid };
  guint64 count0 = r->count;
  gboolean ok;
  VsBinDec *d = r->fast;
  int rc = d != NULL ? bin_skim_summary (r, mark, tid, out, error) : 0;
  if (rc != 0)
    return rc > 0;   /* a version 4 file's summary (trace-bin.c) */
  if (d != NULL)
    {
      /* From here on no live set: validation leaves the ids alone, and
       * the validating fast path (which keeps it) is not taken. */
      r->skim = TRUE;
      d->careful_only = TRUE;
      ok = r->validate ? skim_bin (r, d, &a, TRUE, error) : skim_bin (r, d, &a, FALSE, error);
    }
  else
    {
      VsEvent ev;
      GError *err = NULL;
      while (trace_next (r, &ev, &err))
        skim_note (&a, &ev);
      ok = err == NULL;
      if (!ok)
        g_propagate_error (error, err);
    }
  *out = a.k;
  out->events = r->count - count0;
  return ok;
}
