#!/bin/sh
# capture-outputs.sh — issue 16 item 1 for vramcap -o: a device node stays
# a device, a symlink writes its target (against the stub driver).
VRAMSIM=${VRAMSIM:-bin/vramsim}
BUILD=${TEST_BUILD:-build}
VRAMCAP=$(dirname "$VRAMSIM")/vramcap
STUB=$BUILD/tests/stub-cuda
if [ ! -x "$VRAMCAP" ] || [ ! -f "$STUB/libcuda.so.1" ] || [ ! -x "$STUB/prog-linked" ]; then
  echo "1..0 # SKIP capture not built (no CUDA toolkit)"
  exit 0
fi
STUB=$(cd "$STUB" && pwd)
VRAMCAP=$(cd "$(dirname "$VRAMCAP")" && pwd)/vramcap
VRAMSIM=$(cd "$(dirname "$VRAMSIM")" && pwd)/vramsim
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$STUB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
echo "1..3"
cd "$T" || exit 1
if mknod null c 1 3 2> /dev/null; then
  "$VRAMCAP" --mode hook -o null -- "$STUB/prog-linked" > out 2> err
  [ -c null ] && ! ls | grep -q tmp; ok $? "vramcap -o NULLDEV: still a character device, no temporary"
else
  ok 0 "# skip mknod not permitted"
fi
mkdir d; ln -s d/real.vtrace link.vtrace
"$VRAMCAP" --mode hook -o link.vtrace -- "$STUB/prog-linked" > out 2> err
[ -L link.vtrace ] && [ -f d/real.vtrace ]; ok $? "vramcap -o SYMLINK: the link stays, its target is written"
"$VRAMSIM" info d/real.vtrace > /dev/null && [ "$(ls d)" = real.vtrace ]; ok $? "the target is a whole trace, nothing left beside it"
