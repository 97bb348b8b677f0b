#!/bin/sh
# capture-nothing.sh — vramcap when it records nothing (docs/capture.md,
# "When nothing is recorded"): no driver (this machine has none: the
# program that dlopens libcuda.so.1 finds nothing), no device (the stub
# driver with STUB_CUDA_NO_DEVICE=1), a program that never touched CUDA;
# each gives one line naming the cause, no trace file (an earlier run's is
# removed) and a non-zero exit; the stubbed program still captures; and
# capture/gpu-check.sh fails on a 0-event capture.
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ] || [ ! -x "$STUB/prog-linked" ]; then
  echo "1..0 # SKIP capture not built (no CUDA toolkit)"
  exit 0
fi
STUB=$(cd "$STUB" && pwd)
VRAMCAP=$(cd "$(dirname "$VRAMCAP")" && pwd)/vramcap
VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/vramsim
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
# one_line ERR TEXT: ERR holds exactly one vramcap line, and it says TEXT
one_line() { [ "$(grep -c '^vramcap: ' "$1")" = 1 ] && grep -q "^vramcap: nothing recorded: $2" "$1"; }

echo "1..8"

# A driver that is not there: the program's dlopen of libcuda.so.1 fails
# (no LD_LIBRARY_PATH to the stub; this machine has no NVIDIA driver, and
# a test machine with one skips the check). An earlier trace at the path
# must not pass for this run's.
if env -u LD_LIBRARY_PATH sh -c 'ldconfig -p 2>/dev/null | grep -q "libcuda\.so\.1 "'; then
  echo "ok 1 # SKIP this machine has a CUDA driver"
  n=1
else
  echo stale > nodrv.vtrace
  env -u LD_LIBRARY_PATH "$VRAMCAP" --mode hook -o nodrv.vtrace -- "$STUB/prog-dlopen" > /dev/null 2> nodrv.err
  rc=$?
  [ $rc = 1 ] && [ ! -e nodrv.vtrace ] && [ ! -e nodrv.vtrace.addrs ] \
    && one_line nodrv.err "no CUDA driver on this machine (dlopen libcuda.so.1: .*); no trace written to $T/nodrv.vtrace"
  ok $? "no driver: one line naming the cause, no trace (the stale one removed), exit 1"
fi

export LD_LIBRARY_PATH="$STUB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# No device: cuInit answers CUDA_ERROR_NO_DEVICE; the program exits 1 on
# it, and vramcap keeps that status.
STUB_CUDA_NO_DEVICE=1 CUDA_VISIBLE_DEVICES=7 "$VRAMCAP" --mode hook -o nodev.vtrace -- "$STUB/prog-linked" > /dev/null 2> nodev.err
rc=$?
[ $rc = 1 ] && [ ! -e nodev.vtrace ] \
  && one_line nodev.err 'no CUDA device: cuInit answered CUDA_ERROR_NO_DEVICE (100); CUDA_VISIBLE_DEVICES is "7"'
ok $? "no device (stub driver): the cuInit answer named, no trace, the program's exit 1"
# The same in CUPTI mode (the default; the stub injects nothing, the shim falls back).
STUB_CUDA_NO_DEVICE=1 "$VRAMCAP" -o nodevc.vtrace -- "$STUB/prog-linked" > /dev/null 2> nodevc.err
[ $? = 1 ] && [ ! -e nodevc.vtrace ] && one_line nodevc.err 'no CUDA device: cuInit answered CUDA_ERROR_NO_DEVICE'
ok $? "no device, CUPTI mode: the same line"

# A program that never touches CUDA (the stub driver is loadable): exit 1,
# not the program's 0; with --no-torch too.
"$VRAMCAP" -o none.vtrace -- true 2> none.err
rc=$?
[ $rc = 1 ] && [ ! -e none.vtrace ] && one_line none.err "the program never used CUDA (it never called cuInit); no trace written"
ok $? "a program that never used CUDA: one line, no trace, exit 1 (not the program's 0)"
"$VRAMCAP" --no-torch -o none2.vtrace -- sh -c 'exit 3' 2> none2.err
[ $? = 3 ] && [ ! -e none2.vtrace ] && one_line none2.err "the program never used CUDA"
ok $? "--no-torch: the same line, the program's own non-zero status kept (3)"

# The stubbed program captures as before: a trace, no such line, exit 0.
"$VRAMCAP" --mode hook -o good.vtrace -- "$STUB/prog-linked" > /dev/null 2> good.err
[ $? = 0 ] && [ -s good.vtrace ] && ! grep -q "nothing recorded" good.err \
  && [ "$("$VRAMSIM" info good.vtrace --format json | sed -n 's/^[[:space:]]*"events":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)" -gt 0 ]
ok $? "the stubbed program: a trace with events, exit 0, no line"

# gpu-check.sh with prebuilt programs (GPU_CHECK_PROGS) and only the
# "streams" run: a program that never touches CUDA fails the check; the
# stubbed program passes it.
mkdir progs-none progs-stub
printf '#!/bin/sh\necho "# not a CUDA program"\n' > progs-none/streams
printf '#!/bin/sh\nexec "%s/prog-linked"\n' "$STUB" > progs-stub/streams
chmod +x progs-none/streams progs-stub/streams
GPU_CHECK_PROGS=$T/progs-none GPU_CHECK_ONLY=streams VRAMSIM=$VRAMSIM VRAMCAP=$VRAMCAP \
  sh "$HERE/../capture/gpu-check.sh" > check-none.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q "streams-cupti: FAIL: no trace written" check-none.out \
  && grep -q "streams-hook: FAIL: no trace written" check-none.out
ok $? "gpu-check.sh: a capture that recorded nothing is a FAIL line per mode, exit 1"
GPU_CHECK_PROGS=$T/progs-stub GPU_CHECK_ONLY=streams VRAMSIM=$VRAMSIM VRAMCAP=$VRAMCAP \
  sh "$HERE/../capture/gpu-check.sh" > check-stub.out 2>&1
rc=$?
[ $rc = 0 ] && ! grep -q FAIL check-stub.out && grep -q "streams-hook " check-stub.out
ok $? "gpu-check.sh: the stubbed program's captures pass (exit 0, no FAIL)"
