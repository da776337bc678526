"""Shared helpers for the stack tests (tests/stack/test_stack_*.py): paths, loaders, Prometheus.

Puts grafana/ and collector-config/ on sys.path so the tests import the dashboard
generator (dashgen) and the Collector-config checker (otelcol_check) the users run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
GRAFANA = REPO / "grafana"
COLLECTOR = REPO / "collector-config"
DATA = Path(__file__).resolve().parent / "data" / "stack"
for _path in (GRAFANA, COLLECTOR):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

DASHBOARD_DIR = GRAFANA / "dashboards"
DATASOURCES_FILE = GRAFANA / "provisioning" / "datasources" / "otel-dynamo.yaml"
DASHBOARD_PROVIDER_FILE = GRAFANA / "provisioning" / "dashboards" / "otel-dynamo.yaml"
COMPOSE_FILE = COLLECTOR / "docker-compose.yml"
EMITTER = DATA / "emit_metrics.py"
TRACED_JOB = DATA / "traced_job.py"
TRACED_JOB_FAULTS = "compile@torch.tanh"
"""Fault spec the scraped job runs with, so the faults panels have data."""


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def dashboards() -> dict[str, dict[str, Any]]:
    """The committed dashboards, by file name."""
    return {p.name: json.loads(p.read_text("utf-8")) for p in sorted(DASHBOARD_DIR.glob("*.json"))}


def all_queries() -> list[Any]:
    """Every query of every committed dashboard (dashgen.queries.Query)."""
    from dashgen.queries import queries

    return [q for model in dashboards().values() for q in queries(model)]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check, timeout: float, interval: float = 0.25) -> Any:
    """Poll ``check()`` until it returns a truthy value or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError):
            result = check()
            if result:
                return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"not ready after {timeout:.0f}s")
        time.sleep(interval)


def _get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


@dataclasses.dataclass
class Prometheus:
    """A Prometheus server started by hand on loopback for one test."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def targets_up(self) -> bool:
        active = _get_json(f"{self.url}/api/v1/targets")["data"]["activeTargets"]
        return bool(active) and all(t["health"] == "up" for t in active)

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; the result vector (raises ValueError on a query error)."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            body = _get_json(url)
        except urllib.error.HTTPError as error:
            raise ValueError(f"{expr}: {error.read().decode()}") from error
        if body.get("status") != "success":
            raise ValueError(f"{expr}: {body}")
        return list(body["data"]["result"])


def prometheus_config(job: str, target: str, interval: str = "1s") -> str:
    """A prometheus.yml scraping one loopback target every ``interval``."""
    return yaml.safe_dump(
        {
            "global": {"scrape_interval": interval, "evaluation_interval": interval},
            "scrape_configs": [
                {"job_name": job, "honor_labels": False, "static_configs": [{"targets": [target]}]}
            ],
        }
    )


@contextlib.contextmanager
def running_prometheus(workdir: Path, job: str, target: str) -> Iterator[Prometheus]:
    """Start ``prometheus`` scraping ``target``; wait until it is ready; stop it after."""
    config = workdir / "prometheus.yml"
    config.write_text(prometheus_config(job, target), encoding="utf-8")
    with prometheus_on(config, workdir) as server:
        yield server


@contextlib.contextmanager
def prometheus_on(config: Path, workdir: Path, *flags: str) -> Iterator[Prometheus]:
    """Debian's ``prometheus`` on ``config``, its data and log in ``workdir``, on a free
    loopback port, with ``flags`` added; ready when yielded, stopped after."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise FileNotFoundError("prometheus")
    port, log = free_port(), workdir / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
                *flags,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Prometheus(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until(lambda: urllib.request.urlopen(f"{server.url}/-/ready", timeout=2), 30)
        yield server
    finally:
        stop(process)


def run_promtool(promtool: str, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``promtool ARGUMENTS`` in ``cwd``, its output captured."""
    return subprocess.run(
        [promtool, *arguments], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Terminate a child we started, then kill it if it does not exit."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)


@contextlib.contextmanager
def running_traced_job(
    port: int, workdir: Path, seconds: float = 120.0
) -> Iterator[subprocess.Popen[bytes]]:
    """A real traced torch.compile job (tests/data/stack/traced_job.py) serving ``port``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_PROMETHEUS_PORT=str(port),
        OTEL_DYNAMO_OUTPUT_DIR=str(workdir),
        OTEL_DYNAMO_FAULT=TRACED_JOB_FAULTS,
        TORCHELASTIC_RUN_ID="stack-test",
    )
    process = subprocess.Popen(
        [sys.executable, str(TRACED_JOB), "--seconds", str(seconds)],
        env=env,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        stop(process)


def why_no_container_engine() -> str | None:
    """Why container tests cannot run here (None: a compose-capable engine answers)."""
    docker = shutil.which("docker")
    if docker is None:
        return "no docker CLI on PATH"
    info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=30, check=False)
    if info.returncode != 0:
        return "docker CLI present but no daemon answers (docker info failed)"
    compose = subprocess.run(
        [docker, "compose", "version"], capture_output=True, text=True, timeout=30, check=False
    )
    if compose.returncode != 0:
        return "docker daemon present but no 'docker compose' plugin"
    return None
