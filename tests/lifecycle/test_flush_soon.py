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


def test_settling_waits_for_the_flush_in_progress():
    """Before the providers' flush or shutdown, a flush in progress is waited for: the
    exporter is never shut down under it (a job ending right after a compile)."""
    provider = BlockingProvider()
    flush_soon = FlushSoon(provider)
    flush_soon.kick()
    assert provider.entered.wait(timeout=30)
    settled = threading.Event()
    waiter = threading.Thread(target=lambda: (flush_soon.settle(False), settled.set()))
    waiter.start()
    assert not settled.wait(timeout=0.5)  # still flushing: settle has not returned
    provider.release.set()
    waiter.join(timeout=30)
    assert settled.is_set()


def test_settling_gives_up_at_its_bound_and_then_waits_no_more():
    """A flush that never ends (a collector that does not answer) holds settling no
    longer than ``settle_timeout_s`` (the exit flush's own bound), and once the final
    wait gave up, a later settle (the providers' shutdown after ``atexit``) does not wait
    again."""
    provider = BlockingProvider()
    flush_soon = FlushSoon(provider, settle_timeout_s=0.2)
    flush_soon.kick()
    assert provider.entered.wait(timeout=30)
    for _ in range(2):
        waiter = threading.Thread(target=flush_soon.settle, args=(True,))
        waiter.start()
        waiter.join(timeout=30)
        assert not waiter.is_alive() and not provider.release.is_set()
    assert flush_soon._gave_up
    provider.release.set()


def test_after_the_final_settle_kicks_flush_nothing():
    """The final settle (the exit flush) stops the kicks: no flush starts after it."""
    provider = BlockingProvider()
    provider.release.set()
    flush_soon = FlushSoon(provider)
    flush_soon.settle(True)
    flush_soon.kick()
    assert not provider.entered.wait(timeout=0.5)
    assert provider.calls == 0
