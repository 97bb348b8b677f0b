/* cmd-info.c — `vramsim info TRACE`: what a trace holds, in one pass.
 *
 * Live bytes are followed in file order (the order the readers validate
 * in); for a trace of one host thread that is time order. Peaks count
 * allocation sizes as asked, without the device's allocation granularity
 * (that is the replay's business). */
#include "cli/cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernel-class.h"
#include "trace/trace-priv.h"

typedef struct {
  guint64 bytes;
  guint8 kind;
  guint tag;       /* index into Info.tags */
} Live;

typedef struct {
  const char *name; /* "untagged" for allocations without a tag */
  guint64 live, peak;
} TagStat;

/* One communicator (collective.group): its size and role (the reader
 * checked that every use agrees), what went over it. */
typedef struct {
  guint64 id;
  guint32 ranks;
  guint8 role;
  guint64 count, bytes;
} GroupStat;

typedef struct {
  guint64 events;
  guint64 ops[VS_OP_COUNT];
  guint64 t_first, t_end;
  guint64 live, peak;
  guint64 live_kind[VS_MEM_COUNT], peak_kind[VS_MEM_COUNT];
  GArray *tags;             /* TagStat, in order of first appearance */
  GHashTable *tag_index;    /* name -> index + 1 */
  GHashTable *allocs;       /* id -> Live* */
  GHashTable *streams, *threads;
  gsize last_tid, last_stream;  /* the last added, + 1 (0: none) */
  guint64 kernel_dur;
  guint64 class_count[VS_KCLASS_COUNT], class_dur[VS_KCLASS_COUNT];
  GHashTable *kernel_class;  /* name -> class + 1: each name is classified once */
  guint64 copy_bytes[VS_DIR_COUNT];
  guint64 coll_count, coll_bytes;   /* every collective, grouped or not */
  GArray *groups;           /* GroupStat, in order of first use */
  GHashTable *group_index;  /* id (owned copy) -> index + 1 */
} Info;

static guint
tag_of (Info *in, const char *tag)
{
  const char *name = tag ? tag : "untagged";
  gpointer v = g_hash_table_lookup (in->tag_index, name);
  if (v != NULL)
    return GPOINTER_TO_UINT (v) - 1;
  TagStat ts = { g_strdup (name), 0, 0 };
  g_array_append_val (in->tags, ts);
  g_hash_table_insert (in->tag_index, (gpointer) ts.name, GUINT_TO_POINTER (in->tags->len));
  return in->tags->len - 1;
}

