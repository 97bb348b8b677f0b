/* trace-jsonl.c — the JSON Lines encoding: a reader with a small parser
 * specialised for flat event objects, and the canonical event formatter.
 *
 * Why not cJSON per line: a specialised parser needs no allocation per line
 * and reads ~4-5x faster (docs/trace-format.md has the figures). The header
 * line, read once, still goes through cJSON. */
#include "trace/trace-priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  guint64 *v;
  gsize len, cap;
} IdList;

typedef struct {
  VsTraceReader base;
  VsInBuf in;
  GHashTable *strings;     /* interned: content -> itself (in chunk) */
  GStringChunk *chunk;
  GString *scratch;
  IdList lists[3];
  VsKernelShape shape;     /* the current kernel's, when it has one */
  VsCollective coll;
  gboolean cr_lines;       /* lines end in CR (old Mac files), CRLF or LF; else in LF or CRLF */
} JsonlReader;

/* ---- low-level scanning ---- */

typedef struct {
  const char *p, *end;
} Cur;

static inline void
skip_ws (Cur *c)
{
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
    c->p++;
}

static gboolean
skip_string (Cur *c)
{
  /* c->p is at the opening quote. */
  c->p++;
  while (c->p < c->end)
    {
      unsigned char ch = (unsigned char) *c->p++;
      if (ch == '"')
        return TRUE;
      if (ch < 0x20)
        return FALSE;
      if (ch == '\\')
        {
          if (c->p >= c->end)
            return FALSE;
          c->p++;
        }
    }
  return FALSE;
}

static gboolean
skip_number (Cur *c)
{
  const char *p = c->p;
  if (p < c->end && *p == '-')
    p++;
  if (p >= c->end || !g_ascii_isdigit (*p))
    return FALSE;
  while (p < c->end && g_ascii_isdigit (*p))
    p++;
  if (p < c->end && *p == '.')
    {
      p++;
      if (p >= c->end || !g_ascii_isdigit (*p))
        return FALSE;
      while (p < c->end && g_ascii_isdigit (*p))
        p++;
    }
  if (p < c->end && (*p == 'e' || *p == 'E'))
    {
      p++;
      if (p < c->end && (*p == '+' || *p == '-'))
        p++;
      if (p >= c->end || !g_ascii_isdigit (*p))
        return FALSE;
      while (p < c->end && g_ascii_isdigit (*p))
        p++;
    }
  c->p = p;
  return TRUE;
}

static gboolean
skip_literal (Cur *c, const char *lit)
{
  gsize n = strlen (lit);
  if ((gsize) (c->end - c->p) < n || memcmp (c->p, lit, n) != 0)
    return FALSE;
  c->p += n;
  return TRUE;
}

static gboolean
skip_value (Cur *c, int depth)
{
  if (c->p >= c->end || depth > 64)
    return FALSE;
  switch (*c->p)
    {
    case '"':
      return skip_string (c);
    case 't':
      return skip_literal (c, "true");
    case 'f':
      return skip_literal (c, "false");
    case 'n':
      return skip_literal (c, "null");
    case '{':
    case '[':
      {
        char close = *c->p == '{' ? '}' : ']';
        gboolean obj = close == '}';
        c->p++;
        skip_ws (c);
        if (c->p < c->end && *c->p == close)
          {
            c->p++;
            return TRUE;
          }
        for (;;)
          {
            skip_ws (c);
            if (obj)
              {
                if (c->p >= c->end || *c->p != '"' || !skip_string (c))
                  return FALSE;
                skip_ws (c);
                if (c->p >= c->end || *c->p != ':')
                  return FALSE;
                c->p++;
                skip_ws (c);
              }
            if (!skip_value (c, depth + 1))
              return FALSE;
            skip_ws (c);
            if (c->p >= c->end)
              return FALSE;
            if (*c->p == ',')
              {
                c->p++;
                continue;
              }
            if (*c->p == close)
              {
                c->p++;
                return TRUE;
              }
            return FALSE;
          }
      }
    default:
      return skip_number (c);
    }
}

/* ---- typed values ---- */

#define FAIL(...) (trace_reader_fail (&r->base, error, VS_TRACE_ERROR_INVALID, __VA_ARGS__), FALSE)

static inline gboolean
is_value_end (const Cur *c)
{
  return c->p >= c->end || *c->p == ',' || *c->p == '}' || *c->p == ']' || *c->p == ' ' || *c->p == '\t'
         || *c->p == '\r';
}

/* A non-negative integer up to MAX for the field or key NAME. A number
 * with a fraction or exponent is accepted when integral, or (ROUND)
 * rounded to the nearest integer. */
