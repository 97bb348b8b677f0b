/* import-nsys.c — Nsight Systems SQLite export (`nsys export --type
 * sqlite`) into a vramsim trace, through libsqlite3. docs/importers.md
 * states what maps and what is dropped; in short: CUPTI_ACTIVITY_KIND_
 * KERNEL / MEMCPY / MEMSET rows become kernels, copies and memsets issued
 * at their runtime call (CUPTI_ACTIVITY_KIND_RUNTIME, by correlationId);
 * synchronizing runtime calls become syncs (the stream from
 * CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); CUDA_GPU_MEMORY_USAGE_EVENTS become
 * allocations and frees; NVTX_EVENTS become marks (ranges: NAME at the start, NAME/end at the end), and NCCL's
 * ranges name the collectives of the NCCL kernels launched inside them (import-nccl-nvtx.c); TARGET_INFO_GPU names
 * the device. Names come from StringIds. Tables that are absent are
 * skipped. Times are integer ns already. Whatever is written reads back:
 * names are made valid UTF-8, times and durations stay within 0..2^63-1. */
#include "import/import.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>

#include "import/import-priv.h"
#include "trace/trace.h"

gboolean
import_nsys_detect (const char *path)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return FALSE;
  char magic[16];
  gboolean ok = fread (magic, 1, 16, f) == 16 && memcmp (magic, "SQLite format 3", 16) == 0;
  fclose (f);
  return ok;
}

typedef struct {
  gint64 start;
  guint64 dur;
  guint32 tid;
  const char *name;
  gboolean used;
} Rt;

typedef struct {
  const char *path;
  sqlite3 *db;
  ImportSql sql;
  GHashTable *strings;   /* id -> name */
  GHashTable *rt;        /* correlationId -> Rt */
  GArray *outs;
  guint32 main_tid;
  gint64 t0;               /* >= 0 */
  gboolean t0_set;
  GError **error;
  GStringChunk *chunk;     /* mark names */
  GHashTable *sync_stream; /* correlationId -> stream + 1 (0: none) */
  GHashTable *mem_live;    /* address -> id */
  guint64 mem_next_id;
  gint64 device_id;        /* the device most kernels ran on */
  char *device_name;
  gboolean device_matched;
  ImportNccl *nccl;        /* NCCL NVTX ranges (import-nccl-nvtx.c), or NULL */
  const Rt *last_rt;       /* the runtime call push_gpu issued its op at, or NULL */
} Ns;

/* nsys serializes thread ids as (vm << 56 | pid << 24 | tid). */
static guint32
tid_of_global (sqlite3_int64 g)
{
  return (guint32) ((guint64) g & 0xFFFFFF);
}

/* ---- reading ---- */

static gboolean G_GNUC_PRINTF (4, 5)
row_bad (Ns *n, const char *table, guint64 i, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (n->error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: %s row %" G_GUINT64_FORMAT ": %s", n->path,
               table, i + 1, msg);
  return FALSE;
}

/* end - start of row I of TABLE, in *DUR: an error when end is before start
 * or the difference exceeds the trace's limit (2^63 - 1). */
static gboolean
row_dur (Ns *n, const char *table, guint64 i, sqlite3_int64 start, sqlite3_int64 end, guint64 *dur)
{
  gint64 d;
  if (end < start)
    return row_bad (n, table, i, "end before start");
  if (__builtin_sub_overflow ((gint64) end, (gint64) start, &d))
    return row_bad (n, table, i, "end - start (%" G_GINT64_FORMAT " - %" G_GINT64_FORMAT ") is out of range",
                    (gint64) end, (gint64) start);
  *dur = (guint64) d;
  return TRUE;
}

/* A stream id column: must not be negative (a trace's ids are 0..2^63-1). */
static gboolean
row_stream (Ns *n, const char *table, guint64 i, sqlite3_int64 s, guint64 *out)
{
  if (s < 0)
    return row_bad (n, table, i, "negative streamId %" G_GINT64_FORMAT, (gint64) s);
  *out = (guint64) s;
  return TRUE;
}

static gboolean
sql_fail (Ns *n, const char *what)
{
  return import_sqlite_fail (&n->sql, what, n->error);
}

