/* kernel-bytes.c — per-kernel DRAM traffic from a table (kernel-bytes.h). */
#include "import/kernel-bytes.h"

#include <math.h>
#include <string.h>

#include "trace/trace.h"
#include "base/units.h"

typedef struct {
  double sum;
  guint64 n;
} Mean;

struct VsKernelBytes {
  GHashTable *by_name;  /* char* -> Mean* */
  GHashTable *by_base;  /* char* -> Mean* */
  guint64 kernels, set;
};

/* "void ns::k<a, b>(int, float*)" -> "ns::k<a, b>": without a leading
 * "void " and the parameter list (the first '(' outside template brackets). */
static char *
base_name (const char *name)
{
  if (g_str_has_prefix (name, "void "))
    name += 5;
  int depth = 0;
  const char *p = name;
  for (; *p; p++)
    {
      if (*p == '<')
        depth++;
      else if (*p == '>' && depth > 0)
        depth--;
      else if (*p == '(' && depth == 0)
        break;
    }
  return g_strstrip (g_strndup (name, (gsize) (p - name)));
}

static void
add (GHashTable *t, const char *key, double bytes)
{
  Mean *m = g_hash_table_lookup (t, key);
  if (m == NULL)
    {
      m = g_new0 (Mean, 1);
      g_hash_table_insert (t, g_strdup (key), m);
    }
  m->sum += bytes;
  m->n++;
}

static void
add_kernel (VsKernelBytes *kb, const char *name, double bytes)
{
  add (kb->by_name, name, bytes);
  g_autofree char *base = base_name (name);
  add (kb->by_base, base, bytes);
}

/* Splits one CSV line into fields ("" inside quotes is a quote). Returns
 * FALSE on an unterminated quote. */
static gboolean
csv_split (const char *line, GPtrArray *out)
{
  g_ptr_array_set_size (out, 0);
  const char *p = line;
  for (;;)
    {
      GString *f = g_string_new (NULL);
      if (*p == '"')
        {
          p++;
          for (;;)
            {
              if (*p == 0)
                {
                  g_string_free (f, TRUE);
                  return FALSE;
                }
              if (*p == '"' && p[1] == '"')
                {
                  g_string_append_c (f, '"');
                  p += 2;
                }
              else if (*p == '"')
                {
                  p++;
                  break;
                }
              else
                g_string_append_c (f, *p++);
            }
          while (*p && *p != ',')
            g_string_append_c (f, *p++); /* text after the closing quote */
        }
      else
        while (*p && *p != ',')
          g_string_append_c (f, *p++);
      g_ptr_array_add (out, g_strstrip (g_string_free (f, FALSE)));
      if (*p != ',')
        return TRUE;
      p++;
    }
}

static int
column (GPtrArray *fields, const char *name)
{
  for (guint i = 0; i < fields->len; i++)
    if (strcmp (fields->pdata[i], name) == 0)
      return (int) i;
  return -1;
}

