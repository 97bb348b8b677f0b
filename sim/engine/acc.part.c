/* acc.part.c — an op's accesses: the live allocations its ids name, each
 * once with its modes (ACC_R, ACC_W, ACC_TOUCH), referenced while the op
 * lives, and the bytes a kernel's ids name.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

/* The live allocation ID, or NULL. */
static inline Alloc *
alloc_find (Sim *s, guint64 id)
{
  guint64 *v = slotmap_lookup (&s->mem.allocs, id);
  return v ? GSIZE_TO_POINTER (*v) : NULL;
}

/* The live allocation ID, or NULL (0 names none), counting references to
 * ids that are not live. */
static inline Alloc *
alloc_lookup (Sim *s, guint64 id)
{
  if (id == 0)
    return NULL;
  Alloc *a = alloc_find (s, id);
  if (G_UNLIKELY (a == NULL))
    s->stats.unknown_refs++;
  return a;
}

/* The allocations an op uses, each once with its access modes: built in
 * Sim's scratch arrays, deduplicated in O(1) by a stamp on the allocation
 * (a kernel may name thousands of ids). */
static void
acc_begin (Sim *s, Op *op)
{
  s->gpu.acc_gen++;
  /* op->acc and op->mode are the inline arrays (op_alloc, op_release). */
  op->kinds = 0;
}

static inline void acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id,
                                guint8 m, guint *kinds, gboolean ref);

/* Adds allocation ID with MODE to the op (once per allocation: modes
 * merge), growing its arrays past the inline ones when needed. */
static inline void
acc_add (Sim *s, Op *op, guint64 id, guint8 mode)
{
  if (G_UNLIKELY (op->n_acc == op->acc_cap))
    {
      /* Longer than the inline arrays: move to the heap, then double. */
      guint cap = 2 * op->acc_cap;
      if (op->acc == op->acc_inline)
        {
          op->acc = g_memdup2 (op->acc_inline, OP_INLINE_ACC * sizeof (Alloc *));
          op->mode = g_memdup2 (op->mode_inline, OP_INLINE_ACC);
        }
      op->acc = g_renew (Alloc *, op->acc, cap);
      op->mode = g_renew (guint8, op->mode, cap);
      op->acc_cap = cap;
    }
  guint n = op->n_acc, kinds = op->kinds;
  acc_add_one (s, op->acc, op->mode, &n, s->gpu.acc_gen, id, mode, &kinds, TRUE);
  op->n_acc = n;
  op->kinds = kinds;
}

/* Adds allocation ID with mode M to ACC/MODE (N entries, room for one
 * more), or merges M into its entry. A new entry adds 1 << its kind to
 * KINDS and, if REF, takes a reference on the allocation. Arrays and
 * count are passed as locals: the mode bytes it stores may alias
 * anything, which would make the compiler reload an op's fields after
 * every store. */
static inline void
acc_add_one (Sim *s, Alloc **acc, guint8 *mode, guint *n, guint64 gen, guint64 id, guint8 m, guint *kinds,
             gboolean ref)
{
  Alloc *a = alloc_lookup (s, id);
  if (a == NULL)
    return;
  if (a->acc_gen == gen)
    {
      mode[a->acc_idx] |= m;
      return;
    }
  a->acc_gen = gen;
  a->acc_idx = *n;
  if (ref)
    {
      /* The op's reference, and one more user until op_complete (which
       * counts every entry out: acc_add_few counts its own in). */
      a->refs++;
      a->users++;
    }
  *kinds |= 1u << a->kind;
  acc[*n] = a;
  mode[(*n)++] = m;
}

/* 1 << kind of each live allocation of IDS (N of them). */
static inline guint
acc_kinds (Sim *s, const guint64 *ids, guint n)
{
  guint kinds = 0;
  for (guint i = 0; i < n; i++)
    {
      Alloc *a = alloc_lookup (s, ids[i]);
      if (a != NULL)
        kinds |= 1u << a->kind;
    }
  return kinds;
}

/* acc_add for a kernel whose ids fit the op's inline arrays (the common
 * case). References are taken after the list is built, and only when
 * the op keeps it: a kernel that reaches only device memory, whose
 * traffic is given, needs its allocations for nothing after this
 * (kernel_run starts it from its bytes, nothing tracks them) and keeps
 * none. */
