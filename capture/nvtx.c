/* nvtx.c — NVTX ranges and markers as `mark` events, in both modes.
 *
 * NVTX (v2 library and the header-only v3) loads the library named by
 * $NVTX_INJECTION64_PATH the first time the program calls an NVTX function,
 * and calls its InitializeInjectionNvtx2 with the address of that NVTX
 * instance's export table. The shim asks the table for the CORE and CORE2
 * callback modules and writes its own functions into their slots. Every
 * NVTX instance in the process (each library that includes the v3 headers
 * has one) calls the entry point on its own, so it may run several times.
 * vramcap points the variable at the shim unless the user already set it.
 *
 * What is recorded (docs/capture.md): a mark named by the message at every
 * mark, range push and range start; a mark "<message>/end" at every range
 * pop and range end. Push/pop stacks are kept per thread and per domain;
 * ranges started with nvtxRangeStart are remembered by id until they end
 * (on any thread). Names are made valid UTF-8 (wide strings converted,
 * invalid bytes replaced by '?') and cut at NAME_MAX bytes. Domains are not
 * part of the name. Nothing here calls CUDA. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "recorder.h"

int InitializeInjectionNvtx2 (const void *(*get_export_table) (uint32_t));

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define HAVE_NVTX3 1
#endif
#endif

#ifndef HAVE_NVTX3

int
InitializeInjectionNvtx2 (const void *(*get_export_table) (uint32_t))
{
  (void) get_export_table;
  return 0;
}

#else

#define NVTX_NO_IMPL
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>

/* Longest mark name in bytes; longer messages are cut (at a character). */
#define NAME_MAX_BYTES 1024
#define END_SUFFIX "/end"

/* ---- names ---- */

static size_t
put_utf8 (char *out, size_t n, size_t cap, uint32_t c)
{
  char b[4];
  size_t k;
  if (c < 0x80) {
    b[0] = (char) c;
    k = 1;
  } else if (c < 0x800) {
    b[0] = (char) (0xC0 | (c >> 6));
    b[1] = (char) (0x80 | (c & 0x3F));
    k = 2;
  } else if (c < 0x10000) {
    b[0] = (char) (0xE0 | (c >> 12));
    b[1] = (char) (0x80 | ((c >> 6) & 0x3F));
    b[2] = (char) (0x80 | (c & 0x3F));
    k = 3;
  } else {
    b[0] = (char) (0xF0 | (c >> 18));
    b[1] = (char) (0x80 | ((c >> 12) & 0x3F));
    b[2] = (char) (0x80 | ((c >> 6) & 0x3F));
    b[3] = (char) (0x80 | (c & 0x3F));
    k = 4;
  }
  if (n + k >= cap)
    return 0;                   /* does not fit: stop here */
  memcpy (out + n, b, k);
  return k;
}

