"""torch.export instrumented: real exports, decompositions and exported-program runs."""

from __future__ import annotations

import copy
import inspect
import logging
import os
import pathlib
import subprocess
import sys
from collections import Counter

import pytest
import torch
import wrapt
from _telemetry_support import in_memory_log_exporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import StatusCode
from torch.export import Dim
from torch.export.exported_program import ExportedProgram

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._sources import torch_export_facts

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Net(torch.nn.Module):
    """Parameters (linear), a buffer mutated in place, three ops after it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps.add_(1)
        return torch.relu(self.fc(x)) * 2


class DataDependent(torch.nn.Module):
    """Branches on a tensor's value: strict export cannot trace it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x + 1
        return x - 1


class Telemetry:
    def __init__(self, exporter, metric_reader, log_records) -> None:
        self.exporter = exporter
        self.metric_reader = metric_reader
        self.log_records = log_records

    def spans(self, name: str) -> list:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    def points(self, metric: str) -> list:
        data = self.metric_reader.get_metrics_data()
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
        ]

    def events(self, event: str) -> list:
        records = [r.log_record for r in self.log_records.get_finished_logs()]
        return [r for r in records if r.event_name == event]


@pytest.fixture
def instrumented(exporter, provider):
    """A factory: instrument_export with in-memory spans, metrics and logs; undone after."""
    reader, records = InMemoryMetricReader(), in_memory_log_exporter()
    logger_provider = LoggerProvider(shutdown_on_exit=False)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)

    def start(**options) -> Telemetry:
        otel_dynamo.instrument_export(
            tracer_provider=provider,
            meter_provider=meter_provider,
            logger_provider=logger_provider,
            **options,
        )
        return Telemetry(exporter, reader, records)

    yield start
    otel_dynamo.uninstrument_export()


def _inputs(batch: int = 5) -> tuple[torch.Tensor]:
    return (torch.randn(batch, 4),)


def _export(**kwargs) -> ExportedProgram:
    return torch.export.export(Net(), _inputs(), **kwargs)


def _dynamic() -> dict:
    return {"x": {0: Dim("batch")}}


def _graph_ops(program: ExportedProgram) -> Counter:
    return Counter(str(n.target) for n in program.graph.nodes if n.op == "call_function")


def test_export_span_describes_the_call(instrumented):
    """One torch.export.export span: module class, strict (bool), dynamic shapes given (bool)."""
    telemetry = instrumented()
    _export(dynamic_shapes=_dynamic())
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    assert {k: span.attributes[k] for k in (
        names.ATTR_EXPORT_MODULE_CLASS, names.ATTR_EXPORT_STRICT, names.ATTR_EXPORT_DYNAMIC_SHAPES
    )} == {
        names.ATTR_EXPORT_MODULE_CLASS: f"{Net.__module__}.Net",
        names.ATTR_EXPORT_STRICT: False,
        names.ATTR_EXPORT_DYNAMIC_SHAPES: True,
    }  # fmt: skip
    assert type(span.attributes[names.ATTR_EXPORT_STRICT]) is bool
    assert span.status.status_code == StatusCode.UNSET


def test_export_op_counts_match_the_graph(instrumented):
    """op_count, node_count and top ops are those of the exported graph itself."""
    telemetry = instrumented()
    program = _export()
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    ops = _graph_ops(program)
    assert sum(ops.values()) == 4  # add_, linear, relu, mul
    assert span.attributes[names.ATTR_EXPORT_OP_COUNT] == sum(ops.values())
    assert span.attributes[names.ATTR_EXPORT_NODE_COUNT] == len(program.graph.nodes)
    assert list(span.attributes[names.ATTR_EXPORT_OPS]) == [
        f"{target}={count}" for target, count in ops.most_common()
    ]


