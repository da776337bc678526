"""RunCounts tells variants (compile ids) apart within bounds: calls are the runs of the
graph that ran most, a fixed set of compile ids get metric series, folded graphs keep
their variant's calls."""

from __future__ import annotations

from otel_dynamo import names
from otel_dynamo._config.run_span_policy import RunSpanPolicy
from otel_dynamo._recording.metrics import OTHER_COMPILE_IDS, RunCounts, VariantCalls
from otel_dynamo._recording.records import GraphIdentity, RunIdentity
from otel_dynamo._recording.run_state import RunState

FORWARD = names.RUN_KIND_FORWARD


def _run(compile_id: str, count: int, kind: str = FORWARD) -> RunState:
    state = RunState(
        policy=RunSpanPolicy.parse("first:1"),
        identity=RunIdentity(kind, GraphIdentity(compile_id, "eager")),
        link=None,
    )
    state.count = count
    return state


def _series(counts: RunCounts) -> dict[str, int]:
    return {
        str(o.attributes[names.ATTR_COMPILE_ID]): int(o.value)
        for o in counts.observe_variants(None)  # type: ignore[arg-type]
    }


def test_a_variant_of_several_graphs_served_the_calls_of_its_busiest_graph() -> None:
    """Two graphs of one compile id (DDPOptimizer buckets) ran 7 times each: 7 calls, not 14."""
    counts = RunCounts()
    for run in (_run("0/0", 7), _run("0/0", 7), _run("1/0", 3)):
        counts.track(run)
    assert counts.variants() == [
        VariantCalls("0/0", FORWARD, 7, None),
        VariantCalls("1/0", FORWARD, 3, None),
    ]


def test_compile_ids_past_the_series_limit_share_other() -> None:
    """With 2 series allowed, the third compile id's calls go to "other"."""
    counts = RunCounts(variant_series=2)
    for compile_id, calls in (("0/0", 5), ("0/1", 2), ("0/2", 9)):
        counts.track(_run(compile_id, calls))
    assert _series(counts) == {"0/0": 5, "0/1": 2, OTHER_COMPILE_IDS: 9}


def test_folded_graphs_keep_their_variants_calls() -> None:
    """Past the tracked-graph limit the oldest graph is folded: its variant still counts."""
    counts = RunCounts(limit=1)
    counts.track(_run("0/0", 4))
    counts.track(_run("0/1", 6))
    assert [(v.compile_id, v.calls) for v in counts.variants()] == [("0/0", 4), ("0/1", 6)]
    assert counts.totals() == {FORWARD: 10}


def test_a_variant_that_never_ran_is_not_listed() -> None:
    """A compiled graph with no call yet is no variant with calls."""
    counts = RunCounts()
    counts.track(_run("0/0", 0))
    assert counts.variants() == []


def test_other_never_goes_down_when_folded_variants_overflow() -> None:
    """Graphs folded past every bound still count in "other": 5, then 12, then 18."""
    counts = RunCounts(limit=1, folded_variants=1, variant_series=0)
    seen = []
    for compile_id, calls in (("0/0", 5), ("0/1", 7), ("0/2", 6)):
        counts.track(_run(compile_id, calls))
        seen.append(_series(counts)[OTHER_COMPILE_IDS])
    assert seen == [5, 12, 18]
