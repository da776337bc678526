"""Recompile reasons in plain words (otel_dynamo.causes.guards.plain_reason)."""

from __future__ import annotations

import pytest

from otel_dynamo.causes.guards import guard_text, plain_reason, read_guards


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
            "stack value ___stack0: a Python float value changed (was 64.75)",
        ),
        ("L['scale'] == 64.75", "input scale: a Python float value changed (was 64.75)"),
        ("L['n'] == 3", "input n: a Python int value changed (was 3)"),
        ("len(___stack1) == 3", "the length of ___stack1 changed (was 3)"),
        (
            "tensor '___stack1' size mismatch at index 0. expected 4, actual 8",
            "stack value ___stack1: dimension 0 changed from 4 to 8",
        ),
        ("___stack2 is None", "stack value ___stack2: changed from None"),
        (
            "L['self']._modules['fc'].training == True",
            "attribute self.fc.training: a Python bool value changed (was True)",
        ),
        ("len(L['x']) == 3", "the length of x changed (was 3)"),
        ("L['x'].size()[0] <= 16", "input x: dimension 0 is no longer <= 16"),
        ("2 <= L['x'].size()[0]", "input x: dimension 0 is no longer >= 2"),
        (
            "___check_obj_id(L['self'].fn, 140234)",
            "attribute self.fn: a different object than before",
        ),
        ("L['self'].step == 3", "attribute self.step: a Python int value changed (was 3)"),
        (
            "tensor 'L['self']._modules['fc']._parameters['weight']' size mismatch at index 0."
            " expected 4, actual 8",
            "parameter self.fc.weight: dimension 0 changed from 4 to 8",
        ),
        (
            "tensor 'L['self']._modules['bn']._buffers['running_mean']' dtype mismatch."
            " expected Float, actual Half",
            "buffer self.bn.running_mean: dtype changed from Float to Half",
        ),
        ("G['SCALE'] == 2.5", "global SCALE: a Python float value changed (was 2.5)"),
        ("___check_type_id(L['x'], 94012)", "input x: its type changed"),
        ("L['y'] is None", "input y: changed from None"),
        (
            "GLOBAL_STATE changed: grad_mode ",
            "global torch state changed: grad mode (torch.no_grad / torch.enable_grad)",
        ),
        (
            "GLOBAL_STATE changed: autocast(cpu)_enabled ",
            "global torch state changed: autocast on cpu (on or off)",
        ),
        (
            "GLOBAL_STATE changed: deterministic_algorithms num_threads ",
            "global torch state changed: deterministic algorithms "
            "(torch.use_deterministic_algorithms), number of threads (torch.set_num_threads)",
        ),
        (
            "___check_type_id(y, 1401829), type=<class 'float'>  #   # job.py:28 in f "
            "(HINT: type float)",
            "input y: its type changed (was float)",
        ),
        (
            "___check_obj_id(L['m'], 9475), type=<class 'torch.nn.modules.activation.ReLU'>",
            "input m: a different object than before (was a ReLU)",
        ),
        (
            "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
            "ADInplaceOrView, AutogradCPU), actual DispatchKeySet(Meta, BackendSelect, "
            "ADInplaceOrView, AutogradMeta)",
            "input x: device changed from CPU to Meta",
        ),
        (
            "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
            "ADInplaceOrView, AutogradCPU), actual DispatchKeySet(CPU, BackendSelect)",
            "input x: autograd state changed (requires_grad or inference mode)",
        ),
        (
            "tensor 'x' Tensor device index mismatch. Expected device index to be 0, actual 1",
            "input x: device index changed from 0 to 1",
        ),
        (
            "BACKEND_MATCH failure: torch.compile detected different backend callables. Cached "
            "backend: _TorchCompileWrapper(compiler='eager', dynamic=None) (id=0x7f7e). New "
            "backend: _TorchCompileWrapper(compiler='aot_eager', dynamic=None) (id=0x7f7f). If "
            "this is unexpected, wrap your backend in functools.partial.",
            "compiled with another backend: aot_eager, was eager",
        ),
        ("___check_current_backend(140182917829120)", "compiled with another backend"),
        ("not ___dict_contains('b', L['d'])", "input d: now has key 'b'"),
        ("___dict_contains('b', L['d'])", "input d: no longer has key 'b'"),
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


PARAMETER_HINT = (
    ". Guard failed on a parameter, consider using \n"
    "torch._dynamo.config.force_parameter_static_shapes = False \nto allow dynamism on parameters."
)


def test_a_failed_guard_on_a_parameter_reads_as_the_parameter() -> None:
    """A module's parameter (model.double(): its dtype) reads as that parameter, without
    Dynamo's config hint, whether torch writes the hint on one line or three."""
    raw = "0/0: tensor 'L['self']._modules['fc']._parameters['weight']' dtype mismatch. "
    raw += "expected Float, actual Double"
    expected = "parameter self.fc.weight: dtype changed from Float to Double"
    assert plain_reason(raw + PARAMETER_HINT) == expected
    assert plain_reason(raw + " ".join(PARAMETER_HINT.split())) == expected


def test_the_guard_text_keeps_the_parameter_hint_on_its_line() -> None:
    """The raw guard beside the plain words keeps torch's hint whole, on one line."""
    raw = "tensor 'w' requires_grad mismatch. expected requires_grad=1" + PARAMETER_HINT
    assert guard_text(raw) == " ".join(raw.split())


def test_the_users_stack_torch_appends_is_not_part_of_the_reason() -> None:
    """torch 2.13 on append "User stack trace:" and its frames: neither the plain words
    nor the guard text carry them (the report shows where the function is)."""
    raw = "0/0: G['SCALE'] == 2    #   # job.py:24 in fn\nUser stack trace:\n"
    raw += '  File "job.py", line 24, in fn'
    assert plain_reason(raw) == "global SCALE: a Python int value changed (was 2)"
    assert guard_text(raw) == "G['SCALE'] == 2"


def test_a_value_on_dynamos_stack_is_read_with_its_slot_not_a_source() -> None:
    """``___stack1 == 27`` names no source (the value has no name), and keeps its slot on
    Dynamo's stack; a named value keeps its source and no slot."""
    (on_stack,) = read_guards("___stack1 == 27  # print(x)  # job.py:5 in f")
    (named,) = read_guards("L['n'] == 3")
    assert (on_stack.kind, on_stack.source, on_stack.stack_slot) == ("int", None, "___stack1")
    assert (named.kind, named.source, named.stack_slot) == ("int", "L['n']", None)
