# satcc — the two commands a newcomer needs:
#   make demo   set everything up and run the default comparison
#   make test   set everything up and run every Rust and Python test
# Everything the project needs is installed from here (apt packages, Python wheels, crates).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)
# Reproducible archives (docs/packaging.md): maturin stamps the wheel's and the sdist's files
# with this time. A constant, for every target alike: zstd-sys's build script watches the
# variable, so a value that changed between `make build` and `maturin build` (or per
# commit) would make cargo recompile satcc-py each time.
export SOURCE_DATE_EPOCH ?= 315532800

APT_PACKAGES := iproute2 tshark tcpdump iperf3 ethtool iputils-ping nmap clang llvm libbpf-dev bpftool openvpn chromium fonts-dejavu-core
DEPS_STAMP   := $(VENV)/.deps-installed
APT_STAMP    := $(VENV)/.apt-installed

.PHONY: setup build dist dist-aarch64 package-data demo test test-rust test-python test-fuzz test-slow bench lint clean schema

setup: build

$(APT_STAMP): Makefile
	@mkdir -p $(VENV)
	@if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "apt-get install $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  fi; \
	else echo "note: not root or no apt-get; skipping system packages ($(APT_PACKAGES))"; fi
	@touch $@

$(DEPS_STAMP): pyproject.toml Makefile | $(APT_STAMP)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "maturin>=1.5,<2" uv
	@touch $@

demo: build
	$(BIN)/satcc demo

# One wheel with everything (docs/packaging.md) for the machines users have: manylinux_2_28
# (glibc 2.28 and later: RHEL/Rocky 8+, Ubuntu 20.04+, Debian 11+), whatever glibc builds it.
# zig (PyPI's ziglang) links the abi3 native module and satcc-linkd against glibc 2.28's
# symbols (maturin --zig, cargo-zigbuild), into target/<arch>-unknown-linux-gnu/ beside the
# development build; the wheel holds satcc-linkd and the package data (python/satcc/data:
# links to scenarios/, campaigns/ and bpf/'s sources). The sdist builds satcc-linkd itself
# (build_backend/). All stamped with SOURCE_DATE_EPOCH (above).
DIST_DIR    ?= dist
WHEEL_GLIBC ?= 2.28
DIST_TOOLS  := $(VENV)/.dist-tools-installed
$(DIST_TOOLS): Makefile | $(DEPS_STAMP)
	$(BIN)/uv pip install -q "ziglang>=0.13,<0.18" "cargo-zigbuild>=0.19,<0.25"
	@touch $@

# Target directories of their own: zig links the build scripts and proc macros too (the host
# is x86_64-unknown-linux-gnu as well), and cargo-zigbuild's and maturin's zig wrappers differ,
# so sharing one directory (with the development satcc-linkd, or the two with each other) made
# each build recompile what the other had built.
DIST_TARGET  := target/dist
LINKD_TARGET := target/dist-linkd

# The development install builds the native module as the wheel does (zig for glibc
# $(WHEEL_GLIBC), this machine's <arch>-unknown-linux-gnu, $(DIST_TARGET)), so `make dist`
# finds it compiled and only packs it: cargo's fingerprint of every crate, dependencies
# included, holds the linker, so a module linked by the system linker shared no crate with the
# wheel's (a second full compile, fat LTO). `maturin develop` takes no --zig; maturin's PEP 517
# backend does (MATURIN_PEP517_ARGS), so uv installs the checkout editable through it, as
# maturin develop did (the module in python/satcc/, the Python sources in place; --uv: the
# dependencies, the same versions as pip picks, in a few CPU s; --compile-bytecode: their
# bytecode written at install, as pip does, since an environment with PYTHONDONTWRITEBYTECODE
# set would otherwise compile pandas & co. at every satcc start: ~1.3 CPU s of pandas alone,
# BENCHMARKS.md issue 43 session 11). satcc-linkd compiles
# meanwhile (both end in long single-threaded steps, fat LTO), as the wheel's is (zig, glibc
# $(WHEEL_GLIBC), $(LINKD_TARGET)), and is copied to where the development checkout runs it
# (target/release/, satcc.emu.linkd, which rebuilds it with cargo once a source is newer), so
# `make dist` finds it compiled too: built by plain cargo in target/release/ it was compiled
# twice, the second time by `make dist` (whose step took 46 s of a quiet fresh-clone make test).
HOST_TARGET := $(shell uname -m)-unknown-linux-gnu
build: $(DEPS_STAMP) $(DIST_TOOLS)
	@# a module built before the abi3 switch is named for the interpreter and would shadow it
	rm -f python/satcc/_native.cpython-*.so
	CARGO_TARGET_DIR=$(abspath $(DIST_TARGET)) \
	  MATURIN_PEP517_ARGS="--zig --target $(HOST_TARGET) --compatibility manylinux_$(subst .,_,$(WHEEL_GLIBC))" \
	  $(BIN)/uv pip install -q --no-build-isolation --compile-bytecode --editable '.[dev]' & module=$$!; \
	CARGO_TARGET_DIR=$(LINKD_TARGET) cargo zigbuild -q --release -p satcc-emu --target $(HOST_TARGET).$(WHEEL_GLIBC); linkd=$$?; \
	wait $$module && exit $$linkd
	install -D -m 0755 $(LINKD_TARGET)/$(HOST_TARGET)/release/satcc-linkd target/release/satcc-linkd

