# timeline.gp - residency per tier (GiB, left axis) and utilization per
# resource (%, right axis) over time, from `vramsim replay --series`.
# Set by vramsim: plot_title (title_lines lines), datafile (columns: time in ms, nres residency
# columns in GiB, nutil utilization columns in %), res_titles[], util_titles[],
# logx, logy.
# The title centred on the canvas, with room kept above the plot.
set label 1000 plot_title at screen 0.5, screen 1 center offset 0, -1 font ',13' front
set tmargin title_lines * 1.3 + 1.5
set xlabel 'time (ms)'
set ylabel 'resident (GiB)'
set y2label 'utilization (% of capacity)'
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
set border 3 + 8
set ytics nomirror
set y2tics 0, 20, 100 nomirror
set yrange [0:*]
set y2range [0:105]
set xrange [*:*]
set key outside right top vertical Left reverse samplen 2 spacing 1.2 title 'resident (GiB) / busy (%)'
if (logx) { set logscale x }
if (logy) { set logscale y; set yrange [*:*] }
set style line 1 lc rgb '#1f77b4' lw 2.5
set style line 2 lc rgb '#2ca02c' lw 2.5
set style line 3 lc rgb '#8c564b' lw 2.5
set style line 4 lc rgb '#9467bd' lw 2.5
# Utilization lines alternate a thick light solid line and a thin dark
# dashed one, so two resources saturated together (both PCIe directions
# under UVM thrashing) both show: the dashes lie on the band.
set style line 11 lc rgb '#f4a582' lw 3.5 dt 1
set style line 12 lc rgb '#b2182b' lw 1.3 dt 2
set style line 13 lc rgb '#a6dba0' lw 3.5 dt 1
set style line 14 lc rgb '#2d004b' lw 1.3 dt 2
set style line 15 lc rgb '#c2a5cf' lw 3.5 dt 1
set style line 16 lc rgb '#00441b' lw 1.3 dt 4
set style line 17 lc rgb '#000000' lw 1.3 dt 3
set autoscale xfixmax
plot for [i=1:nres] datafile using 1:(column(1 + i)) axes x1y1 with steps ls i title res_titles[i] . ' (GiB)', \
     for [j=1:nutil] datafile using 1:(column(1 + nres + j)) axes x1y2 with steps ls (10 + j) title util_titles[j] . ' (%)'