static void
info_event (Info *in, const VsEvent *ev)
{
  if (in->events == 0 || ev->t < in->t_first)
    in->t_first = ev->t;
  guint64 dur = ev->dur == VS_NONE ? 0 : ev->dur;
  in->t_end = MAX (in->t_end, ev->t + MAX (ev->host_ns, dur));
  in->events++;
  in->ops[ev->op]++;
  /* Events come in runs of one thread and one stream: the hash tables
   * are asked only when those change. */
  if ((gsize) ev->tid + 1 != in->last_tid)
    g_hash_table_add (in->threads, GSIZE_TO_POINTER (in->last_tid = (gsize) ev->tid + 1));
  gboolean has_stream = ev->op != VS_OP_MARK && ev->op != VS_OP_SYNC;
  if (ev->op == VS_OP_ALLOC || ev->op == VS_OP_FREE)
    has_stream = ev->has_stream;
  if (ev->op == VS_OP_SYNC)
    has_stream = ev->scope == VS_SYNC_STREAM;
  if (has_stream && (gsize) ev->stream + 1 != in->last_stream)
    g_hash_table_add (in->streams, GSIZE_TO_POINTER (in->last_stream = (gsize) ev->stream + 1));
  switch (ev->op)
    {
    case VS_OP_ALLOC:
      {
        Live *l = g_new (Live, 1);
        l->bytes = ev->bytes;
        l->kind = ev->kind;
        l->tag = tag_of (in, ev->tag);
        g_hash_table_insert (in->allocs, GSIZE_TO_POINTER ((gsize) ev->id), l);
        in->live += l->bytes;
        in->peak = MAX (in->peak, in->live);
        in->live_kind[l->kind] += l->bytes;
        in->peak_kind[l->kind] = MAX (in->peak_kind[l->kind], in->live_kind[l->kind]);
        TagStat *ts = &g_array_index (in->tags, TagStat, l->tag);
        ts->live += l->bytes;
        ts->peak = MAX (ts->peak, ts->live);
        break;
      }
    case VS_OP_FREE:
      {
        Live *l = g_hash_table_lookup (in->allocs, GSIZE_TO_POINTER ((gsize) ev->id));
        if (l == NULL)
          break; /* cannot happen: the reader checked */
        in->live -= l->bytes;
        in->live_kind[l->kind] -= l->bytes;
        g_array_index (in->tags, TagStat, l->tag).live -= l->bytes;
        g_hash_table_remove (in->allocs, GSIZE_TO_POINTER ((gsize) ev->id));
        break;
      }
    case VS_OP_KERNEL:
      {
        in->kernel_dur += dur;
        const char *name = ev->name ? ev->name : "";
        guint cls = GPOINTER_TO_UINT (g_hash_table_lookup (in->kernel_class, name));
        if (cls == 0)
          {
            cls = kernel_class_of (name).cls + 1;
            g_hash_table_insert (in->kernel_class, g_strdup (name), GUINT_TO_POINTER (cls));
          }
        in->class_count[cls - 1]++;
        in->class_dur[cls - 1] += dur;
        const VsCollective *c = ev->collective;
        if (c != NULL)
          {
            in->coll_count++;
            in->coll_bytes += c->bytes;
            if (c->group != 0)
              {
                guint i = GPOINTER_TO_UINT (g_hash_table_lookup (in->group_index, &c->group));
                if (i == 0)
                  {
                    GroupStat g = { c->group, c->ranks, c->role, 0, 0 };
                    g_array_append_val (in->groups, g);
                    i = in->groups->len;
                    g_hash_table_insert (in->group_index, g_memdup2 (&c->group, sizeof c->group), GUINT_TO_POINTER (i));
                  }
                GroupStat *g = &g_array_index (in->groups, GroupStat, i - 1);
                g->count++;
                g->bytes += c->bytes;
              }
          }
        break;
      }
    case VS_OP_COPY:
      in->copy_bytes[ev->dir] += ev->bytes;
      break;
    default:
      break;
    }
}

static void
format_bytes (char *buf, gsize n, guint64 b)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  double v = (double) b;
  int u = 0;
  while (v >= 1024 && u < 5)
    v /= 1024, u++;
  if (u == 0)
    g_snprintf (buf, n, "%" G_GUINT64_FORMAT " B", b);
  else
    g_snprintf (buf, n, "%.2f %s", v, units[u]);
}

static void
format_time (char *buf, gsize n, guint64 ns)
{
  if (ns >= 1000000000)
    g_snprintf (buf, n, "%.3f s", ns / 1e9);
  else if (ns >= 1000000)
    g_snprintf (buf, n, "%.3f ms", ns / 1e6);
  else if (ns >= 1000)
    g_snprintf (buf, n, "%.3f us", ns / 1e3);
  else
    g_snprintf (buf, n, "%" G_GUINT64_FORMAT " ns", ns);
}

static void
append_str_or_null (GString *s, const char *v)
{
  if (v)
    trace_json_append_string (s, v);
  else
    g_string_append (s, "null");
}

/* The cache the trace says its window starts on (the header's
 * allocator_state: a snapshot's rewound segments, or a profiler's Total
 * Reserved), 0 when it says none. Peak live counts tensors only; replay
 * starts its allocator model on this cache, so a user asking "does it fit"
 * needs both. */
static guint64
start_reserved (const VsTraceHeader *h)
{
  const cJSON *st = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "allocator_state") : NULL;
  const cJSON *rb = cJSON_GetObjectItemCaseSensitive (st, "reserved_bytes");
  if (cJSON_IsNumber (rb) && rb->valuedouble >= 0 && rb->valuedouble < 1.8e19)
    return (guint64) rb->valuedouble;
  guint64 sum = 0;
  const cJSON *seg;
  cJSON_ArrayForEach (seg, cJSON_GetObjectItemCaseSensitive (st, "segments"))
    {
      const cJSON *b = cJSON_GetArrayItem (seg, 1);
      if (cJSON_IsNumber (b) && b->valuedouble >= 0 && b->valuedouble < 1.8e19)
        sum += (guint64) b->valuedouble;
    }
  return sum;
}

