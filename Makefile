# opprof: build, test and benchmark. `make` builds build/libopprof.so,
# build/opprof and build/opprof-collector; `make demo` profiles a sample;
# `make test` runs every test (unit, end to end, sanitizers).

CC      ?= gcc
BUILD   ?= build
WERROR  ?= 1
CUDA_HOME ?= /usr/local/cuda

WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wformat=2
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g
CFLAGS_BASE := -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -Icommon -pthread $(EXTRA_CFLAGS)
LDLIBS_BASE := -pthread -ldl -lm
# gzip exports: with zlib1g-dev only (without it, a .gz output is refused)
HAVE_ZLIB := $(shell printf '\043include <zlib.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
REPORT_LDLIBS := $(LDLIBS_BASE) $(if $(HAVE_ZLIB),-lz)
CFLAGS_BASE += $(if $(HAVE_ZLIB),-DOPP_HAVE_ZLIB)

COMMON_SRC := common/util.c common/ops.c common/gpu.c common/trace_write.c common/trace_read.c \
              common/summary.c
PRELOAD_SRC := $(wildcard preload/*.c preload/*.S) common/util.c common/gpu.c
COLLECTOR_SRC := $(wildcard collector/*.c) $(COMMON_SRC)
REPORT_SRC := $(wildcard report/*.c) $(COMMON_SRC)
HDRS := $(wildcard common/*.h preload/*.h collector/*.h report/*.h)

# CUDA toolkit: optional. Without it the CUDA parts are left out. The
# agent needs only CUPTI's headers at build time (it dlopens libcupti).
CUPTI_INC := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
HAVE_CUDA := $(shell test -x $(CUDA_HOME)/bin/nvcc && test -n "$(CUPTI_INC)" && echo 1)
PRELOAD_CFLAGS :=
PRELOAD_DEPS :=
ifeq ($(HAVE_CUDA),1)
PRELOAD_CFLAGS += -DOPP_HAVE_CUDA -I$(BUILD)/gen -I$(dir $(CUPTI_INC)) -I$(CUDA_HOME)/include \
                  -DOPP_CUDA_HOME='"$(CUDA_HOME)"'
PRELOAD_DEPS += $(BUILD)/gen/cuda_api.h
endif
# Unit tests feed CUPTI's own record structs through the agent's converter,
# iterated by the real libcupti (which parses buffers without a GPU).
UNIT_CUDA_CFLAGS :=
UNIT_CUDA_SRC :=
UNIT_CUDA_LIBS :=
ifeq ($(HAVE_CUDA),1)
CUPTI_LIBDIR := $(dir $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so)))
UNIT_CUDA_CFLAGS := -DOPP_HAVE_CUDA -I$(dir $(CUPTI_INC)) -I$(CUDA_HOME)/include -Ipreload
UNIT_CUDA_SRC := preload/cupti_conv.c
UNIT_CUDA_LIBS := -L$(CUPTI_LIBDIR) -lcupti -Wl,-rpath,$(CUPTI_LIBDIR)
endif

.PHONY: all deps demo test test-unit test-e2e test-asan bench clean cuda-note gen-status
all: $(BUILD)/libopprof.so $(BUILD)/opprof $(BUILD)/opprof-collector cuda-note

cuda-note:
ifneq ($(HAVE_CUDA),1)
	@echo "opprof: CUDA toolkit not found at $(CUDA_HOME): CUDA parts are off (set CUDA_HOME to enable)"
endif

$(BUILD)/.dir:
	@mkdir -p $(BUILD)/tests $(BUILD)/asan $(BUILD)/gen && touch $@

$(BUILD)/gen/cuda_api.h: scripts/gen-cuda-api.sh $(BUILD)/.dir
	scripts/gen-cuda-api.sh $(CUDA_HOME) $@

# The preload lives inside other programs: hidden symbols, static TLS.
$(BUILD)/libopprof.so: $(PRELOAD_SRC) $(HDRS) $(PRELOAD_DEPS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) $(PRELOAD_CFLAGS) -fPIC -shared -fvisibility=hidden -ftls-model=initial-exec \
	  -fno-omit-frame-pointer -Wa,--noexecstack -Wl,-z,now,-z,noexecstack -Wl,--no-undefined \
	  -o $@ $(PRELOAD_SRC) $(LDLIBS_BASE)

$(BUILD)/opprof-collector: $(COLLECTOR_SRC) $(HDRS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) -o $@ $(COLLECTOR_SRC) $(LDLIBS_BASE)

$(BUILD)/opprof: $(REPORT_SRC) $(HDRS) $(BUILD)/.dir
	$(CC) $(CFLAGS_BASE) -o $@ $(REPORT_SRC) $(REPORT_LDLIBS)

deps:
	@scripts/deps.sh

# The status names the report shows (committed; regenerate after a CUDA,
# cuDNN, NCCL, oneDNN or XNNPACK upgrade).
gen-status:
	scripts/gen-status-names.sh $(CUDA_HOME) common/status_names.h

demo: deps all
	@scripts/demo.sh

include tests/tests.mk

bench: deps all
	@scripts/bench.sh

clean:
	rm -rf $(BUILD)
