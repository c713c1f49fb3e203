# Quick start (Debian 12, root or sudo):
#   make run    install what is missing, build (Release), run neuron-top on the embedded simulator
#   make test   install what is missing, build with ASan/UBSan and -Werror, run every test
#   make deb    build (Release) and package build/release/neuronmon_<version>_<arch>.deb
JOBS ?= 2
RELEASE_DIR := build/release
TEST_DIR := build/test
FUZZ_DIR := build/fuzz

.PHONY: run build deb test test-build fuzz bench format clean

run: build
	$(RELEASE_DIR)/tui/neuron-top --standalone

build:
	@packaging/install-deps.sh build
	@cmake -S . -B $(RELEASE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEURONMON_BUILD_TESTS=OFF \
	  -DNEURONMON_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS)

deb: build
	@packaging/install-deps.sh deb
	cd $(RELEASE_DIR) && cpack -G DEB

test-build:
	@packaging/install-deps.sh test
	@cmake -S . -B $(TEST_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNEURONMON_SANITIZE=ON -DNEURONMON_WERROR=ON \
	  -DNEURONMON_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(TEST_DIR) -j$(JOBS)
	@CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNEURONMON_FUZZ=ON \
	  -DNEURONMON_BUILD_TESTS=OFF -DNEURONMON_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_DIR) -j$(JOBS) --target fuzz_targets

test: test-build
	cd $(TEST_DIR) && ctest --output-on-failure -j$(JOBS)
	cd $(FUZZ_DIR) && ctest --output-on-failure -j$(JOBS)

bench:
	@packaging/install-deps.sh bench
	@cmake -S . -B $(RELEASE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEURONMON_BUILD_TESTS=OFF \
	  -DNEURONMON_BUILD_BENCH=ON >/dev/null
	@cmake --build $(RELEASE_DIR) -j$(JOBS)
	bench/run_all.sh $(RELEASE_DIR)

format:
	git ls-files -co --exclude-standard -- '*.h' '*.cc' '*.proto' | xargs clang-format -i

clean:
	rm -rf build
