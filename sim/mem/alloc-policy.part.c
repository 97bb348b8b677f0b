/* alloc-policy.part.c — the allocator model under the oversubscription
 * policies other than oom (SPEC 5.6; docs/model.md "Allocator models",
 * "Under spill, direct and uvm").
 *
 * The model (alloc-model.part.c) turns the trace's tensor events into
 * segment events; the policy acts on what that leaves the device with:
 *
 *  - every policy (oom too): a segment's cudaMalloc refused while the
 *    trace's own managed memory is resident evicts enough of it for the
 *    request, once, and is tried again (the driver evicts managed pages
 *    for cudaMalloc: docs/model.md section 6).
 *  - spill: cudaMalloc of a segment fails when the device is full; the
 *    model first frees its cache and retries (release_cached_blocks, as
 *    PyTorch does before it raises), and only then does the policy spill:
 *    the least recently touched tensor not used by a running op is copied
 *    below (if written and not already clean there) and its block returns
 *    to the cache, and the malloc is tried again, until it fits or no
 *    victim is left. The unit that moves is the tensor (its bytes are the
 *    traffic), not the segment: a segment cannot be half on the host, and
 *    what PyTorch jobs use to offload (save_on_cpu, FSDP and ZeRO
 *    offload) copies tensors out and frees their blocks; the device then
 *    holds what the allocator still reserves, so fragmentation decides
 *    when spilling has made room. A tensor swapped back in takes a new
 *    block on its op's stream (the same spilling loop, sparing the op's
 *    other tensors; keyed by stream 0 when the trace's allocations name
 *    none, as all of them are); one that cannot fit is reached where it lies.
 *  - direct: the same release-and-retry, then a tensor that still does
 *    not fit is placed below (first tier with room, else the host) outside
 *    the device allocator, and kernels reach it there for good (zero-copy,
 *    as cudaHostAlloc'ed memory): it counts in neither allocated nor
 *    reserved.
 *  - uvm: the segments are managed memory (cudaMallocManaged in place of
 *    cudaMalloc). That call does not fail for lack of device memory, so
 *    the model has no limit and never releases its cache on its own.
 *    Residency is per tensor: each live tensor is the engine's managed
 *    unit (its byte range faults in when a kernel touches it, created on
 *    the device at first touch, evicted LRU first, managed.part.c); the
 *    device is charged what is resident, not what is reserved; the rest of
 *    the segments (cached free blocks and non-resident tensors) is managed
 *    memory off the device, charged to the host (5.7): host charge
 *    reserved - live tensors' bytes, plus each tensor's non-resident share
 *    as today. A freed block's pages leave the device with the free (the
 *    driver would keep them until evicted; the next tensor in the block
 *    faults them again, created on the device, without migration).
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* The model's driver limit: the device less everything else charged to it. */
static void
amodel_set_device_limit (Sim *s)
{
  guint64 other = s->mem.loc_used[LOC_DEVICE] - MIN (s->mem.loc_used[LOC_DEVICE], s->mem.amodel_charged);
  guint64 cap = s->mem.loc_cap[LOC_DEVICE];
  alloc_set_limit (s->mem.amodel, cap > other ? cap - other : 0);
}

/* The least recently touched tensor on the device that can be spilled
 * (not used by a running op nor in KEEP, with room below for it), or NULL.
 * Not one the host has freed (a stream-ordered free still queued): the
 * model has its block back already, or waiting for another stream, so
 * moving it makes no room and copies dead bytes below. */
static Alloc *
amodel_victim (Sim *s, Alloc *const *keep, guint n_keep)
{
  for (Alloc *v = s->mem.lru_dev.head; v != NULL; v = v->lru_next)
    if (v->via_model && !v->model_freed && v->kind == VS_MEM_DEVICE && v->loc == LOC_DEVICE
        && evictable (v, keep, n_keep)
        && ((v->below != LOC_NONE && !v->dirty) || tier_with_room (s, v->charge) != LOC_NONE))
      return v;
  return NULL;
}

/* A block for A (BYTES on STREAM) from the model: under spill, spills
 * victims until the malloc succeeds. The moves go to JOBS. */
static gboolean
amodel_malloc_spilling (Sim *s, Alloc *a, guint64 stream, guint64 t, Alloc *const *keep, guint n_keep,
                        GPtrArray *jobs)
{
  gboolean evicted = FALSE;
  for (;;)
    {
      amodel_set_device_limit (s);
      gboolean ok = alloc_malloc (s->mem.amodel, a->id, a->bytes, stream, t, NULL);
      amodel_settle (s);     /* a failed malloc may have released cached segments */
      if (ok)
        return TRUE;
      if (!evicted && s->mem.lru_man.head != NULL)
        {
          /* The trace's own managed memory makes room first, as the
           * driver evicts managed pages for cudaMalloc (section 6): enough
           * for the request rounded to 2 MiB, once. */
          evicted = TRUE;
          guint64 need = round_up (a->bytes, 2u << 20), got = 0;
          guint64 free_b = loc_free (s, LOC_DEVICE);
          Job *wb = need > free_b ? evict_managed (s, need - free_b, keep, n_keep, &got) : NULL;
          if (wb != NULL)
            g_ptr_array_add (jobs, wb);
          if (got > 0)
            continue;
        }
      /* Larger than all the device the allocator may have: spilling
       * everything would not help. */
      guint64 other = s->mem.loc_used[LOC_DEVICE] - MIN (s->mem.loc_used[LOC_DEVICE], s->mem.amodel_charged);
      if (!s->mem.spill || other >= s->mem.loc_cap[LOC_DEVICE] || a->bytes > s->mem.loc_cap[LOC_DEVICE] - other)
        return FALSE;
      Alloc *v = amodel_victim (s, keep, n_keep);
      if (v == NULL)
        return FALSE;
      Job *j = spill_victim (s, v);
      if (j != NULL)
        g_ptr_array_add (jobs, j);
    }
}

