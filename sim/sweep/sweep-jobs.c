/* sweep-jobs.c — reading a --jobs-file sweep back: which runs have their
 * report, and joining them (--status, --merge --jobs-file, --resume).
 *
 * Why it looks the way it does:
 * - The jobs file is the plan: each command line names its config (an
 *   absolute path to a pinned copy), its --set values and its report
 *   (-o). Nothing is taken from a shell glob or a file name alone: a
 *   report counts for a run only when what it records it is a run of
 *   ("run_of": trace identity, config path and hash, capture config; and
 *   "sets") is that command's. A report of another sweep written into the
 *   same folder, or of a trace changed since, is stale.
 * - The trace identity (path, size, a 128-bit hash of the first MiB) is cheap to
 *   compute in every job and tells a replaced or edited trace from the one
 *   the jobs file was written for without reading gigabytes. */
#include "sweep/sweep-priv.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "base/outfile.h"

#define HEAD_BYTES (1u << 20)

static inline guint64
rotl64 (guint64 x, int r)
{
  return (x << r) | (x >> (64 - r));
}

static inline guint64
fmix64 (guint64 k)
{
  k ^= k >> 33;
  k *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
  k ^= k >> 33;
  k *= G_GUINT64_CONSTANT (0xc4ceb9fe1a85ec53);
  k ^= k >> 33;
  return k;
}

/* MurmurHash3_x64_128 (Austin Appleby, public domain), fed in pieces:
 * the state between 16-byte blocks, so that the first MiB is read in
 * small chunks (a MiB read at once into a fresh buffer cost 256 page
 * faults, a tenth of a short replay's CPU time). Not cryptographic: it
 * tells a changed or replaced trace from the one a jobs file was written
 * for (any change of the bytes it covers changes it but with probability
 * 2^-128), at about one instruction a byte where GLib's SHA-256 took 53
 * (issue 25: 29 % of a 100k-event replay). */
typedef struct {
  guint64 h1, h2;
} Mmh3;

static const guint64 mmh3_c1 = G_GUINT64_CONSTANT (0x87c37b91114253d5);
static const guint64 mmh3_c2 = G_GUINT64_CONSTANT (0x4cf5ad432745937f);

/* The NB whole 16-byte blocks at BUF. */
static void
mmh3_blocks (Mmh3 *m, const guint8 *buf, gsize nb)
{
  guint64 h1 = m->h1, h2 = m->h2;
  for (gsize i = 0; i < nb; i++)
    {
      guint64 k1, k2;
      memcpy (&k1, buf + 16 * i, 8);
      memcpy (&k2, buf + 16 * i + 8, 8);
      k1 = GUINT64_FROM_LE (k1);
      k2 = GUINT64_FROM_LE (k2);
      k1 *= mmh3_c1, k1 = rotl64 (k1, 31), k1 *= mmh3_c2, h1 ^= k1;
      h1 = rotl64 (h1, 27), h1 += h2, h1 = h1 * 5 + 0x52dce729;
      k2 *= mmh3_c2, k2 = rotl64 (k2, 33), k2 *= mmh3_c1, h2 ^= k2;
      h2 = rotl64 (h2, 31), h2 += h1, h2 = h2 * 5 + 0x38495ab5;
    }
  m->h1 = h1, m->h2 = h2;
}

/* The last N & 15 bytes at TAIL and the length N, as 32 hex digits. */
static char *
mmh3_finish (Mmh3 *m, const guint8 *tail, gsize n)
{
  guint64 h1 = m->h1, h2 = m->h2, k1 = 0, k2 = 0;
  for (gsize i = n & 15; i > 8; i--)
    k2 ^= (guint64) tail[i - 1] << (8 * (i - 9));
  if ((n & 15) > 8)
    k2 *= mmh3_c2, k2 = rotl64 (k2, 33), k2 *= mmh3_c1, h2 ^= k2;
  for (gsize i = MIN (n & 15, 8); i > 0; i--)
    k1 ^= (guint64) tail[i - 1] << (8 * (i - 1));
  if ((n & 15) > 0)
    k1 *= mmh3_c1, k1 = rotl64 (k1, 31), k1 *= mmh3_c2, h1 ^= k1;
  h1 ^= n, h2 ^= n;
  h1 += h2, h2 += h1;
  h1 = fmix64 (h1), h2 = fmix64 (h2);
  h1 += h2, h2 += h1;
  return g_strdup_printf ("%016" G_GINT64_MODIFIER "x%016" G_GINT64_MODIFIER "x", h1, h2);
}

