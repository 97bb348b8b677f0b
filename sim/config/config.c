/* config.c — loading, merging, editing and checking machine configs
 * (SPEC section 4; every default and its reason is in docs/config.md).
 *
 * Three stages: load (read a file, check its keys and values, resolve
 * `extends` depth-first, child wins), set (--set edits on the merged tree,
 * checked as they are applied) and compile (check the whole tree again,
 * cross-check fields, fill defaults, produce a VsConfig). The schema table
 * below is the one list of keys: unknown-key errors, --set paths and the
 * per-field checks all read it. */
#include "config/config.h"
#include "base/units.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (vs-config-error-quark, config_error)

/* ---- schema ---- */

typedef enum {
  K_STR,      /* string */
  K_EXTENDS,  /* string or null */
  K_BYTES,    /* size: "80GiB" or a whole number of bytes */
  K_RATE,     /* bandwidth: "2039GB/s" or bytes/s */
  K_TIME,     /* "405ns" or ns */
  K_FRAC,     /* number in (0, 1] */
  K_POS,      /* number > 0 */
  K_COUNT,    /* whole number >= 1 */
  K_BOOL,
  K_ENUM,
  K_OBJ,
  K_TIERS,    /* array of tier objects */
} Kind;

typedef struct Field Field;
struct Field {
  const char *key;
  Kind kind;
  const Field *sub;
  const char *const *choices;
};

static const char *const attach_choices[] = { "host", "device", NULL };
static const char *const oversub_choices[] = { "oom", "spill", "direct", "uvm", NULL };

