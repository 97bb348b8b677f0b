# vramsim plot sweep: generated from plots/sweep.gp and results.csv
# Edit freely, then run: gnuplot THIS_FILE
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output 'gp/sweep.png'
plot_title = 'Predicted time vs memory.capacity on a100-80g, rtx3090'
title_lines = 1
datafile = 'gp/sweep.tsv'
array gcolor[4] = [1, 1, 2, 2]
array gstyle[4] = [1, 2, 1, 2]
nstyles = 2
xlabel = 'memory.capacity'
ylabel = 'predicted time (ms)'
logx = 0
logy = 0
xcategory = 0
value_tics = 1
xtic_chars = 5
ngroups = 4
array titles[4] = ['a100-80g, policy=oom', 'a100-80g, policy=spill', 'rtx3090, policy=oom', 'rtx3090, policy=spill']
array gfits[4] = [1, 1, 1, 1]
nfail = 2
capacity_diagonal = 0
ncaps = 0
array caps[1] = [0]
key_below = 0
key_cols = 0
note = '2 runs did not fit (status oom or overflow: x at the foot)'
note_lines = 1
# ---- plots/sweep.gp ----
# sweep.gp - a metric against a varied key, one line per group, from a
# `vramsim sweep` CSV. Set by vramsim: plot_title (title_lines lines;
# note has note_lines), datafile (one block per
# group, separated by two blank lines; columns: x, y, x as written, and
# the foot y of a run that did not fit: its y is NaN, the line's runs'
# foot NaN), xlabel, ylabel, titles[ngroups], gcolor[ngroups] (1-based
# order of the line's colour key: the first --by column), gstyle[ngroups]
# (order of its style key: the other --by columns; nstyles of them),
# gfits[ngroups] (0: no run of the line fits, only its x marks are
# drawn), nfail (runs that did not fit), logx, logy, xcategory (x holds
# category indices), value_tics (label each tick with the x value as
# written), xtic_chars (the longest such label), note, key_below and
# key_cols (the legend below the plot in that many columns; the canvas
# was grown for its rows), capacity_diagonal (y = x: the device capacity, when x
# is memory.capacity and y a memory figure), ncaps and caps[] (GiB: the
# capacities a sweep varied that is not x, drawn as levels).
# The title and note centred on the canvas (a title centred on a plot
# narrowed by its legend would leave it), with room kept above the plot.
set label 1000 plot_title . (strlen(note) > 0 ? "\n" . note : '') at screen 0.5, screen 1 center offset 0, -1 font ',13' front
set tmargin (title_lines + note_lines) * 1.3 + 1.5
set xlabel xlabel
set ylabel ylabel
set datafile separator "\t"
set grid xtics ytics lc rgb '#dddddd'
if (key_below) {
  set key below horizontal Left reverse samplen 3 spacing 1.0 maxcols key_cols
} else {
  set key outside right top vertical Left reverse samplen 3 spacing 1.2
}
set yrange [0:*]
if (logx) { set logscale x 2 }
if (logy) { set logscale y; set yrange [*:*] }
if (xcategory) { set offsets 0.3, 0.3, 0, 0 } else { set offsets graph 0.02, graph 0.02, 0, 0 }
# Tick labels rotated to end at their tick, so none leaves the canvas on
# the right; the left margin holds the first one (a character of margin
# per character of label, times cos 30 degrees).
if (value_tics) {
  set xtics rotate by 30 right nomirror
  if (xtic_chars * 0.87 + 2 > 10) { set lmargin xtic_chars * 0.87 + 2 }
}
# Ten colours (matplotlib's tab10). A colour's first set of lines uses
# the first nstyles dash patterns, its second set (the eleventh colour
# key on) the next nstyles, and so on: no colour and dash pair repeats
# while nstyles x sets <= |dashes| (16).
array palette[10] = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
array dashes[16] = [1, 2, 3, 4, 5, '_ ', '__  ', '_ . ', '. ', '- _ ', '__ . . ', '_  _ . ', '-  ', '__ - ', '. . _ ', '___   ']
# Lines that share points must all stay visible: the first style is a
# thick line with big open rings, the later ones thinner with small
# filled markers drawn on top, so where lines meet a square or a triangle
# shows inside a ring.
array points[6] = [6, 5, 9, 13, 2, 1]
array psizes[6] = [2.2, 0.9, 1.0, 1.0, 1.1, 1.1]
array widths[6] = [3.5, 2.2, 1.6, 1.6, 1.3, 1.3]
color(i) = palette[(gcolor[i] - 1) % |palette| + 1]
dash(i) = dashes[(((gcolor[i] - 1) / |palette|) * nstyles + gstyle[i] - 1) % |dashes| + 1]
point(i) = points[(gstyle[i] - 1) % |points| + 1]
psize(i) = psizes[(gstyle[i] - 1) % |psizes| + 1]
width(i) = widths[(gstyle[i] - 1) % |widths| + 1]
# Runs that did not fit: an x at the foot of the plot in the line's
# colour, one legend entry for them all.
fail_title = 'x: did not fit (oom, overflow)'
if (value_tics) {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2:xtic(3) with linespoints lw width(i) lc rgb color(i) dt dash(i) pt point(i) ps psize(i) title (gfits[i] ? titles[i] : ''), \
       for [i=1:ngroups] datafile index (i - 1) using 1:4:xtic(3) with points lc rgb color(i) pt 2 ps 1.6 lw 2 title (gfits[i] ? '' : titles[i]), \
       (nfail > 0 ? NaN : 1/0) with points lc rgb '#000000' pt 2 ps 1.6 lw 2 title (nfail > 0 ? fail_title : ''), \
       (capacity_diagonal ? x : 1/0) with lines lc rgb '#555555' dt 2 lw 1.5 title (capacity_diagonal ? 'device capacity (memory.capacity)' : ''), \
       for [j=1:ncaps] caps[j] with lines lc rgb '#555555' dt 3 lw 1.5 title (j == 1 ? 'memory.capacity (the capacities swept)' : '')
} else {
  plot for [i=1:ngroups] datafile index (i - 1) using 1:2 with linespoints lw width(i) lc rgb color(i) dt dash(i) pt point(i) ps psize(i) title (gfits[i] ? titles[i] : ''), \
       for [i=1:ngroups] datafile index (i - 1) using 1:4 with points lc rgb color(i) pt 2 ps 1.6 lw 2 title (gfits[i] ? '' : titles[i]), \
       (nfail > 0 ? NaN : 1/0) with points lc rgb '#000000' pt 2 ps 1.6 lw 2 title (nfail > 0 ? fail_title : ''), \
       (capacity_diagonal ? x : 1/0) with lines lc rgb '#555555' dt 2 lw 1.5 title (capacity_diagonal ? 'device capacity (memory.capacity)' : ''), \
       for [j=1:ncaps] caps[j] with lines lc rgb '#555555' dt 3 lw 1.5 title (j == 1 ? 'memory.capacity (the capacities swept)' : '')
}
