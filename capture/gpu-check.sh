#!/bin/sh
# gpu-check.sh — capture accuracy check on a machine with a GPU (not run in
# CI). Builds small CUDA programs with nvcc (copies and kernels on several
# streams; managed memory within and beyond capacity; a graph launch) and a
# small PyTorch training step, captures each with vramcap in both modes,
# replays each trace on the preset that matches the GPU, and prints
# captured vs predicted time. Meant to finish in well under 8 minutes.
# Usage: capture/gpu-check.sh   (from the repository root, after `make`)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VRAMSIM=$ROOT/bin/vramsim
VRAMCAP=$ROOT/bin/vramcap
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -x "$VRAMCAP" ] && [ -x "$VRAMSIM" ] || { echo "gpu-check: run make first" >&2; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null

cat > "$W/streams.cu" <<'CU'
#include <cstdio>
__global__ void axpy(float a, const float *x, float *y, size_t n)
{ size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
int main() {
  const size_t n = 64 << 20; const int S = 4;
  float *h, *x[S], *y[S]; cudaStream_t s[S];
  cudaMallocHost(&h, n * sizeof(float));
  for (int k = 0; k < S; k++) { cudaStreamCreate(&s[k]); cudaMalloc(&x[k], n * 4); cudaMalloc(&y[k], n * 4); }
  for (int it = 0; it < 5; it++)
    for (int k = 0; k < S; k++) {
      cudaMemcpyAsync(x[k], h, n * 4, cudaMemcpyHostToDevice, s[k]);
      for (int j = 0; j < 10; j++) axpy<<<(n + 255) / 256, 256, 0, s[k]>>>(2.f, x[k], y[k], n);
      cudaMemcpyAsync(h, y[k], n * 4 / 8, cudaMemcpyDeviceToHost, s[k]);
    }
  cudaDeviceSynchronize();
  for (int k = 0; k < S; k++) { cudaFree(x[k]); cudaFree(y[k]); }
  printf("streams ok\n"); return 0;
}
CU
cat > "$W/managed.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
__global__ void touch(char *p, size_t n) { for (size_t i = (blockIdx.x * (size_t) blockDim.x + threadIdx.x) * 4096; i < n; i += (size_t) gridDim.x * blockDim.x * 4096) p[i]++; }
int main(int argc, char **argv) {
  size_t free_b, total; cudaMemGetInfo(&free_b, &total);
  double frac = argc > 1 ? atof(argv[1]) : 0.5;
  size_t n = (size_t) (total * frac);
  char *p; if (cudaMallocManaged(&p, n) != cudaSuccess) return 1;
  for (int it = 0; it < 3; it++) touch<<<1024, 256>>>(p, n);
  cudaDeviceSynchronize(); cudaFree(p);
  printf("managed %.2f ok\n", frac); return 0;
}
CU
cat > "$W/graph.cu" <<'CU'
#include <cstdio>
__global__ void scale(float *x, size_t n) { size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; if (i < n) x[i] *= 1.0001f; }
int main() {
  const size_t n = 32 << 20; float *x; cudaMalloc(&x, n * 4);
  cudaStream_t s; cudaStreamCreate(&s); cudaGraph_t g; cudaGraphExec_t e;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int j = 0; j < 20; j++) scale<<<(n + 255) / 256, 256, 0, s>>>(x, n);
  cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&e, g, 0);
  for (int it = 0; it < 20; it++) cudaGraphLaunch(e, s);
  cudaStreamSynchronize(s); cudaFree(x); printf("graph ok\n"); return 0;
}
CU
cat > "$W/train.py" <<'PY'
import torch
m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
opt = torch.optim.AdamW(m.parameters())
x = torch.randn(512, 4096, device="cuda")
for _ in range(10):
    opt.zero_grad(); m(x).square().mean().backward(); opt.step()
torch.cuda.synchronize(); print("torch ok")
PY

for p in streams managed graph; do
  "$NVCC" -O2 -o "$W/$p" "$W/$p.cu" || { echo "gpu-check: nvcc failed for $p" >&2; exit 1; }
done

row() { # NAME TRACE
  "$VRAMSIM" replay "$2" --format json -o "$W/r.json" 2>"$W/r.err" || { echo "$1: replay failed: $(head -1 "$W/r.err")"; return; }
  python3 - "$1" "$W/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
t = r["time"]
print("%-22s %-10s %12.3f ms captured %12.3f ms predicted  x%.3f  %s" % (
    sys.argv[1], r.get("config"), t["captured_ns"] / 1e6, t["predicted_ns"] / 1e6,
    t["slowdown"], r["status"]))
PY
}

for mode in cupti hook; do
  for p in streams "managed 0.5" "managed 1.5" graph; do
    set -- $p
    name="$1${2:+-$2}-$mode"
    start=$(date +%s%N)
    timeout 120 "$VRAMCAP" --mode $mode -o "$W/$name.vtrace" -- "$W/$@" > /dev/null 2> "$W/$name.err"
    rc=$?
    echo "# $name: exit $rc, wall $(( ($(date +%s%N) - start) / 1000000 )) ms $(grep -m1 vramcap: "$W/$name.err")"
    row "$name" "$W/$name.vtrace"
  done
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    timeout 180 "$VRAMCAP" --mode $mode -o "$W/torch-$mode.vtrace" -- python3 "$W/train.py" > /dev/null 2> "$W/torch.err"
    echo "# torch-$mode: exit $? $(grep -m1 vramcap: "$W/torch.err")"
    row "torch-$mode" "$W/torch-$mode.vtrace"
    "$VRAMSIM" info "$W/torch-$mode.vtrace" 2>&1 | head -12
  fi
done
