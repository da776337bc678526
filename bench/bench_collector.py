"""What a dead, silent or failing collector costs a job: wall time and memory. Prints numbers.

    python bench/bench_collector.py [--runs N] [--spans N]

- wall time, spawn to exit, of tests/programs/telemetry_job.py (spans, log events and
  metrics through setup_providers; about 1 s of work) against a closed port, a black
  hole (accepts TCP, never answers) and a failing collector (HTTP 503 / gRPC error),
  over gRPC and HTTP/protobuf, minus the same job with telemetry off; target <= 1 s;
- resident memory growth over 100,000 spans with a dead exporter (closed port and black
  hole), in a fresh child process each; target <= 50 MB.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))

import _export_support as support  # noqa: E402 - after the path tweak above

DEFAULT_RUNS = 3
DEFAULT_SPANS = 100_000
WARMUP_SPANS = 2_000
OVERHEAD_TARGET_S = 1.0
MEMORY_TARGET_MB = 50.0
FILES = "files"
SPAN_ATTRIBUTES = {
    "torch.compile.id": "12/0",
    "torch.compile.backend": "inductor",
    "torch.compile.graph.op_count": 42,
    "torch.compile.graph.input.shapes": ["[8, 16]", "[16, 32]"],
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--spans", type=int, default=DEFAULT_SPANS)
    parser.add_argument("--memory-child", metavar="ENDPOINT", help=argparse.SUPPRESS)
    parser.add_argument("--protocol", default="grpc", help=argparse.SUPPRESS)
    return parser.parse_args()


# --- wall time -------------------------------------------------------------------------


def job_seconds(env: dict[str, str], telemetry: str, runs: int) -> list[float]:
    results = []
    for _ in range(runs):
        result = support.run_program(support.TELEMETRY_JOB, "--telemetry", telemetry, env=env)
        if result.returncode != 0:
            raise SystemExit(f"job failed:\n{result.stderr}")
        results.append(result.wall_s)
    return results


def overhead_table(runs: int) -> list[tuple[str, float, float]]:
    off = min(job_seconds(support.child_environ(), "off", runs))
    rows = [("telemetry off", off, 0.0)]
    for name, (collector, protocol) in collectors().items():
        with collector() as port:
            env = support.child_environ(
                OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
                OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
            )
            on = job_seconds(env, "on", runs)
        rows.append((name, statistics.median(on), min(on) - off))
    return rows


def collectors() -> dict:
    import test_collector_failures as cases

    return cases.CASES


# --- memory ----------------------------------------------------------------------------


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def memory_child(endpoint: str, protocol: str, spans: int) -> None:
    """In a fresh process: RSS growth over ``spans`` spans exported to ``endpoint``."""
    from otel_dynamo._config.settings import Settings
    from otel_dynamo._providers.setup import setup_providers

    environ = {"OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
    if endpoint != FILES:
        environ |= {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        }
    with tempfile.TemporaryDirectory() as output_dir:
        telemetry = setup_providers(Settings(output_dir=output_dir), environ=environ)
        measure_spans(telemetry, spans)
        telemetry.shutdown(0.5)


def measure_spans(telemetry, spans: int) -> None:  # type: ignore[no-untyped-def]
    tracer = telemetry.tracer_provider.get_tracer("bench")
    make_spans(tracer, WARMUP_SPANS)
    before = rss_mb()
    started = time.perf_counter()
    make_spans(tracer, spans)
    seconds = time.perf_counter() - started
    after = rss_mb()
    print(json.dumps({"growth_mb": after - before, "us_per_span": seconds / spans * 1e6}))


def make_spans(tracer, count: int) -> None:  # type: ignore[no-untyped-def]
    for index in range(count):
        with tracer.start_as_current_span(
            "torch.compile.graph", attributes=SPAN_ATTRIBUTES
        ) as span:
            span.set_attribute("torch.compile.graph.index", index)


def memory_table(spans: int) -> list[tuple[str, float, float]]:
    rows = [("healthy files (reference)", *memory_run(FILES, "", spans))]
    dead = {"closed port": support.free_port, "black hole": None}
    for name, port_of in dead.items():
        for protocol in ("grpc", "http/protobuf"):
            if port_of is None:
                with support.BlackHole() as hole:
                    row = memory_run(hole.port, protocol, spans)
            else:
                row = memory_run(port_of(), protocol, spans)
            rows.append((f"{name}, {protocol}", *row))
    return rows


def memory_run(port: int | str, protocol: str, spans: int) -> tuple[float, float]:
    target = port if port == FILES else f"http://127.0.0.1:{port}"
    command = [sys.executable, __file__, "--memory-child", str(target)]
    command += ["--protocol", protocol, "--spans", str(spans)]
    env = support.child_environ()
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["growth_mb"], result["us_per_span"]


# --- main ------------------------------------------------------------------------------


def main() -> None:
    args = parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.protocol, args.spans)
        return
    print(
        f"Wall time of a ~1 s job, spawn to exit (median of {args.runs}; overhead from the fastest)"
    )
    for name, seconds, overhead in overhead_table(args.runs):
        verdict = "" if name == "telemetry off" else ok(overhead <= OVERHEAD_TARGET_S)
        print(f"  {name:<20} {seconds:6.2f} s   overhead {overhead:+6.2f} s  {verdict}")
    target = f"target <= {MEMORY_TARGET_MB:g} MB"
    print(f"\nRSS growth over {args.spans:,} spans with a dead exporter ({target})")
    for name, growth, micros in memory_table(args.spans):
        verdict = ok(growth <= MEMORY_TARGET_MB)
        print(f"  {name:<26} {growth:6.1f} MB   {micros:5.1f} us/span  {verdict}")


def ok(passed: bool) -> str:
    return "ok" if passed else "OVER TARGET"


if __name__ == "__main__":
    main()
