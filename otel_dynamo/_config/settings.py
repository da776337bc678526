"""Configuration read once, from the environment, at the door.

Every ``OTEL_DYNAMO_*`` variable is declared here with its parser, default and the
sentence that names what it accepts. A bad value never stops the job: it becomes a
:class:`ConfigProblem` (one clear message naming the variable, the value and what is
accepted) and the default is used, unless ``OTEL_DYNAMO_STRICT`` is true.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from otel_dynamo._config.fault_spec import ACCEPTED as FAULT_ACCEPTED
from otel_dynamo._config.fault_spec import FaultSpec, parse_faults
from otel_dynamo._config.run_span_policy import RunSpanPolicy

ENV_ENABLED = "OTEL_DYNAMO_ENABLED"
ENV_RUN_SPANS = "OTEL_DYNAMO_RUN_SPANS"
ENV_OUTPUT_DIR = "OTEL_DYNAMO_OUTPUT_DIR"
ENV_CAPTURE = "OTEL_DYNAMO_CAPTURE"
ENV_MAX_ATTRIBUTE_LENGTH = "OTEL_DYNAMO_MAX_ATTRIBUTE_LENGTH"
ENV_MAX_LIST_LENGTH = "OTEL_DYNAMO_MAX_LIST_LENGTH"
ENV_MAX_GRAPH_TEXT_LENGTH = "OTEL_DYNAMO_MAX_GRAPH_TEXT_LENGTH"
ENV_TOP_OPS = "OTEL_DYNAMO_TOP_OPS"
ENV_STRICT = "OTEL_DYNAMO_STRICT"
ENV_FLUSH_ON_SIGNAL = "OTEL_DYNAMO_FLUSH_ON_SIGNAL"
ENV_LOG = "OTEL_DYNAMO_LOG"
ENV_LOG_LEVEL = "OTEL_DYNAMO_LOG_LEVEL"
ENV_SLOW_COMPILE_SECONDS = "OTEL_DYNAMO_SLOW_COMPILE_SECONDS"
ENV_PROMETHEUS_PORT = "OTEL_DYNAMO_PROMETHEUS_PORT"
ENV_PROMETHEUS_HOST = "OTEL_DYNAMO_PROMETHEUS_HOST"
ENV_SHUTDOWN_TIMEOUT = "OTEL_DYNAMO_SHUTDOWN_TIMEOUT"
ENV_FAULT = "OTEL_DYNAMO_FAULT"
ENV_ACCURACY = "OTEL_DYNAMO_ACCURACY"
ENV_REPRO_DIR = "OTEL_DYNAMO_REPRO_DIR"
ENV_REPRO_ON = "OTEL_DYNAMO_REPRO_ON"
ENV_FIX_TRIAL = "OTEL_DYNAMO_FIX_TRIAL"
"""Set by ``otel-dynamo run --try-fixes`` in each re-run of the job (``plain 2``, ``fix 3``,
``all fixes``): a job can tell it is a re-run, which repeats its side effects."""
ENV_FIX_ACTIONS = "OTEL_DYNAMO_FIX_ACTIONS"
"""The fix actions (JSON) ``--try-fixes`` had the start-up hook apply in a re-run."""

DEFAULT_RUN_SPANS = "auto"
DEFAULT_AUTO_FIRST_RUNS = 3
DEFAULT_OUTPUT_DIR = "./otel-dynamo"
DEFAULT_CAPTURE = frozenset({"stacks", "values"})
"""Guard text is opt-in: Dynamo builds the text of a frame's guard tree only when asked,
which costs 5-20 ms per frame compile of a large model (the guard count is always there)."""
CAPTURE_CHOICES = frozenset({"stacks", "values", "guards", "graphs"})
"""stacks: graph-break user stacks and the source lines Dynamo quotes in its reasons;
values: the literal values in recompile, guard and graph-break reasons; guards: guard text;
graphs: the text of every graph (Dynamo's, AOT Autograd's, inductor's output code, guards)."""
GRAPHS_NEED_VALUES = (
    "graphs needs values: a graph's text carries the constants the code used "
    "(e.g. OTEL_DYNAMO_CAPTURE=stacks,values,graphs)"
)
DEFAULT_MAX_ATTRIBUTE_LENGTH = 512
DEFAULT_MAX_LIST_LENGTH = 64
DEFAULT_MAX_GRAPH_TEXT_LENGTH = 262_144
"""Characters of one graph text: a batch of such log records stays well under the 4 MiB an
OTLP/gRPC receiver accepts by default, while the graphs of most models fit whole."""
DEFAULT_TOP_OPS = 10
DEFAULT_LOG = "off"
LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LOG_LEVEL = "info"
DEFAULT_SLOW_COMPILE_SECONDS = 60.0
DEFAULT_PROMETHEUS_HOST = "127.0.0.1"
DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 0.5
"""The exit flush's bound when telemetry leaves the machine (an OTLP endpoint, an
exporter plugin): a collector that is down or silent never holds the job's exit longer."""
DEFAULT_LOCAL_SHUTDOWN_TIMEOUT_SECONDS = 10.0
"""The exit flush's bound when all telemetry stays on the machine (files, the console, a
Prometheus endpoint): writing it takes milliseconds, but on a machine busy with every
rank's exit at once it can take seconds, and what is dropped is lost for good."""

ACCURACY_OFF = "off"
ACCURACY_FORWARD = "forward"
ACCURACY_BACKWARD = "backward"
DEFAULT_ACCURACY = ACCURACY_OFF
REPRO_CHOICES = ("compile", "run", "accuracy")
DEFAULT_REPRO_ON = frozenset(REPRO_CHOICES)

DEFAULT_RUN_SPAN_POLICY = RunSpanPolicy.auto(DEFAULT_AUTO_FIRST_RUNS)

TRUE_VALUES = frozenset({"1", "true", "yes", "on"})
FALSE_VALUES = frozenset({"0", "false", "no", "off", ""})
"""The spellings of a boolean variable, after stripping and lower-casing; ``otel_dynamo.pth``
reads OTEL_DYNAMO_ENABLED against FALSE_VALUES itself (``startup.pth_line``)."""


class ConfigError(ValueError):
    """Raised for a bad value when OTEL_DYNAMO_STRICT is true (and by explicit APIs)."""


@dataclasses.dataclass(frozen=True)
class ConfigProblem:
    """One bad variable: what it was, and what would have been accepted."""

    variable: str
    value: str
    accepted: str
    consequence: str = "using the default"
    reason: str = ""
    """What exactly is wrong, where the parser can say (e.g. the bad part of a fault spec)."""

    @property
    def message(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return (
            f"otel_dynamo: {self.variable}={self.value!r} is not valid{why}; "
            f"accepted: {self.accepted}; {self.consequence}"
        )


@dataclasses.dataclass(frozen=True)
class Settings:
    """Every OTEL_DYNAMO_* setting, parsed. Defaults are the named constants above."""

    enabled: bool = False
    run_spans: RunSpanPolicy = DEFAULT_RUN_SPAN_POLICY
    output_dir: str = DEFAULT_OUTPUT_DIR
    capture: frozenset[str] = DEFAULT_CAPTURE
    max_attribute_length: int = DEFAULT_MAX_ATTRIBUTE_LENGTH
    max_list_length: int = DEFAULT_MAX_LIST_LENGTH
    max_graph_text_length: int = DEFAULT_MAX_GRAPH_TEXT_LENGTH
    top_ops: int = DEFAULT_TOP_OPS
    strict: bool = False
    flush_on_signal: bool = True
    """A watcher thread acts for a main thread stuck in C code (``signals``), so a rank
    blocked in a collective still dies at SIGTERM."""
    log: str = DEFAULT_LOG
    log_level: str = DEFAULT_LOG_LEVEL
    slow_compile_seconds: float = DEFAULT_SLOW_COMPILE_SECONDS
    prometheus_port: int | None = None
    prometheus_host: str = DEFAULT_PROMETHEUS_HOST
    shutdown_timeout_seconds: float | None = None
    """None: by where telemetry goes (``shutdown_timeout_for``)."""
    fault: tuple[FaultSpec, ...] = ()
    accuracy: str = DEFAULT_ACCURACY
    repro_dir: str | None = None
    repro_on: frozenset[str] = DEFAULT_REPRO_ON
    problems: tuple[ConfigProblem, ...] = ()


# --- parsers: each takes the raw string and returns the value or raises ValueError ----


def parse_bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    raise ValueError(raw)


def parse_run_spans(raw: str) -> RunSpanPolicy:
    return RunSpanPolicy.parse(raw)


def parse_capture(raw: str) -> frozenset[str]:
    items = {item.strip().lower() for item in raw.split(",") if item.strip()}
    if items == {"none"}:
        return frozenset()
    if not items:
        raise ValueError("empty")
    if not items <= CAPTURE_CHOICES:
        raise ValueError("unknown: " + ", ".join(sorted(items - CAPTURE_CHOICES)))
    if "graphs" in items and "values" not in items:
        raise ValueError(GRAPHS_NEED_VALUES)
    return frozenset(items)


def _positive_int(raw: str) -> int:
    value = int(raw.strip())
    if value <= 0:
        raise ValueError(raw)
    return value


MAX_SECONDS = 86_400.0
"""Longest duration a variable may give (one day): ``inf``, ``nan`` and ``1e400`` are not
durations, and a thread wait of ``inf`` ends in an OverflowError at exit."""


def _positive_float(raw: str) -> float:
    value = float(raw.strip())
    if not 0 < value <= MAX_SECONDS:  # also refuses nan
        raise ValueError(raw)
    return value


def _port(raw: str) -> int:
    value = int(raw.strip())
    if not 0 < value < 65536:
        raise ValueError(raw)
    return value


def _log_target(raw: str) -> str:
    value = raw.strip()
    if not value:
        raise ValueError(raw)
    return value


def _log_level(raw: str) -> str:
    value = raw.strip().lower()
    if value not in LOG_LEVELS:
        raise ValueError(raw)
    return value


def _output_dir(raw: str) -> str:
    value = raw.strip()
    if not value:
        raise ValueError(raw)
    return value


def parse_accuracy(raw: str) -> str:
    value = raw.strip().lower()
    if value in (ACCURACY_FORWARD, ACCURACY_BACKWARD):
        return value
    return ACCURACY_FORWARD if parse_bool(value) else ACCURACY_OFF


def parse_repro_on(raw: str) -> frozenset[str]:
    items = {item.strip().lower() for item in raw.split(",") if item.strip()}
    if not items or not items <= set(REPRO_CHOICES):
        raise ValueError(raw)
    return frozenset(items)


class Variable(NamedTuple):
    """One row of the configuration table, from which docs/configuration.md is generated
    (``python docs/generate_configuration.py``): a variable (or a family read alike, one
    per signal), how a bad value is described, and what the document says of it."""

    env: str
    field: str
    """The Settings field it sets; empty for a standard variable (``otel_env`` reads it)."""
    parse: Callable[[str], Any] | None
    """Raw text to value, raising ValueError; None where ``otel_env`` parses it in context."""
    accepted: str
    """What is accepted, as messages say it."""
    explains: bool = False
    """The parser's ValueError message says what is wrong: show it."""
    consequence: str = "using the default"
    """What a bad value costs, as messages say it (``{signals}``: the signals it affects;
    ``{default}``: the default used instead)."""
    default: str = ""
    """The document's default column (Markdown)."""
    shown: str = ""
    """The document's accepted column (Markdown), where it says more than ``accepted``."""
    meaning: str = ""
    """The document's meaning column (Markdown)."""
    also: tuple[str, ...] = ()
    """The other variables of the row (per signal, or a family such as OTEL_BSP_*)."""
    title: str = ""
    """The document's variable column, where it is not every name in backticks."""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.env, *self.also)

    def reason(self, error: ValueError) -> str:
        return str(error) if self.explains else ""


VARIABLES: tuple[Variable, ...] = (
    Variable(
        ENV_ENABLED,
        "enabled",
        parse_bool,
        "true or false",
        default="`false`",
        shown="`true`/`false`",
        meaning="trace every `torch.compile` in the process with no code change",
    ),
    Variable(
        ENV_RUN_SPANS,
        "run_spans",
        parse_run_spans,
        RunSpanPolicy.ACCEPTED,
        default="`auto`",
        shown="`off`, `all`, `auto`, `auto:N`, `first:N`",
        meaning="which compiled runs become spans (above)",
    ),
    Variable(
        ENV_OUTPUT_DIR,
        "output_dir",
        _output_dir,
        "a writable directory path",
        default="`./otel-dynamo`",
        shown="a writable directory",
        meaning=(
            "where the embedded default writes OTLP/JSON Lines files: with no OTLP endpoint and no "
            "`OTEL_<SIGNAL>_EXPORTER` set, every traced process writes `traces-*.jsonl`, "
            "`logs-*.jsonl` and `metrics-*.jsonl` there (relative to the directory it starts in), "
            "without a word on stderr; `otel-dynamo run` says where they go"
        ),
    ),
    Variable(
        ENV_CAPTURE,
        "capture",
        parse_capture,
        "a comma list of stacks, values, guards, graphs; or none",
        explains=True,
        default="`stacks,values`",
        shown="comma list of `stacks`, `values`, `guards`, `graphs`; or `none`",
        meaning=(
            "what of the user's code and data Dynamo's texts may carry out: `stacks` — graph-break "
            "user stacks (`torch.compile.graph_break.user_stack`) and the source lines Dynamo "
            "quotes after `  # ` in recompile, guard and graph-break reasons; `values` — the "
            "literal values in those reasons (`L['token'] == 'hunter2'` becomes `L['token'] == "
            "<value>` without it; names such as `L['x']` always stay); `guards` — guard text "
            "(`torch.compile.guards`), opt-in because Dynamo builds it only when asked, 5-20 ms "
            "per frame compile of a large model (the guard count is always recorded); `graphs` — "
            "the text of every graph (Dynamo's graph as the backend receives it, AOT Autograd's "
            "joint/forward/backward/inference graphs, inductor's output code, the guard tree), "
            "one `torch.compile.graph_text` log event each, see [what-is-recorded.md]"
            "(what-is-recorded.md#graph-texts-otel_dynamo_capturestacksvaluesgraphs); "
            "`graphs` needs `values` (a graph's text carries the constants the code used: refused "
            "alone, with a message) and without `stacks` loses its `# File:` source lines. `none`: "
            "none of these"
        ),
    ),
    Variable(
        ENV_MAX_ATTRIBUTE_LENGTH,
        "max_attribute_length",
        _positive_int,
        "a positive integer",
        default="`512`",
        shown="positive int",
        meaning=(
            "cap on each string attribute and each text field of a log event — break reasons, "
            "exception messages included (longer ones end in `…`); an exception's stack trace "
            "keeps at most 16,384 characters, its head and its tail"
        ),
    ),
    Variable(
        ENV_MAX_LIST_LENGTH,
        "max_list_length",
        _positive_int,
        "a positive integer",
        default="`64`",
        shown="positive int",
        meaning="cap on string-array attributes (the last item says how many were left out)",
    ),
    Variable(
        ENV_MAX_GRAPH_TEXT_LENGTH,
        "max_graph_text_length",
        _positive_int,
        "a positive integer",
        default="`262144`",
        shown="positive int",
        meaning=(
            "cap on each graph text (`graphs` capture; longer ones end in `…`, with "
            "`torch.compile.graph_text.length` the full length): a batch of them stays under the 4 "
            "MiB an OTLP/gRPC receiver accepts by default, while most models' graphs fit whole"
        ),
    ),
    Variable(
        ENV_TOP_OPS,
        "top_ops",
        _positive_int,
        "a positive integer",
        default="`10`",
        shown="positive int",
        meaning="how many op targets `torch.compile.graph.ops` lists",
    ),
    Variable(
        ENV_STRICT,
        "strict",
        parse_bool,
        "true or false",
        default="`false`",
        shown="`true`/`false`",
        meaning="a bad value stops the process at start (exit status 2) instead of a warning",
    ),
    Variable(
        ENV_LOG,
        "log",
        _log_target,
        "off, stderr, or a file path",
        default="`off`",
        shown="`off`, `stderr`, a file path",
        meaning="where structured JSON log lines go",
    ),
    Variable(
        ENV_LOG_LEVEL,
        "log_level",
        _log_level,
        ", ".join(LOG_LEVELS),
        default="`info`",
        shown="`debug`, `info`, `warning`, `error`",
        meaning="level of those lines",
    ),
    Variable(
        ENV_SLOW_COMPILE_SECONDS,
        "slow_compile_seconds",
        _positive_float,
        "seconds, > 0 and <= 86400",
        default="`60`",
        shown="seconds, > 0 and ≤ 86400",
        meaning='after this long a running compile logs "still compiling"',
    ),
    Variable(
        ENV_PROMETHEUS_PORT,
        "prometheus_port",
        _port,
        "a TCP port, 1-65535",
        default="unset",
        shown="1-65535",
        meaning="serve metrics for Prometheus scraping on this port",
    ),
    Variable(
        ENV_PROMETHEUS_HOST,
        "prometheus_host",
        _log_target,
        "a host name or address",
        default="`127.0.0.1`",
        shown="host or address",
        meaning="address of that endpoint",
    ),
    Variable(
        ENV_SHUTDOWN_TIMEOUT,
        "shutdown_timeout_seconds",
        _positive_float,
        "seconds, > 0 and <= 86400",
        default=(
            f"`{DEFAULT_SHUTDOWN_TIMEOUT_SECONDS:g}` with an OTLP endpoint or exporter plugin; "
            f"`{DEFAULT_LOCAL_SHUTDOWN_TIMEOUT_SECONDS:g}` when all telemetry stays local "
            "(files, console, Prometheus)"
        ),
        shown="seconds, > 0 and ≤ 86400",
        meaning="most time spent flushing telemetry at exit (or at SIGTERM/SIGHUP)",
    ),
    Variable(
        ENV_FLUSH_ON_SIGNAL,
        "flush_on_signal",
        parse_bool,
        "true or false",
        default="`true`",
        shown="`true`/`false`",
        meaning=(
            "on SIGTERM/SIGHUP end the compile in progress as `interrupted`, flush, then let the "
            'signal act, also for a main thread stuck in C code (see the README, "Production")'
        ),
    ),
    Variable(
        ENV_ACCURACY,
        "accuracy",
        parse_accuracy,
        "true, false, forward or backward",
        default="`false`",
        shown="`true`/`false`, `forward`, `backward`",
        meaning="compare each graph's first run with eager",
    ),
    Variable(
        ENV_FAULT,
        "fault",
        parse_faults,
        FAULT_ACCEPTED,
        explains=True,
        default="unset",
        shown="a fault spec (see [debugging-aids.md](debugging-aids.md))",
        meaning="inject compile, runtime, accuracy or non-leaf faults",
    ),
    Variable(
        ENV_REPRO_DIR,
        "repro_dir",
        _output_dir,
        "a writable directory path",
        default="unset (off)",
        shown="a writable directory",
        meaning="write repro scripts for failing graphs there",
    ),
    Variable(
        ENV_REPRO_ON,
        "repro_on",
        parse_repro_on,
        "a comma list of " + ", ".join(REPRO_CHOICES),
        default="`compile,run,accuracy`",
        shown="comma list of `compile`, `run`, `accuracy`",
        meaning="which failures get a repro script",
    ),
)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Parse every OTEL_DYNAMO_* variable; bad values become problems, not exceptions.

    With OTEL_DYNAMO_STRICT=true the first problem raises :class:`ConfigError`.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    problems: list[ConfigProblem] = []
    for variable in VARIABLES:
        raw = env.get(variable.env)
        if raw is None or variable.parse is None:
            continue
        try:
            values[variable.field] = variable.parse(raw)
        except ValueError as error:
            problems.append(
                ConfigProblem(
                    variable.env,
                    raw,
                    variable.accepted,
                    variable.consequence,
                    reason=variable.reason(error),
                )
            )
    settings = Settings(**values, problems=tuple(problems))
    raise_if_strict(settings)
    return settings


def shutdown_timeout_for(settings: Settings, *, all_local: bool) -> float:
    """The exit flush's bound in seconds: ``OTEL_DYNAMO_SHUTDOWN_TIMEOUT`` where it is set,
    else the default for where telemetry goes (``all_local``: nothing leaves the machine)."""
    if settings.shutdown_timeout_seconds is not None:
        return settings.shutdown_timeout_seconds
    if all_local:
        return DEFAULT_LOCAL_SHUTDOWN_TIMEOUT_SECONDS
    return DEFAULT_SHUTDOWN_TIMEOUT_SECONDS


def raise_if_strict(settings: Settings) -> None:
    """In strict mode, turn the first recorded problem into a ConfigError."""
    if settings.strict and settings.problems:
        raise ConfigError(settings.problems[0].message)
