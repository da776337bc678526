"""The tap on inductor's CUDA-graph skip statement: where torch binds it, what it
records during a recorded run, and that it stays off without raising where it does not
fit."""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from _telemetry_support import Signals
from torch._dynamo.utils import counters

from otel_dynamo import names
from otel_dynamo._sources import cudagraphs

pytestmark = pytest.mark.torch_facing

MUTATED = "skipping cudagraphs due to mutated inputs (1 instances)"
BOUND_IN = ("torch._inductor.compile_fx", "torch._inductor.cudagraph_trees")
"""Modules that import the statement by name (imported first, so they hold it)."""


@pytest.fixture
def tap() -> Iterator[cudagraphs.SkipTap]:
    """A fresh tap, alone, removed after the test: the process's own, installed by an
    earlier traced compile that asked for CUDA graphs, is taken off first (the next such
    compile installs it again)."""
    cudagraphs._skip_tap.uninstall()
    fresh = cudagraphs.SkipTap()
    yield fresh
    fresh.uninstall()


def _holders(function: Any) -> list[str]:
    """The torch modules that hold ``function`` under its name."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("torch.")
        and getattr(module, "__dict__", {}).get(cudagraphs.SKIP_FUNCTION) is function
    )


def test_the_statement_is_tapped_where_torch_bound_it(tap: cudagraphs.SkipTap) -> None:
    """After install, inductor's own module and every torch module that imported the
    function by name call the tap, which forwards to torch's function (the counter still
    moves)."""
    for module_name in BOUND_IN:
        importlib.import_module(module_name)
    module = importlib.import_module(cudagraphs.SKIP_MODULE)
    original = getattr(module, cudagraphs.SKIP_FUNCTION)
    holders = _holders(original)
    assert cudagraphs.SKIP_MODULE in holders
    tap.ensure()
    for name in holders:
        bound = getattr(sys.modules[name], cudagraphs.SKIP_FUNCTION)
        assert getattr(bound, "__wrapped__", None) is original, name
    before = counters["inductor"]["cudagraph_skips"]
    with cudagraphs.watching(asked=False) as watch:
        getattr(sys.modules[holders[-1]], cudagraphs.SKIP_FUNCTION)(MUTATED)
    assert watch is not None and watch.stated == [MUTATED]
    assert counters["inductor"]["cudagraph_skips"] == before + 1


def test_uninstall_puts_torchs_function_back(tap: cudagraphs.SkipTap) -> None:
    """uninstall leaves each module that held torch's function holding it again."""
    module = importlib.import_module(cudagraphs.SKIP_MODULE)
    original = getattr(module, cudagraphs.SKIP_FUNCTION)
    holders = _holders(original)
    tap.ensure()
    tap.uninstall()
    assert _holders(original) == holders


def test_a_torch_without_the_statement_gets_one_warning_and_no_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where inductor has no such function, ensure() warns once, naming the torch, and
    raises nothing; later calls are silent."""
    monkeypatch.setattr(cudagraphs, "SKIP_FUNCTION", "no_such_function_in_this_torch")
    fresh = cudagraphs.SkipTap()
    with caplog.at_level(logging.WARNING, logger=cudagraphs.__name__):
        fresh.ensure()
        fresh.ensure()
    (record,) = caplog.records
    assert "CUDA graph skip hook does not fit torch" in record.getMessage()


def _stating_backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
    """A backend whose compiled graph has cudagraph trees' habit: stating a skip at a run."""

    def run(*args: Any) -> Any:
        from torch._inductor import cudagraph_utils

        cudagraph_utils.log_cudagraph_skip_and_bump_counter(MUTATED)
        return gm(*args)

    return run


def test_a_skip_stated_during_a_recorded_run_lands_on_its_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With CUDA graphs asked for, a skip torch states while a recorded run runs goes on
    that run's span (decided at run), in a log event and in the decisions metric."""
    import torch._inductor.config as inductor_config

    monkeypatch.setattr(inductor_config.triton, "cudagraphs", True)
    torch._dynamo.reset()
    signals = Signals()
    compiled = torch.compile(lambda x: x.sin() + 1, backend=signals.traced(_stating_backend))
    compiled(torch.randn(4))
    (run,) = [span for span in signals.finished() if span.name == names.SPAN_RUN_INFERENCE]
    assert run.attributes[names.ATTR_CUDAGRAPH_DECISION] == names.CUDAGRAPH_SKIPPED
    assert run.attributes[names.ATTR_CUDAGRAPH_SKIP_REASON] == MUTATED
    assert run.attributes[names.ATTR_CUDAGRAPH_SKIP_CATEGORY] == "mutated_inputs"
    (event,) = signals.events(names.LOG_CUDAGRAPH_SKIPPED)
    assert event[names.ATTR_CUDAGRAPH_AT] == names.CUDAGRAPH_AT_RUN
    assert event[names.ATTR_COMPILE_ID] == "0/0"
    decisions = dict(
        (attributes[names.ATTR_CUDAGRAPH_DECISION], value)
        for attributes, value in signals.points(names.METRIC_CUDAGRAPH_GRAPHS)
    )
    assert decisions == {names.CUDAGRAPH_GRAPHED: 1, names.CUDAGRAPH_SKIPPED: 1}


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("skipping cudagraphs due to cpu device (arg0_1)", "cpu_device"),
        (MUTATED, "mutated_inputs"),
        ("skipping cudagraphs due to dynamic shape ops", "dynamic_shapes"),
        ("skipping cudagraphs due to multiple devices: cuda:0, cuda:1", "multiple_devices"),
        ("skipping cudagraphs due to multiple devices: ", "cpu_device"),
        ("skipping cudagraphs due to multiple devices: device(type='cpu')", "cpu_device"),
        ("skipping cudagraph due to function 3 exceeding max re-recording limit", "rerecord_limit"),
        ("skipping cudagraphs due to incompatible op aten.nonzero", "incompatible_ops"),
        ("skipping cudagraphs due to something new", "other"),
    ],
)
def test_a_reason_falls_in_one_bounded_category(reason: str, category: str) -> None:
    """torch's reason text maps to a category fit for a metric label."""
    assert cudagraphs.category(reason) == category
