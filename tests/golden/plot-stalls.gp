# vramsim plot stalls: generated from plots/stalls.gp and results.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/stalls.png'
plot_title = 'Stall breakdown per run'
datafile = 'gp/stalls.tsv'
ylabel = 'stall time (ms)'
nbars = 8
logy = 0
# ---- plots/stalls.gp ----
# stalls.gp - stacked stall breakdown, one bar per report or sweep row.
# Set by vramsim: plot_title, datafile (columns: run label, contention,
# fault, swap, copy_engine, all in the unit of ylabel), ylabel, nbars, logy.
set title plot_title font ',13'
set ylabel ylabel
set datafile separator "\t"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.7 relative
set grid ytics lc rgb '#dddddd'
set key outside right top vertical Left reverse samplen 2 spacing 1.2
set yrange [0:*]
set xtics nomirror
if (nbars > 4) { set xtics rotate by 30 right }
if (nbars > 24) { set xtics font ',8' }
if (logy) { set logscale y; set yrange [*:*] }
plot datafile using 2:xtic(1) title 'contention' lc rgb '#1f77b4', \
     '' using 3 title 'fault (UVM)' lc rgb '#d62728', \
     '' using 4 title 'swap (spill)' lc rgb '#ff7f0e', \
     '' using 5 title 'copy engine queue' lc rgb '#2ca02c'
