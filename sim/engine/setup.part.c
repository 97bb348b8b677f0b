/* setup.part.c — setting the engine up from a config, and tearing it down.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit; not compiled alone). */
#include "engine/sim-priv.h"

static void
sim_setup (Sim *s)
{
  const VsConfig *c = s->core.cfg;
  s->gpu.ops_made = g_ptr_array_new ();
  s->core.live_jobs.next = s->core.live_jobs.prev = &s->core.live_jobs;
  s->core.live_allocs.next = s->core.live_allocs.prev = &s->core.live_allocs;
  s->core.q = evq_new ();
  s->host.issue_t = INFINITY;
  s->stats.cap_first_t = G_MAXUINT64;   /* note_captured */
  s->stats.next_progress = s->core.opts->progress ? 1000000 : G_MAXUINT64;
  s->core.net = flow_net_new ();
  /* Before anything reads ahead (infer below): the reader's job-size check
   * must see every collective. */
  coll_setup (s);
  /* Inferred accesses (docs/model.md 6b): auto decides from the trace's
   * first kernels (read ahead, or known to a buffer's reader: fit and
   * sweep runs of a trace that names its accesses skip the look-ahead);
   * named (the trace's word only) reads it directly. */
  if (c->touches == VS_TOUCHES_INFER
      || (c->touches == VS_TOUCHES_AUTO && trace_reader_kernels_named (s->core.trace) != 1))
    {
      s->core.infer = infer_new (s->core.trace, c->touches == VS_TOUCHES_INFER ? VS_INFER_ALWAYS : VS_INFER_AUTO);
      s->core.reader = infer_reader (s->core.infer);
    }
  s->gpu.b_dev = c->memory.bandwidth * c->memory.efficiency;
  s->gpu.b0_dev = s->core.cap_cfg->memory.bandwidth * s->core.cap_cfg->memory.efficiency;
  s->gpu.ns_per_byte0 = 1e9 / s->gpu.b0_dev;
  s->gpu.ns_per_byte = 1e9 / s->gpu.b_dev;
  s->gpu.tflops_scale = s->core.cap_cfg->tflops / c->tflops;
  {
    VsKernelChip cap, tgt;
    kernel_chip_from_config (&cap, s->core.cap_cfg);
    kernel_chip_from_config (&tgt, c);
    s->gpu.kmodel = kernel_model_new (&cap, &tgt);
    s->gpu.simple = c->kernel_model == VS_KMODEL_SIMPLE;
  }
  s->stats.warnings = g_ptr_array_new_with_free_func (g_free);
  s->stats.fronts = g_ptr_array_new ();
  s->stats.gpu_idle_t = -1;
  launch_queue_setup (s);
  s->gpu.pageable_cap = c->link.bandwidth * c->link.pageable_efficiency;
  s->gpu.r_sm = flow_net_add_resource (s->core.net, config_builtin_names[VS_BUILTIN_SM], 1.0);
  s->gpu.r_dev = flow_net_add_resource (s->core.net, config_builtin_names[VS_BUILTIN_DEVICE_MEM], s->gpu.b_dev);
  if (!c->unified)
    {
      double l = c->link.bandwidth * c->link.efficiency;
      s->gpu.r_h2d = flow_net_add_resource (s->core.net, config_builtin_names[VS_BUILTIN_LINK_H2D], l);
      s->gpu.r_d2h = flow_net_add_resource (s->core.net, config_builtin_names[VS_BUILTIN_LINK_D2H], l);
    }
  else
    s->gpu.r_h2d = s->gpu.r_d2h = s->gpu.r_dev;
  s->gpu.r_tier0 = flow_net_n_resources (s->core.net);
  for (guint i = 0; i < c->n_tiers; i++)
    flow_net_add_resource (s->core.net, c->tiers[i].name, c->tiers[i].bandwidth * c->tiers[i].efficiency);
  s->gpu.r_host = c->unified ? s->gpu.r_dev : flow_net_add_resource (s->core.net, config_builtin_names[VS_BUILTIN_HOST_MEM], c->host.bandwidth);

  s->mem.loc_host = (int) c->n_tiers + 1;
  s->mem.n_locs = c->n_tiers + 2;
  s->mem.loc_cap = g_new0 (guint64, s->mem.n_locs);
  s->mem.loc_used = g_new0 (guint64, s->mem.n_locs);
  s->mem.loc_peak = g_new0 (guint64, s->mem.n_locs);
  s->out.res_cur_t = g_new0 (double, s->mem.n_locs);
  s->gpu.parts = g_new (Part, 2 * s->mem.n_locs);
  s->mem.loc_cap[LOC_DEVICE] = c->memory.capacity > c->memory.reserved ? c->memory.capacity - c->memory.reserved : 0;
  for (guint i = 0; i < c->n_tiers; i++)
    s->mem.loc_cap[LOC_TIER (i)] = c->tiers[i].capacity;
  s->mem.loc_cap[s->mem.loc_host] = c->unified ? 0 : c->host.capacity;
  policy_setup (s);
  amodel_setup (s);

  slotmap_init (&s->mem.allocs);
  s->host.threads = g_hash_table_new (NULL, NULL);
  s->host.thread_list = g_ptr_array_new ();
  u64map_init (&s->gpu.streams);
  s->gpu.stream_list = g_ptr_array_new ();
  u64map_init (&s->gpu.events);
  s->stats.tags = g_hash_table_new (g_str_hash, g_str_equal);
  s->stats.tag_stats = g_array_new (FALSE, FALSE, sizeof (TagStat));
  s->stats.kernels = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  u64map_init (&s->stats.kernel_by_ptr);
  s->stats.marks = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&s->gpu.ce_queue[0]);
  g_queue_init (&s->gpu.ce_queue[1]);
}

