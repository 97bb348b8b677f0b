# A fake torch for tests/capture-torch.sh (no GPU, no PyTorch): just enough
# of torch's surface for vramcap's start-up hook (capture/python-hook) and a
# caching allocator in miniature that drives the stub CUDA driver
# (tests/stub-cuda) through ctypes and records a memory history in the
# layout of torch.cuda.memory._dump_snapshot().
import os

__version__ = os.environ.get("FAKE_TORCH_VERSION", "2.5.1+fake")

from . import cuda  # noqa: E402,F401
