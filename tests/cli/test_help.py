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
    assert "--min-change PERCENT%,SECONDSs" in done.stdout


def test_subcommand_summaries_start_lowercase_with_no_full_stop() -> None:
    """Each subcommand's one-line summary in `otel-dynamo --help` starts lowercase and
    ends without a full stop, as argparse's own help lines do."""
    done = _help()
    listed = {
        line.split()[0]: line.split(maxsplit=1)[1]
        for line in done.stdout.splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    }
    assert set(listed) == {command.name for command in SUBCOMMANDS}
    assert all(summary[0].islower() for summary in listed.values()), listed
    assert all(not command.help.endswith(".") for command in SUBCOMMANDS)


def test_demo_help_names_every_thing_the_demo_does() -> None:
    """`demo --help` lists the graph break and the shape, grad-mode and dtype recompiles
    that demo_training makes (smaller batch, torch.no_grad, float64)."""
    done = _help("demo")
    assert "(a graph break; shape, grad-mode and dtype recompiles)" in " ".join(done.stdout.split())


def test_run_help_states_the_default_output_directory() -> None:
    """`run --help` gives --out's default: OTEL_DYNAMO_OUTPUT_DIR, else ./otel-dynamo
    (DEFAULT_OUTPUT_DIR)."""
    from otel_dynamo._config.settings import DEFAULT_OUTPUT_DIR

    done = _help("run")
    assert DEFAULT_OUTPUT_DIR == "./otel-dynamo"
    assert (
        "--out DIR telemetry directory (sets OTEL_DYNAMO_OUTPUT_DIR; default: "
        "$OTEL_DYNAMO_OUTPUT_DIR, else ./otel-dynamo)"
    ) in " ".join(done.stdout.split())
