"""Graph texts (``graphs`` in OTEL_DYNAMO_CAPTURE) from real compiles: Dynamo's graph as
the backend received it, AOT Autograd's graphs, inductor's output code as it wrote it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from _spans import named, one

import otel_dynamo
from otel_dynamo import names

FULL = "stacks,values,graphs"


class RecordingBackend:
    """Keeps the text of every graph Dynamo hands it, then compiles with ``aot_eager``."""

    __name__ = "recording_aot_eager"

    def __init__(self) -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend("aot_eager")
        self.texts: list[str] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Any, **kwargs: Any) -> Any:
        self.texts.append(
            gm.print_readable(print_output=False, include_stride=True, include_device=True)
        )
        return self.inner(gm, example_inputs, **kwargs)


def _step(x: torch.Tensor) -> torch.Tensor:
    y = torch.nn.functional.gelu(x @ x.T) * 0.5
    print("graph break")  # two graphs in one frame compile
    return (y.cos() + 1).sum()


def _texts(records, kind: str | None = None) -> list[Any]:
    found = [
        r.log_record
        for r in records.get_finished_logs()
        if r.log_record.event_name == names.LOG_GRAPH_TEXT
    ]
    if kind is None:
        return found
    return [r for r in found if r.attributes[names.ATTR_GRAPH_TEXT_KIND] == kind]


def _traced(backend: Any, provider, logger_provider, **options: Any) -> Any:
    return otel_dynamo.traced(
        backend, tracer_provider=provider, logger_provider=logger_provider, **options
    )


def test_dynamo_graph_text_equals_the_graph_the_backend_received(
    provider, exporter, logger_provider, records
):
    """Each Dynamo graph text is exactly the graph's print_readable() the backend got, in
    the frame span, with the graph's index."""
    recording = RecordingBackend()
    backend = _traced(recording, provider, logger_provider, capture=FULL)
    torch.compile(_step, backend=backend)(torch.randn(4, 4, requires_grad=True)).backward()
    texts = _texts(records, names.GRAPH_TEXT_DYNAMO)
    assert [t.attributes[names.ATTR_GRAPH_TEXT] for t in texts] == recording.texts
    assert len(recording.texts) == 2
    frames = {s.context.span_id: s for s in named(exporter.get_finished_spans(), names.SPAN_FRAME)}
    for text in texts:
        frame = frames[text.span_id]
        assert text.attributes[names.ATTR_COMPILE_ID] == frame.attributes[names.ATTR_COMPILE_ID]
        assert text.attributes[names.ATTR_GRAPH_INDEX] == 0
        assert text.attributes[names.ATTR_GRAPH_TEXT_TRUNCATED] is False
        assert text.attributes[names.ATTR_GRAPH_TEXT_LENGTH] == len(
            text.attributes[names.ATTR_GRAPH_TEXT]
        )


def test_aot_graphs_and_guards_come_in_the_graph_and_frame_spans(
    provider, exporter, logger_provider, records
):
    """aot_eager with a backward: joint, forward and backward graphs in the graph span,
    in the order AOT Autograd makes them; the guard tree in the frame span, no index."""
    backend = _traced("aot_eager", provider, logger_provider, capture=FULL)
    compiled = torch.compile(lambda x: (x.sin() * 2).sum(), backend=backend)
    compiled(torch.randn(5, requires_grad=True)).backward()
    spans = exporter.get_finished_spans()
    graph = one(spans, names.SPAN_GRAPH)
    frame = one(spans, names.SPAN_FRAME)
    kinds = [t.attributes[names.ATTR_GRAPH_TEXT_KIND] for t in _texts(records)]
    assert kinds == [
        names.GRAPH_TEXT_DYNAMO,
        names.GRAPH_TEXT_AOT_JOINT,
        names.GRAPH_TEXT_AOT_FORWARD,
        names.GRAPH_TEXT_AOT_BACKWARD,
        names.GRAPH_TEXT_GUARDS,
    ]
    for kind in (names.GRAPH_TEXT_AOT_JOINT, names.GRAPH_TEXT_AOT_FORWARD):
        (text,) = _texts(records, kind)
        assert text.span_id == graph.context.span_id
        assert "torch.ops.aten.sin.default" in text.attributes[names.ATTR_GRAPH_TEXT]
    (guards,) = _texts(records, names.GRAPH_TEXT_GUARDS)
    assert guards.span_id == frame.context.span_id
    assert "TENSOR_MATCH" in guards.attributes[names.ATTR_GRAPH_TEXT]
    assert names.ATTR_GRAPH_INDEX not in guards.attributes


