/* sweep.c — replay one trace over configs × --vary values, in parallel.
 *
 * Why it looks the way it does:
 * - The trace is parsed once (trace_buf_load) and every worker replays it
 *   through its own trace_buf_reader; each config's merged JSON is loaded
 *   once and cloned per run, so a run costs a clone, a few config_set, a
 *   compile and a replay.
 * - Workers take run indices from one atomic counter; the main thread
 *   writes rows strictly in run order, buffering results that finish early,
 *   and flushes each row, so a sweep killed at any point leaves a file of
 *   complete rows that --resume can continue.
 * - SIGINT/SIGTERM/SIGHUP stop dispatch; runs in flight finish (a replay cannot be
 *   cancelled, and takes milliseconds), every finished row is written, and
 *   a second signal kills the process the default way. */
#include "sweep/sweep.h"
#include "sweep/sweep-priv.h"
#include "base/jsonw.h"
#include "base/outfile.h"
#include "base/stopsig.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "config/config.h"
#include "engine/replay.h"
#include "trace/trace.h"
#include "base/units.h"


static char *
row_key (char **cells, guint n_keys)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < n_keys; i++)
    {
      if (i)
        g_string_append_c (s, '\x1f');
      g_string_append (s, cells[i]);
    }
  return g_string_free (s, FALSE);
}

/* Writes TEXT to PATH through a temporary file renamed into place. */
static gboolean
write_atomically (const char *path, const char *text, gssize len, GError **error)
{
  return outfile_write_all (path, NULL, text, len, error);
}

/* --------------------------------------------------------------- signals */

/* SIGINT, SIGTERM and SIGHUP stop the sweep (base/stopsig.h): runs in
 * flight finish, finished rows are kept for --resume. */

/* ------------------------------------------------------------------ plan */

typedef struct {
  const VsSweepOptions *opts;
  guint n_configs;
  cJSON **config_json;      /* merged, fixed --set applied */
  char **config_names;      /* the "config" column */
  VsVary **varies;
  guint n_varies;
  guint n_runs;
  guint n_keys;             /* config + varies */
  char **columns;           /* NULL-terminated */

  /* running */
  VsOutFile *out;           /* -o, locked */
  VsTraceBuf *buf;
  VsConfig *capture;
  char **done_line;         /* per run: the formatted row, once finished */
  gboolean *skip;           /* per run: already in the output (--resume) */
  gint next;                /* next run to dispatch (atomic) */
  gint n_ok, n_steady;      /* --metric step: runs ok, and of them with a step time (atomic) */
  guint n_finished;         /* runs finished by workers, under lock */
  guint n_workers_alive;
  GMutex lock;
  GCond cond;
} Sweep;

static void
sweep_clear (Sweep *s)
{
  for (guint i = 0; i < s->n_configs; i++)
    cJSON_Delete (s->config_json[i]);
  g_free (s->config_json);
  g_strfreev (s->config_names);
  g_strfreev (s->columns);
  if (s->done_line)
    for (guint i = 0; i < s->n_runs; i++)
      g_free (s->done_line[i]);
  g_free (s->done_line);
  g_free (s->skip);
  outfile_abort (s->out);
  if (s->buf)
    trace_buf_free (s->buf);
  if (s->capture)
    config_free (s->capture);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->cond);
}

/* The value index of each vary for run R (the last vary fastest). */
static guint
decode_run (const Sweep *s, guint r, guint *idx)
{
  for (guint k = s->n_varies; k-- > 0;)
    {
      idx[k] = r % s->varies[k]->n_values;
      r /= s->varies[k]->n_values;
    }
  return r;   /* config index */
}

static char **
run_key_cells (const Sweep *s, guint r)
{
  guint idx[s->n_varies + 1];
  guint c = decode_run (s, r, idx);
  char **cells = g_new0 (char *, s->n_keys + 1);
  cells[0] = g_strdup (s->config_names[c]);
  for (guint k = 0; k < s->n_varies; k++)
    cells[1 + k] = g_strdup (s->varies[k]->values[idx[k]]);
  return cells;
}

static gboolean
plan_init (Sweep *s, const VsSweepOptions *opts, GError **error)
{
  s->opts = opts;
  s->n_configs = g_strv_length (opts->configs);
  s->varies = opts->varies;
  s->n_varies = opts->varies ? g_strv_length ((char **) opts->varies) : 0;
  s->config_json = g_new0 (cJSON *, s->n_configs);
  s->config_names = g_new0 (char *, s->n_configs + 1);
  s->n_keys = 1 + s->n_varies;

  if (s->n_configs == 0)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "no config given (-c CONFIG[,CONFIG...])");
      return FALSE;
    }
  for (guint k = 0; k < s->n_varies; k++)
    for (guint j = 0; j < k; j++)
      if (strcmp (s->varies[k]->key, s->varies[j]->key) == 0)
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--vary %s given twice", s->varies[k]->key);
          return FALSE;
        }

  guint64 n = s->n_configs;
  for (guint k = 0; k < s->n_varies; k++)
    {
      n *= s->varies[k]->n_values;
      if (n > 10000000)
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "the sweep has more than 10000000 runs");
          return FALSE;
        }
    }
  s->n_runs = (guint) n;

  for (guint i = 0; i < s->n_configs; i++)
    {
      const char *cfg = opts->configs[i];
      s->config_json[i] = config_load_json (cfg, error);
      if (s->config_json[i] == NULL)
        return FALSE;
      for (char **set = opts->sets; set && *set; set++)
        if (!config_set (s->config_json[i], *set, cfg, error))
          {
            g_prefix_error (error, "--set %s: ", *set);
            return FALSE;
          }
      const cJSON *name = cJSON_GetObjectItemCaseSensitive (s->config_json[i], "name");
      s->config_names[i] = g_strdup (cJSON_IsString (name) && name->valuestring[0] ? name->valuestring : cfg);
      for (guint j = 0; j < i; j++)
        if (strcmp (s->config_names[i], s->config_names[j]) == 0)
          {
            g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "-c: two configs are named '%s'",
                         s->config_names[i]);
            return FALSE;
          }
    }

  /* Every varied key and value must be settable on the first config:
   * a typo stops the sweep before it runs. */
  cJSON *probe = cJSON_Duplicate (s->config_json[0], TRUE);
  for (guint k = 0; k < s->n_varies; k++)
    for (guint v = 0; v < s->varies[k]->n_values; v++)
      {
        g_autofree char *assignment = g_strdup_printf ("%s=%s", s->varies[k]->key, s->varies[k]->values[v]);
        if (!config_set (probe, assignment, opts->configs[0], error))
          {
            cJSON_Delete (probe);
            g_prefix_error (error, "--vary %s: ", s->varies[k]->key);
            return FALSE;
          }
      }
  cJSON_Delete (probe);

  GPtrArray *cols = g_ptr_array_new ();
  g_ptr_array_add (cols, g_strdup ("config"));
  for (guint k = 0; k < s->n_varies; k++)
    g_ptr_array_add (cols, g_strdup (s->varies[k]->key));
  for (const char *const *c = sweep_result_columns (opts->step_metric); *c; c++)
    g_ptr_array_add (cols, g_strdup (*c));
  g_ptr_array_add (cols, NULL);
  s->columns = (char **) g_ptr_array_free (cols, FALSE);
  return TRUE;
}

