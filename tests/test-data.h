/* test-data.h — where the GLib tests find the files they read
 * (validation/data/README.md says what each is and where it comes from).
 *
 * Two kinds, two rules:
 * - test_data (): a file of the repository's validation/data. It must be
 *   there: a missing one fails the test with a message naming the path
 *   (a clone without it is incomplete), never a skip.
 * - test_optional_trace (): a real trace that we may not redistribute, in
 *   the folder the user points VRAMSIM_REAL_TRACES at (`make check
 *   REAL_TRACES=DIR`). Without it the test is skipped with a reason that
 *   starts "optional:", which `make test` counts at the end (tests/tap-skips).
 *
 * Paths are relative to the top of the source tree, where `make test`
 * runs the tests; VRAMSIM_DATA=DIR points at another copy of
 * validation/data. */
#pragma once

#include <glib.h>

/* The text of every optional skip: what is missing and how to give it. */
#define TEST_OPTIONAL_WHY "optional: real traces we may not redistribute"

/* (transfer full) The path of validation/data/REL, or NULL after failing
 * the running test with a message naming it. */
static inline char *
test_data (const char *rel)
{
  const char *dir = g_getenv ("VRAMSIM_DATA");
  char *p = g_build_filename (dir && *dir ? dir : "validation/data", rel, NULL);
  if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
    return p;
  g_test_fail_printf ("%s: missing: the repository's own data (validation/data/README.md); run the tests from the "
                      "top of the source tree, or set VRAMSIM_DATA to that folder",
                      p);
  g_free (p);
  return NULL;
}

/* (transfer full) REL, a file of the source tree made for the tests
 * (tests/import/snapshot-fixture.pickle), or NULL after failing the
 * running test with a message naming it. */
static inline char *
test_repo_file (const char *rel)
{
  if (g_file_test (rel, G_FILE_TEST_IS_REGULAR))
    return g_strdup (rel);
  g_test_fail_printf ("%s: missing: run the tests from the top of the source tree", rel);
  return NULL;
}

/* (transfer full) ENV's folder / REL, or NULL after skipping the running
 * test with the optional-data reason (MAKEVAR names the make variable). */
static inline char *
test_optional_file (const char *env, const char *makevar, const char *rel)
{
  const char *dir = g_getenv (env);
  if (dir && *dir)
    {
      char *p = g_build_filename (dir, rel, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
        return p;
      g_test_skip_printf (TEST_OPTIONAL_WHY ": %s not in %s=%s (validation/data/README.md)", rel, makevar, dir);
      g_free (p);
      return NULL;
    }
  g_test_skip_printf (TEST_OPTIONAL_WHY ": %s (make check %s=DIR: validation/data/README.md)", rel, makevar);
  return NULL;
}

/* A real trace we may not redistribute: REL under VRAMSIM_REAL_TRACES
 * (nsys/rtx3090-small.sqlite, snapshots/NAME.pickle). */
static inline char *
test_optional_trace (const char *rel)
{
  return test_optional_file ("VRAMSIM_REAL_TRACES", "REAL_TRACES", rel);
}
