# NVTX (tests/e2e/test_nvtx.c): a program annotated with NVTX v3, which is
# header-only, so it needs the toolkit's headers but no GPU or CUDA library.
ifeq ($(HAVE_CUDA),1)
NVTX_TEST_DIR := $(BUILD)/tests/nvtx
$(NVTX_TEST_DIR)/nvtx_app: tests/nvtx/nvtx_app.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -pthread -I$(CUDA_HOME)/include -o $@ $< -ldl
$(NVTX_TEST_DIR)/train_loop: tests/nvtx/train_loop.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< -lopenblas -ldl
PROGS += $(NVTX_TEST_DIR)/nvtx_app $(NVTX_TEST_DIR)/train_loop
endif
