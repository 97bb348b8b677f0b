/* vramcap.c — the capture launcher: runs a program with libvramcap.so
 * loaded (CUPTI injection or LD_PRELOAD hooks) and execs it, so the
 * program's exit status is vramcap's. See docs/capture.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: vramcap [-o FILE] [--mode cupti|hook] [--] PROGRAM [ARGS...]\n"
           "\n"
           "Runs PROGRAM and records its CUDA memory activity (allocations, copies,\n"
           "kernels, syncs) into a vramsim trace.\n"
           "\n"
           "  -o, --output FILE   trace to write (default vramcap.vtrace); a child\n"
           "                      process that uses CUDA writes FILE with its pid\n"
           "                      before the extension (vramcap.1234.vtrace)\n"
           "  -m, --mode MODE     cupti (default): the driver loads the shim through\n"
           "                      CUDA_INJECTION64_PATH and CUPTI reports GPU times;\n"
           "                      hook: LD_PRELOAD wrappers, GPU times from CUDA events\n"
           "  -h, --help          show this help\n"
           "\n"
           "NVTX ranges become mark events: vramcap sets NVTX_INJECTION64_PATH to the\n"
           "shim unless it is already set.\n"
           "\n"
           "The shim is found at ../lib/libvramcap.so beside this program, or at\n"
           "$VRAMCAP_LIB.\n");
}

static int
find_lib (char *out, size_t cap)
{
  const char *env = getenv ("VRAMCAP_LIB");
  if (env && *env) {
    if (!realpath (env, out))
      return -1;
    return 0;
  }
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = 0;
  char *dir = dirname (self);
  char cand[PATH_MAX + 32];
  snprintf (cand, sizeof cand, "%s/../lib/libvramcap.so", dir);
  if (!realpath (cand, out))
    return -1;
  (void) cap;
  return 0;
}

int
main (int argc, char **argv)
{
  const char *out = "vramcap.vtrace", *mode = "cupti";
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp (a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp (a, "-h") == 0 || strcmp (a, "--help") == 0) {
      usage (stdout);
      return 0;
    }
    if (strcmp (a, "-o") == 0 || strcmp (a, "--output") == 0 || strcmp (a, "-m") == 0
        || strcmp (a, "--mode") == 0) {
      if (i + 1 >= argc) {
        fprintf (stderr, "vramcap: %s needs a value\n", a);
        return 2;
      }
      if (a[1] == 'o' || a[2] == 'o')
        out = argv[++i];
      else
        mode = argv[++i];
      continue;
    }
    if (strncmp (a, "--output=", 9) == 0) {
      out = a + 9;
      continue;
    }
    if (strncmp (a, "--mode=", 7) == 0) {
      mode = a + 7;
      continue;
    }
    if (a[0] == '-') {
      fprintf (stderr, "vramcap: unknown option %s (see vramcap --help)\n", a);
      return 2;
    }
    break;
  }
  if (i >= argc) {
    fprintf (stderr, "vramcap: no program given (see vramcap --help)\n");
    return 2;
  }
  if (strcmp (mode, "cupti") != 0 && strcmp (mode, "hook") != 0) {
    fprintf (stderr, "vramcap: --mode must be cupti or hook, not '%s'\n", mode);
    return 2;
  }
  if (!*out) {
    fprintf (stderr, "vramcap: -o needs a file name\n");
    return 2;
  }
  char lib[PATH_MAX];
  if (find_lib (lib, sizeof lib) != 0) {
    fprintf (stderr, "vramcap: cannot find libvramcap.so (looked beside the vramcap binary, "
             "../lib/libvramcap.so; set VRAMCAP_LIB)\n");
    return 1;
  }
  /* An absolute output path, so a program that changes directory still
   * writes where the user asked. */
  char absout[PATH_MAX + 1];
  if (out[0] == '/') {
    snprintf (absout, sizeof absout, "%s", out);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd (cwd, sizeof cwd)) {
      fprintf (stderr, "vramcap: getcwd: %s\n", strerror (errno));
      return 1;
    }
    if (snprintf (absout, sizeof absout, "%s/%s", cwd, out) >= (int) sizeof absout) {
      fprintf (stderr, "vramcap: output path too long\n");
      return 1;
    }
  }
  char pid[32];
  snprintf (pid, sizeof pid, "%ld", (long) getpid ());
  setenv ("VRAMCAP_OUTPUT", absout, 1);
  setenv ("VRAMCAP_MODE", mode, 1);
  setenv ("VRAMCAP_PID", pid, 1);
  /* Preloaded in both modes: in cupti mode the wrappers only pass calls
   * through, and take over if CUPTI cannot be used. */
  const char *pre = getenv ("LD_PRELOAD");
  size_t pl = strlen (lib) + (pre ? strlen (pre) : 0) + 2;
  char *preload = malloc (pl);
  if (!preload)
    return 1;
  snprintf (preload, pl, "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "");
  setenv ("LD_PRELOAD", preload, 1);
  if (strcmp (mode, "cupti") == 0)
    setenv ("CUDA_INJECTION64_PATH", lib, 1);
  /* NVTX ranges as marks, in both modes, unless another tool (Nsight
   * Systems) already takes NVTX. */
  const char *nvtx = getenv ("NVTX_INJECTION64_PATH");
  if (!nvtx || !*nvtx)
    setenv ("NVTX_INJECTION64_PATH", lib, 1);
  execvp (argv[i], argv + i);
  fprintf (stderr, "vramcap: cannot run %s: %s\n", argv[i], strerror (errno));
  return errno == ENOENT ? 127 : 126;
}
