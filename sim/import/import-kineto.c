/* import-kineto.c — PyTorch profiler (Kineto) chrome-trace JSON, plain or
 * gzipped, into a vramsim trace. docs/importers.md states what maps and
 * what is dropped; in short:
 * - GPU activity (cat kernel, gpu_memcpy, gpu_memset) becomes kernel, copy
 *   and memset events issued at the host time (ts, host_ns = dur) of the
 *   runtime/driver call with the same args.correlation, on that call's tid;
 *   one with no call is issued at its own GPU start on the busiest thread;
 * - synchronizing runtime calls become syncs, cudaEventRecord and
 *   cudaStreamWaitEvent become event_record / stream_wait where the
 *   cuda_sync events name their streams;
 * - [memory] instant events of the traced CUDA device become allocations
 *   and frees (address -> id), plus one `preexisting` allocation of what was
 *   live before the window (from the first event's "Total Allocated");
 * - user_annotation ranges become mark pairs: NAME at ts, NAME/end at
 *   ts + dur (gpu_user_annotation, the same ranges on the GPU's streams,
 *   are dropped: marks are host-thread events).
 * The whole document is parsed in memory with cJSON: the largest real
 * traces are ~30 MB of JSON, a few hundred MB of tree, acceptable for a
 * one-off import. Times are kept exact to the ns: before parsing, every
 * "ts" number is rewritten relative to the smallest one (doubles cannot
 * hold 1.7e15 µs with three decimals). */
#include "import/import.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <glib/gstdio.h>
#include <cjson/cJSON.h>

#include "import/import-priv.h"
#include "model/kernel-class.h"
#include "trace/trace.h"
#include "trace/trace-priv.h"

/* 2^63: every double below it converts to an integer a trace holds. */
#define TRACE_LIMIT_D 9223372036854775808.0
G_STATIC_ASSERT (VS_TRACE_INT_MAX == (guint64) G_MAXINT64);

/* ---- reading the file ---- */

/* A .json.gz inflates to at most KINETO_GZ_RATIO times its compressed
 * size plus KINETO_GZ_FLOOR (real traces: 9-19 times; deflate can reach
 * 1032): a small file that claims gigabytes is refused once it passes the
 * bound, not inflated and parsed whole. Plain JSON is its own size. */
#define KINETO_GZ_RATIO 64
#define KINETO_GZ_FLOOR (G_GUINT64_CONSTANT (8) << 20)

/* The bound for F (just opened) on PATH: G_MAXUINT64 when not compressed. */
static guint64
inflate_cap (const char *path, gzFile f)
{
  if (gzdirect (f))
    return G_MAXUINT64;
  GStatBuf st;
  guint64 size = g_stat (path, &st) == 0 && S_ISREG (st.st_mode) ? (guint64) st.st_size : 0;
  return size * KINETO_GZ_RATIO + KINETO_GZ_FLOOR;
}

/* Whether PATH holds a JSON object with a top-level "traceEvents" or
 * "schemaVersion" key, wherever it stands: the object's other values
 * (a large "metadata" or "deviceProperties" first) are skimmed, not
 * parsed, so detection does not depend on key order or on the first
 * kilobytes. A vramsim header ends the search at its first key. */
gboolean
import_kineto_detect (const char *path)
{
  if (!g_str_has_suffix (path, ".json") && !g_str_has_suffix (path, ".json.gz"))
    return FALSE;
  gzFile f = gzopen (path, "rb");
  if (f == NULL)
    return FALSE;
  char buf[65536], key[32];
  gsize klen = 0;
  int depth = 0, n;
  gboolean in_str = FALSE, esc = FALSE, want_key = FALSE, is_key = FALSE, found = FALSE, done = FALSE;
  guint64 cap = inflate_cap (path, f), seen = 0;
  while (!done && (n = gzread (f, buf, sizeof buf)) > 0)
    if ((seen += (guint64) n) > cap)
      {
        /* a compressed JSON object past the bound: the import says so */
        found = depth > 0;
        done = TRUE;
      }
    else
    for (int i = 0; i < n && !done; i++)
      {
        char c = buf[i];
        if (depth == 0)
          {
            if (g_ascii_isspace (c))
              continue;
            if (c != '{')
              done = TRUE;
            depth = 1, want_key = TRUE;
            continue;
          }
        if (in_str)
          {
            if (esc)
              esc = FALSE, c = '?';
            else if (c == '\\')
              {
                esc = TRUE;
                continue;
              }
            else if (c == '"')
              {
                in_str = FALSE;
                if (is_key)
                  {
                    key[klen] = '\0';
                    is_key = FALSE;
                    found = strcmp (key, "traceEvents") == 0 || strcmp (key, "schemaVersion") == 0;
                    done = found || strcmp (key, "vramsim_trace") == 0;
                  }
                continue;
              }
            if (is_key && klen < sizeof key - 1)
              key[klen++] = c;
            continue;
          }
        switch (c)
          {
          case '"':
            in_str = TRUE;
            if (depth == 1 && want_key)
              is_key = TRUE, klen = 0, want_key = FALSE;
            break;
          case '{':
          case '[':
            depth++;
            break;
          case '}':
          case ']':
            done = --depth == 0;
            break;
          case ',':
            want_key = depth == 1;
            break;
          default:
            break;
          }
      }
  gzclose (f);
  return found;
}

static char *
slurp (const char *path, gsize *len, GError **error)
{
  gzFile f = gzopen (path, "rb");
  if (f == NULL)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_IO, "%s: cannot open: %s", path, g_strerror (errno));
      return NULL;
    }
  gzbuffer (f, 1 << 20);
  guint64 cap = inflate_cap (path, f);
  GString *s = g_string_sized_new (1 << 20);
  char buf[1 << 16];
  int n;
  while ((n = gzread (f, buf, sizeof buf)) > 0)
    {
      g_string_append_len (s, buf, n);
      if ((guint64) s->len > cap)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                       "%s: decompresses to more than %" G_GUINT64_FORMAT " bytes, the bound for a .json.gz "
                       "(%d times its compressed size + %d MiB; a real trace inflates 9-19 times): "
                       "decompress it yourself if it is real (gunzip -k)", path, cap, KINETO_GZ_RATIO,
                       (int) (KINETO_GZ_FLOOR >> 20));
          gzclose (f);
          g_string_free (s, TRUE);
          return NULL;
        }
    }
  int errnum = Z_OK;
  const char *msg = gzerror (f, &errnum);
  if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: cannot decompress: %s", path,
                   errnum == Z_BUF_ERROR ? "unexpected end of file (truncated?)" : msg);
      gzclose (f);
      g_string_free (s, TRUE);
      return NULL;
    }
  int rc = gzclose (f);
  if (rc != Z_OK)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s: cannot decompress: %s", path,
                   rc == Z_BUF_ERROR ? "unexpected end of file (truncated?)" : "read error");
      g_string_free (s, TRUE);
      return NULL;
    }
  *len = s->len;
  return g_string_free (s, FALSE);
}

