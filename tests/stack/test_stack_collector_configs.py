"""What the shipped Collector configs do: sampling, balancing, agents, replay, env docs."""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest
from dashgen import catalog
from otelcol_check import envrefs
from otelcol_check.model import load, section, shipped

from otel_dynamo import names
from otel_dynamo._config import settings
from otel_dynamo._providers import files


def _tail_sampling(name: str) -> dict[str, Any]:
    return section(load(shipped()[name]), "processors")["tail_sampling"]


def test_tail_sampling_keeps_errors_faults_breaks_recompiles_and_slow_compiles() -> None:
    """The policies keep ERROR status, faults, graph breaks, recompiles, slow traces."""
    policies = {p["name"]: p for p in _tail_sampling("single-node.yaml")["policies"]}
    ottl = {
        n: " ".join(p["ottl_condition"].get("span", []) + p["ottl_condition"].get("spanevent", []))
        for n, p in policies.items()
        if p["type"] == "ottl_condition"
    }
    assert policies["keep-errors"]["status_code"]["status_codes"] == ["ERROR"]
    assert f'attributes["{catalog.name("ATTR_FAULT_KIND")}"] != nil' in ottl["keep-faults"]
    assert policies["keep-graph-breaks"]["numeric_attribute"]["key"] == names.ATTR_GRAPH_BREAK_COUNT
    assert f'name == "{names.EVENT_GRAPH_BREAK}"' in ottl["keep-graph-break-events"]
    assert f'attributes["{names.ATTR_RECOMPILE_REASON}"] != nil' in ottl["keep-recompiles"]
    assert policies["keep-slow-compiles"]["type"] == "latency"
    assert policies["sample-the-rest"]["type"] == "probabilistic"


def test_slow_compile_default_matches_the_package_threshold() -> None:
    """SLOW_COMPILE_THRESHOLD_MS defaults to otel_dynamo's slow-compile threshold."""
    text = shipped()["gateway.yaml"].read_text("utf-8")
    default = envrefs.env_refs(text)["SLOW_COMPILE_THRESHOLD_MS"]
    assert default == {str(int(settings.DEFAULT_SLOW_COMPILE_SECONDS * 1000))}


def test_gateway_and_single_node_sample_alike() -> None:
    """gateway.yaml and single-node.yaml share the same sampling and rank-label processors."""
    gateway = section(load(shipped()["gateway.yaml"]), "processors")
    single = section(load(shipped()["single-node.yaml"]), "processors")
    keys = ("tail_sampling", "transform/rank_labels")
    assert {k: gateway[k] for k in keys} == {k: single[k] for k in keys}


def test_gateway_balances_traces_by_trace_id_into_its_sampling_pipeline() -> None:
    """Traces are routed by trace id to the peers' port feeding the tail-sampling pipeline."""
    config = load(shipped()["gateway.yaml"])
    balancer = section(config, "exporters")["load_balancing"]
    receiver = section(config, "receivers")["otlp/loadbalanced"]["protocols"]["grpc"]
    pipelines = config["service"]["pipelines"]
    assert balancer["routing_key"] == "traceID"
    assert receiver["endpoint"].endswith(f":{balancer['resolver']['dns']['port']}")
    assert pipelines["traces"]["exporters"] == ["load_balancing"]
    assert pipelines["traces/sampling"]["receivers"] == ["otlp/loadbalanced"]
    assert "tail_sampling" in pipelines["traces/sampling"]["processors"]


def test_agent_listens_on_loopback_and_forwards_to_the_gateway() -> None:
    """The agent's receivers default to 127.0.0.1 and every pipeline ends at the gateway."""
    config = load(shipped()["agent.yaml"])
    grpc = section(config, "receivers")["otlp"]["protocols"]["grpc"]["endpoint"]
    assert grpc == "${env:OTLP_RECEIVER_HOST:-127.0.0.1}:4317"
    assert {tuple(p["exporters"]) for p in config["service"]["pipelines"].values()} == {
        ("otlp_grpc/gateway",)
    }
    assert {tuple(p["processors"]) for p in config["service"]["pipelines"].values()} == {
        ("memory_limiter", "resource_detection", "batch")
    }


def test_rank_labels_copy_names_py_resource_attributes() -> None:
    """The rank-label transform copies exactly the RESOURCE_* attributes the job view uses."""
    transform = section(load(shipped()["gateway.yaml"]), "processors")["transform/rank_labels"]
    copied = {s.split('"')[1] for s in transform["metric_statements"][0]["statements"]}
    assert copied == {
        names.RESOURCE_RANK,
        names.RESOURCE_LOCAL_RANK,
        names.RESOURCE_NODE_RANK,
        names.RESOURCE_RUN_ID,
    }


def test_replay_reads_the_embedded_default_files() -> None:
    """The replay receivers' globs match the file names otel_dynamo writes, in its default dir."""
    receivers = section(load(shipped()["replay.yaml"]), "receivers")
    for signal in ("traces", "logs", "metrics"):
        (pattern,) = receivers[f"otlp_json_file/{signal}"]["include"]
        directory = envrefs.env_refs(pattern)["REPLAY_DIR"]
        written = files.telemetry_file_name(signal, host="node-1", pid=42, stamp="20250101T000000Z")
        assert directory == {settings.DEFAULT_OUTPUT_DIR}
        assert fnmatch.fnmatch(written, pattern.rsplit("/", 1)[1])


@pytest.mark.parametrize("name", sorted(shipped()))
def test_every_env_variable_is_documented_in_the_file(name: str) -> None:
    """Each ${env:NAME} a config reads is named in that config's header comment."""
    text = shipped()[name].read_text("utf-8")
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert sorted(v for v in envrefs.env_refs(text) if v not in header) == []


FRAGMENT = "add-to-your-collector.yaml"


def test_every_id_the_fragment_adds_is_named_for_otel_dynamo() -> None:
    """No component or pipeline id of the fragment can be one of a team's own: each has
    ``otel_dynamo`` in its name; the fragment sets no service list (extensions) nor
    service.telemetry, which a merge would replace."""
    fragment = load(shipped()[FRAGMENT])
    ids = [k for kind in ("receivers", "processors", "exporters") for k in fragment[kind]]
    ids += list(fragment["service"]["pipelines"])
    assert [i for i in ids if "otel_dynamo" not in i.split("/", 1)[-1]] == []
    assert set(fragment["service"]) == {"pipelines"}
    assert "extensions" not in fragment


def test_the_fragment_copies_the_rank_labels_as_the_gateway_does() -> None:
    """The fragment's rank-label statements are the gateway's, word for word: the
    per-job dashboard and the rank alerts group by the labels they set."""
    fragment = section(load(shipped()[FRAGMENT]), "processors")
    gateway = section(load(shipped()["gateway.yaml"]), "processors")
    assert (
        fragment["transform/otel_dynamo_rank_labels"]["metric_statements"]
        == gateway["transform/rank_labels"]["metric_statements"]
    )
    metrics = load(shipped()[FRAGMENT])["service"]["pipelines"]["metrics/otel_dynamo"]
    assert "transform/otel_dynamo_rank_labels" in metrics["processors"]
