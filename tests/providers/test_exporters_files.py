"""The embedded default: OTLP/JSON Lines files, one per process and signal, parsed back."""

from __future__ import annotations

import errno
import logging
import os
import re
import resource
import socket

import pytest
from _export_support import (
    TELEMETRY_JOB,
    child_environ,
    clear_otel_environ,
    json_attributes,
    json_log_records,
    json_metric_names,
    json_spans,
    one_file,
    read_jsonl,
    run_program,
)

from otel_dynamo._config.settings import ConfigError, Settings
from otel_dynamo._providers.files import safe_host_name
from otel_dynamo._providers.setup import setup_providers

FILE_NAME = re.compile(r"^(traces|logs|metrics)-(.+)-(\d+)-(\d{8}T\d{6}Z)-([0-9a-f]{8})\.jsonl$")


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


@pytest.fixture
def telemetries():
    made = []
    yield made
    for telemetry in made:
        telemetry.shutdown(2.0)


def _emit_all(telemetry):
    tracer = telemetry.tracer_provider.get_tracer("test")
    with (
        tracer.start_as_current_span("parent") as parent,
        tracer.start_as_current_span("child", attributes={"torch.compile.id": "0/0"}),
    ):
        pass
    telemetry.logger_provider.get_logger("test").emit(body="hello", event_name="test.event")
    telemetry.meter_provider.get_meter("test").create_counter("test.count").add(2)
    return parent


def test_files_are_written_per_signal_with_unique_names(tmp_path, telemetries):
    """Three files, <signal>-<host>-<pid>-<UTC start>-<token>.jsonl, in a created directory."""
    out = tmp_path / "new" / "dir"
    telemetry = setup_providers(Settings(output_dir=str(out)), environ={})
    telemetries.append(telemetry)
    _emit_all(telemetry)
    assert telemetry.shutdown(2.0) is True
    matches = [FILE_NAME.match(path.name) for path in sorted(out.iterdir())]
    assert [(m[1], m[2], int(m[3])) for m in matches] == [
        ("logs", safe_host_name(), os.getpid()),
        ("metrics", safe_host_name(), os.getpid()),
        ("traces", safe_host_name(), os.getpid()),
    ]


def test_span_file_has_parent_child_structure_and_attributes(tmp_path, telemetries):
    """Spans parse back with hex ids, parent links and typed attributes."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    parent = _emit_all(telemetry)
    telemetry.shutdown(2.0)
    spans = {span["name"]: span for span in json_spans(one_file(tmp_path, "traces"))}
    trace_id = format(parent.get_span_context().trace_id, "032x")
    assert spans["child"]["parentSpanId"] == spans["parent"]["spanId"]
    assert (spans["child"]["traceId"], spans["parent"]["traceId"]) == (trace_id, trace_id)
    assert json_attributes(spans["child"]["attributes"]) == {"torch.compile.id": "0/0"}


def test_each_line_is_one_export_request(tmp_path, telemetries):
    """Every line is an OTLP export request object (resourceSpans at the top)."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    _emit_all(telemetry)
    telemetry.shutdown(2.0)
    lines = read_jsonl(one_file(tmp_path, "traces"))
    assert [list(line) for line in lines] == [["resourceSpans"]] * len(lines)


def test_resource_in_files_carries_rank_and_service(tmp_path, telemetries, monkeypatch):
    """The file's resource has service.name and the torchrun rank attributes."""
    for variable, value in {"RANK": "3", "WORLD_SIZE": "4", "OTEL_SERVICE_NAME": "trainer"}.items():
        monkeypatch.setenv(variable, value)
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    _emit_all(telemetry)
    telemetry.shutdown(2.0)
    resource = json_spans(one_file(tmp_path, "traces"))[0]["resource"]
    assert {key: resource[key] for key in ("service.name", "torch.distributed.rank")} == {
        "service.name": "trainer",
        "torch.distributed.rank": 3,
    }
    assert resource["torch.distributed.world_size"] == 4
    assert resource["host.name"] == socket.gethostname()


def test_log_and_metric_files_parse_back(tmp_path, telemetries):
    """The log record and the counter are in their files."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    _emit_all(telemetry)
    telemetry.shutdown(2.0)
    records = json_log_records(one_file(tmp_path, "logs"))
    assert [(r["eventName"], r["body"]) for r in records] == [
        ("test.event", {"stringValue": "hello"})
    ]
    assert json_metric_names(one_file(tmp_path, "metrics")) == {"test.count"}


def test_no_span_file_until_a_span_is_exported(tmp_path, telemetries):
    """Files are created at their first write: a process that recorded nothing leaves none
    (the metrics exporter, built with the providers, opens no file until it has data)."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    telemetry.shutdown(2.0)
    assert sorted(path.name.split("-")[0] for path in tmp_path.iterdir()) == []


