/* test-import.c — the Kineto and Nsight Systems importers against real
 * traces: the Kineto files of validation/data/kineto (in the repository),
 * an Nsight Systems export built here (nsys_fixture: the tables and
 * columns the importer reads, expected values by hand) and, when given,
 * the real export validation/data/README.md lists as optional
 * (REAL_TRACES=DIR). The expected counts of the real files are computed
 * here independently of the importers: the Kineto files with zlib +
 * cJSON, the nsys export with SQL queries through libsqlite3. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <zlib.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>

#include "import/import.h"
#include "import/import-priv.h"
#include "trace/trace.h"
#include "test-data.h"

typedef struct {
  guint64 kernels, copies[VS_DIR_COUNT], memsets, allocs, frees;
  guint64 peak_device;       /* live device bytes, all allocations */
  guint64 syncs, marks;
  guint64 not_whole_us;      /* events whose t is not a whole µs */
  char *config;
} Counts;

/* Counts what an imported trace holds, through the trace reader (which
 * also validates it). allocs/frees count the source's own allocations:
 * those without a tag (the importers tag their synthetic ones). */
static void
count_trace (const char *path, Counts *c)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &err);
  g_assert_no_error (err);
  memset (c, 0, sizeof *c);
  const VsTraceHeader *h = trace_reader_header (r);
  c->config = g_strdup (h->config);
  g_autoptr (GHashTable) own = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GHashTable) size = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  guint64 live = 0;
  VsEvent ev;
  while (trace_next (r, &ev, &err) && (c->not_whole_us += ev.t % 1000 != 0, TRUE))
    switch (ev.op)
      {
      case VS_OP_KERNEL: c->kernels++; break;
      case VS_OP_COPY: c->copies[ev.dir]++; break;
      case VS_OP_MEMSET: c->memsets++; break;
      case VS_OP_SYNC: c->syncs++; break;
      case VS_OP_MARK: c->marks++; break;
      case VS_OP_ALLOC:
        if (ev.tag == NULL)
          {
            c->allocs++;
            g_hash_table_add (own, g_memdup2 (&ev.id, 8));
          }
        if (ev.kind == VS_MEM_DEVICE)
          {
            live += ev.bytes;
            c->peak_device = MAX (c->peak_device, live);
            g_hash_table_insert (size, g_memdup2 (&ev.id, 8), g_memdup2 (&ev.bytes, 8));
          }
        break;
      case VS_OP_FREE:
        if (g_hash_table_remove (own, &ev.id))
          c->frees++;
        {
          guint64 *b = g_hash_table_lookup (size, &ev.id);
          if (b)
            {
              live -= *b;
              g_hash_table_remove (size, &ev.id);
            }
        }
        break;
      default: break;
      }
  g_assert_no_error (err);
}

/* ---- Kineto: expected counts straight from the JSON ---- */

static cJSON *
load_json_gz (const char *path)
{
  gzFile f = gzopen (path, "rb");
  g_assert_nonnull (f);
  GString *s = g_string_new (NULL);
  char buf[65536];
  int n;
  while ((n = gzread (f, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  gzclose (f);
  cJSON *root = cJSON_ParseWithLength (s->str, s->len);
  g_string_free (s, TRUE);
  g_assert_nonnull (root);
  return root;
}

static void
count_kineto_source (const char *path, Counts *c)
{
  memset (c, 0, sizeof *c);
  cJSON *root = load_json_gz (path);
  const cJSON *evs = cJSON_GetObjectItem (root, "traceEvents");
  /* The device is the pid most GPU work runs on; memory events of other
   * devices and of the host are not the device's. */
  GHashTable *pids = g_hash_table_new (g_direct_hash, g_direct_equal);
  const cJSON *e;
  cJSON_ArrayForEach (e, evs)
    {
      const cJSON *cat = cJSON_GetObjectItem (e, "cat");
      if (cJSON_IsString (cat) && (!strcmp (cat->valuestring, "kernel") || !strcmp (cat->valuestring, "gpu_memcpy")
                                   || !strcmp (cat->valuestring, "gpu_memset")))
        {
          gpointer k = GINT_TO_POINTER (cJSON_GetObjectItem (e, "pid")->valueint + 1);
          g_hash_table_insert (pids, k, GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (pids, k)) + 1));
        }
    }
  int dev = -1, best = 0;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, pids);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (GPOINTER_TO_INT (v) > best)
      best = GPOINTER_TO_INT (v), dev = GPOINTER_TO_INT (k) - 1;
  g_hash_table_unref (pids);
  double max_total = 0;
  cJSON_ArrayForEach (e, evs)
    {
      const cJSON *cat = cJSON_GetObjectItem (e, "cat"), *name = cJSON_GetObjectItem (e, "name");
      const char *cs = cJSON_IsString (cat) ? cat->valuestring : "";
      const char *ns = cJSON_IsString (name) ? name->valuestring : "";
      if (!strcmp (cs, "kernel"))
        c->kernels++;
      else if (!strcmp (cs, "gpu_memset"))
        c->memsets++;
      else if (!strcmp (cs, "gpu_memcpy"))
        {
          if (strstr (ns, "HtoD"))
            c->copies[VS_DIR_H2D]++;
          else if (strstr (ns, "DtoH"))
            c->copies[VS_DIR_D2H]++;
          else if (strstr (ns, "DtoD"))
            c->copies[VS_DIR_D2D]++;
          else if (strstr (ns, "PtoP"))
            c->copies[VS_DIR_P2P]++;
        }
      else if (!strcmp (ns, "[memory]"))
        {
          const cJSON *a = cJSON_GetObjectItem (e, "args");
          if (cJSON_GetObjectItem (a, "Device Type")->valueint != 1
              || cJSON_GetObjectItem (a, "Device Id")->valueint != dev)
            continue;
          double b = cJSON_GetObjectItem (a, "Bytes")->valuedouble;
          c->allocs += b > 0;
          c->frees += b < 0;
          max_total = MAX (max_total, cJSON_GetObjectItem (a, "Total Allocated")->valuedouble);
        }
    }
  c->peak_device = (guint64) max_total;
  cJSON_Delete (root);
}

static void
check_kineto (const char *rel, const char *preset, gboolean has_memory)
{
  g_autofree char *src = test_data (rel);
  if (src == NULL)
    return;
  g_assert_true (import_kineto_detect (src));
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_kineto (src, out, &err));
  g_assert_no_error (err);
  Counts want, got;
  count_kineto_source (src, &want);
  count_trace (out, &got);
  g_assert_cmpuint (got.kernels, ==, want.kernels);
  for (guint d = 0; d < VS_DIR_COUNT; d++)
    g_assert_cmpuint (got.copies[d], ==, want.copies[d]);
  g_assert_cmpuint (got.memsets, ==, want.memsets);
  g_assert_cmpuint (got.allocs, ==, want.allocs);
  g_assert_cmpuint (got.frees, ==, want.frees);
  if (has_memory)
    {
      g_assert_cmpuint (want.allocs, >, 0);
      g_assert_cmpuint (got.peak_device, ==, want.peak_device);
    }
  g_assert_cmpstr (got.config, ==, preset);
  /* Times keep their nanoseconds: ns-resolution's timestamps have three
   * decimals in µs (1712195495519689.047), more digits than a double
   * holds; most of its imported times must not be whole µs. */
  if (strstr (rel, "ns-resolution"))
    g_assert_cmpuint (got.not_whole_us, >, 1000);
  else
    g_assert_cmpuint (got.not_whole_us, ==, 0);
  g_free (got.config);
  g_unlink (out);
  g_rmdir (dir);
}

/* Device names to presets (import_preset_for_device, docs/importers.md),
 * as the profilers write them. */
