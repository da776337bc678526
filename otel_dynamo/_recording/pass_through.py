"""Functions of ours that stand between torch and code that is not ours.

Dynamo never evaluates a frame of otel_dynamo's (``_sources.dynamo_exclusion``): most of
our code runs with Dynamo's frame evaluation off, together with everything it calls. A
function declared here with ``@passes_through`` is one where torch calls us and we call
torch, or the user's code, back: a tap around a torch function, a backend or compiler
wrapper, a compiled graph's run wrapper. Its own frame is hidden from Dynamo too, but
what it delegates to runs exactly as it would untraced: Dynamo sees the same frames,
counts them, logs them and compiles them as in the plain job.

A pass-through function therefore calls only the callable it delegates to, functions of
otel_dynamo's, and builtins; never a standard-library or third-party Python function
(``contextlib``'s context managers included), whose frames Dynamo would then be shown
in the traced job alone. This module knows nothing of torch: it only keeps the list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_lock = threading.Lock()
_codes: set[CodeType] = set()


def passes_through(function: F) -> F:
    """Declare ``function`` a pass-through frame (module docstring); returns it as it is,
    with no wrapper: the declaration costs nothing per call."""
    code = getattr(function, "__code__", None)
    if isinstance(code, CodeType):
        with _lock:
            _codes.add(code)
    return function


def pass_through_codes() -> frozenset[CodeType]:
    """The code objects of every function declared so far."""
    with _lock:
        return frozenset(_codes)
