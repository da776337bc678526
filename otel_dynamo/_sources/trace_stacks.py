"""torch's structured trace keeps the plain job's stacks: no frame of ours in them.

Some records of ``TORCH_TRACE`` carry the whole Python stack of the moment they were
written (a guard added while inductor generates code or AOT Autograd restrides the
backward's inputs, a compile's start, a log call without a compile id). torch turns each
captured stack into records with ``torch._logging.structured.from_traceback``, which
interns every file name it meets as a record of its own. Where our traced backend and AOT
hooks stand between torch's frames, those stacks would show them and the trace would
intern our files: records the plain job never writes.

The tap wraps ``from_traceback`` (there is no public hook for this on any torch of the
range: torch captures the stack itself) and hands it the captured stack without the
frames whose code is ours, before anything is interned: the records are the plain job's,
frame for frame. Stacks without frames of ours are handed over as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from otel_dynamo._recording.pass_through import passes_through
from otel_dynamo._sources import patching
from otel_dynamo._sources.traceback_frames import PACKAGE_DIR

_FUNCTION = "from_traceback"


class StackTap:
    """Wraps ``torch._logging.structured.from_traceback``; every caller reaches it through
    the module (``structured.from_traceback``), so one patch covers them all."""

    @property
    def installed(self) -> bool:
        from torch._logging import structured

        return patching.patched(structured, _FUNCTION, self._tap)

    def install(self) -> None:
        from torch._logging import structured

        patching.patch(structured, _FUNCTION, self._tap)

    def uninstall(self) -> None:
        from torch._logging import structured

        patching.unpatch(structured, _FUNCTION, self._tap)

    @passes_through
    def _tap(
        self,
        wrapped: Callable[..., Any],
        instance: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        if len(args) == 1 and not kwargs:
            return wrapped(without_frames_of_ours(args[0]))
        return wrapped(*args, **kwargs)


def without_frames_of_ours(stack: Sequence[Any]) -> Sequence[Any]:
    """``stack`` (frame summaries, outermost first) without the frames of otel_dynamo's
    code; ``stack`` itself when it holds none (or is not a stack of frame summaries)."""
    try:
        kept = [
            frame
            for frame in stack
            if not str(getattr(frame, "filename", "")).startswith(PACKAGE_DIR)
        ]
    except Exception:  # not a stack we know: torch gets what it was given
        return stack
    return stack if len(kept) == len(stack) else kept
