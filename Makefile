# make demo  - set up, build, run the eager example and train a CNN on real digits
# make test  - set up, build, and run every test (C++ and Python)
# Everything installs itself: Debian packages with apt-get when missing,
# Python packages into .venv.

PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
BUILD   := build/release
# The example device plugin, built as a vendor would build one: its own CMake
# project against include/oar only (plugins/custom_cpu).
PLUGIN_BUILD := build/custom_cpu
JOBS    ?= $(shell nproc)
APT_PKGS := cmake ninja-build ccache g++ libopenblas-dev libopenblas0-openmp libdnnl-dev libsleef-dev libgtest-dev python3-dev libopenmpi-dev openmpi-bin
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_DIR ?= $(HOME)/.cache/ccache
export PYTHONPATH := $(CURDIR)/python

.PHONY: all deps venv build demo test test-cpp test-python test-gpu test-asan bench fuzz fuzz-deps fuzz-ops fuzz-loaders clean

all: build

deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

# oneMKL (the FFT kernels, Note [FFT on oneMKL]) from its wheels, without
# their dependencies: intel-openmp and tbb serve threading layers oar does
# not use (MKL runs on libgomp through libmkl_gnu_thread).
MKL_VERSION := 2026.2.0
venv: $(VPY)
	@$(VPY) -c "import nanobind, numpy, pytest, xdist, sklearn, scipy, PIL, safetensors" 2>/dev/null || \
	  $(VPY) -m pip install -q nanobind numpy pytest pytest-xdist scikit-build-core scikit-learn scipy Pillow safetensors
	@{ test -f $(VENV)/include/mkl_dfti.h && ls $(VENV)/lib/libmkl_core.so.* >/dev/null 2>&1; } || \
	  $(VPY) -m pip install -q --no-deps mkl==$(MKL_VERSION) mkl-include==$(MKL_VERSION)

$(BUILD)/build.ninja: | deps venv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(CURDIR)/$(VPY)

