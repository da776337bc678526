"""Export a provider's data soon after something worth exporting happened, off the
caller's thread.

Metrics are read on an interval (60 s by default): a job killed between two reads loses
every compile counted since the last one. After each frame compile the recorder kicks a
``FlushSoon``: a daemon thread then calls the provider's ``force_flush``. Kicks that come
while it flushes are coalesced into one more flush, so the compile thread never waits.

Before the providers' own flush or shutdown (``exit_steps``) a flush in progress is
waited for, at most ``settle_timeout_s`` (the exit flush's own bound, so a collector that
does not answer holds the exit no longer than it would anyway), and not again once the
final wait gave up: a job that ends right after a compile would otherwise shut the
exporter down under that flush, and lose what it was writing. The final one stops the
kicks too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

from otel_dynamo._lifecycle import exit_steps

FLUSH_SOON_TIMEOUT_S = 5.0


class FlushSoon:
    """``kick()`` makes a background thread flush ``provider`` (if it can be flushed)."""

    def __init__(
        self,
        provider: Any,
        *,
        timeout_s: float = FLUSH_SOON_TIMEOUT_S,
        settle_timeout_s: float = FLUSH_SOON_TIMEOUT_S,
    ) -> None:
        self._flush = getattr(provider, "force_flush", None)
        self._timeout_millis = int(timeout_s * 1000)
        self._wanted = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._idle = threading.Event()
        self._idle.set()
        self._closed = False
        self._gave_up = False
        self._settle_timeout_s = settle_timeout_s
        exit_steps.before_flush(self.settle)

    def settle(self, final: bool) -> None:
        """Wait until no flush is wanted or running (at most ``settle_timeout_s``, and not
        at all once a final wait gave up); after the final one, kicks flush nothing more."""
        if final:
            self._closed = True
        if self._pid != os.getpid() or self._gave_up:  # a forked child's flush thread is not there
            return
        if not self._idle.wait(self._settle_timeout_s) and final:
            self._gave_up = True

    def kick(self) -> None:
        if self._flush is None or self._closed:
            return
        with self._lock:
            self._idle.clear()
            self._wanted.set()
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
            if not self._closed:
                # Export trouble is reported by the exporters themselves.
                with contextlib.suppress(Exception):
                    self._flush(self._timeout_millis)
            with self._lock:
                if not self._wanted.is_set():  # a kick during the flush: one more round
                    self._idle.set()
