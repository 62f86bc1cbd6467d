#!/usr/bin/env bash
# Makes the image tools tree, idempotently: a Debian trixie root made with mmdebstrap holding
# mkosi 25, systemd-repart, ukify, QEMU and the UEFI firmwares. The host keeps its own systemd
# (bookworm's 252 is too old for mkosi's repart); every image step runs chrooted in this tree
# (image/run-in-tools.sh). The tree is rebuilt only when the package list below changes: its
# hash is stamped in the tree, and a tree without the stamp (an interrupted build) is made anew.
#
# Usage: image/tools.sh            prints the tree's path when it is ready
# Env:   PEAGE_IMAGE_TOOLS         where the tree lives (default /var/cache/peage-image-tools)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="${PEAGE_IMAGE_TOOLS:-/var/cache/peage-image-tools}"

# What mkosi needs to assemble and check a trixie disk image for x86-64 and arm64, and what
# image-test needs to boot it (QEMU, OVMF for x86-64, AAVMF for arm64).
packages=(
	mkosi bubblewrap apt debian-archive-keyring ca-certificates gpgv
	systemd systemd-repart systemd-container systemd-boot systemd-boot-efi systemd-ukify
	dosfstools mtools e2fsprogs erofs-utils squashfs-tools cpio zstd xz-utils kmod
	python3 python3-pefile util-linux fdisk
	qemu-system-x86 qemu-system-arm ovmf qemu-efi-aarch64
)
stamp="$(printf '%s\n' trixie "${packages[@]}" | sha256sum | cut -c1-16)"

if [ -f "$tools/.peage-tools-stamp" ] && [ "$(cat "$tools/.peage-tools-stamp")" = "$stamp" ]; then
	echo "$tools"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "image/tools.sh: run as root (mmdebstrap --mode=root, chroot)" >&2; exit 1; }

if ! command -v mmdebstrap >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mmdebstrap
fi

mirror="$("$here/mirror.sh" main)"
security="$("$here/mirror.sh" security)"
echo "image/tools.sh: making the tools tree in $tools (trixie from $mirror)" >&2
rm -rf "$tools.new"
start=$(date +%s)
mmdebstrap --variant=apt --mode=root --include="$(IFS=,; echo "${packages[*]}")" \
	trixie "$tools.new" \
	"deb $mirror trixie main" "deb $mirror trixie-updates main" "deb $security trixie-security main" >&2
echo "$stamp" >"$tools.new/.peage-tools-stamp"
rm -rf "$tools"
mv "$tools.new" "$tools"
echo "image/tools.sh: tools tree ready in $(($(date +%s) - start)) s, $(du -sh "$tools" | cut -f1)" >&2
echo "$tools"
