# péage appliance. `make help` lists the targets.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
# go.mod names the toolchain the box is built and tested with (a Go release with the security
# fixes govulncheck asks for); the go command fetches it from the module proxy once.
export GOTOOLCHAIN ?= auto
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/peage/appliance/internal/version.Version=$(VERSION)
GOTEST_FLAGS ?= -race -timeout 30m

.PHONY: help setup build release run test test-short bench lint generate verify-generate fuzz clean image image-test image-tools

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

setup: ## install what the appliance and its tests need (idempotent)
	@ops/setup.sh

build: ## build bin/appliance
	go build -trimpath -ldflags "$(LDFLAGS)" -o bin/appliance ./appliance/cmd/appliance

# The binary a box runs, as the image ships it (ops/release.sh: static, cgo for libsecp256k1),
# named for `appliance update sign`: bin/appliance_VERSION_GOARCH.
RELEASE_GOARCH = $(if $(filter arm64 aarch64,$(ARCH)),arm64,amd64)
release: ## build the shipped binary for ARCH (x86-64 or arm64) as bin/appliance_VERSION_GOARCH, to sign as an update
	VERSION="$(VERSION)" ops/release.sh $(ARCH) bin/appliance_$(VERSION)_$(RELEASE_GOARCH)

run: setup build ## run the appliance on its embedded default (appliance dev)
	bin/appliance dev

# The suite runs in one time zone and locale whatever the machine's, so that a result never
# depends on where it runs; the tests themselves do not rely on it (browsers pin their own).
test: export TZ := UTC
test: export LANG := C.UTF-8
test: export LC_ALL := C.UTF-8
test: export LANGUAGE :=
test: setup ## run the whole test suite (unit, golden, fixtures, Chromium, tunnels, chain)
	go vet ./...
	go test $(GOTEST_FLAGS) ./...

# -short leaves out every test that needs what setup installs or starts whole daemons
# (internal/testenv: Chromium, the embedded chain, node, builds, killed processes).
test-short: ## the unit tests only, no setup needed (no Chromium, chain, node, daemons, deadline waits or whole-tree type check): the inner loop, about 2 minutes
	go test -short ./...

bench: setup build ## run every benchmark program; each prints ratios against a baseline measured in the same run
	@for d in ops/bench/*/; do echo "== $$d"; go run ./$$d || exit 1; done

lint: ## gofmt, go vet, staticcheck, dependency rules and shared log keys, go mod tidy, govulncheck (ops/lint.sh)
	@ops/lint.sh

generate: ## regenerate checked-in generated code (settle/usdc and chainrpc/testtoken contracts and bindings; needs node)
	go generate ./...

verify-generate: generate ## fail when generated code is stale
	git diff --exit-code

fuzz: ## run every fuzz target of the tree (found, not listed) for FUZZTIME each (default 30s)
	@ops/fuzz.sh

# The flashable image (image/README.md): root, a Debian archive, ~1 GB of disk per architecture.
ARCH ?= x86-64
image-tools: ## make the image tools tree (trixie: mkosi, systemd-repart, QEMU, OVMF/AAVMF), once
	image/tools.sh

# UPDATE_KEYS: the release public key(s) the box trusts for signed updates; empty makes a
# development image with a throwaway key (image/update-keys.sh).
UPDATE_KEYS ?=
# ROLE: single (one appliance), gateway or box of a fleet (image/README.md, "Roles").
ROLE ?= single
image: ## build the bootable GPT disk image with mkosi (ARCH=x86-64 or arm64, UPDATE_KEYS=release.pub, ROLE=single|gateway|box) into image/out/ARCH
	UPDATE_KEYS="$(UPDATE_KEYS)" ROLE="$(ROLE)" image/build.sh $(ARCH)

image-test: ## boot the built image under QEMU TCG and pass on the box's smoke marker (ARCH=...)
	image/test.sh $(ARCH)

clean: ## remove build outputs and dev state
	rm -rf bin .state image/out
