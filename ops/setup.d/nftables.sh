#!/usr/bin/env bash
# Installs nft (Debian's nftables), only when missing: the firewall test (ops/nftables) checks
# the image's ruleset with `nft -c` and loads it in a throwaway network namespace. The packaged
# nftables.service is not enabled on a build machine (the ruleset is the box's, not the host's).
set -euo pipefail
if ! command -v nft >/dev/null 2>&1 && [ ! -x /usr/sbin/nft ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: nftables; run ops/setup.sh as root (or: sudo apt-get install -y nftables)" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nftables
fi
/usr/sbin/nft --version