def test_export_span_summarises_signature_and_range_constraints(instrumented):
    """Signature counts by kind (ints) and range constraints of a dynamic export."""
    telemetry = instrumented()
    program = _export(dynamic_shapes=_dynamic())
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    found = {
        key: span.attributes[key]
        for key in (
            names.ATTR_EXPORT_PARAMETER_COUNT,
            names.ATTR_EXPORT_BUFFER_COUNT,
            names.ATTR_EXPORT_CONSTANT_COUNT,
            names.ATTR_EXPORT_USER_INPUT_COUNT,
            names.ATTR_EXPORT_USER_OUTPUT_COUNT,
            names.ATTR_EXPORT_BUFFER_MUTATION_COUNT,
            names.ATTR_EXPORT_USER_INPUT_MUTATION_COUNT,
            names.ATTR_EXPORT_RANGE_CONSTRAINT_COUNT,
        )
    }
    assert found == {
        names.ATTR_EXPORT_PARAMETER_COUNT: 2,
        names.ATTR_EXPORT_BUFFER_COUNT: 1,
        names.ATTR_EXPORT_CONSTANT_COUNT: 0,
        names.ATTR_EXPORT_USER_INPUT_COUNT: 1,
        names.ATTR_EXPORT_USER_OUTPUT_COUNT: 1,
        names.ATTR_EXPORT_BUFFER_MUTATION_COUNT: 0,  # training IR: add_ stays in place
        names.ATTR_EXPORT_USER_INPUT_MUTATION_COUNT: 0,
        names.ATTR_EXPORT_RANGE_CONSTRAINT_COUNT: len(program.range_constraints),
    }
    assert len(program.range_constraints) == 1
    assert all(type(value) is int for value in found.values())


def test_strict_export_is_one_span_too(instrumented):
    """A strict export gets exactly one torch.export.export span, strict=True."""
    telemetry = instrumented()
    _export(strict=True)
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    assert span.attributes[names.ATTR_EXPORT_STRICT] is True
    assert span.attributes[names.ATTR_EXPORT_DYNAMIC_SHAPES] is False


def test_strict_export_shows_dynamo_frame_compile_as_a_child(instrumented):
    """Strict export traces with Dynamo: its frame compile is a child span of the export."""
    telemetry = instrumented()
    _export(strict=True)
    (export,) = telemetry.spans(names.SPAN_EXPORT)
    frames = telemetry.spans(names.SPAN_FRAME)
    assert frames and all(f.parent.span_id == export.context.span_id for f in frames)
    assert all(isinstance(f.attributes[names.ATTR_COMPILE_ID], str) for f in frames)


def test_non_strict_export_has_no_dynamo_frame(instrumented):
    """Non-strict export does not run Dynamo: no frame span appears under it."""
    telemetry = instrumented()
    _export(strict=False)
    assert telemetry.spans(names.SPAN_FRAME) == []


def test_buffer_mutation_appears_after_run_decompositions(instrumented):
    """The decomposition span's signature has the buffer mutation the export span lacks."""
    telemetry = instrumented()
    decomposed = _export().run_decompositions()
    (span,) = telemetry.spans(names.SPAN_EXPORT_DECOMPOSITIONS)
    assert len(decomposed.graph_signature.buffers_to_mutate) == 1
    assert span.attributes[names.ATTR_EXPORT_BUFFER_MUTATION_COUNT] == 1


def test_default_decompositions_report_ops_added_and_removed(instrumented):
    """Before/after op counts and the op changes equal those of the two graphs."""
    telemetry = instrumented()
    program = _export()
    before = _graph_ops(program)
    after = _graph_ops(program.run_decompositions())
    (span,) = telemetry.spans(names.SPAN_EXPORT_DECOMPOSITIONS)
    assert (
        span.attributes[names.ATTR_EXPORT_DECOMP_OP_COUNT_BEFORE],
        span.attributes[names.ATTR_EXPORT_DECOMP_OP_COUNT_AFTER],
    ) == (sum(before.values()), sum(after.values()))
    assert sorted(span.attributes[names.ATTR_EXPORT_DECOMP_OPS_ADDED]) == sorted(
        f"{t}=+{n}" for t, n in (after - before).items()
    )
    assert sorted(span.attributes[names.ATTR_EXPORT_DECOMP_OPS_REMOVED]) == [
        "aten.add_.Tensor=-1",
        "aten.linear.default=-1",
    ]
    assert span.attributes[names.ATTR_EXPORT_DECOMP_DEFAULT_TABLE] is True
    assert span.attributes[names.ATTR_EXPORT_DECOMP_TABLE_SIZE] == len(
        torch.export.default_decompositions()
    )


