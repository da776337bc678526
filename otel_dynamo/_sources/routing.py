"""Which recorder each frame compile reports to: decided for that compile, by its compiler.

Dynamo's structured-trace stream is process-wide: an event says which compile it belongs
to, never which backend compiles it. Every frame compile runs inside one call of
``ConvertFrameAssert`` (``torch/_dynamo/convert_frame.py``), the object
``torch.compile``/``torch._dynamo.optimize`` built around the backend it was given: the
frame's own compiler. The tap wraps that call and opens a *route* for it on this thread
(a context variable): the recorder of the traced backend found down the compiler's
``_torchdynamo_orig_backend`` chain, or nobody when the compiler is not traced. The
stream's events reach the route open on their thread, so each compile's events go to
its own recorder, threads compiling at once keep theirs apart, and frames compiled by an
untraced backend are recorded nowhere. Nothing here survives the call, so
``torch._dynamo.reset()`` (which restarts compile ids) cannot mix compiles up. The call
itself runs with a frame-stack chunk of its own (``stack_room``), so the wrapper's frames
do not change how the compile meets CPython's frame-stack chunk boundaries.

A backward graph is usually compiled lazily, at its first ``.backward()``, long after
the frame compile returned: AOT Autograd restores the frame's ``CompileContext`` object
for it (``saved_compile_context``), so a traced compile leaves its route on that object
(``keep_route_for_lazy_backward``) and the lazy compile's events follow it there.

Strict ``torch.export`` compiles with Dynamo's own backend: while an export call runs,
frames compiled by no traced backend report to the export's recorder
(``frames_reporting_to``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator
from typing import Any

from otel_dynamo._recording.boundary import report_internal_error
from otel_dynamo._recording.sinks import StreamRecorder
from otel_dynamo._recording.stream_events import CodeLocation
from otel_dynamo._sources import patching
from otel_dynamo._sources.stack_room import call_with_room
from otel_dynamo._sources.suppression import suppressed
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

RECORDER_LOOKUP_ATTRIBUTE = "_otel_dynamo_recorder_lookup"
"""Set on a traced backend: a callable returning the recorder its frames report to.
Dynamo's debug wrapper copies a backend's ``__dict__`` (``functools.wraps``), so the
attribute is found on the wrapper as well as on the backend."""

ORIGINAL_BACKEND_ATTRIBUTES = ("_torchdynamo_orig_backend", "_torchdynamo_orig_callable")
"""How ``ConvertFrameAssert`` and Dynamo's other wrappers name the backend they wrap (see
the note atop convert_frame.py): ``_torchdynamo_orig_backend`` from torch 2.9 on
(pytorch/pytorch#156901), ``_torchdynamo_orig_callable`` on 2.8."""

WRAPPED_ATTRIBUTES = (
    *ORIGINAL_BACKEND_ATTRIBUTES,
    "compiler_fn",
    "func",
    "backend_compile_fn",
    "__self__",
)
"""Where each wrapper between Dynamo and a backend keeps what it wraps: Dynamo's own
wrappers; ``torch._TorchCompileWrapper``, what ``torch.compile`` makes of a callable
backend; ``functools.partial``; under DDP, Dynamo compiles with the bound method
``DDPOptimizer.compile_fn``, whose optimizer keeps the backend as ``backend_compile_fn``."""

MAX_CHAIN = 16
"""Wrappers followed down a compiler chain before giving up (a cycle would never end)."""

SAVED_ROUTE_ATTRIBUTE = "_otel_dynamo_route"
"""Set on Dynamo's ``CompileContext`` of a traced compile: its route, for a lazy backward."""


RecorderLookup = Callable[[], StreamRecorder]
"""Returns the recorder a compile reports to (asked once per compile): what a traced
backend sets (``_recording.recorder_lookup.RecorderLookup`` is one)."""


class Route:
    """One frame compile in progress: its recorder lookup, asked on first use."""

    __slots__ = ("_lookup", "_recorder", "code")

    def __init__(self, lookup: RecorderLookup | None, code: CodeLocation | None = None) -> None:
        self._lookup = lookup
        self._recorder: StreamRecorder | None = None
        self.code = code

    def recorder(self) -> StreamRecorder | None:
        if self._recorder is None and self._lookup is not None:
            lookup, self._lookup = self._lookup, None
            try:
                self._recorder = lookup()
            except Exception:  # the compile goes on unrecorded, never broken
                report_internal_error("could not tell which recorder a frame compile reports to")
        return self._recorder


_route: contextvars.ContextVar[Route | None] = contextvars.ContextVar(
    "otel_dynamo_route", default=None
)
_torch_export_lookup: contextvars.ContextVar[RecorderLookup | None] = contextvars.ContextVar(
    "otel_dynamo_torch_export_lookup", default=None
)


def current_recorder() -> StreamRecorder | None:
    """The recorder of the frame compile in progress on this thread, if it is traced.

    Outside any frame compile, an export's recorder: strict export captures with
    ``torch._dynamo.functional_export`` on torch >= 2.13, which compiles no frame through
    ``ConvertFrameAssert`` and reports only the capture's metrics and phases.
    """
    route = _route.get() or _saved_route()
    if route is not None:
        return route.recorder()
    export_lookup = _torch_export_lookup.get()
    return None if export_lookup is None else export_lookup()


def current_code() -> CodeLocation | None:
    """The function whose frame compile is in progress on this thread, if known."""
    route = _route.get()
    return None if route is None else route.code


def code_of(frame: object) -> CodeLocation | None:
    """Name, file and first line of the code a Dynamo frame runs (None if it has none),
    and the class of the ``torch.nn.Module`` it is called on, if it is."""
    code = getattr(frame, "f_code", None)
    if code is None:
        return None
    return CodeLocation(
        code.co_name, code.co_filename, code.co_firstlineno, _self_module.class_of(frame, code)
    )


class SelfModuleReader:
    """The qualified class of a frame's ``self`` when it is a ``torch.nn.Module``.

    Read as Dynamo reads it itself: ``frame.f_locals.get(code.co_varnames[0])``
    (``CatchErrorsWrapper.__call__`` in torch 2.13's convert_frame.py, just before the
    ``ConvertFrameAssert`` call we wrap, which then reads ``frame.f_locals`` again in
    ``has_tensor_in_frame`` and passes it to ``_compile``). The frame is torch's
    ``_PyInterpreterFrame`` wrapper, not a Python frame object: its ``f_locals`` is a dict
    torch builds from the frame's fast locals and keeps on the wrapper (the same dict at
    each read), written back to nothing; the frame has not started running, so reading it
    first builds the dict Dynamo would build, with the same contents. No PEP 667 proxy
    (3.13) or ``PyFrame_FastToLocals`` snapshot (3.11) of a real frame object is involved.
    The value is only looked at through ``type()``, which runs no code of the object's.
    Anything unexpected switches the reading off, with one warning: no attribute then.
    """

    def __init__(self) -> None:
        self._off = False

    def class_of(self, frame: object, code: Any) -> str | None:
        if self._off:
            return None
        try:
            return self._read(frame, code)
        except Exception:
            self._off = True
            _log.warning(
                "otel_dynamo: could not read the module a frame compile runs on (torch %s); "
                "frame spans do not say which module they compile",
                torch_version(),
                exc_info=True,
            )
            return None

    @staticmethod
    def _read(frame: object, code: Any) -> str | None:
        # a method's receiver only: f(model, x) compiles f, not a module's method
        if code.co_argcount < 1 or not code.co_varnames or code.co_varnames[0] != "self":
            return None
        import torch

        cls = type(frame.f_locals.get(code.co_varnames[0]))  # type: ignore[attr-defined]
        if not issubclass(cls, torch.nn.Module):
            return None
        module, qualname = cls.__module__, cls.__qualname__
        return str(qualname) if module in (None, "builtins") else f"{module}.{qualname}"


_self_module = SelfModuleReader()


def _saved_route() -> Route | None:
    """The route a traced compile left on the CompileContext in effect (a lazy backward)."""
    from torch._guards import CompileContext

    route = getattr(CompileContext.try_get(), SAVED_ROUTE_ATTRIBUTE, None)
    return route if isinstance(route, Route) else None


def keep_route_for_lazy_backward() -> None:
    """Leave the route of the compile in progress on its CompileContext (see module doc)."""
    from torch._guards import CompileContext

    route = _route.get()
    context = CompileContext.try_get()
    if route is not None and context is not None:
        setattr(context, SAVED_ROUTE_ATTRIBUTE, route)


def recorder_lookup_of(compiler: object) -> RecorderLookup | None:
    """The recorder lookup a traced backend set, found down Dynamo's wrappers of
    ``compiler``."""
    for _ in range(MAX_CHAIN):
        if compiler is None:
            return None
        lookup = getattr(compiler, RECORDER_LOOKUP_ATTRIBUTE, None)
        if callable(lookup):
            return lookup  # type: ignore[no-any-return]  # a traced backend set it
        compiler = next(
            (inner for name in WRAPPED_ATTRIBUTES if (inner := getattr(compiler, name, None))),
            None,
        )
    return None


@contextlib.contextmanager
def frames_reporting_to(lookup: RecorderLookup) -> Iterator[None]:
    """Frames Dynamo compiles with a backend no traced backend wraps, in this block and
    on this thread, report to ``lookup``'s recorder (strict torch.export)."""
    token = _torch_export_lookup.set(lookup)
    try:
        yield
    finally:
        _torch_export_lookup.reset(token)


def route_for(compiler: object, frame: object = None) -> Route:
    """The route of a compile by ``compiler``: its traced backend's recorder lookup, else
    an export's; nobody's while instrumentation is suppressed."""
    try:
        lookup = (
            None if suppressed() else recorder_lookup_of(compiler) or _torch_export_lookup.get()
        )
        code = code_of(frame) if lookup is not None else None
    except Exception:
        report_internal_error("could not tell which backend compiles a frame")
        lookup, code = None, None
    return Route(lookup, code)


class FrameCompilerTap:
    """Wraps ``ConvertFrameAssert.__call__`` so every frame compile opens its route."""

    def __init__(self) -> None:
        self._warned = False

    def _target(self) -> type | None:
        from torch._dynamo import convert_frame

        target = getattr(convert_frame, "ConvertFrameAssert", None)
        if not isinstance(target, type) or "__call__" not in target.__dict__:
            if not self._warned:
                self._warned = True
                _log.warning(
                    "otel_dynamo: torch %s has no ConvertFrameAssert.__call__; frame "
                    "compile spans are not recorded (graph spans still are)",
                    torch_version(),
                )
            return None
        return target

    @property
    def installed(self) -> bool:
        target = self._target()
        return target is not None and patching.patched(target, "__call__", self._route_call)

    def install(self) -> None:
        target = self._target()
        if target is not None:
            patching.patch(target, "__call__", self._route_call)

    def _route_call(
        self, call: Callable[..., Any], convert: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The patched ``ConvertFrameAssert.__call__`` (wrapt's calling convention)."""
        frame = args[0] if args else kwargs.get("frame")
        token = _route.set(route_for(self._compiler_of(convert), frame))
        try:
            return call_with_room(call, *args, **kwargs)
        finally:
            _route.reset(token)

    def _compiler_of(self, convert: object) -> object:
        """The backend a ``ConvertFrameAssert`` compiles with; None, and one warning, on a
        torch that keeps it under a name we do not know."""
        for name in ORIGINAL_BACKEND_ATTRIBUTES:
            compiler = getattr(convert, name, None)
            if compiler is not None:
                return compiler
        if not self._warned:
            self._warned = True
            _log.warning(
                "otel_dynamo: torch %s's ConvertFrameAssert keeps its backend under none of "
                "%s; frame compile spans are not recorded (graph spans still are)",
                torch_version(),
                ", ".join(ORIGINAL_BACKEND_ATTRIBUTES),
            )
        return None

    def uninstall(self) -> None:
        target = self._target()
        if target is not None:
            patching.unpatch(target, "__call__", self._route_call)
