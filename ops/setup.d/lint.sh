#!/usr/bin/env bash
# Installs what `make lint` runs beside the go command: staticcheck and govulncheck at their
# pinned versions, and govulncheck's database built from golang.org/x/vulndb (ops/lint.sh says
# why), through the module proxy.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
retry "$(dirname "$0")/../lint.sh" --install
