"""The process-wide torch taps, in one place: installed once, removed together.

Each tap replaces one torch function or method with a wrapper that forwards to the
original; ``torch._dynamo.reset()`` leaves them in place.
"""

from __future__ import annotations

import threading

from otel_dynamo._sources.aot import AotTap
from otel_dynamo._sources.dynamo_stream import StreamTap
from otel_dynamo._sources.routing import FrameCompilerTap, current_sink

_lock = threading.Lock()
_frames = FrameCompilerTap()
_stream = StreamTap(current_sink)
_aot = AotTap()


def install() -> None:
    """Install every tap (idempotent)."""
    with _lock:
        _frames.install()
        _stream.install()
        _aot.install()


def uninstall() -> None:
    """Put back what each tap replaced."""
    with _lock:
        _frames.uninstall()
        _stream.uninstall()
        _aot.uninstall()
