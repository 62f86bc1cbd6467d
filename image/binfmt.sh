#!/usr/bin/env bash
# Lets the amd64 build machine run arm64 programs (the image's maintainer scripts, its initrd
# build) through qemu-user-static: mounts binfmt_misc and registers the aarch64 handler with
# the F flag (the interpreter is opened now, so it works inside the tools tree's chroot and
# mkosi's sandbox). Idempotent; the packages come from ops/setup.d/image-arm64.sh.
set -euo pipefail
arch="${1:-arm64}"
[ "$arch" = arm64 ] || { echo "binfmt.sh: only arm64 is handled" >&2; exit 2; }
"$(cd "$(dirname "$0")/.." && pwd)/ops/setup.d/image-arm64.sh" --install >&2
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	update-binfmts --enable qemu-aarch64 2>/dev/null || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	interp=/usr/bin/qemu-aarch64-static
	[ -x "$interp" ] || interp=/usr/bin/qemu-aarch64
	printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'"$interp"':F' >/proc/sys/fs/binfmt_misc/register
fi
grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 || { echo "binfmt.sh: qemu-aarch64 is registered without the F flag" >&2; exit 1; }
echo "binfmt.sh: aarch64 programs run through $(sed -n 's/^interpreter //p' /proc/sys/fs/binfmt_misc/qemu-aarch64)"
