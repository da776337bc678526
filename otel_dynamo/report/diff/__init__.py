"""Diff: what changed between two runs' summaries (``compare``), the CI gate over it
(``gate``), and the diff as terminal text or one HTML page (``terminal``, ``html``).

Keys of the diff are documented in docs/diff-json.md.
"""

from __future__ import annotations

from otel_dynamo.report.diff.compare import (
    DEFAULT_MIN_CHANGE,
    DIFF_SCHEMA_VERSION,
    MIN_CHANGE_FORMAT,
    MinChange,
    diff_summaries,
    occurrences,
)
from otel_dynamo.report.diff.gate import Condition
from otel_dynamo.report.diff.html import render_diff_html
from otel_dynamo.report.diff.schema import Diff, Verdict
from otel_dynamo.report.diff.terminal import render_diff

__all__ = [
    "DEFAULT_MIN_CHANGE",
    "DIFF_SCHEMA_VERSION",
    "MIN_CHANGE_FORMAT",
    "Condition",
    "Diff",
    "MinChange",
    "Verdict",
    "diff_summaries",
    "occurrences",
    "render_diff",
    "render_diff_html",
]
