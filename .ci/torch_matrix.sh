#!/usr/bin/env bash
# The torch-facing tests (pytest -m torch_facing: those that compile, export or enable by
# environment) on each other torch the package claims, each in a venv of its own made from
# PyPI and deleted after its run (5.5-7 GB each: PyPI's Linux wheels need their CUDA
# dependency wheels even to import on a CPU machine).
#
#   bash .ci/torch_matrix.sh [VERSION ...]     (default: $OTEL_DYNAMO_TORCH_MATRIX)
#
# Downloads and tests overlap: while one version's tests run, the next version's wheels
# (torch and its dependencies) download in the background into a folder of their own; that
# version then installs from them offline (--no-index --find-links), or from PyPI as before
# if the download failed. On disk at once: at most one venv and one wheel folder (~11 GB),
# each deleted as soon as it is used (for a moment at the end of a download, pip's own
# temporary copy of its wheels too, ~14 GB in all). Each version prints its download seconds
# and how many of them it waited for, its install seconds (venv, torch, otel_dynamo's wheel,
# the test dependencies) and its test seconds (the user-install smoke and pytest), again at
# the end. Here a download takes about 30-70 s and an install about 90-180 s: the tests
# take most of the time.
#
# The tests run on every core, up to MAX_TEST_WORKERS (.ci/test_workers.sh), as the pinned
# torch's full suite (.ci/test.sh, the README's command) does.
#
# This machine's pip configuration caps torch and adds a local index: these venvs and
# downloads bypass it (PIP_CONFIG_FILE=/dev/null PIP_CONSTRAINT=''). A version pip cannot
# download for the network is reported SKIPPED with the reason, never passed; any other
# failure fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

DEFAULT_VERSIONS="2.8.0 2.10.0 2.12.1 2.15.0"
# shellcheck source=.ci/test_workers.sh
source .ci/test_workers.sh
read -r -a versions <<<"${*:-${OTEL_DYNAMO_TORCH_MATRIX:-$DEFAULT_VERSIONS}}"
NETWORK_ERRORS='ConnectionError|Max retries exceeded|Temporary failure in name resolution|Network is unreachable|Connection refused|ReadTimeoutError|timed out|No route to host'

python="$(python3 -c 'import sys; print(sys.executable)')"
work="$(mktemp -d "${TMPDIR:-/tmp}/otel-dynamo-torch-matrix.XXXXXX")"
prefetch_pid=""

# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {  # stops a download still running, then deletes every venv and wheel folder
  if [ -n "$prefetch_pid" ]; then
    kill "$prefetch_pid" 2>/dev/null
    wait "$prefetch_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() {  # MESSAGE: one progress line, stamped with the seconds since the matrix started
  echo "== +${SECONDS} s $*"
}

pip_env() {  # COMMAND...: runs it with this machine's pip config bypassed
  PIP_CONFIG_FILE=/dev/null PIP_CONSTRAINT='' PIP_FIND_LINKS='' PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"
}

pip_from_pypi() {  # VENV ARGS...: pip install in that venv, with this machine's pip config bypassed
  local venv="$1"
  shift
  pip_env "$venv/bin/python" -m pip install -q "$@"
}

prefetch() {  # VERSION: starts downloading torch==VERSION's wheels into $work/wheels-VERSION in the background
  local version="$1" dir="$work/wheels-$1"
  mkdir -p "$dir"
  say "torch $version: downloading its wheels in the background"
  (
    started=$SECONDS
    child=""
    trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 143' TERM
    # No cache: the folder is the cache, and pip's own would keep another copy of each wheel.
    # The interpreter itself (not a shim that would outlive a kill), its temporary files in
    # $work (a killed pip leaves them behind).
    mkdir -p "$work/tmp-$version"
    TMPDIR="$work/tmp-$version" pip_env "$python" -m pip download --no-cache-dir \
      --progress-bar off -d "$dir" "torch==$version" >"$work/download-$version.log" 2>&1 &
    child=$!
    wait "$child"
    status=$?
    rm -rf "$work/tmp-$version"
    echo "$status $((SECONDS - started))" >"$work/download-$version.done"
    if [ "$status" -eq 0 ]; then
      say "torch $version: wheels downloaded in $((SECONDS - started)) s ($(du -sh "$dir" | cut -f1))"
    else
      say "torch $version: download failed after $((SECONDS - started)) s (exit $status)"
    fi
  ) &
  prefetch_pid=$!
}

await_prefetch() {  # VERSION: waits for its download; sets wheels (the folder, empty if it failed), download_s, waited_s
  local version="$1" started=$SECONDS status
  wheels="" download_s=0 waited_s=0
  [ -n "$prefetch_pid" ] || return
  wait "$prefetch_pid"
  prefetch_pid=""
  waited_s=$((SECONDS - started))
  read -r status download_s <"$work/download-$version.done" || status=1
  if [ "$status" -eq 0 ]; then
    wheels="$work/wheels-$version"
  else
    echo "torch $version: the background download failed; installing from PyPI instead:" >&2
    tail -n 3 "$work/download-$version.log" >&2
    rm -rf "$work/wheels-$version"
  fi
}