static const char *
allocation_level (const VsTraceHeader *h)
{
  const cJSON *a = h->extra ? cJSON_GetObjectItemCaseSensitive (h->extra, "allocations") : NULL;
  return cJSON_IsString (a) ? a->valuestring : NULL;
}

/* Integers go out exactly (cJSON would print them as doubles). */
static void
print_json (const Info *in, const VsTraceHeader *h, const char *path, guint bin_version)
{
  GString *s = g_string_new ("{\n");
  g_string_append (s, "  \"trace\": ");
  trace_json_append_string (s, path);
  g_string_append_printf (s, ",\n  \"format\": \"%s\",\n  \"format_version\": %u", bin_version ? "binary" : "jsonl",
                          bin_version ? bin_version : 1);
  g_string_append_printf (s, ",\n  \"events\": %" G_GUINT64_FORMAT ",\n  \"ops\": {", in->events);
  for (guint op = 0; op < VS_OP_COUNT; op++)
    g_string_append_printf (s, "%s\"%s\": %" G_GUINT64_FORMAT, op ? ", " : "", event_op_name (op), in->ops[op]);
  g_string_append_printf (s, "},\n  \"duration_ns\": %" G_GUINT64_FORMAT ",\n", in->events ? in->t_end - in->t_first : 0);
  g_string_append_printf (s, "  \"peak_live_bytes\": %" G_GUINT64_FORMAT ",\n  \"peak_bytes_by_kind\": {", in->peak);
  for (guint k = 0; k < VS_MEM_COUNT; k++)
    g_string_append_printf (s, "%s\"%s\": %" G_GUINT64_FORMAT, k ? ", " : "", event_kind_name (k), in->peak_kind[k]);
  g_string_append (s, "},\n  \"peak_bytes_by_tag\": {");
  for (guint i = 0; i < in->tags->len; i++)
    {
      const TagStat *ts = &g_array_index (in->tags, TagStat, i);
      g_string_append (s, i ? ", " : "");
      trace_json_append_string (s, ts->name);
      g_string_append_printf (s, ": %" G_GUINT64_FORMAT, ts->peak);
    }
  g_string_append_printf (s, "},\n  \"start_reserved_bytes\": %" G_GUINT64_FORMAT ",\n  \"allocations\": ",
                          start_reserved (h));
  append_str_or_null (s, allocation_level (h));
  g_string_append_printf (s, ",\n  \"streams\": %u,\n  \"threads\": %u,\n", g_hash_table_size (in->streams),
                          g_hash_table_size (in->threads));
  g_string_append_printf (s, "  \"kernels\": {\"count\": %" G_GUINT64_FORMAT ", \"dur_ns\": %" G_GUINT64_FORMAT
                          ", \"classes\": [", in->ops[VS_OP_KERNEL], in->kernel_dur);
  gboolean first = TRUE;
  for (guint c = 0; c < VS_KCLASS_COUNT; c++)
    if (in->class_count[c] > 0)
      {
        g_string_append_printf (s, "%s{\"class\": \"%s\", \"count\": %" G_GUINT64_FORMAT ", \"dur_ns\": %"
                                G_GUINT64_FORMAT "}", first ? "" : ", ", kernel_class_name (c), in->class_count[c],
                                in->class_dur[c]);
        first = FALSE;
      }
  g_string_append (s, "]},\n");
  g_string_append (s, "  \"copy_bytes\": {");
  for (guint d = 0; d < VS_DIR_COUNT; d++)
    g_string_append_printf (s, "%s\"%s\": %" G_GUINT64_FORMAT, d ? ", " : "", event_dir_name (d), in->copy_bytes[d]);
  g_string_append_printf (s, "},\n  \"collectives\": {\"count\": %" G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT
                          ", \"groups\": [", in->coll_count, in->coll_bytes);
  for (guint i = 0; i < in->groups->len; i++)
    {
      const GroupStat *g = &g_array_index (in->groups, GroupStat, i);
      g_string_append_printf (s, "%s{\"id\": %" G_GUINT64_FORMAT ", \"ranks\": %u, \"role\": ", i ? ", " : "", g->id,
                              g->ranks);
      append_str_or_null (s, event_role_name (g->role));
      g_string_append_printf (s, ", \"collectives\": %" G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT "}",
                              g->count, g->bytes);
    }
  g_string_append (s, "]");
  g_string_append (s, "},\n  \"capture\": {\"device\": ");
  append_str_or_null (s, h->device);
  g_string_append (s, ", \"config\": ");
  append_str_or_null (s, h->config);
  g_string_append (s, ", \"tool\": ");
  append_str_or_null (s, h->tool);
  g_string_append (s, "}\n}\n");
  fputs (s->str, stdout);
  g_string_free (s, TRUE);
}

