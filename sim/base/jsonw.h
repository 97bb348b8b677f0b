/* jsonw.h — a cJSON tree written out as text, as cJSON_Print and
 * cJSON_PrintUnformatted write it (cJSON 1.7.15's layout: a tab an
 * object level, `"key":<TAB>value`, `[a, b]`; numbers as below), without
 * their cost: cJSON formats every number with sprintf("%1.15g"), reads it
 * back with sscanf and compares, 3 to 4 thousand instructions a number,
 * most of a report's printing (docs/performance.md, "Start-up").
 *
 * Numbers: null for NaN and infinities; an integral value below 10^15 in
 * magnitude as its digits (what %1.15g prints for it); any other value as
 * %1.15g when that reads back within DBL_EPSILON relative, else %1.17g.
 * Always '.' as the decimal point. */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

/* (transfer full, g_free) ITEM as text, indented when FORMATTED; NULL for
 * a tree cJSON could not print either (an invalid or raw item without a
 * value). */
char *jsonw_print (const cJSON *item, gboolean formatted);
/* (transfer full, g_free) STR as a JSON string, quoted and escaped as
 * jsonw_print writes strings; NULL as "". */
char *jsonw_quote (const char *str);