/* ------------------------------------------------------------------- run */

static char *
one_line (const char *msg)
{
  char *s = g_strdup (msg);
  for (char *p = s; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return s;
}

static char **
run_one (Sweep *s, guint r)
{
  guint idx[s->n_varies + 1];
  guint c = decode_run (s, r, idx);
  const char *origin = s->opts->configs[c];
  GError *err = NULL;
  cJSON *root = cJSON_Duplicate (s->config_json[c], TRUE);
  VsConfig *cfg = NULL;
  cJSON *report = NULL;
  char **result;

  for (guint k = 0; k < s->n_varies; k++)
    {
      g_autofree char *assignment = g_strdup_printf ("%s=%s", s->varies[k]->key, s->varies[k]->values[idx[k]]);
      if (!config_set (root, assignment, origin, &err))
        goto out;
    }
  cfg = config_compile (root, origin, &err);
  if (cfg == NULL)
    goto out;
  VsTraceReader *reader = trace_buf_reader (s->buf);
  VsReplayOptions ro = { 0 };
  ro.trace_name = s->opts->trace_path;
  ro.sample_steps = s->opts->sample_steps;
  ro.sample_tol = s->opts->sample_tol;
  report = replay_run (reader, cfg, s->capture, &ro, &err);
  trace_close (reader);

out:;
  gboolean step = s->opts->step_metric;
  guint n_results = sweep_n_result_columns (step);
  if (report)
    {
      result = sweep_report_cells (report, step);
      if (step && strcmp (result[0], "ok") == 0)
        {
          g_atomic_int_inc (&s->n_ok);
          if (*result[SWEEP_STEP_CELL])
            g_atomic_int_inc (&s->n_steady);
        }
    }
  else
    {
      result = g_new0 (char *, n_results + 1);
      for (guint i = 0; i < n_results; i++)
        result[i] = g_strdup ("");
      g_free (result[0]);
      result[0] = g_strdup ("error");
      g_free (result[n_results - 1]);
      result[n_results - 1] = one_line (err ? err->message : "replay failed");
    }
  g_clear_error (&err);
  cJSON_Delete (report);
  if (cfg)
    config_free (cfg);
  cJSON_Delete (root);

  char **keys = run_key_cells (s, r);
  char **cells = g_new0 (char *, s->n_keys + n_results + 1);
  for (guint i = 0; i < s->n_keys; i++)
    cells[i] = keys[i];
  for (guint i = 0; i < n_results; i++)
    cells[s->n_keys + i] = result[i];
  g_free (keys);
  g_free (result);
  return cells;
}

static gpointer
worker (gpointer data)
{
  Sweep *s = data;
  for (;;)
    {
      if (vs_stop_signal)
        break;
      guint r = (guint) g_atomic_int_add (&s->next, 1);
      if (r >= s->n_runs)
        break;
      if (s->skip[r])
        continue;
      char **cells = run_one (s, r);
      char *line = sweep_format_line (s->opts->format, s->columns, cells, s->n_keys);
      g_strfreev (cells);
      g_mutex_lock (&s->lock);
      s->done_line[r] = line;
      s->n_finished++;
      g_cond_signal (&s->cond);
      g_mutex_unlock (&s->lock);
    }
  g_mutex_lock (&s->lock);
  s->n_workers_alive--;
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
  return NULL;
}

static void
draw_progress (guint done, guint total, gint64 t0, gboolean final)
{
  double el = (g_get_monotonic_time () - t0) / 1e6;
  double rate = el > 0 ? done / el : 0;
  guint width = 30, fill = total ? (guint) ((guint64) done * width / total) : width;
  char bar[64];
  for (guint i = 0; i < width; i++)
    bar[i] = i < fill ? '=' : ' ';
  bar[width] = '\0';
  if (el < 1 && !final)   /* a rate over the first few runs says nothing */
    fprintf (stderr, "\rsweep [%s] %u/%u   ", bar, done, total);
  else if (rate > 0 && done < total)
    fprintf (stderr, "\rsweep [%s] %u/%u  %.1f runs/s  ETA %.0fs   ", bar, done, total, rate, (total - done) / rate);
  else
    fprintf (stderr, "\rsweep [%s] %u/%u  %.1f runs/s            ", bar, done, total, rate);
  if (final)
    fputc ('\n', stderr);
  fflush (stderr);
}

/* ------------------------------------------------- which sweep rows are */

/* (transfer full) What makes rows this sweep's own, as JSON text: the
 * trace's identity (sweep_trace_identity), each config by name and file
 * digest, the capture config's, the fixed --set items, the varied keys
 * with their values. Written beside a rows output as OUT.sweep; --resume
 * and --merge of --shard parts refuse rows whose OUT.sweep differs (rows
 * without one keep the checks of their columns and run keys). */
static char *
sweep_identity (const VsSweepOptions *o)
{
  cJSON *id = cJSON_CreateObject ();
  cJSON *t = sweep_trace_identity (o->trace_path);
  cJSON_AddItemToObject (id, "trace", t ? t : cJSON_CreateNull ());
  cJSON *cs = cJSON_AddArrayToObject (id, "configs");
  const char *cap[] = { o->capture_config, NULL };
  for (guint pass = 0; pass < 2; pass++)
    for (char **c = pass == 0 ? o->configs : (char **) cap; c && *c; c++)
      {
        cJSON *e = cJSON_CreateObject ();
        cJSON_AddStringToObject (e, "name", *c);
        if (pass == 1)
          cJSON_AddBoolToObject (e, "capture", TRUE);
        g_autofree char *f = config_find (*c, NULL);
        g_autofree char *h = f ? sweep_file_sha256 (f) : NULL;
        if (h)
          cJSON_AddStringToObject (e, "sha256", h);
        cJSON_AddItemToArray (cs, e);
      }
  cJSON *sets = cJSON_AddArrayToObject (id, "sets");
  for (char **x = o->sets; x && *x; x++)
    cJSON_AddItemToArray (sets, cJSON_CreateString (*x));
  cJSON *vs = cJSON_AddArrayToObject (id, "vary");
  for (VsVary **v = o->varies; v && *v; v++)
    {
      cJSON *e = cJSON_CreateObject ();
      cJSON_AddStringToObject (e, "key", (*v)->key);
      cJSON_AddItemToObject (e, "values", cJSON_CreateStringArray ((const char *const *) (*v)->values,
                                                                   (int) (*v)->n_values));
      cJSON_AddItemToArray (vs, e);
    }
  char *text = jsonw_print (id, FALSE);
  cJSON_Delete (id);
  char *r = g_strconcat (text, "\n", NULL);
  g_free (text);
  return r;
}

/* Whether the rows file PATH is this sweep's (IDENT): PATH.sweep holds
 * IDENT. WHAT names PATH in the error ("--resume", "--merge"). */
static gboolean
sweep_rows_are_ours (const char *path, const char *ident, const char *what, GError **error)
{
  g_autofree char *side = g_strconcat (path, ".sweep", NULL);
  g_autofree char *have = NULL;
  if (!g_file_get_contents (side, &have, NULL, NULL))
    return TRUE;   /* rows without it (copied, cut by hand): their columns and run keys were checked */
  if (strcmp (have, ident) != 0)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "%s: %s: its rows are of another sweep (%s differs: "
                   "another trace, trace contents, config, --set or --vary): refused", path, what, side);
      return FALSE;
    }
  return TRUE;
}

