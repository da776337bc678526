"""The fast path for spans (otel_dynamo.report.read.canonical) reads each line it takes
exactly as the general decoder does, and takes the lines OpenTelemetry's exporters write."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from _report_support import FakeCompile, GraphBreak, resource_attributes, write_traces

from otel_dynamo.report.read import canonical, decode
from otel_dynamo.report.read import files as read_module
from otel_dynamo.report.read.files import load_telemetry
from otel_dynamo.report.read.model import Process

PROCESS = Process(key=("file", "x"), label="x")


def _sdk_lines(directory: Path) -> list[bytes]:
    """Lines the SDK and otel_dynamo's file writer wrote: attributes of every kind, a
    graph break event, run spans linked to their graph, a failure's error status."""
    compiles = [
        FakeCompile("0/0", runs=2, graph_breaks=(GraphBreak("data-dependent branch"),)),
        FakeCompile("0/1", error_type="BackendCompilerFailed", error_message="boom", run_error="x"),
        FakeCompile("1/0", runs=1, attributes={"x.double": 1.5, "x.flag": True, "x.ints": [1, 2]}),
    ]
    path = write_traces(directory / "traces-1.jsonl", compiles, resource=resource_attributes())
    return path.read_bytes().splitlines(keepends=True)


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, fast: bool) -> list[str]:
    """The file read with every line tried by the fast path first, or none: each record,
    stat and problem as its repr (NaN equals itself)."""
    monkeypatch.setattr(read_module, "CANONICAL_MISSES", 1 << 30 if fast else 0)
    telemetry = load_telemetry([path])
    records = [*telemetry.spans, *telemetry.files, *telemetry.problems, telemetry.printable_text]
    return [repr(record) for record in records]


def _first_difference(first: list[str], second: list[str]) -> str:
    """Where two readings part (a short message, not a diff of megabytes)."""
    for index, (one, other) in enumerate(zip(first, second, strict=False)):
        if one != other:
            return f"record {index}: {one[:2000]} != {other[:2000]}"
    return f"{len(first)} records != {len(second)} records"


def test_every_line_the_sdk_writes_takes_the_fast_path(tmp_path: Path) -> None:
    """Each line of spans the SDK's exporter wrote is read by the fast path, not left to
    the general decoder (else a large input reads at half the speed)."""
    lines = _sdk_lines(tmp_path)
    taken = [canonical.trace_spans(line, lambda resource: PROCESS) for line in lines]
    assert len(lines) > 5 and all(isinstance(spans, list) and spans for spans in taken)


def test_fast_path_keeps_one_copy_of_repeated_strings(tmp_path: Path) -> None:
    """Names, trace ids, parent ids and attribute keys and values repeated across spans are
    one object each (a large input's decoded form stays small)."""
    spans = [
        span
        for line in _sdk_lines(tmp_path)
        for span in canonical.trace_spans(line, lambda resource: PROCESS) or []
    ]
    texts = [
        text
        for span in spans
        for text in (span.name, span.trace_id, span.parent_span_id, *span.attributes.keys())
    ]
    texts += [
        value for span in spans for value in span.attributes.values() if isinstance(value, str)
    ]
    copies: dict[str, set[int]] = {}
    for text in texts:
        copies.setdefault(text, set()).add(id(text))
    assert len(copies) > 20 and all(len(ids) == 1 for ids in copies.values())


def test_fast_path_gives_the_spans_decode_gives(tmp_path: Path) -> None:
    """For SDK-written lines, the spans of the fast path equal the general decoder's."""
    for line in _sdk_lines(tmp_path):
        request = json.loads(line)
        expected = [
            span for entry in request["resourceSpans"] for span in decode.spans_of(entry, PROCESS)
        ]
        assert canonical.trace_spans(line, lambda resource: PROCESS) == expected


_HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    1e300,
    2**64,
    -(2**63) - 1,
    "",
    "x",
    "12",
    "1.0",
    "1e3",
    "1.234567890123456789e18",
    " 7",
    "1_000",
    "\u0661\u0662",
    "18446744073709551616",
    "\u202e",
    [],
    {},
    [1, "a", None],
    {"stringValue": "s"},
    {"intValue": "5"},
    {"intValue": 5, "stringValue": "a"},
    {"stringValue": "a", "intValue": 5},
    {"stringValue": None},
    {"stringValue": 3},
    {"intValue": "9" * 30},
    {"boolValue": "TRUE"},
    {"doubleValue": "1.5"},
    {"doubleValue": "NaN"},
    {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}, 3]}},
    {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}},
    {"bytesValue": "AAE="},
    {"string_value": "s"},
    {"foo": 1},
    {"foo": 1, "stringValue": "a"},
    {"key": "k"},
    {"key": 5, "value": {"stringValue": "v"}},
    {"code": "STATUS_CODE_ERROR", "message": {"x": 1}},
    {"code": 2.5},
    [[[[[[[[["deep"]]]]]]]]],
]
_RENAMES = {
    "traceId": "trace_id",
    "spanId": "span_id",
    "parentSpanId": "parent_span_id",
    "startTimeUnixNano": "start_time_unix_nano",
    "scopeSpans": "scope_spans",
    "resourceSpans": "resource_spans",
    "stringValue": "string_value",
    "intValue": "int_value",
}


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*at, index))
    return found


def _mutated(request: Any, chance: random.Random) -> Any:
    """``request`` with one to three of its values replaced, keys renamed, added or
    removed."""
    request = json.loads(json.dumps(request))
    for _ in range(chance.randint(1, 3)):
        paths = _paths(request)[1:]
        if not paths:
            break
        path = chance.choice(paths)
        parent = request
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = chance.random()
        if action < 0.6:
            parent[last] = json.loads(json.dumps(chance.choice(_HOSTILE)))
        elif isinstance(parent, dict) and action < 0.75:
            parent[_RENAMES.get(last, last + "X")] = parent.pop(last)
        elif isinstance(parent, dict) and action < 0.85:
            del parent[last]
        elif isinstance(parent, dict):
            parent["droppedAttributesCount" if action < 0.9 else "unknownField"] = 1
    return request


def _raw_mutations(line: bytes, chance: random.Random) -> list[bytes]:
    """Byte-level changes no JSON encoder makes: a repeated key, bytes that are not UTF-8,
    a cut line, a control character, a lone surrogate."""
    cut = chance.randint(1, len(line) - 2)
    return [
        line.replace(b'"name":', b'"name":"first","name":', 1),
        line.replace(b'"spanId":"', b'"spanId":"\xff', 1),
        line.replace(b'"stringValue":"', b'"stringValue":"\xc3', 1),
        line[:cut] + b"\n",
        line.replace(b'"stringValue":"', b'"stringValue":"\\u001b', 1),
        line.replace(b'"stringValue":"', b'"stringValue":"\\ud800', 1),
        line.replace(b'"name":"', b'"name":"\\r', 1),
        line.replace(b"]}]}", b']}],"resourceLogs":[]}', 1),
    ]


