/* sweep-rows.c — a sweep's rows: the result columns and the cells of one
 * report, CSV and JSONL lines, the CSV reader (sweep.h, sweep-priv.h).
 * The lowest file of the room: sweep.c and sweep-jobs.c call it, it calls
 * neither. */
#include "sweep/sweep.h"
#include "sweep/sweep-priv.h"

#include "base/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK (vs-sweep-error-quark, sweep_error)

/* --------------------------------------------------------------- columns */

typedef enum { CELL_STRING, CELL_INT, CELL_REAL, CELL_BOOL } CellType;

static const struct {
  const char *column;
  const char *path[3];   /* into the report */
  CellType type;
  gboolean step_only;    /* only with --metric step */
} result_columns[] = {
  { "status",            { "status" },                       CELL_STRING, FALSE },
  { "predicted_ns",      { "time", "predicted_ns" },          CELL_INT, FALSE },
  { "slowdown",          { "time", "slowdown" },              CELL_REAL, FALSE },
  { "step_median_ns",    { "steady_state", "step_median_ns" }, CELL_INT, TRUE },
  /* The program's device demand (SPEC 5.9: the same under every policy)
   * and what stayed on the device (the device tier's peak). */
  { "peak_device_bytes", { "memory", "device_demand_bytes" }, CELL_INT, FALSE },
  { "resident_peak_bytes", { "memory", "device_resident_peak_bytes" }, CELL_INT, FALSE },
  { "contention_ns",     { "stalls", "contention_ns" },       CELL_INT, FALSE },
  { "fault_ns",          { "stalls", "fault_ns" },            CELL_INT, FALSE },
  { "swap_ns",           { "stalls", "swap_ns" },             CELL_INT, FALSE },
  { "copy_engine_ns",    { "stalls", "copy_engine_ns" },      CELL_INT, FALSE },
  { "blocked_ns",        { "host", "blocked_ns" },            CELL_INT, FALSE },
  { "h2d_bytes",         { "traffic", "h2d_bytes" },          CELL_INT, FALSE },
  { "d2h_bytes",         { "traffic", "d2h_bytes" },          CELL_INT, FALSE },
  { "swap_out_bytes",    { "traffic", "swap_out_bytes" },     CELL_INT, FALSE },
  { "swap_in_bytes",     { "traffic", "swap_in_bytes" },      CELL_INT, FALSE },
  { "fault_bytes",       { "traffic", "fault_bytes" },        CELL_INT, FALSE },
  { "faults",            { "traffic", "faults" },             CELL_INT, FALSE },
  { "writeback_bytes",   { "traffic", "writeback_bytes" },    CELL_INT, FALSE },
  /* yes: the accesses were inferred and memory moved, so the time, the
   * swapping and the faults are lower bounds (docs/model.md 6b) */
  { "lower_bound",       { "time", "lower_bound" },           CELL_BOOL, FALSE },
  { "error",             { NULL },                            CELL_STRING, FALSE },
};
#define N_RESULT_COLUMNS G_N_ELEMENTS (result_columns)

/* How many result columns a table has: the step column only with
 * --metric step; the error column is always the last. */
guint
sweep_n_result_columns (gboolean step)
{
  guint n = 0;
  for (guint i = 0; i < N_RESULT_COLUMNS; i++)
    n += step || !result_columns[i].step_only;
  return n;
}

const char *const *
sweep_result_columns (gboolean step)
{
  static const char *names[2][N_RESULT_COLUMNS + 1];
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      for (guint k = 0; k < 2; k++)
        for (guint i = 0, j = 0; i < N_RESULT_COLUMNS; i++)
          if (k || !result_columns[i].step_only)
            names[k][j++] = result_columns[i].column;
      g_once_init_leave (&once, 1);
    }
  return names[step ? 1 : 0];
}

static const cJSON *
report_lookup (const cJSON *report, const char *const *path)
{
  const cJSON *node = report;
  for (guint i = 0; i < 3 && path[i] && node; i++)
    node = cJSON_GetObjectItemCaseSensitive (node, path[i]);
  return node;
}

