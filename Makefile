# The commands people run. `make demo` and `make test` work on a fresh Debian 12 with Swift 6.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
VENV := .venv
PYTEST := $(VENV)/bin/python -m pytest
BIN := .build/debug

.PHONY: all deps build build-release test unit-test integration-test demo bench soak mot faults fuzz api-fuzz install clean

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

# Live tracking through the real dockd for SOAK_SECONDS (an hour by default; not in `make test` or CI):
# RSS, fds and CPU sampled from /proc, the figures written into BENCHMARKS.md.
soak: deps
	for p in dockd dock-sim dock-bench; do $(SWIFT) build -c release --product $$p || exit; done
	$(VENV)/bin/python bench/soak.py --bin $(CURDIR)/.build/release --seconds $${SOAK_SECONDS:-3600} --out out/soak; \
	status=$$?; $(VENV)/bin/python scripts/replace_section.py BENCHMARKS.md soak < out/soak/summary.md && exit $$status

# The tracker on MOTChallenge TUD-Campus detections, scored with py-motmetrics beside published trackers.
mot:
	bash scripts/mot.sh

# Unplug/replug 1000 times mid-motion, corrupted bytes, a stalled axis, a silent stand (about 10 min).
faults: build
	$(VENV)/bin/python bench/fault_campaign.py --bin $(CURDIR)/$(BIN) --cycles $${CYCLES:-1000}

fuzz:
	bash Fuzz/run.sh

# Whole generated requests through the real dockd on dock-sim (tests/integration/api_fuzz.py) for
# API_FUZZ_SECONDS (30 min by default), a fresh dockd every API_FUZZ_SECONDS/API_FUZZ_ROUNDS; `make
# test` runs 75 s of it. API_FUZZ_SEED replays a run.
api-fuzz: build
	$(VENV)/bin/python tests/integration/api_fuzz.py --bin $(CURDIR)/$(BIN) --seconds $${API_FUZZ_SECONDS:-1800} \
	    --rounds $${API_FUZZ_ROUNDS:-6} $${API_FUZZ_SEED:+--seed $$API_FUZZ_SEED}

install: build-release
	bash scripts/install.sh "$(DESTDIR)" "$(PREFIX)"

clean:
	rm -rf .build .build-* $(VENV)
