# bench-hook.py -- what vramcap's PyTorch hook costs a Python program
# (docs/capture.md "Cost"), measured in-process so that a loaded machine's
# noise stays out: the hook's set-up (its module body, compiled once, run
# 200 times: the meta-path finder, atexit, the search for the sitecustomize
# it hides), and one call of its finder for a module that is not torch
# (what every import of the program pays), best of 5 rounds each. Per
# allocation the hook itself adds nothing: torch's own memory history does
# the recording, in C++, which needs a GPU to measure (capture/gpu-check.sh,
# "torch-history").
# Usage: python3 capture/python-hook/bench-hook.py
import atexit
import os
import sys
import time

HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sitecustomize.py")
code = compile(open(HOOK).read(), HOOK, "exec")
os.environ["VRAMCAP_OUTPUT"] = "/nonexistent/x.vtrace"
os.environ["VRAMCAP_TORCH"] = "1"
saved_modules = sys.modules.get("sitecustomize")


def setup_once():
    n_meta = len(sys.meta_path)
    exec(code, {"__file__": HOOK, "__name__": "sitecustomize"})
    finder = sys.meta_path[0] if len(sys.meta_path) > n_meta else None
    if finder is not None:
        sys.meta_path.remove(finder)
    return finder


best_setup = best_find = None
finder = None
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(200):
        finder = setup_once()
    best_setup = min(best_setup or 1e9, (time.perf_counter() - t0) / 200)
    t0 = time.perf_counter()
    for i in range(100000):
        finder.find_spec("json", None)
    best_find = min(best_find or 1e9, (time.perf_counter() - t0) / 100000)
atexit._clear()  # the 1000 final() handlers registered above
if saved_modules is not None:
    sys.modules["sitecustomize"] = saved_modules
print("python %s: hook set-up %.0f us; finder %.0f ns per import of another module"
      % (sys.version.split()[0], best_setup * 1e6, best_find * 1e9))
