"""Configuration: the run-span policy, messages for bad values, and the documented tables."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

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


class _Recording(dict):
    """An environment that notes every variable looked up in it."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def _variables_read(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every OTEL_* variable the configuration and the resource look up, along every path
    (nothing set; then OTLP for every signal and a ratio sampler). The resource is read
    by the SDK from the process environment: its module's ``environ`` is the recorder."""
    import opentelemetry.sdk.resources as sdk_resources

    from otel_dynamo._config import otel_env, otel_variables
    from otel_dynamo._providers.resources import build_resource

    everything = {name: "otlp" for name in otel_variables.ENV_EXPORTER.values()}
    everything["OTEL_TRACES_SAMPLER"] = "traceidratio"
    read: set[str] = set()
    for values in ({}, everything):
        for reader in (config.load_settings, otel_env.read_otel_env):
            environ = _Recording(values)
            reader(environ)
            read |= environ.read
        environ = _Recording(values)
        monkeypatch.setattr(sdk_resources, "environ", environ)
        build_resource()
        read |= environ.read
    return {name for name in read if name.startswith("OTEL_")}


def test_every_variable_read_is_a_row_of_the_tables(monkeypatch):
    """Each OTEL_DYNAMO_* and standard OTEL_* variable otel_dynamo reads is in a row of
    the tables docs/configuration.md is generated from, and no row names one twice."""
    from otel_dynamo._config import otel_variables

    rows = (*config.VARIABLES, *otel_variables.VARIABLES)
    named = [name for row in rows for name in row.names]
    read = _variables_read(monkeypatch)
    assert len(read) > 60
    assert sorted(read - set(named)) == []
    assert len(named) == len(set(named))
    assert [row.env for row in rows if not (row.default and row.meaning)] == []


def test_the_configuration_document_is_generated_from_the_tables():
    """docs/configuration.md's tables are exactly what docs/generate_configuration.py makes
    of the rows (and the deliberate differences from the SDK)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate_configuration.py"), "--check"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


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
    assert settings.shutdown_timeout_seconds is None  # the default: by where telemetry goes


def test_a_day_is_an_accepted_duration():
    """The largest duration accepted is 86400 seconds."""
    settings = config.load_settings({"OTEL_DYNAMO_SHUTDOWN_TIMEOUT": "86400"})
    assert not settings.problems
    assert settings.shutdown_timeout_seconds == 86400.0
