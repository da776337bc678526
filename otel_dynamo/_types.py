"""Plain, typed values passed between the torch-facing sources and the recorder.

Sources know torch and produce these; the recorder knows OpenTelemetry and consumes
them. Nothing here imports torch or OpenTelemetry.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

NEVER = sys.maxsize


@dataclasses.dataclass(frozen=True)
class RunSpanPolicy:
    """Which executions of a compiled graph get a span (the rest are only counted).

    ``mode`` is one of ``off``, ``all``, ``first`` (the first ``first_runs`` runs of each
    graph) or ``auto`` (the first ``first_runs`` runs, then runs 4, 8, 16, ... : a
    log-spaced sample that stays bounded however long the job runs).
    """

    mode: str
    first_runs: int = 0

    ACCEPTED = "off, all, auto, auto:N or first:N (N a positive integer)"

    @classmethod
    def auto(cls, first_runs: int) -> RunSpanPolicy:
        return cls("auto", first_runs)

    @classmethod
    def parse(cls, raw: str) -> RunSpanPolicy:
        text = raw.strip().lower()
        if text in ("off", "all"):
            return cls(text)
        if text == "auto":
            return cls("auto", 3)
        mode, sep, count = text.partition(":")
        if mode in ("first", "auto") and sep and count.isdigit() and int(count) > 0:
            return cls(mode, int(count))
        raise ValueError(raw)

    def first_recorded(self) -> int:
        """Index (1-based) of the first run to record, or NEVER."""
        return self.next_recorded(0)

    def next_recorded(self, index: int) -> int:
        """Index of the next run to record after run ``index`` was seen."""
        if self.mode == "all":
            return index + 1
        if self.mode == "off":
            return NEVER
        if index < self.first_runs:
            return index + 1
        if self.mode == "first":
            return NEVER
        return 1 << index.bit_length()  # next power of two above index


@dataclasses.dataclass(frozen=True)
class FrameStarted:
    """Dynamo began compiling a frame (structured-trace ``dynamo_start``)."""

    compile_id: str
    time_ns: int


@dataclasses.dataclass(frozen=True)
class FrameEnded:
    """Dynamo finished a frame compile; ``metrics`` is its CompilationMetrics as a dict."""

    compile_id: str
    time_ns: int
    metrics: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class GraphBreakReported:
    """One ``dynamo_graph_break_reason`` artifact, parsed."""

    compile_id: str
    reason: str
    kind: str
    user_stack: tuple[str, ...]
    skipped_frame: bool


@dataclasses.dataclass(frozen=True)
class RecompileReported:
    """One ``recompile_reasons`` artifact: why the cached entries' guards failed."""

    compile_id: str
    reasons: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class GuardsReported:
    """The guard tree Dynamo built for a frame, one guard per entry."""

    compile_id: str
    guards: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class PhaseBoundary:
    """One Dynamo ``chromium_event`` begin (``B``) or end (``E``) of a timed phase."""

    compile_id: str
    name: str
    begin: bool
    time_ns: int
