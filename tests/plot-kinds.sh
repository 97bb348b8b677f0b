#!/bin/bash
# plot-kinds.sh — every `vramsim plot` kind renders a PNG (and one an SVG)
# with gnuplot from hand-written inputs, its --script-only script matches
# tests/golden/plot-KIND.gp (after removing the temp dir from paths), and
# the sweep data is converted to the units the axes say. After a change
# to a template or to what sim/out/plot*.c write, UPDATE_GOLDEN=1 rewrites the
# golden scripts (read the diff before committing it).
VRAMSIM=${VRAMSIM:-bin/vramsim}
GOLDEN=$(cd "$(dirname "$0")" && pwd)/golden
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
echo 1..24

cat > "$T/series-a.csv" <<'CSV'
t_ns,dt_ns,resident_device_bytes,resident_cxl0_bytes,resident_host_bytes,util_sm,util_device_mem,util_link_h2d,util_link_d2h,util_cxl0,util_host_mem
0,1000000,1073741824,0,0,0.000,0.000,0.800,0.000,0.000,0.000
1000000,1000000,2147483648,536870912,0,0.500,0.900,0.000,0.000,0.250,0.000
2000000,1000000,2147483648,536870912,0,1.000,0.400,0.000,0.100,0.000,0.000
3000000,1000000,1073741824,0,0,0.000,0.000,0.000,0.000,0.000,0.000
CSV
cat > "$T/series-b.csv" <<'CSV'
t_ns,dt_ns,resident_device_bytes,resident_host_bytes,util_sm,util_device_mem,util_link_h2d,util_link_d2h,util_host_mem
0,2000000,1073741824,0,0.000,0.000,0.400,0.000,0.000
2000000,2000000,2147483648,0,0.250,0.450,0.000,0.000,0.000
4000000,2000000,1073741824,0,0.000,0.000,0.000,0.050,0.000
CSV
cat > "$T/results.csv" <<'CSV'
config,memory.capacity,policy.oversubscription,status,predicted_ns,slowdown,peak_device_bytes,contention_ns,fault_ns,swap_ns,copy_engine_ns,blocked_ns,h2d_bytes,d2h_bytes,swap_out_bytes,swap_in_bytes,fault_bytes,faults,writeback_bytes,error
a100-80g,8GiB,oom,oom,24000,0.0028,8589934592,0,0,0,0,0,0,0,0,0,0,0,0,
a100-80g,8GiB,spill,ok,128000000,15.1,8589934592,1000000,0,56000000,0,0,0,0,0,0,0,0,0,
a100-80g,16GiB,oom,ok,8500000,1.0,12884901888,500000,0,0,250000,0,0,0,0,0,0,0,0,
a100-80g,16GiB,spill,ok,8500000,1.0,12884901888,500000,0,0,250000,0,0,0,0,0,0,0,0,
rtx3090,8GiB,oom,oom,24000,0.0028,8589934592,0,0,0,0,0,0,0,0,0,0,0,0,
rtx3090,8GiB,spill,ok,142000000,16.8,8589934592,2000000,0,56000000,0,0,0,0,0,0,0,0,0,
rtx3090,16GiB,oom,ok,23600000,2.8,12884901888,0,3000000,0,0,0,0,0,0,0,0,0,0,
rtx3090,16GiB,spill,ok,23600000,2.8,12884901888,0,3000000,0,0,0,0,0,0,0,0,0,0,"bad, ""quoted"" text"
CSV
for c in a100-80g rtx3090; do
  cat > "$T/$c.json" <<JSON
{"vramsim_report": 1, "status": "ok", "config": "$c", "time": {"captured_ns": 1000000, "predicted_ns": 2000000, "slowdown": 2.0},
 "stalls": {"contention_ns": 400000, "fault_ns": 300000, "swap_ns": 200000, "copy_engine_ns": 100000}}
JSON
done

