#!/usr/bin/env bash
# cloudflare's pint, the Prometheus rule linter, built once from the Go module proxy (no release
# binaries are reachable here; `go install` is refused because the proxy does not list versions,
# but the exact module downloads and builds). Arguments go to pint; it runs offline.
#   scripts/pint.sh lint alerts/generated/searchpulse-rules.yml
set -euo pipefail
cd "$(dirname "$0")/.."

PINT_VERSION=v0.87.0
PINT="$PWD/.cache/pint/$PINT_VERSION/pint"

if [ ! -x "$PINT" ]; then
  echo "pint: building cloudflare/pint $PINT_VERSION from the Go module proxy" >&2
  module_dir=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json \
    "github.com/cloudflare/pint@$PINT_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$module_dir" ] || { echo "pint: module download failed" >&2; exit 1; }
  mkdir -p "$(dirname "$PINT")"
  (cd "$module_dir" && go build -o "$PINT" ./cmd/pint)
fi
exec "$PINT" --no-color --offline "$@"
