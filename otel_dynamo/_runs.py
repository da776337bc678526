"""Wrap compiled callables so their executions are counted, and some become spans.

The hot path is one increment and one comparison: a run is only handed to the
recorder when its index reaches the next index the run-span policy wants recorded.
The wrapper keeps ``_boxed_call`` (boxed callables take one list and may clear it)
and never stores the run-time arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from otel_dynamo._types import RunSpanPolicy


class RunRecorder(Protocol):
    def record_run(self, run: RunState, call: Callable[[], Any]) -> Any: ...


class RunState:
    """Per compiled graph: how often it ran and what a run span carries."""

    __slots__ = ("attributes", "count", "kind", "link", "next_recorded", "policy")

    def __init__(
        self, *, kind: str, policy: RunSpanPolicy, attributes: dict[str, Any], link: Any
    ) -> None:
        self.kind = kind
        self.policy = policy
        self.attributes = attributes
        self.link = link
        self.count = 0
        self.next_recorded = policy.first_recorded()

    def advance(self) -> None:
        """Called after a recorded run: schedule the next one."""
        self.next_recorded = self.policy.next_recorded(self.count)


def wrap_run(compiled: Callable[..., Any], state: RunState, recorder: RunRecorder) -> Any:
    """A callable that behaves as ``compiled`` and reports its runs (boxed or not)."""
    if getattr(compiled, "_boxed_call", False):
        return wrap_boxed_run(compiled, state, recorder)
    return wrap_unboxed_run(compiled, state, recorder)


def wrap_unboxed_run(compiled: Callable[..., Any], state: RunState, recorder: RunRecorder) -> Any:
    """As wrap_run, for a callable called with its inputs spread out.

    Dynamo calls a backend's result this way even when it carries ``_boxed_call``
    (AOT's outer function copies the flag from its boxed inner one), so the flag is
    copied as found and the calling convention left alone.
    """

    def run(*args: Any, **kwargs: Any) -> Any:
        state.count += 1
        if state.count < state.next_recorded:
            return compiled(*args, **kwargs)
        return recorder.record_run(state, lambda: compiled(*args, **kwargs))

    if hasattr(compiled, "_boxed_call"):
        run._boxed_call = compiled._boxed_call  # type: ignore[attr-defined]
    return _keep_identity(run, compiled)


def wrap_boxed_run(compiled: Callable[..., Any], state: RunState, recorder: RunRecorder) -> Any:
    """As wrap_run, for a callable that takes its inputs as one list."""

    def run(args: list[Any]) -> Any:
        state.count += 1
        if state.count < state.next_recorded:
            return compiled(args)
        return recorder.record_run(state, lambda: compiled(args))

    run._boxed_call = True  # type: ignore[attr-defined]
    return _keep_identity(run, compiled)


def _keep_identity(run: Callable[..., Any], compiled: Callable[..., Any]) -> Callable[..., Any]:
    # Only the name: copying __dict__ (as functools.wraps does) would copy a whole
    # GraphModule's state when a compiler returns the module itself.
    name = getattr(compiled, "__name__", None)
    if isinstance(name, str):
        run.__name__ = name
        run.__qualname__ = name
    return run
