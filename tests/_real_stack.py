"""The real programs of the stack, started on loopback for one test: the OpenTelemetry
Collector and Jaeger v2 built from the pinned Go modules of collector-config/build
(`bash collector-config/build/build.sh`, which the README's test command runs).

Where they were not built (a machine without Go), ``stack_binary`` skips the test and
says why; every port is a free one on 127.0.0.1, every file inside the test's directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
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
    except TimeoutError:
        raise TimeoutError(f"{program.name} did not answer {url}:\n{program.output()[-4000:]}")


def collector_telemetry(metrics_port: int) -> dict[str, Any]:
    """A Collector's own ``service.telemetry`` with its metrics endpoint moved to a free
    loopback port (by default every Collector binds 8888, so two could not run side by
    side)."""
    return {
        "metrics": {
            "readers": [
                {
                    "pull": {
                        "exporter": {
                            "prometheus": {"host": "127.0.0.1", "port": metrics_port}
                        }
                    }
                }
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
    result = subprocess.run(argv, capture_output=True, text=True, env=merged, timeout=60)
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
