/* test-sweep.c — --vary parsing and range expansion, CSV quoting and
 * reading, and the row cells of a report (sim/sweep/sweep.c). */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "sweep/sweep.h"

static char *
joined (const char *spec)
{
  GError *error = NULL;
  g_autoptr (VsVary) v = sweep_vary_parse (spec, &error);
  g_assert_no_error (error);
  g_assert_nonnull (v);
  g_assert_cmpuint (v->n_values, ==, g_strv_length (v->values));
  return g_strjoinv (" ", v->values);
}

static void
expect (const char *spec, const char *key, const char *values)
{
  g_autofree char *got = joined (spec);
  g_autoptr (VsVary) v = sweep_vary_parse (spec, NULL);
  g_assert_cmpstr (v->key, ==, key);
  g_assert_cmpstr (got, ==, values);
}

static void
test_lists (void)
{
  expect ("policy.oversubscription=oom,spill,uvm", "policy.oversubscription", "oom spill uvm");
  expect (" memory.capacity = 24GiB , 80GiB ", "memory.capacity", "24GiB 80GiB");
  /* Ranges and values mix: 1, 2, then 4..8 step 2. */
  expect ("link.copy_engines=1,2,4..8/2", "link.copy_engines", "1 2 4 6 8");
}

static void
test_ranges (void)
{
  expect ("memory.capacity=8GiB..32GiB/8GiB", "memory.capacity", "8GiB 16GiB 24GiB 32GiB");
  /* The end is included only when a step lands on it. */
  expect ("memory.capacity=8GiB..30GiB/8GiB", "memory.capacity", "8GiB 16GiB 24GiB");
  /* Values are written in the unit of the first bound: 512MiB steps up to 2GiB. */
  expect ("memory.capacity=512MiB..2GiB/512MiB", "memory.capacity", "512MiB 1024MiB 1536MiB 2048MiB");
  /* A unitless bound takes the unit of the other. */
  expect ("memory.capacity=0..2GiB/1GiB", "memory.capacity", "0GiB 1GiB 2GiB");
  /* Geometric, on rates: the '/' of TB/s is not the step's. */
  expect ("memory.bandwidth=1TB/s..4TB/s/x2", "memory.bandwidth", "1TB/s 2TB/s 4TB/s");
  expect ("link.bandwidth=16GB/s..64GB/s/16GB/s", "link.bandwidth", "16GB/s 32GB/s 48GB/s 64GB/s");
  expect ("memory.capacity=1GiB..10GiB/x3", "memory.capacity", "1GiB 3GiB 9GiB");
  /* Times and plain numbers (fractions included, no drift). */
  expect ("uvm.fault_latency=10us..30us/10us", "uvm.fault_latency", "10us 20us 30us");
  expect ("memory.efficiency=0.5..1/0.1", "memory.efficiency", "0.5 0.6 0.7 0.8 0.9 1");
  expect ("uvm.fault_batch=64..512/x2", "uvm.fault_batch", "64 128 256 512");
  /* 1.5x steps of a size land on whole bytes, written as fractions of the unit. */
  expect ("memory.capacity=1GiB..3GiB/x1.5", "memory.capacity", "1GiB 1.5GiB 2.25GiB");
}

static void
expect_error (const char *spec, const char *fragment)
{
  GError *error = NULL;
  VsVary *v = sweep_vary_parse (spec, &error);
  g_assert_null (v);
  g_assert_error (error, VS_SWEEP_ERROR, VS_SWEEP_ERROR_INPUT);
  if (strstr (error->message, fragment) == NULL)
    g_error ("'%s': message '%s' lacks '%s'", spec, error->message, fragment);
  g_error_free (error);
}