static void
test_preset_for_device (void)
{
  static const struct { const char *name, *preset; } cases[] = {
    { "NVIDIA A40", "a40" }, { "NVIDIA RTX A4000", NULL }, { "NVIDIA L40S", "l40s" },
    { "NVIDIA A100-SXM4-80GB", "a100-80g" }, { "NVIDIA A100-PCIE-40GB", "a100-40g" },
    { "NVIDIA H100 PCIe", "h100-pcie" }, { "NVIDIA GeForce RTX 3090", "rtx3090" }, { "Tesla T4", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    g_assert_cmpstr (import_preset_for_device (cases[i].name), ==, cases[i].preset);
}

static void test_kineto_alexnet (void) { check_kineto ("kineto/alexnet-a100.json.gz", "a100-40g", FALSE); }
static void test_kineto_multistream (void) { check_kineto ("kineto/event-sync-multistream.json.gz", "a100-40g", FALSE); }
static void test_kineto_memory (void) { check_kineto ("kineto/memory-profile-v100.json.gz", "v100-sxm2-32g", TRUE); }
static void test_kineto_copies (void) { check_kineto ("kineto/copies-rank0.json.gz", "a100-80g", FALSE); }
static void test_kineto_ns (void) { check_kineto ("kineto/ns-resolution-rank0.json.gz", "v100-sxm2-32g", FALSE); }
/* (check_kineto also checks that this file's times keep their nanoseconds) */
static void test_kineto_sampled (void) { check_kineto ("kineto/sampled-rank0.json.gz", NULL, FALSE); }
static void test_kineto_diff (void) { check_kineto ("kineto/trace-diff-control.json.gz", "a100-40g", FALSE); }

/* Event record / wait and the syncs of the multistream file, by hand:
 * 3 of its 4 cudaEventRecord calls are named by a cuda_sync event (the
 * fourth's stream is unknown), 1 cudaStreamWaitEvent, 1 cudaDeviceSynchronize
 * (its Event Sync records belong to non-blocking cudaEventQuery calls). */
static void
test_kineto_events (void)
{
  g_autofree char *src = test_data ("kineto/event-sync-multistream.json.gz");
  if (src == NULL)
    return;
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_kineto (src, out, &err));
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  g_assert_no_error (err);
  guint records = 0, waits = 0, syncs = 0;
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    {
      records += ev.op == VS_OP_EVENT_RECORD;
      syncs += ev.op == VS_OP_SYNC && ev.scope == VS_SYNC_DEVICE;
      if (ev.op == VS_OP_STREAM_WAIT)
        {
          waits++;
          g_assert_cmpuint (ev.stream, ==, 24);
          g_assert_cmpuint (ev.event, ==, 1385);
        }
    }
  g_assert_no_error (err);
  g_assert_cmpuint (records, ==, 3);
  g_assert_cmpuint (waits, ==, 1);
  g_assert_cmpuint (syncs, ==, 1);
  g_unlink (out);
  g_rmdir (dir);
}

static void
expect_bad (const char *name, const void *data, gsize len, gboolean gz)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, name, NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  if (gz)
    {
      gzFile f = gzopen (in, "wb");
      gzwrite (f, data, (unsigned) len);
      gzclose (f);
    }
  else
    g_assert_true (g_file_set_contents (in, data, (gssize) len, NULL));
  g_autoptr (GError) err = NULL;
  g_assert_false (import_kineto (in, out, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, in));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (in);
  g_rmdir (dir);
}

static void
test_kineto_bad (void)
{
  const char *cut = "{\"schemaVersion\": 1, \"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1";
  expect_bad ("cut.json", cut, strlen (cut), FALSE);
  expect_bad ("cut.json.gz", cut, strlen (cut), TRUE);
  const char *no_dur = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"pid\": 0, \"tid\": 7}]}";
  expect_bad ("nodur.json", no_dur, strlen (no_dur), FALSE);
  const char *no_events = "{\"schemaVersion\": 1}";
  expect_bad ("empty.json", no_events, strlen (no_events), FALSE);

  /* A real gz file cut in half: zlib reports the truncation. */
  g_autofree char *src = test_data ("kineto/alexnet-a100.json.gz");
  if (src != NULL)
    {
      g_autofree char *bytes = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (src, &bytes, &len, NULL));
      g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
      g_autofree char *in = g_build_filename (dir, "half.json.gz", NULL);
      g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
      g_assert_true (g_file_set_contents (in, bytes, (gssize) (len / 2), NULL));
      g_autoptr (GError) err = NULL;
      g_assert_false (import_kineto (in, out, &err));
      g_assert_nonnull (strstr (err->message, in));
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      g_unlink (in);
      g_rmdir (dir);
    }
}

/* ---- An Nsight Systems export made here ---- */

/* Writes PATH: an Nsight Systems SQLite export GENERATED by this test (not
 * a capture; nobody ran a GPU to make it), so that the nsys importer is
 * exercised on every table and column it reads without the real export we
 * may not redistribute. Tables and columns: those of an `nsys export
 * --type sqlite` file (CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY /
 * SYNCHRONIZATION / RUNTIME, TARGET_INFO_GPU, NVTX_EVENTS, StringIds as a
 * real export has them, tests/import/gen-nsys-nccl.py's list), MEMSET and
 * CUDA_GPU_MEMORY_USAGE_EVENTS with the columns the importer reads.
 *
 * One host thread (globalTid (4242 << 24) | 4242: tid 4242), stream 7,
 * GPU 0 an RTX 3090. Times in ns; t0 = 900 (the NVTX range, the earliest
 * start), so an event at T imports at T - 900:
 *   corr 1 cudaLaunchKernel 1000..1010  -> gemm_kernel 2000..7000, grid 80x1x1, block 256, 64 regs, 1024 + 0 B smem
 *   corr 2 cudaLaunchKernel 1100..1105  -> relu_kernel 7000..8000, grid 40x2x1, block 128, 32 regs, 0 + 512 B smem
 *   corr 3 cudaMemcpyAsync  1200..1210  -> HtoD (copyKind 1) 1 MiB from pinned (srcKind 1), 8000..9000
 *   corr 4 cudaMemcpy       1300..9500  -> DtoH (2) 4096 B to pageable (dstKind 0), 9000..9400: not async
 *   corr 5 cudaMemsetAsync  1400..1402  -> memset 64 KiB, 9400..9450
 *   corr 6 cudaStreamSynchronize 9500..9600, its SYNCHRONIZATION row naming stream 7 (syncType 3)
 *   corr 7 cudaMemcpyAsync  9600..9605  -> DtoD (8) 8192 B, 9700..9710
 *   corr 8 cudaMemcpyAsync  9610..9611  -> HtoH (0): dropped, as the importer documents
 *   NVTX: range "step" 900..9650 (eventType 59), point "mark" at 950 (34), a domain definition at 905 (75: not an event)
 *   memory: 1 MiB device (memKind 2) allocated at 950 and freed at 9650; 256 B pageable (memKind 0) at 960: not tracked */
static void
nsys_fixture (const char *path)
{
  g_unlink (path);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  char *err = NULL;
  const char *sql =
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,"
    " isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER,"
    " computeMinor INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
    " globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
    " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
    " demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,"
    " cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,"
    " gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
    " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,"
    " localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,"
    " sharedMemoryLimitConfig INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
    " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
    " bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,"
    " srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,"
    " graphNodeId INTEGER, virtualAddress INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
    " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
    " value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
    " globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,"
    " category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,"
    " domainId INTEGER);"
    "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER,"
    " address INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL);"
    "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'cudaMemcpyAsync'), (3, 'cudaMemcpy'),"
    " (4, 'cudaStreamSynchronize'), (5, 'cudaMemsetAsync'), (6, 'gemm_kernel'), (7, 'relu_kernel');"
    "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA GeForce RTX 3090', '0000:01:00.0', 1, 6291456, 25438126080, 82, 8, 6);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
    " (1000, 1010, 1, 71168954514, 1, 1, 0, NULL), (1100, 1105, 1, 71168954514, 2, 1, 0, NULL),"
    " (1200, 1210, 1, 71168954514, 3, 2, 0, NULL), (1300, 9500, 1, 71168954514, 4, 3, 0, NULL),"
    " (1400, 1402, 1, 71168954514, 5, 5, 0, NULL), (9500, 9600, 1, 71168954514, 6, 4, 0, NULL),"
    " (9600, 9605, 1, 71168954514, 7, 2, 0, NULL), (9610, 9611, 1, 71168954514, 8, 2, 0, NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
    " (2000, 7000, 0, 1, 7, 1, 71168950272, 6, 6, NULL, 0, 0, 64, 80, 1, 1, 256, 1, 1, 1024, 0, 0, 0, 1, NULL, NULL, NULL),"
    " (7000, 8000, 0, 1, 7, 2, 71168950272, 7, 7, NULL, 0, 0, 32, 40, 2, 1, 128, 1, 1, 0, 512, 0, 0, 2, NULL, NULL, NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
    " (8000, 9000, 0, 1, 7, 3, 71168950272, 1048576, 1, NULL, 1, 2, 0, 1, 0, 1, NULL, NULL, NULL),"
    " (9000, 9400, 0, 1, 7, 4, 71168950272, 4096, 2, NULL, 2, 0, 0, 1, 0, 1, NULL, NULL, NULL),"
    " (9700, 9710, 0, 1, 7, 7, 71168950272, 8192, 8, NULL, 2, 2, 0, 1, 0, 1, NULL, NULL, NULL),"
    " (9612, 9613, 0, 1, 7, 8, 71168950272, 64, 0, NULL, 0, 0, 0, 1, 0, 1, NULL, NULL, NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (9400, 9450, 0, 1, 7, 5, 71168950272, 0, 65536, NULL, 2);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (9520, 9590, 0, 1, 7, 6, 71168950272, 3, 0);"
    "INSERT INTO NVTX_EVENTS VALUES (900, 9650, 59, NULL, NULL, NULL, 'step', 71168954514, NULL, NULL, NULL),"
    " (950, NULL, 34, NULL, NULL, NULL, 'mark', 71168954514, NULL, NULL, NULL),"
    " (905, NULL, 75, NULL, NULL, NULL, 'a domain', 71168954514, NULL, NULL, 1);"
    "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (950, 71168950272, 0, 40960, 1048576, 2, 0),"
    " (960, 71168950272, 0, 81920, 256, 0, 0), (9650, 71168950272, 0, 40960, 1048576, 2, 1);";
  if (sqlite3_exec (db, sql, NULL, NULL, &err) != SQLITE_OK)
    g_error ("sqlite: %s", err);
  sqlite3_close (db);
}

