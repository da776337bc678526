"""Helpers to query finished spans in tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def named(spans: Iterable[Any], name: str) -> list[Any]:
    return [span for span in spans if span.name == name]


def one(spans: Iterable[Any], name: str) -> Any:
    found = named(spans, name)
    assert len(found) == 1, f"expected one {name}, got {[s.name for s in spans]}"
    return found[0]


def children(spans: Iterable[Any], parent: Any) -> list[Any]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]
