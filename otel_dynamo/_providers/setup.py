"""Build the tracer, logger and meter providers of this process from configuration.

``setup_providers(settings)`` reads the standard OTEL_* variables (see
:mod:`otel_dynamo._config.otel_env`) and our Settings, and returns a :class:`ProcessProviders`:

* no exporter and no endpoint configured: OTLP/JSON Lines files under
  ``settings.output_dir`` (one per process and signal);
* an endpoint or ``OTEL_<SIGNAL>_EXPORTER``: OTLP over gRPC or HTTP/protobuf, console,
  files, or nothing, per signal;
* ``OTEL_SDK_DISABLED=true``: no-op providers;
* optionally a Prometheus scrape endpoint.

``signals`` limits what is built to those signals (the others get no-op providers and no
exporter, file or endpoint): when the job set up its own OpenTelemetry for some signals,
otel_dynamo builds only the rest. ``job_resource`` is merged over ours: the job's
attributes win, ours (torchrun ranks, host, process) fill in what it lacks.

Everything is bounded (queues, export timeouts, shutdown), exporters never raise into
the job, export failures become one warning, and a bad value becomes a ConfigProblem
that turns off what it affects (raised as ConfigError when ``settings.strict``).
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry._logs import LoggerProvider as ApiLoggerProvider
from opentelemetry._logs import NoOpLoggerProvider
from opentelemetry.sdk.environment_variables import OTEL_SDK_DISABLED
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from otel_dynamo._config.otel_env import (
    OtelEnv,
    SignalPlan,
    join_signals,
    read_otel_env,
)
from otel_dynamo._config.otel_variables import (
    BUILT_IN_EXPORTERS,
    ENV_EXPORTER,
    EXPORTER_FILE,
    EXPORTER_OTLP,
    LOCAL_EXPORTERS,
    SIGNAL_LOGS,
    SIGNAL_METRICS,
    SIGNAL_TRACES,
    SIGNALS,
)
from otel_dynamo._config.problems import warn_problems
from otel_dynamo._config.redaction import Redactor
from otel_dynamo._config.settings import (
    ENV_OUTPUT_DIR,
    ENV_PROMETHEUS_PORT,
    ConfigError,
    ConfigProblem,
    Settings,
    shutdown_timeout_for,
)
from otel_dynamo._providers import sdk_private
from otel_dynamo._providers.batch import BoundedBatchSpanProcessor
from otel_dynamo._providers.export_health import ExportHealth
from otel_dynamo._providers.exporters import entry_point_class, local_factory, otlp_factory
from otel_dynamo._providers.files import ProcessFiles, prepare_directory
from otel_dynamo._providers.process_providers import ProcessProviders, run_parallel
from otel_dynamo._providers.prometheus import INSTALL_HINT, PrometheusEndpoint, start_prometheus
from otel_dynamo._providers.resources import PROCESS_PID, build_resource
from otel_dynamo._providers.safe_exporters import (
    SafeExport,
    SafeMetricExporter,
    SafeSpanExporter,
)
from otel_dynamo._providers.sampling import build_id_generator, build_sampler

__all__ = ["ALL_SIGNALS", "ProcessProviders", "setup_providers"]

ALL_SIGNALS: frozenset[str] = frozenset(SIGNALS)
"""``setup_providers``'s default: build traces, logs and metrics."""
NO_JOB_RESOURCE: Resource | None = None
"""``setup_providers``'s default: our resource alone."""

LOGS_INTERFACE_MISSING = (
    "otel_dynamo: the installed OpenTelemetry SDK (%s) has not the logs interface that "
    "otel_dynamo's own log exporters are written for (that of 1.38, or of 1.39 on): "
    "otel_dynamo exports no log events itself (a logger provider the job sets up still "
    "receives them); traces and metrics are on (%s)"
)
"""Said once per process where the logs SDK is older than ``log_export`` needs."""

_log = logging.getLogger(__name__)
_said_logs_missing = False


