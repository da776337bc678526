"""read_otel_env: the standard OTEL_* variables become per-signal export plans and problems."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import sampling

from otel_dynamo._config.otel_env import (
    BatchOptions,
    OtlpTarget,
    SamplerChoice,
    SignalPlan,
    read_otel_env,
)
from otel_dynamo._config.otel_variables import DEFAULT_OTLP_TIMEOUT_S
from otel_dynamo._providers.sampling import build_sampler


def test_nothing_configured_means_files_for_every_signal():
    """No exporter and no endpoint: every signal goes to the embedded OTLP/JSON files."""
    plans = read_otel_env({}).plans
    assert {signal: plan.exporters for signal, plan in plans.items()} == {
        "traces": ("otlp_file",),
        "logs": ("otlp_file",),
        "metrics": ("otlp_file",),
    }


def test_base_endpoint_means_otlp_grpc_for_every_signal():
    """OTEL_EXPORTER_OTLP_ENDPOINT alone: OTLP over gRPC (the Python SDK's default) to it."""
    plan = read_otel_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}).plans["logs"]
    assert plan == SignalPlan("logs", ("otlp",), OtlpTarget("grpc", "http://collector:4317"))


def test_http_protocol_appends_signal_path_to_base_endpoint():
    """With http/protobuf the base endpoint gets /v1/<signal> appended."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    plans = read_otel_env(environ).plans
    assert [plans[s].otlp.endpoint for s in ("traces", "logs", "metrics")] == [
        "http://collector:4318/v1/traces",
        "http://collector:4318/v1/logs",
        "http://collector:4318/v1/metrics",
    ]


def test_per_signal_endpoint_is_used_as_given_and_only_for_its_signal():
    """OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used verbatim; other signals stay on files."""
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://tempo:4318/custom",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
    }
    plans = read_otel_env(environ).plans
    assert plans["traces"].otlp.endpoint == "https://tempo:4318/custom"
    assert (plans["logs"].exporters, plans["metrics"].exporters) == (("otlp_file",), ("otlp_file",))


def test_explicit_otlp_without_endpoint_uses_the_standard_default():
    """OTEL_TRACES_EXPORTER=otlp with no endpoint: the spec's localhost default, as asked."""
    plan = read_otel_env({"OTEL_TRACES_EXPORTER": "otlp"}).plans["traces"]
    assert plan.otlp.endpoint == "http://localhost:4317"


def test_exporter_list_and_none():
    """Exporters are a comma list (otlp_file,console); none turns a signal off."""
    environ = {"OTEL_TRACES_EXPORTER": "otlp_file, console", "OTEL_LOGS_EXPORTER": "none"}
    plans = read_otel_env(environ).plans
    assert (plans["traces"].exporters, plans["logs"].exporters) == (
        ("otlp_file", "console"),
        (),
    )


def test_otlp_proto_http_exporter_name_picks_http():
    """The SDK's otlp_proto_http exporter name selects OTLP over HTTP/protobuf."""
    plan = read_otel_env({"OTEL_METRICS_EXPORTER": "otlp_proto_http"}).plans["metrics"]
    assert (plan.exporters, plan.otlp.protocol, plan.otlp.endpoint) == (
        ("otlp",),
        "http/protobuf",
        "http://localhost:4318/v1/metrics",
    )


def test_unknown_exporter_is_a_problem_and_turns_the_signal_off():
    """An exporter name no entry point registers: one problem naming variable, value,
    accepted; the signal off."""
    env = read_otel_env({"OTEL_TRACES_EXPORTER": "jaeger"})
    assert env.plans["traces"].exporters == ()
    assert [p.message for p in env.problems] == [
        "otel_dynamo: OTEL_TRACES_EXPORTER='jaeger' is not valid; accepted: a comma list of "
        "otlp, otlp_proto_grpc, otlp_proto_http, otlp_json_http, otlp_file, otlp_json_file, "
        "console, or any name in the SDK's opentelemetry_<signal>_exporter entry points; or "
        "none; traces export turned off"
    ]


def test_http_json_protocol_is_accepted_when_its_exporter_is_installed():
    """http/json (opentelemetry-exporter-otlp-json-http, a test dependency): OTLP over
    HTTP with JSON, sent to /v1/<signal>."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    }
    env = read_otel_env(environ)
    assert env.problems == ()
    target = env.plans["logs"].otlp
    assert (target.protocol, target.endpoint) == ("http/json", "http://c:4318/v1/logs")


def test_http_json_protocol_without_its_exporter_is_a_clear_problem(monkeypatch):
    """Where opentelemetry-exporter-otlp-json-http is not installed: one problem naming the
    package to install (otel_dynamo's json-http extra); OTLP off."""
    from otel_dynamo._config import registered

    monkeypatch.setattr(registered, "installed", lambda distribution: False)
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
    }
    env = read_otel_env(environ)
    (problem,) = env.problems
    expected = "opentelemetry-exporter-otlp-json-http (otel_dynamo's json-http extra)"
    assert expected in problem.accepted
    assert [plan.exporters for plan in env.plans.values()] == [(), (), ()]


