#!/usr/bin/env bash
# The torch-facing tests (pytest -m torch_facing: those whose outcome depends on what torch
# does; tests/conftest.py says which) on each other torch the package claims, each in a
# venv of its own made from PyPI and deleted after its run (5.5-7 GB each: PyPI's Linux
# wheels need their CUDA dependency wheels even to import on a CPU machine).
#
#   bash .ci/torch_matrix.sh [--tests-after PID] [VERSION ...]
#
# Versions default to $OTEL_DYNAMO_TORCH_MATRIX, else DEFAULT_VERSIONS below. With
# --tests-after, the first version is prepared at once but tested only once process PID
# has ended: .ci/run prepares it while the pinned torch's suite runs.
#
# The oldest and the newest version given, the furthest from the pinned torch (whose
# suite runs everything), run the fast torch-facing tests and the core
# traced-against-plain jobs (-m 'torch_facing and (not slow or plain_vs_traced)'); those
# between run the fast ones only (-m 'torch_facing and not slow': every hook's fit and
# torch's own counts on small programs, without the real models and the
# traced-against-plain jobs). One version given alone runs them all but the heavy ones
# (-m 'torch_facing and not heavy'). CI's whole run must stay within 50 minutes on 2
# cores: the oldest torch's full selection took 815 s of a 3533 s run, and each version
# about 200 s more; so the default versions are the oldest (2.8's hook forms), the first
# with the new ones (2.12.1: post_compile's spec, gb_type, skips in the graph-break
# artifact) and the newest, beside the pinned 2.13.0.
#
# Versions are prepared one after another in the background, niced, ahead of their tests:
# download torch's wheels into a folder of their own, install torch from them offline
# (--no-index --find-links; from PyPI if the download failed), delete them, install
# otel_dynamo's wheel as a user would (pip must leave torch as it is), run a small training
# job enabled by environment (.ci/user_install_smoke.py), install the test dependencies.
# A preparation starts only with PREPARE_FREE_GB free on disk (a venv, its wheels and
# pip's temporary copy of them), or when no prepared venv is left to free some: with room,
# every version is prepared while the pinned suite runs (~6 GB a venv), without it one at
# a time. The tests run in version order, each as soon as its version is prepared; each
# venv is deleted after its tests. Each version prints its preparation's log and seconds
# (download, install, smoke), how long its tests waited for it, and its test seconds,
# again at the end. Here a preparation takes about 5 minutes.
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

DEFAULT_VERSIONS="2.8.0 2.12.1 2.15.0"
FAST_SELECTION="torch_facing and not slow"
CORE_SELECTION="torch_facing and (not slow or plain_vs_traced)"
ALONE_SELECTION="torch_facing and not heavy"
PREPARE_FREE_GB=16
# shellcheck source=.ci/test_workers.sh
source .ci/test_workers.sh
tests_after=""
if [ "${1:-}" = "--tests-after" ]; then
  tests_after="$2"
  shift 2
fi
read -r -a requested <<<"${*:-${OTEL_DYNAMO_TORCH_MATRIX:-$DEFAULT_VERSIONS}}"
mapfile -t versions < <(printf '%s\n' "${requested[@]}" | sort -V -u)
# shellcheck source=.ci/network_errors.sh
source .ci/network_errors.sh

python="$(python3 -c 'import sys; print(sys.executable)')"
work="$(mktemp -d "${TMPDIR:-/tmp}/otel-dynamo-torch-matrix.XXXXXX")"
preparer_pid=""

# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {  # stops the preparer, then deletes every venv and wheel folder
  if [ -n "$preparer_pid" ]; then
    kill -- "-$preparer_pid" 2>/dev/null  # its session: bash, pip and the smoke's job
    wait "$preparer_pid" 2>/dev/null
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

pypi_unreachable() {  # prints why PyPI cannot be reached (nothing if it can)
  python3 - <<'PY'
import urllib.request
try:
    urllib.request.urlopen("https://pypi.org/simple/torch/", timeout=30).close()
except Exception as error:
    print(f"{type(error).__name__}: {error}")
PY
}

