"""vramsim from Python: replay, sweep and fit a trace, results as dicts.

    import vramsim
    r = vramsim.replay("traces/hand-train-step.jsonl", "rtx3090",
                       set={"memory.capacity": 16 << 30})
    r["time"]["predicted_ns"]                    # the replay's JSON report
    rows = vramsim.sweep("traces/hand-train-step.jsonl", ["a100-80g", "rtx3090"],
                         vary={"memory.capacity": "256MiB..1GiB/128MiB"})
    rows[0]["memory.capacity"]                   # 268435456: bytes, an int
    table = vramsim.fit("traces/hand-train-step.jsonl")   # every preset

Each call runs the `vramsim` command and reads its JSON or CSV output, so
the answer is exactly the command line's (docs/python.md says why this is
not a ctypes binding). Numbers are numbers: sizes in bytes and times in ns
as int, bandwidths in bytes/s, clocks in Hz; an empty cell is None.
`set=` and `vary=` take the command line's strings ("24GiB") or numbers
in those units (24 << 30 for a size, 2000 for a time of 2 us). Standard
library only; `sweep` and `fit` return a pandas DataFrame with
`frame=True` when pandas is installed.

Every failure is a VramsimError carrying the message: the command's own
(it names the file, line or key; returncode 1 bad input, 2 bad usage), or
this package's when it refuses an argument before running anything
(returncode 2, argv []).

The command is found in this order: the VRAMSIM environment variable, the
one `make install` recorded beside this package, `vramsim` on PATH, the
source tree's bin/vramsim.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
import shutil
import subprocess
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ._version import __version__

__all__ = ["replay", "sweep", "fit", "plan", "VramsimError", "command", "__version__"]

PathLike = Union[str, "os.PathLike[str]"]
Value = Union[str, int, float, bool]
Sets = Union[Mapping[str, Value], Sequence[str], None]
Configs = Union[str, Sequence[PathLike]]
Row = Dict[str, Any]


class VramsimError(Exception):
    """The command failed: bad input (returncode 1) or bad usage (2), or
    an argument was refused before anything ran (returncode 2, argv []).
    The message is the command's own (it names the file, line or key)."""

    def __init__(self, message: str, returncode: int, argv: Sequence[str]) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.argv = list(argv)


def _refuse(message: str) -> VramsimError:
    return VramsimError("vramsim: " + message, 2, [])


def command() -> str:
    """The path of the `vramsim` command this package runs."""
    env = os.environ.get("VRAMSIM")
    if env:
        return env
    try:
        from . import _installed  # written by `make install`
        if os.access(_installed.VRAMSIM, os.X_OK):
            return str(_installed.VRAMSIM)
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


# ---- units: the command line's (docs/config.md, "Units") ----

_SIZE = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_RATE = {k + "/s": v for k, v in _SIZE.items()}
_TIME = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}
_FREQ = {"Hz": 1, "kHz": 10**3, "MHz": 10**6, "GHz": 10**9}
# The unit each kind takes a plain number in: bytes, bytes/s, ns, Hz.
_BASE = {"size": "B", "rate": "B/s", "time": "ns", "freq": "Hz"}
_KINDS = (("size", _SIZE), ("rate", _RATE), ("time", _TIME), ("freq", _FREQ))
_QUANTITY = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?) ?([A-Za-z/]+)$")


def _quantity(text: str) -> Optional[tuple]:
    """(kind, value in the base unit) for "256MiB", "2us", "64GB/s", "1410MHz"; else None."""
    m = _QUANTITY.match(text)
    if not m:
        return None
    for kind, units in _KINDS:
        mult = units.get(m.group(2))
        if mult is not None:
            num = m.group(1)
            if re.fullmatch(r"[-+]?\d+", num):
                return kind, int(num) * mult
            v = float(num) * mult
            return kind, int(v) if v.is_integer() else v
    return None


def _number(cell: str) -> Any:
    """A CSV cell as a number where it is one (a quantity in its base unit),
    None where it is empty, else the string."""
    if cell == "":
        return None
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        return float(cell)
    except ValueError:
        pass
    q = _quantity(cell)
    return q[1] if q else cell


# Columns that hold names or messages, never numbers.
_TEXT_COLUMNS = frozenset({"config", "status", "error"})
# Columns of yes/no: bool.
_BOOL_COLUMNS = frozenset({"lower_bound"})


