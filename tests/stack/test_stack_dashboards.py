"""Generated Grafana dashboards: current, well-formed, and using only otel_dynamo's names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import _stack_support as support
import jsonschema
import pytest
from dashgen import audit, build, not_shown, structure
from dashgen.queries import Query

EXPECTED_UIDS = {
    "otel-dynamo-overview.json": "otel-dynamo-overview",
    "otel-dynamo-job.json": "otel-dynamo-job",
    "otel-dynamo-compile.json": "otel-dynamo-compile",
}


def _titles(file: str) -> set[str]:
    return {p["title"] for p in support.dashboards()[file]["panels"]}


def test_committed_dashboards_equal_generator_output() -> None:
    """grafana/dashboards/*.json are exactly what grafana/generate.py produces now."""
    assert build.stale() == []


def test_edited_dashboard_is_reported_stale(tmp_path: Path) -> None:
    """A hand-edited committed dashboard is reported by name."""
    shutil.copytree(support.DASHBOARD_DIR, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "otel-dynamo-job.json"
    path.write_text(path.read_text("utf-8").replace("rank spread", "rank spreed"), "utf-8")
    assert build.stale(tmp_path) == ["otel-dynamo-job.json"]


def test_missing_and_extra_dashboards_are_reported(tmp_path: Path) -> None:
    """A missing generated file and an unexpected JSON file are both reported."""
    shutil.copytree(support.DASHBOARD_DIR, tmp_path, dirs_exist_ok=True)
    (tmp_path / "otel-dynamo-compile.json").unlink()
    (tmp_path / "hand-made.json").write_text("{}", "utf-8")
    assert build.stale(tmp_path) == ["hand-made.json", "otel-dynamo-compile.json"]


def test_dashboards_have_fixed_uids() -> None:
    """The three dashboards exist under fixed uids (links and provisioning rely on them)."""
    assert {f: m["uid"] for f, m in support.dashboards().items()} == EXPECTED_UIDS


def test_dashboards_match_the_dashboard_schema() -> None:
    """Each dashboard satisfies grafana/schema/dashboard.schema.json."""
    schema = json.loads((support.GRAFANA / "schema" / "dashboard.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = {
        f: [e.message for e in validator.iter_errors(m)] for f, m in support.dashboards().items()
    }
    assert errors == {f: [] for f in EXPECTED_UIDS}


def test_dashboard_schema_rejects_a_target_without_ref_id() -> None:
    """The dashboard schema rejects a panel target that lacks its refId."""
    schema = json.loads((support.GRAFANA / "schema" / "dashboard.schema.json").read_text())
    model = json.loads(json.dumps(support.dashboards()["otel-dynamo-job.json"]))
    del model["panels"][1]["targets"][0]["refId"]
    with pytest.raises(jsonschema.ValidationError, match="'refId' is a required property"):
        jsonschema.validate(model, schema)


def test_panel_ids_are_unique_per_dashboard() -> None:
    """No two panels of a dashboard share an id."""
    for model in support.dashboards().values():
        ids = [p["id"] for p in model["panels"]]
        assert len(ids) == len(set(ids)), model["title"]


def test_ref_ids_are_unique_per_panel() -> None:
    """Within a panel, every target has its own refId."""
    for model in support.dashboards().values():
        for panel in model["panels"]:
            refs = [t["refId"] for t in panel.get("targets", [])]
            assert len(refs) == len(set(refs)), panel["title"]


def test_overview_shows_what_the_issue_asks_for() -> None:
    """The overview has the compile, break, recompile, failure, guard, run and slow panels."""
    wanted = {
        "Compiles per minute by backend and outcome",
        "Compile time percentiles",
        "Top graph-break kinds",
        "Top graph-break reasons",
        "Top recompile reasons",
        "Failures by stage and error type",
        "Injected faults by kind",
        "Guards per frame compile",
        "Compiled-run latency",
        "Slowest compiles",
    }
    assert wanted <= _titles("otel-dynamo-overview.json")


def test_job_view_compares_ranks() -> None:
    """The per-job view groups by rank and shows the spread between ranks."""
    exprs = [q.text for q in support.all_queries() if q.dashboard.endswith("across ranks")]
    assert any("by (torch_distributed_rank)" in e for e in exprs)
    assert any(e.startswith("max(") and ") - min(" in e for e in exprs)


def test_drilldown_searches_with_traceql() -> None:
    """The compile drill-down runs TraceQL searches against the Tempo datasource."""
    model = support.dashboards()["otel-dynamo-compile.json"]
    types = [
        t.get("queryType")
        for p in model["panels"]
        for t in p.get("targets", [])
        if p["datasource"]["type"] == "tempo"
    ]
    assert types and set(types) == {"traceql"}


def test_every_query_uses_names_from_names_py() -> None:
    """Every PromQL, LogQL and TraceQL name in the dashboards derives from names.py."""
    assert audit.name_problems(support.all_queries()) == []


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        (
            "prometheus",
            "sum(rate(torch_compile_compile_total[5m]))",
            "PromQL name 'torch_compile_compile_total'",
        ),
        (
            "prometheus",
            'sum by (torch_compile_backends) (torch_compile_compiles_total{job="x"})',
            "PromQL name 'torch_compile_backends'",
        ),
        (
            "loki",
            '{service_name="x"} | torch_compile_reason="y"',
            "LogQL field 'torch_compile_reason'",
        ),
        (
            "loki",
            '{service_name="x"} |= "torch.compile.graphbreak"',
            "log event 'torch.compile.graphbreak'",
        ),
        (
            "tempo",
            '{ span.torch.compile.outcomes = "x" }',
            "TraceQL attribute 'span.torch.compile.outcomes'",
        ),
        ("tempo", '{ name = "torch.compile.frames" }', "span name 'torch.compile.frames'"),
    ],
)
def test_name_audit_rejects_unknown_names(kind: str, text: str, message: str) -> None:
    """A query naming something otel_dynamo does not emit is reported."""
    problems = audit.name_problems([Query("d", "panel 'p' ref A", kind, "u", text)])
    assert len(problems) == 1 and message in problems[0]


def test_every_emitted_metric_is_shown_or_listed() -> None:
    """Each METRIC_* of names.py is used by a dashboard or listed in not_shown.NOT_SHOWN."""
    assert audit.uncovered_metrics(support.all_queries(), not_shown.NOT_SHOWN) == []


def test_metric_without_a_panel_is_reported() -> None:
    """Dropping the only queries of the faults counter reports METRIC_FAULTS."""
    kept = [q for q in support.all_queries() if "torch_compile_faults_total" not in q.text]
    assert audit.uncovered_metrics(kept, not_shown.NOT_SHOWN) == ["METRIC_FAULTS"]


def test_not_shown_lists_only_unshown_metric_constants() -> None:
    """NOT_SHOWN names METRIC_* constants, each with a reason, none of them shown."""
    shown = set(not_shown.NOT_SHOWN) - set(audit.uncovered_metrics(support.all_queries(), {}))
    assert all(k.startswith("METRIC_") and v for k, v in not_shown.NOT_SHOWN.items())
    assert shown == set()


def test_loki_stream_selectors_never_match_everything() -> None:
    """With every variable at "All", each Loki stream selector still excludes "" (Loki's rule)."""
    assert {f: structure.stream_selector_problems(m) for f, m in support.dashboards().items()} == {
        f: [] for f in EXPECTED_UIDS
    }


def test_stream_selector_matching_everything_is_reported() -> None:
    """A selector {service_name=~"$job"} whose "All" value is .* is reported."""
    model = {
        "templating": {"list": [{"name": "job", "type": "query", "allValue": ".*"}]},
        "panels": [
            {
                "title": "logs",
                "datasource": {"type": "loki", "uid": "l"},
                "targets": [{"refId": "A", "expr": '{service_name=~"$job"}'}],
            }
        ],
    }
    assert structure.stream_selector_problems(model) == [
        "panel 'logs' ref A: stream selector {service_name=~\".*\"} matches everything"
    ]
