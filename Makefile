# The commands people run. `make demo` and `make test` work on a fresh Debian 12 with Swift 6.
SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
VENV := .venv
PYTEST := $(VENV)/bin/python -m pytest
BIN := .build/debug
VERSION := $(shell sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/DockVersion/DockVersion.swift)

.PHONY: all deps build build-release build-static man test unit-test integration-test box-test demo bench symbol-order soak mot faults fuzz under-load api-fuzz install deb clean \
	camera-venv bench-camera

all: build

deps:
	bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

build-release: deps
	$(SWIFT) build -c release

# What is installed and packaged: the release dockd, which is also every tool (scripts/install.sh),
# with the Swift runtime linked in (no RUNPATH into the toolchain; it needs only the system's C libraries).
build-static: deps
	$(SWIFT) build -c release --static-swift-stdlib --product dockd

# dockd(8), dockctl(1), dock-sim(1)… from swift-argument-parser's manual plugin, into .build/man.
man: build
	bash scripts/man.sh

# Every test: the Swift unit tests, the protocol reference and vectors, the integration tests that
# run the real binaries over ptys and sockets, the V4L2 camera under a real kernel in a VM (vm-test),
# and the Debian package under a real systemd in a container (box-test).
test: deps
	$(SWIFT) build --build-tests
	$(MAKE) unit-test integration-test vm-test box-test

unit-test:
	$(SWIFT) test --skip-build
	$(PYTEST) -q protocol/reference

integration-test:
	DOCK_BIN=$(CURDIR)/$(BIN) $(PYTEST) -q tests/integration

# The .deb installed, used, upgraded in place, removed and purged in a Debian 12 container booted
# with its own systemd (shared/tools/sdbox; the image is built once into /var/tmp). Root only.
box-test: deb
	DOCKD_DEB=$(CURDIR)/out/dockd_$(VERSION)_$$(dpkg --print-architecture).deb DOCK_BIN=$(CURDIR)/$(BIN) \
	    $(PYTEST) -q tests/box

demo: build
	bash scripts/demo.sh

# The release build (dock-bench and the tools), then the package (its sizes are figures), whose static
# dockd, what is installed, is the one the daemon's figures are of: built last, it is .build/release/dockd.
# In that order under `make -j` too (as prerequisites, the two builds could run either way round).
bench: deps
	$(MAKE) build-release
	$(MAKE) deb
	bash scripts/bench.sh

# bench/profiles/dockd.order: the functions dockd runs (idle, one stand, a camera client, under
# valgrind's callgrind), which the link packs together (Package.swift). Regenerate when much has changed.
symbol-order: deps
	$(SWIFT) build -c release --static-swift-stdlib --product dockd
	$(VENV)/bin/python bench/symbol_order.py --bin $(CURDIR)/.build/release

# Live tracking through the real dockd for SOAK_SECONDS (an hour by default; not in `make test` or CI):
# RSS, fds and CPU sampled from /proc, the figures written into BENCHMARKS.md.
soak: deps
	for p in dockd dock-sim dock-bench; do $(SWIFT) build -c release --product $$p || exit; done
	$(VENV)/bin/python bench/soak.py --bin $(CURDIR)/.build/release --seconds $${SOAK_SECONDS:-3600} --out out/soak; \
	status=$$?; $(VENV)/bin/python scripts/replace_section.py BENCHMARKS.md soak < out/soak/summary.md && exit $$status

# The tracker on MOTChallenge TUD-Campus detections, scored with py-motmetrics beside published trackers.
mot:
	bash scripts/mot.sh

# make demo and make test, each 10 times (RUNS) beside stress-ng on every core; pass rates into BENCHMARKS.md.
under-load: deps
	bash scripts/under-load.sh

# Unplug/replug 1000 times mid-motion, corrupted bytes, a stalled axis, a silent stand (about 10 min).
faults: build
	$(VENV)/bin/python bench/fault_campaign.py --bin $(CURDIR)/$(BIN) --cycles $${CYCLES:-1000}

# dock-camera's optional mediapipe detectors (BlazeFace, BlazePose) in .venv-camera, from requirements-camera.txt.
camera-venv:
	bash scripts/camera-venv.sh

# dock-camera's figures (detectors, latency, CPU, closed loop over vtest.avi through the real dockd), written
# into BENCHMARKS.md (section `camera`); about 16 minutes.
bench-camera: deps camera-venv
	$(SWIFT) build --product dockd
	$(SWIFT) build --product dock-sim
	/usr/bin/python3 camera/bench/bench_camera.py --bin $(CURDIR)/$(BIN) --out out/camera
	$(VENV)/bin/python scripts/replace_section.py BENCHMARKS.md camera < out/camera/summary.md

# Under Debian's own kernel in qemu (shared/tools/vmbox): kernel/vptz, a virtual PTZ webcam module
# (v4l2-compliance, its controls and capture), and the real dockd driving it through the v4l2 driver;
# dock-camera relaying its frames to v4l2loopback, read by a second program (test_relay.py); three VM
# boots, about five minutes (the relay's: 2 min). Needs root or sudo for apt.
.PHONY: vm-test
vm-test: deps
	DOCK_BIN=$(CURDIR)/$(BIN) $(PYTEST) -q tests/vm

fuzz:
	bash Fuzz/run.sh

# Whole generated requests through the real dockd on dock-sim (tests/integration/api_fuzz.py) for
# API_FUZZ_SECONDS (30 min by default), a fresh dockd every API_FUZZ_SECONDS/API_FUZZ_ROUNDS; `make
# test` runs 75 s of it. API_FUZZ_SEED replays a run.
api-fuzz: build
	$(VENV)/bin/python tests/integration/api_fuzz.py --bin $(CURDIR)/$(BIN) --seconds $${API_FUZZ_SECONDS:-1800} \
	    --rounds $${API_FUZZ_ROUNDS:-6} $${API_FUZZ_SEED:+--seed $$API_FUZZ_SEED}

install: build-static man
	bash scripts/install.sh "$(DESTDIR)" "$(PREFIX)"

# out/dockd_VERSION_ARCH.deb: the same files as `make install PREFIX=/usr`, with maintainer scripts.
deb: build-static man
	bash scripts/deb.sh

clean:
	rm -rf .build .build-* $(VENV) .venv-camera
