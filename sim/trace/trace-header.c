/* trace-header.c — the trace header (VsTraceHeader, trace.h): making,
 * copying and freeing one, reading it from JSON with its checks (a key
 * given twice, an escaped NUL), and writing it back as JSON in the
 * canonical form. Used by both formats and by the writers (trace.c). */
#include "trace/trace-priv.h"

#include <math.h>
#include <string.h>

/* ---- header ---- */

VsTraceHeader *
trace_header_new (void)
{
  VsTraceHeader *h = g_new0 (VsTraceHeader, 1);
  h->version = 1;
  h->time_unit = g_strdup ("ns");
  return h;
}

VsTraceHeader *
trace_header_copy (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  VsTraceHeader *c = g_new0 (VsTraceHeader, 1);
  c->version = h->version;
  c->time_unit = g_strdup (h->time_unit);
  c->device = g_strdup (h->device);
  c->config = g_strdup (h->config);
  c->tool = g_strdup (h->tool);
  c->extra = h->extra ? cJSON_Duplicate (h->extra, TRUE) : NULL;
  c->allocations = h->allocations;
  return c;
}

static const char *const allocations_names[VS_ALLOCS_COUNT] = { NULL, "tensor", "driver" };

const char *
trace_allocations_name (VsAllocations a)
{
  return (guint) a < VS_ALLOCS_COUNT ? allocations_names[a] : NULL;
}

VsAllocations
trace_header_allocations (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, VS_ALLOCS_UNSPECIFIED);
  return h->allocations;
}

void
trace_header_set_allocations (VsTraceHeader *h, VsAllocations a)
{
  g_return_if_fail (h != NULL && (guint) a < VS_ALLOCS_COUNT);
  h->allocations = a;
}

const cJSON *
trace_header_allocator_settings (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  const cJSON *v = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "allocator_settings") : NULL;
  return cJSON_IsObject (v) ? v : NULL;
}

void
trace_header_set_allocator_settings (VsTraceHeader *h, cJSON *settings)
{
  g_return_if_fail (h != NULL && (settings == NULL || cJSON_IsObject (settings)));
  if (h->extra == NULL)
    h->extra = cJSON_CreateObject ();
  cJSON_DeleteItemFromObjectCaseSensitive (h->extra, "allocator_settings");
  if (settings != NULL)
    cJSON_AddItemToObject (h->extra, "allocator_settings", settings);
}

void
trace_header_free (VsTraceHeader *h)
{
  if (h == NULL)
    return;
  g_free (h->time_unit);
  g_free (h->device);
  g_free (h->config);
  g_free (h->tool);
  cJSON_Delete (h->extra);
  g_free (h);
}

static gboolean
header_string (const cJSON *obj, const char *key, char **out, const char *where, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
  if (v == NULL || cJSON_IsNull (v))
    return TRUE;
  if (!cJSON_IsString (v))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'capture.%s' must be a string", where, key);
      return FALSE;
    }
  *out = g_strdup (v->valuestring);
  return TRUE;
}

VsTraceHeader *
trace_header_from_json (const cJSON *obj, const char *where, GError **error)
{
  if (!cJSON_IsObject (obj))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                   "%s: not a vramsim trace (the header is not a JSON object)", where);
      return NULL;
    }
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive (obj, "vramsim_trace");
  if (ver == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                   "%s: not a vramsim trace (the header has no \"vramsim_trace\" field)", where);
      return NULL;
    }
  double version = cJSON_IsNumber (ver) ? ver->valuedouble : 0;
  if (!(version >= 1) || version != floor (version) || !isfinite (version))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'vramsim_trace' must be a positive integer (the format version)", where);
      return NULL;
    }
  if (version > 1)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: trace format version %g is newer than this vramsim reads (1); upgrade vramsim",
                   where, version);
      return NULL;
    }
  const cJSON *unit = cJSON_GetObjectItemCaseSensitive (obj, "time_unit");
  if (unit != NULL && !(cJSON_IsString (unit) && strcmp (unit->valuestring, "ns") == 0))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'time_unit' must be \"ns\" (the only unit vramsim reads)", where);
      return NULL;
    }
  const cJSON *cap = cJSON_GetObjectItemCaseSensitive (obj, "capture");
  if (cap != NULL && !cJSON_IsNull (cap) && !cJSON_IsObject (cap))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'capture' must be an object", where);
      return NULL;
    }
  g_autoptr (VsTraceHeader) h = g_new0 (VsTraceHeader, 1);
  h->version = 1;
  h->time_unit = g_strdup ("ns");
  if (cJSON_IsObject (cap)
      && !(header_string (cap, "device", &h->device, where, error)
           && header_string (cap, "config", &h->config, where, error)
           && header_string (cap, "tool", &h->tool, where, error)))
    return NULL;
  const cJSON *allocs = cJSON_GetObjectItemCaseSensitive (obj, "allocations");
  if (allocs != NULL && !cJSON_IsNull (allocs))
    {
      int a = cJSON_IsString (allocs) ? (strcmp (allocs->valuestring, "tensor") == 0   ? VS_ALLOCS_TENSOR
                                         : strcmp (allocs->valuestring, "driver") == 0 ? VS_ALLOCS_DRIVER
                                                                                       : -1)
                                      : -1;
      if (a < 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                       "%s: header field 'allocations' must be \"tensor\" or \"driver\"", where);
          return NULL;
        }
      h->allocations = (VsAllocations) a;
    }
  const cJSON *sizes = cJSON_GetObjectItemCaseSensitive (obj, "allocation_sizes");
  if (sizes != NULL && !cJSON_IsNull (sizes)
      && !(cJSON_IsString (sizes)
           && (strcmp (sizes->valuestring, "block") == 0 || strcmp (sizes->valuestring, "request") == 0)))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'allocation_sizes' must be \"block\" or \"request\"", where);
      return NULL;
    }
  const cJSON *settings = cJSON_GetObjectItemCaseSensitive (obj, "allocator_settings");
  if (settings != NULL && !cJSON_IsNull (settings) && !cJSON_IsObject (settings))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: header field 'allocator_settings' must be an object", where);
      return NULL;
    }
  h->extra = cJSON_Duplicate (obj, TRUE);
  return g_steal_pointer (&h);
}

