# The commands people run. `make demo` and `make test` work on a fresh Debian 12 with Swift 6.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
VENV := .venv
PYTEST := $(VENV)/bin/python -m pytest
BIN := .build/debug

.PHONY: all deps build build-release test unit-test integration-test demo bench mot faults fuzz install clean

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

build-release: deps
	$(SWIFT) build -c release

# Every test: the Swift unit tests, the protocol reference and vectors, and the integration tests
# that run the real binaries over ptys and sockets.
test: deps
	$(SWIFT) build --build-tests
	$(MAKE) unit-test integration-test

unit-test:
	$(SWIFT) test --skip-build
	$(PYTEST) -q protocol/reference

integration-test:
	DOCK_BIN=$(CURDIR)/$(BIN) $(PYTEST) -q tests/integration

demo: build
	bash scripts/demo.sh

bench: build-release
	bash scripts/bench.sh

# The tracker on MOTChallenge TUD-Campus detections, scored with py-motmetrics beside published trackers.
mot:
	bash scripts/mot.sh

# Unplug/replug 1000 times mid-motion, corrupted bytes, a stalled axis, a silent stand (about 10 min).
faults: build
	$(VENV)/bin/python bench/fault_campaign.py --bin $(CURDIR)/$(BIN) --cycles $${CYCLES:-1000}

fuzz:
	bash Fuzz/run.sh

install: build-release
	bash scripts/install.sh "$(DESTDIR)" "$(PREFIX)"

clean:
	rm -rf .build .build-* $(VENV)
