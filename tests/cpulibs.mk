# CPU tensor libraries (tests/e2e/test_cpulibs.c): programs calling Debian's
# oneDNN (libdnnl-dev) and XNNPACK (libxnnpack-dev, libpthreadpool-dev),
# built only where their headers are installed; the suite skips, saying so,
# without them.
CPULIBS_DIR := $(BUILD)/tests/cpulibs
ifneq ($(wildcard /usr/include/oneapi/dnnl/dnnl.h),)
$(CPULIBS_DIR)/onednn_app: tests/cpulibs/onednn_app.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -ldnnl
PROGS += $(CPULIBS_DIR)/onednn_app
endif
ifeq ($(words $(wildcard /usr/include/xnnpack.h /usr/include/pthreadpool.h)),2)
$(CPULIBS_DIR)/xnnpack_app: tests/cpulibs/xnnpack_app.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -lXNNPACK
PROGS += $(CPULIBS_DIR)/xnnpack_app
endif
