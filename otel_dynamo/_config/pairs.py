"""``key=value,key2=value2``: the one parser of the standard variables made of pairs
(OTEL_EXPORTER_OTLP_*HEADERS, OTEL_RESOURCE_ATTRIBUTES), as the SDK reads them.

Items are split at commas and each at its first ``=``; keys and values are stripped and
values URL-decoded. An item with no ``=`` or no key is malformed: it is skipped and
named, never fatal. Blank items (``a=1,,b=2``) are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

MALFORMED = "<malformed>"
"""How :func:`redacted_pairs` shows an item that is not a pair."""


Pairs = tuple[tuple[tuple[str, str], ...], tuple[str, ...]]
"""The well-formed items, in order, and the malformed ones as given (a plain tuple:
this module is imported at start, where a class costs more than it says)."""


def parse_pairs(raw: str, *, key: Callable[[str], str] = str) -> Pairs:
    """``raw`` as pairs; ``key`` turns each stripped key into the one kept (e.g.
    URL-decoded and lowercased, for headers)."""
    items: list[tuple[str, str]] = []
    malformed: list[str] = []
    for item in raw.split(","):
        name, sep, value = item.partition("=")
        if sep and name.strip():
            items.append((key(name.strip()), unquote(value.strip())))
        elif item.strip():
            malformed.append(item)
    return tuple(items), tuple(malformed)


def header_key(name: str) -> str:
    """A header name as sent: URL-decoded, lowercase (as the SDK's exporters send it)."""
    return unquote(name).lower()


def redacted_pairs(raw: str) -> str:
    """``raw`` to print when its values may be secrets: the keys only (``key=***``), and
    :data:`MALFORMED` for every other item."""
    shown = []
    for item in raw.split(","):
        name, sep, _ = item.partition("=")
        shown.append(f"{name.strip()}=***" if sep and name.strip() else MALFORMED)
    return ",".join(shown)
