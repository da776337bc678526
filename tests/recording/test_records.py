"""One typed record per compile and run: each writer reads the record, none reads another
writer's attributes back."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from otel_dynamo import names
from otel_dynamo._recording import log_events, metrics
from otel_dynamo._recording.frame_state import FrameState
from otel_dynamo._recording.records import FrameCompiled, GraphIdentity, RunIdentity
from otel_dynamo._recording.stream_events import FrameEnded, GraphBreakReported

WRITERS = (Path(metrics.__file__), Path(log_events.__file__))
"""The metrics and log-event writers: they read records, never attribute dicts."""


def _attribute_reads(source: str, name: str) -> list[str]:
    """``name:line: code`` of each read of a ``names.ATTR_*`` key out of a mapping in
    ``source`` (``x.get(names.ATTR_...)`` or ``x[names.ATTR_...]`` read, not written)."""

    def is_attribute_key(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr.startswith("ATTR_")

    found = []
    for node in ast.walk(ast.parse(source)):
        getter = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and bool(node.args)
            and is_attribute_key(node.args[0])
        )
        subscript = (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and is_attribute_key(node.slice)
        )
        if getter or subscript:
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_metrics_and_log_events_read_no_attribute_dict():
    """No ``names.ATTR_*`` key is read out of a mapping in metrics.py or log_events.py."""
    reads = [
        read
        for path in WRITERS
        for read in _attribute_reads(path.read_text(encoding="utf-8"), path.name)
    ]
    assert reads == []


def test_the_check_finds_a_read_back_and_ignores_a_write():
    """The check above can fail: it finds ``.get`` and ``[...]`` reads, not writes."""
    source = (
        "def f(attributes, fields):\n"
        "    fields[names.ATTR_OUTCOME] = 'success'\n"
        "    return attributes.get(names.ATTR_BACKEND), attributes[names.ATTR_COMPILE_ID]\n"
    )
    assert _attribute_reads(source, "probe") == [
        "probe:3: attributes.get(names.ATTR_BACKEND)",
        "probe:3: attributes[names.ATTR_COMPILE_ID]",
    ]


def test_a_graph_identity_names_only_what_is_known_in_a_fixed_order():
    """GraphIdentity.fields(): compile id, backend, index, op count, node count, those
    not None, in that order, with their types."""
    full = GraphIdentity("1/0", "inductor", 2, 7, 11).fields()
    assert list(full.items()) == [
        (names.ATTR_COMPILE_ID, "1/0"),
        (names.ATTR_BACKEND, "inductor"),
        (names.ATTR_GRAPH_INDEX, 2),
        (names.ATTR_GRAPH_OP_COUNT, 7),
        (names.ATTR_GRAPH_NODE_COUNT, 11),
    ]
    assert GraphIdentity("0/0").fields() == {names.ATTR_COMPILE_ID: "0/0"}


def test_a_run_identity_gives_its_run_spans_attributes():
    """A graph's run: compile id, backend, kind, AOT graph name; an exported program's
    run: kind and module class, no compile id."""
    graph_run = RunIdentity(names.RUN_KIND_FORWARD, GraphIdentity("0/1", "eager"), "fw_0")
    assert graph_run.attributes() == {
        names.ATTR_COMPILE_ID: "0/1",
        names.ATTR_BACKEND: "eager",
        names.ATTR_RUN_KIND: names.RUN_KIND_FORWARD,
        names.ATTR_AOT_GRAPH_NAME: "fw_0",
    }
    assert (graph_run.compile_id, graph_run.backend) == ("0/1", "eager")
    exported = RunIdentity(names.RUN_KIND_EXPORT, module_class="pkg.Net")
    assert exported.attributes() == {
        names.ATTR_RUN_KIND: names.RUN_KIND_EXPORT,
        names.ATTR_EXPORT_MODULE_CLASS: "pkg.Net",
    }
    assert (exported.compile_id, exported.backend) == ("", None)


def test_a_frame_record_is_a_frozen_copy_of_its_frame_state():
    """FrameCompiled.of copies what the frame's state held when it ended: a later change
    to the state does not reach the record, and the record cannot be changed."""
    state = FrameState("0/0", graph_count=1, guards=("a",))
    state.breaks.append(GraphBreakReported("0/0", "print", "", (), skipped_frame=False))
    state.backends.add("eager")
    state.cache_lookups[(names.CACHE_INDUCTOR_FX, names.CACHE_HIT)] += 1
    record = FrameCompiled.of(
        state,
        FrameEnded("0/0", 1),
        outcome=names.OUTCOME_SUCCESS,
        backend="eager",
        duration_s=0.1,
        time_split={},
        recompile_reason=None,
    )
    state.graph_count += 1
    state.breaks.append(GraphBreakReported("0/0", "input", "", (), skipped_frame=False))
    state.cache_lookups[(names.CACHE_INDUCTOR_FX, names.CACHE_HIT)] += 1
    assert (record.graph_count, len(record.breaks), record.guards) == (1, 1, ("a",))
    assert record.cache_counts == {names.ATTR_CACHE_FX_HITS: 1}
    assert record.graphs_backend is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.graph_count = 5  # type: ignore[misc]


ALLOWED_ANY_BAGS = re.compile(
    r"(kwargs|\bkw|\bmetrics|\bconfig|options|_inductor_wrappers)\b|Wrapper =|MetadataFn ="
)
"""Where torch hands otel_dynamo its own mappings: a call's keyword arguments, its
compilation metrics, its config and options, a metadata function's result."""


def test_attribute_bags_between_our_parts_are_typed():
    """In _sources and _recording a ``dict[str, Any]`` or ``Mapping[str, Any]`` is only
    one torch hands over; our own bags are OpenTelemetry ``AttributeValue`` mappings."""
    root = Path(log_events.__file__).resolve().parents[1]
    untyped = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for folder in ("_sources", "_recording")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(dict|Mapping)\[str, Any\]", line) and not ALLOWED_ANY_BAGS.search(line)
    ]
    assert untyped == []
