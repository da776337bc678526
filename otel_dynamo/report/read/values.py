"""Attribute values as the types the report needs, whatever type the writer used.

Files from other tools may record a count as a string or a float, or one string where
an array was expected; the report reads them all and treats the rest as absent.
"""

from __future__ import annotations

import math

from otel_dynamo import names
from otel_dynamo.report.read.model import Attributes, AttributeValue

_NS_PER_SECOND = 1e9


_EXACT_MICROSECONDS_NS = 10**15
"""Below this many nanoseconds (11 days) a duration's seconds are rounded in integers: the
double ``ns / 1e9`` is off by under 0.06 ns there, and a duration that is not a tie is at
least 1 ns from one."""


def seconds(duration_ns: int) -> float:
    """Nanoseconds as seconds, rounded to the microsecond (stable JSON): what
    ``round(duration_ns / 1e9, 6)`` gives, without its decimal conversion where the
    result is sure."""
    # Off a tie (500 ns past a microsecond) the nearest microsecond of the double ns / 1e9
    # is that of the exact quotient; q / 1e6 is then the double round() makes of "q e-6".
    if 0 <= duration_ns < _EXACT_MICROSECONDS_NS and duration_ns % 1000 != 500:
        return ((duration_ns + 500) // 1000) / 1e6
    return round(duration_ns / _NS_PER_SECOND, 6)


def attribute(attributes: Attributes, key: str) -> AttributeValue:
    """The value under ``key``, or, in a file written before the key was renamed, under the
    key written then (``names.LEGACY_ATTRIBUTES``)."""
    value = attributes.get(key)
    legacy = names.LEGACY_ATTRIBUTES.get(key)
    return attributes.get(legacy) if value is None and legacy is not None else value


def text(value: AttributeValue) -> str | None:
    """An attribute as a string; None when absent or empty."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def integer(value: AttributeValue) -> int | None:
    """An attribute as an int; None when absent or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        found = int(value) if isinstance(value, (int, float)) else int(str(value))
    except (ValueError, OverflowError):  # nan, inf, too many digits, not a number
        return None
    return found if -(1 << 63) <= found < (1 << 64) else None


def number(value: AttributeValue) -> float | None:
    """An attribute as a float; None when absent or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        found = float(value)  # type: ignore[arg-type]  # a list or dict: TypeError, caught
    except (TypeError, ValueError, OverflowError):
        return None
    return found if math.isfinite(found) else None


def strings(value: AttributeValue) -> list[str]:
    """A string-array attribute (a single string counts as one item)."""
    if isinstance(value, list):
        return [str(item) for item in value if item is not None]
    return [] if value is None or value == "" else [str(value)]