/* Finds each "ts": NUMBER; calls fn on the number's span. */
static void
for_each_ts (const char *text, gsize len, void (*fn) (const char *num, gsize n, gpointer data), gpointer data)
{
  const char *end = text + len;
  /* A plain scan: ASan's memmem checks the whole rest of the buffer per call. */
  for (const char *p = text; p + 4 <= end; p++)
    {
      if (p[0] != '"' || p[1] != 't' || p[2] != 's' || p[3] != '"' || (p > text && p[-1] == '\\'))
        continue;
      const char *q = p + 4;
      while (q < end && g_ascii_isspace (*q))
        q++;
      if (q >= end || *q != ':')
        continue;
      q++;
      while (q < end && g_ascii_isspace (*q))
        q++;
      const char *n = q;
      while (q < end && (g_ascii_isdigit (*q) || *q == '.' || *q == '-'))
        q++;
      if (q > n && (q >= end || (*q != 'e' && *q != 'E')))
        fn (n, (gsize) (q - n), data);
    }
}

/* A JSON number without exponent: -?(0|[1-9][0-9]*)(.[0-9]+)? */
static gboolean
plain_number (const char *s, gsize n)
{
  gsize i = s[0] == '-';
  gsize d = i;
  while (i < n && g_ascii_isdigit (s[i]))
    i++;
  if (i == d || (s[d] == '0' && i > d + 1))
    return FALSE;
  if (i == n)
    return TRUE;
  if (s[i] != '.' || i + 1 == n)
    return FALSE;
  for (i++; i < n; i++)
    if (!g_ascii_isdigit (s[i]))
      return FALSE;
  return TRUE;
}

/* The floor of a plain number (-5.5 -> -6); FALSE when it is outside gint64. */
static gboolean
ts_floor (const char *s, gsize n, gint64 *out)
{
  gboolean neg = s[0] == '-', frac = FALSE;
  guint64 v = 0;
  gsize i = neg;
  for (; i < n && s[i] != '.'; i++)
    if (__builtin_mul_overflow (v, 10, &v) || __builtin_add_overflow (v, (guint64) (s[i] - '0'), &v))
      return FALSE;
  for (; i < n; i++)
    frac |= g_ascii_isdigit (s[i]) && s[i] != '0';
  if (!neg)
    {
      if (v > (guint64) G_MAXINT64)
        return FALSE;
      *out = (gint64) v;
      return TRUE;
    }
  if (__builtin_add_overflow (v, (guint64) frac, &v) || v > (guint64) G_MAXINT64 + 1)
    return FALSE;
  *out = v == (guint64) G_MAXINT64 + 1 ? G_MININT64 : -(gint64) v;
  return TRUE;
}

typedef struct { gboolean any; gint64 min; GString *out; const char *copied; } TsRebase;

static void
ts_min (const char *num, gsize n, gpointer data)
{
  TsRebase *m = data;
  gint64 v;
  if (plain_number (num, n) && ts_floor (num, n, &v) && (!m->any || v < m->min))
    {
      m->min = v;
      m->any = TRUE;
    }
}

/* Appends the text up to NUM, then NUM minus the smallest "ts" (exact, in
 * decimal). A number outside gint64, or whose difference is, becomes
 * +-1e300: the mapping then reports it as out of range. Anything else that
 * is not a plain number stays as it is (cJSON judges it). */
static void
ts_rebase (const char *num, gsize n, gpointer data)
{
  TsRebase *m = data;
  g_string_append_len (m->out, m->copied, num - m->copied);
  m->copied = num + n;
  gint64 fl, v;
  if (!plain_number (num, n))
    {
      g_string_append_len (m->out, num, (gssize) n);
      return;
    }
  if (!ts_floor (num, n, &fl) || __builtin_sub_overflow (fl, m->min, &v))
    {
      g_string_append (m->out, num[0] == '-' ? "-1e300" : "1e300");
      return;
    }
  g_string_append_printf (m->out, "%" G_GINT64_FORMAT, v);
  const char *dot = memchr (num, '.', n);
  if (dot == NULL)
    return;
  /* The fraction above the floor: as written for x >= 0; 1 - .F for a
   * negative x with a fraction F that is not all zeros. */
  gsize at = m->out->len, nf = n - (gsize) (dot - num);
  g_string_append_len (m->out, dot, (gssize) nf);
  if (num[0] != '-' || strspn (dot + 1, "0") >= nf - 1)
    return;
  char *f = m->out->str + at + 1;
  gsize k = nf - 1;
  for (gsize i = 0; i < k; i++)
    f[i] = (char) ('9' - (f[i] - '0'));
  for (gsize i = k; i-- > 0;) /* + 1 ulp: F is not zero, so no carry out */
    {
      if (f[i] != '9')
        {
          f[i]++;
          break;
        }
      f[i] = '0';
    }
}

/* TEXT with every "ts" rewritten relative to the smallest one. */
static GString *
rebase_ts (const char *text, gsize len)
{
  TsRebase m = { FALSE, 0, g_string_sized_new (len + len / 16 + 64), text };
  for_each_ts (text, len, ts_min, &m);
  for_each_ts (text, len, ts_rebase, &m);
  g_string_append_len (m.out, m.copied, text + len - m.copied);
  return m.out;
}

/* ---- mapping ---- */

typedef struct { const cJSON *ev; double ts; guint idx; } Gpu;

typedef struct {
  const char *path;
  GArray *outs;
  GStringChunk *chunk;     /* names made valid UTF-8 */
  GHashTable *rt;          /* correlation -> Gpu (the runtime event) */
  GHashTable *rt_used;     /* correlation -> 1 when its GPU work was emitted */
  GHashTable *sync_by_corr;/* correlation -> cJSON cuda_sync event */
  GHashTable *record_stream; /* event record correlation -> stream + 1 */
  GHashTable *comm;        /* tid + 1 -> GArray of CommRange, by ts */
  guint32 world;           /* distributedInfo.world_size, 0 if absent */
  GHashTable *pg_desc;     /* distributedInfo.pg_config: pg_name -> pg_desc (strings of the document); NULL if none */
  GHashTable *cpu_ops;     /* External id -> cJSON cpu_op with shapes or flops */
  GHashTable *ops_by_tid;  /* tid + 1 -> GArray of OpSpan, by start */
  GHashTable *op_kernels;  /* cJSON cpu_op -> kernels it launched: compute-class << 32 | others */
  guint32 main_tid;
  double t0;               /* µs, rebased */
  guint t0_idx;            /* the event at t0 */
} Kin;

static double
num (const cJSON *o, const char *key, double dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  return cJSON_IsNumber (v) ? v->valuedouble : dflt;
}

static const char *
str (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);
  return cJSON_IsString (v) ? v->valuestring : NULL;
}

/* D as an integer, saturated: no undefined conversion of huge values. */
static gint64
i64 (double d)
{
  if (d != d)
    return 0;
  if (!(d > -TRACE_LIMIT_D))
    return G_MININT64;
  if (!(d < TRACE_LIMIT_D))
    return G_MAXINT64;
  return (gint64) d;
}

static gboolean G_GNUC_PRINTF (4, 5)
bad (const Kin *k, guint idx, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: traceEvents[%u]: %s", k->path, idx, msg);
  return FALSE;
}
#define BAD(idx, ...) bad (k, (idx), error, __VA_ARGS__)

/* Event IDX's "ts" (µs, rebased) as ns since t0, at most VS_TRACE_INT_MAX. */
static gboolean
ts_ns (Kin *k, guint idx, double ts_us, guint64 *out, GError **error)
{
  double d = (ts_us - k->t0) * 1000.0;
  if (!(d < TRACE_LIMIT_D))
    return BAD (idx, "'ts' is %g us after the earliest event (traceEvents[%u]): out of range (a trace's times end at "
                "%" G_GUINT64_FORMAT " ns, about 292 years)", (ts_us - k->t0), k->t0_idx, VS_TRACE_INT_MAX);
  *out = d > 0 ? (guint64) llround (d) : 0;
  return TRUE;
}

