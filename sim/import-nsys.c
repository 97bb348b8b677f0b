/* import-nsys.c — PLACEHOLDER until the importer lands. */
#include "import.h"
#include "trace.h"

gboolean import_nsys_detect (const char *path) { (void) path; return FALSE; }

gboolean
import_nsys (const char *path, const char *out_path, GError **error)
{
  (void) out_path;
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: the nsys importer is not built yet", path);
  return FALSE;
}
