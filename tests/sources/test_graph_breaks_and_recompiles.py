"""Every graph break Dynamo reports, and every recompile with its reason, is recorded."""

from __future__ import annotations

import re

import pytest
import torch
from _spans import named

import otel_dynamo
from otel_dynamo import names


def print_in_middle(x):
    x = x * 2
    print("middle")
    return x.relu()


def print_first(x):
    print("first")
    return x.sin()


def print_after_reading_a_shape(x):
    n = x.shape[0]  # the input becomes a placeholder: a graph of no op
    print("first", n)
    return x * n


def data_dependent_branch(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def item_call(x):
    scale = x.sum().item()
    return x * scale


def loop_with_break(x):
    for _ in range(3):
        x = x + 1
        print("loop")
    return x


def _frames(provider, exporter, fn, *args):
    compiled = torch.compile(fn, backend=otel_dynamo.traced("eager", tracer_provider=provider))
    compiled(*args)
    return named(exporter.get_finished_spans(), names.SPAN_FRAME)


def _break_events(frames):
    return [
        event for frame in frames for event in frame.events if event.name == names.EVENT_GRAPH_BREAK
    ]


@pytest.mark.parametrize(
    ("fn", "kind_part"),
    [
        (print_in_middle, "builtin operator"),
        (print_first, "builtin operator"),
        (data_dependent_branch, "Data-dependent branching"),
        (item_call, "item()"),
    ],
)
def test_graph_break_appears_on_its_frame(provider, exporter, capsys, fn, kind_part):
    """Each break kind yields count 1, its reason, and an event with kind and user stack."""
    frames = _frames(provider, exporter, fn, torch.ones(4))
    broken = [f for f in frames if f.attributes[names.ATTR_GRAPH_BREAK_COUNT] == 1]
    assert len(broken) == 1
    reasons = broken[0].attributes[names.ATTR_GRAPH_BREAK_REASONS]
    assert len(reasons) == 1 and kind_part in reasons[0]
    (event,) = _break_events(frames)
    assert kind_part in event.attributes[names.ATTR_GRAPH_BREAK_KIND]
    stack = event.attributes[names.ATTR_GRAPH_BREAK_USER_STACK]
    assert any(f" in {fn.__name__}" in entry and __file__ in entry for entry in stack)


def _stated_by_torch(fn, *args):
    """The ``Hint:`` lines and the page of the message torch raises for ``fn`` under
    fullgraph=True (each hint on one line there, as this one's are)."""
    with pytest.raises(torch._dynamo.exc.Unsupported) as raised:
        torch.compile(fn, backend="eager", fullgraph=True)(*args)
    torch._dynamo.reset()
    lines = [line.strip() for line in str(raised.value).splitlines()]
    hints = tuple(line.removeprefix("Hint: ") for line in lines if line.startswith("Hint: "))
    page = re.search(r"please visit: (https?://\S+)", str(raised.value))
    return hints, page[1] if page else None


def test_torchs_hints_and_page_ride_on_the_break_event(provider, exporter, capsys):
    """A data-dependent branch's break event carries the hints and the page torch states
    for the same code when it refuses it under fullgraph=True (on a torch that states
    none, the event carries none: 2.8 gives hints and links no page)."""
    hints, page = _stated_by_torch(data_dependent_branch, torch.ones(4))
    (event,) = _break_events(_frames(provider, exporter, data_dependent_branch, torch.ones(4)))
    assert tuple(event.attributes.get(names.ATTR_GRAPH_BREAK_HINTS, ())) == hints
    assert event.attributes.get(names.ATTR_GRAPH_BREAK_URL) == page
    if hasattr(torch._dynamo.exc, "format_graph_break_message"):
        assert any("torch.cond" in hint for hint in hints)


def test_break_with_no_graph_before_it_is_recorded(provider, exporter, capsys):
    """A print as the first statement: a frame with no graph, outcome no_graph, one break."""
    frames = _frames(provider, exporter, print_first, torch.ones(4))
    first = next(f for f in frames if f.attributes[names.ATTR_CODE_FUNCTION] == "print_first")
    assert first.attributes[names.ATTR_OUTCOME] == names.OUTCOME_NO_GRAPH
    assert first.attributes[names.ATTR_GRAPH_BREAK_COUNT] == 1
    assert first.attributes[names.ATTR_FRAME_GRAPH_COUNT] == 0


def test_a_break_before_any_op_is_no_graph_even_with_placeholders(provider, exporter, capsys):
    """A print after reading an input's shape: Dynamo's graph holds the input's placeholder
    and no op, nothing reaches the backend, and the frame's outcome is no_graph."""
    frames = _frames(provider, exporter, print_after_reading_a_shape, torch.ones(4))
    first = next(
        f for f in frames if f.attributes[names.ATTR_CODE_FUNCTION] == "print_after_reading_a_shape"
    )
    assert (
        first.attributes[names.ATTR_OUTCOME],
        first.attributes[names.ATTR_FRAME_GRAPH_COUNT],
        first.attributes[names.ATTR_GRAPH_BREAK_COUNT],
    ) == (names.OUTCOME_NO_GRAPH, 0, 1)


def test_loop_break_that_skips_the_frame_is_recorded(provider, exporter, capsys):
    """A break inside a loop makes Dynamo skip the frame: outcome skipped, kind skip."""
    frames = _frames(provider, exporter, loop_with_break, torch.ones(4))
    skipped = [f for f in frames if f.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SKIPPED]
    assert skipped, [f.attributes for f in frames]
    kinds = [e.attributes[names.ATTR_GRAPH_BREAK_KIND] for e in _break_events(skipped)]
    assert "skip" in kinds
    assert any(
        "frame skipped" in r for f in skipped for r in f.attributes[names.ATTR_GRAPH_BREAK_REASONS]
    )


def test_graph_that_ended_in_a_break_carries_reason_and_user_stack(provider, exporter, capsys):
    """The graph before a data-dependent branch records why it ended and where."""
    _frames(provider, exporter, data_dependent_branch, torch.ones(4))
    graphs = named(exporter.get_finished_spans(), names.SPAN_GRAPH)
    ended = [g for g in graphs if names.ATTR_GRAPH_BREAK_REASON in g.attributes]
    assert len(ended) == 1
    assert ended[0].attributes[names.ATTR_GRAPH_BREAK_REASON].startswith("generic_jump")
    assert any(
        "data_dependent_branch" in e for e in ended[0].attributes[names.ATTR_GRAPH_BREAK_USER_STACK]
    )


def _recompile_frames(provider, exporter, *inputs):
    compiled = torch.compile(
        lambda x: (x * 2).relu(), backend=otel_dynamo.traced("eager", tracer_provider=provider)
    )
    for value in inputs:
        compiled(value)
    return named(exporter.get_finished_spans(), names.SPAN_FRAME)


def test_dtype_recompile_carries_failed_guard(provider, exporter):
    """A float64 call after float32 recompiles; the reason names the dtype guard."""
    frames = _recompile_frames(
        provider, exporter, torch.ones(4), torch.ones(4, dtype=torch.float64)
    )
    assert [f.attributes[names.ATTR_COMPILE_ID] for f in frames] == ["0/0", "0/1"]
    reason = frames[1].attributes[names.ATTR_RECOMPILE_REASON]
    assert reason == "tensor 'x' dtype mismatch. expected Float, actual Double"
    assert frames[1].attributes[names.ATTR_FRAME_CACHE_SIZE] == 1
    assert names.ATTR_RECOMPILE_REASON not in frames[0].attributes


def test_shape_recompile_carries_size_guard(provider, exporter):
    """A new shape recompiles (to dynamic shapes); the reason names the size guard."""
    frames = _recompile_frames(provider, exporter, torch.ones(4), torch.ones(7))
    assert len(frames) == 2
    reason = frames[1].attributes[names.ATTR_RECOMPILE_REASON]
    assert "size mismatch" in reason and "tensor 'x'" in reason


def test_a_graphs_own_break_reason_is_capped_like_every_break(provider, exporter):
    """max_attribute_length caps the break reason on the graph span as on the frame's
    break events: one capping rule for every break."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider, max_attribute_length=12)
    torch.compile(print_in_middle, backend=backend)(torch.ones(4))
    spans = exporter.get_finished_spans()
    (broken,) = [
        g for g in named(spans, names.SPAN_GRAPH) if names.ATTR_GRAPH_BREAK_REASON in g.attributes
    ]
    reasons = [broken.attributes[names.ATTR_GRAPH_BREAK_REASON]]
    reasons += [
        e.attributes[names.ATTR_GRAPH_BREAK_REASON]
        for e in _break_events(named(spans, names.SPAN_FRAME))
    ]
    assert all(len(reason) == 12 and reason.endswith("…") for reason in reasons), reasons
    assert names.ATTR_GRAPH_BREAK_KIND not in broken.attributes


def doubled_sine(x):
    return (x * 2).sin()


def test_the_compile_that_hits_the_recompile_limit_names_its_function(provider, exporter):
    """recompile_limit 2 and a third shape: the compile that fails at the limit carries
    its function, file and line (torch's metrics give none: an earlier compile of the
    same code did) and no cache size (torch states none)."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    compiled = torch.compile(doubled_sine, backend=backend)
    with torch._dynamo.config.patch(recompile_limit=2, automatic_dynamic_shapes=False):
        for size in (3, 4, 5):
            compiled(torch.ones(size))
    frames = named(exporter.get_finished_spans(), names.SPAN_FRAME)
    (limited,) = [f for f in frames if f.attributes[names.ATTR_OUTCOME] == names.OUTCOME_FAILURE]
    assert limited.attributes[names.ATTR_CODE_FUNCTION] == "doubled_sine"
    assert limited.attributes[names.ATTR_CODE_FILE] == __file__
    assert limited.attributes[names.ATTR_CODE_LINE] == doubled_sine.__code__.co_firstlineno
    assert names.ATTR_FRAME_CACHE_SIZE not in limited.attributes
