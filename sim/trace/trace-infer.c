/* trace-infer.c — inferred accesses for kernels that name no allocation
 * (trace-infer.h says the rules; docs/model.md section 6b why, and
 * docs/validation.md how far they are from known touches).
 *
 * The events are read ahead into a queue and returned in the trace's
 * order. A kernel leaves the queue once its thread does something other
 * than free memory (its "freed" rule is then complete), or when the queue
 * holds INFER_WINDOW events (it leaves with the frees seen so far: a
 * thread silent for that long while others run). In mode auto nothing
 * leaves until INFER_DECIDE kernels have been read (or the trace ends, or
 * the queue is full): if one of them names an allocation, inference is
 * off and everything passes as read. */
#include "trace/trace-infer.h"

#include <string.h>

#include "base/u64map.h"
#include "trace/trace-priv.h"

/* Events read ahead at most: a few hundred KiB of copies, and more than a
 * PyTorch op's frees (a handful) by far. */
#define INFER_WINDOW 4096
/* Mode auto: kernels read before deciding (VS_INFER_DECIDE, trace-infer.h). */
#define INFER_DECIDE VS_INFER_DECIDE

typedef struct Held {
  VsEvent ev;
  guint64 *named;        /* the kernel's reads, writes and touches (copies) */
  guint named_cap;
  VsKernelShape shape;
  VsCollective coll;
  gboolean open;         /* an inferred kernel whose thread's frees may still come */
  guint64 *ids;          /* inferred accesses */
  guint8 *wr;
  guint n, cap;
  struct Held *next;
} Held;

/* A live device or managed allocation: creation order is the step rule's. */
typedef struct Live {
  guint64 id, birth;     /* birth: its alloc's event index */
  struct Live *prev, *next;
} Live;

typedef struct {
  guint64 id, birth;
} Ref;

/* One mark name on one thread, for choosing the step. */
typedef struct {
  const char *name;      /* the reader's string of its start mark */
  guint64 n, first_t, last_t, open_t;
  gboolean has_open, ranged;
  guint64 point_cov, range_cov;
  guint64 k_last, k_prev;   /* kernels read at its last two starts */
} MarkInfo;

typedef struct {
  GArray *pend;          /* Ref: made since its last kernel (after its first) */
  Held *last;            /* its last inferred kernel, while open */
  gboolean launched;
  GHashTable *marks;     /* name (owned) -> MarkInfo* */
} Thr;

struct _VsInfer {
  VsTraceReader *r;
  VsTraceReader *reader;  /* infer_reader's: a reader class over infer_next */
  VsInferMode mode;
  gboolean decided, on, eof;
  Held *head, *tail, *cur, *spare;
  guint len;
  GHashTable *threads;   /* tid -> Thr* */
  VsU64Map live;         /* id -> Live* */
  Live *first, *last;
  guint64 kernels;       /* read so far */
  MarkInfo *step;
  GArray *due;           /* Ref: live at the step's start */
  guint c;               /* due entries given so far */
  guint64 k, j;          /* kernels in the step before, and in this one so far */
  gboolean sched;
  VsInferStats st;
};

static void
thr_free (gpointer p)
{
  Thr *t = p;
  g_array_unref (t->pend);
  g_hash_table_unref (t->marks);
  g_free (t);
}

static void
held_free (Held *h)
{
  g_free (h->named);
  g_free (h->ids);
  g_free (h->wr);
  g_free (h);
}

/* infer_reader: a reader whose next is infer_next, so that the replay
 * reads through it as through any reader, and reads R again directly
 * once it passes everything through (no test per event). */
typedef struct {
  VsTraceReader base;
  VsInfer *in;
} InferReader;

static gboolean
infer_reader_next (VsTraceReader *r, VsEvent *ev, guint32 *present, GError **error)
{
  *present = VS_F_VALIDATED;   /* R validated it */
  return infer_next (((InferReader *) r)->in, ev, error);
}

static void
infer_reader_close (VsTraceReader *r)
{
  g_free (r);
}

static const VsTraceReaderClass infer_reader_class = { infer_reader_next, infer_reader_close, NULL };

VsTraceReader *
infer_reader (VsInfer *in)
{
  return in->reader;
}

