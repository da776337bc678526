"""`otel-dynamo demo`: a real training run in a real subprocess, its report, page and files.

The demo runs once for the module (a few seconds); each test checks one thing it did.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from otel_dynamo import names, report
from otel_dynamo.cli import demo_training as demo_command
from otel_dynamo.cli import main

pytestmark = pytest.mark.torch_facing  # the README's first command, on every torch

ROOT = Path(__file__).resolve().parents[2]
DEMO_HANG_SECONDS = 300
"""Only a hang guard: the demo takes seconds (it prints how many; README, Quick start)."""


@dataclasses.dataclass(frozen=True)
class DemoResult:
    returncode: int
    stdout: str
    stderr: str
    out: Path


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    out = tmp_path_factory.mktemp("demo") / "telemetry"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # An endpoint nobody serves: the demo must still write files, not export there.
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
    result = subprocess.run(
        [sys.executable, "-m", "otel_dynamo.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=DEMO_HANG_SECONDS,
        env=env,
        cwd=str(out.parent),
        check=False,
    )
    return DemoResult(result.returncode, result.stdout, result.stderr, out)


@pytest.fixture(scope="module")
def spans(demo: DemoResult) -> list[report.Span]:
    telemetry = report.load_telemetry([demo.out])
    assert telemetry.problems == []
    return telemetry.spans


def _named(spans: list[report.Span], name: str) -> list[report.Span]:
    return [span for span in spans if span.name == name]


def test_demo_exits_0_and_says_how_long_it_took(demo: DemoResult) -> None:
    """Exit 0, and the last line gives the demo's own wall time (benches: docs/performance.md)."""
    assert demo.returncode == 0, demo.stderr
    assert re.search(r"^demo took \d+\.\d s;", demo.stdout, re.MULTILINE), demo.stdout


def test_the_demos_own_lines_fit_60_columns(demo: DemoResult) -> None:
    """What the demo says around its report (what it runs, then how long it took and how
    to report again) is on lines of at most 60 characters where its output folder is the
    default's, so a narrow terminal breaks none of them."""
    default_out = str(demo_command.default_output_dir({}))
    said = [*demo.stderr.splitlines()[:2], *demo.stdout.splitlines()[-2:]]
    assert said[0] == "otel-dynamo demo: training a small model under torch.compile"
    assert said[2].startswith("demo took ")
    assert [len(line.replace(str(demo.out), default_out)) <= 60 for line in said] == [True] * 4


def test_printed_report_shows_the_graph_break_and_the_recompiles(demo: DemoResult) -> None:
    """The terminal report names the print break and the shape, grad-mode and dtype
    recompiles (long reasons wrap: read as words)."""
    words = " ".join(demo.stdout.split())
    assert "Graph breaks (" in words
    assert "Failed to trace builtin operator" in words
    assert "Recompiles (6)" in words
    assert "size mismatch" in words
    assert "grad_mode" in words
    assert "dtype mismatch" in words


def test_html_page_is_written_and_its_path_printed(demo: DemoResult) -> None:
    """The printed path is the HTML page in the output directory."""
    html = demo.out / demo_command.HTML_NAME
    assert f"HTML report: {html}\n" in demo.stdout
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "torch_dynamo_resume_in_forward" in page
    assert "Failed to trace builtin operator" in page


def test_demo_telemetry_is_named_after_the_demo_when_no_service_is_configured(
    spans: list[report.Span],
) -> None:
    """With OTEL_SERVICE_NAME unset, the demo's spans carry service.name "otel-dynamo-demo"."""
    assert "OTEL_SERVICE_NAME" not in os.environ
    assert {span.process.service for span in spans} == {"otel-dynamo-demo"}


def test_frame_spans_carry_outcome_and_compile_id(spans: list[report.Span]) -> None:
    """Two code objects (forward, its resume) compiled four times each, all successful."""
    frames = _named(spans, names.SPAN_FRAME)
    ids = sorted(str(frame.attributes[names.ATTR_COMPILE_ID]) for frame in frames)
    assert ids == ["0/0", "0/1", "0/2", "0/3", "1/0", "1/1", "1/2", "1/3"]
    outcomes = {frame.attributes[names.ATTR_OUTCOME] for frame in frames}
    assert outcomes == {names.OUTCOME_SUCCESS}
    assert all(type(frame.attributes[names.ATTR_GUARD_COUNT]) is int for frame in frames)


