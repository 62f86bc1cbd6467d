#!/usr/bin/env bash
# make lint: every check of the code that is not a test of its behaviour, each named as it runs,
# all run even when one fails, and a summary at the end.
#   gofmt, go vet, staticcheck, the tree's rules (appliance/deprules: every dependency rule and
#   the shared log keys), go mod tidy (no diff), govulncheck against a local vulnerability
#   database.
# `ops/lint.sh --install` (run by make setup) installs the pinned tools and builds the database.
#
# govulncheck's database is normally vuln.go.dev, which this build network does not reach. The
# module proxy serves golang.org/x/vulndb, whose data/osv holds every report as OSV JSON, and its
# cmd/indexdb writes the v1 database layout govulncheck reads with -db file://DIR. So the
# database is built from the newest x/vulndb on the proxy, and rebuilt once it is a day old.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

# Pinned tools (bump here; the versions are in the lint's output).
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK=golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB_MODULE=golang.org/x/vulndb

cache="${XDG_CACHE_HOME:-$HOME/.cache}/peage-lint"
bin="$cache/bin"
db="$cache/vulndb"

install_tools() {
	mkdir -p "$bin"
	for tool in "$STATICCHECK" "$GOVULNCHECK"; do
		local name="${tool%@*}" version="${tool#*@}"
		name="${name##*/}"
		if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.version" 2>/dev/null)" = "$version" ]; then
			continue
		fi
		echo "lint: installing $tool" >&2
		GOBIN="$bin" go install "$tool" || return 1
		echo "$version" >"$bin/$name.version"
	done
}

# build_vulndb: the v1 database from the newest golang.org/x/vulndb the module proxy serves.
build_vulndb() {
	local version dir tmp
	version=$(go list -m -f '{{.Version}}' "$VULNDB_MODULE@latest") || return 1
	if [ -f "$db/index/db.json" ] && [ "$(cat "$db/version" 2>/dev/null)" = "$version" ]; then
		touch "$db/version"
		return 0
	fi
	echo "lint: building the vulnerability database from $VULNDB_MODULE@$version" >&2
	dir=$(go mod download -json "$VULNDB_MODULE@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[ -d "$dir/data/osv" ] || { echo "lint: $VULNDB_MODULE@$version has no data/osv" >&2; return 1; }
	tmp="$db.tmp"
	rm -rf "$tmp"
	go run "golang.org/x/vulndb/cmd/indexdb@$version" -vulns "$dir/data/osv" -out "$tmp" || return 1
	echo "$version" >"$tmp/version"
	rm -rf "$db" && mv "$tmp" "$db"
}

vulndb_fresh() {
	[ -f "$db/version" ] && [ -z "$(find "$db/version" -mmin +1440)" ]
}

if [ "${1:-}" = "--install" ]; then
	install_tools && build_vulndb
	exit
fi

failed=()
step() {
	local name="$1"
	shift
	echo "== lint: $name" >&2
	local t0=$SECONDS
	if "$@"; then
		echo "   ok ($((SECONDS - t0)) s)" >&2
	else
		echo "   FAILED: $name ($((SECONDS - t0)) s)" >&2
		failed+=("$name")
	fi
}

gofmt_clean() {
	local out
	out=$(gofmt -l $(git ls-files '*.go'))
	[ -z "$out" ] && return 0
	echo "gofmt needed:"
	echo "$out"
	return 1
}

staticcheck_tree() {
	install_tools || { echo "staticcheck: cannot install $STATICCHECK (module proxy unreachable?)"; return 1; }
	"$bin/staticcheck" ./...
}

tidy_clean() {
	# -diff prints what tidy would change and changes nothing.
	go mod tidy -diff
}

govulncheck_tree() {
	install_tools || { echo "govulncheck: cannot install $GOVULNCHECK (module proxy unreachable?)"; return 1; }
	if ! vulndb_fresh && ! build_vulndb; then
		if [ -f "$db/index/db.json" ]; then
			echo "govulncheck: cannot refresh the database; using the copy of $VULNDB_MODULE@$(cat "$db/version")"
		else
			echo "govulncheck: NOT RUN: no vulnerability database (vuln.go.dev is unreachable here and $VULNDB_MODULE could not be fetched from the module proxy)"
			return 1
		fi
	fi
	echo "govulncheck: database $VULNDB_MODULE@$(cat "$db/version")" >&2
	"$bin/govulncheck" -db "file://$db" ./...
}

step gofmt gofmt_clean
step "go vet" go vet ./...
step "staticcheck ($STATICCHECK)" staticcheck_tree
step "tree rules (appliance/deprules: dependency rules, shared log keys)" go test -count=1 ./appliance/deprules/
step "go mod tidy" tidy_clean
step "govulncheck ($GOVULNCHECK)" govulncheck_tree

if [ ${#failed[@]} -gt 0 ]; then
	printf 'lint failed: %s\n' "$(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" >&2
	exit 1
fi
echo "lint: all checks passed" >&2
