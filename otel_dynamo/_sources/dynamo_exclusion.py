"""Dynamo never evaluates a frame of otel_dynamo's, nor anything our recording calls.

Some of our code runs while Dynamo's frame evaluation is on for the thread: a backward
compiled lazily at a ``.backward()`` inside a compiled function, a compiled backward's
run, the structured-trace tap called from torch code that Dynamo is evaluating, signal
and at-fork handlers. Dynamo would show each of those frames to its callback, compile
them, graph-break in them and print warnings about OpenTelemetry's code to the user.

The mechanism is torch's per-code frame execution strategy (``FrameExecStrategy``, set
with ``torch._C._dynamo.eval_frame.set_code_exec_strategy``; torch 2.7 on, so every
torch of our range): Dynamo's C frame evaluator reads it off the code object before it
calls into Python at all. It is what torch uses for its own code that must never be
compiled (``skip_code``; frames past the recompile limit). Every code object of
otel_dynamo's (functions, methods, nested functions, lambdas, comprehensions) gets one of
two strategies:

- recording code: ``(SKIP, SKIP)``: the frame and everything it calls run with frame
  evaluation off, as under ``torch.compiler.disable`` but with no wrapper frame in
  tracebacks and no per-call cost (``disable`` sets the eval frame twice per call);
- pass-through frames (``_recording.pass_through``): ``(SKIP, DEFAULT)``: the frame is
  not shown to Dynamo, and what it delegates to runs exactly as in the plain job.

Neither alternative would do: ``torch.compiler.disable`` changes what a delegate sees
(frame evaluation off where the plain job has it on) and adds a frame of torch's to each
traceback; Dynamo's skip files (``trace_rules``) still show every skipped frame to the
callback, which counts it, logs it under ``TORCH_LOGS=dynamo`` and then evaluates what
it calls (OpenTelemetry's code included).

Code objects are marked per module, once: every ``otel_dynamo`` module imported when the
first traced backend is made, and those imported since, at each graph compile. Where a
torch lacks the strategy, one warning says Dynamo may evaluate our frames.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from otel_dynamo._recording.pass_through import pass_through_codes
from otel_dynamo._sources.torch_version import torch_version

_log = logging.getLogger(__name__)

PACKAGE = "otel_dynamo"
LEFT_TO_DYNAMO = ("otel_dynamo.cli", "otel_dynamo.report")
"""Packages whose code is never ours to hide: the commands run no code inside a compiled
function, and the demo's model and training loop (``cli.demo_training``) are the job
Dynamo compiles."""
GENERATED = "<string>"
"""Where the methods ``dataclasses`` writes for our classes say they come from."""
MAX_DEPTH = 4
"""How deep the walk goes into a module's values: classes in classes, functions kept in
tuples and dicts (a table of taps), defaults of functions."""

_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})
"""Values that hold no code: most of a module's constants."""
_CACHE_WRAPPER = type(functools.cache(lambda: None))
_lock = threading.Lock()
_marked_modules: set[str] = set()
"""Modules already looked at: marked, or not to be hidden (left to Dynamo, or only named
like ours)."""
_marked_codes: set[types.CodeType] = set()
_unavailable = False
_names_seen: list[str] = []
"""The loaded modules' names at the last look, in ``sys.modules``'s order (the order of
loading): each graph compile looks again."""


def _strategy_setter() -> Any:
    """``(set_code_exec_strategy, FrameExecStrategy, FrameAction)`` of this torch."""
    from torch._C._dynamo.eval_frame import set_code_exec_strategy
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    return set_code_exec_strategy, FrameExecStrategy, FrameAction


def exclude_loaded_modules() -> None:
    """Mark every code object of the otel_dynamo modules imported so far and not yet
    marked (idempotent; never raises)."""
    if _unavailable or len(sys.modules) == len(_names_seen):  # no import since the last look
        return
    named = [n for n in _loaded_since_last_look() if n.startswith(PACKAGE)]
    named = [name for name in named if name not in _marked_modules]
    try:
        _exclude([name for name in named if _hidden(name)])
        _marked_modules.update(named)  # those not hidden: never looked at again
    except BaseException:  # interrupted (KeyboardInterrupt): the next look sees every module
        _forget_last_look()
        raise


