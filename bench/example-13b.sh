#!/bin/bash
# example-13b.sh — README's end-to-end example: one training step of a 13B
# GPT (40 layers, hidden 5120, 40 heads, sequence 2048, micro-batch 1 per
# GPU, full recomputation, ZeRO-3) on 8, 64 and 512 A100-80GB GPUs, over the
# a100-80g preset's network (DGX A100: NVLink3 through NVSwitch, one 200 Gb/s
# HDR NIC per GPU) and over PCIe + Ethernet (the same GPUs as 8-card PCIe
# 4.0 servers, one 100 Gb/s Ethernet NIC per server, with NCCL's PCIe
# figures as the PCIe presets have them: docs/config.md). Writes a CSV and a plot
# (NOPLOT=1: the CSV only; tests/readme.sh compares it with README's table).
#
#   bench/example-13b.sh [OUT_DIR]     (default build/example-13b)
set -eu
cd "$(dirname "$0")/.."
VRAMSIM=${VRAMSIM:-bin/vramsim}
D=${1:-build/example-13b}
mkdir -p "$D"
PCIE=(--set network.intra.kind=pcie --set network.intra.bandwidth=31.5GB/s --set network.intra.latency=5.7us
      --set network.intra.efficiency=0.76 --set network.inter.bandwidth=1.5625GB/s)
csv=$D/13b.csv
echo "gpus,network,step_ms,comm_busy_ms,comm_exposed_ms,peak_allocated_gib,peak_device_gib" > "$csv"
for n in 8 64 512; do
  "$VRAMSIM" synth transformer-train --layers 40 --hidden 5120 --heads 40 --seq 2048 --batch 1 \
    --zero 3 --dp "$n" --checkpoint full -c a100-80g -o "$D/13b-$n.vtrace"
  for net in nvlink-ib pcie-eth; do
    extra=()
    [ "$net" = pcie-eth ] && extra=("${PCIE[@]}")
    "$VRAMSIM" replay "$D/13b-$n.vtrace" -c a100-80g "${extra[@]}" --format json -o "$D/13b-$n-$net.json"
    python3 - "$D/13b-$n-$net.json" "$n" "$net" >> "$csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
step = [m for m in d["marks"] if m["name"] == "step"][0]["predicted_ns"]
n = d["network"]
# Allocated: the tensors the step holds (what ZeRO divides by N); device:
# what the caching allocator model reserved from the device, plus context.
print("%s,%s,%.1f,%.1f,%.1f,%.2f,%.2f" % (sys.argv[2], sys.argv[3], step / 1e6, n["busy_ns"] / 1e6,
                                          n["exposed_ns"] / 1e6,
                                          d["memory"]["allocator"]["peak_allocated_bytes"] / 2**30,
                                          d["memory"]["tiers"][0]["peak_bytes"] / 2**30))
PY
  done
done
cat "$csv"
[ "${NOPLOT:-0}" = 1 ] && exit 0
gnuplot <<GP
set terminal pngcairo size 900,480 font ",11"
set output "$D/network-13b.png"
set datafile separator ","
set title "13B GPT, ZeRO-3, one step per GPU (vramsim synth + replay on a100-80g)"
set ylabel "ms per step"
set xlabel "GPUs"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key left top
set grid ytics
plot "< grep nvlink-ib $csv" using 3:xtic(1) title "step, NVLink + InfiniBand", \
     "< grep pcie-eth $csv" using 3 title "step, PCIe + Ethernet", \
     "< grep nvlink-ib $csv" using 5 title "exposed comm, NVLink + IB", \
     "< grep pcie-eth $csv" using 5 title "exposed comm, PCIe + Ethernet"
GP
echo "plot: $D/network-13b.png"
