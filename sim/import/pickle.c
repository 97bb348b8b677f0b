/* pickle.c — the plain-data pickle reader (pickle.h). A stack machine over
 * the opcodes of Python's pickletools for protocols 2-5, reduced to those
 * that build dict, list, tuple, str, int, float, bool and None or move them
 * (the memo, MARK, POP, DUP, FRAME). Every value lives in one arena freed
 * with the document; the memo and DUP share values, so a hostile input can
 * make a list that holds itself, which is harmless because nothing here or
 * in the importer walks values recursively, and share one value from a
 * million places, which the importer looks at once (import-snapshot.c's
 * Memo). */
#include "import/pickle.h"

#include <string.h>

#include "trace/trace.h"

#define PK_MAX_DEPTH 256          /* nesting of containers */
#define PK_MAX_MARKS 4096         /* open MARKs */

struct PkDoc {
  GPtrArray *arena;               /* PkVal*, owned */
  PkVal *root;
};

typedef struct {
  const guint8 *p, *end, *start;
  const char *name;
  gsize op_at;                    /* offset of the opcode being run */
  PkDoc *doc;
  GPtrArray *stack;               /* PkVal* */
  GArray *marks;                  /* guint: stack length at each MARK */
  GPtrArray *memo;                /* PkVal*: entries 0..len-1, all set */
  GHashTable *memo_sparse;        /* index (guint64*) -> PkVal*: the others */
  GError **error;
} Pk;

static gboolean G_GNUC_PRINTF (2, 3)
fail (Pk *k, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (k->error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: byte %" G_GSIZE_FORMAT ": %s",
               k->name, k->op_at, msg);
  return FALSE;
}

static PkVal *
val_new (Pk *k, PkType type)
{
  PkVal *v = g_new0 (PkVal, 1);
  v->type = (guint8) type;
  g_ptr_array_add (k->doc->arena, v);
  return v;
}

static void
val_free (gpointer p)
{
  PkVal *v = p;
  if (v->type == PK_LIST || v->type == PK_TUPLE || v->type == PK_DICT)
    g_free (v->items);
  g_free (v);
}

static gboolean
need (Pk *k, gsize n, const guint8 **out)
{
  if ((gsize) (k->end - k->p) < n)
    return fail (k, "truncated (%" G_GSIZE_FORMAT " bytes of argument expected, %" G_GSIZE_FORMAT " left)",
                 n, (gsize) (k->end - k->p));
  *out = k->p;
  k->p += n;
  return TRUE;
}

static guint64
le (const guint8 *b, guint n)
{
  guint64 x = 0;
  for (guint i = 0; i < n; i++)
    x |= (guint64) b[i] << (8 * i);
  return x;
}

/* A LENBYTES little-endian length, then that many bytes of WHAT (a
 * string, an integer): *OUT and *N name them. */
static gboolean
counted (Pk *k, guint lenbytes, const char *what, const guint8 **out, guint64 *n)
{
  const guint8 *b = NULL;
  if (!need (k, lenbytes, &b))
    return FALSE;
  *n = le (b, lenbytes);
  if (*n > (guint64) (k->end - k->p))
    return fail (k, "%s of %" G_GUINT64_FORMAT " bytes, only %" G_GSIZE_FORMAT " left", what, *n,
                 (gsize) (k->end - k->p));
  *out = k->p;
  k->p += *n;
  return TRUE;
}

static void
push (Pk *k, PkVal *v)
{
  g_ptr_array_add (k->stack, v);
}

static gboolean
pop (Pk *k, PkVal **out)
{
  *out = NULL;
  guint floor = k->marks->len ? g_array_index (k->marks, guint, k->marks->len - 1) : 0;
  if (k->stack->len <= floor)
    return fail (k, "stack underflow");
  *out = g_ptr_array_steal_index (k->stack, k->stack->len - 1);
  return TRUE;
}

static gboolean
top (Pk *k, PkVal **out)
{
  *out = NULL;
  guint floor = k->marks->len ? g_array_index (k->marks, guint, k->marks->len - 1) : 0;
  if (k->stack->len <= floor)
    return fail (k, "stack underflow");
  *out = k->stack->pdata[k->stack->len - 1];
  return TRUE;
}

