"""Sets telemetry up as the environment says, emits a span, a log event and a metric, and
exports them once: prints one JSON line with the modules that first export imported and
whether it finished.

An export runs on an exporter's thread; a module imported there while the job forks (a
DataLoader worker) leaves that module's import lock held for ever in the child.
"""

from __future__ import annotations

import json
import sys

FLUSH_TIMEOUT_S = 20.0


def main() -> None:
    from otel_dynamo._config.settings import load_settings
    from otel_dynamo._providers.setup import setup_providers
    from otel_dynamo._recording.structured_log import EventLogger

    telemetry = setup_providers(load_settings())
    with telemetry.tracer_provider.get_tracer("first_export_job").start_as_current_span("op"):
        EventLogger(logger_provider=telemetry.logger_provider).emit("first.event")
    telemetry.meter_provider.get_meter("first_export_job").create_counter("first.count").add(1)
    before = set(sys.modules)
    flushed = telemetry.force_flush(FLUSH_TIMEOUT_S)
    imported = sorted(set(sys.modules) - before)
    print(json.dumps({"imported": imported, "flushed": flushed}), flush=True)
    telemetry.shutdown(FLUSH_TIMEOUT_S)


if __name__ == "__main__":
    main()
