/* pickle.h — a safe reader of Python pickles that hold plain data only
 * (protocols 2-5): dict, list, tuple, str, int, float, bool, None and the
 * memo. Nothing in the input can name a class or call anything: an opcode
 * that would (GLOBAL, REDUCE, BUILD, ...) is an error, as is any other
 * opcode outside that set. A pickle is not trusted input.
 *
 * Errors are GErrors in VS_TRACE_ERROR naming the file and the byte offset
 * of the offending opcode ("x.pickle: byte 1234: class reference (GLOBAL)
 * refused"). Limits: nesting depth (256, counted by every opcode that
 * builds a container), open MARKs (4096), the memo (one entry per index
 * stored, whatever the index), values (one per opcode at most): memory is
 * bounded by the input's length. */
#pragma once

#include <glib.h>

typedef enum {
  PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_LIST, PK_TUPLE, PK_DICT
} PkType;

typedef struct PkVal PkVal;
struct PkVal {
  guint8 type;        /* PkType */
  guint8 big;         /* PK_INT: the value is u (>= 2^63), not i */
  guint16 depth;      /* containers: levels below */
  guint32 n;          /* str: bytes; list, tuple: items; dict: pairs */
  union {
    gint64 i;         /* PK_INT, PK_BOOL */
    guint64 u;
    double f;
    const char *s;    /* PK_STR: UTF-8, not NUL-terminated */
    PkVal **items;    /* list, tuple: n; dict: 2n (key, value, ...) */
  };
  guint32 cap;
};

typedef struct PkDoc PkDoc;

/* Parses DATA (LEN bytes; must outlive the document: strings point into
 * it). NAME is used in messages. */
PkDoc *pickle_parse (const guint8 *data, gsize len, const char *name, GError **error);
/* (transfer none) The unpickled object. */
const PkVal *pickle_root (const PkDoc *doc);
void pickle_free (PkDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PkDoc, pickle_free)

/* Lookups that tolerate a missing or mistyped value (they return NULL / the
 * fallback): the importer reads a schema it checks field by field. */
const PkVal *pk_get (const PkVal *dict, const char *key);  /* last of equal keys, as Python */
gboolean pk_str_is (const PkVal *v, const char *s);
/* The value as a non-negative integer (a bool counts), else FALLBACK. */
guint64 pk_u64 (const PkVal *v, guint64 fallback);
gboolean pk_int (const PkVal *v, gint64 *out);    /* PK_INT/PK_BOOL fitting gint64 */
double pk_double (const PkVal *v, double fallback);  /* int or float */
/* A copy of a string value, or NULL. */
char *pk_strdup (const PkVal *v);