static gboolean
file_is_empty (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && st.st_size == 0;
}

/* Writes PATH.sweep (a rows output that is a file: not "-", a device or a FIFO). */
static gboolean
sweep_write_identity (const char *path, const char *ident, GError **error)
{
  struct stat st;
  if (path == NULL || strcmp (path, "-") == 0 || (stat (path, &st) == 0 && !S_ISREG (st.st_mode)))
    return TRUE;
  g_autofree char *side = g_strconcat (path, ".sweep", NULL);
  return outfile_write_all (side, NULL, ident, -1, error);
}

/* --resume: reads the rows already in OUTPUT. Returns the lines (formatted
 * again) of rows belonging to runs of this sweep into KEPT (by run index)
 * and the others into EXTRA. A missing file is an empty one. */
static gboolean
resume_read (Sweep *s, char **kept, GPtrArray *extra, GError **error)
{
  const char *path = s->opts->output;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;

  g_autoptr (GHashTable) runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint r = 0; r < s->n_runs; r++)
    {
      char **k = run_key_cells (s, r);
      g_hash_table_insert (runs, row_key (k, s->n_keys), GUINT_TO_POINTER (r + 1));
      g_strfreev (k);
    }
  guint n_cols = g_strv_length (s->columns);

  g_autoptr (GPtrArray) rows = NULL;
  if (s->opts->format == VS_SWEEP_CSV)
    {
      rows = sweep_csv_read (path, TRUE, error);
      if (rows == NULL)
        return FALSE;
      if (rows->len == 0)
        return TRUE;
      char **header = rows->pdata[0];
      gboolean same = g_strv_length (header) == n_cols;
      for (guint i = 0; same && i < n_cols; i++)
        same = strcmp (header[i], s->columns[i]) == 0;
      if (!same)
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "%s: --resume: its columns are not this sweep's (another --vary or -c?)", path);
          return FALSE;
        }
      g_ptr_array_remove_index (rows, 0);
    }
  else
    {
      g_autofree char *text = NULL;
      gsize len;
      if (!g_file_get_contents (path, &text, &len, error))
        return FALSE;
      while (len > 0 && text[len - 1] != '\n')
        len--;
      text[len] = '\0';
      rows = g_ptr_array_new_with_free_func (sweep_row_free);
      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
      for (guint ln = 0; lines[ln]; ln++)
        {
          if (!*g_strstrip (lines[ln]))
            continue;
          cJSON *o = cJSON_Parse (lines[ln]);
          if (!cJSON_IsObject (o))
            {
              cJSON_Delete (o);
              g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "%s:%u: --resume: not a JSON object", path, ln + 1);
              return FALSE;
            }
          char **cells = g_new0 (char *, n_cols + 1);
          for (guint i = 0; i < n_cols; i++)
            {
              const cJSON *it = cJSON_GetObjectItemCaseSensitive (o, s->columns[i]);
              if (it == NULL && i < s->n_keys)
                {
                  cJSON_Delete (o);
                  g_strfreev (cells);
                  g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                               "%s:%u: --resume: no \"%s\" (another --vary or -c?)", path, ln + 1, s->columns[i]);
                  return FALSE;
                }
              if (cJSON_IsString (it))
                cells[i] = g_strdup (it->valuestring);
              else if (cJSON_IsNumber (it) && i == s->n_keys + 2)   /* slowdown */
                {
                  char buf[G_ASCII_DTOSTR_BUF_SIZE];
                  cells[i] = g_strdup (g_ascii_formatd (buf, sizeof buf, "%.6g", it->valuedouble));
                }
              else if (cJSON_IsNumber (it))
                cells[i] = g_strdup_printf ("%.0f", it->valuedouble);
              else
                cells[i] = g_strdup ("");
            }
          cJSON_Delete (o);
          g_ptr_array_add (rows, cells);
        }
    }

  for (guint i = 0; i < rows->len; i++)
    {
      char **cells = rows->pdata[i];
      if (g_strv_length (cells) != n_cols)
        continue;   /* a damaged row: run it again */
      g_autofree char *key = row_key (cells, s->n_keys);
      guint r = GPOINTER_TO_UINT (g_hash_table_lookup (runs, key));
      char *line = sweep_format_line (s->opts->format, s->columns, cells, s->n_keys);
      if (r && kept[r - 1] == NULL)
        kept[r - 1] = line;
      else if (r)
        g_free (line);
      else
        g_ptr_array_add (extra, line);
    }
  return TRUE;
}

