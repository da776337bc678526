"""Keyword options of ``traced()`` and ``instrument()``: Settings fields, by name."""

from __future__ import annotations

import dataclasses
from typing import Any

from otel_dynamo._config.settings import VARIABLES, ConfigError, Settings

_PARSERS = {variable.field: variable for variable in VARIABLES if variable.field}
_PER_BACKEND = frozenset(
    {
        "run_spans",
        "capture",
        "max_attribute_length",
        "max_list_length",
        "max_graph_text_length",
        "top_ops",
        "fault",
        "accuracy",
        "repro_dir",
        "repro_on",
    }
)


def apply_options(settings: Settings, options: dict[str, Any]) -> Settings:
    """Settings with the given options applied; strings are parsed as their variable is.

    Raises ConfigError naming the option, the value and what is accepted.
    """
    unknown = sorted(set(options) - _PER_BACKEND)
    if unknown:
        raise TypeError(
            f"traced() got unexpected option(s) {unknown}; accepted: {sorted(_PER_BACKEND)}"
        )
    return dataclasses.replace(settings, **{k: _parse(k, v) for k, v in options.items()})


def _parse(field: str, value: Any) -> Any:
    if field == "accuracy" and isinstance(value, bool):
        value = str(value)
    if field == "capture" and isinstance(value, (set, frozenset, list, tuple)):
        value = ",".join(value) or "none"  # checked as the variable is (graphs needs values)
    if not isinstance(value, str):
        return value
    variable = _PARSERS[field]
    if variable.parse is None:
        return value
    try:
        return variable.parse(value)
    except ValueError as error:
        reason = variable.reason(error)
        why = f" ({reason})" if reason else ""
        raise ConfigError(
            f"otel_dynamo: option {field}={value!r} is not valid{why}; "
            f"accepted: {variable.accepted}"
        ) from None
