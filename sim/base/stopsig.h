/* stopsig.h — the signals that stop long work (sweep, plan) cleanly. */
#ifndef VS_STOPSIG_H
#define VS_STOPSIG_H

#include <signal.h>

/* SIGINT (Ctrl-C), SIGTERM (Slurm, timeouts) and SIGHUP (a closed ssh
 * session), in that order. */
#define VS_STOP_NSIG 3

typedef struct {
  struct sigaction old[VS_STOP_NSIG];
} VsStopSignals;

/* The signal that asked work to stop (0: none yet). The owner may also
 * set it (e.g. -1: stop dispatching after a failure). */
extern volatile sig_atomic_t vs_stop_signal;

/* Clears vs_stop_signal and catches the three signals, saving the old
 * actions in S: the first sets vs_stop_signal, a second kills (the
 * default action is restored by the first). An ignored SIGHUP (nohup)
 * stays ignored. */
void stopsig_install (VsStopSignals *s);
void stopsig_restore (const VsStopSignals *s);

#endif