/* The hash of F's first HEAD_BYTES, read CHUNK bytes at a time (a
 * multiple of 16: every chunk but the last is whole blocks). */
#define CHUNK (64u << 10)
static char *
head_hash128 (FILE *f)
{
  Mmh3 m = { 0, 0 };
  guint8 *buf = g_malloc (CHUNK);
  gsize total = 0, n;
  while ((n = fread (buf, 1, MIN (CHUNK, HEAD_BYTES - total), f)) == CHUNK && total + n < HEAD_BYTES)
    {
      mmh3_blocks (&m, buf, CHUNK / 16);
      total += n;
    }
  /* The last chunk: short (the file's end), or the one that reaches HEAD_BYTES. */
  mmh3_blocks (&m, buf, n / 16);
  total += n;
  char *hash = mmh3_finish (&m, buf + (n & ~(gsize) 15), total);
  g_free (buf);
  return hash;
}

/* The trace's identity: its path, size and a hash of its first MiB (its
 * header and first events). */
cJSON *
sweep_trace_identity (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return NULL;
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  g_autofree char *hash = head_hash128 (f);
  fclose (f);
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  cJSON *id = cJSON_CreateObject ();
  cJSON_AddStringToObject (id, "path", abs);
  cJSON_AddNumberToObject (id, "size", (double) st.st_size);
  cJSON_AddStringToObject (id, "head_hash128", hash);
  return id;
}

char *
sweep_file_sha256 (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > (64 << 20))
    return NULL;
  g_autofree char *text = NULL;
  gsize len;
  if (!g_file_get_contents (path, &text, &len, NULL))
    return NULL;
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) text, len);
}

/* ------------------------------------------------------------- the plan */

typedef struct {
  guint line;          /* in the jobs file, from 1 */
  char *report;        /* -o */
  char *config;        /* -c */
  char *capture;       /* --capture-config, or NULL */
  GPtrArray *sets;     /* KEY=VALUE, in order */
} Job;

static void
job_free (gpointer p)
{
  Job *j = p;
  g_free (j->report);
  g_free (j->config);
  g_free (j->capture);
  g_ptr_array_unref (j->sets);
  g_free (j);
}

/* Parses one command line; NULL (with ERROR naming LINE) when it is not a
 * `vramsim replay ... -o REPORT` command. */
static Job *
job_parse (const char *text, const char *file, guint line, GError **error)
{
  g_auto (GStrv) argv = NULL;
  GError *e = NULL;
  if (!g_shell_parse_argv (text, NULL, &argv, &e))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "%s:%u: not a command: %s", file, line, e->message);
      g_error_free (e);
      return NULL;
    }
  Job *j = g_new0 (Job, 1);
  j->line = line;
  j->sets = g_ptr_array_new_with_free_func (g_free);
  gboolean replay = argv[0] && argv[1] && strcmp (argv[1], "replay") == 0;
  for (guint i = 2; argv[i]; i++)
    {
      const char *next = argv[i + 1];
      if (next == NULL)
        break;
      if (strcmp (argv[i], "-o") == 0)
        g_free (j->report), j->report = g_strdup (next), i++;
      else if (strcmp (argv[i], "-c") == 0)
        g_free (j->config), j->config = g_strdup (next), i++;
      else if (strcmp (argv[i], "--capture-config") == 0)
        g_free (j->capture), j->capture = g_strdup (next), i++;
      else if (strcmp (argv[i], "--set") == 0)
        g_ptr_array_add (j->sets, g_strdup (next)), i++;
    }
  if (!replay || j->report == NULL || j->config == NULL)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "%s:%u: not a command of vramsim sweep --jobs-file (vramsim replay ... -c CONFIG -o REPORT)", file, line);
      job_free (j);
      return NULL;
    }
  return j;
}

typedef struct {
  char *path;
  cJSON *trace;        /* the "# trace:" identity, or NULL */
  GPtrArray *jobs;     /* Job */
} Plan;

static void
plan_clear (Plan *p)
{
  g_free (p->path);
  cJSON_Delete (p->trace);
  if (p->jobs)
    g_ptr_array_unref (p->jobs);
}

