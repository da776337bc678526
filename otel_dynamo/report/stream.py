"""Read and summarize a run a few processes at a time: memory follows the largest
process, not the whole input (1 GB of files must be reportable in well under 1 GB).

Each process writes files of its own (``traces-…``, ``logs-…``), each line carrying its
resource. So the first line of every file says whose it is; files of the same processes
are read together, summarized (and placed on the timeline), and their spans dropped
before the next group. Should a file hold a process that an earlier group already
summarized (a Collector's file of many processes, hand-merged files whose first line is
not representative), the grouping was wrong: the groups that share a process are joined
and the input read again the same way, until no process is in two groups.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from otel_dynamo.report.read import canonical as _canonical
from otel_dynamo.report.read import decode as _decode
from otel_dynamo.report.read.files import (
    UNPARSED,
    FileReader,
    ProgressCallback,
    ProgressMeter,
    display_name,
    file_size,
    input_files,
    parse_json,
    parse_json_line,
    text_lines,
)
from otel_dynamo.report.read.jaeger import (
    JaegerAddress,
    JaegerSettings,
    SliceCallback,
    fetch_run,
)
from otel_dynamo.report.read.model import Problem, Telemetry
from otel_dynamo.report.render.causes import CauseCounts, process_causes
from otel_dynamo.report.render.graph_texts import GraphTextCollector
from otel_dynamo.report.render.html.page import page_chunks, page_tables
from otel_dynamo.report.render.html.timeline import TimelineBuilder, TimelinePart
from otel_dynamo.report.render.table import TerminalLayout
from otel_dynamo.report.render.terminal import process_body, terminal_text
from otel_dynamo.report.summary.build import (
    DEFAULT_RECOMPILE_LIMIT,
    DEFAULT_SLOWEST,
    BuiltSection,
    SummaryBuilder,
)
from otel_dynamo.report.summary.schema import Summary
from otel_dynamo.report.summary.source import jaeger_source

Key = tuple[str, ...]


class GroupVisitor(Protocol):
    """Also told each group of processes read (``PerfettoWriter`` writes them out).

    ``part`` takes what the visitor needs from a group; it may run in a worker process,
    so it is a static method and what it returns can be pickled. ``merge`` then takes
    the parts in the groups' order, in the reading process."""

    @staticmethod
    def part(telemetry: Telemetry) -> Any: ...

    def merge(self, part: Any) -> None: ...

    def restart(self) -> None:
        """Everything is read again, at once: forget what was added."""


class Visitors:
    """Several visitors told each group in turn (e.g. Perfetto and graph-text files)."""

    def __init__(self, *visitors: GroupVisitor | None) -> None:
        self.members = [visitor for visitor in visitors if visitor is not None]

    def restart(self) -> None:
        for visitor in self.members:
            visitor.restart()


@dataclasses.dataclass(frozen=True)
class ProcessRead:
    """One process summarized, with its share of the renderings asked for, made by the
    process that summarized it."""

    built: BuiltSection
    body: list[str]
    """Its terminal lines (``process_body``), with a terminal layout; else none."""
    page_tables: str
    """Its page tables (``page_tables``), with a timeline; else empty."""
    causes: CauseCounts
    """The causes of its recompiles and graph breaks (``process_causes``)."""


@dataclasses.dataclass
class Report:
    """A run's summary, its timeline (when asked for), each process's share of the
    renderings asked for, and what could not be read."""

    summary: Summary
    timeline: dict[str, Any] | None
    records: int
    printable_text: bool
    """No string of the summary holds a control or bidirectional character
    (``Telemetry.printable_text`` of every file read): ``render_terminal`` may skip its
    printable copy."""
    layout: TerminalLayout | None
    """The terminal report's, where one was asked for (``terminal_text``)."""
    processes: list[ProcessRead]
    """In the summary's order."""

    @property
    def problems(self) -> list[Problem]:
        """What could not be read: the summary's ``inputs.problems``."""
        rows = self.summary["inputs"]["problems"]
        return [Problem(row["path"], row["line"], row["message"]) for row in rows]

    def terminal_text(self) -> str:
        """The terminal report, as ``render_terminal`` makes it with ``layout``."""
        if self.layout is None:
            raise ValueError("read without a terminal layout: read_report(..., layout=...)")
        bodies = [process.body for process in self.processes]
        return terminal_text(
            self.summary, self.layout, bodies, self.causes(), printable_text=self.printable_text
        )

    def page_text(self, graphs: GraphTextCollector | None = None) -> str:
        """The report page, as ``render_page`` makes it."""
        return "".join(self.page_chunks(graphs))

    def page_chunks(self, graphs: GraphTextCollector | None = None) -> Iterator[str]:
        """The report page in pieces (``render.html.page.page_chunks``), to be written
        as they come."""
        if self.timeline is None:
            raise ValueError("read without a timeline: read_report(..., timeline=True)")
        tables = [process.page_tables for process in self.processes]
        return page_chunks(self.summary, self.timeline, graphs, tables, self.causes())

    def causes(self) -> CauseCounts:
        """Every process's causes, added up."""
        return CauseCounts.of(process.causes for process in self.processes)


