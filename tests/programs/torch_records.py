"""What torch writes about a job, read back and normalised so that two runs of the same
job compare equal: its structured trace (``TORCH_TRACE``), its ``TORCH_LOGS`` lines and
the tracebacks in them, and the rest of its stderr. This module never imports
otel_dynamo (nor torch): the harness reads a plain and a traced job's files with it.

    python torch_records.py PLAIN_TRACE_DIR TRACED_TRACE_DIR

Normalised, and only that: what differs between any two runs of one job: times,
durations, timestamps, thread and process ids, object addresses, temporary paths, the
hashes Dynamo puts in the names of the code it generates, and the hash of each payload
(``has_payload``, a hash of a payload that holds times).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRACE_HEADER = re.compile(r"^(?P<level>[A-Z])\d{4} [\d:.]+ \d+ (?P<where>\S+)\] (?P<metadata>.*)$")
"""``V1128 16:37:16.123456 4242 torch/_dynamo/utils.py:2350] {...}`` (glog's layout)."""
LOG_PREFIX = re.compile(r"^(\[rank\d+\]:)?[A-Z]\d{4} [\d:.]+ \d+ ")
"""The time and thread id that start a ``TORCH_LOGS`` line."""
TIMED_KEY = re.compile(
    r"(^|_)(time|times|ts|us|ms|ns|s|duration|overhead|latency|pid|tid|timestamp)($|_)"
)
"""Keys whose values are times, durations or process ids."""
INSTALLED_PACKAGE = "<installed>/otel_dynamo/"
"""How a path into otel_dynamo's package reads once normalised, wherever it is installed."""
VARYING = (
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"(__compiled_fn_\d+)_[0-9a-f_]+"), r"\1_?"),
    (re.compile(r"(__resume_at_\d+)_[0-9a-f_]+"), r"\1_?"),
    # otel_dynamo's own files keep their package path wherever the checkout or venv lives
    # (a clone under /tmp too): the harness recognises our frames by it.
    (re.compile(r"(?:/[^\s'\"\]:,)]*)?/otel_dynamo/"), INSTALLED_PACKAGE),
    (re.compile(r"/tmp/[^\s'\"\]:,)]*"), "<tmp>"),
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)? ?(s|ms|us|ns|seconds)\b"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b"), "<clock>"),
    (re.compile(r"^(\S+\] \S+, )\d+\.\d+$"), r"\1<time>"),  # "Function, Runtimes (s)" rows
    (re.compile(r"(?<![0-9])\d{9,}(?![0-9])"), "<id>"),  # ids, in decimal (in names too)
    (re.compile(r"(___dict_version\(.*?\) == )\d+"), r"\1<version>"),
)
"""Text that differs between two runs of one job. A dict's version (a guard's
``___dict_version``) is a process-wide counter of dict writes, as run-specific as an id."""
ENABLING_VARIABLE = re.compile(r"\bOTEL_(DYNAMO_)?[A-Z_]+\b")
"""The variables that turn tracing on: the traced job's environment differs from the
plain one's by them alone, and inductor's repro artifacts list the environment."""
PAYLOAD_HASH = "has_payload"
GUARD_TREE = "dynamo_cpp_guards_str"
"""Dynamo's guard tree, compared line by line in any order: on torch 2.8 the order of
sibling guards differs between two plain runs of one job (seen: ``DICT_CONTAINS`` guards
on a ``**kwargs`` dict)."""
WORKER_EVENTS = frozenset({"compile_file"})
"""Chromium events of inductor's asynchronous compile: how many kernels its workers
compile, and when, depends on timing (a kernel another request already compiled is not
compiled again), so two runs of one job differ in them."""


@dataclass(frozen=True)
class TraceRecord:
    """One record of a structured trace, normalised."""

    where: str
    """The source location torch's logging call names (``file:line``)."""
    metadata: Any
    payload: Any
    in_compile: bool = True
    """Written with a compile in progress on its thread (the record names the frame).
    Records written outside any compile (inductor's compile workers among them)
    interleave with the others by timing alone: they are compared apart, as a set."""

    @property
    def event(self) -> str:
        """The record's kind: its metadata's first key."""
        return next(iter(self.metadata), "?") if isinstance(self.metadata, dict) else "?"


def normalized_text(text: str) -> str:
    for pattern, replacement in VARYING:
        text = pattern.sub(replacement, text)
    return text


