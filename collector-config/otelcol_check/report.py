"""Run every check the Collector cannot make on one config file and gather the problems."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from otelcol_check.envrefs import env_problems
from otelcol_check.model import load
from otelcol_check.secrets import secret_problems
from otelcol_check.telemetry import name_problems


@dataclasses.dataclass(frozen=True)
class KnownNames:
    """Names processors may use: what otel_dynamo emits plus standard ones."""

    attributes: frozenset[str]
    span_names: frozenset[str]
    event_names: frozenset[str]


def check_file(path: Path, known: KnownNames) -> list[str]:
    """Every problem of one Collector config file (empty: the file passes)."""
    config = load(path)
    return (
        env_problems(path.read_text(encoding="utf-8"))
        + secret_problems(config)
        + name_problems(
            config, set(known.attributes), set(known.span_names), set(known.event_names)
        )
    )
