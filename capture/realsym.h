/* realsym.h — the C library's own dlsym (realsym.c), for the files that
 * need it: hook mode (hooks.c, which interposes dlsym itself; hooks-real.c,
 * which looks up the driver's functions) and the NCCL wrap (nccl.c), which
 * looks up the real NCCL functions. The lowest
 * file of the shim with recorder.c: it includes nothing of the others. */
#pragma once

/* The real dlsym, NULL until cap_real_dlsym_init has found it (or if it
 * cannot be found). */
extern void *(*cap_real_dlsym) (void *handle, const char *name);
void cap_real_dlsym_init (void);

/* The next definition of NAME after the shim in the global scope (dlsym
 * RTLD_NEXT with the real dlsym), or NULL; NAME in HANDLE and its
 * dependencies (the real dlsym). */
void *cap_next_symbol (const char *name);
void *cap_symbol_in (void *handle, const char *name);