def test_fast_path_reads_hostile_lines_as_decode_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines changed at random (values of every type, snake_case and unknown keys, an
    attribute value of two kinds, repeated keys, bytes that are not UTF-8) read the same,
    spans, problems and stats, whether or not the fast path is tried first; both of its
    outcomes occur."""
    chance = random.Random(20261130)
    base = [line for line in _sdk_lines(tmp_path) if len(line) < 20_000]
    lines: list[bytes] = []
    for index in range(1200):
        line = base[index % len(base)]
        lines.append(json.dumps(_mutated(json.loads(line), chance)).encode() + b"\n")
    for line in base:
        lines += _raw_mutations(line, chance)
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"".join(lines))
    taken = sum(canonical.trace_spans(line, lambda resource: PROCESS) is not None for line in lines)
    assert 100 < taken < len(lines) - 100
    fast, general = _read(path, monkeypatch, fast=True), _read(path, monkeypatch, fast=False)
    assert fast == general, _first_difference(fast, general)


def test_an_attribute_value_of_two_kinds_reads_as_its_first() -> None:
    """{"intValue": "5", "stringValue": "a"}: the kind written first, 5, as decode reads it."""
    for value, expected in (
        ({"intValue": "5", "stringValue": "a"}, 5),
        ({"stringValue": "a", "intValue": "5"}, "a"),
    ):
        span = {"name": "s", "attributes": [{"key": "k", "value": value}]}
        line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
        spans = canonical.trace_spans(line, lambda resource: PROCESS)
        assert spans is not None and spans[0].attributes == {"k": expected}


def test_values_past_64_bits_read_as_absent(tmp_path: Path) -> None:
    """A time or an integer attribute outside int64/uint64 reads as 0, by either path."""
    span = {
        "name": "s",
        "startTimeUnixNano": str(1 << 64),
        "endTimeUnixNano": 1 << 64,
        "attributes": [
            {"key": "big", "value": {"intValue": str(1 << 64)}},
            {"key": "low", "value": {"intValue": str(-(1 << 63) - 1)}},
            {"key": "top", "value": {"intValue": str((1 << 64) - 1)}},
        ],
    }
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"
    path = tmp_path / "big.jsonl"
    path.write_text(line)
    spans = canonical.trace_spans(line.encode(), lambda resource: PROCESS)
    assert spans is not None
    for read in (spans[0], load_telemetry([path]).spans[0]):
        assert (read.start_ns, read.end_ns) == (0, 0)
        assert read.attributes == {"big": 0, "low": 0, "top": (1 << 64) - 1}


def test_resources_of_a_first_line_as_decode_reads_them(tmp_path: Path) -> None:
    """The resources grouping reads from a first line, records skipped, are those of the
    line decoded whole, for each signal; a line it cannot read so gives None."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "train"}}]}
    for key, signal in decode.REQUEST_KEYS.items():
        line = json.dumps({key: [{"resource": resource, "x": [1, {"y": None}]}]}).encode()
        assert canonical.resources_of(line) == (signal, [resource])
    for line in (b"[1]", b'{"resourceSpans": [1]}', b'{"resourceSpans": 5}', b"{", b""):
        assert canonical.resources_of(line) is None
    assert canonical.resources_of(b'{"other": 1}') is None


def test_a_resource_that_cannot_be_read_leaves_the_line_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line whose resource fails to decode is one unreadable line, by either path, and
    its spans are never given the previous line's process (nor are a later line's with
    the same resource)."""
    original = decode.process_of

    def process_of(resource: object, path: str) -> Process:
        if "B" in json.dumps(resource):
            raise RecursionError
        return original(resource, path)

    monkeypatch.setattr(decode, "process_of", process_of)
    lines = []
    for service in ("A", "B", "B"):
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
        span = {"name": f"span of {service}"}
        request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
        lines.append(json.dumps(request) + "\n")
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(lines))
    for fast in (True, False):
        monkeypatch.setattr(read_module, "CANONICAL_MISSES", 1 << 30 if fast else 0)
        telemetry = load_telemetry([path])
        assert [(span.name, span.process.label) for span in telemetry.spans] == [("span of A", "A")]
        assert (telemetry.files[0].spans, telemetry.files[0].bad_lines) == (1, 2)
        assert [str(problem) for problem in telemetry.problems] == [
            f"{path}:2: unreadable record (RecursionError)",
            f"{path}:3: unreadable record (RecursionError)",
        ]


def test_resources_equal_in_value_but_not_in_text_are_each_decoded(tmp_path: Path) -> None:
    """Lines whose service names are 1, 1.0 and true (equal as Python values) each get the
    process their own resource names, as each line read alone does."""
    lines = []
    for value in (1, 1.0, True, 1):
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": value}}]}
        request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [{}]}]}]}
        lines.append(json.dumps(request) + "\n")
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(lines))
    assert [span.process.label for span in load_telemetry([path]).spans] == [
        "1",
        "1.0",
        "True",
        "1",
    ]


def _line_of_spans(attribute_lists: list[list[dict[str, Any]]]) -> bytes:
    """One traces line: a span per attribute list."""
    spans = [
        {"name": f"s{index}", "attributes": items} for index, items in enumerate(attribute_lists)
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def test_an_attribute_repeated_across_spans_is_decoded_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same KeyValue text on many spans is decoded the first time only, and every span
    reads it the same."""
    monkeypatch.setattr(canonical, "_KEY_VALUES", canonical._Decodings())
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", canonical._Decodings())
    decoded: list[bytes] = []
    original = canonical._key_value

    def counting(text: bytes) -> tuple[str, Any]:
        decoded.append(text)
        return original(text)

    monkeypatch.setattr(canonical, "_key_value", counting)
    phase = {"key": "torch.compile.phase.name", "value": {"stringValue": "backend_compile"}}
    ops = {"key": "torch.compile.graph.op_count", "value": {"intValue": "12"}}
    line = _line_of_spans([[phase, ops]] * 50)
    spans = canonical.trace_spans(line, lambda resource: PROCESS)
    assert spans is not None and len(spans) == 50
    assert len(decoded) == 2
    assert {repr(span.attributes) for span in spans} == {
        repr({"torch.compile.phase.name": "backend_compile", "torch.compile.graph.op_count": 12})
    }