/* The items pushed since the last MARK: [*from, stack end). Pops the mark. */
static gboolean
pop_mark (Pk *k, guint *from)
{
  if (k->marks->len == 0)
    return fail (k, "no MARK on the stack");
  *from = g_array_index (k->marks, guint, k->marks->len - 1);
  g_array_set_size (k->marks, k->marks->len - 1);
  return TRUE;
}

static gboolean
is_container (const PkVal *v)
{
  return v->type == PK_LIST || v->type == PK_TUPLE || v->type == PK_DICT;
}

/* Adds ITEMS[0..n) to container C (a dict takes them as pairs). */
static gboolean
extend (Pk *k, PkVal *c, PkVal **items, guint n)
{
  if (c->type == PK_DICT)
    {
      if (n % 2)
        return fail (k, "odd number of items for a dict");
      for (guint i = 0; i < n; i += 2)
        if (is_container (items[i]) && items[i]->type != PK_TUPLE)
          return fail (k, "unhashable dict key");
    }
  else if (c->type != PK_LIST)
    return fail (k, "append to a value that is not a list or dict");
  guint slots = c->type == PK_DICT ? 2 * c->n : c->n;
  if (slots + n > c->cap)
    {
      guint cap = MAX (c->cap * 2, slots + n);
      cap = MAX (cap, 4);
      c->items = g_renew (PkVal *, c->items, cap);
      c->cap = cap;
    }
  for (guint i = 0; i < n; i++)
    {
      PkVal *v = items[i];
      if (is_container (v) && v != c && v->depth + 1 > c->depth)
        {
          if (v->depth + 1 > PK_MAX_DEPTH)
            return fail (k, "nesting deeper than %d", PK_MAX_DEPTH);
          c->depth = (guint16) (v->depth + 1);
        }
      c->items[slots + i] = v;
    }
  c->n += c->type == PK_DICT ? n / 2 : n;
  return TRUE;
}

/* A tuple or list of ITEMS[0..n), or NULL (an error: too deep). */
static PkVal *
seq_new (Pk *k, PkType type, PkVal **items, guint n)
{
  guint depth = 0;
  for (guint i = 0; i < n; i++)
    if (is_container (items[i]) && items[i]->depth + 1u > depth)
      depth = items[i]->depth + 1u;
  if (depth > PK_MAX_DEPTH)
    {
      fail (k, "nesting deeper than %d", PK_MAX_DEPTH);
      return NULL;
    }
  PkVal *v = val_new (k, type);
  v->depth = (guint16) depth;
  if (n)
    {
      v->items = g_new (PkVal *, n);
      memcpy (v->items, items, n * sizeof *items);
      v->n = v->cap = n;
    }
  return v;
}

/* The memo as Python keeps it, a dict of what was stored: indices stored
 * in order (0, 1, 2, ... as MEMOIZE and most writers do) in an array, any
 * other in a hash table, so its size is that of what was stored, whatever
 * the indices (a 4-byte LONG_BINPUT index costs one entry, not 2^32). */
static guint64
memo_count (Pk *k)
{
  return k->memo->len + g_hash_table_size (k->memo_sparse);
}

static gboolean
memo_put (Pk *k, guint64 idx)
{
  PkVal *v = NULL;
  if (!top (k, &v))
    return FALSE;
  if (idx < k->memo->len)
    k->memo->pdata[idx] = v;
  else if (idx == k->memo->len && idx < G_MAXUINT)
    {
      g_ptr_array_add (k->memo, v);
      g_hash_table_remove (k->memo_sparse, &idx);
      /* what was stored ahead now follows in order */
      for (guint64 next = k->memo->len; next < G_MAXUINT; next = k->memo->len)
        {
          gpointer key = NULL, w = NULL;
          if (!g_hash_table_steal_extended (k->memo_sparse, &next, &key, &w))
            break;
          g_free (key);
          g_ptr_array_add (k->memo, w);
        }
    }
  else
    g_hash_table_insert (k->memo_sparse, g_memdup2 (&idx, sizeof idx), v);
  return TRUE;
}

