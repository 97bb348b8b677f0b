/* outfile.h — the one way every command writes an output file: whole or
 * not at all, never over something that is not a file, never onto an
 * input, with errors that name the path the user gave.
 *
 * What a PATH is decides how it is written (docs/errors.md, "Outputs"):
 * - "-", /dev/stdout, /dev/fd/N, a path under /proc/, or an existing
 *   device, FIFO or socket: written directly (opened for writing, never
 *   created, removed or truncated): `-o /dev/null` stays /dev/null.
 * - a symlink: its final target is written, atomically beside the target;
 *   the link stays.
 * - a regular file, or a name that does not exist yet: a temporary beside
 *   it ("PATH.tmp-XXXXXX"), renamed over PATH by outfile_commit(). An
 *   existing file keeps its mode (and, as root, its owner); a new one gets
 *   0666 & ~umask.
 * Temporaries are removed by outfile_abort(), on every error, and when the
 * process gets SIGINT, SIGTERM or SIGHUP (the signal is then re-raised, so
 * the exit status is the signal's). */
#pragma once

#include <stdio.h>
#include <glib.h>

typedef struct _VsOutFile VsOutFile;

/* Opens PATH for writing. WHAT names the output in messages ("report",
 * "--series"); messages read "WHAT PATH: ..." or "PATH: ..." when WHAT is
 * NULL. */
VsOutFile *outfile_open (const char *path, const char *what, GError **error);
/* As outfile_open, for a program that writes the file by name itself
 * (gnuplot's `set output`): nothing is opened for a direct target, and
 * outfile_write_path() is the name to give the program. */
VsOutFile *outfile_open_named (const char *path, const char *what, GError **error);

/* The file descriptor to write (-1 for outfile_open_named direct targets). */
int outfile_fd (VsOutFile *f);
/* A stdio stream on outfile_fd(), made on first use; outfile_commit()
 * flushes it and reports its errors. */
FILE *outfile_stream (VsOutFile *f);
/* The name under which the data is written: the temporary, or PATH itself
 * for a direct target. */
const char *outfile_write_path (const VsOutFile *f);
/* The path the user gave. */
const char *outfile_path (const VsOutFile *f);
/* TRUE when PATH is written through a temporary and a rename. */
gboolean outfile_is_atomic (const VsOutFile *f);

/* Writes LEN bytes, retrying short writes. FALSE with ERROR naming PATH. */
gboolean outfile_write (VsOutFile *f, const void *data, gsize len, GError **error);

/* Flushes, checks every write error, fsyncs and renames into place (or,
 * for a direct target, closes). Frees F whatever the outcome; on failure
 * the temporary is gone and PATH is as it was. */
gboolean outfile_commit (VsOutFile *f, GError **error);
/* Removes the temporary (PATH untouched) and frees F. Accepts NULL. */
void outfile_abort (VsOutFile *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsOutFile, outfile_abort)

/* For an output that grows row by row and must survive a kill at any
 * moment (sweep -o, which --resume continues): a regular file (or a
 * symlink's target, or a new name) is opened in place, without
 * truncating, and locked (flock, exclusive): a second writer is refused
 * ("another process is writing it"). Devices, FIFOs and "-" are written
 * directly. outfile_commit() fsyncs and closes; outfile_abort() closes and
 * keeps the rows written (a file it created and never wrote is removed). */
VsOutFile *outfile_open_rows (const char *path, const char *what, GError **error);
/* Empties a rows file (a no-op for a direct target). */
gboolean outfile_rows_reset (VsOutFile *f, GError **error);
/* Writes whole rows: on a failed or short write (a full disk) the file is
 * cut back to the end of the last whole row written, so it holds complete
 * rows only. */
gboolean outfile_write_rows (VsOutFile *f, const char *text, gsize len, GError **error);

/* Writes LEN bytes of DATA (-1: a string) to PATH as above. */
gboolean outfile_write_all (const char *path, const char *what, const char *data, gssize len, GError **error);

/* Checks before long work that PATH can be written: not a folder, its
 * folder exists and is writable (direct targets are only checked to be
 * writable). */
gboolean outfile_check_writable (const char *path, const char *what, GError **error);

/* Refuses (FALSE) an output PATH that is the same file (device and inode)
 * as the existing INPUT: "WHAT PATH is the same file as INPUT_WHAT INPUT".
 * Either missing (or "-") is never the same. */
gboolean outfile_check_not_input (const char *path, const char *what, const char *input,
                                  const char *input_what, GError **error);

/* The one output rule every command applies before it writes
 * (docs/errors.md "Outputs"): each output of OUTS (N_OUTS; a NULL path is
 * skipped) is writable (outfile_check_writable), and is none of the files
 * the command reads, INS (N_INS: the trace, the configs, the capture
 * config, the snapshot and its parts, the sidecars, the kernel-bytes
 * table...), nor another of its outputs: not the same file after links
 * (device and inode), nor the same name once made. A FIFO or socket is
 * compared too (reading and writing one FIFO hangs); only a character
 * device (a terminal, /dev/null) may be both. The error names both
 * roles: "WHAT PATH is the same file as INPUT_WHAT INPUT". */
typedef struct {
  const char *path;
  const char *what;
} VsIoPath;
gboolean outfile_check_rule (const VsIoPath *outs, guint n_outs, const VsIoPath *ins, guint n_ins,
                             GError **error);
/* Appends to INS (a GArray of VsIoPath) every existing PATH.partK
 * (snapshot-parts.h: the dumps joined with PATH), as WHAT; the paths are
 * owned by KEEP (a GPtrArray with g_free). */
void outfile_add_parts (GArray *ins, GPtrArray *keep, const char *path, const char *what);

/* The temporary-path registry the signal handler empties; exposed for the
 * few writers that create temporaries themselves. Register returns a slot
 * (or -1 when full: the path is then only removed on error paths). */
int outfile_register_temp (const char *path);
void outfile_unregister_temp (int slot);

/* Removes DIR, a temporary folder of plain files this process made
 * (plot's gnuplot inputs, plan's traces): its files, then itself. */
void outfile_remove_tmpdir (const char *dir);