/* Nsight Compute prints SI units: "byte", "Kbyte", "Mbyte", ... */
static gboolean
ncu_unit (const char *u, double *scale)
{
  static const struct { const char *name; double scale; } units[] = {
    { "byte", 1 }, { "Kbyte", 1e3 }, { "Mbyte", 1e6 }, { "Gbyte", 1e9 }, { "Tbyte", 1e12 },
    { "B", 1 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (u, units[i].name) == 0)
      {
        *scale = units[i].scale;
        return TRUE;
      }
  return FALSE;
}

VsKernelBytes *
kernel_bytes_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  GError *err = NULL;
  if (!g_file_get_contents (path, &text, NULL, &err))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: %s", path, err->message);
      g_error_free (err);
      return NULL;
    }
  g_autoptr (VsKernelBytes) kb = g_new0 (VsKernelBytes, 1);
  kb->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  kb->by_base = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (GPtrArray) f = g_ptr_array_new_with_free_func (g_free);
  int c_name = -1, c_metric = -1, c_unit = -1, c_value = -1; /* ncu columns, once seen */
  guint64 rows = 0;
  for (guint ln = 0; lines[ln] != NULL; ln++)
    {
      char *line = g_strstrip (lines[ln]);
      if (*line == 0 || *line == '#' || g_str_has_prefix (line, "=="))
        continue;
      if (c_name < 0 && *line != '"' && strchr (line, ',') != NULL && strstr (line, "Kernel Name") == NULL)
        {
          /* NAME,BYTES with an unquoted name: the size follows the last
           * comma, so that a name with commas reads as written. */
          char *comma = strrchr (line, ',');
          g_ptr_array_set_size (f, 0);
          g_ptr_array_add (f, g_strstrip (g_strndup (line, (gsize) (comma - line))));
          g_ptr_array_add (f, g_strstrip (g_strdup (comma + 1)));
        }
      else if (!csv_split (line, f))
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s:%u: unterminated quote", path, ln + 1);
          return NULL;
        }
      if (c_name < 0 && column (f, "Kernel Name") >= 0 && column (f, "Metric Value") >= 0)
        {
          c_name = column (f, "Kernel Name");
          c_metric = column (f, "Metric Name");
          c_unit = column (f, "Metric Unit");
          c_value = column (f, "Metric Value");
          if (c_metric < 0 || c_unit < 0)
            {
              g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                           "%s:%u: an Nsight Compute CSV needs the columns \"Metric Name\" and \"Metric Unit\"",
                           path, ln + 1);
              return NULL;
            }
          continue;
        }
      if (c_name >= 0)
        {
          int need = MAX (MAX (c_name, c_metric), MAX (c_unit, c_value));
          if ((int) f->len <= need)
            {
              g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                           "%s:%u: %u fields, the header has at least %d", path, ln + 1, f->len, need + 1);
              return NULL;
            }
          if (strcmp (f->pdata[c_metric], "dram__bytes.sum") != 0)
            continue;
          double scale;
          if (!ncu_unit (f->pdata[c_unit], &scale))
            {
              g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                           "%s:%u: unknown unit '%s' for dram__bytes.sum (expected byte, Kbyte, Mbyte, Gbyte or Tbyte)",
                           path, ln + 1, (const char *) f->pdata[c_unit]);
              return NULL;
            }
          GString *v = g_string_new (NULL);
          for (const char *p = f->pdata[c_value]; *p; p++)
            if (*p != ',')  /* thousands separators */
              g_string_append_c (v, *p);
          char *end = NULL;
          double x = g_ascii_strtod (v->str, &end);
          gboolean bad = v->len == 0 || *end != 0 || !isfinite (x) || x < 0;
          g_string_free (v, TRUE);
          if (bad)
            {
              g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                           "%s:%u: dram__bytes.sum value '%s' is not a non-negative number", path, ln + 1,
                           (const char *) f->pdata[c_value]);
              return NULL;
            }
          add_kernel (kb, f->pdata[c_name], x * scale);
          rows++;
          continue;
        }
      /* NAME,BYTES: the size is the last field. */
      if (f->len != 2)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                       "%s:%u: expected NAME,BYTES (or an Nsight Compute --csv export)", path, ln + 1);
          return NULL;
        }
      guint64 b;
      if (!units_parse_bytes_bare (f->pdata[f->len - 1], &b, &err))
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s:%u: %s", path, ln + 1, err->message);
          g_error_free (err);
          return NULL;
        }
      const char *name = f->pdata[0];
      if (*name == 0)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s:%u: empty kernel name", path, ln + 1);
          return NULL;
        }
      add_kernel (kb, name, (double) b);
      rows++;
    }
  if (rows == 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   c_name >= 0 ? "%s: no dram__bytes.sum rows (profile with ncu --csv --metrics dram__bytes.sum)"
                               : "%s: no NAME,BYTES lines", path);
      return NULL;
    }
  return g_steal_pointer (&kb);
}

void
kernel_bytes_free (VsKernelBytes *kb)
{
  if (kb == NULL)
    return;
  g_clear_pointer (&kb->by_name, g_hash_table_unref);
  g_clear_pointer (&kb->by_base, g_hash_table_unref);
  g_free (kb);
}

gboolean
kernel_bytes_apply (VsKernelBytes *kb, VsEvent *ev)
{
  if (ev->op != VS_OP_KERNEL)
    return FALSE;
  kb->kernels++;
  if (ev->bytes != VS_NONE || ev->name == NULL)
    return FALSE;
  Mean *m = g_hash_table_lookup (kb->by_name, ev->name);
  if (m == NULL)
    {
      g_autofree char *base = base_name (ev->name);
      m = g_hash_table_lookup (kb->by_base, base);
    }
  if (m == NULL)
    return FALSE;
  ev->bytes = (guint64) llround (m->sum / (double) m->n);
  kb->set++;
  return TRUE;
}

void
kernel_bytes_counts (const VsKernelBytes *kb, guint64 *kernels, guint64 *set)
{
  *kernels = kb->kernels;
  *set = kb->set;
}