def normalized_value(value: Any, key: str = "") -> Any:
    """A JSON value with its run-specific parts replaced (by key, then by text)."""
    if isinstance(value, dict):
        return {k: normalized_value(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized_value(item, key) for item in value]
    if key == PAYLOAD_HASH:
        return bool(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and TIMED_KEY.search(key):
        return "<n>"
    if isinstance(value, str):
        return normalized_text(value)
    return value


def _payload(lines: list[str], *, unordered: bool = False) -> Any:
    lines = [line for line in lines if not ENABLING_VARIABLE.search(line)]
    if unordered:
        return sorted(normalized_text(line) for line in lines)
    text = "\n".join(lines)
    try:
        return normalized_value(json.loads(text))
    except ValueError:
        return [normalized_text(line) for line in lines]


def trace_records(trace_dir: Path) -> list[TraceRecord]:
    """Every record of the structured-trace files in ``trace_dir``, in order (one file
    per process; files sorted by name)."""
    records = []
    for path in sorted(trace_dir.glob("*.log")):
        for where, metadata, payload in _raw_records(path):
            fields = json.loads(metadata)
            if "chromium_event" in fields and _event_name(payload) in WORKER_EVENTS:
                continue
            records.append(
                TraceRecord(
                    where=normalized_text(where),
                    metadata=normalized_value(fields),
                    payload=_payload(payload, unordered=GUARD_TREE in fields),
                    in_compile="frame_id" in fields or "compiled_autograd_id" in fields,
                )
            )
    return records


def _event_name(lines: list[str]) -> str | None:
    """The name a chromium event's payload gives (its second line, ``"name": ...``)."""
    for line in lines[:3]:
        if line.startswith('"name": '):
            return str(json.loads(line.removeprefix('"name": ').rstrip(",")))
    return None


def _raw_records(path: Path) -> Iterator[tuple[str, str, list[str]]]:
    current: tuple[str, str, list[str]] | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("\t") and current is not None:
            current[2].append(line[1:])
            continue
        match = TRACE_HEADER.match(line)
        if match is None:
            continue
        if current is not None:
            yield current
        current = (match["where"], match["metadata"], [])
    if current is not None:
        yield current


def log_lines(text: str) -> list[str]:
    """A job's stderr (``TORCH_LOGS`` lines, warnings, tracebacks), line by line, each
    normalised."""
    return [normalized_text(LOG_PREFIX.sub("", line)) for line in text.splitlines()]


def first_difference(plain: Any, traced: Any, path: str = "") -> str | None:
    """Where two values first differ, and both values (None when equal)."""
    if isinstance(plain, dict) and isinstance(traced, dict):
        for key in list(plain) + [k for k in traced if k not in plain]:
            if key not in plain or key not in traced:
                side = "traced only" if key not in plain else "plain only"
                return f"{path}.{key}: {side}: {plain.get(key, traced.get(key))!r}"
            found = first_difference(plain[key], traced[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(plain, list) and isinstance(traced, list):
        for index, (mine, theirs) in enumerate(zip(plain, traced, strict=False)):
            found = first_difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        if len(plain) != len(traced):
            longer, side = (plain, "plain") if len(plain) > len(traced) else (traced, "traced")
            extra = longer[min(len(plain), len(traced))]
            counts = f"{len(plain)} items plain, {len(traced)} traced"
            return f"{path}: {counts}; first {side} only: {extra!r}"
        return None
    if plain != traced:
        return f"{path}: plain {plain!r}, traced {traced!r}"
    return None


def trace_difference(plain: list[TraceRecord], traced: list[TraceRecord]) -> str | None:
    """The first record where two structured traces differ, named by index and event:
    those written in a compile in order, then the others as sets (``in_compile``)."""
    ordered = _ordered_difference(
        [r for r in plain if r.in_compile], [r for r in traced if r.in_compile]
    )
    if ordered:
        return ordered
    unordered = _ordered_difference(
        sorted((r for r in plain if not r.in_compile), key=repr),
        sorted((r for r in traced if not r.in_compile), key=repr),
    )
    return None if unordered is None else f"outside any compile: {unordered}"


def _ordered_difference(plain: list[TraceRecord], traced: list[TraceRecord]) -> str | None:
    for index, (mine, theirs) in enumerate(zip(plain, traced, strict=False)):
        for field in ("where", "metadata", "payload"):
            found = first_difference(getattr(mine, field), getattr(theirs, field))
            if found:
                return f"record {index} ({mine.event}) {field}{found}"
    if len(plain) != len(traced):
        longer = plain if len(plain) > len(traced) else traced
        first = longer[min(len(plain), len(traced))]
        return (
            f"{len(plain)} records plain, {len(traced)} traced; the first unmatched is "
            f"{first.event} at {first.where}"
        )
    return None


def main() -> None:
    plain, traced = (trace_records(Path(arg)) for arg in sys.argv[1:3])
    print(trace_difference(plain, traced) or f"equal: {len(plain)} records")


if __name__ == "__main__":
    main()
