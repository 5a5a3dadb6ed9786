#!/usr/bin/env bash
# Checks the Prometheus alert rules: promtool check rules (syntax, PromQL,
# templates) and promtool test rules (alerts_test.yml: the alerts fire with
# the expected labels and annotations, and do not fire when they must not).
#
# promtool is built from the Go module proxy into
# ${FLOE_INTEROP_CACHE:-.cache}/promtool (relative to the repository root)
# the first time; building takes a few minutes.
set -euo pipefail

PROMTOOL_VERSION=v0.316.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${FLOE_INTEROP_CACHE:-.cache}"
case "$cache" in
/*) ;;
*) cache="$root/$cache" ;;
esac
bin="$cache/promtool"
promtool="$bin/promtool"
stamp="$bin/.version"

if [[ ! -x "$promtool" || "$(cat "$stamp" 2>/dev/null)" != "$PROMTOOL_VERSION" ]]; then
	echo "installing promtool $PROMTOOL_VERSION into $bin" >&2
	mkdir -p "$bin"
	# Outside the repository's module, so its go.mod plays no part.
	(cd "$bin" && GOFLAGS= GOBIN="$bin" go install "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION")
	echo "$PROMTOOL_VERSION" >"$stamp"
fi

cd "$here"
"$promtool" check rules alerts.yml
"$promtool" test rules alerts_test.yml
