/* sweep.h — replay one trace over many configurations (SPEC section 7).
 *
 * A sweep is the cartesian product of configs × --vary values. Each run
 * clones its config's merged JSON, applies the fixed --set assignments, then
 * the varied ones, compiles and replays over a shared in-memory trace. Runs
 * are numbered in product order (configs outermost, the last --vary
 * fastest); rows come out in that order whatever the thread count.
 *
 * Rows are tables of strings: "config", the varied keys as written, then
 * the result columns of sweep_result_columns (STEP: --metric step).
 * docs/cluster.md documents the columns, --jobs-file and --merge. */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#define VS_SWEEP_ERROR (sweep_error_quark ())
GQuark sweep_error_quark (void);

/* One --vary KEY=V1,V2,... after range expansion. */
typedef struct {
  char *key;       /* as written */
  char **values;   /* NULL-terminated, as given or as a range expands */
  guint n_values;
} VsVary;

/* Parses "KEY=V1,V2,..." where each item is a value or a range
 * "A..B/STEP" (arithmetic) or "A..B/xK" (geometric, K > 1). Range ends and
 * steps take the units of SPEC section 4 (sizes, rates, times) or are plain
 * numbers; expanded values are written in the unit of the first bound that
 * has one ("8GiB..32GiB/8GiB" -> 8GiB,16GiB,24GiB,32GiB). */
VsVary *sweep_vary_parse (const char *spec, GError **error);
void sweep_vary_free (VsVary *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsVary, sweep_vary_free)

/* The result columns after the key columns, NULL-terminated. STEP
 * (--metric step) adds step_median_ns after slowdown: the report's
 * steady_state.step_median_ns, the median time of the repeated mark's
 * steps after the first (docs/model.md, Marks), as `fit --metric step`
 * ranks by. */
const char *const *sweep_result_columns (gboolean step);

/* (transfer full) The result cells of one report (SPEC 5.8), in the order
 * of sweep_result_columns(STEP); the error cell is "". NULL-terminated. */
char **sweep_report_cells (const cJSON *report, gboolean step);

typedef enum { VS_SWEEP_CSV, VS_SWEEP_JSONL } VsSweepFormat;

typedef struct {
  const char *trace_path;
  char **configs;               /* NULL-terminated, as given to -c */
  const char *capture_config;   /* --capture-config, or NULL */
  char **sets;                  /* fixed --set KEY=V, NULL-terminated, may be NULL */
  VsVary **varies;              /* NULL-terminated, may be NULL */
  guint n_threads;              /* 0 = all processors */
  const char *output;           /* -o, NULL = stdout */
  VsSweepFormat format;
  gboolean resume;
  gboolean progress;            /* progress bar on stderr */
  const char *jobs_file;        /* write commands instead of running */
  const char *reports_dir;      /* for jobs_file; NULL = default */
  guint shard_k, shard_n;       /* --shard K/N (1 <= K <= N); 0/0 = every run */
  gboolean step_metric;         /* --metric step: the step_median_ns column */
  guint sample_steps;           /* --sample-steps K (replay's; 0: every step) */
  double sample_tol;            /* --sample-tolerance (0: replay's default) */
} VsSweepOptions;

/* Runs (or, with jobs_file, writes the commands of) a sweep. Returns FALSE
 * with ERROR set on bad input (nothing written) or on an I/O error; an
 * interrupted sweep (SIGINT, SIGTERM, SIGHUP) returns FALSE with
 * VS_SWEEP_ERROR_INTERRUPTED after writing every finished row. */
typedef enum { VS_SWEEP_ERROR_INPUT, VS_SWEEP_ERROR_IO, VS_SWEEP_ERROR_INTERRUPTED } VsSweepErrorCode;
gboolean sweep_run (const VsSweepOptions *opts, GError **error);

/* Joins replay reports (from a --jobs-file sweep) into the table an
 * in-process sweep writes: key columns from each report's "config" and
 * "sets", rows in the order given. */
gboolean sweep_merge (char **reports, const char *output, VsSweepFormat format, gboolean step, GError **error);

/* --merge --jobs-file FILE: the rows of every run FILE lists, from the
 * reports its commands write, in FILE's order. Refuses (exit 1, naming
 * them) runs without a report, reports of another run (stale: another
 * trace, config or value), reports in the folder that FILE does not list
 * (extra) and runs listed twice. */
gboolean sweep_merge_jobs (const char *jobs_file, const char *output, VsSweepFormat format, gboolean step,
                           GError **error);

/* --merge of --shard CSVs: checks (with the sweep's own options) that the
 * parts hold every run once, and writes them in run order. */
gboolean sweep_merge_shards (const VsSweepOptions *opts, char **parts, GError **error);

/* --status --jobs-file FILE: prints, on stdout, how many runs are done,
 * failed (an error report: the config did not compile), missing (no
 * report: never ran, or killed or crashed) and stale, then one line per
 * run that is not done. *COMPLETE is TRUE when every run has its report. */
gboolean sweep_status (const char *jobs_file, gboolean *complete, GError **error);

/* (transfer full) What identifies a trace file across machines: its
 * absolute path, size and the SHA-256 of its first MiB (the header and
 * first events). NULL for what is not a regular file. */
cJSON *sweep_trace_identity (const char *path);
/* (transfer full) The SHA-256 of a regular file, or NULL. */
char *sweep_file_sha256 (const char *path);

/* ---- small helpers shared with plot ---- */

/* Reads a CSV file (RFC 4180 quoting) into rows of cells. The first row is
 * the header. A last line without a newline is dropped when DROP_PARTIAL
 * (a sweep that was killed mid-write). (transfer full) GPtrArray of char**. */
GPtrArray *sweep_csv_read (const char *path, gboolean drop_partial, GError **error);
/* Appends one CSV line (with newline) for CELLS to OUT. */
void sweep_csv_append_row (GString *out, const char *const *cells, guint n);
