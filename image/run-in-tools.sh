#!/usr/bin/env bash
# Runs a command chrooted in the tools tree (image/tools.sh), in a private mount namespace so
# nothing stays mounted afterwards. The tree is bind-mounted onto itself (mkosi's sandbox needs
# / to be a mount point: without it, `mount ... MS_SLAVE` fails with EINVAL), /proc /sys /dev
# are the host's, the repository appears at its own path, and the package and build caches
# live outside the tree (under PEAGE_IMAGE_CACHE) so rebuilding the tree keeps them.
#
# Usage: image/run-in-tools.sh COMMAND [ARG...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
tools="$("$here/tools.sh")"
cache="${PEAGE_IMAGE_CACHE:-/var/cache/peage-image-cache}"
mkdir -p "$cache"
cp -L /etc/resolv.conf "$tools/etc/resolv.conf"
exec unshare --mount --propagation private -- /bin/bash -euo pipefail -c '
	tools=$1 repo=$2 cache=$3; shift 3
	mount --bind "$tools" "$tools"
	for d in proc sys dev; do mount --rbind "/$d" "$tools/$d"; done
	mkdir -p "$tools$repo" "$tools/var/cache/peage-image-cache"
	mount --bind "$repo" "$tools$repo"
	mount --bind "$cache" "$tools/var/cache/peage-image-cache"
	if [ -d /proc/sys/fs/binfmt_misc ] && mountpoint -q /proc/sys/fs/binfmt_misc; then
		mount --bind /proc/sys/fs/binfmt_misc "$tools/proc/sys/fs/binfmt_misc" 2>/dev/null || true
	fi
	exec chroot "$tools" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM="${TERM:-dumb}" \
		LANG=C.UTF-8 ${SOURCE_DATE_EPOCH:+SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH} /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$PWD" "$@"
' run-in-tools "$tools" "$repo" "$cache" "$@"