def test_unwritable_output_dir_is_a_problem_and_files_are_off(tmp_path, telemetries, caplog):
    """An output dir that can't be created: one warning naming it, file export off, no error."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    bad = str(blocker / "sub")
    with caplog.at_level(logging.WARNING, logger="otel_dynamo"):
        telemetry = setup_providers(Settings(output_dir=bad), environ={})
    telemetries.append(telemetry)
    _emit_all(telemetry)
    assert [(p.variable, p.value) for p in telemetry.problems] == [("OTEL_DYNAMO_OUTPUT_DIR", bad)]
    assert telemetry.problems[0].consequence.startswith(
        "traces, logs and metrics files turned off ("
    )
    assert [r.getMessage() for r in caplog.records] == [telemetry.problems[0].message]
    assert type(telemetry.tracer_provider).__name__ == "NoOpTracerProvider"


def test_unwritable_output_dir_raises_in_strict_mode(tmp_path):
    """With strict settings the same problem raises ConfigError at setup."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="OTEL_DYNAMO_OUTPUT_DIR"):
        setup_providers(Settings(output_dir=str(blocker / "sub"), strict=True), environ={})


def test_strict_mode_raises_for_bad_otel_variable(tmp_path):
    """Strict mode also raises for a bad standard variable (here the protocol)."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/xml",
    }
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL='http/xml'"):
        setup_providers(Settings(output_dir=str(tmp_path), strict=True), environ=environ)


def test_sdk_disabled_gives_noop_providers(tmp_path):
    """OTEL_SDK_DISABLED=true: no-op providers and no files."""
    telemetry = setup_providers(
        Settings(output_dir=str(tmp_path)), environ={"OTEL_SDK_DISABLED": "true"}
    )
    _emit_all(telemetry)
    assert [
        type(p).__name__
        for p in (telemetry.tracer_provider, telemetry.logger_provider, telemetry.meter_provider)
    ] == [
        "NoOpTracerProvider",
        "NoOpLoggerProvider",
        "NoOpMeterProvider",
    ]
    assert list(tmp_path.iterdir()) == []


def test_sampler_always_off_exports_no_spans(tmp_path, telemetries):
    """OTEL_TRACES_SAMPLER=always_off is honoured: no spans reach the file."""
    telemetry = setup_providers(
        Settings(output_dir=str(tmp_path)), environ={"OTEL_TRACES_SAMPLER": "always_off"}
    )
    telemetries.append(telemetry)
    _emit_all(telemetry)
    telemetry.shutdown(2.0)
    assert list(tmp_path.glob("traces-*")) == []


def test_providers_use_the_isolated_id_generator(tmp_path, telemetries):
    """The tracer provider we build draws ids from IsolatedRandomIdGenerator."""
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ={})
    telemetries.append(telemetry)
    assert type(telemetry.tracer_provider.id_generator).__name__ == "IsolatedRandomIdGenerator"


def test_exit_flushes_files_without_an_explicit_shutdown(tmp_path):
    """A job that never calls shutdown still has every span in its file (atexit flush)."""
    env = child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path))
    result = run_program(TELEMETRY_JOB, "--steps", "3", "--step-seconds", "0.01", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    spans = json_spans(one_file(tmp_path, "traces"))
    assert len(spans) == result.summary()["spans"] == 31
    assert {span["traceId"] for span in spans} == {result.summary()["trace_id"]}


def _no_byte_fits() -> None:
    """In the child: every write to a regular file fails with EFBIG ("File too large"),
    while open() still creates files, as on a full filesystem (Python ignores SIGXFSZ)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_full_filesystem_leaves_no_file_and_one_warning(tmp_path):
    """Output on a filesystem where no byte fits: the job prints the same summary
    (3 steps, 31 spans) and exits 0, the output directory holds no file at all (no
    0-byte telemetry file), and stderr is exactly one otel_dynamo warning naming the
    directory and the reason, "File too large"."""
    args = ("--steps", "3", "--step-seconds", "0.01")
    roomy, full = tmp_path / "roomy", tmp_path / "full"
    environ = {"PYTHONDONTWRITEBYTECODE": "1"}
    plain = run_program(
        TELEMETRY_JOB, *args, env=child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(roomy), **environ)
    )
    starved = run_program(
        TELEMETRY_JOB,
        *args,
        env=child_environ(OTEL_DYNAMO_OUTPUT_DIR=str(full), **environ),
        preexec_fn=_no_byte_fits,
    )
    assert (plain.returncode, plain.stderr) == (0, "")
    assert len(list(roomy.iterdir())) == 3
    assert starved.returncode == 0
    summary = starved.summary()
    assert re.fullmatch(r"[0-9a-f]{32}", summary.pop("trace_id"))
    plain_summary = plain.summary()
    del plain_summary["trace_id"]
    assert summary == plain_summary == {"steps": 3, "spans": 31}
    assert list(full.iterdir()) == []
    (warning,) = starved.stderr_lines()
    signals = r"(?:traces|logs|metrics)"
    assert re.fullmatch(
        rf"otel_dynamo: could not export {signals} to {re.escape(str(full))}: "
        rf"OSError: \[Errno {errno.EFBIG}\] File too "
        rf"large\. The job continues; {signals}, {signals} and {signals} sent there are "
        r"dropped while it fails \(further export problems are logged at DEBUG on the "
        r"'otel_dynamo' logger\)",
        warning,
    ), warning
