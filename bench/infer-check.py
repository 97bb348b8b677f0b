#!/usr/bin/env python3
"""infer-check.py — the touch inference (docs/model.md 6b) against known
touches: traces whose kernels name what they read and write are replayed
twice under spill, uvm and direct at capacities below their demand, once
as they are (model.touches=named) and once with every kernel's names set
aside and inferred (model.touches=infer); prints the markdown tables of
docs/validation.md ("Inferred touches against known ones").

    VRAMSIM=bin/vramsim bench/infer-check.py [-j N]

The traces: the hand-written training step (traces/hand-train-step.jsonl)
and transformer-train jobs made here by `vramsim synth` (their commands
are printed with the tables). Capacities: the preset's context plus 80 %,
60 % and 40 % of what the trace itself asks (its demand less the context,
from a replay on a100-80g). No vramcap capture of a real GPU ships with
the project yet (traces/README.md), so none is in the set."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VRAMSIM = os.environ.get("VRAMSIM", os.path.join(HERE, "bin", "vramsim"))
JOBS = sys.argv[sys.argv.index("-j") + 1] if "-j" in sys.argv else "2"
CONFIG = "a100-80g"
FRACTIONS = (0.8, 0.6, 0.4)
POLICIES = ("spill", "uvm", "direct")
SYNTH = [
    ("tt-8l", "transformer-train --layers 8 --hidden 1024 --heads 16 --seq 512 --batch 8 --steps 4"),
    ("tt-12l-ckpt", "transformer-train --layers 12 --hidden 2048 --heads 16 --seq 1024 --batch 4 --steps 3 --checkpoint full"),
    ("tt-4l-sgd", "transformer-train --layers 4 --hidden 1024 --heads 16 --seq 512 --batch 4 --steps 5 --optimizer sgd"),
]


def run(*args):
    p = subprocess.run([VRAMSIM, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("vramsim %s: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout


def demand(trace):
    r = json.loads(run("replay", trace, "-c", CONFIG, "--format", "json"))
    return int(r["memory"]["device_demand_bytes"]), int(r["memory"]["context_bytes"])


def sweep(trace, caps):
    out = run("sweep", trace, "-c", CONFIG, "-j", JOBS, "--metric", "step",
              "--vary", "memory.capacity=" + ",".join("%dMiB" % c for c in caps),
              "--vary", "policy.oversubscription=" + ",".join(POLICIES),
              "--vary", "model.touches=named,infer")
    return list(csv.DictReader(io.StringIO(out)))


def ratio(a, b):
    a, b = float(a or 0), float(b or 0)
    if b == 0:
        return "—" if a == 0 else "∞"
    return "%.2f" % (a / b)


def gib(v):
    return "%.2f" % (float(v or 0) / 2**30)


def main():
    tmp = tempfile.mkdtemp(prefix="infer-check-")
    traces = [("hand-train-step", os.path.join(HERE, "traces", "hand-train-step.jsonl"), "(shipped)")]
    for name, args in SYNTH:
        path = os.path.join(tmp, name + ".jsonl")
        run("synth", *args.split(), "-c", CONFIG, "-o", path)
        traces.append((name, path, "`vramsim synth %s -c %s`" % (args, CONFIG)))
    summary = {p: [] for p in POLICIES}
    steps = {p: [] for p in POLICIES}
    for name, path, how in traces:
        d, ctx = demand(path)
        own = d - ctx
        caps = [int((ctx + f * own) / 2**20) for f in FRACTIONS]
        rows = sweep(path, caps)
        by = {(r["memory.capacity"], r["policy.oversubscription"], r["model.touches"]): r for r in rows}
        print("\n%s %s: demand %.2f GiB (context %d MiB)\n" % (name, how, d / 2**30, ctx >> 20))
        print("| capacity | policy | slowdown known | inferred | ratio | step ratio "
              "| swap in / faulted GiB known | inferred | swap out / written back GiB known | inferred |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in caps:
            for p in POLICIES:
                k, i = by[("%dMiB" % c, p, "named")], by[("%dMiB" % c, p, "infer")]
                if k["status"] != "ok" or i["status"] != "ok":
                    print("| %d MiB | %s | %s | %s | | | | | | |" % (c, p, k["status"], i["status"]))
                    continue
                inb = "fault_bytes" if p == "uvm" else "swap_in_bytes"
                outb = "writeback_bytes" if p == "uvm" else "swap_out_bytes"
                sr = ratio(i["slowdown"], k["slowdown"])
                summary[p].append(float(i["slowdown"]) / float(k["slowdown"]))
                if k["step_median_ns"] and i["step_median_ns"]:
                    steps[p].append(float(i["step_median_ns"]) / float(k["step_median_ns"]))
                # direct moves nothing: kernels reach what lies below
                traffic = ["—"] * 4 if p == "direct" else [gib(k[inb]), gib(i[inb]), gib(k[outb]), gib(i[outb])]
                print("| %d MiB | %s | %.3f | %.3f | %s | %s | %s | %s | %s | %s |" % (
                    c, p, float(k["slowdown"]), float(i["slowdown"]), sr,
                    ratio(i["step_median_ns"], k["step_median_ns"]), *traffic))
    print("\nInferred / known, over every row (the whole run's slowdown, and the steady step):\n")
    print("| policy | rows | slowdown min | median | max | step min | median | max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in POLICIES:
        v, w = sorted(summary[p]), sorted(steps[p])
        if v and w:
            print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
                p, len(v), v[0], v[len(v) // 2], v[-1], w[0], w[len(w) // 2], w[-1]))


if __name__ == "__main__":
    main()
