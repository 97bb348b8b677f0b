/* cmd-convert.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_convert (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'convert' is not built yet");
  return 2;
}
