# Fuzzing (HACKING.md, "Fuzzing"): three libFuzzer targets, fuzz_trace (the
# trace reader, the report's loader and analyses), fuzz_proto (the
# collector's checks of what a client sends, and summary mode's
# aggregation) and fuzz_names (names of any bytes through each output),
# on seeds made from real traces of this build and hostile names (seeds.sh).
#   make fuzz [FUZZ_SECONDS=60]   each target that long (needs clang's libFuzzer)
#   make test-fuzz                each FUZZ_TEST_SECONDS from the seeds alone (make
#                                 test's step, which runs the targets beside each
#                                 other and the suites); without clang's libFuzzer,
#                                 the seeds and tests/fuzz/regress/ replayed once
#                                 under ASan/UBSan (replay.c)
# Under $(BUILD)/fuzz/: the binaries, seeds/ (remade when the preload or
# the collector changes), corpus/ (what make fuzz found, kept between runs),
# test-corpus/ (test-fuzz's, new each run), crashes/ (failing inputs),
# fuzz_NAME.log.

FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 5
FUZZ_TARGETS := trace proto names
FUZZ := $(BUILD)/fuzz
FUZZ_BINS := $(addprefix $(FUZZ)/fuzz_,$(FUZZ_TARGETS))
FUZZ_REPLAYS := $(addprefix $(FUZZ)/replay/fuzz_,$(FUZZ_TARGETS))
FUZZ_SEEDS := $(FUZZ)/seeds/.made

# The targets link the ASan/UBSan objects of test-asan: compiled by
# FUZZ_CC with libFuzzer's coverage where it has libFuzzer (the Makefile's
# ASAN_CC), the targets then linked with libFuzzer; without it, with a
# main that replays files (replay.c).
fuzz_libs = $(call objs,$(1),$(ORACLE_SRC)) $(1)/libreport.a $(1)/libcollector.a $(1)/libcommon.a
$(FUZZ_BINS): $(FUZZ)/fuzz_%: $(BUILD)/asan/obj/tests/fuzz/fuzz_%.o $(call fuzz_libs,$(BUILD)/asan/obj)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(REPORT_LDLIBS)
$(FUZZ_REPLAYS): $(FUZZ)/replay/fuzz_%: $(BUILD)/asan/obj/tests/fuzz/fuzz_%.o \
                 $(BUILD)/asan/obj/tests/fuzz/replay.o $(call fuzz_libs,$(BUILD)/asan/obj)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(ASAN_CC) $(ASAN_FLAGS) -o $@ $^ $(REPORT_LDLIBS)

# The seeds: real traces of the test programs, and fuzz_proto's made from them.
$(FUZZ)/proto-seeds: $(BUILD)/obj/tests/fuzz/proto_seeds.o $(BUILD)/obj/libcommon.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) -o $@ $^ $(LDLIBS_BASE)
$(FUZZ_SEEDS): tests/fuzz/seeds.sh $(FUZZ)/proto-seeds $(BUILD)/libopprof.so $(BUILD)/opprof-collector \
               $(BUILD)/tests/progs/scenarios $(BUILD)/tests/progs/stack_calls \
               $(filter $(BUILD)/tests/double/%,$(PROGS))
	$(call quiet,SEEDS,$(@D))tests/fuzz/seeds.sh $(BUILD) $(@D) && touch $@

# Whether FUZZ_CC links libFuzzer (run.sh check): asked where a rule needs
# to know, and when make starts only for the goals that build the targets
# for the tests, so that they are prerequisites like any other (built by
# the one make, with every job slot).
FUZZ_CHECK = tests/fuzz/run.sh check '$(FUZZ_CC)'
ifneq ($(filter fuzz-build test-fuzz test-build test-runs $(RUNS)/fuzz/%,$(MAKECMDGOALS)),)
FUZZ_LIBFUZZER := $(shell $(FUZZ_CHECK) >/dev/null && echo 1)
ASAN_CLANG := $(FUZZ_LIBFUZZER)
endif

.PHONY: fuzz fuzz-build test-fuzz fuzz-libfuzzer
fuzz-libfuzzer: $(FUZZ_BINS) $(FUZZ_SEEDS)
	@:

fuzz: all
	@why=$$($(FUZZ_CHECK)) || { echo "opprof: make fuzz needs clang's libFuzzer: $$why" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(PAR) fuzz-libfuzzer
	@tests/fuzz/run.sh fuzz $(FUZZ) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# What test-fuzz runs: clang's targets when it has libFuzzer, else the
# replays.
fuzz-build: $(if $(FUZZ_LIBFUZZER),$(FUZZ_BINS),$(FUZZ_REPLAYS)) $(FUZZ_SEEDS)

# make test's step, a target at a time (a run of tests/tests.mk each).
FUZZ_RUNS := $(patsubst %,$(RUNS)/fuzz/%.log,$(FUZZ_TARGETS))
FUZZ_TEST = tests/fuzz/run.sh test '$(FUZZ_CC)' $(FUZZ) $(FUZZ_TEST_SECONDS)
test-fuzz: fuzz-build
	@$(FUZZ_TEST) $(FUZZ_TARGETS)
$(FUZZ_RUNS): $(RUNS)/fuzz/%.log: fuzz-build FORCE
	@tests/runs.sh run $@ $(FUZZ_TEST) $*
