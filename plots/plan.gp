# plan.gp - `vramsim plot plan`: a figure of the best fitting layout of
# each (tp, pp) family against the GPU count, one line a family. Set by
# vramsim: plot_title (title_lines lines), note, datafile (one block per
# family, separated by two blank lines; columns: GPUs, y), ngroups,
# titles[ngroups], ylabel, logx, logy, single_x (one GPU count: bars of
# points side by side), xtics_list (the GPU counts as "(4, 8, 16)", or ""
# for gnuplot's own ticks).
set label 1000 plot_title . "\n" . note at screen 0.5, screen 1 center offset 0, -1 font ',13' front
set tmargin (title_lines + 1) * 1.3 + 1.5
set xlabel 'GPUs'
set ylabel ylabel
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
set key outside right top vertical Left reverse samplen 3 spacing 1.2
set yrange [*:*]
if (logx) { set logscale x 2 }
if (strlen(xtics_list) > 0) { eval 'set xtics ' . xtics_list }
if (logy) { set logscale y; set yrange [*:*] }
set offsets graph 0.04, graph 0.04, graph 0.05, 0
array palette[10] = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
array points[10] = [7, 5, 9, 13, 11, 15, 6, 4, 8, 12]
dash(i) = i > 5 ? 2 : 1
if (single_x) {
  set xtics ('' 0)
  set xlabel 'layout family (one GPU count)'
  set xrange [0:ngroups + 1]
  plot for [i=1:ngroups] datafile index (i - 1) using (i):2 with points lc rgb palette[i] pt points[i] ps 2.2 title titles[i]
} else {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2 with linespoints lw 2.5 lc rgb palette[i] pt points[i] ps 1.6 dt dash(i) title titles[i]
}