static gboolean
memo_get (Pk *k, guint64 idx)
{
  PkVal *v = idx < k->memo->len ? k->memo->pdata[idx] : g_hash_table_lookup (k->memo_sparse, &idx);
  if (v == NULL)
    return fail (k, "memo index %" G_GUINT64_FORMAT " not set", idx);
  push (k, v);
  return TRUE;
}

static gboolean
str_op (Pk *k, guint lenbytes)
{
  const guint8 *s = NULL;
  guint64 n = 0;
  if (!counted (k, lenbytes, "string", &s, &n))
    return FALSE;
  if (!g_utf8_validate_len ((const char *) s, (gsize) n, NULL))
    return fail (k, "string is not valid UTF-8");
  PkVal *v = val_new (k, PK_STR);
  v->s = (const char *) s;
  v->n = (guint32) n;
  push (k, v);
  return TRUE;
}

/* LONG1/LONG4: little-endian two's complement of N bytes. */
static gboolean
long_op (Pk *k, guint lenbytes)
{
  const guint8 *d = NULL;
  guint64 n = 0;
  if (!counted (k, lenbytes, "integer", &d, &n))
    return FALSE;
  /* Drop redundant sign bytes, then fit 8 bytes (or 9 with a zero top:
   * an unsigned 64-bit value such as a device address). */
  gboolean neg = n > 0 && (d[n - 1] & 0x80);
  guint64 m = n;
  while (m > 1 && d[m - 1] == (neg ? 0xff : 0x00) && ((d[m - 2] & 0x80) != 0) == neg)
    m--;
  PkVal *v = val_new (k, PK_INT);
  if (m == 0)
    v->i = 0;
  else if (m <= 8)
    {
      guint64 x = le (d, (guint) m);
      if (neg && m < 8)
        x |= ~G_GUINT64_CONSTANT (0) << (8 * m);
      v->u = x;
    }
  else if (m == 9 && !neg && d[8] == 0)
    {
      v->u = le (d, 8);
      v->big = 1;
    }
  else
    return fail (k, "integer wider than 64 bits");
  push (k, v);
  return TRUE;
}

