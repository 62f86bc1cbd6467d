#!/bin/sh
# Regenerates domains.txt and PROVENANCE from the community list
# github.com/disposable-email-domains/disposable-email-domains (CC0-1.0).
#
#   api/compute/disposable/refresh.sh [REPOSITORY] [COMMIT]
#
# REPOSITORY is a clone URL or a local git directory (bare or not); default the GitHub URL.
# COMMIT defaults to the repository's HEAD. Review the diff of domains.txt before committing.
set -eu
repo=${1:-https://github.com/disposable-email-domains/disposable-email-domains}
commit=${2:-HEAD}
here=$(cd "$(dirname "$0")" && pwd)
src=$repo
if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git clone --quiet --bare --filter=blob:none "$repo" "$tmp/list.git"
	src=$tmp/list.git
fi
sha=$(git -C "$src" rev-parse "$commit^{commit}")
date=$(git -C "$src" show -s --format=%cI "$sha")
# One lower-case domain a line, as the list's own verify.py keeps it; anything else is dropped.
git -C "$src" show "$sha:disposable_email_blocklist.conf" | tr 'A-Z' 'a-z' | grep -E '^[a-z0-9][a-z0-9.-]*\.[a-z0-9-]+$' | LC_ALL=C sort -u >"$here/domains.txt"
count=$(wc -l <"$here/domains.txt" | tr -d ' ')
cat >"$here/PROVENANCE" <<END
domains.txt: disposable (temporary, throw-away) e-mail domains, one a line, $count domains.

Source:   https://github.com/disposable-email-domains/disposable-email-domains
File:     disposable_email_blocklist.conf
Commit:   $sha
Date:     $date (commit date)
Licence:  CC0 1.0 Universal (public domain dedication); copying it here needs no permission.
Fetched:  $(date -u +%Y-%m-%d) by api/compute/disposable/refresh.sh

The same list is what npm disposable-email-domains-js packages (research: upstreams-other.md §18).
Regenerate with: api/compute/disposable/refresh.sh [REPOSITORY] [COMMIT]
END
echo "domains.txt: $count domains from $sha ($date)"
