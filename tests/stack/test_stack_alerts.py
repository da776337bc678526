"""The shipped Prometheus rules (collector-config/stack/otel-dynamo-alerts.yml): alerts and
the recording rules that compare ranks; valid, unit-tested with promtool, reading only
series otel_dynamo emits, loaded by the stack's Prometheus."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import _stack_support as support
import pytest
import yaml
from dashgen import catalog, promnames, recorded
from dashgen.queries import render

STACK = support.COLLECTOR / "stack"
RULES = STACK / "otel-dynamo-alerts.yml"
RULE_TESTS = STACK / "otel-dynamo-alerts.test.yml"
ALERTS = {
    "TorchCompileRecompileStorm",
    "TorchCompileAtRecompileLimit",
    "TorchCompileTimeRegression",
    "TorchCompileFailures",
    "TorchCompileFaultInjectionLeftOn",
    "TorchCompileCudagraphSkips",
    "TorchCompileRanksDiverge",
}
_SERIES = re.compile(r"\b((?:torch_compile|torch_export|torch_distributed)_[a-z_]+)\b")
_RECORDED = re.compile(r"\b[a-z_]+:[a-z_]+:[a-z_]+\b")
"""A recording rule's name (level:metric:operations); it may hold a torch_compile_ word."""
DIVERGING_PANEL = "panel 'Ranks diverging now'"


@pytest.fixture
def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    return binary


def _rules() -> list[dict]:
    """Every rule of every group: alerts (an "alert" key) and recording rules ("record")."""
    return [
        rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
    ]


def _rank_cases() -> str:
    """The unit tests file with only the cases over torchrun ranks (a few seconds less
    than all: the week of the compile-time case evaluates every rule 10,000 times)."""
    suite = yaml.safe_load(RULE_TESTS.read_text())
    suite["tests"] = [
        case
        for case in suite["tests"]
        if any("torch_distributed_rank" in s["series"] for s in case["input_series"])
    ]
    return yaml.safe_dump(suite)


def _mutated_rules_fail(
    promtool: str, tmp_path: Path, old: str, new: str, tests: str | None = None
) -> str:
    """promtool test rules (``tests``, else the whole unit tests file) over the rules with
    ``old`` replaced (once, asserted present) by ``new``; asserts that the unit tests fail
    and returns promtool's output."""
    text = RULES.read_text()
    assert text.count(old) == 1, old
    (tmp_path / RULES.name).write_text(text.replace(old, new))
    (tmp_path / RULE_TESTS.name).write_text(tests or RULE_TESTS.read_text())
    done = support.run_promtool(promtool, "test", "rules", RULE_TESTS.name, cwd=tmp_path)
    assert done.returncode != 0
    return done.stdout + done.stderr


