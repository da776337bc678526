"""The shipped telemetry path, end to end on loopback, from the real programs: a traced
job under torchrun -> the agent Collector (collector-config/agent.yaml) -> two gateway
Collectors (gateway.yaml) that route each trace to one of them by trace id -> Jaeger
(memory storage, and Badger), Debian's Prometheus (remote-write receiver on, the shipped
rules loaded) and a file exporter for logs.

The Collectors run the test's copies of the shipped configs (tests/_real_stack.config_copy
checks each copy changes nothing else): endpoints and ports moved to loopback, the
load-balancing resolver a static list of both gateways (no DNS on loopback), the Loki
exporter swapped for a file exporter, and the Tempo exporter's endpoint pointed at a
second Jaeger (Badger): Tempo is AGPL and never runs here, and its exporter speaks the
same OTLP gRPC as Jaeger's. Sampling percentage, sampling wait and the slow-compile
threshold are set through the environment variables gateway.yaml reads for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from _export_support import PROGRAMS, child_environ, free_port
from _real_stack import (
    Collector,
    ConfigCopy,
    Jaeger,
    config_copy,
    start_collector,
    start_jaeger,
)
from _stack_support import COLLECTOR, Prometheus, prometheus_on

from otel_dynamo.report.read.jaeger import rfc3339

JOB = PROGRAMS / "stack_job.py"
RANKS = 2
DIVERGING_RANK = 1
FAULT = "compile@torch.tanh"
RULES = COLLECTOR / "stack" / "otel-dynamo-alerts.yml"
JOB_TIMEOUT_S = 600
METRIC_EXPORT_INTERVAL_MS = 1000
RULE_EVALUATION_INTERVAL = "1s"
OUT_OF_ORDER_WINDOW = "30m"
JAEGER_BY_EXPORTER = {"otlp_grpc/jaeger": "memory", "otlp_grpc/tempo": "badger"}
"""The gateway's trace exporters, and the Jaeger storage each delivers to in the test."""


def _loopback(port: int) -> str:
    return f"127.0.0.1:{port}"


def rules_copy(path: Path) -> Path:
    """The shipped alert and recording rules with every ``for:`` shortened to 0s (a short
    job cannot hold a condition for minutes); nothing else changed."""
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "0s"
    path.write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    return path


