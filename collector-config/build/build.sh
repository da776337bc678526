#!/usr/bin/env bash
# Builds the real programs the stack tests run, from the Go modules pinned here:
#   otelcol/  an OpenTelemetry Collector with exactly the components of the shipped
#             configs (core and contrib at one release, see otelcol/main.go), plus the
#             file and debug exporters the tests write through;
#   jaeger/   Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger, module v1.75.0).
# Binaries go to $OTEL_DYNAMO_STACK_BIN (default collector-config/build/bin). Go's module
# and build caches are reused; a binary whose sources (go.mod, go.sum, *.go) are unchanged
# since its last build is kept. Without Go it says so and exits 0: the stack tests then
# skip, saying why. Any other failure exits non-zero.
set -Eeuo pipefail
trap 'echo "stack build: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
here="$(cd "$(dirname "$0")" && pwd)"
bin="${OTEL_DYNAMO_STACK_BIN:-$here/bin}"
if ! command -v go >/dev/null; then
  echo "stack build: no Go on PATH; the real Collector and Jaeger are not built and the" \
    "stack tests will skip" >&2
  exit 0
fi
mkdir -p "$bin"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly -trimpath"
started=$(date +%s)

# build NAME DIR PACKAGE: go build DIR's PACKAGE into $bin/NAME unless its stamp matches.
build() {
  local name="$1" dir="$2" package="$3" stamp
  local sources=("$dir"/go.mod "$dir"/go.sum)
  # A module may hold no Go file of its own (jaeger/ builds a tool of its dependency).
  shopt -s nullglob
  sources+=("$dir"/*.go)
  shopt -u nullglob
  stamp="$(cat "${sources[@]}" | sha256sum | cut -d' ' -f1)"
  stamp="$stamp $(go env GOVERSION)"
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "stack build: $name is up to date" >&2
    return 0
  fi
  local t0=$(date +%s)
  local output
  # Go lists every module it downloads: said only when the build fails.
  if ! output="$(cd "$dir" && go build -o "$bin/$name.new" "$package" 2>&1)"; then
    printf '%s\n' "$output" | grep -v '^go: downloading' >&2
    echo "stack build: building $name failed" >&2
    exit 1
  fi
  mv "$bin/$name.new" "$bin/$name"
  echo "$stamp" >"$bin/$name.stamp"
  echo "stack build: $name built in $(($(date +%s) - t0)) s" >&2
}

echo "stack build: the OpenTelemetry Collector and Jaeger from collector-config/build" \
  "into $bin ($(go env GOVERSION); a cold build on 2 cores takes minutes)" >&2
build otelcol-otel-dynamo "$here/otelcol" .
build jaeger "$here/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
echo "stack build: done in $(($(date +%s) - started)) s" >&2
