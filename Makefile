# vramsim — a plain Makefile. `make` builds bin/vramsim (and lib/libvramcap.so
# when the CUDA toolkit is found); `make test` runs every test; `make asan`
# builds and tests everything under AddressSanitizer + UBSan.

# The version is written once, in python/vramsim/_version.py: the C
# binary's --version and the Python package's __version__ are the same.
VERSION   := $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' python/vramsim/_version.py)
MAKEFLAGS += --no-print-directory
PREFIX    ?= /usr/local
CC        ?= cc
CFLAGS    ?= -O2 -g
CUDA_HOME ?= /usr/local/cuda

# Build variant: objects and test binaries go under $(B); the asan variant
# puts its vramsim there too.
B         ?= build
BIN       ?= bin
SAN       ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)

PKGS       = glib-2.0 gthread-2.0 libcjson zlib sqlite3
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# SQLite (read only by the nsys importer) is linked from its archive when
# the system has one (Debian's libsqlite3-dev does): the shared library is
# linked BIND_NOW and resolved ~1,600 symbols at every start, 1.3 M
# instructions of every run, a sixth of a sampled replay's
# (docs/performance.md, "Start-up"). STATIC_SQLITE=no links it shared.
STATIC_SQLITE ?= auto
SQLITE_A   := $(if $(filter no,$(STATIC_SQLITE)),,$(abspath $(shell $(CC) -print-file-name=libsqlite3.a 2>/dev/null)))
ifneq ($(wildcard $(SQLITE_A)),)
PKG_LIBS   := $(patsubst -lsqlite3,$(SQLITE_A) -lz -lm,$(PKG_LIBS))
endif
WARN       = -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wwrite-strings \
             -Wno-unused-parameter
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SAN) -Isim $(PKG_CFLAGS) \
             -DVRAMSIM_VERSION='"$(VERSION)"' -DVRAMSIM_PREFIX='"$(PREFIX)"' -MMD -MP
LDLIBS     = $(PKG_LIBS) -lm -lpthread

