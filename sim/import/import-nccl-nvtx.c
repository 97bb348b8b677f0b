/* import-nccl-nvtx.c — the collectives of an Nsight Systems export's NCCL
 * NVTX ranges (docs/importers.md "NCCL NVTX ranges"), for the nsys
 * importer: each NCCL kernel whose launch call lies inside an NCCL API
 * range on the same thread gets that call's collective.
 *
 * What NCCL emits (src/include/nvtx.h, nvtx_payload_schemas.h,
 * collectives.cc): one push/pop range per API call in domain "NCCL", named
 * by the function (`ncclAllReduce`, ...), with a binary payload whose
 * schema names its fields: "NCCL communicator ID" (u64), "Message size
 * [bytes]" (size_t; "Bytes" in older releases' send/recv and broadcast),
 * "Peer rank"; ncclCommInitRank* / ncclCommSplit / ncclCommInitAll ranges
 * carry the communicator and "No. of ranks" ("No. of devices"). The
 * message size is count x datatype size of the call's count argument:
 * recvcount for ncclReduceScatter, so its input buffer (SPEC 3's bytes) is
 * that times the ranks.
 *
 * What the export holds (not in any NVIDIA document we could find; from a
 * third-party decoder verified on Nsight Systems 2026.2 exports,
 * github.com/GindaChen/nsys-ai nccl_communicator.py): NVTX_EVENTS.binaryData
 * is a 32-byte header (u64 domainId, u64 schemaId, u64 payload size, u64)
 * and the payload; NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx,
 * name, type, offset) describes the fields. An offset that is NULL (or 0
 * past the first entry) is the natural alignment after the previous entry,
 * NVTX's rule. Without these columns and tables the importer reads no
 * collectives, and nothing else changes.
 *
 * The communicator (collective.group): the payload's "NCCL communicator
 * ID" is NCCL's commHash (init.cc: a hash of the unique id the
 * communicator was made with; the same on every rank), so it names the
 * group: its id is the hash folded to 53 bits (h ^ h >> 53, the low 53
 * bits; a hash below 2^53 is its own id), so that JSON readers hold it
 * exactly; its size is the "No. of ranks" of that communicator's init
 * range. A kernel of a group of ops over several communicators (which
 * NCCL launches as one per communicator) is given no group. The payload
 * says nothing of the communicator's role. */
#include "import/import-priv.h"

#include <string.h>
#include <sqlite3.h>

/* Trace integers stay below 2^63 (docs/trace-format.md). */
#define INT63_MAX ((guint64) G_MAXINT64)

enum { R_OTHER = -1, R_GROUP_START = -2, R_GROUP_END = -3 };

typedef struct {
  gint64 start, end;
  gint parent;          /* the enclosing NCCL range on the thread, -1 if none */
  gint kind;            /* VsCollKind of an op range, else R_* */
  gboolean top;         /* an op range inside no other op range */
  gboolean used;        /* its collective went to a kernel */
  gboolean has_msg, has_comm;
  guint64 msg, comm;
  gint64 group_first;   /* an outermost ncclGroupEnd: where its group's ops start */
} NRange;

typedef struct {
  GArray *r;            /* NRange, by start */
  GArray *stack;        /* load time: open ranges (indices) */
  gint depth;           /* load time: ncclGroupStart nesting */
  gint64 open_start, prev_end;
} NThread;

struct ImportNccl {
  GHashTable *threads;  /* tid -> NThread */
  GHashTable *ranks;    /* communicator id -> ranks */
};

/* One payload schema's fields this file reads (offset -1: absent). */
typedef struct {
  gint64 msg_off, comm_off, ranks_off, peer_off;
  guint msg_size, comm_size, ranks_size;
} Schema;

static void
thread_free (gpointer p)
{
  NThread *t = p;
  g_array_unref (t->r);
  if (t->stack)
    g_array_unref (t->stack);
  g_free (t);
}

void
import_nccl_free (ImportNccl *x)
{
  if (x == NULL)
    return;
  g_hash_table_unref (x->threads);
  g_hash_table_unref (x->ranks);
  g_free (x);
}

