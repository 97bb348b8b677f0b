# vramsim plot stalls: generated from plots/stalls.gp and results.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/stalls.png'
plot_title = 'Stall time per run on a100-80g, rtx3090 (8 runs)'
title_lines = 1
datafile = 'gp/stalls.tsv'
ylabel = 'stall time (ms)'
nbars = 8
horizontal = 1
rotate = 0
label_chars = 38
nmarked = 2
logy = 0
# ---- plots/stalls.gp ----
# stalls.gp - stacked stall breakdown, one bar per report or sweep row.
# Set by vramsim: plot_title (title_lines lines), datafile (columns: run label, contention,
# fault, swap, copy_engine, all in the unit of ylabel, then the mark of a
# run that did not fit, "-" for none), ylabel, nbars, logy, rotate
# (labels would collide upright: rotate them), label_chars (the longest
# label), horizontal (many runs or long labels: one horizontal bar per
# line, labels on the y axis; the canvas is grown to fit them), nmarked
# (runs that did not fit: their mark is written at the end of the bar,
# in red, so that a short bar is not read as a run without stalls).
# The title centred on the canvas, with room kept above the plot.
set label 1000 plot_title at screen 0.5, screen 1 center offset 0, -1 font ',13' front
set tmargin title_lines * 1.3 + 1.5
set datafile separator "\t"
set key outside right top vertical Left reverse samplen 2 spacing 1.2
# Distinct colours, and hatching on two of them, so no stall kind reads
# as another in print or for colour-blind readers.
c1 = '#1f77b4'; c2 = '#d62728'; c3 = '#ff7f0e'; c4 = '#2ca02c'
mark(s) = (s eq '-' ? '' : s)
if (horizontal) {
  set xlabel ylabel
  set grid xtics lc rgb '#dddddd'
  set xrange [0:*]
  set yrange [nbars - 0.5:-0.5]
  set ytics nomirror font ',9'
  set style fill solid 0.85 border rgb '#333333'
  # Room to the right of the longest bar for a mark.
  if (nmarked > 0) { set offsets 0, graph 0.3, 0, 0 }
  if (logy) { set logscale x; set xrange [*:*] }
  plot datafile using (0):0:(0):2:($0 - 0.38):($0 + 0.38):ytic(1) with boxxyerror lc rgb c1 title 'contention', \
       '' using (0):0:2:($2 + $3):($0 - 0.38):($0 + 0.38) with boxxyerror lc rgb c2 fs pattern 4 border rgb '#333333' title 'fault (UVM)', \
       '' using (0):0:($2 + $3):($2 + $3 + $4):($0 - 0.38):($0 + 0.38) with boxxyerror lc rgb c3 title 'swap (spill)', \
       '' using (0):0:($2 + $3 + $4):($2 + $3 + $4 + $5):($0 - 0.38):($0 + 0.38) with boxxyerror lc rgb c4 fs pattern 5 border rgb '#333333' title 'copy engine queue', \
       '' using ($2 + $3 + $4 + $5):0:(mark(strcol(6))) with labels left offset 0.6, 0 font ',9' tc rgb '#b2182b' notitle
} else {
  set ylabel ylabel
  set style data histograms
  set style histogram rowstacked
  set style fill solid 0.85 border rgb '#333333'
  set boxwidth 0.7 relative
  set grid ytics lc rgb '#dddddd'
  set yrange [0:*]
  set xtics nomirror
  # Rotated labels end at their bar; the left margin holds the first one.
  if (rotate) {
    set xtics rotate by 30 right
    if (label_chars * 0.87 + 2 > 10) { set lmargin label_chars * 0.87 + 2 }
  }
  # Room above the bars for a mark, written upwards.
  if (nmarked > 0) { set offsets 0, 0, graph 0.35, 0 }
  if (logy) { set logscale y; set yrange [*:*] }
  plot datafile using 2:xtic(1) title 'contention' lc rgb c1, \
       '' using 3 title 'fault (UVM)' lc rgb c2 fs pattern 4 border rgb '#333333', \
       '' using 4 title 'swap (spill)' lc rgb c3, \
       '' using 5 title 'copy engine queue' lc rgb c4 fs pattern 5 border rgb '#333333', \
       '' using 0:($2 + $3 + $4 + $5):(mark(strcol(6))) with labels rotate by 90 left offset 0, 0.6 font ',9' tc rgb '#b2182b' notitle
}
