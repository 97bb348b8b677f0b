# capture.mk — builds the capture shim (lib/libvramcap.so), the vramcap
# launcher and, for `make tests`, the stub driver, the stub libcupti and
# test programs.
# Included by the top Makefile. Capture artefacts are never built with the
# sanitizers: the shim is injected into programs that are not.

CAP_CUDA_H := $(wildcard $(CUDA_HOME)/include/cuda.h)

ifeq ($(CAP_CUDA_H),)

capture:
	@echo "vramcap: CUDA toolkit not found at $(CUDA_HOME), skipping capture"

else

# bin/vramcap finds ../lib/libvramcap.so; the asan variant keeps both
# under build/asan.
CAP_LIBDIR  = $(if $(filter bin,$(BIN)),lib,$(patsubst %/,%,$(dir $(BIN)))/lib)
CAP_LIB     = $(CAP_LIBDIR)/libvramcap.so
CAP_BIN     = $(BIN)/vramcap
CAP_SRCS    = capture/recorder.c capture/realsym.c capture/vtrace-writer.c sim/base/xxh64.c capture/hooks.c capture/hooks-real.c \
              capture/hooks-timing.c capture/hooks-kernels.c capture/hooks-alloc.c capture/hooks-copy.c \
              capture/hooks-batch.c capture/hooks-graph.c capture/hooks-sync.c capture/cupti.c \
              capture/nvtx.c capture/nccl.c