static gboolean
parse_uint_named (JsonlReader *r, Cur *c, const char *name, guint64 max, gboolean round_it, guint64 *out,
                  GError **error)
{
  const char *p = c->p;
  const char *what = round_it ? "a non-negative number" : "a non-negative integer";
  if (p < c->end && *p == '-')
    {
      Cur t = *c;
      if (!skip_number (&t))
        return FAIL ("field '%s' must be %s", name, what);
      /* -0 (or -0.0e5) is 0. */
      const char *q = c->p + 1;
      while (q < t.p && (*q == '0' || *q == '.'))
        q++;
      if ((q == t.p || *q == 'e' || *q == 'E') && is_value_end (&t))
        {
          c->p = t.p;
          *out = 0;
          return TRUE;
        }
      return FAIL ("field '%s' must not be negative (%.*s)", name, (int) (t.p - c->p), c->p);
    }
  guint64 v = 0;
  const char *start = p;
  while (p < c->end && (unsigned) (*p - '0') < 10)
    {
      unsigned d = (unsigned) (*p - '0');
      if (v > (G_MAXUINT64 - d) / 10)
        {
          v = G_MAXUINT64;
          while (p < c->end && g_ascii_isdigit (*p))
            p++;
          break;
        }
      v = v * 10 + d;
      p++;
    }
  if (p == start)
    return FAIL ("field '%s' must be %s", name, what);
  if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E'))
    {
      /* 1e6 or 1000.0: accepted when integral. */
      Cur t = { start, c->end };
      if (!skip_number (&t) || !is_value_end (&t))
        return FAIL ("field '%s' must be %s", name, what);
      char buf[64];
      gsize n = MIN ((gsize) (t.p - start), sizeof buf - 1);
      memcpy (buf, start, n);
      buf[n] = 0;
      double d = g_ascii_strtod (buf, NULL);
      /* 1e-400 underflows to 0 but is not 0 (nor an integer). */
      if (d == 0 && !round_it)
        for (const char *q = buf; *q && *q != 'e' && *q != 'E'; q++)
          if (*q >= '1' && *q <= '9')
            return FAIL ("field '%s' must be %s (%s)", name, what, buf);
      if (round_it)
        d = floor (d + 0.5);
      if (!(d == floor (d)))
        return FAIL ("field '%s' must be %s (%s)", name, what, buf);
      if (d >= 1.8e19)
        return FAIL ("field '%s' is out of range (%s; at most %" G_GUINT64_FORMAT ")", name, buf, max);
      v = (guint64) d;
      p = t.p;
    }
  Cur t = { p, c->end };
  if (!is_value_end (&t))
    return FAIL ("field '%s' must be %s", name, what);
  if (v > max)
    return FAIL ("field '%s' is out of range (%.*s; at most %" G_GUINT64_FORMAT ")", name, (int) (p - start), start,
                 max);
  c->p = p;
  *out = v;
  return TRUE;
}

static gboolean
parse_uint (JsonlReader *r, Cur *c, int field, guint64 max, guint64 *out, GError **error)
{
  return parse_uint_named (r, c, trace_field_names[field], max, FALSE, out, error);
}

static int
hex4 (const char *p)
{
  int v = 0;
  for (int i = 0; i < 4; i++)
    {
      int d = g_ascii_xdigit_value (p[i]);
      if (d < 0)
        return -1;
      v = v * 16 + d;
    }
  return v;
}

/* Decodes a JSON string into r->scratch. */
static gboolean
parse_string_raw_named (JsonlReader *r, Cur *c, const char *name, GError **error)
{
  if (c->p >= c->end || *c->p != '"')
    return FAIL ("field '%s' must be a string", name);
  GString *s = r->scratch;
  g_string_truncate (s, 0);
  const char *p = c->p + 1;
  for (;;)
    {
      const char *q = p;
      while (q < c->end && *q != '"' && *q != '\\' && (unsigned char) *q >= 0x20)
        q++;
      g_string_append_len (s, p, q - p);
      if (q >= c->end)
        return FAIL ("field '%s': unterminated string", name);
      if (*q == '"')
        {
          c->p = q + 1;
          break;
        }
      if ((unsigned char) *q < 0x20)
        return FAIL ("field '%s': control character in string", name);
      /* Escape. */
      if (q + 1 >= c->end)
        return FAIL ("field '%s': unterminated string", name);
      char e = q[1];
      p = q + 2;
      switch (e)
        {
        case '"': g_string_append_c (s, '"'); break;
        case '\\': g_string_append_c (s, '\\'); break;
        case '/': g_string_append_c (s, '/'); break;
        case 'b': g_string_append_c (s, '\b'); break;
        case 'f': g_string_append_c (s, '\f'); break;
        case 'n': g_string_append_c (s, '\n'); break;
        case 'r': g_string_append_c (s, '\r'); break;
        case 't': g_string_append_c (s, '\t'); break;
        case 'u':
          {
            if (c->end - p < 4 || hex4 (p) < 0)
              return FAIL ("field '%s': bad \\u escape in string", name);
            gunichar u = (gunichar) hex4 (p);
            p += 4;
            if (u >= 0xD800 && u <= 0xDBFF)
              {
                if (c->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4 (p + 2) < 0xDC00 || hex4 (p + 2) > 0xDFFF)
                  return FAIL ("field '%s': unpaired surrogate in string", name);
                u = 0x10000 + ((u - 0xD800) << 10) + ((gunichar) hex4 (p + 2) - 0xDC00);
                p += 6;
              }
            else if (u >= 0xDC00 && u <= 0xDFFF)
              return FAIL ("field '%s': unpaired surrogate in string", name);
            if (u == 0)
              return FAIL ("field '%s': NUL character in string", name);
            g_string_append_unichar (s, u);
            break;
          }
        default:
          return FAIL ("field '%s': bad escape '\\%c' in string", name, e);
        }
    }
  return TRUE;
}

static gboolean
parse_string_raw (JsonlReader *r, Cur *c, int field, GError **error)
{
  return parse_string_raw_named (r, c, trace_field_names[field], error);
}

