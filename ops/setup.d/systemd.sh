#!/usr/bin/env bash
# Installs systemd-analyze, only when missing: the unit tests (systemd/units_test.go) run
# `systemd-analyze verify` and `systemd-analyze security --offline=yes` on the shipped units.
# It is in Debian's systemd package; no running systemd is needed.
set -euo pipefail
command -v systemd-analyze >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing: systemd-analyze; run ops/setup.sh as root (or: sudo apt-get install -y systemd)" >&2
	exit 1
fi
DEBIAN_FRONTEND=noninteractive apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd
