#!/usr/bin/env bash
# Builds the flashable image for ARCH (x86-64 or arm64): bin/appliance built outside the image
# by ops/release.sh (one static binary, cgo for libsecp256k1), the units of ../systemd and the
# docs staged as an extra tree, then mkosi in the tools tree. Output:
# image/out/ARCH/peage_VERSION.raw (GPT: ESP with systemd-boot and the UKI, root), its UKI,
# SHA256SUMS and the JSON package manifest.
#
# Usage: image/build.sh [x86-64|arm64]      (make image, make image ARCH=arm64)
# Env:   UPDATE_KEYS  the release public key(s) the box trusts for updates: .pub files or
#                     directories of them (make image UPDATE_KEYS=...); see update-keys.sh
#        ROLE         single (default: one appliance), gateway (a fleet's gateway) or box (a
#                     fleet's box): the default config (roles/ROLE.toml) and the target enabled
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
arch="${1:-${ARCH:-x86-64}}"
case "$arch" in
x86-64 | amd64) arch=x86-64 ;;
arm64 | aarch64) arch=arm64 ;;
*) echo "build.sh: ARCH must be x86-64 or arm64, not $arch" >&2; exit 2 ;;
esac
role="${ROLE:-single}"
case "$role" in
single | gateway | box) ;;
*) echo "build.sh: ROLE must be single, gateway or box, not $role" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "build.sh: run as root (chroot into the tools tree, loop-free repart)" >&2; exit 1; }
export PATH="$PATH:/usr/local/go/bin"
start=$(date +%s)
"$here/tools.sh" >/dev/null
[ "$arch" = x86-64 ] || "$here/binfmt.sh" "$arch"

# A fleet role's image goes beside the single appliance's, not over it (image-test boots single).
out="$here/out/$arch" && [ "$role" = single ] || out="$here/out/$arch-$role"
stage="$here/out/stage-$arch"
sandbox="$here/out/sandbox"
mkdir -p "$out"
rm -rf "$stage" && mkdir -p "$stage/usr/bin" "$stage/usr/lib/peage" "$stage/usr/lib/systemd/system" "$stage/usr/share/doc/peage" "$stage/etc/peage"

# Reproducibility: the commit's time is the image's SOURCE_DATE_EPOCH (file times, the UKI);
# the version is the commit's description, as for bin/appliance.
epoch="$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)"
version="$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)"
echo "build.sh: $arch image of $version, role $role (SOURCE_DATE_EPOCH=$epoch)" >&2

# The binary every release of this architecture is too (make release): one static executable.
VERSION="$version" "$repo/ops/release.sh" "$arch" "$stage/usr/lib/peage/appliance"
# The release keys signed updates must verify against (UPDATE_KEYS; without it a development
# build ships a throwaway key made on this machine, and says so). The staged binary runs the
# key tools: natively for x86-64, through binfmt's qemu-user for arm64.
UPDATE_KEYS="${UPDATE_KEYS:-}" "$here/update-keys.sh" "$stage/usr/lib/peage/appliance" "$stage/usr/share/peage/update-keys"
# Every unit runs /usr/bin/appliance, the updater's current version (internal/update); until
# the first update that is the image's own binary (systemd/tmpfiles.d/peage-update.conf).
ln -s /var/lib/peage-update/current "$stage/usr/bin/appliance"
shopt -s nullglob
units=("$repo"/systemd/*.service "$repo"/systemd/*.target "$repo"/systemd/*.slice "$repo"/systemd/*.socket "$repo"/systemd/*.timer)
[ "${#units[@]}" -gt 0 ] || { echo "build.sh: no unit in systemd/" >&2; exit 1; }
install -m 0644 "${units[@]}" "$stage/usr/lib/systemd/system/"
install -D -m 0644 -t "$stage/usr/lib/sysusers.d" "$repo"/systemd/sysusers.d/*.conf
install -D -m 0644 -t "$stage/usr/lib/tmpfiles.d" "$repo"/systemd/tmpfiles.d/*.conf
# The home-LAN firewall (nftables.service loads it at boot, after sysusers made its users).
install -D -m 0644 "$repo/ops/nftables/peage.nft" "$stage/etc/nftables.conf"
install -m 0644 "$repo/ARCHITECTURE.md" "$stage/usr/share/doc/peage/ARCHITECTURE.md"
install -D -m 0644 -t "$stage/usr/share/doc/peage/docs" "$repo"/docs/*.md
install -m 0644 "$here/README.md" "$stage/usr/share/doc/peage/image.md"
# The role: its default config, and the name mkosi.postinst.chroot reads to enable its target.
install -m 0644 "$here/roles/$role.toml" "$stage/etc/peage/appliance.toml"
echo "$role" >"$stage/usr/lib/peage/role"
# Its presets: the role's target enabled, the other roles' not (mkosi runs preset-all).
install -D -m 0644 "$here/roles/$role.preset" "$stage/usr/lib/systemd/system-preset/10-peage-role.preset"
# The role's drop-ins (the updater's target and units for the gateway).
[ ! -d "$here/roles/$role-units" ] || cp -a "$here/roles/$role-units/." "$stage/usr/lib/systemd/system/"
find "$stage" -exec touch -h -d "@$epoch" {} +

# The package sources: this machine's Debian archive (mkosi 25 would otherwise add the debug
# archive and the security host, which a closed network does not reach).
mirror="$("$here/mirror.sh" main)"
security="$("$here/mirror.sh" security)"
mkdir -p "$sandbox/etc/apt/sources.list.d"
cat >"$sandbox/etc/apt/sources.list.d/mkosi.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

# mkosi renames the finished disk from its workspace into the output directory when both are
# on one mount of the tools tree, and copies it otherwise (/var/tmp to the repository: 2 GB
# more at the peak, which a nearly full build disk did not have). So both are in the cache's
# mount (it refuses a workspace under its source directory, image/), and the outputs move to
# out/ from the host afterwards, a rename where the cache and the repository share a disk.
cache="${PEAGE_IMAGE_CACHE:-/var/cache/peage-image-cache}"
mkdir -p "$cache/workspace"
assembly="$(mktemp -d "$cache/output-$arch.XXXXXX")"
trap 'rm -rf "$assembly"' EXIT
cd "$here"
SOURCE_DATE_EPOCH="$epoch" "$here/run-in-tools.sh" mkosi \
	--directory "$here" \
	--architecture "$arch" \
	--image-version "$version" \
	--source-date-epoch "$epoch" \
	--sandbox-tree "$sandbox" \
	--extra-tree "$stage" \
	--output-directory "/var/cache/peage-image-cache/${assembly##*/}" \
	--workspace-directory /var/cache/peage-image-cache/workspace \
	--package-cache-directory "/var/cache/peage-image-cache/packages-$arch" \
	--cache-directory "/var/cache/peage-image-cache/incremental-$arch" \
	--incremental yes \
	--force build
mv -f "$assembly"/* "$out/"
raw="$out/peage_$version.raw"
echo "build.sh: $raw $(du -h --apparent-size "$raw" | cut -f1) (allocated $(du -h "$raw" | cut -f1)) in $(($(date +%s) - start)) s" >&2
ln -sfn "peage_$version.raw" "$out/peage.raw"
# What the image trusts, beside it (image-test signs its test release against these).
rm -rf "$out/update-keys" && cp -a "$stage/usr/share/peage/update-keys" "$out/update-keys"
[ -n "${UPDATE_KEYS:-}" ] || echo "build.sh: DEVELOPMENT IMAGE: it trusts the throwaway update key $(ls "$out/update-keys"), not a release key (UPDATE_KEYS)" >&2