/* A duration FIELD of event IDX (µs; negative: 0) in ns, at most VS_TRACE_INT_MAX. */
static gboolean
dur_ns (Kin *k, guint idx, const char *field, double us, guint64 *out, GError **error)
{
  double d = us * 1000.0;
  if (!(d < TRACE_LIMIT_D))
    return BAD (idx, "'%s' %g us is out of range (at most %" G_GUINT64_FORMAT " ns)", field, us, VS_TRACE_INT_MAX);
  *out = d > 0 ? (guint64) llround (d) : 0;
  return TRUE;
}

/* A size or id FIELD of event IDX (>= 0), at most VS_TRACE_INT_MAX. */
static gboolean
int_field (Kin *k, guint idx, const char *field, double v, guint64 *out, GError **error)
{
  if (!(v < TRACE_LIMIT_D))
    return BAD (idx, "'%s' %g is out of range (at most %" G_GUINT64_FORMAT ")", field, v, VS_TRACE_INT_MAX);
  *out = v > 0 ? (guint64) v : 0;
  return TRUE;
}

static guint32
tid_of (const cJSON *ev)
{
  const cJSON *t = cJSON_GetObjectItemCaseSensitive (ev, "tid");
  if (cJSON_IsNumber (t))
    return (guint32) (guint64) i64 (t->valuedouble); /* negative tids wrap, as pthread ids printed signed */
  return 0;
}

static gint64
corr_of (const cJSON *ev)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
  return i64 (num (args, "correlation", -1));
}

static gboolean
need (Kin *k, const cJSON *ev, guint idx, const char *what, const char *field, double *out, GError **error)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (strcmp (field, "ts") == 0 || strcmp (field, "dur") == 0
                                                       ? ev : args, field);
  if (!cJSON_IsNumber (v))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: traceEvents[%u]: %s event without a numeric '%s'",
                   k->path, idx, what, field);
      return FALSE;
    }
  *out = v->valuedouble;
  return TRUE;
}

/* The host side of GPU work G: its runtime call, or the GPU start itself. */
static gboolean
host_side (Kin *k, const Gpu *g, guint64 *t, guint32 *tid, guint64 *host_ns, const char **call, GError **error)
{
  gint64 c = corr_of (g->ev);
  const Gpu *rt = c >= 0 ? g_hash_table_lookup (k->rt, &c) : NULL;
  *call = NULL;
  *host_ns = 0;
  if (rt == NULL)
    {
      *tid = k->main_tid;
      return ts_ns (k, g->idx, g->ts, t, error);
    }
  *tid = tid_of (rt->ev);
  *call = str (rt->ev, "name");
  if (!ts_ns (k, rt->idx, rt->ts, t, error))
    return FALSE;
  /* Graph launches start many kernels: the call's cost goes to the first. */
  if (g_hash_table_contains (k->rt_used, &c))
    return TRUE;
  g_hash_table_add (k->rt_used, g_memdup2 (&c, sizeof c));
  return dur_ns (k, rt->idx, "dur", num (rt->ev, "dur", 0), host_ns, error);
}

/* args.stream, else the tid. */
static gboolean
stream_of (Kin *k, const Gpu *g, guint64 *out, GError **error)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (g->ev, "args");
  double s = num (args, "stream", -1);
  if (s < 0)
    {
      *out = tid_of (g->ev);
      return TRUE;
    }
  return int_field (k, g->idx, "args.stream", s, out, error);
}

static gint
gpu_cmp (gconstpointer a, gconstpointer b)
{
  const Gpu *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* ---- collectives (docs/importers.md "Collectives") ---- */

/* A host range that names a collective: PyTorch's `nccl:*` annotation
 * (kind, Input Dims and type) or `record_param_comms` (Collective name,
 * In msg nelems, dtype, Group size). Unknown parts: kind -1, bytes
 * VS_NONE, ranks 0. */
typedef struct {
  double ts, end;   /* µs */
  int kind;
  guint64 bytes;
  guint32 ranks;
  guint64 group;    /* import_pg_group of its process group; 0: not named */
  guint8 role;
} CommRange;

static gboolean
is_comm_range (const char *cat, const char *name)
{
  return (g_strcmp0 (cat, "user_annotation") == 0 && name && g_str_has_prefix (name, "nccl:"))
         || (g_strcmp0 (cat, "cpu_op") == 0 && g_strcmp0 (name, "record_param_comms") == 0);
}

static guint64
msg_bytes (double nelems, const char *dtype)
{
  guint size = import_dtype_bytes (dtype);
  double b = nelems * size;
  return size > 0 && nelems > 0 && b < 4e18 ? (guint64) b : VS_NONE;
}

static void
comm_add (Kin *k, const cJSON *ev, double ts)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
  const char *name = str (ev, "name");
  CommRange r = { ts, ts + num (ev, "dur", 0), -1, VS_NONE, 0, 0, VS_ROLE_NONE };
  if (g_str_has_prefix (name, "nccl:"))
    {
      r.kind = import_coll_kind_from_op (name);
      const cJSON *dims = cJSON_GetObjectItemCaseSensitive (args, "Input Dims");
      const cJSON *types = cJSON_GetObjectItemCaseSensitive (args, "Input type");
      const cJSON *d0 = cJSON_IsArray (dims) ? dims->child : NULL;
      const cJSON *t0 = cJSON_IsArray (types) ? types->child : NULL;
      if (cJSON_IsArray (d0) && d0->child != NULL && cJSON_IsString (t0))
        {
          double n = 1;
          for (const cJSON *x = d0->child; x; x = x->next)
            n *= cJSON_IsNumber (x) ? x->valuedouble : -1;
          r.bytes = msg_bytes (n, t0->valuestring);
        }
    }
  else
    {
      r.kind = import_coll_kind_from_op (str (args, "Collective name"));
      r.bytes = msg_bytes (num (args, "In msg nelems", -1), str (args, "dtype"));
      double gs = num (args, "Group size", 0);
      r.ranks = gs >= 1 && gs < G_MAXUINT32 ? (guint32) gs : 0;
      /* The process group: its name (newer PyTorch; older gives a numeric
       * "Process Group ID"), its description here or in
       * distributedInfo.pg_config. */
      const char *pg = str (args, "Process Group Name");
      g_autofree char *pg_id = NULL;
      double id = num (args, "Process Group ID", -1);
      if (pg == NULL && id >= 0 && id < 1e15 && id == floor (id))
        pg = pg_id = g_strdup_printf ("%.0f", id);
      r.group = import_pg_group (pg);
      const char *desc = str (args, "Process Group Description");
      if (desc == NULL && pg != NULL && k->pg_desc != NULL)
        desc = g_hash_table_lookup (k->pg_desc, pg);
      r.role = r.group != 0 ? import_pg_role (desc) : VS_ROLE_NONE;
    }
  gpointer key = GUINT_TO_POINTER (tid_of (ev) + 1);
  GArray *a = g_hash_table_lookup (k->comm, key);
  if (a == NULL)
    g_hash_table_insert (k->comm, key, a = g_array_new (FALSE, FALSE, sizeof (CommRange)));
  g_array_append_val (a, r);
}

