/* cmd-replay.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_replay (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'replay' is not built yet");
  return 2;
}