def test_the_rules_are_the_seven_alerts_and_pass_promtool_check(promtool: str) -> None:
    """promtool check rules accepts the file, which holds exactly the seven alerts and
    the recording rules dashgen.recorded names."""
    done = support.run_promtool(promtool, "check", "rules", str(RULES), cwd=STACK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {rule["alert"] for rule in _rules() if "alert" in rule} == ALERTS
    assert {rule["record"] for rule in _rules() if "record" in rule} == recorded.SERIES


def test_promtool_unit_tests_pass(promtool: str) -> None:
    """promtool test rules: each alert fires for its case, at its time, with its labels and
    annotations, and stays quiet for the job beside it."""
    done = support.run_promtool(promtool, "test", "rules", RULE_TESTS.name, cwd=STACK)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_unit_tests_catch_a_changed_threshold(promtool: str, tmp_path: Path) -> None:
    """The same tests over rules whose regression factor is 4 instead of 1.5 fail: they
    pin the behaviour, not only the syntax."""
    output = _mutated_rules_fail(promtool, tmp_path, "> 1.5 *", "> 4 *")
    assert "TorchCompileTimeRegression" in output


def test_the_unit_tests_catch_a_shorter_divergence_for(promtool: str, tmp_path: Path) -> None:
    """TorchCompileRanksDiverge with a 3 minute `for` instead of 5 fails the tests: a
    rank briefly apart would page, and the firing time is pinned."""
    output = _mutated_rules_fail(promtool, tmp_path, "for: 5m", "for: 3m", _rank_cases())
    assert "TorchCompileRanksDiverge" in output


def test_the_unit_tests_catch_ranks_without_recompiles_left_out(
    promtool: str, tmp_path: Path
) -> None:
    """Without the explicit 0 for ranks that never recompiled (they export no recompile
    series), the rank that did is its own median and the tests fail."""
    zero = (
        "\n          or\n          sum by (job, torch_distributed_run_id, torch_distributed_rank)"
        '\n          (torch_compile_compiles_total{torch_distributed_rank!=""}) * 0'
        "\n        labels:\n          counted: recompiles"
    )
    kept = "\n        labels:\n          counted: recompiles"
    output = _mutated_rules_fail(promtool, tmp_path, zero, kept, _rank_cases())
    assert "TorchCompileRanksDiverge" in output


def test_every_series_and_label_a_rule_reads_is_one_otel_dynamo_emits() -> None:
    """Each torch_compile_* name in a rule expression is a series or a label derived from
    names.py, each torch_distributed_* name a resource label the Collector copies onto
    data points (a renamed metric or attribute breaks this test, not silently the rule).
    Names of recording rules, which other rules read, are set aside."""
    emitted = {s for spec in catalog.metric_specs() for s in promnames.all_series(spec)}
    labels = {promnames.label(value) for value in catalog.values("ATTR_", "RESOURCE_")}
    expressions = [_RECORDED.sub(" ", rule["expr"]) for rule in _rules()]
    read = {name for expr in expressions for name in _SERIES.findall(expr)}
    assert read & emitted and read <= emitted | labels, sorted(read - emitted - labels)


def test_every_recorded_series_a_rule_reads_is_recorded_before_it() -> None:
    """A recording rule or an alert (its expression or an annotation's query) reads only
    series recorded by a rule above it, as Prometheus evaluates a group in order."""
    recorded_so_far: set[str] = set()
    for rule in _rules():
        texts = [rule["expr"], *rule.get("annotations", {}).values()]
        read = {name for text in texts for name in _RECORDED.findall(text)}
        assert read <= recorded_so_far, (rule.get("alert") or rule["record"], read)
        recorded_so_far.update([rule["record"]] if "record" in rule else [])


def test_each_counted_value_counts_the_metric_dashgen_names() -> None:
    """The per-rank recording rules add `counted` with the values dashgen.recorded lists,
    each reading the series of its METRIC_* constant."""
    per_rank = [rule for rule in _rules() if rule.get("record") == recorded.RANK_COUNT]
    counted = {rule["labels"][recorded.COUNTED]: rule["expr"] for rule in per_rank}
    assert set(counted) == set(recorded.COUNTED_METRICS)
    for value, constant in recorded.COUNTED_METRICS.items():
        assert promnames.series(constant) in counted[value], value


def test_the_diverging_ranks_panel_lists_the_diverging_rank(promtool: str, tmp_path: Path) -> None:
    """The per-job dashboard's "Ranks diverging now" queries, over the unit tests' 8 ranks
    where rank 3 recompiled 9 times, give one row per diverging count of rank 3 only:
    its count, the job's median and their difference."""
    cases = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    eight_ranks = next(c for c in cases if 'job="train"' in c["input_series"][0]["series"])
    queries = {
        q.where: render(q.text, {"job": "train", "run_id": ".*"})
        for q in support.all_queries()
        if q.where.startswith(DIVERGING_PANEL)
    }
    rank3 = 'job="train",torch_distributed_run_id="r1",torch_distributed_rank="3"'
    expected = {"A": (11, 9), "B": (2, 0), "C": (9, 9)}
    checks = [
        {
            "expr": queries[f"{DIVERGING_PANEL} ref {ref}"],
            "eval_time": "10m",
            "exp_samples": [
                {"labels": f'{{counted="frame_compiles",{rank3}}}', "value": compiles},
                {"labels": f'{{counted="recompiles",{rank3}}}', "value": recompiles},
            ],
        }
        for ref, (compiles, recompiles) in expected.items()
    ]
    suite = {
        "rule_files": [str(RULES)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": eight_ranks["input_series"],
                "promql_expr_test": checks,
            }
        ],
    }
    (tmp_path / "panel.test.yml").write_text(yaml.safe_dump(suite))
    done = support.run_promtool(promtool, "test", "rules", "panel.test.yml", cwd=tmp_path)
    assert len(queries) == 3 and done.returncode == 0, done.stdout + done.stderr


def test_the_stack_prometheus_loads_the_rules() -> None:
    """stack/prometheus.yml names the rule file beside itself, and docker-compose mounts
    it beside the config (promtool check config resolves it, so does Prometheus)."""
    config = yaml.safe_load((STACK / "prometheus.yml").read_text())
    compose = yaml.safe_load(support.COMPOSE_FILE.read_text())
    mounted = compose["services"]["prometheus"]["volumes"]
    target = f"./stack/{RULES.name}:/etc/prometheus/{RULES.name}:ro"
    assert config["rule_files"] == [RULES.name] and target in mounted


def test_docs_name_every_alert_and_recording_rule() -> None:
    """docs/stack.md's Alerts section names each alert and recording rule the file holds,
    and has the runbook its TorchCompileRanksDiverge annotation points to."""
    docs = (support.REPO / "docs" / "stack.md").read_text()
    named = {rule.get("alert") or rule["record"] for rule in _rules()}
    assert {name for name in named if f"`{name}`" not in docs} == set()
    assert "### Runbook: TorchCompileRanksDiverge" in docs