def test_graph_break_events_name_print_with_a_user_stack(spans: list[report.Span]) -> None:
    """Each compile of forward records the print break as an event with the demo's line."""
    events = [
        event
        for frame in _named(spans, names.SPAN_FRAME)
        for event in frame.events
        if event.name == names.EVENT_GRAPH_BREAK
    ]
    assert len(events) == 4
    for event in events:
        assert "print" in str(event.attributes[names.ATTR_GRAPH_BREAK_REASON])
        stack = event.attributes[names.ATTR_GRAPH_BREAK_USER_STACK]
        assert isinstance(stack, list) and stack[-1].endswith(" in forward")
        assert demo_command.__file__ in stack[-1]


def test_recompile_reasons_name_shape_grad_mode_and_dtype(spans: list[report.Span]) -> None:
    """forward's recompiles carry the failed guards: size, then grad mode, then dtype."""
    frames = sorted(
        (
            frame
            for frame in _named(spans, names.SPAN_FRAME)
            if str(frame.attributes[names.ATTR_COMPILE_ID]).startswith("0/")
        ),
        key=lambda frame: frame.start_ns,
    )
    reasons = [frame.attributes.get(names.ATTR_RECOMPILE_REASON) for frame in frames]
    assert reasons[0] is None
    assert "tensor 'x' size mismatch" in str(reasons[1])
    assert str(reasons[2]) == "GLOBAL_STATE changed: grad_mode"
    assert str(reasons[3]).startswith("tensor 'x' dtype mismatch. expected Float, actual Double")


def test_run_spans_cover_forward_backward_and_inference(spans: list[report.Span]) -> None:
    """Training steps record forward and backward runs; the eval pass inference runs."""
    for name, kind in (
        (names.SPAN_RUN_FORWARD, names.RUN_KIND_FORWARD),
        (names.SPAN_RUN_BACKWARD, names.RUN_KIND_BACKWARD),
        (names.SPAN_RUN_INFERENCE, names.RUN_KIND_INFERENCE),
    ):
        runs = _named(spans, name)
        assert runs, name
        assert {run.attributes[names.ATTR_RUN_KIND] for run in runs} == {kind}
        assert all(type(run.attributes[names.ATTR_RUN_INDEX]) is int for run in runs)


def test_demo_environment_drops_exporter_settings_and_keeps_ours() -> None:
    """OTEL_* exporter variables go (files are written); OTEL_DYNAMO_* and resource ones stay."""
    env = demo_command.demo_environment(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317",
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_SDK_DISABLED": "true",
            "OTEL_DYNAMO_RUN_SPANS": "all",
            "OTEL_RESOURCE_ATTRIBUTES": "team=ml",
            "HOME": "/root",
        }
    )
    assert env == {
        "OTEL_DYNAMO_RUN_SPANS": "all",
        "OTEL_RESOURCE_ATTRIBUTES": "team=ml",
        "HOME": "/root",
    }


def test_unwritable_output_dir_fails_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out naming a file: exit 1 at once with a message naming the path; nothing trains."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["demo", "--out", str(blocker)]) == 1
    err = capsys.readouterr().err
    assert f"otel-dynamo: {blocker}: cannot write telemetry there" in err
    assert "training" not in err


def test_steps_below_two_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--steps 1 cannot show the shape recompile: argparse rejects it with exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--steps", "1"])
    assert exited.value.code == 2
    assert "expected 2 or more, got 1" in capsys.readouterr().err


def test_unknown_backend_fails_with_torchs_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--backend naming no backend: exit 1, one line naming the option, value and torch's hint."""
    assert main(["demo", "--out", str(tmp_path), "--backend", "no_such_backend"]) == 1
    err = capsys.readouterr().err
    assert "otel-dynamo: --backend 'no_such_backend': Invalid backend: 'no_such_backend'" in err
    assert "list_backends" in err and "Traceback" not in err
