"""Wrap compiled callables so their executions are counted, and some become spans.

The hot path is one increment and one comparison: a run is only handed to the
recorder when its index reaches the next index the run-span policy wants recorded.
The wrappers keep ``_boxed_call`` (boxed callables take one list and may clear it),
pass the arguments through untouched and never store them. Each wrapper exposes the
callable it wraps as ``__wrapped__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._recording.run_state import RunState
from otel_dynamo._sources.suppression import suppressed
from otel_dynamo._sources.traceback_frames import keep_only_outermost_frame_of_ours


class RunRecorder(Protocol):
    def record_run(
        self, run: RunState, compiled: Callable[..., Any], args: Any, kwargs: dict[str, Any]
    ) -> Any: ...


def wrap_unboxed_run(compiled: Callable[..., Any], state: RunState, recorder: RunRecorder) -> Any:
    """A function that behaves as ``compiled``, called with its inputs spread out.

    For what a backend returns to Dynamo. Dynamo calls it this way even when it
    carries ``_boxed_call`` (AOT's outer function copies the flag from its boxed inner
    one), so the flag is copied as found and the calling convention left alone.
    """

    @passes_through
    def run(*args: Any, **kwargs: Any) -> Any:
        state.count += 1
        if state.count < state.next_recorded or suppressed():
            return compiled(*args, **kwargs)
        try:
            return recorder.record_run(state, compiled, args, kwargs)
        except BaseException as exc:
            keep_only_outermost_frame_of_ours(exc)
            raise

    if hasattr(compiled, "_boxed_call"):
        run._boxed_call = compiled._boxed_call  # type: ignore[attr-defined]  # AOT's convention flag
    return _keep_identity(run, compiled)


class RunProxy:
    """Behaves as the compiled callable it wraps and reports its runs.

    For compiled backwards: AOT Autograd calls them boxed or not as their
    ``_boxed_call`` says, and its cache reads the compiled artefact's attributes
    (``_fx_graph_cache_key``, ``_time_taken_ns``, ...) and unwraps ``__wrapped__`` to
    reach the ``OutputCode`` it serializes. Attribute reads the proxy cannot answer
    go to the wrapped callable, so all of that sees what it would see untraced;
    the arguments (one list when boxed) reach the callable as the same objects.
    """

    def __init__(self, compiled: Callable[..., Any], state: RunState, recorder: RunRecorder):
        self.__wrapped__ = compiled
        self._otel_run_state = state
        self._otel_recorder = recorder
        # AOT Autograd asks for the calling convention at every backward run
        # (``getattr(f, "_boxed_call", False)``): answered here, not by __getattr__.
        boxed = getattr(compiled, "_boxed_call", None)
        if boxed is not None:
            self._boxed_call = boxed

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probe dunders on a bare instance
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    @passes_through
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        state = self._otel_run_state
        state.count += 1
        if state.count < state.next_recorded or suppressed():
            return self.__wrapped__(*args, **kwargs)
        try:
            return self._otel_recorder.record_run(state, self.__wrapped__, args, kwargs)
        except BaseException as exc:
            keep_only_outermost_frame_of_ours(exc)
            raise


def _keep_identity(run: Callable[..., Any], compiled: Callable[..., Any]) -> Callable[..., Any]:
    # Only the name and __wrapped__: copying __dict__ (as functools.wraps does) would
    # copy a whole GraphModule's state when a compiler returns the module itself.
    name = getattr(compiled, "__name__", None)
    if isinstance(name, str):
        run.__name__ = name
        run.__qualname__ = name
    run.__wrapped__ = compiled  # type: ignore[attr-defined]  # as functools.wraps
    return run