static gboolean
parse_string (JsonlReader *r, Cur *c, int field, const char **out, GError **error)
{
  if (!parse_string_raw (r, c, field, error))
    return FALSE;
  const char *s = g_hash_table_lookup (r->strings, r->scratch->str);
  if (s == NULL)
    {
      if (!g_utf8_validate (r->scratch->str, r->scratch->len, NULL))
        return FAIL ("field '%s': string is not valid UTF-8", trace_field_names[field]);
      s = g_string_chunk_insert_len (r->chunk, r->scratch->str, r->scratch->len);
      g_hash_table_add (r->strings, (gpointer) s);
    }
  *out = s;
  return TRUE;
}

static gboolean
parse_enum_named (JsonlReader *r, Cur *c, const char *name, int (*lookup) (const char *), const char *expected,
                  guint8 *out, GError **error)
{
  if (!parse_string_raw_named (r, c, name, error))
    return FALSE;
  int v = lookup (r->scratch->str);
  if (v < 0)
    return FAIL ("field '%s': unknown value \"%s\" (expected %s)", name, r->scratch->str, expected);
  *out = (guint8) v;
  return TRUE;
}

static gboolean
parse_enum (JsonlReader *r, Cur *c, int field, int (*lookup) (const char *), const char *expected,
            guint8 *out, GError **error)
{
  return parse_enum_named (r, c, trace_field_names[field], lookup, expected, out, error);
}

static gboolean
parse_bool (JsonlReader *r, Cur *c, int field, gboolean *out, GError **error)
{
  if (skip_literal (c, "true"))
    *out = TRUE;
  else if (skip_literal (c, "false"))
    *out = FALSE;
  else
    return FAIL ("field '%s' must be true or false", trace_field_names[field]);
  return TRUE;
}

static gboolean
parse_ids (JsonlReader *r, Cur *c, int field, IdList *l, GError **error)
{
  l->len = 0;
  if (c->p >= c->end || *c->p != '[')
    return FAIL ("field '%s' must be an array of allocation ids", trace_field_names[field]);
  c->p++;
  skip_ws (c);
  if (c->p < c->end && *c->p == ']')
    {
      c->p++;
      return TRUE;
    }
  for (;;)
    {
      guint64 v;
      skip_ws (c);
      if (c->p < c->end && (*c->p == '"' || *c->p == '[' || *c->p == '{' || *c->p == 't' || *c->p == 'f'
                            || *c->p == 'n'))
        return FAIL ("field '%s' must be an array of allocation ids", trace_field_names[field]);
      if (!parse_uint (r, c, field, VS_TRACE_INT_MAX, &v, error))
        return FALSE;
      if (l->len == l->cap)
        {
          l->cap = MAX (16, l->cap * 2);
          l->v = g_renew (guint64, l->v, l->cap);
        }
      l->v[l->len++] = v;
      skip_ws (c);
      if (c->p < c->end && *c->p == ',')
        {
          c->p++;
          continue;
        }
      if (c->p < c->end && *c->p == ']')
        {
          c->p++;
          return TRUE;
        }
      return FAIL ("field '%s' must be an array of allocation ids", trace_field_names[field]);
    }
}

static const char *const expected_precision = "fp64, fp32, tf32, fp16, bf16, fp8 or int8";
static const char *const expected_collective =
  "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send or recv";

/* A grid or block: [x, y, z], three positive integers below 2^32. */
static gboolean
parse_dim3 (JsonlReader *r, Cur *c, int field, guint32 *out, GError **error)
{
  const char *name = trace_field_names[field];
  if (c->p >= c->end || *c->p != '[')
    return FAIL ("field '%s' must be three positive integers [x, y, z]", name);
  c->p++;
  for (int i = 0; i < 3; i++)
    {
      skip_ws (c);
      guint64 v;
      if (c->p >= c->end || !(g_ascii_isdigit (*c->p) || *c->p == '-'))
        return FAIL ("field '%s' must be three positive integers [x, y, z]", name);
      if (!parse_uint (r, c, field, G_MAXUINT32, &v, error))
        return FALSE;
      if (v == 0)
        return FAIL ("field '%s' must be three positive integers [x, y, z] (%s %c is 0)", name, name, "xyz"[i]);
      out[i] = (guint32) v;
      skip_ws (c);
      if (c->p < c->end && *c->p == (i < 2 ? ',' : ']'))
        c->p++;
      else
        return FAIL ("field '%s' must be three positive integers [x, y, z]", name);
    }
  return TRUE;
}

static const char *const expected_role = "dp, tp, pp, ep or cp";

/* A collective's group: {"id": N, "role": R}, N a positive integer below
 * 2^53 (the communicator), R optional; other keys are ignored. Whether
 * the group agrees with its earlier uses is trace_validate's. */
