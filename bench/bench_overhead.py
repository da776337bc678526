"""Traced against untraced, in one process, on the same models: prints the ratios.

    python bench/bench_overhead.py [--repeats 7] [--quick | --smoke] [--kernel-cache]

Measures, against the targets of the traced-backends issue:

- cold compile wall time, first call including backward, each in a fresh inductor cache
  directory, FX-graph and AOT-autograd caches off (aot_eager and inductor; a 3-layer MLP
  and a small TransformerEncoderLayer): target <= 1.03x. Untraced and traced compiles
  alternate (ABBA), median of N each; the ratio of the fastest runs is printed too (the
  least disturbed by other load). ``--kernel-cache`` keeps inductor's compiled kernels
  on disk between compiles instead;
- steady-state overhead per compiled call at the default run-span policy: target <= 1 us.
  Measured on the same compiled graph: Dynamo's compiled function as the traced
  backend returned it against the function it wraps (``__wrapped__``), same inputs,
  alternating rounds, median of the per-round differences. End to end (traced against
  untraced ``torch.compile`` of the same model) is printed too, with its noise floor:
  untraced against a second untraced;
- cost per run span with run_spans="all": target <= 20 us. Same method; printed next to
  the cost of one bare SDK span with the same attributes and link, in the same loop, and
  to the cost with an SDK MeterProvider as well (each recorded run then also records the
  run-duration histogram, with its exemplar);
- resident memory growth over 100,000 compiled calls at the default policy (current
  RSS from /proc/self/statm, not the peak): target < 5 MB.

Spans go to a real SDK TracerProvider with a BatchSpanProcessor and an exporter that
discards them: what a user has, minus the network.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import os
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link

import otel_dynamo
from otel_dynamo import names

TARGET_COMPILE_RATIO = 1.03
TARGET_CALL_OVERHEAD_US = 1.0
TARGET_RUN_SPAN_US = 20.0
TARGET_RSS_GROWTH_MB = 5.0
RSS_CALLS = 100_000
WARMUP_CALLS = 1_000


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to measure: --smoke only checks that every measurement runs."""

    repeats: int
    backends: tuple[str, ...]  # for cold compiles
    call_backends: tuple[str, ...]  # for the steady state
    calls: int
    rounds: int
    rss_calls: int
    fresh_caches: bool = True  # cold compiles: nothing cached on disk or in memory


PLANS = {
    "full": Plan(
        repeats=7,
        backends=("aot_eager", "inductor"),
        call_backends=("eager", "aot_eager", "inductor"),
        calls=2_000,
        rounds=41,
        rss_calls=RSS_CALLS,
    ),
    "quick": Plan(
        repeats=3,
        backends=("aot_eager",),
        call_backends=("eager", "aot_eager"),
        calls=2_000,
        rounds=21,
        rss_calls=RSS_CALLS,
    ),
    "smoke": Plan(
        repeats=1,
        backends=("aot_eager",),
        call_backends=("eager", "aot_eager"),
        calls=100,
        rounds=2,
        rss_calls=2_000,
    ),
}


