/* vramcap.c — the capture launcher: runs a program with libvramcap.so
 * loaded (CUPTI injection or LD_PRELOAD hooks). See docs/capture.md.
 *
 * It runs the program as a child and waits. By default it also puts the
 * PyTorch start-up hook (capture/python-hook/sitecustomize.py) first on
 * PYTHONPATH and asks the shim for its address sidecar; when the hook
 * reported on the program (FILE's base + .torch-status), it rewrites the
 * trace with `vramsim convert --tensor` (or --tensor-note, saying why there
 * are no tensors). When the program's process recorded nothing, the shim
 * leaves no trace and tells why in a temporary file ($VRAMCAP_STATUS),
 * which vramcap prints as one line. Then it exits with the child's status (1 if
 * that is 0 but nothing at all was recorded), or dies of the signal that
 * killed it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: vramcap [-o FILE] [--mode cupti|hook] [--no-torch] [--no-nccl]\n"
           "               [--torch-entries N] [--] PROGRAM [ARGS...]\n"
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
           "      --no-torch      no PyTorch hook: the trace keeps the driver's segment\n"
           "                      allocations, and vramcap execs PROGRAM\n"
           "      --no-nccl       do not wrap NCCL's collective calls (by default the\n"
           "                      kernel an ncclAllReduce, ncclSend, ... launches carries\n"
           "                      its collective: kind, bytes, ranks)\n"
           "      --torch-entries N  PyTorch memory-history ring buffer (default\n"
           "                      1000000 entries; dumped before it wraps)\n"
           "  -h, --help          show this help\n"
           "\n"
           "A Python program that imports torch also gets the caching allocator's\n"
           "tensors: a start-up hook records torch's memory history, and at exit\n"
           "vramcap rewrites FILE with the tensors in place of the segments they\n"
           "explain (vramsim convert --tensor; the snapshot is kept beside FILE).\n"
           "\n"
           "NVTX ranges become mark events: vramcap sets NVTX_INJECTION64_PATH to the\n"
           "shim unless it is already set.\n"
           "\n"
           "The shim is found at ../lib/libvramcap.so beside this program, or at\n"
           "$VRAMCAP_LIB; the hook in ../share/vramsim/python-hook (or the source\n"
           "tree's capture/python-hook), or $VRAMCAP_PYTHON_HOOK; vramsim beside\n"
           "this program, or $VRAMCAP_VRAMSIM.\n");
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

/* The folder holding the hook's sitecustomize.py, or -1. */
static int
find_hook (char *out)
{
  const char *env = getenv ("VRAMCAP_PYTHON_HOOK");
  char self[PATH_MAX], cand[PATH_MAX + 64], probe[PATH_MAX + 96];
#ifndef VRAMCAP_HOOK_SRC
#define VRAMCAP_HOOK_SRC "/nonexistent"
#endif
  const char *rel[] = { "../share/vramsim/python-hook", "../capture/python-hook", VRAMCAP_HOOK_SRC };
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = 0;
  char *dir = dirname (self);
  for (int k = env && *env ? -1 : 0; k < 3; k++) {
    if (k < 0)
      snprintf (cand, sizeof cand, "%s", env);
    else if (k < 2)
      snprintf (cand, sizeof cand, "%s/%s", dir, rel[k]);
    else
      snprintf (cand, sizeof cand, "%s", rel[k]);
    snprintf (probe, sizeof probe, "%s/sitecustomize.py", cand);
    if (access (probe, R_OK) == 0 && realpath (cand, out))
      return 0;
    if (k < 0)
      return -1; /* an explicit folder that is not one */
  }
  return -1;
}

/* The environment vramcap changes for the program, as it found it: the
 * merge runs without the shim or the hook. */
static const char *const g_env_names[] = {
  "LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "PYTHONPATH",
};
#define N_ENV (sizeof g_env_names / sizeof g_env_names[0])
static char *g_env_orig[N_ENV];

/* Runs ARGV (vramsim) in the original environment, waits; its exit
 * status, or -1. */
