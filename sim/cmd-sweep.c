/* cmd-sweep.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_sweep (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'sweep' is not built yet");
  return 2;
}