/* Device allocation A of event EV under spill or direct (or oom, when
 * managed memory is resident that could make room). FALSE: out of memory
 * (recorded; --keep-going overflows instead). */
static gboolean
amodel_place (Sim *s, Alloc *a, const VsEvent *ev, GPtrArray *jobs)
{
  guint64 stream = ev->has_stream ? ev->stream : 0;
  a->via_model = TRUE;
  a->home = ev->has_stream ? ev->stream : AMODEL_HOME_UNKNOWN;   /* alloc-streams.part.c */
  a->pool_named = ev->has_stream;
  if (amodel_malloc_spilling (s, a, stream, ev->t, &a, 1, jobs))
    {
      a->loc = LOC_DEVICE;
      a->charge = alloc_block_bytes (s->mem.amodel, a->id);
      return TRUE;
    }
  if (!s->mem.amodel_places)
    return amodel_alloc (s, a, ev);   /* oom (here for its managed eviction) */
  /* It does not fit: below, swapped in when used (spill) or for good
   * (direct); a->charge (rounded to the granularity) is what it takes there. */
  a->fixed = !s->mem.spill;
  if (place_below (s, a))
    return TRUE;
  a->fixed = FALSE;
  return amodel_alloc (s, a, ev);   /* nowhere: the oom path (report, --keep-going) */
}

/* Room on the device for OP's spilled tensor A (swap_in): a new block,
 * spilling others but none of OP's. */
static gboolean
amodel_swap_room (Sim *s, Alloc *a, Op *op, GPtrArray *jobs)
{
  /* Freed by the host, used by ops queued before the free: its id may
   * already name a new tensor's block, so it stays where it lies. */
  if (a->model_freed)
    return FALSE;
  guint64 t = (guint64) MAX (0.0, s->core.now - s->core.t0);
  guint64 stream = op->st ? op->st->id : 0;
  /* A new block on OP's stream. In a trace whose allocations name no
   * stream the model keys every block by stream 0 (the program's current
   * stream, alloc-streams.part.c), so this one too: keyed by OP's stream
   * it would sit in a pool no other allocation of the trace can reuse. */
  if (!amodel_malloc_spilling (s, a, a->pool_named ? stream : 0, t, op->acc, op->n_acc, jobs))
    return FALSE;
  /* Its earlier block's streams are gone with that block. */
  amodel_uses_clear (a);
  a->home = stream;
  return TRUE;
}

/* Spill victim V leaves the device: its block returns to the model's cache. */
static void
amodel_evicted (Sim *s, Alloc *v)
{
  guint64 t = (guint64) MAX (0.0, s->core.now - s->core.t0);
  if (!v->model_freed)   /* else the model has the block back, and the id may be another's */
    {
      alloc_free (s->mem.amodel, v->id, t);
      amodel_uses_clear (v);
    }
  amodel_settle (s);
}

/* Device allocation A, made managed by the uvm policy, takes its block in
 * a managed segment (never refused: cudaMallocManaged oversubscribes). */
static void
amodel_managed_alloc (Sim *s, Alloc *a, const VsEvent *ev)
{
  gboolean ok = alloc_malloc (s->mem.amodel, a->id, a->bytes, ev->has_stream ? ev->stream : 0, ev->t, NULL);
  g_assert (ok);         /* no limit */
  a->via_model = TRUE;
  a->home = ev->has_stream ? ev->stream : AMODEL_HOME_UNKNOWN;   /* alloc-streams.part.c */
  a->pool_named = ev->has_stream;
  s->mem.amodel_live += a->bytes;
  amodel_settle (s);
}

/* Under uvm: the host holds the segments' bytes that no live tensor
 * accounts for (each tensor charges its own non-resident share). */
static void
amodel_settle_managed (Sim *s, guint64 reserved)
{
  guint64 now = reserved > s->mem.amodel_live ? reserved - s->mem.amodel_live : 0;
  guint64 was = s->mem.amodel_charged;
  if (now > was)
    loc_add (s, s->mem.loc_host, now - was);
  else if (now < was)
    loc_sub (s, s->mem.loc_host, was - now);
  s->mem.amodel_charged = now;
}

/* Tensor A leaves (alloc_release_charges): a device tensor's charge below,
 * if it lies or has a copy there; a managed one's bytes return to the
 * segments' host share (its own charges went as any managed one's). */
static void
amodel_release (Sim *s, Alloc *a)
{
  if (a->kind == VS_MEM_MANAGED)
    {
      s->mem.amodel_live -= MIN (s->mem.amodel_live, a->bytes);
      amodel_settle (s);
      return;
    }
  if (a->loc != LOC_DEVICE)
    loc_sub (s, a->loc, a->charge);
  if (a->below != LOC_NONE)
    loc_sub (s, a->below, a->charge);
  a->below = LOC_NONE;
}