static gboolean
has_columns (sqlite3 *db, const char *q)
{
  sqlite3_stmt *st = NULL;
  gboolean ok = sqlite3_prepare_v2 (db, q, -1, &st, NULL) == SQLITE_OK;
  sqlite3_finalize (st);
  return ok;
}

/* Bytes of an NVTX payload entry type (nvToolsExtPayload.h: CHAR 1 ...
 * SIZE 22, ADDRESS 23; LP64); 0 for the others (enums, strings, nested
 * schemas: this file needs none of them). */
static guint
type_size (gint64 t)
{
  static const guint8 size[] = { 0, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8 };
  return t >= 0 && (guint64) t < sizeof size ? size[t] : 0;
}

/* An error naming the table's row by its rowid (SELECT ... WHERE rowid = N). */
static gboolean
fail_row (GError **error, const char *path, const char *table, gint64 rowid, const char *what)
{
  return import_fail (error, path, "%s rowid %" G_GINT64_FORMAT ": %s", table, rowid, what);
}

/* (domainId << 32 ^ schemaId) -> Schema, from NVTX_PAYLOAD_SCHEMA_ENTRIES. */
static gboolean
load_schemas (ImportSql *q, const char *path, GHashTable *schemas, GError **error)
{
  sqlite3 *db = q->db;
  sqlite3_stmt *st = NULL;
  import_sqlite_begin (q, "NVTX_PAYLOAD_SCHEMA_ENTRIES");
  if (sqlite3_prepare_v2 (db, "SELECT domainId, schemaId, idx, name, type, offset, rowid "
                          "FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY domainId, schemaId, idx", -1, &st, NULL) != SQLITE_OK)
    return import_sqlite_fail (q, "NVTX_PAYLOAD_SCHEMA_ENTRIES", error);
  gint64 cur_d = 0, cur_s = 0;
  gboolean have = FALSE;
  Schema *sc = NULL;
  gint64 next = 0;        /* where the next entry starts (-1: unknown) */
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 d = sqlite3_column_int64 (st, 0), s = sqlite3_column_int64 (st, 1);
      if (!have || d != cur_d || s != cur_s)
        {
          sc = g_new (Schema, 1);
          *sc = (Schema) { -1, -1, -1, -1, 0, 0, 0 };
          g_hash_table_insert (schemas, g_memdup2 (&(guint64) { (guint64) d << 32 ^ (guint64) s }, sizeof (guint64)), sc);
          cur_d = d, cur_s = s, have = TRUE, next = 0;
        }
      const char *name = (const char *) sqlite3_column_text (st, 3);
      gint64 type = sqlite3_column_int64 (st, 4);
      guint size = type_size (type);
      gint64 off;
      if (sqlite3_column_type (st, 5) != SQLITE_NULL && sqlite3_column_int64 (st, 5) != 0)
        off = sqlite3_column_int64 (st, 5);
      else if (next == 0 || next < 0 || size == 0)
        off = next;                  /* the first entry, or not computable (-1) */
      else
        off = (next + size - 1) / size * size;   /* natural alignment */
      if (off < -1 || off > G_MAXUINT32)
        {
          gint64 rowid = sqlite3_column_int64 (st, 6);
          sqlite3_finalize (st);
          return fail_row (error, path, "NVTX_PAYLOAD_SCHEMA_ENTRIES", rowid, "offset out of range");
        }
      next = off >= 0 && size ? off + size : -1;
      if (name == NULL || off < 0 || (size != 4 && size != 8))
        continue;
      if (strcmp (name, "Message size [bytes]") == 0 || strcmp (name, "Bytes") == 0)
        sc->msg_off = off, sc->msg_size = size;
      else if (strcmp (name, "NCCL communicator ID") == 0)
        sc->comm_off = off, sc->comm_size = size;
      else if (strcmp (name, "No. of ranks") == 0 || strcmp (name, "No. of devices") == 0)
        sc->ranks_off = off, sc->ranks_size = size;
    }
  gboolean ok = rc == SQLITE_DONE;
  if (!ok)
    import_sqlite_fail (q, "NVTX_PAYLOAD_SCHEMA_ENTRIES", error);
  sqlite3_finalize (st);
  return ok;
}

