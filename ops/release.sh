#!/usr/bin/env bash
# Builds the appliance binary a box runs: the image's /usr/lib/peage/appliance (image/build.sh)
# and each release signed for `appliance update` (make release). Every shipped binary comes from
# here, so the image and its updates are the same program.
#
# One static executable: the image has no toolchain or shared C library for it, and the updater
# swaps one file. It is built with cgo so that go-ethereum signs and recovers signatures with
# libsecp256k1, as go-ethereum's own releases do: the pure-Go secp256k1 that CGO_ENABLED=0 gives
# takes three times the CPU, on every voucher, exact payment, settlement and receipt
# (docs/gas.md). The C parts (libsecp256k1, pebble's manual allocator, DataDog/zstd) link
# statically against glibc's libc.a; netgo and osusergo keep name resolution and user lookup in
# Go, since a static glibc cannot load the NSS modules those would call.
#
# Usage: ops/release.sh ARCH OUT     ARCH x86-64 (amd64) or arm64 (aarch64); OUT the binary
# Env:   VERSION  the version it reports (default: git describe, as make build)
#        CC       the C compiler for ARCH (default: gcc on a machine of that architecture,
#                 aarch64-linux-gnu-gcc or x86_64-linux-gnu-gcc across; the native one and the
#                 arm64 one are installed when missing, by ops/setup.d/cc.sh and image-arm64.sh)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "release.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: ops/release.sh x86-64|arm64 OUT" >&2; exit 2; }
case "$1" in
x86-64 | amd64) goarch=amd64 triple=x86_64-linux-gnu ;;
arm64 | aarch64) goarch=arm64 triple=aarch64-linux-gnu ;;
*) die "ARCH must be x86-64 or arm64, not $1" ;;
esac
out=$2
export PATH="$PATH:/usr/local/go/bin" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
version="${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}"

# The C compiler, and glibc's libc.a for it (-print-file-name answers the bare name when the
# compiler has none): installed by the project's setup when missing.
hostarch="$(go env GOHOSTARCH)"
if [ "$goarch" = "$hostarch" ]; then
	cc="${CC:-gcc}" packages="gcc libc6-dev" setup=("$repo/ops/setup.d/cc.sh")
else
	cc="${CC:-$triple-gcc}" packages="gcc-${triple//_/-} libc6-dev-$goarch-cross" setup=()
	[ "$goarch" != arm64 ] || setup=("$repo/ops/setup.d/image-arm64.sh" --install)
fi
hascc() { command -v "$cc" >/dev/null 2>&1 && [ "$("$cc" -print-file-name=libc.a)" != libc.a ]; }
if ! hascc && [ -z "${CC:-}" ] && [ "${#setup[@]}" -gt 0 ]; then
	bash "${setup[@]}" >&2
fi
hascc || die "no C compiler with a static C library for $goarch: $cc (Debian: apt-get install $packages; or set CC)"

mkdir -p "$(dirname "$out")"
(cd "$repo" && CGO_ENABLED=1 CC="$cc" GOOS=linux GOARCH="$goarch" go build -trimpath -buildvcs=false \
	-tags netgo,osusergo \
	-ldflags "-X github.com/peage/appliance/internal/version.Version=$version -linkmode external -extldflags -static" \
	-o "$out" ./appliance/cmd/appliance)

# What a box needs of it, checked on the file itself: no program interpreter and no shared
# library to load, and libsecp256k1's recovery linked in (a build that fell back to pure Go
# would lack it).
# (grep reads all of its input here: with pipefail, a reader killed by SIGPIPE would fail the
# check that matched.)
if readelf -lW "$out" | grep INTERP >/dev/null || readelf -dW "$out" | grep NEEDED >/dev/null; then
	die "$out is dynamically linked: $(readelf -dW "$out" | grep NEEDED | tr -s ' ' | tr '\n' ';')"
fi
go tool nm "$out" | grep ' T secp256k1_ecdsa_recover$' >/dev/null ||
	die "$out has no libsecp256k1 (secp256k1_ecdsa_recover): it would recover signatures in pure Go"
echo "release.sh: $out: appliance $version for linux/$goarch, static, cgo with $cc, libsecp256k1 linked" >&2
