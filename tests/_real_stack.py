"""The real programs of the stack, started on loopback for one test: the OpenTelemetry
Collector and Jaeger v2 built from the pinned Go modules of collector-config/build
(`bash collector-config/build/build.sh`, which the README's test command runs).

Where they were not built (a machine without Go), ``stack_binary`` skips the test and
says why; every port is a free one on 127.0.0.1, every file inside the test's directory.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from _stack_support import COLLECTOR, free_port, stop, wait_until

BUILD_DIR = COLLECTOR / "build"
STACK_BIN_VARIABLE = "OTEL_DYNAMO_STACK_BIN"
"""Where build.sh puts the binaries (default collector-config/build/bin)."""
COLLECTOR_BINARY = "otelcol-otel-dynamo"
JAEGER_BINARY = "jaeger"
STARTUP_SECONDS = 60.0
"""How long a program may take to answer its health or query endpoint after starting."""


def stack_bin() -> Path:
    """The folder build.sh writes the binaries to."""
    return Path(os.environ.get(STACK_BIN_VARIABLE) or BUILD_DIR / "bin")


def why_not_built(name: str) -> str | None:
    """Why the program ``name`` cannot run here (None: it is built)."""
    if (stack_bin() / name).is_file():
        return None
    if shutil.which("go") is None:
        return (
            f"{name} is built from Go modules (collector-config/build) and this machine has "
            "no Go; CI's machine has Go 1.26 and runs these tests"
        )
    return f"{name} is not built yet: run bash collector-config/build/build.sh"


def stack_binary(name: str) -> Path:
    """The built program ``name``, or the test skips saying why it is missing."""
    reason = why_not_built(name)
    if reason is not None:
        pytest.skip(reason)
    return stack_bin() / name


@dataclasses.dataclass
class Program:
    """A real program started for a test; its output goes to ``log``."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        stop(self.process)

    def kill(self) -> None:
        """End it at once, as a crash would (SIGKILL: nothing is flushed)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def check_alive(self) -> None:
        """Raise with its output if it has exited."""
        if self.process.poll() is not None:
            raise RuntimeError(
                f"{self.name} exited with status {self.process.returncode}:\n"
                f"{self.output()[-4000:]}"
            )


def start_program(
    name: str, argv: list[str], workdir: Path, *, env: Mapping[str, str] | None = None
) -> Program:
    """Start ``argv`` in ``workdir``, its output in ``workdir/<name>.log``."""
    log = workdir / f"{name}.log"
    merged = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    merged.update(env or {})
    with log.open("ab") as out:
        process = subprocess.Popen(
            argv, cwd=workdir, env=merged, stdout=out, stderr=subprocess.STDOUT
        )
    return Program(name, process, log)


def wait_for_http(program: Program, url: str, timeout: float = STARTUP_SECONDS) -> None:
    """Wait until ``url`` answers 2xx, failing early (with its output) if ``program`` exits."""

    def ready() -> bool:
        program.check_alive()
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return 200 <= response.status < 300
        except urllib.error.HTTPError:
            return False

    try:
        wait_until(ready, timeout)
    except TimeoutError as error:
        output = program.output()[-4000:]
        raise TimeoutError(f"{program.name} did not answer {url}:\n{output}") from error


def collector_telemetry(metrics_port: int) -> dict[str, Any]:
    """A Collector's own ``service.telemetry`` with its metrics endpoint moved to a free
    loopback port (by default every Collector binds 8888, so two could not run side by
    side)."""
    return {
        "metrics": {
            "readers": [
                {"pull": {"exporter": {"prometheus": {"host": "127.0.0.1", "port": metrics_port}}}}
            ]
        }
    }


def validate_collector(configs: list[Path], *, env: Mapping[str, str] | None = None) -> str:
    """Run the Collector's own ``validate`` on ``configs`` (merged in order); return its
    output, raising AssertionError with it when the Collector refuses them."""
    binary = stack_binary(COLLECTOR_BINARY)
    argv = [str(binary), "validate"] + [f"--config=file:{path}" for path in configs]
    merged = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    merged.update(env or {})
    result = subprocess.run(
        argv, check=False, capture_output=True, text=True, env=merged, timeout=60
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise AssertionError(f"otelcol validate refused {[p.name for p in configs]}:\n{output}")
    return output


@dataclasses.dataclass
class Collector:
    """A real Collector running ``configs`` (merged in order)."""

    program: Program
    configs: list[Path]
    health_url: str | None
    metrics_url: str

    def stop(self) -> None:
        self.program.stop()

    def metrics(self) -> str:
        """Its own metrics, in the Prometheus text format."""
        with urllib.request.urlopen(self.metrics_url, timeout=5) as response:
            return str(response.read().decode("utf-8"))


def start_collector(
    name: str,
    configs: list[Path],
    workdir: Path,
    *,
    env: Mapping[str, str] | None = None,
    health_url: str | None = None,
    metrics_port: int,
) -> Collector:
    """Start the built Collector on ``configs``; wait for ``health_url`` (its health_check
    extension) or, without one, for its own metrics endpoint."""
    binary = stack_binary(COLLECTOR_BINARY)
    argv = [str(binary)] + [f"--config=file:{path}" for path in configs]
    program = start_program(name, argv, workdir, env=env)
    metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        wait_for_http(program, health_url or metrics_url)
    except BaseException:
        program.stop()
        raise
    return Collector(program, configs, health_url, metrics_url)


@dataclasses.dataclass
class Jaeger:
    """A real Jaeger v2 on loopback: OTLP in, its query API out."""

    program: Program
    storage: str
    otlp_grpc: str
    otlp_http: str
    query_url: str

    def stop(self) -> None:
        self.program.stop()

    def get(self, path: str) -> Any:
        """GET ``path`` of the query API as JSON (a 404 "No traces found": None)."""
        try:
            with urllib.request.urlopen(self.query_url + path, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise


JAEGER_STORAGES = ("memory", "badger")
"""The memory store, and Badger: a persistent store embedded in Jaeger that keeps spans
through Jaeger's v1 model (array attributes come back as JSON text)."""