def setup_providers(
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    signals: frozenset[str] = ALL_SIGNALS,
    job_resource: Resource | None = NO_JOB_RESOURCE,
    default_service_name: str | None = None,
) -> ProcessProviders:
    """Providers and exporters for this process, as configured; registered for exit.

    ``environ`` is where the exporters' OTEL_* variables are read (the process
    environment by default); the resource, as the SDK builds it, always reads the process
    environment. Only ``signals`` get exporters (the others are no-op providers);
    ``job_resource``, when given, is merged over our resource (its attributes win);
    ``default_service_name`` is ``service.name`` when the environment names none (by
    default the job's program: ``resources.program_service_name``).

    Never raises for bad configuration unless ``settings.strict`` (then ConfigError);
    problems are warned once each and listed in ``ProcessProviders.problems``.
    """
    env = os.environ if environ is None else environ
    otel = read_otel_env(env)
    if otel.disabled:
        warn_problems(otel.problems)
        nothing = f"nothing ({OTEL_SDK_DISABLED}=true)"
        return ProcessProviders.noop(
            problems=otel.problems, destinations=dict.fromkeys(signals, nothing), disabled=True
        )
    chosen = {
        signal: plan if signal in signals else SignalPlan(signal, ())
        for signal, plan in otel.plans.items()
    }
    plans, dir_problems = _check_output_dir(chosen, settings)
    prometheus, prometheus_problems = (
        _start_prometheus(settings) if SIGNAL_METRICS in signals else (None, ())
    )
    problems = (*otel.problems, *dir_problems, *prometheus_problems)
    if settings.strict and problems:
        if prometheus is not None:
            prometheus.stop()
        raise ConfigError(problems[0].message)
    warn_problems(problems)
    resource = build_resource(default_service_name=default_service_name)
    if job_resource is not None:
        resource = resource.merge(job_resource)
    builder = _Builder(settings, otel, plans, resource, signals)
    providers = builder.build(prometheus, problems)
    providers.register_at_exit(flush_on_signal=settings.flush_on_signal)
    return providers


def _check_output_dir(
    plans: Mapping[str, SignalPlan], settings: Settings
) -> tuple[dict[str, SignalPlan], tuple[ConfigProblem, ...]]:
    """Turn off file export of every signal when the output directory is not writable."""
    users = [signal for signal, plan in plans.items() if EXPORTER_FILE in plan.exporters]
    reason = prepare_directory(settings.output_dir) if users else None
    if reason is None:
        return dict(plans), ()
    problem = ConfigProblem(
        ENV_OUTPUT_DIR,
        settings.output_dir,
        "a writable directory path",
        f"{join_signals(users)} files turned off ({reason})",
    )
    return {signal: _without(plan, EXPORTER_FILE) for signal, plan in plans.items()}, (problem,)


def _without(plan: SignalPlan, kind: str) -> SignalPlan:
    exporters = tuple(k for k in plan.exporters if k != kind)
    return SignalPlan(plan.signal, exporters, plan.otlp)


def _start_prometheus(
    settings: Settings,
) -> tuple[PrometheusEndpoint | None, tuple[ConfigProblem, ...]]:
    if settings.prometheus_port is None:
        return None, ()
    try:
        return start_prometheus(host=settings.prometheus_host, port=settings.prometheus_port), ()
    except ImportError:
        accepted, reason = f"a port, with the Prometheus extra installed ({INSTALL_HINT})", ""
    except OSError as error:
        accepted = f"a free TCP port on {settings.prometheus_host}"
        reason = f" ({error.strerror or error})"
    consequence = f"Prometheus endpoint turned off{reason}"
    return None, (
        ConfigProblem(ENV_PROMETHEUS_PORT, str(settings.prometheus_port), accepted, consequence),
    )


