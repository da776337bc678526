"""The typed summary (``otel_dynamo.report.summary.schema``) is what ``--json`` prints
and what docs/report-json.md documents: one definition, checked both ways."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints

from _report_support import FakeCompile, resource_attributes, small_compiles, write_traces
from _typed_shape import mismatches, schema_keys

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


def test_json_output_has_exactly_the_typed_shape(tmp_path: Path) -> None:
    """``otel-dynamo report --json`` prints an object of exactly the Summary type's keys
    and value types, at every depth."""
    _write_every_section(tmp_path)
    summary = _json_summary(tmp_path)
    assert summary["ranks"]["diverged"] is True and summary["totals"]["faults"] == 2
    assert mismatches(summary, schema.Summary, "summary") == []


def test_every_schema_key_is_documented() -> None:
    """Each key of the summary's types appears as `key` in docs/report-json.md."""
    doc = SCHEMA_DOC.read_text(encoding="utf-8")
    keys = schema_keys(schema.Summary, set())
    assert len(keys) > 100
    assert sorted(key for key in keys if f"`{key}`" not in doc) == []


def test_the_totals_are_one_list() -> None:
    """The summary's totals are its count totals then its time totals, each with a title."""
    assert (*schema.COUNT_TOTALS, *schema.TIME_TOTALS) == schema.TOTAL_KEYS
    assert set(get_type_hints(schema.ProcessTotals)) == set(schema.TOTAL_KEYS)
    assert set(TOTAL_TITLES) == set(schema.TOTAL_KEYS)
