"""Fault injection: each kind in a real training step, recorded as spans, logs, counters."""

from __future__ import annotations

import logging

import pytest
import torch
from _spans import named, one
from _telemetry_support import Signals, TwoLayer, train_step

from otel_dynamo import names
from otel_dynamo._config.fault_spec import FaultSpec, FaultSpecError, parse_faults
from otel_dynamo._config.settings import ConfigError, load_settings
from otel_dynamo._sources.aids import faults

pytestmark = pytest.mark.otel_facing  # recorded as spans, log events and counters


@pytest.fixture
def signals():
    signals = Signals()
    yield signals
    signals.shutdown()


def _raised(backend, model, x):
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        train_step(model, torch.compile(model, backend=backend), x)
    return info.value


def _fault_counts(signals):
    return {a[names.ATTR_FAULT_KIND]: v for a, v in signals.points(names.METRIC_FAULTS)}


def test_compile_fault_raises_what_torchs_backend_raises_and_is_recorded(signals):
    """compile@relu: torch's BackendCompilerFailed(ReluCompileError); graph span ERROR + fault."""
    x = torch.randn(3, 4)
    plain = _raised("relu_compile_error_TESTING_ONLY", TwoLayer(), x)
    ours = _raised(signals.traced("aot_eager", fault="compile@relu"), TwoLayer(), x)
    assert type(ours) is type(plain)
    assert type(ours.inner_exception) is type(plain.inner_exception)
    assert str(ours).replace("'aot_eager'", "'relu_compile_error_TESTING_ONLY'") == str(plain)
    graph = one(signals.finished(), names.SPAN_GRAPH)
    assert graph.status.status_code.name == "ERROR"
    assert graph.attributes[names.ATTR_FAULT_KIND] == "compile"
    assert graph.attributes[names.ATTR_FAULT_TARGET] == "relu"
    assert graph.attributes[names.ATTR_ERROR_TYPE].endswith(".ReluCompileError")
    (event,) = signals.events(names.LOG_FAULT_INJECTED)
    assert event[names.ATTR_FAULT_KIND] == "compile"
    assert event[names.ATTR_COMPILE_ID] == "0/0"
    assert _fault_counts(signals) == {"compile": 1}


def test_runtime_fault_raises_torchs_assertion_on_the_run_span(signals):
    """runtime@relu: AssertionError('ReluRuntimeError') on the forward run, span ERROR."""
    x = torch.randn(3, 4)
    plain = _raised("relu_runtime_error_TESTING_ONLY", TwoLayer(), x)
    ours = _raised(signals.traced("aot_eager", fault="runtime@relu"), TwoLayer(), x)
    assert type(ours) is type(plain) is AssertionError
    assert str(ours) == str(plain) == "ReluRuntimeError"
    spans = signals.finished()
    assert one(spans, names.SPAN_GRAPH).status.status_code.name == "UNSET"
    run = one(spans, names.SPAN_RUN_FORWARD)
    assert run.status.status_code.name == "ERROR"
    assert run.attributes[names.ATTR_FAULT_KIND] == "runtime"
    assert run.attributes[names.ATTR_FAULT_TARGET] == "relu"
    assert run.attributes[names.ATTR_ERROR_TYPE] == "AssertionError"
    (event,) = signals.events(names.LOG_FAULT_INJECTED)
    assert event[names.ATTR_RUN_INDEX] == 1
    assert len(signals.events(names.LOG_RUN_FAILED)) == 1
    assert _fault_counts(signals) == {"runtime": 1}


def test_runtime_fault_gets_a_run_span_even_when_run_spans_are_off(signals):
    """run_spans=off: every faulted run still gets its own ERROR run span (runs 1 and 2)."""
    backend = signals.traced("aot_eager", fault="runtime@relu", run_spans="off")
    model = TwoLayer()
    compiled = torch.compile(model, backend=backend)
    for _ in range(2):
        with pytest.raises(AssertionError, match="ReluRuntimeError"):
            train_step(model, compiled, torch.randn(3, 4))
    runs = named(signals.finished(), names.SPAN_RUN_FORWARD)
    assert [r.attributes[names.ATTR_RUN_INDEX] for r in runs] == [1, 2]
    assert all(r.status.status_code.name == "ERROR" for r in runs)
    assert len(signals.events(names.LOG_RUN_FAILED)) == 2
    assert _fault_counts(signals) == {"runtime": 2}


