# vramsim plot compare: generated from plots/compare.gp and series-a.csv series-b.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/compare.png'
plot_title = 'Compare: series-a vs series-b'
title_lines = 1
array datafiles[2] = ['gp/compare-1.tsv', 'gp/compare-2.tsv']
ninputs = 2
array titles[2] = ['series-a', 'series-b']
ylabel2 = 'device_mem utilization (%)'
logx = 0
logy = 0
# ---- plots/compare.gp ----
# compare.gp - two or more `--series` timelines overlaid: device residency
# above, one more series column below. Set by vramsim: plot_title,
# datafiles[ninputs] (columns: time in ms, resident on device in GiB, the
# lower panel's column), titles[ninputs], ylabel2, logx, logy.
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
set key outside right top vertical Left reverse samplen 2 spacing 1.2
set style line 1 lc rgb '#1f77b4' lw 2.5
set style line 2 lc rgb '#d62728' lw 2.5 dt 2
set style line 3 lc rgb '#2ca02c' lw 2.5 dt 3
set style line 4 lc rgb '#9467bd' lw 2.5 dt 4
set style line 5 lc rgb '#ff7f0e' lw 2.5 dt 5
if (logx) { set logscale x }
set multiplot layout 2, 1 title plot_title font ',13'
set lmargin 12
set rmargin 22
set ylabel 'resident on device (GiB)'
set yrange [0:*]
set format x ''
plot for [i=1:ninputs] datafiles[i] using 1:2 with steps ls ((i - 1) % 5 + 1) title titles[i]
set format x '% h'
set xlabel 'time (ms)'
set ylabel ylabel2
if (logy) { set logscale y; set yrange [*:*] }
plot for [i=1:ninputs] datafiles[i] using 1:3 with steps ls ((i - 1) % 5 + 1) title titles[i]
unset multiplot