static gboolean
parse_group (JsonlReader *r, Cur *c, VsCollective *out, GError **error)
{
  if (c->p >= c->end || *c->p != '{')
    return FAIL ("field 'collective.group' must be an object {\"id\": N, \"role\": \"dp\"} (role optional)");
  c->p++;
  guint seen = 0;
  skip_ws (c);
  if (c->p < c->end && *c->p == '}')
    c->p++;
  else
    for (;;)
      {
        skip_ws (c);
        const char *k = c->p + 1;
        skip_string (c);
        gsize kn = (gsize) (c->p - 1 - k);
        skip_ws (c);
        c->p++; /* ':' */
        skip_ws (c);
        int which = kn == 2 && memcmp (k, "id", 2) == 0 ? 0 : kn == 4 && memcmp (k, "role", 4) == 0 ? 1 : -1;
        if (which >= 0 && (seen & (1u << which)))
          return FAIL ("field 'collective.group': key '%.*s' appears twice", (int) kn, k);
        if (which >= 0)
          seen |= 1u << which;
        if (which == 0)
          {
            guint64 v;
            if (!parse_uint_named (r, c, "collective.group.id", VS_GROUP_ID_MAX, FALSE, &v, error))
              return FALSE;
            if (v == 0)
              return FAIL ("field 'collective.group.id' must be positive (0 is no communicator)");
            out->group = v;
          }
        if (which == 1 && !parse_enum_named (r, c, "collective.group.role", event_role_from_name, expected_role,
                                             &out->role, error))
          return FALSE;
        if (which < 0)
          skip_value (c, 2);
        skip_ws (c);
        if (*c->p == ',')
          {
            c->p++;
            continue;
          }
        c->p++; /* '}' */
        break;
      }
  if (!(seen & 1))
    return FAIL ("field 'collective.group': missing key 'id'");
  return TRUE;
}

/* A collective: {"kind": K, "bytes": N, "ranks": R}, all three required,
 * and optionally its "group"; other keys are ignored, as in events. */
static gboolean
parse_collective (JsonlReader *r, Cur *c, VsCollective *out, GError **error)
{
  if (c->p >= c->end || *c->p != '{')
    return FAIL ("field 'collective' must be an object {\"kind\": ..., \"bytes\": ..., \"ranks\": ...}");
  c->p++;
  guint seen = 0;
  guint64 v;
  skip_ws (c);
  if (c->p < c->end && *c->p == '}')
    c->p++;
  else
    for (;;)
      {
        skip_ws (c);
        /* skip_value has checked the object's syntax already. */
        const char *k = c->p + 1;
        skip_string (c);
        gsize kn = (gsize) (c->p - 1 - k);
        skip_ws (c);
        c->p++; /* ':' */
        skip_ws (c);
        int which = kn == 4 && memcmp (k, "kind", 4) == 0 ? 0 : kn == 5 && memcmp (k, "bytes", 5) == 0 ? 1
                    : kn == 5 && memcmp (k, "ranks", 5) == 0 ? 2 : kn == 5 && memcmp (k, "group", 5) == 0 ? 3 : -1;
        if (which >= 0 && (seen & (1u << which)))
          return FAIL ("field 'collective': key '%.*s' appears twice", (int) kn, k);
        if (which >= 0)
          seen |= 1u << which;
        if (which == 0 && !parse_enum_named (r, c, "collective.kind", event_collective_from_name, expected_collective,
                                             &out->kind, error))
          return FALSE;
        if (which == 1)
          {
            if (!parse_uint_named (r, c, "collective.bytes", VS_TRACE_INT_MAX, FALSE, &v, error))
              return FALSE;
            out->bytes = v;
          }
        if (which == 2)
          {
            if (!parse_uint_named (r, c, "collective.ranks", G_MAXUINT32, FALSE, &v, error))
              return FALSE;
            if (v == 0)
              return FAIL ("field 'collective.ranks' must be at least 1");
            out->ranks = (guint32) v;
          }
        if (which == 3 && !parse_group (r, c, out, error))
          return FALSE;
        if (which < 0)
          skip_value (c, 1);
        skip_ws (c);
        if (*c->p == ',')
          {
            c->p++;
            continue;
          }
        c->p++; /* '}' */
        break;
      }
  static const char *const keys[3] = { "kind", "bytes", "ranks" };
  for (int i = 0; i < 3; i++)
    if (!(seen & (1u << i)))
      return FAIL ("field 'collective': missing key '%s'", keys[i]);
  return TRUE;
}

/* ---- one line ---- */

static int
field_from_key (const char *k, gsize n)
{
#define K(s, f) if (n == sizeof s - 1 && memcmp (k, s, n) == 0) return f
  switch (k[0])
    {
    case 't':
      K ("t", VS_F_T); K ("tid", VS_F_TID); K ("tag", VS_F_TAG); K ("touches", VS_F_TOUCHES); K ("to", VS_F_TO);
      break;
    case 'o': K ("op", VS_F_OP); break;
    case 'h': K ("host_ns", VS_F_HOST_NS); break;
    case 'i': K ("id", VS_F_ID); break;
    case 'b': K ("bytes", VS_F_BYTES); K ("block", VS_F_BLOCK); break;
    case 'k': K ("kind", VS_F_KIND); break;
    case 's':
      K ("stream", VS_F_STREAM); K ("src", VS_F_SRC); K ("scope", VS_F_SCOPE); K ("smem", VS_F_SMEM);
      break;
    case 'd': K ("dir", VS_F_DIR); K ("dst", VS_F_DST); K ("dur", VS_F_DUR); break;
    case 'a': K ("async", VS_F_ASYNC); break;
    case 'n': K ("name", VS_F_NAME); break;
    case 'r': K ("reads", VS_F_READS); K ("regs", VS_F_REGS); break;
    case 'w': K ("writes", VS_F_WRITES); break;
    case 'c': K ("compute_ns", VS_F_COMPUTE_NS); K ("collective", VS_F_COLLECTIVE); break;
    case 'f': K ("flops", VS_F_FLOPS); break;
    case 'p': K ("precision", VS_F_PRECISION); break;
    case 'g': K ("grid", VS_F_GRID); break;
    case 'e': K ("event", VS_F_EVENT); break;
    default: break;
    }
#undef K
  return -1;
}