class _Builder:
    """Builds the three providers from the checked plans."""

    def __init__(
        self,
        settings: Settings,
        otel: OtelEnv,
        plans: Mapping[str, SignalPlan],
        resource: Resource,
        signals: frozenset[str],
    ) -> None:
        self._settings = settings
        self._signals = signals
        self._otel = otel
        self._plans = plans
        self._resource = resource
        secrets = [plan.otlp.secrets() for plan in plans.values() if plan.otlp is not None]
        self._health = ExportHealth(redact=Redactor(frozenset().union(*secrets)))
        self._files = ProcessFiles(settings.output_dir)
        self._safe_exports: list[SafeExport] = []
        self._processors: dict[int, list[Any]] = {}
        self._shutdown_s = shutdown_timeout_for(settings, all_local=self._all_local())
        self._shutdown_ms = self._shutdown_s * 1000

    def build(
        self, prometheus: PrometheusEndpoint | None, problems: tuple[ConfigProblem, ...]
    ) -> ProcessProviders:
        exports = {
            signal: self._safe_exports_for(signal) if self._exported(signal) else []
            for signal in (SIGNAL_TRACES, SIGNAL_LOGS, SIGNAL_METRICS)
        }
        # Every exporter is built here, on this thread, once all are known (a failure's
        # one warning names every signal sent to that place), never first on an export
        # thread: see safe_exporters.
        built = {signal: [e for e in found if e.build()] for signal, found in exports.items()}
        tracer_provider = self._tracer_provider(exports[SIGNAL_TRACES])
        logger_provider = self._logger_provider(exports[SIGNAL_LOGS])
        readers = self._entry_point_readers()
        pull_readers = bool(readers) or prometheus is not None
        meter_provider = self._meter_provider(
            built[SIGNAL_METRICS], [prometheus.reader] if prometheus else [], readers
        )
        _refresh_pid_after_fork(tracer_provider, logger_provider, meter_provider)
        providers = (tracer_provider, logger_provider, meter_provider)
        parts = [_shutdown_part(p, self._processors.get(id(p), [])) for p in providers]
        if prometheus is not None:
            parts.append(lambda _budget: prometheus.stop())
        uses_files = any(EXPORTER_FILE in plan.exporters for plan in self._plans.values())
        return ProcessProviders(
            tracer_provider=tracer_provider,
            logger_provider=logger_provider,
            meter_provider=meter_provider,
            problems=problems,
            output_dir=Path(self._settings.output_dir) if uses_files else None,
            prometheus_url=prometheus.url if prometheus else None,
            pull_readers=pull_readers,
            shutdown_timeout_s=self._shutdown_s,
            parts=parts,
            safe_exports=self._safe_exports,
            health=self._health,
            destinations=self._destinations(prometheus, readers),
        )

    def _destinations(
        self, prometheus: PrometheusEndpoint | None, readers: list[MetricReader]
    ) -> dict[str, str]:
        """Where each built signal goes, in words, secrets redacted."""
        output_dir = str(self._files.directory)
        found: dict[str, list[str]] = {signal: [] for signal in self._signals}
        for safe_export in self._safe_exports:
            target = safe_export.target
            where = f"files in {target}" if target == output_dir else target
            found.setdefault(safe_export.signal, []).append(where)
        if SIGNAL_METRICS in found:
            if prometheus is not None:
                found[SIGNAL_METRICS].append(f"a Prometheus endpoint at {prometheus.url}")
            found[SIGNAL_METRICS].extend(f"{type(r).__name__} (entry point)" for r in readers)
        return {
            signal: self._health.redact(", ".join(dict.fromkeys(places)))
            if places
            else self._nothing(signal)
            for signal, places in found.items()
        }

    def _all_local(self) -> bool:
        """Whether every exporter of every signal built keeps its telemetry on this machine
        (files, the console, a metric reader that is pulled, such as Prometheus's)."""
        for signal in self._signals:
            for kind in self._plans[signal].exporters:
                pulled = signal == SIGNAL_METRICS and self._reader_class(kind) is not None
                if kind not in LOCAL_EXPORTERS and not pulled:
                    return False
        return True

    def _nothing(self, signal: str) -> str:
        if self._otel.plans[signal].exporters:  # configured, then turned off by a problem
            return "nothing (its exporters turned off by a configuration problem)"
        return f"nothing ({ENV_EXPORTER[signal]}=none)"

    def _safe_exports_for(self, signal: str) -> list[SafeExport]:
        plan = self._plans[signal]
        safe_exports = []
        # OTLP last: the meter provider reads, flushes and shuts its readers down one
        # after another, so a collector that does not answer must come after the local
        # files and console, or it costs them their last export.
        for kind in sorted(plan.exporters, key=lambda kind: kind == EXPORTER_OTLP):
            if signal == SIGNAL_METRICS and self._reader_class(kind) is not None:
                continue  # a registered MetricReader (prometheus): a reader, not an exporter
            if kind == EXPORTER_OTLP and plan.otlp is not None:
                factory, target = otlp_factory(signal, plan.otlp)
            else:
                factory, target = local_factory(kind, signal, self._files)
            metrics_only = signal == SIGNAL_METRICS
            safe_export = SafeExport(
                factory,
                signal=signal,
                target=target,
                health=self._health,
                export_in_child=not metrics_only,
            )
            safe_exports.append(safe_export)
        self._safe_exports.extend(safe_exports)
        return safe_exports

    def _exported(self, signal: str) -> bool:
        """Whether ``signal`` gets exporters of ours (logs: where the installed SDK has the
        logs interface ``log_export`` is written for)."""
        if signal == SIGNAL_LOGS:
            return bool(self._plans[SIGNAL_LOGS].exporters) and _logs_interface_present()
        return True

    def _tracer_provider(self, safe_exports: list[SafeExport]) -> trace.TracerProvider:
        if not safe_exports:
            return trace.NoOpTracerProvider()
        provider = TracerProvider(
            sampler=build_sampler(self._otel.sampler),
            resource=self._resource,
            shutdown_on_exit=False,
            id_generator=build_id_generator(self._otel.id_generator),
        )
        for safe_export in safe_exports:
            processor = BoundedBatchSpanProcessor(
                SafeSpanExporter(safe_export),
                self._otel.batch[SIGNAL_TRACES],
                on_sdk_record=self._health.sdk_record(SIGNAL_TRACES),
                shutdown_millis=self._shutdown_ms,
            )
            provider.add_span_processor(processor)
            self._processors.setdefault(id(provider), []).append(processor)
        return provider

    def _logger_provider(self, safe_exports: list[SafeExport]) -> ApiLoggerProvider:
        if not safe_exports:
            return NoOpLoggerProvider()
        from otel_dynamo._providers.log_export import safe_logger_provider

        provider, processors = safe_logger_provider(
            self._resource,
            safe_exports,
            self._otel.batch[SIGNAL_LOGS],
            on_sdk_record=self._health.sdk_record(SIGNAL_LOGS),
            shutdown_millis=self._shutdown_ms,
        )
        self._processors.setdefault(id(provider), []).extend(processors)
        return provider

    def _reader_class(self, kind: str) -> type[MetricReader] | None:
        """The MetricReader class an entry-point metrics name registers, else None."""
        if kind in BUILT_IN_EXPORTERS:
            return None
        try:
            cls = entry_point_class(SIGNAL_METRICS, kind)
        except Exception:  # a broken plugin: its exporter factory reports it when built
            return None
        return cls if isinstance(cls, type) and issubclass(cls, MetricReader) else None

    def _entry_point_readers(self) -> list[MetricReader]:
        """Readers registered by name (OTEL_METRICS_EXPORTER=prometheus), built as the SDK
        builds them; one that cannot start (a port in use) is left out with one warning."""
        readers: list[MetricReader] = []
        for kind in self._plans[SIGNAL_METRICS].exporters:
            cls = self._reader_class(kind)
            if cls is None:
                continue
            try:
                readers.append(cls())
            except Exception as error:
                _log.warning("otel_dynamo: metrics reader %r did not start: %r", kind, error)
        return readers

    def _meter_provider(
        self,
        built: list[SafeExport],
        extra_readers: list[MetricReader],
        registered_readers: list[MetricReader],
    ) -> metrics.MeterProvider:
        """Metrics to the exporters ``built`` (a reader takes its temporality and
        aggregation from its exporter when it is made: one that could not be built is left
        out, its warning given), and to the readers."""
        readers: list[MetricReader] = [
            PeriodicExportingMetricReader(
                SafeMetricExporter(safe_export),
                export_interval_millis=self._otel.metric_interval_ms,
                export_timeout_millis=self._otel.metric_timeout_ms,
            )
            for safe_export in built
        ]
        readers.extend(extra_readers)
        readers.extend(registered_readers)
        if not readers:
            return metrics.NoOpMeterProvider()
        provider = MeterProvider(
            metric_readers=readers, resource=self._resource, shutdown_on_exit=False
        )
        _renew_metric_locks_after_fork(provider, readers)
        return provider


