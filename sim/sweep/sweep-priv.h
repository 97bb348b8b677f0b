/* sweep-priv.h — what sweep.c and sweep-jobs.c share (not for other rooms). */
#pragma once

#include "sweep/sweep.h"

/* ---- sweep-rows.c: the lowest file of the room (sweep.c and
 * sweep-jobs.c call it; it calls neither) ---- */

/* The number of result cells of sweep_report_cells (STEP: with
 * step_median_ns). */
guint sweep_n_result_columns (gboolean step);
/* Frees one row of sweep_csv_read (a NULL-terminated array of cells). */
void sweep_row_free (gpointer row);

/* The header line (CSV; "" for JSONL) and one row line, with newline. */
char *sweep_format_header (VsSweepFormat format, char **columns);
char *sweep_format_line (VsSweepFormat format, char **columns, char **cells, guint n_keys);

/* ---- sweep-jobs.c (calls sweep-rows.c only) ---- */

/* Checks jobs-file reports against what they should be runs of. */
typedef struct _SweepJobsCheck SweepJobsCheck;
/* TRACE_IDENT: the jobs file's "# trace:" JSON (sweep_trace_identity). */
SweepJobsCheck *sweep_jobs_check_new (const char *trace_ident);
/* TRUE when the report LINE's command writes exists and is a run of
 * exactly that command (done, or failed with an error report). */
gboolean sweep_jobs_check_done (SweepJobsCheck *c, const char *line);
void sweep_jobs_check_free (SweepJobsCheck *c);
/* Judges reports naming config PATH against TEXT (what PATH will hold)
 * instead of the file as it is now. */
void sweep_jobs_check_expect (SweepJobsCheck *c, const char *path, const char *text);

/* TRUE when JOBS_FILE lists exactly the commands of COMMANDS (lines). */
gboolean sweep_jobs_same_commands (const char *jobs_file, const char *commands, GError **error);

/* --metric step: the index of step_median_ns among the result cells. */
#define SWEEP_STEP_CELL 3
/* (sweep-rows.c) Warns on stderr when N_OK runs ended ok and none of them (N_STEADY) has
 * a step time: the trace WHAT repeats no mark. */
void sweep_warn_no_steps (const char *what, guint n_ok, guint n_steady);
