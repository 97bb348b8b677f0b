#!/bin/bash
# bench/mutate.sh — mutation testing of the models: small deliberate bugs,
# one at a time, each rebuilt and run against the unit tests; a mutant the
# tests still pass "survived" (no test would notice that bug). Not part of
# `make check` (minutes of CPU): run it by hand, niced:
#
#   bench/mutate.sh [-j N] [-k] [MUTANT-NUMBER...]
#
# It copies the working tree (tracked and untracked files, not build/) into
# a scratch folder, builds there once, then for each mutant: replaces one
# string in one file (the Nth occurrence, which must exist), rebuilds the
# library and the test binaries, runs them (each under a 120 s timeout),
# and puts the file back. A mutant that does not build is "invalid" and
# left out of the score. Prints one line a mutant and the score:
#   killed / (killed + survived). -k keeps the scratch folder.
# The list is below (MUTANTS): FILE @@ NTH @@ FROM @@ TO @@ TESTS, where
# TESTS is a group (flow, mem, model, engine) of build/tests binaries.
# docs/errors.md "Mutation testing" gives the last score and the command.
# Left out as equivalent (no test can tell them apart): managed.part.c's
# `total <= avail` as `<` (a fault set exactly the device's room takes the
# thrashing path, which then keeps all of it resident and faults the same
# pages: the same times, bytes and residency).
set -u
cd "$(dirname "$0")/.." || exit 1
JOBS=2 KEEP=
while getopts "j:k" o; do case $o in j) JOBS=$OPTARG ;; k) KEEP=1 ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))

declare -A GROUP=(
  [flow]="flow/test-flow flow/test-saturation engine/test-replay"
  [mem]="mem/test-allocator mem/test-alloc-bounds mem/test-snapshot-replay engine/test-alloc-model config/test-allocator-config"
  [model]="model/test-kernel-model model/test-network model/test-collective model/test-kernel-class engine/test-replay"
  [engine]="engine/test-replay engine/test-spill-room engine/test-demand-bounds engine/test-alloc-model engine/test-demand engine/test-host engine/test-touches flow/test-flow"
)

