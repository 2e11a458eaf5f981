# azseed — everything a fresh machine needs goes through these targets.
#   make seed     build azseed (release), seed SpeakEasy into the embedded storage (the main job)
#   make install  put that same build on PATH, with completions and a man page (no second compile)
#   make test     install what is missing, build, run every test
SWIFT      ?= swift
APT_PACKAGES := libjpeg-dev libcurl4-openssl-dev libsqlite3-dev rclone openssl ca-certificates
# Only the tests need these: a real browser drives the emulator's CORS (test_browser.py).
TEST_APT_PACKAGES := chromium fonts-dejavu-core
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
AZSEED     := .build/debug/azseed
VENV       := .venv
VENV_AZ    := .venv-az
VENV_SDK   := .venv-sdk-suites
VENV_PEERS := .venv-peers
PYTHON     ?= python3
SHELL      := /bin/bash

.PHONY: all deps test-deps venv venv-az venv-sdk venv-peers build build-tests release test seed bench clean install dist test-dist test-examples conformance lint format

# Where `make install` puts azseed: $(PREFIX)/bin, completions and the man page under
# $(PREFIX)/share. DESTDIR stages a package; CONFIGURATION=debug installs the debug build.
PREFIX        ?= /usr/local
CONFIGURATION ?= release
SHARE         := $(DESTDIR)$(PREFIX)/share

all: build

# Debian packages the build links against (and rclone, which the tests drive); installed
# only when missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-deps: deps
	@missing=""; for p in $(TEST_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The official Azure SDKs judge the protocol; they live in a local virtual environment,
# rebuilt when Tests/conformance/requirements.txt changes.
venv: $(VENV)/.installed
$(VENV)/.installed: Tests/conformance/requirements.txt
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/conformance/requirements.txt
	touch $@

# The Azure CLI, a client this project did not write, drives the emulator in the tests. It
# pins its own dependencies, so it lives in a virtual environment of its own.
venv-az: $(VENV_AZ)/.installed
$(VENV_AZ)/.installed: Tests/conformance/requirements-az.txt
	@$(PYTHON) -m venv $(VENV_AZ) 2>/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV_AZ); }
	$(VENV_AZ)/bin/pip install -q --disable-pip-version-check -r Tests/conformance/requirements-az.txt
	touch $@

# The official SDKs' own test suites (Tests/sdk-suites) run with their test dependencies, in a
# virtual environment of their own.
venv-sdk: $(VENV_SDK)/.installed
$(VENV_SDK)/.installed: Tests/sdk-suites/requirements.txt
	@$(PYTHON) -m venv $(VENV_SDK) 2>/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV_SDK); }
	$(VENV_SDK)/bin/pip install -q --disable-pip-version-check -r Tests/sdk-suites/requirements.txt
	touch $@

# The test suites of projects written against Azurite (adlfs, Apache Arrow's AzureFileSystem),
# from their pinned wheels, in a virtual environment of their own.
venv-peers: $(VENV_PEERS)/.installed
$(VENV_PEERS)/.installed: Tests/peer-suites/requirements.txt
	@$(PYTHON) -m venv $(VENV_PEERS) 2>/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV_PEERS); }
	$(VENV_PEERS)/bin/pip install -q --disable-pip-version-check -r Tests/peer-suites/requirements.txt
	touch $@

build: deps
	$(SWIFT) build

# Tests write their scratch folders under .build/test-tmp, emptied on every run. Everything
# the suites print, and every output of azseed they record, lands in .build/test-output and
# is scanned for account keys and SAS signatures at the end.
OUTPUTS := .build/test-output
# The committed .swift-format is the style; the lint fails on any deviation.
FORMATTED := Sources Tests Plugins Benchmarks examples/swift/Sources examples/swift/Tests Package.swift examples/swift/Package.swift
lint:
	$(SWIFT) format lint --strict -r --configuration .swift-format $(FORMATTED)

format:
	$(SWIFT) format format -i -r --configuration .swift-format $(FORMATTED)

