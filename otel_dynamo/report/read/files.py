"""Read OTLP/JSON Lines files and directories into :class:`Telemetry`.

Bad input never stops the read: a missing path, an empty directory, a truncated line
or a file of another format becomes a :class:`Problem` naming the file and line, and
every other file is still read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from otel_dynamo.report.read import canonical as _canonical
from otel_dynamo.report.read import decode as _decode
from otel_dynamo.report.read.decode import UNREADABLE_RECORD
from otel_dynamo.report.read.model import FileStats, Problem, Process, Telemetry

TELEMETRY_SUFFIXES = (".jsonl", ".json")
"""Files a directory is searched for (recursively); a file named explicitly is always read."""

MAX_PROBLEMS_PER_FILE = 5
"""Unreadable lines reported one by one per file; the rest are counted in one line."""

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest file tried as one pretty-printed request when its lines are not requests."""
NOT_TELEMETRY = (
    "a JSON document, not OTLP/JSON telemetry (a report's --json output or a Perfetto "
    "trace, for example)"
)
"""Said once for a file that is one JSON document of something else."""

READ_BUFFER_BYTES = 1024 * 1024
"""How much of a file is read at once: an exporter's line of a batch of spans is some
hundred kilobytes, which a smaller buffer gathers in many pieces."""

CANONICAL_MISSES = 3
"""Lines in a row that the fast path for spans declines (a file of logs, or written by a
tool of its own) before a file's other lines go straight to ``decode``."""

PROGRESS_STEP_BYTES = 4 * 1024 * 1024
"""How much input is read between two progress callbacks."""

ProgressCallback = Callable[[int, int], None]
"""Called with (bytes read so far, bytes in all inputs)."""


def load_telemetry(
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: ProgressCallback | None = None,
) -> Telemetry:
    """Read every telemetry file in ``paths`` (files or directories, in the order given)."""
    telemetry = Telemetry(printable_text=True)
    files, explicit = input_files(paths, telemetry.problems)
    meter = ProgressMeter(progress, total=sum(file_size(path) for path in files))
    for path in files:
        FileReader(path, telemetry, meter).read(explicit=path in explicit)
    meter.finish()
    return telemetry


def input_files(
    paths: Iterable[str | os.PathLike[str]], problems: list[Problem]
) -> tuple[list[Path], set[Path]]:
    """Files to read, each once, and which of them were named explicitly."""
    found: dict[Path, None] = {}
    explicit: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            in_dir, complete = _telemetry_files_in(path, problems)
            if not in_dir and complete:
                problems.append(Problem(display_name(path), None, _no_files_message()))
            found.update(dict.fromkeys(in_dir))
        elif path.is_file():
            found[path] = None
            explicit.add(path)
        else:
            reason = "not a regular file" if path.exists() else "no such file or directory"
            problems.append(Problem(display_name(path), None, reason))
    return list(found), explicit


def _telemetry_files_in(directory: Path, problems: list[Problem]) -> tuple[list[Path], bool]:
    """The telemetry files under ``directory``, and whether nothing there was skipped: each
    folder that cannot be listed (no permission) and each telemetry-named entry that is not
    a regular file (a dangling link, a pipe) is one problem, named once."""
    complete = True

    def skipped(path: object, why: str) -> None:
        nonlocal complete
        complete = False
        problem = Problem(display_name(path), None, why)
        if problem not in problems:  # a folder given twice, or inside another given
            problems.append(problem)

    def unreadable(failed: OSError) -> None:
        skipped(failed.filename, f"cannot read this directory: {failed.strerror or failed}")

    found = []
    for folder, _, names in os.walk(directory, onerror=unreadable):
        for name in names:
            path = Path(folder, name)
            if path.suffix not in TELEMETRY_SUFFIXES:
                continue
            if path.is_file():
                found.append(path)
            else:
                skipped(path, "not a regular file")
    return sorted(found), complete


