"""Nothing secret in the files: credential-like keys take their value from the environment."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from otelcol_check.envrefs import ENV_REF

SECRET_KEY = re.compile(
    r"(?i)(password|passwd|secret|token|api[_-]?key|authorization|"
    r"credential|bearer)"
)
SECRET_TEXT = re.compile(r"(?i)\b(basic|bearer)\s+[A-Za-z0-9+/=._-]{8,}")


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}" if path else str(key))
            yield path, str(key), value
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}[{index}]")


def secret_problems(config: Any) -> list[str]:
    """Credential-like keys whose value is not exactly one empty-default env reference,
    and any literal "Basic ..."/"Bearer ..." value."""
    problems = []
    for path, key, value in _walk(config):
        where = f"{path}.{key}" if path else key
        if SECRET_KEY.search(key) and not isinstance(value, dict | list):
            match = ENV_REF.fullmatch(str(value)) if value is not None else None
            if match is None or match.group(2):
                problems.append(
                    f"secret: {where}: take it from the environment with an empty "
                    "default, e.g. ${env:NAME:-}"
                )
        if isinstance(value, str) and SECRET_TEXT.search(value):
            problems.append(f"secret: {where}: looks like a literal credential")
    return problems