static void
print_text (const Info *in, const VsTraceHeader *h, const char *path, guint bin_version)
{
  char a[64], b[64];
  printf ("trace      %s\n", path);
  if (bin_version >= 4)
    printf ("format     binary, version %u (the end record's summary and checksum hold)\n", bin_version);
  else if (bin_version > 0)
    printf ("format     binary, version %u (no end-record summary: --sample-steps frames the rest; "
            "vramsim convert writes version 4)\n", bin_version);
  else
    printf ("format     JSON Lines\n");
  printf ("capture    %s, config %s%s%s\n", h->device ? h->device : "(device unknown)",
          h->config ? h->config : "(none)", h->tool ? ", by " : "", h->tool ? h->tool : "");
  printf ("events     %" G_GUINT64_FORMAT, in->events);
  gboolean first = TRUE;
  for (guint op = 0; op < VS_OP_COUNT; op++)
    if (in->ops[op])
      {
        printf ("%s%s %" G_GUINT64_FORMAT, first ? " (" : ", ", event_op_name (op), in->ops[op]);
        first = FALSE;
      }
  printf ("%s\n", first ? "" : ")");
  format_time (a, sizeof a, in->events ? in->t_end - in->t_first : 0);
  printf ("duration   %s\n", a);
  format_bytes (a, sizeof a, in->peak);
  printf ("peak live  %s", a);
  for (guint k = 0; k < VS_MEM_COUNT; k++)
    {
      format_bytes (b, sizeof b, in->peak_kind[k]);
      printf ("%s%s %s", k ? ", " : " (", event_kind_name (k), b);
    }
  printf (")\n");
  for (guint i = 0; i < in->tags->len; i++)
    {
      const TagStat *ts = &g_array_index (in->tags, TagStat, i);
      format_bytes (a, sizeof a, ts->peak);
      printf ("  %-14s %s peak\n", ts->name, a);
    }
  guint64 sr = start_reserved (h);
  const char *level = allocation_level (h);
  if (sr > 0 || level != NULL)
    {
      format_bytes (a, sizeof a, sr);
      if (sr > 0)
        printf ("allocator  %s-level allocations; %s reserved at the start (the header's allocator_state)\n",
                level ? level : "unknown", a);
      else
        printf ("allocator  %s-level allocations; an empty cache at the start\n", level ? level : "unknown");
    }
  printf ("streams    %u, threads %u\n", g_hash_table_size (in->streams), g_hash_table_size (in->threads));
  format_time (a, sizeof a, in->kernel_dur);
  printf ("kernels    %" G_GUINT64_FORMAT ", %s captured\n", in->ops[VS_OP_KERNEL], a);
  /* The mix by class (kernel-class.h), largest captured time first. */
  guint order[VS_KCLASS_COUNT], n = 0;
  for (guint c = 0; c < VS_KCLASS_COUNT; c++)
    if (in->class_count[c] > 0)
      {
        guint i = n++;
        for (; i > 0 && in->class_dur[order[i - 1]] < in->class_dur[c]; i--)
          order[i] = order[i - 1];
        order[i] = c;
      }
  for (guint i = 0; i < n; i++)
    {
      guint c = order[i];
      format_time (a, sizeof a, in->class_dur[c]);
      printf ("  %-14s %8" G_GUINT64_FORMAT "  %12s  %5.1f %%\n", kernel_class_name (c), in->class_count[c], a,
              in->kernel_dur ? 100.0 * (double) in->class_dur[c] / (double) in->kernel_dur : 0.0);
    }
  printf ("copies    ");
  for (guint d = 0; d < VS_DIR_COUNT; d++)
    {
      format_bytes (a, sizeof a, in->copy_bytes[d]);
      printf (" %s %s%s", event_dir_name (d), a, d + 1 < VS_DIR_COUNT ? "," : "\n");
    }
  if (in->coll_count == 0)
    return;
  format_bytes (a, sizeof a, in->coll_bytes);
  printf ("collectives %" G_GUINT64_FORMAT ", %s", in->coll_count, a);
  guint64 grouped = 0;
  for (guint i = 0; i < in->groups->len; i++)
    grouped += g_array_index (in->groups, GroupStat, i).count;
  if (in->groups->len == 0)
    printf ("; no groups named (collective.group)\n");
  else
    printf ("; %u group%s%s\n", in->groups->len, in->groups->len == 1 ? "" : "s",
            grouped < in->coll_count ? ", some collectives in none" : "");
  for (guint i = 0; i < in->groups->len; i++)
    {
      const GroupStat *g = &g_array_index (in->groups, GroupStat, i);
      format_bytes (a, sizeof a, g->bytes);
      printf ("  group %-16" G_GUINT64_FORMAT " %-4s %6u ranks %8" G_GUINT64_FORMAT " collectives  %s\n", g->id,
              g->role ? event_role_name (g->role) : "-", g->ranks, g->count, a);
    }
}

