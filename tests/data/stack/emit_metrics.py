"""Records every names.py metric once through the real Prometheus exporter, for name checks.

tests/stack/test_stack_promnames.py compares the series names the real exporter prints for each
METRIC_* instrument (kind and unit from its docstring) with dashgen.promnames; the PromQL
tests scrape a real traced job instead (tests/data/stack/traced_job.py).

    python emit_metrics.py --print-once       # record one value each, print the exposition
    python emit_metrics.py --port 9464        # serve on 127.0.0.1:9464 and keep recording
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "grafana"))

import prometheus_client  # noqa: E402
from dashgen import catalog  # noqa: E402
from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402

N = catalog.name
ATTRIBUTE_VALUES = {  # attribute constant -> values cycled through
    "ATTR_BACKEND": ["inductor", "aot_eager"],
    "ATTR_OUTCOME": [N("OUTCOME_SUCCESS"), N("OUTCOME_FAILURE")],
    "ATTR_TIME_CATEGORY": [N("TIME_TRACING"), N("TIME_BACKEND_CODEGEN")],
    "ATTR_GRAPH_BREAK_KIND": ["print", "data_dependent"],
    "ATTR_RUN_KIND": [N("RUN_KIND_FORWARD"), N("RUN_KIND_BACKWARD")],
    "ATTR_STAGE": ["compile", "run"],
    "ATTR_ERROR_TYPE": ["torch._dynamo.exc.BackendCompilerFailed"],
    "ATTR_FAULT_KIND": ["compile"],
    "ATTR_EXPORT_OPERATION": [
        N("EXPORT_OPERATION_EXPORT"),
        N("EXPORT_OPERATION_DECOMPOSITIONS"),
    ],
    "ATTR_EXPORT_OUTCOME": [N("OUTCOME_SUCCESS"), N("OUTCOME_FAILURE")],
}
METRIC_ATTRIBUTES = {
    "METRIC_COMPILES": ("ATTR_BACKEND", "ATTR_OUTCOME"),
    "METRIC_COMPILE_DURATION": ("ATTR_BACKEND", "ATTR_OUTCOME"),
    "METRIC_COMPILE_TIME": ("ATTR_BACKEND", "ATTR_TIME_CATEGORY"),
    "METRIC_GRAPHS": ("ATTR_BACKEND",),
    "METRIC_GRAPH_BREAKS": ("ATTR_GRAPH_BREAK_KIND",),
    "METRIC_RUNS": ("ATTR_RUN_KIND",),
    "METRIC_RUN_DURATION": ("ATTR_RUN_KIND",),
    "METRIC_FAILURES": ("ATTR_STAGE", "ATTR_ERROR_TYPE"),
    "METRIC_FAULTS": ("ATTR_FAULT_KIND",),
    "METRIC_EXPORTS": ("ATTR_EXPORT_OPERATION", "ATTR_EXPORT_OUTCOME"),
    "METRIC_EXPORT_DURATION": ("ATTR_EXPORT_OPERATION", "ATTR_EXPORT_OUTCOME"),
}
RESOURCE = {
    "service.name": "otel-dynamo-stack-test",
    N("RESOURCE_RANK"): 0,
    N("RESOURCE_WORLD_SIZE"): 1,
    N("RESOURCE_RUN_ID"): "stack-test",
}


def instruments(meter) -> dict[str, object]:
    """One instrument per METRIC_* constant, of the kind and unit names.py states."""
    made = {}
    for spec in catalog.metric_specs():
        create = meter.create_counter if spec.kind == "counter" else meter.create_histogram
        made[spec.constant] = (spec.kind, create(spec.name, unit=spec.unit))
    return made


def record(made: dict[str, object], step: int) -> None:
    """Record one value per instrument; attributes cycle so every label value appears."""
    for constant, (kind, instrument) in made.items():
        keys = METRIC_ATTRIBUTES.get(constant, ())
        attrs = {N(k): ATTRIBUTE_VALUES[k][step % len(ATTRIBUTE_VALUES[k])] for k in keys}
        if kind == "counter":
            instrument.add(1, attrs)
        else:
            instrument.record(random.uniform(0.01, 2.0), attrs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--print-once", action="store_true")
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    provider = MeterProvider(
        metric_readers=[PrometheusMetricReader()], resource=Resource.create(RESOURCE)
    )
    made = instruments(provider.get_meter("otel_dynamo"))
    if args.print_once:
        record(made, 0)
        sys.stdout.write(prometheus_client.generate_latest().decode())
        return 0
    prometheus_client.start_http_server(args.port, addr="127.0.0.1")
    deadline = time.monotonic() + args.seconds
    for step in itertools.count():
        if time.monotonic() > deadline:
            return 0
        record(made, step)
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
