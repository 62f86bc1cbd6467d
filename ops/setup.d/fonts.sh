#!/usr/bin/env bash
# Installs the fonts the browser tests render with, only when missing: Debian's
# fonts-dejavu-core. Test browsers are given a fonts.conf naming only this package's files
# (browserfarm/farmtest/fonts.go, which lists them), so text is laid out the same whatever else
# the machine has.
set -euo pipefail
dir=/usr/share/fonts/truetype/dejavu
missing=0
for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSerif.ttf DejaVuSerif-Bold.ttf DejaVuSansMono.ttf DejaVuSansMono-Bold.ttf; do
	[ -f "$dir/$f" ] || missing=1
done
if [ "$missing" = 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "the test fonts are missing from $dir; run ops/setup.sh as root (or: sudo apt-get install -y fonts-dejavu-core)" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fonts-dejavu-core
fi
echo "fonts-dejavu-core $(dpkg-query -W -f='${Version}' fonts-dejavu-core 2>/dev/null || echo '(not from dpkg)')"