@pytest.mark.slow
def test_inductor_output_code_equals_the_file_inductor_wrote(
    provider, exporter, logger_provider, records
):
    """Under inductor each output code text is the module inductor wrote (its path on the
    record), in the span of the AOT compile that made it (caches off: a cache hit has no
    AOT compile, its code comes in the graph span)."""
    import torch._inductor.config

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    backend = _traced("inductor", provider, logger_provider, capture=FULL)
    with torch._inductor.config.patch(force_disable_caches=True):
        torch.compile(model, backend=backend)(torch.randn(2, 8)).sum().backward()
    codes = _texts(records, names.GRAPH_TEXT_OUTPUT_CODE)
    assert len(codes) == 2  # forward, and the backward compiled at its first run
    spans = {s.context.span_id: s.name for s in exporter.get_finished_spans()}
    assert sorted(spans[c.span_id] for c in codes) == [
        names.SPAN_AOT_BACKWARD,
        names.SPAN_AOT_FORWARD,
    ]
    for code in codes:
        path = Path(code.attributes[names.ATTR_GRAPH_TEXT_PATH])
        assert code.attributes[names.ATTR_GRAPH_TEXT] == path.read_text(encoding="utf-8")


def test_nothing_is_captured_by_default(provider, logger_provider, records):
    """Without graphs in the capture list no graph text is recorded."""
    backend = _traced("aot_eager", provider, logger_provider)
    torch.compile(_step, backend=backend)(torch.randn(4, 4, requires_grad=True)).backward()
    assert _texts(records) == []
    assert any(r.log_record.event_name for r in records.get_finished_logs())


def test_without_stacks_the_source_lines_are_left_out(provider, logger_provider, records):
    """values,graphs: the graph text loses exactly its "# File: ..." source lines."""
    recording = RecordingBackend()
    backend = _traced(recording, provider, logger_provider, capture="values,graphs")
    torch.compile(_step, backend=backend)(torch.randn(4, 4))
    texts = [t.attributes[names.ATTR_GRAPH_TEXT] for t in _texts(records, names.GRAPH_TEXT_DYNAMO)]
    expected = [
        "".join(line for line in text.splitlines(True) if not line.lstrip().startswith("# File: "))
        for text in recording.texts
    ]
    assert "# File: " in recording.texts[0]
    assert texts == expected


def test_a_long_text_is_capped_with_its_full_length(provider, logger_provider, records):
    """max_graph_text_length=100: 100 characters ending in "…", the full length and the
    cap recorded."""
    recording = RecordingBackend()
    backend = _traced(recording, provider, logger_provider, capture=FULL, max_graph_text_length=100)
    torch.compile(_step, backend=backend)(torch.randn(4, 4))
    attributes = _texts(records, names.GRAPH_TEXT_DYNAMO)[0].attributes
    assert len(attributes[names.ATTR_GRAPH_TEXT]) == 100
    assert attributes[names.ATTR_GRAPH_TEXT].endswith("…")
    assert attributes[names.ATTR_GRAPH_TEXT_LENGTH] == len(recording.texts[0])
    assert attributes[names.ATTR_GRAPH_TEXT_TRUNCATED] is True
    assert attributes[names.ATTR_GRAPH_TEXT_MAX_LENGTH] == 100


def test_graphs_without_values_is_refused():
    """capture=graphs alone raises ConfigError naming why: graph text carries values."""
    with pytest.raises(otel_dynamo.ConfigError, match="graphs needs values"):
        otel_dynamo.traced("eager", capture=("stacks", "graphs"))