# AZSEED_BIN on make's command line names the azseed the Python suites drive (.ci/run passes the
# release binary it built for dist: what users run, and the suites take half the time); the
# debug build just made otherwise. Not taken from the environment, where an exported AZSEED_BIN
# (examples/python reads one) would make the suites judge a binary this build did not make.
AZSEED_BIN :=
# Every target and test, debug.
build-tests: deps
	$(SWIFT) build --build-tests

test: test-deps venv venv-az lint build-tests
	rm -rf .build/test-tmp $(OUTPUTS) && mkdir -p .build/test-tmp $(OUTPUTS)
	@# The transport's no-shared-thread check measures how soon Dispatch runs a block; it runs
	@# alone first, where the other suites' emulators cannot crowd the two cores it measures.
	set -o pipefail; TMPDIR=$(CURDIR)/.build/test-tmp $(SWIFT) test --skip-build --filter TransportConcurrencyTests 2>&1 | tee $(OUTPUTS)/swift-test-alone.log
	set -o pipefail; TMPDIR=$(CURDIR)/.build/test-tmp $(SWIFT) test --skip-build --skip TransportConcurrencyTests 2>&1 | tee $(OUTPUTS)/swift-test.log
	set -o pipefail; AZSEED_BIN="$(or $(AZSEED_BIN),$$($(SWIFT) build --show-bin-path)/azseed)" AZSEED_OUTPUT_LOG=$(CURDIR)/$(OUTPUTS)/azseed-outputs.log $(VENV)/bin/python -m pytest -q Tests/conformance 2>&1 | tee $(OUTPUTS)/pytest.log
	@# The pytest fixture users copy (examples/python), run as they would run it.
	set -o pipefail; AZSEED_BIN="$(or $(AZSEED_BIN),$$($(SWIFT) build --show-bin-path)/azseed)" $(VENV)/bin/python -m pytest -q -p no:cacheprovider examples/python 2>&1 | tee $(OUTPUTS)/examples-python.log
	$(VENV)/bin/python Tests/scan_secrets.py $(OUTPUTS)

# Plans and applies the SpeakEasy dataset on the embedded storage (.azseed/storage) with the
# release build `make install` and `make dist` use, so the quick start and the install compile
# once; a re-run converges. azseed prints where the data lives and how to serve it; the last
# line says how to run azseed by name.
seed: release
	$(RELEASE_DIR)/azseed apply
	@echo "azseed is built: $(RELEASE_DIR)/azseed. To run it by name: make install PREFIX=\$$HOME/.local (no second compile; ~/.local/bin must be on PATH), or sudo make install"

# Release-build benchmarks: first the curves (apply, a cold plan and the SDK port at 10k to 1M
# events: Benchmarks/curves.tsv, the pictures docs/images/bench-*.svg the README shows, and
# the curves table in Benchmarks/RESULTS.md), then generation and emulator rates, azseed beside
# the Python SDK port of the original program (Benchmarks/compare.sh), then plan's time and
# memory over 100,000 and 1,000,000 existing entities (Benchmarks/plan-memory.sh). Figures:
# Benchmarks/RESULTS.md.
bench: deps venv
	Benchmarks/curves.sh
	Benchmarks/run.sh
	Benchmarks/compare.sh
	Benchmarks/plan-memory.sh

# The binary alone is the whole tool (the default dataset is compiled in); completions for
# bash, zsh and fish come from the binary itself, the man page from argument-parser's
# generate-manual tool run on it (built alone: its plugin would build every product in debug).
# A release build links the Swift runtime statically and is installed stripped: it needs only
# what Debian ships (libc, libstdc++, libcurl, libjpeg, libsqlite3, libxml2), not the toolchain.
# `make seed`, `make install` and `make dist` share that one build.
BUILD_FLAGS   := -c $(CONFIGURATION) $(if $(filter release,$(CONFIGURATION)),--static-swift-stdlib,)
RELEASE_FLAGS := -c release --static-swift-stdlib
RELEASE_DIR   := .build/release
STRIP         := $(if $(filter release,$(CONFIGURATION)),-s,)
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product azseed