MUTANTS=$(cat <<'LIST'
sim/flow/flow.c @@ 1 @@ r.sat_min = capacity * 0.95 @@ r.sat_min = capacity * 0.855 @@ flow
sim/flow/flow.c @@ 1 @@ r->st.busy_ns += r->load > r->busy_min ? dt : 0.0; @@ r->st.busy_ns += dt; @@ flow
sim/flow/flow.c @@ 1 @@ double share = r->residual / r->n_unfrozen; @@ double share = r->residual / (r->n_unfrozen + 1); @@ flow
sim/flow/flow.c @@ 2 @@ double share = r->residual / r->n_unfrozen; @@ double share = r->residual / (r->n_unfrozen + 1); @@ flow
sim/flow/flow.c @@ 1 @@ r.busy_min = capacity * 1e-9; @@ r.busy_min = capacity * 0.5; @@ flow
sim/mem/alloc-pytorch.c @@ 1 @@ b->size >= size + cfg->max_non_split_rounding @@ b->size > size + cfg->max_non_split_rounding @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ b->size >= cfg->max_split_size) @@ b->size > cfg->max_split_size) @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ return remaining >= K_MIN_BLOCK; @@ return remaining > K_MIN_BLOCK; @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ remaining > K_SMALL_SIZE; @@ remaining >= K_SMALL_SIZE; @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ if (size <= K_SMALL_SIZE) @@ if (size < K_SMALL_SIZE) @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ if (size < K_MIN_LARGE_ALLOC) @@ if (size <= K_MIN_LARGE_ALLOC) @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ return (size + K_MIN_BLOCK - 1) / K_MIN_BLOCK * K_MIN_BLOCK; @@ return size / K_MIN_BLOCK * K_MIN_BLOCK; @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ #define K_ROUND_LARGE (2 * MiB) @@ #define K_ROUND_LARGE (4 * MiB) @@ mem
sim/mem/alloc-pytorch.c @@ 1 @@ PtPool *p = size <= K_SMALL_SIZE ? &pt->small : &pt->large; @@ PtPool *p = size < K_SMALL_SIZE ? &pt->small : &pt->large; @@ mem
sim/mem/alloc-none.c @@ 1 @@ guint64 charge = bytes == 0 ? g : (bytes + g - 1) / g * g; @@ guint64 charge = bytes == 0 ? 0 : (bytes + g - 1) / g * g; @@ mem
sim/mem/alloc-async.c @@ 1 @@ return (x + g - 1) / g * g; @@ return x / g * g; @@ mem
sim/model/kernel-model.c @@ 1 @@ 1.0 - 0.5 * intensity / ridge @@ 1.0 - 0.25 * intensity / ridge @@ model
sim/model/kernel-model.c @@ 1 @@ double fl = d < VS_KERNEL_FLOOR_NS ? d : VS_KERNEL_FLOOR_NS; @@ double fl = d < VS_KERNEL_FLOOR_NS ? d : 0.5 * VS_KERNEL_FLOOR_NS; @@ model
sim/model/kernel-model.c @@ 1 @@ f->sm_share = MIN (1.0, (double) blocks / (m->tgt.sms * k)); @@ f->sm_share = MIN (1.0, (double) blocks / m->tgt.sms); @@ model
sim/model/kernel-model.c @@ 1 @@ k = MIN (k, SM_REGS / (warp_threads * s->regs)); @@ k = MIN (k, SM_REGS / s->regs); @@ model
sim/model/kernel-model.c @@ 1 @@ m0 >= c0 ? VS_BOUND_MEMORY @@ m0 < c0 ? VS_BOUND_MEMORY @@ model
sim/model/network.c @@ 1 @@ (gr->ppn - 1) * intra + gr->log2N * inter @@ (gr->ppn - 1) * intra + inter @@ model
sim/model/network.c @@ 1 @@ pl->xn = N > 1 ? 2 * S / gr->k : 0; @@ pl->xn = N > 1 ? S / gr->k : 0; @@ model
sim/model/network.c @@ 1 @@ pl->xn = N > 1 ? link / gr->k : 0; @@ pl->xn = N > 1 ? link : 0; @@ model
sim/model/network.c @@ 1 @@ pl->lat_ns = intra + (tree ? 2 * gr->log2N * inter : inter); @@ pl->lat_ns = intra + (tree ? gr->log2N * inter : inter); @@ model
sim/model/collective.part.c @@ 1 @@ d1 = net1 + (d0 - net0) * s->gpu.tflops_scale; @@ d1 = net1 + (d0 - net0); @@ model
sim/model/copy.part.c @@ 1 @@ Job *j = job_new (s, s->core.cfg->link.latency_ns); @@ Job *j = job_new (s, 0); @@ engine
sim/model/copy.part.c @@ 1 @@ job_add_flow (j, 2 * bytes, INFINITY, p, 1); @@ job_add_flow (j, bytes, INFINITY, p, 1); @@ engine
sim/mem/lru.part.c @@ 1 @@ if (a->running > 0 || (a->moving && !a->moving->c.done)) @@ if (a->running > 1 || (a->moving && !a->moving->c.done)) @@ engine
sim/mem/policy-spill.part.c @@ 1 @@ else if (a->charge > free_b) @@ else if (a->charge > free_b + free_b / 2) @@ engine
sim/mem/policy-spill.part.c @@ 1 @@ if (a->charge <= s->mem.loc_cap[LOC_DEVICE] && spill_for @@ if (a->charge < s->mem.loc_cap[LOC_DEVICE] / 2 && spill_for @@ engine
sim/engine/launchq.part.c @@ 1 @@ s->gpu.lq_unstarted > s->gpu.lq_cap) && !op->started @@ s->gpu.lq_unstarted > s->gpu.lq_cap + 1) && !op->started @@ engine
sim/mem/managed.part.c @@ 1 @@ guint64 batches = (missing_pages + s->core.cfg->uvm.fault_batch - 1) / s->core.cfg->uvm.fault_batch; @@ guint64 batches = missing_pages / s->core.cfg->uvm.fault_batch; @@ engine
sim/mem/managed.part.c @@ 1 @@ j = job_new (s, batches * s->core.cfg->uvm.fault_latency_ns); @@ j = job_new (s, batches * s->core.cfg->uvm.fault_latency_ns / 2); @@ engine
sim/mem/managed.part.c @@ 1 @@ (guint32) ((have - need) / s->core.cfg->uvm.evict_unit); @@ (guint32) ((have - need + s->core.cfg->uvm.evict_unit - 1) / s->core.cfg->uvm.evict_unit); @@ engine
sim/mem/managed.part.c @@ 1 @@ s->stats.fault_bytes += moved * s->core.cfg->uvm.page; @@ s->stats.fault_bytes += moved; @@ engine
sim/mem/demand.part.c @@ 1 @@ s->mem.dem_peak <= s->mem.loc_cap[LOC_DEVICE]); @@ s->mem.dem_peak < s->mem.loc_cap[LOC_DEVICE]); @@ engine
sim/mem/demand.part.c @@ 1 @@ if (d > s->mem.dem_peak) @@ if (d > s->mem.dem_peak + 1048576) @@ engine
sim/mem/alloc-async.c @@ 1 @@ a->st.reserved > a->cfg.release_threshold) @@ a->st.reserved > 2 * a->cfg.release_threshold) @@ mem
LIST
)