$(PLUGIN_BUILD)/build.ninja: | deps
	cmake -S plugins/custom_cpu -B $(PLUGIN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DOAR_INCLUDE_DIR=$(CURDIR)/include

build: deps venv $(BUILD)/build.ninja $(PLUGIN_BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	cmake --build $(PLUGIN_BUILD) -j $(JOBS)

demo: build
	$(VPY) examples/eager_demo.py
	$(VPY) examples/train_digits.py

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python: build
	# Passive OpenMP waits: the test workers share the cores, and spinning threads
	# would stall each other at every barrier.
	OMP_WAIT_POLICY=PASSIVE $(VPY) -m pytest tests/python -n $(JOBS) --doctest-modules python/oar -p no:cacheprovider

test: test-cpp test-python

# The op database on CUDA against the CPU, the CUDA kernel tests, and training
# steps of ResNet18 and the small GPT on a GPU against the same steps on the
# CPU (each skipped, with the reason, where no GPU is visible).
test-gpu: build
	$(VPY) -m pytest tests/python/test_opdb_device.py -k "gpu" -p no:cacheprovider -rs
	$(VPY) -m pytest tests/python/test_gpu_training.py tests/python/test_cuda_build.py tests/python/test_cuda_kernels.py \
	  tests/python/test_cuda_device_api.py \
	  tests/python/test_cuda_index.py -p no:cacheprovider -rs

# AddressSanitizer + UBSan build of the C++ tests and the op database.
ASAN_BUILD := build/asan
test-asan: deps venv
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOAR_SANITIZE=ON \
	  -DOAR_COPY_TO_SOURCE=OFF -DPython_EXECUTABLE=$(CURDIR)/$(VPY)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure
	rm -rf $(ASAN_BUILD)/pkg && mkdir -p $(ASAN_BUILD)/pkg && cp -r python/oar $(ASAN_BUILD)/pkg/
	rm -f $(ASAN_BUILD)/pkg/oar/*.so && cp $(ASAN_BUILD)/_C*.so $(ASAN_BUILD)/liboar*.so $(ASAN_BUILD)/_build_config.py \
	  $(ASAN_BUILD)/pkg/oar/
	# a failed huge allocation is a MemoryError, as without the sanitizer; a
	# crash is a signal the fuzzers' harness recognises
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:handle_segv=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  PYTHONPATH=$(CURDIR)/$(ASAN_BUILD)/pkg $(VPY) -m pytest tests/python -q -n $(JOBS) -p no:cacheprovider

bench: build
	bash benchmarks/setup_peers.sh
	$(VPY) benchmarks/eager_overhead.py
	$(VPY) benchmarks/kernels.py

# libFuzzer + ASan + UBSan over the model loader (tests/fuzz): the loader's
# own sources are compiled with clang and instrumentation into the fuzzer,
# the rest of the core comes from the release build's shared libraries (the
# executable's definitions take precedence over theirs). Findings are saved
# under $(FUZZ_DIR)/crashes; reproduce one with `$(FUZZ_DIR)/fuzz_model_loader FILE`.
FUZZ_SECONDS ?= 600
FUZZ_MAX_LEN ?= 65536
FUZZ_JOBS ?= 1
FUZZ_DIR := build/fuzz
FUZZ_CXX ?= clang++
FUZZ_FLAGS := -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SOURCES := src/io/json.cpp src/io/safetensors.cpp src/ir/serialize.cpp src/ir/verify.cpp src/ir/printer.cpp \
  src/runtime/model.cpp tests/fuzz/fuzz_model_loader.cpp
FUZZ_OBJECTS := $(patsubst %.cpp,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SOURCES))

$(FUZZ_DIR)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -Isrc -Iinclude -I$(BUILD) -MMD -MP -c $< -o $@

-include $(FUZZ_OBJECTS:.o=.d)

$(FUZZ_DIR)/fuzz_model_loader: $(FUZZ_OBJECTS) $(BUILD)/liboar.so $(BUILD)/liboar_inference.so
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer $(FUZZ_OBJECTS) -o $@ -L$(BUILD) -loar_inference -loar \
	  -Wl,-rpath,$(CURDIR)/$(BUILD)

fuzz-deps:
	@missing=""; for p in clang libclang-rt-dev; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# Fork mode keeps fuzzing after a finding (each is saved), so one run reports
# every kind of finding rather than only the first; the target fails if any.
fuzz: build fuzz-deps
	$(MAKE) -j $(JOBS) $(FUZZ_DIR)/fuzz_model_loader
	$(VPY) tools/fuzz_corpus.py $(FUZZ_DIR)/seeds
	mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/crashes
	touch $(FUZZ_DIR)/started
	ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/fuzz_model_loader $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds \
	  -dict=tests/fuzz/model_loader.dict -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -malloc_limit_mb=2048 -max_len=$(FUZZ_MAX_LEN) -fork=$(FUZZ_JOBS) -ignore_crashes=1 -ignore_ooms=1 \
	  -ignore_timeouts=1 -artifact_prefix=$(CURDIR)/$(FUZZ_DIR)/crashes/
	@found=$$(find $(FUZZ_DIR)/crashes -type f -newer $(FUZZ_DIR)/started); \
	if [ -n "$$found" ]; then echo "fuzz: findings (replay with $(FUZZ_DIR)/fuzz_model_loader FILE):"; \
	  echo "$$found"; exit 1; fi; echo "fuzz: no findings in $(FUZZ_SECONDS) s"

# The op fuzzer (tests/fuzz/fuzz_ops.py): every public function and Tensor
# method with adversarial arguments in a child process, for FUZZ_SECONDS;
# `make test` runs its short deterministic pass (tests/python/test_fuzz_ops.py).
fuzz-ops: build
	OMP_WAIT_POLICY=PASSIVE $(VPY) tests/fuzz/fuzz_ops.py --seconds $(FUZZ_SECONDS) --seed $${FUZZ_SEED:-0}

# The Python loader fuzzer (tests/fuzz/fuzz_loaders.py): mutated checkpoints
# and models through oar.load, oar.jit.load and oar.inference, then used.
fuzz-loaders: build
	OMP_WAIT_POLICY=PASSIVE $(VPY) tests/fuzz/fuzz_loaders.py --seconds $(FUZZ_SECONDS) --seed $${FUZZ_SEED:-0}

clean:
	rm -rf build python/oar/_C*.so python/oar/liboar*.so
