#!/bin/sh
# gpu-check.sh — capture accuracy check on a machine with a GPU (not run in
# CI). Small CUDA programs (copies and kernels on four streams, linked with
# static and with shared cudart; managed memory first touched by the GPU,
# first touched by the host, prefetched, and 4 GiB beyond the card's
# memory; stream-ordered allocations from a pool that keeps its memory;
# copies through CUDA arrays, 3D peer and batch calls; 100,000 empty
# kernel launches (the cost of capture per launch); a graph launch; a program that exits with work in flight; copies and
# memory-bound kernels alone and side by side; every NCCL call the wrap
# stands in for, on one rank, where nvcc finds NCCL) and a small PyTorch training
# step are run plain, then captured with vramcap in both modes (the PyTorch
# step also at tensor level, torch-tensor: the merged trace against the real
# run's segments, reserved peak and smallest memory fraction); each trace
# is replayed on the preset that the capture named for the GPU, and the
# script prints wall time, captured time and predicted time per run, and
# how the kernels' shapes (grid, block, registers, shared memory) of the
# two modes agree.
#
# Usage (from the repository root, after `make`):
#   capture/gpu-check.sh [KEEP_DIR]     build the programs with nvcc, run
#                                       everything; copy the traces and
#                                       stderr logs to KEEP_DIR if given
#   capture/gpu-check.sh --build DIR    only build the programs into DIR
#                                       (on a machine with nvcc, no GPU)
# GPU_CHECK_PROGS=DIR uses programs built earlier with --build;
# GPU_CHECK_ONLY="NAME..." runs only those (streams, managed-0.02-gpu,
# pool, copies, launches, managed-over, graph, nosync, contend, nccl, torch,
# torch-tensor, torch-variants, ...).
# GPU_CHECK_TIMEOUT=S: seconds a plain run may take (120; captures 60 more).
# VRAMSIM / VRAMCAP override the binaries (a wrapper that sets
# LD_LIBRARY_PATH, say). The oversubscribed run (managed-over) needs 24 GiB
# of available host memory for what the driver evicts, else it is skipped.
# A capture that recorded no event (no trace, or 0 events: no driver, no
# device, a program that never reached CUDA) is a FAIL line, and the script
# exits 1 after the rest has run.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VRAMSIM=${VRAMSIM:-$ROOT/bin/vramsim}
VRAMCAP=${VRAMCAP:-$ROOT/bin/vramcap}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NVCCFLAGS=${NVCCFLAGS:--O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=[sm_80,compute_80]}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

write_sources () { # DIR
cat > "$1/streams.cu" <<'CU'
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
  cudaFreeHost(h);
  printf("streams ok\n"); return 0;
}
CU
cat > "$1/managed.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void touch(char *p, size_t n) { for (size_t i = (blockIdx.x * (size_t) blockDim.x + threadIdx.x) * 4096; i < n; i += (size_t) gridDim.x * blockDim.x * 4096) p[i]++; }
/* managed FRAC [gpu|host] [prefetch|-] [PASSES]: FRAC of the card's memory,
 * first touched by the GPU or the host, touched PASSES times (3) by a
 * kernel. FRAC above 1 oversubscribes the card (the driver evicts to the
 * host); the script checks the host has room first. */
int main(int argc, char **argv) {
  size_t free_b, total; cudaMemGetInfo(&free_b, &total);
  double frac = argc > 1 ? atof(argv[1]) : 0.02;
  int host_first = argc > 2 && !strcmp(argv[2], "host");
  int prefetch = argc > 3 && !strcmp(argv[3], "prefetch");
  int passes = argc > 4 ? atoi(argv[4]) : 3;
  size_t n = (size_t) (total * frac);
  if (frac <= 1 && n > free_b / 2) { printf("managed: %.2f of the card is more than half its free memory\n", frac); return 2; }
  char *p; if (cudaMallocManaged(&p, n) != cudaSuccess) return 1;
  if (host_first) memset(p, 1, n);
  if (prefetch) {
#if CUDART_VERSION >= 13000
    cudaMemLocation loc = { cudaMemLocationTypeDevice, 0 };
    cudaMemPrefetchAsync(p, n, loc, 0, 0);
#else
    cudaMemPrefetchAsync(p, n, 0, 0);
#endif
  }
  for (int it = 0; it < passes; it++) touch<<<1024, 256>>>(p, n);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaFree(p);
  printf("managed %.2f %s%s x%d ok\n", frac, host_first ? "host-first" : "gpu-first", prefetch ? " prefetched" : "", passes); return 0;
}
CU
cat > "$1/pool.cu" <<'CU'
#include <cstdio>
#include <cstdint>
/* Stream-ordered allocations from the default pool, kept reserved across
 * syncs (release threshold: all): 20 rounds of 1 to 4 buffers of 64 to
 * 256 MiB, each written by a kernel and freed on the stream. */