# A tree without some of these tests (an older commit) runs those it has.
for g in "${!GROUP[@]}"; do
  have=
  for t in ${GROUP[$g]}; do [ -f "tests/$t.c" ] && have+=" $t"; done
  GROUP[$g]=$have
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/vramsim-mutate-XXXXXX")
[ -n "$KEEP" ] && echo "scratch: $scratch" || trap 'rm -rf "$scratch"' EXIT
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - | tar -x -C "$scratch" -f - || exit 1
# This tree's build (not the ASan one), when there is one: only what the
# copy changes is rebuilt (the copy keeps the files' times).
[ -f build/libvramsim.a ] && tar -c --exclude=build/asan -f - build | tar -x -C "$scratch" -f -
cd "$scratch" || exit 1
MAKE=(nice -n 10 make -j"$JOBS" --no-print-directory)
all_tests=$(printf '%s\n' "${GROUP[@]}" | tr ' ' '\n' | sort -u | grep -v '^$' | sed 's|^|build/tests/|')
if ! "${MAKE[@]}" build/libvramsim.a $all_tests > "$scratch/build.log" 2>&1; then
  echo "the unmutated tree does not build: $scratch/build.log" >&2; KEEP=1; exit 1
fi

# Runs GROUP's binaries; 0 when every one passes.
run_group () {
  local t
  for t in ${GROUP[$1]}; do
    nice -n 10 timeout 120 "build/tests/$t" > "$scratch/test.log" 2>&1 || { echo "$t"; return 1; }
  done
  return 0
}
for g in "${!GROUP[@]}"; do
  run_group "$g" > /dev/null || { echo "the unmutated tree fails group $g ($(run_group "$g")): fix that first" >&2; exit 1; }
done

killed=0 survived=0 invalid=0 i=0 survivors=
while IFS= read -r line; do
  [ -z "$line" ] && continue
  i=$((i + 1))
  if [ $# -gt 0 ] && ! printf ' %s ' "$*" | grep -q " $i "; then continue; fi
  file=$(awk -F ' @@ ' '{ print $1 }' <<<"$line"); nth=$(awk -F ' @@ ' '{ print $2 }' <<<"$line")
  from=$(awk -F ' @@ ' '{ print $3 }' <<<"$line"); to=$(awk -F ' @@ ' '{ print $4 }' <<<"$line")
  group=$(awk -F ' @@ ' '{ print $5 }' <<<"$line")
  cp "$file" "$scratch/orig"
  if ! FROM=$from TO=$to NTH=$nth python3 - "$file" <<'PY'
import os, sys
p = sys.argv[1]; s = open(p).read()
f, t, n = os.environ["FROM"], os.environ["TO"], int(os.environ["NTH"])
at = -1
for _ in range(n):
    at = s.find(f, at + 1)
    if at < 0:
        sys.exit(1)
open(p, "w").write(s[:at] + t + s[at + len(f):])
PY
  then
    printf '%2d  NOT FOUND  %s: "%s" (occurrence %s)\n' "$i" "$file" "$from" "$nth"; invalid=$((invalid + 1)); continue
  fi
  targets=()
  for t in ${GROUP[$group]}; do targets+=("build/tests/$t"); done
  if ! "${MAKE[@]}" build/libvramsim.a "${targets[@]}" > "$scratch/mut.log" 2>&1; then
    verdict=invalid; invalid=$((invalid + 1)); by="does not build"
  elif by=$(run_group "$group"); then
    verdict=SURVIVED; survived=$((survived + 1)); by="every $group test passes"; survivors+=" $i"
  else
    verdict=killed; killed=$((killed + 1)); by="by $by"
  fi
  printf '%2d  %-8s  %s: %s -> %s  (%s)\n' "$i" "$verdict" "$file" "$from" "$to" "$by"
  cp "$scratch/orig" "$file"
done <<<"$MUTANTS"
scored=$((killed + survived))
echo "mutation score: $killed / $scored killed${survivors:+ (survived:$survivors)}$([ "$invalid" -gt 0 ] && echo ", $invalid invalid")"
[ "$survived" -eq 0 ]