PARALLEL_MIN_BYTES = 64 * 1024 * 1024
"""Below this much input every group is read in the reporting process: starting worker
processes would cost more than they save."""


def default_workers() -> int:
    """The cores this process may run on: the groups are read on all of them."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


@dataclasses.dataclass(frozen=True)
class _GroupTask:
    """One group's reading, as a worker process is handed it."""

    paths: list[Path]
    explicit: set[Path]
    recompile_limit: int
    slowest: int
    timeline: bool
    layout: TerminalLayout | None
    """The terminal report's, when it is to be printed."""
    parts: list[Callable[[Telemetry], Any]]
    """Each visitor's ``part``."""


@dataclasses.dataclass
class _GroupRead:
    """What one group of processes leaves once read and summarized: its spans and logs
    are gone."""

    keys: set[Key]
    processes: list[ProcessRead]
    bars: TimelinePart | None
    files: dict[Path, Telemetry]
    """Per file, its stats and problems only."""
    parts: list[Any]
    """Each visitor's part."""
    unreported_bytes: int
    """Bytes read that no progress meter was told of (a worker's whole group)."""
    printable_text: bool


def _read_group(task: _GroupTask, meter: ProgressMeter | None = None) -> _GroupRead:
    """Read, summarize and place one group, in a worker process or in this one (where
    ``meter`` is told each line read; a worker's result says how much it read)."""
    telemetry = Telemetry(printable_text=True)
    reading = ProgressMeter(None, total=0) if meter is None else meter
    for path in task.paths:
        FileReader(path, telemetry, reading).read(explicit=path in task.explicit)
    builder = SummaryBuilder(recompile_limit=task.recompile_limit, slowest=task.slowest)
    printable_text = telemetry.printable_text
    processes = [
        _process_read(built, task, printable_text=printable_text)
        for built in builder.sections(telemetry)
    ]
    return _GroupRead(
        keys={process.built.process.key for process in processes},
        processes=processes,
        bars=TimelineBuilder.part(telemetry) if task.timeline else None,
        files=_files_only(task.paths, telemetry),
        parts=[part(telemetry) for part in task.parts],
        unreported_bytes=0 if meter else sum(file_size(path) for path in task.paths),
        printable_text=printable_text,
    )


def _process_read(built: BuiltSection, task: _GroupTask, *, printable_text: bool) -> ProcessRead:
    section, layout = built.section, task.layout
    return ProcessRead(
        built=built,
        body=[] if layout is None else process_body(section, layout, printable_text=printable_text),
        page_tables=page_tables(section) if task.timeline else "",
        causes=process_causes(section),
    )


def read_report(
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: ProgressCallback | None = None,
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT,
    slowest: int = DEFAULT_SLOWEST,
    timeline: bool = False,
    visitor: GroupVisitor | Visitors | None = None,
    workers: int | None = None,
    layout: TerminalLayout | None = None,
) -> Report:
    """Read and summarize every telemetry file in ``paths`` (files or directories), the
    same summary as ``summarize(load_telemetry(paths))``, one group of processes at a time;
    ``visitor`` is given each group too. With ``PARALLEL_MIN_BYTES`` of input or more the
    groups are read by ``workers`` processes at once (default: ``default_workers()``);
    the result is the same, byte for byte. Should a worker die (the machine's memory),
    everything is read again in this process. ``layout``: the terminal report's, when it
    is to be printed, and ``timeline``: the page's; each process's share of them is made
    by the process that summarized it (``Report.terminal_text``, ``Report.page_chunks``)."""
    read = functools.partial(
        _read,
        list(paths),  # read twice where a process is found in two groups
        progress=progress,
        recompile_limit=recompile_limit,
        slowest=slowest,
        timeline=timeline,
        visitor=visitor,
        layout=layout,
    )
    groups: list[list[Path]] | None = None
    while True:
        try:
            return read(workers=workers, groups=groups)
        except _WorkersLost:
            workers = 1
        except _Regroup as joined:
            groups = joined.groups
        for member in _members(visitor):
            member.restart()


