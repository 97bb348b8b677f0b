/* import-sqlite.c — an Nsight Systems export opened for reading against
 * hostile schemas (import-priv.h, "an Nsight Systems export opened for
 * reading"): read-only, untrusted schema off, SQLITE_LIMIT_* set, a
 * progress bound per query, only plain tables of stored columns. Used by
 * import-nsys.c and import-nccl-nvtx.c; it calls neither. */
#include "import/import.h"

#include <string.h>
#include <sqlite3.h>
#include <glib/gstdio.h>

#include "import/import-priv.h"
#include "trace/trace.h"


static int
sql_progress (void *arg)
{
  ImportSql *q = arg;
  return ++q->steps > q->budget;
}

gboolean
import_sqlite_open (ImportSql *q, const char *path, GError **error)
{
  *q = (ImportSql) { .path = path };
  GStatBuf st;
  guint64 bytes = g_stat (path, &st) == 0 ? (guint64) st.st_size : 0;
  q->budget = (IMPORT_SQL_STEPS_BASE + IMPORT_SQL_STEPS_PER_BYTE * bytes) / 1000;
  if (sqlite3_open_v2 (path, &q->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
    {
      import_sqlite_fail (q, "cannot open", error);
      import_sqlite_close (q);
      return FALSE;
    }
  sqlite3_db_config (q->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (q->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (q->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_db_config (q->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
  sqlite3_db_config (q->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
  sqlite3_limit (q->db, SQLITE_LIMIT_LENGTH, IMPORT_SQL_MAX_VALUE);
  sqlite3_limit (q->db, SQLITE_LIMIT_SQL_LENGTH, 1 << 16);
  sqlite3_limit (q->db, SQLITE_LIMIT_COLUMN, 1000);
  sqlite3_limit (q->db, SQLITE_LIMIT_EXPR_DEPTH, 100);
  sqlite3_limit (q->db, SQLITE_LIMIT_COMPOUND_SELECT, 8);
  sqlite3_limit (q->db, SQLITE_LIMIT_VDBE_OP, 100000);
  sqlite3_limit (q->db, SQLITE_LIMIT_FUNCTION_ARG, 8);
  sqlite3_limit (q->db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit (q->db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100);
  sqlite3_limit (q->db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
  sqlite3_limit (q->db, SQLITE_LIMIT_WORKER_THREADS, 0);
  sqlite3_progress_handler (q->db, 1000, sql_progress, q);
  import_sqlite_begin (q, "the schema");
  return TRUE;
}

void
import_sqlite_close (ImportSql *q)
{
  sqlite3_close (q->db);
  q->db = NULL;
}

void
import_sqlite_begin (ImportSql *q, const char *what)
{
  q->steps = 0;
  q->what = what;
}

gboolean
import_sqlite_fail (ImportSql *q, const char *what, GError **error)
{
  if (q->steps > q->budget)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                 "%s: %s: the query passed its bound of %" G_GUINT64_FORMAT " SQLite steps (%d per byte of "
                 "the file + %" G_GUINT64_FORMAT "): not an Nsight Systems export", q->path, what,
                 q->budget * 1000, IMPORT_SQL_STEPS_PER_BYTE, IMPORT_SQL_STEPS_BASE);
  else if (q->db != NULL && sqlite3_errcode (q->db) == SQLITE_TOOBIG)
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                 "%s: %s: a value longer than %d bytes (the bound on one string or blob): not an Nsight "
                 "Systems export", q->path, what, IMPORT_SQL_MAX_VALUE);
  else
    g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: %s: %s", q->path, what,
                 q->db != NULL ? sqlite3_errmsg (q->db) : "out of memory");
  return FALSE;
}

int
import_sqlite_table (ImportSql *q, const char *table, GError **error)
{
  import_sqlite_begin (q, table);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2 (q->db, "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE", -1, &st, NULL)
      != SQLITE_OK)
    return import_sqlite_fail (q, table, error) ? 0 : -1;
  sqlite3_bind_text (st, 1, table, -1, SQLITE_STATIC);
  int found = 0, rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW && found >= 0)
    {
      const char *type = (const char *) sqlite3_column_text (st, 0);
      const char *sql = (const char *) sqlite3_column_text (st, 1);
      if (type != NULL && (strcmp (type, "index") == 0 || strcmp (type, "trigger") == 0))
        continue;
      if (type == NULL || strcmp (type, "table") != 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: %s is a %s, not a table: not an "
                       "Nsight Systems export (only tables are read)", q->path, table, type ? type : "thing");
          found = -1;
        }
      else if (sql != NULL && g_ascii_strncasecmp (sql, "CREATE VIRTUAL", 14) == 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: %s is a virtual table: not an "
                       "Nsight Systems export (only tables are read)", q->path, table);
          found = -1;
        }
      else
        found = 1;
    }
  if (found >= 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
    {
      sqlite3_finalize (st);
      return import_sqlite_fail (q, table, error) ? 0 : -1;
    }
  sqlite3_finalize (st);
  if (found != 1)
    return found;
  /* generated columns (hidden 2: VIRTUAL, 3: STORED) compute what they
   * hold at each read: an export has none */
  if (sqlite3_prepare_v2 (q->db, "SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3)", -1, &st, NULL)
      != SQLITE_OK)
    return import_sqlite_fail (q, table, error) ? 0 : -1;
  sqlite3_bind_text (st, 1, table, -1, SQLITE_STATIC);
  if (sqlite3_step (st) == SQLITE_ROW)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: %s: column %s is GENERATED: not an "
                   "Nsight Systems export (only stored columns are read)", q->path, table,
                   (const char *) sqlite3_column_text (st, 0));
      found = -1;
    }
  sqlite3_finalize (st);
  return found;
}
