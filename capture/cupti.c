/* cupti.c — CUPTI mode (placeholder until the CUPTI recorder lands). */
#define _GNU_SOURCE
#include "hooks.h"
#include "recorder.h"

int InitializeInjection (void);

int
InitializeInjection (void)
{
  cap_init ();
  if (cap_mode == CAP_MODE_OFF)
    hooks_start ();
  return 1;
}
