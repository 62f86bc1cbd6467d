#!/usr/bin/env bash
# Prints the Debian archive this machine's apt already uses ("main") or its security archive
# ("security"), read from the host's apt sources, so the tools tree and the image fetch from the
# same place as every other package install here, and no mirror is written into the repository.
# PEAGE_DEBIAN_MIRROR / PEAGE_DEBIAN_SECURITY override it.
set -euo pipefail
which="${1:-main}"
uris() {
	{
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p'
	} | grep -E '/debian(-security)?/?$' || true
}
main="${PEAGE_DEBIAN_MIRROR:-$(uris | grep -v -- '-security' | head -1)}"
main="${main%/}"
[ -n "$main" ] || { echo "mirror.sh: no Debian archive in this machine's apt sources; set PEAGE_DEBIAN_MIRROR" >&2; exit 1; }
case "$which" in
main) echo "$main" ;;
security)
	sec="${PEAGE_DEBIAN_SECURITY:-$(uris | grep -- '-security' | head -1)}"
	echo "${sec:-$main-security}" | sed 's:/$::'
	;;
*) echo "usage: mirror.sh main|security" >&2; exit 2 ;;
esac