VsInfer *
infer_new (VsTraceReader *r, VsInferMode mode)
{
  VsInfer *in = g_new0 (VsInfer, 1);
  in->r = r;
  in->mode = mode;
  in->on = TRUE;
  in->decided = mode == VS_INFER_ALWAYS;
  in->threads = g_hash_table_new_full (NULL, NULL, NULL, thr_free);
  u64map_init (&in->live);
  in->due = g_array_new (FALSE, FALSE, sizeof (Ref));
  InferReader *ir = g_new0 (InferReader, 1);
  trace_reader_init_validated (&ir->base, &infer_reader_class, trace_reader_path (r));
  /* (no header of its own: R's is the trace's, read there) */
  ir->in = in;
  in->reader = &ir->base;
  return in;
}

static void
live_clear (VsInfer *in)
{
  for (Live *a = in->first, *n; a != NULL; a = n)
    {
      n = a->next;
      g_free (a);
    }
  in->first = in->last = NULL;
  u64map_clear (&in->live);
  u64map_init (&in->live);
}

void
infer_free (VsInfer *in)
{
  if (in == NULL)
    return;
  for (Held *h = in->head, *n; h != NULL; h = n)
    {
      n = h->next;
      held_free (h);
    }
  for (Held *h = in->spare, *n; h != NULL; h = n)
    {
      n = h->next;
      held_free (h);
    }
  if (in->cur)
    held_free (in->cur);
  live_clear (in);
  u64map_clear (&in->live);
  g_hash_table_unref (in->threads);
  g_array_unref (in->due);
  trace_close (in->reader);
  g_free (in);
}

static Thr *
thr_get (VsInfer *in, guint32 tid)
{
  Thr *t = g_hash_table_lookup (in->threads, GUINT_TO_POINTER (tid));
  if (t == NULL)
    {
      t = g_new0 (Thr, 1);
      t->pend = g_array_new (FALSE, FALSE, sizeof (Ref));
      t->marks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_insert (in->threads, GUINT_TO_POINTER (tid), t);
    }
  return t;
}