/* Runs Q (if TABLE exists), calling ROW for each row; ROW returns FALSE on bad input. */
static gboolean
each_row (Ns *n, const char *table, const char *q, gboolean (*row) (Ns *, sqlite3_stmt *, guint64), gboolean *present)
{
  if (present)
    *present = FALSE;
  int there = import_sqlite_table (&n->sql, table, n->error);
  if (there <= 0)
    return there == 0;
  if (present)
    *present = TRUE;
  import_sqlite_begin (&n->sql, table);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2 (n->db, q, -1, &st, NULL) != SQLITE_OK)
    return sql_fail (n, table);
  int rc;
  guint64 i = 0;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    if (!row (n, st, i++))
      {
        sqlite3_finalize (st);
        return FALSE;
      }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return sql_fail (n, table);
  return TRUE;
}

static const char *
string_of (Ns *n, sqlite3_int64 id)
{
  return g_hash_table_lookup (n->strings, &id);
}

static gboolean
row_string (Ns *n, sqlite3_stmt *st, guint64 i)
{
  sqlite3_int64 id = sqlite3_column_int64 (st, 0);
  const char *v = (const char *) sqlite3_column_text (st, 1);
  /* Trace readers take valid UTF-8 only: bad bytes become U+FFFD. */
  g_hash_table_insert (n->strings, g_memdup2 (&id, sizeof id), g_utf8_make_valid (v ? v : "", -1));
  return TRUE;
}

static gboolean
row_runtime (Ns *n, sqlite3_stmt *st, guint64 i)
{
  Rt *r = g_new0 (Rt, 1);
  sqlite3_int64 start = sqlite3_column_int64 (st, 0), end = sqlite3_column_int64 (st, 1);
  r->start = start;
  /* A call that ends before it starts costs 0 (as before); one longer than
   * the trace's range is bad input. */
  if (end > start && !row_dur (n, "CUPTI_ACTIVITY_KIND_RUNTIME", i, start, end, &r->dur))
    {
      g_free (r);
      return FALSE;
    }
  r->tid = tid_of_global (sqlite3_column_int64 (st, 2));
  sqlite3_int64 c = sqlite3_column_int64 (st, 3);
  r->name = string_of (n, sqlite3_column_int64 (st, 4));
  if (sqlite3_column_type (st, 3) == SQLITE_NULL || g_hash_table_contains (n->rt, &c))
    {
      g_free (r);
      return TRUE;
    }
  g_hash_table_insert (n->rt, g_memdup2 (&c, sizeof c), r);
  return TRUE;
}

/* T in ns since t0 (0 before it): at most 2^63 - 1, as t0 >= 0. */
static guint64
rel (Ns *n, sqlite3_int64 t)
{
  return t > n->t0 ? (guint64) (t - n->t0) : 0;
}

/* Pushes the GPU op of a row (start, end, streamId, correlationId, ...)
 * that lasted DUR on STREAM: issued by the runtime call of its
 * correlation (*CALL names it), else on the main thread at its start. */
static ImportOut *
push_gpu (Ns *n, VsOp op, sqlite3_stmt *st, guint64 dur, guint64 stream, const char **call)
{
  sqlite3_int64 start = sqlite3_column_int64 (st, 0);
  sqlite3_int64 c = sqlite3_column_int64 (st, 3);
  Rt *r = sqlite3_column_type (st, 3) == SQLITE_NULL ? NULL : g_hash_table_lookup (n->rt, &c);
  ImportOut *o;
  *call = NULL;
  n->last_rt = r;
  if (r == NULL)
    o = import_push (n->outs, rel (n, start), n->main_tid, op);
  else
    {
      o = import_push (n->outs, rel (n, r->start), r->tid, op);
      if (!r->used)
        o->ev.host_ns = r->dur;
      r->used = TRUE;
      *call = r->name;
    }
  o->ev.stream = stream;
  o->ev.dur = dur;
  return o;
}

/* The duration (columns 0, 1) and stream (column 2) of a GPU op row. */
static gboolean
check_times (Ns *n, sqlite3_stmt *st, const char *table, guint64 i, guint64 *dur, guint64 *stream)
{
  return row_dur (n, table, i, sqlite3_column_int64 (st, 0), sqlite3_column_int64 (st, 1), dur)
         && row_stream (n, table, i, sqlite3_column_int64 (st, 2), stream);
}

