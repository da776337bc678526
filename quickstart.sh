#!/usr/bin/env bash
# The quick start: a virtual environment with otel_dynamo and its pinned dependencies
# (constraints.txt: torch 2.13.0 CPU and the newest OpenTelemetry release train) and numpy, then
# the demo: a small training loop under torch.compile, traced to ./otel-dynamo/, its report
# printed and written as one HTML page. Nothing else is installed (the tests: bash .ci/test.sh).
set -euo pipefail
cd "$(dirname "$0")"
export PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="${OTEL_DYNAMO_VENV:-.venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# numpy: torch warns "Failed to initialize NumPy" at import without it. Not pinned (a
# release for this machine's Python, 3.10 included); otel_dynamo itself does not need it.
# PyYAML: collector-config/check_configs.py, which docs/stack.md has you run, reads YAML.
"$VENV/bin/python" -m pip install -q -c constraints.txt -e . numpy PyYAML
status=0
"$VENV/bin/otel-dynamo" demo "$@" || status=$?
# The command lives in the virtual environment, not on the PATH: say how to reach it.
printf '%s\n' "otel-dynamo is installed in $VENV/bin; to put it on the PATH:" \
  "  source $VENV/bin/activate" "or call $VENV/bin/otel-dynamo"
exit "$status"
