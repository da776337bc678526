"""Which recorder each frame compile reports to: decided for that compile, by its compiler.

Dynamo's structured-trace stream is process-wide: an event says which compile it belongs
to, never which backend compiles it. Every frame compile runs inside one call of
``ConvertFrameAssert`` (``torch/_dynamo/convert_frame.py``), the object
``torch.compile``/``torch._dynamo.optimize`` built around the backend it was given: the
frame's own compiler, and inside one ``CompileContext`` of Dynamo's, made for that compile
on its thread. At the compile's first event, the stream tap finds that call on the
thread's stack and reads its compiler (``FrameCompileRouter``); the compile's *route* (the
recorder of the traced backend found down the compiler's ``_torchdynamo_orig_backend``
chain, or nobody when the compiler is not traced) is kept on the ``CompileContext``
itself. Each compile's events then reach its own recorder, threads compiling at once keep
theirs apart, frames compiled by an untraced backend are recorded nowhere, and
``torch._dynamo.reset()`` (which restarts compile ids) cannot mix compiles up.

Nothing of ours stands in the frame compile's call: a wrapper there would add frames to
the stack Dynamo records in ``dynamo_start``, to its "WON'T CONVERT" tracebacks, and to
the frames it walks to spot a non-recursive ``torch.compiler.disable`` wrapper.

A backward graph is usually compiled lazily, at its first ``.backward()``, long after
the frame compile returned: AOT Autograd restores the frame's ``CompileContext`` object
for it (``saved_compile_context``), so its events follow the route kept there; a traced
graph compile makes sure the route is found before it returns
(``keep_route_for_lazy_backward``).

Strict ``torch.export`` compiles with Dynamo's own backend: while an export call runs,
frames compiled by no traced backend report to the export's recorder
(``frames_reporting_to``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any

from otel_dynamo._recording.boundary import report_internal_error
from otel_dynamo._recording.sinks import StreamRecorder
from otel_dynamo._recording.stream_events import CodeLocation, CompileSettings
from otel_dynamo._sources.compile_settings import reader as settings_reader
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
"""Set on Dynamo's ``CompileContext`` of each compile: its route."""


RecorderLookup = Callable[[], StreamRecorder]
"""Returns the recorder a compile reports to (asked once per compile): what a traced
backend sets (``_recording.recorder_lookup.RecorderLookup`` is one)."""


class Route:
    """One frame compile in progress: its recorder lookup, asked on first use."""

    __slots__ = ("_lookup", "_recorder", "code", "settings")

    def __init__(
        self,
        lookup: RecorderLookup | None,
        code: CodeLocation | None = None,
        settings: CompileSettings | None = None,
    ) -> None:
        self._lookup = lookup
        self._recorder: StreamRecorder | None = None
        self.code = code
        self.settings = settings

    def recorder(self) -> StreamRecorder | None:
        if self._recorder is None and self._lookup is not None:
            lookup, self._lookup = self._lookup, None
            try:
                self._recorder = lookup()
            except Exception:  # the compile goes on unrecorded, never broken
                report_internal_error("could not tell which recorder a frame compile reports to")
        return self._recorder


_torch_export_lookup: contextvars.ContextVar[RecorderLookup | None] = contextvars.ContextVar(
    "otel_dynamo_torch_export_lookup", default=None
)


def current_recorder() -> StreamRecorder | None:
    """The recorder of the frame compile in progress on this thread, if it is traced.

    Outside any frame compile, an export's recorder: strict export captures with
    ``torch._dynamo.functional_export`` on torch >= 2.13, which compiles no frame through
    ``ConvertFrameAssert`` and reports only the capture's metrics and phases.
    """
    route = router.route()
    if route is not None:
        return route.recorder()
    export_lookup = _torch_export_lookup.get()
    return None if export_lookup is None else export_lookup()


def current_code() -> CodeLocation | None:
    """The function whose frame compile is in progress on this thread, if known."""
    route = router.route()
    return None if route is None else route.code


def current_settings() -> CompileSettings | None:
    """How the frame compile in progress on this thread was asked for, if known."""
    route = router.route()
    return None if route is None else route.settings


