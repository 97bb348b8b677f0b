/* fileio.c — atomic output files with messages naming the user's path. */
#include "base/fileio.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <unistd.h>

gboolean
fileio_write_atomic (const char *path, const char *data, gssize len, GError **error)
{
  GError *err = NULL;
  if (g_file_set_contents (path, data, len, &err))
    return TRUE;
  /* GLib names its temporary file; the user knows PATH. */
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_access (dir, W_OK) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: cannot write: %s",
                   path, g_strerror (e));
    }
  else
    g_set_error (error, G_FILE_ERROR, err->code, "%s: cannot write: %s", path, err->message);
  g_error_free (err);
  return FALSE;
}

gboolean
fileio_check_writable (const char *path, const char *what, GError **error)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s %s: is a folder", what, path);
      return FALSE;
    }
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_access (dir, W_OK) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s %s: cannot write in %s: %s",
                   what, path, dir, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}