def test_accuracy_fault_computes_what_torchs_backend_computes_silently(signals):
    """accuracy@relu: relu becomes x + 1, as torch's backend; no error, fault recorded."""
    x = torch.randn(3, 4)
    torch._dynamo.reset()
    plain_model = TwoLayer()
    plain = train_step(
        plain_model, torch.compile(plain_model, backend="relu_accuracy_error_TESTING_ONLY"), x
    )
    torch._dynamo.reset()
    model = TwoLayer()
    ours = train_step(
        model, torch.compile(model, backend=signals.traced("aot_eager", fault="accuracy")), x
    )
    eager_model = TwoLayer()
    assert torch.equal(ours, plain)
    assert not torch.equal(ours, train_step(eager_model, eager_model, x))
    assert torch.equal(model.first.weight, plain_model.first.weight)  # same wrong gradients
    graph = one(signals.finished(), names.SPAN_GRAPH)
    assert graph.status.status_code.name == "UNSET"
    assert graph.attributes[names.ATTR_FAULT_KIND] == "accuracy"
    assert signals.events(names.LOG_FAULT_INJECTED)[0][names.ATTR_FAULT_TARGET] == "relu"
    assert _fault_counts(signals) == {"accuracy": 1}


def test_non_leaf_compile_fault_fires_only_on_non_leaf_inputs(signals):
    """non_leaf_compile: torch's TestingOnlyCompileError for a non-leaf input, none for a leaf."""
    pre = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4)
    plain = _raised("non_leaf_compile_error_TESTING_ONLY", TwoLayer(), pre(x))
    ours = _raised(signals.traced("aot_eager", fault="non_leaf_compile"), TwoLayer(), pre(x))
    assert type(ours.inner_exception) is type(plain.inner_exception)
    assert type(ours.inner_exception).__name__ == "TestingOnlyCompileError"
    graph = one(signals.finished(), names.SPAN_GRAPH)
    assert graph.attributes[names.ATTR_FAULT_KIND] == "non_leaf_compile"
    assert graph.attributes[names.ATTR_FAULT_TARGET] == "*"
    assert graph.status.status_code.name == "ERROR"
    torch._dynamo.reset()
    model = TwoLayer()
    backend = signals.traced("aot_eager", fault="non_leaf_compile")
    train_step(model, torch.compile(model, backend=backend), x)  # leaf input: no fault
    assert _fault_counts(signals) == {"non_leaf_compile": 1}


def test_target_names_a_torch_function_and_only_that():
    """runtime@torch.sigmoid fires on a sigmoid graph and not on a relu graph."""
    signals = Signals()
    backend = signals.traced("eager", fault="runtime@torch.sigmoid")
    torch.compile(lambda x: torch.relu(x) + 1, backend=backend)(torch.randn(3))
    with pytest.raises(AssertionError, match="ReluRuntimeError"):
        torch.compile(lambda x: torch.sigmoid(x) + 1, backend=backend)(torch.randn(3))
    assert [e[names.ATTR_FAULT_TARGET] for e in signals.events(names.LOG_FAULT_INJECTED)] == [
        "torch.sigmoid"
    ]
    signals.shutdown()


def test_targets_match_bare_names_dotted_functions_methods_and_aten_ops():
    """relu matches torch.relu, F.relu, x.relu() and aten.relu; dotted names match exactly."""
    from torch.fx.experimental.proxy_tensor import make_fx

    gm = torch.fx.symbolic_trace(_three_relus)
    aten = make_fx(torch.relu)(torch.randn(2))
    assert len(faults.matching_nodes(gm, "relu")) == 3
    assert len(faults.matching_nodes(gm, "torch.relu")) == 1
    assert len(faults.matching_nodes(gm, "torch.nn.functional.relu")) == 1
    assert len(faults.matching_nodes(aten, "aten.relu.default")) == 1
    assert len(faults.matching_nodes(aten, "aten.relu")) == 1
    assert len(faults.matching_nodes(aten, "relu")) == 1
    assert faults.matching_nodes(aten, "torch.relu") == []


def _three_relus(x):
    return torch.relu(x) + torch.nn.functional.relu(x) + x.relu()


