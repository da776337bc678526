"""The Collector-config checker (collector-config/otelcol_check): each check, both ways."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import _stack_support  # noqa: F401 - puts collector-config/ on sys.path
import check_configs
import pytest
import yaml
from otelcol_check import envrefs
from otelcol_check.model import shipped
from otelcol_check.report import check_file

MINIMAL: dict[str, Any] = {
    "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "${env:HOST:-127.0.0.1}:4317"}}}},
    "processors": {"memory_limiter": {"check_interval": "1s", "limit_percentage": 80}, "batch": {}},
    "exporters": {"otlp": {"endpoint": "${env:UPSTREAM:-gateway:4317}"}},
    "service": {
        "pipelines": {
            "traces": {
                "receivers": ["otlp"],
                "processors": ["memory_limiter", "batch"],
                "exporters": ["otlp"],
            }
        }
    },
}


def _problems(tmp_path: Path, config: dict[str, Any] | str) -> list[str]:
    path = tmp_path / "config.yaml"
    path.write_text(config if isinstance(config, str) else yaml.safe_dump(config), "utf-8")
    return check_file(path, check_configs.known_names())


def _edited(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(MINIMAL)
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return config


@pytest.mark.parametrize("name", sorted(shipped()))
def test_shipped_config_passes_every_check(name: str) -> None:
    """Each shipped Collector config has no schema, reference, env, secret or name problem."""
    assert check_file(shipped()[name], check_configs.known_names()) == []


def test_minimal_config_passes(tmp_path: Path) -> None:
    """The minimal valid config the error-path tests start from passes (a sound baseline)."""
    assert _problems(tmp_path, MINIMAL) == []


def test_misspelled_component_key_is_rejected(tmp_path: Path) -> None:
    """A misspelled key of a known component fails the schema check."""
    problems = _problems(tmp_path, _edited(exporters__otlp={"endpont": "x:4317"}))
    assert (
        "schema: exporters.otlp: Additional properties are not allowed ('endpont' was "
        "unexpected)" in problems
    )


def test_pipeline_without_exporter_is_rejected(tmp_path: Path) -> None:
    """A pipeline with an empty exporters list fails the schema check."""
    config = _edited()
    config["service"]["pipelines"]["traces"]["exporters"] = []
    assert any(
        p.startswith("schema: service.pipelines.traces.exporters:")
        for p in _problems(tmp_path, config)
    )


@pytest.mark.parametrize(
    ("kind", "component"),
    [("exporters", "jaeger"), ("exporters", "logging"), ("exporters", "loki")],
)
def test_deprecated_component_is_rejected(tmp_path: Path, kind: str, component: str) -> None:
    """The old jaeger, logging and loki exporters are rejected with the reason."""
    config = _edited(**{f"{kind}__{component}": {"endpoint": "x"}})
    config["service"]["pipelines"]["traces"]["exporters"].append(component)
    assert any(
        p.startswith(f"{kind}.{component}: deprecated component '{component}'")
        for p in _problems(tmp_path, config)
    )


def test_component_outside_the_allowlist_is_rejected(tmp_path: Path) -> None:
    """A component type the allow-list does not name is rejected, naming the version."""
    config = _edited(exporters__kafka={"brokers": ["k:9092"]})
    config["service"]["pipelines"]["traces"]["exporters"].append("kafka")
    assert (
        "exporters.kafka: 'kafka' is not in the allow-list of otelcol-contrib 0.136.0"
        in _problems(tmp_path, config)
    )


def test_undefined_pipeline_component_is_rejected(tmp_path: Path) -> None:
    """A pipeline naming a processor that is not defined is rejected."""
    config = _edited()
    config["service"]["pipelines"]["traces"]["processors"].append("batch/missing")
    assert "service.pipelines.traces: processor 'batch/missing' is not defined" in _problems(
        tmp_path, config
    )


def test_component_of_the_wrong_signal_is_rejected(tmp_path: Path) -> None:
    """tail_sampling in a logs pipeline is rejected: it handles traces only."""
    config = _edited(
        processors__tail_sampling={"policies": [{"name": "all", "type": "always_sample"}]}
    )
    config["service"]["pipelines"]["logs"] = {
        "receivers": ["otlp"],
        "processors": ["tail_sampling"],
        "exporters": ["otlp"],
    }
    assert "service.pipelines.logs: processor 'tail_sampling' does not support logs" in _problems(
        tmp_path, config
    )


def test_memory_limiter_must_come_first(tmp_path: Path) -> None:
    """A pipeline with memory_limiter after another processor is rejected."""
    config = _edited()
    config["service"]["pipelines"]["traces"]["processors"] = ["batch", "memory_limiter"]
    assert "service.pipelines.traces: memory_limiter must be the first processor" in _problems(
        tmp_path, config
    )


def test_unused_component_is_reported(tmp_path: Path) -> None:
    """A defined exporter no pipeline uses is reported."""
    config = _edited(exporters__debug={})
    assert "exporters.debug: defined but used by no pipeline" in _problems(tmp_path, config)


def test_connector_must_join_two_pipelines(tmp_path: Path) -> None:
    """A connector used only as an exporter is reported."""
    config = _edited(connectors={"forward": {}})
    config["service"]["pipelines"]["traces"]["exporters"].append("forward")
    assert (
        "connectors.forward: a connector must be an exporter of one pipeline and a "
        "receiver of another" in _problems(tmp_path, config)
    )


def test_undefined_extension_is_reported(tmp_path: Path) -> None:
    """service.extensions naming an undefined extension is reported."""
    config = _edited()
    config["service"]["extensions"] = ["health_check"]
    assert "service.extensions: extension 'health_check' is not defined" in _problems(
        tmp_path, config
    )


def test_env_reference_without_default_is_rejected(tmp_path: Path) -> None:
    """${env:NAME} without a default is rejected (the configs must start unconfigured)."""
    config = _edited(exporters__otlp={"endpoint": "${env:UPSTREAM}"})
    assert "env: ${env:UPSTREAM} has no default (write ${env:UPSTREAM:-...})" in _problems(
        tmp_path, config
    )


def test_bare_dollar_reference_is_rejected() -> None:
    """An old-style $NAME or ${NAME} reference is rejected."""
    assert envrefs.env_problems("endpoint: $UPSTREAM\nother: ${OTHER}\n") == [
        "env: line 1: '$UPSTREAM' is not ${env:NAME:-default}",
        "env: line 2: '${OTHER}' is not ${env:NAME:-default}",
    ]


def test_literal_credential_is_rejected(tmp_path: Path) -> None:
    """A literal Authorization header is rejected; it must come from the environment."""
    config = _edited(
        exporters__otlp={"endpoint": "x:4317", "headers": {"authorization": "Bearer abcdefghijkl"}}
    )
    problems = _problems(tmp_path, config)
    assert (
        "secret: exporters.otlp.headers.authorization: looks like a literal credential" in problems
    )


def test_unknown_attribute_in_a_policy_is_rejected(tmp_path: Path) -> None:
    """A tail-sampling policy keyed on an attribute otel_dynamo does not emit is rejected."""
    config = _edited(
        processors__tail_sampling={
            "policies": [
                {
                    "name": "x",
                    "type": "numeric_attribute",
                    "numeric_attribute": {
                        "key": "torch.compile.graph_breaks.count",
                        "min_value": 1,
                    },
                }
            ]
        }
    )
    config["service"]["pipelines"]["traces"]["processors"].insert(1, "tail_sampling")
    assert (
        "names: attribute 'torch.compile.graph_breaks.count' is not emitted by otel_dynamo "
        "(names.py) nor standard" in _problems(tmp_path, config)
    )


def test_unknown_span_event_name_is_rejected(tmp_path: Path) -> None:
    """An OTTL span-event condition on an event otel_dynamo does not emit is rejected."""
    config = _edited(
        processors__tail_sampling={
            "policies": [
                {
                    "name": "x",
                    "type": "ottl_condition",
                    "ottl_condition": {"spanevent": ['name == "torch.compile.graphbreak"']},
                }
            ]
        }
    )
    config["service"]["pipelines"]["traces"]["processors"].insert(1, "tail_sampling")
    assert (
        "names: span event name 'torch.compile.graphbreak' is not emitted by otel_dynamo "
        "(names.py) nor standard" in _problems(tmp_path, config)
    )
