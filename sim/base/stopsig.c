/* stopsig.c — SIGINT, SIGTERM and SIGHUP stop a sweep or a plan search the
 * same way: work in flight finishes, the caller cleans up and says how far
 * it got (stopsig.h). */
#include "base/stopsig.h"

#include <string.h>

volatile sig_atomic_t vs_stop_signal;

static const int stop_signals[VS_STOP_NSIG] = { SIGINT, SIGTERM, SIGHUP };

static void
on_signal (int sig)
{
  vs_stop_signal = sig;
}

void
stopsig_install (VsStopSignals *s)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;   /* a second signal kills */
  sigemptyset (&sa.sa_mask);
  vs_stop_signal = 0;
  for (int i = 0; i < VS_STOP_NSIG; i++)
    {
      sigaction (stop_signals[i], NULL, &s->old[i]);
      if (stop_signals[i] != SIGHUP || s->old[i].sa_handler != SIG_IGN || (s->old[i].sa_flags & SA_SIGINFO))
        sigaction (stop_signals[i], &sa, NULL);
    }
}

void
stopsig_restore (const VsStopSignals *s)
{
  for (int i = 0; i < VS_STOP_NSIG; i++)
    sigaction (stop_signals[i], &s->old[i], NULL);
}