static gint
kind_of_name (const char *n)
{
  static const struct { const char *name; gint kind; } map[] = {
    { "ncclAllReduce", VS_COLL_ALL_REDUCE },   { "ncclAllGather", VS_COLL_ALL_GATHER },
    { "ncclReduceScatter", VS_COLL_REDUCE_SCATTER }, { "ncclAlltoAll", VS_COLL_ALL_TO_ALL },
    { "ncclBroadcast", VS_COLL_BROADCAST },   { "ncclBcast", VS_COLL_BROADCAST },
    { "ncclReduce", VS_COLL_REDUCE },         { "ncclSend", VS_COLL_SEND },
    { "ncclRecv", VS_COLL_RECV },             { "ncclGroupStart", R_GROUP_START },
    { "ncclGroupEnd", R_GROUP_END },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (n, map[i].name) == 0)
      return map[i].kind;
  return R_OTHER;
}

static guint64
field (const guint8 *p, gint64 off, guint size)
{
  if (size == 4)
    {
      guint32 v;
      memcpy (&v, p + off, 4);
      return GUINT32_FROM_LE (v);
    }
  guint64 v;
  memcpy (&v, p + off, 8);
  return GUINT64_FROM_LE (v);
}

/* The blob B of the row with rowid ROW (N bytes): its message size, communicator and ranks
 * into R (and X->ranks). An undecodable blob (no schema) says nothing; a
 * broken one is an error. */
static gboolean
read_payload (ImportNccl *x, GHashTable *schemas, const guint8 *b, gsize n, gint64 row_domain, NRange *r,
              const char *path, gint64 row, GError **error)
{
  if (n < 32)
    return fail_row (error, path, "NVTX_EVENTS", row, "NCCL payload (binaryData) shorter than its 32-byte header");
  guint64 dom = field (b, 0, 8), sch = field (b, 8, 8), len = field (b, 16, 8);
  if (len > n - 32)
    return fail_row (error, path, "NVTX_EVENTS", row, "NCCL payload (binaryData) shorter than its payload size");
  /* By the blob's domain, else the row's (the same number, as far as is known). */
  const Schema *sc = g_hash_table_lookup (schemas, &(guint64) { dom << 32 ^ sch });
  if (sc == NULL)
    sc = g_hash_table_lookup (schemas, &(guint64) { (guint64) row_domain << 32 ^ sch });
  if (sc == NULL)
    return TRUE;
  const guint8 *p = b + 32;
  gboolean fits_msg = sc->msg_off >= 0 && (guint64) sc->msg_off + sc->msg_size <= len;
  gboolean fits_comm = sc->comm_off >= 0 && (guint64) sc->comm_off + sc->comm_size <= len;
  gboolean fits_ranks = sc->ranks_off >= 0 && (guint64) sc->ranks_off + sc->ranks_size <= len;
  if (fits_msg)
    {
      r->msg = field (p, sc->msg_off, sc->msg_size);
      if (r->msg > INT63_MAX)
        return fail_row (error, path, "NVTX_EVENTS", row, "NCCL message size is 2^63 bytes or more");
      r->has_msg = TRUE;
    }
  if (fits_comm)
    r->comm = field (p, sc->comm_off, sc->comm_size), r->has_comm = TRUE;
  if (fits_comm && fits_ranks)
    {
      gint64 v = (gint64) field (p, sc->ranks_off, sc->ranks_size);
      if (sc->ranks_size == 4)
        v = (gint32) v;
      if (v < 1 || v > G_MAXUINT32)
        return fail_row (error, path, "NVTX_EVENTS", row, "NCCL communicator size below 1 or above 2^32 - 1");
      g_hash_table_insert (x->ranks, g_memdup2 (&r->comm, sizeof r->comm), GUINT_TO_POINTER ((guint) v));
    }
  return TRUE;
}

