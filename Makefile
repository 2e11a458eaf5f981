# azseed — everything a fresh machine needs goes through these targets.
#   make seed   seed the SpeakEasy dataset into the embedded storage (the main job)
#   make test   install what is missing, build, run every test
SWIFT      ?= swift
APT_PACKAGES := libjpeg-dev libcurl4-openssl-dev libsqlite3-dev
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
AZSEED     := .build/debug/azseed
VENV       := .venv
PYTHON     ?= python3

.PHONY: all deps venv build test seed bench clean

all: build

# Debian packages the build links against; installed only when missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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

build: deps
	$(SWIFT) build

# Tests write their scratch folders under .build/test-tmp, emptied on every run.
test: deps venv
	$(SWIFT) build --build-tests
	rm -rf .build/test-tmp && mkdir -p .build/test-tmp
	TMPDIR=$(CURDIR)/.build/test-tmp $(SWIFT) test --skip-build
	$(VENV)/bin/python -m pytest -q Tests/conformance

# Plans and applies the SpeakEasy dataset on the embedded storage (.azseed/storage); a re-run
# converges. azseed prints where the data lives and how to serve it.
seed: build
	$(AZSEED) apply

bench: deps
	Benchmarks/run.sh

clean:
	rm -rf .build fixture $(VENV)
