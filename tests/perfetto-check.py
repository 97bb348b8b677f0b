#!/usr/bin/env python3
"""perfetto-check.py TIMELINE.json... — the rules Perfetto's importer
holds a Chrome trace to, checked on vramsim's --timeline output:

* the file is JSON with a traceEvents array;
* slices (ph X) on one track (pid, tid) never overlap partially: each
  starts at or after the previous one ends, or lies wholly inside it
  (nesting); on GPU stream tracks (pids 1 and 3) they do not nest either,
  since ops on one stream run one after another;
* every B has its E on its track, in order;
* every track with events has a thread_name and a thread_sort_index,
  every process a process_name and a process_sort_index;
* times are non-negative, durations too.

Times are compared in integer ns (ts and dur are us with three decimals).
Prints one line per problem and exits 1 if there is any."""
import json
import sys


def ns(v):
    return int(round(float(v) * 1000))


def check(path):
    bad = []
    with open(path) as f:
        doc = json.load(f)
    evs = doc["traceEvents"]
    tracks, names, sorts, pnames, psorts, used_pids = {}, set(), set(), set(), set(), set()
    opens = {}
    for i, e in enumerate(evs):
        ph, pid, tid = e.get("ph"), e.get("pid"), e.get("tid")
        if ph == "M":
            n = e.get("name")
            if n == "thread_name":
                names.add((pid, tid))
            elif n == "thread_sort_index":
                sorts.add((pid, tid))
            elif n == "process_name":
                pnames.add(pid)
            elif n == "process_sort_index":
                psorts.add(pid)
            continue
        used_pids.add(pid)
        if "ts" in e and ns(e["ts"]) < 0:
            bad.append("event %d: negative ts" % i)
        if ph == "X":
            d = ns(e["dur"])
            if d < 0:
                bad.append("event %d: negative dur" % i)
            tracks.setdefault((pid, tid), []).append((ns(e["ts"]), d, i))
        elif ph in ("B", "E"):
            st = opens.setdefault((pid, tid), [])
            if ph == "B":
                st.append(i)
            elif not st:
                bad.append("event %d: E without B on track %s" % (i, (pid, tid)))
            else:
                st.pop()
            tracks.setdefault((pid, tid), [])
        elif ph == "i":
            tracks.setdefault((pid, tid), [])
    for k, st in opens.items():
        for i in st:
            bad.append("event %d: B without E on track %s" % (i, k))
    for k, sl in tracks.items():
        if k not in names:
            bad.append("track %s: no thread_name" % (k,))
        if k not in sorts:
            bad.append("track %s: no thread_sort_index" % (k,))
        strict = k[0] in (1, 3)
        # Ops on a stream: a zero-length op before the one starting with
        # it. Host slices: the enclosing one before what it holds.
        sl.sort(key=(lambda x: (x[0], x[1])) if strict else (lambda x: (x[0], -x[1])))
        stack = []
        for ts, d, i in sl:
            end = ts + d
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack:
                top_end, top_i = stack[-1]
                if strict or end > top_end:
                    bad.append("track %s: event %d [%d, %d) overlaps event %d (ends %d)"
                               % (k, i, ts, end, top_i, top_end))
                    continue
            stack.append((end, i))
    for p in used_pids:
        if p not in pnames:
            bad.append("pid %s: no process_name" % p)
        if p not in psorts:
            bad.append("pid %s: no process_sort_index" % p)
    return bad


def main():
    failed = False
    for path in sys.argv[1:]:
        bad = check(path)
        for b in bad[:20]:
            print("%s: %s" % (path, b))
        if len(bad) > 20:
            print("%s: ... %d problems in all" % (path, len(bad)))
        failed |= bool(bad)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
