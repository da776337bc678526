"""Run every check on one config file and gather the problems."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from otelcol_check.allowlist import AllowList, load_allowlist
from otelcol_check.envrefs import env_problems
from otelcol_check.model import load
from otelcol_check.schema import schema_problems
from otelcol_check.secrets import secret_problems
from otelcol_check.telemetry import name_problems
from otelcol_check.xref import reference_problems


@dataclasses.dataclass(frozen=True)
class KnownNames:
    """Names processors may use: what otel_dynamo emits plus standard ones."""

    attributes: frozenset[str]
    span_names: frozenset[str]
    event_names: frozenset[str]


def check_file(path: Path, known: KnownNames, allow: AllowList | None = None) -> list[str]:
    """Every problem of one Collector config file (empty: the file passes)."""
    config = load(path)
    allow = allow or load_allowlist()
    return (
        schema_problems(config)
        + reference_problems(config, allow)
        + env_problems(path.read_text(encoding="utf-8"))
        + secret_problems(config)
        + name_problems(
            config, set(known.attributes), set(known.span_names), set(known.event_names)
        )
    )
