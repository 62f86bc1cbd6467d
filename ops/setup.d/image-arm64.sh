#!/usr/bin/env bash
# Installs what `make image ARCH=arm64` needs on an amd64 build machine, only when missing:
# qemu-user-static (runs the arm64 image's maintainer scripts and the staged arm64 binary) and
# binfmt-support. image/binfmt.sh runs it with --install and then registers the handler.
# ops/setup.sh runs it too, but there it installs only when PEAGE_SETUP_IMAGE=arm64: the
# test suite does not need the 380 MB of emulators.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
if [ "${1:-}" != --install ] && [ "${PEAGE_SETUP_IMAGE:-}" != arm64 ]; then
	exit 0
fi
[ "$(uname -m)" != aarch64 ] || exit 0 # arm64 programs run natively
if [ -x /usr/bin/qemu-aarch64-static ] && command -v update-binfmts >/dev/null 2>&1; then
	exit 0
fi
apt_install qemu-user-static binfmt-support
