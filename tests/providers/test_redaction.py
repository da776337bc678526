"""Secrets never reach what we print: URL user-info, query values, header values."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _export_support import failing_http_collector, free_port, without_otel

from otel_dynamo._config.otel_env import OtlpTarget, read_otel_env
from otel_dynamo._config.redaction import Redactor, redacted_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:password@host:4318/v1/traces", "http://***@host:4318/v1/traces"),
        ("http://a@b:c@host/p@x", "http://***@host/p@x"),
        (
            "https://host/v1/traces?api_key=SECRET&tenant=ml",
            "https://host/v1/traces?api_key=***&tenant=***",
        ),
        ("http://host:4317", "http://host:4317"),
        ("not a url://u:p@", "not a url://***@"),
    ],
)
def test_redacted_url_hides_user_info_and_query_values(url, shown):
    """What a URL shows when printed: user-info and query values become ***."""
    assert redacted_url(url) == shown


def test_invalid_endpoint_problem_does_not_print_its_password():
    """A malformed endpoint is one problem naming the variable, with the password hidden."""
    otel = read_otel_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://trainer:s3cret@collector:4317"})
    (problem,) = [p for p in otel.problems if p.variable == "OTEL_EXPORTER_OTLP_ENDPOINT"]
    assert problem.value == "ftp://***@collector:4317"


def test_target_secrets_are_header_values_and_user_info():
    """The values a target must never print: each header value, the user and password."""
    target = OtlpTarget(
        "http/protobuf",
        "http://trainer:s3cret@host:4318",
        headers=(("authorization", "Bearer TOK"),),
    )
    assert target.secrets() == frozenset({"Bearer TOK", "trainer", "s3cret"})


def test_redactor_hides_known_secrets_and_user_info_without_a_scheme():
    """gRPC's messages drop the scheme ("user:pass@host:port"); known values go anywhere."""
    redact = Redactor({"Bearer TOK"})
    message = "exporting to trainer:s3cret@127.0.0.1:4317 failed; metadata Bearer TOK refused"
    assert redact(message) == "exporting to ***@127.0.0.1:4317 failed; metadata *** refused"


def test_redactor_leaves_ordinary_text_alone():
    """Times, addresses and e-mail-free messages pass unchanged."""
    message = "retrying in 1.02s at 12:30:01 to 127.0.0.1:4317 (StatusCode.UNAVAILABLE)"
    assert Redactor()(message) == message


def test_very_short_known_values_are_not_replaced_everywhere():
    """A header value of "1" must not turn every 1 of a message into ***."""
    assert Redactor({"1", "json"})("retrying in 1.02s to 127.0.0.1:4317") == (
        "retrying in 1.02s to 127.0.0.1:4317"
    )


SECRETS = ("PASSWORD4242", "TOKEN4242", "QUERYSECRET99", "HEADERSECRET77")
PROGRAM = Path(__file__).parents[1] / "programs" / "secret_job.py"


def _run_job(
    tmp_path: Path, environ: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **without_otel(os.environ),
        "OTEL_DYNAMO_ENABLED": "true",
        "OTEL_DYNAMO_OUTPUT_DIR": str(tmp_path / "out"),
        "OTEL_DYNAMO_SHUTDOWN_TIMEOUT": "2",
        **environ,
    }
    done = subprocess.run(
        [sys.executable, str(PROGRAM), *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]
    return done


def _written(tmp_path: Path) -> str:
    return "".join(path.read_text(encoding="utf-8") for path in (tmp_path / "out").glob("*.jsonl"))


def test_an_error_text_on_a_span_is_exported_without_its_secrets(tmp_path: Path) -> None:
    """A compile error whose text holds a URL's password and query token is recorded on
    the spans and log events with both as ***, the rest of its text kept."""
    _run_job(tmp_path, {})
    written = _written(tmp_path)
    assert "could not fetch http://***@models.internal/w?token=***" in written
    assert [secret for secret in SECRETS if secret in written] == []


@pytest.mark.parametrize("target", ["stderr", "file"])
def test_structured_log_lines_carry_the_error_text_without_its_secrets(
    tmp_path: Path, target: str
) -> None:
    """OTEL_DYNAMO_LOG on (standard error, a file): the failed compile's JSON line quotes
    the error text with the URL's password and query token as ***."""
    lines_file = tmp_path / "lines.jsonl"
    done = _run_job(
        tmp_path, {"OTEL_DYNAMO_LOG": "stderr" if target == "stderr" else str(lines_file)}
    )
    lines = done.stderr if target == "stderr" else lines_file.read_text(encoding="utf-8")
    assert "could not fetch http://***@models.internal/w?token=***" in lines
    assert [secret for secret in SECRETS if secret in lines + done.stderr] == []


def test_the_export_warning_quotes_no_secret_of_the_endpoint_or_headers(tmp_path: Path) -> None:
    """Metrics to a collector that is not there, its URL with a query token, headers with a
    token: the one warning names the endpoint with *** and quotes no secret, the job's own
    DEBUG logging included."""
    environ = {
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": (
            f"http://127.0.0.1:{free_port()}/v1/metrics?api_key=QUERYSECRET99"
        ),
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer HEADERSECRET77",
    }
    done = _run_job(tmp_path, environ, "--debug-logging")
    assert "otel_dynamo: could not export metrics to http://127.0.0.1:" in done.stderr
    assert "/v1/metrics?api_key=*** (OTLP" in done.stderr
    assert [secret for secret in SECRETS if secret in done.stderr + _written(tmp_path)] == []


def test_the_export_warning_names_every_signal_sent_to_the_collector(tmp_path: Path) -> None:
    """All three signals to one collector that is not there: the one warning names each."""
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    done = _run_job(tmp_path, environ)
    (warning,) = [line for line in done.stderr.splitlines() if "could not export" in line]
    signals = re.search(r"continues; (.*?) sent there are dropped while it fails", warning)
    assert signals is not None
    assert sorted(re.split(r", | and ", signals[1])) == ["logs", "metrics", "traces"]


def test_relayed_http_debug_lines_show_no_query_token(tmp_path: Path) -> None:
    """A collector answering 503 and the job's logging at DEBUG: the HTTP library's
    request lines that otel_dynamo relays show the endpoint's query value as ***."""
    with failing_http_collector() as server:
        port = server.server_address[1]
        environ = {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": (
                f"http://127.0.0.1:{port}/v1/metrics?api_key=QUERYSECRET99"
            ),
        }
        done = _run_job(tmp_path, environ, "--debug-logging")
    assert server.posts > 0
    assert "/v1/metrics?api_key=***" in done.stderr
    assert [secret for secret in SECRETS if secret in done.stderr] == []
