/* trace-sum.c — what a trace's events sum to, as a version 4 binary
 * file's end record holds it (docs/trace-format.md, "The end record's
 * summary"): the earliest t, the latest captured end, and for each
 * thread and mark name how many and the t of the last. The writer
 * (trace.c) fills a VsTraceSum as it writes and encodes it at the end; a
 * file's reader (trace-bin.c) fills one as it reads and checks the end
 * record against it; the skim (bin_skim_summary) answers from the
 * record instead of reading the events. */
#include "trace/trace-priv.h"

#include <stdlib.h>
#include <string.h>

static guint
mark_hash (gconstpointer p)
{
  const VsMarkSum *m = p;
  return g_str_hash (m->name) ^ (m->tid * 0x9E3779B1u);
}

static gboolean
mark_equal (gconstpointer a, gconstpointer b)
{
  const VsMarkSum *x = a, *y = b;
  return x->tid == y->tid && strcmp (x->name, y->name) == 0;
}

void
trace_sum_init (VsTraceSum *s)
{
  s->first_t = G_MAXUINT64;
  s->last_end = 0;
  s->marks = g_hash_table_new_full (mark_hash, mark_equal, g_free, NULL);
}

void
trace_sum_clear (VsTraceSum *s)
{
  g_clear_pointer (&s->marks, g_hash_table_unref);
}

/* A key for lookups: the name is compared through the struct's tail. */
static VsMarkSum *
mark_new (guint32 tid, const char *name)
{
  gsize len = strlen (name);
  VsMarkSum *m = g_malloc (sizeof *m + len + 1);
  m->count = 0;
  m->last_t = 0;
  m->tid = tid;
  memcpy (m->name, name, len + 1);
  return m;
}

const VsMarkSum *
trace_sum_lookup (const VsTraceSum *s, guint32 tid, const char *name)
{
  g_autofree VsMarkSum *key = mark_new (tid, name);
  return g_hash_table_lookup (s->marks, key);
}

void
trace_sum_mark (VsTraceSum *s, guint32 tid, const char *name, guint64 t)
{
  VsMarkSum *key = mark_new (tid, name), *m = g_hash_table_lookup (s->marks, key);
  if (m == NULL)
    g_hash_table_add (s->marks, m = key);
  else
    g_free (key);
  m->count++;
  m->last_t = t;
}

/* By tid, then name bytewise (strcmp compares unsigned bytes; a prefix
 * comes first). */
static int
mark_cmp (gconstpointer a, gconstpointer b)
{
  const VsMarkSum *x = *(const VsMarkSum *const *) a, *y = *(const VsMarkSum *const *) b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  return strcmp (x->name, y->name);
}

gpointer *
trace_sum_sorted (const VsTraceSum *s, guint *n)
{
  gpointer *all = g_hash_table_get_keys_as_array (s->marks, n);
  qsort (all, *n, sizeof *all, mark_cmp);
  return all;
}