static gboolean
run_sweep (Sweep *s, GError **error)
{
  const VsSweepOptions *o = s->opts;
  VsOutFile *f = NULL;
  gboolean ok = FALSE;
  char **kept = g_new0 (char *, s->n_runs);
  GPtrArray *extra = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *header = sweep_format_header (o->format, s->columns);
  gboolean resumed = FALSE;
  guint n_todo = s->n_runs;
  const char *out_name = o->output ? o->output : "stdout";

  s->done_line = g_new0 (char *, s->n_runs);
  s->skip = g_new0 (gboolean, s->n_runs);

  /* Rows go straight to OUT, each with one write, under an exclusive
   * lock: a kill at any moment leaves complete rows for --resume, and a
   * second sweep to the same OUT is refused instead of interleaving. */
  f = g_steal_pointer (&s->out);   /* opened and locked before the trace was read */
  g_autofree char *ident = sweep_identity (o);
  if (o->resume)
    {
      if (!resume_read (s, kept, extra, error))
        goto out;
      if (o->output != NULL && g_file_test (o->output, G_FILE_TEST_IS_REGULAR) && !file_is_empty (o->output)
          && !sweep_rows_are_ours (o->output, ident, "--resume", error))
        goto out;
      /* Rewrite the file with the rows kept (whole or not at all), then
       * append to it, locked again. */
      GString *text = g_string_new (header);
      for (guint r = 0; r < s->n_runs; r++)
        if (kept[r])
          {
            s->skip[r] = TRUE;
            n_todo--;
            resumed = TRUE;
            g_string_append (text, kept[r]);
          }
      for (guint i = 0; i < extra->len; i++)
        g_string_append (text, extra->pdata[i]), resumed = TRUE;
      gboolean w = write_atomically (o->output, text->str, text->len, error);
      g_string_free (text, TRUE);
      if (!w)
        goto out;
      VsOutFile *again = outfile_open_rows (o->output, "-o", error);
      if (again == NULL)
        goto out;
      outfile_abort (f);
      f = again;
    }
  else if (!outfile_rows_reset (f, error) || !outfile_write_rows (f, header, strlen (header), error))
    goto out;
  if (!sweep_write_identity (o->output, ident, error))
    goto out;
  guint n_planned = s->n_runs;
  if (o->shard_n)
    {
      /* --shard K/N: the K-th of N contiguous slices, so the parts in
       * order are the whole sweep's rows in order. */
      guint lo = (guint) ((guint64) (o->shard_k - 1) * s->n_runs / o->shard_n);
      guint hi = (guint) ((guint64) o->shard_k * s->n_runs / o->shard_n);
      n_planned = hi - lo;
      for (guint r = 0; r < s->n_runs; r++)
        if ((r < lo || r >= hi) && !s->skip[r])
          {
            s->skip[r] = TRUE;
            n_todo--;
          }
    }

  guint n_threads = o->n_threads ? o->n_threads : g_get_num_processors ();
  if (n_threads > n_todo)
    n_threads = MAX (n_todo, 1);
  VsStopSignals old_sig;
  stopsig_install (&old_sig);
  GThread **threads = g_new0 (GThread *, n_threads);
  s->n_workers_alive = n_threads;
  for (guint i = 0; i < n_threads; i++)
    threads[i] = g_thread_new ("sweep", worker, s);

  gint64 t0 = g_get_monotonic_time (), last_draw = 0;
  guint written = 0;
  gboolean io_ok = TRUE;
  g_mutex_lock (&s->lock);
  for (guint w = 0; w < s->n_runs;)
    {
      if (o->progress && g_get_monotonic_time () - last_draw > 100 * G_TIME_SPAN_MILLISECOND)
        {
          last_draw = g_get_monotonic_time ();
          draw_progress (s->n_finished, n_todo, t0, FALSE);
        }
      if (s->done_line[w])
        {
          char *line = s->done_line[w];
          s->done_line[w] = NULL;
          g_mutex_unlock (&s->lock);
          if (io_ok && !outfile_write_rows (f, line, strlen (line), error))
            {
              io_ok = FALSE;
              vs_stop_signal = -1;   /* stop dispatching */
            }
          if (resumed)
            kept[w] = line;
          else
            g_free (line);
          written++;
          w++;
          g_mutex_lock (&s->lock);
        }
      else if (s->skip[w] || s->n_workers_alive == 0)
        w++;   /* resumed, or never run (interrupted) */
      else
        g_cond_wait_until (&s->cond, &s->lock, g_get_monotonic_time () + 100 * G_TIME_SPAN_MILLISECOND);
    }
  g_mutex_unlock (&s->lock);
  for (guint i = 0; i < n_threads; i++)
    g_thread_join (threads[i]);
  g_free (threads);
  if (o->progress)
    draw_progress (s->n_finished, n_todo, t0, TRUE);
  int sig = vs_stop_signal;
  stopsig_restore (&old_sig);

  if (!io_ok)
    goto out;
  if (sig > 0)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INTERRUPTED,
                   "interrupted: %u of %u runs written to %s; rerun with --resume to finish",
                   written + (n_planned - n_todo), n_planned, out_name);
      outfile_commit (g_steal_pointer (&f), NULL);
      goto out;
    }
  if (resumed)
    {
      /* Finished: put every row in run order, as a fresh sweep would. */
      GString *text = g_string_new (header);
      for (guint r = 0; r < s->n_runs; r++)
        if (kept[r])
          g_string_append (text, kept[r]);
      for (guint i = 0; i < extra->len; i++)
        g_string_append (text, extra->pdata[i]);
      gboolean w = write_atomically (o->output, text->str, text->len, error);
      g_string_free (text, TRUE);
      if (!w)
        goto out;
    }
  ok = outfile_commit (g_steal_pointer (&f), error);

