"""Dynamo never evaluates a frame of otel_dynamo's (``_sources.dynamo_exclusion``): our
frames are hidden from its frame callback, our recording code runs with frame evaluation
off, and what a pass-through frame delegates to is shown to Dynamo exactly as untraced.

Ground truth is Dynamo's own frame callback (``set_eval_frame``), torch's counters and
its compilation metrics.
"""

from __future__ import annotations

import logging
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from opentelemetry import trace
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._recording import boundary
from otel_dynamo._sources import dynamo_exclusion, runs

pytestmark = pytest.mark.torch_facing  # torch's frame evaluator decides what it is shown

OWN_DIRS = ("/otel_dynamo/", "/opentelemetry/")


def _own(filename: str) -> bool:
    return any(part in filename.replace("\\", "/") for part in OWN_DIRS)


def _codes_shown_to_dynamo(call: Callable[[], Any]) -> list[types.CodeType]:
    """The code of every frame Dynamo's frame callback is shown while ``call`` runs with
    frame evaluation on (each shown once: the callback skips it for good)."""
    from torch._C._dynamo.eval_frame import set_eval_frame
    from torch._dynamo.types import ConvertFrameReturn

    shown: list[types.CodeType] = []

    def callback(frame: Any, cache_entry: Any, frame_state: Any) -> Any:
        shown.append(frame.f_code)
        return ConvertFrameReturn()

    prior = set_eval_frame(callback)
    try:
        call()
    finally:
        set_eval_frame(prior)
    return shown


def _user_code(x: torch.Tensor) -> torch.Tensor:
    """Code that is not ours, called back by a frame of ours."""
    return x * 2


@pytest.fixture
def traced_backend(provider: Any) -> Any:
    """A traced backend: making one excludes every otel_dynamo module loaded."""
    return otel_dynamo.traced("aot_eager", tracer_provider=provider)


def test_every_code_object_of_every_loaded_module_of_ours_is_excluded(traced_backend):
    """Once a traced backend exists, each code object of each otel_dynamo module loaded,
    nested ones (closures, lambdas, comprehensions) included, has its strategy."""
    modules = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("otel_dynamo") and not name.startswith(dynamo_exclusion.LEFT_TO_DYNAMO)
    ]
    codes = [code for module in modules for code in dynamo_exclusion.codes_of(module)]
    nested = runs.wrap_unboxed_run.__code__.co_consts
    assert any(isinstance(const, types.CodeType) for const in nested)
    assert len(codes) > 500
    assert [code.co_qualname for code in codes if not dynamo_exclusion.is_excluded(code)] == []
    assert all(
        dynamo_exclusion.is_excluded(const) for const in nested if isinstance(const, types.CodeType)
    )