def test_custom_table_that_keeps_linear(instrumented):
    """A table without aten.linear: linear survives, table size and default=False recorded."""
    telemetry = instrumented()
    table = torch.export.default_decompositions()
    del table[torch.ops.aten.linear.default]
    decomposed = _export().run_decompositions(table)
    (span,) = telemetry.spans(names.SPAN_EXPORT_DECOMPOSITIONS)
    assert _graph_ops(decomposed)["aten.linear.default"] == 1
    assert list(span.attributes[names.ATTR_EXPORT_DECOMP_OPS_REMOVED]) == ["aten.add_.Tensor=-1"]
    assert list(span.attributes[names.ATTR_EXPORT_DECOMP_OPS_ADDED]) == ["aten.add.Tensor=+1"]
    assert span.attributes[names.ATTR_EXPORT_DECOMP_DEFAULT_TABLE] is False
    assert span.attributes[names.ATTR_EXPORT_DECOMP_TABLE_SIZE] == len(table)


def test_failed_strict_export_span_keeps_torch_classification(instrumented):
    """Data-dependent branch, strict: ERROR, error.type, message, kind, classified=False."""
    telemetry = instrumented()
    with pytest.raises(torch._dynamo.exc.Unsupported) as raised:
        torch.export.export(DataDependent(), (torch.randn(3),), strict=True)
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    assert span.status.status_code == StatusCode.ERROR
    assert span.attributes[names.ATTR_ERROR_TYPE] == "torch._dynamo.exc.Unsupported"
    assert span.attributes[names.ATTR_EXPORT_ERROR_MESSAGE] == str(raised.value).split("\n")[0]
    assert span.attributes[names.ATTR_EXPORT_ERROR_KIND] == "Data-dependent branching"
    assert span.attributes[names.ATTR_EXPORT_ERROR_CLASSIFIED] is False
    assert names.ATTR_EXPORT_ERROR_CASE not in span.attributes


def test_user_error_kind_is_its_user_error_type(instrumented):
    """A torch UserError (bad dynamic_shapes key) keeps its UserErrorType name as the kind."""
    telemetry = instrumented()
    with pytest.raises(torch._dynamo.exc.UserError):
        _export(dynamic_shapes={"y": None})
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    assert span.attributes[names.ATTR_ERROR_TYPE] == "torch._dynamo.exc.UserError"
    assert span.attributes[names.ATTR_EXPORT_ERROR_KIND] == "INVALID_INPUT"


def test_failure_reaches_the_caller_unchanged(instrumented):
    """Same exception type and message as the untraced export."""
    with pytest.raises(torch._dynamo.exc.UserError) as untraced:
        _export(dynamic_shapes={"y": None})
    instrumented()
    with pytest.raises(torch._dynamo.exc.UserError) as traced:
        _export(dynamic_shapes={"y": None})
    assert (type(traced.value), str(traced.value)) == (type(untraced.value), str(untraced.value))