/* Adds R to its thread: the enclosing range, group nesting. */
static void
thread_add (NThread *t, NRange *r)
{
  while (t->stack->len > 0)
    {
      const NRange *top = &g_array_index (t->r, NRange, g_array_index (t->stack, gint, t->stack->len - 1));
      if (top->end >= r->start)
        break;
      g_array_set_size (t->stack, t->stack->len - 1);
    }
  r->parent = t->stack->len ? g_array_index (t->stack, gint, t->stack->len - 1) : -1;
  r->top = r->kind >= 0;
  for (gint p = r->parent; p >= 0 && r->top; p = g_array_index (t->r, NRange, p).parent)
    r->top = g_array_index (t->r, NRange, p).kind < 0;
  r->group_first = G_MAXINT64;
  /* ncclGroupStart / ncclGroupEnd the program called (not NCCL's own,
   * inside an op's range): the outermost end launches its group. */
  if (r->parent < 0 && r->kind == R_GROUP_START && t->depth++ == 0)
    t->open_start = r->start;
  if (r->parent < 0 && r->kind == R_GROUP_END)
    {
      if (t->depth > 0 && --t->depth == 0)
        r->group_first = t->open_start;
      else if (t->depth == 0)
        r->group_first = t->prev_end;  /* no ncclGroupStart range seen */
      if (t->depth == 0)
        t->prev_end = r->end;
    }
  gint i = (gint) t->r->len;
  g_array_append_val (t->r, *r);
  g_array_append_val (t->stack, i);
}

gboolean
import_nccl_load (ImportSql *q, const char *path, ImportNccl **out, GError **error)
{
  *out = NULL;
  sqlite3 *db = q->db;
  int there = import_sqlite_table (q, "NVTX_EVENTS", error), schema_there;
  if (there < 0 || (schema_there = import_sqlite_table (q, "NVTX_PAYLOAD_SCHEMA_ENTRIES", error)) < 0)
    return FALSE;
  if (there == 0 || schema_there == 0)
    return TRUE;
  import_sqlite_begin (q, "NVTX_PAYLOAD_SCHEMA_ENTRIES");
  if (!has_columns (db, "SELECT start, end, eventType, text, textId, globalTid, domainId, binaryData "
                        "FROM NVTX_EVENTS LIMIT 0")
      || !has_columns (db, "SELECT domainId, schemaId, idx, name, type, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES LIMIT 0"))
    return TRUE;
  g_autoptr (GHashTable) schemas = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  if (!load_schemas (q, path, schemas, error))
    return FALSE;
  ImportNccl *x = g_new0 (ImportNccl, 1);
  x->threads = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, thread_free);
  x->ranks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  /* The domain "NCCL" (NvtxDomainCreate rows, eventType 75); where an
   * export names no domain at all, any domain's ranges with NCCL's names. */
  g_autoptr (GHashTable) domains = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  gboolean any_domain = FALSE;
  sqlite3_stmt *st = NULL;
  import_sqlite_begin (q, "NVTX_EVENTS");
  if (sqlite3_prepare_v2 (db, "SELECT e.domainId, coalesce(e.text, s.value) FROM NVTX_EVENTS e "
                          "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 75", -1, &st, NULL) != SQLITE_OK
      && sqlite3_prepare_v2 (db, "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75", -1, &st, NULL)
           != SQLITE_OK)
    goto sql_error;
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      any_domain = TRUE;
      const char *name = (const char *) sqlite3_column_text (st, 1);
      if (name && strcmp (name, "NCCL") == 0)
        g_hash_table_add (domains, g_memdup2 (&(gint64) { sqlite3_column_int64 (st, 0) }, sizeof (gint64)));
    }
  if (rc != SQLITE_DONE)
    goto sql_error;
  sqlite3_finalize (st);
  st = NULL;

  /* Push/pop ranges (eventType 59) by thread and start, parents first. */
  import_sqlite_begin (q, "NVTX_EVENTS");
  if (sqlite3_prepare_v2 (db, "SELECT e.start, e.end, e.globalTid, coalesce(e.text, s.value), e.domainId, e.binaryData, "
                          "e.rowid FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 "
                          "ORDER BY e.globalTid, e.start, e.end DESC", -1, &st, NULL) != SQLITE_OK
      && sqlite3_prepare_v2 (db, "SELECT start, end, globalTid, text, domainId, binaryData, rowid FROM NVTX_EVENTS "
                             "WHERE eventType = 59 ORDER BY globalTid, start, end DESC", -1, &st, NULL) != SQLITE_OK)
    goto sql_error;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 row = sqlite3_column_int64 (st, 6);
      const char *name = (const char *) sqlite3_column_text (st, 3);
      if (name == NULL || !g_str_has_prefix (name, "nccl"))
        continue;
      gint64 dom = sqlite3_column_int64 (st, 4);
      if (any_domain && !g_hash_table_contains (domains, &dom))
        continue;
      NRange r = { 0 };
      r.start = sqlite3_column_int64 (st, 0);
      r.end = sqlite3_column_type (st, 1) == SQLITE_NULL ? G_MAXINT64 : sqlite3_column_int64 (st, 1);
      if (r.end < r.start)
        {
          sqlite3_finalize (st);
          import_nccl_free (x);
          return fail_row (error, path, "NVTX_EVENTS", row, "NCCL range ends before it starts");
        }
      r.kind = kind_of_name (name);
      if (sqlite3_column_type (st, 5) == SQLITE_BLOB
          && !read_payload (x, schemas, sqlite3_column_blob (st, 5), (gsize) sqlite3_column_bytes (st, 5), dom, &r,
                            path, row, error))
        {
          sqlite3_finalize (st);
          import_nccl_free (x);
          return FALSE;
        }
      guint32 tid = (guint32) ((guint64) sqlite3_column_int64 (st, 2) & 0xFFFFFF);
      NThread *t = g_hash_table_lookup (x->threads, GUINT_TO_POINTER (tid));
      if (t == NULL)
        {
          t = g_new0 (NThread, 1);
          t->r = g_array_new (FALSE, FALSE, sizeof (NRange));
          t->stack = g_array_new (FALSE, FALSE, sizeof (gint));
          t->prev_end = G_MININT64;
          g_hash_table_insert (x->threads, GUINT_TO_POINTER (tid), t);
        }
      thread_add (t, &r);
    }
  if (rc != SQLITE_DONE)
    goto sql_error;
  sqlite3_finalize (st);
  if (g_hash_table_size (x->threads) == 0)
    {
      import_nccl_free (x);
      return TRUE;
    }
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, x->threads);
  while (g_hash_table_iter_next (&it, NULL, &v))
    g_clear_pointer (&((NThread *) v)->stack, g_array_unref);
  *out = x;
  return TRUE;

