/* trace-reader.c — the reader base every format shares (VsTraceReader,
 * trace-priv.h): the field tables, messages naming the record, the
 * validation of SPEC section 3 (live ids, required fields, kernel shapes),
 * collective groups and the job's size, trace_next_slow and trace_close.
 * The formats (trace-bin.c, trace-jsonl.c) fill in a VsTraceReaderClass
 * and call down into this file; it never calls them but through that
 * class. */
#include "trace/trace-priv.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

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
  if (trace_dim3_partly_zero (d[0], d[1], d[2]))
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

  /* Allocation ids, tracked in file order; not while trace_skim reads
   * (trace-scan.c: no live set is kept there). */
  if (G_UNLIKELY (r->skim))
    return ev->op != VS_OP_ALLOC || ev->id != 0 || FAIL ("field 'id': an allocation id must be positive");
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
  trace_reader_note_mark (r, ev);
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