@pytest.fixture
def fresh_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the exclusion saw at its last look is put back after the test, so that the
    test's own looks hide no module from the next compile's."""
    monkeypatch.setattr(dynamo_exclusion, "_names_seen", dynamo_exclusion._names_seen)


def test_a_look_after_an_import_sees_only_the_module_imported(fresh_look, monkeypatch):
    """Loaded after a look, a module is the one name the next look returns."""
    dynamo_exclusion._loaded_since_last_look()
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_module", types.ModuleType("m"))
    assert dynamo_exclusion._loaded_since_last_look() == ["otel_dynamo_test_module"]
    assert dynamo_exclusion._loaded_since_last_look() == []


def test_a_look_after_a_module_was_removed_sees_every_module(fresh_look, monkeypatch):
    """A module removed (and another loaded) since the last look: the next look returns
    every loaded name, so that nothing loaded meanwhile is missed."""
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_removed", types.ModuleType("r"))
    dynamo_exclusion._loaded_since_last_look()
    monkeypatch.delitem(sys.modules, "otel_dynamo_test_removed")
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_added", types.ModuleType("a"))
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_added_too", types.ModuleType("b"))
    assert dynamo_exclusion._loaded_since_last_look() == list(sys.modules)


def test_a_module_loaded_while_the_newest_was_reloaded_is_seen(fresh_look, monkeypatch):
    """The newest module seen removed and loaded again around another import, with the
    count unchanged (an earlier module removed too): a later look still returns the
    module loaded in between."""
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_earlier", types.ModuleType("e"))
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_newest", types.ModuleType("z"))
    dynamo_exclusion._loaded_since_last_look()
    newest = sys.modules["otel_dynamo_test_newest"]
    monkeypatch.delitem(sys.modules, "otel_dynamo_test_earlier")
    monkeypatch.delitem(sys.modules, "otel_dynamo_test_newest")
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_between", types.ModuleType("b"))
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_newest", newest)
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_later", types.ModuleType("c"))
    assert "otel_dynamo_test_between" in dynamo_exclusion._loaded_since_last_look()


def test_an_interrupted_exclusion_looks_at_every_module_next_time(fresh_look, monkeypatch):
    """A KeyboardInterrupt while marking propagates, and the next look returns every
    loaded name (what that pass did not mark is not lost)."""

    def interrupted(pending: list[str]) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(dynamo_exclusion, "_exclude", interrupted)
    monkeypatch.setitem(sys.modules, "otel_dynamo_test_interrupted", types.ModuleType("i"))
    with pytest.raises(KeyboardInterrupt):
        dynamo_exclusion.exclude_loaded_modules()
    assert dynamo_exclusion._loaded_since_last_look() == list(sys.modules)


def test_the_demos_model_is_left_to_dynamo(traced_backend):
    """The demo's model lives in otel_dynamo's package but is the job Dynamo compiles:
    its code is never excluded, and it compiles (one graph a call at least)."""
    from otel_dynamo.cli import demo_training

    dynamo_exclusion.exclude_loaded_modules()
    model = demo_training._model()
    forward = type(model).forward.__code__
    assert not dynamo_exclusion.is_excluded(forward)
    counters.clear()
    torch.compile(model, backend=traced_backend)(torch.randn(4, demo_training.FEATURES))
    assert counters["stats"]["unique_graphs"] >= 1


def test_a_pass_through_frame_is_hidden_and_what_it_delegates_to_is_shown(traced_backend):
    """A compiled backward's run wrapper (a pass-through frame) called with frame
    evaluation on: Dynamo is shown the code it delegates to, as untraced, and not its own."""
    state = types.SimpleNamespace(count=0, next_recorded=sys.maxsize)
    proxy = runs.RunProxy(_user_code, state, recorder=None)  # type: ignore[arg-type]
    x = torch.ones(2)
    shown = _codes_shown_to_dynamo(lambda: proxy(x))
    assert _user_code.__code__ in shown
    assert runs.RunProxy.__call__.__code__ not in shown
    assert [code.co_filename for code in shown if _own(code.co_filename)] == []


def test_recording_code_runs_with_frame_evaluation_off(traced_backend):
    """Code of ours that is not a pass-through frame (the error boundary here): neither
    its frame nor what it calls is shown to Dynamo."""
    x = torch.ones(2)

    class CallingTracer:
        def start_span(self, name: str, *args: Any, **kwargs: Any) -> Any:
            _user_code(x)
            return trace.INVALID_SPAN

    safe = boundary.SafeTracer(CallingTracer())  # type: ignore[arg-type]
    shown = _codes_shown_to_dynamo(lambda: safe.start_span("a test"))
    assert _user_code.__code__ not in shown
    assert CallingTracer.start_span.__code__ not in shown
    assert boundary.SafeTracer.start_span.__code__ not in shown


def _step_counts(backend: Any) -> tuple[dict[str, int], ...]:
    """Dynamo's counts for three calls of a compiled function whose ``.backward()`` runs
    inside it (its backward compiles lazily, while Dynamo evaluates the frame)."""
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    torch.manual_seed(0)
    weight = torch.randn(8, 8, requires_grad=True)

    def step(x: torch.Tensor) -> torch.Tensor:
        out = (x @ weight).relu()
        out.sum().backward()
        return out.detach() * 2

    compiled = torch.compile(step, backend=backend)
    for _ in range(3):
        compiled(torch.randn(4, 8))
    return (
        dict(counters["frames"]),
        dict(counters["graph_break"]),
        dict(counters["stats"]),
        {"grad": int(weight.grad.abs().sum() * 1000)},
    )


def test_a_backward_inside_a_compiled_function_compiles_nothing_of_ours(traced_backend):
    """``.backward()`` inside the compiled function: traced, Dynamo is shown the same
    frames, breaks and graphs as plain; no compile is of our code or OpenTelemetry's; no
    warning is raised."""
    _step_counts("aot_eager")  # first compiles of the process: torch's lazy imports
    plain = _step_counts("aot_eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = _step_counts(traced_backend)
    assert traced == plain
    compiled_files = [m.co_filename for m in get_compilation_metrics() if m.co_filename]
    assert compiled_files and [f for f in compiled_files if _own(f)] == []
    assert [str(w.message)[:80] for w in caught] == []


@pytest.fixture
def without_strategies(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A torch without frame execution strategies, as seen by a fresh process."""

    def missing() -> Any:
        raise ImportError("cannot import name 'set_code_exec_strategy'")

    monkeypatch.setattr(dynamo_exclusion, "_strategy_setter", missing)
    monkeypatch.setattr(dynamo_exclusion, "_unavailable", False)
    monkeypatch.setattr(dynamo_exclusion, "_marked_modules", set())
    monkeypatch.setattr(dynamo_exclusion, "_names_seen", [])
    yield


def test_a_torch_without_frame_strategies_gets_one_warning(without_strategies, caplog):
    """No strategy to set: one warning naming the torch version, and nothing raised,
    however often modules are excluded."""
    caplog.set_level(logging.WARNING, logger="otel_dynamo")
    for _ in range(3):
        dynamo_exclusion.exclude_loaded_modules()
    (warning,) = caplog.records
    assert f"torch {torch.__version__} cannot exclude code from Dynamo" in warning.getMessage()


class _Kept(logging.Handler):
    """A handler on ``torch.__trace``: torch then writes every structured-trace record."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _with_break(x: torch.Tensor) -> torch.Tensor:
    x = torch.sin(x) + 1
    torch._dynamo.graph_break()
    return torch.cos(x) * 2


def _span_names(provider: Any, exporter: Any) -> list[str]:
    exporter.clear()
    torch._dynamo.reset()
    backend = otel_dynamo.traced("aot_eager", tracer_provider=provider)
    torch.compile(_with_break, backend=backend)(torch.randn(4))
    return sorted(span.name for span in exporter.get_finished_spans())


def test_with_a_structured_trace_handler_the_records_are_read_and_name_torchs_callers(
    provider, exporter
):
    """With a handler on ``torch.__trace`` the tap steps aside and the records are read
    instead: the same spans as without one, and no record names a frame of ours."""
    without = _span_names(provider, exporter)
    kept = _Kept()
    trace_logger = logging.getLogger("torch.__trace")
    trace_logger.addHandler(kept)
    try:
        with_handler = _span_names(provider, exporter)
    finally:
        trace_logger.removeHandler(kept)
    assert names.SPAN_FRAME in without and names.SPAN_GRAPH in without
    assert with_handler == without
    assert kept.records
    assert [r.pathname for r in kept.records if _own(r.pathname)] == []
