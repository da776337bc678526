"""FlushSoon: the compile thread kicks, a background thread flushes; kicks coalesce."""

from __future__ import annotations

import threading

from _export_support import wait_until

from otel_dynamo._lifecycle.flush_soon import FlushSoon


class BlockingProvider:
    """force_flush blocks until released, and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.entered = threading.Event()
        self.release = threading.Event()

    def force_flush(self, timeout_millis: int) -> bool:
        self.calls += 1
        self.entered.set()
        self.release.wait(timeout=30)
        return True


def test_kick_never_waits_for_the_flush_and_kicks_coalesce():
    """While a flush is blocked, more kicks return at once; they become one more flush."""
    provider = BlockingProvider()
    flush_soon = FlushSoon(provider)
    flush_soon.kick()
    assert provider.entered.wait(timeout=30)
    for _ in range(10):
        flush_soon.kick()  # returns although the flush in progress is blocked
    assert provider.calls == 1
    provider.release.set()
    assert wait_until(lambda: provider.calls == 2, timeout=30)
    assert provider.calls == 2


def test_a_provider_without_force_flush_is_left_alone():
    """Nothing to flush: kick does nothing and starts no thread."""
    before = threading.active_count()
    FlushSoon(object()).kick()
    assert threading.active_count() == before
