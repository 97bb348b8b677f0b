#!/usr/bin/env python3
"""infer-tp-check.py — `synth llm-infer --tp T` against measured operator
times: a decode layer of Llama-2-70B (80 x 8192, 64 heads, 8 key/value
heads, SwiGLU of 28672) at one token, T = 1, 2, 4, 8, on h100-sxm (and on
a100-80g), against vidur's per-operator medians for the same layer and
tensor-parallel degree (validation/data/vidur/compute/GPU/meta-llama/
Llama-2-70b-hf/mlp.csv: the layer's GEMMs, norms, rotary embedding,
activation and residual add, num_tokens = 1; the attention core is in
another vidur file, not here). Prints the markdown table of
docs/validation.md ("Tensor-parallel decode against vidur").

The predicted layer is the generated trace's own kernels (a generated
trace replays on its own preset at slowdown 1): the fused decode_layer
at T = 1, decode_attn + decode_mlp above it, without the all-reduces
(vidur times those apart). The attention over the 64-token cache is
in the prediction and not in vidur's sum (under 1 us at one token).

    VRAMSIM=bin/vramsim bench/infer-tp-check.py"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VRAMSIM = os.environ.get("VRAMSIM", os.path.join(HERE, "bin", "vramsim"))
OPS = ("input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
       "mlp_up_proj", "mlp_act", "mlp_down_proj", "add")
SMALL = ("input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add")
GPUS = (("h100", "h100-sxm"), ("a100", "a100-80g"))


def measured(gpu, tp):
    path = os.path.join(HERE, "validation", "data", "vidur", "compute", gpu, "meta-llama", "Llama-2-70b-hf", "mlp.csv")
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["num_tensor_parallel_workers"] == str(tp) and row["num_tokens"] == "1":
                total = sum(float(row["time_stats.%s.median" % o]) for o in OPS) * 1e3
                small = sum(float(row["time_stats.%s.median" % o]) for o in SMALL) * 1e3
                return total, small
    sys.exit("infer-tp-check: no num_tokens = 1 row for tp %d in %s" % (tp, path))


def predicted(preset, tp, tmp):
    out = os.path.join(tmp, "t%d-%s.jsonl" % (tp, preset))
    cmd = [VRAMSIM, "synth", "llm-infer", "--layers", "80", "--hidden", "8192", "--heads", "64", "--kv-heads", "8",
           "--ffn", "28672", "--gated", "--vocab", "32000", "--batch", "1", "--prompt", "63", "--gen", "2",
           "--tp", str(tp), "-c", preset, "-o", out]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    names = ("decode_layer",) if tp == 1 else ("decode_attn", "decode_mlp")
    sums, counts = {n: 0 for n in names}, {n: 0 for n in names}
    with open(out) as f:
        for line in f:
            e = json.loads(line)
            if e.get("op") == "kernel" and e.get("name") in sums:
                sums[e["name"]] += e["dur"]
                counts[e["name"]] += 1
    return sum(sums[n] / counts[n] for n in names) / 1e3


def main():
    print("| GPU | T | vidur, one token (us) | of it norms, rotary, activation, add | predicted (us) | error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for gpu, preset in GPUS:
            for tp in (1, 2, 4, 8):
                m, small = measured(gpu, tp)
                p = predicted(preset, tp, tmp)
                print("| %s | %d | %.1f | %.1f | %.1f | %+.1f %% |" % (preset, tp, m, small, p, 100 * (p / m - 1)))


if __name__ == "__main__":
    main()
