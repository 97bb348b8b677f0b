/* outfile.c — output files written whole or not at all (see outfile.h).
 *
 * Why it looks the way it does:
 * - rename(2) replaces whatever has the name, so the decision "temporary
 *   + rename or write in place" is taken from what the name is now:
 *   renaming over /dev/null as root replaced the machine's /dev/null, and
 *   renaming over a symlink replaced the link and never wrote its target.
 * - The signal handler may only call async-signal-safe functions: it walks
 *   a fixed table of temporary paths (strings that stay valid while
 *   registered), unlink(2)s them and re-raises the signal with the default
 *   action. Registration blocks the three signals so the handler never
 *   sees a half-made entry. */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

/* ------------------------------------------------------- signal registry */

#define MAX_TEMPS 64

static char *volatile temps[MAX_TEMPS];
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void
on_cleanup_signal (int sig)
{
  for (int i = 0; i < MAX_TEMPS; i++)
    {
      char *p = temps[i];
      if (p)
        unlink (p);
    }
  signal (sig, SIG_DFL);
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, sig);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  raise (sig);
}

static void
install_cleanup (void)
{
  static gsize once = 0;
  if (!g_once_init_enter (&once))
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (cleanup_signals); i++)
    {
      struct sigaction old, sa;
      if (sigaction (cleanup_signals[i], NULL, &old) != 0)
        continue;
      /* nohup's SIG_IGN (or a handler someone installed) is kept. */
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        continue;
      memset (&sa, 0, sizeof sa);
      sa.sa_handler = on_cleanup_signal;
      sigemptyset (&sa.sa_mask);
      for (gsize j = 0; j < G_N_ELEMENTS (cleanup_signals); j++)
        sigaddset (&sa.sa_mask, cleanup_signals[j]);
      sigaction (cleanup_signals[i], &sa, NULL);
    }
  g_once_init_leave (&once, 1);
}

static void
block_signals (sigset_t *old)
{
  sigset_t set;
  sigemptyset (&set);
  for (gsize i = 0; i < G_N_ELEMENTS (cleanup_signals); i++)
    sigaddset (&set, cleanup_signals[i]);
  pthread_sigmask (SIG_BLOCK, &set, old);
}

int
outfile_register_temp (const char *path)
{
  install_cleanup ();
  sigset_t old;
  char *copy = g_strdup (path);
  int slot = -1;
  block_signals (&old);
  for (int i = 0; i < MAX_TEMPS && slot < 0; i++)
    if (g_atomic_pointer_compare_and_exchange (&temps[i], NULL, copy))
      slot = i;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (slot < 0)
    g_free (copy);
  return slot;
}

void
outfile_unregister_temp (int slot)
{
  if (slot < 0 || slot >= MAX_TEMPS)
    return;
  sigset_t old;
  block_signals (&old);
  char *p = g_atomic_pointer_exchange (&temps[slot], NULL);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  g_free (p);
}

/* ------------------------------------------------------------ resolving */

typedef enum { TARGET_ATOMIC, TARGET_DIRECT, TARGET_STDOUT, TARGET_ROWS } TargetKind;

struct _VsOutFile {
  TargetKind kind;
  int fd;
  FILE *stream;
  char *path;      /* as given */
  char *what;      /* NULL or "report", "--series" */
  char *final;     /* the name renamed over (a symlink's target) */
  char *tmp;       /* the temporary, for TARGET_ATOMIC */
  int slot;        /* in the signal registry */
  off_t good;      /* TARGET_ROWS: the end of the last whole row */
  gboolean created;  /* TARGET_ROWS: the file did not exist before */
  int error;       /* errno of the first failed write */
};

static void
set_io_error (GError **error, const char *what, const char *path, const char *doing, int e)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s%s%s: %s%s%s", what ? what : "", what ? " " : "",
               path, doing ? doing : "", doing ? ": " : "", g_strerror (e));
}