__global__ void fill(float *x, size_t n) { for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) x[i] = 1; }
int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0);
  uint64_t keep = UINT64_MAX; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  for (int r = 0; r < 20; r++) {
    float *b[4]; int k = 1 + r % 4;
    for (int j = 0; j < k; j++) {
      size_t n = (size_t) (16 << 20) * (1 + (r + j) % 4);
      if (cudaMallocAsync(&b[j], n * 4, s) != cudaSuccess) return 1;
      fill<<<264, 256, 0, s>>>(b[j], n);
    }
    for (int j = 0; j < k; j++) cudaFreeAsync(b[j], s);
    cudaStreamSynchronize(s);
  }
  printf("pool ok\n"); return 0;
}
CU
cat > "$1/copies.cu" <<'CU'
#include <cstdio>
#include <cstring>
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* The copies that go through CUDA arrays, 3D peer and batch entry points,
 * three rounds: h2d into an array (2D and the deprecated 1D call), array
 * to device, a same-device 3D peer copy, a batch of three copies. */
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("copies: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
int main() {
  const size_t W = 4096, H = 4096, B = W * H * 4;   /* 64 MiB */
  char *h, *d1, *d2, *d3; cudaStream_t s; CK(cudaStreamCreate(&s));
  CK(cudaMallocHost(&h, B)); CK(cudaMalloc(&d1, B)); CK(cudaMalloc(&d2, B)); CK(cudaMalloc(&d3, B));
  memset(h, 1, B);
  cudaArray_t a; cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
  CK(cudaMallocArray(&a, &cd, W, H));
  for (int r = 0; r < 3; r++) {
    CK(cudaMemcpy2DToArray(a, 0, 0, h, W * 4, W * 4, H, cudaMemcpyHostToDevice));
    CK(cudaMemcpyToArray(a, 0, 0, h, W * 4 * 16, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2DFromArray(d1, W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToDevice));
    cudaMemcpy3DPeerParms p; memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(d1, B, B, 1); p.dstPtr = make_cudaPitchedPtr(d2, B, B, 1);
    p.extent = make_cudaExtent(B, 1, 1); p.srcDevice = p.dstDevice = 0;
    CK(cudaMemcpy3DPeer(&p));
    void *dsts[3] = { d3, d2, h }; const void *srcs[3] = { h, d1, d3 }; size_t sizes[3] = { B, B, B / 4 };
    cudaMemcpyAttributes at; memset(&at, 0, sizeof at); at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx = 0;
    CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, &at, &idx, 1, s));
    CK(cudaStreamSynchronize(s));
  }
  CK(cudaFreeArray(a)); printf("copies ok\n"); return 0;
}
CU
cat > "$1/launches.cu" <<'CU'
#include <cstdio>
#include <chrono>
/* Launch cost: 100,000 launches of an empty kernel, a stream sync every
 * 1000, timed on the host; run plain and under both capture modes. */
__global__ void nop(int *p) { (void) p; }
int main() {
  int *d; cudaMalloc(&d, 4); cudaStream_t s; cudaStreamCreate(&s);
  for (int i = 0; i < 1000; i++) nop<<<1, 32, 0, s>>>(d);
  cudaStreamSynchronize(s);
  const int N = 100000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < N; i++) { nop<<<1, 32, 0, s>>>(d); if (i % 1000 == 999) cudaStreamSynchronize(s); }
  cudaStreamSynchronize(s);
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  printf("# launch cost: %.0f ns per launch (%d launches, a stream sync every 1000)\n", ns / N, N);
  printf("launches ok\n"); return 0;
}
CU
cat > "$1/graph.cu" <<'CU'
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
cat > "$1/nosync.cu" <<'CU'
#include <cstdio>
__global__ void fill(float *x, size_t n) { size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; if (i < n) x[i] = i; }
int main() {  /* exits with work in flight: no sync, no free */
  const size_t n = 64 << 20; float *x; cudaMalloc(&x, n * 4);
  for (int j = 0; j < 10; j++) fill<<<(n + 255) / 256, 256>>>(x, n);
  printf("nosync ok\n"); return 0;
}
CU
cat > "$1/contend.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cstring>
/* Phases, each three times, separated by device syncs: pageable h2d; pinned
 * h2d; h2d beside d2h; a d2d copy; three memory-bound kernels; the d2d copy
 * beside the kernels; two streams of kernels at once. */
