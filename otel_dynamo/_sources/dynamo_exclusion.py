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
_marked_codes: set[types.CodeType] = set()
_unavailable = False
_modules_seen = 0
"""How many modules were loaded at the last call: each graph compile asks again."""


def _strategy_setter() -> Any:
    """``(set_code_exec_strategy, FrameExecStrategy, FrameAction)`` of this torch."""
    from torch._C._dynamo.eval_frame import set_code_exec_strategy
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    return set_code_exec_strategy, FrameExecStrategy, FrameAction


def exclude_loaded_modules() -> None:
    """Mark every code object of the otel_dynamo modules imported so far and not yet
    marked (idempotent; never raises)."""
    global _unavailable, _modules_seen
    if _unavailable or len(sys.modules) == _modules_seen:  # no import since the last call
        return
    _modules_seen = len(sys.modules)
    pending = [
        name
        for name in list(sys.modules)
        if (name == PACKAGE or name.startswith(PACKAGE + "."))
        and not _left_to_dynamo(name)
        and name not in _marked_modules
    ]
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


def _left_to_dynamo(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in LEFT_TO_DYNAMO)


def is_excluded(code: types.CodeType) -> bool:
    """Whether ``code`` has been given its strategy."""
    return code in _marked_codes


def codes_of(module: types.ModuleType) -> list[types.CodeType]:
    """Every code object defined in ``module``: reachable from its functions and classes,
    nested ones (closures, lambdas, comprehensions) included. One pass over a work list,
    not a recursion of generators: it runs at the first traced compile of each process."""
    filename = getattr(module, "__file__", None)
    own = (filename, GENERATED)
    seen: set[int] = set()
    found: list[types.CodeType] = []
    work = [
        (value, MAX_DEPTH) for name, value in list(vars(module).items()) if not name.startswith("__")
    ]
    while work:
        value, depth = work.pop()
        if type(value) in _ATOMS or depth < 0 or id(value) in seen:
            continue
        seen.add(id(value))
        if type(value) is types.CodeType:
            if value.co_filename in own:
                found.append(value)
                work.extend(
                    (const, depth) for const in value.co_consts if type(const) is types.CodeType
                )
            continue
        work.extend((inner, depth - 1) for inner in _members(value, own))
    return found


def _members(value: Any, own: tuple[str | None, str]) -> list[Any]:
    """What ``value`` holds that may lead to code of the module (``own``: its file, and
    where generated methods say they come from)."""
    if isinstance(value, types.FunctionType):
        wrapped = getattr(value, "__wrapped__", None)  # contextmanager, functools.wraps
        members = [] if wrapped is None else [wrapped]
        if value.__code__.co_filename not in own:  # imported from elsewhere
            return members
        members.append(value.__code__)
        members.extend(value.__defaults__ or ())
        members.extend((value.__kwdefaults__ or {}).values())
        return members
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        return [value.__func__]
    if isinstance(value, property):
        return [value.fget, value.fset, value.fdel]
    if isinstance(value, type):
        if getattr(sys.modules.get(value.__module__), "__file__", None) != own[0]:
            return []
        fields = getattr(value, "__dataclass_fields__", None) or {}
        return [
            *vars(value).values(),
            *(getattr(field, "default_factory", None) for field in fields.values()),
        ]
    if isinstance(value, (tuple, list, frozenset, set)):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, _CACHE_WRAPPER):  # functools.cache: the function it wraps
        return [value.__wrapped__]
    return []
