"""Trace export requests in the shape OpenTelemetry's exporters write, decoded straight
from a line's bytes into spans.

msgspec checks each field's type while it parses, so a span becomes a ``Span`` without a
dict per record or a lookup per field: on a large input that was most of the reading.
It is the fast path of ``decode``, not a second reading of the format: it takes only
lines that ``decode`` reads the same way (each field under its OTLP/JSON name, of the type
those exporters write) and decodes attribute values, events, links and status with
``decode``'s own functions. Any other line (snake_case names, a field this schema does not
know, a time written as a float, an attribute without a key, a value ``decode`` would
refuse) gives None, and ``decode`` reads it.

A span's attributes repeat from span to span (a phase's name, the backend, a count), and
so do whole attribute lists (a phase's span, compile after compile): a span's list is kept
as its bytes while the line is parsed and decoded once per text (``_ATTRIBUTE_LISTS``),
and a list met for the first time is decoded an attribute at a time, each decoded once per
text too (``_KEY_VALUES``). Most spans of a large input are then one lookup and one copy.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from otel_dynamo.report.read.decode import (
    INTERNED_LENGTH,
    REQUEST_KEYS,
    UNREADABLE_RECORD,
    attribute_value,
    events_of,
    linked_span_ids,
    shared,
    status_of,
    to_int,
)
from otel_dynamo.report.read.model import Attributes, AttributeValue, Process, Span


class _KeyValue(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    key: str
    value: Any = None


_KEY_VALUE = msgspec.json.Decoder(_KeyValue)


class _Span(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    traceId: str = ""
    spanId: str = ""
    traceState: Any = None
    parentSpanId: str = ""
    flags: Any = None
    name: str = ""
    kind: Any = None
    startTimeUnixNano: str | int = 0
    endTimeUnixNano: str | int = 0
    attributes: msgspec.Raw = msgspec.Raw(b"[]")
    """The KeyValue list's text: decoded by ``_attributes``."""
    droppedAttributesCount: Any = None
    events: Any = None
    droppedEventsCount: Any = None
    links: Any = None
    droppedLinksCount: Any = None
    status: Any = None


