# make demo  - set up, build, run the eager example and train a CNN on real digits
# make test  - set up, build, and run every test (C++ and Python)
# Everything installs itself: Debian packages with apt-get when missing,
# Python packages into .venv.

PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
BUILD   := build/release
JOBS    ?= $(shell nproc)
APT_PKGS := cmake ninja-build ccache g++ libopenblas-dev libopenblas0-openmp libdnnl-dev libsleef-dev libgtest-dev python3-dev
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_DIR ?= $(HOME)/.cache/ccache
export PYTHONPATH := $(CURDIR)/python

.PHONY: all deps venv build demo test test-cpp test-python test-asan bench clean

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

venv: $(VPY)
	@$(VPY) -c "import nanobind, numpy, pytest, xdist, sklearn, PIL, safetensors" 2>/dev/null || \
	  $(VPY) -m pip install -q nanobind numpy pytest pytest-xdist scikit-build-core scikit-learn Pillow safetensors

$(BUILD)/build.ninja: | deps venv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(CURDIR)/$(VPY)

build: deps venv $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

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

# AddressSanitizer + UBSan build of the C++ tests and the op database.
ASAN_BUILD := build/asan
test-asan: deps venv
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOAR_SANITIZE=ON \
	  -DOAR_COPY_TO_SOURCE=OFF -DPython_EXECUTABLE=$(CURDIR)/$(VPY)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure
	rm -rf $(ASAN_BUILD)/pkg && mkdir -p $(ASAN_BUILD)/pkg && cp -r python/oar $(ASAN_BUILD)/pkg/
	rm -f $(ASAN_BUILD)/pkg/oar/*.so && cp $(ASAN_BUILD)/_C*.so $(ASAN_BUILD)/liboar.so $(ASAN_BUILD)/pkg/oar/
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  PYTHONPATH=$(CURDIR)/$(ASAN_BUILD)/pkg $(VPY) -m pytest tests/python -x -q -p no:cacheprovider

bench: build
	bash benchmarks/setup_peers.sh
	$(VPY) benchmarks/eager_overhead.py
	$(VPY) benchmarks/kernels.py

clean:
	rm -rf build python/oar/_C*.so python/oar/liboar*.so