static gboolean
plan_read (Plan *p, const char *path, GError **error)
{
  p->path = g_strdup (path);
  p->jobs = g_ptr_array_new_with_free_func (job_free);
  g_autofree char *text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents (path, &text, NULL, &e))
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--jobs-file %s: %s", path,
                   e->code == G_FILE_ERROR_NOENT ? "no such file" : e->message);
      g_error_free (e);
      return FALSE;
    }
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *l = lines[i];
      if (g_str_has_prefix (l, "# trace: "))
        {
          cJSON_Delete (p->trace);
          p->trace = cJSON_Parse (l + 9);
          continue;
        }
      if (*l == '#' || *g_strstrip (lines[i]) == '\0')
        continue;
      Job *j = job_parse (lines[i], path, i + 1, error);
      if (j == NULL)
        return FALSE;
      g_ptr_array_add (p->jobs, j);
    }
  if (p->jobs->len == 0)
    {
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT, "--jobs-file %s: no commands", path);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------ checking */

typedef enum { JOB_DONE, JOB_FAILED, JOB_MISSING, JOB_STALE } JobState;

struct _SweepJobsCheck {
  cJSON *trace;
  gboolean trace_changed;   /* the trace file is no longer the one planned */
  GHashTable *sha;     /* path -> SHA-256 now ("" when none) */
};

static SweepJobsCheck *
check_new (const cJSON *trace)
{
  SweepJobsCheck *c = g_new0 (SweepJobsCheck, 1);
  c->trace = trace ? cJSON_Duplicate (trace, TRUE) : NULL;
  const cJSON *path = cJSON_GetObjectItemCaseSensitive (trace, "path");
  if (cJSON_IsString (path))
    {
      cJSON *now = sweep_trace_identity (path->valuestring);
      c->trace_changed = !cJSON_Compare (now, trace, TRUE);
      cJSON_Delete (now);
    }
  c->sha = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return c;
}

SweepJobsCheck *
sweep_jobs_check_new (const char *trace_ident)
{
  cJSON *t = cJSON_Parse (trace_ident);
  SweepJobsCheck *c = check_new (t);
  cJSON_Delete (t);
  return c;
}

void
sweep_jobs_check_free (SweepJobsCheck *c)
{
  cJSON_Delete (c->trace);
  g_hash_table_unref (c->sha);
  g_free (c);
}

void
sweep_jobs_check_expect (SweepJobsCheck *c, const char *path, const char *text)
{
  g_hash_table_insert (c->sha, g_strdup (path), g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1));
}

static const char *
sha_of (SweepJobsCheck *c, const char *path)
{
  const char *h = g_hash_table_lookup (c->sha, path);
  if (h == NULL)
    {
      char *s = sweep_file_sha256 (path);
      g_hash_table_insert (c->sha, g_strdup (path), s ? s : g_strdup (""));
      h = g_hash_table_lookup (c->sha, path);
    }
  return h;
}

static gboolean
same_string (const cJSON *o, const char *key, const char *want)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  if (want == NULL || *want == '\0')
    return v == NULL;
  return cJSON_IsString (v) && strcmp (v->valuestring, want) == 0;
}

/* The state of J's report; *REPORT (when not NULL) gets the parsed report
 * of a done or failed run, *WHY a reason for failed and stale ones. */
