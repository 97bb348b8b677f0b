/* import-comm.c — naming NCCL collectives in profiler traces
 * (docs/importers.md "Collectives"): the kind from an NCCL kernel's name or
 * from the framework op around its launch, and PyTorch dtype sizes for
 * message bytes. Kernel names are NCCL's own (src/device/generate.py,
 * older src/collectives/device/functions.cu): ncclKernel_<Coll>_<Algo>_<Proto>_<Op>_<type>
 * before NCCL 2.19, ncclDevKernel_<Coll>_... since. */
#include "import/import-priv.h"

#include <string.h>

#include "base/xxh64.h"

int
import_coll_kind_from_kernel (const char *name)
{
  if (name == NULL)
    return -1;
  const char *p = NULL;
  if (g_str_has_prefix (name, "ncclKernel_"))
    p = name + strlen ("ncclKernel_");
  else if (g_str_has_prefix (name, "ncclDevKernel_"))
    p = name + strlen ("ncclDevKernel_");
  if (p == NULL)
    return -1;
  static const struct { const char *prefix; int kind; } map[] = {
    { "AllReduce", VS_COLL_ALL_REDUCE },       { "AllGather", VS_COLL_ALL_GATHER },
    { "ReduceScatter", VS_COLL_REDUCE_SCATTER }, { "Broadcast", VS_COLL_BROADCAST },
    { "Reduce", VS_COLL_REDUCE },               { "SendRecv", IMPORT_COLL_SENDRECV },
    { "Send", VS_COLL_SEND },                   { "Recv", VS_COLL_RECV },
  };
  /* Longest names first where one is a prefix of another (ReduceScatter, Reduce). */
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (g_str_has_prefix (p, map[i].prefix))
      return map[i].kind;
  return -1;
}

int
import_coll_kind_from_op (const char *name)
{
  if (name == NULL)
    return -1;
  if (g_str_has_prefix (name, "nccl:"))
    name += 5;
  while (*name == '_')
    name++;
  static const struct { const char *name; int kind; } map[] = {
    { "all_reduce", VS_COLL_ALL_REDUCE },         { "allreduce", VS_COLL_ALL_REDUCE },
    { "allreduce_coalesced", VS_COLL_ALL_REDUCE }, { "all_reduce_coalesced", VS_COLL_ALL_REDUCE },
    { "all_gather", VS_COLL_ALL_GATHER },         { "allgather", VS_COLL_ALL_GATHER },
    { "all_gather_base", VS_COLL_ALL_GATHER },    { "allgather_base", VS_COLL_ALL_GATHER },
    { "all_gather_into_tensor", VS_COLL_ALL_GATHER }, { "allgather_into_tensor_coalesced", VS_COLL_ALL_GATHER },
    { "reduce_scatter", VS_COLL_REDUCE_SCATTER }, { "reduce_scatter_base", VS_COLL_REDUCE_SCATTER },
    { "reduce_scatter_tensor", VS_COLL_REDUCE_SCATTER }, { "reduce_scatter_tensor_coalesced", VS_COLL_REDUCE_SCATTER },
    { "all_to_all", VS_COLL_ALL_TO_ALL },         { "alltoall", VS_COLL_ALL_TO_ALL },
    { "alltoall_base", VS_COLL_ALL_TO_ALL },      { "all_to_allv", VS_COLL_ALL_TO_ALL },
    { "broadcast", VS_COLL_BROADCAST },           { "reduce", VS_COLL_REDUCE },
    { "send", VS_COLL_SEND },                     { "recv", VS_COLL_RECV },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (name, map[i].name) == 0)
      return map[i].kind;
  return -1;
}

guint
import_dtype_bytes (const char *dtype)
{
  if (dtype == NULL)
    return 0;
  if (g_str_has_prefix (dtype, "c10::"))
    dtype += 5;
  static const struct { const char *name; guint bytes; } map[] = {
    { "float", 4 },  { "Float", 4 },  { "float32", 4 }, { "double", 8 }, { "Double", 8 },
    { "Half", 2 },   { "half", 2 },   { "float16", 2 }, { "BFloat16", 2 }, { "bfloat16", 2 },
    { "long", 8 },   { "long int", 8 }, { "Long", 8 }, { "int64_t", 8 }, { "int", 4 }, { "Int", 4 },
    { "short", 2 },  { "Short", 2 },  { "signed char", 1 }, { "Char", 1 }, { "unsigned char", 1 },
    { "Byte", 1 },   { "bool", 1 },   { "Bool", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (dtype, map[i].name) == 0)
      return map[i].bytes;
  return 0;
}

/* ---- PyTorch process groups (docs/importers.md "Collectives") ---- */

/* Group ids below 2^53, so that JSON readers hold them exactly (the
 * trace readers check it). */
#define PG_ID_MAX ((G_GUINT64_CONSTANT (1) << 53) - 1)

guint64
import_pg_group (const char *name)
{
  if (name == NULL || *name == '\0')
    return 0;
  /* "0", "1", ...: the numbers PyTorch gives the groups it makes (up to
   * 15 digits: below 2^53 with the 1 added). */
  gsize len = strlen (name);
  if (len <= 15 && strspn (name, "0123456789") == len)
    return g_ascii_strtoull (name, NULL, 10) + 1;
  /* Any other name (a split group's, a user's): its hash, folded to 53
   * bits as the nsys importer folds NCCL's commHash. */
  guint64 h = vs_xxh64 (name, len, 0);
  guint64 g = (h ^ (h >> 53)) & PG_ID_MAX;
  return g ? g : 1;
}

guint8
import_pg_role (const char *desc)
{
  if (desc == NULL || !g_str_has_prefix (desc, "mesh_"))
    return VS_ROLE_NONE;
  const char *d = desc + strlen ("mesh_");
  static const struct { const char *dim; guint8 role; } map[] = {
    { "tp", VS_ROLE_TP },           { "pp", VS_ROLE_PP },         { "cp", VS_ROLE_CP },
    { "ep", VS_ROLE_EP },           { "dp", VS_ROLE_DP },         { "dp_shard", VS_ROLE_DP },
    { "dp_replicate", VS_ROLE_DP }, { "replicate", VS_ROLE_DP },  { "shard", VS_ROLE_DP },
    { "fsdp", VS_ROLE_DP },         { "ddp", VS_ROLE_DP },        { "hsdp", VS_ROLE_DP },
  };
  for (guint i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (d, map[i].dim) == 0)
      return map[i].role;
  return VS_ROLE_NONE;
}
