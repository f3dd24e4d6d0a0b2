# opprof: build, test and benchmark. `make` builds build/libopprof.so,
# build/opprof and build/opprof-collector; `make demo` profiles a sample;
# `make test` runs every test (unit, end to end, sanitizers, a short fuzz
# run); `make fuzz` fuzzes longer (tests/fuzz/fuzz.mk).
#
# One object per source with its dependency file (-MMD -MP), so an edit
# rebuilds what includes it and no more; a static library per layer that
# more than one program links. Trees under $(BUILD):
#   obj/   the programs' objects and libcommon.a, libcollector.a, libreport.a
#   pic/   libopprof.so's objects (position independent, hidden symbols)
#   asan/  the same layers and tools with AddressSanitizer and UBSan
#   tsan/  libopprof.so and the test programs with ThreadSanitizer
# `make V=1` prints the whole command lines.

CC      ?= gcc
AR      ?= ar
BUILD   ?= build
WERROR  ?= 1
CUDA_HOME ?= /usr/local/cuda
V       ?= 0
Q       := $(if $(filter 1,$(V)),,@)
quiet    = $(if $(filter 1,$(V)),,@printf '  %-7s %s\n' $(1) $(2);)

WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wformat=2
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g
CFLAGS_BASE := -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -Icommon -pthread $(EXTRA_CFLAGS)
LDLIBS_BASE := -pthread -ldl -lm
DEPFLAGS := -MMD -MP
# gzip exports: with zlib1g-dev only (without it, a .gz output is refused)
HAVE_ZLIB := $(shell printf '\043include <zlib.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
# the SQLite export: with libsqlite3-dev only (without it, it is refused)
HAVE_SQLITE := $(shell printf '\043include <sqlite3.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
# `opprof top`'s full screen: with libncurses-dev only (without it, plain snapshots)
HAVE_NCURSES := $(shell printf '\043include <ncurses.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
# its wide-character library where there is one (Debian's libncurses-dev has
# both): names in UTF-8 drawn as characters, not as their bytes
HAVE_NCURSESW := $(if $(HAVE_NCURSES),$(shell printf 'int main(void){return 0;}' | \
                   $(CC) -x c - -lncursesw -o /dev/null >/dev/null 2>&1 && echo 1))
REPORT_LDLIBS := $(LDLIBS_BASE) $(if $(HAVE_ZLIB),-lz) $(if $(HAVE_SQLITE),-lsqlite3) \
                 $(if $(HAVE_NCURSES),$(if $(HAVE_NCURSESW),-lncursesw,-lncurses))
CFLAGS_BASE += $(if $(HAVE_ZLIB),-DOPP_HAVE_ZLIB) $(if $(HAVE_SQLITE),-DOPP_HAVE_SQLITE) \
               $(if $(HAVE_NCURSES),-DOPP_HAVE_NCURSES) $(if $(HAVE_NCURSESW),-DOPP_HAVE_NCURSESW)
# The ASan/UBSan build (asan/): compiled by clang, with libFuzzer's
# coverage, where clang links libFuzzer, so that the fuzz targets
# (tests/fuzz/fuzz.mk) link these same objects: one sanitizer build, not
# two; by $(CC) otherwise. Asked once, by the first recipe that needs it.
FUZZ_CC ?= clang
comma := ,
ASAN_CLANG = $(eval ASAN_CLANG := $(shell tests/fuzz/run.sh check '$(FUZZ_CC)' >/dev/null && echo 1))$(ASAN_CLANG)
ASAN_CC = $(if $(ASAN_CLANG),$(FUZZ_CC),$(CC))
ASAN_FLAGS = -fsanitize=$(if $(ASAN_CLANG),fuzzer-no-link$(comma))address,undefined \
             -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# The build steps of `make test` and `make demo` use every core unless
# the caller chose a -j of its own.
NPROC   := $(shell nproc 2>/dev/null || echo 2)
PAR      = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC))

# ---- the layers: sources ----
# common/: the trace and wire format and small utilities, used by all.
COMMON_SRC := $(wildcard common/*.c)
# collector/: the daemon; report/: the opprof tool, folders by job.
COLLECTOR_MAIN := collector/main.c
COLLECTOR_SRC := $(filter-out $(COLLECTOR_MAIN),$(wildcard collector/*.c))
REPORT_MAIN := report/tool/main.c
REPORT_SRC := $(filter-out $(REPORT_MAIN),$(wildcard report/*/*.c))
# preload/: libopprof.so, with the common files it needs.
PRELOAD_SRC := $(wildcard preload/*.c preload/*/*.c preload/*/*.S) \
               common/util.c common/gpu.c common/schedule.c

# Object paths: $(call objs,TREE,SOURCES).
objs = $(addprefix $(1)/,$(addsuffix .o,$(basename $(2))))

# CUDA toolkit: optional. Without it the CUDA parts are left out. The
# agent needs only CUPTI's headers at build time (it dlopens libcupti).
CUPTI_INC := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
HAVE_CUDA := $(shell test -x $(CUDA_HOME)/bin/nvcc && test -n "$(CUPTI_INC)" && echo 1)
PRELOAD_CFLAGS := -Ipreload -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer \
                  -Wa,--noexecstack
PRELOAD_GEN :=
ifeq ($(HAVE_CUDA),1)
PRELOAD_CFLAGS += -DOPP_HAVE_CUDA -I$(BUILD)/gen -I$(dir $(CUPTI_INC)) -I$(CUDA_HOME)/include \
                  -DOPP_CUDA_HOME='"$(CUDA_HOME)"'
PRELOAD_GEN += $(BUILD)/gen/cuda_api.h
endif

.PHONY: torch-files torch-shim analyze-files
.PHONY: all deps demo test test-layers test-layers-src test-layers-calls test-build test-unit test-e2e test-asan test-tsan bench clean cuda-note gen-status
all: $(BUILD)/libopprof.so $(BUILD)/opprof $(BUILD)/opprof-collector torch-files analyze-files cuda-note

cuda-note:
ifneq ($(HAVE_CUDA),1)
	@echo "opprof: CUDA toolkit not found at $(CUDA_HOME): CUDA parts are off (set CUDA_HOME to enable)"
endif

# ---- compiling: one rule per tree ----
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(CFLAGS_BASE) $(LAYER_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(BUILD)/asan/obj/%.o: %.c $(BUILD)/asan/cc
	@mkdir -p $(@D)
	$(call quiet,CC-ASAN,$<)$(ASAN_CC) $(CFLAGS_BASE) -O1 $(ASAN_FLAGS) $(LAYER_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(BUILD)/pic/%.o: %.c | $(PRELOAD_GEN)
	@mkdir -p $(@D)
	$(call quiet,CC-PIC,$<)$(CC) $(CFLAGS_BASE) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(BUILD)/pic/%.o: %.S | $(PRELOAD_GEN)
	@mkdir -p $(@D)
	$(call quiet,AS,$<)$(CC) $(CFLAGS_BASE) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(BUILD)/tsan/pic/%.o: %.c | $(PRELOAD_GEN)
	@mkdir -p $(@D)
	$(call quiet,CC-TSAN,$<)$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c -o $@ $<
$(BUILD)/tsan/pic/%.o: %.S | $(PRELOAD_GEN)
	@mkdir -p $(@D)
	$(call quiet,AS,$<)$(CC) $(CFLAGS_BASE) $(TSAN_FLAGS) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# Where each layer looks for headers beyond common/.
$(BUILD)/obj/report/%.o $(BUILD)/asan/obj/report/%.o: LAYER_CFLAGS = -Ireport
# the HTML page's script is built into export_html.o (.incbin)
$(BUILD)/obj/report/exports/export_html.o $(BUILD)/asan/obj/report/exports/export_html.o: report/exports/html_report.js
$(BUILD)/obj/collector/%.o $(BUILD)/asan/obj/collector/%.o: LAYER_CFLAGS = -Icollector

# A static library per layer (remade whole, so a removed source leaves no
# stale member).
lib = $(call quiet,AR,$@)rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/obj/libcommon.a: $(call objs,$(BUILD)/obj,$(COMMON_SRC)); $(lib)
$(BUILD)/obj/libcollector.a: $(call objs,$(BUILD)/obj,$(COLLECTOR_SRC)); $(lib)
$(BUILD)/obj/libreport.a: $(call objs,$(BUILD)/obj,$(REPORT_SRC)); $(lib)
$(BUILD)/asan/obj/libcommon.a: $(call objs,$(BUILD)/asan/obj,$(COMMON_SRC)); $(lib)
$(BUILD)/asan/obj/libcollector.a: $(call objs,$(BUILD)/asan/obj,$(COLLECTOR_SRC)); $(lib)
$(BUILD)/asan/obj/libreport.a: $(call objs,$(BUILD)/asan/obj,$(REPORT_SRC)); $(lib)

# ---- linking ----
$(BUILD)/gen/cuda_api.h: scripts/gen-cuda-api.sh
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)scripts/gen-cuda-api.sh $(CUDA_HOME) $@

# The preload lives inside other programs: hidden symbols, static TLS.
$(BUILD)/libopprof.so: $(call objs,$(BUILD)/pic,$(PRELOAD_SRC))
	$(call quiet,LD,$@)$(CC) -shared -Wl,-z,now,-z,noexecstack -Wl,--no-undefined -o $@ $^ $(LDLIBS_BASE)

# The same with ThreadSanitizer, for programs built with it (make test-tsan).
$(BUILD)/tsan/libopprof.so: $(call objs,$(BUILD)/tsan/pic,$(PRELOAD_SRC))
	$(call quiet,LD,$@)$(CC) $(TSAN_FLAGS) -shared -Wl,-z,now,-z,noexecstack -Wl,--no-undefined -o $@ $^ $(LDLIBS_BASE)

$(BUILD)/opprof: $(call objs,$(BUILD)/obj,$(REPORT_MAIN)) $(BUILD)/obj/libreport.a $(BUILD)/obj/libcommon.a
	$(call quiet,LD,$@)$(CC) -o $@ $^ $(REPORT_LDLIBS)
$(BUILD)/opprof-collector: $(call objs,$(BUILD)/obj,$(COLLECTOR_MAIN)) $(BUILD)/obj/libcollector.a \
                           $(BUILD)/obj/libcommon.a
	$(call quiet,LD,$@)$(CC) -o $@ $^ $(LDLIBS_BASE)
$(BUILD)/asan/opprof: $(call objs,$(BUILD)/asan/obj,$(REPORT_MAIN)) $(BUILD)/asan/obj/libreport.a \
                      $(BUILD)/asan/obj/libcommon.a
	$(call quiet,LD,$@)$(ASAN_CC) $(ASAN_FLAGS) -o $@ $^ $(REPORT_LDLIBS)
$(BUILD)/asan/opprof-collector: $(call objs,$(BUILD)/asan/obj,$(COLLECTOR_MAIN)) \
                                $(BUILD)/asan/obj/libcollector.a $(BUILD)/asan/obj/libcommon.a
	$(call quiet,LD,$@)$(ASAN_CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_BASE)
# The compiler of the asan/ objects: they are made again when it changes.
$(BUILD)/asan/cc: FORCE
	@mkdir -p $(@D)
	@echo '$(ASAN_CC) $(ASAN_FLAGS)' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# ---- PyTorch (preload/torch) ----
# Beside libopprof.so: the Python folder that a profiled interpreter gets
# on its path, with the shim's sources (preload/torch/shim/: not part of
# libopprof.so), which are compiled against the
# headers of the torch a program imports, on first use, into
# $(BUILD)/python/cache. `make torch-shim` does that now for the system's
# torch (the tests and the demo use it).
PYTHON  ?= /usr/bin/python3
TORCH_FILES := $(patsubst preload/torch/python/%,$(BUILD)/python/%,$(wildcard preload/torch/python/*.py)) \
               $(BUILD)/python/shim/shim.cpp $(BUILD)/python/shim/pyframes.c $(BUILD)/python/shim/modhooks.c \
               $(BUILD)/python/shim/torch/shim/shim.h $(BUILD)/python/shim/format.h
torch-files: $(TORCH_FILES)
$(BUILD)/python/%.py: preload/torch/python/%.py
	@mkdir -p $(@D)
	$(call quiet,CP,$@)cp $< $@
$(BUILD)/python/shim/%: preload/%
	@mkdir -p $(@D)
	$(call quiet,CP,$@)cp $< $@
$(BUILD)/python/shim/shim.cpp $(BUILD)/python/shim/pyframes.c $(BUILD)/python/shim/modhooks.c: $(BUILD)/python/shim/%: preload/torch/shim/%
	@mkdir -p $(@D)
	$(call quiet,CP,$@)cp $< $@
$(BUILD)/python/shim/format.h: common/format.h
	@mkdir -p $(@D)
	$(call quiet,CP,$@)cp $< $@
# `opprof analyze` (report/analyze): its Python package beside the tool.
ANALYZE_FILES := $(patsubst report/analyze/%,$(BUILD)/analyze/%,$(wildcard report/analyze/opprof_analyze/*.py))
analyze-files: $(ANALYZE_FILES)
$(BUILD)/analyze/%.py: report/analyze/%.py
	@mkdir -p $(@D)
	$(call quiet,CP,$@)cp $< $@

# Once per change of its files (a stamp: importing torch takes seconds).
torch-shim: $(BUILD)/python/shim.built
$(BUILD)/python/shim.built: $(TORCH_FILES)
	@if $(PYTHON) -c 'import torch' 2>/dev/null; then \
	    printf '  %-7s %s\n' SHIM "torch shim for $(PYTHON)"; \
	    $(PYTHON) $(BUILD)/python/_opprof_torch.py >/dev/null && touch $@ || exit 1; \
	else echo "opprof: $(PYTHON) has no torch: the torch shim is built when a program first imports one"; fi

deps:
	@scripts/deps.sh

# The status names the report shows (committed; regenerate after a CUDA,
# cuDNN, NCCL, oneDNN or XNNPACK upgrade).
gen-status:
	scripts/gen-status-names.sh $(CUDA_HOME) common/status_names.h

demo: deps
	@$(MAKE) --no-print-directory $(PAR) all torch-shim
	@scripts/demo.sh

include tests/tests.mk

bench: deps all torch-shim
	@scripts/bench.sh

clean:
	rm -rf $(BUILD)

# Every object's dependency file, from its last compile.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