static JobState
job_check (SweepJobsCheck *c, const Job *j, cJSON **report, char **why)
{
  if (report)
    *report = NULL;
  if (why)
    *why = NULL;
  g_autofree char *text = NULL;
  if (!g_file_get_contents (j->report, &text, NULL, NULL))
    return JOB_MISSING;
  cJSON *rep = cJSON_Parse (text);
  const cJSON *run = cJSON_GetObjectItemCaseSensitive (rep, "run_of");
  const cJSON *sets = cJSON_GetObjectItemCaseSensitive (rep, "sets");
  const char *reason = NULL;
  g_autofree char *reason_buf = NULL;
  if (!cJSON_IsObject (rep) || !cJSON_GetObjectItemCaseSensitive (rep, "vramsim_report"))
    reason = "not a vramsim replay report";
  else if (!cJSON_IsObject (run))
    reason = "it does not say what it is a run of (written by an older vramsim?)";
  else if (c->trace_changed)
    reason = "the trace is not the one the jobs file was written for (changed or replaced since: size or first MiB "
             "differ)";
  else if (c->trace && !cJSON_Compare (cJSON_GetObjectItemCaseSensitive (run, "trace"), c->trace, TRUE))
    reason = "a run of another trace, or of the trace before it changed (path, size or first MiB differ)";
  else if (!same_string (run, "config", j->config))
    reason = reason_buf = g_strdup_printf ("a run of another config (not %s)", j->config);
  else if (!same_string (run, "config_sha256", sha_of (c, j->config)))
    reason = reason_buf = g_strdup_printf ("its config %s changed since it ran", j->config);
  else if (!same_string (run, "capture_config", j->capture)
           || (j->capture && !same_string (run, "capture_config_sha256", sha_of (c, j->capture))))
    reason = "a run with another capture config";
  else
    {
      guint n = cJSON_IsObject (sets) ? (guint) cJSON_GetArraySize (sets) : 0;
      gboolean same = n == j->sets->len;
      const cJSON *it = sets ? sets->child : NULL;
      for (guint k = 0; same && k < j->sets->len; k++, it = it->next)
        {
          const char *a = j->sets->pdata[k];
          const char *eq = strchr (a, '=');
          gsize kl = eq ? (gsize) (eq - a) : strlen (a);
          same = it && it->string && strlen (it->string) == kl && strncmp (it->string, a, kl) == 0
                 && cJSON_IsString (it) && strcmp (it->valuestring, eq ? eq + 1 : "") == 0;
        }
      if (!same)
        reason = "a run of other --set values";
    }
  if (reason)
    {
      if (why)
        *why = g_strdup (reason);
      cJSON_Delete (rep);
      return JOB_STALE;
    }
  const cJSON *status = cJSON_GetObjectItemCaseSensitive (rep, "status");
  JobState st = cJSON_IsString (status) && strcmp (status->valuestring, "error") == 0 ? JOB_FAILED : JOB_DONE;
  if (st == JOB_FAILED && why)
    {
      const cJSON *e = cJSON_GetObjectItemCaseSensitive (rep, "error");
      *why = g_strdup (cJSON_IsString (e) ? e->valuestring : "error");
    }
  if (report)
    *report = rep;
  else
    cJSON_Delete (rep);
  return st;
}

gboolean
sweep_jobs_check_done (SweepJobsCheck *c, const char *line)
{
  Job *j = job_parse (line, "", 0, NULL);
  if (j == NULL)
    return FALSE;
  JobState st = job_check (c, j, NULL, NULL);
  job_free (j);
  return st == JOB_DONE || st == JOB_FAILED;
}

gboolean
sweep_jobs_same_commands (const char *jobs_file, const char *commands, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (jobs_file, &text, NULL, error))
    return FALSE;
  GString *mine = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (lines[i][0] != '#' && lines[i][0] != '\0')
      g_string_append_printf (mine, "%s\n", lines[i]);
  gboolean same = strcmp (mine->str, commands) == 0;
  g_string_free (mine, TRUE);
  if (!same)
    g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                 "--resume: %s holds the commands of another sweep (other configs, values or paths); "
                 "give the options that wrote it, or another --jobs-file", jobs_file);
  return same;
}

/* Runs listed twice (the same report, or the same config and values) and
 * report files in the reports folders that no run writes. */
