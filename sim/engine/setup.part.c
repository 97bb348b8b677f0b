/* setup.part.c — setting the engine up from a config, and tearing it down.
 *
 * Part of the replay engine: #included by sim/engine/replay.c (one
 * translation unit, so the hot paths inline across parts; not compiled
 * alone). */
#include "engine/sim-priv.h"

/* ------------------------------------------------------------------ */
/* Setup, report, teardown                                             */

static void
sim_setup (Sim *s)
{
  const VsConfig *c = s->cfg;
  s->ops_made = g_ptr_array_new ();
  s->live_jobs.next = s->live_jobs.prev = &s->live_jobs;
  s->live_allocs.next = s->live_allocs.prev = &s->live_allocs;
  s->q = evq_new ();
  s->issue_t = INFINITY;
  s->cap_first_t = G_MAXUINT64;   /* note_captured */
  s->next_progress = s->opts->progress ? 1000000 : G_MAXUINT64;
  s->net = flow_net_new ();
  s->b_dev = c->memory.bandwidth * c->memory.efficiency;
  s->b0_dev = s->cap_cfg->memory.bandwidth * s->cap_cfg->memory.efficiency;
  s->ns_per_byte0 = 1e9 / s->b0_dev;
  s->ns_per_byte = 1e9 / s->b_dev;
  s->tflops_scale = s->cap_cfg->tflops / c->tflops;
  s->pageable_cap = c->link.bandwidth * c->link.pageable_efficiency;
  s->r_sm = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_SM], 1.0);
  s->r_dev = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_DEVICE_MEM], s->b_dev);
  if (!c->unified)
    {
      double l = c->link.bandwidth * c->link.efficiency;
      s->r_h2d = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_LINK_H2D], l);
      s->r_d2h = flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_LINK_D2H], l);
    }
  else
    s->r_h2d = s->r_d2h = s->r_dev;
  s->r_tier0 = flow_net_n_resources (s->net);
  for (guint i = 0; i < c->n_tiers; i++)
    flow_net_add_resource (s->net, c->tiers[i].name, c->tiers[i].bandwidth * c->tiers[i].efficiency);
  s->r_host = c->unified ? s->r_dev : flow_net_add_resource (s->net, config_builtin_names[VS_BUILTIN_HOST_MEM], c->host.bandwidth);

  s->loc_host = (int) c->n_tiers + 1;
  s->n_locs = c->n_tiers + 2;
  s->loc_cap = g_new0 (guint64, s->n_locs);
  s->loc_used = g_new0 (guint64, s->n_locs);
  s->loc_peak = g_new0 (guint64, s->n_locs);
  s->res_cur_t = g_new0 (double, s->n_locs);
  s->parts = g_new (Part, 2 * s->n_locs);
  s->loc_cap[LOC_DEVICE] = c->memory.capacity > c->memory.reserved ? c->memory.capacity - c->memory.reserved : 0;
  for (guint i = 0; i < c->n_tiers; i++)
    s->loc_cap[LOC_TIER (i)] = c->tiers[i].capacity;
  s->loc_cap[s->loc_host] = c->unified ? 0 : c->host.capacity;
  s->policy = &policies[c->oversubscription];
  s->spill = c->oversubscription == VS_OVERSUB_SPILL;
  s->dev_only = !c->unified && (c->oversubscription == VS_OVERSUB_OOM || c->oversubscription == VS_OVERSUB_UVM);

  slotmap_init (&s->allocs);
  s->threads = g_hash_table_new (NULL, NULL);
  s->thread_list = g_ptr_array_new ();
  u64map_init (&s->streams);
  s->stream_list = g_ptr_array_new ();
  u64map_init (&s->events);
  s->tags = g_hash_table_new (g_str_hash, g_str_equal);
  s->tag_stats = g_array_new (FALSE, FALSE, sizeof (TagStat));
  s->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  u64map_init (&s->kernel_by_ptr);
  s->marks = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&s->ce_queue[0]);
  g_queue_init (&s->ce_queue[1]);
}

static void
mark_free (gpointer p)
{
  MarkStat *m = p;
  g_free ((char *) m->name);
  g_free (m);
}

static void
sim_teardown (Sim *s)
{
  /* Free every op, job and allocation still alive, whatever holds them. */
  for (guint i = 0; i < s->ops_made->len; i++)
    {
      Op *op = s->ops_made->pdata[i];
      if (op->c.waiters)
        g_array_free (op->c.waiters, TRUE);
      if (op->acc != op->acc_inline)
        {
          g_free (op->acc);
          g_free (op->mode);
        }
      g_free (op);
    }
  g_ptr_array_free (s->ops_made, TRUE);
  while (s->free_allocs)
    {
      Alloc *a = s->free_allocs;
      s->free_allocs = a->lru_next;
      g_free (a);
    }
  while (s->free_jobs)
    {
      Job *j = s->free_jobs;
      s->free_jobs = j->next_free;
      g_free (j);
    }
  while (s->live_jobs.next != &s->live_jobs)
    {
      Job *j = (Job *) s->live_jobs.next;
      live_unlink (&j->live);
      if (j->c.waiters)
        g_array_free (j->c.waiters, TRUE);
      g_free (j);
    }
  while (s->live_allocs.next != &s->live_allocs)
    {
      Alloc *a = (Alloc *) (gpointer) ((char *) s->live_allocs.next - offsetof (Alloc, live));
      live_unlink (&a->live);
      g_free (a);
    }
  u64map_clear (&s->events);
  for (guint i = 0; i < s->stream_list->len; i++)
    g_free (s->stream_list->pdata[i]);
  g_ptr_array_free (s->stream_list, TRUE);
  u64map_clear (&s->streams);
  for (guint i = 0; i < s->thread_list->len; i++)
    {
      Thread *t = s->thread_list->pdata[i];
      g_free (t);
    }
  g_ptr_array_free (s->thread_list, TRUE);
  g_hash_table_destroy (s->threads);
  slotmap_clear (&s->allocs);
  g_hash_table_destroy (s->tags);
  for (guint i = 0; i < s->tag_stats->len; i++)
    g_free (g_array_index (s->tag_stats, TagStat, i).name);
  g_array_free (s->tag_stats, TRUE);
  g_hash_table_destroy (s->kernels);
  u64map_clear (&s->kernel_by_ptr);
  GList *ms = g_hash_table_get_values (s->marks);
  g_list_free_full (ms, mark_free);
  g_hash_table_destroy (s->marks);
  g_queue_clear (&s->ce_queue[0]);
  g_queue_clear (&s->ce_queue[1]);
  evq_free (s->q);
  flow_net_free (s->net);
  g_free (s->loc_cap);
  g_free (s->loc_used);
  g_free (s->loc_peak);
  g_free (s->res_cur_t);
  g_free (s->parts);
  if (s->jobs_spare)
    g_ptr_array_free (s->jobs_spare, TRUE);
  if (s->series)
    {
      g_array_free (s->series->sums, TRUE);
      g_free (s->series);
    }
  cJSON_Delete (s->oom_obj);
}
