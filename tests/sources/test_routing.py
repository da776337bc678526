"""Dynamo's process-wide events reach the recorder of the traced backend that compiles the
frame, decided for that compile: never the most recently used backend, never an
untraced compile's.

Ground truth is a counting backend around the real one (graphs and ops per compile id).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import torch
from _counting import CountingBackend
from _export_support import child_environ, json_spans, one_file
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_dynamo
from otel_dynamo import names

JOB = Path(__file__).parents[1] / "programs" / "model_and_loss_job.py"
TIMEOUT_S = 240


@dataclasses.dataclass(frozen=True)
class Recorded:
    """One span, reduced to what routing decides: its name, place in the trace, attributes."""

    name: str
    span_id: int | str
    parent_id: int | str | None
    trace_id: int | str
    attributes: Mapping[str, Any]


def from_sdk(spans: Iterable[Any]) -> list[Recorded]:
    return [
        Recorded(
            span.name,
            span.context.span_id,
            span.parent.span_id if span.parent else None,
            span.context.trace_id,
            dict(span.attributes),
        )
        for span in spans
    ]


def from_json(spans: Iterable[dict[str, Any]]) -> list[Recorded]:
    from _export_support import json_attributes

    return [
        Recorded(
            span["name"],
            span["spanId"],
            span.get("parentSpanId") or None,
            span["traceId"],
            json_attributes(span.get("attributes", [])),
        )
        for span in spans
    ]


def frames_by_compile_id(spans: list[Recorded]) -> dict[str, Recorded]:
    """The frame spans by compile id; fails if a compile id was recorded twice."""
    frames = [span for span in spans if span.name == names.SPAN_FRAME]
    by_id = {frame.attributes[names.ATTR_COMPILE_ID]: frame for frame in frames}
    assert len(by_id) == len(frames), sorted(f.attributes[names.ATTR_COMPILE_ID] for f in frames)
    return by_id


def assert_routed(spans: list[Recorded], counting: CountingBackend) -> None:
    """Every graph span is a child of the frame span of its own compile; each frame's
    graph count and ops equal what the counting backend saw for that compile id."""
    frames = frames_by_compile_id(spans)
    graphs = [span for span in spans if span.name == names.SPAN_GRAPH]
    assert len(graphs) == sum(counting.graphs.values())
    ops: dict[str, int] = {}
    for graph in graphs:
        compile_id = graph.attributes[names.ATTR_COMPILE_ID]
        frame = frames[compile_id]
        assert (graph.parent_id, graph.trace_id) == (frame.span_id, frame.trace_id), compile_id
        ops[compile_id] = ops.get(compile_id, 0) + graph.attributes[names.ATTR_GRAPH_OP_COUNT]
    for compile_id, frame in frames.items():
        assert frame.attributes[names.ATTR_FRAME_GRAPH_COUNT] == counting.graphs[compile_id]
    assert ops == {compile_id: count for compile_id, count in counting.ops.items() if count}


def provider_with_memory() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def sin_plus(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + 1


def cos_times(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) * 2


def breaks_in_middle(x: torch.Tensor) -> torch.Tensor:
    y = x.relu()
    print("break")
    return y * 3


def print_first(x: torch.Tensor) -> torch.Tensor:
    print("a graph break before any graph")
    return x - 1


def compiles_fine(x: torch.Tensor) -> torch.Tensor:
    return x.exp().sum()


def test_two_callables_compiled_before_either_runs_with_two_traced_backends(provider, exporter):
    """Compiled c1, c2, then ran c1, c2: each graph span sits under its own frame span."""
    first, second = CountingBackend("eager"), CountingBackend("aot_eager")
    c1 = torch.compile(sin_plus, backend=otel_dynamo.traced(first, tracer_provider=provider))
    c2 = torch.compile(cos_times, backend=otel_dynamo.traced(second, tracer_provider=provider))
    x = torch.randn(4)
    c1(x)
    c2(x)
    spans = from_sdk(exporter.get_finished_spans())
    assert {
        f.attributes[names.ATTR_CODE_FUNCTION] for f in frames_by_compile_id(spans).values()
    } == {"sin_plus", "cos_times"}
    both = CountingBackend()
    both.graphs, both.ops = first.graphs + second.graphs, first.ops + second.ops
    assert_routed(spans, both)


def test_two_callables_compiled_before_either_runs_with_one_traced_backend(provider, exporter):
    """One traced backend for a model-like function with a break and a loss-like one."""
    counting = CountingBackend("aot_eager")
    backend = otel_dynamo.traced(counting, tracer_provider=provider)
    c1, c2 = (
        torch.compile(breaks_in_middle, backend=backend),
        torch.compile(cos_times, backend=backend),
    )
    x = torch.randn(4, requires_grad=True)
    c2(c1(x)).sum().backward()
    spans = from_sdk(exporter.get_finished_spans())
    assert_routed(spans, counting)
    assert sum(counting.graphs.values()) == 3


def test_threads_compiling_at_once_each_record_their_frames_exactly_once(provider, exporter):
    """Four threads compile four functions at once: every frame once, graphs under it."""
    counting = CountingBackend("eager")
    backend = otel_dynamo.traced(counting, tracer_provider=provider)
    functions: list[Callable[[torch.Tensor], torch.Tensor]] = [
        sin_plus,
        cos_times,
        breaks_in_middle,
        compiles_fine,
    ]
    start = threading.Barrier(len(functions))
    errors: list[BaseException] = []

    def compile_and_run(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        try:
            compiled = torch.compile(fn, backend=backend)
            start.wait()
            compiled(torch.randn(4))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=compile_and_run, args=(fn,)) for fn in functions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT_S)
    assert errors == []
    spans = from_sdk(exporter.get_finished_spans())
    assert_routed(spans, counting)
    functions_seen = [
        f.attributes[names.ATTR_CODE_FUNCTION] for f in frames_by_compile_id(spans).values()
    ]
    assert {fn.__name__ for fn in functions} <= set(functions_seen)


def test_plain_torch_compile_beside_a_traced_one_is_not_recorded(provider, exporter):
    """An untraced compile with a break before any graph, and one that compiles fine:
    none of their frames, breaks or graphs is exported."""
    counting = CountingBackend("eager")
    traced = torch.compile(sin_plus, backend=otel_dynamo.traced(counting, tracer_provider=provider))
    plain_break = torch.compile(print_first, backend="eager")
    plain_fine = torch.compile(compiles_fine, backend="eager")
    x = torch.randn(4)
    plain_break(x)
    traced(x)
    plain_fine(x)
    plain_break(x + 1)
    spans = from_sdk(exporter.get_finished_spans())
    frames = frames_by_compile_id(spans).values()
    assert [f.attributes[names.ATTR_CODE_FUNCTION] for f in frames] == ["sin_plus"]
    assert [f.attributes[names.ATTR_GRAPH_BREAK_COUNT] for f in frames] == [0]
    (traced_id,) = frames_by_compile_id(spans)
    assert {s.attributes.get(names.ATTR_COMPILE_ID) for s in spans} == {traced_id}
    assert_routed(spans, counting)


def test_a_traced_backend_built_and_never_used_records_nothing():
    """Building a traced backend does not take over the frames another one compiles."""
    used_provider, used = provider_with_memory()
    idle_provider, idle = provider_with_memory()
    counting = CountingBackend("eager")
    compiled = torch.compile(
        breaks_in_middle, backend=otel_dynamo.traced(counting, tracer_provider=used_provider)
    )
    otel_dynamo.traced("eager", tracer_provider=idle_provider)
    compiled(torch.randn(4))
    assert idle.get_finished_spans() == ()
    assert_routed(from_sdk(used.get_finished_spans()), counting)


def test_reset_between_compiles_keeps_each_compile_with_its_backend():
    """torch._dynamo.reset() restarts compile ids; each compile still reaches its own."""
    first_provider, first = provider_with_memory()
    second_provider, second = provider_with_memory()
    first_count, second_count = CountingBackend("eager"), CountingBackend("eager")
    torch.compile(
        sin_plus, backend=otel_dynamo.traced(first_count, tracer_provider=first_provider)
    )(torch.randn(4))
    torch._dynamo.reset()
    torch.compile(
        cos_times, backend=otel_dynamo.traced(second_count, tracer_provider=second_provider)
    )(torch.randn(4))
    first_spans, second_spans = (from_sdk(e.get_finished_spans()) for e in (first, second))
    assert_routed(first_spans, first_count)
    assert_routed(second_spans, second_count)
    assert list(frames_by_compile_id(first_spans)) == list(frames_by_compile_id(second_spans))
    assert [
        f.attributes[names.ATTR_CODE_FUNCTION] for f in frames_by_compile_id(second_spans).values()
    ] == ["cos_times"]


@pytest.mark.slow
def test_model_and_loss_compiled_separately_under_env_enablement(tmp_path: Path):
    """OTEL_DYNAMO_ENABLED=true, a model (with a break) and its loss compiled separately:
    every graph span under its own frame span; counts equal the counting backend's."""
    counts_file = tmp_path / "counts.json"
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "telemetry"),
        OTEL_DYNAMO_RUN_SPANS="off",
    )
    done = subprocess.run(
        [sys.executable, str(JOB), str(counts_file)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(counts_file.read_text())
    counting = CountingBackend("eager")
    counting.graphs.update(counts["graphs"])
    counting.ops.update(counts["ops"])
    spans = from_json(json_spans(one_file(tmp_path / "telemetry", "traces")))
    assert_routed(spans, counting)
    functions = {
        f.attributes[names.ATTR_CODE_FUNCTION] for f in frames_by_compile_id(spans).values()
    }
    assert {"forward", "loss_fn"} <= functions


def test_the_recorder_lookup_is_found_down_every_kind_of_wrapper_dynamo_puts_around_a_backend():
    """Dynamo's debug wrapper, torch.compile's wrapper, functools.partial, torch 2.8's
    attribute name and DDP's optimizer are followed."""
    import functools

    from otel_dynamo._sources import routing

    def lookup() -> Any:
        return None

    class Traced:
        def __call__(self, gm: Any, example_inputs: Any) -> Any:
            return gm

    traced = Traced()
    setattr(traced, routing.RECORDER_LOOKUP_ATTRIBUTE, lookup)

    class DebugWrapper:
        _torchdynamo_orig_backend = functools.partial(traced)

    class CompileWrapper:
        compiler_fn = DebugWrapper()

    class OlderConvertFrame:  # torch 2.8 names the backend _torchdynamo_orig_callable
        _torchdynamo_orig_callable = CompileWrapper()

    class DDPOptimizer:  # DDP: Dynamo compiles with this optimizer's bound compile_fn
        backend_compile_fn = DebugWrapper()

        def compile_fn(self, gm: Any, example_inputs: Any) -> Any:
            return gm

    assert routing.recorder_lookup_of(CompileWrapper()) is lookup
    assert routing.recorder_lookup_of(OlderConvertFrame()) is lookup
    assert routing.recorder_lookup_of(DDPOptimizer().compile_fn) is lookup
    assert routing.recorder_lookup_of(lambda gm, inputs: gm) is None
    assert routing.recorder_lookup_of(None) is None


def test_a_wrapper_chain_that_loops_ends_with_no_recorder_lookup():
    """A wrapper that wraps itself is followed a bounded number of steps, then given up."""
    from otel_dynamo._sources import routing

    class Loop:
        pass

    loop = Loop()
    loop._torchdynamo_orig_backend = loop  # type: ignore[attr-defined]
    assert routing.recorder_lookup_of(loop) is None


def test_a_failing_recorder_lookup_leaves_the_compile_alone(
    provider, exporter, caplog, monkeypatch
):
    """If asking for a compile's recorder raises, the compile runs as untraced would for
    frames (no frame span) and the job sees only a warning."""
    from otel_dynamo._recording import boundary
    from otel_dynamo._sources import routing

    monkeypatch.setattr(boundary, "_reported", False)  # as in a fresh process
    caplog.set_level(logging.WARNING, logger="otel_dynamo")

    def broken() -> Any:
        raise RuntimeError("no recorder today")

    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    setattr(backend, routing.RECORDER_LOOKUP_ATTRIBUTE, broken)
    compiled = torch.compile(sin_plus, backend=backend)
    x = torch.randn(4)
    assert torch.equal(compiled(x), sin_plus(x))
    spans = from_sdk(exporter.get_finished_spans())
    assert [s.name for s in spans if s.name == names.SPAN_FRAME] == []
    assert [s.name for s in spans if s.name == names.SPAN_GRAPH] == [names.SPAN_GRAPH]
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "could not tell which recorder a frame compile reports to" in warning.getMessage()


def test_a_torch_that_hides_the_frame_compiler_gets_one_warning(caplog):
    """A ConvertFrameAssert with neither known backend attribute: no recorder lookup, one warning
    naming what is not recorded, however many frames compile."""
    from otel_dynamo._sources import routing

    router = routing.FrameCompileRouter()
    caplog.set_level(logging.WARNING, logger="otel_dynamo")
    assert [router._compiler_of(object()) for _ in range(3)] == [None, None, None]
    (warning,) = caplog.records
    assert "frame compile spans are not recorded" in warning.getMessage()


class Scaler(torch.nn.Module):
    """A module compiled whole: Dynamo compiles the frame of its forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sin() * 2


def test_a_module_compiled_whole_names_its_class_on_the_frame_span(provider, exporter):
    """``torch.compile(module)``: the frame span says the module's qualified class; a plain
    function compiled beside it (its first argument a tensor) says no module at all."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    module = Scaler()
    x = torch.randn(4)
    assert torch.equal(torch.compile(module, backend=backend)(x), module(x))
    assert torch.equal(torch.compile(sin_plus, backend=backend)(x), sin_plus(x))
    frames = {
        s.attributes[names.ATTR_CODE_FUNCTION]: s.attributes
        for s in from_sdk(exporter.get_finished_spans())
        if s.name == names.SPAN_FRAME
    }
    assert frames["forward"][names.ATTR_COMPILE_MODULE_CLASS] == f"{__name__}.Scaler"
    assert names.ATTR_COMPILE_MODULE_CLASS not in frames["sin_plus"]


def test_reading_the_module_of_a_frame_fails_quietly_once(caplog):
    """A frame whose locals cannot be read: no module, one warning, and no more reading."""
    from otel_dynamo._sources import routing

    class Unreadable:
        reads = 0

        @property
        def f_locals(self) -> dict[str, Any]:
            Unreadable.reads += 1
            raise RuntimeError("no locals today")

    reader = routing.SelfModuleReader()
    caplog.set_level(logging.WARNING, logger="otel_dynamo")
    code = Scaler.forward.__code__
    assert [reader.class_of(Unreadable(), code) for _ in range(3)] == [None, None, None]
    assert Unreadable.reads == 1
    (warning,) = caplog.records
    assert "could not read the module a frame compile runs on" in warning.getMessage()


def scale_by(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """A function given a module as its first argument: not a method of that module."""
    return model(x) * 2


def test_a_function_given_a_module_names_no_module(provider, exporter):
    """``torch.compile(f)(model, x)``: f is not the module's method, so its frame span says
    no module class (only a ``self`` is a receiver)."""
    backend = otel_dynamo.traced("eager", tracer_provider=provider)
    module, x = Scaler(), torch.randn(4)
    assert torch.equal(torch.compile(scale_by, backend=backend)(module, x), scale_by(module, x))
    (frame,) = [
        s.attributes
        for s in from_sdk(exporter.get_finished_spans())
        if s.name == names.SPAN_FRAME and s.attributes[names.ATTR_CODE_FUNCTION] == "scale_by"
    ]
    assert names.ATTR_COMPILE_MODULE_CLASS not in frame


def test_the_router_reads_the_frame_compiles_compiler_off_the_stack(provider):
    """Canary of the router's private reads: during a traced compile, the compile's
    ``CompileContext`` carries a route to the traced backend's recorder, naming the
    function compiled (``ConvertFrameAssert.__call__``'s ``self`` and ``frame``)."""
    from otel_dynamo._sources import routing

    seen: list[Any] = []

    def inner(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        seen.append(routing.router.route())
        return gm.forward

    traced = otel_dynamo.traced(inner, tracer_provider=provider)
    x = torch.randn(4)
    assert torch.equal(torch.compile(sin_plus, backend=traced)(x), sin_plus(x))
    (route,) = seen
    assert isinstance(route, routing.Route)
    assert route.recorder() is not None
    assert route.code is not None and route.code.function == "sin_plus"