class _ScopeSpans(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    scope: Any = None
    spans: list[_Span] = []
    schemaUrl: Any = None


class _ResourceSpans(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    resource: Any = None
    scopeSpans: list[_ScopeSpans] = []
    schemaUrl: Any = None


class _TraceRequest(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    resourceSpans: list[_ResourceSpans]


_TRACES = msgspec.json.Decoder(_TraceRequest)


def trace_spans(raw: bytes, process_of: Callable[[object], Process]) -> list[Span] | None:
    """The spans of one line of a traces file, as ``decode`` reads them (each
    ResourceSpans' process from ``process_of(its resource)``), or None for a line this
    fast path leaves to ``decode``: every span or none."""
    try:
        return _spans(_TRACES.decode(raw), process_of)
    except UNREADABLE_RECORD:  # not this shape (msgspec's errors are ValueErrors), or a
        return None  # value decode is to read, and to refuse if it must, as it refuses it


def _spans(request: _TraceRequest, process_of: Callable[[object], Process]) -> list[Span]:
    found: list[Span] = []
    append = found.append
    intern = sys.intern  # decode.shared() written out: three times per span
    for entry in request.resourceSpans:
        process = process_of(entry.resource)
        for scope in entry.scopeSpans:
            for span in scope.spans:
                trace_id, parent, name = span.traceId, span.parentSpanId, span.name
                code, message = status_of(span.status) if span.status else (0, "")
                append(
                    Span(
                        process,
                        intern(trace_id) if len(trace_id) <= INTERNED_LENGTH else trace_id,
                        span.spanId,
                        intern(parent) if len(parent) <= INTERNED_LENGTH else parent,
                        intern(name) if len(name) <= INTERNED_LENGTH else name,
                        to_int(span.startTimeUnixNano),
                        to_int(span.endTimeUnixNano),
                        _attributes(span.attributes),
                        events_of(span.events) if span.events else (),
                        linked_span_ids(span.links) if span.links else (),
                        code,
                        message,
                    )
                )
    return found


KEY_VALUES_KEPT_BYTES = 8 * 1024 * 1024
"""How much each of ``_KEY_VALUES`` (single attributes) and ``_ATTRIBUTE_LISTS`` (whole
lists) holds decoded at most, counted as their texts plus KEPT_ENTRY_BYTES each (then it
starts again): memory stays bounded whatever the input."""
KEPT_ENTRY_BYTES = 256
"""What a kept text costs beside its own bytes (its bytes object, its slot, its decoded
values): many tiny distinct texts fill the budget as their memory does, not as their
text's length does."""
KEY_VALUE_KEPT_BYTES = 4096
"""The longest attribute text, or list of them, kept decoded: an op list, input shapes or
restart reasons repeat across the ranks of a job (a worker process reads many), a long
traceback or a large guard list rarely does."""
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
"""Values no reader can change: one object serves every span that has it."""

_Kept = tuple[str, AttributeValue | tuple[AttributeValue, ...]]
"""(key, value) as ``_key_value`` decodes them, an array of scalars as a tuple (each span
is given a list of its own)."""
_KeptList = Attributes | tuple[_Kept, ...]
"""A KeyValue list decoded: as a dict where every value is a scalar, else as its items,
each array of scalars as a tuple (each span is given a dict of its own)."""
_Decoded = TypeVar("_Decoded", _Kept, _KeptList)


class _Decodings(Generic[_Decoded]):
    """What texts decode to, by their text, up to KEY_VALUES_KEPT_BYTES."""

    def __init__(self) -> None:
        self.by_text: dict[bytes, _Decoded] = {}
        self.size = 0

    def add(self, text: bytes, kept: _Decoded) -> None:
        cost = len(text) + KEPT_ENTRY_BYTES
        if self.size + cost > KEY_VALUES_KEPT_BYTES:
            self.by_text.clear()
            self.size = 0
        self.by_text[text] = kept
        self.size += cost


_KEY_VALUES: _Decodings[_Kept] = _Decodings()
_ATTRIBUTE_LISTS: _Decodings[_KeptList] = _Decodings()
"""Whole KeyValue lists: a phase's or an AOT step's spans repeat theirs, compile after
compile, and are then one lookup and one copy each."""
_KEY_VALUE_LIST = msgspec.json.Decoder(list[msgspec.Raw])


def _attributes(items: msgspec.Raw) -> Attributes:
    """``decode.attributes`` of a KeyValue list, as its text."""
    text = bytes(items)
    found = _ATTRIBUTE_LISTS.by_text.get(text)
    if found is not None:
        if isinstance(found, dict):
            return found.copy()
        return {key: list(value) if isinstance(value, tuple) else value for key, value in found}
    decoded = _key_values(_KEY_VALUE_LIST.decode(text))
    if len(text) <= KEY_VALUE_KEPT_BYTES:
        kept = _kept_list(decoded)
        if kept is not None:
            _ATTRIBUTE_LISTS.add(text, kept)
    return decoded


def _kept_list(decoded: Attributes) -> _KeptList | None:
    """``decoded`` as ``_ATTRIBUTE_LISTS`` keeps it; None where a value is neither a scalar
    nor an array of scalars."""
    items: list[_Kept] = []
    for key, value in decoded.items():
        kept = _kept(key, value)
        if kept is None:
            return None
        items.append(kept)
    has_arrays = any(isinstance(value, tuple) for _, value in items)
    return tuple(items) if has_arrays else dict(decoded)


def _kept(key: str, value: AttributeValue) -> _Kept | None:
    """(key, value) as the kept decodings hold them, an array of scalars as a tuple; None
    for a value a reader could change inside (a map, an array holding one)."""
    if value.__class__ in _SCALAR_TYPES:
        return key, value
    if value.__class__ is list and set(map(type, value)) <= _SCALAR_TYPES:
        return key, tuple(value)
    return None


def _key_values(items: list[msgspec.Raw]) -> Attributes:
    """``decode.attributes`` of a KeyValue list, each KeyValue as its text."""
    decoded: Attributes = {}
    kept = _KEY_VALUES.by_text
    for item in items:
        text = bytes(item)
        found = kept.get(text)
        if found is None:
            key, value = _key_value(text)
            decoded[key] = value
            if len(text) <= KEY_VALUE_KEPT_BYTES:
                found = _kept(key, value)
                if found is not None:
                    _KEY_VALUES.add(text, found)  # by_text stays the same dict
            continue
        key, shared = found
        decoded[key] = list(shared) if isinstance(shared, tuple) else shared
    return decoded


def _key_value(text: bytes) -> tuple[str, AttributeValue]:
    """A KeyValue's key (``decode.shared``) and decoded value."""
    item = _KEY_VALUE.decode(text)
    return shared(item.key), attribute_value(item.value)


class _Resourced(msgspec.Struct, gc=False):
    resource: Any = None


class _FirstLine(msgspec.Struct, gc=False):
    """What grouping files needs of a line: each entry's resource (records skipped)."""

    resourceSpans: list[_Resourced] | UnsetType = UNSET
    resource_spans: list[_Resourced] | UnsetType = UNSET
    resourceLogs: list[_Resourced] | UnsetType = UNSET
    resource_logs: list[_Resourced] | UnsetType = UNSET
    resourceMetrics: list[_Resourced] | UnsetType = UNSET
    resource_metrics: list[_Resourced] | UnsetType = UNSET


_FIRST_LINE = msgspec.json.Decoder(_FirstLine)


def resources_of(raw: bytes) -> tuple[str, list[object]] | None:
    """The signal of an export request line and the resource of each of its entries, as
    ``decode.signal_of`` and ``decode.process_of`` would read them, with the records
    skipped unread; None for a line this fast path leaves to ``decode`` (or no request)."""
    try:
        request = _FIRST_LINE.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    for key, signal in REQUEST_KEYS.items():
        entries = getattr(request, key)
        if entries is not UNSET:
            return signal, [entry.resource for entry in entries]
    return None
