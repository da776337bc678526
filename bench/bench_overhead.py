"""Traced against untraced, in one process, on the same models: prints the ratios.

    python bench/bench_overhead.py [--quick]

- cold compile wall time (aot_eager and inductor; a 3-layer MLP and a small
  TransformerEncoderLayer), target <= 1.03x;
- steady-state overhead per compiled call at the default run-span policy, target <= 1 us;
- cost per run span with run_spans="all", target <= 20 us;
- resident memory growth over 100,000 compiled calls at the default policy, target < 5 MB.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import time

import torch
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

import otel_dynamo


class DiscardingExporter(SpanExporter):
    def export(self, spans):  # type: ignore[no-untyped-def]
        return SpanExportResult.SUCCESS


def provider() -> TracerProvider:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(DiscardingExporter()))
    return tracer_provider


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 8),
    )


def encoder() -> torch.nn.Module:
    return torch.nn.TransformerEncoderLayer(
        d_model=64, nhead=4, dim_feedforward=128, batch_first=True
    )


MODELS = {
    "mlp": (mlp, lambda: torch.randn(8, 32)),
    "encoder": (encoder, lambda: torch.randn(8, 16, 64)),
}


def disable_compile_caches() -> None:
    """Cold means cold: no FX-graph or AOT-autograd cache hits from earlier compiles."""
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False


def cold_compile_seconds(model_name: str, backend) -> float:  # type: ignore[no-untyped-def]
    torch._dynamo.reset()
    factory, make_input = MODELS[model_name]
    torch.manual_seed(0)
    compiled = torch.compile(factory(), backend=backend)
    x = make_input()
    start = time.perf_counter()
    compiled(x).sum().backward()
    return time.perf_counter() - start


def compile_ratio(model_name: str, backend_name: str, repeats: int) -> tuple[float, float, float]:
    tracer_provider = provider()
    plain, traced = [], []
    for _ in range(repeats):  # interleaved, so drift hits both alike
        plain.append(cold_compile_seconds(model_name, backend_name))
        traced.append(
            cold_compile_seconds(
                model_name, otel_dynamo.traced(backend_name, tracer_provider=tracer_provider)
            )
        )
    return (
        statistics.median(plain),
        statistics.median(traced),
        statistics.median(traced) / statistics.median(plain),
    )


def per_call_seconds(compiled, x, calls: int) -> float:  # type: ignore[no-untyped-def]
    with torch.no_grad():
        for _ in range(200):
            compiled(x)
        start = time.perf_counter()
        for _ in range(calls):
            compiled(x)
        return (time.perf_counter() - start) / calls


def steady_state(backend_name: str, run_spans: str, calls: int, rounds: int) -> tuple[float, float]:
    torch._dynamo.reset()
    model, x = mlp(), torch.randn(8, 32)
    plain = torch.compile(model, backend=backend_name)
    traced = torch.compile(
        mlp(),
        backend=otel_dynamo.traced(backend_name, tracer_provider=provider(), run_spans=run_spans),
    )
    deltas, bases = [], []
    for _ in range(rounds):
        base = per_call_seconds(plain, x, calls)
        deltas.append(per_call_seconds(traced, x, calls) - base)
        bases.append(base)
    return min(bases), statistics.median(deltas)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_growth_mb(calls: int) -> float:
    torch._dynamo.reset()
    compiled = torch.compile(
        mlp(), backend=otel_dynamo.traced("aot_eager", tracer_provider=provider())
    )
    x = torch.randn(8, 32)
    with torch.no_grad():
        for _ in range(1000):
            compiled(x)
        gc.collect()
        before = rss_mb()
        for _ in range(calls):
            compiled(x)
        gc.collect()
    return rss_mb() - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats; no inductor")
    args = parser.parse_args()
    repeats = 2 if args.quick else 3
    disable_compile_caches()
    backends = ["aot_eager"] if args.quick else ["aot_eager", "inductor"]
    print(f"cold compile (median of {repeats}, first call incl. backward)")
    for backend_name in backends:
        for model_name in MODELS:
            plain, traced, ratio = compile_ratio(model_name, backend_name, repeats)
            print(
                f"  {backend_name:10s} {model_name:8s} untraced {plain:7.3f} s"
                f"  traced {traced:7.3f} s  ratio {ratio:5.3f}x"
            )
    for backend_name in ["aot_eager", "inductor"] if not args.quick else ["aot_eager"]:
        base, delta = steady_state(backend_name, "auto", 20000, 5)
        print(
            f"steady state {backend_name}: untraced {base * 1e6:6.2f} us/call,"
            f" overhead {delta * 1e6:+6.3f} us/call (default policy)"
        )
    base, delta = steady_state("aot_eager", "all", 5000, 3)
    print(f"run span cost (run_spans=all): {delta * 1e6:6.2f} us per recorded run")
    print(f"RSS growth over 100,000 calls (default policy): {memory_growth_mb(100_000):.2f} MB")


if __name__ == "__main__":
    main()
