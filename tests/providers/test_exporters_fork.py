"""Fork safety with a real os.fork: no duplicated telemetry, no deadlock (child processes).

tests/programs/fork_job.py buffers the parent's spans (long schedule delay), forks, and
each child emits its own span and event. The embedded files are then read back: one
set per process, told apart by the pid in their names.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _export_support import (
    PROGRAMS,
    child_environ,
    json_log_records,
    json_spans,
    run_program,
)

FORK_JOB = PROGRAMS / "fork_job.py"
REGISTERED = Path(__file__).parents[1] / "data" / "registered_exporter"
BUFFERED = {"OTEL_BSP_SCHEDULE_DELAY": "60000", "OTEL_BLRP_SCHEDULE_DELAY": "60000"}


def _files(directory: Path, signal: str, pid: int) -> list[Path]:
    return sorted(directory.glob(f"{signal}-*-{pid}-*.jsonl"))


def _run(tmp_path: Path, *args: str, **env: str):
    environ = child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path), **BUFFERED, **env)
    result = run_program(FORK_JOB, *args, env=environ, timeout=120)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return result.summary()


@pytest.mark.parametrize("how", ["_exit", "sys.exit"])
def test_parent_spans_are_exported_once_by_the_parent(tmp_path, how):
    """The 50 buffered parent spans appear once, in the parent's file only."""
    summary = _run(tmp_path, "--exit", how)
    parent_spans = [s for s in json_spans(*_files(tmp_path, "traces", summary["parent"]))]
    assert [s["name"] for s in parent_spans] == ["parent-op"] * 50
    assert len({s["spanId"] for s in parent_spans}) == 50


@pytest.mark.parametrize("how", ["_exit", "sys.exit"])
def test_child_writes_only_its_own_spans_to_its_own_file(tmp_path, how):
    """The child's file (its pid in the name) holds its span and nothing of the parent's."""
    summary = _run(tmp_path, "--exit", how)
    (child,) = summary["children"]
    (child_file,) = _files(tmp_path, "traces", child["pid"])
    spans = json_spans(child_file)
    assert [s["name"] for s in spans] == ["child-op-0"]
    assert spans[0]["resource"]["process.pid"] == child["pid"]


def test_child_log_event_goes_to_its_own_file(tmp_path):
    """The child's event is in the child's logs file; the parent's only in the parent's."""
    summary = _run(tmp_path)
    (child,) = summary["children"]
    parent_events = json_log_records(*_files(tmp_path, "logs", summary["parent"]))
    child_events = json_log_records(*_files(tmp_path, "logs", child["pid"]))
    assert ([r["eventName"] for r in parent_events], [r["eventName"] for r in child_events]) == (
        ["parent.event"],
        ["child.event"],
    )


def test_forked_child_exports_no_metrics(tmp_path):
    """A forked child's meter state copies the parent's counts: it exports none of it."""
    summary = _run(tmp_path)
    (child,) = summary["children"]
    assert _files(tmp_path, "metrics", child["pid"]) == []
    assert len(_files(tmp_path, "metrics", summary["parent"])) == 1


@pytest.mark.slow
def test_children_forked_while_exporting_never_deadlock(tmp_path):
    """Ten children forked while a thread exports continuously all end promptly, their exit
    flush within its bound (no warning).

    Once flaky: a fork while the parent's thread exported metrics left the SDK periodic
    reader's export lock (and, during a collection, the measurement locks) locked in the
    child, whose exit flush then waited out all of OTEL_DYNAMO_SHUTDOWN_TIMEOUT and warned;
    and the parent exited with that thread still exporting. The child now renews those
    locks (``_providers/setup.py``) and the parent joins the thread before it exits."""
    summary = _run(tmp_path, "--children", "10", "--busy", "--exit", "sys.exit")
    assert [(c["ended"], c["status"]) for c in summary["children"]] == [(True, 0)] * 10
    assert max(c["seconds"] for c in summary["children"]) < 5.0


@pytest.mark.slow
def test_a_child_forked_while_the_parent_imports_for_an_exporter_ends(tmp_path):
    """A child forked while the parent's export thread was importing what an exporter needs
    ends promptly and exports its span; the parent built its exporters before any thread.

    Once flaky in CI: the first export built the exporter on the export thread, and a fork
    during the import it made (the OTLP log encoder) left that module's import lock held
    in the child, whose own exporter then never built: the child hung at its exit."""
    lines, started = tmp_path / "lines.txt", tmp_path / "import-started"
    summary = _run(
        tmp_path,
        "--busy",
        "--fork-after",
        str(started),
        "--exit",
        "sys.exit",
        OTEL_TRACES_EXPORTER="slow_import_lines",
        FAKE_EXPORTER_OUT=str(lines),
        FAKE_IMPORT_STARTED=str(started),
        FAKE_IMPORT_SECONDS="2",
        PYTHONPATH=os.pathsep.join([str(REGISTERED), child_environ()["PYTHONPATH"]]),
    )
    (child,) = summary["children"]
    assert (child["ended"], child["status"]) == (True, 0)
    assert child["seconds"] < 5.0
    assert "child-op-0" in lines.read_text().splitlines()


def test_inherited_unflushed_file_data_is_not_written_by_the_child(tmp_path):
    """Bytes the parent had buffered at the fork in a buffering file exporter (OpenTelemetry's
    JSON-file exporter, which a job may name by entry point) are not flushed into the file
    by the child."""
    FileSpanExporter = pytest.importorskip("opentelemetry.exporter.otlp.json.file").FileSpanExporter

    from otel_dynamo._providers.export_health import ExportHealth
    from otel_dynamo._providers.safe_exporters import SafeExport

    path = tmp_path / "traces.jsonl"
    safe_export = SafeExport(
        lambda: FileSpanExporter(path), signal="traces", target="t", health=ExportHealth()
    )
    stream = safe_export.inner()._exporter._stream
    stream.write("half-written line")  # buffered, not flushed, when the fork happens
    pid = os.fork()
    if pid == 0:
        stream.close()  # flushes the child's copy of the buffer
        os._exit(0)
    os.waitpid(pid, 0)
    child_wrote = path.read_text()
    stream.truncate(0)  # drop the parent's own buffer too: nothing real was ever written
    assert child_wrote == ""