static gboolean
run (Pk *k)
{
  for (;;)
    {
      k->op_at = (gsize) (k->p - k->start);
      if (k->p >= k->end)
        return fail (k, "truncated: no STOP opcode");
      guint8 op = *k->p++;
      const guint8 *b = NULL;
      PkVal *v = NULL, *w = NULL;
      guint from = 0;
      switch (op)
        {
        case 0x80: /* PROTO */
          if (!need (k, 1, &b))
            return FALSE;
          if (b[0] < 2 || b[0] > 5)
            return fail (k, "pickle protocol %u (2 to 5 are read)", b[0]);
          break;
        case 0x95: /* FRAME: a length hint */
          if (!need (k, 8, &b))
            return FALSE;
          break;
        case '.': /* STOP */
          if (k->stack->len == 0)
            return fail (k, "STOP with an empty stack");
          k->doc->root = k->stack->pdata[k->stack->len - 1];
          return TRUE;
        case '(': /* MARK */
          if (k->marks->len >= PK_MAX_MARKS)
            return fail (k, "more than %d open MARKs", PK_MAX_MARKS);
          g_array_append_val (k->marks, k->stack->len);
          break;
        case ')': push (k, val_new (k, PK_TUPLE)); break;
        case ']': push (k, val_new (k, PK_LIST)); break;
        case '}': push (k, val_new (k, PK_DICT)); break;
        case 'N': push (k, val_new (k, PK_NONE)); break;
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
          v = val_new (k, PK_BOOL);
          v->i = op == 0x88;
          push (k, v);
          break;
        case 'J': case 'K': case 'M': /* BININT (4, signed), BININT1, BININT2 */
          {
            guint n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if (!need (k, n, &b))
              return FALSE;
            v = val_new (k, PK_INT);
            v->i = op == 'J' ? (gint64) (gint32) (guint32) le (b, 4) : (gint64) le (b, n);
            push (k, v);
            break;
          }
        case 0x8a: if (!long_op (k, 1)) return FALSE; break; /* LONG1 */
        case 0x8b: if (!long_op (k, 4)) return FALSE; break; /* LONG4 */
        case 'G': /* BINFLOAT: big-endian double */
          {
            if (!need (k, 8, &b))
              return FALSE;
            guint64 x = 0;
            for (guint i = 0; i < 8; i++)
              x = x << 8 | b[i];
            v = val_new (k, PK_FLOAT);
            memcpy (&v->f, &x, sizeof x);
            push (k, v);
            break;
          }
        case 0x8c: if (!str_op (k, 1)) return FALSE; break; /* SHORT_BINUNICODE */
        case 'X': if (!str_op (k, 4)) return FALSE; break;  /* BINUNICODE */
        case 0x8d: if (!str_op (k, 8)) return FALSE; break; /* BINUNICODE8 */
        case 0x94: /* MEMOIZE */
          if (!memo_put (k, memo_count (k)))
            return FALSE;
          break;
        case 'q': if (!need (k, 1, &b) || !memo_put (k, b[0])) return FALSE; break;        /* BINPUT */
        case 'r': if (!need (k, 4, &b) || !memo_put (k, le (b, 4))) return FALSE; break;   /* LONG_BINPUT */
        case 'h': if (!need (k, 1, &b) || !memo_get (k, b[0])) return FALSE; break;        /* BINGET */
        case 'j': if (!need (k, 4, &b) || !memo_get (k, le (b, 4))) return FALSE; break;   /* LONG_BINGET */
        case '0': if (!pop (k, &v)) return FALSE; break;   /* POP */
        case '1': if (!pop_mark (k, &from)) return FALSE;  /* POP_MARK */
          g_ptr_array_set_size (k->stack, from);
          break;
        case '2': if (!top (k, &v)) return FALSE; push (k, v); break; /* DUP */
        case 'a': /* APPEND */
          if (!pop (k, &v) || !top (k, &w) || !extend (k, w, &v, 1))
            return FALSE;
          break;
        case 's': /* SETITEM */
          {
            PkVal *kv[2];
            if (!pop (k, &kv[1]) || !pop (k, &kv[0]) || !top (k, &w))
              return FALSE;
            if (w->type != PK_DICT)
              return fail (k, "SETITEM on a value that is not a dict");
            if (!extend (k, w, kv, 2))
              return FALSE;
            break;
          }
        case 'e': case 'u': /* APPENDS, SETITEMS */
          {
            if (!pop_mark (k, &from))
              return FALSE;
            if (from == 0)
              return fail (k, "%s with nothing to add to", op == 'e' ? "APPENDS" : "SETITEMS");
            w = k->stack->pdata[from - 1];
            if ((op == 'u') != (w->type == PK_DICT))
              return fail (k, "%s on a %s", op == 'e' ? "APPENDS" : "SETITEMS",
                           w->type == PK_DICT ? "dict" : "value that is not a dict");
            if (!extend (k, w, (PkVal **) k->stack->pdata + from, k->stack->len - from))
              return FALSE;
            g_ptr_array_set_size (k->stack, from);
            break;
          }
        case 't': case 'l': case 'd': /* TUPLE, LIST, DICT from MARK */
          {
            if (!pop_mark (k, &from))
              return FALSE;
            PkVal **items = (PkVal **) k->stack->pdata + from;
            guint n = k->stack->len - from;
            if (op == 'd')
              {
                v = val_new (k, PK_DICT);
                if (!extend (k, v, items, n))
                  return FALSE;
              }
            else if ((v = seq_new (k, op == 't' ? PK_TUPLE : PK_LIST, items, n)) == NULL)
              return FALSE;
            g_ptr_array_set_size (k->stack, from);
            push (k, v);
            break;
          }
        case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
          {
            guint n = op - 0x84;
            guint floor = k->marks->len ? g_array_index (k->marks, guint, k->marks->len - 1) : 0;
            if (k->stack->len < floor + n)
              return fail (k, "stack underflow");
            v = seq_new (k, PK_TUPLE, (PkVal **) k->stack->pdata + k->stack->len - n, n);
            if (v == NULL)
              return FALSE;
            g_ptr_array_set_size (k->stack, k->stack->len - n);
            push (k, v);
            break;
          }
        case 'c': return fail (k, "class reference (GLOBAL) refused: a snapshot holds only plain data");
        case 0x93: return fail (k, "class reference (STACK_GLOBAL) refused: a snapshot holds only plain data");
        case 'i': case 'o': case 0x81: case 0x92: case 'R': case 'b':
          return fail (k, "object construction (opcode 0x%02x) refused: a snapshot holds only plain data", op);
        case 'P': case 'Q': case 0x82: case 0x83: case 0x84:
          return fail (k, "external reference (opcode 0x%02x) refused", op);
        default:
          return fail (k, "unsupported pickle opcode 0x%02x", op);
        }
    }
}