__global__ void axpy(float a, const float *x, float *y, size_t n)
{ for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x) y[i] = a * x[i] + y[i]; }
int main() {
  const size_t B = 256 << 20, N = 256 << 20;  /* host copies: 256 MiB; kernel arrays: 1 GiB */
  char *pageable = (char *) malloc(B), *pin, *pin2, *d1, *d2, *c1, *c2;
  float *x, *y, *x2, *y2; cudaStream_t s1, s2;
  memset(pageable, 1, B);
  if (cudaMallocHost(&pin, B) != cudaSuccess || cudaMallocHost(&pin2, B) != cudaSuccess) return 1;
  memset(pin, 1, B); memset(pin2, 1, B);
  cudaMalloc(&d1, B); cudaMalloc(&d2, B); cudaMalloc(&c1, N * 4); cudaMalloc(&c2, N * 4);
  cudaMalloc(&x, N * 4); cudaMalloc(&y, N * 4); cudaMalloc(&x2, N * 4); cudaMalloc(&y2, N * 4);
  cudaStreamCreate(&s1); cudaStreamCreate(&s2);
  cudaMemset(x, 0, N * 4); cudaMemset(y, 0, N * 4); cudaMemset(x2, 0, N * 4); cudaMemset(y2, 0, N * 4);
  cudaMemset(c1, 0, N * 4); cudaMemset(d2, 0, B); cudaDeviceSynchronize();
  const int G = 132 * 16, T = 256;
  for (int r = 0; r < 3; r++) {
    cudaMemcpyAsync(d1, pageable, B, cudaMemcpyHostToDevice, s1); cudaDeviceSynchronize();
    cudaMemcpyAsync(d1, pin, B, cudaMemcpyHostToDevice, s1); cudaDeviceSynchronize();
    cudaMemcpyAsync(d1, pin, B, cudaMemcpyHostToDevice, s1);
    cudaMemcpyAsync(pin2, d2, B, cudaMemcpyDeviceToHost, s2); cudaDeviceSynchronize();
    cudaMemcpyAsync(c2, c1, N * 4, cudaMemcpyDeviceToDevice, s1); cudaDeviceSynchronize();
    for (int k = 0; k < 3; k++) axpy<<<G, T, 0, s1>>>(2.f, x, y, N);
    cudaDeviceSynchronize();
    cudaMemcpyAsync(c2, c1, N * 4, cudaMemcpyDeviceToDevice, s2);
    for (int k = 0; k < 3; k++) axpy<<<G, T, 0, s1>>>(2.f, x, y, N);
    cudaDeviceSynchronize();
    for (int k = 0; k < 3; k++) { axpy<<<G, T, 0, s1>>>(2.f, x, y, N); axpy<<<G, T, 0, s2>>>(2.f, x2, y2, N); }
    cudaDeviceSynchronize();
  }
  printf("contend ok\n"); return 0;
}
CU
cat > "$1/train.py" <<'PY'
import torch
m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
opt = torch.optim.AdamW(m.parameters())
x = torch.randn(512, 4096, device="cuda")
for _ in range(10):
    opt.zero_grad(); m(x).square().mean().backward(); opt.step()
torch.cuda.synchronize(); print("torch ok")
PY
# The tensor-level check (issue 18): the same step, optionally under
# torch.cuda.set_per_process_memory_fraction(argv[1]); prints the allocator's
# own figures for the comparison.
cat > "$1/train-step.py" <<'PY'
import sys
import torch
if len(sys.argv) > 1:
    torch.cuda.set_per_process_memory_fraction(float(sys.argv[1]))
m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
opt = torch.optim.AdamW(m.parameters())
x = torch.randn(512, 4096, device="cuda")
for _ in range(10):
    opt.zero_grad(); m(x).square().mean().backward(); opt.step()
torch.cuda.synchronize()
s = torch.cuda.memory_stats()
print("# reserved_peak %d segments %d total %d" % (torch.cuda.max_memory_reserved(),
      s.get("segment.all.allocated", 0), torch.cuda.get_device_properties(0).total_memory))
PY
# The cost of torch's memory history per allocation (what the hook turns on).
cat > "$1/history-cost.py" <<'PY'
import time
import torch
def run(n=100000):
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n):
        y = torch.empty(1024, device="cuda"); del y
    torch.cuda.synchronize(); return (time.perf_counter() - t) / n * 1e6
torch.empty(1, device="cuda"); run(1000)
off = min(run() for _ in range(3))
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=1000000)
on = min(run() for _ in range(3))
torch.cuda.memory._record_memory_history(enabled=None)
print("# history-cost: alloc+free %.2f us plain, %.2f us with the memory history (stacks=python): +%.2f us"
      % (off, on, on - off))