char **
sweep_report_cells (const cJSON *report, gboolean step)
{
  char **cells = g_new0 (char *, sweep_n_result_columns (step) + 1);
  /* A run that did not fit (oom, or overflow under --keep-going) has no
   * time to rank: its predicted_ns, slowdown and step time stay empty
   * (SPEC 5.9). A run whose trace repeats no mark has no step time: its
   * step_median_ns is empty (sweep_run warns when no run has one). */
  const cJSON *st = cJSON_GetObjectItemCaseSensitive (report, "status");
  gboolean no_fit = cJSON_IsString (st) && (strcmp (st->valuestring, "oom") == 0 || strcmp (st->valuestring, "overflow") == 0);
  for (guint k = 0, i = 0; k < N_RESULT_COLUMNS; k++)
    {
      if (result_columns[k].step_only && !step)
        continue;
      /* The error of a replay --report-errors report. */
      const cJSON *node = result_columns[k].path[0] ? report_lookup (report, result_columns[k].path)
                          : cJSON_GetObjectItemCaseSensitive (report, "error");
      if (no_fit && result_columns[k].path[0]
          && (strcmp (result_columns[k].path[0], "time") == 0 || strcmp (result_columns[k].path[0], "steady_state") == 0))
        node = NULL;
      if (node == NULL)
        cells[i] = g_strdup ("");
      else if (cJSON_IsString (node))
        cells[i] = g_strdup (node->valuestring);
      else if (cJSON_IsBool (node) && result_columns[k].type == CELL_BOOL)
        cells[i] = g_strdup (cJSON_IsTrue (node) ? "yes" : "no");
      else if (cJSON_IsNumber (node) && result_columns[k].type == CELL_INT)
        cells[i] = g_strdup_printf ("%.0f", node->valuedouble);
      else if (cJSON_IsNumber (node))
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          cells[i] = g_strdup (g_ascii_formatd (buf, sizeof buf, "%.6g", node->valuedouble));
        }
      else
        cells[i] = g_strdup ("");
      i++;
    }
  return cells;
}

/* --metric step where no run has a step time: the column is empty (not
 * filled with the whole run's time, which is another quantity), and the
 * user is told why, once (sweep-priv.h). */
void
sweep_warn_no_steps (const char *what, guint n_ok, guint n_steady)
{
  /* A run that ends ok reached every mark: none of them repeats. */
  if (n_ok > 0 && n_steady == 0)
    fprintf (stderr, "vramsim: warning: --metric step: %s repeats no mark, so no run has a steady step: "
             "step_median_ns is empty in every row (predicted_ns is each run's whole time; see docs/model.md, "
             "Marks)\n", what);
}

/* ------------------------------------------------------------ csv, jsonl */

static gboolean
needs_quotes (const char *s)
{
  return strpbrk (s, ",\"\r\n") != NULL || (*s && (g_ascii_isspace (*s) || g_ascii_isspace (s[strlen (s) - 1])));
}

void
sweep_csv_append_row (GString *out, const char *const *cells, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      const char *c = cells[i] ? cells[i] : "";
      if (i)
        g_string_append_c (out, ',');
      if (!needs_quotes (c))
        g_string_append (out, c);
      else
        {
          g_string_append_c (out, '"');
          for (const char *p = c; *p; p++)
            {
              if (*p == '"')
                g_string_append_c (out, '"');
              g_string_append_c (out, *p);
            }
          g_string_append_c (out, '"');
        }
    }
  g_string_append_c (out, '\n');
}

void
sweep_row_free (gpointer row)
{
  g_strfreev (row);
}

