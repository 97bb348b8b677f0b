/* event.c — names of the enumerations in event.h. */
#include "trace/event.h"

#include <string.h>

static const char *const op_names[VS_OP_COUNT] = {
  "alloc", "free", "copy", "memset", "kernel", "sync",
  "event_record", "stream_wait", "prefetch", "mark", "empty_cache",
};
static const char *const kind_names[VS_MEM_COUNT] = { "device", "managed", "pinned" };
static const char *const dir_names[VS_DIR_COUNT] = { "h2d", "d2h", "d2d", "p2p" };
static const char *const scope_names[VS_SYNC_COUNT] = { "device", "stream", "event" };
static const char *const to_names[VS_TO_COUNT] = { "device", "host" };
static const char *const prec_names[VS_PREC_COUNT] = {
  NULL, "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8",
};
static const char *const coll_names[VS_COLL_COUNT] = {
  "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send", "recv",
};
static const char *const role_names[VS_ROLE_COUNT] = { NULL, "dp", "tp", "pp", "ep", "cp" };

static int
lookup (const char *const *names, guint n, const char *s)
{
  if (s == NULL)
    return -1;
  for (guint i = 0; i < n; i++)
    if (names[i] != NULL && strcmp (names[i], s) == 0)
      return (int) i;
  return -1;
}

const char *event_op_name (guint op) { return op < VS_OP_COUNT ? op_names[op] : NULL; }
const char *event_kind_name (guint k) { return k < VS_MEM_COUNT ? kind_names[k] : NULL; }
const char *event_dir_name (guint d) { return d < VS_DIR_COUNT ? dir_names[d] : NULL; }
const char *event_scope_name (guint s) { return s < VS_SYNC_COUNT ? scope_names[s] : NULL; }
const char *event_to_name (guint t) { return t < VS_TO_COUNT ? to_names[t] : NULL; }
const char *event_precision_name (guint p) { return p < VS_PREC_COUNT ? prec_names[p] : NULL; }
const char *event_collective_name (guint k) { return k < VS_COLL_COUNT ? coll_names[k] : NULL; }
const char *event_role_name (guint r) { return r < VS_ROLE_COUNT ? role_names[r] : NULL; }
int event_op_from_name (const char *s) { return lookup (op_names, VS_OP_COUNT, s); }
int event_kind_from_name (const char *s) { return lookup (kind_names, VS_MEM_COUNT, s); }
int event_dir_from_name (const char *s) { return lookup (dir_names, VS_DIR_COUNT, s); }
int event_scope_from_name (const char *s) { return lookup (scope_names, VS_SYNC_COUNT, s); }
int event_to_from_name (const char *s) { return lookup (to_names, VS_TO_COUNT, s); }
int event_precision_from_name (const char *s) { return lookup (prec_names, VS_PREC_COUNT, s); }
int event_collective_from_name (const char *s) { return lookup (coll_names, VS_COLL_COUNT, s); }
int event_role_from_name (const char *s) { return lookup (role_names, VS_ROLE_COUNT, s); }