def _no_files_message() -> str:
    suffixes = " or ".join(TELEMETRY_SUFFIXES)
    return f"no {suffixes} files in this directory"


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class ProgressMeter:
    """Turns bytes read into occasional progress callbacks (never one per line)."""

    def __init__(self, callback: ProgressCallback | None, *, total: int) -> None:
        self._callback = callback
        self.total = total
        self._done = 0
        self._next_report = PROGRESS_STEP_BYTES

    def advance(self, size: int) -> None:
        self._done += size
        if self._callback is not None and self._done >= self._next_report:
            self._next_report = self._done + PROGRESS_STEP_BYTES
            self._callback(self._done, self.total)

    def finish(self) -> None:
        if self._callback is not None and self.total >= PROGRESS_STEP_BYTES:
            self._callback(self.total, self.total)


class FileReader:
    """Reads one file: one export request per line, problems kept per file."""

    def __init__(self, path: Path, telemetry: Telemetry, meter: ProgressMeter) -> None:
        self._path = path
        self._name = display_name(path)
        self._telemetry = telemetry
        self._meter = meter
        self._stats = FileStats(path=self._name)
        self._problems: list[Problem] = []
        # Every line of a file usually carries the same resource: decode it once.
        self._last_resource = ""  # its repr: 1, 1.0 and true are equal, yet not the same text
        self._last_process: Process | None = None
        self._canonical_misses = 0

    def read(self, *, explicit: bool) -> None:
        if UNPRINTABLE.search(self._name) is not None:  # a name: text, not JSON
            self._telemetry.printable_text = False
        try:
            self._read_lines()
        except OSError as error:
            self._problems.append(Problem(self._name, None, f"cannot read: {error.strerror}"))
        if self._stats.lines == 0 and explicit and not self._problems:
            self._problems.append(Problem(self._name, None, "empty file"))
        self._telemetry.files.append(self._stats)
        self._telemetry.problems.extend(self._reported_problems())

    def _read_lines(self) -> None:
        number = 0  # as a text file counts lines: CR and CRLF end one too
        with self._path.open("rb", buffering=READ_BUFFER_BYTES) as stream:
            for raw in stream:
                self._meter.advance(len(raw))
                for line in text_lines(raw):
                    number += 1
                    self._read_raw_line(number, line)
        if self._stats.records == 0 and self._first_line_was_bad():
            self._read_whole_document()

    def _read_raw_line(self, number: int, raw: bytes) -> None:
        """One line, by the fastest reading that takes it: ``canonical``'s, the fast
        decoder's, else ``parse_json`` on its text (UTF-8 with replacement)."""
        if raw.isspace() or not raw or self._add_canonical(raw):  # no copy of a large line
            return
        request = parse_json_line(raw)
        if request is not UNPARSED:
            self._check_printable(raw)
            self._stats.lines += 1
            self._add_parsed(number, request)
            return
        # errors="replace": a binary file becomes unreadable lines, not a crash.
        line = raw.decode("utf-8", "replace")
        if line.strip():
            self._check_printable(line.encode())
            self._stats.lines += 1
            self._read_line(number, line)

    def _add_canonical(self, raw: bytes) -> bool:
        """Read a line of spans by the fast path (``canonical``), if it takes it; a file
        whose lines it declines CANONICAL_MISSES times in a row is left to ``decode``."""
        if self._canonical_misses >= CANONICAL_MISSES:
            return False
        spans = _canonical.trace_spans(raw, self._process)
        if spans is None:
            self._canonical_misses += 1
            return False
        self._canonical_misses = 0
        self._check_printable(raw)
        self._stats.lines += 1
        self._stats.spans += len(spans)
        self._telemetry.spans.extend(spans)
        return True

    def _check_printable(self, raw: bytes) -> None:
        if self._telemetry.printable_text and not printable_json(raw):
            self._telemetry.printable_text = False

    def _read_line(self, number: int, line: str) -> None:
        try:
            request = parse_json(line)
        except ValueError as error:
            self._bad_line(number, _json_error_message(error))
            return
        except RecursionError:
            self._bad_line(number, "JSON nested too deeply to read")
            return
        self._add_parsed(number, request)

    def _add_parsed(self, number: int, request: object) -> None:
        try:
            added = self._add_request(request)
        except UNREADABLE_RECORD as error:  # hostile values: this line is skipped, not the rest
            self._bad_line(number, f"unreadable record ({type(error).__name__})")
            return
        if not added:
            self._bad_line(number, _not_otlp_message(request))

    def _add_request(self, request: object) -> bool:
        """Add the records of one export request; False if it is not one."""
        signal = _decode.signal_of(request)
        if signal is None:
            return False
        kind, entries = signal
        for entry in entries:
            if isinstance(entry, dict):
                self._add_entry(kind, entry)
        return True

    def _add_entry(self, kind: str, entry: dict[str, Any]) -> None:
        if kind == _decode.SIGNAL_METRICS:
            self._stats.metric_points += _decode.count_metric_points(entry)
            return
        process = self._process(entry.get("resource"))
        if kind == _decode.SIGNAL_TRACES:
            spans = list(_decode.spans_of(entry, process))
            self._stats.spans += len(spans)
            self._telemetry.spans.extend(spans)
        else:
            logs = list(_decode.log_records_of(entry, process))
            self._stats.log_records += len(logs)
            self._telemetry.logs.extend(logs)

    def _process(self, resource: object) -> Process:
        text = repr(resource)
        if self._last_process is None or text != self._last_resource:
            process = _decode.process_of(resource, self._name)  # may raise: cache after
            self._last_resource, self._last_process = text, process
        return self._last_process

    def _bad_line(self, number: int, message: str) -> None:
        self._stats.bad_lines += 1
        if len(self._problems) < MAX_PROBLEMS_PER_FILE:  # the rest are only counted
            self._problems.append(Problem(self._name, number, message))

    def _first_line_was_bad(self) -> bool:
        first = self._problems[0] if self._problems else None
        return first is not None and first.line == 1 and self._stats.lines > 1

    def _read_whole_document(self) -> None:
        """Accept one request pretty-printed over many lines (a hand-made .json file)."""
        if file_size(self._path) > MAX_DOCUMENT_BYTES:
            return
        text = self._path.read_text(encoding="utf-8", errors="replace")
        try:
            request = parse_json(text)
        except (ValueError, RecursionError):
            return
        self._check_printable(text.encode())
        if _decode.signal_of(request) is None:  # a report's --json, a Perfetto trace, ...
            self._problems[:] = [Problem(self._name, None, NOT_TELEMETRY)]
            self._stats.bad_lines = self._stats.lines
            return
        self._problems.clear()
        self._stats.bad_lines = 0
        try:
            self._add_request(request)
        except UNREADABLE_RECORD as error:
            self._bad_line(1, f"unreadable record ({type(error).__name__})")

    def _reported_problems(self) -> list[Problem]:
        if not self._problems:
            return []
        if self._stats.records == 0 and 0 < self._stats.bad_lines == self._stats.lines:
            first = self._problems[0]
            return [
                Problem(first.path, first.line, f"{first.message}; nothing read from this file")
            ]
        hidden = self._stats.bad_lines - len(self._problems)
        if hidden > 0:
            more = Problem(self._name, None, f"{hidden} more unreadable lines not shown")
            return [*self._problems, more]
        return list(self._problems)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""How a surrogate is written in JSON text (the file is decoded with errors="replace", so
a surrogate in what is read can only come from such an escape)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