static void
tag_clear (gpointer p)
{
  g_free ((char *) ((TagStat *) p)->name);
}

int
cmd_info (int argc, char **argv)
{
  g_autofree char *format = NULL;
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format, "Output format: text (default) or json", "text|json" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE - summarize a trace");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
      "Reads TRACE (.jsonl or .vtrace, validating it) and prints events per op,\n"
      "the captured duration (first t to the last event's end), peak live bytes\n"
      "overall, per allocation kind and per tag, streams, threads, kernel count\n"
      "and time (with the mix by kernel class, docs/model.md), and copy bytes\n"
      "per direction. --format json prints the same\n"
      "numbers for scripts; docs/trace-format.md names the fields.\n\n"
      "Examples:\n"
      "  vramsim info traces/hand-train-step.jsonl\n"
      "  vramsim info trace.vtrace --format json\n");
  GError *error = NULL;
  if (!cmd_check_options (argc, argv, (const GOptionEntry *const[]) { entries, NULL }, &error)
      || !g_option_context_parse (ctx, &argc, &argv, &error))
    {
      cmd_error ("info: %s", error->message);
      g_error_free (error);
      return 2;
    }
  cmd_end_options (&argc, argv);
  if (argc != 2)
    {
      cmd_error ("info: expected one TRACE (see 'vramsim info --help')");
      return 2;
    }
  gboolean json = FALSE;
  if (format != NULL && strcmp (format, "json") == 0)
    json = TRUE;
  else if (format != NULL && strcmp (format, "text") != 0)
    {
      cmd_error ("info: --format must be text or json, not '%s'", format);
      return 2;
    }
  g_autoptr (VsTraceReader) r = trace_open (argv[1], &error);
  if (r == NULL)
    {
      cmd_error ("%s", error->message);
      g_error_free (error);
      return 1;
    }
  Info in = { 0 };
  in.tags = g_array_new (FALSE, FALSE, sizeof (TagStat));
  g_array_set_clear_func (in.tags, tag_clear);
  in.tag_index = g_hash_table_new (g_str_hash, g_str_equal);
  in.allocs = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  in.streams = g_hash_table_new (g_direct_hash, g_direct_equal);
  in.threads = g_hash_table_new (g_direct_hash, g_direct_equal);
  in.kernel_class = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  in.groups = g_array_new (FALSE, FALSE, sizeof (GroupStat));
  in.group_index = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  VsEvent ev;
  trace_reader_check_sum (r);   /* info checks what a replay trusts */
  while (trace_next (r, &ev, &error))
    info_event (&in, &ev);
  int rc = 0;
  if (error != NULL)
    {
      cmd_error ("%s", error->message);
      g_error_free (error);
      rc = 1;
    }
  else if (json)
    print_json (&in, trace_reader_header (r), argv[1], trace_reader_binary_version (r));
  else
    print_text (&in, trace_reader_header (r), argv[1], trace_reader_binary_version (r));
  g_hash_table_destroy (in.tag_index);
  g_array_free (in.tags, TRUE);
  g_hash_table_destroy (in.allocs);
  g_hash_table_destroy (in.streams);
  g_hash_table_destroy (in.threads);
  g_hash_table_destroy (in.kernel_class);
  g_array_free (in.groups, TRUE);
  g_hash_table_destroy (in.group_index);
  return rc;
}
