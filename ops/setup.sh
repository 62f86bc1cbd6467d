#!/usr/bin/env bash
# Installs everything the appliance and its tests need on a fresh Debian machine, idempotently:
# each area's script in ops/setup.d installs its own (Chromium, npm packages, squid, ...) only
# when missing. Run by `make run`, `make test` and `make bench`; safe to run again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null || { echo "setup: Go 1.26 is required (https://go.dev/dl)" >&2; exit 1; }
for script in "$here"/setup.d/*.sh; do
	[ -e "$script" ] || continue
	echo "setup: $(basename "$script")" >&2
	bash "$script"
done
