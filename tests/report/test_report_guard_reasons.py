"""Recompile reasons in plain words (otel_dynamo.report.summary.guard_reasons.plain_reason)."""

from __future__ import annotations

import pytest

from otel_dynamo.report.summary.guard_reasons import guard_text, plain_reason


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (
            "tensor 'x' size mismatch at index 0. expected 4, actual 8",
            "input x: dimension 0 changed from 4 to 8",
        ),
        (
            "tensor 'L['x']' stride mismatch at index 1. expected 1, actual 2",
            "input x: stride of dimension 1 changed from 1 to 2",
        ),
        (
            "tensor 'x' dtype mismatch. expected Float, actual Half",
            "input x: dtype changed from Float to Half",
        ),
        (
            "tensor 'x' rank mismatch. expected 2, actual 3",
            "input x: number of dimensions changed from 2 to 3",
        ),
        (
            "tensor 'x' requires_grad mismatch. expected requires_grad=1",
            "input x: requires_grad changed (was True)",
        ),
        (
            "___stack0 == 64.75                     # return x * s  # job.py:4 in f",
            "a Python float value changed (was 64.75)",
        ),
        ("L['scale'] == 64.75", "input scale: a Python float value changed (was 64.75)"),
        ("L['n'] == 3", "input n: a Python int value changed (was 3)"),
        (
            "L['self']._modules['fc'].training == True",
            "input self.fc.training: a Python bool value changed (was True)",
        ),
        ("len(L['x']) == 3", "the length of x changed (was 3)"),
        ("L['x'].size()[0] <= 16", "input x: dimension 0 is no longer <= 16"),
        ("2 <= L['x'].size()[0]", "input x: dimension 0 is no longer >= 2"),
        ("___check_obj_id(L['self'].fn, 140234)", "input self.fn: a different object than before"),
        ("___check_type_id(L['x'], 94012)", "input x: its type changed"),
        ("L['y'] is None", "input y: changed from None"),
        ("GLOBAL_STATE changed: grad_mode ", "global torch state changed: grad_mode"),
        ("a shape the report does not know", "a shape the report does not know"),
    ],
)
def test_plain_reading_of_a_guard_failure(raw: str, plain: str) -> None:
    """Each common guard-failure shape reads in plain words; others stay as written."""
    assert plain_reason(raw) == plain


def test_several_failed_guards_read_one_by_one() -> None:
    """One failed guard per line (per cache entry, "0/0: ..."): each read, joined by "; "."""
    raw = "0/0: tensor 'x' size mismatch at index 1. expected 3, actual 5\n0/1: L['n'] == 2"
    assert plain_reason(raw) == (
        "input x: dimension 1 changed from 3 to 5; input n: a Python int value changed (was 2)"
    )


def test_guard_text_drops_the_source_comment() -> None:
    """The raw guard shown beside the plain words is the guard's code, not its comment."""
    assert guard_text("scale == 64.75            # return x * scale  # job.py:4 in f") == (
        "scale == 64.75"
    )
