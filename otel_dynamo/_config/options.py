"""Keyword options of ``traced()``, ``instrument()`` and ``instrument_export()``: the
Settings fields a caller may set per backend, typed once here (``BackendOptions``); the
public functions take them as ``**options: Unpack[BackendOptions]``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping
from typing import Any, TypedDict

from otel_dynamo._config.settings import VARIABLES, ConfigError, Settings


class BackendOptions(TypedDict, total=False):
    """Each overrides its ``OTEL_DYNAMO_*`` variable (docs/configuration.md) for the
    backends it is given to; a string is parsed as the variable's value is."""

    run_spans: str
    """``off``, ``all``, ``auto`` or ``first:N`` (OTEL_DYNAMO_RUN_SPANS)."""
    capture: str | Collection[str]
    """What compile spans capture: ``stacks``, ``values``, ``graphs`` (OTEL_DYNAMO_CAPTURE)."""
    max_attribute_length: int
    max_list_length: int
    max_graph_text_length: int
    top_ops: int
    fault: str
    """A fault spec to inject (OTEL_DYNAMO_FAULT)."""
    accuracy: bool | str
    """``True``/``False``, ``forward`` or ``backward`` (OTEL_DYNAMO_ACCURACY)."""
    repro_dir: str | os.PathLike[str]
    repro_on: str
    """What writes a repro script (OTEL_DYNAMO_REPRO_ON)."""


OPTION_NAMES: frozenset[str] = BackendOptions.__optional_keys__
"""The options' names, as ``BackendOptions`` declares them."""
_PARSERS = {variable.field: variable for variable in VARIABLES if variable.field}


def apply_options(settings: Settings, options: Mapping[str, object]) -> Settings:
    """Settings with the given options applied; strings are parsed as their variable is.

    Raises ConfigError naming the option, the value and what is accepted.
    """
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        raise TypeError(
            f"traced() got unexpected option(s) {unknown}; accepted: {sorted(OPTION_NAMES)}"
        )
    return dataclasses.replace(settings, **{k: _parse(k, v) for k, v in options.items()})


def _parse(field: str, value: Any) -> Any:
    if field == "repro_dir" and isinstance(value, os.PathLike):
        value = os.fspath(value)
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
