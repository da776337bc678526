"""``otel-dynamo run`` runs the job in its own environment, as ``uv run`` does: the bin
folder of the environment it is installed in comes first on the job's PATH, unless the
user's active environment already has otel_dynamo; a job whose python cannot import torch
or otel_dynamo is told which python that is."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

PRINT_PYTHON = "import sys; print(sys.executable)"


def _run(
    tmp_path: Path, command: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "otel_dynamo",
            "run",
            "--out",
            str(tmp_path / "out"),
            "--",
            *command,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=tmp_path,
    )


def _bare_environ() -> dict[str, str]:
    """The environment of a shell where no virtual environment is active and this one's
    bin folder is not on the PATH."""
    scripts = sysconfig.get_path("scripts")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != scripts)
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    return {**environ, "PATH": path}


def test_python_is_the_one_beside_otel_dynamo(tmp_path: Path) -> None:
    """Called by its full path with no environment active, ``python`` in the job is the
    python of the environment otel-dynamo is installed in."""
    done = _run(tmp_path, ["python", "-c", PRINT_PYTHON], _bare_environ())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(Path(sysconfig.get_path("scripts")) / "python")


def test_an_active_environment_with_otel_dynamo_keeps_its_path(tmp_path: Path) -> None:
    """A virtual environment that has otel_dynamo installed (its start-up hook in its
    site-packages) is active: the job's ``python`` stays that environment's."""
    env_dir = tmp_path / "user-env"
    site = (
        env_dir
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
    )
    site.mkdir(parents=True)
    (site / "otel_dynamo.pth").write_text("")
    (env_dir / "bin").mkdir()
    python = env_dir / "bin" / "python"
    python.write_text("#!/bin/sh\necho user-env-python\n")
    python.chmod(0o755)
    environ = _bare_environ()
    environ.update(VIRTUAL_ENV=str(env_dir), PATH=f"{env_dir / 'bin'}{os.pathsep}{environ['PATH']}")
    done = _run(tmp_path, ["python", "-c", PRINT_PYTHON], environ)
    assert done.stdout.strip() == "user-env-python", done.stderr


def test_a_python_without_torch_is_named(tmp_path: Path) -> None:
    """A job run with a python that has no torch: one line names that python and what it
    lacks, before the job runs."""
    venv.create(tmp_path / "bare", with_pip=False)
    bare = tmp_path / "bare" / "bin" / "python"
    done = _run(tmp_path, [str(bare), "-c", "print('ran')"], _bare_environ())
    assert done.stdout == "ran\n"
    (line,) = [line for line in done.stderr.splitlines() if "cannot import" in line]
    assert line.startswith(
        f"otel-dynamo run: the job's python is {bare}, which cannot import torch"
    )
