"""Accuracy checks: the first run of each graph compared with eager, recorded on its span."""

from __future__ import annotations

import pytest
import torch
from _spans import named
from _telemetry_support import Signals, TwoLayer, train_step

from otel_dynamo import names
from otel_dynamo._config.settings import load_settings

ACCURACY_KEYS = {
    names.ATTR_ACCURACY_PASSED: bool,
    names.ATTR_ACCURACY_MAX_ABS_ERROR: float,
    names.ATTR_ACCURACY_MAX_REL_ERROR: float,
    names.ATTR_ACCURACY_TOLERANCE: float,
}


@pytest.fixture
def signals():
    signals = Signals()
    yield signals
    signals.shutdown()


def _checked_runs(signals):
    runs = named(signals.finished(), names.SPAN_RUN_FORWARD)
    return [r for r in runs if names.ATTR_ACCURACY_PASSED in r.attributes]


def _train(signals, backend="aot_eager", steps=1, **options):
    model = TwoLayer()
    compiled = torch.compile(model, backend=signals.traced(backend, **options))
    for _ in range(steps):
        train_step(model, compiled, torch.randn(3, 4))
    return model


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_correct_backend_passes_with_typed_attributes(signals, backend):
    """A correct backend: passed=True, errors ~0 (floats), torch's tolerance, an info event."""
    _train(signals, backend, accuracy=True)
    (run,) = _checked_runs(signals)
    for key, kind in ACCURACY_KEYS.items():
        assert type(run.attributes[key]) is kind, key
    assert run.attributes[names.ATTR_ACCURACY_PASSED] is True
    assert run.attributes[names.ATTR_ACCURACY_MAX_ABS_ERROR] <= 1e-6
    assert run.attributes[names.ATTR_ACCURACY_TOLERANCE] == torch._dynamo.config.repro_tolerance
    (event,) = signals.events(names.LOG_ACCURACY_CHECKED)
    assert event[names.ATTR_ACCURACY_PASSED] is True
    assert event[names.ATTR_RUN_INDEX] == 1


@pytest.mark.slow
def test_inductor_passes(signals):
    """inductor's compiled forward and backward match eager on the first run."""
    _train(signals, "inductor", accuracy="backward")
    (run,) = _checked_runs(signals)
    assert run.attributes[names.ATTR_ACCURACY_PASSED] is True
    assert run.attributes[names.ATTR_ACCURACY_MAX_REL_ERROR] < 1e-3


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_injected_accuracy_fault_is_caught(signals, backend):
    """accuracy@relu makes the check fail: passed=False, error above tolerance, error event."""
    _train(signals, backend, accuracy=True, fault="accuracy@relu")
    (run,) = _checked_runs(signals)
    assert run.attributes[names.ATTR_ACCURACY_PASSED] is False
    assert run.attributes[names.ATTR_ACCURACY_MAX_ABS_ERROR] > 0.01
    (event,) = signals.events(names.LOG_ACCURACY_CHECKED)
    assert event[names.ATTR_ACCURACY_PASSED] is False
    records = [d.log_record for d in signals.logs.get_finished_logs()]
    checked = [r for r in records if r.body == names.LOG_ACCURACY_CHECKED]
    assert checked[0].severity_text.lower() == "error"


@pytest.mark.slow
def test_injected_accuracy_fault_is_caught_on_inductor(signals):
    """The same fault compiled by inductor is caught too."""
    _train(signals, "inductor", accuracy=True, fault="accuracy@relu")
    (run,) = _checked_runs(signals)
    assert run.attributes[names.ATTR_ACCURACY_PASSED] is False


def test_check_leaves_inputs_parameters_and_gradients_alone(signals):
    """Forward+backward check: params, grads and input equal an unchecked run's; same storage."""
    x = torch.randn(3, 4)
    x_before = x.clone()
    plain = TwoLayer()
    train_step(plain, torch.compile(plain, backend=signals.traced("aot_eager")), x)
    torch._dynamo.reset()
    model = TwoLayer()
    pointers = [p.data_ptr() for p in model.parameters()]
    compiled = torch.compile(model, backend=signals.traced("aot_eager", accuracy="backward"))
    train_step(model, compiled, x)
    assert len(_checked_runs(signals)) == 1
    assert torch.equal(x, x_before) and x.grad is None
    assert [p.data_ptr() for p in model.parameters()] == pointers
    for ours, theirs in zip(model.parameters(), plain.parameters(), strict=True):
        assert torch.equal(ours, theirs)
        assert torch.equal(ours.grad, theirs.grad)


def test_check_keeps_the_users_random_stream(signals):
    """The random numbers drawn after a checked run are those drawn without the check."""
    torch.manual_seed(5)
    _train(signals, "aot_eager")
    expected = torch.rand(3)
    torch._dynamo.reset()
    torch.manual_seed(5)
    _train(signals, "aot_eager", accuracy="backward")
    assert torch.equal(torch.rand(3), expected)


def test_only_the_first_run_is_checked_even_with_run_spans_off(signals):
    """run_spans=off: run 1 still gets a span carrying the check; runs 2-3 get none."""
    _train(signals, "aot_eager", steps=3, accuracy=True, run_spans="off")
    runs = named(signals.finished(), names.SPAN_RUN_FORWARD)
    assert [r.attributes[names.ATTR_RUN_INDEX] for r in runs] == [1]
    assert runs[0].attributes[names.ATTR_ACCURACY_PASSED] is True
    assert len(signals.events(names.LOG_ACCURACY_CHECKED)) == 1


def test_no_check_unless_configured(signals):
    """Default settings: no accuracy attribute and no accuracy event."""
    _train(signals, "aot_eager")
    assert _checked_runs(signals) == []
    assert signals.events(names.LOG_ACCURACY_CHECKED) == []


def test_accuracy_variable_values():
    """OTEL_DYNAMO_ACCURACY: true -> forward, backward, false -> off; bad values named."""
    assert load_settings({"OTEL_DYNAMO_ACCURACY": "true"}).accuracy == "forward"
    assert load_settings({"OTEL_DYNAMO_ACCURACY": "backward"}).accuracy == "backward"
    assert load_settings({"OTEL_DYNAMO_ACCURACY": "false"}).accuracy == "off"
    (problem,) = load_settings({"OTEL_DYNAMO_ACCURACY": "sometimes"}).problems
    assert "OTEL_DYNAMO_ACCURACY='sometimes'" in problem.message
    assert "true, false, forward or backward" in problem.message