static gint
comm_cmp (gconstpointer a, gconstpointer b)
{
  const CommRange *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The collective of NCCL kernel G: its kind from the name, refined and
 * sized by the comm ranges around its launch call on the launching
 * thread (innermost first); none when the message size stays unknown. */
static void
comm_of (Kin *k, const Gpu *g, const char *name, ImportOut *o)
{
  int kind = import_coll_kind_from_kernel (name);
  if (kind == -1)
    return;
  gint64 c = corr_of (g->ev);
  const Gpu *rt = c >= 0 ? g_hash_table_lookup (k->rt, &c) : NULL;
  GArray *a = rt ? g_hash_table_lookup (k->comm, GUINT_TO_POINTER (tid_of (rt->ev) + 1)) : NULL;
  int op_kind = -1;
  guint64 bytes = VS_NONE, group = 0;
  guint32 ranks = 0;
  guint8 role = VS_ROLE_NONE;
  if (a != NULL && a->len > 0)
    {
      /* Last range starting at or before the call. */
      guint lo = 0, hi = a->len;
      while (lo < hi)
        {
          guint mid = (lo + hi) / 2;
          if (g_array_index (a, CommRange, mid).ts <= rt->ts)
            lo = mid + 1;
          else
            hi = mid;
        }
      /* Nested ranges (record_param_comms around nccl:*) sit just before. */
      for (guint i = lo, seen = 0; i-- > 0 && seen < 4; seen++)
        {
          const CommRange *r = &g_array_index (a, CommRange, i);
          if (r->end < rt->ts)
            continue;
          if (op_kind < 0)
            op_kind = r->kind;
          if (bytes == VS_NONE)
            bytes = r->bytes;
          if (ranks == 0)
            ranks = r->ranks;
          if (group == 0 && r->group != 0)
            group = r->group, role = r->role;
        }
    }
  if (op_kind >= 0 && (kind == IMPORT_COLL_SENDRECV || kind == op_kind
                       || (kind == VS_COLL_ALL_REDUCE && op_kind == VS_COLL_ALL_REDUCE)))
    kind = op_kind;
  if (kind == IMPORT_COLL_SENDRECV)
    kind = VS_COLL_SEND;
  if (ranks == 0)
    ranks = k->world;
  if (bytes == VS_NONE || ranks == 0)
    return;
  o->has_coll = TRUE;
  o->coll = (VsCollective) { .kind = (guint8) kind, .ranks = ranks, .bytes = bytes, .group = group, .role = role };
}

/* ---- what a kernel's work is (SPEC 3 kernel shape) ---- */

static gint64
ext_of (const cJSON *ev)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
  return i64 (num (args, "External id", -1));
}

typedef struct { double ts, end; const cJSON *ev; } OpSpan;

static gint
span_cmp (gconstpointer a, gconstpointer b)
{
  const OpSpan *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The CPU op that launched kernel KEV, or NULL. Older Kineto gives GPU
 * work the External id of its op; newer gives it its correlation (as
 * copies-rank0.json.gz does), and then the op is the innermost one on the
 * launching call's thread whose span holds the call. */
static const cJSON *
launching_op (Kin *k, const cJSON *kev)
{
  gint64 ext = ext_of (kev), c = corr_of (kev);
  if (ext >= 0 && ext != c)
    return g_hash_table_lookup (k->cpu_ops, &ext);
  const Gpu *r = c >= 0 ? g_hash_table_lookup (k->rt, &c) : NULL;
  if (r == NULL)
    return NULL;
  GArray *ops = g_hash_table_lookup (k->ops_by_tid, GUINT_TO_POINTER (tid_of (r->ev) + 1));
  if (ops == NULL || ops->len == 0)
    return NULL;
  guint lo = 0, hi = ops->len;   /* the first span starting after the call */
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (g_array_index (ops, OpSpan, mid).ts <= r->ts)
        lo = mid + 1;
      else
        hi = mid;
    }
  /* Spans nest: the latest-starting one that still holds the call is the
   * innermost. A few steps back suffice (the depth of the op stack). */
  for (guint i = lo, steps = 0; i > 0 && steps < 64; i--, steps++)
    {
      const OpSpan *sp = &g_array_index (ops, OpSpan, i - 1);
      if (sp->end >= r->ts)
        return sp->ev;
    }
  return NULL;
}

static gboolean
compute_class (guint cls)
{
  return cls == VS_KCLASS_GEMM_SIMT || cls == VS_KCLASS_GEMM_TENSOR || cls == VS_KCLASS_CONV
         || cls == VS_KCLASS_ATTENTION;
}

/* args.KEY as [x, y, z] of positive whole numbers into OUT; absent: 0s. */
static gboolean
dim3 (Kin *k, guint idx, const cJSON *args, const char *key, guint32 out[3], GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (args, key);
  if (v == NULL || cJSON_IsNull (v))
    return TRUE;
  if (!cJSON_IsArray (v) || cJSON_GetArraySize (v) != 3)
    return BAD (idx, "kernel 'args.%s' is not [x, y, z]", key);
  for (int i = 0; i < 3; i++)
    {
      double d = cJSON_GetArrayItem (v, i)->valuedouble;
      if (!cJSON_IsNumber (cJSON_GetArrayItem (v, i)) || !(d >= 1) || d != floor (d) || d > G_MAXUINT32)
        return BAD (idx, "kernel 'args.%s' is not three positive whole numbers", key);
      out[i] = (guint32) d;
    }
  return TRUE;
}

/* args.KEY, a whole number >= 0 below 2^32, into OUT; absent: 0. */
static gboolean
count32 (Kin *k, guint idx, const cJSON *args, const char *key, guint32 *out, GError **error)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (args, key);
  if (v == NULL || cJSON_IsNull (v))
    return TRUE;
  if (!cJSON_IsNumber (v) || !(v->valuedouble >= 0) || v->valuedouble > G_MAXUINT32)
    return BAD (idx, "kernel 'args.%s' is not a whole number >= 0", key);
  *out = (guint32) v->valuedouble;
  return TRUE;
}

/* PyTorch's "Input type" names: the precision and the element size. */
static const struct { const char *type; guint8 prec; guint8 size; } input_types[] = {
  { "float", VS_PREC_FP32, 4 }, { "double", VS_PREC_FP64, 8 }, { "c10::Half", VS_PREC_FP16, 2 },
  { "c10::BFloat16", VS_PREC_BF16, 2 }, { "c10::Float8_e4m3fn", VS_PREC_FP8, 1 },
  { "c10::Float8_e5m2", VS_PREC_FP8, 1 }, { "signed char", VS_PREC_INT8, 1 },
  { "long int", VS_PREC_NONE, 8 }, { "int", VS_PREC_NONE, 4 }, { "short int", VS_PREC_NONE, 2 },
  { "unsigned char", VS_PREC_NONE, 1 }, { "bool", VS_PREC_NONE, 1 },
};

/* Fills O's shape from the kernel's args (grid, block, registers, shared
 * memory) and from the CPU op that launched it, joined by External id:
 * its `flops` (recorded with with_flops) for the op's one compute kernel,
 * the precision of its first floating-point input where the kernel's name
 * states none, and for a memory-bound kernel that is the op's only kernel,
 * the bytes of its inputs (plus an output the size of the largest input,
 * except for reductions). docs/importers.md. */
