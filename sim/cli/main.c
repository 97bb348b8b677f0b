/* main.c — `vramsim`: dispatch to a subcommand (sim/cmd-*.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmds.h"

static const struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} commands[] = {
  { "replay",  cmd_replay,  "replay a trace against a modeled machine" },
  { "sweep",   cmd_sweep,   "replay one trace over many configurations" },
  { "fit",     cmd_fit,     "where does a trace fit, and how fast: one row per config" },
  { "plan",    cmd_plan,    "which parallel layout trains a model fastest, or cheapest" },
  { "plot",    cmd_plot,    "draw timelines, sweeps and stalls with gnuplot" },
  { "synth",   cmd_synth,   "generate a trace for a modeled workload" },
  { "convert", cmd_convert, "convert between trace formats, import profiler traces" },
  { "info",    cmd_info,    "summarize a trace" },
  { "configs", cmd_configs, "list the hardware presets" },
};

void
cmd_error (const char *fmt, ...)
{
  va_list ap;
  fputs ("vramsim: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

/* Runs at exit, after every command and after GOption's --help (which
 * exits by itself): output that never reached stdout (a full disk,
 * /dev/full, a closed pipe's EIO) is an error, exit 1, as for any output
 * file. A stdout closed before the start (>&-) that was never written is
 * not. */
static void
close_stdout (void)
{
  gboolean failed = ferror (stdout) != 0;
  errno = 0;
  if (fflush (stdout) != 0 && errno != EBADF)
    failed = TRUE;
  if (failed)
    {
      int e = errno;
      fprintf (stderr, "vramsim: cannot write to stdout%s%s\n", e ? ": " : "", e ? g_strerror (e) : "");
      _exit (1);
    }
}

static void
usage (FILE *f)
{
  fputs ("Usage: vramsim COMMAND [OPTIONS...]\n\n"
         "Predict what a recorded CUDA program does on memory hardware you do not have.\n\n"
         "Commands:\n", f);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fputs ("\nRun 'vramsim COMMAND --help' for a command's options.\n", f);
}

int
main (int argc, char **argv)
{
  atexit (close_stdout);
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      puts ("vramsim " VRAMSIM_VERSION);
      return 0;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      {
        /* "vramsim replay" in usage lines and GLib messages. */
        char *name = g_strdup_printf ("vramsim %s", commands[i].name);
        g_set_prgname (name);
        argv[1] = name;
        int rc = commands[i].run (argc - 1, argv + 1);
        g_free (name);
        return rc;
      }
  cmd_error ("unknown command '%s'", argv[1]);
  usage (stderr);
  return 2;
}
