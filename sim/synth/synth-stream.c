/* synth-stream.c — `vramsim synth stream`: the STREAM benchmark's four
 * kernels (McCalpin) over three arrays of doubles (docs/workloads.md).
 *
 * copy c = a (2 arrays moved), scale b = q·c (2), add c = a + b (3),
 * triad a = b + q·c (3); the host synchronizes after each kernel, as STREAM
 * times each one. Device arrays are initialized by a kernel; managed arrays
 * are initialized by the host, so their pages start there (SPEC 5.7), and
 * --prefetch moves them to the device before the first iteration (and
 * back to the host at the end). One mark "iter" per iteration. */
#include "synth/synth.h"

#define COMPUTE 1

gboolean
synth_stream (const SynthStreamOpts *o, SynthEmit *e, GError **error)
{
  VsMemKind kind = o->managed ? VS_MEM_MANAGED : VS_MEM_DEVICE;
  guint64 a = synth_alloc (e, o->size, kind, "arrays");
  guint64 b = synth_alloc (e, o->size, kind, "arrays");
  guint64 c = synth_alloc (e, o->size, kind, "arrays");
  double n = (double) (o->size / 8);
  if (!o->managed)
    {
      guint64 w[] = { a, b, c };
      synth_kernel (e, "stream_init", COMPUTE, 0, NULL, 0, w, 3, VS_NONE);
      synth_sync_device (e);
    }
  else if (o->prefetch)
    {
      synth_prefetch (e, a, VS_TO_DEVICE, COMPUTE);
      synth_prefetch (e, b, VS_TO_DEVICE, COMPUTE);
      synth_prefetch (e, c, VS_TO_DEVICE, COMPUTE);
      synth_sync_device (e);
    }
  for (guint it = 0; it < o->iters; it++)
    {
      synth_mark (e, "iter");
      synth_kernel (e, "stream_copy", COMPUTE, 0, &a, 1, &c, 1, VS_NONE);
      synth_sync_device (e);
      synth_kernel (e, "stream_scale", COMPUTE, n, &c, 1, &b, 1, VS_NONE);
      synth_sync_device (e);
      guint64 r_add[] = { a, b };
      synth_kernel (e, "stream_add", COMPUTE, n, r_add, 2, &c, 1, VS_NONE);
      synth_sync_device (e);
      guint64 r_triad[] = { b, c };
      synth_kernel (e, "stream_triad", COMPUTE, 2 * n, r_triad, 2, &a, 1, VS_NONE);
      synth_sync_device (e);
    }
  if (!o->managed)
    {
      synth_copy (e, VS_DIR_D2H, a, 0, o->size, COMPUTE, FALSE);
      synth_copy (e, VS_DIR_D2H, b, 0, o->size, COMPUTE, FALSE);
      synth_copy (e, VS_DIR_D2H, c, 0, o->size, COMPUTE, FALSE);
    }
  else if (o->prefetch)
    {
      synth_prefetch (e, a, VS_TO_HOST, COMPUTE);
      synth_prefetch (e, b, VS_TO_HOST, COMPUTE);
      synth_prefetch (e, c, VS_TO_HOST, COMPUTE);
      synth_sync_device (e);
    }
  synth_free (e, a);
  synth_free (e, b);
  synth_free (e, c);
  (void) error;
  return TRUE;
}
