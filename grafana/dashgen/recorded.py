"""Series the shipped recording rules write (collector-config/stack/otel-dynamo-alerts.yml).

Dashboards may read them like otel_dynamo's own series. tests/stack/test_stack_alerts.py
checks that the rule file records exactly these names, with these labels, from the
metrics named here; a renamed rule breaks that test, not silently a panel.
"""

from __future__ import annotations

RANK_COUNT = "job_run_rank:torch_compile_counted:sum"
"""Each rank's count since it started, by job, run id, rank and ``counted``."""

JOB_MEDIAN = "job_run:torch_compile_counted:median"
"""The job's median rank, by job, run id and ``counted``."""

RANK_MINUS_MEDIAN = "job_run_rank:torch_compile_counted:minus_median"
"""Each rank's count minus its job's median (0 while the ranks agree)."""

SERIES = frozenset({RANK_COUNT, JOB_MEDIAN, RANK_MINUS_MEDIAN})

COUNTED = "counted"
"""Label the rules add: what was counted."""

COUNTED_METRICS = {
    "frame_compiles": "METRIC_COMPILES",
    "recompiles": "METRIC_RECOMPILES",
    "graph_breaks": "METRIC_GRAPH_BREAKS",
}
"""Each value of ``counted`` and the METRIC_* constant it counts."""

LABELS = frozenset({COUNTED})
