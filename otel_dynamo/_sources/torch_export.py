"""torch.export instrumented: export and run_decompositions calls become spans, and runs
of ``ExportedProgram.module()`` follow the run-span policy of compiled runs.

Three attributes are replaced when ``torch.export`` is imported (never imported here;
``import torch`` imports it): the function ``torch.export.export`` and the methods
``ExportedProgram.run_decompositions`` and ``ExportedProgram.module``. ``uninstall()``
puts the very same objects back. Code that bound ``from torch.export import export``
before instrumenting keeps the untraced function.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span, SpanContext, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from otel_dynamo import names
from otel_dynamo._config.settings import Settings
from otel_dynamo._providers.choice import ProviderLookup, Providers
from otel_dynamo._recording.boundary import class_name, guarded
from otel_dynamo._recording.limits import Limits
from otel_dynamo._recording.recorder_lookup import make_recorder, sinks_for
from otel_dynamo._recording.records import ExportEnded, RunIdentity
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._recording.torch_export_signals import TorchExportEvents, torch_export_metrics
from otel_dynamo._sources import patching, routing, taps
from otel_dynamo._sources.runs import wrap_unboxed_run
from otel_dynamo._sources.torch_export_facts import (
    aten_op_counts,
    call_attributes,
    decomposition_attributes,
    error_attributes,
    program_attributes,
    table_attributes,
)

TORCH_EXPORT_MODULE = "torch.export"
ORIGIN_ATTRIBUTE = "_otel_dynamo_origin"
"""Set on each ExportedProgram made under instrumentation: the span that made it."""

_log = logging.getLogger(__name__)
_lock = threading.RLock()
_inside = threading.local()
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Origin:
    """Where an ExportedProgram came from: its export (or decomposition) span, its module."""

    span_context: SpanContext | None
    module_class: str | None


INSTRUMENTATION_ERROR = "torch.export instrumentation error"


@contextlib.contextmanager
def _export_in_progress() -> Iterator[None]:
    """Marks this thread as inside an export call (torch may build modules internally)."""
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        yield
    finally:
        _inside.depth -= 1


def origin_of(program: Any) -> Origin:
    found = getattr(program, ORIGIN_ATTRIBUTE, None)
    return found if isinstance(found, Origin) else Origin(None, None)


class TorchExportRecorder:
    """Spans, log events and metrics of export calls, for one set of providers."""

    def __init__(self, *, providers: Providers, settings: Settings) -> None:
        sinks = sinks_for(settings, providers)
        self.settings = settings
        self.limits = Limits.from_settings(settings)
        self.runs = make_recorder(
            tracer_provider=providers.tracer_provider,
            settings=settings,
            log_events=sinks.log_events,
            metrics=sinks.metrics,
        )
        self.tracer = self.runs.tracer
        self.events = TorchExportEvents(getattr(sinks.log_events, "logger", None))
        self.metrics = torch_export_metrics(providers.meter_provider)

    def call(
        self,
        operation: str,
        attributes: dict[str, AttributeValue],
        call: Callable[[], T],
        describe: Callable[[Any], dict[str, AttributeValue]],
    ) -> T:
        """``call()`` inside a span of ``operation``; ``describe(result)`` adds attributes."""
        name = _SPAN_NAMES[operation]
        span: Span | None = None
        with guarded(INSTRUMENTATION_ERROR):
            span = self.tracer.start_span(name, attributes=attributes)
        if span is None:
            return call()
        start = time.perf_counter()
        try:
            with (
                trace.use_span(
                    span, end_on_exit=False, record_exception=False, set_status_on_exception=False
                ),
                self._dynamo_phases(),
            ):
                result = call()
        except BaseException as exc:
            with guarded(INSTRUMENTATION_ERROR):
                self._failed(operation, span, attributes, exc, time.perf_counter() - start)
            raise
        duration = time.perf_counter() - start
        with guarded(INSTRUMENTATION_ERROR):
            self._succeeded(
                operation, span, attributes, result=result, describe=describe, duration_s=duration
            )
        return result

    @contextlib.contextmanager
    def _dynamo_phases(self) -> Iterator[None]:
        """Frames Dynamo compiles with its own backend here (strict export) report to this
        recorder, so their frame compile and phases become children of the export span."""
        with guarded(INSTRUMENTATION_ERROR):
            taps.install()
        with routing.frames_reporting_to(lambda: self.runs):
            yield

    def _succeeded(
        self,
        operation: str,
        span: Span,
        attributes: dict[str, AttributeValue],
        *,
        result: Any,
        describe: Callable[[Any], dict[str, AttributeValue]],
        duration_s: float,
    ) -> None:
        try:
            found = self._capped(describe(result))
            span.set_attributes(found)
            module_class = attributes.get(names.ATTR_EXPORT_MODULE_CLASS)
            shown_class = module_class if isinstance(module_class, str) else None
            setattr(result, ORIGIN_ATTRIBUTE, Origin(span.get_span_context(), shown_class))
        finally:
            span.end()
        record = ExportEnded(
            operation, names.OUTCOME_SUCCESS, duration_s, {**attributes, **found}, span
        )
        self.events.ended(record)
        self.metrics.ended(record)

    def _failed(
        self,
        operation: str,
        span: Span,
        attributes: dict[str, AttributeValue],
        exc: BaseException,
        duration_s: float,
    ) -> None:
        try:
            found = error_attributes(exc, limit=self.limits.text_length)
            found[names.ATTR_ERROR_TYPE] = class_name(exc)
            message = found[names.ATTR_EXPORT_ERROR_MESSAGE]
            span.set_status(Status(StatusCode.ERROR, message if isinstance(message, str) else None))
            span.set_attributes(found)
        finally:
            span.end()
        record = ExportEnded(
            operation, names.OUTCOME_FAILURE, duration_s, {**attributes, **found}, span, exc
        )
        self.events.ended(record)
        self.metrics.ended(record)

    def _capped(self, attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
        return {
            key: self.limits.strings(value) if isinstance(value, list) else value
            for key, value in attributes.items()
        }

    def describe_export(self, program: Any) -> dict[str, AttributeValue]:
        return program_attributes(program, top=self.limits.top_ops)

    def track_module(self, module: Any, origin: Origin) -> None:
        """Count the runs of ``module`` (an unlifted GraphModule); some become run spans."""
        cls = type(module)
        forward = cls.__dict__.get("forward")
        # GraphModule gives each instance a class of its own: patching it touches no other.
        if forward is None or not cls.__qualname__.endswith("GraphModuleImpl"):
            return
        identity = RunIdentity(names.RUN_KIND_EXPORT, module_class=origin.module_class)
        state = RunState(
            policy=self.settings.run_spans,
            identity=identity,
            link=origin.span_context,
        )
        self.runs.metrics.track_run(state)
        run = wrap_unboxed_run(forward, state, self.runs)
        run.__wrapped__ = forward  # inspect.signature (re-export) sees the real parameters
        cls.forward = run


_SPAN_NAMES = {
    names.EXPORT_OPERATION_EXPORT: names.SPAN_EXPORT,
    names.EXPORT_OPERATION_DECOMPOSITIONS: names.SPAN_EXPORT_DECOMPOSITIONS,
}


class TorchExportInstrumentation:
    """The patched torch.export attributes and where their telemetry goes."""

    def __init__(self, *, providers: ProviderLookup, settings: Settings) -> None:
        self._providers = providers
        self._settings = settings
        self._recorder: TorchExportRecorder | None = None
        self._provider: object = None
        self.patched: list[tuple[Any, str, Any]] = []

    def recorder(self) -> TorchExportRecorder | None:
        """The recorder for the providers in force now (a new tracer provider, a new one)."""
        with guarded(INSTRUMENTATION_ERROR):
            return self._resolve()
        return None

    def _resolve(self) -> TorchExportRecorder:
        providers = self._providers()
        if self._recorder is None or providers.tracer_provider is not self._provider:
            self._recorder = TorchExportRecorder(providers=providers, settings=self._settings)
            self._provider = providers.tracer_provider
        return self._recorder

    def patch(self, module: ModuleType) -> None:
        with _lock:
            if self.patched:
                return
            program_class = module.exported_program.ExportedProgram
            targets = (
                (module, "export", self._traced_export),
                (program_class, "run_decompositions", self._traced_decompositions),
                (program_class, "module", self._traced_module),
            )
            for owner, attribute, wrapper in targets:
                try:
                    patching.patch(owner, attribute, wrapper)
                except AttributeError:
                    _log.warning("otel_dynamo: %s has no %s to trace", owner, attribute)
                    continue
                self.patched.append((owner, attribute, wrapper))

    def unpatch(self) -> None:
        with _lock:
            for owner, attribute, wrapper in reversed(self.patched):
                patching.unpatch(owner, attribute, wrapper)
            self.patched.clear()

    def _traced_export(
        self, export: Callable[..., Any], _instance: Any, args: tuple[Any, ...], kwargs: Any
    ) -> Any:
        """The patched ``torch.export.export`` (wrapt's calling convention)."""
        recorder = self.recorder()
        if recorder is None:
            return export(*args, **kwargs)
        mod = args[0] if args else kwargs.get("mod")
        attributes: dict[str, AttributeValue] = {}
        with guarded(INSTRUMENTATION_ERROR):
            attributes = call_attributes(
                mod, strict=kwargs.get("strict", False), dynamic_shapes=kwargs.get("dynamic_shapes")
            )
        with _export_in_progress():
            return recorder.call(
                names.EXPORT_OPERATION_EXPORT,
                attributes,
                lambda: export(*args, **kwargs),
                recorder.describe_export,
            )

    def _traced_decompositions(
        self, run_decompositions: Callable[..., Any], program: Any, args: Any, kwargs: Any
    ) -> Any:
        """The patched ``ExportedProgram.run_decompositions``."""
        recorder = self.recorder()
        before = None
        if recorder is not None:
            with guarded(INSTRUMENTATION_ERROR):
                before = aten_op_counts(program)
        if recorder is None or before is None:
            return run_decompositions(*args, **kwargs)
        table = args[0] if args else kwargs.get("decomp_table")
        attributes: dict[str, AttributeValue] = {}
        with guarded(INSTRUMENTATION_ERROR):
            attributes = table_attributes(table)
        module_class = origin_of(program).module_class
        if module_class:
            attributes[names.ATTR_EXPORT_MODULE_CLASS] = module_class

        def describe(decomposed: Any) -> dict[str, AttributeValue]:
            after = aten_op_counts(decomposed)
            found = decomposition_attributes(before, after, max_items=recorder.limits.list_length)
            return {**recorder.describe_export(decomposed), **found}

        with _export_in_progress():
            return recorder.call(
                names.EXPORT_OPERATION_DECOMPOSITIONS,
                attributes,
                lambda: run_decompositions(*args, **kwargs),
                describe,
            )

    def _traced_module(
        self, module: Callable[..., Any], program: Any, args: Any, kwargs: Any
    ) -> Any:
        """The patched ``ExportedProgram.module``: modules it makes are traced at their runs
        (not those torch builds while exporting)."""
        made = module(*args, **kwargs)
        if getattr(_inside, "depth", 0) == 0:
            recorder = self.recorder()
            if recorder is not None:
                with guarded(INSTRUMENTATION_ERROR):
                    recorder.track_module(made, origin_of(program))
        return made
