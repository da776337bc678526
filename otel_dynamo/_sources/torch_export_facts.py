"""Attributes that describe a torch.export call, its ExportedProgram and its errors.

Only read here: the program, its graph signature and the exception are never changed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._recording.boundary import class_name
from otel_dynamo._sources.graph_facts import target_name, top_ops

_EXPORT_ERROR_CODE = re.compile(r"^\[ExportErrorType\.(\w+)\]")

# Graph-signature kinds, by torch.export.graph_signature InputKind / OutputKind name.
_INPUT_KINDS = {
    "PARAMETER": names.ATTR_EXPORT_PARAMETER_COUNT,
    "BUFFER": names.ATTR_EXPORT_BUFFER_COUNT,
    "CONSTANT_TENSOR": names.ATTR_EXPORT_CONSTANT_COUNT,
    "CUSTOM_OBJ": names.ATTR_EXPORT_CONSTANT_COUNT,
    "USER_INPUT": names.ATTR_EXPORT_USER_INPUT_COUNT,
}
_OUTPUT_KINDS = {
    "USER_OUTPUT": names.ATTR_EXPORT_USER_OUTPUT_COUNT,
    "BUFFER_MUTATION": names.ATTR_EXPORT_BUFFER_MUTATION_COUNT,
    "USER_INPUT_MUTATION": names.ATTR_EXPORT_USER_INPUT_MUTATION_COUNT,
}


def call_attributes(mod: Any, *, strict: bool, dynamic_shapes: Any) -> dict[str, AttributeValue]:
    """What is known before exporting: the module's class, strict mode, dynamic shapes."""
    return {
        names.ATTR_EXPORT_MODULE_CLASS: class_name(mod),
        names.ATTR_EXPORT_STRICT: bool(strict),
        names.ATTR_EXPORT_DYNAMIC_SHAPES: dynamic_shapes is not None,
    }


def aten_op_counts(program: Any) -> Counter[str]:
    """How many times each op target appears among the graph's call_function nodes."""
    nodes = program.graph_module.graph.nodes
    return Counter(target_name(node) for node in nodes if node.op == "call_function")


def signature_counts(program: Any) -> dict[str, int]:
    """The graph signature summarised: inputs and outputs counted by kind."""
    counts = dict.fromkeys([*_INPUT_KINDS.values(), *_OUTPUT_KINDS.values()], 0)
    signature = program.graph_signature
    for spec in signature.input_specs:
        key = _INPUT_KINDS.get(spec.kind.name)
        if key is not None:
            counts[key] += 1
    for spec in signature.output_specs:
        key = _OUTPUT_KINDS.get(spec.kind.name)
        if key is not None:
            counts[key] += 1
    return counts


def program_attributes(program: Any, *, top: int) -> dict[str, AttributeValue]:
    """Op count, node count, top ops, the signature summary and range constraints."""
    counts = aten_op_counts(program)
    return {
        names.ATTR_EXPORT_OP_COUNT: sum(counts.values()),
        names.ATTR_EXPORT_NODE_COUNT: len(program.graph_module.graph.nodes),
        names.ATTR_EXPORT_OPS: top_ops(counts, top),
        **signature_counts(program),
        names.ATTR_EXPORT_RANGE_CONSTRAINT_COUNT: len(program.range_constraints),
    }


def op_changes(before: Counter[str], after: Counter[str]) -> tuple[list[str], list[str]]:
    """("target=+n" added, "target=-n" removed), largest change first, then by name."""
    added = sorted((after - before).items(), key=lambda item: (-item[1], item[0]))
    removed = sorted((before - after).items(), key=lambda item: (-item[1], item[0]))
    return [f"{t}=+{n}" for t, n in added], [f"{t}=-{n}" for t, n in removed]


def decomposition_attributes(
    before: Counter[str], after: Counter[str], *, max_items: int
) -> dict[str, AttributeValue]:
    added, removed = op_changes(before, after)
    return {
        names.ATTR_EXPORT_DECOMP_OP_COUNT_BEFORE: sum(before.values()),
        names.ATTR_EXPORT_DECOMP_OP_COUNT_AFTER: sum(after.values()),
        names.ATTR_EXPORT_DECOMP_OPS_ADDED: added[:max_items],
        names.ATTR_EXPORT_DECOMP_OPS_REMOVED: removed[:max_items],
    }


def table_attributes(decomp_table: Mapping[Any, Any] | None) -> dict[str, AttributeValue]:
    """Size of the table run_decompositions uses, and whether it is torch's default."""
    if decomp_table is None:
        from torch.export import default_decompositions

        return {
            names.ATTR_EXPORT_DECOMP_TABLE_SIZE: len(default_decompositions()),
            names.ATTR_EXPORT_DECOMP_DEFAULT_TABLE: True,
        }
    return {
        names.ATTR_EXPORT_DECOMP_TABLE_SIZE: len(decomp_table),
        names.ATTR_EXPORT_DECOMP_DEFAULT_TABLE: False,
    }


def error_kind(exc: BaseException) -> str | None:
    """torch's own kind of an export error, when it states one."""
    user_type = getattr(exc, "error_type", None)
    if user_type is not None and hasattr(user_type, "name"):
        return str(user_type.name)  # torch._dynamo.exc.UserError: a UserErrorType
    found = _EXPORT_ERROR_CODE.match(str(exc))
    if found:
        return found.group(1)  # torch._export.error.ExportError: "[ExportErrorType.X]: ..."
    return graph_break_type(exc)  # torch._dynamo.exc.Unsupported (strict mode)


_EXPLANATION = "  Explanation: "


def graph_break_type(exc: BaseException) -> str | None:
    """The graph-break type of a ``torch._dynamo.exc.Unsupported``.

    torch 2.12 on states it as ``gb_type``. Before (2.8.0 ``exc.py:154``, 2.10.0) the
    attribute is absent, but a typed break's message opens with the type, then a line
    starting "  Explanation: " (``format_graph_break_message``); an untyped one has no
    such line and no type.
    """
    gb_type = getattr(exc, "gb_type", None)
    if gb_type:
        return str(gb_type)
    from torch._dynamo.exc import Unsupported

    if not isinstance(exc, Unsupported):
        return None
    first, _, rest = str(exc).partition("\n")
    return first.strip() or None if rest.startswith(_EXPLANATION) else None


def error_case(exc: BaseException) -> str | None:
    """The exportdb case torch classifies the error as (None: torch leaves it unclassified)."""
    if not isinstance(exc, Exception):
        return None
    from torch._export.db.logging import get_class_if_classified_error

    return get_class_if_classified_error(exc)


def error_attributes(exc: BaseException, *, limit: int) -> dict[str, AttributeValue]:
    """Message, kind and torch's classification of an export error."""
    attributes: dict[str, AttributeValue] = {
        names.ATTR_EXPORT_ERROR_MESSAGE: str(exc).strip().split("\n", 1)[0][:limit],
    }
    kind = error_kind(exc)
    if kind:
        attributes[names.ATTR_EXPORT_ERROR_KIND] = kind
    case = error_case(exc)
    attributes[names.ATTR_EXPORT_ERROR_CLASSIFIED] = case is not None
    if case is not None:
        attributes[names.ATTR_EXPORT_ERROR_CASE] = str(case)
    return attributes