# $(call wheel,ARCH): satcc-linkd and the wheel for ARCH-unknown-linux-gnu, glibc $(WHEEL_GLIBC).
# The two compiles (target directories of their own, above) run side by side: satcc-linkd's is
# small and ends in long single-threaded steps (satcc-core in one codegen unit, fat LTO), as
# does the extension's, so one after the other left a core idle (for this machine's arch,
# `make build` compiled the extension already). The wheel must hold the satcc-linkd just built,
# so the first `maturin build` only compiles (its wheel, under $(DIST_TARGET)/, is thrown away)
# and the second, once satcc-linkd is in place, finds the extension compiled and only packs it.
define wheel
	CARGO_TARGET_DIR=$(LINKD_TARGET) cargo zigbuild -q --release -p satcc-emu --target $(1)-unknown-linux-gnu.$(WHEEL_GLIBC) & linkd=$$!; \
	CARGO_TARGET_DIR=$(DIST_TARGET) $(BIN)/maturin build --release -q --zig --target $(1)-unknown-linux-gnu \
	  --compatibility manylinux_$(subst .,_,$(WHEEL_GLIBC)) -i $(abspath $(BIN))/python --out $(DIST_TARGET)/compile-only >/dev/null; module=$$?; \
	wait $$linkd && exit $$module
	rm -rf $(DIST_TARGET)/compile-only
	install -D -m 0755 $(LINKD_TARGET)/$(1)-unknown-linux-gnu/release/satcc-linkd python/satcc/bin/satcc-linkd
	CARGO_TARGET_DIR=$(DIST_TARGET) $(BIN)/maturin build --release -q --zig --target $(1)-unknown-linux-gnu \
	  --compatibility manylinux_$(subst .,_,$(WHEEL_GLIBC)) -i $(abspath $(BIN))/python --out $(DIST_DIR)
endef

dist: build $(DIST_TOOLS)
	rm -rf $(DIST_DIR)
	$(call wheel,x86_64)
	$(BIN)/maturin sdist -o $(DIST_DIR) >/dev/null
	@ls -l $(DIST_DIR)

# The aarch64 wheel (not part of `make test`: a second full compile), beside dist/'s others.
# Needs Rust's aarch64-unknown-linux-gnu standard library (rustup), which zig links as it does
# x86-64's.
dist-aarch64: build $(DIST_TOOLS)
	@rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu \
	  || rustup target add aarch64-unknown-linux-gnu \
	  || { echo "dist-aarch64: rustup could not install Rust's aarch64-unknown-linux-gnu standard library (above); no aarch64 wheel"; exit 1; }
	$(call wheel,aarch64)
	@ls -l $(DIST_DIR)

# python/satcc/data/: one relative link per file of scenarios/, campaigns/ and bpf/'s sources
# (tests/test_wheel.py checks the set; run this after adding or removing such a file).
PACKAGE_DATA := $(shell git ls-files scenarios campaigns 'bpf/*.c' 'bpf/*.h' 2>/dev/null)
package-data:
	find python/satcc/data -type l -delete
	for f in $(PACKAGE_DATA); do mkdir -p python/satcc/data/$$(dirname $$f); ln -sr $$f python/satcc/data/$$f; done
	find python/satcc/data -type d -empty -delete

