"""An optional Prometheus scrape endpoint (``/metrics``) for the meter provider.

Uses its own ``CollectorRegistry``, so several ProcessProviders in one process (tests)
never collide in prometheus_client's global registry.
"""

from __future__ import annotations

import dataclasses
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
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry(auto_describe=True)
    server, _thread = start_http_server(port, addr=host, registry=registry)
    reader = PrometheusMetricReader(registry=registry)
    origin_pid = os.getpid()

    def stop() -> None:
        if os.getpid() == origin_pid:  # a forked child has no serving thread to stop
            server.shutdown()
        server.server_close()

    return PrometheusEndpoint(reader, stop, f"http://{host}:{port}/metrics")
