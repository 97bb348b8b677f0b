/* plot.c — `vramsim plot`: prepare TSV data and a gnuplot script, run gnuplot.
 *
 * The script is a generated prologue (terminal, output, data file names,
 * titles and labels as gnuplot variables, legend entries as arrays) plus the
 * kind's template plots/KIND.gp, which holds every style choice, so a user
 * can restyle a plot by editing a template or the --script-only output.
 * Units shown: time in ms (stalls pick us/ms/s by magnitude), memory in
 * GiB, utilization in %, rates in GB/s. Every output (image, script, data)
 * is written to a temporary name and renamed into place (base/outfile.h).
 * The top file of the plots: it calls each kind (plot-series.c,
 * plot-sweep.c, plot-stalls.c, plot-plan.c) and plot-gp.c, which they
 * share. */
#include "out/plot.h"
#include "out/plot-priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "base/outfile.h"

static const char *const kind_names[VS_PLOT_COUNT] = { "timeline", "sweep", "stalls", "compare", "plan" };

int
plot_kind_from_name (const char *name)
{
  for (int i = 0; i < VS_PLOT_COUNT; i++)
    if (name && strcmp (name, kind_names[i]) == 0)
      return i;
  return -1;
}

const char *
plot_kind_name (VsPlotKind kind)
{
  return kind < VS_PLOT_COUNT ? kind_names[kind] : NULL;
}

char *
plot_template_dir (void)
{
  const char *env = g_getenv ("VRAMSIM_PLOTS");
  if (env && *env)
    return g_strdup (env);
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  if (exe)
    {
      g_autofree char *bindir = g_path_get_dirname (exe);
      /* bin/vramsim and build/asan/bin/vramsim both sit below the source tree. */
      const char *const ups[] = { "..", "../../..", "../share/vramsim", NULL };
      for (guint i = 0; ups[i]; i++)
        {
          char *dir = g_build_filename (bindir, ups[i], "plots", NULL);
          g_autofree char *probe = g_build_filename (dir, "timeline.gp", NULL);
          if (g_file_test (probe, G_FILE_TEST_IS_REGULAR))
            return dir;
          g_free (dir);
        }
    }
  return g_strdup (VRAMSIM_PREFIX "/share/vramsim/plots");
}

static void
prepared_clear (Prepared *p)
{
  if (p->vars)
    g_string_free (p->vars, TRUE);
  if (p->data)
    g_ptr_array_unref (p->data);
  g_free (p->title);
}

/* OUT with its extension replaced by EXT ("x.png" -> "x.gp", "x-2.tsv"). */
static char *
sibling (const char *out, const char *suffix)
{
  const char *slash = strrchr (out, '/');
  const char *dot = strrchr (out, '.');
  gsize stem = dot && (!slash || dot > slash + 1) ? (gsize) (dot - out) : strlen (out);
  return g_strdup_printf ("%.*s%s", (int) stem, out, suffix);
}

static char *
build_script (const VsPlotOptions *o, const Prepared *p, const char *terminal, const char *image,
              char **data_paths, const char *template_text, const char *template_name)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "# vramsim plot %s: generated from plots/%s and", plot_kind_name (o->kind), template_name);
  for (guint i = 0; o->inputs[i]; i++)
    g_string_append_printf (s, " %s", o->inputs[i]);
  g_string_append (s, "\n# Edit freely, then run: gnuplot THIS_FILE\n");
  g_string_append_printf (s, "set terminal %s\n", terminal);
  g_autofree char *qi = plot_gp_quote (image);
  g_string_append_printf (s, "set output %s\n", qi);
  /* A title longer than the canvas is wide goes on several lines
   * (title_lines: the templates leave that much room above the plot). */
  g_autofree char *title = plot_gp_wrapped (o->title ? o->title : p->title, 100);
  g_string_append_printf (s, "plot_title = %s\ntitle_lines = %u\n", title, plot_gp_lines (title));
  if (data_paths[0] && data_paths[1] == NULL)
    plot_var_str (s, "datafile", data_paths[0]);
  else
    {
      g_autoptr (GPtrArray) files = g_ptr_array_new ();
      for (guint i = 0; data_paths[i]; i++)
        g_ptr_array_add (files, data_paths[i]);
      plot_var_array (s, "datafiles", files);
    }
  g_string_append (s, p->vars->str);
  g_string_append_printf (s, "# ---- plots/%s ----\n", template_name);
  g_string_append (s, template_text);
  return g_string_free (s, FALSE);
}

static gboolean
run_gnuplot (const char *script_path, GError **error)
{
  const char *gp = g_getenv ("VRAMSIM_GNUPLOT");
  char *argv[] = { (char *) (gp && *gp ? gp : "gnuplot"), (char *) script_path, NULL };
  g_autofree char *err_text = NULL;
  gint status = 0;
  GError *e = NULL;
  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                     NULL, &err_text, &status, &e))
    {
      if (g_error_matches (e, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
        g_set_error (error, VS_PLOT_ERROR, 0,
                     "gnuplot not found (install it, e.g. apt-get install gnuplot-nox, or use --script-only "
                     "to write the script and data): %s", e->message);
      else
        g_set_error (error, VS_PLOT_ERROR, 0, "cannot run %s: %s", argv[0], e->message);
      g_error_free (e);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, &e))
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot failed (%s): %s", e->message,
                   err_text && *err_text ? g_strstrip (err_text) : "no message");
      g_error_free (e);
      return FALSE;
    }
  return TRUE;
}

