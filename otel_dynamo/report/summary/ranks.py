"""Compare ranks: the ones whose compiles differ from the others are where collectives hang.

Ranks of one job should compile the same graphs with the same guards. A rank with a
different graph count, more recompiles or other guards runs different code, and the
collectives it reaches out of step with the others then wait forever.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TypeVar

from otel_dynamo.report.summary.compiles import compile_id_sort_key
from otel_dynamo.report.summary.schema import (
    CompileFacts,
    FirstDifference,
    ProcessSection,
    RankReference,
    RankRow,
    Ranks,
)

COMPARED_TOTALS = tuple(RankReference.__annotations__)
"""Per-rank totals that must agree across ranks."""

_Value = TypeVar("_Value", bound=Hashable)


class _Tie:
    """Per-compile majority when ranks split evenly: that compile tells nothing."""


_TIE = _Tie()
_Facts = tuple[int, int | None]
"""A compile's graphs and guards: where a rank differs from most ranks."""
_FactsByCompile = dict[str | None, _Facts]
"""Each compile id's graphs and guards in one process (``_compile_facts``)."""


def _compile_facts(section: ProcessSection) -> _FactsByCompile:
    """The graphs and guards of each compile of a process, as ``compare`` compares them
    (the first row of a compile id)."""
    facts: _FactsByCompile = {}
    for row in section["compiles"]:
        facts.setdefault(row["compile_id"], (row["graphs"], row["guards"]))
    return facts


def compare(processes: Sequence[ProcessSection]) -> Ranks:
    """The ``ranks`` section of the summary: one row per rank, diverging ones flagged."""
    ranked = [
        (section, _compile_facts(section)) for section in processes if section["rank"] is not None
    ]
    if len(ranked) < 2:
        return {"compared": False, "diverged": False, "reference": None, "rows": []}
    reference: RankReference = {
        "graphs": majority([section["totals"]["graphs"] for section, _ in ranked]),
        "recompiles": majority([section["totals"]["recompiles"] for section, _ in ranked]),
        "guards": majority([section["totals"]["guards"] for section, _ in ranked]),
    }
    per_compile = _per_compile_majority([found for _, found in ranked])
    rows = [_row(section, found, reference, per_compile) for section, found in ranked]
    return {
        "compared": True,
        "diverged": any(row["diverges"] for row in rows),
        "reference": reference,
        "rows": rows,
    }


def majority(values: Sequence[_Value]) -> _Value | None:
    """The value most ranks share; None when two values are equally common."""
    ranked = Counter(values).most_common(2)
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def _row(
    section: ProcessSection,
    facts: _FactsByCompile,
    reference: RankReference,
    per_compile: dict[str | None, _Facts | _Tie | None],
) -> RankRow:
    totals = section["totals"]
    compared = {
        "graphs": (totals["graphs"], reference["graphs"]),
        "recompiles": (totals["recompiles"], reference["recompiles"]),
        "guards": (totals["guards"], reference["guards"]),
    }
    diverges = [key for key, (value, expected) in compared.items() if value != expected]
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
        "first_difference": _first_difference(facts, per_compile) if diverges else None,
    }


def _per_compile_majority(
    facts: Sequence[_FactsByCompile],
) -> dict[str | None, _Facts | _Tie | None]:
    compile_ids = {compile_id for rank_facts in facts for compile_id in rank_facts}
    found: dict[str | None, _Facts | _Tie | None] = {}
    # By the id's text where numbers tie ("a/0", "b/0"): never the set's order, which
    # changes with the interpreter's string hashing from run to run.
    in_order = sorted(compile_ids, key=lambda found: (compile_id_sort_key(found), found or ""))
    for compile_id in in_order:
        values = [rank_facts.get(compile_id) for rank_facts in facts]
        ranked_values = Counter(values).most_common(2)
        tied = len(ranked_values) > 1 and ranked_values[0][1] == ranked_values[1][1]
        found[compile_id] = _TIE if tied else ranked_values[0][0]
    return found


def _first_difference(
    facts: _FactsByCompile, per_compile: dict[str | None, _Facts | _Tie | None]
) -> FirstDifference | None:
    """The first compile (in compile id order) where this rank is not like most ranks."""
    for compile_id, expected in per_compile.items():
        actual = facts.get(compile_id)
        if not isinstance(expected, _Tie) and actual != expected:
            return {
                "compile_id": compile_id,
                "actual": _as_fields(actual),
                "expected": _as_fields(expected),
            }
    return None


def _as_fields(facts: _Facts | None) -> CompileFacts | None:
    return None if facts is None else {"graphs": facts[0], "guards": facts[1]}
