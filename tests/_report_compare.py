"""Comparing two ``otel-dynamo report --json`` outputs of one run read from two sources
(its own files, a Jaeger): what only the logs carry is set aside, every other difference
is named by its path."""

from __future__ import annotations

import copy
from typing import Any

from otel_dynamo.report.summary.source import LOG_ONLY


def without_log_only(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` without ``inputs`` and ``source``, and each key ``LOG_ONLY`` names
    (``processes[].compiles[].calls``) set to one mark."""
    kept = copy.deepcopy(summary)
    kept.pop("inputs")
    kept.pop("source")
    for path in LOG_ONLY:
        *steps, last = path.split(".")
        places = [kept]
        for step in steps:
            key = step.removesuffix("[]")
            places = [place[key] for place in places]
            if step.endswith("[]"):
                places = [item for place in places for item in place]
        for place in places:
            place[last] = "<log only>"
    return kept


def differences(first: object, second: object, path: str = "") -> list[str]:
    """Where two JSON values differ: each path, and the two values there."""
    if isinstance(first, dict) and isinstance(second, dict) and first.keys() == second.keys():
        return [d for key in first for d in differences(first[key], second[key], f"{path}.{key}")]
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        pairs = zip(first, second, strict=True)
        return [d for i, (a, b) in enumerate(pairs) for d in differences(a, b, f"{path}[{i}]")]
    return [] if first == second else [f"{path}: {first!r} != {second!r}"]