PY
# The NCCL wrap (capture/nccl.c) on the real NCCL, one rank on device 0:
# each wrapped call once; nccl_check compares the collectives the traces
# carry against these, worked out by hand (ranks 1).
cat > "$1/nccl.cu" <<'CU'
#include <cstdio>
#include <nccl.h>
#define NK(x) do { ncclResult_t r_ = (x); if (r_) { printf("%s: %s\n", #x, ncclGetErrorString(r_)); return 1; } } while (0)
int main() {
  ncclComm_t c; int dev = 0; cudaStream_t s; float *a, *b;
  NK(ncclCommInitAll(&c, 1, &dev));
  cudaStreamCreate(&s); cudaMalloc(&a, 64 << 20); cudaMalloc(&b, 64 << 20);
  const size_t M = 1 << 20;
  NK(ncclAllReduce(a, b, 16 * M, ncclFloat, ncclSum, c, s));        /* all_reduce 64 MiB */
  NK(ncclAllGather(a, b, 4 * M, ncclFloat, c, s));                  /* all_gather 16 MiB */
  NK(ncclReduceScatter(a, b, 4 * M, ncclFloat, ncclSum, c, s));     /* reduce_scatter 4M x 4 B x 1 rank */
  NK(ncclBroadcast(a, b, M, ncclBfloat16, 0, c, s));                /* broadcast 2 MiB */
  NK(ncclReduce(a, b, M, ncclDouble, ncclSum, 0, c, s));            /* reduce 8 MiB */
  NK(ncclGroupStart()); NK(ncclSend(a, M, ncclFloat, 0, c, s)); NK(ncclRecv(b, M, ncclFloat, 0, c, s));
  NK(ncclGroupEnd());                                               /* all_to_all 4 MiB (every rank) */
#if NCCL_VERSION_CODE >= 22800
  NK(ncclAlltoAll(a, b, M, ncclFloat, c, s));                       /* all_to_all 4 MiB */
#endif
  cudaStreamSynchronize(s);
  ncclCommDestroy(c);
  printf("nccl ok (version %d)\n", NCCL_VERSION_CODE); return 0;
}
CU
}

build () { # DIR
  mkdir -p "$1" && write_sources "$1" || return 1
  for p in streams managed pool copies launches graph nosync contend; do
    "$NVCC" $NVCCFLAGS -o "$1/$p" "$1/$p.cu" || { echo "gpu-check: nvcc failed for $p" >&2; return 1; }
  done
  "$NVCC" $NVCCFLAGS -cudart shared -o "$1/streams-shared" "$1/streams.cu" ||
    { echo "gpu-check: nvcc failed for streams-shared" >&2; return 1; }
  # NCCL only where nvcc finds it (its own include and library folders).
  "$NVCC" $NVCCFLAGS -o "$1/nccl" "$1/nccl.cu" -lnccl 2> "$1/nccl.build.err" ||
    echo "gpu-check: no NCCL to build nccl.cu against (the nccl run is skipped)" >&2
}

