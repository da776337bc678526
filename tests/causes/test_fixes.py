"""Fixes derived from what torch said (otel_dynamo.causes): each kind of cause, its
actions and what it expects, read from the texts torch 2.8 to 2.15 write. The fixes'
effect on real jobs is tests/fixes/."""

from __future__ import annotations

import pytest

from otel_dynamo.causes import fixes, guards
from otel_dynamo.causes.records import Fix

CODE = fixes.Code("f", "/work/job.py", 3, ("x", "n"), "2.13.0")
MODULE_HINT = (
    "torch.compile considers integer attributes of the nn.Module to be static. If you are "
    "observing recompilation, you might want to make this integer dynamic using "
    "torch._dynamo.config.allow_unspec_int_on_nn_module = True, or convert this integer "
    "into a tensor."
)


def _fix(reason: str, code: fixes.Code = CODE) -> Fix:
    (failure,) = guards.read_guards(reason)
    (fix,) = fixes.recompile_fixes(failure, code, recompiles=2)
    return fix


@pytest.mark.parametrize(
    ("reason", "source"),
    [
        ("n == 1", "L['n']"),
        ("L['n'] == 1", "L['n']"),
        ("G['SCALE'] == 2", "G['SCALE']"),
        ("kwargs['n'] == 3", "L['kwargs']['n']"),
    ],
)
def test_an_int_is_made_dynamic_by_its_dynamo_source(reason: str, source: str) -> None:
    """A changing Python int is made dynamic from its first compile by torch's own
    variable, naming the source as Dynamo names it (torch 2.13 writes bare names)."""
    fix = _fix(reason)
    assert fix["actions"] == [
        {"kind": "env", "name": "TORCH_COMPILE_DYNAMIC_SOURCES", "value": source}
    ]
    assert fix["expect"] == {"recompiles": 0, "graph_breaks": None}


@pytest.mark.parametrize(
    "reason",
    [
        f"self.step == 0                                          (HINT: {MODULE_HINT})",
        f"self.step == 0    # self.step += 1  # job.py:8 in forward (HINT: {MODULE_HINT})",
    ],
)
def test_a_module_counter_gets_torchs_setting_and_the_dynamic_source(reason: str) -> None:
    """torch 2.8 writes its hint after the guard, 2.13 after the source comment: either
    way the attribute is read as one, and the fix sets torch's module-int setting and
    makes the attribute dynamic, saying why torch's hint alone is not enough."""
    fix = _fix(reason)
    assert [action["kind"] for action in fix["actions"]] == ["config", "env"]
    assert fix["actions"][1]["value"] == "L['self'].step"  # type: ignore[typeddict-item]
    assert fix["source"]["torch_hint"] == MODULE_HINT
    assert fix["differs_from_torch"] is not None
    assert guards.plain_reason(reason) == "attribute self.step: a Python int value changed (was 0)"


def test_a_tensor_not_an_argument_is_made_dynamic_by_its_source() -> None:
    """A tensor that arrives inside *args (a decorator's wrapper) has no position: the fix
    names its source instead of mark_dynamic."""
    fix = _fix("tensor 'args[0]' size mismatch at index 1. expected 8, actual 16")
    assert fix["actions"] == [
        {"kind": "env", "name": "TORCH_COMPILE_DYNAMIC_SOURCES", "value": "L['args'][0]"}
    ]


def test_a_parameter_shape_lets_parameters_be_dynamic() -> None:
    """A parameter whose shape changes: torch's own setting for dynamic parameters."""
    fix = _fix(
        "tensor 'L['self']._modules['fc']._parameters['weight']' size mismatch at index 0."
        " expected 4, actual 8"
    )
    assert fix["actions"] == [
        {
            "kind": "config",
            "name": "torch._dynamo.config.force_parameter_static_shapes",
            "value": False,
        }
    ]


def test_a_stride_change_is_said_in_words() -> None:
    """Strides: no exact action; pass the tensor contiguous."""
    fix = _fix("tensor 'x' stride mismatch at index 1. expected 1, actual 2")
    assert (fix["actions"], "x.contiguous()" in fix["summary"]) == ([], True)


