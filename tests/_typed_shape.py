"""Check JSON data against the TypedDicts that declare its shape (the report's summary,
the diff): exact keys at every depth, values of the declared types."""

from __future__ import annotations

import types
import typing
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict


def mismatches(value: Any, hint: Any, where: str) -> list[str]:
    """Where ``value`` (JSON data) does not have the shape ``hint`` (a schema type) says."""
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        hints = get_type_hints(hint)
        required = set(hint.__required_keys__)
        if not required <= set(value) <= set(hints):
            return [f"{where}: keys {sorted(value)}, expected {sorted(hints)}"]
        return [
            problem
            for key, key_hint in hints.items()
            if key in value
            for problem in mismatches(value[key], key_hint, f"{where}.{key}")
        ]
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if any(not mismatches(value, option, where) for option in options):
            return []
        return [f"{where}: {value!r} is none of {options}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = get_args(hint)
        return [
            p
            for n, element in enumerate(value)
            for p in mismatches(element, item, where + f"[{n}]")
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        _, item = get_args(hint)
        return [
            p for key, element in value.items() for p in mismatches(element, item, f"{where}.{key}")
        ]
    return _scalarmismatches(value, hint, where)


def _scalarmismatches(value: Any, hint: Any, where: str) -> list[str]:
    if get_origin(hint) is typing.Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} not in {get_args(hint)}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if hint is float:  # a float is written 0.0, never 0: consumers see one JSON type
        ok = isinstance(value, float)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if hint in (int, str):
        ok = isinstance(value, hint) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not {hint.__name__}"]
    if hint is bool:
        return [] if isinstance(value, bool) else [f"{where}: {value!r} is not a bool"]
    return [f"{where}: no check for {hint!r}"]


def schema_keys(hint: Any, seen: set[Any]) -> set[str]:
    """Every key of every TypedDict reachable from ``hint``."""
    if is_typeddict(hint):
        if hint in seen:
            return set()
        seen.add(hint)
        hints = get_type_hints(hint)
        return set(hints).union(*(schema_keys(inner, seen) for inner in hints.values()))
    return set().union(*(schema_keys(inner, seen) for inner in get_args(hint)))
