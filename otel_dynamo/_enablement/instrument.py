"""Process-wide instrumentation: every torch.compile traced, whatever backend it chose,
and torch.export (``otel_dynamo._enablement.torch_export_switch``) with the same providers
and settings.

``torch.compile`` (and ``nn.Module.compile``, which calls it) hands its backend to
``torch._dynamo.optimize``; instrumenting replaces that function with one that wraps
the backend in a TracedBackend first. ``torch._dynamo`` is patched when it is
imported (never imported here), and ``uninstrument()`` puts the original back.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from opentelemetry import _logs, metrics, trace

from otel_dynamo._config.options import (
    INSTRUMENT,
    INSTRUMENT_EXPORT,
    PROVIDER_NAMES,
    BackendOptions,
    apply_options,
)
from otel_dynamo._config.problems import warn_problems
from otel_dynamo._config.settings import Settings, load_settings
from otel_dynamo._enablement import import_hooks, torch_export_switch
from otel_dynamo._providers.choice import ProviderLookup, environment_lookup, explicit_lookup
from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._sources import patching
from otel_dynamo._sources.backend_registry import TWIN_PREFIX

if TYPE_CHECKING:
    from typing_extensions import Unpack

DYNAMO_MODULE = "torch._dynamo"
DEFAULT_BACKEND = "inductor"
OPTIMIZE = "optimize"

_log = logging.getLogger(__name__)
_lock = threading.RLock()


class _Instrumentation:
    """What instrument() set up: settings, where telemetry goes, the patched module."""

    def __init__(self, settings: Settings, providers: ProviderLookup) -> None:
        self.settings = settings
        self.providers = providers
        self.module: ModuleType | None = None
        # One traced backend per backend identity: torch.compile called again and again
        # with equal backends (a model compiled block by block) gets the same wrapper, so
        # it costs no new recorder per call and stays equal for Dynamo's backend match.
        self.shared_by_identity: weakref.WeakValueDictionary[Any, Any] = (
            weakref.WeakValueDictionary()
        )

    def patch(self, module: ModuleType) -> None:
        with _lock:
            if _current is not self or self.module is not None:
                return
            patching.patch(module, OPTIMIZE, self._traced_optimize)
            self.module = module

    def unpatch(self) -> None:
        import_hooks.cancel(DYNAMO_MODULE, self.patch)
        if self.module is not None:
            patching.unpatch(self.module, OPTIMIZE, self._traced_optimize)
        self.module = None

    @passes_through
    def _traced_optimize(
        self, optimize: Callable[..., Any], _instance: Any, args: Any, kwargs: Any
    ) -> Any:
        """The patched ``torch._dynamo.optimize``: its backend traced (wrapt's calling
        convention)."""
        if not kwargs.get("disable", False):
            args, kwargs = _with_traced_backend(self, args, kwargs)
        return optimize(*args, **kwargs)

    def traced(self, backend: Any) -> Any:
        """What ``torch._dynamo.optimize`` gets instead of ``backend``: ``backend`` traced
        (one traced backend for backends Dynamo would take as the same), or unchanged if
        already traced.

        ``torch.compile``'s own wrapper of a backend stays what Dynamo sees, with the
        backend it wraps traced inside it: the wrapper's equality (backend, mode, options,
        dynamic) and the way Dynamo describes it in a recompile reason are then the plain
        job's, exactly.
        """
        from otel_dynamo._sources.traced_backend import TracedBackend, backend_name

        if is_traced(backend, TracedBackend):
            return backend
        if is_compile_wrapper(backend):
            backend.compiler_fn = self.shared(backend.compiler_fn, name=backend_name(backend))
            return backend
        return self.shared(backend, name=backend_name(backend))

    def shared(self, backend: Any, *, name: str) -> Any:
        """The traced backend of ``backend``, made once per backend identity."""
        from torch._dynamo.backends.registry import lookup_backend

        from otel_dynamo._enablement.traced import backend_with
        from otel_dynamo._sources.traced_backend import BackendIdentity

        identity = BackendIdentity(lookup_backend(backend))  # unknown names: InvalidBackend
        with _lock:
            wrapper = self.shared_by_identity.get(identity)
            if wrapper is None:
                wrapper = backend_with(backend, self.providers, self.settings, name=name)
                self.shared_by_identity[identity] = wrapper
            return wrapper


_current: _Instrumentation | None = None


def is_traced(backend: Any, traced_type: type) -> bool:
    if isinstance(backend, str):
        return backend.startswith(TWIN_PREFIX)
    inner = getattr(backend, "compiler_fn", backend)  # torch.compile's _TorchCompileWrapper
    return isinstance(backend, traced_type) or isinstance(inner, traced_type)


def is_compile_wrapper(backend: Any) -> bool:
    """Whether ``backend`` is what ``torch.compile`` makes of a backend other than inductor
    (``torch._TorchCompileWrapper``: ``compiler_fn`` called with its mode and options)."""
    import torch

    wrapper_type = getattr(torch, "_TorchCompileWrapper", None)
    return (
        isinstance(wrapper_type, type)
        and isinstance(backend, wrapper_type)
        and callable(getattr(backend, "compiler_fn", None))
    )


def _with_traced_backend(
    state: _Instrumentation, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    backend = args[0] if args else kwargs.get("backend", DEFAULT_BACKEND)
    from torch._dynamo.exc import InvalidBackend  # loaded: we are inside torch._dynamo

    try:
        traced = state.traced(backend)
    except InvalidBackend:
        raise  # the user's own mistake: torch would raise the same a moment later
    except Exception:
        _log.warning("otel_dynamo: could not trace backend %r", backend, exc_info=True)
        return args, kwargs
    if args:
        return (traced, *args[1:]), kwargs
    return args, {**kwargs, "backend": traced}


def instrument(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
    settings: Settings | None = None,
    **options: Unpack[BackendOptions],
) -> None:
    """Trace every torch.compile and torch.export in this process from now on (idempotent)."""
    instrument_as(
        INSTRUMENT,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        settings=settings,
        options=options,
    )


def instrument_as(
    caller: str,
    *,
    tracer_provider: object = None,
    meter_provider: object = None,
    logger_provider: object = None,
    settings: object = None,
    options: Mapping[str, object],
) -> None:
    """``instrument()`` as ``caller`` (a public function) was asked for it: every argument
    checked, naming ``caller``, before anything is patched."""
    global _current
    checked = checked_settings(
        caller,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        settings=settings,
        options=options,
    )
    providers = _providers_of(checked)
    with _lock:
        if _current is not None:
            _current.unpatch()
        _current = _Instrumentation(checked.settings, providers)
        import_hooks.when_imported(DYNAMO_MODULE, _current.patch)
        torch_export_switch.install(providers=providers, settings=checked.settings)


def _providers_of(checked: CheckedCall) -> ProviderLookup:
    """The providers a checked call runs with (its settings' problems said once)."""
    warn_problems(checked.settings.problems)
    return _provider_source(
        checked.settings, checked.tracer_provider, checked.meter_provider, checked.logger_provider
    )


_PROVIDER_TYPES = {
    "tracer_provider": (trace.TracerProvider, "an opentelemetry.trace.TracerProvider"),
    "meter_provider": (metrics.MeterProvider, "an opentelemetry.metrics.MeterProvider"),
    "logger_provider": (_logs.LoggerProvider, "an opentelemetry._logs.LoggerProvider"),
}


@dataclasses.dataclass(frozen=True)
class CheckedCall:
    """A public function's arguments once checked: its settings and providers, typed."""

    settings: Settings
    tracer_provider: trace.TracerProvider | None
    meter_provider: metrics.MeterProvider | None
    logger_provider: _logs.LoggerProvider | None


def checked_settings(
    caller: str,
    *,
    tracer_provider: object,
    meter_provider: object,
    logger_provider: object,
    settings: object,
    options: Mapping[str, object],
) -> CheckedCall:
    """The settings ``caller`` runs with: each provider of its type (or None), ``settings``
    a Settings (or None: the environment's), each option checked (``apply_options``)."""
    given = {
        "tracer_provider": tracer_provider,
        "meter_provider": meter_provider,
        "logger_provider": logger_provider,
    }
    for name, value in given.items():
        kind, accepted = _PROVIDER_TYPES[name]
        if value is not None and not isinstance(value, kind):
            raise TypeError(
                f"{caller}: {name}={value!r} is not valid; accepted: {accepted} or None"
            )
    if settings is not None and not isinstance(settings, Settings):
        raise TypeError(
            f"{caller}: settings={settings!r} is not valid; accepted: an "
            "otel_dynamo._config.settings.Settings or None"
        )
    applied = apply_options(
        settings or load_settings(),
        options,
        caller=caller,
        also_accepted=(*PROVIDER_NAMES, "settings"),
    )
    return CheckedCall(applied, tracer_provider, meter_provider, logger_provider)  # type: ignore[arg-type]  # checked above


def uninstrument() -> None:
    """Stop tracing new torch.compile calls; already compiled functions keep their tracing.

    torch.export's original function and methods are put back too.
    """
    global _current
    with _lock:
        if _current is not None:
            _current.unpatch()
        _current = None
        torch_export_switch.uninstall()


def instrument_export(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    logger_provider: _logs.LoggerProvider | None = None,
    settings: Settings | None = None,
    **options: Unpack[BackendOptions],
) -> None:
    """Trace torch.export only (export, run_decompositions, exported-program runs)."""
    checked = checked_settings(
        INSTRUMENT_EXPORT,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        settings=settings,
        options=options,
    )
    torch_export_switch.install(providers=_providers_of(checked), settings=checked.settings)


def uninstrument_export() -> None:
    """Put torch.export's original function and methods back."""
    torch_export_switch.uninstall()


def _provider_source(
    settings: Settings,
    tracer_provider: trace.TracerProvider | None,
    meter_provider: metrics.MeterProvider | None,
    logger_provider: _logs.LoggerProvider | None,
) -> ProviderLookup:
    if tracer_provider or meter_provider or logger_provider:
        return explicit_lookup(
            settings,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            logger_provider=logger_provider,
        )
    return environment_lookup(settings)


def is_instrumented() -> bool:
    return _current is not None