/* A key of OBJ's members that another member repeats, or NULL. */
static const char *
duplicate_key (const cJSON *obj)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (const cJSON *a = obj->child; a; a = a->next)
    if (a->string && !g_hash_table_add (seen, a->string))
      return a->string;
  return NULL;
}

VsTraceHeader *
trace_header_from_json_text (const cJSON *obj, const char *text, gsize len, const char *where, GError **error)
{
  /* cJSON ends a string at an escaped NUL without a word ("a\u0000b" reads
   * as "a"): refuse it, as event strings are. */
  if (trace_json_nul_escape (text, len) != G_MAXSIZE)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: the header holds a NUL character (\\u0000) in a string", where);
      return NULL;
    }
  /* A key given twice is an error, as in events and configs. */
  if (cJSON_IsObject (obj))
    {
      const char *dup = duplicate_key (obj);
      const cJSON *cap = cJSON_GetObjectItemCaseSensitive (obj, "capture");
      const char *dup_cap = dup == NULL && cJSON_IsObject (cap) ? duplicate_key (cap) : NULL;
      if (dup != NULL || dup_cap != NULL)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: header field '%s%s' appears twice", where,
                       dup_cap ? "capture." : "", dup ? dup : dup_cap);
          return NULL;
        }
    }
  return trace_header_from_json (obj, where, error);
}

cJSON *
trace_header_to_json (const VsTraceHeader *h)
{
  g_return_val_if_fail (h != NULL, NULL);
  cJSON *o = cJSON_CreateObject ();
  cJSON_AddNumberToObject (o, "vramsim_trace", h->version ? h->version : 1);
  cJSON_AddStringToObject (o, "time_unit", "ns");
  const cJSON *xcap = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "capture") : NULL;
  if (h->device || h->config || h->tool || cJSON_IsObject (xcap))
    {
      cJSON *cap = cJSON_AddObjectToObject (o, "capture");
      if (h->device)
        cJSON_AddStringToObject (cap, "device", h->device);
      if (h->config)
        cJSON_AddStringToObject (cap, "config", h->config);
      if (h->tool)
        cJSON_AddStringToObject (cap, "tool", h->tool);
      if (cJSON_IsObject (xcap))
        for (const cJSON *it = xcap->child; it; it = it->next)
          if (strcmp (it->string, "device") != 0 && strcmp (it->string, "config") != 0
              && strcmp (it->string, "tool") != 0 && !cJSON_GetObjectItemCaseSensitive (cap, it->string))
            cJSON_AddItemToObject (cap, it->string, cJSON_Duplicate (it, TRUE));
    }
  if (trace_allocations_name (h->allocations) != NULL)
    cJSON_AddStringToObject (o, "allocations", trace_allocations_name (h->allocations));
  if (h->extra)
    for (const cJSON *it = h->extra->child; it; it = it->next)
      if (it->string && strcmp (it->string, "vramsim_trace") != 0 && strcmp (it->string, "time_unit") != 0
          && strcmp (it->string, "capture") != 0 && strcmp (it->string, "allocations") != 0
          && !cJSON_GetObjectItemCaseSensitive (o, it->string))
        cJSON_AddItemToObject (o, it->string, cJSON_Duplicate (it, TRUE));
  return o;
}

/* JSON in the style of the trace lines: `{"k": v, "k2": v2}`, one line. */
static void
append_json_value (GString *s, const cJSON *v)
{
  if (cJSON_IsObject (v) || cJSON_IsArray (v))
    {
      gboolean obj = cJSON_IsObject (v);
      g_string_append_c (s, obj ? '{' : '[');
      for (const cJSON *it = v->child; it; it = it->next)
        {
          if (it != v->child)
            g_string_append (s, ", ");
          if (obj)
            {
              trace_json_append_string (s, it->string);
              g_string_append (s, ": ");
            }
          append_json_value (s, it);
        }
      g_string_append_c (s, obj ? '}' : ']');
    }
  else if (cJSON_IsString (v))
    trace_json_append_string (s, v->valuestring);
  else if (cJSON_IsNumber (v))
    {
      double d = v->valuedouble;
      if (d > -9e15 && d < 9e15 && d == (double) (gint64) d)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64) d);
      else
        {
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.17g", d));
        }
    }
  else if (cJSON_IsTrue (v))
    g_string_append (s, "true");
  else if (cJSON_IsFalse (v))
    g_string_append (s, "false");
  else
    g_string_append (s, "null");
}

char *
trace_header_to_line (const VsTraceHeader *h)
{
  cJSON *o = trace_header_to_json (h);
  GString *s = g_string_new (NULL);
  append_json_value (s, o);
  cJSON_Delete (o);
  return g_string_free (s, FALSE);
}