static gboolean
kernel_shape (Kin *k, const cJSON *ev, guint idx, const char *name, ImportOut *o, GError **error)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
  VsKernelShape *s = &o->shape;
  memset (s, 0, sizeof *s);
  s->flops = VS_NONE;
  if (!dim3 (k, idx, args, "grid", s->grid, error) || !dim3 (k, idx, args, "block", s->block, error)
      || !count32 (k, idx, args, "registers per thread", &s->regs, error)
      || !count32 (k, idx, args, "shared memory", &s->smem, error))
    return FALSE;
  o->has_shape = s->grid[0] != 0 || s->block[0] != 0 || s->regs != 0 || s->smem != 0;

  const cJSON *op = launching_op (k, ev);
  if (op == NULL)
    return TRUE;
  const cJSON *oargs = cJSON_GetObjectItemCaseSensitive (op, "args");
  guint64 launched = GPOINTER_TO_SIZE (g_hash_table_lookup (k->op_kernels, op));
  guint n_compute = (guint) (launched >> 32), n_other = (guint) (launched & 0xffffffffu);
  VsKernelKind kind = kernel_class_of (name);

  const cJSON *fl = cJSON_GetObjectItemCaseSensitive (oargs, "flops");
  if (cJSON_IsNumber (fl) && compute_class (kind.cls) && n_compute == 1)
    {
      if (!(fl->valuedouble >= 0) || !(fl->valuedouble < TRACE_LIMIT_D))
        return BAD (idx, "its CPU op (%s) has 'flops' %g: not a count", str (op, "name") ? str (op, "name") : "?",
                    fl->valuedouble);
      s->flops = (guint64) fl->valuedouble;
      o->has_shape = TRUE;
    }

  const cJSON *dims = cJSON_GetObjectItemCaseSensitive (oargs, "Input Dims");
  const cJSON *types = cJSON_GetObjectItemCaseSensitive (oargs, "Input type");
  if (!cJSON_IsArray (dims) || !cJSON_IsArray (types))
    return TRUE;
  double sum = 0, largest = 0;
  guint8 prec = VS_PREC_NONE;
  gboolean sized = TRUE;
  const cJSON *d = dims->child, *t = types->child;
  for (; d != NULL && t != NULL; d = d->next, t = t->next)
    {
      if (!cJSON_IsString (t) || !cJSON_IsArray (d) || t->valuestring[0] == '\0' || d->child == NULL)
        continue;   /* scalars ([] dims), lists of tensors, optional inputs */
      guint size = 0;
      for (gsize i = 0; i < G_N_ELEMENTS (input_types); i++)
        if (strcmp (t->valuestring, input_types[i].type) == 0)
          {
            size = input_types[i].size;
            if (prec == VS_PREC_NONE)
              prec = input_types[i].prec;
          }
      double n = 1;
      for (const cJSON *x = d->child; x != NULL; x = x->next)
        n *= cJSON_IsNumber (x) && x->valuedouble >= 0 ? x->valuedouble : (sized = FALSE, 0);
      if (size == 0)
        sized = FALSE;
      sum += n * size;
      largest = MAX (largest, n * size);
    }
  if (kind.precision == VS_PREC_NONE && prec != VS_PREC_NONE)
    {
      s->precision = prec;
      o->has_shape = TRUE;
    }
  /* Bytes only from ATen's own ops: a compiled graph's op (Inductor's
   * CompiledFunction) lists every input of the graph, not what its one
   * kernel reads. */
  if (kernel_class_memory_bound (kind.cls) && n_compute + n_other == 1 && sized && sum > 0
      && o->ev.bytes == VS_NONE && g_str_has_prefix (str (op, "name") ? str (op, "name") : "", "aten::"))
    {
      double b = kind.cls == VS_KCLASS_REDUCE ? sum : sum + largest;
      if (b < TRACE_LIMIT_D)
        o->ev.bytes = (guint64) b;
    }
  return TRUE;
}

static gboolean
map_gpu (Kin *k, const Gpu *g, GError **error)
{
  const cJSON *ev = g->ev;
  const char *cat = str (ev, "cat"), *name = str (ev, "name");
  double dur, bytes = 0;
  if (!need (k, ev, g->idx, cat, "dur", &dur, error))
    return FALSE;
  if (name == NULL)
    return BAD (g->idx, "%s event without a name", cat);
  guint64 t = 0, host_ns = 0;
  guint32 tid;
  const char *call;
  if (strcmp (cat, "kernel") != 0 && !need (k, ev, g->idx, cat, "bytes", &bytes, error))
    return FALSE;
  if (bytes < 0)
    return BAD (g->idx, "%s event with negative bytes", cat);
  guint64 nbytes = 0, stream = 0, dur_out = 0;
  if (!int_field (k, g->idx, "args.bytes", bytes, &nbytes, error) || !stream_of (k, g, &stream, error)
      || !dur_ns (k, g->idx, "dur", dur, &dur_out, error))
    return FALSE;
  int dir = -1;
  if (strcmp (cat, "gpu_memcpy") == 0)
    {
      if (strstr (name, "HtoD"))
        dir = VS_DIR_H2D;
      else if (strstr (name, "DtoH"))
        dir = VS_DIR_D2H;
      else if (strstr (name, "DtoD"))
        dir = VS_DIR_D2D;
      else if (strstr (name, "PtoP") || strstr (name, "Peer"))
        dir = VS_DIR_P2P;
      else
        return TRUE; /* HtoH, array copies: not modeled (docs/importers.md) */
    }
  if (!host_side (k, g, &t, &tid, &host_ns, &call, error))
    return FALSE;
  /* `async` is whether the host waits (docs/trace-format.md), by CUDA's
   * rules ("API synchronization behavior"), not by the call's name: a
   * synchronous memset of device memory and a synchronous device-to-device
   * or peer copy return without waiting. */
  gboolean async = call == NULL || strstr (call, "Async") != NULL
                   || strcmp (cat, "gpu_memset") == 0 || dir == VS_DIR_D2D || dir == VS_DIR_P2P;
  ImportOut *o;
  if (strcmp (cat, "kernel") == 0)
    {
      o = import_push (k->outs, t, tid, VS_OP_KERNEL);
      o->ev.name = import_utf8 (k->chunk, name);
      comm_of (k, g, name, o);
      if (!kernel_shape (k, ev, g->idx, name, o, error))
        return FALSE;
    }
  else if (strcmp (cat, "gpu_memset") == 0)
    {
      o = import_push (k->outs, t, tid, VS_OP_MEMSET);
      o->ev.dst = IMPORT_UNTRACKED_ID;
      o->ev.bytes = nbytes;
      o->ev.async = async;
    }
  else
    {
      o = import_push (k->outs, t, tid, VS_OP_COPY);
      o->ev.dir = (guint8) dir;
      o->ev.bytes = nbytes;
      o->ev.async = async;
      /* Device sides are untracked device memory; the host side is pageable
       * (id 0) or a pinned staging buffer (import_write). */
      gboolean pinned = strstr (name, "Pinned") != NULL;
      if (dir == VS_DIR_H2D)
        o->ev.dst = IMPORT_UNTRACKED_ID, o->ev.src = 0, o->pinned_host = pinned;
      else if (dir == VS_DIR_D2H)
        o->ev.src = IMPORT_UNTRACKED_ID, o->ev.dst = 0, o->pinned_host = pinned;
      else
        o->ev.src = o->ev.dst = IMPORT_UNTRACKED_ID;
    }
  o->ev.host_ns = host_ns;
  o->ev.stream = stream;
  o->ev.dur = dur_out;
  return TRUE;
}