def _shutdown_part(provider: Any, processors: list[Any]) -> Any:
    """A part that shuts ``provider`` down within the budget it is given.

    Its batch processors stop in parallel, so one stuck exporter does not eat the time
    of the others; the provider's own shutdown then finds them already stopped.
    """

    def part(budget_s: float) -> None:
        calls = [_stop(processor, budget_s * 1000) for processor in processors]
        run_parallel(calls, budget_s)
        if isinstance(provider, MeterProvider):
            provider.shutdown(timeout_millis=budget_s * 1000)
        elif hasattr(provider, "shutdown"):
            provider.shutdown()

    return part


def _stop(processor: Any, millis: float) -> Any:
    return lambda: processor.shutdown(timeout_millis=millis)


def _refresh_pid_after_fork(*providers: Any) -> None:
    """Make process.pid follow a fork into the child, for these SDK providers.

    Registered after the providers exist, so it runs after their own at-fork hooks
    (which renew the locks ``_update_resource`` takes).
    """
    refs = [weakref.ref(p) for p in providers if sdk_private.updates_resource(p)]

    def update_in_child() -> None:
        child = Resource({PROCESS_PID: os.getpid()})
        for ref in refs:
            provider = ref()
            try:
                if provider is not None:
                    sdk_private.update_provider_resource(provider, child)
            except Exception:  # private SDK API: without it the child keeps the parent's pid
                pass

    if refs:
        os.register_at_fork(after_in_child=update_in_child)


