# data-lib.sh — sourced by the shell tests: where the files they read are
# (validation/data/README.md says what each is and where it comes from).
#
#   data_file REL        validation/data/REL, which must be there: prints its
#                        path, or says on stderr that it is missing (the clone
#                        is incomplete) and returns 1: the caller's test fails.
#   optional_trace REL   REL under VRAMSIM_REAL_TRACES (`make check
#                        REAL_TRACES=DIR`): real traces we may not
#                        redistribute. Prints the path, or returns 1; then
#                        skip with "$(optional_why REL)", which `make test`
#                        counts at the end (tests/tap-skips).
#
# VRAMSIM_DATA=DIR points at another copy of validation/data.
VRAMSIM_DATA=${VRAMSIM_DATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/validation/data}

data_file () {
  if [ -f "$VRAMSIM_DATA/$1" ]; then
    printf '%s\n' "$VRAMSIM_DATA/$1"
  else
    echo "$VRAMSIM_DATA/$1: missing: the repository's own data (validation/data/README.md)" >&2
    return 1
  fi
}

optional_trace () {
  [ -n "${VRAMSIM_REAL_TRACES:-}" ] && [ -f "$VRAMSIM_REAL_TRACES/$1" ] || return 1
  printf '%s\n' "$VRAMSIM_REAL_TRACES/$1"
}

optional_why () {
  echo "optional: real traces we may not redistribute: $1 (make check REAL_TRACES=DIR: validation/data/README.md)"
}
