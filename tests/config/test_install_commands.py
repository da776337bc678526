"""The install commands the docs and messages give are ones that work: otel_dynamo is on
no package index, so each names a path (the clone, a wheel built from it), and each extra
it names is one the package declares (pyproject.toml, as installed). The README's install
block is run as the README says to run it: from inside a clone (here, a copy of the
checkout's tracked files), each `pip install` as a dry run that changes no environment.
quickstart.sh's environment has numpy (torch warns at import without it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from otel_dynamo._config.otel_variables import JSON_HTTP_DISTRIBUTION
from otel_dynamo._providers.prometheus import INSTALL_HINT

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_TARGET = re.compile(r"pip install\s+(?:-\S+\s+)*[\"']?([^\s\"'`]+)")
_EXTRA = re.compile(r"\[([a-z-]+)\]$")


def _extras() -> dict[str, list[str]]:
    """Each extra of the installed package and the requirements it adds."""
    extras: dict[str, list[str]] = {
        extra: [] for extra in metadata.metadata("otel-dynamo").get_all("Provides-Extra") or []
    }
    for requirement in metadata.requires("otel-dynamo") or []:
        found = re.search(r"extra == [\"']([a-z-]+)[\"']", requirement)
        if found:
            extras[found[1]].append(requirement)
    return extras


def _install_targets() -> list[tuple[str, str]]:
    return [
        (path.name, match[1])
        for path in DOCS
        for match in _TARGET.finditer(path.read_text())
        if match[1] not in {"DIR"}  # the README's --target example names no package
    ]


def test_no_doc_installs_otel_dynamo_by_package_name() -> None:
    """No `pip install otel-dynamo` (or otel_dynamo) from an index in README or docs/."""
    by_name = [
        (doc, target)
        for doc, target in _install_targets()
        if target != "." and not target.startswith((".[", "./", "/", "dist/"))
    ]
    assert by_name == []


def test_every_extra_the_docs_name_is_declared() -> None:
    """Each `[extra]` in an install command is an optional dependency of the package."""
    declared = set(_extras())
    named = {m[1] for _doc, target in _install_targets() if (m := _EXTRA.search(target))}
    assert named and named <= declared, named - declared


def test_messages_name_the_packages_the_extras_install() -> None:
    """The Prometheus and OTLP/JSON hints name packages the extras depend on."""
    extras = _extras()
    assert any(dep.startswith(INSTALL_HINT.split()[2]) for dep in extras["prometheus"])
    assert any(dep.startswith(JSON_HTTP_DISTRIBUTION) for dep in extras["json-http"])


_INSTALL_HEADING = "## Install in your own project"
_CLONE_DIRECTORY = "otel-dynamo-src"
PIP_TIMEOUT_S = 240


def _readme_install_block() -> tuple[str, str]:
    """The README's install section up to its first bash block, and that block."""
    section = (ROOT / "README.md").read_text().split(_INSTALL_HEADING, 1)[1]
    before, _, rest = section.partition("```bash\n")
    return before, rest.partition("```")[0]


def test_readme_says_to_run_the_install_block_from_inside_the_clone() -> None:
    """The sentence before the block names the clone's folder and the place to run it from,
    and every command in the block names the clone as `.` or a wheel under `dist/`."""
    before, block = _readme_install_block()
    said = " ".join(before.split())
    assert f"`git clone URL {_CLONE_DIRECTORY}`, then `cd {_CLONE_DIRECTORY}`" in said
    assert "run these from inside the clone, its top folder" in said
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert [command.split()[-1] for command in commands] == [
        ".",
        '".[prometheus]"',
        '".[json-http]"',
        ".",
        "dist/otel_dynamo-*.whl",
    ]


def _clone(tmp_path: Path) -> Path:
    """The checkout's tracked files in ``tmp_path/otel-dynamo-src``, as a clone has them."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout: the clone is the tracked files")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    clone = tmp_path / _CLONE_DIRECTORY
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


def test_the_readme_install_block_works_from_inside_the_clone(tmp_path: Path) -> None:
    """The block, run by bash from the clone's top folder: `pip wheel` builds the wheel into
    ./dist, and each `pip install` resolves (a dry run with --no-deps, so nothing is
    installed and no index is needed for the dependencies)."""
    _before, block = _readme_install_block()
    clone = _clone(tmp_path)
    script = (
        "set -euo pipefail\n"
        'pip() { if [ "$1" = install ]; then shift; '
        '"$PYTHON" -m pip install -q --dry-run --no-deps "$@"; '
        'else "$PYTHON" -m pip "$@" -q; fi; }\n' + block
    )
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env={**_pip_environ(), "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [path.name for path in (clone / "dist").glob("otel_dynamo-*.whl")]


def _pip_environ() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def test_quickstart_installs_numpy() -> None:
    """quickstart.sh's install line puts numpy in its venv: torch without numpy prints
    "UserWarning: Failed to initialize NumPy" in the middle of the demo."""
    lines = (ROOT / "quickstart.sh").read_text().splitlines()
    (install,) = [line for line in lines if " -m pip install " in line]
    assert "numpy" in install.split(" -m pip install ", 1)[1].split()


def test_quickstart_ends_saying_how_to_reach_the_command(tmp_path: Path) -> None:
    """After the demo, quickstart.sh's last lines name the venv's bin and how to put it on
    the PATH, and the demo's exit status is the script's (a venv stands in, its python
    and otel-dynamo being stubs that record their calls)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, status in (("python", 0), ("otel-dynamo", 3)):
        stub = venv / "bin" / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp_path}/calls"\nexit {status}\n')
        stub.chmod(0o755)
    done = subprocess.run(
        ["bash", str(ROOT / "quickstart.sh")],
        env={**os.environ, "OTEL_DYNAMO_VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    calls = (tmp_path / "calls").read_text().splitlines()
    assert (done.returncode, calls[-1]) == (3, "otel-dynamo demo")
    assert done.stdout.splitlines()[-3:] == [
        f"otel-dynamo is installed in {venv}/bin; to put it on the PATH:",
        f"  source {venv}/bin/activate",
        f"or call {venv}/bin/otel-dynamo",
    ]


def _sourced_test_venv(environ: dict[str, str]) -> list[str]:
    """What python3 and VIRTUAL_ENV are after sourcing .ci/test_venv.sh as the test command
    does (from the checkout)."""
    script = 'source .ci/test_venv.sh && command -v python3 && echo "$VIRTUAL_ENV"'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.split()


def test_the_test_command_makes_and_uses_a_virtual_environment_of_its_own(tmp_path: Path) -> None:
    """Outside any virtual environment, the test command makes its own (once) and puts it
    first on the PATH: python3 is that environment's."""
    venv = tmp_path / "tests-venv"
    environ = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    environ["OTEL_DYNAMO_TEST_VENV"] = str(venv)
    python3, virtual_env = _sourced_test_venv(environ)
    assert (venv / "pyvenv.cfg").is_file()
    assert virtual_env == str(venv)
    assert python3 == str(venv / "bin" / "python3")
    assert _sourced_test_venv(environ) == [python3, virtual_env]  # made once, then reused


def test_the_test_command_keeps_an_active_virtual_environment(tmp_path: Path) -> None:
    """Inside a virtual environment already, the test command makes none and uses it."""
    environ = {**os.environ, "VIRTUAL_ENV": str(tmp_path / "active")}
    environ["OTEL_DYNAMO_TEST_VENV"] = str(tmp_path / "unused")
    _python3, virtual_env = _sourced_test_venv(environ)
    assert virtual_env == str(tmp_path / "active")
    assert not (tmp_path / "unused").exists()
