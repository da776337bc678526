"""Graphs a Dynamo restart throws away, and compiles interrupted by Ctrl-C or SystemExit."""

from __future__ import annotations

import pytest
import torch
from _counting import CountingBackend
from _spans import named, one

import otel_dynamo
from otel_dynamo import names


def _clamp(x, low):
    return x.clamp(min=low)


def test_graph_discarded_by_a_restart_is_marked_and_not_counted(provider, exporter):
    """A float scalar that stops being specialized makes AOT Autograd restart Dynamo
    (TensorifyScalarRestartAnalysis) after the backend got the graph: that graph span is
    marked discarded, and the frame counts only the graph it kept."""
    truth = CountingBackend("aot_eager")
    compiled = torch.compile(_clamp, backend=otel_dynamo.traced(truth, tracer_provider=provider))
    compiled(torch.randn(3), 2.5)
    compiled(torch.randn(3), 3.5)
    spans = exporter.get_finished_spans()
    frames = {
        span.attributes[names.ATTR_COMPILE_ID]: span for span in named(spans, names.SPAN_FRAME)
    }
    recompile = frames["0/1"]
    if not recompile.attributes.get(names.ATTR_FRAME_RESTART_REASONS):
        pytest.skip("this torch specializes the float: no restart to observe")
    graphs = [
        s for s in named(spans, names.SPAN_GRAPH) if s.attributes[names.ATTR_COMPILE_ID] == "0/1"
    ]
    discarded = [s for s in graphs if s.attributes.get(names.ATTR_DISCARDED) is True]
    kept = [s for s in graphs if names.ATTR_DISCARDED not in s.attributes]
    assert len(discarded) == 1 and len(kept) == truth.graphs["0/1"] == 1
    assert discarded[0].attributes[names.ATTR_DISCARDED_BY] == (
        "torch._dynamo.exc.TensorifyScalarRestartAnalysis"
    )
    assert discarded[0].status.is_ok
    assert recompile.attributes[names.ATTR_FRAME_GRAPH_COUNT] == truth.graphs["0/1"]
    assert recompile.attributes[names.ATTR_FRAME_DISCARDED_GRAPH_COUNT] == 1
    assert kept[0].attributes[names.ATTR_GRAPH_INDEX] == 0
    assert recompile.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS


def _raise_in_backend(exc: BaseException):
    def backend(gm, example_inputs):
        raise exc

    return backend


@pytest.mark.parametrize("exc", [KeyboardInterrupt("ctrl-c"), SystemExit(3)])
def test_interrupted_compile_is_a_failure_with_its_type(provider, exporter, exc):
    """KeyboardInterrupt or SystemExit inside a compile: the user gets it unchanged; the
    frame is a failure with that error type (Dynamo records no fail_type for it)."""
    backend = otel_dynamo.traced(_raise_in_backend(exc), tracer_provider=provider)
    compiled = torch.compile(lambda x: x.sin() + 1, backend=backend)
    with pytest.raises(type(exc)) as raised:
        compiled(torch.randn(3))
    assert raised.value is exc
    frame = one(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert frame.attributes[names.ATTR_OUTCOME] == names.OUTCOME_FAILURE
    assert frame.attributes[names.ATTR_ERROR_TYPE] == type(exc).__qualname__
    assert not frame.status.is_ok
    graph = one(exporter.get_finished_spans(), names.SPAN_GRAPH)
    assert graph.attributes[names.ATTR_ERROR_TYPE] == type(exc).__qualname__


def test_compile_inside_an_interrupt_handler_is_not_a_failure(provider, exporter):
    """A compile that runs while the user's code handles a KeyboardInterrupt (cleanup after
    Ctrl-C) succeeds: the handled exception is not the compile's."""
    compiled = torch.compile(
        lambda x: x.cos() * 2, backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        compiled(torch.randn(3))
    frame = one(exporter.get_finished_spans(), names.SPAN_FRAME)
    assert frame.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SUCCESS
    assert names.ATTR_ERROR_TYPE not in frame.attributes
