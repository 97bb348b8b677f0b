# tests/fuzz/fuzz.mk — libFuzzer harnesses (included by the Makefile).
#
#   make fuzz                    build every harness and run each for FUZZ_TIME
#                                seconds (default 60) on FUZZ_JOBS at once
#   make fuzz-build              only build them (build/fuzz/fuzz-TARGET)
#   make fuzz-TARGET-run         run one: jsonl, bin, config, kineto, replay, kbytes, pickle,
#                                snapshot, tensor, nsys
#
# Harnesses and every sim/*.c object are compiled with clang
# -fsanitize=fuzzer(-no-link),address,undefined into build/fuzz/. A run
# starts from the committed seeds (tests/fuzz/corpus/TARGET/) plus what
# earlier runs found (build/fuzz/corpus/TARGET/, not committed); crashes
# land in build/fuzz/crash/TARGET/. Minimise one with
#   build/fuzz/fuzz-TARGET -minimize_crash=1 -runs=10000 CRASH
# and commit it as tests/fuzz/regress/TARGET-N: tests/fuzz-regress.sh
# replays every such file through bin/vramsim. See docs/errors.md.

FUZZ_CC      ?= clang
FUZZ_TIME    ?= 60
FUZZ_JOBS    ?= 2
# e.g. FUZZ_NICE='nice -n 19' on a shared machine
FUZZ_NICE    ?=
FUZZ_FLAGS   ?= -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1
FUZZ_B        = build/fuzz
FUZZ_TARGETS  = jsonl bin config kineto replay kbytes pickle snapshot tensor nsys
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# The project's own warnings are not errors here: clang warns differently
# from the compiler the project is built with, and these objects belong to
# the modules' owners.
FUZZ_CFLAGS   = -std=gnu11 -g -O1 $(FUZZ_SAN) -Isim $(PKG_CFLAGS) \
                -DVRAMSIM_VERSION='"$(VERSION)"' -DVRAMSIM_PREFIX='"$(PREFIX)"' -Wno-everything -MMD -MP
FUZZ_SIM_OBJS = $(SIM_SRCS:sim/%.c=$(FUZZ_B)/sim/%.o)
# Headers and the engine's *.part.c (#included by replay.c) rebuild what uses them.
-include $(FUZZ_SIM_OBJS:.o=.d)
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz-%)

# (fuzz-TARGET-run are pattern targets, so not .PHONY: make skips implicit
# rules for phony targets. No file of that name is ever made.)
.PHONY: fuzz fuzz-build

fuzz-build: $(FUZZ_BINS)

$(FUZZ_B)/sim/%.o: sim/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_B)/libvramsim.a: $(FUZZ_SIM_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_B)/fuzz-jsonl: tests/fuzz/fuzz-trace.c tests/fuzz/fuzz-common.h $(FUZZ_B)/libvramsim.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_B)/libvramsim.a $(LDLIBS)
$(FUZZ_B)/fuzz-bin: tests/fuzz/fuzz-trace.c tests/fuzz/fuzz-common.h $(FUZZ_B)/libvramsim.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_BINARY -fsanitize=fuzzer -o $@ $< $(FUZZ_B)/libvramsim.a $(LDLIBS)
$(FUZZ_B)/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz-common.h tests/fuzz/fuzz-sections.h $(FUZZ_B)/libvramsim.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_B)/libvramsim.a $(LDLIBS)

# One run: -rss_limit_mb catches inputs that make memory grow without
# bound, -timeout inputs that hang. The dictionary (when present) holds the
# format's keywords. Fork mode keeps going after a finding, so one run
# collects every crash, leak, hang and out-of-memory in crash/TARGET/.
# The run's output goes to build/fuzz/fuzz-TARGET.log (its last lines are
# shown); the rule fails when libFuzzer exits non-zero (a dictionary or
# option it refuses, a harness that cannot start) or the log shows no
# fuzzing done (no "#N: cov:" progress line from a fuzzing process).
fuzz-%-run: $(FUZZ_B)/fuzz-%
	@mkdir -p $(FUZZ_B)/corpus/$* $(FUZZ_B)/crash/$*
	@log=$(FUZZ_B)/fuzz-$*.log; \
	VRAMSIM_SRC=$(CURDIR) $(FUZZ_NICE) $(FUZZ_B)/fuzz-$* -max_total_time=$(FUZZ_TIME) $(FUZZ_FLAGS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 -print_final_stats=1 -artifact_prefix=$(FUZZ_B)/crash/$*/ \
	  $(if $(wildcard tests/fuzz/dict/$*.dict),-dict=tests/fuzz/dict/$*.dict) \
	  $(FUZZ_B)/corpus/$* tests/fuzz/corpus/$* > $$log 2>&1; rc=$$?; \
	tail -n 25 $$log; \
	if [ $$rc -ne 0 ]; then echo "fuzz-$*: libFuzzer exited $$rc (see $$log)"; exit 1; fi; \
	grep -Eq '^#[0-9]+: +cov:|^#[0-9]+	+(INITED|NEW|pulse|REDUCE|DONE)' $$log \
	  || { echo "fuzz-$*: the harness did not start fuzzing (see $$log)"; exit 1; }; \
	echo "fuzz-$*: $$(ls $(FUZZ_B)/crash/$* | wc -l) finding(s) in $(FUZZ_B)/crash/$*/"

fuzz: fuzz-build
	$(MAKE) -j$(FUZZ_JOBS) -k $(FUZZ_TARGETS:%=fuzz-%-run)