out:
  outfile_abort (f);   /* the rows written stay */
  for (guint r = 0; r < s->n_runs; r++)
    g_free (kept[r]);
  g_free (kept);
  g_ptr_array_unref (extra);
  return ok;
}

/* ------------------------------------------------------------- jobs file */

static char *
shell_word (const char *s)
{
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && !strchr ("_./=:,+-@%", *p))
      return g_shell_quote (s);
  return *s ? g_strdup (s) : g_strdup ("''");
}

static char *
absolute (const char *path)
{
  return g_path_is_absolute (path) ? g_strdup (path) : g_canonicalize_filename (path, NULL);
}

static char *
self_exe (void)
{
  char *p = g_file_read_link ("/proc/self/exe", NULL);
  return p ? p : g_strdup ("vramsim");
}

static char *
default_reports_dir (const char *jobs_file)
{
  g_autofree char *abs = absolute (jobs_file);
  const char *dot = strrchr (abs, '.');
  const char *slash = strrchr (abs, '/');
  if (dot && (!slash || dot > slash + 1))
    return g_strdup_printf ("%.*s-reports", (int) (dot - abs), abs);
  return g_strconcat (abs, "-reports", NULL);
}

/* The text of one pinned config for --jobs-file: the merged JSON
 * (extends resolved, fixed --set applied), so every node runs exactly the
 * machine this sweep meant whatever its VRAMSIM_CONFIGS says. */
static char *
pin_text (const cJSON *json, const char *name)
{
  cJSON *copy = cJSON_Duplicate (json, TRUE);
  cJSON_DeleteItemFromObjectCaseSensitive (copy, "extends");
  /* The "config" column the in-process sweep writes. */
  if (name && !cJSON_IsString (cJSON_GetObjectItemCaseSensitive (copy, "name")))
    {
      cJSON_DeleteItemFromObjectCaseSensitive (copy, "name");
      cJSON_AddStringToObject (copy, "name", name);
    }
  char *text = jsonw_print (copy, TRUE);
  cJSON_Delete (copy);
  char *full = g_strconcat (text, "\n", NULL);
  g_free (text);
  return full;
}

static char *
pin_path (const char *dir, const char *stem)
{
  g_autofree char *base = g_strdup_printf ("%s.json", stem);
  g_strdelimit (base, "/ \n\r\t", '_');
  return g_build_filename (dir, base, NULL);
}

/* A jobs file holds one command per line: a word with a line break would
 * split one (and run its second half as shell). */
static gboolean
check_one_line (const char *what, const char *word, GError **error)
{
  if (strpbrk (word, "\n\r") == NULL)
    return TRUE;
  g_autofree char *shown = g_strescape (word, NULL);
  g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
               "--jobs-file: %s \"%s\" holds a line break; a jobs file has one command per line, so it cannot name it",
               what, shown);
  return FALSE;
}

static gboolean
dir_is_empty (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return TRUE;
  gboolean empty = g_dir_read_name (d) == NULL;
  g_dir_close (d);
  return empty;
}