/* A stream number of the cuda_sync event SYNC (index IDX): -1 when absent. */
static gboolean
sync_stream (Kin *k, const Gpu *sync, const char *field, gint64 *out, GError **error)
{
  const cJSON *args = sync ? cJSON_GetObjectItemCaseSensitive (sync->ev, "args") : NULL;
  double s = num (args, field, -1);
  guint64 v = 0;
  *out = -1;
  if (s < 0)
    return TRUE;
  if (!int_field (k, sync->idx, field, s, &v, error))
    return FALSE;
  *out = (gint64) v;
  return TRUE;
}

/* Runtime calls with no GPU work of their own: syncs, event record/wait. */
static gboolean
map_runtime (Kin *k, const Gpu *g, GError **error)
{
  const cJSON *rt = g->ev;
  const char *name = str (rt, "name");
  if (name == NULL)
    return TRUE;
  gint64 c = corr_of (rt);
  if (g_hash_table_contains (k->rt_used, &c))
    return TRUE;
  const Gpu *sync = c >= 0 ? g_hash_table_lookup (k->sync_by_corr, &c) : NULL;
  const cJSON *sargs = sync ? cJSON_GetObjectItemCaseSensitive (sync->ev, "args") : NULL;
  guint64 t = 0, host_ns = 0;
  gint64 s = -1, ws = -1;
  if (!ts_ns (k, g->idx, g->ts, &t, error) || !dur_ns (k, g->idx, "dur", num (rt, "dur", 0), &host_ns, error)
      || !sync_stream (k, sync, "stream", &s, error) || !sync_stream (k, sync, "wait_on_stream", &ws, error))
    return FALSE;
  guint32 tid = tid_of (rt);
  ImportOut *o = NULL;
  if (g_str_has_prefix (name, "cudaDeviceSynchronize") || g_str_has_prefix (name, "cuCtxSynchronize"))
    {
      o = import_push (k->outs, t, tid, VS_OP_SYNC);
      o->ev.scope = VS_SYNC_DEVICE;
    }
  else if (g_str_has_prefix (name, "cudaStreamSynchronize") || g_str_has_prefix (name, "cuStreamSynchronize"))
    {
      o = import_push (k->outs, t, tid, VS_OP_SYNC);
      if (s >= 0)
        o->ev.scope = VS_SYNC_STREAM, o->ev.stream = (guint64) s;
      else
        o->stream_unknown = TRUE;
    }
  else if (g_str_has_prefix (name, "cudaEventSynchronize") || g_str_has_prefix (name, "cuEventSynchronize"))
    {
      o = import_push (k->outs, t, tid, VS_OP_SYNC);
      gint64 rec = i64 (num (sargs, "wait_on_cuda_event_record_corr_id", -1));
      if (rec >= 0 && g_hash_table_contains (k->record_stream, &rec))
        o->ev.scope = VS_SYNC_EVENT, o->ev.event = (guint64) rec;
      else if (ws >= 0)
        o->ev.scope = VS_SYNC_STREAM, o->ev.stream = (guint64) ws;
      else
        o->stream_unknown = TRUE;
    }
  else if (g_str_has_prefix (name, "cudaEventRecord") || g_str_has_prefix (name, "cuEventRecord"))
    {
      gpointer rs = c >= 0 ? g_hash_table_lookup (k->record_stream, &c) : NULL;
      if (rs == NULL)
        return TRUE;
      o = import_push (k->outs, t, tid, VS_OP_EVENT_RECORD);
      o->ev.event = (guint64) c;
      o->ev.stream = GPOINTER_TO_SIZE (rs) - 1;
    }
  else if (g_str_has_prefix (name, "cudaStreamWaitEvent") || g_str_has_prefix (name, "cuStreamWaitEvent"))
    {
      gint64 rec = i64 (num (sargs, "wait_on_cuda_event_record_corr_id", -1));
      if (rec < 0 || s < 0 || !g_hash_table_contains (k->record_stream, &rec))
        return TRUE;
      o = import_push (k->outs, t, tid, VS_OP_STREAM_WAIT);
      o->ev.stream = (guint64) s;
      o->ev.event = (guint64) rec;
    }
  if (o)
    o->ev.host_ns = host_ns;
  return TRUE;
}

static gboolean
is_gpu_cat (const char *cat)
{
  return cat && (strcmp (cat, "kernel") == 0 || strcmp (cat, "gpu_memcpy") == 0 || strcmp (cat, "gpu_memset") == 0);
}

static gboolean
is_runtime_cat (const char *cat)
{
  return cat && (strcmp (cat, "cuda_runtime") == 0 || strcmp (cat, "cuda_driver") == 0);
}

/* "ProfilerStep#12" -> "ProfilerStep": one mark name per kind of step. */
static const char *
mark_name (GStringChunk *chunk, const char *name)
{
  const char *hash = strrchr (name, '#');
  if (hash && hash > name && hash[1] && strspn (hash + 1, "0123456789") == strlen (hash + 1))
    return import_utf8 (chunk, g_string_chunk_insert_len (chunk, name, hash - name));
  return import_utf8 (chunk, name);
}

/* The key (an id + 1) with the largest count in COUNTS (key -> count), the
 * first met of equal ones; 0 when COUNTS is empty. */
static gsize
most_counted (GHashTable *counts)
{
  GHashTableIter it;
  gpointer key, val;
  gsize best = 0, best_key = 0;
  g_hash_table_iter_init (&it, counts);
  while (g_hash_table_iter_next (&it, &key, &val))
    if (GPOINTER_TO_SIZE (val) > best)
      best = GPOINTER_TO_SIZE (val), best_key = GPOINTER_TO_SIZE (key);
  return best_key;
}

