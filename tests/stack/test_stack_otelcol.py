"""Every shipped Collector config judged by the real Collector (built from
collector-config/build): its own ``validate``, then started, healthy, with no deprecated
name; the fragment merged into a team's config the way the Collector merges it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import _real_stack as real
import pytest
import yaml
from otelcol_check.collector import validate
from otelcol_check.model import load, shipped, type_of

FRAGMENT = "add-to-your-collector.yaml"
TEST_EXPORTERS = {"file", "debug"}
"""Components the built Collector holds for the tests only."""

TEAM_CONFIG = """
extensions:
  health_check: {endpoint: "127.0.0.1:13133"}
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "0.0.0.0:4317"}
      http: {endpoint: "0.0.0.0:4318"}
processors:
  memory_limiter: {check_interval: 1s, limit_mib: 512}
  batch: {}
exporters:
  otlp_grpc/tempo: {endpoint: "tempo.observability:4317"}
  debug: {}
service:
  extensions: [health_check]
  telemetry:
    logs: {level: warn}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, batch]
      exporters: [otlp_grpc/tempo]
    metrics:
      receivers: [otlp]
      processors: [memory_limiter, batch]
      exporters: [debug]
"""
"""A team's own Collector config: its receiver on 4317/4318, its pipelines, extensions."""


@pytest.fixture(scope="module")
def collector() -> Path:
    return real.stack_binary(real.COLLECTOR_BINARY)


def _components(collector: Path) -> dict[str, set[str]]:
    """The component types the built Collector holds, by kind (its ``components``)."""
    listed = yaml.safe_load(
        subprocess.run(
            [str(collector), "components"], capture_output=True, text=True, check=True
        ).stdout
    )
    return {
        kind: {entry["name"] for entry in listed.get(kind) or []}
        for kind in ("receivers", "processors", "exporters", "extensions", "connectors")
    }


def test_the_built_collector_holds_exactly_the_components_the_configs_use(
    collector: Path,
) -> None:
    """Receivers, processors, exporters and extensions of the built Collector are those
    the shipped configs name, plus the file and debug exporters the tests write through."""
    used: dict[str, set[str]] = {}
    for path in shipped().values():
        config = load(path)
        for kind in ("receivers", "processors", "exporters", "extensions", "connectors"):
            used.setdefault(kind, set()).update(type_of(c) for c in config.get(kind) or {})
    used["exporters"] |= TEST_EXPORTERS
    assert _components(collector) == used


@pytest.mark.parametrize("name", sorted(shipped()))
def test_the_collector_validates_each_shipped_config(collector: Path, name: str) -> None:
    """``otelcol validate`` accepts each shipped config as it is."""
    assert validate(collector, [shipped()[name]]) == []


def test_the_collectors_validate_refuses_a_misspelled_key(collector: Path, tmp_path: Path) -> None:
    """The oracle can say no: a misspelled processor key is refused, naming the key."""
    config = load(shipped()["agent.yaml"])
    config["processors"]["batch"]["send_batch_sise"] = 10
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    problems = validate(collector, [path])
    assert len(problems) == 1 and "send_batch_sise" in problems[0]


PORT_ATTEMPTS = 3
"""A port found free can be taken by a test running beside before the Collector binds it."""


def _started(copy: real.ConfigCopy, workdir: Path, env: dict[str, str]) -> str:
    """Start the Collector on ``copy``, wait until healthy, stop it; its output."""
    running = real.start_collector(
        copy.path.stem,
        [copy.path],
        workdir,
        env=env,
        health_url=copy.health_url,
        metrics_port=copy.metrics_port,
    )
    try:
        running.program.check_alive()
    finally:
        running.stop()
    return running.program.output()


@pytest.mark.parametrize("name", sorted(set(shipped()) - {FRAGMENT}))
def test_each_shipped_config_starts_with_no_deprecated_name(
    collector: Path, name: str, tmp_path: Path
) -> None:
    """Each config, its listening ports moved to free ones, starts: healthy, "Everything
    is ready", no component given by a deprecated alias (a later release refuses it)."""
    for attempt in range(PORT_ATTEMPTS):
        workdir = tmp_path / f"attempt-{attempt}"
        workdir.mkdir()
        copy = real.config_copy(shipped()[name], workdir)
        try:
            output = _started(copy, tmp_path, {"REPLAY_DIR": str(tmp_path)})
            break
        except Exception as failed:  # another test took a free port first: fresh ports
            if "address already in use" not in str(failed) or attempt == PORT_ATTEMPTS - 1:
                raise
    assert "Everything is ready" in output
    assert [line for line in output.splitlines() if "deprecated" in line] == []


def _print_config(collector: Path, configs: list[Path]) -> dict[str, Any]:
    """The config the Collector runs for ``configs`` merged in order (its print-config)."""
    result = subprocess.run(
        [str(collector), "print-config", *(f"--config=file:{p}" for p in configs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(yaml.safe_load(result.stdout))


def test_the_fragment_merged_into_a_teams_config_leaves_theirs_as_it_was(
    collector: Path, tmp_path: Path
) -> None:
    """The Collector's own merge of ``--config theirs --config add-to-your-collector.yaml``
    validates; the team's components, pipelines, extensions and telemetry come out as the
    Collector read them from their file alone, and the fragment adds one pipeline per
    signal."""
    team_path = tmp_path / "team.yaml"
    team_path.write_text(TEAM_CONFIG, encoding="utf-8")
    fragment = shipped()[FRAGMENT]
    assert validate(collector, [team_path, fragment]) == []
    alone = _print_config(collector, [team_path])
    both = _print_config(collector, [team_path, fragment])
    for kind in ("receivers", "processors", "exporters", "extensions"):
        assert {k: both[kind][k] for k in alone[kind]} == alone[kind], kind
    assert both["service"]["extensions"] == alone["service"]["extensions"]
    assert both["service"]["telemetry"] == alone["service"]["telemetry"]
    theirs = alone["service"]["pipelines"]
    assert {k: both["service"]["pipelines"][k] for k in theirs} == theirs
    assert set(both["service"]["pipelines"]) - set(theirs) == {
        "traces/otel_dynamo",
        "metrics/otel_dynamo",
        "logs/otel_dynamo",
    }


def test_the_fragment_merged_into_a_teams_config_starts(collector: Path, tmp_path: Path) -> None:
    """The team's config with the fragment merged after it starts: its health check
    answers (the team logs warnings only), and nothing is logged as deprecated or an error."""
    team = real.config_copy(
        _write(tmp_path / "team-source.yaml", TEAM_CONFIG), tmp_path, name="team.yaml"
    )
    fragment = real.config_copy(shipped()[FRAGMENT], tmp_path, own_metrics=False)
    running = real.start_collector(
        "merged",
        [team.path, fragment.path],
        tmp_path,
        health_url=team.health_url,
        metrics_port=team.metrics_port,
    )
    running.program.check_alive()
    running.stop()
    output = running.program.output()
    assert [
        line for line in output.splitlines() if "deprecated" in line or "\terror\t" in line
    ] == []


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
