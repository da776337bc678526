"""Export a provider's data soon after something worth exporting happened, off the
caller's thread.

Metrics are read on an interval (60 s by default): a job killed between two reads loses
every compile counted since the last one. After each frame compile the recorder kicks a
``FlushSoon``: a daemon thread then calls the provider's ``force_flush``. Kicks that come
while it flushes are coalesced into one more flush, so the compile thread never waits.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

FLUSH_SOON_TIMEOUT_S = 5.0


class FlushSoon:
    """``kick()`` makes a background thread flush ``provider`` (if it can be flushed)."""

    def __init__(self, provider: Any, *, timeout_s: float = FLUSH_SOON_TIMEOUT_S) -> None:
        self._flush = getattr(provider, "force_flush", None)
        self._timeout_millis = int(timeout_s * 1000)
        self._wanted = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def kick(self) -> None:
        if self._flush is None:
            return
        self._wanted.set()
        with self._lock:
            if self._thread is None or self._pid != os.getpid():  # none yet, or forked away
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._run, name="otel_dynamo-flush-soon", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        assert self._flush is not None
        while True:
            self._wanted.wait()
            self._wanted.clear()
            # Export trouble is reported by the exporters themselves.
            with contextlib.suppress(Exception):
                self._flush(self._timeout_millis)
