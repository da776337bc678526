#!/usr/bin/env bash
# The OpenTelemetry-facing tests (pytest -m otel_facing: providers, exporters, exit,
# recording, enablement, real models traced, faults; tests/conftest.py says which) on the
# oldest OpenTelemetry release train pyproject.toml admits, beside the pinned torch, in a
# venv of its own that is deleted after the run.
#
#   bash .ci/otel_oldest.sh [--tests-after PID]
#
# As a job that pins its own OpenTelemetry would have it: the venv first gets torch and
# that train (.ci/otel_oldest_pins.py reads the train from pyproject.toml's lower bounds);
# then otel_dynamo is installed from this checkout as a user installs it, without
# constraints, and must leave every OpenTelemetry package as it was; then a training job
# enabled by environment must be recorded (.ci/user_install_smoke.py). The tests
# then run (those of a minute or more excepted: -m 'otel_facing and not heavy') on every
# core, as the pinned suite does. With --tests-after, the venv is prepared at once and
# the tests start once process PID has ended (.ci/run: the pinned suite).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SELECTION="otel_facing and not heavy"
# shellcheck source=.ci/test_workers.sh
source .ci/test_workers.sh
# shellcheck source=.ci/network_errors.sh
source .ci/network_errors.sh
tests_after=""
if [ "${1:-}" = "--tests-after" ]; then
  tests_after="$2"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/otel-dynamo-otel-oldest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
venv="$work/venv"
started=$SECONDS
say() { echo "== otel oldest ($((SECONDS - started)) s): $*"; }
fail() {
  say "FAILED: $*"
  exit 1
}
failed_install() {  # WHAT: fails, or skips where pip could not reach its index
  tail -n 5 "$work/pip.log"
  if grep -Eq "$NETWORK_ERRORS" "$work/pip.log"; then
    say "SKIPPED: no network for pip ($(grep -Eom1 "$NETWORK_ERRORS" "$work/pip.log" | head -n 1)) while $1"
    exit 0
  fi
  fail "$1"
}

python3 .ci/otel_oldest_pins.py >"$work/constraints.txt" || fail "reading the oldest train"
train="$(grep '^opentelemetry-sdk==' "$work/constraints.txt")"
say "preparing $train beside $(grep '^torch==' "$work/constraints.txt")"
python3 -m venv "$venv" || fail "making the venv"
pip_in() { PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q "$@"; }
# The job's own environment: torch and the train, pinned.
pip_in -c "$work/constraints.txt" torch opentelemetry-api opentelemetry-sdk \
  opentelemetry-exporter-otlp opentelemetry-instrumentation >"$work/pip.log" 2>&1 ||
  failed_install "installing torch and $train"
opentelemetry_of() { "$venv/bin/python" -m pip freeze 2>/dev/null | grep -i '^opentelemetry' | sort; }
before="$(opentelemetry_of)"
# otel_dynamo as a user installs it: no constraints; pip must keep the job's pins.
pip_in . >>"$work/pip.log" 2>&1 || failed_install "installing otel_dynamo"
if [ "$(opentelemetry_of)" != "$before" ]; then
  diff <(echo "$before") <(opentelemetry_of)
  fail "installing otel_dynamo changed the job's OpenTelemetry"
fi
say "installing otel_dynamo left the $(echo "$before" | wc -l) OpenTelemetry packages as they were"
"$venv/bin/python" .ci/user_install_smoke.py ||
  fail "a training compile was not recorded as expected (user install)"
# The tests run from this checkout (editable) with their tools, the train still pinned.
mapfile -t tools < <(python3 .ci/otel_oldest_pins.py --test-tools)
pip_in -c "$work/constraints.txt" --no-deps -e . >>"$work/pip.log" 2>&1 &&
  pip_in -c "$work/constraints.txt" "${tools[@]}" opentelemetry-exporter-prometheus \
    >>"$work/pip.log" 2>&1 ||
  failed_install "installing the test dependencies"
[ "$(opentelemetry_of | grep -c "==${train#*==}")" -ge 2 ] || fail "the test tools moved the train"
say "prepared"
if [ -n "$tests_after" ]; then
  while kill -0 "$tests_after" 2>/dev/null; do sleep 5; done
  say "the pinned suite has ended; testing"
fi
tested=$SECONDS
# The venv's tools first on the PATH (tlparse, the tests' peer oracle, is a command).
PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  -m "$SELECTION" -n "$(test_workers)" --dist loadscope tests
status=$?
say "tests exited $status after $((SECONDS - tested)) s ($train)"
exit "$status"
