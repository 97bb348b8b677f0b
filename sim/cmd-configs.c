/* cmd-configs.c — PLACEHOLDER until its owner lands the real command. */
#include "cmds.h"

int
cmd_configs (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  cmd_error ("'configs' is not built yet");
  return 2;
}
