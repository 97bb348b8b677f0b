/* fuzz-common.h — what the libFuzzer harnesses share: a scratch file per
 * process (the readers and loaders take paths, and reading a real file is
 * the path users hit) and one-time setup. Not part of vramsim. */
#pragma once

#include <glib.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* A path under $TMPDIR (default /tmp; /dev/shm when it exists) unique to
 * this process, ending in SUFFIX. */
static inline char *
fuzz_scratch_path (const char *suffix)
{
  const char *dir = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  return g_strdup_printf ("%s/vramsim-fuzz-%d%s", dir, (int) getpid (), suffix);
}

/* Writes DATA to PATH (truncating); aborts on failure, which is the
 * harness's fault, not the input's. */
static inline void
fuzz_write_file (const char *path, const uint8_t *data, size_t size)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    abort ();
  size_t off = 0;
  while (off < size)
    {
      ssize_t n = write (fd, data + off, size - off);
      if (n <= 0)
        abort ();
      off += (size_t) n;
    }
  close (fd);
}

/* An importer's result (OK, ERROR) for its output OUT_PATH: a failure
 * says why and leaves no file; what it writes, the readers accept. Any
 * other outcome aborts: a finding. */
static inline void
fuzz_check_import (gboolean ok, const GError *error, const char *out_path)
{
  if (!ok && error == NULL)
    abort ();
  if (!ok)
    {
      if (g_file_test (out_path, G_FILE_TEST_EXISTS))
        {
          fprintf (stderr, "failed import left %s behind\n", out_path);
          abort ();
        }
      return;
    }
  GError *e = NULL;
  VsTraceReader *r = trace_open (out_path, &e);
  VsEvent ev;
  while (r != NULL && trace_next (r, &ev, &e))
    ;
  if (e != NULL)
    {
      fprintf (stderr, "imported trace does not read back: %s\n", e->message);
      abort ();
    }
  trace_close (r);
}

/* Presets come from the source tree's configs/ (the harness binaries live
 * in build/fuzz/, so the usual ../configs lookup would miss). Messages from
 * g_warning etc. are silenced: the fuzzer's output is for findings. */
static inline void
fuzz_setup (void)
{
  if (g_getenv ("VRAMSIM_CONFIGS") == NULL)
    {
      const char *src = g_getenv ("VRAMSIM_SRC");
      g_autofree char *dir = g_build_filename (src ? src : ".", "configs", NULL);
      g_setenv ("VRAMSIM_CONFIGS", dir, TRUE);
    }
}
