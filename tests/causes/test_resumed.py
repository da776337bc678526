"""Dynamo's resume functions read back to the function they resume: a cause found in
one belongs to that function."""

from __future__ import annotations

from otel_dynamo.causes.resumed import Resumed, resumed, same_code


def test_a_resume_function_names_the_function_and_the_break_line() -> None:
    """``torch_dynamo_resume_in_forward_at_55`` resumes ``forward`` after line 55; a
    resume of a resume names the first function; a qualified name reads the same."""
    assert resumed("torch_dynamo_resume_in_forward_at_55") == Resumed("forward", 55)
    nested = "torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_6_at_9"
    assert resumed(nested) == Resumed("f", 6)
    assert resumed("Block.torch_dynamo_resume_in_forward_at_12") == Resumed("forward", 12)
    assert resumed("forward") is None
    assert resumed("resume_in_forward_at_55") is None


def test_same_code_is_the_function_or_its_resume_functions() -> None:
    """A frame runs code of ``TinyLM.forward`` when it is ``forward`` (qualified or not)
    or one of its resume functions; never another function's resume function."""
    assert same_code("TinyLM.forward", "TinyLM.forward")
    assert same_code("forward", "TinyLM.forward")
    assert same_code("torch_dynamo_resume_in_forward_at_55", "TinyLM.forward")
    assert not same_code("torch_dynamo_resume_in_head_at_55", "TinyLM.forward")
    assert not same_code("forward_helper", "forward")
    assert same_code(None, None) and not same_code(None, "forward")
