/* cmd-convert.c — `vramsim convert IN OUT`: JSONL <-> binary, losslessly,
 * and profiler traces (Kineto, Nsight Systems) into vramsim traces. */
#include "cli/cmds.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/outfile.h"
#include "import/import.h"
#include "import/kernel-bytes.h"
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

static gboolean
convert_native (const char *in, const char *out, VsTraceFormat format, VsKernelBytes *kb,
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
  g_autofree char *format = NULL, *kernel_bytes = NULL;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format,
      "Encoding of OUT: jsonl or binary (default: binary when OUT ends in .vtrace, else jsonl)", "jsonl|binary" },
    { "kernel-bytes", 0, 0, G_OPTION_ARG_FILENAME, &kernel_bytes,
      "Give kernels without bytes their DRAM traffic from FILE: an Nsight Compute CSV (dram__bytes.sum) or NAME,BYTES lines", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("IN OUT - convert a trace between encodings, or import one");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
      "Translates a vramsim trace between JSON Lines (.jsonl) and the binary\n"
      "format (.vtrace) without loss; the input encoding is detected from its\n"
      "first bytes. A PyTorch profiler (Kineto) JSON trace or an Nsight Systems\n"
      "SQLite export is imported into a vramsim trace (docs/importers.md).\n"
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
      "Examples:\n"
      "  vramsim convert traces/train-step.jsonl /tmp/train-step.vtrace\n"
      "  vramsim convert /tmp/train-step.vtrace - | head\n"
      "  vramsim convert profile.pt.trace.json step.vtrace\n"
      "  vramsim convert run.vtrace run-bytes.vtrace --kernel-bytes bytes.csv\n");
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("convert: %s", error->message);
      g_error_free (error);
      return 2;
    }
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
  if (!outfile_check_not_input (out, "OUT", in, "IN", &error)
      || !outfile_check_not_input (out, "OUT", kernel_bytes, "--kernel-bytes", &error))
    {
      cmd_error ("convert: %s", error->message);
      g_clear_error (&error);
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
  gboolean ok;
  guint64 count = 0;
  if (kb != NULL)
    ok = convert_native (in, out, fmt, kb, &count, &error);
  else if (!looks_native (in) && import_kineto_detect (in))
    ok = import_kineto (in, out, &error);
  else if (!looks_native (in) && import_nsys_detect (in))
    ok = import_nsys (in, out, &error);
  else
    ok = convert_native (in, out, fmt, NULL, &count, &error);
  if (!ok)
    {
      cmd_error ("%s", error ? error->message : "conversion failed");
      g_clear_error (&error);
      return 1;
    }
  if (isatty (2) && strcmp (out, "-") != 0)
    fprintf (stderr, "vramsim: wrote %s (%" G_GUINT64_FORMAT " events)\n", out, count);
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
