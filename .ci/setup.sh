#!/usr/bin/env bash
# Installs what otel_dynamo's examples and tests need on a fresh Debian machine.
# Idempotent: safe to run again. torch is pinned by constraints.txt (CPU wheel here).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
# shellcheck source=.ci/test_venv.sh
source .ci/test_venv.sh
cat >&2 <<EOF
setup: installing into the virtual environment $VIRTUAL_ENV (about 2 GB): otel_dynamo
(editable) and its test tools, pinned by constraints.txt; unless OTEL_DYNAMO_SETUP_SERVICES=0,
also Debian's chromium and prometheus (apt-get, as root) and Arize Phoenix in its own venv
at ${OTEL_DYNAMO_PHOENIX_VENV:-/opt/phoenix-venv} (about 850 MB). Beside them, Go builds the
real OpenTelemetry Collector and Jaeger from collector-config/build (Go's module and build
caches, about 2 GB; about 10 minutes the first time, seconds after; without Go the stack
tests skip and say why). On a fresh 2-core machine: about 10 minutes to set up, 20 to 30
for the suite.
EOF
# The Go builds are the longest step: they run beside the Python installs.
bash collector-config/build/build.sh &
stack_build=$!
python3 -m pip install -q -c constraints.txt -e ".[test]"
if [ "${OTEL_DYNAMO_SETUP_SERVICES:-1}" = "1" ] && command -v apt-get >/dev/null; then
  need=()
  command -v chromium >/dev/null || need+=(chromium)
  command -v prometheus >/dev/null || need+=(prometheus)
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi
# Arize Phoenix, the real trace store of the end-to-end export tests, in its own venv
# (about 850 MB; its dependencies must not meet otel_dynamo's).
PHOENIX_VENV="${OTEL_DYNAMO_PHOENIX_VENV:-/opt/phoenix-venv}"
if [ "${OTEL_DYNAMO_SETUP_SERVICES:-1}" = "1" ] && [ ! -x "$PHOENIX_VENV/bin/phoenix" ]; then
  # Not fatal: without it only the Phoenix tests skip, and they say why.
  { python3 -m venv "$PHOENIX_VENV" &&
    "$PHOENIX_VENV/bin/pip" install -q --disable-pip-version-check "arize-phoenix==20.26.1"; } ||
    echo "setup: could not install Arize Phoenix into $PHOENIX_VENV; its tests will skip" >&2
fi
if ! wait "$stack_build"; then
  echo "setup: building the Collector and Jaeger failed (collector-config/build/build.sh)" >&2
  exit 1
fi
