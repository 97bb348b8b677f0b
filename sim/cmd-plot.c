/* cmd-plot.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_plot (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'plot' is not built yet");
  return 2;
}
