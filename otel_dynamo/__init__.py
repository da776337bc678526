"""otel_dynamo: OpenTelemetry traces, logs and metrics for torch.compile.

Importing this package imports neither torch nor the OpenTelemetry SDK; they load
when a traced backend is first created.
"""

from __future__ import annotations

from otel_dynamo.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing the package stays this module and version
    from collections.abc import Callable
    from typing import Any

    from opentelemetry._logs import LoggerProvider
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider
    from typing_extensions import Unpack

    from otel_dynamo._config.options import BackendOptions
    from otel_dynamo._config.settings import ConfigError

__all__ = [
    "ConfigError",
    "__version__",
    "instrument",
    "instrument_export",
    "traced",
    "uninstrument",
    "uninstrument_export",
]


def traced(
    backend: str | Callable[..., Any] = "inductor",
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    logger_provider: LoggerProvider | None = None,
    **options: Unpack[BackendOptions],
) -> Callable[..., Any]:
    """A Dynamo backend that traces ``backend`` (a registered name or a compiler callable).

    Spans go to ``tracer_provider``, metrics to ``meter_provider`` and structured log
    events to ``logger_provider``; each one not given is the global provider when the
    application set one up, else otel_dynamo's own (built from the environment, with the
    given providers' resource).

    Options (keyword-only, typed by ``BackendOptions`` in ``otel_dynamo._config.options``)
    override the OTEL_DYNAMO_* environment for this backend: ``run_spans`` ("off",
    "all", "auto", "first:N"), ``capture``, ``max_attribute_length``,
    ``max_list_length``, ``max_graph_text_length``, ``top_ops``, ``fault`` (a fault
    spec), ``accuracy`` (True/"forward"/"backward"), ``repro_dir``, ``repro_on``. A bad
    value raises ConfigError naming the option, the value and what is accepted; an
    unknown option, TypeError. An unknown backend name raises torch's ``InvalidBackend``
    here, at wrap time; a backend neither a name nor a callable, TypeError.
    """
    from otel_dynamo._enablement import traced

    return traced.traced_backend(
        backend,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        options=options,
    )


def instrument(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    logger_provider: LoggerProvider | None = None,
    **options: Unpack[BackendOptions],
) -> None:
    """Trace every ``torch.compile`` / ``nn.Module.compile`` in this process, any backend,
    and ``torch.export`` (as :func:`instrument_export` does).

    Providers not given are the global ones if the application set them up; for each
    signal with neither, otel_dynamo builds its own from the environment (OTLP/JSON Lines
    files under OTEL_DYNAMO_OUTPUT_DIR by default) carrying the job's resource, and says
    once where those signals went. Options are those
    of :func:`traced`. Idempotent; :func:`uninstrument` reverses it.
    """
    from otel_dynamo._enablement import instrument

    instrument.instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        **options,
    )


def uninstrument() -> None:
    """Stop tracing new ``torch.compile`` calls (those already compiled stay traced).

    Also puts torch.export's original function and methods back.
    """
    from otel_dynamo._enablement import instrument

    instrument.uninstrument()


def instrument_export(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    logger_provider: LoggerProvider | None = None,
    **options: Unpack[BackendOptions],
) -> None:
    """Trace ``torch.export`` only: ``torch.export.export`` and
    ``ExportedProgram.run_decompositions`` calls become spans, and runs of
    ``ExportedProgram.module()`` follow the run-span policy. Providers and options as
    for :func:`instrument`; :func:`uninstrument_export` puts the originals back.
    """
    from otel_dynamo._enablement import instrument

    instrument.instrument_export(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        **options,
    )


def uninstrument_export() -> None:
    """Put ``torch.export.export`` and the ExportedProgram methods back as they were."""
    from otel_dynamo._enablement import instrument

    instrument.uninstrument_export()


def __getattr__(name: str) -> Any:
    # ConfigError loads with the settings it describes, not at ``import otel_dynamo``
    # (the package's import stays at the cost of its version string).
    if name == "ConfigError":
        from otel_dynamo._config.settings import ConfigError

        return ConfigError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