/* The kernel table's query: start, end, streamId, correlationId, name,
 * then the launch (gridX..Z, blockX..Z, registersPerThread, static and
 * dynamic shared memory) where the export has those columns (NULLs in a
 * minimal or older export). */
static const char *
kernel_query (Ns *n)
{
  sqlite3_stmt *st = NULL;
  gboolean launch = sqlite3_prepare_v2 (n->db, "SELECT gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, "
                                        "staticSharedMemory, dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 0",
                                        -1, &st, NULL) == SQLITE_OK;
  sqlite3_finalize (st);
  return launch ? "SELECT start, end, streamId, correlationId, demangledName, gridX, gridY, gridZ, blockX, blockY, "
                  "blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory "
                  "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"
                : "SELECT start, end, streamId, correlationId, demangledName, NULL, NULL, NULL, NULL, NULL, NULL, "
                  "NULL, NULL, NULL FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start";
}

/* start, end, streamId, correlationId, name, grid, block, registers, shared memory */
static gboolean
row_kernel (Ns *n, sqlite3_stmt *st, guint64 i)
{
  guint64 dur = 0, stream = 0;
  if (!check_times (n, st, "CUPTI_ACTIVITY_KIND_KERNEL", i, &dur, &stream))
    return FALSE;
  const char *call;
  ImportOut *o = push_gpu (n, VS_OP_KERNEL, st, dur, stream, &call);
  const char *name = string_of (n, sqlite3_column_int64 (st, 4));
  o->ev.name = name ? name : "kernel";
  /* An NCCL kernel launched inside an NCCL API range of its thread. */
  if (n->nccl && n->last_rt && import_coll_kind_from_kernel (name) != -1
      && import_nccl_find (n->nccl, n->last_rt->tid, n->last_rt->start, &o->coll))
    o->has_coll = TRUE;
  /* gridX..Z, blockX..Z, registersPerThread, static + dynamic shared
   * memory (columns 5-13): the launch CUPTI recorded. */
  VsKernelShape *s = &o->shape;
  memset (s, 0, sizeof *s);
  s->flops = VS_NONE;
  gboolean ok = TRUE;
  for (int c = 5; c <= 13; c++)
    ok &= sqlite3_column_type (st, c) == SQLITE_INTEGER && sqlite3_column_int64 (st, c) >= (c <= 10 ? 1 : 0)
          && sqlite3_column_int64 (st, c) <= G_MAXUINT32;
  if (ok)
    {
      for (int c = 0; c < 3; c++)
        {
          s->grid[c] = (guint32) sqlite3_column_int64 (st, 5 + c);
          s->block[c] = (guint32) sqlite3_column_int64 (st, 8 + c);
        }
      s->regs = (guint32) sqlite3_column_int64 (st, 11);
      guint64 smem = (guint64) sqlite3_column_int64 (st, 12) + (guint64) sqlite3_column_int64 (st, 13);
      s->smem = (guint32) MIN (smem, G_MAXUINT32);
      o->has_shape = TRUE;
    }
  return TRUE;
}

/* start, end, streamId, correlationId, bytes, copyKind, srcKind, dstKind */
static gboolean
row_memcpy (Ns *n, sqlite3_stmt *st, guint64 i)
{
  guint64 dur = 0, stream = 0;
  if (!check_times (n, st, "CUPTI_ACTIVITY_KIND_MEMCPY", i, &dur, &stream))
    return FALSE;
  int kind = sqlite3_column_int (st, 5);
  int dir;
  switch (kind)
    {
    case 1: case 3: case 11: dir = VS_DIR_H2D; break;           /* HtoD, HtoA, UVM HtoD */
    case 2: case 4: case 12: dir = VS_DIR_D2H; break;           /* DtoH, AtoH, UVM DtoH */
    case 5: case 6: case 7: case 8: case 13: dir = VS_DIR_D2D; break;
    case 10: dir = VS_DIR_P2P; break;
    default: return TRUE;                                      /* HtoH, unknown: dropped */
    }
  const char *call;
  ImportOut *o = push_gpu (n, VS_OP_COPY, st, dur, stream, &call);
  o->ev.bytes = (guint64) MAX (0, sqlite3_column_int64 (st, 4));
  o->ev.dir = (guint8) dir;
  /* Whether the host waits, by CUDA's rules: a synchronous device-to-device
   * or peer copy does not (docs/trace-format.md, `async`). */
  o->ev.async = call == NULL || strstr (call, "Async") != NULL || dir == VS_DIR_D2D || dir == VS_DIR_P2P;
  /* ENUM_CUDA_MEM_KIND: 1 = pinned. */
  if (dir == VS_DIR_H2D)
    o->ev.dst = IMPORT_UNTRACKED_ID, o->pinned_host = sqlite3_column_int (st, 6) == 1;
  else if (dir == VS_DIR_D2H)
    o->ev.src = IMPORT_UNTRACKED_ID, o->pinned_host = sqlite3_column_int (st, 7) == 1;
  else
    o->ev.src = o->ev.dst = IMPORT_UNTRACKED_ID;
  return TRUE;
}