if [ "${1:-}" = "--build" ]; then
  [ $# -eq 2 ] || { echo "usage: $0 --build DIR" >&2; exit 1; }
  build "$2" && echo "gpu-check: programs in $2"
  exit
fi
KEEP=${1:-}
[ -n "$KEEP" ] && mkdir -p "$KEEP"

"$VRAMSIM" --help > /dev/null 2>&1 && "$VRAMCAP" --help > /dev/null 2>&1 ||
  { echo "gpu-check: $VRAMSIM or $VRAMCAP does not run (run make first)" >&2; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null

P=${GPU_CHECK_PROGS:-}
if [ -z "$P" ]; then
  P=$W/progs
  build "$P" || exit 1
fi

now_ms () { echo $(( $(date +%s%N) / 1000000 )); }

FAILED=0
# check_events NAME TRACE: a FAIL line (and exit 1 at the end) for a
# capture with no trace or no event in it.
check_events () {
  ne=$("$VRAMSIM" info "$2" --format json 2>/dev/null | sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
  if [ ! -f "$2" ]; then
    echo "  $1: FAIL: no trace written"; FAILED=1
  elif [ "${ne:-0}" = 0 ]; then
    echo "  $1: FAIL: 0 events in $(basename "$2")"; FAILED=1
  fi
}

row () { # NAME TRACE
  "$VRAMSIM" replay "$2" --format json -o "$W/r.json" 2>"$W/r.err" ||
    "$VRAMSIM" replay "$2" -c "${GPU_CHECK_PRESET:-h200}" --format json -o "$W/r.json" 2>"$W/r.err" ||
    { echo "  $1: replay failed: $(head -1 "$W/r.err")"; return; }
  python3 - "$1" "$W/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
t = r["time"]
print("  %-28s %-9s captured %10.3f ms  predicted %10.3f ms  x%.3f  %s" % (
    sys.argv[1], r.get("config"), t["captured_ns"] / 1e6, t["predicted_ns"] / 1e6,
    t["slowdown"], r["status"]))
PY
}

run_one () { # NAME ARGV...
  name=$1; shift
  case " ${GPU_CHECK_ONLY:-$name} " in *" $name "*) ;; *) return ;; esac
  t0=$(now_ms)
  timeout "${GPU_CHECK_TIMEOUT:-120}" "$@" > "$W/$name-plain.out" 2>&1
  echo "# $name: plain exit $?, wall $(( $(now_ms) - t0 )) ms"
  grep '^# ' "$W/$name-plain.out"
  for mode in cupti hook; do
    t0=$(now_ms)
    timeout $(( ${GPU_CHECK_TIMEOUT:-120} + 60 )) "$VRAMCAP" --mode $mode -o "$W/$name-$mode.vtrace" -- "$@" > "$W/$name-$mode.out" 2> "$W/$name-$mode.err"
    rc=$?
    echo "# $name-$mode: exit $rc, wall $(( $(now_ms) - t0 )) ms"
    grep '^# ' "$W/$name-$mode.out"
    grep -m8 vramcap: "$W/$name-$mode.err"
    check_events "$name-$mode" "$W/$name-$mode.vtrace"
    row "$name-$mode" "$W/$name-$mode.vtrace"
    "$VRAMSIM" info "$W/$name-$mode.vtrace" 2>&1 | grep -E '^(events|kernels|copies) ' | sed 's/^/    /'
    if [ -n "$KEEP" ]; then cp "$W/$name-$mode.vtrace" "$W/$name-$mode.err" "$KEEP/" 2>/dev/null; fi
  done
  shapes_cmp "$name"
}

# Kernel shapes (issue 14): hook mode's (launch arguments and
# cuFuncGetAttribute; cudart launches CUkernel handles, looked up through
# cuKernelGetFunction) against CUPTI's records, kernel by kernel in trace
# order: how many carry each field, and how many agree.
shapes_cmp () { # NAME
  VRAMSIM="$VRAMSIM" python3 - "$W/$1-cupti.vtrace" "$W/$1-hook.vtrace" <<'PY'
import json, os, subprocess, sys
vs = os.environ["VRAMSIM"]
def kernels(path):
    out = subprocess.run([vs, "convert", path, "-"], capture_output=True, text=True).stdout
    lines = [l for l in out.split("\n")[1:] if l.strip()]
    return [e for e in map(json.loads, lines) if e.get("op") == "kernel"]
try:
    c, h = kernels(sys.argv[1]), kernels(sys.argv[2])
except Exception as e:
    print("  shapes: not compared (%s)" % e); sys.exit()
key = lambda e: (e["name"], e.get("grid"), e.get("block"), e.get("regs"), e.get("smem"))
have = lambda ks, f: sum(1 for e in ks if f in e)
print("  shapes: %d kernels cupti, %d hook; with regs %d / %d, smem %d / %d, grid %d / %d"
      % (len(c), len(h), have(c, "regs"), have(h, "regs"), have(c, "smem"), have(h, "smem"),
         have(c, "grid"), have(h, "grid")))
diff = [(a, b) for a, b in zip(c, h) if key(a) != key(b)]
print("  shapes: %d of %d agree%s" % (min(len(c), len(h)) - len(diff), min(len(c), len(h)),
      "; first difference: cupti %s, hook %s" % (key(diff[0][0]), key(diff[0][1])) if diff else ""))
PY
}

run_one streams "$P/streams"
run_one streams-shared "$P/streams-shared"
run_one managed-0.02-gpu "$P/managed" 0.02
run_one managed-0.05-host "$P/managed" 0.05 host
run_one managed-0.05-host-prefetch "$P/managed" 0.05 host prefetch
run_one pool "$P/pool"
run_one copies "$P/copies"
run_one launches "$P/launches"
# Oversubscribed: managed memory 4 GiB more than the card has, touched
# twice (the second pass faults everything back in). Only when the host
# can hold what the driver evicts, with room to spare.
over_ok () {
  avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
  [ "${avail:-0}" -ge 24 ]
}
case " ${GPU_CHECK_ONLY:-managed-over} " in
  *" managed-over "*)
    if over_ok; then
      tot=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 1)
      frac=$(awk -v t="${tot:-0}" 'BEGIN { if (t > 0) printf "%.4f", (t + 4096) / t; else print 0 }')
      if [ "$frac" = 0 ]; then echo "# managed-over: no memory size from nvidia-smi, skipped"
      else run_one managed-over "$P/managed" "$frac" gpu - 2; fi
    else
      echo "# managed-over: the host has under 24 GiB available, skipped"
    fi ;;