@contextlib.contextmanager
def running_prometheus(workdir: Path) -> Iterator[Prometheus]:
    """Debian's Prometheus with its remote-write receiver on, out-of-order samples
    accepted within OUT_OF_ORDER_WINDOW and the shipped rules loaded (evaluated every
    second); it scrapes nothing."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (Debian: apt-get install prometheus)")
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    rules = rules_copy(workdir / "otel-dynamo-alerts.yml")
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"evaluation_interval": RULE_EVALUATION_INTERVAL},
                "rule_files": [str(rules)],
                # As docs/stack.md asks of a Prometheus behind the gateway: the agent's
                # queued batches, replayed after a gateway outage, arrive out of order.
                "storage": {"tsdb": {"out_of_order_time_window": OUT_OF_ORDER_WINDOW}},
            }
        ),
        encoding="utf-8",
    )
    with prometheus_on(config, workdir, "--web.enable-remote-write-receiver") as server:
        yield server


def firing_alerts(prometheus: Prometheus) -> list[dict[str, str]]:
    """The labels of every alert firing now."""
    with urllib.request.urlopen(f"{prometheus.url}/api/v1/alerts", timeout=10) as response:
        alerts = json.loads(response.read())["data"]["alerts"]
    return [dict(alert["labels"]) for alert in alerts if alert["state"] == "firing"]


@dataclasses.dataclass
class Pipeline:
    """The running programs of one end-to-end set-up."""

    workdir: Path
    agent: Collector
    agent_config: ConfigCopy
    gateways: list[Collector]
    gateway_configs: list[ConfigCopy]
    gateway_env: dict[str, str]
    jaegers: dict[str, Jaeger]
    prometheus: Prometheus
    logs_file: Path

    @property
    def agent_endpoint(self) -> str:
        return f"http://{_loopback(self.agent_config.listen['otlp.grpc'])}"

    def start_gateway(self, index: int) -> Collector:
        copy = self.gateway_configs[index]
        gateway = start_collector(
            f"gateway-{index}",
            [copy.path],
            self.workdir,
            env=self.gateway_env,
            health_url=copy.health_url,
            metrics_port=copy.metrics_port,
        )
        self.gateways[index] = gateway
        return gateway


def _gateway_edit(
    own_balanced_port: int,
    balanced_ports: list[int],
    jaegers: Mapping[str, Jaeger],
    remote_write_url: str,
    logs_file: Path,
) -> Any:
    def edit(config: dict[str, Any]) -> None:
        receivers, exporters = config["receivers"], config["exporters"]
        receivers["otlp/loadbalanced"]["protocols"]["grpc"]["endpoint"] = _loopback(
            own_balanced_port
        )
        exporters["load_balancing"]["resolver"] = {
            "static": {"hostnames": [_loopback(port) for port in balanced_ports]}
        }
        for exporter, storage in JAEGER_BY_EXPORTER.items():
            exporters[exporter]["endpoint"] = jaegers[storage].otlp_grpc
        exporters["prometheus_remote_write"]["endpoint"] = remote_write_url
        del exporters["otlp_http/loki"]
        exporters["file/loki"] = {"path": str(logs_file)}
        logs = config["service"]["pipelines"]["logs"]
        logs["exporters"] = ["file/loki" if e == "otlp_http/loki" else e for e in logs["exporters"]]

    return edit


@contextlib.contextmanager
def running_pipeline(workdir: Path, *, gateway_env: Mapping[str, str]) -> Iterator[Pipeline]:
    """Start Jaeger (memory and Badger), Prometheus, two gateways and the agent."""
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        jaegers = {}
        for storage in JAEGER_BY_EXPORTER.values():
            jaegers[storage] = start_jaeger(workdir / f"jaeger-{storage}", storage)
            stack.callback(jaegers[storage].stop)
        prometheus = stack.enter_context(running_prometheus(workdir / "prometheus"))
        logs_file = workdir / "gateway-logs.jsonl"
        balanced = [free_port() for _ in range(2)]
        copies = [
            config_copy(
                COLLECTOR / "gateway.yaml",
                workdir,
                name=f"gateway-{index}.yaml",
                edit=_gateway_edit(
                    port, balanced, jaegers, f"{prometheus.url}/api/v1/write", logs_file
                ),
            )
            for index, port in enumerate(balanced)
        ]

        def agent_edit(config: dict[str, Any]) -> None:
            gateway_grpc = copies[0].listen["otlp.grpc"]
            config["exporters"]["otlp_grpc/gateway"]["endpoint"] = _loopback(gateway_grpc)

        agent_copy = config_copy(COLLECTOR / "agent.yaml", workdir, edit=agent_edit)
        pipeline = Pipeline(
            workdir=workdir,
            agent=None,  # type: ignore[arg-type]  # started below, once the gateways answer
            agent_config=agent_copy,
            gateways=[None, None],  # type: ignore[list-item]
            gateway_configs=copies,
            gateway_env=dict(gateway_env),
            jaegers=jaegers,
            prometheus=prometheus,
            logs_file=logs_file,
        )
        for index in range(2):
            pipeline.start_gateway(index)
            stack.callback(lambda i=index: pipeline.gateways[i].stop())
        pipeline.agent = start_collector(
            "agent",
            [agent_copy.path],
            workdir,
            health_url=agent_copy.health_url,
            metrics_port=agent_copy.metrics_port,
        )
        stack.callback(pipeline.agent.stop)
        yield pipeline


@dataclasses.dataclass
class JobRun:
    """One torchrun job traced into the pipeline, its own files written beside."""

    service: str
    files: Path
    returncode: int
    stderr: str
    exit_seconds: list[float]
    """Per rank: time from the end of ``main`` to the last exit handler (the exit flush)."""
    started_ns: int
    ended_ns: int


@dataclasses.dataclass
class StartedJob:
    """A job started by ``start_job``, not yet waited for."""

    process: subprocess.Popen[str]
    service: str
    files: Path
    timing: Path
    """Where each rank writes its exit time (beside ``files``: no telemetry file)."""
    started_ns: int


def start_job(
    pipeline: Pipeline,
    service: str,
    *,
    kind: str,
    seconds: float = 0.0,
    slow_compile_seconds: float = 0.0,
) -> StartedJob:
    """Start ``stack_job.py --kind KIND`` on RANKS ranks, exporting every signal both to the
    agent (OTLP gRPC) and to its own OTLP/JSON Lines files (``<workdir>/<service>``)."""
    files, timing = pipeline.workdir / service, pipeline.workdir / f"{service}.timing"
    files.mkdir()
    timing.mkdir()
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(files),
        OTEL_EXPORTER_OTLP_ENDPOINT=pipeline.agent_endpoint,
        OTEL_EXPORTER_OTLP_INSECURE="true",
        OTEL_TRACES_EXPORTER="otlp,otlp_file",
        OTEL_LOGS_EXPORTER="otlp,otlp_file",
        OTEL_METRICS_EXPORTER="otlp,otlp_file",
        OTEL_METRIC_EXPORT_INTERVAL=str(METRIC_EXPORT_INTERVAL_MS),
        OTEL_SERVICE_NAME=service,
        OMP_NUM_THREADS="1",
    )
    if kind == "trigger":
        env["OTEL_DYNAMO_FAULT"] = FAULT
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(RANKS)]
    command += ["--master-port", str(free_port()), str(JOB), "--kind", kind]
    command += ["--seconds", str(seconds), "--diverge-rank", str(DIVERGING_RANK)]
    command += ["--timing-dir", str(timing), "--slow-compile-seconds", str(slow_compile_seconds)]
    started = time.time_ns()
    process = subprocess.Popen(
        command,
        env=env,
        cwd=files,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return StartedJob(process, service, files, timing, started)


def finish_job(job: StartedJob) -> JobRun:
    """Wait for a started job to end."""
    _, stderr = job.process.communicate(timeout=JOB_TIMEOUT_S)
    exit_seconds = [
        json.loads(path.read_text(encoding="utf-8"))["exit_seconds"]
        for path in sorted(job.timing.glob("rank-*.json"))
    ]
    return JobRun(
        job.service,
        job.files,
        job.process.returncode,
        stderr,
        exit_seconds,
        job.started_ns,
        time.time_ns(),
    )


# --- what the job wrote, what the stores hold -------------------------------------------


def value(encoded: Mapping[str, Any]) -> Any:
    """An OTLP/JSON AnyValue as Python (int64 text made an int, arrays as lists)."""
    if "arrayValue" in encoded:
        return [value(item) for item in encoded["arrayValue"].get("values", [])]
    if "kvlistValue" in encoded:
        return {kv["key"]: value(kv["value"]) for kv in encoded["kvlistValue"].get("values", [])}
    if "intValue" in encoded:
        return int(encoded["intValue"])
    if "doubleValue" in encoded:
        return float(encoded["doubleValue"])
    for key in ("stringValue", "boolValue", "bytesValue"):
        if key in encoded:
            return encoded[key]
    return None


def attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: value(item.get("value", {})) for item in items or []}


@dataclasses.dataclass(frozen=True)
class Span:
    """A span as both sides can hold it: ids, name, status, attributes, events."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    status_code: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]