static int
run_wait (char *const *av)
{
  pid_t p = fork ();
  if (p < 0)
    return -1;
  if (p == 0) {
    for (size_t k = 0; k < N_ENV; k++) {
      if (g_env_orig[k])
        setenv (g_env_names[k], g_env_orig[k], 1);
      else
        unsetenv (g_env_names[k]);
    }
    execv (av[0], av);
    _exit (127);
  }
  int st;
  while (waitpid (p, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

/* After the program: what the hook said (BASE.torch-status) decides how the
 * trace is rewritten. No status: the program never ran the hook (not
 * Python, python -I/-S/-E, or --no-torch): the trace stays as written. */
static void
post_torch (const char *absout, const char *base)
{
  char status_path[PATH_MAX + 32], line[PATH_MAX + 256], conf[4096] = "";
  snprintf (status_path, sizeof status_path, "%s.torch-status", base);
  FILE *f = fopen (status_path, "r");
  if (!f)
    return;
  int got = fgets (line, sizeof line, f) != NULL;
  /* "async: ..." is followed by the PYTORCH_CUDA_ALLOC_CONF in force */
  int got_conf = got && fgets (conf, sizeof conf, f) != NULL;
  fclose (f);
  unlink (status_path);
  if (!got)
    return;
  line[strcspn (line, "\n")] = 0;
  conf[strcspn (conf, "\n")] = 0;
  struct stat sb;
  if (stat (absout, &sb) != 0)
    return; /* the shim wrote no trace (it says why) */
  char vs[PATH_MAX];
  const char *env = getenv ("VRAMCAP_VRAMSIM");
  if (env && *env)
    snprintf (vs, sizeof vs, "%s", env);
  else {
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
      return;
    self[n] = 0;
    snprintf (vs, sizeof vs, "%s/vramsim", dirname (self));
  }
  if (access (vs, X_OK) != 0) {
    fprintf (stderr, "vramcap: cannot run %s for the tensor merge; the trace keeps the driver's "
             "allocations (set VRAMCAP_VRAMSIM)\n", vs);
    return;
  }
  char *av[10];
  int k = 0;
  av[k++] = vs;
  av[k++] = (char *) "convert";
  if (strncmp (line, "ok ", 3) == 0) {
    av[k++] = (char *) "--tensor";
    av[k++] = line + 3;
  } else if (strncmp (line, "async: ", 7) == 0 && got_conf) {
    av[k++] = (char *) "--tensor-async";
    av[k++] = conf;
    av[k++] = (char *) "--tensor-note";
    av[k++] = line;
  } else {
    av[k++] = (char *) "--tensor-note";
    av[k++] = line;
  }
  /* convert refuses to write over its own input, so the merged trace goes
   * to a sibling first and replaces the driver-level one only when whole. */
  char merged[PATH_MAX + 64], dcopy[PATH_MAX], bcopy[PATH_MAX];
  snprintf (dcopy, sizeof dcopy, "%s", absout);
  snprintf (bcopy, sizeof bcopy, "%s", absout);
  /* same folder, same extension (convert picks the format by it) */
  snprintf (merged, sizeof merged, "%s/.merge-%ld-%s", dirname (dcopy), (long) getpid (), basename (bcopy));
  av[k++] = (char *) absout;
  av[k++] = merged;
  av[k] = NULL;
  int rc = run_wait (av);
  if (rc == 0 && rename (merged, absout) != 0) {
    fprintf (stderr, "vramcap: cannot rename %s to %s: %s\n", merged, absout, strerror (errno));
    rc = 1;
  }
  if (rc != 0)
    unlink (merged);
  if (rc != 0)
    fprintf (stderr, "vramcap: the tensor merge failed; %s keeps the driver's allocations "
             "(retry: vramsim convert --tensor %s %s OUT)\n", absout,
             strncmp (line, "ok ", 3) == 0 ? line + 3 : "SNAPSHOT", absout);
}

/* The program's other processes (torchrun's workers, ...): each wrote
 * BASE.TAG.torch-status beside its own trace (TAG: rankN or the pid;
 * capture/recorder.c), merged with its own snapshot the same way. */
static void
post_others (const char *absout, const char *base)
{
  char pat[PATH_MAX + 32];
  snprintf (pat, sizeof pat, "%s.*.torch-status", base);
  glob_t g;
  memset (&g, 0, sizeof g);
  if (glob (pat, 0, NULL, &g) != 0) {
    globfree (&g);
    return;
  }
  size_t bl = strlen (base), ol = strlen (absout);
  int ext = ol > 7 && strcmp (absout + ol - 7, ".vtrace") == 0;
  for (size_t k = 0; k < g.gl_pathc; k++) {
    const char *p = g.gl_pathv[k];
    size_t pl = strlen (p), sl = strlen (".torch-status");
    if (pl <= bl + 1 + sl)
      continue;
    char tbase[PATH_MAX + 32], trace[PATH_MAX + 48];
    snprintf (tbase, sizeof tbase, "%.*s", (int) (pl - sl), p);
    snprintf (trace, sizeof trace, "%s%s", tbase, ext ? ".vtrace" : "");
    post_torch (trace, tbase);
  }
  globfree (&g);
}

/* The traces other processes of the program wrote in this run (since
 * START): FILE's base + .TAG.vtrace, or FILE.TAG without the extension
 * (capture/recorder.c, set_output_path). Their names, comma-separated,
 * into LIST; the count. */
static int
other_traces (const char *absout, const char *base, time_t start, char *list, size_t cap)
{
  size_t ol = strlen (absout);
  int ext = ol > 7 && strcmp (absout + ol - 7, ".vtrace") == 0;
  char pat[PATH_MAX + 32];
  snprintf (pat, sizeof pat, ext ? "%s.*.vtrace" : "%s.*", ext ? base : absout);
  glob_t g;
  memset (&g, 0, sizeof g);
  int n = 0;
  list[0] = 0;
  if (glob (pat, 0, NULL, &g) == 0)
    for (size_t k = 0; k < g.gl_pathc; k++) {
      const char *p = g.gl_pathv[k], *tail = p + strlen (p);
      /* sidecars are not traces */
      if (!ext && (strstr (p, ".addrs") || strstr (p, ".torch")))
        continue;
      struct stat sb;
      if (tail == p || stat (p, &sb) != 0 || !S_ISREG (sb.st_mode) || sb.st_mtime < start)
        continue;
      const char *b = strrchr (p, '/');
      size_t used = strlen (list);
      snprintf (list + used, cap - used, "%s%s", n ? ", " : "", b ? b + 1 : p);
      n++;
    }
  globfree (&g);
  return n;
}

/* After the program: whether its process recorded nothing (the shim's
 * word in STATUS, a temporary file vramcap made), said in one line with
 * what else there is to know (the PyTorch hook's note, the other
 * processes' traces). Returns 1 when the run wrote no trace at all, else
 * 0. */
static int
report_nothing (const char *absout, const char *base, const char *prog, const char *status, time_t start)
{
  char sp[PATH_MAX + 32], cause[1024] = "", note[PATH_MAX + 256] = "", others[4096];
  FILE *f = fopen (status, "r");
  int said = 0;
  if (f) {
    said = fgets (cause, sizeof cause, f) != NULL;
    fclose (f);
    cause[strcspn (cause, "\n")] = 0;
  }
  unlink (status);
  struct stat sb;
  if (!said && stat (absout, &sb) == 0)
    return 0;   /* a trace: the usual case */
  if (said && strcmp (cause, "failed") == 0)
    return 0;   /* the trace could not be written: the shim said why; the program is what it was */
  if (said && strncmp (cause, "nothing ", 8) == 0)
    memmove (cause, cause + 8, strlen (cause + 8) + 1);
  int n = other_traces (absout, base, start, others, sizeof others);
  if (!said)
    /* No trace, and the shim never said why: it did not run there (a
     * static program ignores LD_PRELOAD; a program may clear it). */
    snprintf (cause, sizeof cause, "the shim did not run in %s (a statically linked program ignores "
              "LD_PRELOAD, and a program that clears LD_PRELOAD escapes it)", prog);
  /* The PyTorch hook's word on the program, if it said one. */
  snprintf (sp, sizeof sp, "%s.torch-status", base);
  if ((f = fopen (sp, "r")) != NULL) {
    char line[PATH_MAX + 128];
    if (fgets (line, sizeof line, f)) {
      line[strcspn (line, "\n")] = 0;
      snprintf (note, sizeof note, "; PyTorch hook: %s", line);
    }
    fclose (f);
  }
  if (n > 0)
    fprintf (stderr, "vramcap: nothing recorded in %s's process: %s; no trace written to %s (%d other "
             "process%s wrote %s)%s\n", prog, cause, absout, n, n == 1 ? "" : "es", others, note);
  else
    fprintf (stderr, "vramcap: nothing recorded: %s; no trace written to %s%s\n", cause, absout, note);
  return n == 0;
}

static volatile sig_atomic_t g_child;

static void
forward (int sig)
{
  if (g_child > 0)
    kill (g_child, sig);
}

int
main (int argc, char **argv)
{
  const char *out = "vramcap.vtrace", *mode = "cupti", *entries = NULL;
  int torch = 1, nccl = 1;
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
    if (strcmp (a, "--no-torch") == 0) {
      torch = 0;
      continue;
    }
    if (strcmp (a, "--no-nccl") == 0) {
      nccl = 0;
      continue;
    }
    if (strcmp (a, "--torch-entries") == 0 || strncmp (a, "--torch-entries=", 16) == 0) {
      if (a[15] == '=')
        entries = a + 16;
      else if (i + 1 < argc)
        entries = argv[++i];
      else {
        fprintf (stderr, "vramcap: %s needs a value\n", a);
        return 2;
      }
      char *end;
      errno = 0;
      unsigned long long v = strtoull (entries, &end, 10);
      if (errno || *end || end == entries || v == 0 || entries[0] == '-') {
        fprintf (stderr, "vramcap: --torch-entries must be a positive integer, not '%s'\n", entries);
        return 2;
      }
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
  for (size_t k = 0; k < N_ENV; k++) {
    const char *v = getenv (g_env_names[k]);
    g_env_orig[k] = v ? strdup (v) : NULL;
  }
  char pid[32];
  snprintf (pid, sizeof pid, "%ld", (long) getpid ());
  setenv ("VRAMCAP_OUTPUT", absout, 1);
  setenv ("VRAMCAP_MODE", mode, 1);
  if (!nccl)
    setenv ("VRAMCAP_NCCL", "0", 1);
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
  char hook[PATH_MAX];
  if (torch && find_hook (hook) != 0) {
    fprintf (stderr, "vramcap: PyTorch hook not found (looked in ../share/vramsim/python-hook and "
             "../capture/python-hook beside vramcap, and in " VRAMCAP_HOOK_SRC "; set VRAMCAP_PYTHON_HOOK); "
             "capturing without it\n");
    torch = 0;
  }
  if (!torch) {
    setenv ("VRAMCAP_TORCH", "0", 1);
  } else {
    const char *pp = getenv ("PYTHONPATH");
    size_t ppl = strlen (hook) + (pp ? strlen (pp) : 0) + 2;
    char *pypath = malloc (ppl);
    if (!pypath)
      return 1;
    snprintf (pypath, ppl, "%s%s%s", hook, pp && *pp ? ":" : "", pp && *pp ? pp : "");
    setenv ("PYTHONPATH", pypath, 1);
    setenv ("VRAMCAP_TORCH", "1", 1);
    setenv ("VRAMCAP_ADDRS", "1", 1);
    if (entries)
      setenv ("VRAMCAP_TORCH_ENTRIES", entries, 1);
  }
  char base[PATH_MAX + 1];
  size_t ol = strlen (absout);
  snprintf (base, sizeof base, "%.*s", (int) (ol > 7 && strcmp (absout + ol - 7, ".vtrace") == 0 ? ol - 7 : ol),
            absout);
  /* The shim (the program's own process) says here why it recorded
   * nothing, or that its trace could not be written: a temporary file,
   * not one beside FILE (whose folder may be what failed). */
  const char *tmpdir = getenv ("TMPDIR");
  char capstat[PATH_MAX + 32];
  snprintf (capstat, sizeof capstat, "%s/vramcap-status-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int sfd = mkstemp (capstat);
  if (sfd < 0) {
    fprintf (stderr, "vramcap: cannot create a temporary file in %s: %s\n", tmpdir && *tmpdir ? tmpdir : "/tmp",
             strerror (errno));
    return 1;
  }
  close (sfd);
  setenv ("VRAMCAP_STATUS", capstat, 1);
  time_t start = time (NULL);
  {
    /* a status left by an earlier run must not speak for this one */
    char sp[PATH_MAX + 32];
    snprintf (sp, sizeof sp, "%s.torch-status", base);
    unlink (sp);
    /* nor its part dumps (the merge joins every SNAPSHOT.partK it finds),
     * nor those of the other processes (BASE.TAG.torch-status, ...) */
    const char *pats[] = { "%s.torch.pickle.part[0-9]*", "%s.*.torch-status", "%s.*.torch.pickle.part[0-9]*" };
    for (size_t p = 0; p < 3; p++) {
      glob_t g;
      memset (&g, 0, sizeof g);
      snprintf (sp, sizeof sp, pats[p], base);
      if (glob (sp, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t k = 0; k < g.gl_pathc; k++)
          unlink (g.gl_pathv[k]);
      globfree (&g);
    }
  }
  /* The exec-or-fail report of the child comes back through a pipe. */
  int fds[2];
  if (pipe2 (fds, O_CLOEXEC) != 0) {
    unlink (capstat);
    fprintf (stderr, "vramcap: pipe: %s\n", strerror (errno));
    return 1;
  }
  pid_t child = fork ();
  if (child < 0) {
    unlink (capstat);
    fprintf (stderr, "vramcap: fork: %s\n", strerror (errno));
    return 1;
  }
  if (child == 0) {
    close (fds[0]);
    char me[32];
    snprintf (me, sizeof me, "%ld", (long) getpid ());
    setenv ("VRAMCAP_PID", me, 1);
    execvp (argv[i], argv + i);
    int e = errno;
    ssize_t w = write (fds[1], &e, sizeof e);
    (void) w;
    _exit (127);
  }
  close (fds[1]);
  g_child = child;
  /* The terminal's SIGINT/SIGQUIT reach the program too; TERM and HUP sent
   * to vramcap are passed on. vramcap outlives the program to merge. */
  signal (SIGINT, SIG_IGN);
  signal (SIGQUIT, SIG_IGN);
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  int exec_err = 0;
  ssize_t r;
  while ((r = read (fds[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR)
    ;
  close (fds[0]);
  int st = 0;
  while (waitpid (child, &st, 0) < 0)
    if (errno != EINTR) {
      unlink (capstat);
      fprintf (stderr, "vramcap: waitpid: %s\n", strerror (errno));
      return 1;
    }
  if (r == (ssize_t) sizeof exec_err) {
    unlink (capstat);
    fprintf (stderr, "vramcap: cannot run %s: %s\n", argv[i], strerror (exec_err));
    return exec_err == ENOENT ? 127 : 126;
  }
  int nothing = report_nothing (absout, base, argv[i], capstat, start);
  post_torch (absout, base);
  post_others (absout, base);
  if (WIFSIGNALED (st)) {
    /* Die of the same signal (the child already dumped any core). */
    int sig = WTERMSIG (st);
    struct rlimit no = { 0, 0 };
    setrlimit (RLIMIT_CORE, &no);
    signal (sig, SIG_DFL);
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, sig);
    sigprocmask (SIG_UNBLOCK, &set, NULL);
    raise (sig);
    return 128 + sig;
  }
  int rc = WIFEXITED (st) ? WEXITSTATUS (st) : 1;
  /* A successful program of which nothing at all was recorded: not a
   * capture (docs/capture.md, "When nothing is recorded"). */
  return rc == 0 && nothing ? 1 : rc;
}
