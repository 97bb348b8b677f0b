/* cmd-info.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_info (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'info' is not built yet");
  return 2;
}
