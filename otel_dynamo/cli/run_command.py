"""``otel-dynamo run [--] COMMAND ...``: run a command with otel_dynamo enabled.

It sets OTEL_DYNAMO_ENABLED=true (and OTEL_DYNAMO_OUTPUT_DIR with ``--out``) and runs
the command; every Python process it starts, torchrun's ranks included, then traces
its torch.compile calls through ``otel_dynamo.pth``. With ``--report`` the command runs
as a child and the report of the files it wrote is printed when it ends.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from otel_dynamo._config.settings import DEFAULT_OUTPUT_DIR, ENV_ENABLED, ENV_OUTPUT_DIR
from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook

EXIT_NO_COMMAND = 2
EXIT_NOT_FOUND = 127


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", metavar="DIR", help=f"telemetry directory (sets {ENV_OUTPUT_DIR})")
    parser.add_argument(
        "--report", action="store_true", help="print the report of this run when it ends"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments")


def run_command(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        _say("give a command, e.g. otel-dynamo run -- python train.py")
        return EXIT_NO_COMMAND
    if installed_startup_hook() is None:
        _say(f"warning: {PTH_NAME} is not in site-packages; reinstall otel-dynamo for tracing")
    env = traced_environment(os.environ, out=args.out)
    if args.report:
        return _run_and_report(command, env)
    return _exec(command, env)


def traced_environment(environ: Mapping[str, str], *, out: str | None) -> dict[str, str]:
    env = dict(environ)
    env[ENV_ENABLED] = "true"
    if out:
        env[ENV_OUTPUT_DIR] = out
    return env


def _exec(command: list[str], env: dict[str, str]) -> int:
    try:
        os.execvpe(command[0], command, env)
    except OSError as error:
        _say(f"cannot run {command[0]!r}: {error.strerror}")
        return EXIT_NOT_FOUND
    return 0  # pragma: no cover - execvpe does not return


def _run_and_report(command: list[str], env: dict[str, str]) -> int:
    started = time.time()
    try:
        status = subprocess.call(command, env=env)
    except OSError as error:
        _say(f"cannot run {command[0]!r}: {error.strerror}")
        return EXIT_NOT_FOUND
    out = Path(env.get(ENV_OUTPUT_DIR, DEFAULT_OUTPUT_DIR))
    written = [path for path in out.glob("*.jsonl") if path.stat().st_mtime >= started - 1]
    if written:
        from otel_dynamo.cli.report_command import report_files

        report_files(sorted(written))
    else:
        _say(f"no telemetry was written to {out}")
    return status


def _say(message: str) -> None:
    print(f"otel-dynamo run: {message}", file=sys.stderr)