test: build lint test-rust test-python test-fuzz

# Rust tests with debug assertions and overflow checks on (Cargo.toml `[profile.checked]`):
# the sender's counter check after every ACK and every arithmetic overflow fire here. Not
# satcc-py: the bindings have no Rust tests (the Python suite tests them through the built
# module), and building them here compiled pyo3, parquet and zstd's C a third time.
test-rust:
	cargo test --workspace --exclude satcc-py --profile checked -q

# tests/test_wheel.py installs the wheel of `make dist` into a fresh venv (SATCC_TEST_WHEEL).
# Two phases (tests/conftest.py): every test without the `kernel` mark on PYTEST_WORKERS
# workers (pytest-xdist), then the `kernel` tests (the real-kernel ones, marked per test) alone,
# so satcc-linkd's timing is judged on a machine nothing else loads.
PYTEST_WORKERS ?= 2
test-python: dist
	SATCC_TEST_WHEEL=$(abspath $(DIST_DIR)) $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) -m 'not slow and not kernel'
	SATCC_TEST_WHEEL=$(abspath $(DIST_DIR)) $(BIN)/python -m pytest -q -m 'not slow and kernel'

# The cargo-fuzz targets, briefly: the capture parser (crates/satcc-pcap, `analyze`) and the
# simulator's config checks and event loop (crates/satcc-sim, `config`). cargo fuzz needs a
# nightly toolchain; without one, the stable randomized tests in `cargo test` still run.
# Longer: make test-fuzz FUZZ_SECONDS=600 (docs/reliability.md). Both targets build into one
# target directory, so what they share (satcc-pcap, satcc-core and their crates) compiles once;
# built one after the other, they then run side by side, FUZZ_SECONDS each on a core of its own
# (a fuzzer is one process on one core), and a crash in either fails the target.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := satcc-pcap:analyze satcc-sim:config
FUZZ_TARGET  := target/fuzz
test-fuzz:
	@if cargo +nightly --version >/dev/null 2>&1; then \
	  command -v cargo-fuzz >/dev/null 2>&1 || cargo install -q cargo-fuzz --locked; \
	  for t in $(FUZZ_TARGETS); do crate=$${t%%:*}; target=$${t##*:}; \
	    (cd crates/$$crate && cargo +nightly fuzz build --target-dir $(abspath $(FUZZ_TARGET)) $$target) || exit 1; \
	  done; \
	  pids=; for t in $(FUZZ_TARGETS); do crate=$${t%%:*}; target=$${t##*:}; \
	    mkdir -p target/fuzz-corpus/$$target; log=$$(pwd)/target/fuzz-$$target.log; work=$$(pwd)/target/fuzz-corpus/$$target; \
	    (cd crates/$$crate && cargo +nightly fuzz run --target-dir $(abspath $(FUZZ_TARGET)) $$target $$work fuzz/corpus/$$target -- -max_total_time=$(FUZZ_SECONDS) >$$log 2>&1) & \
	    pids="$$pids $$!:$$target"; \
	  done; \
	  failed=0; for p in $$pids; do target=$${p##*:}; log=target/fuzz-$$target.log; \
	    if wait $${p%%:*}; then echo "test-fuzz $$target: $$(grep -E '^Done [0-9]+ runs' $$log || tail -n 1 $$log)"; \
	    else tail -n 40 $$log; echo "test-fuzz: $$target found a crash (see above)"; failed=1; fi; \
	  done; \
	  exit $$failed; \
	else echo "test-fuzz: no nightly toolchain; skipped (randomized parser and config tests ran in cargo test)"; fi

test-slow: build
	$(BIN)/python -m pytest -q -m slow

bench: build
	bash bench/run_all.sh

lint: build
	cargo fmt --all --check
	cargo clippy --workspace --release -q --tests -- -D warnings
	$(BIN)/ruff check python tests bench build_backend
	$(BIN)/ruff format --check python tests bench build_backend

clean:
	rm -rf $(VENV) target $(DIST_DIR) python/satcc/bin

# The scenario file's JSON Schema for editors, generated from satcc-core's serde types
# (crates/satcc-core/src/scenario/file.rs); tests/test_scenario_once.py keeps it current.
schema: build
	$(BIN)/python -c "from satcc import _native; open('docs/scenario.schema.json', 'w').write(_native.scenario_json_schema())"
