#!/usr/bin/env bash
# Loads docker-compose.yml with compose-spec/compose-go, the library docker compose itself uses
# to read (interpolate, validate against the compose schema, normalize) a compose file; no Docker
# engine is needed. Built once from the Go module proxy into .cache/, like scripts/pint.sh.
# Prints the normalized project as JSON, or compose's own error (exit 1).
#   scripts/compose-check.sh docker-compose.yml
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=$(sed -n 's/^require github.com\/compose-spec\/compose-go\/v2 //p' scripts/compose-check/go.mod)
CHECK="$PWD/.cache/compose-check/$VERSION/compose-check"

if [ ! -x "$CHECK" ]; then
  echo "compose-check: building compose-go $VERSION from the Go module proxy" >&2
  mkdir -p "$(dirname "$CHECK")"
  (cd scripts/compose-check && GOFLAGS=-mod=mod go build -o "$CHECK" .)
fi
exec "$CHECK" "$@"