def read_jaeger_report(
    address: JaegerAddress,
    *,
    settings: JaegerSettings,
    progress: ProgressCallback | None = None,
    on_slice: SliceCallback | None = None,
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT,
    slowest: int = DEFAULT_SLOWEST,
    timeline: bool = False,
    visitor: GroupVisitor | Visitors | None = None,
    workers: int | None = None,
    layout: TerminalLayout | None = None,
) -> Report:
    """The run ``address`` chooses, read from Jaeger (``read.jaeger.fetch_run``: its
    spans as files of a private folder, one per process) and reported as ``read_report``
    reports files, with the same options; the summary's ``source`` says where it came from
    and which counts sampling keeps whole. Raises ``JaegerError`` (one line) when Jaeger
    cannot be read; slices that still held the trace limit at the narrowest are problems."""
    with fetch_run(address, settings=settings, on_slice=on_slice) as run:
        done = read_report(
            [run.directory],
            progress=progress,
            recompile_limit=recompile_limit,
            slowest=slowest,
            timeline=timeline,
            visitor=visitor,
            workers=workers,
            layout=layout,
        )
        # The private folder's names mean nothing once it is gone: name the processes.
        shown = {display_name(run.directory / name): label for name, label in run.processes.items()}
    where = address.base
    inputs = done.summary["inputs"]
    for row in [*inputs["files"], *inputs["problems"]]:
        row["path"] = f"{where} ({shown.get(row['path'], row['path'])})"
    if run.truncated:
        first, last = run.truncated[0]
        message = (
            f"{len(run.truncated)} time slices (the first {first} to {last}) still held "
            f"{address.limit} traces at the narrowest: traces may be missing there; read it "
            "again with a higher limit= in the address"
        )
        inputs["problems"].append({"path": str(address), "line": None, "message": message})
    done.summary["source"] = jaeger_source(run)
    return done


def _read(
    paths: list[str | os.PathLike[str]],
    *,
    progress: ProgressCallback | None,
    recompile_limit: int,
    slowest: int,
    timeline: bool,
    visitor: GroupVisitor | Visitors | None,
    workers: int | None,
    layout: TerminalLayout | None,
    groups: list[list[Path]] | None,
) -> Report:
    """One reading of ``paths`` by ``groups`` (None: as their first lines group them);
    raises ``_Regroup`` where a process is found in two groups."""
    problems: list[Problem] = []
    files, explicit = input_files(paths, problems)
    meter = ProgressMeter(progress, total=sum(file_size(path) for path in files))
    members = _members(visitor)
    parts: list[Callable[[Telemetry], Any]] = [type(member).part for member in members]
    tasks = [
        _GroupTask(
            group,
            explicit & set(group),
            recompile_limit,
            slowest,
            timeline,
            layout,
            parts,
        )
        for group in (_groups(files) if groups is None else groups)
    ]
    gathered = _Gathered(
        SummaryBuilder(recompile_limit=recompile_limit, slowest=slowest),
        TimelineBuilder() if timeline else None,
        members,
        meter,
    )
    with collection_paused(), _reader(tasks, meter, workers=workers) as results:
        for done in results:
            gathered.add(done, tasks)
    meter.finish()
    return gathered.report(files, problems, layout=layout)


class _Gathered:
    """The groups' results added up, in the groups' order."""

    def __init__(
        self,
        summary: SummaryBuilder,
        bars: TimelineBuilder | None,
        members: list[GroupVisitor],
        meter: ProgressMeter,
    ) -> None:
        self.summary = summary
        self.bars = bars
        self.members = members
        self.meter = meter
        self.read: dict[Path, Telemetry] = {}
        self.keys_read: list[set[Key]] = []
        self.printable_text = True
        self.processes: dict[Key, ProcessRead] = {}

    def add(self, done: _GroupRead, tasks: list[_GroupTask]) -> None:
        """Add one group's result; raises ``_Regroup`` where it holds a process already
        added."""
        if any(done.keys & keys for keys in self.keys_read):
            raise _Regroup([task.paths for task in tasks], self.keys_read, done.keys)
        self.keys_read.append(done.keys)
        self.summary.extend([process.built for process in done.processes])
        self.processes.update((process.built.process.key, process) for process in done.processes)
        if self.bars is not None and done.bars is not None:
            self.bars.extend(done.bars)
        for member, part in zip(self.members, done.parts, strict=True):
            member.merge(part)
        self.read.update(done.files)
        self.meter.advance(done.unreported_bytes)
        self.printable_text = self.printable_text and done.printable_text

    def report(
        self, files: list[Path], problems: list[Problem], *, layout: TerminalLayout | None
    ) -> Report:
        stats = [stats for path in files for stats in self.read[path].files]
        problems += [problem for path in files for problem in self.read[path].problems]
        return Report(
            summary=self.summary.finish(stats, problems),
            timeline=None if self.bars is None else self.bars.finish(),
            records=sum(each.records for each in stats),
            printable_text=self.printable_text,
            layout=layout,
            processes=[self.processes[key] for key in self.summary.process_keys()],
        )


def _members(visitor: GroupVisitor | Visitors | None) -> list[GroupVisitor]:
    if visitor is None:
        return []
    return visitor.members if isinstance(visitor, Visitors) else [visitor]