install_torch() {  # VERSION VENV LOG: torch into the venv, from the prefetched wheels if any, else from PyPI
  local version="$1" venv="$2" log="$3"
  if [ -n "$wheels" ]; then
    if pip_from_pypi "$venv" --no-index --find-links "$wheels" "torch==$version" 2>"$log"; then
      return 0
    fi
    echo "torch $version: installing from the downloaded wheels failed; installing from PyPI instead:" >&2
    tail -n 3 "$log" >&2
  fi
  pip_from_pypi "$venv" --no-cache-dir "torch==$version" 2>"$log"
}

run_one() {  # VERSION [NEXT]: install VERSION, start NEXT's download, test, delete; sets the summary and timing lines
  local version="$1" next="${2:-}" venv="$work/torch-$1" log="$work/pip-$1.log" started=$SECONDS
  local install_s=0 test_s=0 step unreachable installed=1
  await_prefetch "$version"
  say "torch $version: installing ($([ -n "$wheels" ] && echo "from its downloaded wheels" || echo "from PyPI"))"
  step=$SECONDS
  unreachable="$(pypi_unreachable)"
  if [ -n "$unreachable" ]; then
    summary+=("SKIPPED torch $version: PyPI unreachable ($unreachable)")
    installed=0
  else
    python3 -m venv "$venv"
    if ! install_torch "$version" "$venv" "$log" || ! pip_from_pypi "$venv" "$wheel" 2>>"$log"; then
      installed=0
      tail -n 5 "$log" >&2
      if grep -Eq "$NETWORK_ERRORS" "$log"; then
        summary+=("SKIPPED torch $version: no network for pip ($(grep -Eom1 "$NETWORK_ERRORS" "$log" | head -n 1))")
      else
        summary+=("FAILED  torch $version: install failed (see above)")
        failed=1
      fi
    fi
  fi
  install_s=$((SECONDS - step))
  # This version's wheels are installed (or useless): delete them before the next download.
  [ -z "$wheels" ] || rm -rf "$wheels"
  [ -z "$next" ] || prefetch "$next"
  if [ "$installed" = 1 ]; then
    say "torch $version: installed in $install_s s; as a user would"
    run_tests "$version" "$venv" "$log"
  fi
  rm -rf "$venv"
  timings+=("torch $version: download ${download_s} s (waited ${waited_s} s for it), install ${install_s} s, test ${test_s} s; $((SECONDS - started)) s in all")
  say "timings ${timings[-1]}"
}

run_tests() {  # VERSION VENV LOG: torch version check, user-install smoke, test dependencies, -m torch_facing; adds to install_s and test_s
  local version="$1" venv="$2" log="$3" step=$SECONDS
  if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')"; then
    summary+=("FAILED  torch $version: installing otel_dynamo's wheel changed torch")
    failed=1
    return
  fi
  if ! "$venv/bin/python" .ci/user_install_smoke.py; then
    summary+=("FAILED  torch $version: a training compile was not recorded (user install)")
    failed=1
  fi
  test_s=$((test_s + SECONDS - step))
  step=$SECONDS
  if ! pip_from_pypi "$venv" -c "$work/constraints.txt" -e ".[test]" 2>>"$log"; then
    tail -n 5 "$log" >&2
    summary+=("FAILED  torch $version: installing the test dependencies failed")
    failed=1
    install_s=$((install_s + SECONDS - step))
    return
  fi
  install_s=$((install_s + SECONDS - step))
  step=$SECONDS
  say "torch $version: running -m torch_facing"
  if PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -n "$(test_workers)" --dist loadscope -m torch_facing tests; then
    summary+=("passed  torch $version: torch-facing tests ($((SECONDS - step)) s of tests)")
  else
    summary+=("FAILED  torch $version: torch-facing tests failed (see above)")
    failed=1
  fi
  test_s=$((test_s + SECONDS - step))
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

declare -a summary=() timings=()
failed=0

# The first download starts at once; the wheel build and the constraints do not need it.
[ ${#versions[@]} -eq 0 ] || prefetch "${versions[0]}"
grep -v '^torch==' constraints.txt >"$work/constraints.txt"
# The package as users get it: a wheel, installed with whatever pip resolves beside torch.
if ! python3 -m pip wheel -q --no-deps -w "$work/dist" . >/dev/null; then
  echo "torch matrix: could not build otel_dynamo's wheel" >&2
  exit 1
fi
wheel="$(ls "$work"/dist/otel_dynamo-*.whl)"

for i in "${!versions[@]}"; do
  run_one "${versions[i]}" "${versions[i + 1]:-}"
done

echo "== torch matrix (the pinned torch ran the full suite before this), $SECONDS s"
printf '   %s\n' "${summary[@]}"
echo "== where the time went (a download overlaps the previous version's tests; only the wait for it adds)"
printf '   %s\n' "${timings[@]}"
exit "$failed"