static const char *const expected_kind = "device, managed or pinned";
static const char *const expected_dir = "h2d, d2h, d2d or p2p";
static const char *const expected_scope = "device, stream or event";
static const char *const expected_to = "device or host";

static gboolean
parse_event (JsonlReader *r, const char *line, const char *end, VsEvent *ev, guint32 *present, GError **error)
{
  const char *slot[VS_F_COUNT];
  guint32 seen = 0;
  Cur c = { line, end };
  skip_ws (&c);
  if (c.p >= c.end || *c.p != '{')
    return FAIL ("not a JSON object");
  c.p++;
  skip_ws (&c);
  if (c.p < c.end && *c.p == '}')
    c.p++;
  else
    for (;;)
      {
        skip_ws (&c);
        if (c.p >= c.end || *c.p != '"')
          return FAIL ("invalid JSON: expected a field name in quotes");
        const char *k = c.p + 1;
        if (!skip_string (&c))
          return FAIL ("invalid JSON: bad field name");
        gsize kn = (gsize) (c.p - 1 - k);
        int f = memchr (k, '\\', kn) ? -1 : field_from_key (k, kn);
        skip_ws (&c);
        if (c.p >= c.end || *c.p != ':')
          return FAIL ("invalid JSON: expected ':' after \"%.*s\"", (int) MIN (kn, 64), k);
        c.p++;
        skip_ws (&c);
        if (f >= 0)
          {
            /* A field given twice is an error (as a key twice in a config
             * is): which one was meant is anyone's guess. */
            if (G_UNLIKELY (seen & VS_FB (f)))
              return FAIL ("field '%s' appears twice", trace_field_names[f]);
            slot[f] = c.p;
            seen |= VS_FB (f);
          }
        if (!skip_value (&c, 0))
          return FAIL ("invalid JSON: bad value for \"%.*s\"", (int) MIN (kn, 64), k);
        skip_ws (&c);
        if (c.p < c.end && *c.p == ',')
          {
            c.p++;
            continue;
          }
        if (c.p < c.end && *c.p == '}')
          {
            c.p++;
            break;
          }
        return FAIL ("invalid JSON: expected ',' or '}'");
      }
  skip_ws (&c);
  if (c.p < c.end)
    return FAIL ("invalid JSON: unexpected text after the object");

  memset (ev, 0, sizeof *ev);
  ev->bytes = 0;
  ev->dur = VS_NONE;
  ev->compute_ns = VS_NONE;

  if (!(seen & VS_FB (VS_F_OP)))
    return FAIL ("missing field 'op'");
  Cur v = { slot[VS_F_OP], end };
  if (!parse_string_raw (r, &v, VS_F_OP, error))
    return FALSE;
  int op = event_op_from_name (r->scratch->str);
  if (op < 0)
    return FAIL ("field 'op': unknown op \"%s\"", r->scratch->str);
  ev->op = (guint8) op;
  if (!(seen & VS_FB (VS_F_T)))
    return FAIL ("missing field 't'");

  guint32 want = (seen & (VS_F_COMMON | trace_op_fields[op])) & ~VS_FB (VS_F_OP);
  *present = want | VS_FB (VS_F_OP);
  if (op == VS_OP_KERNEL && !(want & VS_FB (VS_F_BYTES)))
    ev->bytes = VS_NONE;
  if (G_UNLIKELY (want & VS_F_SHAPE))
    {
      r->shape = (VsKernelShape) { .flops = VS_NONE };
      ev->shape = &r->shape;
    }
  guint64 u;
  while (want)
    {
      int f = __builtin_ctz (want);
      want &= want - 1;
      v.p = slot[f];
      switch (f)
        {
        case VS_F_T:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->t, error))
            return FALSE;
          break;
        case VS_F_TID:
          if (!parse_uint (r, &v, f, G_MAXUINT32, &u, error))
            return FALSE;
          ev->tid = (guint32) u;
          break;
        case VS_F_HOST_NS:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->host_ns, error))
            return FALSE;
          break;
        case VS_F_ID:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->id, error))
            return FALSE;
          break;
        case VS_F_BYTES:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->bytes, error))
            return FALSE;
          break;
        case VS_F_KIND:
          if (!parse_enum (r, &v, f, event_kind_from_name, expected_kind, &ev->kind, error))
            return FALSE;
          break;
        case VS_F_STREAM:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->stream, error))
            return FALSE;
          ev->has_stream = TRUE;
          break;
        case VS_F_TAG:
          if (!parse_string (r, &v, f, &ev->tag, error))
            return FALSE;
          break;
        case VS_F_DIR:
          if (!parse_enum (r, &v, f, event_dir_from_name, expected_dir, &ev->dir, error))
            return FALSE;
          break;
        case VS_F_SRC:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->src, error))
            return FALSE;
          break;
        case VS_F_DST:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->dst, error))
            return FALSE;
          break;
        case VS_F_ASYNC:
          if (!parse_bool (r, &v, f, &ev->async, error))
            return FALSE;
          break;
        case VS_F_DUR:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->dur, error))
            return FALSE;
          break;
        case VS_F_NAME:
          if (!parse_string (r, &v, f, &ev->name, error))
            return FALSE;
          break;
        case VS_F_READS:
        case VS_F_WRITES:
        case VS_F_TOUCHES:
          {
            IdList *l = &r->lists[f - VS_F_READS];
            if (!parse_ids (r, &v, f, l, error))
              return FALSE;
            if (f == VS_F_READS)
              ev->reads = l->v, ev->n_reads = (guint32) l->len;
            else if (f == VS_F_WRITES)
              ev->writes = l->v, ev->n_writes = (guint32) l->len;
            else
              ev->touches = l->v, ev->n_touches = (guint32) l->len;
            break;
          }
        case VS_F_COMPUTE_NS:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->compute_ns, error))
            return FALSE;
          break;
        case VS_F_SCOPE:
          if (!parse_enum (r, &v, f, event_scope_from_name, expected_scope, &ev->scope, error))
            return FALSE;
          break;
        case VS_F_EVENT:
          if (!parse_uint (r, &v, f, VS_TRACE_INT_MAX, &ev->event, error))
            return FALSE;
          break;
        case VS_F_TO:
          if (!parse_enum (r, &v, f, event_to_from_name, expected_to, &ev->to, error))
            return FALSE;
          break;
        case VS_F_FLOPS:
          if (!parse_uint_named (r, &v, trace_field_names[f], VS_TRACE_INT_MAX, TRUE, &r->shape.flops, error))
            return FALSE;
          break;
        case VS_F_PRECISION:
          if (!parse_enum (r, &v, f, event_precision_from_name, expected_precision, &r->shape.precision, error))
            return FALSE;
          break;
        case VS_F_GRID:
          if (!parse_dim3 (r, &v, f, r->shape.grid, error))
            return FALSE;
          break;
        case VS_F_BLOCK:
          if (!parse_dim3 (r, &v, f, r->shape.block, error))
            return FALSE;
          break;
        case VS_F_REGS:
          if (!parse_uint (r, &v, f, G_MAXUINT32, &u, error))
            return FALSE;
          r->shape.regs = (guint32) u;
          break;
        case VS_F_SMEM:
          if (!parse_uint (r, &v, f, G_MAXUINT32, &u, error))
            return FALSE;
          r->shape.smem = (guint32) u;
          break;
        case VS_F_COLLECTIVE:
          r->coll = (VsCollective) { 0 };
          if (!parse_collective (r, &v, &r->coll, error))
            return FALSE;
          ev->collective = &r->coll;
          break;
        default:
          g_assert_not_reached ();
        }
    }
  if (op != VS_OP_ALLOC && op != VS_OP_FREE && op != VS_OP_EMPTY_CACHE)
    ev->has_stream = FALSE;
  return TRUE;
}

