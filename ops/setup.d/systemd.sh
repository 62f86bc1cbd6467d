#!/usr/bin/env bash
# Installs systemd-analyze, only when missing: the unit tests (systemd/units_test.go) run
# `systemd-analyze verify` and `systemd-analyze security --offline=yes` on the shipped units.
# It is in Debian's systemd package; no running systemd is needed.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
command -v systemd-analyze >/dev/null 2>&1 && exit 0
apt_install systemd
