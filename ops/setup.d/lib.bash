# Sourced by the setup.d scripts (not run: ops/setup.sh runs only *.sh). Package registries
# on a CI machine's network time out now and then (npm's EIDLETIMEOUT ended a CI run before any
# test ran), so every download is retried with a growing pause before setup gives up.

# retry CMD...: runs CMD up to 4 times, pausing 5, 15 and 45 s between tries.
retry() {
	local pause=5 try
	for try in 1 2 3 4; do
		"$@" && return 0
		[ "$try" = 4 ] && break
		echo "setup: '$*' failed (try $try of 4); again in ${pause}s" >&2
		sleep "$pause"
		pause=$((pause * 3))
	done
	return 1
}

# apt_install PKG...: installs Debian packages as root, with retries; a non-root run says what
# to install instead.
apt_install() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: $*; run ops/setup.sh as root (or: sudo apt-get install -y $*)" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	retry apt-get update
	retry apt-get install -y --no-install-recommends "$@"
}