static gboolean
write_jobs (Sweep *s, GError **error)
{
  const VsSweepOptions *o = s->opts;
  g_autofree char *dir = o->reports_dir ? absolute (o->reports_dir) : default_reports_dir (o->jobs_file);
  g_autofree char *exe = self_exe ();
  g_autofree char *trace = absolute (o->trace_path);
  g_autofree char *jobs_abs = absolute (o->jobs_file);
  guint width = 5;
  for (guint n = s->n_runs; n >= 100000; n /= 10)
    width++;

  if (!check_one_line ("the trace", trace, error) || !check_one_line ("the reports folder", dir, error)
      || !check_one_line ("vramsim", exe, error) || !check_one_line ("the jobs file", jobs_abs, error))
    return FALSE;
  for (guint k = 0; k < s->n_varies; k++)
    for (guint v = 0; v < s->varies[k]->n_values; v++)
      if (!check_one_line ("--vary value", s->varies[k]->values[v], error))
        return FALSE;
  if (g_file_test (o->jobs_file, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--jobs-file %s: is a folder", o->jobs_file);
      return FALSE;
    }
  if (!o->resume && !dir_is_empty (dir))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--jobs-file: the reports folder %s is not empty (reports of an earlier sweep?): add --resume to "
                   "continue that sweep, or give another --reports-dir", dir);
      return FALSE;
    }
  gboolean made_dir = !g_file_test (dir, G_FILE_TEST_IS_DIR);
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int e = errno;
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_IO, "--reports-dir %s: %s", dir, g_strerror (e));
      return FALSE;
    }

  /* Every config, and the capture config, pinned by absolute path to a
   * file written beside the reports. Fixed --set assignments are baked
   * into it, so each report's "sets" holds exactly the varied keys and
   * --merge rebuilds the key columns from it. */
  char **cfg_arg = g_new0 (char *, s->n_configs + 1);
  char **cfg_text = g_new0 (char *, s->n_configs + 1);
  g_autofree char *cap_arg = NULL, *cap_text = NULL;
  gboolean ok = TRUE;
  for (guint i = 0; i < s->n_configs; i++)
    {
      g_autofree char *stem = g_strdup_printf ("config-%u-%s", i, s->config_names[i]);
      cfg_arg[i] = pin_path (dir, stem);
      cfg_text[i] = pin_text (s->config_json[i], s->config_names[i]);
    }
  const char *cap = o->capture_config ? o->capture_config : trace_buf_header (s->buf)->config;
  if (cap)
    {
      cJSON *cj = config_load_json (cap, error);
      ok = cj != NULL;
      if (ok)
        {
          cap_arg = pin_path (dir, "capture-config");
          cap_text = pin_text (cj, NULL);
        }
      cJSON_Delete (cj);
    }

  /* The plan of the sweep, so --merge, --status and --resume can check
   * every report against what it should be a run of. */
  cJSON *ident = sweep_trace_identity (trace);
  char *ident_text = ident ? jsonw_print (ident, FALSE) : NULL;
  cJSON_Delete (ident);

  SweepJobsCheck *check = o->resume && ident_text ? sweep_jobs_check_new (ident_text) : NULL;
  /* Reports are checked against the configs as they are pinned now. */
  for (guint i = 0; check && i < s->n_configs; i++)
    sweep_jobs_check_expect (check, cfg_arg[i], cfg_text[i]);
  if (check && cap_arg)
    sweep_jobs_check_expect (check, cap_arg, cap_text);
  g_autofree char *q_exe = shell_word (exe);
  g_autofree char *q_trace = shell_word (trace);
  g_autofree char *q_jobs = shell_word (jobs_abs);
  GString *all = g_string_new (NULL), *todo = g_string_new (NULL);
  guint written = 0, done = 0;
  for (guint r = 0; r < s->n_runs && ok; r++)
    {
      guint idx[s->n_varies + 1];
      guint c = decode_run (s, r, idx);
      g_autofree char *report = g_strdup_printf ("%s/run-%0*u.json", dir, (int) width, r);
      g_autofree char *q_cfg = shell_word (cfg_arg[c]);
      GString *line = g_string_new (NULL);
      g_string_append_printf (line, "%s replay %s -c %s", q_exe, q_trace, q_cfg);
      if (cap_arg)
        {
          g_autofree char *q = shell_word (cap_arg);
          g_string_append_printf (line, " --capture-config %s", q);
        }
      for (guint k = 0; k < s->n_varies; k++)
        {
          g_autofree char *a = g_strdup_printf ("%s=%s", s->varies[k]->key, s->varies[k]->values[idx[k]]);
          g_autofree char *q = shell_word (a);
          g_string_append_printf (line, " --set %s", q);
        }
      g_autofree char *q_report = shell_word (report);
      if (s->opts->sample_steps > 0)
        g_string_append_printf (line, " --sample-steps %u", s->opts->sample_steps);
      if (s->opts->sample_tol > 0)
        g_string_append_printf (line, " --sample-tolerance %.17g", s->opts->sample_tol);
      g_string_append_printf (line, " --format json --report-errors -o %s\n", q_report);
      g_string_append (all, line->str);
      if (check && sweep_jobs_check_done (check, line->str))
        done++;
      else
        {
          g_string_append (todo, line->str);
          written++;
        }
      g_string_free (line, TRUE);
    }
  if (check)
    sweep_jobs_check_free (check);

  g_autofree char *head = NULL;
  if (ok)
    head = g_strdup_printf ("# vramsim sweep: %u runs of %s, one self-contained command per line.\n"
                            "# Run them with GNU parallel (grep -v '^#' FILE | parallel) or a Slurm array\n"
                            "# (docs/cluster.md), then check and join the reports:\n"
                            "#   %s sweep --status --jobs-file %s\n"
                            "#   %s sweep --merge --jobs-file %s -o results.csv\n"
                            "# trace: %s\n",
                            s->n_runs, q_trace, q_exe, q_jobs, q_exe, q_jobs, ident_text ? ident_text : "{}");
  const char *target = o->jobs_file;
  g_autofree char *resume_file = NULL;
  if (ok && o->resume && g_file_test (o->jobs_file, G_FILE_TEST_EXISTS))
    {
      /* The jobs file may be in use (array tasks still pending read their
       * lines from it): it is never rewritten. Its commands must be this
       * sweep's; those still to run go to FILE.resume-N. */
      ok = sweep_jobs_same_commands (o->jobs_file, all->str, error);
      for (guint k = 1; ok && resume_file == NULL; k++)
        {
          char *cand = g_strdup_printf ("%s.resume-%u", o->jobs_file, k);
          if (!g_file_test (cand, G_FILE_TEST_EXISTS))
            resume_file = cand;
          else
            g_free (cand);
        }
      target = resume_file;
    }
  /* Checked: now the pinned configs, then the jobs file. */
  for (guint i = 0; ok && i < s->n_configs; i++)
    ok = write_atomically (cfg_arg[i], cfg_text[i], -1, error);
  if (ok && cap_arg)
    ok = write_atomically (cap_arg, cap_text, -1, error);
  g_strfreev (cfg_arg);
  g_strfreev (cfg_text);
  if (ok && o->resume && resume_file && written == 0)
    fprintf (stderr, "vramsim: all %u runs of %s have their report: nothing to resume (merge them with "
             "vramsim sweep --merge --jobs-file %s -o results.csv)\n", s->n_runs, o->jobs_file, o->jobs_file);
  else if (ok)
    {
      g_autofree char *text = g_strconcat (head, resume_file ? todo->str : all->str, NULL);
      ok = write_atomically (target, text, -1, error);
      if (ok && resume_file)
        fprintf (stderr, "vramsim: %u of %u runs have their report; wrote the other %u commands to %s "
                 "(%s is unchanged)\n", done, s->n_runs, written, resume_file, o->jobs_file);
      else if (ok)
        fprintf (stderr, "vramsim: wrote %u commands to %s (reports go to %s)\n", written, o->jobs_file, dir);
    }
  g_string_free (all, TRUE);
  g_string_free (todo, TRUE);
  g_free (ident_text);
  if (!ok && made_dir)
    {
      /* A failed --jobs-file leaves nothing behind. */
      GDir *d = g_dir_open (dir, 0, NULL);
      const char *n;
      while (d && (n = g_dir_read_name (d)))
        {
          g_autofree char *p = g_build_filename (dir, n, NULL);
          g_unlink (p);
        }
      if (d)
        g_dir_close (d);
      g_rmdir (dir);
    }
  return ok;
}

