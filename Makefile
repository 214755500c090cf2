# Entry points for people and CI. Every target installs its own dependencies first.
#   make demo   - build and run the whole stack locally (operator, node agents, device plugins,
#                 extender against the fake API server and fake kubelets) and print a summary
#   make test   - build and pass every test (ASan+UBSan preset, clang: what CI runs)
#   make fuzz-run - build the libFuzzer targets and run each FUZZ_SECONDS (default 30)
# Cluster targets (the seed operator's names) act on the current kubectl context:
#   make install | deploy IMG=<registry>/neuron-operator:<tag> [OVERLAY=eks|openshift|emulated] | undeploy
#   make bundle bundle-build index VERSION=0.1.0 IMG=... BUNDLE_IMG=... INDEX_IMG=...
SHELL := /bin/bash
JOBS ?= $(shell nproc)
# The ASan suites wait on sockets, child processes and timers: one more suite than cores keeps
# both cores busy (ctest 291 s against about 330 on 2 cores).
TEST_JOBS ?= $(shell echo $$(( $(JOBS) + 1 )))
EMULATE ?= trn1.32xlarge
FUZZ_SECONDS ?= 30
IMG ?= neuron-operator:dev
OVERLAY ?=
VERSION ?= 0.1.0
BUNDLE_IMG ?= neuron-operator-bundle:v$(VERSION)
INDEX_IMG ?= neuron-operator-index:v$(VERSION)
CONTAINER_TOOL ?= docker
export IMG OVERLAY VERSION BUNDLE_IMG INDEX_IMG CONTAINER_TOOL

.PHONY: help deps build binaries demo demo-node images test test-asan test-release test-tsan sanitize fuzz fuzz-run bench fmt lint clean \
	manager docker-build docker-push install uninstall deploy undeploy bundle bundle-build index

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-13s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build, tests and benches need
	@bash scripts/setup-deps.sh

build: deps ## Configure and build the release preset into build/ (binaries in build/bin)
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

demo: build ## Run the whole stack locally (emulated trn1 + trn2 nodes) and print a summary
	@bash scripts/demo.sh

demo-node: build ## Run one node agent over an emulated node, with a fault (EMULATE=<instance type>)
	@bash scripts/demo-node-agent.sh $(EMULATE)

images: build ## OCI images of the four binaries, no container daemon needed (build/images/, TAG=dev)
	@bash scripts/build-images.sh $(or $(TAG),dev)

test: deps ## Build and run every test under ASan+UBSan (clang; the tree CI runs, fuzz targets too)
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(TEST_JOBS)

test-asan: test ## Same as make test

test-release: build ## Build the release preset (GCC -O2) and run every test in it
	@ctest --preset release -j $(JOBS)

binaries: deps ## Build only the four shipped executables, release preset (GCC, warnings as errors)
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target \
	  neuron-operator neuron-device-plugin neuron-scheduler-extender neuron-node-agent

test-tsan: deps ## Build and run the threaded-server tests (CTest label tsan) under TSan
	@cmake --preset tsan >/dev/null
	@# Only the binaries of the tsan-labelled suites (cmake/helpers.cmake: neuron_cc_test).
	@cmake --build --preset tsan -j $(JOBS) --target tsan_tests
	@ctest --preset tsan -j $(JOBS)

sanitize: test-asan test-tsan ## Both sanitizer suites

fuzz: deps ## Build the libFuzzer targets in the asan tree, clang (binaries in build/asan/bin)
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS) --target fuzz_targets

fuzz-run: fuzz ## Run each fuzz target FUZZ_SECONDS (default 30); fails on any crash/leak/UB
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz-run.sh

bench: build ## Run the benchmarks (figures are kept in bench/README.md)
	@bash bench/run.sh

fmt: ## clang-format every C++ file in place
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

lint: deps ## clang-format, const-json operator[] check, clang-tidy-14 (.clang-tidy) over the release build
	@JOBS=$(JOBS) bash scripts/lint.sh

manager: deps ## Build the operator binary (build/bin/neuron-operator)
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target neuron-operator

docker-build: ## Build the operator image IMG with CONTAINER_TOOL (images/Dockerfile; no daemon: make images)
	@command -v $(CONTAINER_TOOL) >/dev/null || { echo "$(CONTAINER_TOOL) not found: make images builds OCI layouts without it"; exit 1; }
	$(CONTAINER_TOOL) build -f images/Dockerfile --build-arg BINARY=neuron-operator -t $(IMG) .

docker-push: ## Push the operator image IMG
	$(CONTAINER_TOOL) push $(IMG)

install: ## Install the DeviceConfig CRD into the current kubectl context
	@bash scripts/deploy.sh install

uninstall: ## Delete every DeviceConfig (the operator cleans up), then the CRD
	@bash scripts/deploy.sh uninstall

deploy: ## Install the operator (image IMG; OVERLAY=eks|openshift|emulated, else deploy/operator)
	@bash scripts/deploy.sh deploy

undeploy: ## Delete the caches (waits up to CACHE_WAIT=120s while pods use them), the DeviceConfigs, then the rest
	@bash scripts/deploy.sh undeploy

bundle: manager ## OLM bundle in build/bundle (VERSION, IMG; CSV made from the kustomize output)
	@bash scripts/olm.sh bundle

bundle-build: ## Bundle image BUNDLE_IMG (CONTAINER_TOOL, or an OCI layout without one)
	@bash scripts/olm.sh bundle-build

index: manager ## File-based catalog for BUNDLE_IMG in build/catalog, image INDEX_IMG, install.yaml
	@bash scripts/olm.sh index

clean: ## Remove build/
	@rm -rf build
