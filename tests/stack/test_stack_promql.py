"""Dashboard PromQL: valid for promtool, and returning data from a real Prometheus scrape.

The scraped process is tests/data/stack/traced_job.py: a real torch.compile job, traced
through OTEL_DYNAMO_ENABLED, serving its metrics on OTEL_DYNAMO_PROMETHEUS_PORT, with a
graph break, recompiles, a compile failure, a run failure and an injected fault.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import _stack_support as support
import pytest
import yaml
from dashgen import recorded
from dashgen.queries import Query, render

from otel_dynamo import names

JOB = "otel-dynamo-stack-test"
VARIABLES = {"job": JOB, "backend": ".*", "run_id": ".*"}
_LABEL_VALUES = re.compile(r"^label_values\((?:(.+),\s*)?([A-Za-z_][A-Za-z0-9_]*)\)$")


def _promql() -> list[Query]:
    return [
        q
        for q in support.all_queries()
        if q.kind == "prometheus" and not q.text.startswith("label_values(")
    ]


def _rules_file(path: Path, expressions: list[str]) -> Path:
    rules = [
        {"record": f"otel_dynamo:dashboard_check:{i}", "expr": e} for i, e in enumerate(expressions)
    ]
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}), "utf-8")
    return path


@pytest.fixture
def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    return binary


def _check_rules(promtool: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_dashboard_promql_passes_promtool(promtool: str, tmp_path: Path) -> None:
    """Every dashboard PromQL expression, variables filled in, passes promtool check rules."""
    expressions = [render(q.text, VARIABLES) for q in _promql()]
    result = _check_rules(promtool, _rules_file(tmp_path / "rules.yml", expressions))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(expressions)} rules found" in result.stdout


def test_promtool_rejects_a_broken_expression(promtool: str, tmp_path: Path) -> None:
    """promtool check rules fails on an expression with unbalanced parentheses."""
    result = _check_rules(promtool, _rules_file(tmp_path / "rules.yml", ["sum(rate(x[1m])"]))
    assert result.returncode == 1 and "FAILED" in result.stdout + result.stderr


def test_shipped_prometheus_config_passes_promtool(promtool: str) -> None:
    """collector-config/stack/prometheus.yml passes promtool check config."""
    result = subprocess.run(
        [promtool, "check", "config", str(support.COLLECTOR / "stack" / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_rendering_an_unknown_variable_fails() -> None:
    """Filling in a query that uses a variable the test does not define raises KeyError."""
    with pytest.raises(KeyError, match="rank"):
        render('x{a="$rank"}', VARIABLES)


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[support.Prometheus]:
    """A real Prometheus that scrapes a real process recording otel_dynamo's metrics."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (Debian: apt-get install prometheus)")
    port = support.free_port()
    with (
        support.running_traced_job(port, tmp_path_factory.mktemp("job")),
        support.running_prometheus(
            tmp_path_factory.mktemp("prometheus"), JOB, f"127.0.0.1:{port}"
        ) as server,
    ):
        support.wait_until(server.targets_up, 30)
        yield server


def _has_data(server: support.Prometheus, expr: str) -> bool:
    values = [float(r["value"][1]) for r in server.query(expr)]
    return any(not math.isnan(v) for v in values)


CUDA_ONLY_METRICS = ("METRIC_RUN_DEVICE_DURATION", "METRIC_RUN_DEVICE_DROPPED")
"""Recorded only for graphs on a CUDA device: no data from the CPU job scraped here."""


def _cuda_only_series() -> list[str]:
    """Prometheus names of the CUDA-only metrics (their series share this prefix)."""
    return [getattr(names, constant).replace(".", "_") for constant in CUDA_ONLY_METRICS]


def _reads_recording_rules(query: Query) -> bool:
    """Queries of series the shipped recording rules write from torchrun ranks: the
    Prometheus here loads no rules and scrapes one process without a rank, so they have
    no data; tests/stack/test_stack_alerts.py runs them over 8 ranks' series instead."""
    return any(name in query.text for name in recorded.SERIES)


@pytest.mark.slow
def test_every_dashboard_promql_returns_data(scraped: support.Prometheus) -> None:
    """Each dashboard PromQL expression returns a non-NaN sample from the scraped run."""
    pending = {
        render(q.text, VARIABLES): f"{q.dashboard}: {q.where}"
        for q in _promql()
        if not any(metric in q.text for metric in _cuda_only_series())
        and not _reads_recording_rules(q)
    }
    deadline = time.monotonic() + 45
    while pending and time.monotonic() < deadline:
        pending = {e: w for e, w in pending.items() if not _has_data(scraped, e)}
        time.sleep(0.5 if pending else 0)
    assert sorted(pending.values()) == []


@pytest.mark.slow
def test_every_variable_query_finds_values(scraped: support.Prometheus) -> None:
    """Each label_values(...) template variable finds at least one value (or the empty one)."""
    found = {}
    for q in support.all_queries():
        match = _LABEL_VALUES.match(q.text) if q.kind == "prometheus" else None
        if match:
            selector, label = render(match.group(1) or "", VARIABLES), match.group(2)
            found[q.where] = support.wait_until(
                lambda s=selector, lbl=label: scraped.query(f"count by ({lbl}) ({s})"), 30
            )
    assert found and all(found.values())


@pytest.mark.slow
def test_prometheus_harness_reports_query_errors(scraped: support.Prometheus) -> None:
    """A malformed query sent to the running Prometheus raises ValueError with its message."""
    with pytest.raises(ValueError, match="parse error"):
        scraped.query("sum(rate(x[1m])")


def test_range_totals_count_a_series_born_inside_the_range(promtool: str, tmp_path: Path) -> None:
    """A dashboard total (promql.increase_sum) counts a series that began inside the time
    range from 0, though its first sample is already 3 (a process exports a counter only
    once it has counted something), and of an older series only its growth in the range;
    Prometheus's increase() alone undercounts the same series."""
    from dashgen import promql

    total = promql.increase_sum("METRIC_FAILURES", 'job="j"', window="10m")
    failures = promql.selector("METRIC_FAILURES", "").removesuffix("{}")
    rules = {"groups": [{"name": "t", "rules": [{"record": "total", "expr": total}]}]}
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    unit = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f'{failures}{{job="j", instance="old"}}', "values": "5x5 7x14"},
                    {"series": f'{failures}{{job="j", instance="new"}}', "values": "_x12 3x7"},
                ],
                "promql_expr_test": [
                    {
                        "expr": "total",
                        "eval_time": "4m",
                        "exp_samples": [{"labels": "total", "value": 5}],
                    },
                    {
                        "expr": "total",
                        "eval_time": "19m",
                        "exp_samples": [{"labels": "total", "value": 3}],
                    },
                    {
                        "expr": f'sum(increase({failures}{{job="j"}}[10m])) < 3',
                        "eval_time": "19m",
                        "exp_samples": [{"labels": "{}", "value": 0}],
                    },
                ],
            }
        ],
    }
    (tmp_path / "test.yml").write_text(yaml.safe_dump(unit), encoding="utf-8")
    result = support.run_promtool(promtool, "test", "rules", "test.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