def test_malformed_endpoint_is_one_problem_and_turns_otlp_off():
    """An endpoint that is neither a URL nor host:port: one problem for all signals, their
    OTLP export off."""
    env = read_otel_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "collector"})
    assert [(p.variable, p.value, p.consequence) for p in env.problems] == [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "collector",
            "traces, logs and metrics OTLP export turned off",
        )
    ]
    assert env.problems[0].accepted == (
        "a URL with scheme http or https and a host, e.g. http://localhost:4317 "
        "(for gRPC also host:port, secure unless OTEL_EXPORTER_OTLP_INSECURE=true)"
    )
    assert [plan.exporters for plan in env.plans.values()] == [(), (), ()]


def test_bad_port_in_endpoint_is_a_problem():
    """An endpoint whose port is not a number is refused."""
    env = read_otel_env({"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:43x7"})
    assert [(p.variable, p.value) for p in env.problems] == [
        ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://c:43x7")
    ]
    assert env.plans["logs"].exporters == ()


def test_headers_are_parsed_url_decoded_and_lowercased():
    """OTEL_EXPORTER_OTLP_HEADERS: key=value pairs, keys lowercased, values URL-decoded."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-tenant=ml",
    }
    target = read_otel_env(environ).plans["traces"].otlp
    assert target.headers == (("authorization", "Bearer abc"), ("x-tenant", "ml"))


def test_malformed_header_items_are_skipped_and_named_without_values():
    """Like the SDK, a malformed item is skipped and the well-formed ones kept; the one
    problem's shown value hides every header value."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
        "OTEL_EXPORTER_OTLP_HEADERS": "api-key=secret123,broken",
    }
    env = read_otel_env(environ)
    assert [(p.variable, p.value, p.consequence) for p in env.problems] == [
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=***,<malformed>",
            "traces, logs and metrics OTLP export skips its malformed items",
        )
    ]
    assert env.plans["traces"].otlp.headers == (("api-key", "secret123"),)


def test_timeout_in_seconds_and_per_signal_override():
    """OTEL_EXPORTER_OTLP_TIMEOUT is seconds; the per-signal variable wins for its signal."""
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2.5",
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "7",
    }
    plans = read_otel_env(environ).plans
    assert (plans["traces"].otlp.timeout_s, plans["metrics"].otlp.timeout_s) == (2.5, 7.0)


def test_bad_timeout_falls_back_to_default():
    """A non-numeric timeout is a problem and the default applies."""
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}
    env = read_otel_env(environ)
    assert env.plans["logs"].otlp.timeout_s == DEFAULT_OTLP_TIMEOUT_S
    assert [(p.variable, p.consequence) for p in env.problems] == [
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "traces, logs and metrics OTLP export uses 3.0 s")
    ]


def test_missing_certificate_file_turns_otlp_off():
    """A certificate path that does not exist is a problem; that signal's OTLP is off."""
    environ = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c:4317",
        "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "/nonexistent/ca.pem",
    }
    env = read_otel_env(environ)
    assert [(p.variable, p.value, p.accepted) for p in env.problems] == [
        ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/nonexistent/ca.pem", "a readable PEM file")
    ]
    assert env.plans["traces"].exporters == ()


def test_sdk_disabled():
    """OTEL_SDK_DISABLED=true is read as disabled."""
    assert read_otel_env({"OTEL_SDK_DISABLED": "true"}).disabled is True


@pytest.mark.parametrize("value", ["1", "yes", "on"])
def test_sdk_disabled_reads_only_true_like_the_sdk(value):
    """OTEL_SDK_DISABLED=1 (or yes, on) leaves the SDK on, as the SDK itself reads it:
    otel_dynamo stays on too, with one problem naming the variable and what is accepted."""
    env = read_otel_env({"OTEL_SDK_DISABLED": value})
    assert env.disabled is False
    assert [(p.variable, p.value, p.accepted, p.consequence) for p in env.problems] == [
        ("OTEL_SDK_DISABLED", value, "true or false", "SDK stays on")
    ]


def test_sampler_ratio_is_honoured():
    """OTEL_TRACES_SAMPLER=traceidratio with ARG 0.25 gives that sampler and rate."""
    choice = read_otel_env(
        {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}
    ).sampler
    assert choice == SamplerChoice("traceidratio", 0.25)
    sampler = build_sampler(choice)
    assert isinstance(sampler, sampling.TraceIdRatioBased)
    assert sampler.rate == 0.25


