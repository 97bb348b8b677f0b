/* hooks.h — hook mode (hooks.c): interposed driver API entry points. */
#pragma once

/* Makes the wrappers record (hook mode proper, or CUPTI's fallback). */
void hooks_start (void);
/* Fills the header's device fields from device 0 (once). */
void hooks_query_device (void);