static void
test_detect (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *a = g_build_filename (dir, "a.json", NULL);
  g_autofree char *b = g_build_filename (dir, "b.jsonl", NULL);
  g_autofree char *c = g_build_filename (dir, "c.json", NULL);
  const char *k = "  {\"schemaVersion\": 1, \"traceEvents\": []}";
  g_file_set_contents (a, k, -1, NULL);
  g_file_set_contents (b, k, -1, NULL);
  g_file_set_contents (c, "{\"vramsim_trace\": 1}", -1, NULL);
  g_assert_true (import_kineto_detect (a));
  g_assert_false (import_kineto_detect (b)); /* the name must end .json or .json.gz */
  g_assert_false (import_kineto_detect (c));
  g_assert_false (import_nsys_detect (a));
  g_autofree char *nsys = g_build_filename (dir, "n.sqlite", NULL);
  nsys_fixture (nsys);
  g_assert_true (import_nsys_detect (nsys));
  g_assert_false (import_kineto_detect (nsys));
  g_unlink (nsys);
  g_unlink (a);
  g_unlink (b);
  g_unlink (c);
  g_rmdir (dir);
}

/* ---- Nsight Systems: expected counts by SQL ---- */

static guint64
sql_count (sqlite3 *db, const char *q)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, q, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  guint64 n = (guint64) sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return n;
}

