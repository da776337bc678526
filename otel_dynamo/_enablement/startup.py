"""Interpreter-start enablement, imported by ``otel_dynamo.pth`` (``site_hook``) only when
OTEL_DYNAMO_ENABLED is set to something other than a false value; ``pth_line`` is that line.

Nothing heavy is imported here: torch is never imported, and OpenTelemetry loads only
when ``torch.export`` (imported by ``import torch``) or ``torch._dynamo`` does. In strict
mode a bad variable stops the interpreter here, with the message, exit status 2.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from otel_dynamo._config.settings import (
    ENV_ENABLED,
    ENV_FIX_ACTIONS,
    FALSE_VALUES,
    ConfigError,
    Settings,
    load_settings,
)
from otel_dynamo._enablement import import_hooks

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

PTH_NAME = "otel_dynamo.pth"
"""The one line installed into site-packages that imports this module when enabled."""
SITE_HOOK_MODULE = "otel_dynamo._enablement.site_hook"
STRICT_EXIT_STATUS = 2
INSTRUMENTOR_ENTRY_POINT = "torch_compile"
"""Our name in the ``opentelemetry_instrumentor`` entry-point group (pyproject.toml)."""
ENV_DISABLED_INSTRUMENTATIONS = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
"""Entry-point names ``opentelemetry-instrument`` skips (``*``: all); the .pth skips too."""
_started = False


def start() -> None:
    """Instrument torch.compile and torch.export if OTEL_DYNAMO_ENABLED is true (once).

    Never raises: ``site`` would print a traceback for the .pth line and go on anyway.
    """
    global _started
    if _started:
        return
    _started = True
    try:
        _start()
    except Exception as error:
        sys.stderr.write(f"otel_dynamo: start-up hook failed, tracing is off: {error!r}\n")


def _start() -> None:
    if disabled_by_name(os.environ.get(ENV_DISABLED_INSTRUMENTATIONS, "")):
        return
    settings = _settings_or_exit()
    if settings is None:
        return
    if settings.strict:
        _check_strictly(settings)
    if settings.enabled:
        # torch.export loads with torch itself; torch._dynamo at the first compile.
        for module in ("torch.export", "torch._dynamo"):
            import_hooks.when_imported(module, lambda _module: _instrument(settings))
        if os.environ.get(ENV_FIX_ACTIONS):
            import_hooks.when_imported("torch", _apply_fix_actions)


def disabled_by_name(listed: str) -> bool:
    """Whether OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names us (or ``*``), read as
    ``opentelemetry-instrument`` reads it: comma-separated, spaces ignored."""
    names = {name.strip() for name in listed.split(",")}
    return bool(names & {INSTRUMENTOR_ENTRY_POINT, "*"})


def _settings_or_exit() -> Settings | None:
    try:
        settings = load_settings()
    except ConfigError as error:
        _exit_on_problems([str(error)])
        return None
    if not settings.enabled:
        from otel_dynamo._config.problems import warn_problems

        warn_problems(settings.problems)  # e.g. OTEL_DYNAMO_ENABLED=maybe
    return settings


def _check_strictly(settings: Settings) -> None:
    """Stop on any bad OTEL_* value now. Parsing them needs no OpenTelemetry, so it works
    even where OpenTelemetry's site directory is processed after ours."""
    _exit_on_problems(_startup_problems(settings))


def _startup_problems(settings: Settings) -> list[str]:
    """Problems found without building exporters: OTEL_* values, the output directory."""
    from otel_dynamo._config.otel_env import read_otel_env
    from otel_dynamo._config.otel_variables import EXPORTER_FILE
    from otel_dynamo._config.settings import ENV_OUTPUT_DIR, ENV_REPRO_DIR, ConfigProblem
    from otel_dynamo._providers.files import prepare_directory

    otel = read_otel_env(os.environ)
    messages = [problem.message for problem in otel.problems]
    writes_files = any(EXPORTER_FILE in plan.exporters for plan in otel.plans.values())
    directories = [(ENV_OUTPUT_DIR, settings.output_dir)] if writes_files else []
    if settings.repro_dir is not None:
        directories.append((ENV_REPRO_DIR, settings.repro_dir))
    for variable, directory in directories:
        reason = prepare_directory(directory)
        if reason is not None:
            problem = ConfigProblem(
                variable,
                directory,
                "a writable directory path",
                consequence="stopping",
                reason=reason,
            )
            messages.append(problem.message)
    return messages


def _exit_on_problems(messages: list[str]) -> None:
    if not messages:
        return
    sys.stderr.write(f"{messages[0]}\notel_dynamo: OTEL_DYNAMO_STRICT=true, stopping.\n")
    sys.stderr.flush()
    os._exit(STRICT_EXIT_STATUS)  # a .pth line cannot stop the interpreter any other way


def _instrument(settings: Settings) -> None:
    from otel_dynamo._enablement.instrument import instrument, is_instrumented

    if not is_instrumented():  # an explicit instrument() call came first: keep it
        instrument(settings=settings)


def _apply_fix_actions(torch: ModuleType) -> None:
    """Apply the actions ``otel-dynamo run --try-fixes`` set for this re-run. One that
    cannot be applied stops the job (exit status 2, the message on stderr): a re-run that
    went on without its fix would give a verdict on something else."""
    import json

    from otel_dynamo._sources.fix_actions import ActionError, apply_actions

    try:
        apply_actions(json.loads(os.environ[ENV_FIX_ACTIONS]), torch)
    except (ActionError, ValueError, TypeError, KeyError, AttributeError) as error:
        sys.stderr.write(f"otel_dynamo: {ENV_FIX_ACTIONS}: the fix cannot be applied: {error}\n")
        sys.stderr.flush()
        os._exit(STRICT_EXIT_STATUS)


def installed_startup_hook() -> Path | None:
    """Where ``otel_dynamo.pth`` is installed (a site-packages directory), if anywhere."""
    import site  # only when asked: this module loads at interpreter start
    from pathlib import Path

    folders = [*site.getsitepackages(), site.getusersitepackages()]
    return next((Path(f) / PTH_NAME for f in folders if (Path(f) / PTH_NAME).is_file()), None)


def pth_line() -> str:
    """The text of ``otel_dynamo.pth`` (the shipped file is tested against it).

    With OTEL_DYNAMO_ENABLED unset, the line asks whether the variable is in the
    environment and nothing else happens: no import (``site`` has loaded ``os`` and ``sys``
    before any .pth line), no import hook, ``sys.meta_path`` untouched; the code after
    ``and`` is a string, compiled only when the variable is set (``bench/bench_startup.py``
    counts the line's instructions in a fresh installed environment: the whole line is
    compiled at every interpreter start, so it is kept short). Set to a false spelling
    (any case, spaces around it), that code stops there.
    Otherwise it imports the start-up hook, or, where otel_dynamo cannot be imported (an
    editable install whose checkout is gone), says in one line that tracing is off, where
    ``site`` would print a traceback.
    """
    off = "(" + ",".join(repr(value) for value in sorted(FALSE_VALUES)) + ")"
    # Short: every character of the line is compiled at every interpreter start. ``sys``
    # is site's own (the line runs in its namespace).
    enabled = (
        f"if os.environ[{ENV_ENABLED!r}].strip().lower()not in{off}:\n"
        f" try:import {SITE_HOOK_MODULE} as h;h.run()\n"
        f" except ImportError as e:print(f'{PTH_NAME}: {{e}}: tracing is off',file=sys.stderr)"
    )
    return f"import os;{ENV_ENABLED!r}in os.environ and exec({enabled!r})\n"
