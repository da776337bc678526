# shellcheck shell=bash
# Sourced by .ci/setup.sh and .ci/test.sh: the tests' own virtual environment. Made once
# (OTEL_DYNAMO_TEST_VENV, default .venv-test in the checkout) and put first on the PATH, so
# that python3, pip, pytest, ruff, lint-imports and mypy are its own and nothing is
# installed into the Python the machine had. Inside a virtual environment already
# (VIRTUAL_ENV set, as after `source .venv/bin/activate`), that one is used.
if [ -z "${VIRTUAL_ENV:-}" ]; then
  test_venv="${OTEL_DYNAMO_TEST_VENV:-.venv-test}"
  if [ ! -x "$test_venv/bin/python3" ]; then
    echo "setup: making the tests' virtual environment $test_venv" >&2
    python3 -m venv "$test_venv"
  fi
  VIRTUAL_ENV="$(cd "$test_venv" && pwd)"
  PATH="$VIRTUAL_ENV/bin:$PATH"
  export VIRTUAL_ENV PATH
  unset test_venv
fi