/* Length of the valid UTF-8 sequence at S, 0 if invalid. */
static size_t
utf8_len (const unsigned char *s)
{
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    return (s[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
  }
  return 0;
}

/* Copies S into OUT (CAP bytes) as valid UTF-8; returns OUT. */
static char *
name_a (const char *s, char *out, size_t cap)
{
  size_t n = 0;
  if (!s) {
    snprintf (out, cap, "(unnamed)");
    return out;
  }
  const unsigned char *p = (const unsigned char *) s;
  while (*p) {
    size_t k = utf8_len (p);
    if (k == 0) {
      if (n + 1 >= cap)
        break;
      out[n++] = '?';
      p++;
      continue;
    }
    if (n + k >= cap)
      break;
    memcpy (out + n, p, k);
    n += k;
    p += k;
  }
  out[n] = 0;
  return out;
}

static char *
name_w (const wchar_t *s, char *out, size_t cap)
{
  size_t n = 0;
  if (!s) {
    snprintf (out, cap, "(unnamed)");
    return out;
  }
  for (; *s; s++) {
    uint32_t c = (uint32_t) *s;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      c = '?';
    size_t k = put_utf8 (out, n, cap, c);
    if (k == 0)
      break;
    n += k;
  }
  out[n] = 0;
  return out;
}

/* ---- registered strings and domains: permanent, deduplicated ---- */

typedef struct Reg { struct Reg *next; char s[]; } Reg;
static Reg *g_strings, *g_domains;
static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *
reg_intern (Reg **list, const char *s)
{
  pthread_mutex_lock (&g_reg_lock);
  Reg *r = *list;
  while (r && strcmp (r->s, s) != 0)
    r = r->next;
  if (!r) {
    size_t n = strlen (s);
    r = malloc (sizeof *r + n + 1);
    if (r) {
      memcpy (r->s, s, n + 1);
      r->next = *list;
      *list = r;
    }
  }
  pthread_mutex_unlock (&g_reg_lock);
  return r ? r->s : NULL;
}

static nvtxStringHandle_t
register_a (nvtxDomainHandle_t d, const char *s)
{
  (void) d;
  char buf[NAME_MAX_BYTES];
  return (nvtxStringHandle_t) (uintptr_t) reg_intern (&g_strings, name_a (s, buf, sizeof buf));
}

static nvtxStringHandle_t
register_w (nvtxDomainHandle_t d, const wchar_t *s)
{
  (void) d;
  char buf[NAME_MAX_BYTES];
  return (nvtxStringHandle_t) (uintptr_t) reg_intern (&g_strings, name_w (s, buf, sizeof buf));
}

static nvtxDomainHandle_t
domain_a (const char *s)
{
  char buf[NAME_MAX_BYTES];
  return (nvtxDomainHandle_t) (uintptr_t) reg_intern (&g_domains, name_a (s, buf, sizeof buf));
}

static nvtxDomainHandle_t
domain_w (const wchar_t *s)
{
  char buf[NAME_MAX_BYTES];
  return (nvtxDomainHandle_t) (uintptr_t) reg_intern (&g_domains, name_w (s, buf, sizeof buf));
}

static void
domain_destroy (nvtxDomainHandle_t d)
{
  (void) d;                     /* handles stay valid: ranges may still name them */
}

/* The message of an event's attributes. */
static char *
name_ex (const nvtxEventAttributes_t *a, char *out, size_t cap)
{
  size_t need = offsetof (nvtxEventAttributes_t, message) + sizeof a->message;
  if (!a || a->size < need) {
    snprintf (out, cap, "(unnamed)");
    return out;
  }
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return name_a (a->message.ascii, out, cap);
  case NVTX_MESSAGE_TYPE_UNICODE:
    return name_w (a->message.unicode, out, cap);
  case NVTX_MESSAGE_TYPE_REGISTERED:
    /* Our handles are our own strings (register_a/w), already clean. */
    return name_a ((const char *) (uintptr_t) a->message.registered, out, cap);
  default:
    snprintf (out, cap, "(unnamed)");
    return out;
  }
}

/* ---- recording ---- */

static void
mark (const char *name)
{
  uint64_t t = cap_now ();
  cap_mark (t, t, name);
}

static void
mark_end (const char *name)
{
  char buf[NAME_MAX_BYTES + sizeof END_SUFFIX];
  snprintf (buf, sizeof buf, "%s" END_SUFFIX, name);
  mark (buf);
}

/* Push/pop: one stack per thread, frames tagged with their domain. */
typedef struct { const void *domain; char *name; } Frame;
typedef struct { Frame *f; int n, cap; } Stack;
static __thread Stack *t_stack;
static pthread_key_t g_stack_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void
stack_free (void *p)
{
  Stack *st = p;
  for (int i = 0; i < st->n; i++)
    free (st->f[i].name);
  free (st->f);
  free (st);
}

static void
make_key (void)
{
  pthread_key_create (&g_stack_key, stack_free);
}

static Stack *
stack (void)
{
  if (!t_stack) {
    pthread_once (&g_key_once, make_key);
    t_stack = calloc (1, sizeof *t_stack);
    if (t_stack)
      pthread_setspecific (g_stack_key, t_stack);
  }
  return t_stack;
}

/* Returns the 0-based level of the new range in its domain. */
static int
push (const void *domain, const char *name)
{
  mark (name);
  Stack *st = stack ();
  if (!st)
    return 0;
  int level = 0;
  for (int i = 0; i < st->n; i++)
    level += st->f[i].domain == domain;
  if (st->n == st->cap) {
    int nc = st->cap ? st->cap * 2 : 16;
    Frame *nf = realloc (st->f, (size_t) nc * sizeof *nf);
    if (!nf)
      return level;             /* not tracked: its pop records nothing */
    st->f = nf;
    st->cap = nc;
  }
  st->f[st->n].domain = domain;
  st->f[st->n].name = strdup (name);
  st->n++;
  return level;
}

