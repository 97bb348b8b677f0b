/* import-priv.h — what the importers (import-kineto.c, import-nsys.c, import-snapshot.c) and the tensor merge share. */
#pragma once

#include <glib.h>
#include <cjson/cJSON.h>

#include "trace/event.h"

/* Ids of the synthetic allocations docs/importers.md describes, far above
 * the ids given to the source's own allocations (1, 2, ...). */
#define IMPORT_PREEXISTING_ID (G_GUINT64_CONSTANT (1) << 40)
#define IMPORT_UNTRACKED_ID (IMPORT_PREEXISTING_ID + 1)
#define IMPORT_PINNED_BASE (IMPORT_PREEXISTING_ID + 16)

/* One event to write, with what import_write() resolves at write time. */
typedef struct {
  VsEvent ev;
  gint64 seq;            /* tie-break among equal t: order of creation */
  gboolean pinned_host;  /* copy: the host side is pinned (a staging buffer is made) */
  gboolean stream_unknown; /* sync: the stream the thread last launched on */
  gboolean has_coll;     /* kernel: coll is its collective */
  VsCollective coll;
  gboolean has_shape;    /* kernel: shape holds what the source says (ev.shape is set at write time) */
  VsKernelShape shape;
} ImportOut;

/* The preset for a device name ("NVIDIA A100-SXM4-80GB" -> "a100-80g"), or NULL. */
const char *import_preset_for_device (const char *name);
/* S as valid UTF-8 (the trace readers reject anything else): S itself, or
 * a copy in CHUNK with each invalid byte replaced by U+FFFD. NULL for NULL. */
const char *import_utf8 (GStringChunk *chunk, const char *s);
/* Sets ERROR (VS_TRACE_ERROR_INVALID) to "PATH: message"; returns FALSE. */
gboolean import_fail (GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
/* Appends an event with absent optional fields; returns it (valid until the next push). */
ImportOut *import_push (GArray *outs, guint64 t, guint32 tid, VsOp op);
/* Sorts by (t, seq). */
void import_sort (GArray *outs);
/* Writes sorted OUTS to OUT_PATH through a VsTraceWriter, adding the
 * synthetic allocations. */
gboolean import_write (GArray *outs, const char *out_path, const char *device, const char *tool, GError **error);

/* ---- collectives (import-comm.c) ---- */

/* The collective an NCCL kernel name runs ("ncclKernel_AllReduce_RING_LL_Sum_float",
 * "ncclDevKernel_AllGather_RING_LL"): a VsCollKind; IMPORT_COLL_SENDRECV for
 * the SendRecv kernel (send, recv or all-to-all: the op says which); -1 when
 * NAME is not an NCCL collective kernel. */
#define IMPORT_COLL_SENDRECV (-2)
int import_coll_kind_from_kernel (const char *name);
/* The collective a framework op names ("nccl:all_reduce", "nccl:_all_gather_base",
 * record_param_comms' "allreduce", "all_to_all", "broadcast", ...); -1 if none. */
int import_coll_kind_from_op (const char *name);
/* Bytes of one element of a PyTorch dtype ("float", "c10::Half", "BFloat16",
 * "Float", "long int", ...); 0 when unknown. */
guint import_dtype_bytes (const char *dtype);
/* The collective.group id of the PyTorch process group named NAME
 * ("Process Group Name", distributedInfo.pg_config's pg_name): a decimal
 * name n is n + 1 ("0", the default group, is 1); any other name its
 * XXH64 folded to 53 bits; 0 (no group) for NULL or "". */
guint64 import_pg_group (const char *name);
/* The role a group's description gives: DeviceMesh describes the groups
 * of a dimension named D "mesh_D" (torch/distributed/device_mesh.py), and
 * tp, pp, cp, ep and the data-parallel names (dp, dp_shard, dp_replicate,
 * replicate, shard, fsdp, ddp, hsdp) are roles; VS_ROLE_NONE for any
 * other description or NULL. */
guint8 import_pg_role (const char *desc);
/* import_write with EXTRA's members added to the header (transfer none; may be NULL). */
gboolean import_write_extra (GArray *outs, const char *out_path, const char *device, const char *tool,
                             const cJSON *extra, GError **error);

/* ---- NCCL NVTX ranges of an Nsight Systems export (import-nccl-nvtx.c) ---- */

typedef struct ImportNccl ImportNccl;
struct sqlite3;

/* ---- an Nsight Systems export opened for reading (import-sqlite.c) ----
 * A SQLite file is not trusted input: its schema can hold views (an
 * endless recursive CTE), virtual tables, triggers and generated columns
 * (a 200 MB string per row). import_sqlite_open opens it read-only with
 * untrusted schema off, triggers and views disabled, SQLITE_LIMIT_* set
 * (values of at most IMPORT_SQL_MAX_VALUE bytes, short SQL, shallow
 * expressions, nothing attached) and a progress handler: each query may
 * run at most IMPORT_SQL_STEPS_PER_BYTE virtual-machine steps per byte of
 * the file plus IMPORT_SQL_STEPS_BASE (import_sqlite_begin starts one's
 * count). import_sqlite_table says whether a table is there, and refuses
 * anything but a plain table of plain columns under that name. */
#define IMPORT_SQL_MAX_VALUE (4 << 20)
#define IMPORT_SQL_STEPS_PER_BYTE 2000
#define IMPORT_SQL_STEPS_BASE G_GUINT64_CONSTANT (100000000)
typedef struct {
  const char *path;
  struct sqlite3 *db;
  guint64 steps, budget;   /* steps of the current query (in 1000s), its bound */
  const char *what;        /* what the current query reads */
} ImportSql;
gboolean import_sqlite_open (ImportSql *q, const char *path, GError **error);
void import_sqlite_close (ImportSql *q);
void import_sqlite_begin (ImportSql *q, const char *what);
/* 1: TABLE is a plain table; 0: there is nothing of that name; -1: ERROR set
 * (a view, a virtual table, a generated column). */
int import_sqlite_table (ImportSql *q, const char *table, GError **error);
/* ERROR for Q's last failed call, naming the file and WHAT ("PATH: WHAT:
 * SQLite's message", or the bound when the progress handler stopped it). */
gboolean import_sqlite_fail (ImportSql *q, const char *what, GError **error);

/* Reads DB's NCCL API ranges and their payloads into *OUT: NULL (and TRUE)
 * when the export has none or lacks the payload columns and tables; FALSE
 * with ERROR ("PATH: TABLE row N: ...") on a broken payload. */
gboolean import_nccl_load (ImportSql *q, const char *path, ImportNccl **out, GError **error);
/* The collective of the NCCL kernel whose launch call started at LAUNCH on
 * thread TID (the NCCL range around it, or the group its ncclGroupEnd
 * launches); FALSE if none, or if that call's collective already went to
 * an earlier kernel. */
gboolean import_nccl_find (ImportNccl *x, guint32 tid, gint64 launch, VsCollective *c);
void import_nccl_free (ImportNccl *x);
