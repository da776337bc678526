#!/usr/bin/env bash
# The torch-facing tests (pytest -m torch_facing: those that compile, export or enable by
# environment) on each other torch the package claims, each in a venv of its own made from
# PyPI and deleted after its run (5.5-7 GB each: PyPI's Linux wheels need their CUDA
# dependency wheels even to import on a CPU machine).
#
#   bash .ci/torch_matrix.sh [VERSION ...]     (default: $OTEL_DYNAMO_TORCH_MATRIX)
#
# This machine's pip configuration caps torch and adds a local index: these venvs bypass
# it (PIP_CONFIG_FILE=/dev/null PIP_CONSTRAINT=). A version pip cannot download for the
# network is reported SKIPPED with the reason, never passed; any other failure fails.
set -uo pipefail
cd "$(dirname "$0")/.."

DEFAULT_VERSIONS="2.8.0 2.10.0 2.12.1 2.15.0"
read -r -a versions <<<"${*:-${OTEL_DYNAMO_TORCH_MATRIX:-$DEFAULT_VERSIONS}}"
NETWORK_ERRORS='ConnectionError|Max retries exceeded|Temporary failure in name resolution|Network is unreachable|Connection refused|ReadTimeoutError|timed out|No route to host'

work="$(mktemp -d "${TMPDIR:-/tmp}/otel-dynamo-torch-matrix.XXXXXX")"
trap 'rm -rf "$work"' EXIT
grep -v '^torch==' constraints.txt >"$work/constraints.txt"
# The package as users get it: a wheel, installed with whatever pip resolves beside torch.
if ! python3 -m pip wheel -q --no-deps -w "$work/dist" . >/dev/null; then
  echo "torch matrix: could not build otel_dynamo's wheel" >&2
  exit 1
fi
wheel="$(ls "$work"/dist/otel_dynamo-*.whl)"

declare -a summary=()
failed=0

pip_from_pypi() {  # VENV ARGS...: pip in that venv, with this machine's pip config bypassed
  local venv="$1"
  shift
  PIP_CONFIG_FILE=/dev/null PIP_CONSTRAINT= PIP_FIND_LINKS= PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$venv/bin/python" -m pip install -q "$@"
}

pypi_unreachable() {  # prints why PyPI cannot be reached (nothing if it can)
  python3 - <<'PY'
import urllib.request
try:
    urllib.request.urlopen("https://pypi.org/simple/torch/", timeout=30).close()
except Exception as error:
    print(f"{type(error).__name__}: {error}")
PY
}

run_one() {  # VERSION: install, test, delete; sets the summary line
  local version="$1" venv="$work/torch-$1" log="$work/pip-$1.log" started=$SECONDS
  echo "== torch $version: installing from PyPI"
  local unreachable
  unreachable="$(pypi_unreachable)"
  if [ -n "$unreachable" ]; then
    summary+=("SKIPPED torch $version: PyPI unreachable ($unreachable)")
    return
  fi
  python3 -m venv "$venv"
  if ! pip_from_pypi "$venv" "torch==$version" 2>"$log" ||
    ! pip_from_pypi "$venv" "$wheel" 2>>"$log"; then
    tail -n 5 "$log" >&2
    if grep -Eq "$NETWORK_ERRORS" "$log"; then
      summary+=("SKIPPED torch $version: no network for pip ($(grep -Eom1 "$NETWORK_ERRORS" "$log"))")
    else
      summary+=("FAILED  torch $version: install failed (see above)")
      failed=1
    fi
    rm -rf "$venv"
    return
  fi
  echo "== torch $version: installed in $((SECONDS - started)) s; as a user would"
  if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')"; then
    summary+=("FAILED  torch $version: installing otel_dynamo's wheel changed torch")
    failed=1
    rm -rf "$venv"
    return
  fi
  if ! "$venv/bin/python" .ci/user_install_smoke.py; then
    summary+=("FAILED  torch $version: a training compile was not recorded (user install)")
    failed=1
  fi
  if ! pip_from_pypi "$venv" -c "$work/constraints.txt" -e ".[test]" 2>>"$log"; then
    tail -n 5 "$log" >&2
    summary+=("FAILED  torch $version: installing the test dependencies failed")
    failed=1
    rm -rf "$venv"
    return
  fi
  echo "== torch $version: running -m torch_facing"
  if PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -m torch_facing tests; then
    summary+=("passed  torch $version: torch-facing tests ($((SECONDS - started)) s with installs)")
  else
    summary+=("FAILED  torch $version: torch-facing tests failed (see above)")
    failed=1
  fi
  rm -rf "$venv"
}

for version in "${versions[@]}"; do
  run_one "$version"
done

echo "== torch matrix (the pinned torch ran the full suite before this)"
printf '   %s\n' "${summary[@]}"
exit "$failed"