GPtrArray *
sweep_csv_read (const char *path, gboolean drop_partial, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  if (drop_partial)
    {
      while (len > 0 && text[len - 1] != '\n')
        len--;
      text[len] = '\0';
    }

  GPtrArray *rows = g_ptr_array_new_with_free_func (sweep_row_free);
  GPtrArray *row = g_ptr_array_new ();
  GString *cell = g_string_new (NULL);
  gboolean quoted = FALSE, was_quoted = FALSE, any = FALSE;
  guint line = 1;
  for (gsize i = 0; i <= len; i++)
    {
      char c = i < len ? text[i] : '\n';
      if (i == len && !any && row->len == 0)
        break;
      if (quoted)
        {
          if (c == '"' && i + 1 < len && text[i + 1] == '"')
            g_string_append_c (cell, '"'), i++;
          else if (c == '"')
            quoted = FALSE;
          else if (i == len && drop_partial)
            break;   /* a row cut inside quotes by a kill: dropped with its cells */
          else if (i == len)
            {
              g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "%s:%u: unterminated quoted field", path, line);
              goto fail;
            }
          else
            {
              if (c == '\n')
                line++;
              g_string_append_c (cell, c);
            }
          continue;
        }
      if (c == '"' && cell->len == 0 && !was_quoted)
        {
          quoted = was_quoted = any = TRUE;
          continue;
        }
      if (c == ',' || c == '\n')
        {
          if (cell->len && cell->str[cell->len - 1] == '\r' && c == '\n')
            g_string_truncate (cell, cell->len - 1);
          g_ptr_array_add (row, g_strdup (cell->str));
          g_string_truncate (cell, 0);
          was_quoted = FALSE;
          if (c == '\n')
            {
              gboolean blank = row->len == 1 && !any && ((char *) row->pdata[0])[0] == '\0';
              if (blank)
                g_free (row->pdata[0]), g_ptr_array_set_size (row, 0);
              else
                {
                  g_ptr_array_add (row, NULL);
                  g_ptr_array_add (rows, g_ptr_array_free (row, FALSE));
                  row = g_ptr_array_new ();
                }
              any = FALSE;
              line++;
            }
          continue;
        }
      any = TRUE;
      g_string_append_c (cell, c);
    }
  for (guint i = 0; i < row->len; i++)
    g_free (row->pdata[i]);   /* a dropped partial row */
  g_ptr_array_free (row, TRUE);
  g_string_free (cell, TRUE);
  return rows;

fail:
  for (guint i = 0; i < row->len; i++)
    g_free (row->pdata[i]);
  g_ptr_array_free (row, TRUE);
  g_string_free (cell, TRUE);
  g_ptr_array_unref (rows);
  return NULL;
}

/* One JSONL line for a row: key columns and status/error as strings,
 * results as numbers, empty cells as null. */
static char *
jsonl_row (char **columns, char **cells, guint n_keys)
{
  cJSON *o = cJSON_CreateObject ();
  for (guint i = 0; columns[i]; i++)
    {
      const char *c = cells[i];
      gboolean text = i < n_keys || i == n_keys || columns[i + 1] == NULL;   /* keys, status, error */
      if (text)
        cJSON_AddItemToObject (o, columns[i], *c || i < n_keys ? cJSON_CreateString (c) : cJSON_CreateNull ());
      else if (*c)
        cJSON_AddItemToObject (o, columns[i], cJSON_CreateNumber (g_ascii_strtod (c, NULL)));
      else
        cJSON_AddItemToObject (o, columns[i], cJSON_CreateNull ());
    }
  char *s = jsonw_print (o, FALSE);
  cJSON_Delete (o);
  char *line = g_strconcat (s, "\n", NULL);
  g_free (s);
  return line;
}

char *
sweep_format_line (VsSweepFormat format, char **columns, char **cells, guint n_keys)
{
  if (format == VS_SWEEP_JSONL)
    return jsonl_row (columns, cells, n_keys);
  GString *s = g_string_new (NULL);
  sweep_csv_append_row (s, (const char *const *) cells, g_strv_length (columns));
  return g_string_free (s, FALSE);
}

char *
sweep_format_header (VsSweepFormat format, char **columns)
{
  if (format == VS_SWEEP_JSONL)
    return g_strdup ("");
  GString *s = g_string_new (NULL);
  sweep_csv_append_row (s, (const char *const *) columns, g_strv_length (columns));
  return g_string_free (s, FALSE);
}

/* The run key: the key cells joined by a separator that cannot occur. */