static void
find_duplicates_and_extras (const Plan *p, GString *dups, GString *extras, guint *n_dups, guint *n_extras)
{
  g_autoptr (GHashTable) reports = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < p->jobs->len; i++)
    {
      Job *j = p->jobs->pdata[i];
      GString *key = g_string_new (j->config);
      for (guint k = 0; k < j->sets->len; k++)
        g_string_append_printf (key, "\x1f%s", (char *) j->sets->pdata[k]);
      Job *a = g_hash_table_lookup (reports, j->report);
      Job *b = g_hash_table_lookup (runs, key->str);
      Job *twin = a ? a : b;
      if (twin)
        {
          (*n_dups)++;
          g_string_append_printf (dups, "  duplicated  line %u is the run of line %u (%s)\n", j->line, twin->line,
                                  a ? j->report : "same config and --set values");
        }
      g_hash_table_insert (reports, j->report, j);
      g_hash_table_insert (runs, g_string_free (key, FALSE), j);
      g_hash_table_add (dirs, g_path_get_dirname (j->report));
    }
  GHashTableIter it;
  gpointer dir;
  g_hash_table_iter_init (&it, dirs);
  while (g_hash_table_iter_next (&it, &dir, NULL))
    {
      GDir *d = g_dir_open (dir, 0, NULL);
      if (d == NULL)
        continue;
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *n;
      while ((n = g_dir_read_name (d)))
        if (g_str_has_prefix (n, "run-") && g_str_has_suffix (n, ".json"))
          g_ptr_array_add (names, g_build_filename (dir, n, NULL));
      g_dir_close (d);
      g_ptr_array_sort (names, (GCompareFunc) g_ascii_strcasecmp);
      for (guint i = 0; i < names->len; i++)
        if (!g_hash_table_contains (reports, names->pdata[i]))
          {
            (*n_extras)++;
            g_string_append_printf (extras, "  extra       %s (no run of the jobs file writes it)\n",
                                    (char *) names->pdata[i]);
          }
    }
}

static const char *const state_names[] = { "done", "failed", "missing", "stale" };

gboolean
sweep_status (const char *jobs_file, gboolean *complete, GError **error)
{
  Plan p = { 0 };
  if (!plan_read (&p, jobs_file, error))
    {
      plan_clear (&p);
      return FALSE;
    }
  SweepJobsCheck *c = check_new (p.trace);
  guint count[4] = { 0 };
  GString *lines = g_string_new (NULL);
  for (guint i = 0; i < p.jobs->len; i++)
    {
      Job *j = p.jobs->pdata[i];
      g_autofree char *why = NULL;
      JobState st = job_check (c, j, NULL, &why);
      count[st]++;
      if (st == JOB_MISSING)
        g_string_append_printf (lines, "  missing     line %u: %s (no report: not run yet, or killed or crashed; "
                                "see the job's log)\n", j->line, j->report);
      else if (st != JOB_DONE)
        g_string_append_printf (lines, "  %-11s line %u: %s: %s\n", state_names[st], j->line, j->report, why);
    }
  guint n_dups = 0, n_extras = 0;
  GString *dups = g_string_new (NULL), *extras = g_string_new (NULL);
  find_duplicates_and_extras (&p, dups, extras, &n_dups, &n_extras);
  printf ("%s: %u runs: %u done, %u failed (config errors), %u missing, %u stale", jobs_file, p.jobs->len,
          count[JOB_DONE], count[JOB_FAILED], count[JOB_MISSING], count[JOB_STALE]);
  if (n_dups)
    printf (", %u duplicated", n_dups);
  if (n_extras)
    printf (", %u extra reports", n_extras);
  printf ("\n%s%s%s", lines->str, dups->str, extras->str);
  if (count[JOB_MISSING] + count[JOB_STALE])
    printf ("rerun them: the same vramsim sweep ... --jobs-file %s --resume writes their commands to %s.resume-N\n",
            jobs_file, jobs_file);
  *complete = count[JOB_MISSING] + count[JOB_STALE] + n_dups + n_extras == 0;
  g_string_free (lines, TRUE);
  g_string_free (dups, TRUE);
  g_string_free (extras, TRUE);
  sweep_jobs_check_free (c);
  plan_clear (&p);
  return TRUE;
}