#undef FAIL

/* The first CR or LF in [p, end), or NULL. */
static const guint8 *
find_cr_or_lf (const guint8 *p, const guint8 *end)
{
  for (; p < end; p++)
    if (*p == '\r' || *p == '\n')
      return p;
  return NULL;
}

/* The next line of a file whose lines end in CR, LF or CRLF (cr_lines):
 * slower than the memchr of next_line, and only for such files. */
static gboolean
next_line_cr (JsonlReader *r, const char **line, const char **end, GError **error)
{
  VsInBuf *in = &r->in;
  for (;;)
    {
      const guint8 *nl = find_cr_or_lf (in->p, in->end);
      /* A CR at the end of the buffer may be the first half of a CRLF. */
      if (nl != NULL && (*nl == '\n' || nl + 1 < in->end || in->eof))
        {
          *line = (const char *) in->p;
          *end = (const char *) nl;
          in->p = nl + 1 + (*nl == '\r' && nl + 1 < in->end && nl[1] == '\n');
          r->base.line++;
          return TRUE;
        }
      if (nl == NULL && in->eof && in->p < in->end)
        {
          *line = (const char *) in->p;
          *end = (const char *) in->end;
          in->p = in->end;
          r->base.line++;
          return TRUE;
        }
      if (in->eof)
        return FALSE;
      if (!inbuf_fill (in, r->base.path, error))
        return FALSE;
    }
}

/* Returns the next line [*line, *end) without its newline; FALSE at EOF. */
static gboolean
next_line (JsonlReader *r, const char **line, const char **end, GError **error)
{
  VsInBuf *in = &r->in;
  if (G_UNLIKELY (r->cr_lines))
    return next_line_cr (r, line, end, error);
  for (;;)
    {
      const guint8 *nl = in->p < in->end ? memchr (in->p, '\n', (gsize) (in->end - in->p)) : NULL;
      if (nl != NULL || (in->eof && in->p < in->end))
        {
          const guint8 *e = nl ? nl : in->end;
          *line = (const char *) in->p;
          *end = (const char *) e;
          in->p = nl ? nl + 1 : in->end;
          r->base.line++;
          return TRUE;
        }
      if (in->eof)
        return FALSE;
      if (!inbuf_fill (in, r->base.path, error))
        return FALSE;
    }
}

