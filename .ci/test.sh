#!/usr/bin/env bash
# The README's test command: set everything up, check style, layering and types, then run
# the whole suite (slow tests too) on every core (.ci/test_workers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/test_venv.sh
source .ci/test_venv.sh
bash .ci/setup.sh
python3 -m ruff check otel_dynamo tests bench examples grafana collector-config .ci docs
python3 -m ruff format --check otel_dynamo tests bench
lint-imports
# Types for the oldest Python claimed ([tool.mypy] python_version) and the newest (the last
# "Programming Language :: Python :: 3.N" classifier), side by side.
newest_python="$(python3 .ci/newest_python.py)"
python3 -m mypy --strict otel_dynamo &
oldest=$!
python3 -m mypy --strict --python-version "$newest_python" otel_dynamo
wait "$oldest"
# shellcheck source=.ci/test_workers.sh
source .ci/test_workers.sh
python3 -m pytest -q -p no:cacheprovider -n "$(test_workers)" --dist loadscope --durations=25 "$@"
