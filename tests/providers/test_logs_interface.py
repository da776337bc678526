"""_providers/log_export.py names the logs SDK's classes as the installed train has them;
where a train has neither 1.38's nor 1.39's interface, otel_dynamo's own log export is
off with one warning, and traces and metrics are not."""

from __future__ import annotations

import logging
import sys

import pytest
from opentelemetry._logs import NoOpLoggerProvider
from opentelemetry.sdk.trace import TracerProvider

from otel_dynamo._config.settings import Settings
from otel_dynamo._providers import setup
from otel_dynamo._providers.setup import setup_providers

LOG_EXPORT = "otel_dynamo._providers.log_export"


def test_the_installed_trains_log_classes_are_found():
    """On every train of the range the module imports, and what an exporter receives is
    the train's own record class."""
    from opentelemetry.sdk import _logs

    from otel_dynamo._providers import log_export

    expected = getattr(_logs, "ReadableLogRecord", None) or _logs.LogData
    assert log_export.ReadableLogRecord is expected
    assert log_export.RECORD_KEEPS_ITS_RESOURCE is hasattr(_logs, "ReadableLogRecord")


def test_an_unknown_logs_interface_turns_only_our_log_export_off_with_one_warning(
    tmp_path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """With log_export not importable, two set-ups give no-op logger providers, real
    tracer providers, and one warning naming the SDK's version."""
    monkeypatch.setitem(sys.modules, LOG_EXPORT, None)  # its import raises ImportError
    monkeypatch.setattr(setup, "_said_logs_missing", False)
    caplog.set_level(logging.WARNING, logger=setup.__name__)
    made = [setup_providers(Settings(output_dir=str(tmp_path)), environ={}) for _ in range(2)]
    try:
        for providers in made:
            assert type(providers.logger_provider) is NoOpLoggerProvider
            assert type(providers.tracer_provider) is TracerProvider
    finally:
        for providers in made:
            providers.shutdown(2.0)
    (record,) = [r for r in caplog.records if "has not the logs interface" in r.getMessage()]
    assert "exports no log events itself" in record.getMessage()
