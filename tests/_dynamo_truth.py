"""Ground truth from torch itself: Dynamo's structured-trace stream, as TORCH_TRACE sees it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

TRACE_LOGGER = "torch.__trace"


class DynamoStream(logging.Handler):
    """Every structured-trace record's metadata (``{event name: metadata}``), in order."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(dict(getattr(record, "metadata", {}) or {}))

    def named(self, event: str) -> list[dict[str, Any]]:
        """The metadata of each ``event`` record (e.g. "compilation_metrics")."""
        return [record[event] for record in self.records if event in record]

    def artifacts(self, name: str) -> list[dict[str, Any]]:
        return [meta for meta in self.named("artifact") if meta.get("name") == name]

    def compile_seconds(self) -> float:
        """Seconds Dynamo says it spent compiling: frame compiles plus lazy backwards."""
        frames = sum(m.get("duration_us") or 0 for m in self.named("compilation_metrics"))
        lazy = sum(m.get("duration_us") or 0 for m in self.named("bwd_compilation_metrics"))
        return (frames + lazy) / 1e6


@contextlib.contextmanager
def dynamo_stream() -> Iterator[DynamoStream]:
    """Listen to the structured trace while the block runs (a handler makes torch emit it)."""
    logger = logging.getLogger(TRACE_LOGGER)
    handler = DynamoStream()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
