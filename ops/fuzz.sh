#!/usr/bin/env bash
# make fuzz: runs every fuzz target of the tree for FUZZTIME each (default 30s). The targets are
# found, not listed: every `func FuzzX(f *testing.F)` in a test file of a package of the module,
# so a new one is run without editing anything. go test fuzzes one target of one package at a
# time, hence one run per target; a failure leaves its input in the package's testdata/fuzz
# (go test's own report names it) and the other targets still run.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
fuzztime="${FUZZTIME:-30s}"

targets=()
while IFS='|' read -r pkg dir files; do
	[ -n "$files" ] || continue
	for f in $files; do
		while read -r name; do
			targets+=("$pkg|$name")
		done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$dir/$f")
	done
done < <(go list -f '{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' ./...)

if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: no fuzz target found" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets, $fuzztime each" >&2
failed=()
for t in "${targets[@]}"; do
	pkg="${t%%|*}" name="${t#*|}"
	echo "== fuzz: $name ($pkg)" >&2
	if ! go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg"; then
		failed+=("$name ($pkg)")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: all ${#targets[@]} targets passed" >&2
