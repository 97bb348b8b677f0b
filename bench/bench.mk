# bench/bench.mk — `make bench` (included by the Makefile): builds the
# trace generator and runs bench/run-bench.sh, which prints a table of
# replay, reading and sweep speed and peak memory (docs/performance.md).
# `make bench BENCH_ARGS=--quick` runs a tenth of the sizes.

BENCH_ARGS ?=

$(B)/bench/gen-trace: bench/gen-trace.c $(B)/libvramsim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libvramsim.a $(LDLIBS)

bench: $(BIN)/vramsim $(B)/bench/gen-trace
	VRAMSIM=$(BIN)/vramsim GEN=$(B)/bench/gen-trace BENCH_DIR=$(B)/bench bench/run-bench.sh $(BENCH_ARGS)

# `make validate-network`: the collective model against vidur's measured
# NCCL times and the bus bandwidths published in nccl-tests threads, on
# the presets (bench/validate-network.c, docs/validation.md "Collectives
# over the network"; prints the section's tables in Markdown).
# Then the generator and the replay against Megatron-LM's published runs
# (bench/validate-megatron.sh, docs/validation.md "Megatron-LM on Selene").
VIDUR_NETWORK ?= validation/data/vidur/network

$(B)/bench/validate-network: bench/validate-network.c $(B)/libvramsim.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libvramsim.a $(LDLIBS)

validate-network: $(B)/bench/validate-network $(BIN)/vramsim
	VRAMSIM_CONFIGS=$(CURDIR)/configs $(B)/bench/validate-network $(VIDUR_NETWORK) --markdown
	bench/validate-megatron.sh $(BIN)/vramsim

# tests/validate-network.sh runs it under `make test`.
tests: $(B)/bench/validate-network