is_png () { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$(stat -c %s "$1")" -gt 10000 ]; }

cd "$T" || exit 1
"$VRAMSIM" plot timeline series-a.csv -o timeline.png 2> err.txt && is_png timeline.png; ok $? "timeline renders a PNG"
"$VRAMSIM" plot sweep results.csv --x memory.capacity -o sweep.png 2> err.txt && is_png sweep.png; ok $? "sweep renders a PNG"
"$VRAMSIM" plot stalls a100-80g.json rtx3090.json -o stalls.png 2> err.txt && is_png stalls.png; ok $? "stalls (reports) renders a PNG"
"$VRAMSIM" plot stalls results.csv -o stalls-csv.png 2> err.txt && is_png stalls-csv.png; ok $? "stalls (sweep CSV) renders a PNG"
"$VRAMSIM" plot compare series-a.csv series-b.csv -o compare.png 2> err.txt && is_png compare.png; ok $? "compare renders a PNG"
"$VRAMSIM" plot sweep results.csv --by config --y slowdown -o sweep.svg 2> err.txt && grep -q '<svg' sweep.svg; ok $? "sweep renders an SVG"
[ -z "$(ls -A | grep -v -e '\.png$' -e '\.svg$' -e '\.csv$' -e '\.json$' -e '^err.txt$')" ]; ok $? "rendering leaves no script, data or temp file behind"

mkdir gp
same=0
for k in "timeline series-a.csv" "sweep results.csv --x memory.capacity" "stalls results.csv" "compare series-a.csv series-b.csv"; do
  set -- $k
  kind=$1; shift
  "$VRAMSIM" plot "$kind" "$@" -o "gp/$kind.png" --script-only 2> err.txt || same=1
  [ ! -e "gp/$kind.png" ] || same=1
  sed "s#$T/##g" "gp/$kind.gp" > "gp/$kind.filtered"
  [ -n "${UPDATE_GOLDEN:-}" ] && cp "gp/$kind.filtered" "$GOLDEN/plot-$kind.gp"
  if ! diff -u "$GOLDEN/plot-$kind.gp" "gp/$kind.filtered" >&2; then same=1; fi
done
ok $same "--script-only scripts match tests/golden/plot-*.gp"

# The sweep data, by hand: x in GiB, y = predicted_ns in ms, one block per
# (config, policy), points in x order; an oom run is no point of its line
# (y NaN) but an x mark at the foot (column 4: 0 on this linear axis).
printf '# a100-80g, policy=oom\n16\t8.5\t16GiB\tNaN\n8\tNaN\t8GiB\t0\n\n\n# a100-80g, policy=spill\n8\t128\t8GiB\tNaN\n16\t8.5\t16GiB\tNaN\n\n\n# rtx3090, policy=oom\n16\t23.6\t16GiB\tNaN\n8\tNaN\t8GiB\t0\n\n\n# rtx3090, policy=spill\n8\t142\t8GiB\tNaN\n16\t23.6\t16GiB\tNaN\n' > expect.tsv
cmp -s expect.tsv gp/sweep.tsv; ok $? "sweep data: GiB on x, ms on y, oom runs marked at the foot, not drawn as values"
grep -q "^note = '2 runs did not fit (status oom or overflow: x at the foot)'" gp/sweep.gp \
  && grep -q "^array titles\[4\] = \['a100-80g, policy=oom', 'a100-80g, policy=spill', 'rtx3090, policy=oom', 'rtx3090, policy=spill'\]" gp/sweep.gp
ok $? "sweep notes the runs that did not fit; the legend says policy=oom, not oom"
grep -q '^logx = 0' gp/sweep.gp && "$VRAMSIM" plot sweep results.csv --logx -o gp/l.png --script-only && grep -q '^logx = 1' gp/l.gp; ok $? "--logx forces a log x axis"
printf '# time_ms\tresident_device_bytes\tresident_cxl0_bytes\tutil_sm\tutil_device_mem\tutil_link_h2d\tutil_link_d2h\tutil_cxl0   (residency in GiB, utilization in %%)\n0\t1\t0\t0\t0\t80\t0\t0\n1\t2\t0.5\t50\t90\t0\t0\t25\n2\t2\t0.5\t100\t40\t0\t10\t0\n3\t1\t0\t0\t0\t0\t0\t0\n4\t1\t0\t0\t0\t0\t0\t0\n' > expect-tl.tsv
cmp -s expect-tl.tsv gp/timeline.tsv; ok $? "timeline data: ms, GiB, %; unused tiers and idle resources dropped"

VRAMSIM_GNUPLOT=/nonexistent/gnuplot "$VRAMSIM" plot timeline series-a.csv -o nognuplot.png 2> err.txt
rc=$?
[ $rc = 1 ] && grep -q "gnuplot not found" err.txt && [ ! -e nognuplot.png ]; ok $? "a missing gnuplot: exit 1, a clear message, no image"
"$VRAMSIM" plot timeline results.csv -o bad.png 2> err.txt
[ $? = 1 ] && grep -q "results.csv: not a --series CSV" err.txt && [ ! -e bad.png ]; ok $? "a sweep CSV given to timeline: exit 1 naming the file"
"$VRAMSIM" plot sweep results.csv --x nosuchkey -o bad.png 2> err.txt
[ $? = 1 ] && grep -q "no column 'nosuchkey'" err.txt; ok $? "an unknown --x column: exit 1 naming it"
"$VRAMSIM" plot sweep results.csv -o bad.jpg 2> err.txt
[ $? = 2 ]; ok $? "an output that is not .png or .svg is bad usage (exit 2)"
"$VRAMSIM" plot sweep missing.csv -o bad.png 2> err.txt
[ $? = 1 ] && grep -q "missing.csv" err.txt; ok $? "a missing input: exit 1 naming it"
# An overflow row (--keep-going past capacity, SPEC 5.9) is not a fit:
# like oom it is left out of the sweep plot, even with a slowdown cell.
head -n 1 results.csv > over.csv
echo 'a100-80g,8GiB,oom,overflow,24000,0.0028,8589934592,0,0,0,0,0,0,0,0,0,0,0,0,' >> over.csv
echo 'a100-80g,16GiB,oom,ok,8500000,1.0,12884901888,500000,0,0,250000,0,0,0,0,0,0,0,0,' >> over.csv
"$VRAMSIM" plot sweep over.csv -o gp/over.png --script-only 2> err.txt
printf '# a100-80g, policy=oom\n16\t8.5\t16GiB\tNaN\n8\tNaN\t8GiB\t0\n' > expect-over.tsv
cmp -s expect-over.tsv gp/over.tsv && grep -q "^note = '1 run did not fit (status oom or overflow: x at the foot)'" gp/over.gp
ok $? "an overflow run is not drawn as a value but marked, and the note counts it"

# Stalls: labels name each varied key (policy=oom is the policy), a run
# that ran out of memory says so beside its bar (column 6), not a bare
# zero-height bar.
"$VRAMSIM" plot stalls results.csv -o gp/st.png --script-only
printf '%s\n' 'a100-80g, capacity=8GiB, policy=oom	0	0	0	0	out of memory: stopped here' \
  'a100-80g, capacity=8GiB, policy=spill	1	0	56	0	-' > expect-st.tsv
[ "$(sed -n 2,3p gp/st.tsv)" = "$(cat expect-st.tsv)" ] && grep -q '^nmarked = 2$' gp/st.gp && grep -q '^horizontal = 1$' gp/st.gp
ok $? "stalls: 'policy=oom' labels, the oom runs marked 'out of memory' (2), long labels as horizontal bars"

# 20 configs x 4 policies x 3 capacities, written here (numbers by
# formula, not the model's): config i, policy p (0-3), capacity c (8, 16,
# 24 GiB) takes (10 i + p + 1) x (4 - c/8) x 0.1 ms, a value no other
# line has at that capacity; under policy oom configs 5, 10 and 15 do
# not fit at 8 GiB; the last config's four policies are one line
# ("policy=any"). 80 lines less 3 merged = 77, + the x entry = 78
# legend entries; the longest title the x entry's, 30 characters (the
# lines' longest, "v100-sxm2-32g, policy=direct", 28): 990 / ((30 + 8)
# x 9) = 2 columns of 39 rows, the canvas 600 + 39 x 18 = 1302 px high
# (sim/out/plot-sweep.c, key_below).
names="a100-40g a100-80g a100-80g-cxl a40 gh200 h100-pcie h100-sxm h100-sxm-cxl h200 jetson-agx-orin jetson-orin-nano l40s mi300x rtx3090 rtx4090 seed-gddr6x seed-hbm2e seed-lpddr5 v100-pcie-16g v100-sxm2-32g"
{ head -n 1 results.csv
  i=0
  for c in $names; do
    i=$((i + 1)); p=0
    for pol in oom spill direct uvm; do
      for cap in 8 16 24; do
        st=ok; [ $pol = oom ] && [ $((i % 5)) = 0 ] && [ $i != 20 ] && [ $cap = 8 ] && st=oom
        k=$((p + 1)); [ $i = 20 ] && k=1
        echo "$c,${cap}GiB,$pol,$st,$(((10 * i + k) * (4 - cap / 8) * 100000)),1.0,8589934592,0,0,0,0,0,0,0,0,0,0,0,0,"
      done
      p=$((p + 1))
    done
  done; } > twenty.csv
"$VRAMSIM" plot sweep twenty.csv --x memory.capacity -o gp/sweep20.png --script-only 2> err.txt
sed "s#$T/##g" gp/sweep20.gp > gp/sweep20.filtered
[ -n "${UPDATE_GOLDEN:-}" ] && cp gp/sweep20.filtered "$GOLDEN/plot-sweep20.gp"
diff -u "$GOLDEN/plot-sweep20.gp" gp/sweep20.filtered >&2; ok $? "a 20-series sweep (20 configs x 4 policies): its script matches tests/golden/plot-sweep20.gp"
grep -q "^set terminal pngcairo size 1000,1302 " gp/sweep20.gp && grep -q '^key_below = 1$' gp/sweep20.gp && grep -q '^key_cols = 2$' gp/sweep20.gp \
  && grep -q "'v100-sxm2-32g, policy=any'" gp/sweep20.gp
ok $? "20 series: the legend below in 2 columns, the canvas grown to 1302 px for its 39 rows; identical policies read policy=any"
# No colour and dash pair twice, by the template's rule: colour =
# (gcolor - 1) % 10, dash = ((gcolor - 1) / 10 x nstyles + gstyle - 1) % 16.
awk -F'[][=, ]+' '/^array gcolor/ { for (i = 4; i < NF; i++) c[i - 3] = $i; n = NF - 4 }
  /^array gstyle/ { for (i = 4; i < NF; i++) s[i - 3] = $i } /^nstyles/ { ns = $2 }
  END { for (i = 1; i <= n; i++) { k = ((c[i] - 1) % 10) " " (int((c[i] - 1) / 10) * ns + s[i] - 1) % 16; if (k in seen) exit 1; seen[k] } exit n != 77 }' gp/sweep20.gp
ok $? "20 series: 77 lines, no colour and dash pair repeats"
"$VRAMSIM" plot sweep twenty.csv --x memory.capacity -o sweep20.png 2> err.txt && is_png sweep20.png \
  && [ "$(od -An -tu1 -j 20 -N 4 sweep20.png | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')" = 1302 ]
ok $? "20 series: the PNG renders at 1000 x 1302"
# A title longer than the canvas goes on two lines, inside it.
long="hand-train-step.jsonl on twenty presets, four oversubscription policies and three capacities: predicted time per run, with the runs that did not fit"
"$VRAMSIM" plot sweep results.csv --title "$long" -o gp/long.png --script-only \
  && grep -qF "plot_title = 'hand-train-step.jsonl on twenty presets, four oversubscription policies and three capacities:' . \"\\n\" . 'predicted time per run, with the runs that did not fit'" gp/long.gp
ok $? "a 150-character title is broken in two lines of at most 100 characters"