/* start, end, streamId, correlationId, bytes */
static gboolean
row_memset (Ns *n, sqlite3_stmt *st, guint64 i)
{
  guint64 dur = 0, stream = 0;
  if (!check_times (n, st, "CUPTI_ACTIVITY_KIND_MEMSET", i, &dur, &stream))
    return FALSE;
  const char *call;
  ImportOut *o = push_gpu (n, VS_OP_MEMSET, st, dur, stream, &call);
  o->ev.bytes = (guint64) MAX (0, sqlite3_column_int64 (st, 4));
  o->ev.dst = IMPORT_UNTRACKED_ID;
  /* A memset of device memory never makes the host wait, synchronous API
   * or not (CUDA "API synchronization behavior"; docs/trace-format.md). */
  o->ev.async = TRUE;
  return TRUE;
}

/* SYNCHRONIZATION: correlationId, streamId, syncType */
static gboolean
row_sync (Ns *n, sqlite3_stmt *st, guint64 i)
{
  sqlite3_int64 c = sqlite3_column_int64 (st, 0);
  sqlite3_int64 s = sqlite3_column_int64 (st, 1);
  int type = sqlite3_column_int (st, 2);
  /* Stream and event syncs name a stream (0xFFFFFFFF = none). */
  gsize v = (type == 3 || type == 1) && s >= 0 && s != 0xFFFFFFFF ? (gsize) s + 1 : 0;
  g_hash_table_insert (n->sync_stream, g_memdup2 (&c, sizeof c), GSIZE_TO_POINTER (v));
  return TRUE;
}

/* start, end, eventType, text, textId, globalTid */
static gboolean
row_nvtx (Ns *n, sqlite3_stmt *st, guint64 i)
{
  sqlite3_int64 start = sqlite3_column_int64 (st, 0);
  int type = sqlite3_column_int (st, 2);
  if (start < 0 || (type != 34 && type != 59 && type != 60))
    return TRUE; /* domain and category definitions are not events */
  const char *text = (const char *) sqlite3_column_text (st, 3);
  const char *name = text ? text : string_of (n, sqlite3_column_int64 (st, 4));
  if (name == NULL)
    return TRUE;
  guint32 tid = tid_of_global (sqlite3_column_int64 (st, 5));
  ImportOut *o = import_push (n->outs, rel (n, start), tid, VS_OP_MARK);
  g_autofree char *valid = g_utf8_make_valid (name, -1);
  o->ev.name = g_string_chunk_insert_const (n->chunk, valid);
  /* A push/pop or start/end range that ended: NAME/end at its end
   * (docs/trace-format.md), as vramcap records NVTX pops. A start/end range
   * ended on another thread still ends on the thread that started it:
   * NVTX_EVENTS keeps only one globalTid. */
  sqlite3_int64 end = sqlite3_column_int64 (st, 1);
  if (type != 34 && sqlite3_column_type (st, 1) != SQLITE_NULL && end >= start)
    {
      g_autofree char *e = g_strconcat (valid, "/end", NULL);
      import_push (n->outs, rel (n, end), tid, VS_OP_MARK)->ev.name = g_string_chunk_insert_const (n->chunk, e);
    }
  return TRUE;
}