def code_of(frame: object) -> CodeLocation | None:
    """Name, file and first line of the code a Dynamo frame runs (None if it has none),
    and the class of the ``torch.nn.Module`` it is called on, if it is."""
    code = getattr(frame, "f_code", None)
    if code is None:
        return None
    return CodeLocation(
        code.co_name,
        code.co_filename,
        code.co_firstlineno,
        _self_module.class_of(frame, code),
        tuple(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]),
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


def keep_route_for_lazy_backward() -> None:
    """Find the route of the frame compile in progress now, while its compiler is on the
    stack: a backward compiled lazily later follows it (see module doc)."""
    router.route()


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


def route_for(compiler: object, frame: object = None, convert: object = None) -> Route:
    """The route of a compile by ``compiler`` (under ``convert``, Dynamo's
    ``ConvertFrameAssert``): its traced backend's recorder lookup, else an export's;
    nobody's while instrumentation is suppressed."""
    try:
        lookup = (
            None if suppressed() else recorder_lookup_of(compiler) or _torch_export_lookup.get()
        )
        code = code_of(frame) if lookup is not None else None
        settings = settings_reader.settings_of(convert, compiler) if lookup is not None else None
    except Exception:
        report_internal_error("could not tell which backend compiles a frame")
        lookup, code, settings = None, None, None
    return Route(lookup, code, settings)


class FrameCompileRouter:
    """Finds the route of the frame compile in progress on this thread and keeps it on
    the compile's ``CompileContext`` (module doc)."""

    def __init__(self) -> None:
        self._warned = False
        self._target_code: CodeType | None = None

    def route(self) -> Route | None:
        """The route of the compile whose ``CompileContext`` is current; None outside any."""
        from torch._guards import CompileContext

        context = CompileContext.try_get()
        if context is None:
            return None
        route = getattr(context, SAVED_ROUTE_ATTRIBUTE, None)
        if not isinstance(route, Route):
            route = self._find()
            setattr(context, SAVED_ROUTE_ATTRIBUTE, route)
        return route

    def _find(self) -> Route:
        """The route of the ``ConvertFrameAssert`` call on this thread's stack; with none
        there (a compile that is not a frame's), an export's, if one is in progress."""
        target = self._target()
        frame = sys._getframe(1)
        while frame is not None and target is not None:
            if frame.f_code is target:
                frame_locals = frame.f_locals
                convert = frame_locals.get("self")
                if convert is None:
                    self._warn(
                        "torch %s's ConvertFrameAssert.__call__ has no 'self' to read its "
                        "backend from; frame compile spans are not recorded (graph spans "
                        "still are)"
                    )
                compiler = self._compiler_of(convert)
                return route_for(compiler, frame_locals.get("frame"), convert)
            frame = frame.f_back  # type: ignore[assignment]
        return route_for(None)

    def _target(self) -> CodeType | None:
        """The code of ``ConvertFrameAssert.__call__``; None, with one warning, on a torch
        that has none."""
        if self._target_code is None and not self._warned:
            from torch._dynamo import convert_frame

            target = getattr(convert_frame, "ConvertFrameAssert", None)
            call = vars(target).get("__call__") if isinstance(target, type) else None
            code = getattr(call, "__code__", None)
            if isinstance(code, CodeType):
                self._target_code = code
            else:
                self._warn(
                    "torch %s has no ConvertFrameAssert.__call__; frame compile spans are "
                    "not recorded (graph spans still are)"
                )
        return self._target_code

    def _compiler_of(self, convert: object) -> object:
        """The backend a ``ConvertFrameAssert`` compiles with; None, and one warning, on a
        torch that keeps it under a name we do not know."""
        if convert is None:
            return None
        for name in ORIGINAL_BACKEND_ATTRIBUTES:
            compiler = getattr(convert, name, None)
            if compiler is not None:
                return compiler
        self._warn(
            "torch %s's ConvertFrameAssert keeps its backend under none of "
            + ", ".join(ORIGINAL_BACKEND_ATTRIBUTES)
            + "; frame compile spans are not recorded (graph spans still are)"
        )
        return None

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            _log.warning("otel_dynamo: " + message, torch_version())


router = FrameCompileRouter()
