"""Summary: what the records say, as one typed, JSON-ready :class:`Summary`.

The second step of the report's flow: the terminal view, the HTML page, ``--json``, the
diff and the rank comparison all read the summary (shape in ``schema``, keys in
docs/report-json.md). ``explain`` gives ``torch._dynamo.explain``'s summary instead.
"""

from __future__ import annotations

from otel_dynamo.report.summary.build import (
    DEFAULT_RECOMPILE_LIMIT,
    DEFAULT_SLOWEST,
    HOT_VARIANT_SHARE,
    SCHEMA_VERSION,
    SummaryBuilder,
    summarize,
)
from otel_dynamo.report.summary.explain import BreakReason, ExplainSource, ExplainSummary, explain
from otel_dynamo.report.summary.runtime import compiled_run_seconds
from otel_dynamo.report.summary.schema import (
    COUNT_TOTALS,
    TIME_TOTALS,
    TOTAL_KEYS,
    CompileRow,
    ProcessSection,
    ProcessTotals,
    Summary,
    Totals,
)

__all__ = [
    "COUNT_TOTALS",
    "DEFAULT_RECOMPILE_LIMIT",
    "DEFAULT_SLOWEST",
    "HOT_VARIANT_SHARE",
    "SCHEMA_VERSION",
    "TIME_TOTALS",
    "TOTAL_KEYS",
    "BreakReason",
    "CompileRow",
    "ExplainSource",
    "ExplainSummary",
    "ProcessSection",
    "ProcessTotals",
    "Summary",
    "SummaryBuilder",
    "Totals",
    "compiled_run_seconds",
    "explain",
    "summarize",
]
