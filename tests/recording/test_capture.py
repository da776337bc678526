"""OTEL_DYNAMO_CAPTURE: what Dynamo's reasons keep of the user's source and values."""

from __future__ import annotations

import pytest
import torch

import otel_dynamo
from otel_dynamo import names
from otel_dynamo._recording.capture import HIDDEN_VALUE, without_source, without_values

VALUE_GUARD = "L['token'] == 'hunter2'  # if token == \"hunter2\":  # train.py:12 in step"


def test_source_lines_dynamo_quotes_are_removed():
    """Everything after Dynamo's '  # ' (the user's line and its place) is dropped."""
    assert without_source(VALUE_GUARD) == "L['token'] == 'hunter2'"


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        ("L['token'] == 'hunter2'", f"L['token'] == {HIDDEN_VALUE}"),
        ("L['lr'] == 0.001", f"L['lr'] == {HIDDEN_VALUE}"),
        ("L['lr'] == -1.5e-3", f"L['lr'] == {HIDDEN_VALUE}"),
        ("L['host'] == 'db.prod.internal'", f"L['host'] == {HIDDEN_VALUE}"),
        (
            "tensor 'L['x']' size mismatch at index 0. expected 8, actual 4",
            f"tensor 'L['x']' size mismatch at index {HIDDEN_VALUE}. expected {HIDDEN_VALUE}, "
            f"actual {HIDDEN_VALUE}",
        ),
        (
            "tensor 'kwargs['past_key_values'].layers[0].keys' size mismatch",
            "tensor 'kwargs['past_key_values'].layers[0].keys' size mismatch",
        ),
        (
            "call_function ConstantVariable(str: 'hunter2')",
            f"call_function ConstantVariable(str: {HIDDEN_VALUE})",
        ),
    ],
)
def test_values_are_hidden_and_names_kept(reason, kept):
    """String and number literals become <value>; sources like L['x'] stay whole."""
    assert without_values(reason) == kept


def _recompile_reason(provider, exporter, capture):
    torch._dynamo.reset()
    backend = otel_dynamo.traced("eager", tracer_provider=provider, capture=capture)

    def scaled(x, token):
        if token == "hunter2":  # a value guard on a string argument
            return x * 2
        return x * 3

    compiled = torch.compile(scaled, backend=backend)
    compiled(torch.ones(2), "hunter2")
    compiled(torch.ones(2), "swordfish")
    frames = [s for s in exporter.get_finished_spans() if s.name == names.SPAN_FRAME]
    return frames[-1].attributes[names.ATTR_RECOMPILE_REASON]


def test_capture_none_exports_no_value_and_no_source_in_a_recompile_reason(provider, exporter):
    """A guard on a secret string: with capture none the recompile reason names the
    argument but neither the value nor the line it came from."""
    reason = _recompile_reason(provider, exporter, capture=())
    assert "token" in reason
    assert "hunter2" not in reason
    assert "#" not in reason


def test_default_capture_keeps_the_value(provider, exporter):
    """The default (stacks, values) keeps the value that failed, for debugging."""
    reason = _recompile_reason(provider, exporter, capture=("stacks", "values"))
    assert "hunter2" in reason
