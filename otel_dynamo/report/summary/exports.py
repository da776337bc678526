"""The ``torch_export`` section of a process: its torch.export calls, read from their spans.

``torch.export.export`` and ``ExportedProgram.run_decompositions`` calls each have a span
(docs/torch-export.md); runs of ``ExportedProgram.module()`` are run spans of kind
``export``, counted with the compiled runs in the section's ``runs`` (as the
``torch.compile.runs`` metric counts them) and here per exported module class. Failed
export calls are listed here, not among the compile failures. Schema in
docs/report-json.md.
"""

from __future__ import annotations

from otel_dynamo import names
from otel_dynamo.report.read.model import Span
from otel_dynamo.report.read.values import integer, seconds, strings, text
from otel_dynamo.report.summary.schema import (
    DecompositionRow,
    ExportFailureRow,
    ExportRow,
    ExportRunsRow,
    ExportSection,
    ExportTotals,
)

EXPORT_SPANS = frozenset({names.SPAN_EXPORT, names.SPAN_EXPORT_DECOMPOSITIONS})
"""Spans of export calls: their failures are export failures, not compile failures."""

_OPERATION_OF_SPAN = {
    names.SPAN_EXPORT: names.EXPORT_OPERATION_EXPORT,
    names.SPAN_EXPORT_DECOMPOSITIONS: names.EXPORT_OPERATION_DECOMPOSITIONS,
}


def section(spans: list[Span]) -> ExportSection:
    """The ``torch_export`` section of one process's spans, each list in start order."""
    ordered = sorted(spans, key=lambda span: span.start_ns)
    calls = [span for span in ordered if span.name in EXPORT_SPANS]
    return {
        "exports": [_export_row(span) for span in calls if span.name == names.SPAN_EXPORT],
        "decompositions": [
            _decomposition_row(span)
            for span in calls
            if span.name == names.SPAN_EXPORT_DECOMPOSITIONS
        ],
        "runs": _runs([span for span in ordered if span.name == names.SPAN_EXPORT_RUN]),
        "failures": [_failure_row(span) for span in calls if span.is_error],
    }


def totals(found: ExportSection) -> ExportTotals:
    """This section's part of a process's totals."""
    durations = (row["duration_s"] for row in (*found["exports"], *found["decompositions"]))
    return {
        "exports": len(found["exports"]),
        "export_failures": len(found["failures"]),
        "decompositions": len(found["decompositions"]),
        "export_seconds": round(float(sum(durations)), 6),
    }


def _outcome(span: Span) -> str:
    return names.OUTCOME_FAILURE if span.is_error else names.OUTCOME_SUCCESS


def _flag(span: Span, key: str) -> bool | None:
    value = span.attributes.get(key)
    if isinstance(value, bool):
        return value
    return None if value is None else str(value).lower() == "true"


def _error_type(span: Span) -> str | None:
    return text(span.attributes.get(names.ATTR_ERROR_TYPE)) if span.is_error else None


def _error_message(span: Span) -> str | None:
    if not span.is_error:
        return None
    return text(span.attributes.get(names.ATTR_EXPORT_ERROR_MESSAGE)) or span.status_message or None


def _export_row(span: Span) -> ExportRow:
    attrs = span.attributes
    return {
        "module_class": text(attrs.get(names.ATTR_EXPORT_MODULE_CLASS)),
        "strict": _flag(span, names.ATTR_EXPORT_STRICT),
        "dynamic_shapes": _flag(span, names.ATTR_EXPORT_DYNAMIC_SHAPES),
        "start_unix_nano": span.start_ns,
        "duration_s": seconds(span.duration_ns),
        "outcome": _outcome(span),
        "op_count": integer(attrs.get(names.ATTR_EXPORT_OP_COUNT)),
        "node_count": integer(attrs.get(names.ATTR_EXPORT_NODE_COUNT)),
        "parameter_count": integer(attrs.get(names.ATTR_EXPORT_PARAMETER_COUNT)),
        "buffer_count": integer(attrs.get(names.ATTR_EXPORT_BUFFER_COUNT)),
        "ops": strings(attrs.get(names.ATTR_EXPORT_OPS)),
        "error_type": _error_type(span),
        "error_message": _error_message(span),
        "error_kind": text(attrs.get(names.ATTR_EXPORT_ERROR_KIND)),
    }


def _decomposition_row(span: Span) -> DecompositionRow:
    attrs = span.attributes
    return {
        "module_class": text(attrs.get(names.ATTR_EXPORT_MODULE_CLASS)),
        "start_unix_nano": span.start_ns,
        "duration_s": seconds(span.duration_ns),
        "outcome": _outcome(span),
        "op_count_before": integer(attrs.get(names.ATTR_EXPORT_DECOMP_OP_COUNT_BEFORE)),
        "op_count_after": integer(attrs.get(names.ATTR_EXPORT_DECOMP_OP_COUNT_AFTER)),
        "ops_added": strings(attrs.get(names.ATTR_EXPORT_DECOMP_OPS_ADDED)),
        "ops_removed": strings(attrs.get(names.ATTR_EXPORT_DECOMP_OPS_REMOVED)),
        "default_table": _flag(span, names.ATTR_EXPORT_DECOMP_DEFAULT_TABLE),
        "error_type": _error_type(span),
        "error_message": _error_message(span),
    }


def _runs(runs: list[Span]) -> list[ExportRunsRow]:
    """Recorded runs per exported module class, in the order each class first ran."""
    rows: dict[str | None, ExportRunsRow] = {}
    durations: dict[str | None, int] = {}
    for span in runs:
        module_class = text(span.attributes.get(names.ATTR_EXPORT_MODULE_CLASS))
        row = rows.setdefault(
            module_class, {"module_class": module_class, "runs": 0, "failed": 0, "duration_s": 0.0}
        )
        row["runs"] += 1
        row["failed"] += 1 if span.is_error else 0
        durations[module_class] = durations.get(module_class, 0) + span.duration_ns
    for module_class, row in rows.items():
        row["duration_s"] = seconds(durations[module_class])
    return list(rows.values())


def _failure_row(span: Span) -> ExportFailureRow:
    attrs = span.attributes
    return {
        "operation": _OPERATION_OF_SPAN[span.name],
        "module_class": text(attrs.get(names.ATTR_EXPORT_MODULE_CLASS)),
        "strict": _flag(span, names.ATTR_EXPORT_STRICT),
        "error_type": _error_type(span),
        "error_message": _error_message(span),
        "error_kind": text(attrs.get(names.ATTR_EXPORT_ERROR_KIND)),
        "classified": _flag(span, names.ATTR_EXPORT_ERROR_CLASSIFIED),
        "case": text(attrs.get(names.ATTR_EXPORT_ERROR_CASE)),
    }
