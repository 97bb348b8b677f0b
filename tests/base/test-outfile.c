/* test-outfile.c — base/outfile.h: what a name is decides how it is
 * written. Private nodes only (a FIFO made here; devices are covered by
 * tests/outputs.sh, which needs root for mknod). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "base/outfile.h"

static char *
tmpdir (void)
{
  GError *e = NULL;
  char *d = g_dir_make_tmp ("outfile-XXXXXX", &e);
  g_assert_no_error (e);
  return d;
}

static guint
count_entries (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (g_dir_read_name (d))
    n++;
  g_dir_close (d);
  return n;
}

static char *
slurp (const char *path)
{
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static void
cleanup (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *n;
  while ((n = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, n, NULL);
      g_unlink (p);
    }
  g_dir_close (d);
  g_rmdir (dir);
}

/* A new name and an existing file go through a temporary renamed at the
 * commit; an abort leaves the old contents and no temporary. */
static void
test_atomic (void)
{
  g_autofree char *dir = tmpdir ();
  g_autofree char *p = g_build_filename (dir, "out.txt", NULL);
  GError *e = NULL;
  g_assert_true (outfile_write_all (p, NULL, "one\n", -1, &e));
  g_assert_no_error (e);
  g_chmod (p, 0640);
  VsOutFile *f = outfile_open (p, "report", &e);
  g_assert_nonnull (f);
  g_assert_true (outfile_is_atomic (f));
  g_assert_cmpstr (outfile_write_path (f), !=, p);
  g_assert_true (outfile_write (f, "two\n", 4, &e));
  g_autofree char *before = slurp (p);
  g_assert_cmpstr (before, ==, "one\n");            /* not yet */
  g_assert_cmpuint (count_entries (dir), ==, 2);    /* out.txt and its temporary */
  g_assert_true (outfile_commit (f, &e));
  g_autofree char *after = slurp (p);
  g_assert_cmpstr (after, ==, "two\n");
  struct stat st;
  g_assert_cmpint (g_stat (p, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0640);    /* the mode kept */
  f = outfile_open (p, NULL, &e);
  outfile_write (f, "three\n", 6, NULL);
  outfile_abort (f);
  g_autofree char *kept = slurp (p);
  g_assert_cmpstr (kept, ==, "two\n");
  g_assert_cmpuint (count_entries (dir), ==, 1);
  cleanup (dir);
}

/* A symlink: the target is written, the link stays a link. */
static void
test_symlink (void)
{
  g_autofree char *dir = tmpdir ();
  g_autofree char *target = g_build_filename (dir, "target.txt", NULL);
  g_autofree char *link = g_build_filename (dir, "link.txt", NULL);
  g_assert_cmpint (symlink ("target.txt", link), ==, 0);   /* relative, dangling */
  GError *e = NULL;
  g_assert_true (outfile_write_all (link, NULL, "via link\n", -1, &e));
  g_assert_no_error (e);
  struct stat st;
  g_assert_cmpint (lstat (link, &st), ==, 0);
  g_assert_true (S_ISLNK (st.st_mode));
  g_autofree char *text = slurp (target);
  g_assert_cmpstr (text, ==, "via link\n");
  g_assert_cmpuint (count_entries (dir), ==, 2);
  cleanup (dir);
}

/* A FIFO is written into, never replaced. */
static void
test_fifo (void)
{
  g_autofree char *dir = tmpdir ();
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  int rd = open (fifo, O_RDONLY | O_NONBLOCK);   /* so opening for writing does not block */
  g_assert_cmpint (rd, >=, 0);
  GError *e = NULL;
  g_assert_true (outfile_write_all (fifo, NULL, "through\n", -1, &e));
  g_assert_no_error (e);
  char buf[32] = { 0 };
  g_assert_cmpint (read (rd, buf, sizeof buf - 1), ==, 8);
  g_assert_cmpstr (buf, ==, "through\n");
  close (rd);
  struct stat st;
  g_assert_cmpint (lstat (fifo, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));
  g_assert_cmpuint (count_entries (dir), ==, 1);
  cleanup (dir);
}

/* The same file as an input (a hard link here) is refused naming both;
 * a folder is refused; an empty name too. */
static void
test_refusals (void)
{
  g_autofree char *dir = tmpdir ();
  g_autofree char *in = g_build_filename (dir, "in.jsonl", NULL);
  g_autofree char *hard = g_build_filename (dir, "hard.jsonl", NULL);
  g_autofree char *other = g_build_filename (dir, "other.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, "x\n", -1, NULL));
  g_assert_cmpint (link (in, hard), ==, 0);
  GError *e = NULL;
  g_assert_false (outfile_check_not_input (hard, "-o", in, "the trace", &e));
  g_assert_nonnull (strstr (e->message, "hard.jsonl is the same file as the trace"));
  g_clear_error (&e);
  g_assert_true (outfile_check_not_input (other, "-o", in, "the trace", &e));
  g_assert_true (outfile_check_not_input ("-", "-o", in, "the trace", &e));
  g_assert_null (outfile_open (dir, "report", &e));
  g_assert_error (e, G_FILE_ERROR, G_FILE_ERROR_ISDIR);
  g_clear_error (&e);
  g_assert_null (outfile_open ("", "report", &e));
  g_assert_nonnull (strstr (e->message, "empty file name"));
  g_clear_error (&e);
  cleanup (dir);
}

/* Rows: locked, and a second open is refused while the first holds it. */
static void
test_rows_lock (void)
{
  g_autofree char *dir = tmpdir ();
  g_autofree char *p = g_build_filename (dir, "rows.csv", NULL);
  GError *e = NULL;
  VsOutFile *a = outfile_open_rows (p, "-o", &e);
  g_assert_nonnull (a);
  g_assert_true (outfile_write_rows (a, "h\n1\n", 4, &e));
  VsOutFile *b = outfile_open_rows (p, "-o", &e);
  g_assert_null (b);
  g_assert_nonnull (strstr (e->message, "another process is writing it"));
  g_clear_error (&e);
  g_assert_true (outfile_commit (a, &e));
  g_autofree char *text = slurp (p);
  g_assert_cmpstr (text, ==, "h\n1\n");
  /* A rows file made and never written is removed on abort. */
  g_autofree char *q = g_build_filename (dir, "never.csv", NULL);
  outfile_abort (outfile_open_rows (q, "-o", &e));
  g_assert_false (g_file_test (q, G_FILE_TEST_EXISTS));
  cleanup (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/outfile/atomic", test_atomic);
  g_test_add_func ("/outfile/symlink", test_symlink);
  g_test_add_func ("/outfile/fifo", test_fifo);
  g_test_add_func ("/outfile/refusals", test_refusals);
  g_test_add_func ("/outfile/rows-lock", test_rows_lock);
  return g_test_run ();
}
