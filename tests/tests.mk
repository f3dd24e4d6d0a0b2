# Tests (Check). Unit suites: tests/unit/test_NAME.c defines `Suite *suite_NAME(void)`;
# end-to-end suites: tests/e2e/test_NAME.c likewise; programs they run under
# the preload: tests/progs/NAME.c -> build/tests/progs/NAME.

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
E2E_SRC  := $(wildcard tests/e2e/test_*.c)
PROG_SRC := $(wildcard tests/progs/*.c)
PROGS    := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(PROG_SRC))
UNIT_SUITES := $(patsubst tests/unit/test_%.c,%,$(UNIT_SRC))
E2E_SUITES  := $(patsubst tests/e2e/test_%.c,%,$(E2E_SRC))
# make test's runs: their output, one folder a pass.
RUNS := $(BUILD)/tests/runs

# Unit tests feed CUPTI's own record structs through the agent's converter,
# iterated by the real libcupti (which parses buffers without a GPU).
UNIT_CUDA_CFLAGS :=
UNIT_CUDA_SRC :=
UNIT_CUDA_LIBS :=
ifeq ($(HAVE_CUDA),1)
CUPTI_LIBDIR := $(dir $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so)))
UNIT_CUDA_CFLAGS := -DOPP_HAVE_CUDA -I$(dir $(CUPTI_INC)) -I$(CUDA_HOME)/include -I$(BUILD)/gen -Ipreload
UNIT_CUDA_SRC := preload/cuda/cupti_conv.c
UNIT_CUDA_LIBS := -L$(CUPTI_LIBDIR) -lcupti -Wl,-rpath,$(CUPTI_LIBDIR)
endif

# Test objects see every layer's headers; the unit suites and the converter
# they drive also CUPTI's.
TEST_CFLAGS := $(CHECK_CFLAGS) -Itests -Ireport -Icollector -Ipreload -I$(BUILD)/tests
$(BUILD)/obj/tests/%.o $(BUILD)/asan/obj/tests/%.o: LAYER_CFLAGS = $(TEST_CFLAGS)
$(BUILD)/obj/tests/unit/%.o $(BUILD)/asan/obj/tests/unit/%.o: LAYER_CFLAGS = $(TEST_CFLAGS) $(UNIT_CUDA_CFLAGS)
# The table test expands the preload's tables, CUDA's generated one too.
$(BUILD)/obj/tests/unit/test_tables.o $(BUILD)/asan/obj/tests/unit/test_tables.o: | $(PRELOAD_GEN)
$(addprefix $(BUILD)/obj/,$(UNIT_CUDA_SRC:.c=.o)) $(addprefix $(BUILD)/asan/obj/,$(UNIT_CUDA_SRC:.c=.o)): \
  LAYER_CFLAGS = $(UNIT_CUDA_CFLAGS)

# suites.h: one X(name) per suite file, so adding a suite is adding a file
# (rewritten only when the list changes). The runner is built once per list.
define suites_h
$(BUILD)/tests/$(1)_suites.h: FORCE
	@mkdir -p $$(@D)
	@printf '%s\n' $$(patsubst tests/$(1)/test_%.c,'X(%)',$$($(2))) > $$@.tmp
	@cmp -s $$@.tmp $$@ && rm $$@.tmp || mv $$@.tmp $$@
endef
define runner_o
$(2)/tests/runner_$(1).o: tests/runner.c $(BUILD)/tests/$(1)_suites.h
	@mkdir -p $$(@D)
	$$(call quiet,CC,$$@)$(4) $$(CFLAGS_BASE) $(3) $$(TEST_CFLAGS) -DSUITES_H='"$(1)_suites.h"' $$(DEPFLAGS) -c -o $$@ $$<
endef
$(eval $(call suites_h,unit,UNIT_SRC))
$(eval $(call suites_h,e2e,E2E_SRC))
$(eval $(call runner_o,unit,$(BUILD)/obj,,$$(CC)))
$(eval $(call runner_o,e2e,$(BUILD)/obj,,$$(CC)))
$(eval $(call runner_o,unit,$(BUILD)/asan/obj,-O1 $$(ASAN_FLAGS),$$(ASAN_CC)))
.PHONY: FORCE
FORCE:

# The unit runners' allocations can be made to fail (tests/failalloc.h).
UNIT_HELPERS := tests/failalloc.c
UNIT_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray

# What a test binary links: its runner, the helpers (testutil.c, the trace
# builder tracebuild.c, the loaded model of every call in oracle/), its
# suites, then the layers (report and collector before common, which both
# use).
ORACLE_SRC := $(wildcard tests/oracle/*.c)
test_objs = $(1)/tests/runner_$(2).o \
            $(call objs,$(1),tests/testutil.c tests/tracebuild.c $(ORACLE_SRC) $(3)) \
            $(1)/libreport.a $(1)/libcollector.a $(1)/libcommon.a
$(BUILD)/tests/unit: $(call test_objs,$(BUILD)/obj,unit,$(UNIT_SRC) $(UNIT_CUDA_SRC) $(UNIT_HELPERS))
	$(call quiet,LD,$@)$(CC) $(UNIT_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(UNIT_CUDA_LIBS) $(REPORT_LDLIBS)
$(BUILD)/tests/e2e: $(call test_objs,$(BUILD)/obj,e2e,$(E2E_SRC))
	$(call quiet,LD,$@)$(CC) -o $@ $^ $(CHECK_LIBS) $(REPORT_LDLIBS)
$(BUILD)/asan/unit: $(call test_objs,$(BUILD)/asan/obj,unit,$(UNIT_SRC) $(UNIT_CUDA_SRC) $(UNIT_HELPERS))
	$(call quiet,LD,$@)$(ASAN_CC) $(ASAN_FLAGS) $(UNIT_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(UNIT_CUDA_LIBS) $(REPORT_LDLIBS)

# The test double of the CUDA runtime and CUPTI (tests/double/cuda_double.c,
# soname libcudart.so.13) and the one program that links it.
ifeq ($(HAVE_CUDA),1)
DOUBLE_DIR := $(BUILD)/tests/double
$(DOUBLE_DIR)/libcudart.so.13: tests/double/cuda_double.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -I$(dir $(CUPTI_INC)) \
	  -I$(CUDA_HOME)/include -Wl,-soname,libcudart.so.13 -o $@ $<
$(DOUBLE_DIR)/gpu_app: tests/double/gpu_app.c $(DOUBLE_DIR)/libcudart.so.13
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< -L$(DOUBLE_DIR) \
	  -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'
PROGS += $(DOUBLE_DIR)/libcudart.so.13 $(DOUBLE_DIR)/gpu_app
# cuBLAS double (libcublas.so.13) over the runtime double, and its program
# (external correlation: tests/e2e/test_gpu_double.c), when cuBLAS's header is installed.
ifneq ($(wildcard $(CUDA_HOME)/include/cublas_api.h),)
$(DOUBLE_DIR)/libcublas.so.13: tests/double/cublas_double.c $(DOUBLE_DIR)/libcudart.so.13
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -I$(CUDA_HOME)/include \
	  -Wl,-soname,libcublas.so.13 -o $@ $< -L$(DOUBLE_DIR) -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'
$(DOUBLE_DIR)/blas_app: tests/double/blas_app.c $(DOUBLE_DIR)/libcublas.so.13
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< -L$(DOUBLE_DIR) \
	  -l:libcublas.so.13 -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'
PROGS += $(DOUBLE_DIR)/libcublas.so.13 $(DOUBLE_DIR)/blas_app
endif
endif

# The CUDA symbol fallback (tests/e2e/test_cuda.c), programs from tests/cuda/
# into $(BUILD)/tests/cuda/. Always: dlsym behaviour (gcc only). With the
# toolkit: runtime programs built by nvcc (shared cudart, the same with the
# per-thread default stream, static cudart), the toolkit's stub driver
# linked as stub/libcuda.so.1, a fake driver as fakecuda/libcuda.so.1.
CUDA_TEST_DIR := $(BUILD)/tests/cuda
$(CUDA_TEST_DIR)/libnextwrap.so: tests/cuda/nextwrap.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $<
$(CUDA_TEST_DIR)/dlsym_probe: tests/cuda/dlsym_probe.c $(CUDA_TEST_DIR)/libnextwrap.so
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -L$(CUDA_TEST_DIR) -lnextwrap -Wl,-rpath,'$$ORIGIN' -ldl
PROGS += $(CUDA_TEST_DIR)/libnextwrap.so $(CUDA_TEST_DIR)/dlsym_probe
ifeq ($(HAVE_CUDA),1)
NVCC_FLAGS := -O1 -g -Xcompiler -Wall $(if $(filter 1,$(WERROR)),-Xcompiler -Werror)
CUDA_STUB := $(firstword $(wildcard $(CUDA_HOME)/lib64/stubs/libcuda.so $(CUDA_HOME)/lib/stubs/libcuda.so))
$(CUDA_TEST_DIR)/rt_shared: tests/cuda/rt_calls.cu
	@mkdir -p $(@D)
	$(call quiet,NVCC,$@)$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared -o $@ $<
$(CUDA_TEST_DIR)/rt_ptsz: tests/cuda/rt_calls.cu
	@mkdir -p $(@D)
	$(call quiet,NVCC,$@)$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared --default-stream per-thread -o $@ $<
$(CUDA_TEST_DIR)/profiler_range: tests/cuda/profiler_range.cu
	@mkdir -p $(@D)
	$(call quiet,NVCC,$@)$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared -o $@ $<
$(CUDA_TEST_DIR)/rt_static: tests/cuda/rt_calls.cu
	@mkdir -p $(@D)
	$(call quiet,NVCC,$@)$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -o $@ $<
$(CUDA_TEST_DIR)/stub/libcuda.so.1: $(CUDA_STUB)
	@mkdir -p $(@D)
	$(call quiet,LN,$@)ln -sf $(CUDA_STUB) $@
$(CUDA_TEST_DIR)/fakecuda/libcuda.so.1: tests/cuda/fake_driver.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -o $@ $<
$(CUDA_TEST_DIR)/drv_calls: tests/cuda/drv_calls.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -ldl
PROGS += $(addprefix $(CUDA_TEST_DIR)/,rt_shared rt_ptsz rt_static stub/libcuda.so.1 fakecuda/libcuda.so.1 drv_calls profiler_range)
endif

# One file per library family (tests/NAME.mk) adds its programs to PROGS.
include $(sort $(filter-out tests/tests.mk,$(wildcard tests/*.mk)))

# Test programs link the real OpenBLAS (Debian's libopenblas-dev); but
# unresolved, whose weak references no library it loads defines, unload
# and scopes, the plugin hosts, whose plugins bring their library (OpenBLAS
# here; oneDNN in cpulibs.mk, cuDNN in gpulibs.mk), and smallstack, whose
# thread's stack is smaller than OpenBLAS's TLS.
PROGS_ALONE := unresolved unload scopes smallstack
$(patsubst %,$(BUILD)/tests/progs/%,$(PROGS_ALONE)): # unload's OpenBLAS plugin, in each build.
$(BUILD)/tests/progs/libblas_plugin.so $(BUILD)/tsan/tests/progs/libblas_plugin.so: tests/plugin/blas_plugin.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< -lopenblas
PROGS += $(BUILD)/tests/progs/libblas_plugin.so
# notice's exitreturn plugin, whose destructor runs after the preload's.
$(BUILD)/tests/progs/liblate_plugin.so $(BUILD)/tsan/tests/progs/liblate_plugin.so: tests/plugin/late_plugin.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< -lopenblas
PROGS += $(BUILD)/tests/progs/liblate_plugin.so
# life's exec of a slow starter: a library whose constructor runs 400 ms.
$(BUILD)/tests/progs/libslow_start.so $(BUILD)/tsan/tests/progs/libslow_start.so: tests/plugin/slow_start.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $<
PROGS += $(BUILD)/tests/progs/libslow_start.so
# scopes' plugins: one source linking OpenBLAS, and linking Debian's
# reference BLAS and LAPACK (libblas3, liblapack3), which its RUNPATH finds
# whichever libblas.so.3 and liblapack.so.3 the alternatives chose.
REF_BLAS_DIR := /usr/lib/x86_64-linux-gnu/blas
REF_LAPACK_DIR := /usr/lib/x86_64-linux-gnu/lapack
$(BUILD)/tests/progs/libsolve_openblas.so: tests/plugin/solve_plugin.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< -lopenblas
PROGS += $(BUILD)/tests/progs/libsolve_openblas.so
ifeq ($(words $(wildcard $(REF_BLAS_DIR)/libblas.so.3 $(REF_LAPACK_DIR)/liblapack.so.3)),2)
$(BUILD)/tests/progs/libsolve_reference.so: tests/plugin/solve_plugin.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< \
	  $(REF_LAPACK_DIR)/liblapack.so.3 $(REF_BLAS_DIR)/libblas.so.3 \
	  -Wl,-rpath,$(REF_LAPACK_DIR):$(REF_BLAS_DIR)
PROGS += $(BUILD)/tests/progs/libsolve_reference.so
endif
$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $<
$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -pthread -o $@ $< -lopenblas -lm

# The passes: each runner with its environment. Sanitizers: the unit
# suites, and the end-to-end suites with the collector and report tool
# swapped for their ASan/UBSan builds.
TEST_ASAN_BINS := $(BUILD)/asan/unit $(BUILD)/asan/opprof $(BUILD)/asan/opprof-collector
E2E_ENV = OPPROF_BUILD=$(abspath $(BUILD)) OPPROF_SRC=$(CURDIR)
RUN_UNIT = $(BUILD)/tests/unit
RUN_E2E = env $(E2E_ENV) $(BUILD)/tests/e2e
RUN_ASAN_UNIT = env ASAN_OPTIONS=detect_leaks=1 $(BUILD)/asan/unit
RUN_ASAN_E2E = env CK_TIMEOUT_MULTIPLIER=2 $(E2E_ENV) OPPROF_TOOL_DIR=$(abspath $(BUILD))/asan \
  OPPROF_LIB=$(abspath $(BUILD))/libopprof.so OPPROF_COLLECTOR=$(abspath $(BUILD))/asan/opprof-collector \
  OPPROF_ANALYZE=$(abspath $(BUILD))/analyze ASAN_OPTIONS=detect_leaks=0 $(BUILD)/tests/e2e
E2E_NEEDS := all torch-shim $(BUILD)/tests/e2e $(PROGS)

# Each pass whole, one suite after another, its output as Check writes it.
test-unit: all $(BUILD)/tests/unit
	$(RUN_UNIT)
test-e2e: $(E2E_NEEDS)
	$(RUN_E2E)
test-asan: all $(TEST_ASAN_BINS) $(E2E_NEEDS)
	$(RUN_ASAN_UNIT)
	$(RUN_ASAN_E2E)

# The corpus suite's expected outputs (tests/corpus/expected/) recorded
# again from this build: after a change to an output that is meant, the
# reason said in the commit (HACKING.md, "The corpus").
.PHONY: corpus-update
corpus-update: all $(BUILD)/tests/e2e
	OPPROF_CORPUS_UPDATE=1 $(RUN_E2E) corpus

# make test's runs: each suite of each pass is a job of its own, which make
# runs beside the others, its output in $(RUNS)/PASS/SUITE.log
# (tests/runs.sh). A test case tagged "timing" (tcase_set_tags: it times
# real processes, so it wants the cores to itself) is left out there; each
# pass runs its timing cases afterwards, beside the other passes' timing
# cases and nothing else (they mostly wait), a job for each suite that has
# them (its file tags a case "timing"), $(RUNS)/PASS/timing-SUITE.log, its
# cases also tagged "apart" in one more, timing-SUITE-apart.log, and one
# job for the pass's other suites, timing-others.log (no case, unless a
# file tags one in a way that grep misses: then it runs there).
# $(call test_pass,PASS,RUNNER,SUITES,NEEDS,TIMED,APART): TIMED, APART the
# suites of tests/unit or tests/e2e with cases tagged so.
tagged_suites = $(patsubst tests/$(1)/test_%.c,%,$(shell grep -l 'tcase_set_tags.*$(2)' tests/$(1)/test_*.c))
UNIT_TIMED := $(call tagged_suites,unit,timing)
UNIT_APART := $(call tagged_suites,unit,apart)
E2E_TIMED := $(call tagged_suites,e2e,timing)
E2E_APART := $(call tagged_suites,e2e,apart)
TEST_PASSES :=
define test_pass
TEST_PASSES += $(1)
$(1)_RUNS := $$(patsubst %,$$(RUNS)/$(1)/%.log,$(3))
$(1)_TIMED := $$(filter $(5),$(3))
$(1)_APART := $$(filter $(6),$$($(1)_TIMED))
$(1)_TIMING := $$(patsubst %,$$(RUNS)/$(1)/timing-%.log,$$($(1)_TIMED)) \
               $$(patsubst %,$$(RUNS)/$(1)/timing-%-apart.log,$$($(1)_APART)) $$(RUNS)/$(1)/timing-others.log
$$($(1)_RUNS): $$(RUNS)/$(1)/%.log: $(4) FORCE
	@tests/runs.sh run $$@ env CK_EXCLUDE_TAGS="timing $$(EXCLUDE_$(1))" $$(RUN_$(2)) $$*
$$(patsubst %,$$(RUNS)/$(1)/timing-%.log,$$($(1)_TIMED)): $$(RUNS)/$(1)/timing-%.log: $(4) FORCE
	@tests/runs.sh run $$@ env CK_INCLUDE_TAGS=timing CK_EXCLUDE_TAGS="$$(if $$(filter $$*,$$($(1)_APART)),apart)" \
	  $$(RUN_$(2)) $$*
$$(patsubst %,$$(RUNS)/$(1)/timing-%-apart.log,$$($(1)_APART)): $$(RUNS)/$(1)/timing-%-apart.log: $(4) FORCE
	@tests/runs.sh run $$@ env CK_INCLUDE_TAGS=apart $$(RUN_$(2)) $$*
$$(RUNS)/$(1)/timing-others.log: $(4) FORCE
	@tests/runs.sh run $$@ env CK_INCLUDE_TAGS=timing $$(RUN_$(2)) $$(filter-out $$($(1)_TIMED),$(3))
endef
$(eval $(call test_pass,unit,UNIT,$(UNIT_SUITES),all $(BUILD)/tests/unit,$(UNIT_TIMED),$(UNIT_APART)))
$(eval $(call test_pass,e2e,E2E,$(E2E_SUITES),$(E2E_NEEDS),$(E2E_TIMED),$(E2E_APART)))
$(eval $(call test_pass,asan-unit,ASAN_UNIT,$(UNIT_SUITES),all $(BUILD)/asan/unit,$(UNIT_TIMED),$(UNIT_APART)))
# The ASan pass leaves out the cases tagged "peak": they measure the peak
# memory of the normal build's tool (what README's figures say), which
# ASan's shadow memory would measure instead; the same code runs under
# ASan on the smaller traces of the other cases.
EXCLUDE_asan-e2e := peak
# The ASan pass leaves out analyze and torch: their time is Dask's and
# PyTorch's (a cluster started per case; a Python that imports torch for
# each of 14 cases, about 40 s a pass), and the collector and report code
# they drive runs under ASan in the other suites: the JSON of rank traces
# by ranks and corpus, torch's records (strings, module layers, code
# stacks) by names and stacks, every view of a real torch training trace
# and its summary by corpus.
ASAN_E2E_SUITES := $(filter-out analyze torch,$(E2E_SUITES))
$(eval $(call test_pass,asan-e2e,ASAN_E2E,$(ASAN_E2E_SUITES),$(E2E_NEEDS) $(TEST_ASAN_BINS),$(E2E_TIMED),$(E2E_APART)))

# ThreadSanitizer: libopprof.so and the programs the end-to-end suites
# profile (tests/progs/), built with it, under the suites of threads, fork,
# exec and signals (the collector and the report tool start no thread:
# their normal builds). A report fails the step, whichever process made it:
# each goes to a file under tsan/reports/ (tests/tsan-run.sh).
TSAN_REPORTS := $(abspath $(BUILD))/tsan/reports
TSAN_SUITES ?= life robust
TSAN_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tsan/tests/progs/%,$(PROG_SRC)) \
              $(BUILD)/tsan/tests/progs/libblas_plugin.so $(BUILD)/tsan/tests/progs/liblate_plugin.so \
              $(BUILD)/tsan/tests/progs/libslow_start.so
$(patsubst %,$(BUILD)/tsan/tests/progs/%,$(PROGS_ALONE)): $(BUILD)/tsan/tests/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(call quiet,CC-TSAN,$@)$(CC) -std=gnu11 -O1 -g $(WARN) $(TSAN_FLAGS) -o $@ $<
$(BUILD)/tsan/tests/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(call quiet,CC-TSAN,$@)$(CC) -std=gnu11 -O1 -g $(WARN) $(TSAN_FLAGS) -pthread -o $@ $< -lopenblas -lm
TSAN_E2E = env CK_TIMEOUT_MULTIPLIER=3 OPPROF_BUILD=$(abspath $(BUILD))/tsan OPPROF_SRC=$(CURDIR) \
	  OPPROF_TOOL_DIR=$(abspath $(BUILD)) OPPROF_LIB=$(abspath $(BUILD))/tsan/libopprof.so \
	  OPPROF_COLLECTOR=$(abspath $(BUILD))/opprof-collector $(BUILD)/tests/e2e
TSAN_NEEDS = all $(BUILD)/tsan/libopprof.so $(TSAN_PROGS) $(BUILD)/tests/e2e
test-tsan: $(TSAN_NEEDS)
	tests/tsan-run.sh $(TSAN_REPORTS) $(TSAN_E2E) $(TSAN_SUITES)
# In make test: the cases that time nothing beside the other runs, the
# timing cases with them (tests/tests.mk's passes).
$(RUNS)/tsan/suites.log: $(TSAN_NEEDS) FORCE
	@tests/runs.sh run $@ tests/tsan-run.sh $(TSAN_REPORTS)/suites env CK_EXCLUDE_TAGS=timing \
	  $(TSAN_E2E) $(TSAN_SUITES)
# (those tagged apart in a job of their own, when a suite has them)
TSAN_APART := $(filter $(E2E_APART),$(TSAN_SUITES))
TSAN_TIMING := $(RUNS)/tsan/timing-tagged.log $(if $(TSAN_APART),$(RUNS)/tsan/timing-apart.log)
$(RUNS)/tsan/timing-tagged.log: $(TSAN_NEEDS) FORCE
	@tests/runs.sh run $@ tests/tsan-run.sh $(TSAN_REPORTS)/timing env CK_INCLUDE_TAGS=timing \
	  CK_EXCLUDE_TAGS="$(if $(TSAN_APART),apart)" $(TSAN_E2E) $(TSAN_SUITES)
$(RUNS)/tsan/timing-apart.log: $(TSAN_NEEDS) FORCE
	@tests/runs.sh run $@ tests/tsan-run.sh $(TSAN_REPORTS)/timing-apart env CK_INCLUDE_TAGS=apart \
	  $(TSAN_E2E) $(TSAN_APART)

# The layering rules, read from the #include lines (and a check that the
# script catches each kind of violation).
test-layers: test-layers-src test-layers-calls
test-layers-src:
	@scripts/check-layers.sh --self-test
	@scripts/check-layers.sh
# preload/core's files call downward only: read from its built objects
test-layers-calls: $(BUILD)/libopprof.so
	@scripts/check-layers.sh --calls $(BUILD)/pic/preload/core

# The fuzz targets (make fuzz, test-fuzz).
include tests/fuzz/fuzz.mk

# Everything the tests need, built in parallel.
test-build: all torch-shim $(BUILD)/tests/unit $(BUILD)/tests/e2e $(PROGS) $(TEST_ASAN_BINS) \
            $(BUILD)/tsan/libopprof.so $(TSAN_PROGS) fuzz-build

# make test: the build (every core), then the runs, their make left to
# start them in this order (it keeps to it when nothing is left to build):
# the fuzz targets (each runs a fixed time, whatever else runs), the
# thread, fork and signal suites under ThreadSanitizer, the end-to-end
# suites of both passes (the longest first), then the unit suites (the shortest runs, last, so
# that the others end together); then the timing cases of every pass
# (ThreadSanitizer's too), their jobs all at once with nothing else running
# (they mostly wait: 1.7 s of CPU in a pass's 25 s; the longest job about
# 7 s); then what every run said and the totals of each pass.
.PHONY: test-runs test-timing
RUNS_PAR = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell expr $(NPROC) + 1)) # runs wait, too
# The longest end-to-end suites start first, longest first (PyTorch's and
# Dask's start-up is most of their time), so that none of them is the last
# one running ($(filter) would keep E2E_SUITES' order, torch last).
E2E_LONG := $(foreach s,torch analyze top corpus export,$(filter $(s),$(E2E_SUITES)))
# and the longest unit suites (under ASan: 6 s, 6 s, 3 s) first of theirs,
# so that the last runs are the shortest
UNIT_LONG := $(foreach s,summary cpu_memory extsort,$(filter $(s),$(UNIT_SUITES)))
test-runs: $(FUZZ_RUNS) $(RUNS)/tsan/suites.log \
           $(foreach s,$(E2E_LONG),$(RUNS)/e2e/$(s).log) \
           $(foreach s,$(filter $(ASAN_E2E_SUITES),$(E2E_LONG)),$(RUNS)/asan-e2e/$(s).log) \
           $(foreach s,$(filter-out $(E2E_LONG),$(E2E_SUITES)),$(RUNS)/e2e/$(s).log) \
           $(foreach s,$(filter-out $(E2E_LONG),$(ASAN_E2E_SUITES)),$(RUNS)/asan-e2e/$(s).log) \
           $(foreach s,$(UNIT_LONG) $(filter-out $(UNIT_LONG),$(UNIT_SUITES)),$(RUNS)/asan-unit/$(s).log $(RUNS)/unit/$(s).log)
# The timing runs all at once (each a suite's cases, one after another).
TIMING_RUNS = $(TSAN_TIMING) $(foreach p,$(TEST_PASSES),$($(p)_TIMING))
TIMING_PAR = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(words $(TIMING_RUNS)))
test-timing: $(TIMING_RUNS)
test: deps test-layers-src
	@rm -rf $(RUNS)
	@$(MAKE) --no-print-directory $(PAR) test-build
	@$(MAKE) --no-print-directory test-layers-calls
	@$(MAKE) --no-print-directory $(RUNS_PAR) test-runs
	@$(MAKE) --no-print-directory $(TIMING_PAR) test-timing
	@tests/runs.sh sum $(RUNS) fuzz $(TEST_PASSES) tsan
