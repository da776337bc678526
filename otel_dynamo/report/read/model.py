"""Plain records decoded from OTLP/JSON: spans, log records, processes, problems.

Decoded once and kept small (slots; spans are msgspec Structs), because a job of many
ranks yields millions of spans. Nothing here knows the file format or the report layout.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from typing import TypeAlias

import msgspec

AttributeValue: TypeAlias = (
    str | bool | int | float | list["AttributeValue"] | dict[str, "AttributeValue"] | None
)
Attributes: TypeAlias = dict[str, AttributeValue]

STATUS_ERROR = 2
"""OTLP status code of a span that failed (STATUS_CODE_ERROR)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    """Something in the input that could not be read: the file, the line, and why."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclasses.dataclass(frozen=True, slots=True)
class Process:
    """The process (usually one rank) that wrote some telemetry, from its resource.

    ``key`` groups records: the rank (within one torchrun run id) when there is one,
    else host and pid, else the SDK's service instance id, else the service name, else
    the file it came from.
    """

    key: tuple[str, ...]
    label: str
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    node_rank: int | None = None
    run_id: str | None = None
    host: str | None = None
    pid: int | None = None
    service: str | None = None
    instance: str | None = None
    torch_version: str | None = None

    @property
    def sort_key(self) -> tuple[int, int, str]:
        """Ranks in numeric order first, then other processes by label."""
        if self.rank is None:
            return (1, 0, self.label)
        return (0, self.rank, self.label)


@dataclasses.dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span (e.g. one graph break)."""

    name: str
    time_ns: int
    attributes: Attributes


class Span(msgspec.Struct, gc=False):
    """One finished span, with the process that recorded it.

    A msgspec Struct: made without a Python ``__init__`` (a large input holds millions),
    and left untracked by the cycle collector (a span refers to nothing that refers back
    to it)."""

    process: Process
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: Attributes
    events: tuple[SpanEvent, ...]  # tuples: most spans have none, and () is shared
    linked_span_ids: tuple[str, ...]
    status_code: int
    status_message: str

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)

    @property
    def is_error(self) -> bool:
        return self.status_code == STATUS_ERROR


@dataclasses.dataclass(slots=True)
class LogRecord:
    """One log record (structured log event), with the process that wrote it."""

    process: Process
    time_ns: int
    event_name: str
    body: AttributeValue
    attributes: Attributes
    span_id: str


@dataclasses.dataclass(slots=True)
class FileStats:
    """What one input file held: counts per signal and how many lines were unreadable."""

    path: str
    lines: int = 0
    spans: int = 0
    log_records: int = 0
    metric_points: int = 0
    bad_lines: int = 0

    @property
    def records(self) -> int:
        return self.spans + self.log_records + self.metric_points


@dataclasses.dataclass
class Telemetry:
    """Everything read from the inputs, in file order, plus what could not be read."""

    spans: list[Span] = dataclasses.field(default_factory=list)
    logs: list[LogRecord] = dataclasses.field(default_factory=list)
    files: list[FileStats] = dataclasses.field(default_factory=list)
    problems: list[Problem] = dataclasses.field(default_factory=list)
    printable_text: bool = False
    """True when no string read can hold a control or bidirectional character: the
    readers of files (``load_telemetry``, ``read_report``) start it True and clear it at
    the first line or file name that might; records made otherwise leave it False."""

    @property
    def records(self) -> int:
        """Spans, log records and metric points read from all files."""
        return sum(stats.records for stats in self.files)

    @property
    def processes(self) -> list[Process]:
        """One process per key (the first seen), ranks first."""
        # Each step one C pass over the records: a large input holds millions.
        processes = list(map(_PROCESS, itertools.chain(self.spans, self.logs)))
        keys = list(map(_KEY, processes))
        first = dict(zip(reversed(keys), reversed(processes), strict=True))  # first seen wins
        in_order = [first[key] for key in dict.fromkeys(keys)]
        return sorted(in_order, key=lambda process: process.sort_key)


_PROCESS = operator.attrgetter("process")
_KEY = operator.attrgetter("key")