static gboolean
jsonl_next (VsTraceReader *base, VsEvent *ev, guint32 *present, GError **error)
{
  JsonlReader *r = (JsonlReader *) base;
  const char *line, *end;
  for (;;)
    {
      if (!next_line (r, &line, &end, error))
        return FALSE;
      const char *p = line;
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
      if (p < end)
        break;
    }
  return parse_event (r, line, end, ev, present, error);
}

static void
jsonl_close (VsTraceReader *base)
{
  JsonlReader *r = (JsonlReader *) base;
  inbuf_close (&r->in);
  g_hash_table_destroy (r->strings);
  g_string_chunk_free (r->chunk);
  g_string_free (r->scratch, TRUE);
  for (int i = 0; i < 3; i++)
    g_free (r->lists[i].v);
  g_free (r);
}

static const VsTraceReaderClass jsonl_class = { jsonl_next, jsonl_close, NULL };

VsTraceReader *
trace_jsonl_open (const char *path, VsInBuf *in, GError **error)
{
  JsonlReader *r = g_new0 (JsonlReader, 1);
  trace_reader_init (&r->base, &jsonl_class, path);
  r->in = *in;
  r->strings = g_hash_table_new (g_str_hash, g_str_equal);
  r->chunk = g_string_chunk_new (4096);
  r->scratch = g_string_sized_new (256);
  const char *line, *end;
  GError *err = NULL;
  /* Line ends: the first one in the file decides. A lone CR (no LF after
   * it) means CR-terminated lines, which would otherwise read as one long
   * header line and lose every event. */
  for (;;)
    {
      const guint8 *nl = find_cr_or_lf (r->in.p, r->in.end);
      if (nl != NULL && (nl + 1 < r->in.end || r->in.eof))
        {
          r->cr_lines = *nl == '\r' && (nl + 1 == r->in.end || nl[1] != '\n');
          break;
        }
      if (r->in.eof)
        break;
      if (!inbuf_fill (&r->in, path, &err))
        goto fail;
    }
  /* The header: the first non-empty line. */
  for (;;)
    {
      if (!next_line (r, &line, &end, &err))
        {
          if (err == NULL)
            g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: empty file, not a trace", path);
          goto fail;
        }
      const char *p = line;
      while (p < end && g_ascii_isspace (*p))
        p++;
      if (p < end)
        break;
    }
  char *where = g_strdup_printf ("%s:%" G_GUINT64_FORMAT, path, r->base.line);
  const char *obj_end = NULL;
  cJSON *obj = cJSON_ParseWithLengthOpts (line, (gsize) (end - line), &obj_end, FALSE);
  if (obj != NULL)
    {
      /* Nothing but blanks after the header object on its line: events
       * there (or a file whose line ends were lost) must not vanish. */
      const char *q = obj_end;
      while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
      if (q < end)
        g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                     "%s: text after the header object (\"%.*s\"): the header is one JSON object alone on "
                     "its line, each event goes on a line of its own", where, (int) MIN (end - q, 20), q);
    }
  if (obj == NULL)
    g_set_error (&err, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE,
                 "%s: not a vramsim trace (the header line is not valid JSON; a profiler trace, such as a "
                 "Kineto JSON, is imported with 'vramsim convert FILE OUT' first)", where);
  else if (err == NULL)
    r->base.header = trace_header_from_json_text (obj, line, (gsize) (end - line), where, &err);
  g_free (where);
  cJSON_Delete (obj);
  if (r->base.header == NULL)
    goto fail;
  return &r->base;

fail:
  g_propagate_error (error, err);
  trace_close (&r->base);
  return NULL;
}

/* ---- writing ---- */

static inline void
append_u64 (GString *s, guint64 v)
{
  char buf[24];
  int n = 0;
  do
    {
      buf[sizeof buf - 1 - n++] = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v);
  g_string_append_len (s, buf + sizeof buf - n, n);
}

static inline void
key (GString *s, const char *k)
{
  g_string_append (s, ", \"");
  g_string_append (s, k);
  g_string_append (s, "\": ");
}

static inline void
kv_u64 (GString *s, const char *k, guint64 v)
{
  key (s, k);
  append_u64 (s, v);
}

static inline void
kv_str (GString *s, const char *k, const char *v)
{
  key (s, k);
  trace_json_append_string (s, v);
}

static void
kv_ids (GString *s, const char *k, const guint64 *ids, guint32 n)
{
  if (n == 0)
    return;
  key (s, k);
  g_string_append_c (s, '[');
  for (guint32 i = 0; i < n; i++)
    {
      if (i)
        g_string_append (s, ", ");
      append_u64 (s, ids[i]);
    }
  g_string_append_c (s, ']');
}

/* A grid or block, unless absent (all 0). */
static void
kv_dim3 (GString *s, const char *k, const guint32 *d)
{
  if ((d[0] | d[1] | d[2]) == 0)
    return;
  key (s, k);
  g_string_append_c (s, '[');
  for (int i = 0; i < 3; i++)
    {
      if (i)
        g_string_append (s, ", ");
      append_u64 (s, d[i]);
    }
  g_string_append_c (s, ']');
}

/* Canonical form: t, op, the op's fields in SPEC order, then tid and
 * host_ns; fields at their default (0, false, absent) are left out, except
 * the stream of a stream sync and the event of an event sync. */
