"""JSON-Schema check of a Collector config."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from otelcol_check.model import SCHEMA_FILE, Config


def schema_problems(config: Config, schema_file: Path = SCHEMA_FILE) -> list[str]:
    """One message per schema violation, with its location (e.g. exporters.otlp: ...)."""
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(config), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "(top)"
        problems.append(f"schema: {where}: {error.message}")
    return problems