static void
mark_free (gpointer p)
{
  MarkStat *m = p;
  g_free ((char *) m->name);
  for (GArray **a = (GArray *[]) { m->pred, m->cap, m->range_pred, m->range_cap, m->gpu, m->range_gpu, m->own,
                                    m->range_own }, **e = a + 8;
       a < e; a++)
    if (*a)
      g_array_unref (*a);
  g_free (m);
}

static void
sim_teardown (Sim *s)
{
  amodel_teardown (s);
  coll_teardown (s);
  launch_queue_teardown (s);
  gpu_fronts_teardown (s);   /* the fronts still held (marks, waiters) */
  g_clear_pointer (&s->core.infer, infer_free);
  g_clear_pointer (&s->core.infer_done, infer_free);
  /* Free every op, job and allocation still alive, whatever holds them. */
  for (guint i = 0; i < s->gpu.ops_made->len; i++)
    {
      Op *op = s->gpu.ops_made->pdata[i];
      g_free (op->c.more);
      if (op->acc != op->acc_inline)
        {
          g_free (op->acc);
          g_free (op->mode);
        }
      g_free (op);
    }
  g_ptr_array_free (s->gpu.ops_made, TRUE);
  while (s->mem.free_allocs)
    {
      Alloc *a = s->mem.free_allocs;
      s->mem.free_allocs = a->lru_next;
      g_free (a);
    }
  while (s->core.free_jobs)
    {
      Job *j = s->core.free_jobs;
      s->core.free_jobs = j->next_free;
      g_free (j->c.more);
      g_free (j);
    }
  while (s->core.live_jobs.next != &s->core.live_jobs)
    {
      Job *j = (Job *) s->core.live_jobs.next;
      live_unlink (&j->live);
      g_free (j->c.more);
      g_free (j);
    }
  while (s->core.live_allocs.next != &s->core.live_allocs)
    {
      Alloc *a = (Alloc *) (gpointer) ((char *) s->core.live_allocs.next - offsetof (Alloc, live));
      live_unlink (&a->live);
      amodel_uses_clear (a);
      g_free (a);
    }
  u64map_clear (&s->gpu.events);
  g_free (s->gpu.event_dense);
  for (guint i = 0; i < s->gpu.stream_list->len; i++)
    g_free (s->gpu.stream_list->pdata[i]);
  g_ptr_array_free (s->gpu.stream_list, TRUE);
  u64map_clear (&s->gpu.streams);
  g_free (s->gpu.stream_dense);
  for (guint i = 0; i < s->host.thread_list->len; i++)
    {
      Thread *t = s->host.thread_list->pdata[i];
      if (t->open_marks)
        g_array_unref (t->open_marks);
      g_free (t);
    }
  g_ptr_array_free (s->host.thread_list, TRUE);
  g_hash_table_destroy (s->host.threads);
  slotmap_clear (&s->mem.allocs);
  g_hash_table_destroy (s->stats.tags);
  for (guint i = 0; i < s->stats.tag_stats->len; i++)
    g_free (g_array_index (s->stats.tag_stats, TagStat, i).name);
  g_array_free (s->stats.tag_stats, TRUE);
  g_hash_table_destroy (s->stats.kernels);
  u64map_clear (&s->stats.kernel_by_ptr);
  kernel_model_free (s->gpu.kmodel);
  g_ptr_array_free (s->stats.warnings, TRUE);
  GList *ms = g_hash_table_get_values (s->stats.marks);
  g_list_free_full (ms, mark_free);
  g_hash_table_destroy (s->stats.marks);
  g_queue_clear (&s->gpu.ce_queue[0]);
  g_queue_clear (&s->gpu.ce_queue[1]);
  evq_free (s->core.q);
  flow_net_free (s->core.net);
  g_free (s->mem.loc_cap);
  g_free (s->mem.loc_used);
  g_free (s->mem.loc_peak);
  g_free (s->out.res_cur_t);
  g_free (s->gpu.parts);
  if (s->core.jobs_spare)
    g_ptr_array_free (s->core.jobs_spare, TRUE);
  if (s->out.series)
    {
      g_array_free (s->out.series->sums, TRUE);
      g_free (s->out.series);
    }
  cJSON_Delete (s->stats.oom_obj);
}