/* ------------------------------------------------------------------ main */

gboolean
sweep_run (const VsSweepOptions *opts, GError **error)
{
  Sweep s = { 0 };
  gboolean ok = FALSE;

  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  if (opts->resume && opts->output == NULL && opts->jobs_file == NULL)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--resume needs -o RESULTS");
      goto out;
    }
  /* The output rule (base/outfile.h): outputs never overwrite an input. */
  {
    const VsIoPath outs[] = { { opts->output, "-o" }, { opts->jobs_file, "--jobs-file" } };
    g_autoptr (GArray) ins = g_array_new (FALSE, FALSE, sizeof (VsIoPath));
    g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
    g_array_append_val (ins, ((VsIoPath) { opts->trace_path, "the trace" }));
    const char *cap = opts->capture_config;
    char *cap_file = cap ? config_find (cap, NULL) : NULL;
    if (cap_file)
      g_ptr_array_add (keep, cap_file);
    g_array_append_val (ins, ((VsIoPath) { cap_file ? cap_file : cap, "--capture-config" }));
    for (char **c = opts->configs; c && *c; c++)
      {
        char *f = config_find (*c, NULL);
        if (f)
          g_ptr_array_add (keep, f);
        g_array_append_val (ins, ((VsIoPath) { f ? f : *c, "the config" }));
      }
    if (!outfile_check_rule (outs, G_N_ELEMENTS (outs), (const VsIoPath *) ins->data, ins->len, error))
      goto out;
  }
  if (!plan_init (&s, opts, error))
    goto out;
  /* The output is locked first: a second sweep to it fails at once. */
  if (opts->jobs_file == NULL)
    {
      s.out = outfile_open_rows (opts->output ? opts->output : "-", opts->output ? "-o" : NULL, error);
      if (s.out == NULL)
        goto out;
    }
  /* The trace is read (and checked) even for --jobs-file: a bad trace
   * should fail here, not in every job on the cluster. */
  s.buf = trace_buf_load (opts->trace_path, error);
  if (s.buf == NULL)
    goto out;
  const char *cap = opts->capture_config;
  if (cap == NULL)
    {
      /* A header names a preset, never a file to read (issue 16, item 9). */
      cap = trace_buf_header (s.buf)->config;
      if (cap != NULL && !config_check_trace_preset (cap, opts->trace_path, error))
        goto out;
    }
  if (cap)
    {
      s.capture = config_load (cap, NULL, error);
      if (s.capture == NULL)
        {
          if (opts->capture_config == NULL)
            g_prefix_error (error, "%s: capture config '%s' (from the trace header; see --capture-config): ",
                            opts->trace_path, cap);
          goto out;
        }
    }
  if (opts->jobs_file)
    {
      ok = write_jobs (&s, error);
      goto out;
    }
  ok = run_sweep (&s, error);
  if (ok && opts->step_metric)
    sweep_warn_no_steps (opts->trace_path, (guint) s.n_ok, (guint) s.n_steady);

out:
  sweep_clear (&s);
  return ok;
}

/* ----------------------------------------------------------------- merge */

gboolean
sweep_merge (char **reports, const char *output, VsSweepFormat format, gboolean step, GError **error)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GString *body = g_string_new (NULL);
  char **columns = NULL;
  gboolean ok = FALSE;
  guint n_ok = 0, n_steady = 0;

  for (guint i = 0; reports[i]; i++)
    {
      g_autofree char *text = NULL;
      if (!g_file_get_contents (reports[i], &text, NULL, error))
        goto out;
      cJSON *rep = cJSON_Parse (text);
      const cJSON *cfg = cJSON_GetObjectItemCaseSensitive (rep, "config");
      const cJSON *sets = cJSON_GetObjectItemCaseSensitive (rep, "sets");
      if (!cJSON_IsObject (rep) || !cJSON_GetObjectItemCaseSensitive (rep, "vramsim_report") || !cJSON_IsString (cfg))
        {
          cJSON_Delete (rep);
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "%s: not a vramsim replay report (vramsim replay --format json)", reports[i]);
          goto out;
        }
      if (i == 0)
        {
          const cJSON *it;
          cJSON_ArrayForEach (it, sets)
            g_ptr_array_add (keys, g_strdup (it->string));
          GPtrArray *cols = g_ptr_array_new ();
          g_ptr_array_add (cols, g_strdup ("config"));
          for (guint k = 0; k < keys->len; k++)
            g_ptr_array_add (cols, g_strdup (keys->pdata[k]));
          for (const char *const *c = sweep_result_columns (step); *c; c++)
            g_ptr_array_add (cols, g_strdup (*c));
          g_ptr_array_add (cols, NULL);
          columns = (char **) g_ptr_array_free (cols, FALSE);
          g_autofree char *h = sweep_format_header (format, columns);
          g_string_append (body, h);
        }
      guint n_sets = cJSON_IsObject (sets) ? (guint) cJSON_GetArraySize (sets) : 0;
      guint n_results = sweep_n_result_columns (step);
      char **cells = g_new0 (char *, 1 + keys->len + n_results + 1);
      cells[0] = g_strdup (cfg->valuestring);
      gboolean same = n_sets == keys->len;
      for (guint k = 0; k < keys->len; k++)
        {
          const cJSON *v = cJSON_GetObjectItemCaseSensitive (sets, keys->pdata[k]);
          if (cJSON_IsString (v))
            cells[1 + k] = g_strdup (v->valuestring);
          else if (v)
            cells[1 + k] = jsonw_print (v, FALSE);
          else
            cells[1 + k] = g_strdup (""), same = FALSE;
        }
      char **res = sweep_report_cells (rep, step);
      n_ok += step && strcmp (res[0], "ok") == 0;
      n_steady += step && strcmp (res[0], "ok") == 0 && *res[SWEEP_STEP_CELL];
      for (guint j = 0; j < n_results; j++)
        cells[1 + keys->len + j] = res[j];
      g_free (res);
      cJSON_Delete (rep);
      if (!same)
        {
          g_strfreev (cells);
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "%s: its --set keys differ from those of %s; merge reports of one sweep", reports[i], reports[0]);
          goto out;
        }
      g_autofree char *key = row_key (cells, 1 + keys->len);
      const char *twin = g_hash_table_lookup (seen, key);
      if (twin)
        {
          g_strfreev (cells);
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "--merge: %s is the same run as %s (same config and --set values); merge each run once",
                       reports[i], twin);
          goto out;
        }
      g_hash_table_insert (seen, g_steal_pointer (&key), reports[i]);
      g_autofree char *line = sweep_format_line (format, columns, cells, 1 + keys->len);
      g_strfreev (cells);
      g_string_append (body, line);
    }
  if (columns == NULL)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--merge: no reports given");
      goto out;
    }
  for (guint i = 0; output && reports[i]; i++)
    if (!outfile_check_not_input (output, "-o", reports[i], "the report", error))
      goto out;
  ok = outfile_write_all (output ? output : "-", output ? "-o" : NULL, body->str, (gssize) body->len, error);
  if (ok)
    sweep_warn_no_steps ("the reports' trace", n_ok, n_steady);

