/* cmd-convert.c — `vramsim convert IN OUT`: JSONL <-> binary, losslessly,
 * and profiler traces (Kineto, Nsight Systems) into vramsim traces. */
#include "cli/cmds.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "base/outfile.h"
#include "import/import.h"
#include "import/import-snapshot.h"
#include "import/kernel-bytes.h"
#include "import/merge-tensor.h"
#include "trace/trace.h"

/* A native trace begins with the binary magic or a header line naming
 * "vramsim_trace"; everything else is offered to the importers. */
static gboolean
looks_native (const char *path)
{
  if (strcmp (path, "-") == 0)
    return TRUE;
  /* A FIFO cannot be read twice: what this peek took would be lost to the
   * reader. Only native traces stream; the importers read files. */
  struct stat st;
  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    return TRUE;
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return TRUE; /* let trace_open say why */
  char buf[4096];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = 0;
  if (n >= 8 && memcmp (buf, "VRAMTRC\x1a", 8) == 0)
    return TRUE;
  char *nl = memchr (buf, '\n', n);
  if (nl)
    *nl = 0;
  return strstr (buf, "\"vramsim_trace\"") != NULL;
}

/* (transfer full) What to do with IN when it is not a trace vramsim reads
 * (by its name and first bytes), or NULL: the export or importer that fits. */
static char *
refused_hint (const char *in)
{
  if (strcmp (in, "-") == 0)
    return NULL;
  /* (An Nsight Systems report's hint is trace_open's own: every command gives it.) */
  if (g_str_has_suffix (in, ".ncu-rep"))
    return g_strdup ("an Nsight Compute report gives kernels their DRAM bytes: "
                     "ncu --csv --metrics dram__bytes.sum ./program > bytes.csv, then "
                     "vramsim convert TRACE OUT --kernel-bytes bytes.csv");
  FILE *f = fopen (in, "rb");
  if (f == NULL)
    return NULL;
  unsigned char b[16] = { 0 };
  size_t n = fread (b, 1, sizeof b, f);
  fclose (f);
  /* Pickle protocol 2-5 starts with PROTO (0x80) and its version. */
  if ((n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) || g_str_has_suffix (in, ".pickle") || g_str_has_suffix (in, ".pkl"))
    return g_strdup ("a Python pickle: vramsim imports PyTorch memory snapshots "
                     "(torch.cuda.memory._dump_snapshot(\"snapshot.pickle\"), docs/importers.md) "
                     "with vramsim convert snapshot.pickle OUT; other pickles are not traces");
  if (g_str_has_suffix (in, ".json") || g_str_has_suffix (in, ".json.gz") || (n >= 2 && b[0] == 0x1f && b[1] == 0x8b))
    return g_strdup ("a PyTorch profiler trace must be named *.json or *.json.gz and hold \"traceEvents\" "
                     "(torch.profiler with on_trace_ready=tensorboard_trace_handler, or prof.export_chrome_trace)");
  return NULL;
}

/* The events of the trace an importer or merge wrote at PATH, read back
 * (the importers do not count them), or FALSE where it cannot be re-read:
 * standard output, a device or FIFO. */
