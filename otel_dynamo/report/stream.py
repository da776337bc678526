"""Read and summarize a run a few processes at a time: memory follows the largest
process, not the whole input (1 GB of files must be reportable in well under 1 GB).

Each process writes files of its own (``traces-…``, ``logs-…``), each line carrying its
resource. So the first line of every file says whose it is; files of the same processes
are read together, summarized (and placed on the timeline), and their spans dropped
before the next group. Should a file hold a process that an earlier group already
summarized (hand-merged files whose first line is not representative), the grouping was
wrong: the whole input is then read at once, as ``load_telemetry`` does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from otel_dynamo.report.read import decode as _decode
from otel_dynamo.report.read.files import (
    UNREADABLE_RECORD,
    FileReader,
    ProgressCallback,
    ProgressMeter,
    display_name,
    file_size,
    input_files,
    parse_json,
)
from otel_dynamo.report.read.model import Problem, Telemetry
from otel_dynamo.report.render.html.timeline import TimelineBuilder
from otel_dynamo.report.summary.build import (
    DEFAULT_RECOMPILE_LIMIT,
    DEFAULT_SLOWEST,
    SummaryBuilder,
)
from otel_dynamo.report.summary.schema import Summary

Key = tuple[str, ...]


class GroupVisitor(Protocol):
    """Also told each group of processes read (``PerfettoWriter`` writes them out)."""

    def add(self, telemetry: Telemetry) -> None: ...

    def restart(self) -> None:
        """Everything is read again, at once: forget what was added."""


class Visitors:
    """Several visitors told each group in turn (e.g. Perfetto and graph-text files)."""

    def __init__(self, *visitors: GroupVisitor | None) -> None:
        self._visitors = [visitor for visitor in visitors if visitor is not None]

    def add(self, telemetry: Telemetry) -> None:
        for visitor in self._visitors:
            visitor.add(telemetry)

    def restart(self) -> None:
        for visitor in self._visitors:
            visitor.restart()


@dataclasses.dataclass
class Report:
    """A run's summary, its timeline (when asked for) and what could not be read."""

    summary: Summary
    timeline: dict[str, Any] | None
    problems: list[Problem]
    records: int


def read_report(
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: ProgressCallback | None = None,
    recompile_limit: int = DEFAULT_RECOMPILE_LIMIT,
    slowest: int = DEFAULT_SLOWEST,
    timeline: bool = False,
    visitor: GroupVisitor | None = None,
) -> Report:
    """Read and summarize every telemetry file in ``paths`` (files or directories), the
    same summary as ``summarize(load_telemetry(paths))``, one group of processes at a time;
    ``visitor`` is given each group too."""
    problems: list[Problem] = []
    files, explicit = input_files(paths, problems)
    meter = ProgressMeter(progress, total=sum(file_size(path) for path in files))
    summary = SummaryBuilder(recompile_limit=recompile_limit, slowest=slowest)
    bars = TimelineBuilder() if timeline else None
    read: dict[Path, Telemetry] = {}
    summarized: set[Key] = set()
    for group in _groups(files):
        telemetry = Telemetry()
        for path in group:
            FileReader(path, telemetry, meter).read(explicit=path in explicit)
        keys = {process.key for process in telemetry.processes}
        if keys & summarized:
            if visitor is not None:
                visitor.restart()
            return _all_at_once(
                paths,
                progress,
                recompile_limit=recompile_limit,
                slowest=slowest,
                timeline=timeline,
                visitor=visitor,
            )
        summarized |= keys
        summary.add(telemetry)
        if bars is not None:
            bars.add(telemetry)
        if visitor is not None:
            visitor.add(telemetry)
        read.update(_files_only(group, telemetry))
    meter.finish()
    stats = [stats for path in files for stats in read[path].files]
    problems += [problem for path in files for problem in read[path].problems]
    return Report(
        summary=summary.finish(stats, problems),
        timeline=None if bars is None else bars.finish(),
        problems=problems,
        records=sum(each.records for each in stats),
    )


def _files_only(group: list[Path], telemetry: Telemetry) -> dict[Path, Telemetry]:
    """Per file of ``group``, its stats and problems (no records: those are summarized)."""
    by_path = {display_name(path): path for path in group}
    kept: dict[Path, Telemetry] = {path: Telemetry() for path in group}
    for stats in telemetry.files:
        kept[by_path[stats.path]].files.append(stats)
    for problem in telemetry.problems:
        kept[by_path.get(problem.path, group[0])].problems.append(problem)
    return kept


def _all_at_once(
    paths: Iterable[str | os.PathLike[str]],
    progress: ProgressCallback | None,
    *,
    recompile_limit: int,
    slowest: int,
    timeline: bool,
    visitor: GroupVisitor | None,
) -> Report:
    from otel_dynamo.report.read.files import load_telemetry
    from otel_dynamo.report.render.html.timeline import timeline_data
    from otel_dynamo.report.summary.build import summarize

    telemetry = load_telemetry(paths, progress=progress)
    if visitor is not None:
        visitor.add(telemetry)
    return Report(
        summary=summarize(telemetry, recompile_limit=recompile_limit, slowest=slowest),
        timeline=timeline_data(telemetry) if timeline else None,
        problems=telemetry.problems,
        records=telemetry.records,
    )


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
        with path.open(encoding="utf-8", errors="replace") as stream:
            line = next((line for line in stream if line.strip()), "")
        request = parse_json(line)
        signal = _decode.signal_of(request)
        if signal is None or signal[0] == _decode.SIGNAL_METRICS:
            return set()
        return {
            _decode.process_of(entry.get("resource"), display_name(path)).key
            for entry in signal[1]
            if isinstance(entry, dict)
        }
    except (OSError, RecursionError, *UNREADABLE_RECORD):
        return set()
