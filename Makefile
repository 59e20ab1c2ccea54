# Front door: every target drives CMake + Ninja underneath.
BUILD       ?= build
DEBUG_BUILD ?= build-debug
AARCH64_BUILD ?= build-aarch64
PREFIX      ?= /usr/local
JOBS        ?= $(shell nproc)
CMAKE_FLAGS ?=
VENV        ?= .venv
PYTHON      := $(VENV)/bin/python

.PHONY: all release debug test test-release test-debug check-aarch64 bench bench-quick install deb venv clean \
        system-test system-bench

all: release

release:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	ninja -C $(BUILD)

debug:
	cmake -S . -B $(DEBUG_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCOREALLOC_DEBUG=ON $(CMAKE_FLAGS)
	ninja -C $(DEBUG_BUILD)

# The whole suite on the release build, then again on the debug build with
# internal assertions (valgrind-labelled tests run in the release pass only).
test: system-test test-release test-debug

test-release: release venv
	cd $(BUILD) && COREALLOC_PYTHON=$(abspath $(PYTHON)) ctest --output-on-failure -j $(JOBS)

test-debug: debug venv
	cd $(DEBUG_BUILD) && COREALLOC_PYTHON=$(abspath $(PYTHON)) ctest --output-on-failure -j $(JOBS) -LE valgrind

# The library and its unit tests cross-compiled for 64-bit Arm, the unit
# tests run under qemu-user (Debian: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user).
check-aarch64:
	cmake -S . -B $(AARCH64_BUILD) -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCOREALLOC_BENCH=OFF -DCOREALLOC_TOOLS=OFF $(CMAKE_FLAGS)
	ninja -C $(AARCH64_BUILD) corealloc corealloc_static unit_tests
	cd $(AARCH64_BUILD) && ctest --output-on-failure -L unit

# The system packages each command needs (tools/setup/debian-packages.txt):
# a missing build tool stops with the one command that installs it; the
# others are named, and what needs them is left out.
system-test:
	tools/setup/check_system.sh build test

system-bench:
	tools/setup/check_system.sh build bench

$(PYTHON): requirements.txt
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(PYTHON)

venv: $(PYTHON)

bench: system-bench release venv
	$(PYTHON) bench/driver/run.py --build $(BUILD) $(BENCH_ARGS)

bench-quick: system-bench release venv
	$(PYTHON) bench/driver/run.py --build $(BUILD) --quick $(BENCH_ARGS)

install: release
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Debian package of what install installs, in $(BUILD)/corealloc_<version>_<arch>.deb.
deb: release
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD) $(DEBUG_BUILD) $(AARCH64_BUILD)
