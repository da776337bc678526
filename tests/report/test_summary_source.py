"""The ``source`` of a run read from Jaeger says which counts the shipped tail sampling
keeps whole: each of them must be kept by a policy of collector-config/gateway.yaml."""

from __future__ import annotations

from pathlib import Path

import yaml

from otel_dynamo import names
from otel_dynamo.report.summary.schema import TOTAL_KEYS
from otel_dynamo.report.summary.source import SAMPLING_KEPT

GATEWAY = Path(__file__).resolve().parents[2] / "collector-config" / "gateway.yaml"


def _policies() -> dict[str, dict[str, object]]:
    config = yaml.safe_load(GATEWAY.read_text(encoding="utf-8"))
    policies = config["processors"]["tail_sampling"]["policies"]
    return {policy["name"]: policy for policy in policies}


def test_every_complete_count_is_a_total_kept_by_a_shipped_policy() -> None:
    """Each total called complete is a total, and the policy said to keep it is in the
    gateway's tail sampling."""
    policies = _policies()
    assert set(SAMPLING_KEPT) <= set(TOTAL_KEYS)
    assert {policy for policy in SAMPLING_KEPT.values() if policy not in policies} == set()


def test_the_keeping_policies_test_what_otel_dynamo_writes() -> None:
    """The policies keep errors and the spans carrying otel_dynamo's own names for a
    fault, a graph break and a recompile."""
    policies = _policies()
    assert policies["keep-errors"]["status_code"] == {"status_codes": ["ERROR"]}
    assert names.ATTR_FAULT_KIND in str(policies["keep-faults"])
    assert policies["keep-graph-breaks"]["numeric_attribute"]["key"] == (
        names.ATTR_GRAPH_BREAK_COUNT
    )
    assert names.ATTR_RECOMPILE_REASON in str(policies["keep-recompiles"])
