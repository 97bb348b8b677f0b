/* fileio.h — writing output files the way every command must: whole or
 * not at all, with errors that name the path the user gave. */
#pragma once

#include <glib.h>

/* Writes LEN bytes of DATA (-1: a string) to PATH through a temporary file
 * beside it, renamed into place. On error nothing is left and the message
 * names PATH ("PATH: cannot write: No such file or directory"). */
gboolean fileio_write_atomic (const char *path, const char *data, gssize len, GError **error);

/* Checks before long work that PATH can be written: its folder exists and
 * is writable, and PATH is not a folder. WHAT names the output in the
 * message ("report", "--series"). */
gboolean fileio_check_writable (const char *path, const char *what, GError **error);
