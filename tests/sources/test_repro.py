"""Repro scripts: written for failing graphs, recorded, and failing the same way when run."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from _export_support import child_environ
from _spans import one
from _telemetry_support import Signals, TwoLayer, train_step

from otel_dynamo import names
from otel_dynamo._sources.aids import repro

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def signals():
    signals = Signals()
    yield signals
    signals.shutdown()


def _fail(signals, tmp_path, fault, **options):
    model = TwoLayer()
    backend = signals.traced("aot_eager", fault=fault, repro_dir=str(tmp_path), **options)
    try:
        train_step(model, torch.compile(model, backend=backend), torch.randn(3, 4))
    except Exception as exc:
        return exc
    return None


def _run_script(path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, path],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )


def _written(signals, tmp_path, span_name):
    span = one(signals.finished(), span_name)
    path = span.attributes[names.ATTR_REPRO_PATH]
    assert isinstance(path, str) and Path(path).parent == tmp_path.resolve()
    (event,) = signals.events(names.LOG_REPRO_WRITTEN)
    assert event[names.ATTR_REPRO_PATH] == path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    return path, event


@pytest.mark.slow
def test_compile_failure_repro_fails_the_same_way_in_a_fresh_process(signals, tmp_path):
    """compile fault: a 0600 script on the graph span and log event; running it raises it."""
    assert _fail(signals, tmp_path, "compile") is not None
    path, event = _written(signals, tmp_path, names.SPAN_GRAPH)
    assert event[names.ATTR_STAGE] == "compile"
    result = _run_script(path)
    assert result.returncode != 0
    assert "ReluCompileError" in result.stderr


@pytest.mark.slow
def test_run_failure_repro_fails_the_same_way_in_a_fresh_process(signals, tmp_path):
    """runtime fault: the script's path is on the run span; running it raises the assert."""
    assert isinstance(_fail(signals, tmp_path, "runtime"), AssertionError)
    path, event = _written(signals, tmp_path, names.SPAN_RUN_FORWARD)
    assert event[names.ATTR_STAGE] == "run"
    result = _run_script(path)
    assert result.returncode != 0
    assert "AssertionError: ReluRuntimeError" in result.stderr


@pytest.mark.slow
def test_accuracy_failure_repro_reports_the_mismatch(signals, tmp_path):
    """accuracy fault caught by the check: the script's accuracy run raises AccuracyError."""
    assert _fail(signals, tmp_path, "accuracy", accuracy=True) is None
    path, event = _written(signals, tmp_path, names.SPAN_RUN_FORWARD)
    assert event[names.ATTR_STAGE] == "accuracy"
    result = _run_script(path)
    assert result.returncode != 0
    assert "AccuracyError" in result.stderr


def test_no_repro_unless_configured(signals, tmp_path):
    """Without a repro directory a failure writes nothing and records no path."""
    model = TwoLayer()
    with pytest.raises(AssertionError):
        backend = signals.traced("aot_eager", fault="runtime")
        train_step(model, torch.compile(model, backend=backend), torch.randn(3, 4))
    assert signals.events(names.LOG_REPRO_WRITTEN) == []
    assert not any(names.ATTR_REPRO_PATH in s.attributes for s in signals.finished())


def test_repro_on_selects_the_failures(signals, tmp_path):
    """repro_on=run: a compile failure writes no script."""
    assert _fail(signals, tmp_path, "compile", repro_on="run") is not None
    assert list(tmp_path.iterdir()) == []
    assert signals.events(names.LOG_REPRO_WRITTEN) == []


def test_scripts_never_overwrite_and_stay_in_the_directory(tmp_path):
    """A taken name gets a numbered sibling; a stem with ../ is flattened into the directory."""
    taken = tmp_path / "repro_x.py"
    taken.write_text("mine")
    first = repro.write_script(str(tmp_path), "repro_x", "one")
    second = repro.write_script(str(tmp_path), "repro_x", "two")
    escaped = repro.write_script(str(tmp_path), "../../etc/evil", "three")
    assert taken.read_text() == "mine"
    assert [Path(first).name, Path(second).name] == ["repro_x.1.py", "repro_x.2.py"]
    assert Path(escaped).parent == tmp_path.resolve()
    assert stat.S_IMODE(os.stat(escaped).st_mode) == 0o600


def test_created_directory_is_owner_only(tmp_path):
    """A repro directory otel_dynamo creates is 0700."""
    target = tmp_path / "repros"
    repro.write_script(str(target), "repro_y", "x")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o700


JOB = ROOT / "tests" / "programs" / "compile_job.py"
SECRETS = {
    "TRITON_SERVER_API_KEY": "TOPSECRET-key",
    "TORCH_HUB_TOKEN": "TOPSECRET-token",
    "TORCHINDUCTOR_REMOTE_PASSWORD": "TOPSECRET-password",
    "OTEL_EXPORTER_OTLP_HEADERS": "api-key=TOPSECRET-headers",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=TOPSECRET-traces-headers",
}


@pytest.mark.slow
def test_a_jobs_repro_script_copies_no_secret_and_no_otel_variable(tmp_path):
    """A real job (compile fault, repro scripts on) with secret-looking variables set: its
    script comments each out with the placeholder, copies no OTEL_* variable (the
    OTEL_DYNAMO_* ones that ran it included), keeps the other TORCH variables with their
    values written as Python literals, and parses; no secret value is anywhere in it."""
    env = child_environ(
        OTEL_DYNAMO_ENABLED="true",
        OTEL_DYNAMO_FAULT="compile",
        OTEL_DYNAMO_REPRO_DIR=str(tmp_path / "repro"),
        OTEL_DYNAMO_OUTPUT_DIR=str(tmp_path / "telemetry"),
        JOB_BACKEND="aot_eager",
        TORCH_REPRO_TEST_NOTE="it's\nkept",
        **SECRETS,
    )
    done = subprocess.run(
        [sys.executable, str(JOB)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "ReluCompileError" in done.stderr
    (script,) = (tmp_path / "repro").iterdir()
    text = script.read_text()
    assert not any(secret in text for secret in SECRETS.values())
    lines = text.splitlines()
    assert [line for line in lines if "os.environ" in line and "OTEL_" in line] == []
    for name in ("TRITON_SERVER_API_KEY", "TORCH_HUB_TOKEN", "TORCHINDUCTOR_REMOTE_PASSWORD"):
        assert (
            f"# os.environ[{name!r}] = '<not copied>'  # looks like a secret: its value is "
            "not copied; set it if the repro needs it"
        ) in lines
    assert "os.environ['TORCH_REPRO_TEST_NOTE'] = \"it's\\nkept\"" in lines
    assert "os.environ.pop('TORCHDYNAMO_REPRO_AFTER', None)" in lines
    ast.parse(text)