/* The real export (optional: validation/data/README.md), counts by SQL. */
static void
test_nsys (void)
{
  g_autofree char *src = test_optional_trace ("nsys/rtx3090-small.sqlite");
  if (src == NULL)
    return;
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (src, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  guint64 kernels = sql_count (db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  guint64 h2d = sql_count (db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1");
  guint64 d2h = sql_count (db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2");
  guint64 d2d = sql_count (db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8");
  guint64 p2p = sql_count (db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 10");
  /* A point (34) is one mark, a range that ended (59, 60) two: NAME and NAME/end. */
  guint64 marks = sql_count (db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60) AND start >= 0")
                  + sql_count (db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND start >= 0 AND end >= start");
  sqlite3_close (db);
  g_assert_cmpuint (kernels, ==, 36); /* the README's figures */
  g_assert_cmpuint (h2d + d2h + d2d + p2p, ==, 4);

  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_nsys (src, out, &err));
  g_assert_no_error (err);
  Counts got;
  count_trace (out, &got);
  g_assert_cmpuint (got.kernels, ==, kernels);
  g_assert_cmpuint (got.copies[VS_DIR_H2D], ==, h2d);
  g_assert_cmpuint (got.copies[VS_DIR_D2H], ==, d2h);
  g_assert_cmpuint (got.copies[VS_DIR_D2D], ==, d2d);
  g_assert_cmpuint (got.copies[VS_DIR_P2P], ==, p2p);
  g_assert_cmpuint (got.memsets, ==, 0);
  g_assert_cmpuint (got.marks, ==, marks);
  g_assert_cmpuint (got.syncs, ==, 1); /* one cudaStreamSynchronize */
  g_assert_cmpstr (got.config, ==, "rtx3090");
  g_free (got.config);
  g_unlink (out);

  /* Not a database: an error naming the file, no output. */
  g_autofree char *bad = g_build_filename (dir, "bad.sqlite", NULL);
  g_file_set_contents (bad, "SQLite format 3\0garbage", 24, NULL);
  g_clear_error (&err);
  g_assert_false (import_nsys (bad, out, &err));
  g_assert_nonnull (strstr (err->message, bad));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (bad);
  g_rmdir (dir);
}

/* ---- whatever an importer writes reads back ---- */

/* Imports IN (Kineto, or nsys when NSYS) to OUT. On success the trace must
 * read to its end through trace_open/trace_next: returns TRUE and its
 * events in *EVS (JSON lines, for exact checks). On failure: a GError
 * naming IN, no OUT; returns FALSE with the message in *MSG. */
static gboolean
import_reads_back (const char *in, const char *out, gboolean nsys, GPtrArray **evs, char **msg)
{
  g_autoptr (GError) err = NULL;
  g_unlink (out);
  gboolean ok = nsys ? import_nsys (in, out, &err) : import_kineto (in, out, &err);
  *evs = g_ptr_array_new_with_free_func (g_free);
  if (!ok)
    {
      g_assert_nonnull (err);
      g_assert_nonnull (strstr (err->message, in));
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      if (msg)
        *msg = g_strdup (err->message);
      return FALSE;
    }
  g_assert_no_error (err);
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  g_assert_no_error (err);
  const VsTraceHeader *h = trace_reader_header (r);
  g_assert_true (h->device == NULL || g_utf8_validate (h->device, -1, NULL));
  if (h->device && strstr (h->device, "\xEF\xBF\xBD")) /* the tests' bad device names */
    g_ptr_array_add (*evs, g_strdup_printf ("device %s", h->device));
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    g_ptr_array_add (*evs, trace_event_to_json_line (&ev));
  g_assert_no_error (err);
  if (msg)
    *msg = NULL;
  return TRUE;
}

/* Every fuzzer input for the Kineto importer (tests/fuzz/regress/kineto-N). */
static void
test_kineto_regress (void)
{
  g_autoptr (GDir) d = g_dir_open ("tests/fuzz/regress", 0, NULL);
  if (d == NULL)
    {
      g_test_fail_printf ("tests/fuzz/regress: missing: run the tests from the top of the source tree");
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "in.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  const char *f;
  guint n = 0;
  while ((f = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_prefix (f, "kineto-"))
        continue;
      g_autofree char *src = g_build_filename ("tests/fuzz/regress", f, NULL);
      g_autofree char *bytes = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (src, &bytes, &len, NULL));
      g_assert_true (g_file_set_contents (in, bytes, (gssize) len, NULL));
      g_autoptr (GPtrArray) evs = NULL;
      g_autofree char *msg = NULL;
      gboolean ok = import_reads_back (in, out, FALSE, &evs, &msg);
      n++;
      /* The three defects the fuzzer found, exactly. */
      if (strcmp (f, "kineto-1") == 0)
        {
          /* Bytes 0xCD 0xFD are not UTF-8: each becomes U+FFFD. */
          g_assert_true (ok);
          g_assert_cmpuint (evs->len, ==, 2);   /* the range's start and its end (dur 0) */
          g_assert_cmpstr (g_ptr_array_index (evs, 0), ==, "{\"t\": 0, \"op\": \"mark\", \"name\": \"P4\xEF\xBF\xBD\xEF\xBF\xBD" "1\"}");
          g_assert_cmpstr (g_ptr_array_index (evs, 1), ==, "{\"t\": 0, \"op\": \"mark\", \"name\": \"P4\xEF\xBF\xBD\xEF\xBF\xBD" "1/end\"}");
        }
      else if (strcmp (f, "kineto-2") == 0)
        {
          /* No event maps (the absurd ts no longer overflows): an import
           * of nothing is an error, not an empty trace. */
          g_assert_false (ok);
          g_assert_nonnull (strstr (msg, "0 events imported"));
        }
      else if (strcmp (f, "kineto-3") == 0)
        {
          g_assert_false (ok);
          g_assert_nonnull (strstr (msg, "traceEvents[1]: 'ts'"));
          g_assert_nonnull (strstr (msg, "out of range"));
        }
      g_unlink (out);
    }
  g_assert_cmpuint (n, >=, 3);
  g_unlink (in);
  g_rmdir (dir);
}

/* Kineto JSON: one test input, imported; returns the lines or NULL (*MSG). */
static GPtrArray *
kineto_lines (const char *json, char **msg)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "in.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, json, -1, NULL));
  GPtrArray *evs = NULL;
  gboolean ok = import_reads_back (in, out, FALSE, &evs, msg);
  g_unlink (in);
  g_unlink (out);
  g_rmdir (dir);
  if (!ok)
    {
      g_ptr_array_unref (evs);
      return NULL;
    }
  return evs;
}

#define KERNEL(ts, extra) "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": " ts ", \"dur\": 1" extra "}"

static void
expect_range_error (const char *json, const char *what)
{
  g_autofree char *msg = NULL;
  GPtrArray *evs = kineto_lines (json, &msg);
  if (evs)
    g_error ("imported, expected an error containing \"%s\": %s", what, json);
  if (strstr (msg, what) == NULL)
    g_error ("message \"%s\" lacks \"%s\"", msg, what);
}

static void
test_kineto_ranges (void)
{
  g_autofree char *msg = NULL;
  /* Invalid UTF-8 in a kernel name and the device name: made valid. */
  GPtrArray *evs = kineto_lines ("{\"deviceProperties\": [{\"id\": 0, \"name\": \"A100\xff\"}], \"traceEvents\": ["
                                 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\xc3\", \"ts\": 3, \"dur\": 2, \"pid\": 0}]}",
                                 &msg);
  g_assert_nonnull (evs);
  g_assert_cmpuint (evs->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (evs, 0), ==, "device A100\xEF\xBF\xBD");
  g_ptr_array_remove_index (evs, 0);
  g_assert_cmpstr (g_ptr_array_index (evs, 0), ==,
                   "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\xEF\xBF\xBD\", \"dur\": 2000}");
  g_ptr_array_unref (evs);

  /* Rebasing is exact: negative times with fractions keep their order
   * (-5.5 before -5), and a rebased number may be longer than the original
   * ("5" - "-1000" = "1005"). */
  evs = kineto_lines ("{\"traceEvents\": [" KERNEL ("-5", "") ", " KERNEL ("-5.5", "") ", " KERNEL ("5", "") ", "
                      KERNEL ("-1000", "") ", " KERNEL ("-999.999", "") "]}", &msg);
  g_assert_nonnull (evs);
  g_assert_cmpuint (evs->len, ==, 5);
  const char *want[] = { "{\"t\": 0,", "{\"t\": 1,", "{\"t\": 994500,", "{\"t\": 995000,", "{\"t\": 1005000," };
  for (guint i = 0; i < 5; i++)
    g_assert_true (g_str_has_prefix (g_ptr_array_index (evs, i), want[i]));
  g_ptr_array_unref (evs);

  /* The largest times a trace holds import; beyond them, errors. */
  evs = kineto_lines ("{\"traceEvents\": [" KERNEL ("0", "") ", " KERNEL ("9000000000000000", "") "]}", &msg);
  g_assert_nonnull (evs);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (evs, 1), "{\"t\": 9000000000000000000,"));
  g_ptr_array_unref (evs);
  expect_range_error ("{\"traceEvents\": [" KERNEL ("0", "") ", " KERNEL ("9300000000000000", "") "]}",
                      "traceEvents[1]: 'ts' is 9.3e+15 us after the earliest event (traceEvents[0]): out of range");
  /* Out of gint64 (kineto-2's overflow) and far apart. */
  expect_range_error ("{\"traceEvents\": [" KERNEL ("15033333333333333333", "") ", " KERNEL ("-4194304", "") "]}",
                      "traceEvents[0]: 'ts'");
  expect_range_error ("{\"traceEvents\": [" KERNEL ("9223372036854775807", "") ", " KERNEL ("-9223372036854775808", "") "]}",
                      "traceEvents[0]: 'ts'");
  expect_range_error ("{\"traceEvents\": [" KERNEL ("1", "") ", " KERNEL ("-100000000000000000000000000000000000000", "") "]}",
                      "traceEvents[0]: 'ts'");
  /* Durations, sizes, streams. */
  expect_range_error ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1e16}]}",
                      "traceEvents[0]: 'dur' 1e+16 us is out of range");
  expect_range_error ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset\", \"ts\": 1, \"dur\": 1,"
                      " \"args\": {\"bytes\": 1e19}}]}", "traceEvents[0]: 'args.bytes' 1e+19 is out of range");
  expect_range_error ("{\"traceEvents\": [" KERNEL ("1", ", \"args\": {\"stream\": 1e300}") "]}",
                      "traceEvents[0]: 'args.stream' 1e+300 is out of range");
  expect_range_error ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 1,"
                      " \"dur\": 1e17, \"args\": {\"correlation\": 7}}, " KERNEL ("2", ", \"args\": {\"correlation\": 7}") "]}",
                      "traceEvents[0]: 'dur' 1e+17 us is out of range");
  expect_range_error ("{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 1, \"args\": {\"Device Type\": 1,"
                      " \"Device Id\": 0, \"Addr\": 1e300, \"Bytes\": 1e20}}]}",
                      "traceEvents[0]: 'args.Bytes' 1e+20 is out of range");
  /* Huge but harmless numbers (tid, pid, correlation, addresses) import. */
  evs = kineto_lines ("{\"traceEvents\": [" KERNEL ("1", ", \"tid\": 1e300, \"pid\": -1e300, \"args\": {\"correlation\": 1e300}")
                      ", {\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 2, \"args\": {\"Device Type\": 1, \"Device Id\": -1e300,"
                      " \"Addr\": 1e300, \"Bytes\": 512}}]}", &msg);
  g_assert_nonnull (evs);
  g_assert_cmpuint (evs->len, ==, 2);
  g_ptr_array_unref (evs);
}

/* The export nsys_fixture writes, imported: each event as its comment
 * says, by hand (t = the call's start - 900; host_ns = the call's length
 * for the first op of a call; copies name the untracked device buffer
 * 2^40 + 1 and a pinned staging buffer 2^40 + 16 for the pinned side). */