/* start, address, bytes, memKind, memoryOperationType */
static gboolean
row_mem (Ns *n, sqlite3_stmt *st, guint64 i)
{
  sqlite3_int64 addr = sqlite3_column_int64 (st, 1);
  sqlite3_int64 bytes = sqlite3_column_int64 (st, 2);
  int kind = sqlite3_column_int (st, 3), op = sqlite3_column_int (st, 4);
  guint64 t = rel (n, sqlite3_column_int64 (st, 0));
  if (op == 0 && bytes > 0)
    {
      VsMemKind k = kind == 1 ? VS_MEM_PINNED : kind == 4 ? VS_MEM_MANAGED : VS_MEM_DEVICE;
      if (kind == 0)
        return TRUE; /* pageable host memory is not tracked */
      guint64 *old = g_hash_table_lookup (n->mem_live, &addr);
      if (old)
        {
          import_push (n->outs, t, n->main_tid, VS_OP_FREE)->ev.id = *old;
          g_hash_table_remove (n->mem_live, &addr);
        }
      ImportOut *o = import_push (n->outs, t, n->main_tid, VS_OP_ALLOC);
      o->ev.id = n->mem_next_id;
      o->ev.bytes = (guint64) bytes;
      o->ev.kind = k;
      g_hash_table_insert (n->mem_live, g_memdup2 (&addr, sizeof addr), g_memdup2 (&n->mem_next_id, sizeof n->mem_next_id));
      n->mem_next_id++;
    }
  else if (op == 1)
    {
      guint64 *id = g_hash_table_lookup (n->mem_live, &addr);
      if (id)
        {
          import_push (n->outs, t, n->main_tid, VS_OP_FREE)->ev.id = *id;
          g_hash_table_remove (n->mem_live, &addr);
        }
    }
  return TRUE;
}

static gboolean
row_min (Ns *n, sqlite3_stmt *st, guint64 i)
{
  if (sqlite3_column_type (st, 0) != SQLITE_NULL)
    {
      gint64 t = MAX (0, sqlite3_column_int64 (st, 0));
      if (!n->t0_set || t < n->t0)
        n->t0 = t;
      n->t0_set = TRUE;
    }
  return TRUE;
}

static gboolean
row_main_tid (Ns *n, sqlite3_stmt *st, guint64 i)
{
  if (i == 0)
    n->main_tid = tid_of_global (sqlite3_column_int64 (st, 0));
  return TRUE;
}

static gboolean
row_device_id (Ns *n, sqlite3_stmt *st, guint64 i)
{
  if (i == 0)
    n->device_id = sqlite3_column_int64 (st, 0);
  return TRUE;
}

/* The GPU whose id is the kernels' deviceId, else the first listed. */
static gboolean
row_gpu (Ns *n, sqlite3_stmt *st, guint64 i)
{
  const char *name = (const char *) sqlite3_column_text (st, 1);
  if (name == NULL || n->device_matched)
    return TRUE;
  n->device_matched = sqlite3_column_int64 (st, 0) == n->device_id;
  if (n->device_name == NULL || n->device_matched)
    {
      g_free (n->device_name);
      n->device_name = g_utf8_make_valid (name, -1);
    }
  return TRUE;
}

/* Synchronizing runtime calls (their GPU-side record gives the stream). */
static void
map_syncs (Ns *n)
{
  GHashTableIter it;
  gpointer key, val;
  g_hash_table_iter_init (&it, n->rt);
  while (g_hash_table_iter_next (&it, &key, &val))
    {
      Rt *r = val;
      const char *nm = r->name;
      if (nm == NULL || r->used)
        continue;
      gboolean device = g_str_has_prefix (nm, "cudaDeviceSynchronize") || g_str_has_prefix (nm, "cuCtxSynchronize");
      gboolean stream = g_str_has_prefix (nm, "cudaStreamSynchronize") || g_str_has_prefix (nm, "cuStreamSynchronize")
                        || g_str_has_prefix (nm, "cudaEventSynchronize") || g_str_has_prefix (nm, "cuEventSynchronize");
      if (!device && !stream)
        continue;
      ImportOut *o = import_push (n->outs, rel (n, r->start), r->tid, VS_OP_SYNC);
      o->ev.host_ns = r->dur;
      if (device)
        o->ev.scope = VS_SYNC_DEVICE;
      else
        {
          gsize s = GPOINTER_TO_SIZE (g_hash_table_lookup (n->sync_stream, key));
          if (s)
            o->ev.scope = VS_SYNC_STREAM, o->ev.stream = s - 1;
          else
            o->stream_unknown = TRUE;
        }
    }
}

