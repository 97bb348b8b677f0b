/* config-priv.h — what the files of the config room share (not an
 * interface for the rest of vramsim: use config.h). The schema's types,
 * then each file's offer, in the order they call each other: a file calls
 * only the ones listed before it (tests/arch.sh checks the includes;
 * docs/architecture.md has the map).
 *
 *   config-value.c    one key's value against its Field; messages
 *   config-presets.c  the preset folder, names -> paths
 *   config-checks.c   the cross-field checks of the sections (and tiers)
 *   config-network.c  the network section: its keys and its checks
 *   config-schema.c   the schema table (every key, one line each)
 *   config-load.c     reading files, `extends`
 *   config-set.c      --set edits
 *   config.c          compiling to VsConfig, config_load, freeing, writing back */
#pragma once

#include <stddef.h>

#include "config/config.h"

/* ---- the schema's types ---- */

typedef enum {
  K_STR,      /* string */
  K_EXTENDS,  /* string or null */
  K_BYTES,    /* size: "80GiB" or a whole number of bytes */
  K_RATE,     /* bandwidth: "2039GB/s" or bytes/s */
  K_TIME,     /* "405ns" or ns */
  K_FRAC,     /* number in (0, 1] */
  K_POS,      /* number > 0 */
  K_COUNT,    /* whole number >= 1 */
  K_UINT,     /* whole number >= 0 */
  K_UNIT,     /* number in [0, 1) */
  K_SIZE_UNL, /* a size, or "unlimited" (stored as G_MAXUINT64) */
  K_FREQ,     /* clock: "1410MHz" (Hz, kHz, MHz, GHz); a bare number other than 0 is refused */
  K_BOOL,
  K_ENUM,
  K_OBJ,
  K_TIERS,    /* array of tier objects */
} Kind;

typedef union {
  const char *s;
  guint64 u;
  double d;
  gboolean b;
  int e;
} Val;

typedef struct Field Field;
/* A section check, run once a section (or one tier) has been compiled:
 * the cross-field rules of the keys it holds. AT is the VsConfig, or the
 * VsTier for a tier; PREFIX names it in messages ("memory", "tiers[1]"). */
typedef gboolean (*FieldCheck) (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);

/* One key of the schema. The table is the one list of keys: unknown-key
 * errors, --set paths, the per-value checks, compiling (where each value
 * goes, its default, whether it is required), writing back
 * (config_to_json) and freeing all read it, so a new key is one line. */
struct Field {
  const char *key;
  Kind kind;
  const Field *sub;               /* K_OBJ, K_TIERS: the keys inside */
  const char *const *choices;     /* K_ENUM */
  gsize at;                       /* leaves: offset of the value in VsConfig (VsTier for tier keys) */
  Val def;                        /* leaves: the value when absent (docs/config.md says why) */
  const char *need;               /* required: what to give, for "required (...)"; NULL: optional */
  gboolean unless_unified;        /* required only when "unified" is false */
  FieldCheck check;               /* K_OBJ, K_TIERS (per tier), K_STR: run after compiling it */
};

/* Where a value is stored, by kind: K_STR char * (owned), K_BYTES
 * guint64, K_RATE/K_TIME/K_FRAC/K_POS/K_UNIT/K_FREQ double, K_COUNT/K_UINT guint,
 * K_SIZE_UNL guint64, K_BOOL
 * gboolean, K_ENUM the enum (int-sized). K_EXTENDS is not stored. */

#define AT(member) .at = offsetof (VsConfig, member)
#define TIER(member) .at = offsetof (VsTier, member)
#define MAX_TIERS 64

/* ---- config-value.c ---- */

const Field *
cfg_field_find (const Field *fields, const char *key);
char *
cfg_field_list (const Field *fields);
char *
cfg_path_join (const char *prefix, const char *key);
char *
cfg_key_hint (const Field *fields, const char *key, const char *path);
void
cfg_fail (GError **error, const char *origin, const char *path, const char *fmt, ...) G_GNUC_PRINTF (4, 5);
const char *
cfg_json_type_name (const cJSON *v);
gboolean
cfg_leaf_value (const Field *f, const cJSON *v, const char *origin, const char *path, Val *out, GError **error);
gboolean
cfg_check_object (const Field *fields, const cJSON *obj, const char *origin, const char *path, GError **error);
gboolean
cfg_check_value (const Field *f, const cJSON *v, const char *origin, const char *path, GError **error);
gboolean
cfg_all_digits (const char *s);
char *
cfg_basename_no_json (const char *path);

/* ---- config-presets.c ---- */

gboolean
cfg_is_preset_name (const char *s);
char *
cfg_preset_path (const char *name, GError **error);

/* ---- config-checks.c: section checks (FieldCheck), and those of the
 * whole config that config_compile runs last ---- */

gboolean
cfg_check_name (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_memory (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_link (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_tier (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_host (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_allocator (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_uvm (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);
gboolean
cfg_check_rate (double bw, double eff, const char *origin, const char *key, const char *eff_key, GError **error);
gboolean
cfg_check_rates (const VsConfig *c, const char *origin, GError **error);
gboolean
cfg_check_capacity_floor (const VsConfig *c, const char *origin, GError **error);
gboolean
cfg_check_compute (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);

/* ---- config-network.c ---- */

extern const Field cfg_network_fields[];
gboolean
cfg_check_network (VsConfig *c, void *at, const char *prefix, const char *origin, GError **error);

/* ---- config-schema.c: the table; the sections --set reaches into ---- */

extern const Field cfg_root_fields[];
extern const Field cfg_compute_fields[];
extern const Field cfg_tier_fields[];

/* ---- config-load.c ---- */

void
cfg_compute_alias_drop (cJSON *compute, const char *key);
cJSON *
cfg_load_json_origin (const char *name_or_path, char **origin, GError **error);