esac
run_one graph "$P/graph"
run_one nosync "$P/nosync"
run_one contend "$P/contend"
# nccl: the collectives each mode's trace carries against nccl.cu's, by hand.
nccl_check () {
  for mode in cupti hook; do
    "$VRAMSIM" convert "$W/nccl-$mode.vtrace" "$W/nccl-$mode.jsonl" 2>/dev/null || { echo "  nccl-$mode: no trace"; continue; }
    python3 - "$mode" "$W/nccl-$mode.jsonl" <<'PY'
import json, sys
M = 1 << 20
want = [("all_reduce", 64 * M), ("all_gather", 16 * M), ("reduce_scatter", 16 * M), ("broadcast", 2 * M),
        ("reduce", 8 * M), ("all_to_all", 4 * M), ("all_to_all", 4 * M)]
got, plain = [], 0
for l in open(sys.argv[2]):
    e = json.loads(l)
    if e.get("op") != "kernel":
        continue
    c = e.get("collective")
    if c:
        got.append((c["kind"], c["bytes"], c["ranks"], e["name"][:48]))
    elif e["name"].startswith("nccl"):
        plain += 1
print("  nccl-%s: %d kernels with a collective, %d NCCL kernels without" % (sys.argv[1], len(got), plain))
for g in got:
    print("    %-14s %10d B  ranks %d  %s" % g)
ok = [(k, b) for k, b, _, _ in got] == want[:len(got)] and len(got) >= 6 and all(r == 1 for _, _, r, _ in got)
print("  nccl-%s: %s against nccl.cu's calls (want %s)" % (sys.argv[1], "MATCH" if ok else "DIFFER", want))
PY
  done
}
if [ -x "$P/nccl" ]; then
  run_one nccl "$P/nccl"
  case " ${GPU_CHECK_ONLY:-nccl} " in *" nccl "*) nccl_check ;; esac
else
  echo "# nccl: not built (no NCCL for nvcc), skipped"
fi
if [ -n "${GPU_CHECK_ONLY:-}" ] && ! echo " $GPU_CHECK_ONLY " | grep -q " torch "; then
  :
elif python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  run_one torch python3 "$P/train.py"
else
  echo "# torch: python3 has no CUDA-enabled torch, skipped"
fi

