"""collector-config/check_configs.py runs where the docs say it does: a Python without
PyYAML gets one line saying what to use instead, no traceback."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

CHECK = Path(__file__).resolve().parents[2] / "collector-config" / "check_configs.py"


def test_a_python_without_pyyaml_is_told_what_to_use(tmp_path: Path) -> None:
    """A bare virtual environment: exit status 1, one line naming its python and the
    quick start's venv, no traceback."""
    venv.create(tmp_path / "bare", with_pip=False)
    python = tmp_path / "bare" / "bin" / "python"
    done = subprocess.run(
        [str(python), str(CHECK)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"check_configs.py needs PyYAML, which {python} lacks: run it with the quick start's "
        ".venv/bin/python (quickstart.sh installs it), or pip install PyYAML"
    ]