static void
test_errors (void)
{
  expect_error ("memory.capacity", "expected KEY=V1,V2");
  expect_error ("=1,2", "expected KEY=V1,V2");
  expect_error ("k=1,,2", "k: empty value");
  expect_error ("k=1,2,1", "value '1' given twice");
  expect_error ("memory.capacity=8GiB..1GiB/1GiB", "bad range '8GiB..1GiB/1GiB': the start is above the end");
  expect_error ("memory.capacity=1GiB..8GiB/0B", "the step must be above 0");
  expect_error ("memory.capacity=1GiB..8GiB/x1", "a geometric factor must be above 1");
  expect_error ("memory.capacity=0GiB..8GiB/x2", "must start above 0");
  expect_error ("memory.capacity=1GiB..8GiB", "expected A..B/STEP");
  expect_error ("memory.capacity=1GiBs..8GiBs/x2", "unknown unit 'GiBs'");
  expect_error ("memory.capacity=1GiB..8GB/s/1GiB", "bad range");
  expect_error ("k=1..1000000/1", "more than 100000 values");
  expect_error ("k=1..8/xtwo", "not a factor like x2");
}

static void
test_csv (void)
{
  const char *const cells[] = { "a100-80g", "24GiB", "has,comma", "has \"quotes\"", "", "two\nlines" };
  g_autoptr (GString) s = g_string_new (NULL);
  sweep_csv_append_row (s, cells, G_N_ELEMENTS (cells));
  g_assert_cmpstr (s->str, ==, "a100-80g,24GiB,\"has,comma\",\"has \"\"quotes\"\"\",,\"two\nlines\"\n");

  /* Read back, with a half-written last line that drop_partial removes. */
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("test-sweep-XXXXXX.csv", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_autofree char *text = g_strconcat ("h1,h2,h3,h4,h5,h6\n", s->str, "cut,off", NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  GError *error = NULL;
  g_autoptr (GPtrArray) rows = sweep_csv_read (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, 2);
  char **row = rows->pdata[1];
  g_assert_cmpuint (g_strv_length (row), ==, 6);
  for (guint i = 0; i < 6; i++)
    g_assert_cmpstr (row[i], ==, cells[i]);
  g_autoptr (GPtrArray) all = sweep_csv_read (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 3);
  g_assert_cmpstr (((char **) all->pdata[2])[1], ==, "off");

  g_assert_true (g_file_set_contents (path, "a,\"open\n", -1, NULL));
  g_assert_null (sweep_csv_read (path, FALSE, &error));
  g_assert_nonnull (strstr (error->message, "unterminated quoted field"));
  g_clear_error (&error);
  g_unlink (path);
}

static void
test_report_cells (void)
{
  const char *json =
    "{\"vramsim_report\": 1, \"status\": \"oom\", \"config\": \"rtx3090\","
    " \"time\": {\"captured_ns\": 1000, \"predicted_ns\": 24000, \"slowdown\": 0.0028284712, \"lower_bound\": true},"
    " \"host\": {\"blocked_ns\": 7},"
    " \"stalls\": {\"contention_ns\": 1, \"fault_ns\": 2, \"swap_ns\": 3, \"copy_engine_ns\": 4},"
    " \"memory\": {\"tiers\": [{\"name\": \"device\", \"capacity\": 25769803776, \"peak_bytes\": 25769803776},"
    "                          {\"name\": \"host\", \"peak_bytes\": 5}],"
    "            \"device_demand_bytes\": 30000000000, \"device_resident_peak_bytes\": 25769803776},"
    " \"traffic\": {\"h2d_bytes\": 10, \"d2h_bytes\": 11, \"swap_out_bytes\": 12, \"swap_in_bytes\": 13,"
    "               \"fault_bytes\": 14, \"faults\": 15, \"writeback_bytes\": 16}}";
  cJSON *rep = cJSON_Parse (json);
  g_assert_nonnull (rep);
  g_auto (GStrv) cells = sweep_report_cells (rep, FALSE);
  g_auto (GStrv) step_cells = sweep_report_cells (rep, TRUE);
  cJSON_Delete (rep);
  g_autofree char *line = g_strjoinv (",", cells);
  /* An oom row carries no time: sorting by slowdown must not rank it fastest. */
  g_assert_cmpstr (line, ==, "oom,,,30000000000,25769803776,1,2,3,4,7,10,11,12,13,14,15,16,,");
  const char *const *cols = sweep_result_columns (FALSE);
  g_assert_cmpuint (g_strv_length ((char **) cols), ==, g_strv_length (cells));
  g_assert_cmpstr (cols[0], ==, "status");
  /* peak_device_bytes is the demand (SPEC 5.9), resident_peak_bytes the
   * device tier's peak, not the other way round. */
  g_assert_cmpstr (cols[3], ==, "peak_device_bytes");
  g_assert_cmpstr (cols[4], ==, "resident_peak_bytes");
  g_assert_cmpstr (cols[g_strv_length ((char **) cols) - 1], ==, "error");
  /* --metric step: step_median_ns after slowdown, empty for oom too. */
  g_autofree char *step_line = g_strjoinv (",", step_cells);
  g_assert_cmpstr (step_line, ==, "oom,,,,30000000000,25769803776,1,2,3,4,7,10,11,12,13,14,15,16,,");
  const char *const *scols = sweep_result_columns (TRUE);
  g_assert_cmpuint (g_strv_length ((char **) scols), ==, g_strv_length (step_cells));
  g_assert_cmpstr (scols[2], ==, "slowdown");
  g_assert_cmpstr (scols[3], ==, "step_median_ns");

  /* overflow (--keep-going past capacity) is a run that did not fit too:
   * the same report with that status keeps no time (SPEC 5.9), while an
   * ok one keeps both (24000 ns, slowdown 0.0028284712 at %.6g) and
   * says its time is a lower bound (time.lower_bound: yes). */
  for (guint i = 0; i < 2; i++)
    {
      cJSON *r = cJSON_Parse (json);
      cJSON_ReplaceItemInObject (r, "status", cJSON_CreateString (i == 0 ? "overflow" : "ok"));
      g_auto (GStrv) c = sweep_report_cells (r, TRUE);
      cJSON_Delete (r);
      g_autofree char *l = g_strjoinv (",", c);
      g_assert_cmpstr (l, ==, i == 0 ? "overflow,,,,30000000000,25769803776,1,2,3,4,7,10,11,12,13,14,15,16,,"
                                     : "ok,24000,0.00282847,,30000000000,25769803776,1,2,3,4,7,10,11,12,13,14,15,16,yes,");
    }
}

/* --metric step: an ok run's step_median_ns is the report's
 * steady_state.step_median_ns, as an integer; a run without steady_state
 * (no repeated mark) has an empty cell. */
static void
test_report_step_cell (void)
{
  cJSON *rep = cJSON_Parse ("{\"status\": \"ok\", \"time\": {\"predicted_ns\": 9000, \"slowdown\": 1.5},"
                            " \"steady_state\": {\"mark\": \"step\", \"step_median_ns\": 2837120}}");
  g_auto (GStrv) cells = sweep_report_cells (rep, TRUE);
  g_assert_cmpstr (cells[0], ==, "ok");
  g_assert_cmpstr (cells[1], ==, "9000");
  g_assert_cmpstr (cells[2], ==, "1.5");
  g_assert_cmpstr (cells[3], ==, "2837120");
  cJSON_Delete (cJSON_DetachItemFromObject (rep, "steady_state"));
  g_auto (GStrv) none = sweep_report_cells (rep, TRUE);
  g_assert_cmpstr (none[3], ==, "");
  g_assert_cmpstr (none[1], ==, "9000");
  cJSON_Delete (rep);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sweep/vary-lists", test_lists);
  g_test_add_func ("/sweep/vary-ranges", test_ranges);
  g_test_add_func ("/sweep/vary-errors", test_errors);
  g_test_add_func ("/sweep/csv", test_csv);
  g_test_add_func ("/sweep/report-cells", test_report_cells);
  g_test_add_func ("/sweep/report-step-cell", test_report_step_cell);
  return g_test_run ();
}
