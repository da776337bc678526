"""Real in-memory exporters for all three signals, and a small training model."""

from __future__ import annotations

from typing import Any

import torch
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs import export as logs_export
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_dynamo


def in_memory_log_exporter() -> Any:
    """The SDK's in-memory log exporter: ``InMemoryLogRecordExporter`` from 1.39,
    ``InMemoryLogExporter`` on 1.38 (each finished record has ``log_record`` on both)."""
    exporter_class = getattr(logs_export, "InMemoryLogRecordExporter", None)
    return (exporter_class or logs_export.InMemoryLogExporter)()


class Signals:
    """A tracer, meter and logger provider, each exporting into memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.logs = in_memory_log_exporter()
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))

    def traced(self, backend: str = "aot_eager", **options: Any) -> Any:
        return otel_dynamo.traced(
            backend,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            logger_provider=self.logger_provider,
            **options,
        )

    def finished(self) -> list[Any]:
        return list(self.spans.get_finished_spans())

    def events(self, name: str) -> list[dict]:
        """Attributes of each log record whose event name (body) is ``name``."""
        records = [data.log_record for data in self.logs.get_finished_logs()]
        return [dict(record.attributes or {}) for record in records if record.body == name]

    def points(self, metric: str) -> list[tuple[dict, Any]]:
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for each in scope.metrics:
                    if each.name == metric:
                        found += [(dict(p.attributes), p.value) for p in each.data.data_points]
        return found

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        self.logger_provider.shutdown()


class TwoLayer(torch.nn.Module):
    """Linear -> torch.relu -> Linear: the op torch's fault backends target."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.first = torch.nn.Linear(4, 8)
        self.second = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.relu(self.first(x)))


def train_step(model: Any, compiled: Any, x: torch.Tensor) -> torch.Tensor:
    """One forward + backward + SGD step; returns the loss."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    loss = compiled(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.detach()