sql_error:
  import_sqlite_fail (q, "NVTX_EVENTS", error);
  sqlite3_finalize (st);
  import_nccl_free (x);
  return FALSE;
}

/* The group id of communicator hash H (the file comment). */
static guint64
group_of (guint64 h)
{
  guint64 g = (h ^ (h >> 53)) & ((G_GUINT64_CONSTANT (1) << 53) - 1);
  return g ? g : 1;
}

/* R's ranks (0: its communicator's size is not in the export). */
static guint32
ranks_of (const ImportNccl *x, const NRange *r)
{
  return r->has_comm ? GPOINTER_TO_UINT (g_hash_table_lookup (x->ranks, &r->comm)) : 0;
}

/* R's input buffer (SPEC 3): the message size, times the ranks for
 * reduce_scatter (recvcount) and all_to_all (count per peer). */
static gboolean
op_bytes (const NRange *r, guint32 ranks, guint64 *out)
{
  guint64 m = r->kind == VS_COLL_REDUCE_SCATTER || r->kind == VS_COLL_ALL_TO_ALL ? ranks : 1;
  if (!r->has_msg || (m > 1 && r->msg > INT63_MAX / m))
    return FALSE;
  *out = r->msg * m;
  return TRUE;
}

/* The group that outermost ncclGroupEnd G (index GI) launches: its
 * top-level op ranges since the group began, as one collective (the rules
 * of capture/nccl.c: every peer reached by as many sends as receives is an
 * all_to_all; other p2p is a send, or a recv when more is received; one
 * kind adds up; mixed kinds take the one with the most bytes). */