static void
test_nsys_fixture (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *src = g_build_filename (dir, "fixture.sqlite", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  nsys_fixture (src);
  g_autoptr (GPtrArray) evs = NULL;
  g_autofree char *msg = NULL;
  g_assert_true (import_reads_back (src, out, TRUE, &evs, &msg));
  static const char *const want[] = {
    "{\"t\": 0, \"op\": \"mark\", \"name\": \"step\", \"tid\": 4242}",
    "{\"t\": 50, \"op\": \"mark\", \"name\": \"mark\", \"tid\": 4242}",
    "{\"t\": 50, \"op\": \"alloc\", \"id\": 1, \"bytes\": 1048576, \"kind\": \"device\", \"tid\": 4242}",
    "{\"t\": 100, \"op\": \"kernel\", \"name\": \"gemm_kernel\", \"stream\": 7, \"dur\": 5000, \"grid\": [80, 1, 1], "
    "\"block\": [256, 1, 1], \"regs\": 64, \"smem\": 1024, \"tid\": 4242, \"host_ns\": 10}",
    "{\"t\": 200, \"op\": \"kernel\", \"name\": \"relu_kernel\", \"stream\": 7, \"dur\": 1000, \"grid\": [40, 2, 1], "
    "\"block\": [128, 1, 1], \"regs\": 32, \"smem\": 512, \"tid\": 4242, \"host_ns\": 5}",
    "{\"t\": 300, \"op\": \"alloc\", \"id\": 1099511627777, \"bytes\": 0, \"kind\": \"device\", \"tag\": \"untracked\", \"tid\": 4242}",
    "{\"t\": 300, \"op\": \"alloc\", \"id\": 1099511627792, \"bytes\": 1048576, \"kind\": \"pinned\", \"tag\": \"pinned_staging\", "
    "\"tid\": 4242}",
    "{\"t\": 300, \"op\": \"copy\", \"dir\": \"h2d\", \"src\": 1099511627792, \"dst\": 1099511627777, \"bytes\": 1048576, "
    "\"stream\": 7, \"async\": true, \"dur\": 1000, \"tid\": 4242, \"host_ns\": 10}",
    "{\"t\": 400, \"op\": \"copy\", \"dir\": \"d2h\", \"src\": 1099511627777, \"bytes\": 4096, \"stream\": 7, \"dur\": 400, "
    "\"tid\": 4242, \"host_ns\": 8200}",
    "{\"t\": 500, \"op\": \"memset\", \"dst\": 1099511627777, \"bytes\": 65536, \"stream\": 7, \"async\": true, \"dur\": 50, "
    "\"tid\": 4242, \"host_ns\": 2}",
    "{\"t\": 8600, \"op\": \"sync\", \"scope\": \"stream\", \"stream\": 7, \"tid\": 4242, \"host_ns\": 100}",
    "{\"t\": 8700, \"op\": \"copy\", \"dir\": \"d2d\", \"src\": 1099511627777, \"dst\": 1099511627777, \"bytes\": 8192, "
    "\"stream\": 7, \"async\": true, \"dur\": 10, \"tid\": 4242, \"host_ns\": 5}",
    "{\"t\": 8750, \"op\": \"mark\", \"name\": \"step/end\", \"tid\": 4242}",
    "{\"t\": 8750, \"op\": \"free\", \"id\": 1, \"tid\": 4242}",
    "{\"t\": 8750, \"op\": \"free\", \"id\": 1099511627792, \"tid\": 4242}",
  };
  g_assert_cmpuint (evs->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    g_assert_cmpstr (g_ptr_array_index (evs, i), ==, want[i]);
  Counts got;
  count_trace (out, &got);
  g_assert_cmpstr (got.config, ==, "rtx3090");
  g_free (got.config);
  g_unlink (out);
  g_unlink (src);
  g_rmdir (dir);
}

/* Nsight Systems: a small export made here, with bad strings and times. */
static void
nsys_db (const char *path, const char *sql)
{
  g_unlink (path);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  char *err = NULL;
  const char *schema =
    "CREATE TABLE StringIds (id INTEGER, value TEXT);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, globalTid INT, correlationId INT, nameId INT);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT, correlationId INT,"
    " demangledName INT);"
    "CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, text TEXT, textId INT, globalTid INT);"
    "CREATE TABLE TARGET_INFO_GPU (id INT, name TEXT);";
  if (sqlite3_exec (db, schema, NULL, NULL, &err) != SQLITE_OK || sqlite3_exec (db, sql, NULL, NULL, &err) != SQLITE_OK)
    g_error ("sqlite: %s", err);
  sqlite3_close (db);
}

static void
test_nsys_ranges (void)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "in.sqlite", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GPtrArray) evs = NULL;
  g_autofree char *msg = NULL;

  /* Invalid UTF-8 from StringIds, NVTX text and the GPU name: made valid. */
  nsys_db (in, "INSERT INTO StringIds VALUES (1, CAST(X'6BFF' AS TEXT)), (2, 'cudaLaunchKernel');"
               "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 110, 5, 9, 2);"
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (120, 150, 0, 7, 9, 1);"
               "INSERT INTO NVTX_EVENTS VALUES (105, 106, 34, CAST(X'6DC3' AS TEXT), NULL, 5);"
               "INSERT INTO TARGET_INFO_GPU VALUES (0, CAST(X'4831303080' AS TEXT));");
  g_assert_true (import_reads_back (in, out, TRUE, &evs, &msg));
  g_assert_cmpuint (evs->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (evs, 0), ==, "device H100\xEF\xBF\xBD");
  g_ptr_array_remove_index (evs, 0);
  g_assert_cmpstr (g_ptr_array_index (evs, 0), ==,
                   "{\"t\": 0, \"op\": \"kernel\", \"name\": \"k\xEF\xBF\xBD\", \"stream\": 7, \"dur\": 30, \"tid\": 5, \"host_ns\": 10}");
  g_assert_cmpstr (g_ptr_array_index (evs, 1), ==, "{\"t\": 5, \"op\": \"mark\", \"name\": \"m\xEF\xBF\xBD\", \"tid\": 5}");
  g_clear_pointer (&evs, g_ptr_array_unref);

  /* A time before 0 counts as 0; one far after, within 2^63 - 1, imports. */
  nsys_db (in, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-9223372036854775808, -9223372036854775800, 0, 1, NULL, NULL),"
               " (9223372036854775000, 9223372036854775807, 0, 1, NULL, NULL);");
  g_assert_true (import_reads_back (in, out, TRUE, &evs, &msg));
  g_assert_cmpuint (evs->len, ==, 2);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (evs, 0), "{\"t\": 0, \"op\": \"kernel\""));
  g_assert_true (g_str_has_prefix (g_ptr_array_index (evs, 1), "{\"t\": 9223372036854775000, \"op\": \"kernel\""));
  g_clear_pointer (&evs, g_ptr_array_unref);

  /* Durations past 2^63 - 1, negative streams: errors naming the row. */
  nsys_db (in, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-9223372036854775808, 9223372036854775807, 0, 1, NULL, NULL);");
  g_assert_false (import_reads_back (in, out, TRUE, &evs, &msg));
  g_assert_nonnull (strstr (msg, "CUPTI_ACTIVITY_KIND_KERNEL row 1: end - start"));
  g_clear_pointer (&evs, g_ptr_array_unref);
  g_clear_pointer (&msg, g_free);
  nsys_db (in, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (-9223372036854775808, 9223372036854775807, 5, 9, NULL);");
  g_assert_false (import_reads_back (in, out, TRUE, &evs, &msg));
  g_assert_nonnull (strstr (msg, "CUPTI_ACTIVITY_KIND_RUNTIME row 1: end - start"));
  g_clear_pointer (&evs, g_ptr_array_unref);
  g_clear_pointer (&msg, g_free);
  nsys_db (in, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, -1, NULL, NULL);");
  g_assert_false (import_reads_back (in, out, TRUE, &evs, &msg));
  g_assert_nonnull (strstr (msg, "CUPTI_ACTIVITY_KIND_KERNEL row 1: negative streamId -1"));
  g_clear_pointer (&evs, g_ptr_array_unref);

  g_unlink (in);
  g_rmdir (dir);
}

/* ---- ranges: mark pairs NAME ... NAME/end ---- */

static gint
u64_cmp (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return (x > y) - (x < y);
}

typedef struct {
  char *name;
  guint32 tid;
  guint64 t;
} OpenMark;

/* The durations of PATH's ranges, per name in the order they end: each
 * NAME/end closes the innermost open NAME of its thread. Every NAME/end
 * must close one. (transfer full) name -> GArray of guint64 ns. */
static GHashTable *
range_durations (const char *path)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &err);
  g_assert_no_error (err);
  GHashTable *out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (OpenMark));
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    {
      if (ev.op != VS_OP_MARK)
        continue;
      if (!g_str_has_suffix (ev.name, "/end"))
        {
          OpenMark m = { g_strdup (ev.name), ev.tid, ev.t };
          g_array_append_val (open, m);
          continue;
        }
      gsize len = strlen (ev.name) - 4;
      guint i = open->len;
      while (i > 0)
        {
          OpenMark *m = &g_array_index (open, OpenMark, i - 1);
          if (m->tid == ev.tid && strlen (m->name) == len && strncmp (m->name, ev.name, len) == 0)
            break;
          i--;
        }
      g_assert_cmpuint (i, >, 0);   /* an end without its start */
      OpenMark *m = &g_array_index (open, OpenMark, i - 1);
      GArray *d = g_hash_table_lookup (out, m->name);
      if (d == NULL)
        {
          d = g_array_new (FALSE, FALSE, sizeof (guint64));
          g_hash_table_insert (out, g_strdup (m->name), d);
        }
      guint64 dur = ev.t - m->t;
      g_array_append_val (d, dur);
      g_free (m->name);
      g_array_remove_index (open, i - 1);
    }
  g_assert_no_error (err);
  for (guint i = 0; i < open->len; i++)
    g_free (g_array_index (open, OpenMark, i).name);
  return out;
}

static guint64
sum_u64 (const GArray *a)
{
  guint64 s = 0;
  for (guint i = 0; i < a->len; i++)
    s += g_array_index (a, guint64, i);
  return s;
}

/* memory-profile-v100: the replay must see each range's own duration. The
 * file (read here with cJSON) says: 5 ProfilerStep#N ranges of 336,328 to
 * 365,256 us (1,737,720 us in all) and Optimizer.zero_grad#SGD.zero_grad 5 ranges,
 * 57,638 us in all; 2,020 nccl:all_reduce ranges. Each imported pair must
 * span exactly its source dur (whole us here: dur x 1000 ns). */