/* Returns the level of the range ended, -1 when none is open. */
static int
pop (const void *domain)
{
  Stack *st = t_stack;
  if (!st)
    return -1;
  int i = st->n - 1;
  while (i >= 0 && st->f[i].domain != domain)
    i--;
  if (i < 0)
    return -1;
  int level = 0;
  for (int k = 0; k < i; k++)
    level += st->f[k].domain == domain;
  char *name = st->f[i].name;
  memmove (st->f + i, st->f + i + 1, (size_t) (st->n - i - 1) * sizeof *st->f);
  st->n--;
  if (name)
    mark_end (name);
  free (name);
  return level;
}

/* Start/end: open ranges by id (any thread may end one). */
typedef struct Open { struct Open *next; nvtxRangeId_t id; char name[]; } Open;
#define OPEN_BUCKETS 1024
#define OPEN_MAX 65536          /* open ranges remembered; more end unrecorded */
static Open *g_open[OPEN_BUCKETS];
static size_t g_open_n;
static uint64_t g_next_range = 1;
static pthread_mutex_t g_open_lock = PTHREAD_MUTEX_INITIALIZER;

static nvtxRangeId_t
start (const char *name)
{
  mark (name);
  nvtxRangeId_t id = __atomic_fetch_add (&g_next_range, 1, __ATOMIC_RELAXED);
  size_t n = strlen (name);
  pthread_mutex_lock (&g_open_lock);
  if (g_open_n < OPEN_MAX) {
    Open *o = malloc (sizeof *o + n + 1);
    if (o) {
      o->id = id;
      memcpy (o->name, name, n + 1);
      o->next = g_open[id % OPEN_BUCKETS];
      g_open[id % OPEN_BUCKETS] = o;
      g_open_n++;
    }
  }
  pthread_mutex_unlock (&g_open_lock);
  return id;
}

static void
end (nvtxRangeId_t id)
{
  Open *o = NULL;
  pthread_mutex_lock (&g_open_lock);
  for (Open **pp = &g_open[id % OPEN_BUCKETS]; *pp; pp = &(*pp)->next)
    if ((*pp)->id == id) {
      o = *pp;
      *pp = o->next;
      g_open_n--;
      break;
    }
  pthread_mutex_unlock (&g_open_lock);
  if (o)
    mark_end (o->name);
  free (o);
}

/* ---- the NVTX entry points ---- */

#define NAME_A(s) char buf_[NAME_MAX_BYTES]; const char *nm_ = name_a (s, buf_, sizeof buf_)
#define NAME_W(s) char buf_[NAME_MAX_BYTES]; const char *nm_ = name_w (s, buf_, sizeof buf_)
#define NAME_EX(a) char buf_[NAME_MAX_BYTES]; const char *nm_ = name_ex (a, buf_, sizeof buf_)

static void mark_ex_cb (const nvtxEventAttributes_t *a) { NAME_EX (a); mark (nm_); }
static void mark_a_cb (const char *s) { NAME_A (s); mark (nm_); }
static void mark_w_cb (const wchar_t *s) { NAME_W (s); mark (nm_); }
static nvtxRangeId_t start_ex_cb (const nvtxEventAttributes_t *a) { NAME_EX (a); return start (nm_); }
static nvtxRangeId_t start_a_cb (const char *s) { NAME_A (s); return start (nm_); }
static nvtxRangeId_t start_w_cb (const wchar_t *s) { NAME_W (s); return start (nm_); }
static void end_cb (nvtxRangeId_t id) { end (id); }
static int push_ex_cb (const nvtxEventAttributes_t *a) { NAME_EX (a); return push (NULL, nm_); }
static int push_a_cb (const char *s) { NAME_A (s); return push (NULL, nm_); }
static int push_w_cb (const wchar_t *s) { NAME_W (s); return push (NULL, nm_); }
static int pop_cb (void) { return pop (NULL); }