void
trace_json_append_event (GString *s, const VsEvent *ev)
{
  g_string_append (s, "{\"t\": ");
  append_u64 (s, ev->t);
  const char *op = event_op_name (ev->op);
  g_string_append (s, ", \"op\": \"");
  g_string_append (s, op ? op : "?");
  g_string_append_c (s, '"');
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      kv_u64 (s, "id", ev->id);
      kv_u64 (s, "bytes", ev->bytes);
      kv_str (s, "kind", event_kind_name (ev->kind) ? event_kind_name (ev->kind) : "?");
      if (ev->has_stream)
        kv_u64 (s, "stream", ev->stream);
      if (ev->tag)
        kv_str (s, "tag", ev->tag);
      break;
    case VS_OP_FREE:
      kv_u64 (s, "id", ev->id);
      if (ev->has_stream)
        kv_u64 (s, "stream", ev->stream);
      break;
    case VS_OP_COPY:
      kv_str (s, "dir", event_dir_name (ev->dir) ? event_dir_name (ev->dir) : "?");
      if (ev->src)
        kv_u64 (s, "src", ev->src);
      if (ev->dst)
        kv_u64 (s, "dst", ev->dst);
      kv_u64 (s, "bytes", ev->bytes);
      /* fall through */
    case VS_OP_MEMSET:
      if (ev->op == VS_OP_MEMSET)
        {
          kv_u64 (s, "dst", ev->dst);
          kv_u64 (s, "bytes", ev->bytes);
        }
      if (ev->stream)
        kv_u64 (s, "stream", ev->stream);
      if (ev->async)
        g_string_append (s, ", \"async\": true");
      if (ev->dur != VS_NONE)
        kv_u64 (s, "dur", ev->dur);
      break;
    case VS_OP_KERNEL:
      kv_str (s, "name", ev->name ? ev->name : "");
      if (ev->stream)
        kv_u64 (s, "stream", ev->stream);
      if (ev->dur != VS_NONE)
        kv_u64 (s, "dur", ev->dur);
      if (ev->bytes != VS_NONE)
        kv_u64 (s, "bytes", ev->bytes);
      if (ev->compute_ns != VS_NONE)
        kv_u64 (s, "compute_ns", ev->compute_ns);
      kv_ids (s, "reads", ev->reads, ev->n_reads);
      kv_ids (s, "writes", ev->writes, ev->n_writes);
      kv_ids (s, "touches", ev->touches, ev->n_touches);
      if (ev->shape)
        {
          const VsKernelShape *k = ev->shape;
          if (k->flops != VS_NONE)
            kv_u64 (s, "flops", k->flops);
          if (event_precision_name (k->precision))
            kv_str (s, "precision", event_precision_name (k->precision));
          kv_dim3 (s, "grid", k->grid);
          kv_dim3 (s, "block", k->block);
          if (k->regs)
            kv_u64 (s, "regs", k->regs);
          if (k->smem)
            kv_u64 (s, "smem", k->smem);
        }
      if (ev->collective)
        {
          const char *kind = event_collective_name (ev->collective->kind);
          key (s, "collective");
          g_string_append (s, "{\"kind\": ");
          trace_json_append_string (s, kind ? kind : "?");
          g_string_append (s, ", \"bytes\": ");
          append_u64 (s, ev->collective->bytes);
          g_string_append (s, ", \"ranks\": ");
          append_u64 (s, ev->collective->ranks);
          if (ev->collective->group != 0)
            {
              g_string_append (s, ", \"group\": {\"id\": ");
              append_u64 (s, ev->collective->group);
              const char *role = event_role_name (ev->collective->role);
              if (role != NULL)
                {
                  g_string_append (s, ", \"role\": ");
                  trace_json_append_string (s, role);
                }
              g_string_append_c (s, '}');
            }
          g_string_append_c (s, '}');
        }
      break;
    case VS_OP_SYNC:
      kv_str (s, "scope", event_scope_name (ev->scope) ? event_scope_name (ev->scope) : "?");
      if (ev->scope == VS_SYNC_STREAM)
        kv_u64 (s, "stream", ev->stream);
      else if (ev->scope == VS_SYNC_EVENT)
        kv_u64 (s, "event", ev->event);
      break;
    case VS_OP_EVENT_RECORD:
      kv_u64 (s, "event", ev->event);
      if (ev->stream)
        kv_u64 (s, "stream", ev->stream);
      break;
    case VS_OP_STREAM_WAIT:
      if (ev->stream)
        kv_u64 (s, "stream", ev->stream);
      kv_u64 (s, "event", ev->event);
      break;
    case VS_OP_PREFETCH:
      kv_u64 (s, "id", ev->id);
      kv_u64 (s, "bytes", ev->bytes);
      kv_str (s, "to", event_to_name (ev->to) ? event_to_name (ev->to) : "?");
      if (ev->stream)
        kv_u64 (s, "stream", ev->stream);
      break;
    case VS_OP_MARK:
      kv_str (s, "name", ev->name ? ev->name : "");
      break;
    case VS_OP_EMPTY_CACHE:
      if (ev->has_stream)
        kv_u64 (s, "stream", ev->stream);
      break;
    default:
      break;
    }
  if (ev->tid)
    kv_u64 (s, "tid", ev->tid);
  if (ev->host_ns)
    kv_u64 (s, "host_ns", ev->host_ns);
  g_string_append_c (s, '}');
}
