"""A compile's phase tables (``summary.phases.compile_phases``) from its phase spans'
intervals by name."""

from __future__ import annotations

import pytest

from otel_dynamo.report.summary import phases
from otel_dynamo.report.summary.phases import CompilePhases, compile_phases

MS = 1_000_000


def test_phases_are_the_same_when_the_kept_plans_start_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More distinct sets of phase names than ``PLANS_KEPT``: each compile's tables are
    those of a fresh reading, and no more than PLANS_KEPT plans are kept."""
    monkeypatch.setattr(phases, "PLANS_KEPT", 3)
    monkeypatch.setattr(phases, "_PLANS", {})
    for n in range(8):
        intervals = {
            "bytecode_tracing": [(0, 3 * MS)],
            f"aot_step_{n}": [(3 * MS, 5 * MS)],
            "create_aot_dispatcher_function": [(3 * MS, 6 * MS), (7 * MS, 8 * MS)],
        }
        found = compile_phases([], intervals, [])
        assert found == CompilePhases(
            {
                "tracing": 0.003,
                "aot": 0.004,
                "backend": None,
                "guards": None,
                "cache": None,
                "cache_load": None,
                "other": None,
            },
            dict.fromkeys(phases.PHASE_DETAILS),
            {
                f"aot_step_{n}": 0.002,
                "bytecode_tracing": 0.003,
                "create_aot_dispatcher_function": 0.004,
            },
        )
        assert len(phases._PLANS) <= 3


def test_long_phase_names_are_not_kept() -> None:
    """A set of phase names longer than PLAN_KEPT_CHARACTERS is worked out, not kept."""
    name = "x" * (phases.PLAN_KEPT_CHARACTERS + 1)
    found = compile_phases([], {name: [(0, MS)]}, [])
    assert found.dynamo == {name: 0.001}
    assert (name,) not in phases._PLANS
