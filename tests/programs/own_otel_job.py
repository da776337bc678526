"""A training job with its own OpenTelemetry, traced by otel_dynamo.instrument().

``--own`` says what the job sets up before it compiles:

* ``global-tracer``: an SDK TracerProvider set globally (nothing for metrics or logs);
* ``passed-tracer``: an SDK TracerProvider passed to ``instrument(tracer_provider=...)``,
  never set globally;
* ``global-all``: SDK tracer, meter and logger providers, all three set globally.

The job's providers carry the resource ``service.name=own-otel-job``, ``job.team=vision``
and export into memory. The job makes step spans around calls of a compiled function
(two compiles: a second input shape recompiles), then prints one JSON line: the spans
its own exporter received (name, trace id, span id, parent span id) and how many metric
points and log records its own meter and logger providers got.
"""

from __future__ import annotations

import argparse
import json

import torch
from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs import export as logs_export
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_dynamo

SERVICE_NAME = "own-otel-job"
JOB_ATTRIBUTES = {"service.name": SERVICE_NAME, "job.team": "vision"}
STEP_SPAN = "train.step"
STEPS = 3


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    choices = ("global-tracer", "passed-tracer", "global-all")
    parser.add_argument("--own", choices=choices, required=True)
    return parser.parse_args()


def step(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sin() + 1


def metric_points(reader: InMemoryMetricReader) -> int:
    data = reader.get_metrics_data()
    return sum(
        len(metric.data.data_points)
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
    )


def main() -> None:
    args = parse_args()
    resource = Resource.create(JOB_ATTRIBUTES)
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    # the in-memory exporter's name from 1.39; 1.38's before
    exporter_class = getattr(logs_export, "InMemoryLogRecordExporter", None)
    records = (exporter_class or logs_export.InMemoryLogExporter)()
    if args.own == "passed-tracer":
        otel_dynamo.instrument(tracer_provider=tracer_provider)
    else:
        trace.set_tracer_provider(tracer_provider)
        if args.own == "global-all":
            metrics.set_meter_provider(MeterProvider(metric_readers=[reader], resource=resource))
            logger_provider = LoggerProvider(resource=resource)
            logger_provider.add_log_record_processor(SimpleLogRecordProcessor(records))
            _logs.set_logger_provider(logger_provider)
        otel_dynamo.instrument()
    compiled = torch.compile(step, backend="eager")
    tracer = tracer_provider.get_tracer("own_otel_job")
    for index in range(STEPS):
        with tracer.start_as_current_span(STEP_SPAN, attributes={"step": index}):
            compiled(torch.ones(4 + (index == STEPS - 1)))
    finished = [
        {
            "name": span.name,
            "trace_id": format(span.context.trace_id, "032x"),
            "span_id": format(span.context.span_id, "016x"),
            "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
        }
        for span in spans.get_finished_spans()
    ]
    owns_all = args.own == "global-all"
    result = {
        "spans": finished,
        "job_metric_points": metric_points(reader) if owns_all else 0,
        "job_log_records": len(records.get_finished_logs()),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
