/* suggest.c — "did you mean": the candidates a misspelt name is closest
 * to. Names are few (tens), so a plain O(n·m) edit distance per candidate
 * is all it takes. */
#include <string.h>

#include "base/suggest.h"

/* WORD lowercased, without the separators people vary: "RTX-3090" ->
 * "rtx3090". */
static char *
normalize (const char *word)
{
  GString *s = g_string_new (NULL);
  for (const char *p = word; *p; p++)
    if (*p != '-' && *p != '_' && *p != '.' && *p != ' ')
      g_string_append_c (s, g_ascii_tolower (*p));
  return g_string_free (s, FALSE);
}

/* Optimal string alignment distance: insertions, deletions,
 * substitutions, and swaps of two neighbours ("h2000" vs "h200": 1). */
static guint
edit_distance (const char *a, const char *b)
{
  gsize n = strlen (a), m = strlen (b);
  g_autofree guint *d = g_new (guint, (n + 1) * (m + 1));
#define D(i, j) d[(i) * (m + 1) + (j)]
  for (gsize i = 0; i <= n; i++)
    D (i, 0) = (guint) i;
  for (gsize j = 0; j <= m; j++)
    D (0, j) = (guint) j;
  for (gsize i = 1; i <= n; i++)
    for (gsize j = 1; j <= m; j++)
      {
        guint cost = a[i - 1] != b[j - 1];
        guint v = MIN (D (i - 1, j) + 1, D (i, j - 1) + 1);
        v = MIN (v, D (i - 1, j - 1) + cost);
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          v = MIN (v, D (i - 2, j - 2) + 1);
        D (i, j) = v;
      }
  guint r = D (n, m);
#undef D
  return r;
}

typedef struct {
  const char *name;
  guint rank;      /* 0 same name, 1 prefix, 2 + distance */
  guint order;
} Match;

static gint
match_cmp (gconstpointer a, gconstpointer b)
{
  const Match *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

char **
suggest_closest (const char *word, const char *const *candidates)
{
  g_return_val_if_fail (word != NULL, NULL);
  g_autofree char *w = normalize (word);
  g_autoptr (GArray) found = g_array_new (FALSE, FALSE, sizeof (Match));
  for (guint i = 0; candidates && candidates[i]; i++)
    {
      g_autofree char *c = normalize (candidates[i]);
      Match m = { candidates[i], 0, i };
      if (*w == '\0' || *c == '\0')
        continue;
      if (strcmp (w, c) == 0)
        m.rank = 0;
      else if (g_str_has_prefix (c, w) && strlen (w) >= 2)
        m.rank = 1;
      else
        {
          guint dist = edit_distance (w, c);
          guint limit = MAX (1, (guint) strlen (c) / 3);
          if (dist > limit)
            continue;
          m.rank = 2 + dist;
        }
      g_array_append_val (found, m);
    }
  g_array_sort (found, match_cmp);
  /* Only the best kind of match: a name written another way beats every
   * prefix, a prefix every near miss, and the nearest misses the others. */
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; i < found->len && out->len < 3; i++)
    {
      const Match *m = &g_array_index (found, Match, i);
      if (m->rank != g_array_index (found, Match, 0).rank)
        break;
      g_ptr_array_add (out, g_strdup (m->name));
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

char *
suggest_phrase (const char *word, const char *const *candidates, const char *prefix)
{
  g_auto (GStrv) best = suggest_closest (word, candidates);
  guint n = g_strv_length (best);
  if (n == 0)
    return g_strdup ("");
  if (prefix == NULL)
    prefix = "";
  GString *s = g_string_new ("; did you mean ");
  for (guint i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append (s, i + 1 == n ? " or " : ", ");
      g_string_append_printf (s, "'%s%s'", prefix, best[i]);
    }
  g_string_append_c (s, '?');
  return g_string_free (s, FALSE);
}
