/* xxh64.h — XXH64, Yann Collet's 64-bit xxHash (seed given), one shot or
 * streamed: the checksum of a binary trace's records (version 4,
 * docs/trace-format.md). Plain C99 with <stdint.h> only, so that the
 * capture shim (capture/vtrace-writer.c), which links no GLib, builds it
 * too. Written from the algorithm's description
 * (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md);
 * tests/base/test-xxh64.c checks the published vectors. */
#ifndef VS_XXH64_H
#define VS_XXH64_H

#include <stddef.h>
#include <stdint.h>

typedef struct VsXxh64_ {
  uint64_t v[4];          /* the four lanes */
  uint64_t total;         /* bytes taken in all */
  unsigned char buf[32];  /* a stripe not yet complete */
  unsigned buffered;
  uint64_t seed;
} VsXxh64;

void vs_xxh64_init (VsXxh64 *s, uint64_t seed);
void vs_xxh64_update (VsXxh64 *s, const void *data, size_t len);
/* The hash of everything taken so far (S is left as it was). */
uint64_t vs_xxh64_digest (const VsXxh64 *s);
uint64_t vs_xxh64 (const void *data, size_t len, uint64_t seed);

#endif
