#!/usr/bin/env bash
# Stages the public keys the image trusts for signed updates into DEST (the image's
# /usr/share/peage/update-keys, where `appliance update` looks) and lists them with their
# fingerprints. Called by build.sh; only public keys ever go in: the signing key stays on the
# release manager's offline machine (image/README.md, "Release keys").
#
# UPDATE_KEYS names them: .pub files (`appliance update keygen`) and/or directories of .pub
# files, separated by spaces; several keys let a release key be rotated. Without UPDATE_KEYS (a
# development or test build) a throwaway pair is made once per machine OUTSIDE the repository,
# in PEAGE_UPDATE_DEV_KEYS (default PEAGE_IMAGE_CACHE/dev-update-key), and reused so that
# rebuilds of one commit stay byte-identical; such an image takes releases signed on this
# machine only, and this script says so loudly. image-test signs its test release with it.
#
# Usage: image/update-keys.sh APPLIANCE DEST
#   APPLIANCE  a binary of this repository that runs here (for `update keygen` and `update keys`)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
[ $# -eq 2 ] || { echo "usage: update-keys.sh APPLIANCE DEST" >&2; exit 2; }
appliance=$1 dest=$2
cache="${PEAGE_IMAGE_CACHE:-/var/cache/peage-image-cache}"
devdir="${PEAGE_UPDATE_DEV_KEYS:-$cache/dev-update-key}"
die() { echo "update-keys.sh: $*" >&2; exit 1; }

srcs=()
if [ -n "${UPDATE_KEYS:-}" ]; then
	for p in $UPDATE_KEYS; do
		if [ -d "$p" ]; then
			shopt -s nullglob
			priv=("$p"/*.key)
			pubs=("$p"/*.pub)
			shopt -u nullglob
			[ "${#priv[@]}" -eq 0 ] || die "$p holds a private key (${priv[*]}): point UPDATE_KEYS at the .pub files only; the signing key never comes near an image build"
			[ "${#pubs[@]}" -gt 0 ] || die "no .pub file in $p"
			srcs+=("${pubs[@]}")
		elif [ -f "$p" ]; then
			srcs+=("$p")
		else
			die "UPDATE_KEYS names $p, which is neither a .pub file nor a directory"
		fi
	done
else
	[[ "$(realpath -m "$devdir")/" != "$(realpath "$repo")/"* ]] || die "the throwaway key must live outside the repository, not in $devdir"
	mkdir -p "$devdir"
	chmod 0700 "$devdir"
	# One pair for every build of this machine, whatever runs at once (x86-64 and arm64).
	exec 9>"$devdir/.lock"
	flock 9
	if [ ! -f "$devdir/dev-throwaway.pub" ]; then
		rm -f "$devdir/dev-throwaway.key" # half a pair from an interrupted run
		"$appliance" update keygen -out "$devdir/dev-throwaway"
		echo "update-keys.sh: made a throwaway update key pair in $devdir" >&2
	fi
	flock -u 9
	srcs=("$devdir/dev-throwaway.pub")
	cat >&2 <<WARN

  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
  !! DEVELOPMENT IMAGE: no UPDATE_KEYS given, so this image trusts a THROWAWAY update key,
  !!   $devdir/dev-throwaway.pub
  !! whose private half lies on this machine. It takes updates signed here, never a release.
  !! A release image: make image UPDATE_KEYS=/path/to/release.pub  (image/README.md)
  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!

WARN
fi

mkdir -p "$dest"
for src in "${srcs[@]}"; do
	name="$(basename "$src")"
	case "$name" in *.pub) ;; *) die "$src: a public key file's name ends in .pub (from appliance update keygen)" ;; esac
	! grep -q 'peage-update-ed25519-seed' "$src" || die "$src is a PRIVATE key: it never goes in an image"
	[ ! -e "$dest/$name" ] || die "two keys named $name"
	install -m 0644 "$src" "$dest/$name"
done
# Parses every staged key with the appliance's own reader (a bad file fails the build here,
# not on the box at its first update) and prints what the image trusts.
"$appliance" update keys -keys "$dest" | sed 's/^/update-keys.sh: ships /' >&2
