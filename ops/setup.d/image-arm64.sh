#!/usr/bin/env bash
# Installs what `make image ARCH=arm64` and `make release ARCH=arm64` need on an amd64 build
# machine, each only when missing: qemu-user-static (runs the arm64 image's maintainer scripts
# and the staged arm64 binary) with binfmt-support, and the cross C compiler with arm64's C
# library (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross), which the shipped binary's cgo
# packages (libsecp256k1 and the rest, linked statically: ops/release.sh) are compiled with.
# image/binfmt.sh and ops/release.sh run it with --install. ops/setup.sh runs it too, but there
# it installs only when PEAGE_SETUP_IMAGE=arm64: the test suite needs neither the 380 MB of
# emulators nor the cross compiler.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
if [ "${1:-}" != --install ] && [ "${PEAGE_SETUP_IMAGE:-}" != arm64 ]; then
	exit 0
fi
[ "$(uname -m)" != aarch64 ] || exit 0 # arm64 programs run natively, the native gcc builds them (cc.sh)
missing=()
if [ ! -x /usr/bin/qemu-aarch64-static ] || ! command -v update-binfmts >/dev/null 2>&1; then
	missing+=(qemu-user-static binfmt-support)
fi
# -print-file-name answers the bare name when the compiler has no such file: no static libc.
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || [ "$(aarch64-linux-gnu-gcc -print-file-name=libc.a)" = libc.a ]; then
	missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
fi
[ "${#missing[@]}" -eq 0 ] || apt_install "${missing[@]}"