gboolean
import_kineto (const char *path, const char *out_path, GError **error)
{
  gsize len = 0;
  g_autofree char *text = slurp (path, &len, error);
  if (text == NULL)
    return FALSE;
  {
    /* Line numbers stay: only numbers change. */
    GString *r = rebase_ts (text, len);
    g_free (text);
    len = r->len;
    text = g_string_free (r, FALSE);
  }
  gsize nul = trace_json_nul_escape (text, len);
  if (nul != G_MAXSIZE)
    {
      guint line = 1;
      for (gsize i = 0; i < nul; i++)
        line += text[i] == '\n';
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s:%u: a string holds a NUL character (\\u0000): vramsim would cut the name there", path, line);
      return FALSE;
    }
  cJSON *root = cJSON_ParseWithLength (text, len);
  if (root == NULL)
    {
      const char *at = cJSON_GetErrorPtr ();
      guint line = 1;
      if (at && at >= text && at <= text + len)
        for (const char *p = text; p < at; p++)
          line += *p == '\n';
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_PARSE, "%s:%u: not valid JSON%s", path, line,
                   at && at >= text + len ? " (truncated?)" : "");
      return FALSE;
    }
  const cJSON *events = cJSON_GetObjectItemCaseSensitive (root, "traceEvents");
  if (!cJSON_IsObject (root) || !cJSON_IsArray (events))
    {
      cJSON_Delete (root);
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID, "%s: no \"traceEvents\" array: not a Kineto trace",
                   path);
      return FALSE;
    }

  Kin kk = { 0 }, *k = &kk;
  k->path = path;
  k->outs = g_array_new (FALSE, FALSE, sizeof (ImportOut));
  k->rt = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  k->rt_used = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  k->sync_by_corr = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  k->record_stream = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  k->comm = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_array_unref);
  {
    const cJSON *dist = cJSON_GetObjectItemCaseSensitive (root, "distributedInfo");
    double ws = num (dist, "world_size", 0);
    k->world = ws >= 1 && ws < G_MAXUINT32 ? (guint32) ws : 0;
    const cJSON *pc;
    cJSON_ArrayForEach (pc, cJSON_GetObjectItemCaseSensitive (dist, "pg_config"))
      {
        const char *name = str (pc, "pg_name"), *desc = str (pc, "pg_desc");
        if (name == NULL || desc == NULL)
          continue;
        if (k->pg_desc == NULL)
          k->pg_desc = g_hash_table_new (g_str_hash, g_str_equal);
        g_hash_table_insert (k->pg_desc, (gpointer) name, (gpointer) desc);
      }
  }
  k->cpu_ops = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  k->ops_by_tid = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) g_array_unref);
  k->op_kernels = g_hash_table_new (g_direct_hash, g_direct_equal);
  GStringChunk *chunk = g_string_chunk_new (4096);
  k->chunk = chunk;
  GArray *gpus = g_array_new (FALSE, FALSE, sizeof (Gpu));
  GArray *mems = g_array_new (FALSE, FALSE, sizeof (Gpu));
  GArray *runtimes = g_array_new (FALSE, FALSE, sizeof (Gpu));
  GHashTable *tid_calls = g_hash_table_new (g_direct_hash, g_direct_equal);
  GHashTable *pid_ops = g_hash_table_new (g_direct_hash, g_direct_equal);
  gboolean ok = FALSE;
  gboolean any = FALSE;
  double t0 = 0;
  guint t0_idx = 0;

  /* Pass 1: index what links to what. */
  guint idx = 0;
  for (const cJSON *ev = events->child; ev; ev = ev->next, idx++)
    {
      if (!cJSON_IsObject (ev))
        {
          BAD (idx, "not an object");
          goto out;
        }
      const char *cat = str (ev, "cat"), *name = str (ev, "name"), *ph = str (ev, "ph");
      gboolean gpu = is_gpu_cat (cat) && g_strcmp0 (ph, "X") == 0;
      gboolean runtime = is_runtime_cat (cat) && g_strcmp0 (ph, "X") == 0;
      gboolean memory = g_strcmp0 (name, "[memory]") == 0;
      gboolean sync = g_strcmp0 (cat, "cuda_sync") == 0;
      gboolean annot = g_strcmp0 (cat, "user_annotation") == 0 && g_strcmp0 (ph, "X") == 0;
      gboolean comm = is_comm_range (cat, name) && g_strcmp0 (ph, "X") == 0;
      if (g_strcmp0 (cat, "cpu_op") == 0 && !comm)
        {
          /* The ops kernels can learn their shapes from (kernel_shape). */
          const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
          gint64 ext = ext_of (ev);
          if (g_strcmp0 (ph, "X") != 0 || (cJSON_GetObjectItemCaseSensitive (args, "Input Dims") == NULL
                                           && cJSON_GetObjectItemCaseSensitive (args, "flops") == NULL))
            continue;
          if (ext >= 0 && !g_hash_table_contains (k->cpu_ops, &ext))
            g_hash_table_insert (k->cpu_ops, g_memdup2 (&ext, sizeof ext), (gpointer) ev);
          gpointer key = GUINT_TO_POINTER (tid_of (ev) + 1);
          GArray *spans = g_hash_table_lookup (k->ops_by_tid, key);
          if (spans == NULL)
            g_hash_table_insert (k->ops_by_tid, key, spans = g_array_new (FALSE, FALSE, sizeof (OpSpan)));
          double ts = num (ev, "ts", 0);
          OpSpan sp = { ts, ts + MAX (num (ev, "dur", 0), 0), ev };
          g_array_append_val (spans, sp);
          continue;
        }
      if (!(gpu || runtime || memory || sync || annot || comm))
        continue;
      double ts;
      if (!need (k, ev, idx, cat ? cat : name, "ts", &ts, error))
        goto out;
      if (gpu || runtime || memory || annot)
        {
          if (!any || ts < t0)
            t0 = ts, t0_idx = idx;
          any = TRUE;
        }
      Gpu g = { ev, ts, idx };
      gint64 c = corr_of (ev);
      if (comm)
        comm_add (k, ev, ts);
      if (comm && !annot)
        continue;
      if (gpu)
        {
          g_array_append_val (gpus, g);
          gpointer key = GSIZE_TO_POINTER ((gsize) i64 (num (ev, "pid", 0)) + 1);
          g_hash_table_insert (pid_ops, key, GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (pid_ops, key)) + 1));
        }
      else if (runtime)
        {
          if (c >= 0 && !g_hash_table_contains (k->rt, &c))
            g_hash_table_insert (k->rt, g_memdup2 (&c, sizeof c), g_memdup2 (&g, sizeof g));
          g_array_append_val (runtimes, g);
          gpointer key = GUINT_TO_POINTER (tid_of (ev) + 1);
          g_hash_table_insert (tid_calls, key, GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (tid_calls, key)) + 1));
        }
      else if (memory || annot)
        g_array_append_val (mems, g);
      else if (sync)
        {
          const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
          if (c >= 0 && !g_hash_table_contains (k->sync_by_corr, &c))
            g_hash_table_insert (k->sync_by_corr, g_memdup2 (&c, sizeof c), g_memdup2 (&g, sizeof g));
          gint64 rec = i64 (num (args, "wait_on_cuda_event_record_corr_id", -1)), ws;
          if (!sync_stream (k, &g, "wait_on_stream", &ws, error))
            goto out;
          if (rec >= 0 && ws >= 0 && !g_hash_table_contains (k->record_stream, &rec))
            g_hash_table_insert (k->record_stream, g_memdup2 (&rec, sizeof rec), GSIZE_TO_POINTER ((gsize) ws + 1));
        }
    }
  k->t0 = t0;
  k->t0_idx = t0_idx;

  /* What each CPU op launched: kernel_shape gives an op's flops or bytes
   * only to a kernel that is its one kernel of that kind. */
  {
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init (&it, k->ops_by_tid);
    while (g_hash_table_iter_next (&it, &key, &val))
      g_array_sort (val, span_cmp);
    for (guint i = 0; i < gpus->len; i++)
      {
        const cJSON *ev = g_array_index (gpus, Gpu, i).ev;
        if (g_strcmp0 (str (ev, "cat"), "kernel") != 0)
          continue;
        const cJSON *op = launching_op (k, ev);
        if (op == NULL)
          continue;
        guint64 n = GPOINTER_TO_SIZE (g_hash_table_lookup (k->op_kernels, op));
        n += compute_class (kernel_class_of (str (ev, "name")).cls) ? G_GUINT64_CONSTANT (1) << 32 : 1;
        g_hash_table_insert (k->op_kernels, (gpointer) op, GSIZE_TO_POINTER ((gsize) n));
      }
  }

  /* The busiest host thread takes GPU work with no runtime call. */
  gsize busiest = most_counted (tid_calls);
  if (busiest != 0)
    k->main_tid = (guint32) (busiest - 1);
  /* The traced device: the pid most GPU work runs on. */
  gsize most = most_counted (pid_ops);
  gint64 dev = most != 0 ? (gint64) (most - 1) : -1;
  const char *device = NULL;
  const cJSON *props = cJSON_GetObjectItemCaseSensitive (root, "deviceProperties");
  for (const cJSON *p = cJSON_IsArray (props) ? props->child : NULL; p; p = p->next)
    if (device == NULL || i64 (num (p, "id", -2)) == dev)
      {
        if (str (p, "name"))
          device = str (p, "name");
        if (i64 (num (p, "id", -2)) == dev)
          break;
      }
  device = import_utf8 (chunk, device);

  {
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init (&it, k->comm);
    while (g_hash_table_iter_next (&it, NULL, &v))
      g_array_sort (v, comm_cmp);
  }
  /* Pass 2: GPU work in GPU order, so ops of one call keep theirs. */
  g_array_sort (gpus, gpu_cmp);
  for (guint i = 0; i < gpus->len; i++)
    if (!map_gpu (k, &g_array_index (gpus, Gpu, i), error))
      goto out;
  for (guint i = 0; i < runtimes->len; i++)
    if (!map_runtime (k, &g_array_index (runtimes, Gpu, i), error))
      goto out;

  /* Memory events of the traced CUDA device (Device Type 1), in time order. */
  g_array_sort (mems, gpu_cmp);
  guint64 start_reserved = 0;
  {
    GHashTable *live = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
    guint64 next_id = 1;
    gboolean first = TRUE;
    for (guint i = 0; i < mems->len; i++)
      {
        const Gpu *g = &g_array_index (mems, Gpu, i);
        const cJSON *ev = g->ev;
        guint64 t = 0;
        guint32 tid = tid_of (ev);
        if (!ts_ns (k, g->idx, g->ts, &t, error))
          {
            g_hash_table_unref (live);
            goto out;
          }
        if (g_strcmp0 (str (ev, "cat"), "user_annotation") == 0)
          {
            /* A range: a mark where it starts and NAME/end where it ends
             * (docs/trace-format.md), so a replay times the range itself,
             * not the gap to the next mark (a step's first child). */
            const char *name = str (ev, "name");
            if (name == NULL)
              continue;
            const char *mn = mark_name (chunk, name);
            import_push (k->outs, t, tid, VS_OP_MARK)->ev.name = mn;
            guint64 d = 0;
            if (!dur_ns (k, g->idx, "dur", num (ev, "dur", 0), &d, error))
              {
                g_hash_table_unref (live);
                goto out;
              }
            g_autofree char *end = g_strconcat (mn, "/end", NULL);
            import_push (k->outs, t + d, tid, VS_OP_MARK)->ev.name = g_string_chunk_insert_const (chunk, end);
            continue;
          }
        const cJSON *args = cJSON_GetObjectItemCaseSensitive (ev, "args");
        double type = num (args, "Device Type", -1), did = num (args, "Device Id", -1);
        if (type != 1 || (dev >= 0 && i64 (did) != dev))
          continue; /* host memory, or another device: dropped */
        double addr, bytes;
        guint64 nbytes = 0, nbase = 0;
        if (!need (k, ev, g->idx, "[memory]", "Addr", &addr, error)
            || !need (k, ev, g->idx, "[memory]", "Bytes", &bytes, error)
            || !int_field (k, g->idx, "args.Bytes", bytes, &nbytes, error))
          {
            g_hash_table_unref (live);
            goto out;
          }
        /* The address as a key: its bits (no conversion of huge values). */
        gint64 a;
        G_STATIC_ASSERT (sizeof a == sizeof addr);
        addr += 0.0; /* -0 -> +0 */
        memcpy (&a, &addr, sizeof a);
        if (first)
          {
            first = FALSE;
            double total = num (args, "Total Allocated", -1);
            double base = total - bytes;
            /* The cache the window starts on (docs/importers.md): the
             * allocator model seeds it (alloc_seed_cache). */
            double reserved = num (args, "Total Reserved", -1);
            if (reserved > 0 && reserved < 9.0e15)
              start_reserved = (guint64) reserved;
            if (total >= 0 && base > 0 && !int_field (k, g->idx, "args.Total Allocated", base, &nbase, error))
              {
                g_hash_table_unref (live);
                goto out;
              }
            if (total >= 0 && base > 0)
              {
                ImportOut *o = import_push (k->outs, 0, tid, VS_OP_ALLOC);
                o->ev.id = IMPORT_PREEXISTING_ID;
                o->ev.bytes = nbase;
                o->ev.kind = VS_MEM_DEVICE;
                o->ev.tag = "preexisting";
                o->seq = -1; /* before everything at t 0 */
              }
          }
        if (bytes > 0)
          {
            guint64 *old = g_hash_table_lookup (live, &a);
            if (old != NULL)
              {
                import_push (k->outs, t, tid, VS_OP_FREE)->ev.id = *old;
                g_hash_table_remove (live, &a);
              }
            ImportOut *o = import_push (k->outs, t, tid, VS_OP_ALLOC);
            o->ev.id = next_id;
            o->ev.bytes = nbytes;
            o->ev.kind = VS_MEM_DEVICE;
            g_hash_table_insert (live, g_memdup2 (&a, sizeof a), g_memdup2 (&next_id, sizeof next_id));
            next_id++;
          }
        else if (bytes < 0)
          {
            guint64 *id = g_hash_table_lookup (live, &a);
            if (id != NULL)
              {
                import_push (k->outs, t, tid, VS_OP_FREE)->ev.id = *id;
                g_hash_table_remove (live, &a);
              }
          }
      }
    g_hash_table_unref (live);
  }

  if (k->outs->len == 0)
    {
      /* An empty trace is not an answer: say so rather than write one. */
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID,
                   "%s: 0 events imported (no kernels, copies, memsets, [memory] events or "
                   "user_annotation ranges; was the profiler run with activities=[ProfilerActivity.CUDA] "
                   "and profile_memory=True?)", path);
      goto out;
    }
  import_sort (k->outs);
  {
    /* [memory] events are the caching allocator's blocks: tensor-level. */
    cJSON *extra = NULL;
    if (mems->len > 0)
      {
        extra = cJSON_CreateObject ();
        cJSON_AddStringToObject (extra, "allocations", "tensor");
        /* Bytes is the block's size (reportMemoryUsageToProfiler in the
         * caching allocator's malloc passes block->size), not the request. */
        cJSON_AddStringToObject (extra, "allocation_sizes", "block");
        if (start_reserved > 0)
          cJSON_AddNumberToObject (cJSON_AddObjectToObject (extra, "allocator_state"), "reserved_bytes",
                                   (double) start_reserved);
      }
    ok = import_write_extra (k->outs, out_path, device, "vramsim convert (Kineto import)", extra, error);
    cJSON_Delete (extra);
  }

out:
  g_array_unref (k->outs);
  g_hash_table_unref (k->rt);
  g_hash_table_unref (k->rt_used);
  g_hash_table_unref (k->sync_by_corr);
  g_hash_table_unref (k->record_stream);
  g_hash_table_unref (k->comm);
  g_clear_pointer (&k->pg_desc, g_hash_table_unref);
  g_hash_table_unref (k->cpu_ops);
  g_hash_table_unref (k->ops_by_tid);
  g_hash_table_unref (k->op_kernels);
  g_string_chunk_free (chunk);
  g_array_unref (gpus);
  g_array_unref (mems);
  g_array_unref (runtimes);
  g_hash_table_unref (tid_calls);
  g_hash_table_unref (pid_ops);
  cJSON_Delete (root);
  return ok;
}
