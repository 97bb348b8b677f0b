"""vramsim from Python: replay, sweep and fit a trace, results as dicts.

    import vramsim
    r = vramsim.replay("traces/hand-train-step.jsonl", "rtx3090",
                       set={"memory.capacity": "16GiB"})
    r["time"]["predicted_ns"]                    # the replay's JSON report
    rows = vramsim.sweep("traces/hand-train-step.jsonl", ["a100-80g", "rtx3090"],
                         vary={"memory.capacity": "256MiB..1GiB/128MiB"})
    table = vramsim.fit("traces/hand-train-step.jsonl")   # every preset

Each call runs the `vramsim` command and reads its JSON or CSV output, so
the answer is exactly the command line's (docs/python.md says why this is
not a ctypes binding: a replay's process start costs about a millisecond,
and a sweep is one process however many runs it has). Standard library
only; `sweep` and `fit` return a pandas DataFrame when asked with
`frame=True` (pandas must then be installed).

The command is found in this order: the VRAMSIM environment variable, the
one `make install` recorded beside this package, `vramsim` on PATH, the
source tree's bin/vramsim.
"""

import csv
import io
import json
import os
import shutil
import subprocess

__all__ = ["replay", "sweep", "fit", "VramsimError", "command"]


class VramsimError(Exception):
    """The command failed: bad input (returncode 1) or bad usage (2).
    The message is the command's own (it names the file, line or key)."""

    def __init__(self, message, returncode, argv):
        super().__init__(message)
        self.returncode = returncode
        self.argv = argv


def command():
    """The path of the `vramsim` command this package runs."""
    env = os.environ.get("VRAMSIM")
    if env:
        return env
    try:
        from . import _installed  # written by `make install`
        if os.access(_installed.VRAMSIM, os.X_OK):
            return _installed.VRAMSIM
    except ImportError:
        pass
    found = shutil.which("vramsim")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "bin", "vramsim")
    if os.access(tree, os.X_OK):
        return os.path.normpath(tree)
    raise VramsimError("vramsim: command not found (set VRAMSIM, or put it on PATH)", 127, [])


def _sets(set):
    """--set arguments from a dict {key: value} or a list of "key=value"."""
    if set is None:
        return []
    items = set.items() if isinstance(set, dict) else (s.split("=", 1) for s in set)
    out = []
    for key, value in items:
        out += ["--set", "%s=%s" % (key, value)]
    return out


def _configs(configs):
    if isinstance(configs, str):
        return configs
    return ",".join(configs)


def _run(args):
    argv = [command()] + args
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip()
        raise VramsimError(msg or "vramsim exited %d" % p.returncode, p.returncode, argv)
    return p.stdout.decode("utf-8")


def _number(cell):
    """A CSV cell as int or float where it is one, else the string."""
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        return float(cell)
    except ValueError:
        return cell


def _frame(rows, frame):
    if not frame:
        return rows
    import pandas  # only when asked for
    return pandas.DataFrame(rows)


def replay(trace, config=None, set=None, capture_config=None, keep_going=False):
    """Replays TRACE on CONFIG (a preset name or a JSON file; None: the
    trace's capture config) and returns the JSON report (SPEC 5.9) as a
    dict. SET overrides fields: {"memory.capacity": "24GiB"}. A predicted
    out-of-memory is a result (status "oom"), not an exception."""
    args = ["replay", os.fspath(trace), "--format", "json"]
    if config is not None:
        args += ["-c", os.fspath(config)]
    if capture_config is not None:
        args += ["--capture-config", os.fspath(capture_config)]
    if keep_going:
        args.append("--keep-going")
    return json.loads(_run(args + _sets(set)))


def sweep(trace, configs, vary=None, set=None, capture_config=None, jobs=None, metric=None, frame=False):
    """Replays TRACE on every combination of CONFIGS (a list, or a
    comma-separated string) and VARY values ({key: [v1, v2]} or
    {key: "A..B/STEP"}), in parallel in one `vramsim sweep` process.
    metric="step" adds step_median_ns (the steady time per step; "" for a
    run without repeated marks). Returns one dict per run in the sweep's
    stable order (numbers as int or float), or a pandas DataFrame with
    frame=True."""
    args = ["sweep", os.fspath(trace), "-c", _configs(configs), "--format", "csv"]
    for key, values in (vary or {}).items():
        if not isinstance(values, str):
            values = ",".join(str(v) for v in values)
        args += ["--vary", "%s=%s" % (key, values)]
    if capture_config is not None:
        args += ["--capture-config", os.fspath(capture_config)]
    if jobs is not None:
        args += ["-j", str(int(jobs))]
    if metric is not None:
        args += ["--metric", str(metric)]
    text = _run(args + _sets(set))
    rows = [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]
    return _frame(rows, frame)


def fit(trace, configs="all", set=None, capture_config=None, metric=None, frame=False):
    """`vramsim fit`: one row per config (status, fits, peak_device_bytes
    (the demand), capacity_bytes, missing_bytes, resident_peak_bytes,
    predicted_ns, slowdown, lower_bound, bound, bound_ns),
    fastest first (metric="step": by step_median_ns where a row has one),
    out-of-memory rows last. Returns the list of rows, or a pandas
    DataFrame with frame=True."""
    args = ["fit", os.fspath(trace), "-c", _configs(configs), "--format", "json"]
    if capture_config is not None:
        args += ["--capture-config", os.fspath(capture_config)]
    if metric is not None:
        args += ["--metric", str(metric)]
    rows = json.loads(_run(args + _sets(set)))["rows"]
    return _frame(rows, frame)
