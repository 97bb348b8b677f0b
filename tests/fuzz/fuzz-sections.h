/* fuzz-sections.h — inputs made of several files: the sections of DATA
 * between lines "%%VS%%" (the separator, with its newlines, is not part of
 * either side). Not part of vramsim. */
#pragma once

#include <stdint.h>
#include <string.h>

#define FUZZ_SEP "\n%%VS%%\n"

/* Splits DATA into at most MAX sections; returns how many (>= 1). */
static inline unsigned
fuzz_sections (const uint8_t *data, size_t size, const uint8_t **part, size_t *len, unsigned max)
{
  size_t sl = strlen (FUZZ_SEP);
  unsigned n = 0;
  const uint8_t *p = data, *end = data + size;
  while (n + 1 < max)
    {
      const uint8_t *q = NULL;
      for (const uint8_t *c = p; c + sl <= end && q == NULL; c++)
        if (memcmp (c, FUZZ_SEP, sl) == 0)
          q = c;
      if (q == NULL)
        break;
      part[n] = p, len[n] = (size_t) (q - p), n++;
      p = q + sl;
    }
  part[n] = p, len[n] = (size_t) (end - p), n++;
  return n;
}
