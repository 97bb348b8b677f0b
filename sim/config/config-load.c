/* config-load.c — loading a config: reading a JSON file (an underflowing
 * number, an escaped NUL, a key given twice are refused), checking its
 * keys and values, resolving `extends` depth-first (child wins, cycles and
 * depth refused). */
#include "config/config-priv.h"
#include "trace/trace.h" /* trace_json_nul_escape */

#include <errno.h>
#include <math.h>
#include <string.h>

/* ---- loading and extends ---- */

/* The first number in the JSON TEXT that is not 0 but reads as 0 (1e-400:
 * strtod underflows), or NULL. cJSON keeps only the double, so the text is
 * looked at once, outside strings. */
static const char *
underflowing_number (const char *text, gsize len)
{
  gboolean in_str = FALSE;
  for (const char *p = text, *end = text + len; p < end; p++)
    {
      if (in_str)
        {
          if (*p == '\\')
            p++;
          else if (*p == '"')
            in_str = FALSE;
          continue;
        }
      if (*p == '"')
        {
          in_str = TRUE;
          continue;
        }
      if (!(g_ascii_isdigit (*p) || *p == '-'))
        continue;
      const char *q = p;
      gboolean nonzero = FALSE, exp = FALSE;
      while (q < end && (g_ascii_isdigit (*q) || strchr ("+-.eE", *q) != NULL))
        {
          if (*q == 'e' || *q == 'E')
            exp = TRUE;
          else if (!exp && *q >= '1' && *q <= '9')
            nonzero = TRUE;
          q++;
        }
      if (nonzero && exp)
        {
          g_autofree char *num = g_strndup (p, (gsize) (q - p));
          if (g_ascii_strtod (num, NULL) == 0)
            return p;
        }
      p = q - 1;
    }
  return NULL;
}

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
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: a config is a JSON object, not %s", path, cfg_json_type_name (root));
      cJSON_Delete (root);
      return NULL;
    }
  /* cJSON cuts a string at an escaped NUL without a word ("a\\u0000b" is
   * "a"): refuse it, as the trace readers do. */
  gsize nul = trace_json_nul_escape (text, len);
  if (nul != G_MAXSIZE)
    {
      int line = 1;
      for (gsize i = 0; i < nul; i++)
        line += text[i] == '\n';
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d: a string holds a NUL character (\\u0000)", path, line);
      cJSON_Delete (root);
      return NULL;
    }
  const char *uf = underflowing_number (text, len);
  if (uf != NULL)
    {
      int line = 1;
      for (const char *p = text; p < uf; p++)
        line += *p == '\n';
      gsize n = strspn (uf, "0123456789+-.eE");
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s:%d: %.*s is too small to represent (it is not 0)", path, line,
                   (int) MIN (n, 40), uf);
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

#define MAX_EXTENDS_DEPTH 32

/* compute.tflops is another name for compute.fp16 (SPEC 4): giving one
 * (by --set, or in a config that extends another) removes the other from
 * COMPUTE, so that the new figure is the one that counts. */
void
cfg_compute_alias_drop (cJSON *compute, const char *key)
{
  if (strcmp (key, "tflops") == 0)
    cJSON_DeleteItemFromObjectCaseSensitive (compute, "fp16");
  else if (strcmp (key, "fp16") == 0)
    cJSON_DeleteItemFromObjectCaseSensitive (compute, "tflops");
}

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
      /* Named by the user's file, where the chain starts: the file it
       * reached may be any preset. */
      g_set_error (error, VS_CONFIG_ERROR, 0, "%s: extends: chain deeper than %d files (it reached %s)",
                   (char *) shown_stack->pdata[0], MAX_EXTENDS_DEPTH, path);
      return NULL;
    }

  cJSON *root = read_json_file (path, error);
  if (root == NULL)
    return NULL;
  if (!cfg_check_object (cfg_root_fields, root, path, "", error))
    goto fail;

  /* The name is the file's own, never inherited. */
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (root, "name");
  if (name == NULL || cJSON_IsNull (name))
    {
      g_autofree char *base = cfg_basename_no_json (path);
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
      if (cfg_is_preset_name (e))
        {
          GError *perr = NULL;
          parent_path = cfg_preset_path (e, &perr);
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
      {
        /* compute.tflops and compute.fp16 are one figure: the child's
         * name for it replaces the parent's other name. */
        const cJSON *cc = cJSON_GetObjectItemCaseSensitive (root, "compute");
        cJSON *pc = cJSON_GetObjectItemCaseSensitive (parent, "compute");
        if (cJSON_IsObject (cc) && cJSON_IsObject (pc))
          for (const char *const *k = (const char *const[]) { "tflops", "fp16", NULL }; *k; k++)
            if (cJSON_GetObjectItemCaseSensitive (cc, *k) != NULL
                && !cJSON_IsNull (cJSON_GetObjectItemCaseSensitive (cc, *k)))
              cfg_compute_alias_drop (pc, *k);
      }
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

cJSON *
cfg_load_json_origin (const char *name_or_path, char **origin, GError **error)
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
  return cfg_load_json_origin (name_or_path, NULL, error);
}