static void
test_kineto_range_durations (void)
{
  g_autofree char *src = test_data ("kineto/memory-profile-v100.json.gz");
  if (src == NULL)
    return;
  cJSON *root = load_json_gz (src);
  g_autoptr (GHashTable) want = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  const cJSON *e;
  cJSON_ArrayForEach (e, cJSON_GetObjectItem (root, "traceEvents"))
    {
      const cJSON *cat = cJSON_GetObjectItem (e, "cat");
      if (!cJSON_IsString (cat) || strcmp (cat->valuestring, "user_annotation") != 0)
        continue;
      g_autofree char *name = g_strdup (cJSON_GetObjectItem (e, "name")->valuestring);
      /* "ProfilerStep#3" is one ProfilerStep; "Optimizer.zero_grad#SGD.zero_grad" keeps its name. */
      char *hash = strrchr (name, '#');
      if (hash && hash[1] && strspn (hash + 1, "0123456789") == strlen (hash + 1))
        *hash = '\0';
      GArray *d = g_hash_table_lookup (want, name);
      if (d == NULL)
        {
          d = g_array_new (FALSE, FALSE, sizeof (guint64));
          g_hash_table_insert (want, g_strdup (name), d);
        }
      guint64 ns = (guint64) llround (cJSON_GetObjectItem (e, "dur")->valuedouble * 1000);
      g_array_append_val (d, ns);
    }
  cJSON_Delete (root);
  GArray *steps = g_hash_table_lookup (want, "ProfilerStep");
  g_assert_nonnull (steps);
  g_assert_cmpuint (steps->len, ==, 5);
  g_assert_cmpuint (sum_u64 (steps), ==, G_GUINT64_CONSTANT (1737720000));
  g_assert_cmpuint (sum_u64 (g_hash_table_lookup (want, "Optimizer.zero_grad#SGD.zero_grad")), ==, 57638000);

  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_kineto (src, out, &err));
  g_assert_no_error (err);
  g_autoptr (GHashTable) got = range_durations (out);
  g_assert_cmpuint (g_hash_table_size (got), ==, g_hash_table_size (want));
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, want);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      GArray *w = v, *g = g_hash_table_lookup (got, k);
      g_assert_nonnull (g);
      g_assert_cmpuint (g->len, ==, w->len);
      /* Same multiset of durations (ends may come in another order). */
      g_array_sort (w, u64_cmp);
      g_array_sort (g, u64_cmp);
      for (guint i = 0; i < w->len; i++)
        g_assert_cmpuint (g_array_index (g, guint64, i), ==, g_array_index (w, guint64, i));
    }
  GArray *gs = g_hash_table_lookup (got, "ProfilerStep");
  g_assert_cmpuint (g_array_index (gs, guint64, 0), ==, 336328000);
  g_assert_cmpuint (g_array_index (gs, guint64, 4), ==, 365256000);
  g_unlink (out);
  g_rmdir (dir);
}

/* The nsys sample: 59 NVTX push/pop ranges (eventType 59), every one
 * ended; each imported pair spans end - start of its row (ns in the
 * export), the longest 25,834,711 - 18,992,108 = 6,842,603 ns. */
static void
test_nsys_range_durations (void)
{
  g_autofree char *src = test_optional_trace ("nsys/rtx3090-small.sqlite");
  if (src == NULL)
    return;
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (src, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  guint64 n = sql_count (db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND start >= 0 AND end >= start");
  guint64 total = sql_count (db, "SELECT sum(end - start) FROM NVTX_EVENTS WHERE eventType = 59 AND start >= 0 AND end >= start");
  guint64 longest = sql_count (db, "SELECT max(end - start) FROM NVTX_EVENTS WHERE eventType = 59 AND start >= 0");
  sqlite3_close (db);
  g_assert_cmpuint (n, ==, 59);
  g_assert_cmpuint (longest, ==, 6842603);

  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_nsys (src, out, &err));
  g_assert_no_error (err);
  g_autoptr (GHashTable) got = range_durations (out);
  guint64 gn = 0, gt = 0, gmax = 0;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, got);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      GArray *a = v;
      gn += a->len;
      gt += sum_u64 (a);
      for (guint i = 0; i < a->len; i++)
        gmax = MAX (gmax, g_array_index (a, guint64, i));
    }
  g_assert_cmpuint (gn, ==, n);
  g_assert_cmpuint (gt, ==, total);
  g_assert_cmpuint (gmax, ==, longest);
  g_unlink (out);
  g_rmdir (dir);
}

/* Collectives from the Kineto importer. The expected counts and byte sums
 * were computed apart from the importer (a Python pass over the JSON: each
 * NCCL kernel's launch call by correlation, the innermost `nccl:*`
 * annotation around it on the same thread, Input Dims × dtype size) and
 * are written here; ranks is distributedInfo.world_size. memory-profile-v100
 * records no message sizes (older PyTorch), so none of its 2,020 NCCL
 * kernels gets a collective. */
typedef struct { guint64 count[VS_COLL_COUNT], bytes[VS_COLL_COUNT]; guint32 ranks; guint64 nccl; } CollCounts;

static void
count_colls (const char *path, CollCounts *c)
{
  memset (c, 0, sizeof *c);
  g_autoptr (GError) err = NULL;
  g_autoptr (VsTraceReader) r = trace_open (path, &err);
  g_assert_no_error (err);
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    if (ev.op == VS_OP_KERNEL)
      {
        c->nccl += g_str_has_prefix (ev.name, "nccl");
        if (ev.collective == NULL)
          continue;
        c->count[ev.collective->kind]++;
        c->bytes[ev.collective->kind] += ev.collective->bytes;
        c->ranks = MAX (c->ranks, ev.collective->ranks);
      }
  g_assert_no_error (err);
}

static void
test_kineto_collectives (void)
{
  /* NCCL's kernel names (src/device/generate.py), old and new. */
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), ==, VS_COLL_ALL_REDUCE);
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*)"), ==,
                   VS_COLL_REDUCE_SCATTER);
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclDevKernel_Reduce_Sum_f16_RING_LL"), ==, VS_COLL_REDUCE);
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclDevKernel_AllGather_RING_LL"), ==, VS_COLL_ALL_GATHER);
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"), ==, IMPORT_COLL_SENDRECV);
  g_assert_cmpint (import_coll_kind_from_kernel ("ncclDevKernel_Broadcast_RING_LL"), ==, VS_COLL_BROADCAST);
  g_assert_cmpint (import_coll_kind_from_kernel ("volta_sgemm_128x64_nn"), ==, -1);
  g_assert_cmpint (import_coll_kind_from_op ("nccl:_reduce_scatter_base"), ==, VS_COLL_REDUCE_SCATTER);
  g_assert_cmpint (import_coll_kind_from_op ("allreduce"), ==, VS_COLL_ALL_REDUCE);
  g_assert_cmpint (import_coll_kind_from_op ("nccl:all_to_all"), ==, VS_COLL_ALL_TO_ALL);
  g_assert_cmpint (import_coll_kind_from_op ("nccl:gather"), ==, -1);
  g_assert_cmpuint (import_dtype_bytes ("c10::BFloat16"), ==, 2);
  g_assert_cmpuint (import_dtype_bytes ("signed char"), ==, 1);
  g_assert_cmpuint (import_dtype_bytes ("TensorList"), ==, 0);

  static const struct {
    const char *rel;
    guint32 ranks;
    guint64 nccl;
    guint64 ar, ar_b, ag, ag_b, rs, rs_b, a2a, a2a_b;
  } want[] = {
    { "kineto/copies-rank0.json.gz", 16, 80, 10, 8965794640, 10, 73400320, 10, 587202560, 45, 157873564 },
    { "kineto/sampled-rank0.json.gz", 128, 10, 4, 314195708, 2, 33554432, 0, 0, 4, 850250752 },
    { "kineto/trace-diff-control.json.gz", 8, 60, 18, 1200223224, 0, 0, 0, 0, 42, 3865189408 },
    { "kineto/memory-profile-v100.json.gz", 0, 2020, 0, 0, 0, 0, 0, 0, 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autofree char *src = test_data (want[i].rel);
      if (src == NULL)
        return;
      g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
      g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
      g_autoptr (GError) err = NULL;
      g_assert_true (import_kineto (src, out, &err));
      CollCounts c;
      count_colls (out, &c);
      g_assert_cmpuint (c.nccl, ==, want[i].nccl);
      g_assert_cmpuint (c.ranks, ==, want[i].ranks);
      g_assert_cmpuint (c.count[VS_COLL_ALL_REDUCE], ==, want[i].ar);
      g_assert_cmpuint (c.bytes[VS_COLL_ALL_REDUCE], ==, want[i].ar_b);
      g_assert_cmpuint (c.count[VS_COLL_ALL_GATHER], ==, want[i].ag);
      g_assert_cmpuint (c.bytes[VS_COLL_ALL_GATHER], ==, want[i].ag_b);
      g_assert_cmpuint (c.count[VS_COLL_REDUCE_SCATTER], ==, want[i].rs);
      g_assert_cmpuint (c.bytes[VS_COLL_REDUCE_SCATTER], ==, want[i].rs_b);
      g_assert_cmpuint (c.count[VS_COLL_ALL_TO_ALL], ==, want[i].a2a);
      g_assert_cmpuint (c.bytes[VS_COLL_ALL_TO_ALL], ==, want[i].a2a_b);
      g_unlink (out);
      g_rmdir (dir);
    }
}

