"""Pure pieces: payload parsing, run-span policy, configuration messages, names docs."""

from __future__ import annotations

import ast
import itertools
import pathlib

import pytest

from otel_dynamo import names
from otel_dynamo._config import settings as config
from otel_dynamo._config.run_span_policy import NEVER, RunSpanPolicy
from otel_dynamo._sources import dynamo_stream

ROOT = pathlib.Path(__file__).resolve().parents[2]

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


@pytest.mark.parametrize(
    ("raw", "recorded"),
    [
        ("all", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
        ("off", []),
        ("first:2", [1, 2]),
        ("auto", [1, 2, 3, 4, 8]),
    ],
)
def test_run_span_policy_chooses_runs(raw, recorded):
    """Each policy records exactly the runs its documentation promises (first 9 runs)."""
    policy, chosen, index = RunSpanPolicy.parse(raw), [], 0
    next_run = policy.first_recorded()
    while next_run <= 9 and next_run != NEVER:
        chosen.append(next_run)
        index = next_run
        next_run = policy.next_recorded(index)
    assert chosen == recorded


def test_bad_variable_value_becomes_one_clear_problem():
    """OTEL_DYNAMO_RUN_SPANS=sometimes: message names variable, value and accepted values."""
    settings = config.load_settings({"OTEL_DYNAMO_RUN_SPANS": "sometimes"})
    (problem,) = settings.problems
    assert problem.message == (
        "otel_dynamo: OTEL_DYNAMO_RUN_SPANS='sometimes' is not valid; accepted: "
        f"{RunSpanPolicy.ACCEPTED}; using the default"
    )
    assert settings.run_spans == RunSpanPolicy.auto(config.DEFAULT_AUTO_FIRST_RUNS)


def test_strict_mode_turns_a_bad_value_into_an_error():
    """OTEL_DYNAMO_STRICT=true raises ConfigError at start instead of warning."""
    with pytest.raises(config.ConfigError, match="OTEL_DYNAMO_RUN_SPANS='sometimes'"):
        config.load_settings({"OTEL_DYNAMO_RUN_SPANS": "sometimes", "OTEL_DYNAMO_STRICT": "true"})


def _documented_constants() -> dict[str, str]:
    """Constant name -> value for every module-level string in names.py with a docstring."""
    tree = ast.parse((ROOT / "otel_dynamo" / "names.py").read_text())
    body, found = tree.body, {}
    for node, following in itertools.pairwise(body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            documented = isinstance(following, ast.Expr) and isinstance(
                following.value, ast.Constant
            )
            found[node.targets[0].id] = node.value.value if documented else ""
    return found


def test_every_name_constant_has_a_docstring_and_is_exported():
    """Each constant in names.py is documented in place and listed in __all__."""
    constants = _documented_constants()
    assert all(constants.values()), [k for k, v in constants.items() if not v]
    assert set(constants) == set(names.__all__)


def test_every_name_is_documented_in_the_readme():
    """The README mentions every span name, attribute key, metric and event name."""
    readme = (ROOT / "README.md").read_text()
    missing = [value for value in _documented_constants().values() if f"`{value}`" not in readme]
    assert not missing, missing


def test_every_environment_variable_is_documented_in_the_readme():
    """Every OTEL_DYNAMO_* variable the config reads has a row in the README."""
    readme = (ROOT / "README.md").read_text()
    missing = [v.env for v in config.VARIABLES if f"`{v.env}`" not in readme]
    assert not missing, missing


def test_every_standard_variable_read_is_in_the_configuration_table():
    """Each standard OTEL_* variable otel_dynamo reads has a row in the README's table."""
    from otel_dynamo._config import otel_env
    from otel_dynamo._providers import resource

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Configuration") : readme.index("## Names")]
    read = {
        value
        for module in (otel_env, resource)
        for key, value in vars(module).items()
        if key.startswith("ENV_") and isinstance(value, str) and value.startswith("OTEL_")
    }
    read |= set(otel_env.ENV_EXPORTER.values())
    read |= {otel_env.otlp_variable(suffix) for suffix in ("ENDPOINT", "PROTOCOL", "HEADERS")}
    assert read and sorted(v for v in read if f"`{v}`" not in table) == []
