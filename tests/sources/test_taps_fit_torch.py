"""A hook that does not fit the torch it meets switches itself off: one warning naming the
torch version and what is not recorded; the compile goes on, traced and untraced."""

from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo
from torch._functorch._aot_autograd import runtime_wrappers

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._sources import aot, taps


@pytest.fixture
def fresh_taps(monkeypatch):
    """Taps as in a new process: none installed, none switched off; put back afterwards."""
    taps.uninstall()
    monkeypatch.setattr(taps, "_switched_off", set())
    yield
    taps.uninstall()
    monkeypatch.undo()
    taps.install()


def _train_step(backend):
    torch._dynamo.reset()
    model = torch.nn.Linear(4, 2)
    compiled = torch.compile(model, backend=backend)
    loss = compiled(torch.randn(3, 4)).sum()
    loss.backward()
    return model.weight.grad


def _unknown_post_compile(spec, extra, more):
    raise AssertionError("torch's own post_compile must never be replaced by ours here")


def _tap_warnings(caplog):
    return [r.getMessage() for r in caplog.records if "does not fit torch" in r.getMessage()]


def test_unknown_post_compile_form_switches_that_hook_off_with_one_warning(
    fresh_taps, monkeypatch, caplog
):
    """A post_compile of neither known form: the hook stays off, one warning names the
    torch version and what is not recorded; installing again warns no more."""
    original = runtime_wrappers.AOTDispatchAutograd.__dict__["post_compile"]
    monkeypatch.setattr(
        runtime_wrappers.AOTDispatchAutograd, "post_compile", staticmethod(_unknown_post_compile)
    )
    with caplog.at_level(logging.WARNING, logger="otel_dynamo"):
        taps.install()
        taps.install()
    assert taps.switched_off() == frozenset({"AOT post_compile"})
    (message,) = _tap_warnings(caplog)
    assert f"torch {torch.__version__}" in message
    assert "backward runs of graphs loaded from AOT Autograd's cache are not recorded" in message
    assert runtime_wrappers.AOTDispatchAutograd.__dict__["post_compile"].__func__ is (
        _unknown_post_compile
    )
    monkeypatch.setattr(runtime_wrappers.AOTDispatchAutograd, "post_compile", original)


def test_known_post_compile_forms_are_accepted():
    """One spec argument (torch 2.12 on) or a named compiled_bw_func (before 2.12)."""

    def spec_form(spec):
        return spec

    def positional_form(compiled_fw_func, compiled_bw_func, aot_config, *, fw_metadata):
        return compiled_fw_func

    aot.check_post_compile_form(spec_form)
    aot.check_post_compile_form(positional_form)
    with pytest.raises(TypeError, match=r"unknown AOTDispatchAutograd\.post_compile"):
        aot.check_post_compile_form(_unknown_post_compile)


def test_missing_aot_entry_point_leaves_training_compiles_working(
    fresh_taps, monkeypatch, caplog, provider, exporter
):
    """With aot_module_simplified gone from where the hook looks, a traced training step
    still compiles, computes the same gradients as untraced, and records its frame span."""
    from torch._dynamo.backends import common

    torch.manual_seed(0)
    untraced_grad = _train_step("aot_eager")
    with monkeypatch.context() as patched, caplog.at_level(logging.WARNING, logger="otel_dynamo"):
        patched.delattr(common, "aot_module_simplified")
        traced = otel_dynamo.traced("aot_eager", tracer_provider=provider)
    assert "AOT Autograd" in taps.switched_off()
    (message,) = [m for m in _tap_warnings(caplog) if "AOT Autograd hook" in m]
    assert f"torch {torch.__version__}" in message
    torch.manual_seed(0)
    traced_grad = _train_step(traced)
    assert torch.equal(traced_grad, untraced_grad)
    spans = exporter.get_finished_spans()
    frames = [s for s in spans if s.name == names.SPAN_FRAME]
    assert [f.attributes[names.ATTR_OUTCOME] for f in frames] == [names.OUTCOME_SUCCESS]
    assert not [s for s in spans if s.name.startswith("torch.compile.aot")]


def test_missing_stack_conversion_leaves_everything_recorded(
    fresh_taps, monkeypatch, caplog, provider, exporter
):
    """With ``from_traceback`` gone from torch's structured module, the stack hook stays
    off with one warning saying what that costs; compiles are traced as before."""
    from torch._logging import structured

    with monkeypatch.context() as patched, caplog.at_level(logging.WARNING, logger="otel_dynamo"):
        patched.delattr(structured, "from_traceback")
        traced = otel_dynamo.traced("aot_eager", tracer_provider=provider)
        assert taps.switched_off() == frozenset({"structured trace stacks"})
        (message,) = _tap_warnings(caplog)
        assert f"torch {torch.__version__}" in message
        assert "TORCH_TRACE's stacks may show frames of otel_dynamo's" in message
    _train_step(traced)  # torch's own callers need the function back
    assert taps.switched_off() == frozenset({"structured trace stacks"})
    frames = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_FRAME]
    assert [f.attributes[names.ATTR_OUTCOME] for f in frames] == [names.OUTCOME_SUCCESS]
