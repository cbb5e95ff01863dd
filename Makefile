# crumple: the README's two commands are `make demo` and `make test`.
# Both work on a fresh Debian 12 machine with Python 3.11 and a Rust toolchain:
# they create .venv, install what is needed, build the extension optimized.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
VBIN   := $(VENV)/bin
# One target dir and one (release) profile for cargo test, clippy and maturin,
# so dependencies are compiled once. 2 cores: cargo defaults to them.
CARGO_FLAGS := --release --locked
export PYO3_PYTHON := $(abspath $(VPY))
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: demo test bench build sysdeps lint rust-test py-test stubtest docs clean

demo: build sysdeps
	$(VBIN)/crumple demo

test: build sysdeps lint rust-test stubtest py-test docs
	@echo "make test: all checks passed"

$(VPY):
	$(PYTHON) -m venv $(VENV)

# Python dependencies, reinstalled when pyproject.toml changes.
$(VENV)/.deps: pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "maturin>=1.9,<2" "numpy>=1.26" "trimesh>=4" "tqdm>=4.66" "jsonschema>=4.18" \
		"pytest>=8" "mypy>=1.10" "polyscope>=2.3" "pillow>=10" "matplotlib>=3.8" \
		"usd-core>=24" "imageio>=2.31" "imageio-ffmpeg>=0.4.9" "ray>=2.9" "pyarrow>=14" "hypothesis>=6.100" \
		"mkdocs>=1.6" "mkdocstrings[python]>=0.26"
	touch $@

sysdeps:
	@bash scripts/ensure-system-deps.sh

build: $(VENV)/.deps
	$(VBIN)/maturin develop --release --locked -q

lint: $(VENV)/.deps
	bash scripts/check-feature-unification.sh
	cargo fmt --all --check
	cargo clippy $(CARGO_FLAGS) --workspace --all-targets -- -D warnings

# CRUMPLE_REQUIRE_GPU=1: GPU tests fail (instead of skipping) when no adapter
# exists, so a missing lavapipe cannot pass silently.
rust-test: sysdeps
	CRUMPLE_REQUIRE_GPU=1 cargo test $(CARGO_FLAGS)

# The hand-written stub must match the compiled module; the package must type-check.
stubtest: build
	$(VPY) -m mypy.stubtest crumple._core --allowlist stubtest-allowlist.txt
	$(VPY) -m mypy python/crumple

py-test: build sysdeps
	CRUMPLE_REQUIRE_GPU=1 $(VPY) -m pytest

# The documentation site (mkdocs.yml): pages under docs/, the API reference
# from the docstrings and the typed stubs (mkdocstrings); warnings are errors.
docs: $(VENV)/.deps
	$(VBIN)/mkdocs build --strict -q

# The bench extra's peers (pyproject.toml [bench]); a peer that cannot be
# installed is reported unavailable by benches/mpm_vs_peers.py, not fatal.
bench: build sysdeps
	-$(VPY) -m pip install -q "taichi>=1.7"
	-$(VPY) -m pip install -q "warp-lang>=1.5"
	$(VPY) benches/run_all.py

clean:
	rm -rf target $(VENV) out site
