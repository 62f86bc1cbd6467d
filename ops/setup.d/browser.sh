#!/usr/bin/env bash
# Installs Debian's Chromium for the browser farm, only when it is missing. rod is always given
# this binary and never downloads a browser of its own.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "chromium is missing; run ops/setup.sh as root (or: sudo apt-get install -y chromium)" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi
chromium --version