/* PyTorch's process groups (docs/importers.md "Collectives"): a group id
 * from "Process Group Name" (decimal n: n + 1; else its hash) or the older
 * "Process Group ID", a role from the DeviceMesh description ("mesh_tp")
 * on the op or in distributedInfo.pg_config. Six all-reduces, worked out
 * by hand: name "3" with mesh_tp (group 4, tp); name "0" whose pg_config
 * description is default_pg (group 1, no role); name "5" whose pg_config
 * description is mesh_dp_shard (group 6, dp); ID 2 (group 3); a hashed
 * name with mesh_dim_0 (no role); no group named (none). */
static void
test_kineto_process_groups (void)
{
  g_assert_cmpuint (import_pg_group ("0"), ==, 1);
  g_assert_cmpuint (import_pg_group ("41"), ==, 42);
  g_assert_cmpuint (import_pg_group ("999999999999999"), ==, G_GUINT64_CONSTANT (1000000000000000));
  g_assert_cmpuint (import_pg_group (NULL), ==, 0);
  g_assert_cmpuint (import_pg_group (""), ==, 0);
  /* 16 digits, or a name with a letter: hashed, below 2^53, not 0. */
  guint64 h = import_pg_group ("9999999999999999"), h2 = import_pg_group ("8a3f");
  g_assert_cmpuint (h, <, G_GUINT64_CONSTANT (1) << 53);
  g_assert_cmpuint (h, !=, G_GUINT64_CONSTANT (10000000000000000));
  g_assert_cmpuint (h2, !=, 0);
  g_assert_cmpuint (h2, ==, import_pg_group ("8a3f"));
  g_assert_cmpuint (import_pg_role ("mesh_tp"), ==, VS_ROLE_TP);
  g_assert_cmpuint (import_pg_role ("mesh_dp_replicate"), ==, VS_ROLE_DP);
  g_assert_cmpuint (import_pg_role ("mesh_shard"), ==, VS_ROLE_DP);
  g_assert_cmpuint (import_pg_role ("mesh_cp"), ==, VS_ROLE_CP);
  g_assert_cmpuint (import_pg_role ("mesh_dim_0"), ==, VS_ROLE_NONE);
  g_assert_cmpuint (import_pg_role ("mesh_dp_shard_cp"), ==, VS_ROLE_NONE);
  g_assert_cmpuint (import_pg_role ("default_pg"), ==, VS_ROLE_NONE);
  g_assert_cmpuint (import_pg_role ("tp"), ==, VS_ROLE_NONE);
  g_assert_cmpuint (import_pg_role (NULL), ==, VS_ROLE_NONE);

  static const char *const pg_args[] = {
    "\"Process Group Name\": \"3\", \"Process Group Description\": \"mesh_tp\"",
    "\"Process Group Name\": \"0\"",
    "\"Process Group Name\": \"5\"",
    "\"Process Group ID\": 2",
    "\"Process Group Name\": \"8a3f\", \"Process Group Description\": \"mesh_dim_0\"",
    NULL,
  };
  GString *doc = g_string_new ("{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
                               "\"world_size\": 8, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
                               "\"pg_size\": 8}, {\"pg_name\": \"5\", \"pg_desc\": \"mesh_dp_shard\", \"pg_size\": 2}]}, "
                               "\"traceEvents\": [");
  for (guint i = 0; i < 6; i++)
    g_string_append_printf (
      doc,
      "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"ts\": %u, \"dur\": 20, \"pid\": 1, "
      "\"tid\": 1, \"args\": {\"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": 1024, "
      "\"Group size\": 2%s%s}},\n"
      "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": %u, \"dur\": 2, \"pid\": 1, "
      "\"tid\": 1, \"args\": {\"correlation\": %u}},\n"
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"ts\": %u, "
      "\"dur\": 5, \"pid\": 0, \"tid\": 7, \"args\": {\"correlation\": %u, \"stream\": 7, \"device\": 0}}",
      i ? ",\n" : "", 100 * (i + 1), i < 5 ? ", " : "", i < 5 ? pg_args[i] : "", 100 * (i + 1) + 5, i + 1,
      100 * (i + 1) + 10, i + 1);
  g_string_append (doc, "]}");
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "pg.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, doc->str, -1, NULL));
  g_string_free (doc, TRUE);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_kineto (in, out, &err));
  g_assert_no_error (err);
  const struct { guint64 group; guint role; } want[] = {
    { 4, VS_ROLE_TP }, { 1, VS_ROLE_NONE }, { 6, VS_ROLE_DP }, { 3, VS_ROLE_NONE }, { h2, VS_ROLE_NONE },
    { 0, VS_ROLE_NONE },
  };
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  g_assert_no_error (err);
  VsEvent ev;
  guint n = 0;
  while (trace_next (r, &ev, &err))
    if (ev.op == VS_OP_KERNEL)
      {
        g_assert_cmpuint (n, <, G_N_ELEMENTS (want));
        g_assert_nonnull (ev.collective);
        g_assert_cmpuint (ev.collective->kind, ==, VS_COLL_ALL_REDUCE);
        g_assert_cmpuint (ev.collective->bytes, ==, 4096);
        g_assert_cmpuint (ev.collective->ranks, ==, 2);
        g_assert_cmpuint (ev.collective->group, ==, want[n].group);
        g_assert_cmpuint (ev.collective->role, ==, want[n].role);
        n++;
      }
  g_assert_no_error (err);
  g_assert_cmpuint (n, ==, 6);
  g_unlink (in);
  g_unlink (out);
  g_rmdir (dir);
}

/* Imports the Kineto text TEXT; returns the kernel events' shapes and
 * bytes in order (as VsKernelShape + bytes pairs). */
typedef struct { VsKernelShape shape; gboolean has_shape; guint64 bytes; } KShape;