def _exclude(pending: list[str]) -> None:
    """Give every code object of the modules named ``pending`` its strategy."""
    global _unavailable
    if not pending:
        return
    with _lock:
        try:
            setter, strategy, action = _strategy_setter()
            recording = strategy(action.SKIP, action.SKIP)
            passing = strategy(action.SKIP, action.DEFAULT)
            passes = pass_through_codes()
            for name in pending:
                module = sys.modules.get(name)
                if module is None or name in _marked_modules:
                    continue
                for code in codes_of(module):
                    if code not in _marked_codes:
                        setter(code, passing if code in passes else recording)
                        _marked_codes.add(code)
                _marked_modules.add(name)
        except Exception as error:  # a torch without the strategy: one warning
            _unavailable = True
            _log.warning(
                "otel_dynamo: torch %s cannot exclude code from Dynamo (%s: %s); Dynamo may "
                "compile otel_dynamo's own frames where they run inside a compiled function",
                torch_version(),
                type(error).__name__,
                error,
            )


def _loaded_since_last_look() -> list[str]:
    """Names of the modules loaded since the last look: those after the names seen then,
    where those still come first in the same order; else (a module was removed) every
    name. A Python test per name costs ~1 M instructions for a few thousand modules, and
    most compiles load a module or two of torch's: comparing the two lists and copying
    them is done in C."""
    global _names_seen
    loaded = list(sys.modules)  # one copy: another thread may import meanwhile
    seen = _names_seen
    kept = len(seen) <= len(loaded) and loaded[: len(seen)] == seen
    _names_seen = loaded
    return loaded[len(seen) :] if kept else loaded


def _forget_last_look() -> None:
    global _names_seen
    _names_seen = []


def _hidden(name: str) -> bool:
    """Whether module ``name`` is otel_dynamo's and its code is hidden from Dynamo."""
    ours = name == PACKAGE or name.startswith(PACKAGE + ".")
    return ours and not any(
        name == package or name.startswith(package + ".") for package in LEFT_TO_DYNAMO
    )


def is_excluded(code: types.CodeType) -> bool:
    """Whether ``code`` has been given its strategy."""
    return code in _marked_codes


def codes_of(module: types.ModuleType) -> Iterator[types.CodeType]:
    """Every code object defined in ``module``: reachable from its functions and classes,
    nested ones (closures, lambdas, comprehensions) included."""
    seen: set[int] = set()
    filename = getattr(module, "__file__", None)
    for name, value in list(vars(module).items()):
        if not name.startswith("__"):  # not __builtins__, __spec__, ...
            yield from _codes_in(value, filename, seen, MAX_DEPTH)


def _codes_in(value: Any, filename: str | None, seen: set[int], depth: int) -> Iterator[Any]:
    if type(value) in _ATOMS or depth < 0 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, types.CodeType):
        if value.co_filename in (filename, GENERATED):
            yield value
            for const in value.co_consts:
                if isinstance(const, types.CodeType):
                    yield from _codes_in(const, filename, seen, depth)
        return
    for inner in _members(value, filename):
        yield from _codes_in(inner, filename, seen, depth - 1)


def _members(value: Any, filename: str | None) -> Iterator[Any]:
    """What ``value`` holds that may lead to code of the module (``filename``)."""
    if isinstance(value, types.FunctionType):
        wrapped = getattr(value, "__wrapped__", None)  # contextmanager, functools.wraps
        if wrapped is not None:
            yield wrapped
        if value.__code__.co_filename not in (filename, GENERATED):  # imported from elsewhere
            return
        yield value.__code__
        yield from value.__defaults__ or ()
        yield from (value.__kwdefaults__ or {}).values()
    elif isinstance(value, (types.MethodType, staticmethod, classmethod)):
        yield value.__func__
    elif isinstance(value, property):
        yield from (value.fget, value.fset, value.fdel)
    elif isinstance(value, type):
        if getattr(sys.modules.get(value.__module__), "__file__", None) == filename:
            yield from list(vars(value).values())
            fields = getattr(value, "__dataclass_fields__", None) or {}
            yield from (getattr(field, "default_factory", None) for field in fields.values())
    elif isinstance(value, (tuple, list, frozenset, set)):
        yield from list(value)
    elif isinstance(value, dict):
        yield from list(value.values())
    elif isinstance(value, _CACHE_WRAPPER):  # functools.cache: the function it wraps
        yield value.__wrapped__