def jaeger_config(
    workdir: Path, storage: str, *, grpc: int, http: int, query_http: int, query_grpc: int
) -> dict[str, Any]:
    """A Jaeger v2 config: OTLP receivers, one trace store, the query API; every port
    given (its own metrics off, so two Jaegers fit on one host)."""
    if storage == "memory":
        backend: dict[str, Any] = {"memory": {"max_traces": 100000}}
    elif storage == "badger":
        backend = {
            "badger": {
                "ephemeral": False,
                "directories": {
                    "keys": str(workdir / "badger" / "keys"),
                    "values": str(workdir / "badger" / "values"),
                },
            }
        }
    else:
        raise ValueError(f"unknown Jaeger storage {storage!r}: one of {JAEGER_STORAGES}")
    return {
        "service": {
            "extensions": ["jaeger_storage", "jaeger_query"],
            "pipelines": {
                "traces": {
                    "receivers": ["otlp"],
                    "processors": ["batch"],
                    "exporters": ["jaeger_storage_exporter"],
                }
            },
            "telemetry": {"metrics": {"level": "none"}, "logs": {"level": "warn"}},
        },
        "extensions": {
            "jaeger_storage": {"backends": {"main": backend}},
            "jaeger_query": {
                "storage": {"traces": "main"},
                "http": {"endpoint": f"127.0.0.1:{query_http}"},
                "grpc": {"endpoint": f"127.0.0.1:{query_grpc}"},
            },
        },
        "receivers": {
            "otlp": {
                "protocols": {
                    "grpc": {"endpoint": f"127.0.0.1:{grpc}"},
                    "http": {"endpoint": f"127.0.0.1:{http}"},
                }
            }
        },
        "processors": {"batch": {}},
        "exporters": {"jaeger_storage_exporter": {"trace_storage": "main"}},
    }


def start_jaeger(workdir: Path, storage: str = "memory") -> Jaeger:
    """Start Jaeger v2 with ``storage`` in ``workdir``; wait until its query API answers."""
    binary = stack_binary(JAEGER_BINARY)
    workdir.mkdir(parents=True, exist_ok=True)
    grpc, http, query_http, query_grpc = (free_port() for _ in range(4))
    config = workdir / f"jaeger-{storage}.yaml"
    config.write_text(
        yaml.safe_dump(
            jaeger_config(
                workdir, storage, grpc=grpc, http=http, query_http=query_http, query_grpc=query_grpc
            )
        ),
        encoding="utf-8",
    )
    program = start_program(f"jaeger-{storage}", [str(binary), f"--config=file:{config}"], workdir)
    query_url = f"http://127.0.0.1:{query_http}"
    try:
        wait_for_http(program, f"{query_url}/api/v3/services")
    except BaseException:
        program.stop()
        raise
    return Jaeger(program, storage, f"127.0.0.1:{grpc}", f"http://127.0.0.1:{http}", query_url)


@contextlib.contextmanager
def running_jaeger(workdir: Path, storage: str = "memory") -> Iterator[Jaeger]:
    """A Jaeger for the length of a ``with`` block."""
    jaeger = start_jaeger(workdir, storage)
    try:
        yield jaeger
    finally:
        jaeger.stop()


