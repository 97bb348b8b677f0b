/* stream.part.c — streams (5.3) and the dependencies between their ops:
 * finding a stream by id, an op waiting for another (stream_wait, the
 * legacy default stream), recorded events.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* Streams by id: ids below STREAM_DENSE (what readers and generators
 * number streams with) in a dense array, the others in a map. */
#define STREAM_DENSE 4096

static __attribute__ ((noinline)) Stream *
stream_find_slow (Sim *s, guint64 id)
{
  guint64 *v = u64map_lookup (&s->gpu.streams, id + 1);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

static inline Stream *
stream_find (Sim *s, guint64 id)
{
  if (G_LIKELY (id < s->gpu.n_stream_dense))
    return s->gpu.stream_dense[id];
  if (id < STREAM_DENSE)
    return NULL;
  return stream_find_slow (s, id);
}

/* Pointer array ARR of *N slots (ELEM bytes each) grown to hold index
 * ID: at least 16 slots, doubling, the new ones NULL. */
static gpointer
dense_grow (gpointer arr, guint *n, guint64 id, gsize elem)
{
  guint m = MAX (16u, *n);
  while (m <= id)
    m *= 2;
  arr = g_realloc_n (arr, m, elem);
  memset ((char *) arr + (gsize) *n * elem, 0, (gsize) (m - *n) * elem);
  *n = m;
  return arr;
}

/* A new stream of id ID. */
static __attribute__ ((noinline)) Stream *
stream_new (Sim *s, guint64 id)
{
  Stream *st = g_new0 (Stream, 1);
  st->id = id;
  st->idx = s->gpu.stream_list->len;
  st->bit = st->idx < 64 ? G_GUINT64_CONSTANT (1) << st->idx : 0;
  if (id < STREAM_DENSE)
    {
      if (id >= s->gpu.n_stream_dense)
        s->gpu.stream_dense = dense_grow (s->gpu.stream_dense, &s->gpu.n_stream_dense, id, sizeof (Stream *));
      s->gpu.stream_dense[id] = st;
    }
  else
    u64map_insert (&s->gpu.streams, id + 1, GPOINTER_TO_SIZE (st));
  g_ptr_array_add (s->gpu.stream_list, st);
  if (G_UNLIKELY (s->out.timeline))
    timeline_stream (s, id);
  return st;
}

static inline Stream *
stream_get (Sim *s, guint64 id)
{
  Stream *st = stream_find (s, id);
  if (G_LIKELY (st != NULL))
    return st;
  return stream_new (s, id);
}

static void
op_dep_done (Sim *s, gpointer obj, guint64 arg)
{
  Op *op = obj;
  if (--op->deps == 0)
    op_try_start (s, op);
  op_unref (op);
}

static void
op_depend (Op *op, Op *on)
{
  if (on == NULL || on->c.done || on == op)
    return;
  op->deps++;
  op->c.refs++;
  completion_wait (&on->c, op_dep_done, op, 0);
}

/* Recorded events by id, as streams: ids below EVENT_DENSE in a dense
 * array (grown on demand), the others in a map. Each holds a reference
 * to the event's last record (marker_issue). */
#define EVENT_DENSE 4096

static __attribute__ ((noinline)) Op *
event_find_slow (Sim *s, guint64 event)
{
  if (event < EVENT_DENSE)
    return NULL;
  guint64 *v = u64map_lookup (&s->gpu.events, event + 1);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

static inline Op *
event_find (Sim *s, guint64 event)
{
  if (G_LIKELY (event < s->gpu.n_event_dense))
    return s->gpu.event_dense[event];
  return event_find_slow (s, event);
}

/* The slot of EVENT's last record (NULL in it: none yet), made if new. */
static __attribute__ ((noinline)) Op **
event_slot_slow (Sim *s, guint64 event)
{
  if (event < EVENT_DENSE)
    {
      s->gpu.event_dense = dense_grow (s->gpu.event_dense, &s->gpu.n_event_dense, event, sizeof (Op *));
      return &s->gpu.event_dense[event];
    }
  guint64 *v = u64map_lookup (&s->gpu.events, event + 1);
  if (v == NULL)
    {
      u64map_insert (&s->gpu.events, event + 1, 0);
      v = u64map_lookup (&s->gpu.events, event + 1);
    }
  G_STATIC_ASSERT (sizeof (guint64) == sizeof (Op *));
  return (Op **) (gpointer) v;
}

static inline Op **
event_slot (Sim *s, guint64 event)
{
  if (G_LIKELY (event < s->gpu.n_event_dense))
    return &s->gpu.event_dense[event];
  return event_slot_slow (s, event);
}