static gboolean
count_written (const char *path, guint64 *count)
{
  struct stat st;
  if (strcmp (path, "-") == 0 || stat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return FALSE;
  g_autoptr (VsTraceReader) r = trace_open (path, NULL);
  if (r == NULL)
    return FALSE;
  VsEvent ev;
  GError *err = NULL;
  while (trace_next (r, &ev, &err))
    ;
  if (err != NULL)
    {
      g_error_free (err);
      return FALSE;
    }
  *count = trace_reader_count (r);
  return TRUE;
}

/* A snapshot import that wrote no event: names the devices whose lists
 * hold actions or whose segments are there (what --device could take). */
static void
warn_empty_snapshot (const char *in, int device)
{
  g_autoptr (VsSnapshot) first = snapshot_load (in, -1, NULL);
  if (first == NULL)
    return;
  g_autoptr (GString) held = g_string_new (NULL);
  for (int d = 0; d < first->n_devices; d++)
    {
      g_autoptr (VsSnapshot) s = d == first->device ? NULL : snapshot_load (in, d, NULL);
      const VsSnapshot *x = d == first->device ? first : s;
      if (x != NULL && (x->actions->len > 0 || x->final_segments->len > 0))
        g_string_append_printf (held, "%s%d", held->len ? ", " : "", d);
    }
  fprintf (stderr, "vramsim: warning: %s: device %d: 0 events written (it has no recorded actions or segments)%s%s%s\n",
           in, device < 0 ? first->device : device, held->len ? "; the snapshot holds them on device " : "",
           held->str, held->len ? " (--device N)" : "; the snapshot holds none");
}

/* --group-role: the ids asked for, ascending, each with its role and
 * whether a collective of the trace named it (so that one never named is
 * said). A handful at most: a plain array. */
typedef struct {
  guint64 id;
  guint8 role;
  gboolean seen;
} GroupRole;

typedef struct {
  GArray *asked;      /* GroupRole, by id */
  guint64 changed;    /* collectives given a role */
} GroupRoles;

static void
group_roles_free (GroupRoles *g)
{
  g_array_unref (g->asked);
  g_free (g);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GroupRoles, group_roles_free)

/* "ID=ROLE[,ID=ROLE...]", ROLE one of dp, tp, pp, ep, cp (an id given
 * twice takes the last); NULL with *MSG set when an item is not that. */
static GroupRoles *
group_roles_parse (const char *spec, char **msg)
{
  g_autoptr (GroupRoles) g = g_new0 (GroupRoles, 1);
  g->asked = g_array_new (FALSE, FALSE, sizeof (GroupRole));
  g_auto (GStrv) items = g_strsplit (spec, ",", -1);
  for (char **it = items; *it != NULL; it++)
    {
      const char *eq = strchr (*it, '=');
      g_autofree char *id_s = eq ? g_strndup (*it, (gsize) (eq - *it)) : NULL;
      guint64 id = 0;
      int role = eq ? event_role_from_name (eq + 1) : -1;
      if (id_s == NULL || !g_ascii_string_to_unsigned (id_s, 10, 1, (G_GUINT64_CONSTANT (1) << 53) - 1, &id, NULL)
          || role <= VS_ROLE_NONE)
        {
          *msg = g_strdup_printf ("--group-role: '%s' is not ID=ROLE (ID a collective.group id from 1 to 2^53 - 1, "
                                  "ROLE one of dp, tp, pp, ep, cp)", *it);
          return NULL;
        }
      guint k = 0;
      while (k < g->asked->len && g_array_index (g->asked, GroupRole, k).id < id)
        k++;
      if (k < g->asked->len && g_array_index (g->asked, GroupRole, k).id == id)
        g_array_index (g->asked, GroupRole, k).role = (guint8) role;
      else
        g_array_insert_val (g->asked, k, ((GroupRole) { id, (guint8) role, FALSE }));
    }
  return g_steal_pointer (&g);
}

/* The entry of group ID, or NULL when it was not asked for. */
static GroupRole *
group_role_of (GroupRoles *g, guint64 id)
{
  for (guint k = 0; k < g->asked->len; k++)
    if (g_array_index (g->asked, GroupRole, k).id == id)
      return &g_array_index (g->asked, GroupRole, k);
  return NULL;
}

static gboolean
convert_native (const char *in, const char *out, VsTraceFormat format, VsKernelBytes *kb, GroupRoles *roles,
                guint64 *count, GError **error)
{
  g_autoptr (VsTraceReader) r = trace_open (in, error);
  if (r == NULL)
    return FALSE;
  g_autoptr (VsTraceWriter) w = trace_writer_new (out, format, trace_reader_header (r), error);
  if (w == NULL)
    return FALSE;
  VsEvent ev;
  GError *err = NULL;
  while (trace_next (r, &ev, &err))
    {
      if (kb != NULL)
        kernel_bytes_apply (kb, &ev);
      VsCollective c;
      GroupRole *gr = roles != NULL && ev.collective != NULL && ev.collective->group != 0
                        ? group_role_of (roles, ev.collective->group)
                        : NULL;
      if (gr != NULL)
        {
          gr->seen = TRUE;
          c = *ev.collective;
          c.role = gr->role;
          ev.collective = &c;
          roles->changed++;
        }
      if (!trace_writer_write (w, &ev, error))
        return FALSE;
    }
  if (err != NULL)
    {
      g_propagate_error (error, err);
      return FALSE;
    }
  *count = trace_reader_count (r);
  return trace_writer_finish (g_steal_pointer (&w), error);
}

int
cmd_convert (int argc, char **argv)
{
  g_autofree char *format = NULL, *kernel_bytes = NULL, *tensor = NULL, *addrs = NULL, *note = NULL;
  g_autofree char *async_conf = NULL, *group_role = NULL;
  gint device = -1;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
      "Encoding of OUT: jsonl or binary (default: binary when OUT ends in .vtrace, else jsonl)", "jsonl|binary" },
    { "kernel-bytes", 0, 0, G_OPTION_ARG_FILENAME, &kernel_bytes,
      "Give kernels without bytes their DRAM traffic from FILE: an Nsight Compute CSV (dram__bytes.sum) or NAME,BYTES lines", "FILE" },
    { "group-role", 0, 0, G_OPTION_ARG_STRING, &group_role,
      "Give the collectives of communicator ID (collective.group.id, as vramsim info lists them) the role ROLE (dp, tp, pp, ep, cp), so that network.dp and the others resize them; reads vramsim traces", "ID=ROLE,..." },
    { "device", 0, 0, G_OPTION_ARG_INT, &device,
      "PyTorch memory snapshot: the device to import (default: the one with the most recorded actions)", "N" },
    { "tensor", 0, 0, G_OPTION_ARG_FILENAME, &tensor,
      "IN is a vramcap trace: replace the segments it allocated with the tensors of the PyTorch memory snapshot FILE (docs/capture.md)", "FILE" },
    { "addrs", 0, 0, G_OPTION_ARG_FILENAME, &addrs,
      "With --tensor: vramcap's address sidecar (default IN.addrs)", "FILE" },
    { "tensor-note", 0, 0, G_OPTION_ARG_STRING, &note,
      "Copy IN with \"allocations\": \"driver\" and this reason in the header (what vramcap writes when it has no snapshot)", "TEXT" },
    { "tensor-async", 0, 0, G_OPTION_ARG_STRING, &async_conf,
      "IN is a vramcap trace of PyTorch's cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF CONF): its stream-ordered allocations are the tensors; copy it with \"allocations\": \"tensor\" and allocator kind async (with --tensor-note: why)", "CONF" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("IN OUT - convert a trace between encodings, or import one");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
      "Translates a vramsim trace between JSON Lines (.jsonl) and the binary\n"
      "format (.vtrace) without loss; the input encoding is detected from its\n"
      "first bytes. A PyTorch profiler (Kineto) JSON trace, an Nsight Systems\n"
      "SQLite export or a PyTorch memory snapshot (torch.cuda.memory.\n"
      "_dump_snapshot() pickle, read without running any of it) is imported\n"
      "into a vramsim trace (docs/importers.md).\n"
      "IN may be - for standard input, OUT - for standard output (JSONL only).\n"
      "OUT is written to a temporary file and renamed, so a failed conversion\n"
      "leaves nothing behind (a device or FIFO is written directly; OUT may not\n"
      "be IN). Formats: docs/trace-format.md.\n\n"
      "--kernel-bytes fills in the traffic of captured kernels (which carry\n"
      "none: the replay then counts each touched allocation once) from\n"
      "  ncu --csv --metrics dram__bytes.sum ./program > bytes.csv\n"
      "or from lines NAME,BYTES (\"axpy(float, float const*, float*)\",3GiB),\n"
      "matched by exact name, else by function name; it reads vramsim traces\n"
      "(convert an imported trace first).\n\n"
      "--group-role gives communicators a role in the job's layout where the\n"
      "trace has none (a capture: NCCL does not know roles; a Kineto import\n"
      "names those DeviceMesh described): `vramsim info` lists the groups,\n"
      "  vramsim convert run.vtrace run-dp.vtrace --group-role 1=dp\n"
      "and then `replay --set network.dp=64` resizes group 1.\n\n"
      "Examples:\n"
      "  vramsim convert traces/hand-train-step.jsonl /tmp/train-step.vtrace\n"
      "  vramsim convert /tmp/train-step.vtrace - | head\n"
      "  vramsim convert profile.pt.trace.json step.vtrace\n"
      "  vramsim convert snapshot.pickle step.jsonl --device 0\n"
      "  vramsim convert run.vtrace run-bytes.vtrace --kernel-bytes bytes.csv\n"
      "  vramsim convert --tensor run.snapshot.pickle run.vtrace run-tensor.vtrace\n");
  GError *error = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &error)
      || !g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("convert: %s", error->message);
      g_error_free (error);
      return 2;
    }
  cmd_end_options (&argc, argv);
  if (argc != 3)
    {
      cmd_error ("convert: expected IN and OUT (see 'vramsim convert --help')");
      return 2;
    }
  VsTraceFormat fmt = VS_FORMAT_AUTO;
  if (format == NULL)
    ;
  else if (strcmp (format, "jsonl") == 0)
    fmt = VS_FORMAT_JSONL;
  else if (strcmp (format, "binary") == 0 || strcmp (format, "vtrace") == 0)
    fmt = VS_FORMAT_BINARY;
  else
    {
      cmd_error ("convert: --format must be jsonl or binary, not '%s'", format);
      return 2;
    }
  const char *in = argv[1], *out = argv[2];
  if (strcmp (out, "-") == 0 && fmt == VS_FORMAT_BINARY)
    {
      cmd_error ("convert: the binary format cannot be written to standard output");
      return 2;
    }
  if (device < -1)
    {
      cmd_error ("convert: --device must be 0 or more, not %d", device);
      return 2;
    }
  if ((tensor != NULL || note != NULL || async_conf != NULL)
      && (kernel_bytes != NULL || group_role != NULL || (tensor != NULL && note != NULL)
          || (tensor != NULL && async_conf != NULL)))
    {
      cmd_error ("convert: --tensor, --tensor-note (or --tensor-async) and --kernel-bytes or --group-role do not go "
                 "together");
      return 2;
    }
  g_autoptr (GroupRoles) roles = NULL;
  if (group_role != NULL)
    {
      g_autofree char *msg = NULL;
      roles = group_roles_parse (group_role, &msg);
      if (roles == NULL)
        {
          cmd_error ("convert: %s", msg);
          return 2;
        }
    }
  if (addrs != NULL && tensor == NULL)
    {
      cmd_error ("convert: --addrs goes with --tensor");
      return 2;
    }
  /* The output rule (base/outfile.h): OUT is none of what is read. */
  g_autofree char *side = tensor != NULL && addrs == NULL ? g_strconcat (in, ".addrs", NULL) : NULL;
  g_autoptr (GArray) ins = g_array_new (FALSE, FALSE, sizeof (VsIoPath));
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  const VsIoPath fixed[] = {
    { in, "IN" }, { kernel_bytes, "--kernel-bytes" }, { tensor, "the snapshot (--tensor)" },
    { addrs ? addrs : side, "the address sidecar" },
  };
  g_array_append_vals (ins, fixed, G_N_ELEMENTS (fixed));
  outfile_add_parts (ins, keep, tensor, "a part dump of the snapshot");
  if (!outfile_check_rule (&(VsIoPath) { out, "OUT" }, 1, (const VsIoPath *) ins->data, ins->len, &error))
    {
      cmd_error ("convert: %s", error->message);
      g_clear_error (&error);
      return 1;
    }
  if (roles != NULL && !looks_native (in))
    {
      cmd_error ("convert: --group-role reads vramsim traces; import %s first, then convert the result", in);
      return 1;
    }
  g_autoptr (VsKernelBytes) kb = NULL;
  if (kernel_bytes != NULL)
    {
      if (!looks_native (in))
        {
          cmd_error ("convert: --kernel-bytes reads vramsim traces; import %s first, then convert the result", in);
          return 1;
        }
      kb = kernel_bytes_load (kernel_bytes, &error);
      if (kb == NULL)
        {
          cmd_error ("%s", error->message);
          g_clear_error (&error);
          return 1;
        }
    }
  gboolean ok, refused = FALSE, counted = FALSE, snapshot = FALSE;
  guint64 count = 0;
  VsMergeStats ms;
  /* What IN is, and so which writer runs. */
  enum { K_TENSOR, K_ASYNC, K_NOTE, K_BYTES, K_KINETO, K_NSYS, K_SNAPSHOT, K_NATIVE } kind;
  static const char *const kind_name[] = { "a merge (--tensor)", "a merge (--tensor-async)", "a copy (--tensor-note)",
                                           "a copy (--kernel-bytes)", "a PyTorch profiler trace",
                                           "an Nsight Systems export", "a PyTorch memory snapshot", "a vramsim trace" };
  gboolean native = looks_native (in);
  if (tensor != NULL)
    kind = K_TENSOR;
  else if (async_conf != NULL)
    kind = K_ASYNC;
  else if (note != NULL)
    kind = K_NOTE;
  else if (kb != NULL || roles != NULL)
    kind = K_BYTES;
  else if (!native && import_kineto_detect (in))
    kind = K_KINETO;
  else if (!native && import_nsys_detect (in))
    kind = K_NSYS;
  else if (!native && import_snapshot_detect (in))
    kind = K_SNAPSHOT;
  else
    kind = K_NATIVE;
  if ((kind == K_TENSOR || kind == K_ASYNC) && !native)
    {
      cmd_error ("convert: %s reads a vramcap trace, and %s is not a vramsim trace",
                 kind == K_TENSOR ? "--tensor" : "--tensor-async", in);
      return 1;
    }
  /* Every option applies where it is given, or is refused: --device picks
   * a snapshot's device; --format is the encoding whatever writes OUT (an
   * import or a merge writes a temporary JSONL, converted to OUT). */
  if (device >= 0 && kind != K_TENSOR && kind != K_SNAPSHOT)
    {
      cmd_error ("convert: --device picks the device of a PyTorch memory snapshot (IN, or --tensor FILE); "
                 "%s is %s", kind == K_NATIVE || kind == K_KINETO || kind == K_NSYS ? in : "this", kind_name[kind]);
      return 2;
    }
  const char *target = out;
  g_autofree char *tmp = NULL;
  int tmp_slot = -1;
  if (fmt != VS_FORMAT_AUTO && kind != K_NATIVE && kind != K_BYTES)
    {
      int fd = g_file_open_tmp ("vramsim-convert-XXXXXX.jsonl", &tmp, &error);
      if (fd < 0)
        {
          cmd_error ("convert: --format: %s", error->message);
          g_clear_error (&error);
          return 1;
        }
      close (fd);
      tmp_slot = outfile_register_temp (tmp);
      target = tmp;
    }
  switch (kind)
    {
    case K_TENSOR: ok = merge_tensor (tensor, device, in, addrs, target, &ms, &error); break;
    case K_ASYNC: ok = merge_tensor_async (in, async_conf, note, target, &ms, &error); break;
    case K_NOTE: ok = merge_tensor_note (in, note, target, &error); break;
    case K_BYTES: ok = counted = convert_native (in, out, fmt, kb, roles, &count, &error); break;
    case K_KINETO: ok = import_kineto (in, target, &error); break;
    case K_NSYS: ok = import_nsys (in, target, &error); break;
    case K_SNAPSHOT: ok = snapshot = import_snapshot (in, target, device, &error); break;
    default:
      ok = counted = convert_native (in, out, fmt, NULL, NULL, &count, &error);
      refused = !ok && !native;
      break;
    }
  if (tmp != NULL)
    {
      if (ok)
        ok = counted = convert_native (tmp, out, fmt, NULL, NULL, &count, &error);
      g_unlink (tmp);
      outfile_unregister_temp (tmp_slot);
    }
  if (!ok)
    {
      g_autofree char *hint = refused ? refused_hint (in) : NULL;
      cmd_error ("%s%s%s", error ? error->message : "conversion failed", hint ? "; " : "", hint ? hint : "");
      g_clear_error (&error);
      return 1;
    }
  /* What was written, terminal or not: the importers' events read back.
   * The merges vramcap runs after a capture (--tensor, --tensor-note,
   * --tensor-async) say it on a terminal only, so that vramcap's output
   * stays the program's. */
  gboolean merge = tensor != NULL || note != NULL || async_conf != NULL;
  if ((!merge || isatty (2)) && (counted || count_written (out, &count)))
    {
      fprintf (stderr, "vramsim: wrote %s (%" G_GUINT64_FORMAT " event%s)\n",
               strcmp (out, "-") == 0 ? "standard output" : out, count, count == 1 ? "" : "s");
      if (snapshot && count == 0)
        warn_empty_snapshot (in, device);
    }
  if (tensor != NULL && ms.gaps > 0)
    fprintf (stderr, "vramsim: warning: --tensor: %u of the %u dumps of %s follow a gap (the ring buffer "
             "wrapped before the hook's next look): entries were lost there and the state was "
             "resynchronised from the later dump (the trace header's warnings say what was made up)\n",
             ms.gaps, ms.dumps, tensor);
  if (tensor != NULL && (ms.unresolved > 0 || ms.stretched > 0 || ms.gaps > 0 || isatty (2)))
    fprintf (stderr, "vramsim: --tensor: %" G_GUINT64_FORMAT " tensors replace %" G_GUINT64_FORMAT
             " segment allocations (%" G_GUINT64_FORMAT " driver allocations kept); %" G_GUINT64_FORMAT
             " anchors, clocks within %" G_GUINT64_FORMAT " ns; %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
             " references inside the tensor's life, %" G_GUINT64_FORMAT " widened (up to %" G_GUINT64_FORMAT
             " ns), %" G_GUINT64_FORMAT " dropped\n", ms.tensors, ms.segments, ms.driver_kept, ms.anchors,
             ms.anchor_dev_ns, ms.refs_exact, ms.refs, ms.stretched, ms.stretch_max_ns, ms.unresolved);
  if (roles != NULL)
    {
      /* Ids asked for that no collective named: said, by id. */
      g_autoptr (GString) unseen = g_string_new (NULL);
      for (guint k = 0; k < roles->asked->len; k++)
        {
          const GroupRole *gr = &g_array_index (roles->asked, GroupRole, k);
          if (!gr->seen)
            g_string_append_printf (unseen, "%s%" G_GUINT64_FORMAT, unseen->len ? ", " : "", gr->id);
        }
      if (unseen->len > 0)
        fprintf (stderr, "vramsim: warning: --group-role: no collective of %s names group %s (vramsim info lists "
                 "the groups)\n", in, unseen->str);
      if (unseen->len > 0 || isatty (2))
        fprintf (stderr, "vramsim: --group-role gave %" G_GUINT64_FORMAT " collective%s a role\n", roles->changed,
                 roles->changed == 1 ? "" : "s");
    }
  if (kb != NULL)
    {
      guint64 kernels, set;
      kernel_bytes_counts (kb, &kernels, &set);
      if (set == 0 || isatty (2))
        fprintf (stderr, "vramsim: --kernel-bytes gave %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                 " kernels their bytes%s\n", set, kernels, set == 0 ? " (no name matched)" : "");
    }
  return 0;
}
