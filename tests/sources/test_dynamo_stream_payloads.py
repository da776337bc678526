"""Dynamo's structured-trace payloads parsed into events (pure functions, no compile)."""

from __future__ import annotations

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
