#!/usr/bin/env python3
"""repeat-steps.py — a long trace of repeated steps from a short one (for
--sample-steps: tests/sample-steps.sh, the bench row). Writes the events
before the first reach of mark MARK, then step J (the events from the
J-th reach of MARK, from 0, to the next) N times, each shifted by the
step's captured length, then the last step and what follows it (from the
last reach on), shifted to follow them: N + 1 steps.

    bench/repeat-steps.py IN.jsonl OUT.jsonl N [MARK [J]]   (step, 0)
"""
import json, sys

src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
mark = sys.argv[4] if len(sys.argv) > 4 else 'step'
j = int(sys.argv[5]) if len(sys.argv) > 5 else 0
lines = open(src).read().splitlines()
head, evs = lines[0], [json.loads(l) for l in lines[1:] if l.strip()]
at = [i for i, e in enumerate(evs) if e.get('op') == 'mark' and e.get('name') == mark]
if len(at) < j + 2:
    sys.exit('repeat-steps: %s: mark %r is reached fewer than %d times' % (src, mark, j + 2))
a, b, last = at[j], at[j + 1], at[-1]
period = evs[b]['t'] - evs[a]['t']
with open(dst, 'w') as f:
    f.write(head + '\n')
    for e in evs[:at[0]]:
        f.write(json.dumps(e) + '\n')
    shift0 = evs[at[0]]['t'] - evs[a]['t']
    for k in range(n):
        for e in evs[a:b]:
            e2 = dict(e)
            e2['t'] = e['t'] + shift0 + k * period
            f.write(json.dumps(e2) + '\n')
    for e in evs[last:]:
        e2 = dict(e)
        e2['t'] = e['t'] - evs[last]['t'] + evs[at[0]]['t'] + n * period
        f.write(json.dumps(e2) + '\n')
