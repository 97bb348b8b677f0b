/* xxh64.c — XXH64 (xxh64.h). */
#include "base/xxh64.h"

#include <string.h>

#define P1 UINT64_C (0x9E3779B185EBCA87)
#define P2 UINT64_C (0xC2B2AE3D27D4EB4F)
#define P3 UINT64_C (0x165667B19E3779F9)
#define P4 UINT64_C (0x85EBCA77C2B2AE63)
#define P5 UINT64_C (0x27D4EB2F165667C5)

static inline uint64_t
rotl (uint64_t x, int r)
{
  return (x << r) | (x >> (64 - r));
}

/* Little-endian loads, whatever the host. */
static inline uint64_t
read64 (const unsigned char *p)
{
  return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 | (uint64_t) p[3] << 24
         | (uint64_t) p[4] << 32 | (uint64_t) p[5] << 40 | (uint64_t) p[6] << 48 | (uint64_t) p[7] << 56;
}

static inline uint64_t
read32 (const unsigned char *p)
{
  return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 | (uint64_t) p[3] << 24;
}

static inline uint64_t
round64 (uint64_t acc, uint64_t in)
{
  acc += in * P2;
  return rotl (acc, 31) * P1;
}

static inline uint64_t
merge (uint64_t h, uint64_t v)
{
  h ^= round64 (0, v);
  return h * P1 + P4;
}

/* Whole stripes of 32 bytes from P (N of them) into the lanes. */
static void
stripes (uint64_t v[4], const unsigned char *p, size_t n)
{
  uint64_t a = v[0], b = v[1], c = v[2], d = v[3];
  for (; n > 0; n--, p += 32)
    {
      a = round64 (a, read64 (p));
      b = round64 (b, read64 (p + 8));
      c = round64 (c, read64 (p + 16));
      d = round64 (d, read64 (p + 24));
    }
  v[0] = a, v[1] = b, v[2] = c, v[3] = d;
}

void
vs_xxh64_init (VsXxh64 *s, uint64_t seed)
{
  memset (s, 0, sizeof *s);
  s->seed = seed;
  s->v[0] = seed + P1 + P2;
  s->v[1] = seed + P2;
  s->v[2] = seed;
  s->v[3] = seed - P1;
}

void
vs_xxh64_update (VsXxh64 *s, const void *data, size_t len)
{
  const unsigned char *p = data;
  s->total += len;
  if (s->buffered > 0)
    {
      size_t k = 32 - s->buffered;
      if (k > len)
        k = len;
      memcpy (s->buf + s->buffered, p, k);
      s->buffered += (unsigned) k;
      p += k;
      len -= k;
      if (s->buffered < 32)
        return;
      stripes (s->v, s->buf, 1);
      s->buffered = 0;
    }
  stripes (s->v, p, len / 32);
  p += len / 32 * 32;
  len %= 32;
  memcpy (s->buf, p, len);
  s->buffered = (unsigned) len;
}

uint64_t
vs_xxh64_digest (const VsXxh64 *s)
{
  uint64_t h;
  if (s->total >= 32)
    {
      const uint64_t *v = s->v;
      h = rotl (v[0], 1) + rotl (v[1], 7) + rotl (v[2], 12) + rotl (v[3], 18);
      h = merge (h, v[0]);
      h = merge (h, v[1]);
      h = merge (h, v[2]);
      h = merge (h, v[3]);
    }
  else
    h = s->seed + P5;
  h += s->total;
  const unsigned char *p = s->buf, *end = s->buf + s->buffered;
  for (; end - p >= 8; p += 8)
    {
      h ^= round64 (0, read64 (p));
      h = rotl (h, 27) * P1 + P4;
    }
  if (end - p >= 4)
    {
      h ^= read32 (p) * P1;
      h = rotl (h, 23) * P2 + P3;
      p += 4;
    }
  for (; p < end; p++)
    {
      h ^= (uint64_t) *p * P5;
      h = rotl (h, 11) * P1;
    }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t
vs_xxh64 (const void *data, size_t len, uint64_t seed)
{
  VsXxh64 s;
  vs_xxh64_init (&s, seed);
  vs_xxh64_update (&s, data, len);
  return vs_xxh64_digest (&s);
}