out:
  g_strfreev (columns);
  g_string_free (body, TRUE);
  return ok;
}

/* ---------------------------------------------------------- merge shards */

gboolean
sweep_merge_shards (const VsSweepOptions *opts, char **parts, GError **error)
{
  Sweep s = { 0 };
  gboolean ok = FALSE;
  char **rows = NULL;
  const char **from = NULL;
  g_autoptr (GHashTable) runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  if (opts->format != VS_SWEEP_CSV)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--merge of --shard parts reads CSV parts (--format csv)");
      goto out;
    }
  for (guint i = 0; opts->output && parts[i]; i++)
    if (!outfile_check_not_input (opts->output, "-o", parts[i], "the part", error))
      goto out;
  if (!plan_init (&s, opts, error))
    goto out;
  {
    g_autofree char *ident = sweep_identity (opts);
    for (guint i = 0; parts[i]; i++)
      if (!sweep_rows_are_ours (parts[i], ident, "--merge", error))
        goto out;
  }
  for (guint r = 0; r < s.n_runs; r++)
    {
      char **k = run_key_cells (&s, r);
      g_hash_table_insert (runs, row_key (k, s.n_keys), GUINT_TO_POINTER (r + 1));
      g_strfreev (k);
    }
  rows = g_new0 (char *, s.n_runs + 1);
  from = g_new0 (const char *, s.n_runs + 1);
  guint n_cols = g_strv_length (s.columns);
  for (guint i = 0; parts[i]; i++)
    {
      g_autoptr (GPtrArray) t = sweep_csv_read (parts[i], FALSE, error);
      if (t == NULL)
        goto out;
      gboolean same = t->len > 0 && g_strv_length (t->pdata[0]) == n_cols;
      for (guint c = 0; same && c < n_cols; c++)
        same = strcmp (((char **) t->pdata[0])[c], s.columns[c]) == 0;
      if (!same)
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "%s: its columns are not this sweep's (another --vary or -c?)", parts[i]);
          goto out;
        }
      for (guint ln = 1; ln < t->len; ln++)
        {
          char **cells = t->pdata[ln];
          g_autofree char *key = g_strv_length (cells) == n_cols ? row_key (cells, s.n_keys) : NULL;
          guint r = key ? GPOINTER_TO_UINT (g_hash_table_lookup (runs, key)) : 0;
          if (r == 0)
            {
              g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                           "%s: row %u is not a run of this sweep (extra, or damaged)", parts[i], ln);
              goto out;
            }
          if (rows[r - 1])
            {
              g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                           "%s: row %u is a run that %s holds too (duplicated: parts of two shardings?)", parts[i],
                           ln, from[r - 1]);
              goto out;
            }
          rows[r - 1] = sweep_format_line (VS_SWEEP_CSV, s.columns, cells, s.n_keys);
          from[r - 1] = parts[i];
        }
    }
  guint missing = 0, first = 0;
  for (guint r = s.n_runs; r-- > 0;)
    if (rows[r] == NULL)
      missing++, first = r;
  if (missing)
    {
      char **k = run_key_cells (&s, first);
      g_autofree char *shown = g_strjoinv (" ", k);
      g_strfreev (k);
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--merge: %u of %u runs are in no part (the first: run %u, %s); a shard is missing or was cut "
                   "short: rerun it (--shard K/N -o PART --resume); nothing written", missing, s.n_runs, first, shown);
      goto out;
    }
  GString *body = g_string_new (NULL);
  char *header = sweep_format_header (VS_SWEEP_CSV, s.columns);
  g_string_append (body, header);
  g_free (header);
  for (guint r = 0; r < s.n_runs; r++)
    g_string_append (body, rows[r]);
  ok = outfile_write_all (opts->output ? opts->output : "-", opts->output ? "-o" : NULL, body->str,
                          (gssize) body->len, error);
  g_string_free (body, TRUE);

out:
  if (rows)
    for (guint r = 0; r < s.n_runs; r++)
      g_free (rows[r]);
  g_free (rows);
  g_free (from);
  sweep_clear (&s);
  return ok;
}
