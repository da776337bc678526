"""`otel-dynamo --help` and every subcommand's `--help`, run as a user runs them: each
exits 0 and prints its usage (a help text argparse cannot format is a crash)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _export_support import child_environ

from otel_dynamo.cli import SUBCOMMANDS

TIMEOUT_S = 60


def _help(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otel_dynamo", *command, "--help"],
        env=child_environ(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_the_top_level_help_lists_every_subcommand() -> None:
    """`otel-dynamo --help` exits 0 and names each subcommand."""
    done = _help()
    assert done.returncode == 0, done.stderr
    assert all(command.name in done.stdout for command in SUBCOMMANDS)


@pytest.mark.parametrize("name", [command.name for command in SUBCOMMANDS])
def test_each_subcommands_help_prints_its_usage(name: str) -> None:
    """`otel-dynamo NAME --help` exits 0 with its usage line and no traceback."""
    done = _help(name)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: otel-dynamo {name}")
    assert "Traceback" not in done.stderr


def test_diff_help_shows_the_default_minimum_change() -> None:
    """`diff --help` states the default of --min-change, percent sign and all."""
    done = _help("diff")
    assert "(default 10%,0.5s)" in " ".join(done.stdout.split())