# torch-tensor (issue 18): the step captured with the PyTorch hook; the
# merged trace replayed with allocator.kind=pytorch on the capture preset
# against the real run's segments and reserved peak; then the smallest
# set_per_process_memory_fraction at which the step runs (bisection, 7
# steps) against the smallest memory.capacity at which vramsim says it fits
# (bisection on the merged trace, oversubscription oom). PyTorch's fraction
# caps the allocator's reserved bytes; vramsim's capacity also holds the
# preset's CUDA context (memory.context), so the two are compared as
# fraction x total against capacity - context.
tensor_check () {
  T2=$W/tt
  mkdir -p "$T2"
  timeout "${GPU_CHECK_TIMEOUT:-120}" python3 "$P/history-cost.py" 2>&1 | grep '^# '
  timeout "${GPU_CHECK_TIMEOUT:-120}" python3 "$P/train-step.py" > "$T2/plain.out" 2>&1
  echo "# torch-tensor: plain exit $?"; grep '^# ' "$T2/plain.out"
  real=$(sed -n 's/^# reserved_peak \([0-9]*\) segments \([0-9]*\) total \([0-9]*\)$/\1 \2 \3/p' "$T2/plain.out")
  t0=$(now_ms)
  timeout $(( ${GPU_CHECK_TIMEOUT:-120} + 60 )) "$VRAMCAP" -o "$T2/step.vtrace" -- python3 "$P/train-step.py" \
    > "$T2/cap.out" 2> "$T2/cap.err"
  echo "# torch-tensor capture: exit $?, wall $(( $(now_ms) - t0 )) ms"; grep -m8 vramcap: "$T2/cap.err"
  check_events torch-tensor "$T2/step.vtrace"
  timeout $(( ${GPU_CHECK_TIMEOUT:-120} + 60 )) "$VRAMCAP" --no-torch -o "$T2/drv.vtrace" -- python3 "$P/train-step.py" \
    > /dev/null 2>&1
  for tr in step drv; do
    "$VRAMSIM" replay "$T2/$tr.vtrace" --set allocator.kind=pytorch --format json -o "$T2/$tr.json" 2> "$T2/$tr.rerr" ||
      { echo "  $tr: replay failed: $(head -1 "$T2/$tr.rerr")"; continue; }
  done
  VRAMSIM="$VRAMSIM" python3 - "$T2/step.vtrace" "$T2/step.torch.pickle" "$T2/step.json" "$T2/drv.json" $real <<'PY'
import json, pickle, subprocess, sys, os
trace, snap, rep, drv = sys.argv[1:5]
real = [int(x) for x in sys.argv[5:8]] if len(sys.argv) >= 8 else None
vs = os.environ.get("VRAMSIM", "bin/vramsim")
h = json.loads(subprocess.run([vs, "convert", trace, "-"], capture_output=True, text=True).stdout.split("\n")[0])
print("  header: allocations %s, tensor_merge %s" % (h.get("allocations"), json.dumps(h.get("tensor_merge"))))
d = pickle.load(open(snap, "rb"))
seg = [(e["action"], e["size"]) for e in d["device_traces"][0] if e["action"].startswith("segment")]
print("  snapshot: %d segment events, %d segments at the dump, %d B reserved at the dump"
      % (len(seg), len(d["segments"]), sum(s["total_size"] for s in d["segments"])))
for name, path in (("tensor trace", rep), ("driver trace", drv)):
    try:
        a = json.load(open(path))["memory"]["allocator"]
    except Exception as e:
        print("  %s: no report (%s)" % (name, e)); continue
    print("  %s replayed (pytorch model): %d segment allocs, %d frees, reserved peak %d B"
          % (name, a["segment_allocs"], a["segment_frees"], a["peak_reserved_bytes"]))
if real:
    print("  real run: reserved peak %d B, %d segments allocated" % (real[0], real[1]))
PY
  # Bisection: the real step under a memory fraction (exit 0 = it ran).
  total=$(echo "$real" | awk '{ print $3 }')
  lo=0; hi=1000   # per mille of total memory
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    mid=$(( (lo + hi) / 2 ))
    [ $mid = $lo ] && break
    f=$(awk -v m=$mid 'BEGIN { printf "%.3f", m / 1000 }')
    if timeout "${GPU_CHECK_TIMEOUT:-120}" python3 "$P/train-step.py" "$f" > /dev/null 2>&1; then hi=$mid; else lo=$mid; fi
  done
  fbytes=$(awk -v m=$hi -v t="${total:-0}" 'BEGIN { printf "%d", m / 1000 * t }')
  echo "  smallest fraction that runs: 0.$(printf %03d $hi) (${fbytes} B of ${total:-?})"
  # vramsim: the smallest capacity (MiB) at which the merged trace fits.
  ctx=$("$VRAMSIM" configs --show "$( "$VRAMSIM" convert "$T2/step.vtrace" - 2>/dev/null | head -1 |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["capture"].get("config") or "h200")')" 2>/dev/null |
        sed -n 's/.*"context":[[:space:]]*"\([0-9]*\)MiB".*/\1/p' | head -1)
  lo=0; hi=$(( ${total:-150000000000} / 1048576 ))
  while [ $(( hi - lo )) -gt 16 ]; do
    mid=$(( (lo + hi) / 2 ))
    if "$VRAMSIM" replay "$T2/step.vtrace" --set allocator.kind=pytorch --set memory.capacity=${mid}MiB \
         --set policy.oversubscription=oom --format json -o "$T2/b.json" 2>/dev/null &&
       [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$T2/b.json")" = ok ]; then
      hi=$mid; else lo=$mid; fi
  done
  echo "  vramsim: fits from ${hi} MiB (less the context ${ctx:-?} MiB: $(( hi - ${ctx:-0} )) MiB) against $(( ${fbytes:-0} / 1048576 )) MiB from the fraction"
  if [ -n "$KEEP" ]; then cp "$T2/step.vtrace" "$T2/step.vtrace.addrs" "$T2/step.torch.pickle" "$T2/cap.err" "$KEEP/" 2>/dev/null; fi
}
case " ${GPU_CHECK_ONLY:-torch-tensor} " in
  *" torch-tensor "*)
    if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then tensor_check
    else echo "# torch-tensor: python3 has no CUDA-enabled torch, skipped"; fi ;;
esac