static GArray *
import_kineto_text (const char *text, GError **err)
{
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *in = g_build_filename (dir, "k.json", NULL);
  g_autofree char *out = g_build_filename (dir, "out.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, text, -1, NULL));
  GArray *a = NULL;
  if (import_kineto (in, out, err))
    {
      a = g_array_new (FALSE, TRUE, sizeof (KShape));
      g_autoptr (VsTraceReader) r = trace_open (out, err);
      g_assert_no_error (*err);
      VsEvent ev;
      while (trace_next (r, &ev, err))
        if (ev.op == VS_OP_KERNEL)
          {
            KShape k = { { 0 }, ev.shape != NULL, ev.bytes };
            if (ev.shape)
              k.shape = *ev.shape;
            g_array_append_val (a, k);
          }
      g_assert_no_error (*err);
      g_unlink (out);
    }
  g_unlink (in);
  g_rmdir (dir);
  return a;
}

/* Kernel args (grid, block, registers, shared memory) and the launching
 * CPU op's flops, input types and sizes (docs/importers.md). The op holds
 * the launch call in its span (newer Kineto: External id = correlation). */
static void
test_kineto_shapes (void)
{
  const char *text =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 10, \"dur\": 20, \"pid\": 1, \"tid\": 1,"
    " \"args\": {\"External id\": 3, \"Input Dims\": [[64, 128], [128, 32]], \"Input type\": [\"c10::Half\", \"c10::Half\"],"
    " \"flops\": 524288}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 12, \"dur\": 5, \"pid\": 1,"
    " \"tid\": 1, \"args\": {\"External id\": 100, \"correlation\": 100}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"cutlass_80_tensorop_gemm\", \"ts\": 20, \"dur\": 7, \"pid\": 0,"
    " \"tid\": 7, \"args\": {\"External id\": 100, \"correlation\": 100, \"stream\": 7, \"grid\": [2, 1, 1],"
    " \"block\": [128, 1, 1], \"registers per thread\": 96, \"shared memory\": 16384}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"ts\": 40, \"dur\": 20, \"pid\": 1, \"tid\": 1,"
    " \"args\": {\"External id\": 4, \"Input Dims\": [[1000, 10], [1000, 10], []],"
    " \"Input type\": [\"float\", \"float\", \"Scalar\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 45, \"dur\": 5, \"pid\": 1,"
    " \"tid\": 1, \"args\": {\"External id\": 101, \"correlation\": 101}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_elementwise_kernel\", \"ts\": 50, \"dur\": 3,"
    " \"pid\": 0, \"tid\": 7, \"args\": {\"External id\": 101, \"correlation\": 101, \"stream\": 7}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no_op_of_its_own\", \"ts\": 60, \"dur\": 3, \"pid\": 0,"
    " \"tid\": 7, \"args\": {\"stream\": 7}}\n"
    "]}";
  g_autoptr (GError) err = NULL;
  g_autoptr (GArray) k = import_kineto_text (text, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (k->len, ==, 3);
  const KShape *g = &g_array_index (k, KShape, 0);
  g_assert_true (g->has_shape);
  g_assert_cmpuint (g->shape.grid[0], ==, 2);
  g_assert_cmpuint (g->shape.block[0], ==, 128);
  g_assert_cmpuint (g->shape.regs, ==, 96);
  g_assert_cmpuint (g->shape.smem, ==, 16384);
  g_assert_cmpuint (g->shape.flops, ==, 524288);          /* 2 x 64 x 128 x 32 */
  g_assert_cmpint (g->shape.precision, ==, VS_PREC_FP16); /* the name states none: the inputs' */
  g_assert_cmpuint (g->bytes, ==, VS_NONE);               /* a GEMM gets no bytes from sizes */
  const KShape *e = &g_array_index (k, KShape, 1);
  /* 2 inputs of 1000 x 10 floats = 80000 B, plus an output like the
   * largest (40000 B): 120000 B. */
  g_assert_cmpuint (e->bytes, ==, 120000);
  g_assert_cmpint (e->shape.precision, ==, VS_PREC_FP32);
  g_assert_false (g_array_index (k, KShape, 2).has_shape);

  /* Bad launch arguments name the event. */
  static const char *const bad[] = { "\"grid\": [2, 1]", "\"grid\": [2, 0, 1]", "\"block\": [\"x\", 1, 1]",
                                     "\"registers per thread\": -3" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *t = g_strdup_printf ("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
                                            " \"ts\": 1, \"dur\": 2, \"pid\": 0, \"tid\": 7, \"args\": {\"stream\": 7, %s}}]}",
                                            bad[i]);
      g_autoptr (GError) e2 = NULL;
      g_autoptr (GArray) none = import_kineto_text (t, &e2);
      g_assert_null (none);
      g_assert_error (e2, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID);
      g_assert_nonnull (strstr (e2->message, "traceEvents[0]: kernel 'args."));
    }

  /* A real file: every kernel's grid, block and registers arrive (sums
   * computed from the JSON itself). */
  g_autofree char *src = test_data ("kineto/alexnet-a100.json.gz");
  if (src == NULL)
    return;
  cJSON *root = load_json_gz (src);
  guint64 want_grid = 0, want_regs = 0, want_n = 0;
  const cJSON *ev;
  cJSON_ArrayForEach (ev, cJSON_GetObjectItem (root, "traceEvents"))
    {
      const cJSON *cat = cJSON_GetObjectItem (ev, "cat");
      if (!cJSON_IsString (cat) || strcmp (cat->valuestring, "kernel") != 0)
        continue;
      const cJSON *args = cJSON_GetObjectItem (ev, "args");
      want_n++;
      want_grid += (guint64) cJSON_GetArrayItem (cJSON_GetObjectItem (args, "grid"), 0)->valuedouble;
      want_regs += (guint64) cJSON_GetObjectItem (args, "registers per thread")->valuedouble;
    }
  cJSON_Delete (root);
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "a.vtrace", NULL);
  g_assert_true (import_kineto (src, out, &err));
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  guint64 n = 0, grid = 0, regs = 0;
  VsEvent kev;
  while (trace_next (r, &kev, &err))
    if (kev.op == VS_OP_KERNEL && kev.shape != NULL)
      n++, grid += kev.shape->grid[0], regs += kev.shape->regs;
  g_assert_no_error (err);
  g_assert_cmpuint (n, ==, want_n);
  g_assert_cmpuint (grid, ==, want_grid);
  g_assert_cmpuint (regs, ==, want_regs);
  g_unlink (out);
  g_rmdir (dir);
}

/* The nsys kernel table's grid, block, registers and shared memory. */
static void
test_nsys_shapes (void)
{
  g_autofree char *src = test_optional_trace ("nsys/rtx3090-small.sqlite");
  if (src == NULL)
    return;
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (src, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*), sum(gridX * gridY * gridZ), sum(registersPerThread), "
                                       "sum(staticSharedMemory + dynamicSharedMemory) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                                       -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  guint64 want_n = (guint64) sqlite3_column_int64 (st, 0), want_blocks = (guint64) sqlite3_column_int64 (st, 1);
  guint64 want_regs = (guint64) sqlite3_column_int64 (st, 2), want_smem = (guint64) sqlite3_column_int64 (st, 3);
  sqlite3_finalize (st);
  sqlite3_close (db);
  g_autofree char *dir = g_dir_make_tmp ("vs-import-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "n.vtrace", NULL);
  g_autoptr (GError) err = NULL;
  g_assert_true (import_nsys (src, out, &err));
  g_autoptr (VsTraceReader) r = trace_open (out, &err);
  guint64 n = 0, blocks = 0, regs = 0, smem = 0;
  VsEvent ev;
  while (trace_next (r, &ev, &err))
    if (ev.op == VS_OP_KERNEL && ev.shape != NULL)
      {
        n++;
        blocks += (guint64) ev.shape->grid[0] * ev.shape->grid[1] * ev.shape->grid[2];
        regs += ev.shape->regs;
        smem += ev.shape->smem;
      }
  g_assert_no_error (err);
  g_assert_cmpuint (n, ==, want_n);
  g_assert_cmpuint (n, ==, 36);
  g_assert_cmpuint (blocks, ==, want_blocks);
  g_assert_cmpuint (regs, ==, want_regs);
  g_assert_cmpuint (smem, ==, want_smem);
  g_unlink (out);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import/detect", test_detect);
  g_test_add_func ("/import/preset-for-device", test_preset_for_device);
  g_test_add_func ("/import/kineto/alexnet", test_kineto_alexnet);
  g_test_add_func ("/import/kineto/multistream", test_kineto_multistream);
  g_test_add_func ("/import/kineto/memory-v100", test_kineto_memory);
  g_test_add_func ("/import/kineto/copies", test_kineto_copies);
  g_test_add_func ("/import/kineto/collectives", test_kineto_collectives);
  g_test_add_func ("/import/kineto/process-groups", test_kineto_process_groups);
  g_test_add_func ("/import/kineto/ns-resolution", test_kineto_ns);
  g_test_add_func ("/import/kineto/sampled", test_kineto_sampled);
  g_test_add_func ("/import/kineto/trace-diff", test_kineto_diff);
  g_test_add_func ("/import/kineto/events", test_kineto_events);
  g_test_add_func ("/import/kineto/bad", test_kineto_bad);
  g_test_add_func ("/import/kineto/regress", test_kineto_regress);
  g_test_add_func ("/import/kineto/ranges", test_kineto_ranges);
  g_test_add_func ("/import/nsys/fixture", test_nsys_fixture);
  g_test_add_func ("/import/nsys/rtx3090", test_nsys);
  g_test_add_func ("/import/kineto/shapes", test_kineto_shapes);
  g_test_add_func ("/import/nsys/shapes", test_nsys_shapes);
  g_test_add_func ("/import/nsys/ranges", test_nsys_ranges);
  g_test_add_func ("/import/kineto/range-durations", test_kineto_range_durations);
  g_test_add_func ("/import/nsys/range-durations", test_nsys_range_durations);
  return g_test_run ();
}
