"""``otel-dynamo run --report``: signals reach the job, the job's status is ours.

Real processes: the wrapper runs a Python child that writes its pid and then waits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _export_support import child_environ, wait_until

TIMEOUT_S = 60
WAIT_FOR_SIGNAL = """
import os, pathlib, signal, sys, time
if len(sys.argv) > 2:
    def on_term(signum, frame):
        pathlib.Path(sys.argv[2]).write_text("handled")
        sys.exit(7)
    signal.signal(signal.SIGTERM, on_term)
pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))
time.sleep(60)
"""


def _start_wrapper(tmp_path: Path, *child_args: str) -> tuple[subprocess.Popen, int]:
    pid_file = tmp_path / "child.pid"
    wrapper = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "otel_dynamo",
            "run",
            "--report",
            "--out",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            WAIT_FOR_SIGNAL,
            str(pid_file),
            *child_args,
        ],
        env=child_environ(),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text(), timeout=TIMEOUT_S)
    return wrapper, int(pid_file.read_text())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_to_the_wrapper_ends_the_job_and_gives_128_plus_n(tmp_path, signum):
    """The signal is forwarded: the child dies of it (no orphan left running) and the
    wrapper exits 128 + N, as a shell would report the child."""
    wrapper, child = _start_wrapper(tmp_path)
    wrapper.send_signal(signum)
    assert wrapper.wait(timeout=TIMEOUT_S) == 128 + signum
    assert wait_until(lambda: not _alive(child), timeout=TIMEOUT_S)


def test_job_that_handles_the_signal_decides_the_status(tmp_path):
    """A job with its own SIGTERM handler runs it; the wrapper exits with the job's code."""
    marker = tmp_path / "handled"
    wrapper, _child = _start_wrapper(tmp_path, str(marker))
    wrapper.send_signal(signal.SIGTERM)
    assert wrapper.wait(timeout=TIMEOUT_S) == 7
    assert marker.read_text() == "handled"


def test_job_killed_by_a_signal_gives_128_plus_n(tmp_path):
    """SIGKILL to the job itself: exit 137, not Python's 256 - 9."""
    wrapper, child = _start_wrapper(tmp_path)
    os.kill(child, signal.SIGKILL)
    assert wrapper.wait(timeout=TIMEOUT_S) == 128 + signal.SIGKILL


def test_job_exit_code_is_passed_through(tmp_path):
    """A job that exits 3 makes the wrapper exit 3, after the report."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "otel_dynamo",
            "run",
            "--report",
            "--out",
            str(tmp_path),
            "--",
            sys.executable,
            "-c",
            "raise SystemExit(3)",
        ],
        env=child_environ(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 3
    assert "no telemetry was written" in done.stderr


def _run_with_out(
    tmp_path: Path, *program: str, report: bool = True, **environ: str
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "otel_dynamo", "run", "--out", str(tmp_path / "out")]
    command += ["--report"] if report else []
    command += ["--", sys.executable, "-c", *(program or ("pass",))]
    return subprocess.run(
        command,
        env=child_environ(**environ),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


COMPILING_PROGRAM = "import torch; torch.compile(lambda x: x + 1, backend='eager')(torch.ones(2))"


def test_out_says_where_the_files_go(tmp_path: Path):
    """--out DIR: the first line says every signal goes to files in DIR, chosen by --out."""
    done = _run_with_out(tmp_path, report=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "otel-dynamo run: traces, logs and metrics go to OTLP/JSON Lines files in "
        f"{tmp_path / 'out'} (--out)"
    )


def test_out_with_an_endpoint_in_the_environment_says_where_telemetry_goes(tmp_path: Path):
    """--out (no --report) while OTEL_EXPORTER_OTLP_ENDPOINT sends every signal
    elsewhere: said once, with the endpoint's scheme, host and port only, and the
    variables that write files too."""
    endpoint = "http://user:s3cret-pass@127.0.0.1:9/v1?token=t0ken-value"
    done = _run_with_out(tmp_path, report=False, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    said = [line for line in done.stderr.splitlines() if "not to " in line]
    assert said == [
        "otel-dynamo run: traces, logs and metrics go to the OTLP endpoint "
        f"http://127.0.0.1:9, not to {tmp_path / 'out'}, as the environment says; add "
        "otlp_file to OTEL_TRACES_EXPORTER, OTEL_LOGS_EXPORTER, OTEL_METRICS_EXPORTER "
        "(e.g. otlp,otlp_file) to write files there too"
    ]
    assert "s3cret" not in done.stderr and "t0ken" not in done.stderr


def test_report_with_an_endpoint_in_the_environment_writes_files_too(tmp_path: Path):
    """--report while OTEL_EXPORTER_OTLP_ENDPOINT sends every signal to a collector: the
    job writes files as well (the report reads them), the endpoint still gets them, and
    the first lines say both; the report is printed."""
    endpoint = "http://user:s3cret-pass@127.0.0.1:9"
    done = _run_with_out(tmp_path, COMPILING_PROGRAM, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[:2] == [
        "otel-dynamo run: traces, logs and metrics go to OTLP/JSON Lines files in "
        f"{tmp_path / 'out'} (--out)",
        "otel-dynamo run: traces, logs and metrics also go to the OTLP endpoint "
        "http://127.0.0.1:9, as the environment says",
    ]
    assert "not to " not in done.stderr and "s3cret" not in done.stderr
    written = sorted(path.name.split("-")[0] for path in (tmp_path / "out").glob("*.jsonl"))
    assert written == ["logs", "metrics", "traces"]
    assert "1 frame compile · 1 graph" in done.stdout, done.stdout[-2000:]


def test_report_keeps_the_protocol_an_exporter_name_gives(tmp_path: Path):
    """OTEL_TRACES_EXPORTER=otlp_proto_http with --report: the child's variable becomes
    ``otlp_proto_http,otlp_file`` (its protocol kept), not ``otlp,otlp_file``."""
    from otel_dynamo.cli.run_command import with_files_for_the_report

    env = with_files_for_the_report(
        {
            "OTEL_TRACES_EXPORTER": "otlp_proto_http",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
        }
    )
    assert env["OTEL_TRACES_EXPORTER"] == "otlp_proto_http,otlp_file"
    assert env["OTEL_LOGS_EXPORTER"] == "otlp,otlp_file"


def test_out_with_files_asked_for_says_nothing_more(tmp_path: Path):
    """The same endpoint with otlp_file added for every signal: files and the endpoint
    both named, no advice to add files."""
    exporters = {f"OTEL_{s}_EXPORTER": "otlp,otlp_file" for s in ("TRACES", "LOGS", "METRICS")}
    done = _run_with_out(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", **exporters)
    assert "not to " not in done.stderr
    assert "also go to the OTLP endpoint http://127.0.0.1:9" in done.stderr


def test_a_grpc_host_and_port_endpoint_is_shown_without_its_user(tmp_path: Path):
    """gRPC's form without a scheme, with a user and password: shown as host:port."""
    done = _run_with_out(
        tmp_path, report=False, OTEL_EXPORTER_OTLP_ENDPOINT="alice:pw-s3cret@collector:4317"
    )
    (said, *_) = [line for line in done.stderr.splitlines() if "not to " in line]
    assert "go to the OTLP endpoint collector:4317, not to" in said
    assert "alice" not in done.stderr and "s3cret" not in done.stderr


