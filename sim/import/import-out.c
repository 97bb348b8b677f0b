/* import-out.c — what the importers share (import-priv.h): the preset of
 * a device name, names made valid UTF-8, the events gathered (ImportOut)
 * pushed, sorted and written as a vramsim trace through a VsTraceWriter
 * (so a failed import leaves no file), and their errors. Used by the
 * Kineto, Nsight Systems and snapshot importers; it calls none of them. */
#include "import/import.h"

#include <stdarg.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "import/import-priv.h"
#include "trace/trace.h"
#include "trace/trace-priv.h"

const char *
import_preset_for_device (const char *name)
{
  if (name == NULL)
    return NULL;
  g_autofree char *n = g_ascii_strup (name, -1);
  static const struct { const char *a, *b, *preset; } map[] = {
    { "GH200", NULL, "gh200" },
    { "H200", NULL, "h200" },
    { "H100", "PCIE", "h100-pcie" },
    { "H100", NULL, "h100-sxm" },
    { "A100", "80GB", "a100-80g" },
    { "A100", NULL, "a100-40g" },      /* A100-PG509-200, A100-SXM4-40GB, A100-PCIE-40GB */
    { "V100", "PCIE", "v100-pcie-16g" },
    { "V100", NULL, "v100-sxm2-32g" },
    { "RTX 3090", NULL, "rtx3090" },
    { "RTX 4090", NULL, "rtx4090" },
    { "L40S", NULL, "l40s" },
    { "NVIDIA A40", NULL, "a40" },      /* not "NVIDIA RTX A4000", which holds "A40" too */
    { "MI300X", NULL, "mi300x" },
    { "ORIN NANO", NULL, "jetson-orin-nano" },
    { "ORIN", NULL, "jetson-agx-orin" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strstr (n, map[i].a) && (map[i].b == NULL || strstr (n, map[i].b)))
      return map[i].preset;
  return NULL;
}

const char *
import_utf8 (GStringChunk *chunk, const char *s)
{
  if (s == NULL || g_utf8_validate (s, -1, NULL))
    return s;
  g_autofree char *v = g_utf8_make_valid (s, -1);
  return g_string_chunk_insert_const (chunk, v);
}

static gint
out_cmp (gconstpointer a, gconstpointer b)
{
  const ImportOut *x = a, *y = b;
  if (x->ev.t != y->ev.t)
    return x->ev.t < y->ev.t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
import_sort (GArray *outs)
{
  g_array_sort (outs, out_cmp);
}

gboolean
import_fail (GError **error, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: %s", path, msg);
  return FALSE;
}

ImportOut *
import_push (GArray *outs, guint64 t, guint32 tid, VsOp op)
{
  ImportOut o = { 0 };
  event_init (&o.ev, op);
  o.ev.t = t;
  o.ev.tid = tid;
  o.ev.bytes = op == VS_OP_KERNEL ? VS_NONE : 0;
  o.seq = outs->len;
  g_array_append_val (outs, o);
  return &g_array_index (outs, ImportOut, outs->len - 1);
}

/* Writes OUTS (sorted) with the synthetic allocations docs/importers.md
 * describes: id UNTRACKED_ID (0 bytes, device) for device memory the
 * source does not identify, and one pinned staging buffer per size for
 * pinned copies. Resolves syncs on an unknown stream to the stream the
 * thread last launched on. */
gboolean
import_write (GArray *outs, const char *out_path, const char *device, const char *tool, GError **error)
{
  return import_write_extra (outs, out_path, device, tool, NULL, error);
}

gboolean
import_write_extra (GArray *outs, const char *out_path, const char *device, const char *tool,
                    const cJSON *extra, GError **error)
{
  g_autoptr (VsTraceHeader) h = trace_header_new ();
  if (extra != NULL)
    {
      h->extra = cJSON_Duplicate (extra, TRUE);
      const cJSON *level = cJSON_GetObjectItemCaseSensitive (extra, "allocations");
      if (cJSON_IsString (level) && strcmp (level->valuestring, "tensor") == 0)
        trace_header_set_allocations (h, VS_ALLOCS_TENSOR);
      cJSON_DeleteItemFromObjectCaseSensitive (h->extra, "allocations");
    }
  h->device = g_strdup (device);
  h->config = g_strdup (import_preset_for_device (device));
  h->tool = g_strdup (tool);
  g_autoptr (VsTraceWriter) w = trace_writer_new (out_path, VS_FORMAT_AUTO, h, error);
  if (w == NULL)
    return FALSE;
  g_autoptr (GHashTable) pinned = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_autoptr (GHashTable) last_stream = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GArray) pinned_allocs = g_array_new (FALSE, FALSE, sizeof (VsEvent));
  guint64 next_pinned = IMPORT_PINNED_BASE, t_end = 0;
  gboolean untracked = FALSE;
  for (guint i = 0; i < outs->len; i++)
    {
      ImportOut *o = &g_array_index (outs, ImportOut, i);
      VsEvent *ev = &o->ev;
      gboolean uses_untracked = (ev->op == VS_OP_COPY && (ev->src == IMPORT_UNTRACKED_ID || ev->dst == IMPORT_UNTRACKED_ID))
                                || ev->op == VS_OP_MEMSET;
      if (uses_untracked && !untracked)
        {
          VsEvent a;
          event_init (&a, VS_OP_ALLOC);
          a.t = ev->t;
          a.tid = ev->tid;
          a.id = IMPORT_UNTRACKED_ID;
          a.kind = VS_MEM_DEVICE;
          a.tag = "untracked";
          if (!trace_writer_write (w, &a, error))
            return FALSE;
          untracked = TRUE;
        }
      if (ev->op == VS_OP_COPY && o->pinned_host)
        {
          guint64 key = ev->bytes;
          guint64 *id = g_hash_table_lookup (pinned, &key);
          if (id == NULL)
            {
              VsEvent a;
              event_init (&a, VS_OP_ALLOC);
              a.t = ev->t;
              a.tid = ev->tid;
              a.id = next_pinned++;
              a.bytes = ev->bytes;
              a.kind = VS_MEM_PINNED;
              a.tag = "pinned_staging";
              if (!trace_writer_write (w, &a, error))
                return FALSE;
              g_array_append_val (pinned_allocs, a);
              id = g_new (guint64, 1);
              *id = a.id;
              g_hash_table_insert (pinned, g_memdup2 (&key, sizeof key), id);
            }
          if (ev->dir == VS_DIR_H2D)
            ev->src = *id;
          else
            ev->dst = *id;
        }
      if (ev->op == VS_OP_KERNEL || ev->op == VS_OP_COPY || ev->op == VS_OP_MEMSET)
        g_hash_table_insert (last_stream, GUINT_TO_POINTER (ev->tid + 1), GSIZE_TO_POINTER (ev->stream + 1));
      if (ev->op == VS_OP_SYNC && o->stream_unknown)
        {
          gsize s = GPOINTER_TO_SIZE (g_hash_table_lookup (last_stream, GUINT_TO_POINTER (ev->tid + 1)));
          ev->scope = s ? VS_SYNC_STREAM : VS_SYNC_DEVICE;
          ev->stream = s ? s - 1 : 0;
        }
      if (o->has_coll)
        ev->collective = &o->coll;
      if (o->has_shape)
        ev->shape = &o->shape;
      if (!trace_writer_write (w, ev, error))
        return FALSE;
      t_end = MAX (t_end, ev->t);
    }
  for (guint i = 0; i < pinned_allocs->len; i++)
    {
      VsEvent f;
      event_init (&f, VS_OP_FREE);
      f.t = t_end;
      f.tid = g_array_index (pinned_allocs, VsEvent, i).tid;
      f.id = g_array_index (pinned_allocs, VsEvent, i).id;
      if (!trace_writer_write (w, &f, error))
        return FALSE;
    }
  return trace_writer_finish (g_steal_pointer (&w), error);
}