install: deps
	$(SWIFT) build $(BUILD_FLAGS) --product azseed
	$(SWIFT) build $(BUILD_FLAGS) --product generate-manual >/dev/null
	@dir="$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)"; bin="$$dir/azseed"; set -e; \
	man="$$(mktemp -d)"; trap 'rm -rf "$$man"' EXIT; "$$dir/generate-manual" "$$bin" --output-directory "$$man" >/dev/null; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(SHARE)/bash-completion/completions" "$(SHARE)/zsh/site-functions" \
		"$(SHARE)/fish/vendor_completions.d" "$(SHARE)/man/man1"; \
	install -m 0755 $(STRIP) "$$bin" "$(DESTDIR)$(PREFIX)/bin/azseed"; \
	"$$bin" --generate-completion-script bash > "$(SHARE)/bash-completion/completions/azseed"; \
	"$$bin" --generate-completion-script zsh > "$(SHARE)/zsh/site-functions/_azseed"; \
	"$$bin" --generate-completion-script fish > "$(SHARE)/fish/vendor_completions.d/azseed.fish"; \
	install -m 0644 "$$man/azseed.1" "$(SHARE)/man/man1/azseed.1"; \
	echo "installed $(DESTDIR)$(PREFIX)/bin/azseed ($$("$$bin" --version)), completions and man page under $(SHARE)"

# The release as a tarball: bin/azseed (static Swift runtime, stripped), completions and the
# man page under share/, and SHA256SUMS beside it, in .build/dist.
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/azseed/Azseed.swift)
DIST    := azseed-$(VERSION)-linux-$(shell uname -m)
dist: deps
	rm -rf .build/dist
	$(MAKE) -s install PREFIX=/ DESTDIR=$(CURDIR)/.build/dist/$(DIST) CONFIGURATION=release
	tar -C .build/dist -czf .build/dist/$(DIST).tar.gz $(DIST)
	cd .build/dist && sha256sum $(DIST).tar.gz > SHA256SUMS
	@echo "wrote .build/dist/$(DIST).tar.gz ($$(du -h .build/dist/$(DIST).tar.gz | cut -f1)) and .build/dist/SHA256SUMS"

# The release tarball tried as a user would: unpacked, run with the toolchain's runtime
# hidden (Tests/conformance/test_dist.py; skipped by `make test`, which builds no release).
test-dist: dist venv
	AZSEED_DIST=$(CURDIR)/.build/dist/$(DIST).tar.gz $(VENV)/bin/python -m pytest -q Tests/conformance/test_dist.py

# examples/swift, an app package depending on azseed by path whose tests use AzseedTesting,
# built and tested with its own manifest, pinned to azseed's own resolved versions. Its build
# shares azseed's build folder: the azseed modules it depends on are compiled with the same
# commands either way, so they are reused, not built a second time.
test-examples: deps
	cp Package.resolved examples/swift/Package.resolved
	$(SWIFT) build --package-path examples/swift --scratch-path "$(CURDIR)/.build" --build-tests
	$(SWIFT) test --package-path examples/swift --scratch-path "$(CURDIR)/.build" --skip-build

# The official Azure SDKs' own test suites (azure-data-tables, azure-storage-blob: the tests of
# their pinned source distributions), live against the emulator; a report per file in
# .build/sdk-suites/report-<suites>.md, and a failure when a test expected to pass does not
# (Tests/sdk-suites/run.py; docs/CONFORMANCE.md). Then the peer projects' suites written for
# Azurite (Tests/peer-suites/run.py), guarded the same way. SUITES_BIN names the azseed they
# judge (.ci/run passes the release build it made for dist); the debug build by default.
SUITES_BIN ?=
conformance: test-deps venv-sdk venv-peers
	@bin="$(SUITES_BIN)"; \
	if [ -z "$$bin" ]; then $(SWIFT) build --product azseed && bin="$$($(SWIFT) build --show-bin-path)/azseed"; fi; \
	set -e; echo "suites judge $$bin"; \
	$(VENV_SDK)/bin/python Tests/sdk-suites/run.py --binary "$$bin"; \
	$(VENV_PEERS)/bin/python Tests/peer-suites/run.py --binary "$$bin"

clean:
	rm -rf .build fixture $(VENV) $(VENV_AZ) $(VENV_SDK) $(VENV_PEERS)
