/* fuzz-nsys.c — libFuzzer harness for the Nsight Systems importer with
 * crafted schemas: the input is an SQL script (CREATE TABLE / VIEW /
 * TRIGGER / INSERT ..., as `sqlite3 FILE .dump` writes), run into a fresh
 * database file, which import_nsys() then imports into a scratch trace,
 * read back and validated. Views, generated columns, recursive CTEs, huge
 * strings and wrong types are the importer's to refuse or bound. The
 * script itself runs bounded (a progress handler, 1 MiB values, no ATTACH,
 * VACUUM or PRAGMA but a few): the harness's cost is not the finding. */
#include "fuzz-common.h"
#include "import/import.h"
#include "trace/trace.h"

#include <sqlite3.h>

static char *db_path, *out_path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  db_path = fuzz_scratch_path (".sqlite");
  out_path = fuzz_scratch_path ("-out.jsonl");
  return 0;
}

static int
setup_progress (void *arg)
{
  return ++*(int *) arg > 2000;  /* x 1000 VM steps */
}

static int
setup_auth (void *arg, int action, const char *a, const char *b, const char *c, const char *d)
{
  if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
    return SQLITE_DENY;
  if (action == SQLITE_PRAGMA)
    {
      static const char *const ok[] = { "foreign_keys", "page_size", "encoding", "user_version", "auto_vacuum" };
      for (unsigned i = 0; i < G_N_ELEMENTS (ok); i++)
        if (a != NULL && g_ascii_strcasecmp (a, ok[i]) == 0)
          return SQLITE_OK;
      return SQLITE_DENY;
    }
  return SQLITE_OK;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *sql = g_strndup ((const char *) data, size);
  if (strlen (sql) != size || g_strstr_len (sql, -1, "VACUUM") || g_strstr_len (sql, -1, "vacuum"))
    return -1;
  unlink (db_path);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
    abort ();
  sqlite3_limit (db, SQLITE_LIMIT_LENGTH, 1 << 20);
  sqlite3_limit (db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
  int steps = 0;
  sqlite3_progress_handler (db, 1000, setup_progress, &steps);
  sqlite3_set_authorizer (db, setup_auth, NULL);
  sqlite3_exec (db, sql, NULL, NULL, NULL);
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close (db);

  GError *error = NULL;
  gboolean ok = import_nsys (db_path, out_path, &error);
  fuzz_check_import (ok, error, out_path);
  g_clear_error (&error);
  unlink (out_path);
  unlink (db_path);
  return 0;
}