# NAME.part.c files are parts of one translation unit (sim/engine/replay.c
# #includes them, sim/flow/flow.c those of sim/flow: docs/architecture.md),
# not compiled alone; the -MMD dependencies rebuild replay.o or flow.o when
# one changes.
SIM_SRCS   = $(filter-out sim/cli/main.c %.part.c,$(sort $(wildcard sim/*/*.c)))
SIM_OBJS   = $(SIM_SRCS:sim/%.c=$(B)/sim/%.o)
TEST_SRCS  = $(sort $(wildcard tests/*/test-*.c))
TEST_BINS  = $(TEST_SRCS:tests/%.c=$(B)/tests/%)

.PHONY: all test check asan asan-test install uninstall clean bench fuzz capture tests validate
all: $(BIN)/vramsim capture

$(B)/sim/%.o: sim/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libvramsim.a: $(SIM_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# main.c prints VRAMSIM_VERSION: rebuilt when the version changes.
$(B)/sim/cli/main.o: python/vramsim/_version.py

$(BIN)/vramsim: $(B)/sim/cli/main.o $(B)/libvramsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/%.c $(B)/libvramsim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(B)/libvramsim.a $(LDLIBS)

tests: $(TEST_BINS) $(BIN)/vramsim

# The data the tests and the validation read is in the repository
# (validation/data/README.md). Some real traces and lambda's benchmark CSVs
# may not be redistributed: give the folders that hold them with
# REAL_TRACES=DIR and LAMBDA_DATA=DIR (the tests read them as
# VRAMSIM_REAL_TRACES, VRAMSIM_LAMBDA_DATA); without them the tests that
# need them are skipped, and `make test` counts every skip at the end.
REAL_TRACES ?=
LAMBDA_DATA ?=
OPTIONAL_DATA = $(if $(REAL_TRACES),--real-traces $(abspath $(REAL_TRACES))) \
                $(if $(LAMBDA_DATA),--lambda $(abspath $(LAMBDA_DATA)))

# The kernel model across GPUs on published measurements (docs/validation.md,
# "Across GPUs"): prints the tables that page shows.
validate: $(B)/tests/model/validate-across
	$(B)/tests/model/validate-across validation/data $(OPTIONAL_DATA)
# tests/validate-across.sh runs it under `make test` (targets, and the
# page's tables against what it prints).
tests: $(B)/tests/model/validate-across

-include capture/capture.mk

# Every test runs under prove: GLib test binaries with --tap, shell tests
# (tests/*.sh) print TAP themselves. tests/tap-run logs each skip, and
# tests/tap-skips prints their count and reasons at the end.
TEST_ENV = VRAMSIM=$(abspath $(BIN)/vramsim) TEST_BUILD=$(abspath $(B)) \
           VRAMSIM_REAL_TRACES=$(if $(REAL_TRACES),$(abspath $(REAL_TRACES))) \
           VRAMSIM_LAMBDA_DATA=$(if $(LAMBDA_DATA),$(abspath $(LAMBDA_DATA))) \
           VRAMSIM_SKIP_LOG=$(abspath $(B))/test-skips.log
test: tests
	@rm -f $(B)/test-skips.log
	$(TEST_ENV) prove -j$(JOBS) --exec tests/tap-run $(TEST_BINS) $(filter-out %-lib.sh,$(wildcard tests/*.sh)); \
	  rc=$$?; tests/tap-skips $(B)/test-skips.log; exit $$rc

# The whole suite, then again under AddressSanitizer + UBSan (one after
# the other, each using every core); the skips of both runs at the end.
check:
	$(MAKE) test
	$(MAKE) asan
	@echo "make check: the plain and the ASan run together"; tests/tap-skips build/test-skips.log build/asan/test-skips.log

asan:
	$(MAKE) B=build/asan BIN=build/asan/bin SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' CFLAGS='-O1 -g' test

# The Python package (python/vramsim) goes where Debian's python3 looks
# for local packages ($(PREFIX)/lib/python3.X/dist-packages), with the path
# of the vramsim it runs.
PYTHON    ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
PYTHONDIR ?= $(PREFIX)/lib/$(shell $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/vramsim/configs $(DESTDIR)$(PREFIX)/share/vramsim/plots
	install -d $(DESTDIR)$(PYTHONDIR)/vramsim
	install -m 644 python/vramsim/*.py python/vramsim/py.typed $(DESTDIR)$(PYTHONDIR)/vramsim/
	echo 'VRAMSIM = "$(PREFIX)/bin/vramsim"' > $(DESTDIR)$(PYTHONDIR)/vramsim/_installed.py
	install -m 755 $(BIN)/vramsim $(DESTDIR)$(PREFIX)/bin/
	install -m 644 configs/*.json $(DESTDIR)$(PREFIX)/share/vramsim/configs/
	install -m 644 plots/*.gp $(DESTDIR)$(PREFIX)/share/vramsim/plots/
	if [ -f lib/libvramcap.so ]; then \
	  install -d $(DESTDIR)$(PREFIX)/lib && install -m 755 lib/libvramcap.so $(DESTDIR)$(PREFIX)/lib/ && \
	  install -m 755 bin/vramcap $(DESTDIR)$(PREFIX)/bin/ && \
	  install -d $(DESTDIR)$(PREFIX)/share/vramsim/python-hook && \
	  install -m 644 capture/python-hook/sitecustomize.py $(DESTDIR)$(PREFIX)/share/vramsim/python-hook/; fi

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/bin/vramsim $(DESTDIR)$(PREFIX)/bin/vramcap \
	  $(DESTDIR)$(PREFIX)/lib/libvramcap.so $(DESTDIR)$(PREFIX)/share/vramsim \
	  $(DESTDIR)$(PYTHONDIR)/vramsim

clean:
	rm -rf build bin lib

-include $(SIM_OBJS:.o=.d) $(B)/sim/cli/main.d
-include bench/bench.mk
-include tests/fuzz/fuzz.mk
