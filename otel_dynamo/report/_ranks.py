"""Compare ranks: the ones whose compiles differ from the others are where collectives hang.

Ranks of one job should compile the same graphs with the same guards. A rank with a
different graph count, more recompiles or other guards runs different code, and the
collectives it reaches out of step with the others then wait forever.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from otel_dynamo.report._compiles import compile_id_sort_key

COMPARED_TOTALS = ("graphs", "recompiles", "guards")
"""Per-rank totals that must agree across ranks."""

_COMPILE_FIELDS = ("graphs", "guards")
"""Per-compile fields used to find the first compile where a rank differs."""

_TIE = object()
"""Per-compile majority when ranks split evenly: that compile tells nothing."""


def compare(processes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``ranks`` section of the summary: one row per rank, diverging ones flagged."""
    ranked = [section for section in processes if section["rank"] is not None]
    if len(ranked) < 2:
        return {"compared": False, "diverged": False, "reference": None, "rows": []}
    reference = {
        key: majority([section["totals"][key] for section in ranked]) for key in COMPARED_TOTALS
    }
    per_compile = _per_compile_majority(ranked)
    rows = [_row(section, reference, per_compile) for section in ranked]
    return {
        "compared": True,
        "diverged": any(row["diverges"] for row in rows),
        "reference": reference,
        "rows": rows,
    }


def majority(values: Sequence[Hashable], *, tie: Any = None) -> Any:
    """The value most ranks share; ``tie`` when two values are equally common."""
    ranked = Counter(values).most_common(2)
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return tie
    return ranked[0][0]


def _row(
    section: dict[str, Any],
    reference: dict[str, Any],
    per_compile: dict[str | None, Any],
) -> dict[str, Any]:
    totals = section["totals"]
    diverges = [key for key in COMPARED_TOTALS if totals[key] != reference[key]]
    return {
        "process": section["process"],
        "rank": section["rank"],
        "frame_compiles": totals["frame_compiles"],
        "graphs": totals["graphs"],
        "recompiles": totals["recompiles"],
        "guards": totals["guards"],
        "graph_breaks": totals["graph_breaks"],
        "failures": totals["failures"],
        "compile_seconds": totals["compile_seconds"],
        "diverges": diverges,
        "first_difference": _first_difference(section, per_compile) if diverges else None,
    }


def _compile_facts(section: dict[str, Any]) -> dict[str | None, tuple[Any, ...]]:
    facts: dict[str | None, tuple[Any, ...]] = {}
    for row in section["compiles"]:
        facts.setdefault(row["compile_id"], tuple(row[key] for key in _COMPILE_FIELDS))
    return facts


def _per_compile_majority(ranked: Sequence[dict[str, Any]]) -> dict[str | None, Any]:
    facts = [_compile_facts(section) for section in ranked]
    compile_ids = {compile_id for rank_facts in facts for compile_id in rank_facts}
    return {
        compile_id: majority([rank_facts.get(compile_id) for rank_facts in facts], tie=_TIE)
        for compile_id in sorted(compile_ids, key=compile_id_sort_key)
    }


def _first_difference(
    section: dict[str, Any], per_compile: dict[str | None, Any]
) -> dict[str, Any] | None:
    """The first compile (in compile id order) where this rank is not like most ranks."""
    facts = _compile_facts(section)
    for compile_id, expected in per_compile.items():
        actual = facts.get(compile_id)
        if expected is not _TIE and actual != expected:
            return {
                "compile_id": compile_id,
                "actual": _as_fields(actual),
                "expected": _as_fields(expected),
            }
    return None


def _as_fields(facts: tuple[Any, ...] | None) -> dict[str, Any] | None:
    return None if facts is None else dict(zip(_COMPILE_FIELDS, facts, strict=True))
