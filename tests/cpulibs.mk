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
# A plugin linking oneDNN for the plugin host tests/progs/unload.c. It finds
# (its RUNPATH) the copy of libdnnl.so.2 that dlclose can unload
# (tests/cpulibs/unique_global.c says why).
DNNL_SO := $(shell $(CC) -print-file-name=libdnnl.so.2)
$(CPULIBS_DIR)/unique_global: tests/cpulibs/unique_global.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $<
$(CPULIBS_DIR)/dnnl-global/libdnnl.so.2: $(CPULIBS_DIR)/unique_global $(DNNL_SO)
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)$< $(DNNL_SO) $@ >/dev/null
$(CPULIBS_DIR)/libonednn_plugin.so: tests/plugin/onednn_plugin.c $(CPULIBS_DIR)/dnnl-global/libdnnl.so.2
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< -ldnnl \
	  -Wl,-rpath,'$$ORIGIN/dnnl-global'
PROGS += $(CPULIBS_DIR)/libonednn_plugin.so
endif
ifeq ($(words $(wildcard /usr/include/xnnpack.h /usr/include/pthreadpool.h)),2)
$(CPULIBS_DIR)/xnnpack_app: tests/cpulibs/xnnpack_app.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -o $@ $< -lXNNPACK
PROGS += $(CPULIBS_DIR)/xnnpack_app
endif
