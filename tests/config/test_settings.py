"""Configuration: the run-span policy, messages for bad values, and the documented tables."""

from __future__ import annotations

import pathlib

import pytest

from otel_dynamo._config import settings as config
from otel_dynamo._config.run_span_policy import NEVER, RunSpanPolicy

ROOT = pathlib.Path(__file__).resolve().parents[2]


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


def test_every_environment_variable_is_documented_in_the_readme():
    """Every OTEL_DYNAMO_* variable the config reads has a row in docs/configuration.md."""
    readme = (ROOT / "docs" / "configuration.md").read_text()
    missing = [v.env for v in config.VARIABLES if f"`{v.env}`" not in readme]
    assert not missing, missing


def test_every_standard_variable_read_is_in_the_configuration_table():
    """Each standard OTEL_* variable otel_dynamo reads has a row in docs/configuration.md."""
    from otel_dynamo._config import otel_env
    from otel_dynamo._providers import resource

    table = (ROOT / "docs" / "configuration.md").read_text()
    read = {
        value
        for module in (otel_env, resource)
        for key, value in vars(module).items()
        if key.startswith("ENV_") and isinstance(value, str) and value.startswith("OTEL_")
    }
    read |= set(otel_env.ENV_EXPORTER.values())
    base = otel_env.OTLP_BASE
    read |= {base.endpoint, base.protocol, base.headers, base.insecure}
    assert read and sorted(v for v in read if f"`{v}`" not in table) == []


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "1e400", "0", "-1", "86401"])
def test_durations_must_be_finite_positive_and_at_most_a_day(raw):
    """OTEL_DYNAMO_SHUTDOWN_TIMEOUT=inf (and the like) is one problem and the default,
    not an OverflowError when the process exits."""
    settings = config.load_settings({"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": raw})
    (problem,) = settings.problems
    assert problem.message == (
        f"otel_dynamo: OTEL_DYNAMO_SHUTDOWN_TIMEOUT={raw!r} is not valid; accepted: "
        "seconds, > 0 and <= 86400; using the default"
    )
    assert settings.shutdown_timeout_seconds == config.DEFAULT_SHUTDOWN_TIMEOUT_SECONDS


def test_a_day_is_an_accepted_duration():
    """The largest duration accepted is 86400 seconds."""
    settings = config.load_settings({"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": "86400"})
    assert not settings.problems
    assert settings.shutdown_timeout_seconds == 86400.0