static void
acc_add_few (Sim *s, Op *op, const VsEvent *ev)
{
  /* The hint is positive only where the list may be dropped (below:
   * device memory only, traffic given) and no allocator model or
   * inference reads it. */
  if (s->gpu.acc_drop_hint > 0 && ev->bytes != VS_NONE)
    {
      /* The list would be dropped below unless it has managed or pinned
       * memory, as the kernels' before mostly had not (the hint): the
       * kinds first, without the list (or the stamps, which only the
       * list and an inference's accesses added to it read). */
      guint64 unknown = s->stats.unknown_refs;
      guint kinds = acc_kinds (s, ev->reads, ev->n_reads) | acc_kinds (s, ev->writes, ev->n_writes)
                    | acc_kinds (s, ev->touches, ev->n_touches);
      if (!(kinds & (1u << VS_MEM_MANAGED | 1u << VS_MEM_PINNED)))
        {
          op->kinds = kinds;
          op->n_acc = 0;
          return;
        }
      s->stats.unknown_refs = unknown;   /* counted again below */
    }
  Alloc **acc = op->acc_inline;
  guint8 *mode = op->mode_inline;
  guint n = 0, kinds = 0;
  guint64 gen = s->gpu.acc_gen;
  for (guint i = 0; i < ev->n_reads; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->reads[i], ACC_R, &kinds, FALSE);
  for (guint i = 0; i < ev->n_writes; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->writes[i], ACC_W, &kinds, FALSE);
  for (guint i = 0; i < ev->n_touches; i++)
    acc_add_one (s, acc, mode, &n, gen, ev->touches[i], ACC_R | ACC_W | ACC_TOUCH, &kinds, FALSE);
  op->kinds = kinds;
  if (s->mem.dev_only && ev->bytes != VS_NONE)
    {
      gboolean drop = !(kinds & (1u << VS_MEM_MANAGED | 1u << VS_MEM_PINNED));
      if (G_UNLIKELY (s->mem.amodel != NULL))
        {
          /* The allocator model's record_stream needs the list (op_issue
           * tells it otherwise, once the op's stream is known). */
          if (drop)
            amodel_uses (s, stream_get (s, ev->stream), acc, n);
        }
      else if (s->core.infer == NULL)
        s->gpu.acc_drop_hint = drop ? MIN (s->gpu.acc_drop_hint + 1, 8) : MAX (s->gpu.acc_drop_hint - 2, -8);
      if (drop)
        n = 0;
    }
  for (guint i = 0; i < n; i++)
    {
      acc[i]->refs++;
      acc[i]->users++;   /* until op_complete */
    }
  op->n_acc = n;
}

/* What the op's accesses tell: whether it uses managed memory (fault_in
 * has work) and pinned host memory. */
static inline void
acc_end (Op *op)
{
  op->has_managed = (op->kinds >> VS_MEM_MANAGED) & 1;
  op->has_pinned = (op->kinds >> VS_MEM_PINNED) & 1;
}

/* The bytes a kernel's reads and writes name (5.4): an id read and
 * written counts twice, a touched one once. Summed in the order of the
 * accesses (the rounding of large sizes depends on it). Only kernel_run
 * needs it, and only when the kernel's traffic is not given or must be
 * split over locations. */
static double
op_wsum (const Op *op)
{
  /* Inferred accesses carry no traffic of their own: the kernel's
   * captured time already holds its bytes on the device. */
  if (op->kinds & OP_INFERRED)
    return 0;
  double wsum = 0;
  Alloc *const *acc = op->acc;
  const guint8 *mode = op->mode;
  for (guint i = 0, n = op->n_acc; i < n; i++)
    {
      double sz = i2d (acc[i]->bytes);
      if (mode[i] & (ACC_R | ACC_TOUCH)) wsum += sz;
      if ((mode[i] & ACC_W) && !(mode[i] & ACC_TOUCH)) wsum += sz;
    }
  return wsum;
}

static Alloc *
ref (Alloc *a)
{
  if (a)
    a->refs++;
  return a;
}
