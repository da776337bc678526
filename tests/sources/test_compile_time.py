"""Compile time from real compiles: complete (lazy backwards included), split the way
Dynamo splits it, and equal to what Dynamo's own metrics say."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _dynamo_truth import dynamo_stream
from _spans import named, one
from _telemetry_support import Signals, TwoLayer, train_step

from otel_dynamo import names

TIME = names.ATTR_TIME_PREFIX


def _split(span: Any) -> dict[str, float]:
    return {
        key[len(TIME) :]: value for key, value in span.attributes.items() if key.startswith(TIME)
    }


def _seconds(span: Any) -> float:
    return (span.end_time - span.start_time) / 1e9


def _histogram(signals: Signals, metric: str) -> list[tuple[dict[str, Any], float, int]]:
    data = signals.reader.get_metrics_data()
    return [
        (dict(point.attributes), point.sum, point.count)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for each in scope.metrics
        if each.name == metric
        for point in each.data.data_points
    ]


@pytest.fixture
def signals():
    found = Signals()
    yield found
    found.shutdown()


def test_lazy_backward_compile_is_a_span_under_its_frame(signals: Signals) -> None:
    """The backward compiled at the first .backward() is torch.compile.lazy_backward: a
    child of its frame's span, after the frame ended, as long as Dynamo says it took."""
    model = TwoLayer()
    with dynamo_stream() as truth:
        train_step(
            model, torch.compile(model, backend=signals.traced("aot_eager")), torch.randn(3, 4)
        )
    spans = signals.finished()
    frame, lazy = one(spans, names.SPAN_FRAME), one(spans, names.SPAN_LAZY_BACKWARD)
    assert lazy.parent.span_id == frame.context.span_id
    assert lazy.context.trace_id == frame.context.trace_id
    assert lazy.start_time >= frame.end_time
    assert lazy.attributes[names.ATTR_COMPILE_ID] == "0/0"
    assert lazy.attributes[names.ATTR_BACKEND] == "aot_eager"
    (metrics,) = truth.named("bwd_compilation_metrics")
    assert _seconds(lazy) == pytest.approx(metrics["duration_us"] / 1e6, abs=2e-4)


def test_frame_and_lazy_backward_splits_add_up_to_their_durations(signals: Signals) -> None:
    """Each compile span's torch.compile.time.* seconds add up to its duration."""
    model = TwoLayer()
    train_step(model, torch.compile(model, backend=signals.traced("aot_eager")), torch.randn(3, 4))
    spans = signals.finished()
    for span in [one(spans, names.SPAN_FRAME), one(spans, names.SPAN_LAZY_BACKWARD)]:
        split = _split(span)
        assert all(type(value) is float and value > 0 for value in split.values())
        assert sum(split.values()) == pytest.approx(_seconds(span), abs=5e-5)
    frame_split = _split(one(spans, names.SPAN_FRAME))
    assert {names.TIME_TRACING, names.TIME_AOT_JOINT_GRAPH, names.TIME_GUARDS} <= set(frame_split)


def test_inductor_compile_is_backend_time_not_aot_time(signals: Signals) -> None:
    """Under inductor (no compile caches), the forward compile AOT Autograd calls is
    backend time (lowering, codegen, compile): at least the inductor compile time Dynamo's
    metrics give."""

    def fn(x):
        return torch.relu(x * 2).sum(dim=-1)

    no_caches = (
        torch._inductor.config.patch(fx_graph_cache=False),
        torch._functorch.config.patch(enable_autograd_cache=False),
    )
    with no_caches[0], no_caches[1], dynamo_stream() as truth:
        torch.compile(fn, backend=signals.traced("inductor"))(torch.randn(4, 8))
    frame = one(signals.finished(), names.SPAN_FRAME)
    split = _split(frame)
    (metrics,) = truth.named("compilation_metrics")
    inductor_s = metrics["inductor_compile_time_s"]
    backend = sum(value for key, value in split.items() if key.startswith("backend."))
    aot = sum(value for key, value in split.items() if key.startswith("aot."))
    assert backend >= 0.95 * inductor_s
    assert aot <= _seconds(frame) - 0.95 * inductor_s
    assert {names.TIME_BACKEND_LOWERING, names.TIME_BACKEND_CODEGEN} <= set(split)


def test_compile_time_agrees_with_dynamos_metrics(signals: Signals) -> None:
    """Frame and lazy-backward spans of a training job add up to within 5% of the compile
    time Dynamo's compilation metrics give, and the metrics say the same."""
    model = TwoLayer()
    compiled = torch.compile(model, backend=signals.traced("aot_eager"))
    with dynamo_stream() as truth:
        for size in (3, 5, 7):
            train_step(model, compiled, torch.randn(size, 4))
    spans = signals.finished()
    compiles = named(spans, names.SPAN_FRAME) + named(spans, names.SPAN_LAZY_BACKWARD)
    recorded = sum(_seconds(span) for span in compiles)
    assert recorded == pytest.approx(truth.compile_seconds(), rel=0.05)
    durations = _histogram(signals, names.METRIC_COMPILE_DURATION)
    kinds = {point[0][names.ATTR_COMPILE_KIND] for point in durations}
    assert kinds == {names.COMPILE_KIND_FRAME, names.COMPILE_KIND_LAZY_BACKWARD}
    assert sum(point[1] for point in durations) == pytest.approx(recorded, rel=1e-6)
    by_category = _histogram(signals, names.METRIC_COMPILE_TIME)
    assert sum(point[1] for point in by_category) == pytest.approx(recorded, rel=1e-3)
    prefix = names.ATTR_TIME_PREFIX
    span_categories = {
        key.removeprefix(prefix)
        for span in compiles
        for key in span.attributes
        if key.startswith(prefix)
    }
    assert {point[0][names.ATTR_TIME_CATEGORY] for point in by_category} == span_categories


def test_report_explain_and_metrics_agree_on_compile_time(signals: Signals) -> None:
    """The report's compile seconds, explain's phases (the lazy backward as Dynamo's
    entire_backward_compile) and the compile-duration metric give the same numbers."""
    from otel_dynamo import report
    from otel_dynamo.report.read.sdk import spans_from_sdk

    model = TwoLayer()
    train_step(model, torch.compile(model, backend=signals.traced("aot_eager")), torch.randn(3, 4))
    spans = signals.finished()
    summary = report.summarize(report.Telemetry(spans=spans_from_sdk(spans)))
    (row,) = summary["processes"][0]["compiles"]
    lazy = one(spans, names.SPAN_LAZY_BACKWARD)
    assert row["lazy_backward_s"] == pytest.approx(_seconds(lazy), abs=1e-6)
    assert row["compile_s"] == pytest.approx(summary["totals"]["compile_seconds"], abs=1e-6)
    times = dict(report.explain(spans).compile_times)
    assert times["entire_backward_compile"] == (pytest.approx(_seconds(lazy), abs=1e-6),)
    recorded = sum(point[1] for point in _histogram(signals, names.METRIC_COMPILE_DURATION))
    assert recorded == pytest.approx(summary["totals"]["compile_seconds"], abs=1e-5)
    # each category is rounded to the microsecond, hence the tolerance
    assert sum(v for v in row["phases"].values() if v) == pytest.approx(row["compile_s"], abs=5e-5)
