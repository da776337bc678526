"""The fix's summary rides on the telemetry a team reads in Jaeger or its log store: on a
recompile's frame span and log event, on each graph-break event; each frame span names
the compiled function's parameters. Real jobs, read back from their files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from otel_dynamo import names
from otel_dynamo.report import Telemetry, load_telemetry

JOB = Path(__file__).resolve().parents[1] / "programs" / "one_cause_job.py"
MARK = "mark dimension 0 of x dynamic before each call of dimension (one_cause_job.py:"


def _traced(tmp_path: Path, scenario: str) -> Telemetry:
    out = tmp_path / scenario
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "OTEL_DYNAMO_OUTPUT_DIR": str(out)}
    done = subprocess.run(
        [sys.executable, str(JOB), scenario],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return load_telemetry([out])


def test_a_recompile_carries_its_fix_on_its_span_and_log_event(tmp_path: Path) -> None:
    """The recompile's frame span and its torch.compile.recompile log event say what to do;
    the first compile, no recompile, says nothing."""
    telemetry = _traced(tmp_path, "dimension")
    frames = sorted(
        (span for span in telemetry.spans if span.name == names.SPAN_FRAME),
        key=lambda span: span.start_ns,
    )
    summaries = [span.attributes.get(names.ATTR_FIX_SUMMARY) for span in frames]
    assert summaries[0] is None and str(summaries[1]).startswith(MARK)
    (event,) = [log for log in telemetry.logs if log.event_name == names.LOG_RECOMPILE]
    assert str(event.attributes[names.ATTR_FIX_SUMMARY]).startswith(MARK)
    assert frames[0].attributes[names.ATTR_CODE_ARGUMENTS] == ["x", "w"]


def test_a_graph_break_carries_its_fix_on_its_span_and_log_events(tmp_path: Path) -> None:
    """The print break's span event and log event both say to add print to torch's
    reorderable logging functions."""
    telemetry = _traced(tmp_path, "prints")
    span_events = [
        event
        for span in telemetry.spans
        for event in span.events
        if event.name == names.EVENT_GRAPH_BREAK
        and "print" in str(event.attributes.get(names.ATTR_GRAPH_BREAK_REASON))
    ]
    logs = [
        log
        for log in telemetry.logs
        if log.event_name == names.LOG_GRAPH_BREAK
        and "print" in str(log.attributes.get(names.ATTR_GRAPH_BREAK_REASON))
    ]
    assert span_events and logs
    for attributes in [event.attributes for event in span_events] + [
        log.attributes for log in logs
    ]:
        assert "reorderable_logging_functions" in str(attributes[names.ATTR_FIX_SUMMARY])
