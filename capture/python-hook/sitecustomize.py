# sitecustomize.py -- vramcap's PyTorch start-up hook (docs/capture.md
# "Tensor-level allocations"). vramcap puts this folder first on PYTHONPATH;
# Python's site module imports it at start-up.
#
# What it does, and nothing else:
#   * runs the sitecustomize this one hides (the next one on sys.path), so a
#     program's own start-up customisation still happens;
#   * waits for the program to import torch (a meta-path finder: torch is
#     never imported by the hook itself), then asks torch to turn on the
#     caching allocator's memory history when CUDA initialises
#     (torch.cuda._lazy_call: the hook never initialises CUDA), with a ring
#     buffer of $VRAMCAP_TORCH_ENTRIES entries (not under the cudaMallocAsync
#     backend, which keeps none: each of its tensors is one cudaMallocAsync,
#     already in the driver-level trace; the status says "async");
#   * dumps the snapshot (torch.cuda.memory._dump_snapshot) at exit, on
#     SIGTERM and SIGHUP (then the previous handler runs, or the signal's own
#     disposition, so the process still dies of it), and when the ring
#     buffer is about to wrap (a daemon thread reads the allocator's
#     counters every $VRAMCAP_TORCH_POLL seconds; torch has no per-allocation
#     callback);
#   * writes a one-line status for vramcap, which merges each process's
#     trace with its snapshot after the run.
# It prints nothing on stdout; notes go to stderr as "vramcap: ...". Any
# failure of its own is a note, never an exception in the program.

import os as _os
import sys as _sys


