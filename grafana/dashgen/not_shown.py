"""Metrics otel_dynamo emits that no dashboard shows, each with the reason.

tests/stack/test_stack_dashboards.py fails when a METRIC_* constant of names.py is neither used
by a dashboard query nor listed here.
"""

from __future__ import annotations

NOT_SHOWN: dict[str, str] = {
    "METRIC_CACHE_ENTRIES": (
        "read by the recompile-limit alert (collector-config/stack/otel-dynamo-alerts.yml); "
        "the compile dashboard's recompile panels and the report's near-limit table show "
        "the code it fires for"
    ),
}