class _WorkersLost(Exception):
    """A worker process died (the machine's memory): read everything again here."""


class _Regroup(Exception):
    """The group after those read holds a process an earlier group holds too: it joins
    every earlier group it shares a process with (at the first of them), for the next
    reading. Each reading joins at least two groups, so the readings end."""

    def __init__(self, groups: list[list[Path]], keys_read: list[set[Key]], keys: set[Key]):
        super().__init__("a process is in two groups")
        at = len(keys_read)
        shared = [index for index, read in enumerate(keys_read) if read & keys]
        joined = [path for index in shared for path in groups[index]] + groups[at]
        self.groups = [
            joined if index == shared[0] else group
            for index, group in enumerate(groups)
            if index not in shared[1:] and index != at
        ]


@contextlib.contextmanager
def _reader(
    tasks: list[_GroupTask], meter: ProgressMeter, *, workers: int | None
) -> Iterator[Iterator[_GroupRead]]:
    """Each task's result, in the tasks' order: read by worker processes when the input
    is large enough and there is more than one group and one core, else here."""
    count = min(default_workers() if workers is None else workers, len(tasks))
    if count <= 1 or meter.total < PARALLEL_MIN_BYTES or not _may_fork():
        yield (_read_group(task, meter) for task in tasks)
        return
    # Imported here: a small report, and every other command, never needs them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork"))
    except OSError:  # no process-shared semaphores here (some containers)
        yield (_read_group(task, meter) for task in tasks)
        return
    with pool:
        try:
            yield pool.map(_read_group, tasks)
        except BrokenProcessPool as lost:
            raise _WorkersLost from lost


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cycle collector off meanwhile (as it was after): decoded records and
    summaries hold no cycles, yet each collection of the oldest generation would walk
    every one of them again (a third of the time on a gigabyte of input). Workers forked
    meanwhile keep it off: they live only to read."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _may_fork() -> bool:
    """Whether worker processes can be forked safely: on Linux, from a process running no
    other thread (a thread's lock could be copied held). Forked, a worker needs no import
    of the caller's ``__main__`` (spawn would run an unguarded script again)."""
    return sys.platform == "linux" and threading.active_count() == 1


def _files_only(group: list[Path], telemetry: Telemetry) -> dict[Path, Telemetry]:
    """Per file of ``group``, its stats and problems (no records: those are summarized)."""
    by_path = {display_name(path): path for path in group}
    kept: dict[Path, Telemetry] = {path: Telemetry() for path in group}
    for stats in telemetry.files:
        kept[by_path[stats.path]].files.append(stats)
    for problem in telemetry.problems:
        kept[by_path.get(problem.path, group[0])].problems.append(problem)
    return kept


def _first_line_resources(path: Path) -> tuple[str, list[object]] | None:
    """The signal of the first line of ``path`` that ``FileReader`` reads (not blank,
    split as it splits lines) and its entries' resources: by the fast path that skips
    the records (``canonical.resources_of``) where it takes the line, else from the line
    parsed."""
    with path.open("rb") as stream:
        for line in (piece for raw in stream for piece in text_lines(raw)):
            if not line or line.isspace():
                continue
            found = _canonical.resources_of(line)
            if found is not None:
                return found
            request = parse_json_line(line)
            if request is UNPARSED:
                text = line.decode("utf-8", "replace")
                if not text.strip():  # blank as text (no-break spaces): skipped as blank
                    continue
                request = parse_json(text)
            signal = _decode.signal_of(request)
            if signal is None:
                return None
            kind, entries = signal
            return kind, [entry.get("resource") for entry in entries if isinstance(entry, dict)]
    return None


def _groups(files: list[Path]) -> list[list[Path]]:
    """Files grouped by the processes their first lines name, in the order first seen; a
    file whose first line names none (metrics, unreadable) is a group of its own."""
    groups: list[list[Path]] = []
    group_of: dict[Key, int] = {}
    for path in files:
        keys = _first_line_processes(path)
        found = sorted({group_of[key] for key in keys if key in group_of})
        if not found:
            index = len(groups)
            groups.append([path])
        else:  # files naming processes of several groups join them into the first
            index = found[0]
            for other in reversed(found[1:]):
                groups[index] += groups[other]
                groups[other] = []
                group_of.update({key: index for key, at in group_of.items() if at == other})
            groups[index].append(path)
        group_of.update(dict.fromkeys(keys, index))
    return [group for group in groups if group]


def _first_line_processes(path: Path) -> set[Key]:
    try:
        found = _first_line_resources(path)
        if found is None or found[0] == _decode.SIGNAL_METRICS:
            return set()
        return {_decode.process_of(resource, display_name(path)).key for resource in found[1]}
    except (OSError, *_decode.UNREADABLE_RECORD):
        return set()
