# vramsim plot sweep: generated from plots/sweep.gp and results.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/sweep.png'
plot_title = 'Predicted time vs memory.capacity on a100-80g, rtx3090'
datafile = 'gp/sweep.tsv'
array gcolor[4] = [1, 1, 2, 2]
array gstyle[4] = [1, 2, 1, 2]
xlabel = 'memory.capacity'
ylabel = 'predicted time (ms)'
logx = 0
logy = 0
xcategory = 0
value_tics = 1
ngroups = 4
array titles[4] = ['a100-80g, oversubscription=oom', 'a100-80g, oversubscription=spill', 'rtx3090, oversubscription=oom', 'rtx3090, oversubscription=spill']
key_below = 0
note = '2 runs not drawn (status oom, overflow or error)'
# ---- plots/sweep.gp ----
# sweep.gp - a metric against a varied key, one line per group, from a
# `vramsim sweep` CSV. Set by vramsim: plot_title, datafile (one block per
# group, separated by two blank lines; columns: x, y, x as written), xlabel,
# ylabel, titles[ngroups], gcolor[ngroups] (colour number: one per value of
# the first --by column), gstyle[ngroups] (dash/point number: one per value
# of the other --by columns), logx, logy, xcategory (x holds category
# indices), value_tics (label each tick with the x value as written), note,
# key_below (legend entries too long to sit beside the plot).
set title plot_title . (strlen(note) > 0 ? "\n" . note : '') font ',13'
set xlabel xlabel
set ylabel ylabel
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
if (key_below) { set key below vertical Left reverse samplen 3 spacing 1.1 maxrows 4 } else { set key outside right top vertical Left reverse samplen 3 spacing 1.2 }
set yrange [0:*]
if (logx) { set logscale x 2 }
if (logy) { set logscale y; set yrange [*:*] }
if (xcategory) { set offsets 0.3, 0.3, 0, 0 } else { set offsets graph 0.02, graph 0.02, 0, 0 }
if (value_tics) { set xtics rotate by -30 nomirror }
array palette[8] = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf']
# Lines that share points must all stay visible: the first style is a
# thick line with big open rings, the later ones thinner and dashed with
# small filled markers drawn on top, so where lines meet a square or a
# triangle shows inside a ring.
array points[6] = [6, 5, 9, 13, 2, 1]
array psizes[6] = [2.2, 0.9, 1.0, 1.0, 1.1, 1.1]
array widths[6] = [3.5, 2.2, 1.6, 1.6, 1.3, 1.3]
color(i) = palette[(gcolor[i] - 1) % 8 + 1]
dash(i) = (gstyle[i] - 1) % 5 + 1
point(i) = points[(gstyle[i] - 1) % 6 + 1]
psize(i) = psizes[(gstyle[i] - 1) % 6 + 1]
width(i) = widths[(gstyle[i] - 1) % 6 + 1]
if (value_tics) {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2:xtic(3) with linespoints lw width(i) lc rgb color(i) dt dash(i) pt point(i) ps psize(i) title titles[i]
} else {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2 with linespoints lw width(i) lc rgb color(i) dt dash(i) pt point(i) ps psize(i) title titles[i]
}
