"""A compile's phase tables (``summary.phases.compile_phases``) from its phase spans'
intervals by name."""

from __future__ import annotations

from otel_dynamo.report.summary import phases
from otel_dynamo.report.summary.phases import CompilePhases, compile_phases

MS = 1_000_000


def _tables(n: int) -> CompilePhases:
    """The phase tables of a compile whose second phase is named ``aot_step_{n}``."""
    intervals = {
        "bytecode_tracing": [(0, 3 * MS)],
        f"aot_step_{n}": [(3 * MS, 5 * MS)],
        "create_aot_dispatcher_function": [(3 * MS, 6 * MS), (7 * MS, 8 * MS)],
    }
    return compile_phases([], intervals, [])


def _expected(n: int) -> CompilePhases:
    return CompilePhases(
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


def test_phases_are_the_same_past_the_kept_plans() -> None:
    """More distinct sets of phase names than ``PLANS_KEPT``, then the first again: each
    compile's tables are those its intervals make (two AOT phases' union 4 ms, Dynamo's
    phases sorted by name), kept or not."""
    for n in [*range(phases.PLANS_KEPT + 8), 0]:
        assert (n, _tables(n)) == (n, _expected(n))


def test_long_phase_names_read_as_short_ones_do() -> None:
    """A set of phase names longer than PLAN_KEPT_CHARACTERS (not kept) makes its tables
    all the same."""
    name = "x" * (phases.PLAN_KEPT_CHARACTERS + 1)
    for _ in range(2):
        found = compile_phases([], {name: [(0, MS)], "build_guards": [(0, 2 * MS)]}, [])
        assert (found.dynamo, found.phases["guards"]) == (
            {"build_guards": 0.002, name: 0.001},
            0.002,
        )