# The preparation of one version, run in the background. Its output goes to its log; its
# outcome to $work/prepared-VERSION: one line "OUTCOME DOWNLOAD_S INSTALL_S SMOKE_S MESSAGE",
# OUTCOME one of ready (tests may run), smoke-failed (tests may run, the version fails),
# skipped or failed (no tests).
prepare() {  # VERSION
  local version="$1" venv="$work/torch-$1" wheels="$work/wheels-$1" log="$work/pip-$1.log"
  local download_s=0 install_s=0 smoke_s=0 step unreachable outcome=ready message=""
  finish() {  # written whole, then renamed: the tests start when the name appears
    echo "$1 $download_s $install_s $smoke_s $2" >"$work/prepared-$version.part"
    mv "$work/prepared-$version.part" "$work/prepared-$version"
  }
  unreachable="$(pypi_unreachable)"
  if [ -n "$unreachable" ]; then
    finish skipped "PyPI unreachable ($unreachable)"
    return
  fi
  step=$SECONDS
  mkdir -p "$wheels" "$work/tmp-$version"
  # No cache: the folder is the cache, and pip's own would keep another copy of each wheel.
  if ! TMPDIR="$work/tmp-$version" pip_env "$python" -m pip download --no-cache-dir \
    --progress-bar off -d "$wheels" "torch==$version" >"$work/download-$version.log" 2>&1; then
    echo "torch $version: downloading its wheels failed; installing from PyPI instead:"
    tail -n 3 "$work/download-$version.log"
    rm -rf "$wheels"
  fi
  rm -rf "$work/tmp-$version"
  download_s=$((SECONDS - step))
  step=$SECONDS
  python3 -m venv "$venv"
  if [ -d "$wheels" ] && ! pip_from_pypi "$venv" --no-index --find-links "$wheels" "torch==$version" 2>"$log"; then
    echo "torch $version: installing from the downloaded wheels failed; installing from PyPI instead:"
    tail -n 3 "$log"
    rm -rf "$wheels"
  fi
  if [ ! -d "$wheels" ]; then
    if ! pip_from_pypi "$venv" --no-cache-dir "torch==$version" 2>"$log"; then
      tail -n 5 "$log"
      install_s=$((SECONDS - step))
      if grep -Eq "$NETWORK_ERRORS" "$log"; then
        finish skipped "no network for pip ($(grep -Eom1 "$NETWORK_ERRORS" "$log" | head -n 1))"
      else
        finish failed "installing torch failed (see above)"
      fi
      return
    fi
  fi
  rm -rf "$wheels"
  # The package as users get it: its wheel, with whatever pip resolves beside torch.
  if ! pip_from_pypi "$venv" "$wheel" 2>>"$log"; then
    tail -n 5 "$log"
    install_s=$((SECONDS - step))
    finish failed "installing otel_dynamo's wheel failed (see above)"
    return
  fi
  install_s=$((SECONDS - step))
  if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')"; then
    finish failed "installing otel_dynamo's wheel changed torch"
    return
  fi
  step=$SECONDS
  if ! "$venv/bin/python" .ci/user_install_smoke.py; then
    outcome=smoke-failed
    message="a training compile was not recorded (user install)"
  fi
  smoke_s=$((SECONDS - step))
  step=$SECONDS
  if ! pip_from_pypi "$venv" -c "$work/constraints.txt" -e ".[test]" 2>>"$log"; then
    tail -n 5 "$log"
    install_s=$((install_s + SECONDS - step))
    finish failed "installing the test dependencies failed (see above)"
    return
  fi
  install_s=$((install_s + SECONDS - step))
  finish "$outcome" "$message"
}

free_gb() {  # prints the GB free where the venvs go
  df -Pk "$work" | awk 'NR == 2 { print int($4 / 1048576) }'
}

prepare_all() {  # VERSION...: prepares each in turn, each once the disk has room for it; logs to $work/prepare-VERSION.log
  local version
  for version in "$@"; do
    while [ "$(free_gb)" -lt "$PREPARE_FREE_GB" ] && compgen -G "$work/torch-*" >/dev/null; do
      sleep 10  # a prepared venv's tests will delete it
    done
    prepare "$version" >"$work/prepare-$version.log" 2>&1
  done
}

