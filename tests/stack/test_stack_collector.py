"""The checks no Collector makes (collector-config/otelcol_check): each one, both ways.

What the Collector itself judges (keys, components, pipelines, signals) is left to it:
tests/stack/test_stack_otelcol.py."""

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
    "exporters": {"otlp_grpc": {"endpoint": "${env:UPSTREAM:-gateway:4317}"}},
    "service": {
        "pipelines": {
            "traces": {
                "receivers": ["otlp"],
                "processors": ["memory_limiter", "batch"],
                "exporters": ["otlp_grpc"],
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
    """Each shipped Collector config has no env, secret or name problem."""
    assert check_file(shipped()[name], check_configs.known_names()) == []


def test_minimal_config_passes(tmp_path: Path) -> None:
    """The minimal valid config the error-path tests start from passes (a sound baseline)."""
    assert _problems(tmp_path, MINIMAL) == []


def test_env_reference_without_default_is_rejected(tmp_path: Path) -> None:
    """${env:NAME} without a default is rejected (the configs must start unconfigured)."""
    config = _edited(exporters__otlp_grpc={"endpoint": "${env:UPSTREAM}"})
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
        exporters__otlp_grpc={
            "endpoint": "x:4317",
            "headers": {"authorization": "Bearer abcdefghijkl"},
        }
    )
    problems = _problems(tmp_path, config)
    expected = "secret: exporters.otlp_grpc.headers.authorization: looks like a literal credential"
    assert expected in problems


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
