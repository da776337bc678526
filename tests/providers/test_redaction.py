"""Secrets never reach what we print: URL user-info, query values, header values."""

from __future__ import annotations

import pytest

from otel_dynamo._config.otel_env import OtlpTarget, read_otel_env, redacted_url
from otel_dynamo._providers.export_health import Redactor


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