@functools.lru_cache(maxsize=None)
def _key_kinds(cmd: str, config: str) -> Dict[str, str]:
    """Dotted key -> "size", "rate", "time" or "freq", read off CONFIG
    fully resolved (`vramsim configs --show`): the kind of value each key
    takes, so that a number given for it can be written with its base
    unit. Tier fields are under "tiers.*.FIELD"."""
    try:
        text = _run(["configs", "--show", config], cmd)
        root = json.loads(text)
    except (VramsimError, ValueError):
        return {}
    kinds: Dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, prefix + k if not prefix else prefix + "." + k)
        elif isinstance(node, list) and prefix == "tiers":
            for tier in node:
                walk(tier, "tiers.*")
        elif isinstance(node, str):
            q = _quantity(node)
            if q:
                kinds[prefix] = q[0]

    walk(root, "")
    return kinds


def _value_text(key: str, value: Value, kinds: Mapping[str, str]) -> str:
    """VALUE for --set/--vary: strings as they are; a number of a key that
    takes a quantity in its base unit (bytes, bytes/s, ns, Hz); other
    numbers and booleans as JSON writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        parts = key.split(".")
        kind = kinds.get(key) or (kinds.get("tiers.*." + parts[-1]) if parts[0] == "tiers" else None)
        text = repr(value) if isinstance(value, float) else str(value)
        return text + _BASE[kind] if kind else text
    if isinstance(value, str):
        return value
    raise _refuse("%s: %r is not a string, number or bool" % (key, value))


def _kinds_for(items: Iterable[Value], config: Optional[str], cmd: str) -> Mapping[str, str]:
    """The key kinds, looked up only when a number needs its unit."""
    if not any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        return {}
    return _key_kinds(cmd, config or "a100-80g-cxl")


def _set_items(set: Sets) -> List[tuple]:
    """(key, value) pairs from a dict {key: value} or a list of "key=value"."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        items = list(set.items())
    elif isinstance(set, (str, bytes)):
        raise _refuse("set=%r: give a dict {key: value} or a list of \"key=value\" strings" % (set,))
    else:
        items = []
        for s in set:
            if not isinstance(s, str) or "=" not in s:
                raise _refuse("set item %r: expected \"key=value\" (such as \"memory.capacity=24GiB\")" % (s,))
            k, v = s.split("=", 1)
            items.append((k, v))
    for k, _ in items:
        if not isinstance(k, str) or not k or k.startswith("-") or "=" in k:
            raise _refuse("set key %r: expected a dotted config key (such as \"memory.capacity\")" % (k,))
    return items


def _sets(set: Sets, config: Optional[str], cmd: str) -> List[str]:
    items = _set_items(set)
    kinds = _kinds_for((v for _, v in items), config, cmd)
    out: List[str] = []
    for key, value in items:
        out += ["--set", "%s=%s" % (key, _value_text(key, value, kinds))]
    return out


def _path(what: str, p: PathLike) -> str:
    """A path as an argument the command cannot take for an option: "-x"
    becomes "./-x"; "-" (standard input) is refused (a Python caller has
    no stdin to give)."""
    try:
        s = os.fspath(p)
    except TypeError:
        raise _refuse("%s: %r is not a path" % (what, p)) from None
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if s == "" or s == "-":
        raise _refuse("%s %r: give a file" % (what, s))
    return os.path.join(".", s) if s.startswith("-") else s


def _config_names(configs: Configs) -> List[str]:
    if isinstance(configs, (str, os.PathLike)):
        names = [c.strip() for c in os.fspath(configs).split(",")]
    else:
        names = [_path("config", c) for c in configs]
    names = [n for n in names if n]
    if not names:
        raise _refuse("configs: none given")
    return [_path("config", n) if n != "all" else n for n in names]


def _run(args: List[str], cmd: Optional[str] = None) -> str:
    argv = [cmd or command()] + args
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise VramsimError("vramsim: cannot run %s: %s" % (argv[0], e.strerror), 127, argv) from None
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip()
        raise VramsimError(msg or "vramsim exited %d" % p.returncode, p.returncode, argv)
    return p.stdout.decode("utf-8", "replace")


