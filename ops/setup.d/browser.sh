#!/usr/bin/env bash
# Installs Debian's Chromium for the browser farm, only when it is missing. rod is always given
# this binary and never downloads a browser of its own.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
if ! command -v chromium >/dev/null 2>&1; then
	apt_install chromium
fi
chromium --version