/* Follows symlinks from PATH to the name that is not one (which may not
 * exist yet: a dangling link writes its target). */
static char *
follow_links (const char *path, GError **error, const char *what)
{
  char *p = g_strdup (path);
  for (int depth = 0; depth < 40; depth++)
    {
      struct stat st;
      if (lstat (p, &st) != 0 || !S_ISLNK (st.st_mode))
        return p;
      GError *e = NULL;
      char *target = g_file_read_link (p, &e);
      if (target == NULL)
        {
          g_set_error (error, G_FILE_ERROR, e->code, "%s%s%s: %s", what ? what : "", what ? " " : "", path, e->message);
          g_error_free (e);
          g_free (p);
          return NULL;
        }
      if (!g_path_is_absolute (target))
        {
          g_autofree char *dir = g_path_get_dirname (p);
          char *joined = g_build_filename (dir, target, NULL);
          g_free (target);
          target = joined;
        }
      g_free (p);
      p = target;
    }
  set_io_error (error, what, path, NULL, ELOOP);
  g_free (p);
  return NULL;
}

static gboolean
is_descriptor_path (const char *path)
{
  return g_str_has_prefix (path, "/dev/std") || g_str_has_prefix (path, "/dev/fd/") || g_str_has_prefix (path, "/proc/");
}

/* Decides how PATH is written; for TARGET_ATOMIC sets *FINAL. */
static gboolean
classify (const char *path, const char *what, TargetKind *kind, char **final, GError **error)
{
  *final = NULL;
  if (strcmp (path, "-") == 0)
    {
      *kind = TARGET_STDOUT;
      return TRUE;
    }
  if (*path == '\0')
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s%san empty file name", what ? what : "", what ? ": " : "");
      return FALSE;
    }
  struct stat st;
  if (stat (path, &st) == 0)
    {
      if (S_ISDIR (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s%s%s: is a folder", what ? what : "", what ? " " : "",
                       path);
          return FALSE;
        }
      /* /dev/stdout, /proc/self/fd/N: the file behind a descriptor; its
       * name in /proc is not one to put a temporary beside. (/dev/shm
       * holds plain files, written as any others.) */
      if (!S_ISREG (st.st_mode) || is_descriptor_path (path))
        {
          *kind = TARGET_DIRECT;
          return TRUE;
        }
    }
  *final = follow_links (path, error, what);
  if (*final == NULL)
    return FALSE;
  *kind = TARGET_ATOMIC;
  return TRUE;
}

static VsOutFile *
open_common (const char *path, const char *what, gboolean named, GError **error)
{
  TargetKind kind;
  char *final;
  if (!classify (path, what, &kind, &final, error))
    return NULL;
  VsOutFile *f = g_new0 (VsOutFile, 1);
  f->kind = kind;
  f->path = g_strdup (path);
  f->what = g_strdup (what);
  f->final = final;
  f->slot = -1;
  f->fd = -1;
  if (kind == TARGET_STDOUT)
    {
      f->fd = 1;
      f->stream = stdout;
      return f;
    }
  if (kind == TARGET_DIRECT)
    {
      if (named)
        return f;
      /* O_APPEND: /dev/stdout onto a file the shell opened with >> adds. */
      f->fd = open (path, O_WRONLY | O_CLOEXEC | (is_descriptor_path (path) ? O_APPEND : 0));
      if (f->fd < 0)
        {
          set_io_error (error, what, path, "cannot write", errno);
          outfile_abort (f);
          return NULL;
        }
      return f;
    }

  struct stat st;
  gboolean existed = stat (final, &st) == 0;
  f->tmp = g_strconcat (final, ".tmp-XXXXXX", NULL);
  sigset_t old;
  install_cleanup ();
  block_signals (&old);
  f->fd = g_mkstemp_full (f->tmp, O_RDWR | O_CLOEXEC, 0600);
  int e = errno;
  if (f->fd >= 0)
    f->slot = outfile_register_temp (f->tmp);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (f->fd < 0)
    {
      /* GLib's message would name the temporary; the user knows PATH. */
      set_io_error (error, what, path, "cannot create", e);
      g_clear_pointer (&f->tmp, g_free);
      outfile_abort (f);
      return NULL;
    }
  if (existed)
    {
      fchmod (f->fd, st.st_mode & 07777);
      if (geteuid () == 0 && fchown (f->fd, st.st_uid, st.st_gid) != 0)
        { /* keep root's ownership: nothing better to do */ }
    }
  else
    {
      mode_t mask = umask (0);
      umask (mask);
      fchmod (f->fd, 0666 & ~mask);
    }
  return f;
}