UNPARSED = object()
"""What ``parse_json_line`` returns for a line it leaves to ``parse_json``."""

_FAST_DECODER = msgspec.json.Decoder()
_FAST_DECODER_ERRORS = (msgspec.DecodeError, RecursionError)


def parse_json_line(raw: bytes) -> Any:
    """One line of a file as ``parse_json`` reads it decoded as UTF-8 (with replacement),
    by a JSON decoder built for speed; ``UNPARSED`` for each line that decoder does not
    read the same, left to ``parse_json``: invalid JSON or UTF-8, a lone surrogate, NaN, a
    number past a double's range (it refuses all of them)."""
    try:
        return _FAST_DECODER.decode(raw)
    except _FAST_DECODER_ERRORS:
        return UNPARSED


def text_lines(raw: bytes) -> list[bytes]:
    """A line split at LF, split again as a text file read with universal newlines splits
    it (at CR and CRLF too), each of those pieces ending in LF as such a file gives them."""
    carriage_return = raw.find(b"\r")
    if carriage_return == -1 or raw[carriage_return:] in (b"\r\n", b"\r"):
        return [raw]  # one line as a text file splits it: the usual line
    pieces = []
    for piece in raw.splitlines(keepends=True):
        body = piece.rstrip(b"\r\n")
        pieces.append(body + b"\n" if len(body) < len(piece) else body)
    return pieces