CAP_HDRS    = $(wildcard capture/*.h)
CAP_CUPTI_INC = $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include) $(CUDA_HOME)/include)
CAP_CUPTI_LIBDIR = $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64) $(CUDA_HOME)/lib64)
CAP_CFLAGS  = -std=gnu11 $(WARN) -O2 -g -fPIC \
              -I$(CUDA_HOME)/include -I$(CAP_CUPTI_INC) -Icapture -Isim \
              -DVRAMCAP_CUPTI_DIR='"$(CAP_CUPTI_LIBDIR)"'

capture: $(CAP_LIB) $(CAP_BIN)

$(CAP_LIB): $(CAP_SRCS) $(CAP_HDRS) capture/libvramcap.map capture/capture.mk
	@mkdir -p $(dir $@)
	$(CC) $(CAP_CFLAGS) -shared -Wl,--version-script=capture/libvramcap.map \
	  -Wl,-z,defs -o $@ $(CAP_SRCS) -ldl -lpthread

# The source tree's hook is vramcap's last place to look (a build outside
# bin/, as the asan one, has no ../capture beside it).
$(CAP_BIN): capture/vramcap.c capture/capture.mk
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -O2 -g -DVRAMCAP_HOOK_SRC='"$(CURDIR)/capture/python-hook"' -o $@ $<

# ---- test-only stub driver and programs (tests/capture-*.sh) ----
CAP_STUB_DIR = $(B)/tests/stub-cuda
CAP_STUB     = $(CAP_STUB_DIR)/libcuda.so.1
CAP_CUPTI_STUB = $(CAP_STUB_DIR)/libcupti.so
CAP_TFLAGS   = -std=gnu11 $(WARN) -O1 -g -I$(CUDA_HOME)/include -I$(CAP_CUPTI_INC) -Itests/stub-cuda
CAP_PROGS    = $(CAP_STUB_DIR)/prog-linked $(CAP_STUB_DIR)/prog-dlopen \
               $(CAP_STUB_DIR)/prog-threads $(CAP_STUB_DIR)/prog-crash \
               $(CAP_STUB_DIR)/bench-launch $(CAP_STUB_DIR)/prog-nvtx \
               $(CAP_STUB_DIR)/prog-more-linked $(CAP_STUB_DIR)/prog-more-dlopen \
               $(CAP_STUB_DIR)/prog-graph-linked $(CAP_STUB_DIR)/prog-graph-dlopen \
               $(CAP_STUB_DIR)/prog-managed \
               $(CAP_STUB_DIR)/prog-copies-linked $(CAP_STUB_DIR)/prog-copies-dlopen \
               $(CAP_STUB_DIR)/prog-manyfuncs \
               $(CAP_STUB_DIR)/prog-nccl $(CAP_STUB_DIR)/prog-nccl-local
CAP_LINK_STUB = -L$(CAP_STUB_DIR) -l:libcuda.so.1
CAP_NCCL_STUB = $(CAP_STUB_DIR)/libnccl.so.2

# The programs share check()/CK() and the dlopen + cuGetProcAddress lookup.
$(CAP_PROGS): tests/stub-cuda/prog-common.h

$(CAP_STUB): tests/stub-cuda/libcuda-stub.c tests/stub-cuda/stub-trace.h
	@mkdir -p $(dir $@)
	$(CC) $(CAP_TFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ $< -ldl -lpthread

# The stub libnccl (tests/capture-nccl.sh): not -Bsymbolic, so that its
# calls to its own ncclGroupStart/End go through the shim's, as NCCL's do.
$(CAP_NCCL_STUB): tests/stub-cuda/libnccl-stub.c tests/stub-cuda/stub-nccl.h $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -fPIC -shared -Wl,-soname,libnccl.so.2 -Wl,-z,defs -o $@ $< $(CAP_LINK_STUB)

$(CAP_STUB_DIR)/prog-nccl: tests/stub-cuda/prog-nccl.c tests/stub-cuda/stub-nccl.h $(CAP_NCCL_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< -L$(CAP_STUB_DIR) -l:libnccl.so.2 $(CAP_LINK_STUB)

# The same calls from a library opened with RTLD_LOCAL (prog-nccl-local).
$(CAP_STUB_DIR)/libnccl-user.so: tests/stub-cuda/prog-nccl.c tests/stub-cuda/stub-nccl.h $(CAP_NCCL_STUB)
	$(CC) $(CAP_TFLAGS) -DNCCL_USER_LIB -fPIC -shared -Wl,-z,defs -o $@ $< -L$(CAP_STUB_DIR) -l:libnccl.so.2 \
	  $(CAP_LINK_STUB)

$(CAP_STUB_DIR)/prog-nccl-local: tests/stub-cuda/prog-nccl-local.c $(CAP_STUB_DIR)/libnccl-user.so
	$(CC) $(CAP_TFLAGS) -o $@ $< -ldl

# Where the CUDA install has NCCL: the wrap against the real libnccl.
CAP_NCCL_H := $(wildcard $(CUDA_HOME)/include/nccl.h)
CAP_NCCL_LIB := $(wildcard $(CUDA_HOME)/lib64/libnccl.so.2)
ifneq ($(and $(CAP_NCCL_H),$(CAP_NCCL_LIB)),)
CAP_PROGS += $(CAP_STUB_DIR)/prog-nccl-real
$(CAP_STUB_DIR)/prog-nccl-real: tests/stub-cuda/prog-nccl-real.c
	@mkdir -p $(dir $@)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_NCCL_LIB) -Wl,-rpath,$(dir $(CAP_NCCL_LIB))
endif

# The stub libcupti (tests/capture-cupti.sh): finds the stub driver at run time.
$(CAP_CUPTI_STUB): tests/stub-cuda/libcupti-stub.c tests/stub-cuda/stub-trace.h
	@mkdir -p $(dir $@)
	$(CC) $(CAP_TFLAGS) -fPIC -shared -Wl,-soname,libcupti.so -Wl,-z,defs -o $@ $< -ldl -lpthread

# A CUPTI client that logs what the stubs report (checks the stubs themselves).
CAP_CUPTI_PROBE = $(CAP_STUB_DIR)/libcupti-probe.so
$(CAP_CUPTI_PROBE): tests/stub-cuda/cupti-probe.c $(CAP_CUPTI_STUB)
	$(CC) $(CAP_TFLAGS) -fPIC -shared -Wl,-z,defs -o $@ $< -L$(CAP_STUB_DIR) -l:libcupti.so \
	  -Wl,-rpath,'$$ORIGIN'

$(CAP_STUB_DIR)/prog-linked: tests/stub-cuda/prog-basic.c tests/stub-cuda/prog-funcs.h tests/stub-cuda/prog-linked.h $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB)

$(CAP_STUB_DIR)/prog-dlopen: tests/stub-cuda/prog-basic.c tests/stub-cuda/prog-funcs.h $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -DVIA_DLOPEN -o $@ $< -ldl

$(CAP_STUB_DIR)/prog-threads: tests/stub-cuda/prog-threads.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -lpthread

$(CAP_STUB_DIR)/prog-crash: tests/stub-cuda/prog-crash.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB)

$(CAP_STUB_DIR)/prog-more-linked: tests/stub-cuda/prog-more.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -lpthread -ldl

$(CAP_STUB_DIR)/prog-more-dlopen: tests/stub-cuda/prog-more.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -DVIA_DLOPEN -o $@ $< -lpthread -ldl

$(CAP_STUB_DIR)/prog-copies-linked: tests/stub-cuda/prog-copies.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -ldl

$(CAP_STUB_DIR)/prog-copies-dlopen: tests/stub-cuda/prog-copies.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -DVIA_DLOPEN -o $@ $< -ldl

$(CAP_STUB_DIR)/prog-graph-linked: tests/stub-cuda/prog-graph.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -ldl

$(CAP_STUB_DIR)/prog-graph-dlopen: tests/stub-cuda/prog-graph.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -DVIA_DLOPEN -o $@ $< -ldl

$(CAP_STUB_DIR)/prog-nvtx: tests/stub-cuda/prog-nvtx.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -lpthread -ldl

$(CAP_STUB_DIR)/prog-manyfuncs: tests/stub-cuda/prog-manyfuncs.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB) -lpthread

$(CAP_STUB_DIR)/prog-managed: tests/stub-cuda/prog-managed.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -o $@ $< $(CAP_LINK_STUB)

$(CAP_STUB_DIR)/bench-launch: tests/stub-cuda/bench-launch.c $(CAP_STUB)
	$(CC) $(CAP_TFLAGS) -O2 -o $@ $< $(CAP_LINK_STUB)

tests: capture $(CAP_STUB) $(CAP_CUPTI_STUB) $(CAP_CUPTI_PROBE) $(CAP_PROGS)

endif