static const Field compute_fields[] = {
  { "tflops", K_POS, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field memory_fields[] = {
  { "tech", K_STR, NULL, NULL },
  { "capacity", K_BYTES, NULL, NULL },
  { "bandwidth", K_RATE, NULL, NULL },
  { "efficiency", K_FRAC, NULL, NULL },
  { "latency", K_TIME, NULL, NULL },
  { "reserved", K_BYTES, NULL, NULL },
  { "alloc_granularity", K_BYTES, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field link_fields[] = {
  { "tech", K_STR, NULL, NULL },
  { "bandwidth", K_RATE, NULL, NULL },
  { "efficiency", K_FRAC, NULL, NULL },
  { "pageable_efficiency", K_FRAC, NULL, NULL },
  { "latency", K_TIME, NULL, NULL },
  { "copy_engines", K_COUNT, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field tier_fields[] = {
  { "name", K_STR, NULL, NULL },
  { "tech", K_STR, NULL, NULL },
  { "capacity", K_BYTES, NULL, NULL },
  { "bandwidth", K_RATE, NULL, NULL },
  { "efficiency", K_FRAC, NULL, NULL },
  { "latency", K_TIME, NULL, NULL },
  { "attach", K_ENUM, NULL, attach_choices },
  { NULL, 0, NULL, NULL },
};
static const Field host_fields[] = {
  { "tech", K_STR, NULL, NULL },
  { "capacity", K_BYTES, NULL, NULL },
  { "bandwidth", K_RATE, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field uvm_fields[] = {
  { "page", K_BYTES, NULL, NULL },
  { "evict_unit", K_BYTES, NULL, NULL },
  { "fault_batch", K_COUNT, NULL, NULL },
  { "fault_latency", K_TIME, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field policy_fields[] = {
  { "oversubscription", K_ENUM, NULL, oversub_choices },
  { NULL, 0, NULL, NULL },
};
static const Field gpu_fields[] = {
  { "launch_latency", K_TIME, NULL, NULL },
  { "legacy_default_stream", K_BOOL, NULL, NULL },
  { NULL, 0, NULL, NULL },
};
static const Field root_fields[] = {
  { "name", K_STR, NULL, NULL },
  { "description", K_STR, NULL, NULL },
  { "extends", K_EXTENDS, NULL, NULL },
  { "compute", K_OBJ, compute_fields, NULL },
  { "memory", K_OBJ, memory_fields, NULL },
  { "link", K_OBJ, link_fields, NULL },
  { "tiers", K_TIERS, tier_fields, NULL },
  { "host", K_OBJ, host_fields, NULL },
  { "unified", K_BOOL, NULL, NULL },
  { "uvm", K_OBJ, uvm_fields, NULL },
  { "policy", K_OBJ, policy_fields, NULL },
  { "gpu", K_OBJ, gpu_fields, NULL },
  { NULL, 0, NULL, NULL },
};

/* Resource names the engine uses; a tier may not take one. */
static const char *const reserved_names[] = {
  "device", "host", "sm", "device_mem", "link_h2d", "link_d2h", "host_mem", NULL,
};

static const Field *
field_find (const Field *fields, const char *key)
{
  for (const Field *f = fields; f->key != NULL; f++)
    if (strcmp (f->key, key) == 0)
      return f;
  return NULL;
}

static char *
field_list (const Field *fields)
{
  GString *s = g_string_new (NULL);
  for (const Field *f = fields; f->key != NULL; f++)
    g_string_append_printf (s, "%s%s", s->len ? ", " : "", f->key);
  return g_string_free (s, FALSE);
}

static char *
path_join (const char *prefix, const char *key)
{
  return prefix == NULL || *prefix == '\0' ? g_strdup (key) : g_strdup_printf ("%s.%s", prefix, key);
}

static void
fail (GError **error, const char *origin, const char *path, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static void
fail (GError **error, const char *origin, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (path != NULL && *path != '\0')
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s: %s", origin, path, msg);
  else
    g_set_error (error, VS_CONFIG_ERROR, 0, "%s: %s", origin, msg);
}

static const char *
json_type_name (const cJSON *v)
{
  if (cJSON_IsString (v)) return "a string";
  if (cJSON_IsNumber (v)) return "a number";
  if (cJSON_IsBool (v)) return "a boolean";
  if (cJSON_IsNull (v)) return "null";
  if (cJSON_IsArray (v)) return "an array";
  if (cJSON_IsObject (v)) return "an object";
  return "an unknown value";
}

typedef union {
  const char *s;
  guint64 u;
  double d;
  gboolean b;
  int e;
} Val;

/* Checks one leaf value V of kind F->kind and parses it into OUT. */
static gboolean
leaf_value (const Field *f, const cJSON *v, const char *origin, const char *path, Val *out, GError **error)
{
  GError *uerr = NULL;
  switch (f->kind)
    {
    case K_STR:
    case K_EXTENDS:
      if (!cJSON_IsString (v))
        {
          fail (error, origin, path, "expected a string, got %s", json_type_name (v));
          return FALSE;
        }
      out->s = v->valuestring;
      return TRUE;

    case K_BYTES:
      if (cJSON_IsNumber (v))
        {
          double d = v->valuedouble;
          if (!(d >= 0))
            {
              fail (error, origin, path, "a size cannot be negative (got %g)", d);
              return FALSE;
            }
          if (d != floor (d))
            {
              fail (error, origin, path, "a size without a unit is a whole number of bytes (got %g)", d);
              return FALSE;
            }
          if (!(d < 18446744073709551616.0))
            {
              fail (error, origin, path, "size too large (limit 2^64 bytes)");
              return FALSE;
            }
          out->u = (guint64) d;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          if (!units_parse_bytes (v->valuestring, &out->u, &uerr))
            goto unit_error;
          return TRUE;
        }
      fail (error, origin, path, "expected a size such as \"80GiB\", got %s", json_type_name (v));
      return FALSE;

    case K_RATE:
    case K_TIME:
      if (cJSON_IsNumber (v))
        {
          double d = v->valuedouble;
          if (!(d >= 0) || !isfinite (d))
            {
              fail (error, origin, path, "%s cannot be negative (got %g)",
                    f->kind == K_RATE ? "a bandwidth" : "a time", d);
              return FALSE;
            }
          out->d = d;
          return TRUE;
        }
      if (cJSON_IsString (v))
        {
          gboolean ok = f->kind == K_RATE ? units_parse_rate (v->valuestring, &out->d, &uerr)
                                          : units_parse_time (v->valuestring, &out->d, &uerr);
          if (!ok)
            goto unit_error;
          return TRUE;
        }
      fail (error, origin, path, "expected %s, got %s",
            f->kind == K_RATE ? "a bandwidth such as \"936GB/s\"" : "a time such as \"10us\"",
            json_type_name (v));
      return FALSE;

    case K_FRAC:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a number in (0, 1], got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0 && v->valuedouble <= 1))
        {
          fail (error, origin, path, "must be in (0, 1] (a fraction of the peak), got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_POS:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a number, got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble > 0) || !isfinite (v->valuedouble))
        {
          fail (error, origin, path, "must be greater than 0, got %g", v->valuedouble);
          return FALSE;
        }
      out->d = v->valuedouble;
      return TRUE;

    case K_COUNT:
      if (!cJSON_IsNumber (v))
        {
          fail (error, origin, path, "expected a whole number, got %s", json_type_name (v));
          return FALSE;
        }
      if (!(v->valuedouble >= 1) || v->valuedouble != floor (v->valuedouble)
          || v->valuedouble > (double) G_MAXUINT)
        {
          fail (error, origin, path, "must be a whole number >= 1, got %g", v->valuedouble);
          return FALSE;
        }
      out->u = (guint64) v->valuedouble;
      return TRUE;

    case K_BOOL:
      if (!cJSON_IsBool (v))
        {
          fail (error, origin, path, "expected true or false, got %s", json_type_name (v));
          return FALSE;
        }
      out->b = cJSON_IsTrue (v);
      return TRUE;

    case K_ENUM:
      if (cJSON_IsString (v))
        for (int i = 0; f->choices[i] != NULL; i++)
          if (strcmp (f->choices[i], v->valuestring) == 0)
            {
              out->e = i;
              return TRUE;
            }
      {
        g_autofree char *list = g_strjoinv ("\", \"", (char **) f->choices);
        if (cJSON_IsString (v))
          fail (error, origin, path, "'%s' is not one of \"%s\"", v->valuestring, list);
        else
          fail (error, origin, path, "expected one of \"%s\", got %s", list, json_type_name (v));
      }
      return FALSE;

    case K_OBJ:
    case K_TIERS:
      break;
    }
  g_assert_not_reached ();

unit_error:
  fail (error, origin, path, "%s", uerr->message);
  g_error_free (uerr);
  return FALSE;
}

static gboolean check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error);

/* Checks every key of OBJ against FIELDS (unknown and duplicate keys) and
 * every value against its kind. null stands for "absent" everywhere. */
static gboolean
check_object (const Field *fields, const cJSON *obj, const char *origin, const char *path, GError **error)
{
  for (const cJSON *it = obj->child; it != NULL; it = it->next)
    {
      g_autofree char *p = path_join (path, it->string);
      for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
        if (strcmp (prev->string, it->string) == 0)
          {
            fail (error, origin, p, "duplicate key");
            return FALSE;
          }
      const Field *f = field_find (fields, it->string);
      if (f == NULL)
        {
          g_autofree char *known = field_list (fields);
          fail (error, origin, p, "unknown key (known keys%s%s: %s)",
                path && *path ? " in " : "", path ? path : "", known);
          return FALSE;
        }
      if (!check_value (f, it, origin, p, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error)
{
  Val dummy;
  if (cJSON_IsNull (v))
    return TRUE;
  if (f->kind == K_OBJ)
    {
      if (!cJSON_IsObject (v))
        {
          fail (error, origin, path, "expected an object, got %s", json_type_name (v));
          return FALSE;
        }
      return check_object (f->sub, v, origin, path, error);
    }
  if (f->kind == K_TIERS)
    {
      if (!cJSON_IsArray (v))
        {
          fail (error, origin, path, "expected an array of tier objects, got %s", json_type_name (v));
          return FALSE;
        }
      int i = 0;
      for (const cJSON *t = v->child; t != NULL; t = t->next, i++)
        {
          g_autofree char *tp = g_strdup_printf ("%s[%d]", path, i);
          if (!cJSON_IsObject (t))
            {
              fail (error, origin, tp, "expected a tier object, got %s", json_type_name (t));
              return FALSE;
            }
          if (!check_object (f->sub, t, origin, tp, error))
            return FALSE;
        }
      return TRUE;
    }
  return leaf_value (f, v, origin, path, &dummy, error);
}

/* ---- preset folder ---- */

static char *
find_preset_dir (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe != NULL)
    {
      /* <exe dir>/../configs: bin/vramsim in the source tree. Further up
       * (build/asan/bin/vramsim, build/asan/tests/ROOM/test-*) only where the folder
       * above also holds a Makefile, i.e. it is the source tree. */
      g_autofree char *dir = g_path_get_dirname (exe);
      for (int level = 0; level < 4; level++)
        {
          g_autofree char *up = g_build_filename (dir, "..", NULL);
          g_autofree char *canon = g_canonicalize_filename (up, NULL);
          g_autofree char *cand = g_build_filename (canon, "configs", NULL);
          g_autofree char *mk = g_build_filename (canon, "Makefile", NULL);
          if (g_file_test (cand, G_FILE_TEST_IS_DIR)
              && (level == 0 || g_file_test (mk, G_FILE_TEST_IS_REGULAR)))
            return g_steal_pointer (&cand);
          g_free (dir);
          dir = g_steal_pointer (&canon);
        }
      /* An installed tree, wherever it was installed: PREFIX/bin/vramsim
       * beside PREFIX/share/vramsim/configs. */
      g_autofree char *bindir = g_path_get_dirname (exe);
      g_autofree char *inst = g_build_filename (bindir, "..", "share", "vramsim", "configs", NULL);
      if (g_file_test (inst, G_FILE_TEST_IS_DIR))
        return g_canonicalize_filename (inst, NULL);
    }
  return g_strdup (VRAMSIM_PREFIX "/share/vramsim/configs");
}

const char *
config_preset_dir (void)
{
  static char *dir;
  const char *env = g_getenv ("VRAMSIM_CONFIGS");
  if (env != NULL && *env != '\0')
    return env;
  if (g_once_init_enter (&dir))
    g_once_init_leave (&dir, find_preset_dir ());
  return dir;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
config_list_presets (void)
{
  GPtrArray *names = g_ptr_array_new ();
  GDir *d = g_dir_open (config_preset_dir (), 0, NULL);
  if (d != NULL)
    {
      const char *e;
      while ((e = g_dir_read_name (d)) != NULL)
        if (g_str_has_suffix (e, ".json") && e[0] != '.' && strlen (e) > 5)
          g_ptr_array_add (names, g_strndup (e, strlen (e) - 5));
      g_dir_close (d);
    }
  g_ptr_array_sort (names, cmp_str);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

static gboolean
is_preset_name (const char *s)
{
  return strchr (s, '/') == NULL && !g_str_has_suffix (s, ".json");
}

/* (transfer full) The file of preset NAME, or NULL with an error that lists
 * the presets there are. */
static char *
preset_path (const char *name, GError **error)
{
  const char *dir = config_preset_dir ();
  g_autofree char *file = g_strconcat (name, ".json", NULL);
  char *path = g_build_filename (dir, file, NULL);
  if (*name != '\0' && g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return path;
  g_free (path);
  g_auto (GStrv) names = config_list_presets ();
  if (names[0] == NULL)
    g_set_error (error, VS_CONFIG_ERROR, 0,
                 "unknown preset '%s': no presets in %s (set VRAMSIM_CONFIGS to the configs folder)",
                 name, dir);
  else
    {
      g_autofree char *list = g_strjoinv (", ", names);
      g_set_error (error, VS_CONFIG_ERROR, 0, "unknown preset '%s' (presets: %s; or give a path to a .json file)",
                   name, list);
    }
  return NULL;
}

char *
config_find (const char *name_or_path, GError **error)
{
  g_return_val_if_fail (name_or_path != NULL, NULL);
  if (*name_or_path == '\0')
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "empty config name");
      return NULL;
    }
  if (is_preset_name (name_or_path))
    return preset_path (name_or_path, error);
  return g_strdup (name_or_path);
}

/* ---- loading and extends ---- */

static cJSON *
read_json_file (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *ioerr = NULL;
  if (!g_file_get_contents (path, &text, &len, &ioerr))
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: cannot read: %s", path,
                   g_strerror (ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_NOENT ? ENOENT
                               : ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_ISDIR ? EISDIR
                               : ioerr->domain == G_FILE_ERROR && ioerr->code == G_FILE_ERROR_ACCES ? EACCES
                               : EIO));
      g_error_free (ioerr);
      return NULL;
    }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts (text, len + 1, &end, TRUE);
  if (root == NULL)
    {
      if (end == NULL || end < text || end > text + len)
        end = text + len;
      int line = 1, col = 1;
      for (const char *p = text; p < end; p++)
        if (*p == '\n')
          line++, col = 1;
        else
          col++;
      g_autofree char *cut = g_strndup (end, 20);
      g_autofree char *near = g_utf8_make_valid (cut, -1);
      for (char *p = near; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
          *p = ' ';
      if (*near)
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d:%d: JSON syntax error near '%s'", path, line, col, near);
      else
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d:%d: JSON syntax error at end of file", path, line, col);
      return NULL;
    }
  if (!cJSON_IsObject (root))
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: a config is a JSON object, not %s", path, json_type_name (root));
      cJSON_Delete (root);
      return NULL;
    }
  return root;
}

/* Merges CHILD into BASE: objects key by key, anything else (arrays
 * included) replaced whole; a null in CHILD removes the key (back to its
 * default). */
static void
merge_into (cJSON *base, const cJSON *child)
{
  for (const cJSON *it = child->child; it != NULL; it = it->next)
    {
      cJSON *old = cJSON_GetObjectItemCaseSensitive (base, it->string);
      if (cJSON_IsNull (it))
        {
          if (old != NULL)
            cJSON_DeleteItemFromObjectCaseSensitive (base, it->string);
        }
      else if (cJSON_IsObject (it) && cJSON_IsObject (old))
        merge_into (old, it);
      else if (old != NULL)
        cJSON_ReplaceItemInObjectCaseSensitive (base, it->string, cJSON_Duplicate (it, TRUE));
      else
        cJSON_AddItemToObject (base, it->string, cJSON_Duplicate (it, TRUE));
    }
}

static char *
basename_no_json (const char *path)
{
  char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".json") && strlen (base) > 5)
    base[strlen (base) - 5] = '\0';
  return base;
}

#define MAX_EXTENDS_DEPTH 32

static cJSON *
load_chain (const char *path, GPtrArray *canon_stack, GPtrArray *shown_stack, GError **error)
{
  g_autofree char *canon = g_canonicalize_filename (path, NULL);
  for (guint i = 0; i < canon_stack->len; i++)
    if (strcmp (canon_stack->pdata[i], canon) == 0)
      {
        GString *chain = g_string_new (NULL);
        for (guint j = i; j < shown_stack->len; j++)
          g_string_append_printf (chain, "%s -> ", (char *) shown_stack->pdata[j]);
        g_string_append (chain, path);
        g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: cycle: %s",
                     (char *) shown_stack->pdata[shown_stack->len - 1], chain->str);
        g_string_free (chain, TRUE);
        return NULL;
      }
  if (canon_stack->len >= MAX_EXTENDS_DEPTH)
    {
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: chain deeper than %d files", path, MAX_EXTENDS_DEPTH);
      return NULL;
    }

  cJSON *root = read_json_file (path, error);
  if (root == NULL)
    return NULL;
  if (!check_object (root_fields, root, path, "", error))
    goto fail;

  /* The name is the file's own, never inherited. */
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (root, "name");
  if (name == NULL || cJSON_IsNull (name))
    {
      g_autofree char *base = basename_no_json (path);
      if (name != NULL)
        cJSON_DeleteItemFromObjectCaseSensitive (root, "name");
      cJSON_AddStringToObject (root, "name", base);
    }

  const cJSON *ext = cJSON_GetObjectItemCaseSensitive (root, "extends");
  if (cJSON_IsString (ext))
    {
      g_autofree char *parent_path = NULL;
      const char *e = ext->valuestring;
      if (*e == '\0')
        {
          g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: empty name", path);
          goto fail;
        }
      if (is_preset_name (e))
        {
          GError *perr = NULL;
          parent_path = preset_path (e, &perr);
          if (parent_path == NULL)
            {
              g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: %s", path, perr->message);
              g_error_free (perr);
              goto fail;
            }
        }
      else if (g_path_is_absolute (e))
        parent_path = g_strdup (e);
      else
        {
          g_autofree char *dir = g_path_get_dirname (path);
          parent_path = g_build_filename (dir, e, NULL);
        }
      g_ptr_array_add (canon_stack, g_strdup (canon));
      g_ptr_array_add (shown_stack, g_strdup (path));
      cJSON *parent = load_chain (parent_path, canon_stack, shown_stack, error);
      g_ptr_array_remove_index (canon_stack, canon_stack->len - 1);
      g_ptr_array_remove_index (shown_stack, shown_stack->len - 1);
      if (parent == NULL)
        goto fail;
      merge_into (parent, root);
      cJSON_Delete (root);
      root = parent;
    }
  cJSON_DeleteItemFromObjectCaseSensitive (root, "extends");
  return root;

fail:
  cJSON_Delete (root);
  return NULL;
}

static cJSON *
load_json_origin (const char *name_or_path, char **origin, GError **error)
{
  g_autofree char *path = config_find (name_or_path, error);
  if (path == NULL)
    return NULL;
  g_autoptr (GPtrArray) canon = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) shown = g_ptr_array_new_with_free_func (g_free);
  cJSON *root = load_chain (path, canon, shown, error);
  if (root != NULL && origin != NULL)
    *origin = g_steal_pointer (&path);
  return root;
}

cJSON *
config_load_json (const char *name_or_path, GError **error)
{
  return load_json_origin (name_or_path, NULL, error);
}

/* ---- --set ---- */

static gboolean
all_digits (const char *s)
{
  if (*s == '\0')
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s))
      return FALSE;
  return TRUE;
}

gboolean
config_set (cJSON *root, const char *assignment, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL && assignment != NULL, FALSE);
  if (origin == NULL)
    origin = "config";
  g_autofree char *where = g_strdup_printf ("%s: --set '%s'", origin, assignment);

  const char *eq = strchr (assignment, '=');
  if (eq == NULL || eq == assignment)
    {
      fail (error, where, NULL, "expected KEY=VALUE, e.g. memory.capacity=24GiB");
      return FALSE;
    }
  g_autofree char *key = g_strndup (assignment, eq - assignment);
  const char *text = eq + 1;
  cJSON *value = cJSON_ParseWithOpts (text, NULL, TRUE);
  if (value == NULL)
    value = cJSON_CreateString (text);

  g_auto (GStrv) seg = g_strsplit (key, ".", -1);
  const Field *fields = root_fields;
  cJSON *obj = root;
  g_autofree char *path = g_strdup ("");
  gboolean ok = FALSE;

  for (int i = 0; seg[i] != NULL; i++)
    {
      const char *s = seg[i];
      if (*s == '\0')
        {
          fail (error, where, NULL, "empty key segment in '%s'", key);
          goto out;
        }
      const Field *f = field_find (fields, s);
      g_autofree char *p = path_join (path, s);
      if (f == NULL)
        {
          g_autofree char *known = field_list (fields);
          fail (error, where, p, "unknown key (known keys%s%s: %s)", *path ? " in " : "", path, known);
          goto out;
        }
      if (f->kind == K_EXTENDS)
        {
          fail (error, where, p, "extends is resolved before --set applies; pass the parent config with -c");
          goto out;
        }
      if (seg[i + 1] == NULL)
        {
          /* A text field takes the text as typed: name=1 is "1". */
          if ((f->kind == K_STR || f->kind == K_ENUM) && !cJSON_IsString (value) && !cJSON_IsNull (value))
            {
              cJSON_Delete (value);
              value = cJSON_CreateString (text);
            }
          if (!check_value (f, value, where, p, error))
            goto out;
          if (cJSON_GetObjectItemCaseSensitive (obj, s) != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive (obj, s, value);
          else
            cJSON_AddItemToObject (obj, s, value);
          value = NULL;
          ok = TRUE;
          goto out;
        }
      if (f->kind == K_OBJ)
        {
          cJSON *child = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsObject (child))
            {
              if (child != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              child = cJSON_AddObjectToObject (obj, s);
            }
          obj = child;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&p);
          continue;
        }
      if (f->kind == K_TIERS)
        {
          cJSON *arr = cJSON_GetObjectItemCaseSensitive (obj, s);
          if (!cJSON_IsArray (arr))
            {
              if (arr != NULL)
                cJSON_DeleteItemFromObjectCaseSensitive (obj, s);
              arr = cJSON_AddArrayToObject (obj, s);
            }
          const char *sel = seg[++i];
          int n = cJSON_GetArraySize (arr), idx = -1;
          if (all_digits (sel))
            {
              idx = strlen (sel) > 6 ? G_MAXINT : atoi (sel);
              if (idx > n)
                {
                  fail (error, where, p, "no tier %s (the config has %d; index %d appends one)", sel, n, n);
                  goto out;
                }
              if (idx == n)
                cJSON_AddItemToArray (arr, cJSON_CreateObject ());
            }
          else
            {
              GString *names = g_string_new (NULL);
              int k = 0;
              for (cJSON *t = arr->child; t != NULL; t = t->next, k++)
                {
                  const cJSON *nm = cJSON_GetObjectItemCaseSensitive (t, "name");
                  if (cJSON_IsString (nm))
                    {
                      g_string_append_printf (names, "%s%s", names->len ? ", " : "", nm->valuestring);
                      if (idx < 0 && strcmp (nm->valuestring, sel) == 0)
                        idx = k;
                    }
                }
              if (idx < 0)
                {
                  fail (error, where, p, "no tier named '%s' (tiers: %s)", sel, names->len ? names->str : "none");
                  g_string_free (names, TRUE);
                  goto out;
                }
              g_string_free (names, TRUE);
            }
          g_autofree char *tp = g_strdup_printf ("%s[%d]", p, idx);
          cJSON *tier = cJSON_GetArrayItem (arr, idx);
          if (seg[i + 1] == NULL)
            {
              /* A whole tier: tiers.cxl0={...} */
              if (!cJSON_IsObject (value))
                {
                  fail (error, where, tp, "expected a tier object, got %s", json_type_name (value));
                  goto out;
                }
              if (!check_object (tier_fields, value, where, tp, error))
                goto out;
              cJSON_ReplaceItemInArray (arr, idx, value);
              value = NULL;
              ok = TRUE;
              goto out;
            }
          if (!cJSON_IsObject (tier))
            {
              cJSON_ReplaceItemInArray (arr, idx, cJSON_CreateObject ());
              tier = cJSON_GetArrayItem (arr, idx);
            }
          obj = tier;
          fields = f->sub;
          g_free (path);
          path = g_steal_pointer (&tp);
          continue;
        }
      fail (error, where, p, "is a value, not a section (nothing below it to set)");
      goto out;
    }

out:
  cJSON_Delete (value);
  return ok;
}

/* ---- compile ---- */

static const cJSON *
member (const cJSON *obj, const char *key)
{
  const cJSON *v = obj != NULL ? cJSON_GetObjectItemCaseSensitive (obj, key) : NULL;
  return cJSON_IsNull (v) ? NULL : v;
}

/* Fetches FIELDS[KEY] of OBJ (at PREFIX). Returns 1 with *OUT set when
 * present, 0 when absent (null counts as absent), -1 on a bad value. */
static int
fetch (const Field *fields, const cJSON *obj, const char *prefix, const char *key,
       const char *origin, Val *out, GError **error)
{
  const Field *f = field_find (fields, key);
  g_assert (f != NULL);
  const cJSON *v = member (obj, key);
  if (v == NULL)
    return 0;
  g_autofree char *p = path_join (prefix, key);
  return leaf_value (f, v, origin, p, out, error) ? 1 : -1;
}

#define GET(fields, obj, prefix, key, val) \
  switch (fetch (fields, obj, prefix, key, origin, &val, error)) { case -1: goto fail; case 0: break; default:
#define END_GET }

#define REQUIRE(fields, obj, prefix, key, val, what)                                   \
  do {                                                                                 \
    int r_ = fetch (fields, obj, prefix, key, origin, &val, error);                    \
    if (r_ < 0) goto fail;                                                             \
    if (r_ == 0) {                                                                     \
      g_autofree char *p_ = path_join (prefix, key);                                   \
      fail (error, origin, p_, "required (%s)", what);                                 \
      goto fail;                                                                       \
    }                                                                                  \
  } while (0)

static gboolean
valid_tier_name (const char *s)
{
  if (*s == '\0' || all_digits (s))
    return FALSE;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

VsConfig *
config_compile (const cJSON *root, const char *origin, GError **error)
{
  g_return_val_if_fail (root != NULL, NULL);
  if (origin == NULL)
    origin = "config";
  if (!cJSON_IsObject (root))
    {
      fail (error, origin, NULL, "a config is a JSON object, not %s", json_type_name (root));
      return NULL;
    }
  if (!check_object (root_fields, root, origin, "", error))
    return NULL;

  VsConfig *c = g_new0 (VsConfig, 1);
  Val v;
  c->origin = g_strdup (origin);

  /* Defaults (docs/config.md gives the reason for each). */
  c->memory.efficiency = 1.0;
  c->memory.latency_ns = 0;
  c->memory.reserved = 0;
  c->memory.alloc_granularity = 2u << 20;
  c->link.efficiency = 1.0;
  c->link.pageable_efficiency = 0.5;
  c->link.latency_ns = 10e3;
  c->link.copy_engines = 2;
  c->host.capacity = 1ull << 40;
  c->host.bandwidth = 200e9;
  c->uvm.page = 64u << 10;
  c->uvm.evict_unit = 2u << 20;
  c->uvm.fault_batch = 256;
  c->uvm.fault_latency_ns = 30e3;
  c->oversubscription = VS_OVERSUB_OOM;

  GET (root_fields, root, "", "name", v) c->name = g_strdup (v.s); END_GET
  if (c->name == NULL)
    c->name = basename_no_json (origin);
  if (c->name[0] == '\0')
    {
      fail (error, origin, "name", "must not be empty");
      goto fail;
    }
  GET (root_fields, root, "", "description", v) c->description = g_strdup (v.s); END_GET
  if (c->description == NULL)
    c->description = g_strdup ("");
  GET (root_fields, root, "", "unified", v) c->unified = v.b; END_GET

  const cJSON *compute = member (root, "compute");
  REQUIRE (compute_fields, compute, "compute", "tflops", v,
           "dense FP16/BF16 tensor TFLOPS, e.g. 312 for an A100; kernel compute time scales by it");
  c->tflops = v.d;

  const cJSON *mem = member (root, "memory");
  GET (memory_fields, mem, "memory", "tech", v) c->memory.tech = g_strdup (v.s); END_GET
  REQUIRE (memory_fields, mem, "memory", "capacity", v, "the device memory size, e.g. \"80GiB\"");
  c->memory.capacity = v.u;
  REQUIRE (memory_fields, mem, "memory", "bandwidth", v, "the peak device memory bandwidth, e.g. \"2039GB/s\"");
  c->memory.bandwidth = v.d;
  GET (memory_fields, mem, "memory", "efficiency", v) c->memory.efficiency = v.d; END_GET
  GET (memory_fields, mem, "memory", "latency", v) c->memory.latency_ns = v.d; END_GET
  GET (memory_fields, mem, "memory", "reserved", v) c->memory.reserved = v.u; END_GET
  GET (memory_fields, mem, "memory", "alloc_granularity", v) c->memory.alloc_granularity = v.u; END_GET
  if (c->memory.capacity == 0)
    {
      fail (error, origin, "memory.capacity", "must be greater than 0");
      goto fail;
    }
  if (c->memory.bandwidth <= 0)
    {
      fail (error, origin, "memory.bandwidth", "must be greater than 0");
      goto fail;
    }
  if (c->memory.reserved >= c->memory.capacity)
    {
      g_autofree char *r = units_format_bytes (c->memory.reserved);
      g_autofree char *cap = units_format_bytes (c->memory.capacity);
      fail (error, origin, "memory.reserved", "%s leaves nothing of memory.capacity (%s); it must be less", r, cap);
      goto fail;
    }
  if (c->memory.alloc_granularity == 0
      || (c->memory.alloc_granularity & (c->memory.alloc_granularity - 1)) != 0)
    {
      fail (error, origin, "memory.alloc_granularity",
            "must be a power of two of at least 1 B (CUDA uses 2MiB), got %" G_GUINT64_FORMAT " B",
            c->memory.alloc_granularity);
      goto fail;
    }

  const cJSON *link = member (root, "link");
  GET (link_fields, link, "link", "tech", v) c->link.tech = g_strdup (v.s); END_GET
  if (c->unified)
    {
      GET (link_fields, link, "link", "bandwidth", v) c->link.bandwidth = v.d; END_GET
    }
  else
    {
      REQUIRE (link_fields, link, "link", "bandwidth", v,
               "the host link's peak bandwidth per direction, e.g. \"31.5GB/s\" for PCIe 4.0 x16; "
               "or set \"unified\": true for one shared memory pool");
      c->link.bandwidth = v.d;
      if (c->link.bandwidth <= 0)
        {
          fail (error, origin, "link.bandwidth", "must be greater than 0");
          goto fail;
        }
    }
  GET (link_fields, link, "link", "efficiency", v) c->link.efficiency = v.d; END_GET
  GET (link_fields, link, "link", "pageable_efficiency", v) c->link.pageable_efficiency = v.d; END_GET
  GET (link_fields, link, "link", "latency", v) c->link.latency_ns = v.d; END_GET
  GET (link_fields, link, "link", "copy_engines", v) c->link.copy_engines = (guint) v.u; END_GET

  const cJSON *tiers = member (root, "tiers");
  c->n_tiers = tiers != NULL ? (guint) cJSON_GetArraySize (tiers) : 0;
  c->tiers = g_new0 (VsTier, c->n_tiers + 1);
  for (guint i = 0; i < c->n_tiers; i++)
    {
      const cJSON *t = cJSON_GetArrayItem (tiers, (int) i);
      g_autofree char *tp = g_strdup_printf ("tiers[%u]", i);
      VsTier *tier = &c->tiers[i];
      tier->efficiency = 1.0;
      tier->attach = VS_ATTACH_HOST;
      REQUIRE (tier_fields, t, tp, "name", v, "the tier's name, e.g. \"cxl0\"; it names its resource in reports");
      tier->name = g_strdup (v.s);
      GET (tier_fields, t, tp, "tech", v) tier->tech = g_strdup (v.s); END_GET
      REQUIRE (tier_fields, t, tp, "capacity", v, "the tier's size, e.g. \"256GiB\"");
      tier->capacity = v.u;
      REQUIRE (tier_fields, t, tp, "bandwidth", v, "the tier's peak bandwidth, e.g. \"64GB/s\"");
      tier->bandwidth = v.d;
      GET (tier_fields, t, tp, "efficiency", v) tier->efficiency = v.d; END_GET
      GET (tier_fields, t, tp, "latency", v) tier->latency_ns = v.d; END_GET
      GET (tier_fields, t, tp, "attach", v) tier->attach = v.e == 0 ? VS_ATTACH_HOST : VS_ATTACH_DEVICE; END_GET

      g_autofree char *np = g_strdup_printf ("%s.name", tp);
      if (!valid_tier_name (tier->name))
        {
          fail (error, origin, np, "'%s' is not a tier name (letters, digits, '_' and '-', not all digits)",
                tier->name);
          goto fail;
        }
      if (g_strv_contains (reserved_names, tier->name))
        {
          fail (error, origin, np, "'%s' is reserved for a built-in resource; pick another name", tier->name);
          goto fail;
        }
      for (guint j = 0; j < i; j++)
        if (strcmp (c->tiers[j].name, tier->name) == 0)
          {
            fail (error, origin, np, "'%s' is already the name of tiers[%u]; names must be unique", tier->name, j);
            goto fail;
          }
      if (tier->capacity == 0)
        {
          g_autofree char *p = g_strdup_printf ("%s.capacity", tp);
          fail (error, origin, p, "must be greater than 0");
          goto fail;
        }
      if (tier->bandwidth <= 0)
        {
          g_autofree char *p = g_strdup_printf ("%s.bandwidth", tp);
          fail (error, origin, p, "must be greater than 0");
          goto fail;
        }
      if (c->unified && tier->attach == VS_ATTACH_HOST)
        {
          g_autofree char *p = g_strdup_printf ("%s.attach", tp);
          fail (error, origin, p, "\"host\" means behind the host link, and a unified machine has none; "
                "use \"device\"");
          goto fail;
        }
    }

  const cJSON *host = member (root, "host");
  GET (host_fields, host, "host", "tech", v) c->host.tech = g_strdup (v.s); END_GET
  GET (host_fields, host, "host", "capacity", v) c->host.capacity = v.u; END_GET
  GET (host_fields, host, "host", "bandwidth", v) c->host.bandwidth = v.d; END_GET
  if (c->host.capacity == 0)
    {
      fail (error, origin, "host.capacity", "must be greater than 0");
      goto fail;
    }
  if (c->host.bandwidth <= 0)
    {
      fail (error, origin, "host.bandwidth", "must be greater than 0");
      goto fail;
    }

  const cJSON *uvm = member (root, "uvm");
  GET (uvm_fields, uvm, "uvm", "page", v) c->uvm.page = v.u; END_GET
  GET (uvm_fields, uvm, "uvm", "evict_unit", v) c->uvm.evict_unit = v.u; END_GET
  GET (uvm_fields, uvm, "uvm", "fault_batch", v) c->uvm.fault_batch = (guint) v.u; END_GET
  GET (uvm_fields, uvm, "uvm", "fault_latency", v) c->uvm.fault_latency_ns = v.d; END_GET
  if (c->uvm.page == 0)
    {
      fail (error, origin, "uvm.page", "must be greater than 0");
      goto fail;
    }
  if (c->uvm.evict_unit == 0 || c->uvm.evict_unit % c->uvm.page != 0)
    {
      g_autofree char *e = units_format_bytes (c->uvm.evict_unit);
      g_autofree char *pg = units_format_bytes (c->uvm.page);
      fail (error, origin, "uvm.evict_unit", "%s is not a whole number (>= 1) of uvm.page (%s)", e, pg);
      goto fail;
    }

  const cJSON *policy = member (root, "policy");
  GET (policy_fields, policy, "policy", "oversubscription", v) c->oversubscription = (VsOversub) v.e; END_GET

  const cJSON *gpu = member (root, "gpu");
  GET (gpu_fields, gpu, "gpu", "launch_latency", v) c->gpu.launch_latency_ns = v.d; END_GET
  GET (gpu_fields, gpu, "gpu", "legacy_default_stream", v) c->gpu.legacy_default_stream = v.b; END_GET

  if (c->memory.tech == NULL) c->memory.tech = g_strdup ("");
  if (c->link.tech == NULL) c->link.tech = g_strdup ("");
  if (c->host.tech == NULL) c->host.tech = g_strdup ("");
  for (guint i = 0; i < c->n_tiers; i++)
    if (c->tiers[i].tech == NULL)
      c->tiers[i].tech = g_strdup ("");
  return c;

fail:
  config_free (c);
  return NULL;
}

VsConfig *
config_load (const char *name_or_path, const char *const *sets, GError **error)
{
  g_autofree char *origin = NULL;
  cJSON *root = load_json_origin (name_or_path, &origin, error);
  if (root == NULL)
    return NULL;
  for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
    if (!config_set (root, sets[i], origin, error))
      {
        cJSON_Delete (root);
        return NULL;
      }
  GError *err = NULL;
  VsConfig *c = config_compile (root, origin, &err);
  cJSON_Delete (root);
  if (c == NULL)
    {
      /* A value that parsed but is impossible (--set memory.bandwidth=0)
       * is found here: say which --set put it there. */
      for (gsize i = 0; sets != NULL && sets[i] != NULL; i++)
        {
          const char *eq = strchr (sets[i], '=');
          g_autofree char *key = g_strndup (sets[i], eq ? (gsize) (eq - sets[i]) : strlen (sets[i]));
          g_autofree char *needle = g_strdup_printf (": %s", key);
          if (strstr (err->message, needle) != NULL)
            {
              g_autofree char *old = err->message;
              err->message = g_strdup_printf ("%s (set by --set %s)", old, sets[i]);
              break;
            }
        }
      g_propagate_error (error, err);
    }
  return c;
}

void
config_free (VsConfig *c)
{
  if (c == NULL)
    return;
  g_free (c->name);
  g_free (c->description);
  g_free (c->origin);
  g_free (c->memory.tech);
  g_free (c->link.tech);
  g_free (c->host.tech);
  for (guint i = 0; c->tiers != NULL && i < c->n_tiers; i++)
    {
      g_free (c->tiers[i].name);
      g_free (c->tiers[i].tech);
    }
  g_free (c->tiers);
  g_free (c);
}

const char *
config_oversub_name (VsOversub o)
{
  return o < VS_OVERSUB_COUNT ? oversub_choices[o] : NULL;
}

/* ---- writing back ---- */

static void
add_owned_string (cJSON *obj, const char *key, char *s)
{
  cJSON_AddStringToObject (obj, key, s);
  g_free (s);
}

cJSON *
config_to_json (const VsConfig *c)
{
  g_return_val_if_fail (c != NULL, NULL);
  cJSON *root = cJSON_CreateObject ();
  cJSON_AddStringToObject (root, "name", c->name);
  cJSON_AddStringToObject (root, "description", c->description);
  cJSON *compute = cJSON_AddObjectToObject (root, "compute");
  cJSON_AddNumberToObject (compute, "tflops", c->tflops);

  cJSON *mem = cJSON_AddObjectToObject (root, "memory");
  cJSON_AddStringToObject (mem, "tech", c->memory.tech);
  add_owned_string (mem, "capacity", units_format_bytes_exact (c->memory.capacity));
  add_owned_string (mem, "bandwidth", units_format_rate_exact (c->memory.bandwidth));
  cJSON_AddNumberToObject (mem, "efficiency", c->memory.efficiency);
  add_owned_string (mem, "latency", units_format_time_exact (c->memory.latency_ns));
  add_owned_string (mem, "reserved", units_format_bytes_exact (c->memory.reserved));
  add_owned_string (mem, "alloc_granularity", units_format_bytes_exact (c->memory.alloc_granularity));

  cJSON *link = cJSON_AddObjectToObject (root, "link");
  cJSON_AddStringToObject (link, "tech", c->link.tech);
  add_owned_string (link, "bandwidth", units_format_rate_exact (c->link.bandwidth));
  cJSON_AddNumberToObject (link, "efficiency", c->link.efficiency);
  cJSON_AddNumberToObject (link, "pageable_efficiency", c->link.pageable_efficiency);
  add_owned_string (link, "latency", units_format_time_exact (c->link.latency_ns));
  cJSON_AddNumberToObject (link, "copy_engines", c->link.copy_engines);

  cJSON *tiers = cJSON_AddArrayToObject (root, "tiers");
  for (guint i = 0; i < c->n_tiers; i++)
    {
      const VsTier *t = &c->tiers[i];
      cJSON *o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "name", t->name);
      cJSON_AddStringToObject (o, "tech", t->tech);
      add_owned_string (o, "capacity", units_format_bytes_exact (t->capacity));
      add_owned_string (o, "bandwidth", units_format_rate_exact (t->bandwidth));
      cJSON_AddNumberToObject (o, "efficiency", t->efficiency);
      add_owned_string (o, "latency", units_format_time_exact (t->latency_ns));
      cJSON_AddStringToObject (o, "attach", t->attach == VS_ATTACH_DEVICE ? "device" : "host");
      cJSON_AddItemToArray (tiers, o);
    }

  cJSON *host = cJSON_AddObjectToObject (root, "host");
  cJSON_AddStringToObject (host, "tech", c->host.tech);
  add_owned_string (host, "capacity", units_format_bytes_exact (c->host.capacity));
  add_owned_string (host, "bandwidth", units_format_rate_exact (c->host.bandwidth));

  cJSON_AddBoolToObject (root, "unified", c->unified);

  cJSON *uvm = cJSON_AddObjectToObject (root, "uvm");
  add_owned_string (uvm, "page", units_format_bytes_exact (c->uvm.page));
  add_owned_string (uvm, "evict_unit", units_format_bytes_exact (c->uvm.evict_unit));
  cJSON_AddNumberToObject (uvm, "fault_batch", c->uvm.fault_batch);
  add_owned_string (uvm, "fault_latency", units_format_time_exact (c->uvm.fault_latency_ns));

  cJSON *policy = cJSON_AddObjectToObject (root, "policy");
  cJSON_AddStringToObject (policy, "oversubscription", config_oversub_name (c->oversubscription));

  cJSON *gpu = cJSON_AddObjectToObject (root, "gpu");
  add_owned_string (gpu, "launch_latency", units_format_time_exact (c->gpu.launch_latency_ns));
  cJSON_AddBoolToObject (gpu, "legacy_default_stream", c->gpu.legacy_default_stream);
  return root;
}