gboolean
sweep_merge_jobs (const char *jobs_file, const char *output, VsSweepFormat format, gboolean step, GError **error)
{
  Plan p = { 0 };
  gboolean ok = FALSE;
  SweepJobsCheck *c = NULL;
  GString *body = g_string_new (NULL), *problems = g_string_new (NULL);
  char **columns = NULL, *header = NULL;
  if (!plan_read (&p, jobs_file, error))
    goto out;
  if (output && !outfile_check_not_input (output, "-o", jobs_file, "--jobs-file", error))
    goto out;
  c = check_new (p.trace);

  guint n_bad[4] = { 0 };
  guint n_dups = 0, n_extras = 0;
  const Job *first = p.jobs->pdata[0];
  GPtrArray *cols = g_ptr_array_new ();
  g_ptr_array_add (cols, g_strdup ("config"));
  for (guint k = 0; k < first->sets->len; k++)
    {
      const char *a = first->sets->pdata[k];
      const char *eq = strchr (a, '=');
      g_ptr_array_add (cols, g_strndup (a, eq ? (gsize) (eq - a) : strlen (a)));
    }
  guint n_keys = cols->len;
  guint n_ok = 0, n_steady = 0;
  for (const char *const *name = sweep_result_columns (step); *name; name++)
    g_ptr_array_add (cols, g_strdup (*name));
  g_ptr_array_add (cols, NULL);
  columns = (char **) g_ptr_array_free (cols, FALSE);
  header = sweep_format_header (format, columns);
  g_string_append (body, header);

  for (guint i = 0; i < p.jobs->len; i++)
    {
      Job *j = p.jobs->pdata[i];
      cJSON *rep = NULL;
      g_autofree char *why = NULL;
      JobState st = job_check (c, j, &rep, &why);
      if (st == JOB_MISSING || st == JOB_STALE)
        {
          if (n_bad[st]++ < 20)
            g_string_append_printf (problems, "  %-11s line %u: %s%s%s\n", state_names[st], j->line, j->report,
                                    why ? ": " : "", why ? why : "");
          continue;
        }
      if (j->sets->len != n_keys - 1)
        {
          g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                       "%s:%u: its --set keys differ from those of line %u; a jobs file is one sweep", jobs_file,
                       j->line, first->line);
          cJSON_Delete (rep);
          goto out;
        }
      char **cells = g_new0 (char *, n_keys + g_strv_length ((char **) sweep_result_columns (step)) + 1);
      const cJSON *name = cJSON_GetObjectItemCaseSensitive (rep, "config");
      cells[0] = g_strdup (cJSON_IsString (name) ? name->valuestring : "");
      for (guint k = 0; k < j->sets->len; k++)
        {
          const char *eq = strchr (j->sets->pdata[k], '=');
          cells[1 + k] = g_strdup (eq ? eq + 1 : "");
        }
      char **res = sweep_report_cells (rep, step);
      n_ok += step && strcmp (res[0], "ok") == 0;
      n_steady += step && strcmp (res[0], "ok") == 0 && *res[SWEEP_STEP_CELL];
      for (guint r = 0; res[r]; r++)
        cells[n_keys + r] = res[r];
      g_free (res);
      cJSON_Delete (rep);
      g_autofree char *line = sweep_format_line (format, columns, cells, n_keys);
      g_strfreev (cells);
      g_string_append (body, line);
    }
  GString *dups = g_string_new (NULL), *extras = g_string_new (NULL);
  find_duplicates_and_extras (&p, dups, extras, &n_dups, &n_extras);
  g_string_append (problems, dups->str);
  g_string_append (problems, extras->str);
  g_string_free (dups, TRUE);
  g_string_free (extras, TRUE);
  if (n_bad[JOB_MISSING] + n_bad[JOB_STALE] + n_dups + n_extras)
    {
      guint shown = MIN (n_bad[JOB_MISSING] + n_bad[JOB_STALE], 40);
      /* The problems after the summary, without the last newline. */
      if (problems->len && problems->str[problems->len - 1] == '\n')
        g_string_truncate (problems, problems->len - 1);
      g_set_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT,
                   "--merge: %s: of %u runs, %u have no report, %u a stale one (of another run), %u are listed "
                   "twice, and %u reports are extra; nothing written (vramsim sweep --status --jobs-file %s lists "
                   "them all; --resume writes the commands to rerun)%s:\n%s",
                   jobs_file, p.jobs->len, n_bad[JOB_MISSING], n_bad[JOB_STALE], n_dups, n_extras, jobs_file,
                   shown < n_bad[JOB_MISSING] + n_bad[JOB_STALE] ? "; the first" : "", problems->str);
      goto out;
    }
  ok = outfile_write_all (output ? output : "-", output ? "-o" : NULL, body->str, (gssize) body->len, error);
  if (ok)
    {
      const cJSON *tp = cJSON_GetObjectItemCaseSensitive (p.trace, "path");
      sweep_warn_no_steps (cJSON_IsString (tp) ? tp->valuestring : "the trace", n_ok, n_steady);
    }

out:
  g_strfreev (columns);
  g_free (header);
  g_string_free (body, TRUE);
  g_string_free (problems, TRUE);
  if (c)
    sweep_jobs_check_free (c);
  plan_clear (&p);
  return ok;
}
