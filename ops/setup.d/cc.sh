#!/usr/bin/env bash
# Installs the native C compiler and C library (Debian's gcc and libc6-dev), only when missing.
# go-ethereum recovers and makes signatures with libsecp256k1 through cgo; without a C compiler
# the go command silently builds with CGO_ENABLED=0 and takes the three times slower pure-Go
# secp256k1, so the tests and benches would measure another program than the box runs
# (docs/gas.md). The shipped binary (ops/release.sh) is linked statically: it needs libc.a,
# which libc6-dev carries. ops/release.sh runs this when the compiler is missing.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
if ! command -v gcc >/dev/null 2>&1 || [ "$(gcc -print-file-name=libc.a)" = libc.a ]; then
	apt_install gcc libc6-dev
fi
gcc --version | head -1
