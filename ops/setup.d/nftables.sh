#!/usr/bin/env bash
# Installs nft (Debian's nftables), only when missing: the firewall test (ops/nftables) checks
# the image's ruleset with `nft -c` and loads it in a throwaway network namespace. The packaged
# nftables.service is not enabled on a build machine (the ruleset is the box's, not the host's).
set -euo pipefail
. "$(dirname "$0")/lib.bash"
if ! command -v nft >/dev/null 2>&1 && [ ! -x /usr/sbin/nft ]; then
	apt_install nftables
fi
/usr/sbin/nft --version
