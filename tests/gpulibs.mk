# GPU tensor library clients (tests/gpulibs/NAME.c -> build/tests/gpulibs/NAME),
# linked against the toolkit's real libraries. Without a GPU their calls
# fail, and the e2e suite (tests/e2e/test_gpulibs.c) checks what was recorded.
ifeq ($(HAVE_CUDA),1)
GPULIBS_DIR := $(BUILD)/tests/gpulibs
GPULIBS_LIBDIR := $(CUDA_HOME)/lib64
GPULIBS_LIBS_cublas_calls := -lcublas
GPULIBS_LIBS_cublaslt_calls := -lcublasLt
GPULIBS_LIBS_cudnn_calls := -lcudnn
GPULIBS_LIBS_cudnn_graph_calls := -lcudnn
GPULIBS_LIBS_cudnn_seq_calls := -lcudnn
GPULIBS_LIBS_nccl_calls := -lnccl
GPULIBS_LIBS_cufft_calls := -lcufft
GPULIBS_LIBS_sgemm_loop := -lcublas
# A program per library whose header is installed (cuDNN, NCCL often are not).
GPULIBS_HDR_cublas_calls := cublas_v2.h
GPULIBS_HDR_sgemm_loop := cublas_v2.h
GPULIBS_HDR_cublaslt_calls := cublasLt.h
GPULIBS_HDR_cudnn_calls := cudnn.h
GPULIBS_HDR_cudnn_graph_calls := cudnn.h
GPULIBS_HDR_cudnn_seq_calls := cudnn.h
GPULIBS_HDR_nccl_calls := nccl.h
GPULIBS_HDR_cufft_calls := cufft.h
GPULIBS_NAMES := $(patsubst tests/gpulibs/%.c,%,$(wildcard tests/gpulibs/*.c))
GPULIBS_PROGS := $(foreach p,$(GPULIBS_NAMES),$(if $(wildcard $(CUDA_HOME)/include/$(GPULIBS_HDR_$(p))),$(GPULIBS_DIR)/$(p)))
$(GPULIBS_DIR)/%: tests/gpulibs/%.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -isystem $(CUDA_HOME)/include -o $@ $< -L$(GPULIBS_LIBDIR) \
	  $(GPULIBS_LIBS_$*) -Wl,-rpath,$(GPULIBS_LIBDIR)
PROGS += $(GPULIBS_PROGS)
# A plugin linking cuDNN for the plugin host tests/progs/unload.c.
ifneq ($(wildcard $(CUDA_HOME)/include/cudnn.h),)
$(GPULIBS_DIR)/libcudnn_plugin.so: tests/plugin/cudnn_plugin.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O1 -g $(WARN) -isystem $(CUDA_HOME)/include -fPIC -shared \
	  -o $@ $< -L$(GPULIBS_LIBDIR) -lcudnn -Wl,-rpath,$(GPULIBS_LIBDIR)
PROGS += $(GPULIBS_DIR)/libcudnn_plugin.so
endif
endif
