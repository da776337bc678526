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


TRACED = "otel_dynamo.traced()"
INSTRUMENT = "otel_dynamo.instrument()"
INSTRUMENT_EXPORT = "otel_dynamo.instrument_export()"
INSTRUMENTOR = "TorchCompileInstrumentor().instrument()"
"""The public functions that take the options, as their messages name them."""
PROVIDER_NAMES = ("tracer_provider", "meter_provider", "logger_provider")

_INT_FIELDS = frozenset(
    {"max_attribute_length", "max_list_length", "max_graph_text_length", "top_ops"}
)
_PATH_FIELDS = frozenset({"repro_dir"})
_BOOL_FIELDS = frozenset({"accuracy"})
_COLLECTION_FIELDS = frozenset({"capture"})
"""Beside a string (parsed as the variable is), what else each option takes: an int, a
path, a bool, a collection of strings; every other option takes a string only."""


def apply_options(
    settings: Settings,
    options: Mapping[str, object],
    *,
    caller: str,
    also_accepted: Collection[str] = (),
) -> Settings:
    """Settings with the given options applied, each checked when passed: its name
    (TypeError), its type (TypeError) and its value (ConfigError), each message naming
    ``caller`` (the public function called), the option, the value and what is accepted.
    ``also_accepted``: the caller's other keyword arguments, listed with the options."""
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        accepted = sorted({*OPTION_NAMES, *also_accepted})
        raise TypeError(f"{caller} got unexpected option(s) {unknown}; accepted: {accepted}")
    return dataclasses.replace(
        settings, **{key: _parse(caller, key, value) for key, value in options.items()}
    )


def _parse(caller: str, field: str, value: Any) -> Any:
    variable = _PARSERS[field]
    text = _as_text(field, value)
    if text is None:
        raise TypeError(
            f"{caller}: option {field}={value!r} is not valid (of type {type(value).__name__}); "
            f"accepted: {variable.accepted}"
        )
    if variable.parse is None:
        return text
    try:
        return variable.parse(text)
    except ValueError as error:
        reason = variable.reason(error)
        why = f" ({reason})" if reason else ""
        raise ConfigError(
            f"{caller}: option {field}={value!r} is not valid{why}; accepted: {variable.accepted}"
        ) from None


def _as_text(field: str, value: object) -> str | None:
    """The option as its variable's text (an int 5 as "5"); None for a type it never takes."""
    if isinstance(value, str):
        return value
    if field in _INT_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if field in _PATH_FIELDS and isinstance(value, os.PathLike):
        return str(os.fspath(value))
    if field in _BOOL_FIELDS and isinstance(value, bool):
        return str(value)
    items = value if isinstance(value, (set, frozenset, list, tuple)) else None
    if field in _COLLECTION_FIELDS and items is not None and all(isinstance(i, str) for i in items):
        return ",".join(str(item) for item in items) or "none"  # checked as the variable is
    return None