# torch-variants (issue 18, not run yet: no GPU in the session that wrote
# it): the same step captured (a) with expandable_segments:True (the merge
# must explain each segment_map by its cuMemMap pages: tensor_merge's
# segment_maps_of_several_mappings, and the replay's reserved peak against
# the real run's), (b) with backend:cudaMallocAsync (no history: the header
# must say allocations tensor, allocator kind async, the replay takes the
# async model; its reserved peak against the pool's, which
# max_memory_reserved reports under that backend), and (c) under
# torch.distributed.run with two ranks on the one GPU (no process group:
# each rank runs the step alone), which must leave step.rank0.vtrace and
# step.rank1.vtrace, each merged with its own snapshot.
variants_check () {
  T3=$W/tv
  mkdir -p "$T3"
  for v in expandable async; do
    case $v in
      expandable) conf=expandable_segments:True ;;
      async) conf=backend:cudaMallocAsync ;;
    esac
    PYTORCH_CUDA_ALLOC_CONF=$conf timeout "${GPU_CHECK_TIMEOUT:-120}" python3 "$P/train-step.py" > "$T3/$v.plain" 2>&1
    echo "# torch-variants $v: plain exit $?"; grep '^# ' "$T3/$v.plain"
    PYTORCH_CUDA_ALLOC_CONF=$conf timeout $(( ${GPU_CHECK_TIMEOUT:-120} + 60 )) "$VRAMCAP" -o "$T3/$v.vtrace" \
      -- python3 "$P/train-step.py" > /dev/null 2> "$T3/$v.err"
    echo "# torch-variants $v capture: exit $?"; grep -m4 vramcap: "$T3/$v.err"
    check_events "torch-variants-$v" "$T3/$v.vtrace"
    "$VRAMSIM" replay "$T3/$v.vtrace" --format json -o "$T3/$v.json" 2> "$T3/$v.rerr" ||
      echo "  replay failed: $(head -1 "$T3/$v.rerr")"
    VRAMSIM="$VRAMSIM" python3 - "$T3/$v.vtrace" "$T3/$v.json" "$T3/$v.plain" <<'PY'
import json, os, re, subprocess, sys
trace, rep, plain = sys.argv[1:4]
vs = os.environ.get("VRAMSIM", "bin/vramsim")
h = json.loads(subprocess.run([vs, "convert", trace, "-"], capture_output=True, text=True).stdout.split("\n")[0])
print("  header: allocations %s, allocator_settings %s" % (h.get("allocations"), json.dumps(h.get("allocator_settings"))))
print("  tensor_merge %s" % json.dumps(h.get("tensor_merge")))
try:
    a = json.load(open(rep))["memory"]["allocator"]
    print("  replayed (%s model): reserved peak %d B, allocated peak %d B"
          % (a["kind"], a["peak_reserved_bytes"], a["peak_allocated_bytes"]))
except Exception as e:
    print("  no replay report (%s)" % e)
m = re.search(r"# reserved_peak (\d+)", open(plain).read())
print("  real run: reserved peak %s B" % (m.group(1) if m else "?"))
PY
  done
  if python3 -c "import torch.distributed.run" 2>/dev/null; then
    (cd "$T3" && timeout $(( ${GPU_CHECK_TIMEOUT:-120} * 2 )) "$VRAMCAP" -o "$T3/step.vtrace" -- \
       python3 -m torch.distributed.run --nproc-per-node 2 "$P/train-step.py" > /dev/null 2> "$T3/ranks.err")
    echo "# torch-variants ranks: exit $?; $(cd "$T3" && ls step.*vtrace 2>/dev/null | tr '\n' ' ')"
    for f in "$T3"/step.rank0.vtrace "$T3"/step.rank1.vtrace; do
      [ -f "$f" ] || { echo "  $(basename "$f"): missing"; continue; }
      "$VRAMSIM" convert "$f" - 2>/dev/null | head -1 | python3 -c '
import json, sys
h = json.load(sys.stdin)
m = h.get("tensor_merge", {})
print("  %s: allocations %s, pid %s, %s tensors, snapshot %s" % (sys.argv[1], h.get("allocations"),
      h["capture"].get("pid"), m.get("tensors"), m.get("snapshot")))' "$(basename "$f")"
    done
  else
    echo "# torch-variants ranks: no torch.distributed.run, skipped"
  fi
  if [ -n "$KEEP" ]; then cp "$T3"/*.vtrace "$T3"/*.err "$KEEP/" 2>/dev/null; fi
}
case " ${GPU_CHECK_ONLY:-torch-variants} " in
  *" torch-variants "*)
    if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then variants_check
    else echo "# torch-variants: python3 has no CUDA-enabled torch, skipped"; fi ;;
esac
if [ "$FAILED" != 0 ]; then
  echo "# FAIL: a capture recorded no event (see the FAIL lines)"
fi
exit "$FAILED"