static void
dmark_cb (nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  (void) d;
  NAME_EX (a);
  mark (nm_);
}

static nvtxRangeId_t
dstart_cb (nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  (void) d;
  NAME_EX (a);
  return start (nm_);
}

static void
dend_cb (nvtxDomainHandle_t d, nvtxRangeId_t id)
{
  (void) d;
  end (id);
}

static int
dpush_cb (nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  NAME_EX (a);
  return push (d, nm_);
}

static int dpop_cb (nvtxDomainHandle_t d) { return pop (d); }

typedef void (*Fn) (void);

static void
fill (const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const Fn *fns, unsigned n)
{
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable (module, &table, &size) || !table)
    return;
  for (unsigned i = 1; i < n && i < size; i++)
    if (fns[i] && table[i])
      *table[i] = (NvtxFunctionPointer) fns[i];
}

/* After fork the child must not find the locks held by threads it lost. */
static void fork_prepare (void) { pthread_mutex_lock (&g_reg_lock); pthread_mutex_lock (&g_open_lock); }
static void fork_parent (void) { pthread_mutex_unlock (&g_open_lock); pthread_mutex_unlock (&g_reg_lock); }

static void
fork_child (void)
{
  pthread_mutex_init (&g_reg_lock, NULL);
  pthread_mutex_init (&g_open_lock, NULL);
}

static void
register_atfork (void)
{
  pthread_atfork (fork_prepare, fork_parent, fork_child);
}

int
InitializeInjectionNvtx2 (const void *(*get_export_table) (uint32_t))
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  cap_init ();
  if (!get_export_table)
    return 0;
  const NvtxExportTableCallbacks *cb = get_export_table (NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
    return 0;
  pthread_once (&once, register_atfork);
  const NvtxExportTableVersionInfo *vi = get_export_table (NVTX_ETID_VERSIONINFO);
  if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
    vi->SetInjectionNvtxVersion (NVTX_VERSION);

  Fn core[NVTX_CBID_CORE_SIZE] = { 0 };
  core[NVTX_CBID_CORE_MarkEx] = (Fn) mark_ex_cb;
  core[NVTX_CBID_CORE_MarkA] = (Fn) mark_a_cb;
  core[NVTX_CBID_CORE_MarkW] = (Fn) mark_w_cb;
  core[NVTX_CBID_CORE_RangeStartEx] = (Fn) start_ex_cb;
  core[NVTX_CBID_CORE_RangeStartA] = (Fn) start_a_cb;
  core[NVTX_CBID_CORE_RangeStartW] = (Fn) start_w_cb;
  core[NVTX_CBID_CORE_RangeEnd] = (Fn) end_cb;
  core[NVTX_CBID_CORE_RangePushEx] = (Fn) push_ex_cb;
  core[NVTX_CBID_CORE_RangePushA] = (Fn) push_a_cb;
  core[NVTX_CBID_CORE_RangePushW] = (Fn) push_w_cb;
  core[NVTX_CBID_CORE_RangePop] = (Fn) pop_cb;
  fill (cb, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE);

  Fn core2[NVTX_CBID_CORE2_SIZE] = { 0 };
  core2[NVTX_CBID_CORE2_DomainMarkEx] = (Fn) dmark_cb;
  core2[NVTX_CBID_CORE2_DomainRangeStartEx] = (Fn) dstart_cb;
  core2[NVTX_CBID_CORE2_DomainRangeEnd] = (Fn) dend_cb;
  core2[NVTX_CBID_CORE2_DomainRangePushEx] = (Fn) dpush_cb;
  core2[NVTX_CBID_CORE2_DomainRangePop] = (Fn) dpop_cb;
  core2[NVTX_CBID_CORE2_DomainRegisterStringA] = (Fn) register_a;
  core2[NVTX_CBID_CORE2_DomainRegisterStringW] = (Fn) register_w;
  core2[NVTX_CBID_CORE2_DomainCreateA] = (Fn) domain_a;
  core2[NVTX_CBID_CORE2_DomainCreateW] = (Fn) domain_w;
  core2[NVTX_CBID_CORE2_DomainDestroy] = (Fn) domain_destroy;
  fill (cb, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE);
  return 1;
}

#endif /* HAVE_NVTX3 */