def test_failed_export_logs_an_event_and_counts_a_failure(instrumented):
    """export_failed log event (error level, in the span) and exports{outcome=failure} = 1."""
    telemetry = instrumented()
    with pytest.raises(torch._dynamo.exc.UserError):
        _export(dynamic_shapes={"y": None})
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    (record,) = telemetry.events(names.LOG_EXPORT_FAILED)
    assert record.severity_text == "ERROR"
    assert record.span_id == span.context.span_id
    assert record.attributes[names.ATTR_EXPORT_ERROR_KIND] == "INVALID_INPUT"
    (point,) = telemetry.points(names.METRIC_EXPORTS)
    assert dict(point.attributes) == {
        names.ATTR_EXPORT_OPERATION: names.EXPORT_OPERATION_EXPORT,
        names.ATTR_EXPORT_OUTCOME: names.OUTCOME_FAILURE,
    }
    assert point.value == 1


def test_export_and_decomposition_are_counted_and_timed(instrumented):
    """exports counter and duration histogram: one export, one decomposition, both success."""
    telemetry = instrumented()
    _export().run_decompositions()
    counted = {
        p.attributes[names.ATTR_EXPORT_OPERATION]: p.value
        for p in telemetry.points(names.METRIC_EXPORTS)
    }
    assert counted == {
        names.EXPORT_OPERATION_EXPORT: 1,
        names.EXPORT_OPERATION_DECOMPOSITIONS: 1,
    }
    timed = telemetry.points(names.METRIC_EXPORT_DURATION)
    assert sorted(p.count for p in timed) == [1, 1]
    assert all(p.sum > 0 for p in timed)


def test_export_logs_an_event_with_its_op_count(instrumented):
    """torch.export.exported: info level, in the export span, op count as an int field."""
    telemetry = instrumented()
    program = _export()
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    (record,) = telemetry.events(names.LOG_EXPORTED)
    assert (record.severity_text, record.span_id) == ("INFO", span.context.span_id)
    assert record.attributes[names.ATTR_EXPORT_OP_COUNT] == sum(_graph_ops(program).values())


def test_exported_module_results_unchanged(instrumented):
    """Outputs and buffer updates of ExportedProgram.module() equal the eager model's."""
    instrumented(run_spans="all")
    torch.manual_seed(0)
    eager = Net()
    module = torch.export.export(copy.deepcopy(eager), _inputs()).module()
    x = torch.randn(5, 4)
    assert torch.equal(module(x), eager(x))
    assert torch.equal(module(x), eager(x))
    assert torch.equal(module.steps, eager.steps)


def test_module_runs_follow_the_run_span_policy(instrumented):
    """first:2: three runs give two torch.export.run spans, indexed 1 and 2, linked to export."""
    telemetry = instrumented(run_spans="first:2")
    module = _export().module()
    for _ in range(3):
        module(*_inputs())
    (export_span,) = telemetry.spans(names.SPAN_EXPORT)
    runs = telemetry.spans(names.SPAN_EXPORT_RUN)
    assert [r.attributes[names.ATTR_RUN_INDEX] for r in runs] == [1, 2]
    assert {r.attributes[names.ATTR_RUN_KIND] for r in runs} == {names.RUN_KIND_EXPORT}
    assert {r.attributes[names.ATTR_EXPORT_MODULE_CLASS] for r in runs} == {f"{Net.__module__}.Net"}
    assert all([link.context.span_id for link in r.links] == [export_span.context.span_id]
               for r in runs)  # fmt: skip


def test_decomposed_module_runs_link_to_the_decomposition(instrumented):
    """A module of a decomposed program links its run spans to the decomposition span."""
    telemetry = instrumented(run_spans="all")
    _export().run_decompositions().module()(*_inputs())
    (decomposition,) = telemetry.spans(names.SPAN_EXPORT_DECOMPOSITIONS)
    (run,) = telemetry.spans(names.SPAN_EXPORT_RUN)
    assert [link.context.span_id for link in run.links] == [decomposition.context.span_id]