def test_each_span_gets_an_array_value_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """An array attribute repeated across spans is an equal list on each, never one list
    shared (a reader changing one span's list leaves the others as read)."""
    monkeypatch.setattr(canonical, "_KEY_VALUES", canonical._Decodings())
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", canonical._Decodings())
    ops = {
        "key": "torch.compile.graph.ops",
        "value": {"arrayValue": {"values": [{"stringValue": "aten.mm=2"}, {"intValue": "3"}]}},
    }
    spans = canonical.trace_spans(_line_of_spans([[ops]] * 3), lambda resource: PROCESS)
    assert spans is not None
    lists = [span.attributes["torch.compile.graph.ops"] for span in spans]
    assert all(type(value) is list and value == ["aten.mm=2", 3] for value in lists)
    assert len({id(value) for value in lists}) == 3


def test_kept_attributes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoded attributes are kept up to KEY_VALUES_KEPT_BYTES of text at a time, and none
    whose text is longer than KEY_VALUE_KEPT_BYTES: distinct or long values never grow
    memory; what is read stays right when they are let go."""
    kept: canonical._Decodings[Any] = canonical._Decodings()
    monkeypatch.setattr(canonical, "_KEY_VALUES", kept)
    monkeypatch.setattr(canonical, "KEY_VALUES_KEPT_BYTES", 200)
    monkeypatch.setattr(canonical, "KEPT_ENTRY_BYTES", 5)
    sizes = []
    for index in range(40):
        item = {"key": "k", "value": {"stringValue": f"v{index % 12}"}}
        long_item = {"key": "long", "value": {"stringValue": "x" * canonical.KEY_VALUE_KEPT_BYTES}}
        spans = canonical.trace_spans(_line_of_spans([[item, long_item]]), lambda r: PROCESS)
        assert spans is not None and spans[0].attributes["k"] == f"v{index % 12}"
        sizes.append((kept.size, sum(map(len, kept.by_text)), len(kept.by_text)))
    assert all(size == counted + 5 * count <= 200 for size, counted, count in sizes)
    counts = [count for _, _, count in sizes]
    assert max(counts) == 200 // (45 + 5) and counts.count(1) > 1  # let go of, kept again


def test_a_repeated_attribute_list_is_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same KeyValue list on many spans (a phase's span, compile after compile) is
    decoded the first time only, and each span gets a dict of its own that reads the
    same, its arrays lists of their own."""
    monkeypatch.setattr(canonical, "_KEY_VALUES", canonical._Decodings())
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", canonical._Decodings())
    decoded: list[int] = []
    original = canonical._key_values

    def counting(items: list[Any]) -> Any:
        decoded.append(len(items))
        return original(items)

    monkeypatch.setattr(canonical, "_key_values", counting)
    phase = {"key": "torch.compile.phase.name", "value": {"stringValue": "backend_compile"}}
    ops = {
        "key": "torch.compile.graph.ops",
        "value": {"arrayValue": {"values": [{"stringValue": "aten.mm=2"}, {"intValue": "3"}]}},
    }
    spans = canonical.trace_spans(_line_of_spans([[phase, ops]] * 4), lambda r: PROCESS)
    assert spans is not None and decoded == [2]
    expected = {
        "torch.compile.phase.name": "backend_compile",
        "torch.compile.graph.ops": ["aten.mm=2", 3],
    }
    assert [span.attributes for span in spans] == [expected] * 4
    assert len({id(span.attributes) for span in spans}) == 4
    assert len({id(span.attributes["torch.compile.graph.ops"]) for span in spans}) == 4