def _vramcap_hook():
    here = _os.path.dirname(_os.path.abspath(__file__))
    out = _os.environ.get("VRAMCAP_OUTPUT", "vramcap.vtrace")
    base = out[:-7] if out.endswith(".vtrace") else out
    root = _os.environ.get("VRAMCAP_PID") == str(_os.getpid())
    # Other processes are named as the capture shim names their traces
    # (capture/recorder.c process_tag): "rankN" for the first process with
    # that $RANK (else $LOCAL_RANK), as $VRAMCAP_RANK_OWNER says, else the pid.
    tag = "%d" % _os.getpid()
    for name in ("RANK", "LOCAL_RANK"):
        v = _os.environ.get(name, "")
        if v.isdigit() and int(v) < 1000000:
            owner = _os.environ.get("VRAMCAP_RANK_OWNER")
            if owner is None or owner == "%d:%d" % (int(v), _os.getpid()):
                tag = "rank%d" % int(v)
            break
    me = base if root else "%s.%s" % (base, tag)
    snap = me + ".torch.pickle"
    # every process says how it went; vramcap merges each after the run
    status_path = me + ".torch-status"
    try:
        entries = int(_os.environ.get("VRAMCAP_TORCH_ENTRIES", "1000000"))
    except ValueError:
        entries = 1000000
    try:
        poll = float(_os.environ.get("VRAMCAP_TORCH_POLL", "2"))
    except ValueError:
        poll = 2.0
    st = {"status": "no-torch: the program never imported torch", "torch": None,
          "history": False, "dumped": False, "parts": 0, "pid": _os.getpid()}

    def note(msg):
        try:
            _sys.stderr.write("vramcap: %s\n" % msg)
            _sys.stderr.flush()
        except Exception:
            pass

    def write_status():
        if status_path is None or st["pid"] != _os.getpid():
            return
        try:
            with open(status_path + ".tmp", "w") as f:
                f.write(st["status"] + "\n")
                if "conf" in st:  # the backend's settings, as the program had them at CUDA start
                    f.write(st["conf"].replace("\n", " ") + "\n")
            _os.replace(status_path + ".tmp", status_path)
        except OSError as e:
            note("cannot write %s: %s" % (status_path, e))

    def dump(path, why):
        torch = _sys.modules.get("torch")
        if torch is None or not st["history"] or st["pid"] != _os.getpid():
            return False
        try:
            if not torch.cuda.is_initialized():
                return False
            torch.cuda.memory._dump_snapshot(path)
            return True
        except Exception as e:  # a dump must never take the program down
            note("PyTorch memory snapshot (%s) failed: %s" % (why, e))
            return False

    def final(why):
        if st["dumped"] or st["pid"] != _os.getpid():
            return
        st["dumped"] = True
        torch = _sys.modules.get("torch")
        if torch is not None and st["status"].startswith("recording") and not st["history"]:
            st["status"] = "no-cuda: torch %s never initialised CUDA" % st["torch"]
        elif torch is not None and st["history"]:
            if dump(snap, why):
                st["status"] = "ok " + snap
                if st["parts"]:
                    note("the ring buffer of %d entries wrapped: %s holds the last window, "
                         "%d earlier dumps beside it (%s.partN), which the merge joins"
                         % (entries, snap, st["parts"], snap))
            elif st["status"].startswith("recording"):
                st["status"] = "no-cuda: torch %s never initialised CUDA" % st["torch"]
        write_status()

    # ---- when torch arrives ----
    def on_torch(torch):
        st["torch"] = getattr(torch, "__version__", "?")
        try:
            ver = tuple(int(x) for x in str(st["torch"]).split("+")[0].split(".")[:2])
        except ValueError:
            ver = (0, 0)
        mem = getattr(getattr(torch, "cuda", None), "memory", None)
        if ver < (2, 1) or mem is None or not hasattr(mem, "_record_memory_history"):
            st["status"] = ("old-torch: torch %s has no memory history with times "
                            "(torch.cuda.memory._record_memory_history, 2.1 or later)" % st["torch"])
            return
        st["status"] = "recording: torch %s" % st["torch"]

        def start():
            # The cudaMallocAsync backend keeps no history (its recordHistory
            # raises "cudaMallocAsync does not yet support recordHistory"),
            # and needs none: each tensor is one cudaMallocAsync, which the
            # driver-level trace has. Asked first, so torch raises nothing.
            try:
                backend = mem.get_allocator_backend()
            except Exception:
                backend = None
            if backend == "cudaMallocAsync":
                set_async()
                return
            try:
                mem._record_memory_history(enabled="all", context="all", stacks="python",
                                           max_entries=entries)
                st["history"] = True
            except Exception as e:
                if "cudaMallocAsync" in str(e):
                    set_async()
                    return
                st["status"] = "error: _record_memory_history failed: %s" % e
                note(st["status"])
                return
            if poll > 0:
                start_poller(torch)

        try:
            torch.cuda._lazy_call(start)
        except Exception as e:
            st["status"] = "error: torch.cuda._lazy_call failed: %s" % e
            note(st["status"])
            return
        install_signals()

    def set_async():
        st["status"] = ("async: torch %s runs backend:cudaMallocAsync, which keeps no memory history "
                        "(its recordHistory refuses); each tensor is one cudaMallocAsync, which the "
                        "trace has as a stream-ordered allocation" % st["torch"])
        st["conf"] = _os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")

    def start_poller(torch):
        import threading

        def counted():
            s = torch.cuda.memory_stats()
            # one entry per alloc, two per free (requested, completed), one
            # per segment event
            return (s.get("allocation.all.allocated", 0) + 2 * s.get("allocation.all.freed", 0)
                    + s.get("segment.all.allocated", 0) + s.get("segment.all.freed", 0))

        try:
            base_count = [counted()]
        except Exception:
            return

        def run():
            import time
            while True:
                time.sleep(poll)
                if st["dumped"]:
                    return
                try:
                    n = counted()
                except Exception:
                    return
                # dump when 90 % of the ring is new since the last dump
                if n - base_count[0] >= 0.9 * entries:
                    st["parts"] += 1
                    if dump("%s.part%d" % (snap, st["parts"]), "ring buffer about to wrap"):
                        base_count[0] = n

        t = threading.Thread(target=run, name="vramcap-torch-poll", daemon=True)
        t.start()

    def install_signals():
        import signal
        import threading
        if threading.current_thread() is not threading.main_thread():
            return
        saved = {}
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
        except Exception:
            libc = None
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            prev = signal.getsignal(sig)
            if prev is signal.SIG_IGN:
                continue
            # prev None: a handler not installed from Python (the capture
            # shim's, which writes the driver trace): keep its C-level
            # disposition, to put back before re-raising
            raw = None
            if libc is not None and prev is not signal.SIG_IGN and not callable(prev):
                raw = ctypes.create_string_buffer(512)  # struct sigaction, opaque
                if libc.sigaction(sig, None, raw) != 0:
                    raw = None
            saved[sig] = (prev, raw)

            def handler(signum, frame, _prev=prev, _raw=raw):
                if callable(_prev):
                    # the program's handler decides; it may go on running,
                    # so this dump is a checkpoint and exit dumps again
                    if dump(snap, "signal %d" % signum):
                        st["status"] = "ok " + snap
                        write_status()
                    return _prev(signum, frame)
                final("signal %d" % signum)
                if _raw is not None and libc is not None:
                    libc.sigaction(signum, _raw, None)
                else:
                    signal.signal(signum, signal.SIG_DFL)
                _os.kill(_os.getpid(), signum)

            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass

    # ---- the import watcher ----
    # Plain classes: importlib.abc costs ~10 ms of start-up to import, and a
    # meta-path finder or loader needs only these methods.
    import importlib.machinery

    class _Loader(object):
        def __init__(self, inner):
            self.inner = inner

        def create_module(self, spec):
            return self.inner.create_module(spec)

        def exec_module(self, module):
            self.inner.exec_module(module)
            try:
                on_torch(module)
            except Exception as e:
                note("PyTorch hook: %s" % e)

        def __getattr__(self, name):
            return getattr(self.inner, name)

    class _Finder(object):
        def find_spec(self, name, path, target=None):
            if name != "torch":
                return None
            try:
                _sys.meta_path.remove(self)
            except ValueError:
                pass
            for f in _sys.meta_path:
                fs = getattr(f, "find_spec", None)
                spec = fs(name, path, target) if fs else None
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _Loader(spec.loader)
                    return spec
            return None

    if "torch" in _sys.modules:  # imported by an earlier start-up file
        on_torch(_sys.modules["torch"])
    else:
        _sys.meta_path.insert(0, _Finder())

    import atexit
    atexit.register(final, "exit")

    # ---- the sitecustomize this one hides ----
    for d in _sys.path:
        try:
            if _os.path.abspath(d or ".") == here:
                continue
        except (TypeError, ValueError):
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [d])
        if spec is None or spec.loader is None:
            continue
        import importlib.util
        mod = importlib.util.module_from_spec(spec)
        _sys.modules["sitecustomize"] = mod
        spec.loader.exec_module(mod)  # its errors are its own, reported by site
        break


if _os.environ.get("VRAMCAP_TORCH", "1") != "0":
    _vramcap_hook()