PkDoc *
pickle_parse (const guint8 *data, gsize len, const char *name, GError **error)
{
  g_return_val_if_fail (data != NULL || len == 0, NULL);
  PkDoc *doc = g_new0 (PkDoc, 1);
  doc->arena = g_ptr_array_new_with_free_func (val_free);
  Pk k = {
    .p = data, .end = data + len, .start = data, .name = name, .doc = doc,
    /* sized: pdata is never NULL, even for an empty stack (pointer arithmetic below) */
    .stack = g_ptr_array_sized_new (64), .marks = g_array_new (FALSE, FALSE, sizeof (guint)),
    .memo = g_ptr_array_new (), .error = error,
    .memo_sparse = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL),
  };
  gboolean ok = TRUE;
  k.op_at = 0;
  if (len < 2 || data[0] != 0x80)
    ok = fail (&k, "not a pickle of protocol 2 or later (no PROTO opcode)");
  else
    ok = run (&k);
  g_ptr_array_unref (k.stack);
  g_array_unref (k.marks);
  g_ptr_array_unref (k.memo);
  g_hash_table_unref (k.memo_sparse);
  if (!ok)
    {
      pickle_free (doc);
      return NULL;
    }
  return doc;
}

const PkVal *
pickle_root (const PkDoc *doc)
{
  return doc->root;
}

void
pickle_free (PkDoc *doc)
{
  if (doc == NULL)
    return;
  g_ptr_array_unref (doc->arena);
  g_free (doc);
}

gboolean
pk_str_is (const PkVal *v, const char *s)
{
  gsize n = strlen (s);
  return v != NULL && v->type == PK_STR && v->n == n && memcmp (v->s, s, n) == 0;
}

const PkVal *
pk_get (const PkVal *dict, const char *key)
{
  if (dict == NULL || dict->type != PK_DICT)
    return NULL;
  for (guint i = dict->n; i-- > 0;)
    if (pk_str_is (dict->items[2 * i], key))
      return dict->items[2 * i + 1];
  return NULL;
}

guint64
pk_u64 (const PkVal *v, guint64 fallback)
{
  if (v == NULL || (v->type != PK_INT && v->type != PK_BOOL))
    return fallback;
  if (v->big)
    return v->u;
  return v->i < 0 ? fallback : (guint64) v->i;
}

gboolean
pk_int (const PkVal *v, gint64 *out)
{
  if (v == NULL || (v->type != PK_INT && v->type != PK_BOOL) || v->big)
    return FALSE;
  *out = v->i;
  return TRUE;
}

double
pk_double (const PkVal *v, double fallback)
{
  if (v == NULL)
    return fallback;
  if (v->type == PK_FLOAT)
    return v->f;
  if (v->type == PK_INT || v->type == PK_BOOL)
    return v->big ? (double) v->u : (double) v->i;
  return fallback;
}

char *
pk_strdup (const PkVal *v)
{
  return v != NULL && v->type == PK_STR ? g_strndup (v->s, v->n) : NULL;
}