static Live *
live_find (VsInfer *in, guint64 id)
{
  guint64 *v = u64map_lookup (&in->live, id);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

static void
live_remove (VsInfer *in, Live *a)
{
  if (a->prev) a->prev->next = a->next; else in->first = a->next;
  if (a->next) a->next->prev = a->prev; else in->last = a->prev;
  u64map_remove (&in->live, a->id);
  g_free (a);
}

static void
live_add (VsInfer *in, guint64 id, guint64 birth)
{
  Live *old = live_find (in, id);
  if (old != NULL)
    live_remove (in, old);   /* a seeded id's alloc: the new one counts */
  Live *a = g_new0 (Live, 1);
  a->id = id;
  a->birth = birth;
  a->prev = in->last;
  if (in->last) in->last->next = a; else in->first = a;
  in->last = a;
  u64map_insert (&in->live, id, GPOINTER_TO_SIZE (a));
}

/* REF still names the allocation it was taken of. */
static gboolean
ref_live (VsInfer *in, const Ref *ref)
{
  Live *a = live_find (in, ref->id);
  return a != NULL && a->birth == ref->birth;
}

static void
held_add (Held *h, guint64 id, gboolean write)
{
  if (h->n == h->cap)
    {
      h->cap = h->cap ? 2 * h->cap : 8;
      h->ids = g_renew (guint64, h->ids, h->cap);
      h->wr = g_renew (guint8, h->wr, h->cap);
    }
  h->ids[h->n] = id;
  h->wr[h->n++] = write != FALSE;
}

/* A held copy of EV (its id lists, shape and collective; strings are the
 * reader's for its life). */
static Held *
held_new (VsInfer *in, const VsEvent *ev)
{
  Held *h = in->spare;
  if (h != NULL)
    in->spare = h->next;
  else
    h = g_new0 (Held, 1);
  h->ev = *ev;
  h->n = 0;
  h->open = FALSE;
  h->next = NULL;
  if (ev->op != VS_OP_KERNEL)
    return h;
  guint nr = ev->n_reads, nw = ev->n_writes, nt = ev->n_touches;
  if (in->mode == VS_INFER_ALWAYS)
    {
      /* The check against known touches: what the trace names is dropped. */
      h->ev.reads = h->ev.writes = h->ev.touches = NULL;
      h->ev.n_reads = h->ev.n_writes = h->ev.n_touches = 0;
    }
  else if (nr + nw + nt > 0)
    {
      if (nr + nw + nt > h->named_cap)
        {
          h->named_cap = nr + nw + nt;
          h->named = g_renew (guint64, h->named, h->named_cap);
        }
      /* (a list may be absent, NULL: memcpy must not see it) */
      if (nr > 0)
        memcpy (h->named, ev->reads, nr * sizeof (guint64));
      if (nw > 0)
        memcpy (h->named + nr, ev->writes, nw * sizeof (guint64));
      if (nt > 0)
        memcpy (h->named + nr + nw, ev->touches, nt * sizeof (guint64));
      h->ev.reads = h->named;
      h->ev.writes = h->named + nr;
      h->ev.touches = h->named + nr + nw;
    }
  if (ev->shape)
    {
      h->shape = *ev->shape;
      h->ev.shape = &h->shape;
    }
  if (ev->collective)
    {
      h->coll = *ev->collective;
      h->ev.collective = &h->coll;
    }
  return h;
}

static guint64
covered (const MarkInfo *m)
{
  return m->ranged ? m->range_cov : m->point_cov;
}

/* A step mark: repeated, and its occurrences cover at least half the
 * time from its first start to its last (ProfilerStep's ranges cover all
 * of it; nccl:all_reduce's a sliver, "## forward ##"'s a third). */
static gboolean
qualifies (const MarkInfo *m)
{
  return m->n >= 2 && m->last_t > m->first_t && covered (m) >= (m->last_t - m->first_t) / 2;
}

/* A step begins now: what is live is due once in it, spread over as many
 * kernels as the step before had. */
static void
schedule (VsInfer *in)
{
  g_array_set_size (in->due, 0);
  for (Live *a = in->first; a != NULL; a = a->next)
    {
      Ref ref = { a->id, a->birth };
      g_array_append_val (in->due, ref);
    }
  in->k = in->step->k_last - in->step->k_prev;
  in->j = 0;
  in->c = 0;
  in->sched = TRUE;
  in->st.steps++;
}

static void
consider (VsInfer *in, MarkInfo *m, gboolean start)
{
  if (m == in->step)
    {
      if (start)
        schedule (in);
      return;
    }
  if (!qualifies (m) || (in->step != NULL && covered (m) <= covered (in->step)))
    return;
  in->step = m;
  in->st.step_mark = m->name;
  schedule (in);
}

static void
on_mark (VsInfer *in, Thr *t, const VsEvent *ev)
{
  const char *name = ev->name ? ev->name : "";
  gsize len = strlen (name);
  if (len > 4 && strcmp (name + len - 4, "/end") == 0)
    {
      g_autofree char *base = g_strndup (name, len - 4);
      MarkInfo *m = g_hash_table_lookup (t->marks, base);
      if (m != NULL && m->has_open)
        {
          m->range_cov += ev->t - m->open_t;
          m->ranged = TRUE;
          m->has_open = FALSE;
          consider (in, m, FALSE);
        }
      return;
    }
  MarkInfo *m = g_hash_table_lookup (t->marks, name);
  if (m == NULL)
    {
      m = g_new0 (MarkInfo, 1);
      m->name = name;
      m->first_t = ev->t;
      g_hash_table_insert (t->marks, g_strdup (name), m);
    }
  else
    m->point_cov += ev->t - m->last_t;
  m->n++;
  m->last_t = m->open_t = ev->t;
  m->has_open = TRUE;
  m->k_prev = m->k_last;
  m->k_last = in->kernels;
  consider (in, m, TRUE);
}

/* Inference is off (auto: a kernel named an allocation): what was given
 * goes, and the rules stop. */
static void
turn_off (VsInfer *in)
{
  in->on = FALSE;
  in->decided = TRUE;
  for (Held *h = in->head; h != NULL; h = h->next)
    h->n = 0, h->open = FALSE;
  memset (&in->st, 0, sizeof in->st);
  g_hash_table_remove_all (in->threads);
  live_clear (in);
  in->step = NULL;
  in->sched = FALSE;
}

/* The rules for H, just read (docs/model.md 6b). */
static void
infer_event (VsInfer *in, Held *h)
{
  const VsEvent *ev = &h->ev;
  Thr *t = thr_get (in, ev->tid);
  if (ev->op != VS_OP_FREE && t->last != NULL)
    {
      t->last->open = FALSE;   /* its thread moved on: its frees are over */
      t->last = NULL;
    }
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      /* Not an importer's `preexisting` block (docs/importers.md): the
       * tensors live before a profile began, of unknown layout, in one
       * allocation that the replay would move whole (trace-infer.h). */
      if (ev->kind != VS_MEM_PINNED && ev->bytes > 0 && g_strcmp0 (ev->tag, "preexisting") != 0)
        {
          live_add (in, ev->id, ev->index);
          if (t->launched)
            {
              Ref ref = { ev->id, ev->index };
              g_array_append_val (t->pend, ref);
            }
        }
      break;
    case VS_OP_FREE:
      {
        Live *a = live_find (in, ev->id);
        if (a == NULL)
          break;
        if (t->last != NULL && t->last->open && a->birth < t->last->ev.index)
          {
            held_add (t->last, ev->id, FALSE);
            in->st.freed++;
          }
        live_remove (in, a);
        break;
      }
    case VS_OP_KERNEL:
      {
        in->kernels++;
        gboolean named = ev->n_reads + ev->n_writes + ev->n_touches > 0;
        if (named && in->mode == VS_INFER_AUTO && !in->decided)
          {
            turn_off (in);
            return;
          }
        t->launched = TRUE;
        if (named)
          {
            g_array_set_size (t->pend, 0);
            if (in->sched)
              in->j++;
            break;
          }
        for (guint i = 0; i < t->pend->len; i++)
          {
            const Ref *ref = &g_array_index (t->pend, Ref, i);
            if (ref_live (in, ref))
              {
                held_add (h, ref->id, TRUE);
                in->st.made++;
              }
          }
        g_array_set_size (t->pend, 0);
        if (in->sched)
          {
            /* The step's live memory, spread: kernel j of the step gets
             * the entries below j x N / K. */
            in->j++;
            guint64 nd = in->due->len;
            while (in->c < nd && (in->k == 0 || (guint64) in->c * in->k < in->j * nd))
              {
                const Ref *ref = &g_array_index (in->due, Ref, in->c++);
                if (ref_live (in, ref))
                  {
                    held_add (h, ref->id, FALSE);
                    in->st.step++;
                  }
              }
          }
        h->open = TRUE;
        t->last = h;
        break;
      }
    case VS_OP_MARK:
      on_mark (in, t, ev);
      break;
    default:
      break;
    }
}

