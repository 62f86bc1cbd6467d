#!/usr/bin/env bash
# Downloads the Go modules the build and the tests need, with retries, so that a stalled
# module proxy fails setup with a clear message instead of failing `go vet` mid-suite.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
retry go mod download
