/* cmds.h — the subcommands of `vramsim`. Each parses its own options and
 * returns the process exit status: 0 success, 1 bad input, 2 bad usage. */
#pragma once

#include <glib.h>

int cmd_replay (int argc, char **argv);
int cmd_sweep (int argc, char **argv);
int cmd_fit (int argc, char **argv);
int cmd_plot (int argc, char **argv);
int cmd_synth (int argc, char **argv);
int cmd_convert (int argc, char **argv);
int cmd_info (int argc, char **argv);
int cmd_configs (int argc, char **argv);
int cmd_plan (int argc, char **argv);

/* Checks ARGV against the option GROUPS (NULL-terminated) before GLib
 * parses it: an unknown option (with "did you mean"), a single-valued
 * option given twice, `--set KEY VALUE` written with a space. FALSE with
 * ERROR set (a usage error: exit 2). */
gboolean cmd_check_options (int argc, char **argv, const GOptionEntry *const *groups, GError **error);
/* After g_option_context_parse: drops the "--" that ended the options (GLib
 * leaves it in ARGV), so `vramsim CMD -- -t.jsonl` names the file -t.jsonl. */
void cmd_end_options (int *argc, char **argv);
/* --sample-steps K (>= 0; 0: replay everything) and --sample-tolerance TOL
 * (0 <= TOL < 1): FALSE, after a cmd_error starting with PREFIX ("fit: ",
 * or ""), when either is out of range (a usage error: exit 2). */
gboolean cmd_check_sampling (const char *prefix, gint steps, double tol);

/* Writes "vramsim: MESSAGE\n" to stderr. */
void cmd_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
