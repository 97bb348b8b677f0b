/* cmd-synth.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_synth (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'synth' is not built yet");
  return 2;
}