/* Reads one event into the queue; FALSE on bad input (ERROR set). */
static gboolean
infer_read (VsInfer *in, GError **error)
{
  VsEvent ev;
  if (!trace_next (in->r, &ev, error))
    {
      if (error != NULL && *error != NULL)
        return FALSE;
      in->eof = TRUE;
      in->decided = TRUE;
      for (Held *h = in->head; h != NULL; h = h->next)
        h->open = FALSE;
      return TRUE;
    }
  Held *h = held_new (in, &ev);
  if (in->on)
    infer_event (in, h);
  if (in->tail) in->tail->next = h; else in->head = h;
  in->tail = h;
  in->len++;
  if (!in->decided && (in->kernels >= INFER_DECIDE || in->len >= INFER_WINDOW))
    in->decided = TRUE;
  return TRUE;
}

/* The queue's first event may leave. */
static gboolean
ready (VsInfer *in)
{
  Held *h = in->head;
  if (h == NULL || !in->decided)
    return FALSE;
  if (!h->open)
    return TRUE;
  if (in->len >= INFER_WINDOW)
    {
      h->open = FALSE;   /* its thread is silent: it goes with the frees seen */
      in->st.forced++;
      Thr *t = thr_get (in, h->ev.tid);
      if (t->last == h)
        t->last = NULL;
      return TRUE;
    }
  return FALSE;
}

gboolean
infer_next (VsInfer *in, VsEvent *ev, GError **error)
{
  if (in->cur)
    {
      in->cur->next = in->spare;
      in->spare = in->cur;
      in->cur = NULL;
    }
  if (infer_passthrough (in))
    return trace_next (in->r, ev, error);
  while (!ready (in) && !in->eof)
    if (!infer_read (in, error))
      return FALSE;
  Held *h = in->head;
  if (h == NULL)
    return FALSE;
  in->head = h->next;
  if (in->head == NULL)
    in->tail = NULL;
  in->len--;
  h->next = NULL;
  in->cur = h;
  if (h->n > 0)
    in->st.kernels++;
  *ev = h->ev;
  return TRUE;
}

guint
infer_accesses (const VsInfer *in, const guint64 **ids, const guint8 **writes)
{
  if (in->cur == NULL || in->cur->n == 0)
    return 0;
  *ids = in->cur->ids;
  *writes = in->cur->wr;
  return in->cur->n;
}

gboolean
infer_passthrough (const VsInfer *in)
{
  return !in->on && in->head == NULL;
}

void
infer_stats (const VsInfer *in, VsInferStats *st)
{
  *st = in->st;
  st->on = in->on;
}