def _run_without_out(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    """`otel-dynamo run -- python -c pass` with no --out, from ``tmp_path``, with no
    OTEL_DYNAMO_OUTPUT_DIR unless ``environ`` gives one."""
    env = child_environ(**environ)
    if "OTEL_DYNAMO_OUTPUT_DIR" not in environ:
        env.pop("OTEL_DYNAMO_OUTPUT_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "otel_dynamo", "run", "--", sys.executable, "-c", "pass"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _said(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("otel-dynamo run: ")]


def test_without_out_says_the_default_directory(tmp_path: Path):
    """No --out and no OTEL_DYNAMO_OUTPUT_DIR: one line on stderr names ./otel-dynamo."""
    done = _run_without_out(tmp_path)
    assert done.returncode == 0, done.stderr
    assert _said(done) == [
        "otel-dynamo run: traces, logs and metrics go to OTLP/JSON Lines files in "
        "./otel-dynamo (the default; --out DIR to choose)"
    ]


def test_without_out_says_the_directory_the_environment_names(tmp_path: Path):
    """No --out, OTEL_DYNAMO_OUTPUT_DIR set: that directory, and where it came from."""
    done = _run_without_out(tmp_path, OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "tel"))
    assert _said(done) == [
        f"otel-dynamo run: traces, logs and metrics go to OTLP/JSON Lines files in "
        f"{tmp_path / 'tel'} (OTEL_DYNAMO_OUTPUT_DIR; --out DIR to choose)"
    ]


def test_without_out_an_endpoint_is_named_instead_of_the_directory(tmp_path: Path):
    """No --out, every signal sent to an OTLP endpoint: the endpoint line only."""
    done = _run_without_out(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    assert _said(done) == [
        "otel-dynamo run: traces, logs and metrics go to the OTLP endpoint "
        "http://127.0.0.1:9, not to ./otel-dynamo, as the environment says; add "
        "otlp_file to OTEL_TRACES_EXPORTER, OTEL_LOGS_EXPORTER, OTEL_METRICS_EXPORTER "
        "(e.g. otlp,otlp_file) to write files there too"
    ]


def test_without_out_some_signals_to_files_and_some_elsewhere(tmp_path: Path):
    """Traces to an endpoint, logs and metrics to files: both lines."""
    done = _run_without_out(tmp_path, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:9")
    assert _said(done) == [
        "otel-dynamo run: logs and metrics go to OTLP/JSON Lines files in ./otel-dynamo "
        "(the default; --out DIR to choose)",
        "otel-dynamo run: traces go to the OTLP endpoint http://127.0.0.1:9, not to "
        "./otel-dynamo, as the environment says; add otlp_file to OTEL_TRACES_EXPORTER "
        "(e.g. otlp,otlp_file) to write files there too",
    ]
