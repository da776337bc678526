"""Metrics otel_dynamo emits that no dashboard shows, each with the reason.

tests/stack/test_stack_dashboards.py fails when a METRIC_* constant of names.py is neither used
by a dashboard query nor listed here.
"""

from __future__ import annotations

NOT_SHOWN: dict[str, str] = {}
