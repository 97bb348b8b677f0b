/* fuzz-trace.c — libFuzzer harness for the trace readers: the input is a
 * trace file, read event by event through trace_open()/trace_next() as
 * `vramsim info` does. Built twice: as fuzz-jsonl (input as is; the reader
 * detects the encoding) and, with FUZZ_BINARY, as fuzz-bin (the binary
 * magic is put in front unless the input starts with it, so every input
 * reaches the binary decoder). Each input is then read again and skimmed
 * (trace_skim) after its first few events. */
#include "fuzz-common.h"
#include "trace/trace.h"

static char *path;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup ();
  path = fuzz_scratch_path (".trace");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
#ifdef FUZZ_BINARY
  static const char magic[8] = "VRAMTRC\x1a";
  if (size < 8 || memcmp (data, magic, 8) != 0)
    {
      uint8_t *buf = g_malloc (size + 8);
      memcpy (buf, magic, 8);
      memcpy (buf + 8, data, size);
      fuzz_write_file (path, buf, size + 8);
      g_free (buf);
    }
  else
#endif
    fuzz_write_file (path, data, size);

  GError *error = NULL;
  VsTraceReader *r = trace_open (path, &error);
  gboolean read_all = FALSE;
  guint64 count = 0;
  if (r != NULL)
    {
      VsEvent ev;
      /* As vramsim info reads: a version 4 file's checksum too, which
       * the skim below holds the file to. */
      trace_reader_check_sum (r);
      while (trace_next (r, &ev, &error))
        {
          /* Touch what the reader hands out, so ASan sees bad pointers. */
          volatile size_t sink = 0;
          if (ev.name)
            sink += strlen (ev.name);
          if (ev.tag)
            sink += strlen (ev.tag);
          for (guint32 i = 0; i < ev.n_reads; i++)
            sink += ev.reads[i];
          for (guint32 i = 0; i < ev.n_writes; i++)
            sink += ev.writes[i];
          for (guint32 i = 0; i < ev.n_touches; i++)
            sink += ev.touches[i];
          (void) sink;
        }
      read_all = error == NULL;
      count = trace_reader_count (r);
      trace_close (r);
    }
  /* Every failure must say something. */
  if (r == NULL && error == NULL)
    abort ();
  g_clear_error (&error);

  /* The skim (replay --sample-steps after its stop), from after the first
   * size % 5 events: it checks less than a full read (allocation ids), so
   * a trace the full read (checksum included) accepts must be skimmed to
 * the same count, and
   * a refusal must say something. */
  r = trace_open (path, &error);
  if (r != NULL)
    {
      VsEvent ev;
      guint64 k = 0;
      while (k < size % 5 && trace_next (r, &ev, &error))
        k++;
      if (error == NULL && k == size % 5)
        {
          VsTraceSkim sk;
          gboolean ok = trace_skim (r, "step", 0, &sk, &error);
          if (ok ? error != NULL : error == NULL)
            abort ();
          if (read_all && (!ok || k + sk.events != count))
            abort ();
        }
      trace_close (r);
    }
  g_clear_error (&error);
  unlink (path);
  return 0;
}