start_preparer() {  # prepares every version in the background, below the tests' priority, in a session of its own
  say "preparing torch ${versions[*]} in the background (download, install, user-install smoke)"
  setsid nice -n 10 bash -c "$(declare -f prepare_all prepare free_gb pip_env pip_from_pypi pypi_unreachable); $(declare -p work python wheel NETWORK_ERRORS PREPARE_FREE_GB); prepare_all ${versions[*]}" &
  preparer_pid=$!
}

selection_of() {  # VERSION: the pytest -m expression it runs
  local version="$1"
  if [ "${#versions[@]}" -eq 1 ]; then
    echo "$ALONE_SELECTION"
  elif [ "$version" = "${versions[0]}" ] || [ "$version" = "${versions[${#versions[@]} - 1]}" ]; then
    echo "$CORE_SELECTION"
  else
    echo "$FAST_SELECTION"
  fi
}

run_one() {  # VERSION: wait for its preparation, test, delete; sets the summary and timing lines
  local version="$1" venv="$work/torch-$1" started=$SECONDS
  local outcome download_s install_s smoke_s message waited_s test_s=0 selection step
  say "torch $version: waiting for its preparation"
  while [ ! -e "$work/prepared-$version" ] && kill -0 "$preparer_pid" 2>/dev/null; do
    sleep 5
  done
  waited_s=$((SECONDS - started))
  if [ -n "$tests_after" ] && kill -0 "$tests_after" 2>/dev/null; then
    say "torch $version: prepared; waiting for the pinned suite (process $tests_after) to end"
    while kill -0 "$tests_after" 2>/dev/null; do sleep 5; done
    started=$SECONDS  # from here on, this version's time is the matrix's own
  fi
  sed "s/^/   [prepare $version] /" "$work/prepare-$version.log"
  read -r outcome download_s install_s smoke_s message <"$work/prepared-$version" ||
    outcome="failed" message="its preparation ended without an outcome"
  selection="$(selection_of "$version")"
  case "$outcome" in
    skipped) summary+=("SKIPPED torch $version: $message") ;;
    failed)
      summary+=("FAILED  torch $version: $message")
      failed=1
      ;;
    *)
      if [ "$outcome" = smoke-failed ]; then
        summary+=("FAILED  torch $version: $message")
        failed=1
      fi
      say "torch $version: running -m '$selection'"
      step=$SECONDS
      if PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        -n "$(test_workers)" --dist loadscope -m "$selection" tests; then
        summary+=("passed  torch $version: -m '$selection' ($((SECONDS - step)) s of tests)")
      else
        summary+=("FAILED  torch $version: -m '$selection' failed (see above)")
        failed=1
      fi
      test_s=$((SECONDS - step))
      ;;
  esac
  rm -rf "$venv"
  timings+=("torch $version: prepared in $((download_s + install_s + smoke_s)) s (download ${download_s} s, install ${install_s} s, smoke ${smoke_s} s; waited ${waited_s} s for it), test ${test_s} s; $((SECONDS - started)) s in all")
  say "timings ${timings[-1]}"
}

declare -a summary=() timings=()
failed=0

grep -v '^torch==' constraints.txt >"$work/constraints.txt"
# Built from a copy of the checkout's files (tracked, and new ones git does not ignore), so
# that neither a stale build/ folder nor the pinned suite's setup, building in the
# checkout at the same time, reaches the wheel.
mkdir -p "$work/source"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/source"
if ! python3 -m pip wheel -q --no-deps -w "$work/dist" "$work/source" >/dev/null; then
  echo "torch matrix: could not build otel_dynamo's wheel" >&2
  exit 1
fi
wheel="$(ls "$work"/dist/otel_dynamo-*.whl)"

[ ${#versions[@]} -eq 0 ] || start_preparer
for version in "${versions[@]}"; do
  run_one "$version"
done

echo "== torch matrix (the pinned torch runs the full suite: .ci/test.sh), $SECONDS s"
printf '   %s\n' "${summary[@]}"
echo "== where the time went (preparations overlap the pinned suite and the tests; only a wait for one adds)"
printf '   %s\n' "${timings[@]}"
exit "$failed"