def test_an_attribute_list_holding_a_map_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyValue list with a map value (which a reader could change inside) is decoded
    for each span, never kept."""
    kept: canonical._Decodings[Any] = canonical._Decodings()
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", kept)
    kvlist = {
        "key": "m",
        "value": {"kvlistValue": {"values": [{"key": "a", "value": {"intValue": "1"}}]}},
    }
    spans = canonical.trace_spans(_line_of_spans([[kvlist]] * 2), lambda r: PROCESS)
    assert spans is not None and [span.attributes for span in spans] == [{"m": {"a": 1}}] * 2
    assert spans[0].attributes["m"] is not spans[1].attributes["m"]
    assert kept.by_text == {}


def test_kept_attribute_lists_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole KeyValue lists are kept up to KEY_VALUES_KEPT_BYTES of text at a time, none
    longer than KEY_VALUE_KEPT_BYTES; what is read stays right when they are let go."""
    kept: canonical._Decodings[Any] = canonical._Decodings()
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", kept)
    monkeypatch.setattr(canonical, "KEY_VALUES_KEPT_BYTES", 300)
    monkeypatch.setattr(canonical, "KEPT_ENTRY_BYTES", 10)
    long_item = {"key": "long", "value": {"stringValue": "x" * canonical.KEY_VALUE_KEPT_BYTES}}
    spans = canonical.trace_spans(_line_of_spans([[long_item]]), lambda r: PROCESS)
    assert spans is not None and kept.by_text == {}
    for index in range(40):
        item = {"key": "k", "value": {"stringValue": f"v{index % 12}"}}
        spans = canonical.trace_spans(_line_of_spans([[item]]), lambda r: PROCESS)
        assert spans is not None and spans[0].attributes == {"k": f"v{index % 12}"}
        assert kept.size == sum(len(text) + 10 for text in kept.by_text) <= 300
    assert 1 <= len(kept.by_text) < 12


def test_many_tiny_attribute_lists_are_kept_as_their_memory_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Distinct tiny lists fill the kept lists' budget by KEPT_ENTRY_BYTES each, not by
    their few bytes of text: at most KEY_VALUES_KEPT_BYTES // KEPT_ENTRY_BYTES are kept."""
    kept: canonical._Decodings[Any] = canonical._Decodings()
    monkeypatch.setattr(canonical, "_ATTRIBUTE_LISTS", kept)
    monkeypatch.setattr(canonical, "KEY_VALUES_KEPT_BYTES", 100 * canonical.KEPT_ENTRY_BYTES)
    lists = [[{"key": f"k{index}"}] for index in range(500)]
    spans = canonical.trace_spans(_line_of_spans(lists), lambda r: PROCESS)
    assert spans is not None and spans[499].attributes == {"k499": None}
    assert 0 < len(kept.by_text) < 100