def test_unknown_sampler_is_a_problem_and_default_used():
    """An unknown sampler name: problem, and parentbased_always_on is used."""
    env = read_otel_env({"OTEL_TRACES_SAMPLER": "sometimes"})
    assert build_sampler(env.sampler) is sampling.DEFAULT_ON
    assert [(p.variable, p.consequence) for p in env.problems] == [
        ("OTEL_TRACES_SAMPLER", "using parentbased_always_on")
    ]


def test_batch_options_bounded_and_from_environment():
    """OTEL_BSP_* bound the span queue; the batch is never larger than the queue."""
    environ = {"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "500"}
    env = read_otel_env(environ)
    assert env.batch["traces"] == BatchOptions(
        schedule_delay_ms=1000.0, max_queue_size=100, max_export_batch_size=100
    )
    assert env.batch["logs"] == BatchOptions()


def test_non_positive_queue_size_is_a_problem():
    """OTEL_BLRP_MAX_QUEUE_SIZE=0 is refused and the default kept."""
    env = read_otel_env({"OTEL_BLRP_MAX_QUEUE_SIZE": "0"})
    assert env.batch["logs"].max_queue_size == 2048
    assert [(p.variable, p.accepted) for p in env.problems] == [
        ("OTEL_BLRP_MAX_QUEUE_SIZE", "a positive integer")
    ]


def test_grpc_endpoint_may_be_host_and_port():
    """collector:4317 with no scheme, as the SDK's gRPC exporter takes it: no problem,
    sent as given; secure unless OTEL_EXPORTER_OTLP_INSECURE says otherwise."""
    env = read_otel_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"})
    assert env.problems == ()
    target = env.plans["traces"].otlp
    assert (target.protocol, target.endpoint, target.insecure) == ("grpc", "collector:4317", None)


def test_http_endpoint_needs_a_scheme():
    """host:port for HTTP/protobuf is not a URL: one problem, OTLP off for the signals."""
    env = read_otel_env(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }
    )
    assert [p.variable for p in env.problems] == ["OTEL_EXPORTER_OTLP_ENDPOINT"]
    assert env.plans["traces"].otlp is None


def test_insecure_is_read_per_signal():
    """OTEL_EXPORTER_OTLP_INSECURE applies to every signal, the per-signal one wins."""
    env = read_otel_env(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317",
            "OTEL_EXPORTER_OTLP_INSECURE": "TRUE",
            "OTEL_EXPORTER_OTLP_METRICS_INSECURE": "false",
        }
    )
    insecure = {signal: env.plans[signal].otlp.insecure for signal in ("traces", "logs", "metrics")}
    assert insecure == {"traces": True, "logs": True, "metrics": False}
    assert env.problems == ()


def test_insecure_other_than_true_or_false_is_a_problem_and_false():
    """OTEL_EXPORTER_OTLP_INSECURE=yes: the SDK reads it as false; so do we, and say so."""
    env = read_otel_env(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "yes"}
    )
    assert env.plans["traces"].otlp.insecure is False
    assert [(p.variable, p.value, p.consequence) for p in env.problems] == [
        ("OTEL_EXPORTER_OTLP_INSECURE", "yes", "using false")
    ]


def test_an_unknown_sampler_is_a_problem_naming_the_entry_points():
    """A sampler name nobody registers: the default, one problem saying where names come
    from."""
    env = read_otel_env({"OTEL_TRACES_SAMPLER": "nowhere_sampler"})
    assert env.sampler.name == "parentbased_always_on"
    (problem,) = env.problems
    assert "opentelemetry_traces_sampler entry points" in problem.accepted


def test_id_generator_names_come_from_the_entry_points():
    """OTEL_PYTHON_ID_GENERATOR=random is the default; an unregistered name is a problem
    and the default."""
    assert read_otel_env({"OTEL_PYTHON_ID_GENERATOR": "random"}).id_generator == "random"
    env = read_otel_env({"OTEL_PYTHON_ID_GENERATOR": "xray_nowhere"})
    assert env.id_generator == "random"
    assert [p.variable for p in env.problems] == ["OTEL_PYTHON_ID_GENERATOR"]


def test_config_file_is_said_to_be_not_read():
    """OTEL_CONFIG_FILE set: one problem saying otel_dynamo does not read it (never a
    silent ignore)."""
    env = read_otel_env({"OTEL_CONFIG_FILE": "/etc/otel.yaml"})
    assert [(p.variable, p.value, p.consequence) for p in env.problems] == [
        ("OTEL_CONFIG_FILE", "/etc/otel.yaml", "not read by otel_dynamo")
    ]
