"""Dynamo's structured-trace payloads parsed into events (pure functions, no compile)."""

from __future__ import annotations

from otel_dynamo import names
from otel_dynamo._sources import dynamo_stream

BREAK_PAYLOAD = """Graph break in user code at /src/train.py:12
Graph Break Reason: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`).

User code traceback:
  File "/src/train.py", line 30, in main
    loss = step(x)
  File "/src/train.py", line 12, in step
    if x.sum() > 0:

Traceback (most recent call last):
  File "/torch/_dynamo/symbolic_convert.py", line 1, in run
"""


def test_graph_break_payload_parsed_into_kind_reason_and_stack():
    """Kind is Dynamo's break type; the stack stops at the Python traceback."""
    event = dynamo_stream.parse_graph_break("0/0", BREAK_PAYLOAD)
    assert event.kind == "Data-dependent branching"
    assert event.reason.startswith("Data-dependent branching: Detected data-dependent")
    assert event.user_stack == ("/src/train.py:30 in main", "/src/train.py:12 in step")
    assert event.skipped_frame is False


HINTED_PAYLOAD = """Graph break in user code at /src/train.py:12
Graph Break Reason: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`).

  Hint: For the common pattern `if tensor_cond: x = transform(x)`, consider making
    the code branchless by always applying the transform.
  Hint: Use `torch.cond` to express dynamic control flow.

  Developer debug context: attempted to jump with TensorVariable()

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html

User code traceback:
  File "/src/train.py", line 12, in step
    if x.sum() > 0:
"""
"""torch 2.13's shape of a break with hints (format_graph_break_message): a long hint
continues on lines indented four spaces."""


def test_break_hints_and_page_parsed_in_torchs_order():
    """Each ``Hint:`` line, its continuation joined, in torch's order; the linked page."""
    event = dynamo_stream.parse_graph_break("0/0", HINTED_PAYLOAD)
    assert event.hints == (
        "For the common pattern `if tensor_cond: x = transform(x)`, consider making "
        "the code branchless by always applying the transform.",
        "Use `torch.cond` to express dynamic control flow.",
    )
    assert event.url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"


def test_break_without_hints_has_none():
    """A payload with no ``Hint:`` line and no page gives () and None."""
    event = dynamo_stream.parse_graph_break("0/0", BREAK_PAYLOAD)
    assert (event.hints, event.url) == ((), None)


def test_a_hint_repeated_by_a_chained_exception_is_kept_once():
    """A message torch repeats (an exception and the one it caused) gives each hint once."""
    twice = HINTED_PAYLOAD + "\nThe above exception was the direct cause:\n" + HINTED_PAYLOAD
    assert len(dynamo_stream.parse_graph_break("0/0", twice).hints) == 2


def test_guard_tree_lines_become_one_guard_each_without_managers():
    """Only 'KIND: check' leaves are guards; manager lines and source comments drop."""
    text = (
        "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- DEFAULT_DEVICE: x == None  # file.py:1\n"
        "| +- GuardManager: source=L['x']\n| | +- TENSOR_MATCH: check_tensor(L['x'])\n"
    )
    assert dynamo_stream.parse_guards(text) == (
        "DEFAULT_DEVICE: x == None",
        "TENSOR_MATCH: check_tensor(L['x'])",
    )


def test_compilation_metrics_become_plain_frame_fields():
    """The source reads Dynamo's field names; the event carries plain, typed fields."""
    metrics = {
        "compile_id": "1/2",
        "co_name": "forward",
        "co_filename": "/src/model.py",
        "co_firstlineno": 7,
        "guard_count": 12,
        "cache_size": 2,
        "graph_op_count": 3,
        "graph_node_count": 5,
        "fail_type": None,
        "recompile_reason": "1/1: tensor 'x' size mismatch at index 0. expected 8, actual 4\nmore",
        "restart_reasons": ["TensorifyScalarRestartAnalysis"],
        "start_time_us": 1_700_000_000_000_000,
        "aotautograd_local_cache_hit_count": 1,
        "inductor_fx_local_cache_miss_count": None,
    }
    ended = dynamo_stream.frame_ended("1/2", 42, metrics)
    assert (ended.function, ended.file, ended.line) == ("forward", "/src/model.py", 7)
    assert (ended.guard_count, ended.cache_size, ended.graph_op_count) == (12, 2, 3)
    assert ended.fail_type is None and ended.fail_reason is None
    assert ended.recompile_reason == "tensor 'x' size mismatch at index 0. expected 8, actual 4"
    assert ended.restart_reasons == ("TensorifyScalarRestartAnalysis",)
    assert ended.start_ns == 1_700_000_000_000_000_000
    assert ended.cache_counts == {names.ATTR_CACHE_AOT_HITS: 1}


def test_recompile_reasons_lose_dynamos_compile_id_prefix():
    """Each reason of a recompile_reasons artifact, without the "0/0: " prefix."""
    payload = ["0/0: tensor 'x' dtype mismatch. expected Float, actual Double", ""]
    assert dynamo_stream.parse_recompile_reasons(payload) == (
        "tensor 'x' dtype mismatch. expected Float, actual Double",
    )


class _Sink:
    """Stands in for the recorder: keeps what it was told."""

    def __init__(self) -> None:
        self.phases: list = []

    def phase(self, event) -> None:
        self.phases.append(event)


def test_payload_of_an_unknown_shape_warns_once_naming_event_and_torch(caplog):
    """A chromium event without its timestamp (a torch that changed the payload): one
    warning naming the event and the torch version, never an exception."""
    import logging

    import torch

    tap = dynamo_stream.StreamTap(_Sink)
    odd = {"payload_fn": lambda: {"ph": "B", "name": "bytecode_tracing"}}  # no "ts"
    with caplog.at_level(logging.WARNING, logger="otel_dynamo"):
        tap.observe("chromium_event", dict, odd)
        tap.observe("chromium_event", dict, odd)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "'chromium_event' event" in warning
    assert f"torch {torch.__version__}" in warning


class Unsupported(Exception):
    """Named as Dynamo's exception is, in this test module."""


def test_fail_type_qualified_from_the_wrapped_exception_unwinding():
    """Dynamo's short fail_type becomes the qualified name of the exception of that name
    found in the unwinding exception's chain (Dynamo rewraps some ``from None``)."""
    try:
        try:
            raise Unsupported("data-dependent")
        except Unsupported:
            raise RuntimeError("rewrapped") from None
    except RuntimeError:
        qualified = dynamo_stream.qualified_fail_type("Unsupported")
    assert qualified == f"{__name__}.Unsupported"


def test_fail_type_kept_when_no_exception_of_its_name_is_unwinding():
    """With no such exception in sight the name stays as Dynamo gave it."""
    try:
        raise KeyError("other")
    except KeyError:
        assert dynamo_stream.qualified_fail_type("Unsupported") == "Unsupported"