def test_compile_id_restriction_fires_on_that_frame_only(signals):
    """compile@relu:compile_id=1/0 spares frame 0/0 and fails the frame after a graph break."""

    def broken(x):
        x = torch.relu(x) + 1
        torch._dynamo.graph_break()
        return torch.relu(x) * 2

    backend = signals.traced("eager", fault="compile:compile_id=1/0")
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed):
        torch.compile(broken, backend=backend)(torch.randn(3))
    (event,) = signals.events(names.LOG_FAULT_INJECTED)
    assert event[names.ATTR_COMPILE_ID] == "1/0"


def _faulted_compile_ids(signals, spec):
    def many(x):  # a loop would not do: Dynamo cannot resume inside one
        x = torch.relu(x) + 1
        torch._dynamo.graph_break()
        x = torch.relu(x) + 2
        torch._dynamo.graph_break()
        x = torch.relu(x) + 3
        torch._dynamo.graph_break()
        x = torch.relu(x) + 4
        torch._dynamo.graph_break()
        x = torch.relu(x) + 5
        torch._dynamo.graph_break()
        return torch.relu(x) + 6

    torch._dynamo.reset()
    signals.logs.clear()
    torch.compile(many, backend=signals.traced("eager", fault=spec))(torch.randn(3))
    return [e[names.ATTR_COMPILE_ID] for e in signals.events(names.LOG_FAULT_INJECTED)]


def test_probability_and_seed_give_the_same_faults_twice(signals):
    """p=0.5,seed=3: the same graphs get the fault on a second identical run; not all do."""
    first = _faulted_compile_ids(signals, "accuracy:p=0.5,seed=3")
    again = _faulted_compile_ids(signals, "accuracy:p=0.5,seed=3")
    other_seed = _faulted_compile_ids(signals, "accuracy:p=0.5,seed=4")
    assert first == again
    assert 0 < len(first) < 6
    assert other_seed != first


@pytest.mark.parametrize(
    ("spec", "named_part"),
    [
        ("compile@relu;explode", "unknown fault kind 'explode'"),
        ("runtime@torch..relu", "bad target 'torch..relu'"),
        ("compile:p=1.5", "bad value p='1.5'"),
        ("compile:graph=-1", "bad value graph='-1'"),
        ("compile:compile_id=zero", "bad value compile_id='zero'"),
        ("compile:when=now", "unknown option 'when=now'"),
        ("accuracy@*", "accuracy fault needs a named op"),
        ("compile;;runtime", "empty fault"),
    ],
)
def test_bad_spec_message_names_the_wrong_part(spec, named_part):
    """Each bad spec is refused with a message naming the part that is wrong."""
    with pytest.raises(FaultSpecError, match=named_part):
        parse_faults(spec)
    (problem,) = load_settings({"OTEL_DYNAMO_FAULT": spec}).problems
    assert "OTEL_DYNAMO_FAULT" in problem.message and named_part in problem.message
    with pytest.raises(ConfigError, match=named_part):
        Signals().traced("eager", fault=spec)


def test_spec_parses_kinds_targets_and_options():
    """The documented example parses to two faults with their options, typed."""
    assert parse_faults("compile@relu;runtime@torch.sigmoid:compile_id=0/0,p=0.5,seed=3") == (
        FaultSpec("compile", "relu"),
        FaultSpec("runtime", "torch.sigmoid", compile_id="0/0", p=0.5, seed=3),
    )
    assert parse_faults("") == ()
    assert parse_faults("non_leaf_compile")[0].target == "*"


def test_no_fault_and_no_warning_unless_configured(signals, caplog):
    """Default settings: no fault attribute, event or counter; no 'fault injection' warning."""
    caplog.set_level(logging.WARNING, logger="otel_dynamo")
    model = TwoLayer()
    train_step(model, torch.compile(model, backend=signals.traced("aot_eager")), torch.randn(2, 4))
    assert not any(names.ATTR_FAULT_KIND in s.attributes for s in signals.finished())
    assert signals.events(names.LOG_FAULT_INJECTED) == []
    assert _fault_counts(signals) == {}
    assert "fault injection" not in caplog.text


def test_warning_says_faults_are_on_once(signals, caplog):
    """A traced backend with faults logs one warning on 'otel_dynamo', once per spec."""
    caplog.set_level(logging.WARNING, logger="otel_dynamo")
    signals.traced("eager", fault="runtime@torch.tanh:seed=11")
    signals.traced("eager", fault="runtime@torch.tanh:seed=11")
    warnings = [r for r in caplog.records if "fault injection is ON" in r.getMessage()]
    assert len(warnings) == 1
    assert "runtime@torch.tanh:seed=11" in warnings[0].getMessage()