# The test's copies of the shipped Collector configs (issue 53): they may change only
# endpoints and ports, the load-balancing resolver, the sampling percentage and waits,
# and the Tempo and Loki exporters swapped for file exporters. Each copy is checked
# against that list before it is written.
ALLOWED_CHANGES = (
    re.compile(r".*\.endpoint$"),
    re.compile(r"^service\.telemetry\.metrics(\..*)?$"),
    re.compile(r"^exporters\.load_balancing\.resolver(\..*)?$"),
    re.compile(r"^processors\.tail_sampling\.decision_wait$"),
    re.compile(r"^processors\.tail_sampling\.policies\[\d+\]\.probabilistic\.sampling_percentage$"),
    re.compile(r"^exporters\.(otlp_grpc/tempo|otlp_http/loki|file/tempo|file/loki)(\..*)?$"),
    re.compile(r"^service\.pipelines\.[\w/]+\.exporters\[\d+\]$"),
)
SWAPPED_EXPORTERS = {"otlp_grpc/tempo": "file/tempo", "otlp_http/loki": "file/loki"}
"""AGPL backends the tests cannot run, and the file exporter each is swapped for."""


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """Dotted paths (``a.b[2].c``) of every value added, removed or changed."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            child = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                found.append(child)
            else:
                found += changed_paths(before[key], after[key], child)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            p
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for p in changed_paths(b, a, f"{path}[{i}]")
        ]
    return [] if before == after else [path]


def disallowed_changes(before: Any, after: Any) -> list[str]:
    """Paths changed beyond what ALLOWED_CHANGES permits."""
    changed = changed_paths(before, after)
    return [p for p in changed if not any(r.match(p) for r in ALLOWED_CHANGES)]


@dataclasses.dataclass
class ConfigCopy:
    """A test's copy of a shipped Collector config, listening on free loopback ports."""

    path: Path
    config: dict[str, Any]
    listen: dict[str, int]
    """Port of each listening endpoint, by component id (``otlp.grpc``, ``health_check``)."""
    metrics_port: int

    @property
    def health_url(self) -> str | None:
        port = self.listen.get("health_check")
        return f"http://127.0.0.1:{port}/" if port else None


def _listening(config: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(label, mapping, key) of each endpoint the config listens on: receivers,
    extensions, and the prometheus exporter's scrape endpoint."""
    for rid, receiver in (config.get("receivers") or {}).items():
        for protocol, settings in ((receiver or {}).get("protocols") or {}).items():
            if isinstance(settings, dict) and "endpoint" in settings:
                yield f"{rid}.{protocol}", settings, "endpoint"
    for eid, extension in (config.get("extensions") or {}).items():
        if isinstance(extension, dict) and "endpoint" in extension:
            yield eid, extension, "endpoint"
    for eid, exporter in (config.get("exporters") or {}).items():
        if eid.split("/")[0] == "prometheus" and isinstance(exporter, dict):
            yield eid, exporter, "endpoint"


def config_copy(
    source: Path,
    workdir: Path,
    *,
    name: str | None = None,
    edit: Callable[[dict[str, Any]], None] | None = None,
    swap_agpl_exporters: bool = False,
    own_metrics: bool = True,
) -> ConfigCopy:
    """Copy ``source`` into ``workdir``: every endpoint it listens on moved to a free
    loopback port, its own metrics too; then ``edit`` (endpoints, resolver, sampling and
    waits only); with ``swap_agpl_exporters`` the Tempo and Loki exporters become file
    exporters writing ``workdir/<tempo|loki>.jsonl``. Raises if the copy changes more.
    ``own_metrics=False`` leaves ``service.telemetry`` alone (a fragment merged into a
    config that sets it)."""
    original = yaml.safe_load(source.read_text(encoding="utf-8"))
    config = copy.deepcopy(original)
    listen: dict[str, int] = {}
    for label, mapping, key in _listening(config):
        listen[label] = free_port()
        mapping[key] = f"127.0.0.1:{listen[label]}"
    metrics_port = free_port()
    service = config.setdefault("service", {})
    if own_metrics:
        service.setdefault("telemetry", {})["metrics"] = collector_telemetry(metrics_port)[
            "metrics"
        ]
    if swap_agpl_exporters:
        exporters = config.get("exporters") or {}
        for old, new in SWAPPED_EXPORTERS.items():
            if old in exporters:
                del exporters[old]
                exporters[new] = {"path": str(workdir / f"{new.split('/')[1]}.jsonl")}
        for pipeline in (service.get("pipelines") or {}).values():
            pipeline["exporters"] = [SWAPPED_EXPORTERS.get(e, e) for e in pipeline["exporters"]]
    if edit is not None:
        edit(config)
    wrong = disallowed_changes(original, config)
    if wrong:
        raise AssertionError(f"the test's copy of {source.name} changes {wrong}")
    path = workdir / (name or source.name)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return ConfigCopy(path, config, listen, metrics_port)
