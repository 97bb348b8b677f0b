#!/usr/bin/env python3
"""num-diff.py — compares two vramsim outputs (JSON reports, text reports,
CSV series, timelines) allowing numbers to differ by a relative TOL
(default 1e-9) of the larger, or by 1 in their last printed digit, and
nothing else: same structure, same keys, same strings, same non-numeric
text. Prints the largest relative difference; exit 1 on any other.

    bench/num-diff.py OLD NEW [TOL]
"""
import json, math, re, sys

NUM = re.compile(r'-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')

def close(a, b, tol, sa=None, sb=None):
    if a == b:
        return 0.0
    m = max(abs(a), abs(b))
    rel = abs(a - b) / m if m > 0 else 0.0
    if rel <= tol:
        return rel
    # A last printed digit away (numbers rounded to their print width).
    if sa is not None and sb is not None:
        def ulp(x):
            x = x.lower().split('e')
            exp = int(x[1]) if len(x) > 1 else 0
            frac = x[0].split('.')
            return 10.0 ** (exp - (len(frac[1]) if len(frac) > 1 else 0))
        u = max(ulp(sa), ulp(sb))
        if abs(a - b) <= u * 1.0000001:
            return rel if rel <= 1e-6 else float('inf')
    return float('inf')

worst = [0.0, '']

def note(r, where):
    if r > worst[0]:
        worst[0], worst[1] = r, where

def cmp_json(a, b, tol, path):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        r = close(float(a), float(b), tol, repr(a), repr(b))
        note(r, path)
        return r != float('inf')
    if type(a) != type(b):
        return False
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return False
        return all(cmp_json(a[k], b[k], tol, path + '.' + k) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(cmp_json(x, y, tol, '%s[%d]' % (path, i)) for i, (x, y) in enumerate(zip(a, b)))
    return a == b

def cmp_text(ta, tb, tol):
    la, lb = ta.split('\n'), tb.split('\n')
    if len(la) != len(lb):
        return False
    for i, (x, y) in enumerate(zip(la, lb)):
        if x == y:
            continue
        if NUM.sub('#', x) != NUM.sub('#', y):
            return False
        for p, q in zip(NUM.findall(x), NUM.findall(y)):
            r = close(float(p), float(q), tol, p, q)
            note(r, 'line %d' % (i + 1))
            if r == float('inf'):
                return False
    return True

def main():
    old, new = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-9
    ta, tb = open(old).read(), open(new).read()
    if len(sys.argv) > 5:   # path substitutions: OLD_DIR NEW_DIR
        pass
    ok = None
    try:
        ok = cmp_json(json.loads(ta), json.loads(tb), tol, '')
    except ValueError:
        ok = cmp_text(ta, tb, tol)
    print('%s: %s, largest relative difference %.3g%s' % (new, 'within' if ok else 'DIFFERS beyond', worst[0], (' at ' + worst[1]) if worst[1] else ''))
    sys.exit(0 if ok else 1)

main()
