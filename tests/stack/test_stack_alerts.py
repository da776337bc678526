"""The shipped Prometheus alerting rules (collector-config/stack/otel-dynamo-alerts.yml):
valid, unit-tested with promtool, reading only series otel_dynamo emits, loaded by the
stack's Prometheus."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import _stack_support as support
import pytest
import yaml
from dashgen import catalog, promnames

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
}
_SERIES = re.compile(r"\b((?:torch_compile|torch_export)_[a-z_]+)\b")


@pytest.fixture
def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    return binary


def _promtool(promtool: str, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, *arguments], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


def _rules() -> list[dict]:
    return [
        rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
    ]


def test_the_rules_are_the_six_alerts_and_pass_promtool_check(promtool: str) -> None:
    """promtool check rules accepts the file, which holds exactly the six alerts."""
    done = _promtool(promtool, "check", "rules", str(RULES), cwd=STACK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {rule["alert"] for rule in _rules()} == ALERTS


def test_promtool_unit_tests_pass(promtool: str) -> None:
    """promtool test rules: each alert fires for its case, at its time, with its labels and
    annotations, and stays quiet for the job beside it."""
    done = _promtool(promtool, "test", "rules", RULE_TESTS.name, cwd=STACK)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_unit_tests_catch_a_changed_threshold(promtool: str, tmp_path: Path) -> None:
    """The same tests over rules whose regression factor is 4 instead of 1.5 fail: they
    pin the behaviour, not only the syntax."""
    (tmp_path / RULES.name).write_text(RULES.read_text().replace("> 1.5 *", "> 4 *"))
    (tmp_path / RULE_TESTS.name).write_text(RULE_TESTS.read_text())
    done = _promtool(promtool, "test", "rules", RULE_TESTS.name, cwd=tmp_path)
    assert done.returncode != 0
    assert "TorchCompileTimeRegression" in done.stdout + done.stderr


def test_every_series_and_label_a_rule_reads_is_one_otel_dynamo_emits() -> None:
    """Each torch_compile_* name in an alert expression is a series or a label derived from
    names.py (a renamed metric or attribute breaks this test, not silently the alert)."""
    emitted = {s for spec in catalog.metric_specs() for s in promnames.all_series(spec)}
    labels = {promnames.label(value) for value in catalog.values("ATTR_")}
    read = {name for rule in _rules() for name in _SERIES.findall(rule["expr"])}
    assert read & emitted and read <= emitted | labels, sorted(read - emitted - labels)


def test_the_stack_prometheus_loads_the_rules() -> None:
    """stack/prometheus.yml names the rule file beside itself, and docker-compose mounts
    it beside the config (promtool check config resolves it, so does Prometheus)."""
    config = yaml.safe_load((STACK / "prometheus.yml").read_text())
    compose = yaml.safe_load(support.COMPOSE_FILE.read_text())
    mounted = compose["services"]["prometheus"]["volumes"]
    target = f"./stack/{RULES.name}:/etc/prometheus/{RULES.name}:ro"
    assert config["rule_files"] == [RULES.name] and target in mounted
