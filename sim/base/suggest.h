/* suggest.h — "did you mean" for a misspelt name (a preset, a config key,
 * an option, a workload). */
#pragma once

#include <glib.h>

/* (transfer full) The candidates WORD most likely meant, NULL-terminated,
 * best first (at most 3; empty when none is close). A candidate matches
 * when it is WORD written another way (case, '-', '_', '.' and spaces
 * ignored: "RTX3090", "rtx-3090" -> "rtx3090"), else when it starts with
 * WORD so written ("a100" -> "a100-40g", "a100-80g", ...), else when it is
 * within an edit distance (insert, delete, substitute, swap two
 * neighbours) of a third of its length, at least 1. */
char **suggest_closest (const char *word, const char *const *candidates);

/* (transfer full) "; did you mean 'x'?", "; did you mean 'x' or 'y'?",
 * "; did you mean 'x', 'y' or 'z'?", or "" when nothing is close, to
 * follow a message's first clause. PREFIX (may be NULL) is put before each
 * candidate: "--" for options, "memory." for keys of a section. */
char *suggest_phrase (const char *word, const char *const *candidates, const char *prefix);