gboolean
plot_run (const VsPlotOptions *o, GError **error)
{
  g_return_val_if_fail (o->inputs && o->inputs[0] && o->output, FALSE);
  /* The canvas is 1000 wide; its height is the kind's (many bars need more). */
  const char *terminal_size;
  const char *terminal_rest;
  if (g_str_has_suffix (o->output, ".png"))
    terminal_size = "pngcairo size 1000,", terminal_rest = " noenhanced font 'Sans,11'";
  else if (g_str_has_suffix (o->output, ".svg"))
    terminal_size = "svg size 1000,", terminal_rest = " dynamic noenhanced font 'Sans,11' background rgb 'white'";
  else
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "%s: the output must end in .png or .svg", o->output);
      return FALSE;
    }

  g_autofree char *tdir = plot_template_dir ();
  g_autofree char *tname = g_strconcat (plot_kind_name (o->kind), ".gp", NULL);
  g_autofree char *tpath = g_build_filename (tdir, tname, NULL);
  g_autofree char *template_text = NULL;
  GError *e = NULL;
  if (!g_file_get_contents (tpath, &template_text, NULL, &e))
    {
      g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot template %s: %s (set VRAMSIM_PLOTS to the plots/ folder)",
                   tpath, e->message);
      g_error_free (e);
      return FALSE;
    }

  Prepared p = { g_string_new (NULL), g_ptr_array_new_with_free_func (g_free), NULL, 0 };
  gboolean ok = FALSE;
  switch (o->kind)
    {
    case VS_PLOT_TIMELINE: ok = plot_prepare_timeline (o, &p, error); break;
    case VS_PLOT_SWEEP:    ok = plot_prepare_sweep (o, &p, error); break;
    case VS_PLOT_STALLS:   ok = plot_prepare_stalls (o, &p, error); break;
    case VS_PLOT_COMPARE:  ok = plot_prepare_compare (o, &p, error); break;
    case VS_PLOT_PLAN:     ok = plot_prepare_plan (o, &p, error); break;
    default: g_return_val_if_reached (FALSE);
    }
  if (!ok)
    {
      prepared_clear (&p);
      return FALSE;
    }
  if (o->kind == VS_PLOT_TIMELINE || o->kind == VS_PLOT_COMPARE)
    {
      plot_var_int (p.vars, "logx", o->logx);
      plot_var_int (p.vars, "logy", o->logy);
    }
  else if (o->kind == VS_PLOT_STALLS)
    plot_var_int (p.vars, "logy", o->logy);
  g_autofree char *terminal = g_strdup_printf ("%s%u%s", terminal_size, p.height ? p.height : 600, terminal_rest);

  /* Data file names: beside OUT for --script-only, else in a private
   * temporary folder. */
  g_autofree char *tmpdir = NULL;
  char **data_paths = g_new0 (char *, p.data->len + 1);
  if (!o->script_only)
    {
      tmpdir = g_dir_make_tmp ("vramsim-plot-XXXXXX", error);
      if (tmpdir == NULL)
        goto out_fail;
    }
  for (guint i = 0; i < p.data->len; i++)
    {
      g_autofree char *suffix = p.data->len == 1 ? g_strdup (".tsv") : g_strdup_printf ("-%u.tsv", i + 1);
      if (o->script_only)
        data_paths[i] = sibling (o->output, suffix);
      else
        {
          g_autofree char *stem = g_strdup_printf ("data%s", suffix);
          data_paths[i] = g_build_filename (tmpdir, stem, NULL);
        }
      if (!outfile_write_all (data_paths[i], NULL, p.data->pdata[i], -1, error))
        goto out_fail;
    }

  if (o->script_only)
    {
      g_autofree char *script = build_script (o, &p, terminal, o->output, data_paths, template_text, tname);
      g_autofree char *gp = sibling (o->output, ".gp");
      ok = outfile_write_all (gp, NULL, script, -1, error);
      goto out;
    }
  else
    {
      /* gnuplot writes the image by name: a temporary beside OUT renamed
       * on success, or OUT itself for a device or FIFO (base/outfile.h). */
      VsOutFile *img = outfile_open_named (o->output, NULL, error);
      if (img == NULL)
        goto out_fail;
      const char *target = outfile_write_path (img);
      g_autofree char *script = build_script (o, &p, terminal, target, data_paths, template_text, tname);
      g_autofree char *gp = g_build_filename (tmpdir, "plot.gp", NULL);
      ok = outfile_write_all (gp, NULL, script, -1, error) && run_gnuplot (gp, error);
      struct stat st;
      if (ok && outfile_is_atomic (img) && (g_stat (target, &st) != 0 || st.st_size == 0))
        {
          g_set_error (error, VS_PLOT_ERROR, 0, "gnuplot wrote no image for %s", o->output);
          ok = FALSE;
        }
      if (ok)
        ok = outfile_commit (img, error);
      else
        outfile_abort (img);
      goto out;
    }

out_fail:
  ok = FALSE;
out:
  if (tmpdir)
    outfile_remove_tmpdir (tmpdir);
  g_strfreev (data_paths);
  prepared_clear (&p);
  return ok;
}
