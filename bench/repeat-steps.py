#!/usr/bin/env python3
"""repeat-steps.py — a long trace of repeated steps from a short one (for
--sample-steps: tests/sample-steps.sh, the bench row). Takes the events
from the first mark MARK to the second (one step) N times, each shifted
by the step's captured length, then the rest of the trace from the
second mark on, shifted to follow them.

    bench/repeat-steps.py IN.jsonl OUT.jsonl N [MARK]   (MARK: step)
"""
import json, sys

src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
mark = sys.argv[4] if len(sys.argv) > 4 else 'step'
lines = open(src).read().splitlines()
head, evs = lines[0], [json.loads(l) for l in lines[1:] if l.strip()]
at = [i for i, e in enumerate(evs) if e.get('op') == 'mark' and e.get('name') == mark]
if len(at) < 2:
    sys.exit('repeat-steps: %s: mark %r is reached fewer than twice' % (src, mark))
a, b = at[0], at[1]
period = evs[b]['t'] - evs[a]['t']
with open(dst, 'w') as f:
    f.write(head + '\n')
    for e in evs[:a]:
        f.write(json.dumps(e) + '\n')
    for k in range(n):
        for e in evs[a:b]:
            e2 = dict(e)
            e2['t'] = e['t'] + k * period
            f.write(json.dumps(e2) + '\n')
    for e in evs[b:]:
        e2 = dict(e)
        e2['t'] = e['t'] + (n - 1) * period
        f.write(json.dumps(e2) + '\n')
