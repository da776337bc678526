"""``otel-dynamo run [--] COMMAND ...``: run a command with otel_dynamo enabled.

It sets OTEL_DYNAMO_ENABLED=true (and OTEL_DYNAMO_OUTPUT_DIR with ``--out``), puts this
environment's bin folder first on the PATH (``job_path``), and runs the command; every
Python process it starts, torchrun's ranks included, then traces its torch.compile calls
through ``otel_dynamo.pth``. It first says on stderr where the
telemetry goes: the files' directory (``--out``, OTEL_DYNAMO_OUTPUT_DIR, else
``./otel-dynamo``) and any endpoint or exporter the OTEL_* variables send signals to.
With ``--report`` the command runs as a child and the report of the files it wrote is
printed when it ends (signals the environment sends to an endpoint are written as files
too, for the report): signals sent to ``otel-dynamo run`` reach the child, and it exits
with the child's status (128 + N when signal N ended the child, as a shell reports it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk.environment_variables import OTEL_SDK_DISABLED

from otel_dynamo._config.otel_env import SignalPlan, join_signals, read_otel_env
from otel_dynamo._config.otel_variables import ENV_EXPORTER, EXPORTER_FILE, EXPORTER_OTLP
from otel_dynamo._config.settings import (
    DEFAULT_OUTPUT_DIR,
    ENV_ENABLED,
    ENV_FIX_TRIAL,
    ENV_OUTPUT_DIR,
)
from otel_dynamo._enablement.startup import PTH_NAME, installed_startup_hook
from otel_dynamo.cli.arguments import positive_float

EXIT_NO_COMMAND = 2
EXIT_NOT_FOUND = 127
EXIT_SIGNALLED_BASE = 128
"""A child ended by signal N gives exit status 128 + N, as a POSIX shell reports it."""
FORWARDED_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)


OUT_HELP = (
    f"telemetry directory (sets {ENV_OUTPUT_DIR}; default: ${ENV_OUTPUT_DIR}, "
    f"else {DEFAULT_OUTPUT_DIR})"
)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", metavar="DIR", help=OUT_HELP)
    parser.add_argument(
        "--report", action="store_true", help="print the report of this run when it ends"
    )
    parser.add_argument(
        "--try-fixes",
        action="store_true",
        help=(
            "run the job again once per fix the report finds (with the fix applied by the "
            "start-up hook, the code unchanged) and report each fix's verdict; the job runs "
            f"2 + N times and can tell a re-run by {ENV_FIX_TRIAL}"
        ),
    )
    parser.add_argument(
        "--fix-timeout",
        type=positive_float,
        metavar="SECONDS",
        help=(
            "with --try-fixes: stop a re-run after SECONDS, with no verdict (default: four "
            "times the first run, at least 120)"
        ),
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
    problem = python_problem(command, env)
    if problem:
        _say(problem)
    if args.report:
        env = with_files_for_the_report(env)
    elsewhere = elsewhere_than_files(env)
    files = where_files_go(env, out_given=bool(args.out))
    for line in (files, also_elsewhere(env), elsewhere):
        if line:
            _say(line)
    if args.try_fixes:
        from otel_dynamo.cli.try_fixes import try_fixes

        if not args.report:
            env = with_files_for_the_report(env)
        return try_fixes(command, env, Path(output_dir(env)), timeout_s=args.fix_timeout)
    if args.fix_timeout is not None:
        _say("--fix-timeout is for --try-fixes")
        return EXIT_NO_COMMAND
    if args.report:
        return _run_and_report(command, env, elsewhere)
    return _exec(command, env)


def traced_environment(environ: Mapping[str, str], *, out: str | None) -> dict[str, str]:
    """The job's environment: tracing on, the telemetry directory, and the PATH on which
    ``python`` is this environment's (``job_path``)."""
    env = dict(environ)
    env[ENV_ENABLED] = "true"
    if out:
        env[ENV_OUTPUT_DIR] = out
    path = job_path(environ)
    if path is not None:
        env["PATH"] = path
    return env


def job_path(environ: Mapping[str, str]) -> str | None:
    """The job's PATH, as ``uv run`` and ``poetry run`` make it: the scripts folder of the
    environment this command is installed in first, so that ``python`` and ``torchrun``
    are the ones beside otel_dynamo; None (the PATH as it is) where the user's active
    environment (``VIRTUAL_ENV``, ``CONDA_PREFIX``) already has otel_dynamo, or the
    folder is first already."""
    active = environ.get("VIRTUAL_ENV") or environ.get("CONDA_PREFIX")
    if active and _has_otel_dynamo(Path(active)):
        return None
    scripts = sysconfig.get_path("scripts")
    current = environ.get("PATH", "")
    if current.split(os.pathsep)[:1] == [scripts]:
        return None
    return os.pathsep.join([scripts, current]) if current else scripts