def _json(text: str, argv0: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise VramsimError("vramsim %s printed no JSON (%s): %r" % (argv0, e, text[:200]), 1, [argv0]) from None


def _frame(rows: List[Row], frame: bool) -> Any:
    if not frame:
        return rows
    try:
        import pandas  # only when asked for
    except ImportError:
        raise _refuse("frame=True needs pandas, which is not installed (pip install pandas); "
                      "without frame= the rows are a list of dicts") from None
    return pandas.DataFrame(rows)


def replay(trace: PathLike, config: Optional[PathLike] = None, set: Sets = None,
           capture_config: Optional[PathLike] = None, keep_going: bool = False) -> Dict[str, Any]:
    """Replays TRACE on CONFIG (a preset name or a JSON file; None: the
    trace's capture config) and returns the JSON report (docs/report.md:
    the command's --format json) as a dict. SET overrides fields:
    {"memory.capacity": "24GiB"} or {"memory.capacity": 24 << 30}. A
    predicted out-of-memory is a result (status "oom"), not an exception."""
    cmd = command()
    cfg = _path("config", config) if config is not None else None
    args = ["replay", _path("trace", trace), "--format", "json"]
    if cfg is not None:
        args += ["-c", cfg]
    if capture_config is not None:
        args += ["--capture-config", _path("capture_config", capture_config)]
    if keep_going:
        args.append("--keep-going")
    return _json(_run(args + _sets(set, cfg, cmd), cmd), "replay")


def sweep(trace: PathLike, configs: Configs, vary: Optional[Mapping[str, Union[str, Sequence[Value]]]] = None,
          set: Sets = None, capture_config: Optional[PathLike] = None, jobs: Optional[int] = None,
          metric: Optional[str] = None, frame: bool = False) -> Any:
    """Replays TRACE on every combination of CONFIGS (a list, a
    comma-separated string, or "all") and VARY values ({key: [v1, v2]} or
    {key: "A..B/STEP"}), in parallel in one `vramsim sweep` process.
    metric="step" adds step_median_ns (the steady time per step; None for a
    run without repeated marks). Returns one dict per run in the sweep's
    stable order, numbers as numbers (the varied sizes in bytes, times in
    ns) and empty cells as None, or a pandas DataFrame with frame=True."""
    cmd = command()
    names = _config_names(configs)
    args = ["sweep", _path("trace", trace), "-c", ",".join(names), "--format", "csv"]
    first = next((n for n in names if n != "all"), None)
    if vary is not None and not isinstance(vary, Mapping):
        raise _refuse("vary=%r: give a dict {key: [values]} or {key: \"A..B/STEP\"}" % (vary,))
    vary_items = list((vary or {}).items())
    for key, values in vary_items:
        if not isinstance(key, str) or not key or key.startswith("-") or "=" in key:
            raise _refuse("vary key %r: expected a dotted config key (such as \"memory.capacity\")" % (key,))
        if not isinstance(values, (str, Sequence)) or isinstance(values, bytes) or not values:
            raise _refuse("vary %s: %r: give a list of values or a range string (\"8GiB..80GiB/8GiB\")" % (key, values))
    kinds = _kinds_for([v for _, vs in vary_items if not isinstance(vs, str) for v in vs], first, cmd)
    for key, values in vary_items:
        text = values if isinstance(values, str) else ",".join(_value_text(key, v, kinds) for v in values)
        args += ["--vary", "%s=%s" % (key, text)]
    if capture_config is not None:
        args += ["--capture-config", _path("capture_config", capture_config)]
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise _refuse("jobs=%r: a whole number of at least 1" % (jobs,))
        args += ["-j", str(jobs)]
    if metric is not None:
        args += ["--metric", str(metric)]
    text = _run(args + _sets(set, first, cmd), cmd)
    rows = [{k: (v if k in _TEXT_COLUMNS else v == "yes" if k in _BOOL_COLUMNS else _number(v)) if v != "" else None
             for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(text))]
    return _frame(rows, frame)


def fit(trace: PathLike, configs: Configs = "all", set: Sets = None, capture_config: Optional[PathLike] = None,
        metric: Optional[str] = None, frame: bool = False) -> Any:
    """`vramsim fit`: one row per config (status, fits, peak_device_bytes
    (the demand), capacity_bytes, missing_bytes, resident_peak_bytes,
    predicted_ns, slowdown, lower_bound, bound, bound_ns; docs/fit.md),
    fastest first (metric="step": by step_median_ns where a row has one),
    out-of-memory rows last; a value the command leaves out
    is None. Returns the list of rows, or a pandas DataFrame with
    frame=True."""
    cmd = command()
    names = _config_names(configs)
    args = ["fit", _path("trace", trace), "-c", ",".join(names), "--format", "json"]
    if capture_config is not None:
        args += ["--capture-config", _path("capture_config", capture_config)]
    if metric is not None:
        args += ["--metric", str(metric)]
    first = next((n for n in names if n != "all"), None)
    report = _json(_run(args + _sets(set, first, cmd), cmd), "fit")
    if not isinstance(report, dict) or not isinstance(report.get("rows"), list):
        raise VramsimError("vramsim fit printed no rows: %r" % (str(report)[:200],), 1, ["fit"])
    return _frame(report["rows"], frame)


_PLAN_SHAPE = ("layers", "hidden", "heads", "kv_heads", "ffn", "head_dim", "seq", "vocab", "experts", "top_k",
               "shared_ffn", "dense_layers", "moe_every", "dense_ffn", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
               "v_head_dim", "window", "global_every")
_PLAN_LISTS = ("tp", "pp", "virtual_stages", "zero", "checkpoint", "microbatch", "ep", "cp")


def _plan_list(value: Any) -> str:
    """A flag's value: a list or tuple comma-separated, else as it prints."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def plan(model: Optional[PathLike] = None, *, configs: Configs, gpus: Union[str, int, Sequence[int]],
         global_batch: int, gated: bool = False, untied: bool = False, flash_attn: bool = False,
         even_stages: bool = False, ddp: Optional[str] = None, precision: Optional[str] = None,
         optimizer: Optional[str] = None, sp: Optional[str] = None,
         price: Optional[Mapping[str, float]] = None, objective: Optional[str] = None,
         top: Optional[int] = None, jobs: Optional[int] = None, frame: bool = False, **shape: Any) -> Any:
    """`vramsim plan`: which parallel layout trains a model fastest (or
    cheapest) on CONFIGS at GPUS (an int, a list, or "A-B"), for
    GLOBAL_BATCH sequences a step (docs/plan.md). The model is MODEL (a
    Hugging Face config.json) and/or the shape keywords layers, hidden,
    heads, kv_heads, ffn, head_dim, seq, vocab, experts, top_k, shared_ffn,
    dense_layers, moe_every, dense_ffn and latent attention's kv_lora_rank,
    q_lora_rank, qk_rope_head_dim, v_head_dim, the sliding window's window
    and global_every (with gated=, untied= and flash_attn=); the search lists tp, pp, virtual_stages,
    zero, checkpoint, microbatch, ep and cp take a value or a list; even_stages=True
    searches only pipelines that split the layers evenly, ddp= "torch" or "local"
    sets the gradient reduction of every layout. Returns the
    command's JSON ({"vramsim_plan": 1, "searched", "params", "layouts":
    [...]}, best first), or with frame=True its layouts as a pandas
    DataFrame."""
    cmd = command()
    args = ["plan", "--format", "json", "--global-batch", str(int(global_batch)),
            "-c", ",".join(_config_names(configs)), "--gpus", _plan_list(gpus)]
    if model is not None:
        args += ["--model", _path("model", model)]
    for key, value in shape.items():
        if value is None:
            continue
        if key in _PLAN_SHAPE or key in _PLAN_LISTS:
            args += ["--" + key.replace("_", "-"), _plan_list(value)]
        else:
            raise _refuse("plan: unknown keyword %r (the shape: %s; the searched lists: %s)"
                          % (key, ", ".join(_PLAN_SHAPE), ", ".join(_PLAN_LISTS)))
    if gated:
        args.append("--gated")
    if untied:
        args.append("--untied")
    if flash_attn:
        args.append("--flash-attn")
    if even_stages:
        args.append("--even-stages")
    for flag, value in (("--precision", precision), ("--optimizer", optimizer), ("--sp", sp), ("--ddp", ddp),
                        ("--objective", objective), ("--top", top), ("-j", jobs)):
        if value is not None:
            args += [flag, str(value)]
    if price:
        args += ["--price", ",".join("%s=%r" % (k, float(v)) for k, v in price.items())]
    report = _json(_run(args, cmd), "plan")
    if not isinstance(report, dict) or not isinstance(report.get("layouts"), list):
        raise VramsimError("vramsim plan printed no layouts: %r" % (str(report)[:200],), 1, ["plan"])
    return _frame(report["layouts"], True) if frame else report
