"""Which executions of a compiled graph get a span: ``OTEL_DYNAMO_RUN_SPANS`` parsed."""

from __future__ import annotations

import dataclasses
import sys

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
