"""OTEL_<SIGNAL>_EXPORTER=console prints to standard output."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from _export_support import clear_otel_environ

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.setup import setup_providers


@pytest.fixture(autouse=True)
def _no_stray_otel_variables(monkeypatch):
    clear_otel_environ(monkeypatch)


def test_console_span_exporter_prints_the_span(tmp_path, capfd):
    """A span with the console exporter is printed as the SDK's JSON, and no file is made."""
    environ = {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
    }
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    with telemetry.tracer_provider.get_tracer("test").start_as_current_span("printed"):
        pass
    telemetry.shutdown(2.0)
    printed = json.loads(capfd.readouterr().out)
    assert (printed["name"], printed["attributes"]) == ("printed", {})
    assert list(tmp_path.iterdir()) == []


def test_console_prints_to_stdout_as_it_is_when_it_exports(tmp_path):
    """Set up before the job redirects stdout (``contextlib.redirect_stdout``, pytest's
    ``capsys``): the span is printed to the stdout of the moment, as ``print`` would."""
    environ = {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
    }
    telemetry = setup_providers(Settings(output_dir=str(tmp_path)), environ=environ)
    redirected = io.StringIO()
    with contextlib.redirect_stdout(redirected):
        with telemetry.tracer_provider.get_tracer("test").start_as_current_span("redirected"):
            pass
        assert telemetry.force_flush(5.0) is True
    telemetry.shutdown(2.0)
    assert json.loads(redirected.getvalue())["name"] == "redirected"
