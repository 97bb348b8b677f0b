/* trace-common.c — what every file of the trace room may call, and which
 * calls none of them: the error domain (VS_TRACE_ERROR) and the JSON text
 * helpers (a string's escaped form, finding an escaped NUL). The lowest
 * file of the room (docs/architecture.md). */
#include "trace/trace-priv.h"

#include <string.h>

G_DEFINE_QUARK (vs-trace-error-quark, trace_error)

void
trace_json_append_string (GString *s, const char *str)
{
  static const char hex[] = "0123456789abcdef";
  g_string_append_c (s, '"');
  const char *p = str;
  for (;;)
    {
      const char *q = p;
      while (*q && *q != '"' && *q != '\\' && (unsigned char) *q >= 0x20)
        q++;
      g_string_append_len (s, p, q - p);
      if (*q == 0)
        break;
      unsigned char ch = (unsigned char) *q;
      switch (ch)
        {
        case '"': g_string_append (s, "\\\""); break;
        case '\\': g_string_append (s, "\\\\"); break;
        case '\n': g_string_append (s, "\\n"); break;
        case '\t': g_string_append (s, "\\t"); break;
        case '\r': g_string_append (s, "\\r"); break;
        case '\b': g_string_append (s, "\\b"); break;
        case '\f': g_string_append (s, "\\f"); break;
        default:
          g_string_append (s, "\\u00");
          g_string_append_c (s, hex[ch >> 4]);
          g_string_append_c (s, hex[ch & 15]);
        }
      p = q + 1;
    }
  g_string_append_c (s, '"');
}

gsize
trace_json_nul_escape (const char *text, gsize len)
{
  /* An escape is a backslash preceded by an even number of backslashes. */
  const char *end = text + len;
  for (const char *p = text; (p = memchr (p, '\\', (gsize) (end - p))) != NULL; p++)
    if (end - p >= 6 && p[1] == 'u' && memcmp (p + 2, "0000", 4) == 0)
      {
        const char *q = p;
        while (q > text && q[-1] == '\\')
          q--;
        if ((p - q) % 2 == 0)
          return (gsize) (p - text);
      }
  return G_MAXSIZE;
}