def test_instrumentation_error_leaves_export_working(instrumented, monkeypatch, caplog):
    """If describing the program fails, the program comes back and the span still ends."""
    from otel_dynamo._sources import torch_export

    def broken(*_args, **_kwargs):
        raise RuntimeError("describe failed")

    monkeypatch.setattr(torch_export, "program_attributes", broken)
    # Reported as every internal error is: a warning the first time in a process, then debug.
    caplog.set_level(logging.DEBUG, logger="otel_dynamo")
    telemetry = instrumented()
    program = _export()
    assert isinstance(program, ExportedProgram)
    (span,) = telemetry.spans(names.SPAN_EXPORT)
    assert span.status.status_code == StatusCode.UNSET
    assert "torch.export instrumentation error" in caplog.text


def test_uninstrument_export_restores_the_originals(instrumented):
    """The very same function and methods come back; exports then record nothing."""
    originals = (
        torch.export.export,
        vars(ExportedProgram)["run_decompositions"],
        vars(ExportedProgram)["module"],
    )
    telemetry = instrumented()
    assert torch.export.export is not originals[0]
    otel_dynamo.uninstrument_export()
    assert all(
        a is b
        for a, b in zip(
            originals,
            (
                torch.export.export,
                vars(ExportedProgram)["run_decompositions"],
                vars(ExportedProgram)["module"],
            ),
            strict=True,
        )
    )
    _export()
    assert telemetry.spans(names.SPAN_EXPORT) == []


def test_instrument_traces_export_and_uninstrument_restores_it(provider):
    """otel_dynamo.instrument() patches torch.export.export too; uninstrument() undoes it."""
    original = torch.export.export
    otel_dynamo.instrument(tracer_provider=provider)
    try:
        assert isinstance(torch.export.export, wrapt.FunctionWrapper)
        assert torch.export.export.__wrapped__ is original
    finally:
        otel_dynamo.uninstrument()
    assert torch.export.export is original


def test_enabled_environment_instruments_export_at_torch_import():
    """OTEL_DYNAMO_ENABLED=true: torch.export.export is traced right after `import torch`."""
    code = (
        "import otel_dynamo._enablement.startup as s; s.start(); import sys; "
        "assert 'torch' not in sys.modules; import torch; "
        "import wrapt; print(isinstance(torch.export.export, wrapt.FunctionWrapper), "
        "'torch._dynamo' in sys.modules)"
    )
    env = {**os.environ, "OTEL_DYNAMO_ENABLED": "true", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


TYPED_MESSAGE = (
    "Data-dependent branching\n  Explanation: Detected data-dependent branching.\n"
    "  Hint: Use `torch.cond` to express dynamic control flow.\n"
)


STATES_GB_TYPE = "gb_type" in inspect.signature(torch._dynamo.exc.Unsupported).parameters


@pytest.mark.skipif(not STATES_GB_TYPE, reason="torch before 2.12 has no Unsupported.gb_type")
def test_graph_break_type_from_gb_type_when_torch_states_it():
    """torch 2.12+: Unsupported.gb_type is the kind, whatever the message says."""
    exc = torch._dynamo.exc.Unsupported("anything", gb_type="Data-dependent branching")
    assert torch_export_facts.graph_break_type(exc) == "Data-dependent branching"


def test_graph_break_type_from_the_message_before_torch_2_12():
    """torch 2.8-2.11 have no gb_type: the type is the message's line before 'Explanation'."""
    exc = torch._dynamo.exc.Unsupported(TYPED_MESSAGE)
    exc.__dict__.pop("gb_type", None)  # as torch 2.8 builds it: no attribute at all
    assert torch_export_facts.graph_break_type(exc) == "Data-dependent branching"


def test_untyped_or_foreign_errors_have_no_graph_break_type():
    """An untyped Unsupported, or any other exception with the same text, has no type."""
    untyped = torch._dynamo.exc.Unsupported("call_function UserDefinedObjectVariable")
    untyped.__dict__.pop("gb_type", None)
    assert torch_export_facts.graph_break_type(untyped) is None
    assert torch_export_facts.graph_break_type(ValueError(TYPED_MESSAGE)) is None
