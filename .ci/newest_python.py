"""Prints the newest Python version pyproject.toml's classifiers claim (e.g. 3.12)."""

from __future__ import annotations

from pathlib import Path

import tomllib

PREFIX = "Programming Language :: Python :: "


def newest_python(pyproject: Path) -> str:
    classifiers = tomllib.loads(pyproject.read_text())["project"]["classifiers"]
    versions = [c.removeprefix(PREFIX) for c in classifiers if c.startswith(PREFIX + "3.")]
    return max(versions, key=lambda version: tuple(int(part) for part in version.split(".")))


if __name__ == "__main__":
    print(newest_python(Path(__file__).resolve().parent.parent / "pyproject.toml"))
