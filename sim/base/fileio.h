/* fileio.h — the old name of base/outfile.h, kept only because
 * sim/engine/replay.c (being split into rooms on branch r12) still
 * includes it for its --series file. New code includes base/outfile.h;
 * when replay.c's contents have moved, this file goes. */
#pragma once

#include "base/outfile.h"

static inline gboolean
fileio_write_atomic (const char *path, const char *data, gssize len, GError **error)
{
  return outfile_write_all (path, NULL, data, len, error);
}
