"""At most one frame of ours in a traceback: the wrapper that stands between torch and
the code it delegates to.

Where torch calls a backend through our traced backend, and that backend reaches our AOT
Autograd hooks in turn, an exception raised inside would reach the user, and Dynamo's
logged tracebacks, through several frames of otel_dynamo's. The outermost of them keeps
its own frame (named so that a reader sees it is the telemetry wrapper) and takes the
others out of the exception's traceback before re-raising it unchanged: same exception
object, same message, same frames of torch's and the user's.
"""

from __future__ import annotations

import os

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""Where otel_dynamo's own code lives (its frames carry this path)."""
MAX_CHAINED = 8
"""Exceptions followed down ``__cause__`` / ``__context__``."""


def keep_only_outermost_frame_of_ours(exc: BaseException) -> None:
    """Take every frame of ours after the first out of ``exc``'s traceback, and out of
    the tracebacks of the exceptions it was raised from (never raises)."""
    seen: set[int] = set()
    chained: BaseException | None = exc
    for _ in range(MAX_CHAINED):
        if chained is None or id(chained) in seen:
            return
        seen.add(id(chained))
        try:
            _drop_inner_frames(chained)
        except Exception:  # a traceback we cannot edit stays as it is
            return
        chained = chained.__cause__ or chained.__context__


def _drop_inner_frames(exc: BaseException) -> None:
    tb = exc.__traceback__
    while tb is not None and not _ours(tb):
        tb = tb.tb_next
    while tb is not None and tb.tb_next is not None:
        if _ours(tb.tb_next):
            tb.tb_next = tb.tb_next.tb_next
        else:
            tb = tb.tb_next


def _ours(tb: object) -> bool:
    frame = getattr(tb, "tb_frame", None)
    return frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR)