class DiscardingExporter(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
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


MODELS: dict[str, tuple[Callable[[], torch.nn.Module], Callable[[], torch.Tensor]]] = {
    "mlp": (mlp, lambda: torch.randn(8, 32)),
    "encoder": (encoder, lambda: torch.randn(8, 16, 64)),
}


def median_us(values: list[float]) -> float:
    return statistics.median(values) * 1e6


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


# --- cold compile ------------------------------------------------------------------------


def disable_compile_caches() -> None:
    """No FX-graph or AOT-autograd cache hits from earlier compiles of the same graph."""
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False


def cold_compile_seconds(model_name: str, backend: Any, *, fresh: bool) -> float:
    """Wall time of the first call (forward + backward), compile included."""
    from torch._inductor.utils import fresh_cache

    torch._dynamo.reset()
    factory, make_input = MODELS[model_name]
    torch.manual_seed(0)
    compiled = torch.compile(factory(), backend=backend)
    x = make_input()
    with fresh_cache() if fresh else contextlib.nullcontext():
        start = time.perf_counter()
        compiled(x).sum().backward()
        return time.perf_counter() - start


def compile_times(
    model_name: str, backend_name: str, repeats: int, *, fresh: bool
) -> tuple[list[float], list[float]]:
    tracer_provider = provider()
    plain: list[float] = []
    traced: list[float] = []

    def one_plain() -> None:
        plain.append(cold_compile_seconds(model_name, backend_name, fresh=fresh))

    def one_traced() -> None:
        backend = otel_dynamo.traced(backend_name, tracer_provider=tracer_provider)
        traced.append(cold_compile_seconds(model_name, backend, fresh=fresh))

    one_plain()  # imports and one-time set-up, not counted
    one_traced()
    plain.clear()
    traced.clear()
    for index in range(repeats):  # ABBA: drift hits both alike
        for step in (one_plain, one_traced) if index % 2 == 0 else (one_traced, one_plain):
            step()
    return plain, traced


def report_cold_compile(plan: Plan) -> None:
    caches = (
        "a fresh inductor cache directory each"
        if plan.fresh_caches
        else "inductor's kernel cache kept, FX-graph and AOT caches off"
    )
    print(f"cold compile, first call incl. backward ({caches}; median of {plan.repeats}, ABBA)")
    for backend_name in plan.backends:
        for model_name in MODELS:
            plain, traced = compile_times(
                model_name, backend_name, plan.repeats, fresh=plan.fresh_caches
            )
            ratio = statistics.median(traced) / statistics.median(plain)
            fastest = min(traced) / min(plain)
            print(
                f"  {backend_name:9s} {model_name:7s} untraced {statistics.median(plain):6.3f} s"
                f"  traced {statistics.median(traced):6.3f} s  ratio {ratio:5.3f}x"
                f"  (fastest {fastest:5.3f}x)  {verdict(ratio <= TARGET_COMPILE_RATIO)}"
            )


# --- per call -------------------------------------------------------------------------------


@dataclasses.dataclass
class Captured:
    """The function Dynamo calls for the model's one graph, and the inputs it was built for."""

    run: Callable[..., Any]
    inputs: list[Any]


def compile_captured(backend: Any) -> Captured:
    captured: list[Captured] = []

    def capturing(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        compiled = backend(gm, example_inputs, **kwargs)
        captured.append(Captured(compiled, list(example_inputs)))
        return compiled

    torch._dynamo.reset()
    torch.manual_seed(0)
    with torch.no_grad():
        torch.compile(mlp(), backend=capturing)(torch.randn(8, 32))
    (graph,) = captured
    return graph


def seconds_per_call(fn: Callable[..., Any], args: list[Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls


def alternating(fns: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each fn measured once per round, in turn (order flipped every other round), so
    load changes and drift hit all of them alike; differences are taken per round."""
    samples: dict[str, list[float]] = {key: [] for key in fns}
    order = list(fns)
    for index in range(rounds):
        for key in order if index % 2 == 0 else reversed(order):
            samples[key].append(fns[key]())
    return samples


def wrapper_overhead_us(backend_name: str, run_spans: str, plan: Plan) -> tuple[float, float]:
    """(untraced us/call, added us/call): the traced graph function against what it wraps."""
    backend = otel_dynamo.traced(backend_name, tracer_provider=provider(), run_spans=run_spans)
    graph = compile_captured(backend)
    inner = graph.run.__wrapped__
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            graph.run(*graph.inputs)
        samples = alternating(
            {
                "inner": lambda: seconds_per_call(inner, graph.inputs, plan.calls),
                "traced": lambda: seconds_per_call(graph.run, graph.inputs, plan.calls),
            },
            plan.rounds,
        )
    deltas = [t - i for t, i in zip(samples["traced"], samples["inner"], strict=True)]
    return median_us(samples["inner"]), median_us(deltas)


def end_to_end_us(backend_name: str, plan: Plan) -> tuple[float, float]:
    """(traced - untraced, untraced - untraced) us/call, compiled whole models, default policy."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model, x = mlp(), torch.randn(8, 32)
    traced_backend = otel_dynamo.traced(backend_name, tracer_provider=provider())
    variants = {
        "plain": torch.compile(model, backend=backend_name),
        "plain_again": torch.compile(model, backend=backend_name),
        "traced": torch.compile(model, backend=traced_backend),
    }
    with torch.no_grad():
        for compiled in variants.values():
            for _ in range(WARMUP_CALLS):
                compiled(x)
        samples = alternating(
            {
                key: (lambda c=c: seconds_per_call(c, [x], plan.calls))
                for key, c in variants.items()
            },
            plan.rounds,
        )
    plain = statistics.median(samples["plain"])
    return (
        (statistics.median(samples["traced"]) - plain) * 1e6,
        (statistics.median(samples["plain_again"]) - plain) * 1e6,
    )


def report_steady_state(plan: Plan) -> None:
    print("steady state, default policy (auto), no_grad calls of a 3-layer MLP")
    for backend_name in plan.call_backends:
        base, added = wrapper_overhead_us(backend_name, "auto", plan)
        traced, floor = end_to_end_us(backend_name, plan)
        print(
            f"  {backend_name:9s} untraced {base:6.2f} us/call  added {added:+6.3f} us/call"
            f"  {verdict(added <= TARGET_CALL_OVERHEAD_US)}"
            f"  | end to end {traced:+6.2f} us (noise floor {floor:+6.2f} us)"
        )


# --- run spans ------------------------------------------------------------------------------


def with_bare_span(inner: Callable[..., Any]) -> Callable[..., Any]:
    """``inner`` inside one plain SDK span with a run span's attributes and link."""
    tracer = provider().get_tracer("bench")
    compile_span = tracer.start_span("compile")
    compile_span.end()
    link = compile_span.get_span_context()
    attributes = {
        names.ATTR_COMPILE_ID: "0/0",
        names.ATTR_BACKEND: "aot_eager",
        names.ATTR_RUN_KIND: names.RUN_KIND_INFERENCE,
        names.ATTR_AOT_GRAPH_NAME: "model__0_inference_0",
    }

    def run(*args: Any) -> Any:
        span = tracer.start_span(
            names.SPAN_RUN_INFERENCE,
            links=(Link(link),),
            attributes={**attributes, names.ATTR_RUN_INDEX: 1},
        )
        try:
            return inner(*args)
        finally:
            span.end()

    return run


def report_run_spans(plan: Plan) -> None:
    backend = otel_dynamo.traced("aot_eager", tracer_provider=provider(), run_spans="all")
    graph = compile_captured(backend)
    with_metrics = otel_dynamo.traced(
        "aot_eager",
        tracer_provider=provider(),
        meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]),
        run_spans="all",
    )
    metered = compile_captured(with_metrics).run
    inner = graph.run.__wrapped__
    bare = with_bare_span(inner)
    with torch.no_grad():
        for fn in (graph.run, metered, bare):
            for _ in range(WARMUP_CALLS):
                fn(*graph.inputs)
        samples = alternating(
            {
                "inner": lambda: seconds_per_call(inner, graph.inputs, plan.calls),
                "traced": lambda: seconds_per_call(graph.run, graph.inputs, plan.calls),
                "metered": lambda: seconds_per_call(metered, graph.inputs, plan.calls),
                "sdk": lambda: seconds_per_call(bare, graph.inputs, plan.calls),
            },
            plan.rounds,
        )
    per_span, per_metered, sdk = (
        median_us([t - i for t, i in zip(samples[key], samples["inner"], strict=True)])
        for key in ("traced", "metered", "sdk")
    )
    print(
        f"run span cost (run_spans=all, aot_eager MLP): {per_span:6.2f} us per recorded run"
        f"  {verdict(per_span <= TARGET_RUN_SPAN_US)}"
        f"  | one plain SDK span with the same attributes and link: {sdk:6.2f} us"
    )
    print(
        f"  with an SDK MeterProvider too (run-duration histogram, exemplar): {per_metered:6.2f} us"
    )


# --- memory ---------------------------------------------------------------------------------


def rss_mb() -> float:
    """Current resident set size (the peak, ru_maxrss, would hide growth below it)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_growth_mb(backend: Any, calls: int) -> float:
    torch._dynamo.reset()
    torch.manual_seed(0)
    compiled = torch.compile(mlp(), backend=backend)
    x = torch.randn(8, 32)
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            compiled(x)
        gc.collect()
        before = rss_mb()
        for _ in range(calls):
            compiled(x)
        gc.collect()
    return rss_mb() - before


def report_memory(plan: Plan) -> None:
    traced = memory_growth_mb(
        otel_dynamo.traced("aot_eager", tracer_provider=provider()), plan.rss_calls
    )
    plain = memory_growth_mb("aot_eager", plan.rss_calls)
    print(
        f"RSS growth over {plan.rss_calls:,} calls (default policy, aot_eager):"
        f" traced {traced:+.2f} MB, untraced {plain:+.2f} MB"
        f"  {verdict(traced < TARGET_RSS_GROWTH_MB)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, help="cold compiles of each kind (default 7)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="aot_eager only, 3 repeats")
    size.add_argument("--smoke", action="store_true", help="check that everything runs")
    parser.add_argument(
        "--kernel-cache",
        action="store_true",
        help="cold compiles keep inductor's on-disk kernel cache (FX-graph and AOT caches"
        " stay off): a smaller compile time, so a harsher test of telemetry's fixed cost",
    )
    args = parser.parse_args()
    plan = PLANS["smoke" if args.smoke else "quick" if args.quick else "full"]
    plan = dataclasses.replace(
        plan, repeats=args.repeats or plan.repeats, fresh_caches=not args.kernel_cache
    )
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, {torch.get_num_threads()} threads")
    disable_compile_caches()
    report_cold_compile(plan)
    report_steady_state(plan)
    report_run_spans(plan)
    report_memory(plan)


if __name__ == "__main__":
    main()