gboolean
import_nsys (const char *path, const char *out_path, GError **error)
{
  Ns nn = { 0 }, *n = &nn;
  n->path = path;
  n->error = error;
  gboolean ok = FALSE;
  if (!import_sqlite_open (&n->sql, path, error))
    return FALSE;
  n->db = n->sql.db;
  n->strings = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  n->rt = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  n->outs = g_array_new (FALSE, FALSE, sizeof (ImportOut));
  n->sync_stream = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  n->mem_live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  n->mem_next_id = 1;
  n->device_id = -1;
  n->chunk = g_string_chunk_new (1024);
  gboolean any_table = FALSE, present;

  /* A file SQLite cannot read fails here, on the first query. */
  sqlite3_stmt *probe = NULL;
  if (sqlite3_prepare_v2 (n->db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL) != SQLITE_OK
      || sqlite3_step (probe) != SQLITE_ROW)
    {
      sqlite3_finalize (probe);
      sql_fail (n, "not a readable SQLite database");
      goto out;
    }
  sqlite3_finalize (probe);

  static const char *const gpu_tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                            "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME" };
  for (guint i = 0; i < G_N_ELEMENTS (gpu_tables); i++)
    {
      g_autofree char *q = g_strdup_printf ("SELECT min(start) FROM %s", gpu_tables[i]);
      if (!each_row (n, gpu_tables[i], q, row_min, &present))
        goto out;
      any_table |= present;
    }
  if (!any_table)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: no CUPTI_ACTIVITY_KIND_* tables: not an Nsight Systems export with CUDA trace", path);
      goto out;
    }
  if (!each_row (n, "NVTX_EVENTS", "SELECT min(start) FROM NVTX_EVENTS WHERE start >= 0", row_min, NULL)
      || !each_row (n, "StringIds", "SELECT id, value FROM StringIds", row_string, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_RUNTIME",
                    "SELECT globalTid, count(*) AS c FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY globalTid ORDER BY c DESC",
                    row_main_tid, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_RUNTIME",
                    "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start",
                    row_runtime, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_KERNEL",
                    "SELECT deviceId, count(*) AS c FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId ORDER BY c DESC",
                    row_device_id, NULL)
      || !each_row (n, "TARGET_INFO_GPU", "SELECT id, name FROM TARGET_INFO_GPU ORDER BY id", row_gpu, NULL)
      || !import_nccl_load (&n->sql, n->path, &n->nccl, n->error)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_KERNEL", kernel_query (n), row_kernel, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_MEMCPY",
                    "SELECT start, end, streamId, correlationId, bytes, copyKind, srcKind, dstKind "
                    "FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start", row_memcpy, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_MEMSET",
                    "SELECT start, end, streamId, correlationId, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start",
                    row_memset, NULL)
      || !each_row (n, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                    "SELECT correlationId, streamId, syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", row_sync, NULL)
      || !each_row (n, "NVTX_EVENTS", "SELECT start, end, eventType, text, textId, globalTid FROM NVTX_EVENTS",
                    row_nvtx, NULL)
      || !each_row (n, "CUDA_GPU_MEMORY_USAGE_EVENTS",
                    "SELECT start, address, bytes, memKind, memoryOperationType FROM CUDA_GPU_MEMORY_USAGE_EVENTS "
                    "ORDER BY start", row_mem, NULL))
    goto out;
  map_syncs (n);
  if (n->outs->len == 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: 0 events imported (no kernels, copies, memsets, memory events or NVTX ranges; "
                   "was nsys run with --trace=cuda?)", n->path);
      goto out;
    }
  import_sort (n->outs);
  ok = import_write (n->outs, out_path, n->device_name, "vramsim convert (Nsight Systems import)", error);

out:
  g_hash_table_unref (n->strings);
  g_hash_table_unref (n->rt);
  g_array_unref (n->outs);
  g_hash_table_unref (n->sync_stream);
  g_hash_table_unref (n->mem_live);
  g_string_chunk_free (n->chunk);
  g_free (n->device_name);
  import_nccl_free (n->nccl);
  import_sqlite_close (&n->sql);
  return ok;
}
