#!/usr/bin/env python3
"""flops-trace.py OUT.jsonl [same] — 100,000 kernels of three names and one
shape class (grid [216,1,1], block [256,1,1], 64 registers, 16 KiB shared
memory), 20 us each, on one allocation; each kernel's flops its own
(1e9 + 4096 i), or all 1e9 with "same". The kernel model's factors cache
keys on name and shape class, not flops (docs/performance.md)."""
import json
import sys

out, same = sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "same"
names = ("ampere_sgemm_128x64_nn", "ampere_h16816gemm_128x128", "vectorized_elementwise_kernel")
with open(out, "w") as f:
    f.write(json.dumps({"vramsim_trace": 1, "time_unit": "ns", "description": "bench/flops-trace.py",
                        "capture": {"device": "NVIDIA A100-SXM4-80GB", "config": "a100-80g",
                                    "tool": "bench/flops-trace.py"}}) + "\n")
    f.write(json.dumps({"t": 0, "op": "alloc", "id": 1, "bytes": 1 << 26, "kind": "device"}) + "\n")
    for i in range(100000):
        f.write(json.dumps({"t": 1000 + 21000 * i, "op": "kernel", "name": names[i % 3], "dur": 20000,
                            "touches": [1], "flops": 1000000000 + (0 if same else 4096 * i),
                            "grid": [216, 1, 1], "block": [256, 1, 1], "regs": 64, "smem": 16384}) + "\n")