def parse_json(text: str) -> Any:
    """``json.loads(text)``, with each lone surrogate in a string or key ("\\ud800": valid
    JSON, but no character) written as its escape text, six characters: everything read
    can be written as UTF-8 (terminal, JSON, page, trace, file names), and a pair that
    makes one character ("\\ud83d\\ude00") is that character, as JSON reads it."""
    value = json.loads(text)
    if _SURROGATE_ESCAPE.search(text) is None:  # the usual line: nothing to walk
        return value
    if isinstance(value, str):
        return _escaped(value)
    pending = [value]
    while pending:  # no recursion: json.loads nests deeper than a recursive walk could
        item = pending.pop()
        if isinstance(item, list):
            for index, entry in enumerate(item):
                if isinstance(entry, str):
                    item[index] = _escaped(entry)
                elif isinstance(entry, (list, dict)):
                    pending.append(entry)
        elif isinstance(item, dict):
            for key, entry in list(item.items()):
                if isinstance(entry, (list, dict)):
                    pending.append(entry)
                shown = _escaped(entry) if isinstance(entry, str) else entry
                if _SURROGATE.search(key):
                    del item[key]
                item[_escaped(key)] = shown
    return value


UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control characters (C0, DEL, C1: ESC, BEL, CR...) and bidirectional overrides: text
from the files must not move the cursor, set the window title or reorder what the
terminal shows (``render.format.printable`` escapes them). Line feed and tab stay: they
move nothing back, and the report lays multi-line messages out itself."""

_UNPRINTABLE_ESCAPE = re.compile(
    rb"\\(?:[rbf]|u(?:00[0189]|007[fF]|200[eEfF]|202[a-eA-E]|206[6-9]))"
)
"""A JSON escape of an ``UNPRINTABLE`` character, or of one near it: a superset, as a
check must be."""


def printable_json(raw: bytes) -> bool:
    """Whether no string decoded from the JSON text ``raw`` (UTF-8, or decoded with
    replacement) can hold a control or bidirectional character. In ASCII text those can
    only be escapes or DEL (JSON has no raw control character in a string): two C scans;
    other text is decoded and searched for them written raw."""
    # A line with no escape at all is common: one memchr instead of the pattern's scan.
    if b"\\" in raw and _UNPRINTABLE_ESCAPE.search(raw) is not None:
        return False
    if raw.isascii():
        return b"\x7f" not in raw
    return UNPRINTABLE.search(raw.decode("utf-8", "replace")) is None


def display_name(path: object) -> str:
    """``path`` as the report names it: a name of bytes that are not UTF-8 (held as
    surrogates) with those written as escapes, so that it can be printed."""
    return _escaped(str(path))


def _escaped(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_error_message(error: ValueError) -> str:
    if not isinstance(error, json.JSONDecodeError):
        return f"truncated or corrupt JSON line ({error})"
    # json's messages may end in "at" ("Unterminated string starting at"): one "at" only
    where = "column" if error.msg.endswith(" at") else "at column"
    return f"truncated or corrupt JSON line ({error.msg} {where} {error.colno})"


def _not_otlp_message(request: object) -> str:
    expected = "resourceSpans, resourceLogs or resourceMetrics"
    if isinstance(request, dict):
        found = ", ".join(sorted(request)[:3]) or "no keys"
        return f"not an OTLP/JSON export request (expected {expected}, found {found})"
    return f"not an OTLP/JSON export request (expected an object with {expected})"