static gboolean
group_coll (const ImportNccl *x, NThread *t, guint gi, VsCollective *c)
{
  const NRange *g = &g_array_index (t->r, NRange, gi);
  guint lo = 0, hi = gi;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (t->r, NRange, mid).start < g->group_first)
        lo = mid + 1;
      else
        hi = mid;
    }
  guint64 bytes[VS_COLL_COUNT] = { 0 };
  guint n[VS_COLL_COUNT] = { 0 };
  guint32 ranks = 0;
  guint64 comm = 0;
  gboolean one_comm = TRUE;   /* every op used so far on communicator comm */
  guint used = 0;
  for (guint i = lo; i < gi; i++)
    {
      NRange *r = &g_array_index (t->r, NRange, i);
      guint32 rk = ranks_of (x, r);
      guint64 b;
      if (!r->top || r->used || rk == 0 || !op_bytes (r, rk, &b))
        continue;
      r->used = TRUE;
      one_comm = one_comm && (used++ == 0 || r->comm == comm);
      comm = r->comm;
      ranks = MAX (ranks, rk);
      n[r->kind]++;
      bytes[r->kind] = b > INT63_MAX - bytes[r->kind] ? INT63_MAX : bytes[r->kind] + b;
    }
  gint best = -1;
  guint64 most = 0;
  for (gint k = 0; k < VS_COLL_SEND; k++)
    if (n[k] && (best < 0 || bytes[k] > most))
      best = k, most = bytes[k];
  if (n[VS_COLL_SEND] || n[VS_COLL_RECV])
    {
      guint ns = n[VS_COLL_SEND];
      gint kind;
      guint64 b;
      if (ns == n[VS_COLL_RECV] && (ns == ranks || (ranks > 2 && ns == ranks - 1)))
        kind = VS_COLL_ALL_TO_ALL, b = bytes[VS_COLL_SEND];
      else if (ns && bytes[VS_COLL_SEND] >= bytes[VS_COLL_RECV])
        kind = VS_COLL_SEND, b = bytes[VS_COLL_SEND];
      else
        kind = VS_COLL_RECV, b = bytes[VS_COLL_RECV];
      if (best < 0 || b > most)
        best = kind, most = b;
    }
  if (best < 0)
    return FALSE;
  *c = (VsCollective) { .kind = (guint8) best, .ranks = ranks, .bytes = most, .group = one_comm ? group_of (comm) : 0 };
  return TRUE;
}

gboolean
import_nccl_find (ImportNccl *x, guint32 tid, gint64 launch, VsCollective *c)
{
  NThread *t = x ? g_hash_table_lookup (x->threads, GUINT_TO_POINTER (tid)) : NULL;
  if (t == NULL || t->r->len == 0)
    return FALSE;
  /* The last range starting at or before the launch, then up to the
   * innermost one that holds it. */
  guint lo = 0, hi = t->r->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (t->r, NRange, mid).start <= launch)
        lo = mid + 1;
      else
        hi = mid;
    }
  gint j = (gint) lo - 1;
  while (j >= 0 && g_array_index (t->r, NRange, j).end < launch)
    j = g_array_index (t->r, NRange, j).parent;
  /* The innermost op range around it (ncclSend's own group calls sit
   * inside ncclSend's range), else the outermost ncclGroupEnd. */
  gint op = -1, group = -1;
  for (gint p = j; p >= 0; p = g_array_index (t->r, NRange, p).parent)
    {
      const NRange *r = &g_array_index (t->r, NRange, p);
      if (r->kind >= 0 && op < 0)
        op = p;
      if (r->kind == R_GROUP_END && r->group_first != G_MAXINT64)
        group = p;
    }
  if (op >= 0)
    {
      NRange *r = &g_array_index (t->r, NRange, op);
      guint32 rk = ranks_of (x, r);
      guint64 b;
      if (r->used || rk == 0 || !op_bytes (r, rk, &b))
        return FALSE;
      r->used = TRUE;
      *c = (VsCollective) { .kind = (guint8) r->kind, .ranks = rk, .bytes = b, .group = group_of (r->comm) };
      return TRUE;
    }
  if (group < 0)
    return FALSE;
  NRange *g = &g_array_index (t->r, NRange, group);
  if (g->used)
    return FALSE;
  g->used = TRUE;
  return group_coll (x, t, (guint) group, c);
}
