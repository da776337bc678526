"""Attributes that describe an FX graph and its example inputs, computed at compile time."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.limits import ELLIPSIS
from otel_dynamo._recording.stream_events import GraphBreakReported

# Dynamo's compilation metrics count these node kinds as its graph_op_count.
DYNAMO_OP_KINDS = frozenset({"call_function", "call_method", "call_module"})


def target_name(node: Any) -> str:
    """A short, stable name for what a node calls (aten.relu.default, linear, fc1)."""
    target = node.target
    if node.op in ("call_method", "call_module"):
        return str(target)
    name = getattr(target, "__name__", None) or str(target)
    if str(target).startswith(("aten.", "prims.")):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    if module.startswith("torch") and not module.startswith("torch._ops"):
        return f"torch.{name}" if module == "torch" else name
    return name


def op_counts(nodes: Iterable[Any]) -> tuple[Counter[str], Counter[str]]:
    """How often each target appears among Dynamo's op kinds, and among call_function nodes.

    The first is Dynamo's own op count; the second is torch._dynamo.explain's, which
    counts call_function nodes only.
    """
    by_kind = Counter((node.op, target_name(node)) for node in nodes if node.op in DYNAMO_OP_KINDS)
    ops: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for (kind, target), count in by_kind.items():
        ops[target] += count
        if kind == "call_function":
            calls[target] += count
    return ops, calls


def top_ops(counts: Counter[str], limit: int) -> list[str]:
    """The most frequent targets as "target=count", most frequent first."""
    return [f"{target}={count}" for target, count in counts.most_common(limit)]


def all_ops(counts: Counter[str], max_items: int) -> list[str]:
    """Every target as "target=count"; past ``max_items`` the last item says how many more."""
    if len(counts) <= max_items:
        return top_ops(counts, len(counts))
    kept = top_ops(counts, max_items - 1)
    return [*kept, f"{ELLIPSIS} {len(counts) - len(kept)} more"]


def describe_input(value: Any) -> tuple[str, str, str] | None:
    """(shape, dtype, device) of a tensor input, None for anything else."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return None
    dims = ", ".join(str(dim) for dim in shape)
    return f"[{dims}]", str(dtype).removeprefix("torch."), str(getattr(value, "device", ""))


def input_devices(example_inputs: Iterable[Any]) -> frozenset[str]:
    """The device types (``cpu``, ``cuda``) of a graph's tensor inputs."""
    found = (getattr(getattr(value, "device", None), "type", None) for value in example_inputs)
    return frozenset(kind for kind in found if isinstance(kind, str))


def input_attributes(example_inputs: Sequence[Any], *, max_items: int) -> dict[str, AttributeValue]:
    """Input count, shapes (capped), distinct dtypes and devices."""
    described = [d for d in map(describe_input, example_inputs) if d is not None]
    return {
        names.ATTR_GRAPH_INPUT_COUNT: len(example_inputs),
        names.ATTR_GRAPH_INPUT_SHAPES: [shape for shape, _, _ in described][:max_items],
        names.ATTR_GRAPH_INPUT_DTYPES: sorted({dtype for _, dtype, _ in described}),
        names.ATTR_GRAPH_INPUT_DEVICES: sorted({device for _, _, device in described}),
    }


@dataclasses.dataclass(frozen=True)
class GraphShape:
    """What a graph holds: its nodes, and how often each op appears (Dynamo's op kinds,
    and call_function nodes only)."""

    node_count: int
    ops: Counter[str]
    calls: Counter[str]

    @property
    def op_count(self) -> int:
        return sum(self.ops.values())


def graph_shape(gm: Any) -> GraphShape:
    nodes = list(gm.graph.nodes)
    ops, calls = op_counts(nodes)
    return GraphShape(len(nodes), ops, calls)


def shape_attributes(shape: GraphShape, *, top: int, max_items: int) -> dict[str, AttributeValue]:
    """Op counts (Dynamo's and explain's definitions), node count and the ops themselves."""
    return {
        names.ATTR_GRAPH_OP_COUNT: shape.op_count,
        names.ATTR_GRAPH_NODE_COUNT: shape.node_count,
        names.ATTR_GRAPH_OPS: top_ops(shape.ops, top),
        names.ATTR_GRAPH_CALL_FUNCTION_COUNT: sum(shape.calls.values()),
        names.ATTR_GRAPH_CALL_FUNCTION_OPS: all_ops(shape.calls, max_items),
    }


def graph_break(gm: Any, compile_id: str) -> GraphBreakReported | None:
    """Why Dynamo ended this graph, when it ended in a graph break (its user stack
    innermost last); the recorder caps it like every other break."""
    reason = getattr(gm, "compile_subgraph_reason", None)
    if reason is None or not getattr(reason, "graph_break", False):
        return None
    stack = tuple(
        f"{frame.filename}:{frame.lineno} in {frame.name}" for frame in (reason.user_stack or ())
    )
    return GraphBreakReported(compile_id, str(reason.reason), "", stack, skipped_frame=False)


def node_count(gm: Any) -> int:
    return len(gm.graph.nodes)


def call_function_count(gm: Any) -> int:
    """ATen-level op count of an AOT graph (call_function nodes)."""
    return sum(1 for node in gm.graph.nodes if node.op == "call_function")
