"""An optional Prometheus scrape endpoint (``/metrics``) for the meter provider.

Uses its own ``CollectorRegistry``, so several ProcessProviders in one process (tests)
never collide in prometheus_client's global registry. The exporter takes a registry from
OpenTelemetry 1.4x on; an older one (0.59b0, with 1.38) registers in the global registry,
which is then served, prometheus_client's own process and platform series with it.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable

from opentelemetry.sdk.metrics.export import MetricReader

INSTALL_HINT = "pip install opentelemetry-exporter-prometheus (otel_dynamo's prometheus extra)"


@dataclasses.dataclass(frozen=True)
class PrometheusEndpoint:
    reader: MetricReader
    stop: Callable[[], None]
    url: str


def start_prometheus(*, host: str, port: int) -> PrometheusEndpoint:
    """Serve ``http://host:port/metrics``; raises ImportError or OSError (port in use)."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

    if "registry" in inspect.signature(PrometheusMetricReader).parameters:
        registry = CollectorRegistry(auto_describe=True)
        reader = PrometheusMetricReader(registry=registry)
    else:
        registry, reader = REGISTRY, PrometheusMetricReader()
    try:
        server, _thread = start_http_server(port, addr=host, registry=registry)
    except OSError:
        reader.shutdown()  # out of the global registry again, where it went there
        raise
    origin_pid = os.getpid()

    def stop() -> None:
        if os.getpid() == origin_pid:  # a forked child has no serving thread to stop
            server.shutdown()
        server.server_close()

    return PrometheusEndpoint(reader, stop, f"http://{host}:{port}/metrics")
