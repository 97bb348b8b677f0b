# vramsim plot sweep: generated from plots/sweep.gp and results.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/sweep.png'
plot_title = 'Predicted time vs memory.capacity'
datafile = 'gp/sweep.tsv'
xlabel = 'memory.capacity (GiB)'
ylabel = 'predicted time (ms)'
logx = 0
logy = 0
xcategory = 0
value_tics = 1
ngroups = 4
array titles[4] = ['a100-80g, oversubscription=oom', 'a100-80g, oversubscription=spill', 'rtx3090, oversubscription=oom', 'rtx3090, oversubscription=spill']
note = '2 runs not drawn (status oom or error)'
# ---- plots/sweep.gp ----
# sweep.gp - a metric against a varied key, one line per group, from a
# `vramsim sweep` CSV. Set by vramsim: plot_title, datafile (one block per
# group, separated by two blank lines; columns: x, y, x as written), xlabel,
# ylabel, titles[ngroups], logx, logy, xcategory (x holds category indices),
# value_tics (label each tick with the x value as written), note.
set title plot_title . (strlen(note) > 0 ? "\n" . note : '') font ',13'
set xlabel xlabel
set ylabel ylabel
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
set key outside right top vertical Left reverse samplen 2 spacing 1.2
set yrange [0:*]
if (logx) { set logscale x 2 }
if (logy) { set logscale y; set yrange [*:*] }
if (xcategory) { set offsets 0.3, 0.3, 0, 0 } else { set offsets graph 0.02, graph 0.02, 0, 0 }
if (value_tics) { set xtics rotate by -30 nomirror }
set style line 1 lc rgb '#1f77b4' lw 2 pt 7 ps 1.1
set style line 2 lc rgb '#d62728' lw 2 pt 5 ps 1.1
set style line 3 lc rgb '#2ca02c' lw 2 pt 9 ps 1.3
set style line 4 lc rgb '#9467bd' lw 2 pt 11 ps 1.3
set style line 5 lc rgb '#ff7f0e' lw 2 pt 13 ps 1.3
set style line 6 lc rgb '#8c564b' lw 2 pt 7 ps 1.1 dt 2
set style line 7 lc rgb '#e377c2' lw 2 pt 5 ps 1.1 dt 2
set style line 8 lc rgb '#17becf' lw 2 pt 9 ps 1.3 dt 2
set style line 9 lc rgb '#7f7f7f' lw 2 pt 11 ps 1.3 dt 2
set style line 10 lc rgb '#bcbd22' lw 2 pt 13 ps 1.3 dt 2
set style increment user
if (value_tics) {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2:xtic(3) with linespoints ls ((i - 1) % 10 + 1) title titles[i]
} else {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2 with linespoints ls ((i - 1) % 10 + 1) title titles[i]
}
