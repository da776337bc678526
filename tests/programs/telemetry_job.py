"""A small job that emits spans, log events and metrics through setup_providers, then exits.

Used by the collector-failure and fork tests (and bench/bench_collector.py) as a real
child process. ``--telemetry off`` runs the same work without importing otel_dynamo,
so the wall-time difference is what telemetry costs the job, exit included.

Prints one JSON line to stdout: the trace id of the job's root span (when on) and the
counts emitted.
"""

from __future__ import annotations

import argparse
import json
import time

DEFAULT_STEPS = 20
DEFAULT_STEP_SECONDS = 0.05
DEFAULT_SPANS_PER_STEP = 10


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--telemetry", choices=("on", "off"), default="on")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--step-seconds", type=float, default=DEFAULT_STEP_SECONDS)
    parser.add_argument("--spans-per-step", type=int, default=DEFAULT_SPANS_PER_STEP)
    return parser.parse_args()


def work(seconds: float) -> None:
    """Stand-in for a training step: a little CPU, mostly waiting."""
    deadline = time.perf_counter() + seconds
    total = 0
    while time.perf_counter() < deadline:
        total += sum(range(1000))
        time.sleep(0.005)


def run_without_telemetry(args: argparse.Namespace) -> dict:
    for _ in range(args.steps):
        work(args.step_seconds)
    return {"steps": args.steps}


def run_with_telemetry(args: argparse.Namespace) -> dict:
    from otel_dynamo._config.settings import load_settings
    from otel_dynamo._providers.setup import setup_providers
    from otel_dynamo._recording.structured_log import EventLogger

    telemetry = setup_providers(load_settings())
    tracer = telemetry.tracer_provider.get_tracer("telemetry_job")
    counter = telemetry.meter_provider.get_meter("telemetry_job").create_counter("job.steps")
    events = EventLogger(logger_provider=telemetry.logger_provider)
    with tracer.start_as_current_span("job") as root:
        for step in range(args.steps):
            with tracer.start_as_current_span("step", attributes={"step": step}):
                for index in range(args.spans_per_step - 1):
                    with tracer.start_as_current_span("op", attributes={"index": index}):
                        pass
                events.emit("job.step_done", step=step)
                counter.add(1)
                work(args.step_seconds)
    trace_id = format(root.get_span_context().trace_id, "032x")
    return {
        "steps": args.steps,
        "trace_id": trace_id,
        "spans": args.steps * args.spans_per_step + 1,
    }


def main() -> None:
    args = parse_args()
    run = run_with_telemetry if args.telemetry == "on" else run_without_telemetry
    print(json.dumps(run(args)), flush=True)


if __name__ == "__main__":
    main()
