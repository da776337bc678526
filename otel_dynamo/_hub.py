"""Process-wide wiring: the installed torch taps and the recorder they report to.

Frame events come from one global stream, before any backend is known, so they go to
the recorder of the most recently used traced backend (or the one ``instrument()``
set up). Graph, AOT and run spans always go to their own backend's recorder.
"""

from __future__ import annotations

import threading

from opentelemetry import trace

from otel_dynamo import names
from otel_dynamo._aot_hooks import AotTap
from otel_dynamo._config import Settings, load_settings
from otel_dynamo._dynamo_stream import StreamTap
from otel_dynamo._ids import isolate_ids
from otel_dynamo._internal import GuardedTracer
from otel_dynamo._providers import ProviderSource, sinks_for
from otel_dynamo._recorder import Recorder
from otel_dynamo._sinks import NULL_EVENTS, NULL_METRICS, EventSink, MetricsSink
from otel_dynamo.version import __version__

_lock = threading.Lock()
_active: Recorder | None = None
_stream = StreamTap(lambda: _active)
_aot = AotTap()


def install() -> None:
    """Install the torch taps (idempotent). ``torch._dynamo.reset()`` leaves them in place."""
    with _lock:
        _stream.install()
        _aot.install()


def uninstall() -> None:
    global _active
    with _lock:
        _stream.uninstall()
        _aot.uninstall()
        _active = None


def activate(recorder: Recorder) -> None:
    global _active
    _active = recorder


def active() -> Recorder | None:
    return _active


def tracer_for(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    provider = tracer_provider or trace.get_tracer_provider()
    isolate_ids(provider)
    tracer = provider.get_tracer(names.INSTRUMENTATION_NAME, __version__)
    isolate_ids(tracer)  # a tracer cached before our provider change keeps its own generator
    return GuardedTracer(tracer)


class RecorderSource:
    """Builds the recorder a traced backend reports to, following its provider source.

    The source is read at each compile, so a global provider installed after
    ``traced()`` was called is still used; a new tracer provider means a new recorder.
    """

    def __init__(self, *, providers: ProviderSource, settings: Settings, backend: str) -> None:
        self._providers = providers
        self._settings = settings
        self._backend = backend
        self._recorder: Recorder | None = None
        self._provider: object = None

    def __deepcopy__(self, memo: dict) -> RecorderSource:
        # Dynamo's debug wrapper copies a backend's __dict__ (functools.wraps) and torch's
        # repro runner deep-copies it: the copy reports to the same recorder.
        return self

    def __call__(self) -> Recorder:
        providers = self._providers()
        if self._recorder is None or providers.tracer_provider is not self._provider:
            self._provider = providers.tracer_provider
            sinks = sinks_for(self._settings, providers)
            self._recorder = make_recorder(
                tracer_provider=providers.tracer_provider,
                settings=self._settings,
                events=sinks.events,
                metrics=sinks.metrics,
                backend=self._backend,
            )
        return self._recorder


def make_recorder(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    settings: Settings | None = None,
    events: EventSink = NULL_EVENTS,
    metrics: MetricsSink = NULL_METRICS,
    backend: str | None = None,
) -> Recorder:
    return Recorder(
        tracer=tracer_for(tracer_provider),
        settings=settings or load_settings(),
        events=events,
        metrics=metrics,
        backend=backend,
    )