def test_a_recompile_in_a_resume_function_points_to_its_break() -> None:
    """A size change in the function torch resumes normalize with after line 6 gets no
    action on it (no user marks or compiles it): the summary names the break to remove."""
    code = fixes.Code(
        "torch_dynamo_resume_in_normalize_at_6", "/work/job.py", 6, ("___stack0", "x")
    )
    fix = _fix("tensor 'x' size mismatch at index 0. expected 4, actual 8", code)
    assert fix["actions"] == []
    assert (
        "rest of normalize that torch resumes after the graph break at line 6" in (fix["summary"])
    )
    assert fix["expect"] == {"recompiles": None, "graph_breaks": None}


def test_a_hint_that_only_hides_a_cause_is_no_action() -> None:
    """A hint naming a config that hides the cause (suppress_errors) gives no action."""
    (fix,) = fixes.break_fixes(
        "Some unsupported call",
        CODE,
        hints=("Set `torch._dynamo.config.suppress_errors = True` to fall back.",),
        url=None,
    )
    assert fix["actions"] == []


def test_the_recompile_limit_says_the_recompiles_remain() -> None:
    """The limit's fix has no action and expects the recompiles it counted."""
    fix = fixes.limit_fix(CODE, limit=8, recompiles=8)
    assert (fix["actions"], fix["expect"]["recompiles"]) == ([], 8)


def test_verified_fixes_paste_as_config_lines_and_one_environment_line() -> None:
    """Two dynamic sources become one export line, each value one shell word."""
    found = [_fix("n == 1"), _fix("G['SCALE'] == 2")]
    assert fixes.paste_lines(found) == [
        "export TORCH_COMPILE_DYNAMIC_SOURCES=\"L['n'],G['SCALE']\""
    ]


def test_a_value_whose_size_changed_in_two_dimensions_is_marked_in_both() -> None:
    """A cause whose size guards failed on dimension 0, then 1, is fixed by marking both:
    the action's dims, the sentence and the call to paste say a list (a second int would
    be mark_dynamic's min)."""
    (failure,) = guards.read_guards("tensor 'x' size mismatch at index 1. expected 3, actual 5")
    (fix,) = fixes.recompile_fixes(failure, CODE, recompiles=2, dimensions=[0, 1])
    (action,) = fix["actions"]
    assert (action["kind"], action["dims"]) == ("mark_dynamic", [0, 1])
    assert fix["summary"].startswith(
        "mark dimensions 0 and 1 of x dynamic before each call of f (job.py:3): "
        "torch._dynamo.mark_dynamic(x, [0, 1]); "
    )
    assert fixes.paste_lines([fix]) == [
        "# before each call of f (job.py:3):\ntorch._dynamo.mark_dynamic(x, [0, 1])"
    ]


def test_a_pasted_comment_names_the_function_as_its_fix_does() -> None:
    """A module's forward is ``Net.forward (job.py:3)`` in the paste block's comments, as
    in the fix's sentence (the code name stays in the action, for the program applying it)."""
    code = fixes.Code("forward", "/work/job.py", 3, ("self", "x"), "2.13.0", "Net.forward")
    marked = _fix("tensor 'x' size mismatch at index 0. expected 4, actual 8", code)
    compiled = _fix("L['x'] == 0.5", code)
    (mark,) = marked["actions"]
    assert (mark["kind"], mark["function"], mark["shown"]) == (
        "mark_dynamic",
        "forward",
        "Net.forward",
    )
    assert "before each call of Net.forward (job.py:3)" in marked["summary"]
    assert fixes.paste_lines([marked, compiled]) == [
        "# before each call of Net.forward (job.py:3):\ntorch._dynamo.mark_dynamic(x, 0)",
        "# compile Net.forward (job.py:3) with torch.compile(..., dynamic=True)",
    ]


@pytest.mark.parametrize(
    ("value", "word"),
    [("abc", "abc"), ("L['x']", "\"L['x']\""), ("a$b c", "'a$b c'")],
)
def test_a_value_is_one_shell_word_as_a_person_writes_it(value: str, word: str) -> None:
    assert fixes.shell_word(value) == word
