"""A frame Dynamo skips for a graph break, as each torch version says it (no compile).

torch 2.12 on puts the skip in the graph-break artifact; before 2.12 only the frame's
compilation metrics show it (no failure, no graph counts). Both must give one frame span
with outcome ``skipped`` and one break of kind ``skip``.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._recording.recorder import Recorder
from otel_dynamo._recording.stream_events import FrameStarted, GraphBreakReported
from otel_dynamo._sources import dynamo_stream

LOOP_BREAK = GraphBreakReported(
    "0/0",
    "Data-dependent branching: Detected data-dependent branching",
    "Data-dependent branching",
    ("/src/train.py:12 in step",),
    skipped_frame=False,
)
METRICS_BEFORE_2_12 = {"compile_id": "0/0", "guard_count": None, "fail_type": None}
METRICS_FROM_2_12 = {"compile_id": "0/0", "guard_count": 3, "fail_type": None}


def _record(metrics, *breaks):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = Recorder(tracer=provider.get_tracer("test"), settings=Settings(enabled=True))
    recorder.frame_started(FrameStarted("0/0", 1_000))
    for brk in breaks:
        recorder.graph_break(brk)
    recorder.frame_ended(dynamo_stream.frame_ended("0/0", 2_000, metrics))
    (span,) = exporter.get_finished_spans()
    return span


def test_metrics_without_output_or_failure_are_a_silent_give_up():
    """guard_count None and no fail_type (a SkipFrame before 2.12) is gave_up; others not."""
    assert dynamo_stream.gave_up_silently(METRICS_BEFORE_2_12) is True
    assert dynamo_stream.gave_up_silently(METRICS_FROM_2_12) is False
    failed = {**METRICS_BEFORE_2_12, "fail_type": "Unsupported"}
    assert dynamo_stream.gave_up_silently(failed) is False
    assert dynamo_stream.frame_ended("0/0", 1, METRICS_BEFORE_2_12).gave_up is True


def test_break_then_silent_give_up_is_a_skipped_frame_before_2_12():
    """The frame's break becomes kind 'skip', reason 'frame skipped: ...', outcome skipped."""
    span = _record(METRICS_BEFORE_2_12, LOOP_BREAK)
    assert span.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SKIPPED
    (event,) = [e for e in span.events if e.name == names.EVENT_GRAPH_BREAK]
    assert event.attributes[names.ATTR_GRAPH_BREAK_KIND] == "skip"
    assert event.attributes[names.ATTR_GRAPH_BREAK_REASON] == (
        "frame skipped: Data-dependent branching: Detected data-dependent branching"
    )
    assert span.attributes[names.ATTR_GRAPH_BREAK_COUNT] == 1


def test_skip_stated_by_the_artifact_is_a_skipped_frame_from_2_12():
    """The 2.12+ artifact already says skip: the same span, the reason not prefixed twice."""
    stated = dynamo_stream.parse_graph_break(
        "0/0",
        "Graph break: torch.compile cannot properly resume from this graph break, which "
        "results in a skip.\nGraph Break Reason: Data-dependent branching\n"
        "  Explanation: Detected data-dependent branching\n",
    )
    span = _record(METRICS_FROM_2_12, stated)
    assert span.attributes[names.ATTR_OUTCOME] == names.OUTCOME_SKIPPED
    (reason,) = span.attributes[names.ATTR_GRAPH_BREAK_REASONS]
    assert reason == "frame skipped: Data-dependent branching: Detected data-dependent branching"


def test_silent_give_up_without_a_break_is_no_graph():
    """ "No content in function call" (no break): outcome no_graph on every version."""
    span = _record(METRICS_BEFORE_2_12)
    assert span.attributes[names.ATTR_OUTCOME] == names.OUTCOME_NO_GRAPH


def test_break_with_output_is_not_a_skip():
    """A break after which Dynamo compiled a partial graph keeps its kind and outcome."""
    span = _record(METRICS_FROM_2_12, LOOP_BREAK)
    assert span.attributes[names.ATTR_OUTCOME] != names.OUTCOME_SKIPPED
    (event,) = [e for e in span.events if e.name == names.EVENT_GRAPH_BREAK]
    assert event.attributes[names.ATTR_GRAPH_BREAK_KIND] == "Data-dependent branching"