def _status(span: Mapping[str, Any]) -> int:
    code = (span.get("status") or {}).get("code", 0)
    named = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
    return named.get(code, code) if isinstance(code, str) else int(code)


def spans_of(resource_spans: list[dict[str, Any]]) -> dict[str, Span]:
    """OTLP/JSON resourceSpans as Span by span id."""
    found = {}
    for entry in resource_spans:
        resource = attributes((entry.get("resource") or {}).get("attributes"))
        for scope in entry.get("scopeSpans", []):
            for span in scope.get("spans", []):
                found[span["spanId"]] = Span(
                    trace_id=span["traceId"],
                    span_id=span["spanId"],
                    parent_span_id=span.get("parentSpanId", ""),
                    name=span["name"],
                    status_code=_status(span),
                    start_ns=int(span["startTimeUnixNano"]),
                    end_ns=int(span["endTimeUnixNano"]),
                    attributes=attributes(span.get("attributes")),
                    events=[
                        (event["name"], attributes(event.get("attributes")))
                        for event in span.get("events", [])
                    ],
                    resource=resource,
                )
    return found


def file_spans(directory: Path) -> dict[str, Span]:
    """Every span a job's own traces files hold."""
    entries = []
    for path in sorted(directory.glob("traces-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entries.extend(json.loads(line)["resourceSpans"])
    return spans_of(entries)


def jaeger_spans(jaeger: Jaeger, service: str, start_ns: int, end_ns: int) -> dict[str, Span]:
    """Every span Jaeger holds for ``service`` between the two times (api_v3)."""
    query = urllib.parse.urlencode(
        {
            "query.service_name": service,
            "query.start_time_min": rfc3339(start_ns),
            "query.start_time_max": rfc3339(end_ns),
            "query.num_traces": 100000,
        }
    )
    answer = jaeger.get(f"/api/v3/traces?{query}")
    return spans_of(((answer or {}).get("result") or {}).get("resourceSpans", []))


def log_records(paths: list[Path], key: str = "resourceLogs") -> list[dict[str, Any]]:
    """Every log record of OTLP/JSON Lines files (a job's, or a Collector file exporter's),
    each with its resource attributes under "resource"."""
    records = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            for entry in json.loads(line).get(key, []):
                resource = attributes((entry.get("resource") or {}).get("attributes"))
                for scope in entry.get("scopeLogs", []):
                    records.extend(
                        {**record, "resource": resource} for record in scope.get("logRecords", [])
                    )
    return records
