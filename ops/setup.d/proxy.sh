#!/usr/bin/env bash
# Installs what the proxy's tests and bench need, only when missing: curl (real tunnels in
# proxyd's tests) and Debian's squid (the side-by-side peer in ops/bench/proxy). The bench runs
# squid itself on a loopback port with a temporary config; the packaged service is not needed,
# so it is stopped and disabled if the package started it.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v squid >/dev/null 2>&1 || [ -x /usr/sbin/squid ] || missing+=(squid)
if [ "${#missing[@]}" -gt 0 ]; then
	apt_install "${missing[@]}"
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet squid 2>/dev/null; then
		systemctl disable --now squid || true
	fi
fi
curl --version | head -1
/usr/sbin/squid -v | head -1
