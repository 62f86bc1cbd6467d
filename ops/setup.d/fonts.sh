#!/usr/bin/env bash
# Installs the fonts the browser tests render with, only when missing: Debian's
# fonts-dejavu-core. Test browsers are given a fonts.conf naming only this package's files
# (browserfarm/farmtest/fonts.go, which lists them), so text is laid out the same whatever else
# the machine has.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
dir=/usr/share/fonts/truetype/dejavu
missing=0
for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSerif.ttf DejaVuSerif-Bold.ttf DejaVuSansMono.ttf DejaVuSansMono-Bold.ttf; do
	[ -f "$dir/$f" ] || missing=1
done
if [ "$missing" = 1 ]; then
	apt_install fonts-dejavu-core
fi
echo "fonts-dejavu-core $(dpkg-query -W -f='${Version}' fonts-dejavu-core 2>/dev/null || echo '(not from dpkg)')"