VsOutFile *
outfile_open (const char *path, const char *what, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return open_common (path, what, FALSE, error);
}

VsOutFile *
outfile_open_named (const char *path, const char *what, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  return open_common (path, what, TRUE, error);
}

int
outfile_fd (VsOutFile *f)
{
  return f->fd;
}

FILE *
outfile_stream (VsOutFile *f)
{
  if (f->stream == NULL && f->fd >= 0)
    {
      f->stream = fdopen (f->fd, "w");
      if (f->stream == NULL)
        f->error = errno ? errno : ENOMEM;
    }
  return f->stream;
}

const char *
outfile_write_path (const VsOutFile *f)
{
  return f->tmp ? f->tmp : f->path;
}

const char *
outfile_path (const VsOutFile *f)
{
  return f->path;
}

gboolean
outfile_is_atomic (const VsOutFile *f)
{
  return f->kind == TARGET_ATOMIC;
}

gboolean
outfile_write (VsOutFile *f, const void *data, gsize len, GError **error)
{
  if (f->stream)
    {
      if (len && fwrite (data, 1, len, f->stream) != len)
        {
          f->error = errno ? errno : EIO;
          set_io_error (error, f->what, f->path, "write failed", f->error);
          return FALSE;
        }
      return TRUE;
    }
  const char *p = data;
  while (len > 0)
    {
      ssize_t n = write (f->fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          f->error = n < 0 ? errno : EIO;
          set_io_error (error, f->what, f->path, "write failed", f->error);
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}

static void
outfile_free (VsOutFile *f)
{
  outfile_unregister_temp (f->slot);
  g_free (f->path);
  g_free (f->what);
  g_free (f->final);
  g_free (f->tmp);
  g_free (f);
}

gboolean
outfile_commit (VsOutFile *f, GError **error)
{
  g_return_val_if_fail (f != NULL, FALSE);
  int e = f->error;
  if (f->stream)
    {
      if (fflush (f->stream) != 0 && !e)
        e = errno;
      if (ferror (f->stream) && !e)
        e = EIO;
    }
  if ((f->kind == TARGET_ATOMIC || f->kind == TARGET_ROWS) && !e && fsync (f->fd) != 0 && errno != EINVAL && errno != EROFS)
    e = errno;
  if (f->kind != TARGET_STDOUT)
    {
      int rc = f->stream ? fclose (f->stream) : f->fd >= 0 ? close (f->fd) : 0;
      if (rc != 0 && !e)
        e = errno;
      f->stream = NULL;
      f->fd = -1;
    }
  if (e)
    {
      set_io_error (error, f->what, f->path, "write failed", e);
      if (f->tmp)
        g_unlink (f->tmp);
      outfile_free (f);
      return FALSE;
    }
  if (f->kind == TARGET_ATOMIC && rename (f->tmp, f->final) != 0)
    {
      set_io_error (error, f->what, f->path, "cannot rename into place", errno);
      g_unlink (f->tmp);
      outfile_free (f);
      return FALSE;
    }
  outfile_free (f);
  return TRUE;
}

void
outfile_abort (VsOutFile *f)
{
  if (f == NULL)
    return;
  /* Bad input found before the first row: no empty file left behind
   * (unless the name has been given to another file since). */
  struct stat mine, now;
  gboolean drop = f->kind == TARGET_ROWS && f->created && f->good == 0 && fstat (f->fd, &mine) == 0
                  && stat (f->final, &now) == 0 && mine.st_dev == now.st_dev && mine.st_ino == now.st_ino;
  if (f->kind != TARGET_STDOUT)
    {
      if (f->stream)
        fclose (f->stream);
      else if (f->fd >= 0)
        close (f->fd);
    }
  else if (f->stream)
    fflush (f->stream);
  if (f->tmp)
    g_unlink (f->tmp);
  if (drop)
    g_unlink (f->final);
  outfile_free (f);
}

gboolean
outfile_write_all (const char *path, const char *what, const char *data, gssize len, GError **error)
{
  VsOutFile *f = outfile_open (path, what, error);
  if (f == NULL)
    return FALSE;
  if (len < 0)
    len = (gssize) strlen (data);
  if (!outfile_write (f, data, (gsize) len, error))
    {
      outfile_abort (f);
      return FALSE;
    }
  return outfile_commit (f, error);
}

VsOutFile *
outfile_open_rows (const char *path, const char *what, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  TargetKind kind;
  char *final;
  if (!classify (path, what, &kind, &final, error))
    return NULL;
  if (kind != TARGET_ATOMIC)
    {
      g_free (final);
      return open_common (path, what, FALSE, error);
    }
  VsOutFile *f = g_new0 (VsOutFile, 1);
  f->kind = TARGET_ROWS;
  f->path = g_strdup (path);
  f->what = g_strdup (what);
  f->final = final;
  f->slot = -1;
  f->fd = open (final, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  f->created = f->fd >= 0;
  if (f->fd < 0 && errno == EEXIST)
    f->fd = open (final, O_RDWR | O_CLOEXEC);
  if (f->fd < 0)
    {
      set_io_error (error, what, path, "cannot write", errno);
      outfile_abort (f);
      return NULL;
    }
  if (flock (f->fd, LOCK_EX | LOCK_NB) != 0)
    {
      int e = errno;
      if (e == EWOULDBLOCK)
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                     "%s%s%s: another process is writing it (a sweep to the same output is running); "
                     "wait for it, or write elsewhere", what ? what : "", what ? " " : "", path);
      else
        set_io_error (error, what, path, "cannot lock", e);
      outfile_abort (f);
      return NULL;
    }
  f->good = lseek (f->fd, 0, SEEK_END);
  return f;
}

gboolean
outfile_rows_reset (VsOutFile *f, GError **error)
{
  if (f->kind != TARGET_ROWS)
    return TRUE;
  if (ftruncate (f->fd, 0) != 0 || lseek (f->fd, 0, SEEK_SET) != 0)
    {
      set_io_error (error, f->what, f->path, "cannot truncate", errno);
      return FALSE;
    }
  f->good = 0;
  return TRUE;
}

gboolean
outfile_write_rows (VsOutFile *f, const char *text, gsize len, GError **error)
{
  if (f->kind != TARGET_ROWS)
    {
      if (!outfile_write (f, text, len, error))
        return FALSE;
      if (f->stream && fflush (f->stream) != 0)
        {
          f->error = errno;
          set_io_error (error, f->what, f->path, "write failed", f->error);
          return FALSE;
        }
      return TRUE;
    }
  if (!outfile_write (f, text, len, error))
    {
      /* Complete rows only under the final name. */
      if (ftruncate (f->fd, f->good) == 0)
        lseek (f->fd, f->good, SEEK_SET);
      return FALSE;
    }
  f->good += (off_t) len;
  return TRUE;
}

/* ---------------------------------------------------------------- checks */

gboolean
outfile_check_writable (const char *path, const char *what, GError **error)
{
  TargetKind kind;
  g_autofree char *final = NULL;
  if (!classify (path, what, &kind, &final, error))
    return FALSE;
  if (kind == TARGET_STDOUT)
    return TRUE;
  if (kind == TARGET_DIRECT)
    {
      if (g_access (path, W_OK) != 0)
        {
          set_io_error (error, what, path, "cannot write", errno);
          return FALSE;
        }
      return TRUE;
    }
  g_autofree char *dir = g_path_get_dirname (final);
  if (g_access (dir, W_OK) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s%s%s: cannot write in %s: %s", what ? what : "",
                   what ? " " : "", path, dir, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

gboolean
outfile_check_not_input (const char *path, const char *what, const char *input, const char *input_what,
                         GError **error)
{
  if (path == NULL || input == NULL || strcmp (path, "-") == 0 || strcmp (input, "-") == 0)
    return TRUE;
  struct stat a, b;
  gboolean a_exists = stat (path, &a) == 0, b_exists = stat (input, &b) == 0;
  if (a_exists != b_exists)
    return TRUE;
  if (!a_exists)
    {
      /* Not made yet (an input named for the output of the same command,
       * "-o r.json --series r.json"): the same name after links. */
      g_autofree char *pa = follow_links (path, NULL, NULL), *pb = follow_links (input, NULL, NULL);
      g_autofree char *ca = pa ? g_canonicalize_filename (pa, NULL) : NULL;
      g_autofree char *cb = pb ? g_canonicalize_filename (pb, NULL) : NULL;
      if (ca == NULL || cb == NULL || strcmp (ca, cb) != 0)
        return TRUE;
    }
  /* Files, FIFOs and sockets (one FIFO read and written hangs); a
   * terminal is both stdin and stdout and that is fine. */
  else if (S_ISCHR (a.st_mode) || S_ISBLK (a.st_mode) || S_ISDIR (a.st_mode) || a.st_dev != b.st_dev
           || a.st_ino != b.st_ino)
    return TRUE;
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST, "%s%s%s is the same file as %s%s%s: refusing to overwrite it",
               what ? what : "", what ? " " : "", path, input_what ? input_what : "", input_what ? " " : "", input);
  return FALSE;
}

gboolean
outfile_check_rule (const VsIoPath *outs, guint n_outs, const VsIoPath *ins, guint n_ins, GError **error)
{
  for (guint i = 0; i < n_outs; i++)
    {
      if (outs[i].path == NULL)
        continue;
      if (!outfile_check_writable (outs[i].path, outs[i].what, error))
        return FALSE;
      for (guint j = 0; j < n_ins; j++)
        if (!outfile_check_not_input (outs[i].path, outs[i].what, ins[j].path, ins[j].what, error))
          return FALSE;
      for (guint j = 0; j < i; j++)
        {
          /* "the report", "--series" */
          g_autofree char *other = outs[j].what && outs[j].what[0] != '-' ? g_strconcat ("the ", outs[j].what, NULL)
                                                                          : g_strdup (outs[j].what);
          if (!outfile_check_not_input (outs[i].path, outs[i].what, outs[j].path, other, error))
            return FALSE;
        }
    }
  return TRUE;
}

void
outfile_add_parts (GArray *ins, GPtrArray *keep, const char *path, const char *what)
{
  if (path == NULL || strcmp (path, "-") == 0)
    return;
  g_autofree char *dir = g_path_get_dirname (path), *base = g_path_get_basename (path);
  g_autofree char *prefix = g_strconcat (base, ".part", NULL);
  GDir *d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_prefix (name, prefix))
        continue;
      const char *k = name + strlen (prefix);
      if (*k == 0 || strspn (k, "0123456789") != strlen (k))
        continue;
      char *p = strchr (path, '/') == NULL ? g_strdup (name) : g_build_filename (dir, name, NULL);
      g_ptr_array_add (keep, p);
      VsIoPath io = { p, what };
      g_array_append_val (ins, io);
    }
  g_dir_close (d);
}

void
outfile_remove_tmpdir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *f = g_build_filename (dir, name, NULL);
      g_unlink (f);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}
