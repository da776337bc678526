"""The typed summary (``otel_dynamo.report.summary.schema``) is what ``--json`` prints
and what docs/report-json.md documents: one definition, checked both ways."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

from _report_support import FakeCompile, resource_attributes, small_compiles, write_traces

from otel_dynamo.names import ATTR_ACCURACY_PASSED, ATTR_FAULT_KIND, ATTR_FAULT_TARGET
from otel_dynamo.report.render.format import TOTAL_TITLES
from otel_dynamo.report.summary import schema

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "report-json.md"


def _write_every_section(directory: Path) -> None:
    """Two diverging ranks with breaks, recompiles, failures, faults, accuracy checks and
    code at the recompile limit."""
    extras: dict[str, Any] = {ATTR_FAULT_KIND: "compile_error", ATTR_FAULT_TARGET: "inductor"}
    extras[ATTR_ACCURACY_PASSED] = False
    hot = [FakeCompile(f"9/{n}", function="hot", cache_size=n) for n in range(8)]
    compiles = [*small_compiles(), FakeCompile("5/0", attributes=extras), *hot]
    for rank in range(2):
        extra = [FakeCompile("7/0", graphs=3)] if rank else []
        resource = resource_attributes(rank=rank, world_size=2, pid=100 + rank)
        write_traces(directory / f"rank{rank}.jsonl", [*compiles, *extra], resource=resource)


def _json_summary(directory: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "report", str(directory), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def _mismatches(value: Any, hint: Any, where: str) -> list[str]:
    """Where ``value`` (JSON data) does not have the shape ``hint`` (a schema type) says."""
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        hints = get_type_hints(hint)
        if set(value) != set(hints):
            return [f"{where}: keys {sorted(value)} != {sorted(hints)}"]
        return [
            problem
            for key, key_hint in hints.items()
            for problem in _mismatches(value[key], key_hint, f"{where}.{key}")
        ]
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if any(not _mismatches(value, option, where) for option in options):
            return []
        return [f"{where}: {value!r} is none of {options}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = get_args(hint)
        return [
            p
            for n, element in enumerate(value)
            for p in _mismatches(element, item, where + f"[{n}]")
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        _, item = get_args(hint)
        return [
            p
            for key, element in value.items()
            for p in _mismatches(element, item, f"{where}.{key}")
        ]
    return _scalar_mismatches(value, hint, where)


def _scalar_mismatches(value: Any, hint: Any, where: str) -> list[str]:
    if get_origin(hint) is typing.Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} not in {get_args(hint)}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if hint in (int, str):
        ok = isinstance(value, hint) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not {hint.__name__}"]
    if hint is bool:
        return [] if isinstance(value, bool) else [f"{where}: {value!r} is not a bool"]
    return [f"{where}: no check for {hint!r}"]


def _schema_keys(hint: Any, seen: set[Any]) -> set[str]:
    """Every key of every TypedDict reachable from ``hint``."""
    if is_typeddict(hint):
        if hint in seen:
            return set()
        seen.add(hint)
        hints = get_type_hints(hint)
        return set(hints).union(*(_schema_keys(inner, seen) for inner in hints.values()))
    return set().union(*(_schema_keys(inner, seen) for inner in get_args(hint)))


def test_json_output_has_exactly_the_typed_shape(tmp_path: Path) -> None:
    """``otel-dynamo report --json`` prints an object of exactly the Summary type's keys
    and value types, at every depth."""
    _write_every_section(tmp_path)
    summary = _json_summary(tmp_path)
    assert summary["ranks"]["diverged"] is True and summary["totals"]["faults"] == 2
    assert _mismatches(summary, schema.Summary, "summary") == []


def test_every_schema_key_is_documented() -> None:
    """Each key of the summary's types appears as `key` in docs/report-json.md."""
    doc = SCHEMA_DOC.read_text(encoding="utf-8")
    keys = _schema_keys(schema.Summary, set())
    assert len(keys) > 100
    assert sorted(key for key in keys if f"`{key}`" not in doc) == []


def test_the_totals_are_one_list() -> None:
    """The summary's totals are its count totals then its time totals, each with a title."""
    assert (*schema.COUNT_TOTALS, *schema.TIME_TOTALS) == schema.TOTAL_KEYS
    assert set(get_type_hints(schema.ProcessTotals)) == set(schema.TOTAL_KEYS)
    assert set(TOTAL_TITLES) == set(schema.TOTAL_KEYS)
