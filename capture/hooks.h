/* hooks.h — hook mode (hooks.c): interposed driver API entry points. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Most parameter words looked at per kernel launch. */
#define HOOKS_MAX_WORDS 4096

/* Makes the wrappers record (hook mode proper, or CUPTI's fallback). */
void hooks_start (void);
/* Fills the header's device fields from device 0 (once). */
void hooks_query_device (void);
/* The kernel name's string id and the pointer-sized words of a launch's
 * parameters (WORDS holds HOOKS_MAX_WORDS), for CUPTI mode too. */
uint32_t hooks_kernel_words (void *f, void **params, void **extra, uint64_t *words, size_t *nw);
