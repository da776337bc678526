"""The embedded default's file writer against OpenTelemetry's JSON-file exporter.

    python bench/bench_file_writer.py [--spans 512] [--rounds 15]

Both write the same finished spans (twelve string attributes, two numbers and an event
each, as a compile span has about) as one OTLP/JSON line to memory; medians of alternating
rounds, milliseconds per batch, and whether the two lines parse to the same request. The
writer runs on the batch processor's thread, never on the job's, but it holds the GIL
meanwhile. Needs ``opentelemetry-exporter-otlp-json-file`` (the test extra) for the
comparison; without it, ours alone.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_dynamo._providers.json_lines import JsonLinesSpanExporter


def finished_spans(count: int) -> Sequence[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    for index in range(count):
        attributes: dict[str, Any] = {f"a{j}": f"value-{j}" * 4 for j in range(12)}
        attributes.update(n=index, seconds=0.25)
        with tracer.start_as_current_span("torch.compile.phase", attributes=attributes) as span:
            span.add_event("event", {"k": 1})
    provider.shutdown()
    return memory.get_finished_spans()


def one_line(
    make: Callable[[io.StringIO], Any], spans: Sequence[ReadableSpan]
) -> tuple[float, str]:
    stream = io.StringIO()
    exporter = make(stream)
    started = time.perf_counter()
    exporter.export(spans)
    return (time.perf_counter() - started) * 1e3, stream.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    spans = finished_spans(args.spans)
    writers: dict[str, Callable[[io.StringIO], Any]] = {"otel_dynamo": JsonLinesSpanExporter}
    try:
        from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    except ImportError:
        print("opentelemetry-exporter-otlp-json-file is not installed: ours alone")
    else:
        writers["OpenTelemetry JSON-file"] = lambda stream: FileSpanExporter(stream=stream)
    times: dict[str, list[float]] = {name: [] for name in writers}
    lines: dict[str, str] = {}
    for _ in range(args.rounds):  # alternate so drift hits both alike
        for name, make in writers.items():
            seconds, lines[name] = one_line(make, spans)
            times[name].append(seconds)
    for name, measured in times.items():
        median = statistics.median(measured)
        each_us = median / args.spans * 1e3
        print(f"{name}: {median:.1f} ms per {args.spans} spans ({each_us:.0f} µs a span)")
    if len(lines) == 2:
        ours, theirs = (json.loads(line) for line in lines.values())
        print(f"same request: {ours == theirs}")


if __name__ == "__main__":
    main()