def _renew_metric_locks_after_fork(provider: MeterProvider, readers: list[MetricReader]) -> None:
    """Give a forked child new locks for what a metrics collection and export hold.

    The SDK renews the provider's own locks and restarts the reader's thread in a child,
    but not the reader's export lock nor the locks of the stored measurements: a fork while
    another thread of the parent collected or exported (the periodic reader, a flush)
    left them locked for ever in the child, whose next measurement or exit flush then
    blocked (its shutdown took all of ``OTEL_DYNAMO_SHUTDOWN_TIMEOUT`` and warned).
    """
    provider_ref = weakref.ref(provider)
    reader_refs = [weakref.ref(reader) for reader in readers]

    def renew_in_child() -> None:
        try:
            holders: list[object] = [reader() for reader in reader_refs]
            holders.extend(sdk_private.metric_lock_holders(provider_ref()))
            for holder in holders:
                sdk_private.renew_locks(holder)
        except Exception:  # private SDK API: without it the child keeps the parent's locks
            pass

    os.register_at_fork(after_in_child=renew_in_child)


def _logs_interface_present() -> bool:
    """Whether the installed logs SDK has the interface ``log_export`` is written for; if
    not, that is said once per process."""
    global _said_logs_missing
    try:
        import otel_dynamo._providers.log_export  # noqa: F401
    except (ImportError, AttributeError) as error:
        if not _said_logs_missing:
            _said_logs_missing = True
            _log.warning(LOGS_INTERFACE_MISSING, _sdk_version(), error)
        return False
    return True


def _sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("opentelemetry-sdk")
    except PackageNotFoundError:
        return "version unknown"
