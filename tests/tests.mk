# Tests (Check). Unit suites: tests/unit/test_NAME.c defines `Suite *suite_NAME(void)`;
# end-to-end suites: tests/e2e/test_NAME.c likewise; programs they run under
# the preload: tests/progs/NAME.c -> build/tests/progs/NAME.

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
REPORT_LIB_SRC := $(filter-out report/main.c,$(wildcard report/*.c)) $(COMMON_SRC) \
                  $(filter-out collector/main.c,$(wildcard collector/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
E2E_SRC  := $(wildcard tests/e2e/test_*.c)
PROG_SRC := $(wildcard tests/progs/*.c)
PROGS    := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(PROG_SRC))

# suites.h: one X(name) per suite file, so adding a suite is adding a file.
$(BUILD)/tests/unit_suites.h: $(UNIT_SRC) $(BUILD)/.dir
	@printf '%s\n' $(patsubst tests/unit/test_%.c,'X(%)',$(UNIT_SRC)) > $@
$(BUILD)/tests/e2e_suites.h: $(E2E_SRC) $(BUILD)/.dir
	@printf '%s\n' $(patsubst tests/e2e/test_%.c,'X(%)',$(E2E_SRC)) > $@

$(BUILD)/tests/unit: $(UNIT_SRC) tests/runner.c tests/testutil.c tests/testutil.h $(REPORT_LIB_SRC) $(HDRS) $(BUILD)/tests/unit_suites.h
	$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"unit_suites.h"' -o $@ tests/runner.c tests/testutil.c $(UNIT_SRC) $(REPORT_LIB_SRC) $(CHECK_LIBS) $(LDLIBS_BASE)

$(BUILD)/tests/e2e: $(E2E_SRC) tests/runner.c tests/testutil.c tests/testutil.h $(REPORT_LIB_SRC) $(HDRS) $(BUILD)/tests/e2e_suites.h
	$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"e2e_suites.h"' -o $@ tests/runner.c tests/testutil.c $(E2E_SRC) $(REPORT_LIB_SRC) $(CHECK_LIBS) $(LDLIBS_BASE)

# Test programs link the real OpenBLAS (Debian's libopenblas-dev).
$(BUILD)/tests/progs/%: tests/progs/%.c $(BUILD)/.dir
	@mkdir -p $(BUILD)/tests/progs
	$(CC) -std=gnu11 -O1 -g $(WARN) -pthread -o $@ $< -lopenblas -lm

# The same unit suites and the report built with AddressSanitizer and UBSan.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(BUILD)/asan/unit: $(UNIT_SRC) tests/runner.c tests/testutil.c $(REPORT_LIB_SRC) $(HDRS) $(BUILD)/tests/unit_suites.h
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) $(CHECK_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"unit_suites.h"' -o $@ tests/runner.c tests/testutil.c $(UNIT_SRC) $(REPORT_LIB_SRC) $(CHECK_LIBS) $(LDLIBS_BASE)
$(BUILD)/asan/opprof: $(REPORT_SRC) $(HDRS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) -o $@ $(REPORT_SRC) $(LDLIBS_BASE)
$(BUILD)/asan/opprof-collector: $(COLLECTOR_SRC) $(HDRS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) -o $@ $(COLLECTOR_SRC) $(LDLIBS_BASE)

test-unit: deps all $(BUILD)/tests/unit
	$(BUILD)/tests/unit

test-e2e: deps all $(BUILD)/tests/e2e $(PROGS)
	OPPROF_BUILD=$(abspath $(BUILD)) OPPROF_SRC=$(CURDIR) $(BUILD)/tests/e2e

# Sanitizers: unit suites, plus the end-to-end suites with the collector and
# report tool swapped for their ASan/UBSan builds.
test-asan: deps all $(BUILD)/asan/unit $(BUILD)/asan/opprof $(BUILD)/asan/opprof-collector $(BUILD)/tests/e2e $(PROGS)
	ASAN_OPTIONS=detect_leaks=1 $(BUILD)/asan/unit
	OPPROF_BUILD=$(abspath $(BUILD)) OPPROF_SRC=$(CURDIR) OPPROF_TOOL_DIR=$(abspath $(BUILD))/asan \
	  OPPROF_LIB=$(abspath $(BUILD))/libopprof.so \
	  OPPROF_COLLECTOR=$(abspath $(BUILD))/asan/opprof-collector \
	  ASAN_OPTIONS=detect_leaks=0 $(BUILD)/tests/e2e

test: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tests/unit $(BUILD)/tests/e2e $(PROGS)
	@$(MAKE) --no-print-directory test-unit test-e2e test-asan