def _has_otel_dynamo(prefix: Path) -> bool:
    """Whether the environment at ``prefix`` has otel_dynamo installed (this one, or a
    site-packages folder holding its start-up hook or package)."""
    if prefix.resolve() == Path(sys.prefix).resolve():
        return True
    found = [*prefix.glob("lib/python3*/site-packages"), *prefix.glob("Lib/site-packages")]
    return any((site / PTH_NAME).exists() or (site / "otel_dynamo").exists() for site in found)


def python_problem(command: list[str], env: Mapping[str, str]) -> str | None:
    """For a job started as ``python ...``: one line saying which python it is when that
    python cannot import torch or otel_dynamo (looked up without importing either);
    None otherwise."""
    if not command or not _PYTHON.fullmatch(Path(command[0]).name):
        return None
    python = shutil.which(command[0], path=env.get("PATH"))
    if python is None:
        return None
    try:
        done = subprocess.run(
            [python, "-c", _FIND_SPECS],
            capture_output=True,
            text=True,
            timeout=FIND_SPECS_TIMEOUT_S,
            env={**env, ENV_ENABLED: "false"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    missing = done.stdout.split()
    if done.returncode != 0 or not missing:
        return None
    return (
        f"the job's python is {python}, which cannot import {' or '.join(missing)}: the job "
        f"may fail or run untraced; run it with the python of the environment otel-dynamo "
        f"is installed in ({sysconfig.get_path('scripts')})"
    )


_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?(?:\.exe)?")
_FIND_SPECS = (
    "import importlib.util as u\n"
    "print(*[m for m in ('torch', 'otel_dynamo') if u.find_spec(m) is None])"
)
FIND_SPECS_TIMEOUT_S = 10


def output_dir(env: Mapping[str, str]) -> str:
    """The files' directory as the embedded default reads it: OTEL_DYNAMO_OUTPUT_DIR,
    stripped, else DEFAULT_OUTPUT_DIR (``./otel-dynamo``)."""
    return env.get(ENV_OUTPUT_DIR, "").strip() or DEFAULT_OUTPUT_DIR


def with_files_for_the_report(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with ``otlp_file`` added to the exporters of every signal the environment
    sends elsewhere only (an OTLP endpoint, a plugin): ``--report`` reads the files, so
    they are written as well; the exporters named stay as named (an ``otlp_proto_http``
    keeps its protocol)."""
    changed = dict(env)
    for kind, plan in _plans_where(env, _elsewhere_only).items():
        variable = ENV_EXPORTER[kind]
        named = env.get(variable, "").strip() or ",".join(plan.exporters)
        changed[variable] = f"{named},{EXPORTER_FILE}"
    return changed


def where_files_go(env: Mapping[str, str], *, out_given: bool = False) -> str | None:
    """Which signals the embedded default writes as files, and where: "traces, logs and
    metrics go to OTLP/JSON Lines files in ./otel-dynamo (the default; --out DIR to
    choose)", "... in DIR (OTEL_DYNAMO_OUTPUT_DIR; ...)", or "... in DIR (--out)". None
    when no signal is written to files but some go elsewhere
    (:func:`elsewhere_than_files` says where); "no telemetry is exported ..." when
    nothing is."""
    otel = read_otel_env(env)
    if otel.disabled:
        return f"no telemetry is exported ({OTEL_SDK_DISABLED}=true)"
    files = [signal for signal, plan in otel.plans.items() if EXPORTER_FILE in plan.exporters]
    if not files:
        exported = any(plan.exporters for plan in otel.plans.values())
        return None if exported else "no telemetry is exported, as the environment says"
    if out_given:
        origin = "--out"
    elif env.get(ENV_OUTPUT_DIR, "").strip():
        origin = f"{ENV_OUTPUT_DIR}; --out DIR to choose"
    else:
        origin = "the default; --out DIR to choose"
    return f"{join_signals(files)} go to OTLP/JSON Lines files in {output_dir(env)} ({origin})"


def also_elsewhere(env: Mapping[str, str]) -> str | None:
    """Where the signals written as files also go (an endpoint, the console, a plugin):
    "traces also go to the OTLP endpoint http://host:4318, as the environment says";
    None when none does."""
    both = _plans_where(
        env, lambda plan: EXPORTER_FILE in plan.exporters and len(plan.exporters) > 1
    )
    if not both:
        return None
    places = dict.fromkeys(
        _place(kind, plan)
        for plan in both.values()
        for kind in plan.exporters
        if kind != EXPORTER_FILE
    )
    return f"{join_signals(list(both))} also go to {', '.join(places)}, as the environment says"


def elsewhere_than_files(env: Mapping[str, str]) -> str | None:
    """What says where the signals that do not go to the telemetry directory go (an OTLP
    endpoint or an exporter set in the environment), and how to write files too; None
    when every signal goes there (or nothing is exported at all)."""
    away = _plans_where(env, _elsewhere_only)
    if not away:
        return None
    places = dict.fromkeys(_place(kind, plan) for plan in away.values() for kind in plan.exporters)
    out = output_dir(env)
    variables = ", ".join(ENV_EXPORTER[signal] for signal in away)
    return (
        f"{join_signals(list(away))} go to {', '.join(places)}, not to {out}, as the "
        f"environment says; add {EXPORTER_FILE} to {variables} (e.g. "
        f"{EXPORTER_OTLP},{EXPORTER_FILE}) to write files there too"
    )


def _elsewhere_only(plan: SignalPlan) -> bool:
    """A signal exported, and not to the files."""
    return bool(plan.exporters) and EXPORTER_FILE not in plan.exporters


def _plans_where(
    env: Mapping[str, str], wanted: Callable[[SignalPlan], bool]
) -> dict[str, SignalPlan]:
    """The signals whose plan ``wanted`` accepts (none where the SDK is disabled)."""
    otel = read_otel_env(env)
    if otel.disabled:
        return {}
    return {signal: plan for signal, plan in otel.plans.items() if wanted(plan)}


def _place(kind: str, plan: SignalPlan) -> str:
    """An exporter's destination in words; an endpoint as scheme://host:port only (its
    user, password, path and query may hold secrets)."""
    if kind == EXPORTER_OTLP and plan.otlp is not None:
        return f"the OTLP endpoint {_shown_endpoint(plan.otlp.endpoint)}"
    return f"the {kind} exporter"


def _shown_endpoint(endpoint: str) -> str:
    """``scheme://host:port``, or ``host:port`` for gRPC's form without a scheme; nothing
    of the user, password, path or query."""
    bare = "://" not in endpoint
    try:
        parts = urlsplit(f"//{endpoint.strip()}" if bare else endpoint)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an endpoint that cannot be read)"
    host = parts.hostname or ""
    where = f"[{host}]{port}" if ":" in host else f"{host}{port}"  # IPv6 keeps its brackets
    return where if bare else f"{parts.scheme}://{where}"


def _exec(command: list[str], env: dict[str, str]) -> int:
    try:
        os.execvpe(command[0], command, env)
    except OSError as error:
        _say(f"cannot run {command[0]!r}: {error.strerror}")
        return EXIT_NOT_FOUND
    return 0  # pragma: no cover - execvpe does not return


def _run_and_report(command: list[str], env: dict[str, str], elsewhere: str | None) -> int:
    started = time.time()
    # Forwarding is set up before the child starts: a signal that comes while it starts
    # is held and sent on once it runs, never left to end this process alone.
    with forwarding_signals() as forward_to:
        try:
            child = subprocess.Popen(command, env=env)
        except OSError as error:
            _say(f"cannot run {command[0]!r}: {error.strerror}")
            return EXIT_NOT_FOUND
        forward_to(child)
        status = exit_status(child.wait())
    _report_written(env, started)
    if elsewhere:
        _say(elsewhere)
    return status


def exit_status(returncode: int) -> int:
    """The shell's status for a child's return code (``-N``: killed by signal N)."""
    return EXIT_SIGNALLED_BASE - returncode if returncode < 0 else returncode


@contextlib.contextmanager
def forwarding_signals() -> Iterator[Callable[[subprocess.Popen[Any]], None]]:
    """While the child runs, a signal sent to us is sent on to it (it decides what to do;
    we wait for it and report); one that comes before the child is given (it is starting)
    is sent when it is. A Ctrl-C at the terminal already reached the child with the whole
    foreground process group: that one is not sent twice."""
    children: list[subprocess.Popen[Any]] = []
    held: list[int] = []

    def send(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            children[0].send_signal(signum)

    def forward(signum: int, _frame: FrameType | None) -> None:
        if signum == signal.SIGINT and _terminal_sent_it_to_the_group():
            return
        if children:
            send(signum)
        else:
            held.append(signum)

    def forward_to(child: subprocess.Popen[Any]) -> None:
        children.append(child)
        while held:
            send(held.pop(0))

    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED_SIGNALS}
    try:
        yield forward_to
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _terminal_sent_it_to_the_group() -> bool:
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError):
        return False  # no terminal: the signal was sent to us alone


def _report_written(env: Mapping[str, str], started: float) -> None:
    out = Path(output_dir(env))
    written = [path for path in out.glob("*.jsonl") if path.stat().st_mtime >= started - 1]
    if written:
        from otel_dynamo.cli.report_command import report_files

        report_files(sorted(written))
    else:
        _say(f"no telemetry was written to {out}")


def _say(message: str) -> None:
    print(f"otel-dynamo run: {message}", file=sys.stderr)
