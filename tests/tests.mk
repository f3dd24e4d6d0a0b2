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

$(BUILD)/tests/unit: $(UNIT_SRC) tests/runner.c tests/testutil.c tests/testutil.h $(REPORT_LIB_SRC) $(UNIT_CUDA_SRC) $(HDRS) $(BUILD)/tests/unit_suites.h
	$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) $(UNIT_CUDA_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"unit_suites.h"' -o $@ tests/runner.c tests/testutil.c $(UNIT_SRC) $(REPORT_LIB_SRC) $(UNIT_CUDA_SRC) $(CHECK_LIBS) $(UNIT_CUDA_LIBS) $(REPORT_LDLIBS)

$(BUILD)/tests/e2e: $(E2E_SRC) tests/runner.c tests/testutil.c tests/testutil.h $(REPORT_LIB_SRC) $(HDRS) $(BUILD)/tests/e2e_suites.h
	$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"e2e_suites.h"' -o $@ tests/runner.c tests/testutil.c $(E2E_SRC) $(REPORT_LIB_SRC) $(CHECK_LIBS) $(REPORT_LDLIBS)

# The test double of the CUDA runtime and CUPTI (tests/double/cuda_double.c,
# soname libcudart.so.13) and the one program that links it.
ifeq ($(HAVE_CUDA),1)
DOUBLE_DIR := $(BUILD)/tests/double
$(DOUBLE_DIR)/libcudart.so.13: tests/double/cuda_double.c $(BUILD)/.dir
	@mkdir -p $(DOUBLE_DIR)
	$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -I$(dir $(CUPTI_INC)) \
	  -I$(CUDA_HOME)/include -Wl,-soname,libcudart.so.13 -o $@ $<
$(DOUBLE_DIR)/gpu_app: tests/double/gpu_app.c $(DOUBLE_DIR)/libcudart.so.13
	$(CC) -std=gnu11 -O1 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< -L$(DOUBLE_DIR) \
	  -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'
PROGS += $(DOUBLE_DIR)/libcudart.so.13 $(DOUBLE_DIR)/gpu_app
# cuBLAS double (libcublas.so.13) over the runtime double, and its program
# (external correlation: tests/e2e/test_gpu_double.c), when cuBLAS's header is installed.
ifneq ($(wildcard $(CUDA_HOME)/include/cublas_api.h),)
$(DOUBLE_DIR)/libcublas.so.13: tests/double/cublas_double.c $(DOUBLE_DIR)/libcudart.so.13
	$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -I$(CUDA_HOME)/include \
	  -Wl,-soname,libcublas.so.13 -o $@ $< -L$(DOUBLE_DIR) -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN'
$(DOUBLE_DIR)/blas_app: tests/double/blas_app.c $(DOUBLE_DIR)/libcublas.so.13
	$(CC) -std=gnu11 -O1 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< -L$(DOUBLE_DIR) \
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
$(CUDA_TEST_DIR)/libnextwrap.so: tests/cuda/nextwrap.c $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $<
$(CUDA_TEST_DIR)/dlsym_probe: tests/cuda/dlsym_probe.c $(CUDA_TEST_DIR)/libnextwrap.so
	$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -L$(CUDA_TEST_DIR) -lnextwrap -Wl,-rpath,'$$ORIGIN' -ldl
PROGS += $(CUDA_TEST_DIR)/libnextwrap.so $(CUDA_TEST_DIR)/dlsym_probe
ifeq ($(HAVE_CUDA),1)
NVCC_FLAGS := -O1 -g -Xcompiler -Wall $(if $(filter 1,$(WERROR)),-Xcompiler -Werror)
CUDA_STUB := $(firstword $(wildcard $(CUDA_HOME)/lib64/stubs/libcuda.so $(CUDA_HOME)/lib/stubs/libcuda.so))
$(CUDA_TEST_DIR)/rt_shared: tests/cuda/rt_calls.cu $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared -o $@ $<
$(CUDA_TEST_DIR)/rt_ptsz: tests/cuda/rt_calls.cu $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared --default-stream per-thread -o $@ $<
$(CUDA_TEST_DIR)/profiler_range: tests/cuda/profiler_range.cu $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -cudart=shared -o $@ $<
$(CUDA_TEST_DIR)/rt_static: tests/cuda/rt_calls.cu $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CUDA_HOME)/bin/nvcc $(NVCC_FLAGS) -o $@ $<
$(CUDA_TEST_DIR)/stub/libcuda.so.1: $(CUDA_STUB) | $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)/stub
	ln -sf $(CUDA_STUB) $@
$(CUDA_TEST_DIR)/fakecuda/libcuda.so.1: tests/cuda/fake_driver.c $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)/fakecuda
	$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -o $@ $<
$(CUDA_TEST_DIR)/drv_calls: tests/cuda/drv_calls.c $(BUILD)/.dir
	@mkdir -p $(CUDA_TEST_DIR)
	$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -ldl
PROGS += $(addprefix $(CUDA_TEST_DIR)/,rt_shared rt_ptsz rt_static stub/libcuda.so.1 fakecuda/libcuda.so.1 drv_calls profiler_range)
endif

# One file per library family (tests/NAME.mk) adds its programs to PROGS.
include $(sort $(filter-out tests/tests.mk,$(wildcard tests/*.mk)))

# Test programs link the real OpenBLAS (Debian's libopenblas-dev).
$(BUILD)/tests/progs/%: tests/progs/%.c $(BUILD)/.dir
	@mkdir -p $(BUILD)/tests/progs
	$(CC) -std=gnu11 -O1 -g $(WARN) -pthread -o $@ $< -lopenblas -lm

# The same unit suites and the report built with AddressSanitizer and UBSan.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(BUILD)/asan/unit: $(UNIT_SRC) tests/runner.c tests/testutil.c $(REPORT_LIB_SRC) $(UNIT_CUDA_SRC) $(HDRS) $(BUILD)/tests/unit_suites.h
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) $(CHECK_CFLAGS) $(UNIT_CUDA_CFLAGS) -Itests -Ireport -Icollector -I$(BUILD)/tests \
	  -DSUITES_H='"unit_suites.h"' -o $@ tests/runner.c tests/testutil.c $(UNIT_SRC) $(REPORT_LIB_SRC) $(UNIT_CUDA_SRC) $(CHECK_LIBS) $(UNIT_CUDA_LIBS) $(REPORT_LDLIBS)
$(BUILD)/asan/opprof: $(REPORT_SRC) $(HDRS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) -o $@ $(REPORT_SRC) $(REPORT_LDLIBS)
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
